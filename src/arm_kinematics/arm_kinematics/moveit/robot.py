"""The robot as MoveIt clients see it: planning groups, named states, end effectors, every
link as a frame, and robot states as joint names and values.

One ``MoveItRobot`` per arm value (``arm.Arm``): the arm's chain is what moves; a group is
served when its movable joints are exactly the chain's (MoveIt plans other groups too, this
project's solvers and planner work on the one chain). Without an SRDF the chain is one group,
named by the arm configuration's ``moveit.group`` (default ``arm``), with the arm's home as
the named state ``home``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
import math

import numpy as np

from arm_kinematics.arm import Arm, build_arm
from arm_kinematics.common.urdf_tree import read_tree
from arm_kinematics.moveit import codes
from arm_kinematics.moveit.codes import Answer
from arm_kinematics.moveit.srdf import EndEffector, group_joints, read_srdf, SRDF, SRDFError
from arm_kinematics.scene.links import link_tree

DEFAULT_GROUP = 'arm'
# The reasons the collision configuration knows (an SRDF's others count as the user's).
PAIR_REASONS = ('adjacent', 'default', 'always', 'never', 'user')


@dataclass(frozen=True)
class Group:
    """A planning group: its movable joints (MoveIt's order), whether this node plans it and,
    when not, why."""

    name: str
    joints: tuple[str, ...]
    served: bool
    reason: str = ''


class MoveItRobot:
    """Groups, states and frames of one arm.

    Args:
        arm: the arm value (its model is the chain that moves).
        srdf: the SRDF read (``srdf.read_srdf``), or None.
        default_group: the group's name without an SRDF (``moveit.group`` of the config).

    Raises:
        SRDFError: the SRDF names joints or links the URDF lacks.
    """

    def __init__(self, arm: Arm, srdf: SRDF | None = None, default_group: str = '') -> None:
        self.arm = arm
        self.model = arm.model
        self.srdf = srdf or SRDF()
        self.base_link = self.model.base_link
        self.tip_link = self.model.tip_link
        self.joint_names = tuple(self.model.joint_names)
        tree = read_tree(self.model.urdf)
        self.tree = tree
        chain = set(self.joint_names)
        self.groups: dict[str, Group] = {}
        self.named_states: dict[str, dict[str, dict[str, float]]] = {}
        if srdf is None or not srdf.groups:
            name = default_group or DEFAULT_GROUP
            self.groups[name] = Group(name, self.joint_names, True)
            self.named_states[name] = {'home': dict(zip(self.joint_names,
                                                        map(float, arm.home)))}
        for name in self.srdf.groups:
            joints = tuple(group_joints(self.srdf, name, tree))
            extra = [j for j in joints if j not in chain]
            missing = [j for j in self.joint_names if j not in joints]
            reason = ''
            if extra:
                reason = (f'group "{name}" moves {", ".join(extra)}, outside the served chain '
                          f'{self.base_link} -> {self.tip_link}')
            elif missing:
                reason = (f'group "{name}" leaves {", ".join(missing)} of the chain '
                          f'{self.base_link} -> {self.tip_link} out; only groups of the whole '
                          'chain are planned')
            self.groups[name] = Group(name, joints, not reason, reason)
        for group, states in self.srdf.group_states.items():
            if group not in self.groups:
                raise SRDFError(f'SRDF: group_state of unknown group "{group}"')
            self.named_states.setdefault(group, {}).update(states)
        links = link_tree(self.model, self.model.urdf)
        self._attach = dict(links.attach)
        self._above = self._links_above_base()
        tip_index, tip_offset = self._attach[self.tip_link]
        self._tip_index = tip_index
        self._tip_offset = tip_offset

    # ------------------------------------------------------------------ groups
    @property
    def end_effectors(self) -> tuple[EndEffector, ...]:
        return self.srdf.end_effectors

    @property
    def served_groups(self) -> list[str]:
        return [name for name, group in self.groups.items() if group.served]

    @property
    def default_group(self) -> str:
        served = self.served_groups
        return served[0] if served else ''

    def group(self, name: str) -> Answer:
        """The served group ``name`` (value: Group), or INVALID_GROUP_NAME and why."""
        group = self.groups.get(name)
        if group is None:
            return codes.fail(codes.INVALID_GROUP_NAME,
                              f'unknown group "{name}"; this robot has '
                              f'{", ".join(sorted(self.groups)) or "none"} (served: '
                              f'{", ".join(self.served_groups) or "none"})')
        if not group.served:
            return codes.fail(codes.INVALID_GROUP_NAME, f'{group.reason} (served: '
                              f'{", ".join(self.served_groups) or "none"})')
        return Answer(codes.SUCCESS, '', group)

    def allowed_pairs(self) -> list[tuple[str, str, str]]:
        """The SRDF's disabled collision pairs, as the checker's allowed pairs."""
        return [(a, b, reason) for a, b, reason in self.srdf.disabled_collisions]

    # ------------------------------------------------------------------ frames
    def _links_above_base(self) -> dict[str, np.ndarray]:
        """{link: pose in the base frame} of the links above the base joined by fixed
        joints (e.g. ``world`` of a URDF with a fixed world joint)."""
        by_child = self.tree.by_child
        poses: dict[str, np.ndarray] = {}
        link, pose = self.base_link, np.eye(4)
        while link in by_child:
            joint = by_child[link]
            if joint.kind != 'fixed':
                break
            pose = pose @ np.linalg.inv(joint.origin)    # parent in base coordinates
            link = joint.parent
            poses[link] = pose
        return poses

    @property
    def frames(self) -> tuple[str, ...]:
        return (*self._attach, *self._above)

    def frame_pose(self, frame: str, q: np.ndarray) -> Answer:
        """Pose (4×4) of link ``frame`` in the base frame at ``q`` ('' is the base), or
        FRAME_TRANSFORM_FAILURE naming the frame."""
        frame = frame.lstrip('/')
        if frame in ('', self.base_link):
            return Answer(codes.SUCCESS, '', np.eye(4))
        if frame in self._above:
            return Answer(codes.SUCCESS, '', self._above[frame])
        if frame in self._attach:
            index, offset = self._attach[frame]
            if index == 0:
                return Answer(codes.SUCCESS, '', offset)
            frames = self.model.motion_frames(q)
            return Answer(codes.SUCCESS, '', frames[index - 1] @ offset)
        return codes.fail(codes.FRAME_TRANSFORM_FAILURE,
                          f'frame "{frame}" is not a link of {self.model.name} above, at or '
                          f'below the base "{self.base_link}" (no TF lookup is done)')

    def link_pose(self, link: str, q: np.ndarray) -> Answer:
        """Like frame_pose, but an unknown name is INVALID_LINK_NAME."""
        answer = self.frame_pose(link, q)
        if answer.code == codes.FRAME_TRANSFORM_FAILURE:
            return codes.fail(codes.INVALID_LINK_NAME,
                              f'link "{link}" is not a link of {self.model.name} at or below '
                              f'the base "{self.base_link}"')
        return answer

    def tip_from_link(self, link: str) -> Answer:
        """The constant pose of the chain's tip in ``link``'s frame (4×4) when ``link`` is
        rigid with the tip ('' is the tip), else INVALID_LINK_NAME saying why."""
        link = link.lstrip('/') or self.tip_link
        if link not in self._attach:
            return codes.fail(codes.INVALID_LINK_NAME,
                              f'link "{link}" is not a link of {self.model.name} below the '
                              f'base "{self.base_link}"')
        index, offset = self._attach[link]
        if index != self._tip_index:
            return codes.fail(codes.INVALID_LINK_NAME,
                              f'link "{link}" moves relative to the tip "{self.tip_link}": IK '
                              'is served for the tip and links rigid with it')
        return Answer(codes.SUCCESS, '', np.linalg.inv(offset) @ self._tip_offset)

    # ------------------------------------------------------------------ states
    def state(self, names: Sequence[str], positions: Sequence[float],
              fallback: np.ndarray) -> Answer:
        """Chain positions of a RobotState's joint_state (value: q); joints not given keep
        ``fallback``'s; joints of the URDF outside the chain are ignored; an unknown joint,
        a count mismatch or a non-finite value is INVALID_ROBOT_STATE."""
        names, positions = list(names), list(positions)
        q = np.array(fallback, dtype=float)
        if not names and not positions:
            return Answer(codes.SUCCESS, '', q)
        if len(names) != len(positions):
            return codes.fail(codes.INVALID_ROBOT_STATE,
                              f'robot state: {len(names)} joint names but {len(positions)} '
                              'positions')
        index = {name: i for i, name in enumerate(self.joint_names)}
        for name, value in zip(names, positions):
            if name not in index:
                if name in self.tree.joints:
                    continue
                return codes.fail(codes.INVALID_ROBOT_STATE,
                                  f'robot state names joint "{name}", which is not in the '
                                  f'URDF of {self.model.name}')
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                return codes.fail(codes.INVALID_ROBOT_STATE,
                                  f'robot state: joint "{name}" = {value!r} is not finite')
            q[index[name]] = float(value)
        return Answer(codes.SUCCESS, '', q)

    def named_state(self, group: str, name: str) -> Answer:
        """The positions of named state ``name`` of ``group`` (value: {joint: value}); a state
        of a larger group holding this one's joints serves too (the Panda's ``default`` is
        written for arm_and_hand)."""
        states = self.named_states.get(group, {})
        if name in states:
            return Answer(codes.SUCCESS, '', dict(states[name]))
        joints = set(self.groups[group].joints) if group in self.groups else set()
        for other, other_states in self.named_states.items():
            if name in other_states and joints and joints <= set(other_states[name]):
                return Answer(codes.SUCCESS, f'state of group {other}',
                              dict(other_states[name]))
        known = sorted({state for states in self.named_states.values() for state in states})
        return codes.fail(codes.INVALID_GOAL_CONSTRAINTS,
                          f'group "{group}" has no named state "{name}" (known: '
                          f'{", ".join(known) or "none"})')


def with_allowed_pairs(arm: Arm, pairs: Sequence[tuple[str, str, str]],
                       search_paths: Sequence[str] = ()) -> Arm:
    """``arm`` whose collision checkers also allow ``pairs`` (an SRDF's disabled collisions)
    besides the pairs the project computes or the configuration lists; pairs naming links
    without collision shapes are dropped (MoveIt lists every link). The pairs are computed
    once, here, and listed in the configuration: every later checker of the arm (the
    planner's, IK's, one with attached objects) starts without computing them again."""
    checker = arm.collision_checker(search_paths=search_paths)
    links = set(checker.links)
    known = {frozenset(entry[:2]) for entry in checker.allowed}
    allowed = [list(entry) for entry in checker.allowed]
    for a, b, reason in pairs:
        if a in links and b in links and a != b and frozenset((a, b)) not in known:
            known.add(frozenset((a, b)))
            word = reason.strip().lower()
            allowed.append([a, b, word if word in PAIR_REASONS else 'user'])
    data = dict(arm.config.data)
    collision = dict(data.get('collision') or {})
    collision['allowed_pairs'] = allowed
    data['collision'] = collision
    return build_arm(arm.model, replace(arm.config, data=data), arm.label)



def served_srdf(text: str, arm: Arm, group: str = '') -> str:
    """The SRDF this node serves: the user's when it defines groups; without groups (the
    UR5 SRDF of example-robot-data lists only disabled collisions) the user's with the chain's
    group and home added; without any, the chain's own (``chain_srdf``).

    Raises:
        SRDFError: ``text`` does not read.
    """
    if not text.strip():
        return chain_srdf(arm, group)
    if read_srdf(text).groups:
        return text
    own = chain_srdf(arm, group)
    body = own[own.index('<robot'):]
    body = body[body.index('>') + 1:body.rindex('</robot>')]
    end = text.rindex('</robot>')
    return text[:end] + body + text[end:]


def chain_srdf(arm: Arm, group: str = '') -> str:
    """The SRDF a robot without one is served with (and that MoveIt clients read from
    ``robot_description_semantic``): the chain as one group, the arm's home as the named
    state ``home``, the tip as the end effector's parent link."""
    from xml.sax.saxutils import quoteattr
    model = arm.model
    name = group or DEFAULT_GROUP
    joints = ''.join(f'\n    <joint name={quoteattr(j)} value="{float(v)!r}"/>'
                     for j, v in zip(model.joint_names, arm.home))
    return (f'<?xml version="1.0"?>\n<robot name={quoteattr(model.name)}>\n'
            f'  <group name={quoteattr(name)}>\n'
            f'    <chain base_link={quoteattr(model.base_link)} '
            f'tip_link={quoteattr(model.tip_link)}/>\n  </group>\n'
            f'  <group_state name="home" group={quoteattr(name)}>{joints}\n  </group_state>\n'
            '</robot>\n')
