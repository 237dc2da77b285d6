"""Conversions between the motion core's plain values and ROS messages (trajectory_executor)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
import math

from builtin_interfaces.msg import Time
import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from arm_ik.nodes.conversions import duration, point, seconds_of
from arm_ik.nodes.executor_parameters import Outputs
from arm_interfaces.action import MoveToTarget
from arm_interfaces.msg import ExecutorStatus, PlannedPath
from arm_kinematics.description.passive_joints import PassiveJoints
from arm_kinematics.motion.commands import TrajectoryPoint
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.motion.executor import GoalReport, Progress
from arm_kinematics.motion.move_types import MoveGoal, Plan, PlanFailure, preview_rows
from arm_kinematics.motion.runner import Tick
from arm_kinematics.motion.trajectory import Trajectory
from arm_kinematics.visual.arm_visual import plan_drawing, PlanDrawing


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



def result_message(code: MotionCode, message: str, report: GoalReport, ik_code: int,
                   record: Sequence[tuple[float, np.ndarray, np.ndarray]],
                   names: Sequence[str]) -> MoveToTarget.Result:
    """The MoveToTarget result of a goal that ended with ``code``."""
    result = MoveToTarget.Result(message=message, path_fraction=float(report.path.fraction),
                                 path_stop_code=int(report.path.stop_code),
                                 path_stop_waypoint=int(report.path.stop_waypoint))
    result.error_code.val = int(code)
    result.ik_error_code.val = int(ik_code)
    if report.final_error is not None:
        result.final_error = report.final_error
        result.contact_times = report.contact_times.tolist()
        result.contact_points = [point(p) for p in report.contact_points]
    result.executed_path = executed_path_message(record, names)
    return result


def feedback_message(progress: Progress, names: Sequence[str], stamp: Time
                     ) -> MoveToTarget.Feedback:
    """The MoveToTarget feedback of a running goal."""
    feedback = MoveToTarget.Feedback(progress=progress.fraction, tip_position=point(progress.tip),
                                     contacts_so_far=progress.contacts)
    feedback.current = JointState(name=list(names), position=progress.pose.tolist())
    feedback.current.header.stamp = stamp
    return feedback


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


PLAN_SAMPLES = 60


def planned_path_message(outcome: Plan | PlanFailure, frame: str, names: Sequence[str],
                         stamp: Time | None = None) -> PlannedPath:
    """The planned move as data: a plan's samples (at most PLAN_SAMPLES), tool path (up to
    300 points), ghosts and target; or, for a Cartesian line that failed (feasible false), the part
    followed and the failing point."""
    message = PlannedPath(feasible=isinstance(outcome, Plan))
    message.header.frame_id = frame
    if stamp is not None:
        message.header.stamp = stamp
    message.trajectory.joint_names = list(names)
    if isinstance(outcome, PlanFailure):
        message.tip_path = [point(p) for p in outcome.reached]
        if outcome.point is not None:
            message.has_failure_point = True
            message.failure_point = point(outcome.point)
        return message
    message.law = outcome.law
    trajectory = outcome.trajectory
    # At most PLAN_SAMPLES joint samples, evenly spread, ends included: a message point
    # costs ~5 µs of the GIL in the executor's process, the control tick waits behind it,
    # and a Cartesian line has ~750 samples (300 of them cost ~1.5 ms per goal).
    rows = preview_rows(len(trajectory), PLAN_SAMPLES)
    trajectory = replace(trajectory, times=trajectory.times[rows],
                         positions=trajectory.positions[rows],
                         velocities=trajectory.velocities[rows], tips=None)
    if outcome.preview is not None:
        message.tip_path = [point(p) for p in outcome.preview.tips]
    message.trajectory = trajectory_message(trajectory, list(range(len(names))), names,
                                            skip_start=False)
    if outcome.preview is not None:
        for ghost in outcome.preview.ghosts:
            message.ghost_points.extend(point(p) for p in ghost)
            message.ghost_sizes.append(len(ghost))
    if outcome.target is not None and np.all(np.isfinite(outcome.target)):
        message.has_target = True
        message.target = point(outcome.target)
    return message


# ------------------------------------------------------------ the control tick's messages
def joint_state_message(names: Sequence[str], passive: PassiveJoints, q: np.ndarray,
                        v: np.ndarray, stamp: Time) -> JointState:
    """joint_states of the commanded pose. The URDF's joints outside the chain ride along
    (never commanded), so robot_state_publisher has a frame for every link (a Panda's
    fingers)."""
    positions, velocities = q.tolist(), v.tolist()
    state = JointState(name=list(names) + list(passive.names),
                       position=positions + passive.positions(positions),
                       velocity=velocities + passive.velocities(velocities))
    state.header.stamp = stamp
    return state


def command_message(out: Outputs, tick: Tick, period: float
                    ) -> Float64MultiArray | JointTrajectory | None:
    """What this tick sends the controller, or None: forward_position streams every
    commanded pose; joint_trajectory gets a one-point trajectory for a streamed point or a
    hold (a planned trajectory went out whole when it started)."""
    if out.output == 'forward_position':
        return Float64MultiArray(data=tick.q[out.controller_order].tolist()) \
            if tick.stream else None
    if out.output == 'joint_trajectory' and (tick.point or tick.hold):
        velocity = tick.v if tick.point else np.zeros_like(tick.q)
        return point_message(tick.q, velocity, out.controller_order, out.controller_joints,
                             period)
    return None


def status_message(status: tuple, feedback_age: float, stamp: Time) -> ExecutorStatus:
    """~/status of the runner's (mode, code, message, law)."""
    mode, code, message, law = status
    result = ExecutorStatus(state=int(mode), message=message, law=law,
                            feedback_age=feedback_age)
    result.header.stamp = stamp
    result.last_error.val = int(code)
    return result
