"""The safety monitor's collision witness as the lab shows it (plain data: no ROS, no viser).

safety_monitor judges every joint_states pose for self-collision and scene contact with the
URDF's collision shapes and reports the pairs in contact ("link_a|link_b" or
"link|object_id"). The lab names them in its readout, colours the scene objects in contact
and puts a label on every link in contact, at that link's origin (the lab draws the arm's
visual meshes, which are not the shapes checked, so it marks the links rather than recolour
them).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
import math

import numpy as np

from arm_kinematics.model.arm_model import ArmModel, DescriptionError
from arm_kinematics.scene.links import link_tree, LinkTree


@dataclass(frozen=True)
class CollisionView:
    """One collision report.

    Attributes:
        checked: the monitor judged a pose (False: STALE, bad input, or no report yet).
        self_pairs: link pairs in contact.
        scene_pairs: (link, object id) pairs in contact.
        closest: the closest checked pair ('' when nothing is checked).
        closest_distance: its distance, m (NaN when nothing is checked).
    """

    checked: bool = False
    self_pairs: tuple[tuple[str, str], ...] = ()
    scene_pairs: tuple[tuple[str, str], ...] = ()
    closest: str = ''
    closest_distance: float = math.nan

    @property
    def objects(self) -> frozenset[str]:
        """Ids of the scene objects in contact."""
        return frozenset(obj for _, obj in self.scene_pairs)

    @property
    def links(self) -> dict[str, list[str]]:
        """{link in contact: what it touches (links and objects)}, in report order."""
        touching: dict[str, list[str]] = {}
        for a, b in self.self_pairs:
            touching.setdefault(a, []).append(b)
            touching.setdefault(b, []).append(a)
        for link, obj in self.scene_pairs:
            touching.setdefault(link, []).append(obj)
        return touching


def collision_view(checked: bool, self_collision: bool, scene_contact: bool,
                   pairs: Sequence[str], closest: str, closest_distance: float,
                   links: Collection[str]) -> CollisionView:
    """A CollisionView of a SafetyStatus's collision fields.

    A pair is a link pair when only self-collision is reported, a scene pair when only scene
    contact is, and otherwise by its second name (a link of ``links``, or an object). A pair
    without "|" is dropped.
    """
    if not checked:
        return CollisionView()
    own, scene = [], []
    for pair in pairs:
        a, bar, b = str(pair).partition('|')
        if not bar or not a or not b:
            continue
        is_self = self_collision and (not scene_contact or b in links)
        (own if is_self else scene).append((a, b))
    distance = float(closest_distance)
    return CollisionView(True, tuple(own), tuple(scene), str(closest),
                         distance if math.isfinite(distance) else math.nan)


def collision_text(view: CollisionView) -> str:
    """The readout's collision line: the pairs in contact, or the closest pair."""
    if not view.checked:
        return '-'
    parts = []
    if view.self_pairs:
        parts.append('self-collision ' + ', '.join(f'{a}–{b}' for a, b in view.self_pairs))
    if view.scene_pairs:
        parts.append('scene contact ' + ', '.join(f'{a}–{b}' for a, b in view.scene_pairs))
    if parts:
        return '**' + '; '.join(parts) + '**'
    if not view.closest:
        return 'clear (nothing to check)'
    return (f'clear: closest {view.closest.replace("|", "–")} at '
            f'{view.closest_distance * 1000.0:.1f} mm')


class LinkMarks:
    """Where the labels of the links in contact go: each link's origin, by FK of the model
    and the URDF's tree (fixed joints folded in). A URDF the tree cannot be read from gives
    no labels (the readout still names the pairs)."""

    def __init__(self, model: ArmModel) -> None:
        self.model = model
        try:
            self.tree: LinkTree | None = link_tree(model, model.urdf)
        except DescriptionError:
            self.tree = None

    @property
    def links(self) -> frozenset[str]:
        """Every link the arm's URDF attaches to the chain."""
        return frozenset(self.tree.attach) if self.tree is not None else frozenset()

    def marks(self, view: CollisionView, q: np.ndarray | None
              ) -> list[tuple[str, str, np.ndarray]]:
        """(link, label text, position m) of every link in contact at ``q``; none without a
        pose or for links the URDF does not attach."""
        touching = view.links
        if not touching or q is None or self.tree is None:
            return []
        poses = self.tree.link_poses(self.model, q)
        return [(link, f'✕ {link}: {", ".join(others)}', poses[link][:3, 3])
                for link, others in touching.items() if link in poses]
