"""Message builders of target_input: MoveToTarget goals, the ball state, the status reports.

Kept apart from the node so that what goes on the wire is read (and changed) in one place;
they convert the core's (kinematics.tasks.cycle) plain values to messages and back. The
ball's Marker is built in nodes.marker_messages, with every other Marker. Units: m, rad, s.
"""

from __future__ import annotations

from collections.abc import Sequence

from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Time
import numpy as np
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from arm_ik.nodes.conversions import point
from arm_interfaces.action import MoveToTarget
from arm_interfaces.msg import BallState, TargetStatus
from arm_kinematics.common.joint_state import positions_by_name
from arm_kinematics.tasks.cycle import GoalOutcome, GoalRequest, Report
from arm_kinematics.tasks.pick_place import Ball
from arm_kinematics.tasks.sequences import MoveSettings

# target_status keeps its recent history for late joiners (markers, lab_viewer, a user's
# script started after a cycle began): target_input publishes it so, its readers take it so.
TARGET_STATUS_QOS = QoSProfile(depth=20, reliability=ReliabilityPolicy.RELIABLE,
                               durability=DurabilityPolicy.TRANSIENT_LOCAL)
GOAL_TYPES = {'position': MoveToTarget.Goal.GOAL_POSITION,
              'tool_down': MoveToTarget.Goal.GOAL_TOOL_DOWN,
              'full_pose': MoveToTarget.Goal.GOAL_FULL_POSE}


def point_goal(frame_id: str, position: Sequence[float], settings: MoveSettings,
               goal_type: int = MoveToTarget.Goal.GOAL_POSITION,
               orientation: Sequence[float] = (0.0, 0.0, 0.0, 1.0)) -> MoveToTarget.Goal:
    """A Cartesian MoveToTarget goal for the tool at ``position`` (m) in ``frame_id``.

    ``orientation`` (quaternion x, y, z, w) is read by the executor for full-pose goals only.
    """
    goal = MoveToTarget.Goal()
    goal.target.header.frame_id = frame_id
    goal.target.pose.position = point(position)
    qx, qy, qz, qw = (float(v) for v in orientation)
    goal.target.pose.orientation.x, goal.target.pose.orientation.y = qx, qy
    goal.target.pose.orientation.z, goal.target.pose.orientation.w = qz, qw
    goal.goal_type = goal_type
    _apply_settings(goal, settings)
    return goal


def joint_goal(frame_id: str, names: Sequence[str], positions: Sequence[float],
               tip: Sequence[float], settings: MoveSettings) -> MoveToTarget.Goal:
    """A joint-space MoveToTarget goal (rad); the target pose carries its FK tip for logs."""
    goal = point_goal(frame_id, tip, settings)
    goal.joint_target = JointState(name=list(names), position=[float(v) for v in positions])
    return goal


def _apply_settings(goal: MoveToTarget.Goal, settings: MoveSettings) -> None:
    goal.solver = settings.solver
    goal.motion_law = settings.motion_law
    goal.duration = float(settings.duration)
    goal.speed_scale = float(settings.speed_scale)


def goal_of(request: GoalRequest, joint_names: Sequence[str]) -> MoveToTarget.Goal:
    """The MoveToTarget goal of the core's GoalRequest."""
    if request.joints is not None:
        return joint_goal(request.frame_id, joint_names, request.joints, request.position,
                          request.settings)
    return point_goal(request.frame_id, request.position, request.settings,
                      GOAL_TYPES[request.goal_type], request.orientation)


def outcome_of(wrapped: MoveToTarget.Impl.GetResultService.Response,
               joint_names: Sequence[str]) -> GoalOutcome:
    """The core's GoalOutcome of a get_result response (``.status``, ``.result``)."""
    result = wrapped.result
    return GoalOutcome(wrapped.status == GoalStatus.STATUS_SUCCEEDED,
                       int(wrapped.status), int(result.error_code.val), result.message,
                       int(result.ik_error_code.val), float(result.final_error),
                       final_positions(joint_names, result.executed_path))


def status_of(report: Report, frame_id: str, stamp: Time) -> TargetStatus:
    """arm_interfaces/TargetStatus of the core's Report."""
    status = TargetStatus(state=int(report.state), source=report.source,
                          sequence=report.sequence, cycle=int(report.cycle),
                          step=int(report.step), phase=report.phase,
                          step_kind=report.step_kind, target_name=report.target_name,
                          message=report.message, final_error=float(report.final_error))
    status.header.stamp = stamp
    status.header.frame_id = frame_id
    if report.target is not None:
        status.target = point(report.target)
    status.error_code.val = int(report.code)
    status.ik_error_code.val = int(report.ik_code)
    return status


def ball_state(ball: Ball, frame_id: str, stamp: Time, sequence: str, cycle: int,
               phase: str) -> BallState:
    """arm_interfaces/BallState of ``ball``."""
    message = BallState()
    message.header.stamp = stamp
    message.header.frame_id = frame_id
    message.attached = bool(ball.attached)
    message.position = point(ball.position)
    message.radius = float(ball.radius)
    message.sequence = sequence
    message.cycle = int(cycle)
    message.phase = phase
    return message


def final_positions(names: Sequence[str], executed_path: JointTrajectory) -> np.ndarray | None:
    """The arm's joints (chain order) at the last point of a result's executed path: the
    executor's final commanded state, current when the result is taken; None when the path
    is empty or that point does not give every joint of the arm a finite value.

    Args:
        names: the arm's joint names in chain order.
        executed_path: trajectory_msgs/JointTrajectory from the MoveToTarget result.
    """
    if not executed_path.points:
        return None
    q, _ = positions_by_name(names, executed_path.joint_names,
                             executed_path.points[-1].positions)
    return q
