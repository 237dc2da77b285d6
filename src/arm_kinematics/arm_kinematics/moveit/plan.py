"""plan_kinematic_path and move_action's planning as a decision (move_group's
move_action_capability and plan_service_capability).

A goal is one of the request's goal constraint sets (any one satisfied suffices, as MoveIt):
joint constraints, position constraints on a link (the centre of its region, tolerance the
region's size) with orientation constraints on the same link, or a set named after a named
state of the group with no constraints in it. Position and orientation goals go through IK
(collision-free when the planner checks collisions); the joint goal is planned from the start
state by the arm's MotionPlanner (its detour planners round the scene), timed by the project's
motion laws at the request's velocity scaling (the acceleration scaling as its square root:
the laws' accelerations grow with the square of the speed). What is not honoured is refused
in words: visibility constraints, path and trajectory constraints.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
import math
import threading
import time

import numpy as np

from arm_kinematics.common.transforms import matrix_to_quaternion
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.motion.move_types import MotionSettings, MoveGoal, PlanFailure
from arm_kinematics.motion.planner import MotionPlanner
from arm_kinematics.motion.trajectory import Trajectory
from arm_kinematics.moveit import codes
from arm_kinematics.moveit.codes import Answer
from arm_kinematics.moveit.kinematics import (
    bounds_reason,
    IKQuery,
    JointBound,
    KinematicsCapability,
    violated,
)
from arm_kinematics.moveit.poses import pose_matrix

MOTION_CODES = {
    MotionCode.SUCCESS: codes.SUCCESS,
    MotionCode.IK_FAILED: codes.NO_IK_SOLUTION,
    MotionCode.INVALID_GOAL: codes.INVALID_GOAL_CONSTRAINTS,
    MotionCode.TRAJECTORY_INVALID: codes.INVALID_MOTION_PLAN,
    MotionCode.UNSAFE_PATH: codes.PLANNING_FAILED,
    MotionCode.NO_PATH: codes.PLANNING_FAILED,
    MotionCode.START_MISMATCH: codes.START_STATE_INVALID,
    MotionCode.NO_JOINT_STATE: codes.INVALID_ROBOT_STATE,
    MotionCode.CANCELED: codes.PREEMPTED,
    MotionCode.PREEMPTED: codes.PREEMPTED,
    MotionCode.CARTESIAN_PATH_FAILED: codes.PLANNING_FAILED,
}
DEFAULT_PLANNING_TIME = 5.0     # s, MoveIt's default allowed_planning_time


@dataclass(frozen=True)
class PositionGoal:
    """A PositionConstraint: ``link``'s point ``offset`` (link frame) at ``target`` (in
    ``frame_id``) within ``tolerance`` m."""

    link: str
    frame_id: str
    target: Sequence[float]
    tolerance: float = 1e-3
    offset: Sequence[float] = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class OrientationGoal:
    link: str
    frame_id: str
    orientation: Sequence[float]
    tolerances: Sequence[float] = (1e-3, 1e-3, 1e-3)


@dataclass
class GoalSet:
    name: str = ''
    joints: Sequence[JointBound] = ()
    positions: Sequence[PositionGoal] = ()
    orientations: Sequence[OrientationGoal] = ()
    visibility: int = 0


@dataclass
class PlanQuery:
    """A MotionPlanRequest as plain values (zero: MoveIt's default)."""

    group: str
    goals: Sequence[GoalSet] = field(default_factory=list)
    start_names: Sequence[str] = ()
    start_positions: Sequence[float] = ()
    path_constraints: int = 0
    trajectory_constraints: int = 0
    velocity_scale: float = 0.0
    acceleration_scale: float = 0.0
    allowed_planning_time: float = 0.0
    attempts: int = 0


@dataclass(frozen=True)
class PlannedMotion:
    trajectory: Trajectory
    goal: np.ndarray
    planning_time: float
    message: str


class PlanCapability:
    """Motion plans of one robot: IK for pose goals, the arm's MotionPlanner for the way.

    Args:
        kinematics: the IK capability (same robot, same scene).
        planner: the arm's MotionPlanner (its scene set by the host).
        checker: the current scene's collision checker (None: no collision checks).
        settings: the motion settings (law, period, default speed scale).
    """

    def __init__(self, kinematics: KinematicsCapability, planner: MotionPlanner,
                 checker: Callable[[], object | None] = lambda: None,
                 settings: MotionSettings = MotionSettings()) -> None:
        self.kinematics = kinematics
        self.robot = kinematics.robot
        self.planner = planner
        self.checker = checker
        self.settings = settings
        self._lock = threading.Lock()     # one plan at a time: the planner is not reentrant

    def refusal(self, query: PlanQuery) -> Answer | None:
        """What makes the request unplannable before any work, or None."""
        group = self.robot.group(query.group)
        if not group.success:
            return group
        if query.path_constraints:
            return codes.fail(codes.INVALID_GOAL_CONSTRAINTS,
                              'path constraints are not honoured by this planner; plan '
                              'without them or use compute_cartesian_path for a tool path')
        if query.trajectory_constraints:
            return codes.fail(codes.INVALID_GOAL_CONSTRAINTS,
                              'trajectory constraints are not honoured by this planner')
        if not query.goals:
            return codes.fail(codes.INVALID_GOAL_CONSTRAINTS,
                              'no goal constraints: give joint, position or orientation '
                              'constraints')
        for name in ('velocity_scale', 'acceleration_scale', 'allowed_planning_time'):
            value = getattr(query, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                return codes.fail(codes.INVALID_GOAL_CONSTRAINTS,
                                  f'{name} {value!r} must be finite and >= 0')
        if query.velocity_scale > 1 or query.acceleration_scale > 1:
            return codes.fail(codes.INVALID_GOAL_CONSTRAINTS,
                              'velocity and acceleration scaling factors must be in [0, 1]')
        return None

    def goal_of(self, goal: GoalSet, group: str, start: np.ndarray) -> Answer:
        """Joint positions (chain order) meeting one goal constraint set."""
        robot = self.robot
        if goal.visibility:
            return codes.fail(codes.INVALID_GOAL_CONSTRAINTS,
                              'visibility constraints are not served (no sensor model)')
        q = start.copy()
        if not (goal.joints or goal.positions or goal.orientations):
            state = robot.named_state(group, goal.name) if goal.name else codes.fail(
                codes.INVALID_GOAL_CONSTRAINTS, 'an empty goal constraint set')
            if not state.success:
                return state
            for joint, value in state.value.items():
                if joint in robot.joint_names:
                    q[robot.joint_names.index(joint)] = value
            return Answer(codes.SUCCESS, f'named state {goal.name}', q)
        reason = bounds_reason(robot, goal.joints)
        if reason:
            return codes.fail(codes.INVALID_GOAL_CONSTRAINTS, reason)
        for bound in goal.joints:
            q[robot.joint_names.index(bound.joint)] = bound.position
        if not (goal.positions or goal.orientations):
            return Answer(codes.SUCCESS, 'joint goal', q)
        links = {c.link for c in (*goal.positions, *goal.orientations)}
        if len(links) > 1 or len(goal.positions) > 1 or len(goal.orientations) > 1:
            return codes.fail(codes.INVALID_GOAL_CONSTRAINTS,
                              'one position and one orientation constraint on one link are '
                              f'served per goal; this one has links {sorted(links)}')
        if not goal.positions:
            return codes.fail(codes.INVALID_GOAL_CONSTRAINTS,
                              'an orientation constraint needs a position constraint on the '
                              'same link here (the goal is solved as a pose)')
        position = goal.positions[0]
        if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in
                   (*position.offset, position.tolerance)):
            return codes.fail(codes.INVALID_GOAL_CONSTRAINTS,
                              'position constraint: offset and tolerance must be finite')
        orientation = goal.orientations[0] if goal.orientations else None
        quaternion = orientation.orientation if orientation else (0.0, 0.0, 0.0, 1.0)
        target = pose_matrix(position.target, quaternion, f'goal of link {position.link}')
        if not target.success:
            return target
        pose = target.value
        if orientation is not None and orientation.frame_id.lstrip('/') != \
                position.frame_id.lstrip('/'):
            # The orientation in its own frame, brought into the position's frame.
            own = robot.frame_pose(orientation.frame_id, start)
            other = robot.frame_pose(position.frame_id, start)
            if not own.success or not other.success:
                return own if not own.success else other
            pose[:3, :3] = (np.linalg.inv(other.value) @ own.value)[:3, :3] @ pose[:3, :3]
        # The constrained point is ``offset`` in the link frame: the link origin sits at
        # the target minus the rotated offset.
        pose[:3, 3] -= pose[:3, :3] @ np.asarray(position.offset, dtype=float)
        query = IKQuery(group, tuple(pose[:3, 3]), matrix_to_quaternion(pose[:3, :3]),
                        position.frame_id, position.link, robot.joint_names, tuple(q),
                        avoid_collisions=self.checker() is not None, joint_bounds=goal.joints,
                        position_only=orientation is None)
        answer = self.kinematics.ik(query, q)
        if not answer.success:
            return answer
        broken = violated(robot, goal.joints, answer.value)
        if broken:
            return codes.fail(codes.NO_IK_SOLUTION, broken)
        return Answer(codes.SUCCESS, 'pose goal', answer.value)

    def plan(self, query: PlanQuery, current: np.ndarray) -> Answer:
        """A timed trajectory (value: PlannedMotion) from the start state to the first goal
        set that can be met."""
        started = time.monotonic()
        refused = self.refusal(query)
        if refused is not None:
            return refused
        robot = self.robot
        start = robot.state(query.start_names, query.start_positions, current)
        if not start.success:
            return start
        budget = query.allowed_planning_time or DEFAULT_PLANNING_TIME
        with self._lock:
            checker = self.checker()
            if checker is not None and not checker.is_free(start.value):
                return codes.fail(codes.START_STATE_IN_COLLISION,
                                  f'the start state is in collision: '
                                  f'{checker.check(start.value).message}')
            failure = None
            for goal in query.goals:
                resolved = self.goal_of(goal, query.group, start.value)
                if not resolved.success:
                    failure = failure or resolved
                    continue
                q_goal = resolved.value
                if not robot.model.within_limits(q_goal, 1e-6):
                    failure = failure or codes.fail(
                        codes.INVALID_GOAL_CONSTRAINTS,
                        'the goal is outside the joint limits of the URDF')
                    continue
                if checker is not None and not checker.is_free(q_goal):
                    failure = failure or codes.fail(
                        codes.GOAL_IN_COLLISION,
                        f'the goal is in collision: {checker.check(q_goal).message}')
                    continue
                answer = self._plan_to(query, start.value, q_goal, started, budget)
                if answer.success or answer.code == codes.TIMED_OUT:
                    return answer
                failure = failure or answer
            return failure

    def _plan_to(self, query: PlanQuery, start: np.ndarray, q_goal: np.ndarray,
                 started: float, budget: float) -> Answer:
        scale = query.velocity_scale or self.settings.speed_scale
        if query.acceleration_scale:
            scale = min(scale, math.sqrt(query.acceleration_scale))
        settings = replace(self.settings, speed_scale=scale)
        goal = MoveGoal(joint_names=self.robot.joint_names,
                        joint_positions=tuple(float(v) for v in q_goal))
        outcome = None
        for _ in range(max(1, query.attempts)):
            outcome = self.planner.plan(goal, start, settings)
            if not isinstance(outcome, PlanFailure):
                break
            if time.monotonic() - started > budget:
                break
        elapsed = time.monotonic() - started
        if elapsed > budget:
            return codes.fail(codes.TIMED_OUT, f'planning took {elapsed:.2f} s, more than the '
                              f'allowed_planning_time {budget:g} s')
        if isinstance(outcome, PlanFailure):
            error = outcome.error
            return codes.fail(MOTION_CODES.get(error.code, codes.PLANNING_FAILED),
                              f'{error.code.name.lower()}: {error.message}')
        return Answer(codes.SUCCESS, outcome.message,
                      PlannedMotion(outcome.trajectory, q_goal, elapsed, outcome.message))
