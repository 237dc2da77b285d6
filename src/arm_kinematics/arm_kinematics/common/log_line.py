"""One line for a node's log, as a core decides it and a node writes it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ['LogLine', 'brief_names']

# How many names a log line spells out before it only counts the rest: a description of
# absurd size (thousands of joints) once printed every name in one start-up line.
BRIEF_NAMES = 6


@dataclass(frozen=True)
class LogLine:
    """``text`` at ``level``: a severity of the node's logger ('info', 'warn' or 'warning',
    'error'); the core that makes the line says which it uses."""

    level: str
    text: str


def brief_names(names: Sequence[str], first: int = BRIEF_NAMES) -> str:
    """The first ``first`` of ``names`` joined by commas, then how many more: a log line stays
    short whatever the chain's length ('j0, j1, j2 and 2997 more')."""
    names = list(names)
    if len(names) <= first:
        return ', '.join(names)
    return f'{", ".join(names[:first])} and {len(names) - first} more'
