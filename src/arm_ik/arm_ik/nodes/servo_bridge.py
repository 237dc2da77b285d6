"""servo_bridge: one serial bus of Feetech or Dynamixel servos presented as a ros2_control arm.

A thin adapter around arm_servos (bus drivers, calibration, safety rules; the bus thread, the
goal's life and the torque requests in arm_servos.runner.BridgeRunner) and
arm_kinematics.control (FollowJointTrajectory acceptance, interpolation, tolerances, shared
with the controller stand-in).

Publishes: joint_states (sensor_msgs/JointState, measured, every bus cycle in which every servo
answered), /diagnostics (diagnostic_msgs/DiagnosticArray: per servo voltage, temperature, load,
error bits in words; the bus's counters).
Publishes too: ~/state (std_msgs/String, reliable + transient local): the arm's mode
('disabled', 'enabled', 'fault: <servo and error>', 'estop: <source>') on each change, so a
teleop node notices an e-stop or a fault of its follower.
Publishes too: ~/goal_rejections (arm_ik.goal_refusals: rcl_interfaces/Log, latched, depth 10):
each rejected goal's reason, as the bridge logs it; servo_client prints it (the action
protocol carries no reason for a rejection).
Serves: ~/follow_joint_trajectory (control_msgs/action/FollowJointTrajectory, the rules of
joint_trajectory_controller), ~/enable, ~/disable, ~/estop, ~/reset_estop, ~/hold (hold the
measured position now, the next motion slow: teleop's hold) (std_srvs/Trigger),
~/gripper_cmd (control_msgs/action/GripperCommand, nodes/gripper_action.py).
Subscribes: ~/commands (std_msgs/Float64MultiArray, one position per controller joint, as
forward_position_controller), emergency_stop (std_msgs/Bool, reliable + transient local: true
switches torque off and latches until ~/reset_estop).

With role leader (teleoperation) the bus is only read: torque is switched off once each time
the port opens (a hand moves the arm) and never written otherwise.

A LeRobot calibration file works as it is; the servos' EEPROM (homing offsets) is compared
with the calibration on connect and before each enable, a mismatch refused before any torque.
Torque is never switched on at start-up: call ~/enable, which first writes the measured
position as the goal. A servo fault aborts the active goal with PATH_TOLERANCE_VIOLATED (the arm
stops, so it leaves its path) and the servo and error in words.
"""

from __future__ import annotations

import sys

from control_msgs.action import FollowJointTrajectory
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Float64MultiArray, String
from std_srvs.srv import Trigger

from arm_ik.arm_config import read_description
from arm_ik.goal_refusals import refusal_message, refusal_publisher
from arm_ik.nodes.common import (
    declare_parameters,
    LATCHED_QOS,
    run,
    StartupError,
    wait_for_description,
)
from arm_ik.nodes.control_messages import (
    end_goal,
    feedback_message,
    goal_from_message,
    GoalResults,
)
from arm_ik.nodes.conversions import seconds_of
from arm_ik.nodes.gripper_action import GripperAction
from arm_ik.nodes.servo_messages import diagnostics_message, joint_state_message
from arm_ik.nodes.servo_parameters import PARAMETERS
from arm_ik.servo_description import ServoArm
from arm_kinematics.control.goal_rules import ControllerSettings, TrajectoryGoalRules
from arm_kinematics.control.tolerances import JointTolerance, SegmentTolerances
from arm_kinematics.model.arm_model import DescriptionError
from arm_servos.bridge import BridgeCore, JointReading
from arm_servos.bus import BusUnavailableError
from arm_servos.calibration import CalibrationError
from arm_servos.drivers import DRIVERS
from arm_servos.eeprom import adopt_return_delays, eeprom_refusal
from arm_servos.runner import BridgeRunner, Finished
from arm_servos.safety import SafetyConfig, ServoSafety


class ServoBridge(Node):
    def __init__(self) -> None:
        super().__init__('servo_bridge')
        values = declare_parameters(self, PARAMETERS)
        for required in ('calibration_file', 'port'):
            if not values[required]:
                raise StartupError(f'parameter {required} is required')
        urdf = values['robot_description']
        if not urdf and values['urdf_file']:
            try:
                urdf = read_description(values['urdf_file'])
            except DescriptionError as error:
                raise StartupError(str(error)) from None
        urdf = urdf or wait_for_description(self)
        try:
            arm = ServoArm.from_urdf(urdf, values['base_frame'], values['tip_frame'])
            calibration = arm.load(values['calibration_file'], urdf,
                                   values['lerobot_joint_map'], values['lerobot_protocol'])
            safety = ServoSafety(calibration.joints,
                                 {n: j.velocity for n, j in arm.joints.items()},
                                 SafetyConfig(velocity_cap=values['velocity_cap'] or float('inf'),
                                              approach_velocity=values['approach_velocity'],
                                              command_timeout=values['command_timeout'],
                                              silent_cycles=values['silent_cycles'],
                                              on_fault=values['on_fault'],
                                              clip=values['clip_commands']))
        except (DescriptionError, CalibrationError, ValueError) as error:
            raise StartupError(str(error)) from None
        self.joints = tuple(n for n in calibration.names if n in arm.chain)
        self.declare_parameter('controller_joints', list(self.joints), ParameterDescriptor(
            description='the joints of ~/follow_joint_trajectory and ~/commands, in order '
            '(the calibrated joints of the chain)', read_only=True))
        bus = DRIVERS[calibration.protocol](
            values['port'], calibration.ids, baudrate=calibration.baudrate,
            retries=values['retries'], reply_timeout=values['reply_timeout'] or None,
            cycle_budget=0.8 / values['rate'])
        core = BridgeCore(bus, calibration, safety, {n: j.effort for n, j in arm.joints.items()})
        tolerance = SegmentTolerances(
            path={j: JointTolerance(position=values['path_tolerance']) for j in self.joints},
            goal={j: JointTolerance(position=values['goal_tolerance']) for j in self.joints},
            goal_time=values['goal_time'])
        period = 1.0 / values['rate']
        self.runner = BridgeRunner(
            core, TrajectoryGoalRules(ControllerSettings(self.joints, tolerance)), self.joints,
            values['rate'], self._now,
            apply_wait=0.5 + 10.0 * period + (values['retries'] + 1) * values['reply_timeout'],
            leader=values['role'] == 'leader')
        self.core = core
        self.results = GoalResults()
        self.futures: dict[int, object] = {}
        self.state_pub = self.create_publisher(JointState, 'joint_states', QoSProfile(depth=10))
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, '/diagnostics',
                                                     QoSProfile(depth=10))
        self.rejections_pub = refusal_publisher(self)   # arm_ik.goal_refusals
        self.status_pub = self.create_publisher(String, '~/state', LATCHED_QOS)
        self.server = ActionServer(
            self, FollowJointTrajectory, '~/follow_joint_trajectory',
            execute_callback=self._execute, goal_callback=self._on_goal,
            handle_accepted_callback=self._on_accepted, cancel_callback=self._on_cancel)
        for name, handler in (('~/enable', self._enable), ('~/disable', self._disable),
                              ('~/estop', self._estop), ('~/reset_estop', self._reset),
                              ('~/hold', self._hold)):
            self.create_service(Trigger, name, handler)
        # Keep last 1: a stream's newest command is the one to write (a queue of stale ones
        # is latency: 10 deep at 250 Hz is 40 ms behind once the executor falls behind).
        self.create_subscription(Float64MultiArray, '~/commands', self._on_commands,
                                 QoSProfile(depth=1))
        self.create_subscription(Bool, 'emergency_stop', self._on_emergency_stop, LATCHED_QOS)
        self.create_timer(1.0 / values['action_monitor_rate'], self._monitor_goal)
        self.create_timer(1.0 / values['diagnostics_rate'], self._publish_diagnostics)
        self.gripper = None if self.runner.leader else GripperAction(
            self, self.core, self.runner.lock, {n: j.effort for n, j in arm.joints.items()})
        self._open(values['port'])
        self.runner.on_reading = self._publish_state
        self.runner.on_fault = self.get_logger().error
        self.runner.on_status = lambda text: self.status_pub.publish(String(data=text))
        self.runner.start()
        self.get_logger().info(
            f'{calibration.protocol} bus on {values["port"]} at {calibration.baudrate} baud, '
            f'servos {list(calibration.ids)} for {", ".join(calibration.names)}; '
            f'{values["rate"]:g} Hz; ' + ('leader: reads only, torque off'
                                          if self.runner.leader else 'torque off until ~/enable'))

    def _open(self, port: str) -> None:
        try:
            self.core.bus.open()
            models = self.core.bus.ping()
        except BusUnavailableError as error:
            self.get_logger().error(f'{error}; retrying every cycle, torque stays off')
            return
        silent = [f'{j.servo_id} ({j.name})' for j in self.core.calibration.joints
                  if models.get(j.servo_id) is None]
        if silent:
            self.get_logger().error(f'servos not answering on {port}: {", ".join(silent)}; '
                                    'enabling is refused until they answer')
            return
        refusal = eeprom_refusal(self.core.bus, self.core.calibration)   # RELIABILITY 43
        if refusal:
            raise StartupError(refusal)
        slow = adopt_return_delays(self.core.bus, self.core.calibration)
        if slow:
            self.get_logger().warning(slow)

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _publish_state(self, reading: JointReading) -> None:
        """Called by the bus thread after each cycle (outside its lock)."""
        if reading.complete:
            self.state_pub.publish(joint_state_message(reading, self.get_clock().now().to_msg()))

    # ------------------------------------------------------------------ the action
    def _on_goal(self, request: FollowJointTrajectory.Goal) -> GoalResponse:
        reason = self.runner.goal_reason(goal_from_message(request))
        if reason:
            self.get_logger().error(f'goal rejected: {reason}')
            self.rejections_pub.publish(refusal_message(self, reason))
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _on_accepted(self, goal_handle) -> None:
        # The result future first: the bus cycle may end the goal before execute runs.
        self.futures[id(goal_handle)] = self.results.open(goal_handle)
        previous = self.runner.accept(goal_from_message(goal_handle.request), goal_handle)
        if previous is not None:
            self._send_result(previous)
        points = goal_handle.request.trajectory.points
        self.get_logger().info(f'goal accepted: {len(points)} point(s), '
                               f'{seconds_of(points[-1].time_from_start):.2f} s')
        goal_handle.execute()

    async def _execute(self, goal_handle) -> FollowJointTrajectory.Result:
        return await self.results.result(goal_handle)

    def _on_cancel(self, goal_handle) -> CancelResponse:
        return CancelResponse.ACCEPT

    def _monitor_goal(self) -> None:
        report = self.runner.poll(lambda handle: handle.is_cancel_requested)
        if isinstance(report, Finished):
            self._send_result(report)
        elif report is not None:
            feedback = feedback_message(self.joints, report.desired, list(report.measured),
                                        [0.0] * len(self.joints), report.elapsed)
            feedback.header.stamp = self.get_clock().now().to_msg()
            report.handle.publish_feedback(feedback)

    def _send_result(self, finished: Finished) -> None:
        future = self.futures.pop(id(finished.handle), None)
        if future is None:
            return
        end_goal(finished.handle, future, finished.succeeded, finished.code, finished.message)
        if finished.succeeded is False:
            self.get_logger().warning(f'goal aborted: {finished.message}')

    # ------------------------------------------------------------------ services, topics
    def _answer(self, response: Trigger.Response, ok: bool, message: str) -> Trigger.Response:
        response.success, response.message = ok, message
        # rclpy refuses one call site logging at two severities: two call sites.
        if ok:
            self.get_logger().info(message)
        else:
            self.get_logger().error(message)
        return response

    def _enable(self, _: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        # Answered after the bus cycle that switched torque on: a client that reads the
        # servos on the reply finds them on (or is told why not).
        outcome = self.runner.enable()
        return self._answer(response, outcome.ok, outcome.message)

    def _disable(self, _: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        outcome = self.runner.disable()
        return self._answer(response, outcome.ok, outcome.message)

    def _estop(self, _: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        return self._answer(response, True, self.runner.estop('e-stop service'))

    def _hold(self, _: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        outcome = self.runner.hold('hold requested')
        return self._answer(response, outcome.ok, outcome.message)

    def _reset(self, _: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        outcome = self.runner.reset()
        return self._answer(response, outcome.ok, outcome.message)

    def _on_emergency_stop(self, message: Bool) -> None:
        if message.data and not self.runner.estopped:
            self.get_logger().error(self.runner.estop('emergency_stop topic'))

    def _on_commands(self, message: Float64MultiArray) -> None:
        reason, warning = self.runner.command(list(message.data))
        if reason:
            self.get_logger().error(f'~/commands refused: {reason}', throttle_duration_sec=1.0)
        elif warning:
            self.get_logger().warning(warning, throttle_duration_sec=1.0)

    def _publish_diagnostics(self) -> None:
        statuses, rate = self.runner.diagnostics(self.get_name())
        self.diagnostics_pub.publish(diagnostics_message(statuses, rate,
                                                         self.get_clock().now().to_msg()))

    def destroy_node(self) -> None:
        if getattr(self, 'runner', None) is not None:
            # Torque stays as it is: a falling arm is worse. Never hangs on a wedged adapter.
            problem = self.runner.stop()
            if problem:
                self.get_logger().error(problem)
        super().destroy_node()

def main(args: list[str] | None = None) -> int:
    # The bus thread wakes for each reply and each command; by default it may then wait up
    # to 5 ms for the GIL while the executor thread runs Python (rclpy): ask for it sooner.
    sys.setswitchinterval(0.0005)
    return run(ServoBridge, args)


if __name__ == '__main__':
    sys.exit(main())
