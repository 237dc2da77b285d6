"""The one set of chain rules: what the core, every node and ``arm_config`` refuse, in the
same words (RELIABILITY case 24).

``load_chain`` is the only way from URDF text to a usable model: the frames (given, else
the defaults of ``frames.choose_frames``), the model as urdfdom would read it
(``ArmModel.from_urdf``), then the checks parsing alone does not make: two joints at one
point turning about the same axis (a link of zero length between them: one of them moves
nothing, and the closed forms divide by that length), and a chain whose every joint turns
about an axis through the tip (it cannot move the tip at all). A tool frame on the last
joint's origin is normal (a vendor's flange or ``link_eef``) and accepted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arm_kinematics.common.urdf_tree import read_tree
from arm_kinematics.description.frames import choose_frames, DefaultFrames
from arm_kinematics.model.arm_model import ArmModel, DEFAULT_JOINT_SPEED, DescriptionError

# Closer than this (m) is the same point; far below any real link, far above rounding.
MIN_LINK_LENGTH = 1e-6
# |cos| of the angle between two axes above this is parallel.
PARALLEL_COS = 1.0 - 1e-9


def zero_length_reason(model: ArmModel) -> str:
    """'' when no two consecutive joints share a point and an axis, else which two do.

    Two joints at one point are fine when their axes differ (a spherical wrist); with
    parallel axes the link between them has zero length. The tip may sit on the last
    joint's origin (a tool frame there is the usual way vendors add one).
    """
    origins, axes, tip = model.joint_origins_and_axes(np.zeros(model.dof))
    for k in range(model.dof - 1):
        gap = float(np.linalg.norm(origins[k + 1] - origins[k]))
        parallel = abs(float(np.dot(axes[k], axes[k + 1]))) > PARALLEL_COS
        if gap < MIN_LINK_LENGTH and parallel:
            return (f'the link from joint "{model.joint_names[k]}" to joint '
                    f'"{model.joint_names[k + 1]}" has zero length ({gap:.3g} m) and both '
                    'turn about the same axis: check the joint origins')
    if not model.prismatic.any() and \
            all(float(np.linalg.norm(point - tip)) < MIN_LINK_LENGTH for point in origins):
        return (f'no joint between "{model.base_link}" and "{model.tip_link}" moves the tip: '
                'every joint turns about an axis through it (a rotor or a wrist alone); name '
                'a tip further out with tip_frame')
    return ''


@dataclass(frozen=True)
class LoadedChain:
    """A model that passed every rule, and how its frames were chosen.

    Attributes:
        model: the chain.
        frames: the defaults' choice and reason when a frame was not given, else None.
    """

    model: ArmModel
    frames: DefaultFrames | None

    def report(self) -> list[str]:
        """Lines for start-up logs and ``arm_config``: the frames and why, then what loading
        assumed (each naming its joint)."""
        model = self.model
        lines = [self.frames.describe() if self.frames is not None else
                 f'frames {model.base_link} -> {model.tip_link} (given)']
        return lines + list(model.notes)


def load_chain(urdf: str, base: str = '', tip: str = '',
               default_speed: float = DEFAULT_JOINT_SPEED) -> LoadedChain:
    """The chain ``base`` → ``tip`` of ``urdf``, frames defaulted where empty.

    Raises:
        DescriptionError: one line naming the joint, link or attribute at fault.
    """
    frames = None
    if not base or not tip:
        tree = read_tree(urdf)
        if tip and not base:
            roots = tree.roots()
            frames = DefaultFrames(roots[0] if len(roots) == 1 else '', tip,
                                   'the root link as base', ())
            if not frames.base:
                raise DescriptionError(f'the description has {len(roots)} root links '
                                       f'({", ".join(roots[:6]) or "none"}): name the base '
                                       '(base_frame, frames.base, arm_config --base)')
        else:
            frames = choose_frames(tree, base)
        base, tip = frames.base, frames.tip
    model = ArmModel.from_urdf(urdf, base, tip, default_speed)
    reason = zero_length_reason(model)
    if reason:
        raise DescriptionError(reason)
    return LoadedChain(model, frames)
