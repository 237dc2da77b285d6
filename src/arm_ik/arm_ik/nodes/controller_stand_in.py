"""A stand-in for ros2_control's joint_trajectory_controller plus joint_state_broadcaster.

For tests and the pip-route demo, where ros2_control cannot be installed. It serves
``~/follow_joint_trajectory`` (control_msgs/action/FollowJointTrajectory) by the rules of
arm_kinematics.control (JTC's acceptance, interpolation, path and goal tolerances, preemption
and cancel), publishes ``joint_states`` as the broadcaster would, and sends JTC's feedback at
``action_monitor_rate``. The simulated joints follow the command exactly unless a fault is set.

It reads the parameters JTC reads (``joints``, ``constraints.goal_time``,
``constraints.stopped_velocity_tolerance``, ``constraints.<joint>.trajectory`` and ``.goal``,
``action_monitor_rate``), so the controllers YAML written by ``arm_config`` drives it when the
node is named ``joint_trajectory_controller``.

Faults (parameter ``fault``, changeable at run time):
  none           follow exactly
  reject         reject every goal (JTC logs the reason; the client sees a bare rejection)
  lag            the joints run at ``lag_rate`` of the commanded speed: the path tolerance fails
  stop_short     the joints stop ``stop_short_distance`` rad before the goal: the goal
                 tolerance fails after goal_time
  die            the process exits halfway through a goal, without a result
  ignore_cancel  cancel requests are never answered
  mute_joint_states  joint_states stop (the goal runs on): a stale measured state downstream

Parameter ``time_scale`` (changeable at run time) runs the controller's time slower than the
node's clock, as JTC's speed scaling does (a speed slider, a pause, slow sim time): moves
stretch, and the feedback's desired.time_from_start, the controller's trajectory time, shows
it. Goals stamped with a time are compared against the controller's time, which drifts from
the node clock's under a scale below 1 (clients send stamp 0).
"""

from __future__ import annotations

import math
import os
import sys

from control_msgs.action import FollowJointTrajectory
import numpy as np
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.task import Future
from sensor_msgs.msg import JointState

from arm_ik.nodes.common import declare_parameters, run, StartupError
from arm_ik.nodes.control_messages import (
    end_goal,
    feedback_message,
    goal_from_message,
    GoalResults,
    PREEMPTED_MESSAGE,
)
from arm_ik.nodes.parameters import Param, ParameterTable
from arm_kinematics.control.goal_rules import ControllerSettings, TrajectoryGoalRules
from arm_kinematics.control.tolerances import JointTolerance, SegmentTolerances
from arm_kinematics.control.tracker import GoalTracker

FAULTS = ('none', 'reject', 'lag', 'stop_short', 'die', 'ignore_cancel', 'mute_joint_states')
# Exit status of the `die` fault, so a test tells it from a crash.
DIE_STATUS = 3

PARAMETERS = ParameterTable(
    Param('joints', [''], 'controller joints, in its order (JTC joints)', read_only=True),
    Param('initial_positions', [0.0], 'rad, per joint: where the simulated joints start '
          '(empty list: all 0)', read_only=True),
    Param('joint_states_topic', 'joint_states', 'where the measured state goes (as '
          'joint_state_broadcaster: joint_states, or joint_state_broadcaster/joint_states with '
          'use_local_topics)', read_only=True),
    Param('update_rate', 100.0, 'Hz, the control loop (controller_manager update_rate)',
          read_only=True, low=1.0, high=1000.0),
    Param('state_publish_rate', 50.0, 'Hz, joint_states (joint_state_broadcaster)',
          read_only=True, low=1.0, high=1000.0),
    Param('action_monitor_rate', 20.0, 'Hz, feedback of the active goal (JTC)',
          read_only=True, low=1.0, high=1000.0),
    Param('constraints.goal_time', 0.0, 's after the end to reach the goal tolerance '
          '(0: wait forever, as JTC)', read_only=True, low=0.0, high=3600.0),
    Param('constraints.stopped_velocity_tolerance', 0.01, 'rad/s, goal velocity tolerance',
          read_only=True, low=0.0, high=100.0),
    Param('fault', 'none', 'injected fault', choices=FAULTS),
    Param('lag_rate', 0.3, 'fraction of the commanded speed under the lag fault',
          low=0.0, high=1.0, low_open=True, high_open=True),
    Param('time_scale', 1.0, "controller time per second of the node's clock (JTC's speed "
          'scaling: below 1 every move stretches)', low=0.0, high=1.0, low_open=True),
    Param('stop_short_distance', 0.05, 'rad short of the goal under the stop_short fault',
          low=0.0, high=1.0, low_open=True),
)


class _SilentCancelServer(ActionServer):
    """An ActionServer that can drop cancel requests unanswered (the ignore_cancel fault).

    A cancel callback cannot do it: rclpy sends the response whatever the callback returns,
    and a callback that never returns stalls the node. This overrides rclpy's private
    request handler (Jazzy, Kilted), which is acceptable in a test stand-in only.
    """

    def __init__(self, ignores_cancel, *args, **kwargs) -> None:
        self._ignores_cancel = ignores_cancel
        super().__init__(*args, **kwargs)

    async def _execute_cancel_request(self, request_header_and_message) -> None:
        if self._ignores_cancel():
            return
        await super()._execute_cancel_request(request_header_and_message)


class ControllerStandIn(Node):
    def __init__(self) -> None:
        super().__init__('joint_trajectory_controller')
        values = declare_parameters(self, PARAMETERS)
        joints = tuple(values['joints'])
        if not joints or '' in joints or len(set(joints)) != len(joints):
            raise StartupError(f'parameter joints must name unique joints, got {list(joints)}')
        start = list(values['initial_positions'])
        if start in ([], [0.0]):
            start = [0.0] * len(joints)
        if len(start) != len(joints) or not all(math.isfinite(x) for x in start):
            raise StartupError(f'initial_positions needs {len(joints)} finite values, got '
                               f'{start}')
        stopped = values['constraints.stopped_velocity_tolerance']
        path, goal = {}, {}
        for joint in joints:
            for kind, table in (('trajectory', path), ('goal', goal)):
                name = f'constraints.{joint}.{kind}'
                value = self.declare_parameter(name, 0.0).value
                if not (isinstance(value, float) and math.isfinite(value) and value >= 0.0):
                    raise StartupError(f'parameter {name} must be a number >= 0, got {value}')
                table[joint] = value
        defaults = SegmentTolerances(
            path={j: JointTolerance(position=path[j]) for j in joints},
            goal={j: JointTolerance(position=goal[j], velocity=stopped) for j in joints},
            goal_time=values['constraints.goal_time'])
        self.rules = TrajectoryGoalRules(ControllerSettings(joints, defaults))
        self.settings = values
        PARAMETERS.watch(self, self._apply)
        self.joints = joints
        self.positions = np.array(start, dtype=float)
        self.velocities = np.zeros(len(joints))
        self.hold = self.positions.copy()
        self.tracker: GoalTracker | None = None
        self.desired = None     # the last cycle's command, for feedback
        self.goal_handle = None
        self.result_future: Future | None = None
        self.results = GoalResults()
        self.start_of_goal = 0.0
        # The controller's clock: the node's, advanced at time_scale (JTC's traj_time_).
        self._clock_seen = self.get_clock().now().nanoseconds * 1e-9
        self._controller_time = self._clock_seen
        self.state_pub = self.create_publisher(JointState, values['joint_states_topic'],
                                               QoSProfile(depth=10))
        self.server = _SilentCancelServer(
            self._ignores_cancel, self, FollowJointTrajectory, '~/follow_joint_trajectory',
            execute_callback=self._execute, goal_callback=self._on_goal,
            handle_accepted_callback=self._on_accepted, cancel_callback=self._on_cancel)
        self.dt = 1.0 / values['update_rate']
        self.create_timer(self.dt, self._update)
        self.create_timer(1.0 / values['state_publish_rate'], self._publish_state)
        self.create_timer(1.0 / values['action_monitor_rate'], self._publish_feedback)
        self.get_logger().info(f'controller stand-in for {", ".join(joints)} '
                               f'(fault: {values["fault"]})')

    def _apply(self, values: dict) -> None:
        self.settings = values
        self.get_logger().info(f'fault: {values["fault"]}')

    def _now(self) -> float:
        """The controller's time (advanced each control cycle)."""
        return self._controller_time

    def _advance(self) -> float:
        clock = self.get_clock().now().nanoseconds * 1e-9
        self._controller_time += max(0.0, clock - self._clock_seen) * self.settings['time_scale']
        self._clock_seen = clock
        return self._controller_time

    # Goals, as JTC's goal_received / goal_accepted / goal_cancelled callbacks.
    def _on_goal(self, request: FollowJointTrajectory.Goal) -> GoalResponse:
        self.get_logger().info('Received new action goal')
        if self.settings['fault'] == 'reject':
            self.get_logger().error('Goal rejected: fault injected (reject)')
            return GoalResponse.REJECT
        answer = self.rules.accept(goal_from_message(request), self._now())
        if not answer.accepted:
            self.get_logger().error(answer.reason)
            return GoalResponse.REJECT
        self.get_logger().info('Accepted new action goal')
        return GoalResponse.ACCEPT

    def _on_accepted(self, goal_handle) -> None:
        if self.tracker is not None:
            self._finish(False, FollowJointTrajectory.Result.INVALID_GOAL,
                         PREEMPTED_MESSAGE)
        goal = goal_from_message(goal_handle.request)
        self.start_of_goal = self._now()
        self.tracker = GoalTracker(self.rules, goal, self.start_of_goal, self.positions,
                                   self.velocities)
        if self.tracker.warning:
            self.get_logger().error(self.tracker.warning)
        self.goal_handle = goal_handle
        self.result_future = self.results.open(goal_handle)
        goal_handle.execute()

    async def _execute(self, goal_handle) -> FollowJointTrajectory.Result:
        return await self.results.result(goal_handle)

    def _on_cancel(self, goal_handle) -> CancelResponse:
        self.get_logger().info('Got request to cancel goal')
        return CancelResponse.ACCEPT

    def _ignores_cancel(self) -> bool:
        if self.settings['fault'] != 'ignore_cancel':
            return False
        self.get_logger().warning('cancel request dropped: fault injected (ignore_cancel)')
        return True

    def _finish(self, succeeded: bool | None, code: int, message: str) -> None:
        """End the active goal: succeeded, aborted (False) or canceled (None); hold."""
        handle, future = self.goal_handle, self.result_future
        self.tracker, self.goal_handle, self.result_future = None, None, None
        self.desired = None
        self.hold = self.positions.copy()
        if handle is None or future is None:
            return
        end_goal(handle, future, succeeded, code, message)

    # The control loop: command, simulated joints, verdict.
    def _update(self) -> None:
        now = self._advance()
        tracker = self.tracker
        previous = self.positions.copy()
        if tracker is None:
            self.positions = self.hold.copy()
        else:
            if self.goal_handle is not None and self.goal_handle.is_cancel_requested:
                self.get_logger().info('Canceling active action goal because cancel '
                                       'callback received.')
                self._finish(None, FollowJointTrajectory.Result.SUCCESSFUL, '')
                self.velocities = np.zeros(len(self.joints))
                return
            self.positions = self._simulate(tracker, now)
            fault = self.settings['fault']
            if fault == 'die' and now - self.start_of_goal > 0.5 * (
                    tracker.trajectory.end_time - tracker.trajectory.start_time):
                self.get_logger().error('exiting mid-goal: fault injected (die)')
                os._exit(DIE_STATUS)
            verdict = tracker.check(now, self.positions)
            self.desired = verdict.desired
            if verdict.done:
                # One call site per severity: rclpy refuses to change it at a call site.
                if verdict.code == 0:
                    self.get_logger().info(verdict.message)
                else:
                    self.get_logger().warning(verdict.message)
                self._finish(verdict.code == 0, int(verdict.code), verdict.message)
        self.velocities = (self.positions - previous) / self.dt

    def _simulate(self, tracker: GoalTracker, now: float) -> np.ndarray:
        """Where the simulated joints are: the command, or the fault's version of it."""
        fault = self.settings['fault']
        trajectory = tracker.trajectory
        if fault == 'lag':
            lagged = trajectory.start_time + (now - trajectory.start_time) * \
                self.settings['lag_rate']
            return trajectory.sample(lagged).positions
        desired = trajectory.sample(now).positions
        if fault == 'stop_short':
            final, first = trajectory.q[-1], trajectory.q[0]
            short = self.settings['stop_short_distance']
            direction = np.sign(final - first)
            near = np.abs(final - desired) < short
            return np.where(near & (direction != 0), final - direction * short, desired)
        return desired

    def _publish_state(self) -> None:
        if self.settings['fault'] == 'mute_joint_states':
            return
        message = JointState(name=list(self.joints), position=self.positions.tolist(),
                             velocity=self.velocities.tolist())
        message.header.stamp = self.get_clock().now().to_msg()
        self.state_pub.publish(message)

    def _publish_feedback(self) -> None:
        if self.tracker is None or self.goal_handle is None or self.desired is None:
            return
        feedback = feedback_message(self.joints, self.desired, self.positions, self.velocities,
                                    self._now() - self.tracker.trajectory.start_time)
        feedback.header.stamp = self.get_clock().now().to_msg()
        self.goal_handle.publish_feedback(feedback)


def main(args: list[str] | None = None) -> int:
    return run(ControllerStandIn, args)


if __name__ == '__main__':
    sys.exit(main())
