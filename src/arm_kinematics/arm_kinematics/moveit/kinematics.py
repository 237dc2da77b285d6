"""compute_ik and compute_fk as decisions (move_group's kinematics_service_capability).

IK: the pose of ``ik_link_name`` (the group's tip, or any link rigid with it) in any frame of
the robot becomes a tool pose in the base frame and goes to the arm's ``IKDispatcher`` with the
request's seed, timeout and avoid_collisions; joint constraints bound the answer (a seed inside
them first, then the answer checked). FK: any link in any frame of the robot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
import math

import numpy as np

from arm_kinematics.common.transforms import matrix_to_quaternion
from arm_kinematics.ik.request import AVOID_OFF, AVOID_ON, IKDispatcher, IKRequest
from arm_kinematics.ik.result import ErrorCode, GoalType
from arm_kinematics.ik.solvers.base import MAX_TIMEOUT, SolveOptions
from arm_kinematics.moveit import codes
from arm_kinematics.moveit.codes import Answer
from arm_kinematics.moveit.poses import pose_matrix
from arm_kinematics.moveit.robot import MoveItRobot

# The project's IK codes as MoveIt's (what is not listed: NO_IK_SOLUTION).
IK_CODES = {
    ErrorCode.OK: codes.SUCCESS,
    ErrorCode.TIMED_OUT: codes.TIMED_OUT,
    ErrorCode.COLLISION: codes.GOAL_IN_COLLISION,
    ErrorCode.FLOOR_COLLISION: codes.GOAL_IN_COLLISION,
    ErrorCode.INVALID_INPUT: codes.INVALID_GOAL_CONSTRAINTS,
    ErrorCode.UNKNOWN_FRAME: codes.FRAME_TRANSFORM_FAILURE,
    ErrorCode.UNKNOWN_JOINT_NAMES: codes.INVALID_ROBOT_STATE,
    ErrorCode.BUSY: codes.FAILURE,
    ErrorCode.INTERNAL_ERROR: codes.FAILURE,
}


@dataclass(frozen=True)
class JointBound:
    """A JointConstraint: position with its tolerances (rad or m)."""

    joint: str
    position: float
    above: float
    below: float

    def holds(self, value: float, slack: float = 1e-9) -> bool:
        return self.position - self.below - slack <= value <= self.position + self.above + slack


@dataclass
class IKQuery:
    """A GetPositionIK request as plain values (frame '' is the base; link '' the tip)."""

    group: str
    position: Sequence[float]
    orientation: Sequence[float] = (0.0, 0.0, 0.0, 1.0)
    frame_id: str = ''
    ik_link: str = ''
    seed_names: Sequence[str] = ()
    seed_positions: Sequence[float] = ()
    timeout: float = 0.0
    avoid_collisions: bool = False
    joint_bounds: Sequence[JointBound] = field(default_factory=tuple)
    position_only: bool = False


def bounds_reason(robot: MoveItRobot, bounds: Sequence[JointBound]) -> str:
    """'' when every joint constraint names a chain joint with finite values, else why."""
    for bound in bounds:
        if bound.joint not in robot.joint_names:
            return (f'joint constraint on "{bound.joint}", which is not a joint of the group '
                    f'({", ".join(robot.joint_names)})')
        values = (bound.position, bound.above, bound.below)
        if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values) or \
                bound.above < 0 or bound.below < 0:
            return (f'joint constraint on "{bound.joint}": position {bound.position!r}, '
                    f'tolerances {bound.above!r}/{bound.below!r} must be finite, tolerances '
                    '>= 0')
    return ''


def violated(robot: MoveItRobot, bounds: Sequence[JointBound], q: np.ndarray) -> str:
    """The first joint constraint ``q`` breaks, in words ('' when all hold)."""
    for bound in bounds:
        value = float(q[robot.joint_names.index(bound.joint)])
        if not bound.holds(value):
            return (f'{bound.joint} = {value:.4f} is outside its constraint '
                    f'[{bound.position - bound.below:.4f}, {bound.position + bound.above:.4f}]')
    return ''


class KinematicsCapability:
    """compute_ik and compute_fk over one robot and its IK dispatcher (scene set on it)."""

    def __init__(self, robot: MoveItRobot, dispatcher: IKDispatcher,
                 options: SolveOptions = SolveOptions()) -> None:
        self.robot = robot
        self.dispatcher = dispatcher
        self.options = options

    # ------------------------------------------------------------------ IK
    def target_of(self, query: IKQuery, seed: np.ndarray) -> Answer:
        """The tool pose (4×4, base frame) the query asks for."""
        robot = self.robot
        pose = pose_matrix(query.position, query.orientation, 'IK target pose')
        if not pose.success:
            return pose
        frame = robot.frame_pose(query.frame_id, seed)
        if not frame.success:
            return frame
        tip = robot.tip_from_link(query.ik_link)
        if not tip.success:
            return tip
        return Answer(codes.SUCCESS, '', frame.value @ pose.value @ tip.value)

    def ik(self, query: IKQuery, current: np.ndarray) -> Answer:
        """Joint positions (value: q in chain order) reaching the query's pose."""
        robot = self.robot
        group = robot.group(query.group)
        if not group.success:
            return group
        seed = robot.state(query.seed_names, query.seed_positions, current)
        if not seed.success:
            return seed
        reason = bounds_reason(robot, query.joint_bounds)
        if reason:
            return codes.fail(codes.INVALID_GOAL_CONSTRAINTS, reason)
        timeout = query.timeout
        if not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout >= 0):
            return codes.fail(codes.INVALID_GOAL_CONSTRAINTS,
                              f'timeout {timeout!r} s must be finite and >= 0')
        target = self.target_of(query, seed.value)
        if not target.success:
            return target
        seeds = [seed.value]
        if query.joint_bounds:
            inside = seed.value.copy()
            for bound in query.joint_bounds:
                i = robot.joint_names.index(bound.joint)
                inside[i] = min(max(inside[i], bound.position - bound.below),
                                bound.position + bound.above)
            seeds = [inside, *[s for s in seeds if not np.allclose(s, inside)]]
        options = self.options
        if timeout > 0:
            options = replace(options, timeout=min(timeout, MAX_TIMEOUT))
        answer = None
        for start in seeds:
            answer = self._solve(target.value, start, options, query)
            if not answer.success:
                return answer
            broken = violated(robot, query.joint_bounds, answer.value)
            if not broken:
                return answer
        return codes.fail(codes.NO_IK_SOLUTION, f'the IK solution breaks a joint constraint: '
                          f'{broken}')

    def _solve(self, tool: np.ndarray, seed: np.ndarray, options: SolveOptions,
               query: IKQuery) -> Answer:
        request = IKRequest(
            position=tuple(tool[:3, 3]), orientation=matrix_to_quaternion(tool[:3, :3]),
            goal=GoalType.POSITION if query.position_only else GoalType.FULL_POSE,
            seed_names=self.robot.joint_names, seed_positions=tuple(seed),
            avoid_collisions=AVOID_ON if query.avoid_collisions else AVOID_OFF)
        result = self.dispatcher.solve(request, options, seed).result
        if result.code == ErrorCode.OK and result.q is not None:
            return Answer(codes.SUCCESS, 'solved', np.asarray(result.q, dtype=float))
        code = IK_CODES.get(result.code, codes.NO_IK_SOLUTION)
        return codes.fail(code, f'{result.code.name.lower()}: {result.reason}'
                          if result.reason else result.code.name.lower())

    # ------------------------------------------------------------------ FK
    def fk(self, links: Sequence[str], frame_id: str, names: Sequence[str],
           positions: Sequence[float], current: np.ndarray) -> Answer:
        """Poses of ``links`` in ``frame_id`` (value: [(link, position, quaternion)])."""
        robot = self.robot
        state = robot.state(names, positions, current)
        if not state.success:
            return state
        q = state.value
        frame = robot.frame_pose(frame_id, q)
        if not frame.success:
            return frame
        inverse = np.linalg.inv(frame.value)
        poses = []
        for link in links:
            pose = robot.link_pose(link, q)
            if not pose.success:
                return pose
            relative = inverse @ pose.value
            poses.append((link, tuple(float(v) for v in relative[:3, 3]),
                          matrix_to_quaternion(relative[:3, :3])))
        return Answer(codes.SUCCESS, '', poses)
