"""What a collision check answers: one pair (``Contact``), one pose (``CollisionReport``)
and one joint path (``PathCheck``).

Units: metres, radians.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Contact:
    """One checked pair.

    Attributes:
        kind: 'self' (two links) or 'scene' (a link and an object).
        a: link name.
        b: link name (self) or object id (scene).
        distance: m; ≤ padding means contact (negative: penetration depth of solids).
    """

    kind: str
    a: str
    b: str
    distance: float


@dataclass(frozen=True)
class CollisionReport:
    """The collision state of one pose.

    Attributes:
        collides: some non-allowed pair or some link-object pair is in contact.
        self_collision: two links not allowed to touch are in contact.
        scene_collision: a link touches a scene object.
        contacts: every pair in contact (a link pair once, at its smallest distance).
        closest_self: the closest non-allowed link pair (None: no pair is checked).
        closest_scene: the closest link-object pair (None: the scene is empty).
    """

    collides: bool
    self_collision: bool
    scene_collision: bool
    contacts: tuple[Contact, ...]
    closest_self: Contact | None
    closest_scene: Contact | None

    @property
    def closest(self) -> Contact | None:
        """The closest pair of both kinds."""
        pairs = [c for c in (self.closest_self, self.closest_scene) if c is not None]
        return min(pairs, key=lambda c: c.distance) if pairs else None

    @property
    def message(self) -> str:
        """The verdict in words."""
        if self.collides:
            return 'collision: ' + ', '.join(f'{c.a}–{c.b} ({c.distance * 1000:.1f} mm)'
                                             for c in self.contacts)
        closest = self.closest
        if closest is None:
            return 'clear (nothing to check)'
        return f'clear: closest {closest.a}–{closest.b} at {closest.distance * 1000:.1f} mm'


@dataclass(frozen=True)
class PathCheck:
    """The collision state of a joint path checked sample by sample.

    Attributes:
        free: every checked sample is clear.
        samples: how many poses were checked.
        segment: index i of the first blocked segment (waypoints i → i + 1, or 0 for a single
            waypoint); None when free.
        q: the first colliding sample (None when free).
        report: its report (None when free).
    """

    free: bool
    samples: int
    segment: int | None = None
    q: np.ndarray | None = None
    report: CollisionReport | None = None
