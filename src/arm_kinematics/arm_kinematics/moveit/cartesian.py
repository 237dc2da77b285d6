"""compute_cartesian_path as a decision (move_group's cartesian_path_service_capability).

The waypoints of ``link_name`` (the tip or a link rigid with it) in any frame of the robot
become tool poses in the base frame; the project's path IK (``motion.path_ik``) follows them
without hidden branch flips and says where and why it stopped. MoveIt's jump thresholds are
applied to the joint path it returns (absolute: revolute and prismatic, rad and m per step;
relative: ``jump_threshold`` times the mean step), ``avoid_collisions`` cuts the path at the
first sample in collision with the scene or itself, and the fraction is the share of the tool
path followed, as MoveIt's. The answer is SUCCESS with the fraction (MoveIt's convention:
a partial path is not an error); only requests that cannot be started are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
import math
import threading

import numpy as np

from arm_kinematics.common.transforms import matrix_to_quaternion
from arm_kinematics.ik.result import GoalType
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_kinematics.motion.path_ik import PathIK
from arm_kinematics.motion.path_request import path_settings, PathCode, PathRequest, ToolPose
from arm_kinematics.motion.path_timing import time_joint_path
from arm_kinematics.motion.trajectory import Trajectory
from arm_kinematics.moveit import codes
from arm_kinematics.moveit.codes import Answer
from arm_kinematics.moveit.poses import pose_matrix
from arm_kinematics.moveit.robot import MoveItRobot

PATH_CODES = {PathCode.INVALID_INPUT: codes.INVALID_GOAL_CONSTRAINTS,
              PathCode.TIMEOUT: codes.TIMED_OUT,
              PathCode.BUSY: codes.FAILURE,
              PathCode.INTERNAL_ERROR: codes.FAILURE}


@dataclass
class CartesianQuery:
    """A GetCartesianPath request as plain values."""

    group: str
    waypoints: Sequence[tuple[Sequence[float], Sequence[float]]]   # (position, quaternion)
    frame_id: str = ''
    link_name: str = ''
    start_names: Sequence[str] = ()
    start_positions: Sequence[float] = ()
    max_step: float = 0.0
    jump_threshold: float = 0.0
    prismatic_jump_threshold: float = 0.0
    revolute_jump_threshold: float = 0.0
    avoid_collisions: bool = True
    velocity_scale: float = 0.0
    path_constraints: int = 0        # how many constraints the request carries


@dataclass(frozen=True)
class CartesianPath:
    trajectory: Trajectory
    fraction: float
    stop: str          # where and why the path stopped ('' when complete)


class CartesianCapability:
    """compute_cartesian_path over one robot's path IK and a collision checker factory.

    Args:
        checker: returns the collision checker of the current scene (None: no checks).
    """

    def __init__(self, robot: MoveItRobot, path_ik: PathIK,
                 checker: Callable[[], object | None] = lambda: None,
                 options: SolveOptions = SolveOptions()) -> None:
        self.robot = robot
        self.path_ik = path_ik
        self.checker = checker
        self.options = options
        self._lock = threading.Lock()     # a checker serves one thread

    def plan(self, query: CartesianQuery, current: np.ndarray) -> Answer:
        robot = self.robot
        group = robot.group(query.group)
        if not group.success:
            return group
        if query.path_constraints:
            return codes.fail(codes.INVALID_GOAL_CONSTRAINTS,
                              'path constraints on a Cartesian path are not honoured here; '
                              'send none (the path itself is the constraint)')
        start = robot.state(query.start_names, query.start_positions, current)
        if not start.success:
            return start
        if not query.waypoints:
            return codes.fail(codes.INVALID_GOAL_CONSTRAINTS,
                              'no waypoints: a Cartesian path needs at least one pose')
        for name in ('max_step', 'jump_threshold', 'prismatic_jump_threshold',
                     'revolute_jump_threshold', 'velocity_scale'):
            value = getattr(query, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                return codes.fail(codes.INVALID_GOAL_CONSTRAINTS,
                                  f'{name} {value!r} must be finite and >= 0')
        q0 = start.value
        frame = robot.frame_pose(query.frame_id, q0)
        if not frame.success:
            return frame
        tip = robot.tip_from_link(query.link_name)
        if not tip.success:
            return tip
        poses = []
        for i, (position, orientation) in enumerate(query.waypoints):
            pose = pose_matrix(position, orientation, f'waypoint {i}')
            if not pose.success:
                return pose
            tool = frame.value @ pose.value @ tip.value
            poses.append(ToolPose(tuple(tool[:3, 3]), matrix_to_quaternion(tool[:3, :3])))
        request = PathRequest(start=tuple(q0), waypoints=poses, goal=GoalType.FULL_POSE,
                              max_cartesian_step=query.max_step,
                              max_joint_step=query.revolute_jump_threshold,
                              velocity_scale=min(query.velocity_scale, 1.0), partial=True)
        result = self.path_ik.follow(request, self.options)
        if result.code in PATH_CODES and result.trajectory is None:
            return codes.fail(PATH_CODES[result.code], result.message)
        if result.trajectory is None:
            return Answer(codes.SUCCESS, f'nothing followed: {result.message}',
                          CartesianPath(Trajectory.hold(robot.joint_names, q0), 0.0,
                                        result.message))
        positions = np.asarray(result.trajectory.positions)
        progress = np.asarray(result.progress, dtype=float)
        if len(progress) != len(positions):
            progress = np.linspace(0.0, result.fraction, len(positions))
        keep, stop = self._cut(query, positions)
        fraction = result.fraction
        message = '' if result.success else result.message
        trajectory = result.trajectory
        if keep < len(positions):
            fraction = float(progress[keep - 1]) if keep > 0 else 0.0
            settings, _ = path_settings(request)
            trajectory = time_joint_path(robot.model, positions[:keep], settings,
                                         progress[:keep])
            message = stop
        words = (f'followed {fraction:.1%} of the path'
                 + (f'; stopped: {message}' if message else ''))
        return Answer(codes.SUCCESS, words, CartesianPath(trajectory, float(fraction), message))

    def _cut(self, query: CartesianQuery, positions: np.ndarray) -> tuple[int, str]:
        """How many samples to keep (MoveIt's jump tests, then collisions) and why."""
        steps = np.abs(np.diff(positions, axis=0))
        keep, why = len(positions), ''
        if len(steps):
            prismatic = np.array([kind == 'prismatic' for kind in self._kinds()])
            checks = []
            if query.prismatic_jump_threshold > 0 and prismatic.any():
                checks.append((steps[:, prismatic].max(axis=1) >
                               query.prismatic_jump_threshold, 'prismatic jump threshold'))
            if query.revolute_jump_threshold > 0 and (~prismatic).any():
                checks.append((steps[:, ~prismatic].max(axis=1) >
                               query.revolute_jump_threshold, 'revolute jump threshold'))
            if query.jump_threshold > 0 and len(steps) > 1:
                distance = np.linalg.norm(np.diff(positions, axis=0), axis=1)
                checks.append((distance > query.jump_threshold * distance.mean(),
                               f'joint-space jump over {query.jump_threshold:g} x the mean '
                               'step'))
            for mask, what in checks:
                if mask.any():
                    first = int(np.argmax(mask)) + 1
                    if first < keep:
                        keep, why = first, f'{what} at sample {first}'
        if query.avoid_collisions:
            with self._lock:
                checker = self.checker()
                if checker is not None:
                    for i in range(1, keep):
                        if not checker.is_free(positions[i]):
                            report = checker.check(positions[i])
                            keep, why = i, f'sample {i}: {report.message}'
                            break
        return keep, why

    def _kinds(self) -> list[str]:
        joints = self.robot.tree.joints
        return [joints[name].kind for name in self.robot.joint_names]

