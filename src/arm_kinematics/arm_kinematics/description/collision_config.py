"""The ``collision`` section of an arm configuration, as plain data.

    collision:
      padding: 0.0                 # m: a pair closer than this counts as in contact
      search_paths: [/opt/meshes]  # extra folders for package:// and relative mesh files
      fallback_shapes:             # used where a link's mesh cannot be loaded
        wrist_link: {type: cylinder, radius: 0.05, length: 0.12, xyz: [0, 0, 0.06]}
      allowed_pairs:               # written by arm_config; present: used as is (override)
        - [link_a, link_b, adjacent]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from arm_kinematics.common.checks import is_finite_number

REASONS = ('adjacent', 'default', 'always', 'never', 'user')
_KEYS = {'padding', 'search_paths', 'fallback_shapes', 'allowed_pairs'}


class CollisionConfigError(ValueError):
    """A collision section that cannot be used; the message names the key."""


@dataclass(frozen=True)
class CollisionConfig:
    """The validated section.

    Attributes:
        padding: contact distance, m (≥ 0).
        search_paths: extra mesh folders.
        fallback_shapes: {link: shape mapping}.
        allowed_pairs: [(link_a, link_b, reason)], or None to compute them.
    """

    padding: float = 0.0
    search_paths: tuple[str, ...] = ()
    fallback_shapes: dict = field(default_factory=dict)
    allowed_pairs: tuple[tuple[str, str, str], ...] | None = None

    @classmethod
    def from_mapping(cls, data: object, source: str = 'collision') -> CollisionConfig:
        """Validate a ``collision`` section (None: all defaults).

        Raises:
            CollisionConfigError: an unknown key or a value of the wrong kind.
        """
        if data is None:
            return cls()
        if isinstance(data, CollisionConfig):
            return data
        if not isinstance(data, Mapping):
            raise CollisionConfigError(f'{source} must be a mapping, got {data!r}')
        unknown = sorted(str(k) for k in data if k not in _KEYS)
        if unknown:
            raise CollisionConfigError(f'{source}: unknown key(s) {", ".join(unknown)} '
                                       f'(known: {", ".join(sorted(_KEYS))})')
        padding = data.get('padding', 0.0)
        if not is_finite_number(padding) or padding < 0:
            raise CollisionConfigError(f'{source}.padding must be a finite number >= 0, got '
                                       f'{padding!r}')
        paths = data.get('search_paths') or ()
        if isinstance(paths, str) or not all(isinstance(p, str) for p in paths):
            raise CollisionConfigError(f'{source}.search_paths must be a list of folders')
        fallbacks = data.get('fallback_shapes') or {}
        if not isinstance(fallbacks, Mapping):
            raise CollisionConfigError(f'{source}.fallback_shapes must be {{link: shape}}')
        pairs = data.get('allowed_pairs')
        allowed = None if pairs is None else tuple(_pair(entry, f'{source}.allowed_pairs')
                                                   for entry in pairs)
        return cls(float(padding), tuple(paths), dict(fallbacks), allowed)


def _pair(entry: object, where: str) -> tuple[str, str, str]:
    if isinstance(entry, (str, bytes)) or not isinstance(entry, Sequence) or \
            len(entry) not in (2, 3) or not all(isinstance(v, str) for v in entry):
        raise CollisionConfigError(f'{where}: each entry is [link_a, link_b, reason], got '
                                   f'{entry!r}')
    reason = entry[2] if len(entry) == 3 else 'user'
    if reason not in REASONS:
        raise CollisionConfigError(f'{where}: reason {reason!r} is not one of '
                                   f'{", ".join(REASONS)}')
    return entry[0], entry[1], reason
