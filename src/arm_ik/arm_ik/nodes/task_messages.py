"""Message builders of target_input: MoveToTarget goals, the ball, the status reports.

Kept apart from the node so that what goes on the wire is read (and changed) in one place.
Units: m, rad, s.
"""

from __future__ import annotations

from collections.abc import Sequence

from builtin_interfaces.msg import Time
import numpy as np
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import Marker

from arm_ik.kinematics.joint_state import positions_by_name
from arm_ik.kinematics.tasks.pick_place import Ball
from arm_ik.kinematics.tasks.sequences import MoveSettings
from arm_ik.nodes.conversions import point
from arm_interfaces.action import MoveToTarget
from arm_interfaces.msg import BallState

GOAL_TYPES = {'position': MoveToTarget.Goal.GOAL_POSITION,
              'tool_down': MoveToTarget.Goal.GOAL_TOOL_DOWN,
              'full_pose': MoveToTarget.Goal.GOAL_FULL_POSE}
# Ball colours (r, g, b, a): lying free, carried by the tool.
FREE_COLOUR = (0.2, 0.75, 0.3, 1.0)
CARRIED_COLOUR = (1.0, 0.55, 0.1, 1.0)


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


def ball_marker(ball: Ball | None, frame_id: str, stamp: Time, namespace: str = 'ball'
                ) -> Marker:
    """A sphere for RViz, orange while carried, green while free; DELETE when ``ball`` is None.

    Lifetime 0 (it stays) because it is republished on every change and latched; the node
    sends DELETE on shutdown so nothing stale remains.
    """
    marker = Marker()
    marker.header.stamp = stamp
    marker.header.frame_id = frame_id
    marker.ns = namespace
    marker.id = 0
    if ball is None:
        marker.action = Marker.DELETE
        return marker
    marker.type = Marker.SPHERE
    marker.action = Marker.ADD
    marker.pose.position = point(ball.position)
    marker.pose.orientation.w = 1.0
    diameter = 2.0 * float(ball.radius)
    marker.scale.x = marker.scale.y = marker.scale.z = diameter
    r, g, b, a = CARRIED_COLOUR if ball.attached else FREE_COLOUR
    marker.color.r, marker.color.g, marker.color.b, marker.color.a = r, g, b, a
    return marker


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
