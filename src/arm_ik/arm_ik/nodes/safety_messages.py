"""Message conversions of the safety monitor: request fields to core arrays, core results to
SafetyStatus, CheckPath, PlanDetour and JointMap messages."""

from __future__ import annotations

import math

import numpy as np
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from arm_ik.nodes.conversions import checked_seconds, duration, point
from arm_interfaces.msg import JointMap as JointMapMsg
from arm_interfaces.msg import SafetyStatus
from arm_interfaces.srv import CheckPath, PlanDetour
from arm_kinematics.common.joint_state import joint_order
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.planning.grid import DetourPlan, PlanCode
from arm_kinematics.motion.planning.joint_map import JointMap
from arm_kinematics.motion.safety_paths import PathCheck
from arm_kinematics.scene.collision_report import CollisionReport
from arm_kinematics.scene.geometry import PoseCheck, SafetyGeometry, Verdict
from arm_kinematics.scene.monitor import map_samples_reason, path_samples_reason


# ---------------------------------------------------------------------------- requests
def joint_state_positions(model: ArmModel, names: list[str], positions: list[float],
                          what: str) -> np.ndarray:
    """Positions in chain order from a request's names + positions (exactly the arm's joints
    in any order; no names: chain order).

    Raises:
        ValueError: sizes, repeated, missing or unknown names, non-finite values; the message
            names them.
    """
    if not names:
        if len(positions) != model.dof:
            raise ValueError(f'{what} has no names and {len(positions)} positions; give names '
                             f'or {model.dof} positions in chain order')
        q = np.asarray(positions, dtype=float)
    else:
        if len(names) != len(positions):
            raise ValueError(f'{what} has {len(names)} names but {len(positions)} positions')
        order, reason = joint_order(model.joint_names, names, what)
        if order is None:
            raise ValueError(reason)
        q = np.array([float(positions[k]) for k in order])
    bad = [model.joint_names[k] for k in np.flatnonzero(~np.isfinite(q))]
    if bad:
        raise ValueError(f'{what} positions of {", ".join(bad)} are not finite')
    return q


def state_positions(model: ArmModel, state: JointState, what: str) -> np.ndarray:
    """``joint_state_positions`` of a JointState field of a request."""
    return joint_state_positions(model, list(state.name), list(state.position), what)


def trajectory_arrays(model: ArmModel, trajectory: JointTrajectory) -> tuple[np.ndarray,
                                                                              np.ndarray]:
    """(waypoints (K, n) rad in chain order, times (K,) s) of a JointTrajectory.

    Raises:
        ValueError: no points, bad names or sizes, non-finite values, positions outside the
            joint limits, times that are not strictly increasing.
    """
    names = list(trajectory.joint_names)
    if not trajectory.points:
        raise ValueError('the path has no points')
    waypoints = np.array([joint_state_positions(model, names, list(sample.positions),
                                                f'path point {k}')
                          for k, sample in enumerate(trajectory.points)])
    times = np.array([checked_seconds(sample.time_from_start, f'path point {k} time')
                      for k, sample in enumerate(trajectory.points)])
    low = waypoints < model.lower - 1e-9
    high = waypoints > model.upper + 1e-9
    if (low | high).any():
        k, j = np.argwhere(low | high)[0]
        raise ValueError(f'path point {k}: {model.joint_names[j]} = {waypoints[k, j]:.4f} rad '
                         f'is outside [{model.lower[j]:.4f}, {model.upper[j]:.4f}]')
    if len(times) > 1 and np.any(np.diff(times) <= 0.0):
        k = int(np.flatnonzero(np.diff(times) <= 0.0)[0]) + 1
        raise ValueError(f'path times must increase strictly: point {k} at {times[k]:g} s '
                         f'follows {times[k - 1]:g} s')
    return waypoints, times


def checked_path(geometry: SafetyGeometry, path: JointTrajectory, rate: float,
                 default_rate: float, max_point_step: float
                 ) -> tuple[np.ndarray, np.ndarray, float]:
    """A check_path request's (waypoints, times, sample rate), within the sample bound.

    Raises:
        ValueError: the path or rate is unusable, or needs too many samples.
    """
    waypoints, times = trajectory_arrays(geometry.model, path)
    rate = sample_rate_of(rate, default_rate)
    reason = path_samples_reason(geometry, waypoints, times, rate, max_point_step)
    if reason:
        raise ValueError(reason)
    return waypoints, times, rate


def map_path(model: ArmModel, path: JointTrajectory, rate: float, default_rate: float
             ) -> tuple[np.ndarray | None, np.ndarray | None, float]:
    """A joint_map request's path: (waypoints or None, times from 0 or None when it is not a
    timed path, sample rate).

    Raises:
        ValueError: the path or rate is unusable, or needs too many samples.
    """
    waypoints = times = None
    if path.points:
        waypoints, times = trajectory_arrays(model, path)
        times = times - times[0]
    rate = sample_rate_of(rate, default_rate)
    timed = waypoints is not None and len(waypoints) > 1
    reason = map_samples_reason(times[-1], rate) if timed else ''
    if reason:
        raise ValueError(reason)
    return waypoints, times if timed else None, rate


def _value_or_default(field: str, unit: str, value: float, default: float) -> float:
    """A request's ``field`` (in ``unit``; 0: the node's ``default``).

    Raises:
        ValueError: negative or not finite.
    """
    if not math.isfinite(value) or value < 0.0:
        raise ValueError(f'{field} {value} must be finite and >= 0 {unit} (0: node default)')
    return value or default


def sample_rate_of(value: float, default: float) -> float:
    """A request's sample_rate (Hz; 0: the node's ``default``); ValueError when negative or
    not finite."""
    return _value_or_default('sample_rate', 'Hz', value, default)


def resolution_of(value: float, default: float) -> float:
    """A request's grid resolution (rad; 0: the node's ``default``); ValueError when negative
    or not finite."""
    return _value_or_default('resolution', 'rad', value, default)


# ---------------------------------------------------------------------------- status
def status_header(stamp, frame: str, geometry: SafetyGeometry,
                  malformed_count: int) -> SafetyStatus:
    """A SafetyStatus with its header and settings filled, no verdict yet (``stamp``: the
    joint_states message's, or the node's clock when that is zero)."""
    status = SafetyStatus()
    status.header.stamp = stamp
    status.header.frame_id = frame
    status.floor_enabled = geometry.floor_enabled
    status.obstacle_enabled = geometry.obstacle_enabled
    status.obstacle_radius = geometry.config.obstacle.radius
    status.contact_distance = geometry.contact_distance
    status.malformed_count = malformed_count
    status.min_floor_clearance = math.nan
    status.min_obstacle_distance = math.nan
    status.closest_distance = math.nan
    return status


def fill_pose(status: SafetyStatus, model: ArmModel, check: PoseCheck, q: np.ndarray) -> None:
    """The floor / obstacle fields of a status from the pose's check."""
    status.verdict = int(check.verdict)
    status.message = check.message
    status.joint_state = JointState(name=list(model.joint_names),
                                    position=[float(v) for v in q])
    status.joint_state.header = status.header
    status.link_names = list(check.link_names)
    status.floor_clearance = [float(v) for v in check.floor_clearance]
    status.obstacle_distance = [float(v) for v in check.obstacle_distance]
    status.floor_violation = [bool(v) for v in check.floor_violation]
    status.obstacle_contact = [bool(v) for v in check.obstacle_contact]
    status.contact_points = [point(check.closest_points[k])
                             for k in np.flatnonzero(check.obstacle_contact)]
    status.min_floor_clearance = check.min_floor_clearance
    status.min_obstacle_distance = check.min_obstacle_distance
    status.tip = point(check.tip)


def fill_collision(status: SafetyStatus, report: CollisionReport, version: int) -> None:
    """The collision witness fields of a status from the checker's report."""
    status.collision_checked = True
    status.self_collision = report.self_collision
    status.scene_contact = report.scene_collision
    status.contact_pairs = [f'{c.a}|{c.b}' for c in report.contacts]
    closest = report.closest
    status.closest_pair = '' if closest is None else f'{closest.a}|{closest.b}'
    status.closest_distance = math.nan if closest is None else float(closest.distance)
    status.collision_message = report.message
    status.scene_version = int(version)


# ---------------------------------------------------------------------------- responses
def fill_check_path(response: CheckPath.Response, result: PathCheck, model: ArmModel,
                    start_time: float, obstacle_is_violation: bool,
                    return_samples: bool) -> CheckPath.Response:
    """A CheckPath response from the core's check; times shifted back by ``start_time``."""
    checks = result.checks
    response.error_code = response.CHECKED
    response.message = result.message
    response.safe = result.safe
    response.sample_count = len(checks)
    response.min_floor_clearance = float(np.min(checks.min_floor_clearance))
    response.min_obstacle_distance = float(np.min(checks.min_obstacle_distance))
    response.contact_times = [float(t + start_time) for t in result.contacts.times]
    response.contact_tips = [point(tip) for tip in result.contacts.tips]
    if not result.safe:
        index = result.first_violation
        pose = checks.pose(index)
        response.first_violation_index = index
        response.first_violation_time = float(result.first_violation_time + start_time)
        response.first_violation_verdict = int(result.first_violation_verdict)
        response.first_violation_links = [
            name for k, name in enumerate(pose.link_names)
            if pose.floor_violation[k] or (obstacle_is_violation and pose.obstacle_contact[k])]
        response.first_violation_state = JointState(
            name=list(model.joint_names),
            position=[float(v) for v in result.samples.positions[index]])
        response.first_violation_tip = point(pose.tip)
    if return_samples:
        verdicts = checks.verdict.copy()
        if not obstacle_is_violation:
            verdicts[verdicts == Verdict.OBSTACLE_CONTACT] = Verdict.SAFE
        response.sample_times = [float(t + start_time) for t in result.samples.times]
        response.sample_verdicts = [int(v) for v in verdicts]
    return response


def fill_detour(response: PlanDetour.Response, plan: DetourPlan, model: ArmModel,
                stamp) -> PlanDetour.Response:
    """A PlanDetour response from the planner's plan."""
    response.error_code = int(plan.code)
    response.message = plan.message
    response.detoured = plan.detoured
    response.plan_time = plan.plan_time
    response.cells_expanded = plan.expanded
    if plan.code == PlanCode.OK:
        response.path.header.stamp = stamp
        response.path.header.frame_id = model.base_link
        response.path.joint_names = list(model.joint_names)
        response.path.points = [
            JointTrajectoryPoint(positions=[float(v) for v in q],
                                 time_from_start=duration(float(t)))
            for q, t in zip(plan.waypoints, plan.times)]
        response.min_floor_clearance = plan.min_floor_clearance
        response.samples_checked = plan.samples_checked
    else:
        response.min_floor_clearance = math.nan
    return response


def joint_map_message(result: JointMap, model: ArmModel, stamp) -> JointMapMsg:
    """The JointMap message of the core's map."""
    message = JointMapMsg()
    message.header.stamp = stamp
    message.header.frame_id = model.base_link
    message.axis_joint_names = list(result.joint_names)
    message.base_state = JointState(name=list(model.joint_names),
                                    position=[float(v) for v in result.base_q])
    message.row_min, message.column_min = float(result.axis_a[0]), float(result.axis_b[0])
    message.row_step = float(result.axis_a[1] - result.axis_a[0])
    message.column_step = float(result.axis_b[1] - result.axis_b[0])
    message.row_count, message.column_count = len(result.axis_a), len(result.axis_b)
    cells = result.floor.astype(np.uint8) * JointMapMsg.CELL_FLOOR + \
        result.contact.astype(np.uint8) * JointMapMsg.CELL_CONTACT
    message.collision_checked = result.self_collision is not None
    if message.collision_checked:
        cells += result.self_collision.astype(np.uint8) * JointMapMsg.CELL_SELF_COLLISION + \
            result.scene_contact.astype(np.uint8) * JointMapMsg.CELL_SCENE_CONTACT
        message.scene_version = int(result.scene_version)
    message.cells = cells.ravel().tobytes()
    message.path_rows = result.path[:, 0].tolist()
    message.path_columns = result.path[:, 1].tolist()
    message.path_times = result.path_times.tolist()
    message.contact_times = result.contacts.times.tolist()
    message.contact_rows = result.contact_angles[:, 0].tolist()
    message.contact_columns = result.contact_angles[:, 1].tolist()
    message.contact_tips = [point(tip) for tip in result.contacts.tips]
    return message


def joint_map_summary(result: JointMap) -> str:
    """The response message of a joint map: its size and what it holds."""
    collision = '' if result.self_collision is None else (
        f', {int(result.self_collision.sum())} in self-collision, '
        f'{int(result.scene_contact.sum())} touching the scene')
    return (f'{len(result.axis_a)} x {len(result.axis_b)} cells, '
            f'{int(result.floor.sum())} below the floor, {int(result.contact.sum())} in '
            f'contact{collision}; {len(result.path)} path samples, '
            f'{len(result.contacts)} contacts')
