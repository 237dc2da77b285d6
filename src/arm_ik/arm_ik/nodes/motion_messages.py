"""Conversions between the motion core's plain values and ROS messages (trajectory_executor)."""

from __future__ import annotations

from collections.abc import Sequence
import math

import numpy as np
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import Marker, MarkerArray

from arm_ik.kinematics.motion.commands import TrajectoryPoint
from arm_ik.kinematics.motion.planner import MoveGoal, Preview
from arm_ik.kinematics.motion.trajectory import Trajectory
from arm_ik.kinematics.visual import plan_drawing, PlanDrawing
from arm_ik.nodes.conversions import colour as rgba
from arm_ik.nodes.conversions import duration, point, seconds_of
from arm_interfaces.action import MoveToTarget
from arm_interfaces.msg import PlannedPath

# Marker colours (r, g, b, a).
_PATH_COLOUR = (0.1, 0.8, 0.2, 1.0)
_GHOST_COLOUR = (0.7, 0.7, 0.75, 0.35)
_TARGET_COLOUR = (0.2, 0.4, 1.0, 0.9)
_FAILED_COLOUR = (1.0, 0.5, 0.0, 1.0)
_FAILURE_COLOUR = (1.0, 0.1, 0.1, 0.9)


def goal_from_message(goal: MoveToTarget.Goal) -> MoveGoal:
    """The plain MoveGoal of a MoveToTarget goal."""
    pose = goal.target.pose
    return MoveGoal(
        position=(pose.position.x, pose.position.y, pose.position.z),
        orientation=(pose.orientation.x, pose.orientation.y, pose.orientation.z,
                     pose.orientation.w),
        goal_type=int(goal.goal_type), frame_id=goal.target.header.frame_id,
        joint_names=tuple(goal.joint_target.name),
        joint_positions=tuple(float(v) for v in goal.joint_target.position),
        solver=goal.solver, branch=goal.branch, motion_law=goal.motion_law,
        duration=float(goal.duration), speed_scale=float(goal.speed_scale))


def points_from_message(message: JointTrajectory) -> list[TrajectoryPoint]:
    """The points of a JointTrajectory as plain values (times in s)."""
    return [TrajectoryPoint(seconds_of(point.time_from_start), list(point.positions),
                            list(point.velocities)) for point in message.points]


def trajectory_message(trajectory: Trajectory, order: Sequence[int], names: Sequence[str],
                       skip_start: bool = True) -> JointTrajectory:
    """A JointTrajectory for a joint_trajectory_controller: names, positions, velocities and
    time_from_start of every sample; header stamp 0 (start on receipt).

    Args:
        trajectory: chain-order samples.
        order: chain index of each of the controller's joints.
        names: the controller's joint names.
        skip_start: leave out the sample at t = 0 (the controller's current state).
    """
    message = JointTrajectory()
    message.joint_names = list(names)
    positions = trajectory.positions[:, order]
    velocities = trajectory.velocities[:, order]
    first = 1 if skip_start and len(trajectory) > 1 else 0
    for index in range(first, len(trajectory)):
        message.points.append(JointTrajectoryPoint(
            positions=positions[index].tolist(), velocities=velocities[index].tolist(),
            time_from_start=duration(float(trajectory.times[index]))))
    return message


def point_message(q: np.ndarray, v: np.ndarray, order: Sequence[int], names: Sequence[str],
                  seconds: float) -> JointTrajectory:
    """A one-point JointTrajectory reaching ``q`` (rad) with ``v`` (rad/s) in ``seconds``."""
    message = JointTrajectory()
    message.joint_names = list(names)
    message.points.append(JointTrajectoryPoint(
        positions=np.asarray(q)[order].tolist(), velocities=np.asarray(v)[order].tolist(),
        time_from_start=duration(seconds)))
    return message


def executed_path_message(record: Sequence[tuple[float, np.ndarray, np.ndarray]],
                          names: Sequence[str]) -> JointTrajectory:
    """What was actually commanded for one goal: one point per control tick."""
    message = JointTrajectory()
    message.joint_names = list(names)
    last = -math.inf
    for seconds, q, v in record:
        if seconds <= last:       # a stop in the same instant as the last tick: keep one
            continue
        last = seconds
        message.points.append(JointTrajectoryPoint(
            positions=[float(x) for x in q], velocities=[float(x) for x in v],
            time_from_start=duration(max(seconds, 0.0))))
    return message


def _marker(frame: str, namespace: str, marker_id: int, kind: int, colour: tuple,
            width: float) -> Marker:
    marker = Marker()
    marker.header.frame_id = frame        # stamp 0: drawn with the latest transform
    marker.ns = namespace
    marker.id = marker_id
    marker.type = kind
    marker.action = Marker.ADD
    marker.pose.orientation.w = 1.0
    marker.scale.x = marker.scale.y = marker.scale.z = width
    marker.color = rgba(colour)
    return marker


def planned_markers(frame: str, preview: Preview, target: np.ndarray | None) -> MarkerArray:
    """Tool path (green line), ghost snapshots (grey skeletons) and the target (blue ball);
    a DELETEALL first, so markers of an earlier plan never linger."""
    markers = MarkerArray()
    clear = Marker(action=Marker.DELETEALL)
    clear.header.frame_id = frame
    markers.markers.append(clear)
    path = _marker(frame, 'tip_path', 0, Marker.LINE_STRIP, _PATH_COLOUR, 0.01)
    path.points = [point(p) for p in preview.tips]
    markers.markers.append(path)
    for index, ghost in enumerate(preview.ghosts):
        skeleton = _marker(frame, 'ghosts', index, Marker.LINE_STRIP, _GHOST_COLOUR, 0.03)
        skeleton.points = [point(p) for p in ghost]
        markers.markers.append(skeleton)
    if target is not None and np.all(np.isfinite(target)):
        ball = _marker(frame, 'target', 0, Marker.SPHERE, _TARGET_COLOUR, 0.05)
        ball.pose.position = point(target)
        markers.markers.append(ball)
    return markers


def failure_markers(frame: str, reached: np.ndarray, stop: np.ndarray | None,
                    target: np.ndarray | None) -> MarkerArray:
    """Where a Cartesian line failed: the part followed (orange) and the failing point (red)."""
    markers = MarkerArray()
    clear = Marker(action=Marker.DELETEALL)
    clear.header.frame_id = frame
    markers.markers.append(clear)
    if len(reached) > 1:
        path = _marker(frame, 'tip_path', 0, Marker.LINE_STRIP, _FAILED_COLOUR, 0.01)
        path.points = [point(p) for p in reached]
        markers.markers.append(path)
    if stop is not None:
        ball = _marker(frame, 'failure', 0, Marker.SPHERE, _FAILURE_COLOUR, 0.06)
        ball.pose.position = point(stop)
        markers.markers.append(ball)
    if target is not None and np.all(np.isfinite(target)):
        ball = _marker(frame, 'target', 0, Marker.SPHERE, _TARGET_COLOUR, 0.05)
        ball.pose.position = point(target)
        markers.markers.append(ball)
    return markers


# ------------------------------------------------------------ PlannedPath → viewers (ROS → core)
def plan_drawing_from_message(message: PlannedPath) -> PlanDrawing:
    """What the viewers (markers node, lab) draw of a PlannedPath (non-finite points dropped)."""
    def xyz(points) -> list[tuple[float, float, float]]:
        return [(p.x, p.y, p.z) for p in points]
    return plan_drawing(
        message.feasible, message.law, xyz(message.tip_path), xyz(message.ghost_points),
        list(message.ghost_sizes),
        xyz([message.target])[0] if message.has_target else None,
        xyz([message.failure_point])[0] if message.has_failure_point else None)
