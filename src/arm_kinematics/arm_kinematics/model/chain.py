"""The chain base → tip of a URDF tree as the model's joints: variables, mimic joints,
locked joints folded in, limits read as urdfdom reads them.

A mimic joint in the chain follows its leader (``multiplier * leader + offset``) and is never
a variable of IK: the leader's range is narrowed so the follower stays inside its own, and
its speed limit so the follower's holds (as MoveIt does with a mimic group). A mimic of a
joint outside the chain is fixed where that joint rests (the executor holds it there). A
locked joint (lower == upper) is fixed at its value.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from arm_kinematics.common.log_line import brief_names
from arm_kinematics.common.urdf_tree import DescriptionError, JointSpec, read_tree

FULL_TURN = 2.0 * math.pi
# rad/s (m/s for a slide) of a joint whose URDF gives no velocity limit: MoveIt's default
# (its time parameterisation's DEFAULT_VEL_MAX); the configuration's motion.default_joint_speed
# replaces it.
DEFAULT_JOINT_SPEED = 1.0
# The most moving joints (mimic ones too) a chain may have. Real arms have up to about 20
# (snake arms a few dozen); every node and solver is linear or better in the joints up to
# here, but the safety capsules pair every link with every other and the lab, markers and
# servos draw or drive each one: a description of absurd size (3000 joints) is refused
# at once, in one line, rather than served after minutes. docs/tests.md has the figures.
MAX_CHAIN_JOINTS = 200


@dataclass(frozen=True)
class Joint:
    """One movable joint of the chain, in the frame of the previous movable joint.

    ``offset`` is the fixed transform from the previous joint's rotated frame (or
    the base link) to this joint's frame, fixed joints in between folded in.
    """

    name: str
    axis: np.ndarray
    offset: np.ndarray
    lower: float
    upper: float
    velocity: float
    effort: float
    kind: str = 'revolute'   # revolute | continuous | prismatic (position in m, not rad)

    @property
    def prismatic(self) -> bool:
        return self.kind == 'prismatic'

    @property
    def wraps(self) -> bool:
        """True when the range spans a full turn, so angles may be wrapped, not clamped."""
        return not self.prismatic and self.upper - self.lower >= FULL_TURN - 1e-9


@dataclass(frozen=True)
class Motion:
    """One moving joint of the chain, in chain order: a variable of IK (``follower`` False,
    ``source`` its own index) or a mimic joint that follows variable ``source``
    (``position = multiplier * q[source] + offset``) and is never a variable itself.
    ``joint.offset`` is the fixed transform from the previous motion's frame."""

    joint: Joint
    source: int
    multiplier: float = 1.0
    offset: float = 0.0
    follower: bool = False


def rest_position(joint: JointSpec) -> float:
    """Where a joint no one commands rests: 0 clamped into its limits (a locked joint at its
    value)."""
    return min(max(0.0, joint.lower), joint.upper)


def motion_matrix(joint: JointSpec | Joint, value: float) -> np.ndarray:
    """The 4×4 motion of ``joint`` at position ``value`` (rad or m)."""
    matrix = np.eye(4)
    if joint.kind == 'prismatic':
        matrix[:3, 3] = joint.axis * value
        return matrix
    x, y, z = joint.axis
    skew = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    matrix[:3, :3] = np.eye(3) + math.sin(value) * skew + (1.0 - math.cos(value)) * skew @ skew
    return matrix


def build_chain(urdf: str, base: str, tip: str, default_speed: float
                ) -> tuple[str, list[Joint], list[Motion], np.ndarray, tuple[str, ...]]:
    """(robot name, variables, every motion, tip offset, notes) of the chain ``base`` →
    ``tip`` of ``urdf`` (see ArmModel.from_urdf)."""
    tree = read_tree(urdf)
    chain = tree.chain(base, tip)
    notes = list(tree.warnings)
    for joint in chain:
        if joint.kind in ('floating', 'planar'):
            raise DescriptionError(f'joint "{joint.name}" is {joint.kind}; only revolute, '
                                   'continuous, prismatic and fixed joints are supported in '
                                   'the chain')
    moving = [j.name for j in chain if j.moves]
    if len(moving) > MAX_CHAIN_JOINTS:
        raise DescriptionError(
            f'the chain "{base}" -> "{tip}" has {len(moving)} moving joints '
            f'({brief_names(moving)}); at most {MAX_CHAIN_JOINTS} are served '
            '(arm_kinematics.model.chain.MAX_CHAIN_JOINTS)')
    variables = [j.name for j in chain if j.moves and j.mimic is None]
    if not variables:
        locked = [j.name for j in chain if j.locked]
        followers = [j.name for j in chain if j.moves and j.mimic is not None]
        why = ''
        if locked:
            why = f' ({", ".join(locked)}: lower == upper, locked)'
        elif followers:
            why = f' (only mimic joints: {", ".join(followers)})'
        raise DescriptionError(f'no movable joint between "{base}" and "{tip}"{why}')
    index_of = {name: i for i, name in enumerate(variables)}
    lower = {name: tree.joints[name].lower for name in variables}
    upper = {name: tree.joints[name].upper for name in variables}
    speed = {}
    for name in variables:
        joint = tree.joints[name]
        if joint.velocity is None:
            notes.append(f'joint "{name}": no velocity limit in the URDF; '
                         f'{default_speed:g} {"m/s" if joint.kind == "prismatic" else "rad/s"} '
                         'assumed (motion.default_joint_speed)')
        speed[name] = joint.velocity if joint.velocity is not None else default_speed
    motions: list[tuple[JointSpec, np.ndarray, int, float, float, bool]] = []
    pending = np.eye(4)
    for joint in chain:
        if joint.kind == 'fixed':
            pending = pending @ joint.origin
            continue
        if joint.locked:
            notes.append(f'joint "{joint.name}" is locked (lower == upper = {joint.lower:g}): '
                         'fixed at that value')
            pending = pending @ joint.origin @ motion_matrix(joint, joint.lower)
            continue
        if joint.mimic is None:
            motions.append((joint, pending @ joint.origin, index_of[joint.name], 1.0, 0.0,
                            False))
            pending = np.eye(4)
            continue
        leader, multiplier, offset = tree.leader_of(joint.name)
        if leader not in index_of:
            value = multiplier * rest_position(tree.joints[leader]) + offset
            notes.append(f'mimic joint "{joint.name}" follows "{leader}", outside the chain: '
                         f'fixed at {value:g}')
            pending = pending @ joint.origin @ motion_matrix(joint, value)
            continue
        notes.append(f'mimic joint "{joint.name}" follows "{leader}" (x{multiplier:g} '
                     f'{offset:+g}): not a variable of IK')
        _narrow(joint, leader, multiplier, offset, lower, upper, speed)
        motions.append((joint, pending @ joint.origin, index_of[leader], multiplier, offset,
                        True))
        pending = np.eye(4)
    joints: dict[str, Joint] = {}
    built: list[Motion] = []
    for spec, offset_matrix, source, multiplier, offset, follower in motions:
        name = spec.name
        if follower:
            low, high = spec.lower, spec.upper
            velocity = spec.velocity if spec.velocity is not None else math.inf
        else:
            low, high, velocity = lower[name], upper[name], speed[name]
        if spec.kind == 'continuous' and not follower and math.isinf(low):
            low, high = -math.pi, math.pi
        joint = Joint(name, spec.axis, offset_matrix, low, high, velocity,
                      spec.effort if spec.effort is not None else math.inf, spec.kind)
        if not follower:
            joints[name] = joint
        built.append(Motion(joint, source, multiplier, offset, follower))
    return tree.name, [joints[name] for name in variables], built, pending, tuple(notes)


def _narrow(joint: JointSpec, leader: str, multiplier: float, offset: float,
            lower: dict[str, float], upper: dict[str, float], speed: dict[str, float]) -> None:
    """Narrow the leader's range (and speed) so ``joint`` stays inside its own."""
    if joint.velocity is not None and multiplier != 0.0:
        speed[leader] = min(speed[leader], joint.velocity / abs(multiplier))
    if joint.kind == 'continuous':
        return
    if multiplier == 0.0:
        if not joint.lower <= offset <= joint.upper:
            raise DescriptionError(f'mimic joint "{joint.name}" sits at {offset:g}, outside '
                                   f'its limits [{joint.lower:g}, {joint.upper:g}]')
        return
    ends = sorted(((joint.lower - offset) / multiplier, (joint.upper - offset) / multiplier))
    low, high = max(lower[leader], ends[0]), min(upper[leader], ends[1])
    if low > high:
        raise DescriptionError(f'mimic joint "{joint.name}" cannot stay inside its limits '
                               f'[{joint.lower:g}, {joint.upper:g}] for any position of '
                               f'"{leader}" in [{lower[leader]:g}, {upper[leader]:g}]')
    lower[leader], upper[leader] = low, high
