"""One line for a node's log, as a core decides it and a node writes it."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ['LogLine']


@dataclass(frozen=True)
class LogLine:
    """``text`` at ``level``: a severity of the node's logger ('info', 'warn' or 'warning',
    'error'); the core that makes the line says which it uses."""

    level: str
    text: str
