"""Conversions between path and batch IK (kinematics.path_ik) and their services
(arm_interfaces CartesianPath, SolveIKBatch), for ik_server. No solving here."""

from __future__ import annotations

import math

from geometry_msgs.msg import Point, Pose
import numpy as np

from arm_ik.nodes.conversions import seconds_of
from arm_ik.nodes.motion_messages import trajectory_message
from arm_interfaces.srv import CartesianPath, SolveIKBatch
from arm_kinematics.ik.request import IKAnswer, IKRequest, resolve_seed
from arm_kinematics.ik.result import ErrorCode
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.batch_ik import MAX_BATCH
from arm_kinematics.motion.path_request import PathCode, PathRequest, PathResult, ToolPose


def path_request(message: CartesianPath.Request, model: ArmModel,
                 current: np.ndarray) -> PathRequest | PathResult:
    """The core request of a CartesianPath request, or the INVALID_INPUT result.

    Args:
        message: the service request.
        model: the arm (joint names of the start state).
        current: the start when the request names none (last joint_states or home), rad.
    """
    start, failure = resolve_seed(model, list(message.start.name), list(message.start.position),
                                  current)
    if failure is not None:
        return PathResult(PathCode.INVALID_INPUT, f'start: {failure.reason}',
                          ik_code=failure.code)
    waypoints = [ToolPose((p.position.x, p.position.y, p.position.z),
                          (p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w))
                 for p in message.waypoints.poses]
    # One arc point per waypoint, or none; the core says what is wrong with a bad list.
    throughs = [(p.x, p.y, p.z) for p in message.arc_through]
    return PathRequest(
        start=start, waypoints=waypoints, goal=int(message.goal_type), arc_through=throughs,
        frame_id=message.waypoints.header.frame_id, solver=message.solver,
        max_cartesian_step=message.max_cartesian_step,
        max_rotation_step=message.max_rotation_step, max_joint_step=message.max_joint_step,
        max_deviation=message.max_deviation, min_step=message.min_step,
        max_condition=message.max_condition, allow_branch_change=message.allow_branch_change,
        partial=message.partial, timeout=max(seconds_of(message.timeout), 0.0)
        if message.timeout.sec >= 0 else -1.0,
        timing=message.timing, velocity_scale=message.velocity_scale,
        joint_limits=int(message.joint_limits))


def _pose(position: np.ndarray, quaternion: np.ndarray) -> Pose:
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = (float(v) for v in position)
    (pose.orientation.x, pose.orientation.y, pose.orientation.z,
     pose.orientation.w) = (float(v) for v in quaternion)
    return pose


def _finite_or_inf(value: float) -> float:
    value = float(value)
    return math.inf if math.isnan(value) else value


def fill_path_response(response: CartesianPath.Response, result: PathResult,
                       model: ArmModel) -> CartesianPath.Response:
    """Copy a PathResult into the service response (the trajectory in chain order)."""
    response.code = int(result.code)
    response.message = result.message or result.code.name
    if result.trajectory is not None:
        response.trajectory = trajectory_message(result.trajectory, range(model.dof),
                                                 model.joint_names, skip_start=False)
        response.trajectory.header.frame_id = model.base_link
    response.fraction = float(result.fraction)
    response.stop_sample = int(result.stop_sample)
    response.stop_waypoint = int(result.stop_waypoint)
    response.stop_pose = _pose(result.stop_position, result.stop_orientation)
    failed = result.failed_position
    response.failed_position = Point(x=float(failed[0]), y=float(failed[1]),
                                     z=float(failed[2]))
    response.joint = result.joint
    response.joint_step = float(result.joint_step)
    response.condition_number = _finite_or_inf(result.condition_number)
    response.ik_error_code.val = int(result.ik_code)
    response.solver = result.solver
    response.branches = list(result.branches)
    response.largest_step = float(result.largest_step)
    response.samples = int(result.samples)
    response.solve_time = float(result.solve_time)
    return response


def batch_requests(message: SolveIKBatch.Request) -> tuple[list[IKRequest] | None, str]:
    """One IKRequest per target of a SolveIKBatch request, or (None, why not)."""
    positions = np.asarray(message.positions, dtype=float)
    if positions.size % 3:
        return None, f'positions has {positions.size} values, not a multiple of 3'
    count = positions.size // 3
    if count > MAX_BATCH:
        return None, (f'{count} targets in one request; at most {MAX_BATCH} '
                      '(SolveIKBatch.MAX_TARGETS): split the batch')
    orientations = np.asarray(message.orientations, dtype=float)
    if orientations.size == 0:
        orientations = np.tile([0.0, 0.0, 0.0, 1.0], count)
    if orientations.size != 4 * count:
        return None, (f'orientations has {orientations.size} values for {count} targets '
                      '(4 per target, or none)')
    positions, orientations = positions.reshape(count, 3), orientations.reshape(count, 4)
    shared = dict(goal=int(message.goal_type), frame_id=message.frame_id,
                  solver=message.solver, seed_names=list(message.seed.name),
                  seed_positions=list(message.seed.position), branch=message.branch,
                  timeout_sec=message.timeout.sec, timeout_nanosec=message.timeout.nanosec,
                  max_iterations=message.max_iterations, damping=message.damping,
                  tolerance=message.tolerance, joint_limits=int(message.joint_limits))
    return [IKRequest(position=tuple(p), orientation=tuple(o), **shared)
            for p, o in zip(positions.tolist(), orientations.tolist(), strict=True)], ''


def fill_batch_response(response: SolveIKBatch.Response, answers: list[IKAnswer],
                        model: ArmModel, seconds: float) -> SolveIKBatch.Response:
    """Copy the per-target answers into the parallel arrays of the response."""
    response.error_code.val = int(ErrorCode.OK)
    response.message = f'{sum(a.result.success for a in answers)} of {len(answers)} solved'
    response.joint_names = list(model.joint_names)
    solutions = np.full((len(answers), model.dof), math.nan)
    for row, answer in enumerate(answers):
        result = answer.result
        if result.q is not None and result.code in (ErrorCode.OK, ErrorCode.PARTIAL_SOLUTION):
            solutions[row] = result.q
    response.codes = [int(a.result.code) for a in answers]
    # The words SolveIK's message would carry for the same answer.
    response.messages = [a.result.reason or ('solved' if a.result.success else a.result.code.name)
                         for a in answers]
    response.solutions = solutions.reshape(-1).tolist()
    response.branches = [a.result.branch for a in answers]
    response.position_errors = [_finite_or_inf(a.result.position_error) for a in answers]
    response.orientation_errors = [_finite_or_inf(a.result.orientation_error) for a in answers]
    response.condition_numbers = [_finite_or_inf(a.condition_number) for a in answers]
    response.solve_time = float(seconds)
    return response
