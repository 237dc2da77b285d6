"""control_msgs/FollowJointTrajectory messages to and from arm_kinematics.control's plain data.

Shared by the controller stand-in, the executor's follow_joint_trajectory route and the servo
bridge: the rules live in arm_kinematics.control, this module only converts.
"""

from __future__ import annotations

from collections.abc import Sequence

from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance as JointToleranceMsg
import numpy as np
from rclpy.task import Future
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from arm_ik.nodes.conversions import duration, seconds_of
from arm_kinematics.control.goal_rules import Sample, TrajectoryGoal, TrajectoryPoint
from arm_kinematics.control.tolerances import JointTolerance

# Kilted's control_msgs (6.3+) adds the index of the point in use to the feedback.
FEEDBACK_HAS_INDEX = 'index' in FollowJointTrajectory.Feedback.get_fields_and_field_types()


def tolerances_of(messages: Sequence[JointToleranceMsg]
                  ) -> tuple[tuple[str, JointTolerance], ...]:
    """control_msgs/JointTolerance messages as (joint name, JointTolerance) pairs."""
    return tuple((m.name, JointTolerance(m.position, m.velocity, m.acceleration))
                 for m in messages)


def goal_from_message(goal: FollowJointTrajectory.Goal) -> TrajectoryGoal:
    """The plain goal of a FollowJointTrajectory goal message (multi-DOF parts ignored)."""
    trajectory = goal.trajectory
    stamp = trajectory.header.stamp
    return TrajectoryGoal(
        joint_names=tuple(trajectory.joint_names),
        points=tuple(TrajectoryPoint(seconds_of(p.time_from_start), tuple(p.positions),
                                     tuple(p.velocities), tuple(p.accelerations),
                                     tuple(p.effort)) for p in trajectory.points),
        start_time=stamp.sec + stamp.nanosec * 1e-9,
        path_tolerance=tolerances_of(goal.path_tolerance),
        goal_tolerance=tolerances_of(goal.goal_tolerance),
        goal_time_tolerance=seconds_of(goal.goal_time_tolerance))


def tolerance_messages(joints: Sequence[str], tolerance: JointTolerance
                       ) -> list[JointToleranceMsg]:
    """One JointTolerance message per joint with the same values."""
    return [JointToleranceMsg(name=name, position=tolerance.position,
                              velocity=tolerance.velocity, acceleration=tolerance.acceleration)
            for name in joints]


def goal_message(trajectory: JointTrajectory, path: JointTolerance, goal: JointTolerance,
                 goal_time: float) -> FollowJointTrajectory.Goal:
    """A goal for ``trajectory`` with the same path and goal tolerance on every joint."""
    joints = list(trajectory.joint_names)
    return FollowJointTrajectory.Goal(
        trajectory=trajectory, path_tolerance=tolerance_messages(joints, path),
        goal_tolerance=tolerance_messages(joints, goal),
        goal_time_tolerance=duration(goal_time))


def point_of(positions: np.ndarray, velocities: np.ndarray | None = None,
             accelerations: np.ndarray | None = None) -> JointTrajectoryPoint:
    point = JointTrajectoryPoint(positions=[float(x) for x in positions])
    if velocities is not None:
        point.velocities = [float(x) for x in velocities]
    if accelerations is not None:
        point.accelerations = [float(x) for x in accelerations]
    return point


def feedback_message(joints: Sequence[str], desired: Sample, positions: np.ndarray,
                     velocities: np.ndarray, trajectory_time: float | None = None
                     ) -> FollowJointTrajectory.Feedback:
    """JTC's feedback: desired, actual and error (desired - actual, JTC's sign);
    ``trajectory_time``: the controller's time since the trajectory's start, s, which JTC
    puts in desired.time_from_start (clients measure lateness by it)."""
    feedback = FollowJointTrajectory.Feedback(joint_names=list(joints))
    feedback.desired = point_of(desired.positions, desired.velocities, desired.accelerations)
    if trajectory_time is not None:
        feedback.desired.time_from_start = duration(max(0.0, trajectory_time))
    feedback.actual = point_of(positions, velocities)
    feedback.error = point_of(desired.positions - positions, desired.velocities - velocities)
    if FEEDBACK_HAS_INDEX:
        feedback.index = max(desired.index, 0)
    return feedback


# The action-server plumbing the controller stand-in and the servo bridge share: each keeps one
# goal at a time and answers it through a Future its control loop resolves.
PREEMPTED_MESSAGE = 'Current goal preempted by new incoming action.'


class GoalResults:
    """The result future of each accepted goal, kept until that goal's execute callback takes
    it: a goal can end (done in its first control cycle, or preempted) before its execute
    callback runs, and must then answer with the result it ended with."""

    def __init__(self) -> None:
        self._futures: dict[int, Future] = {}

    def open(self, goal_handle) -> Future:
        """A new result future for ``goal_handle`` (the one ``end_goal`` resolves)."""
        future = Future()
        self._futures[id(goal_handle)] = future
        return future

    async def result(self, goal_handle) -> FollowJointTrajectory.Result:
        """What ``goal_handle`` ended with, once it has ended."""
        future = self._futures.pop(id(goal_handle), None)
        if future is None:       # never opened: it cannot be the active goal
            goal_handle.abort()
            return FollowJointTrajectory.Result(
                error_code=FollowJointTrajectory.Result.INVALID_GOAL,
                error_string=PREEMPTED_MESSAGE)
        return await future


def end_goal(handle, future: Future, succeeded: bool | None, code: int, message: str) -> None:
    """End ``handle``: succeeded, aborted (False) or canceled (None), and resolve its result."""
    if succeeded is None:
        handle.canceled()
    elif succeeded:
        handle.succeed()
    else:
        handle.abort()
    future.set_result(FollowJointTrajectory.Result(error_code=code, error_string=message))


def controller_feedback_into(feedback, controller: FollowJointTrajectory.Feedback | None):
    """MoveToTarget ``feedback`` with the controller's desired and actual states and error
    of its last FollowJointTrajectory feedback (``controller``; unchanged when None)."""
    if controller is not None:
        names = list(controller.joint_names)
        feedback.controller_desired = JointState(
            name=names, position=list(controller.desired.positions),
            velocity=list(controller.desired.velocities))
        feedback.controller_actual = JointState(
            name=names, position=list(controller.actual.positions),
            velocity=list(controller.actual.velocities))
        feedback.controller_error = list(controller.error.positions)
    return feedback
