"""servo_bridge: one serial bus of Feetech or Dynamixel servos presented as a ros2_control arm.

A thin adapter around arm_servos (bus drivers, calibration, safety rules, the bus cycle) and
arm_kinematics.control (FollowJointTrajectory acceptance, interpolation, tolerances, shared
with the controller stand-in).

Publishes: joint_states (sensor_msgs/JointState, measured, every bus cycle in which every servo
answered), /diagnostics (diagnostic_msgs/DiagnosticArray: per servo voltage, temperature, load,
error bits in words; the bus's counters).
Serves: ~/follow_joint_trajectory (control_msgs/action/FollowJointTrajectory, the rules of
joint_trajectory_controller), ~/enable, ~/disable, ~/estop, ~/reset_estop (std_srvs/Trigger),
~/gripper_cmd (control_msgs/action/GripperCommand, nodes/gripper_action.py).
Subscribes: ~/commands (std_msgs/Float64MultiArray, one position per controller joint, as
forward_position_controller), emergency_stop (std_msgs/Bool, reliable + transient local: true
switches torque off and latches until ~/reset_estop).

A LeRobot calibration file works as it is; the servos' EEPROM (homing offsets) is compared
with the calibration on connect and before each enable, a mismatch refused before any torque.

Torque is never switched on at start-up: call ~/enable, which first writes the measured
position as the goal. A servo fault aborts the active goal with PATH_TOLERANCE_VIOLATED (the arm
stops, so it leaves its path) and the servo and error in words.
"""

from __future__ import annotations

import sys
import threading
import time

from control_msgs.action import FollowJointTrajectory
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Float64MultiArray
from std_srvs.srv import Trigger

from arm_ik.arm_config import read_description
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
    PREEMPTED_MESSAGE,
)
from arm_ik.nodes.conversions import seconds_of
from arm_ik.nodes.gripper_action import GripperAction
from arm_ik.nodes.parameters import Param, ParameterTable
from arm_ik.servo_description import ServoArm
from arm_kinematics.control.codes import ResultCode
from arm_kinematics.control.goal_rules import ControllerSettings, TrajectoryGoalRules
from arm_kinematics.control.tolerances import JointTolerance, SegmentTolerances
from arm_kinematics.control.tracker import GoalTracker
from arm_kinematics.model.arm_model import DescriptionError
from arm_servos.bridge import BridgeCore
from arm_servos.bus import BusUnavailableError
from arm_servos.calibration import CalibrationError
from arm_servos.drivers import DRIVERS
from arm_servos.eeprom import eeprom_refusal
from arm_servos.safety import FAULT_POLICIES, SafetyConfig, ServoSafety

PARAMETERS = ParameterTable(
    Param('robot_description', '', 'URDF text (empty: urdf_file, else the robot_description '
          'topic)', read_only=True),
    Param('urdf_file', '', 'URDF file, read when robot_description is empty', read_only=True),
    Param('base_frame', '', "root link of the controlled chain (empty: the URDF's root)",
          read_only=True),
    Param('tip_frame', '', 'tip link of the controlled chain (empty: tool0 or the deepest '
          'leaf); calibrated joints off the chain (a gripper) are published and held',
          read_only=True),
    Param('calibration_file', '', 'calibration YAML written by servo_calibrate, or a LeRobot '
          'calibration JSON as LeRobot wrote it (required)', read_only=True),
    Param('lerobot_joint_map', '', "LeRobot file: motor=joint,... where its motor names are "
          "not the URDF's joints (motor=- leaves one out)", read_only=True),
    Param('lerobot_protocol', '', "LeRobot file: feetech or dynamixel ('': from its folder "
          'name, e.g. so101_follower, koch_leader)', read_only=True,
          choices=('', 'feetech', 'dynamixel')),
    Param('port', '', 'serial device, e.g. /dev/ttyACM0 or the simulated bus link (required)',
          read_only=True),
    Param('rate', 100.0, 'Hz, bus cycles (one sync read + one sync write each) and '
          'joint_states', read_only=True, low=1.0, high=1000.0),
    Param('reply_timeout', 0.0, 's to wait for the replies of one sync read (0: their bytes '
          'on the wire + 3 ms; raise it for an adapter with a 16 ms latency timer)',
          read_only=True, low=0.0, high=1.0),
    Param('retries', 2, 'extra sync reads of silent servos within one cycle',
          read_only=True, low=0, high=10),
    Param('silent_cycles', 5, 'cycles a servo may stay silent before the arm stops',
          read_only=True, low=1, high=1000),
    Param('on_fault', 'hold', 'what a servo fault does to the arm', read_only=True,
          choices=FAULT_POLICIES),
    Param('command_timeout', 0.5, 's without a ~/commands message before holding the measured '
          'position', read_only=True, low=0.0, high=60.0, low_open=True),
    Param('approach_velocity', 0.3, 'rad/s of the first motion after enable or a fault',
          read_only=True, low=0.0, high=100.0, low_open=True),
    Param('velocity_cap', 0.0, 'rad/s below the URDF velocity limits (0: the URDF limits)',
          read_only=True, low=0.0, high=100.0),
    Param('clip_commands', False, 'clip commands outside the calibrated range instead of '
          'refusing them', read_only=True),
    Param('path_tolerance', 0.0, 'rad, default path tolerance per joint (0: none, as JTC)',
          read_only=True, low=0.0, high=10.0),
    Param('goal_tolerance', 0.02, 'rad, default goal tolerance per joint', read_only=True,
          low=0.0, high=10.0),
    Param('goal_time', 1.0, 's after the end to reach the goal tolerance (0: wait forever)',
          read_only=True, low=0.0, high=3600.0),
    Param('action_monitor_rate', 20.0, 'Hz, feedback and results of the active goal',
          read_only=True, low=1.0, high=1000.0),
    Param('diagnostics_rate', 1.0, 'Hz, /diagnostics', read_only=True, low=0.1, high=100.0),
)


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
        self.core = BridgeCore(bus, calibration, safety,
                               {n: j.effort for n, j in arm.joints.items()})
        tolerance = SegmentTolerances(
            path={j: JointTolerance(position=values['path_tolerance']) for j in self.joints},
            goal={j: JointTolerance(position=values['goal_tolerance']) for j in self.joints},
            goal_time=values['goal_time'])
        self.rules = TrajectoryGoalRules(ControllerSettings(self.joints, tolerance))
        self.period = 1.0 / values['rate']
        self.lock = threading.Lock()
        # Signalled after each bus write: a torque service answers once its change is on the bus.
        self.cycle_written = threading.Condition(self.lock)
        self.cycles = 0
        self.apply_wait = 0.5 + 10.0 * self.period + \
            (values['retries'] + 1) * values['reply_timeout']
        self.tracker: GoalTracker | None = None
        self.goal_handle = None
        self.result_future: Future | None = None
        self.results = GoalResults()
        self.finished: tuple[bool, int, str] | None = None
        self.desired = None
        self.cycle_times: list[float] = []
        self.state_pub = self.create_publisher(JointState, 'joint_states', QoSProfile(depth=10))
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, '/diagnostics',
                                                     QoSProfile(depth=10))
        self.server = ActionServer(
            self, FollowJointTrajectory, '~/follow_joint_trajectory',
            execute_callback=self._execute, goal_callback=self._on_goal,
            handle_accepted_callback=self._on_accepted, cancel_callback=self._on_cancel)
        for name, handler in (('~/enable', self._enable), ('~/disable', self._disable),
                              ('~/estop', self._estop), ('~/reset_estop', self._reset)):
            self.create_service(Trigger, name, handler)
        self.create_subscription(Float64MultiArray, '~/commands', self._on_commands,
                                 QoSProfile(depth=10))
        self.create_subscription(Bool, 'emergency_stop', self._on_emergency_stop, LATCHED_QOS)
        self.create_timer(1.0 / values['action_monitor_rate'], self._monitor_goal)
        self.create_timer(1.0 / values['diagnostics_rate'], self._publish_diagnostics)
        self.gripper = GripperAction(self, self.core, self.lock,
                                     {n: j.effort for n, j in arm.joints.items()})
        self._open(values['port'])
        self.running = True
        self.thread = threading.Thread(target=self._bus_loop, name='servo-bus', daemon=True)
        self.thread.start()
        self.get_logger().info(
            f'{calibration.protocol} bus on {values["port"]} at {calibration.baudrate} baud, '
            f'servos {list(calibration.ids)} for {", ".join(calibration.names)}; '
            f'{values["rate"]:g} Hz; torque off until ~/enable')

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

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    # ------------------------------------------------------------------ the bus thread
    def _bus_loop(self) -> None:
        next_cycle = time.monotonic()
        while self.running:
            start = time.monotonic()
            with self.lock:
                fault = self.core.read(start)
                if fault:
                    self.get_logger().error(f'arm stopped ({self.core.safety.config.on_fault}):'
                                            f' {fault}')
                    self._end_goal(False, ResultCode.PATH_TOLERANCE_VIOLATED,
                                   f'{fault}; the arm stopped '
                                   f'({self.core.safety.config.on_fault})')
                self._follow(start)
                self.core.write(time.monotonic())
                self.cycles += 1
                self.cycle_written.notify_all()
                reading = self.core.reading()
            if reading.complete:
                message = JointState(name=list(reading.names), position=list(reading.positions),
                                     velocity=list(reading.velocities),
                                     effort=list(reading.efforts))
                message.header.stamp = self.get_clock().now().to_msg()
                self.state_pub.publish(message)
            with self.lock:
                self.cycle_times.append(start)
                del self.cycle_times[:-200]
            next_cycle += self.period
            delay = next_cycle - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            elif delay < -self.period:
                next_cycle = time.monotonic()    # late by a whole cycle: do not burst

    def _follow(self, now: float) -> None:
        """The active goal's command for this cycle, and its verdict (under the lock)."""
        if self.tracker is None or self.finished is not None:
            return
        safety = self.core.safety
        measured = [safety.measured.get(j) for j in self.joints]
        t = self._now()
        sample = self.tracker.sample(t)
        outcome = safety.command(dict(zip(self.joints, sample.positions.tolist())), now,
                                 from_trajectory=True)
        if not outcome.ok:
            self._end_goal(False, ResultCode.PATH_TOLERANCE_VIOLATED, outcome.message)
            return
        if any(m is None for m in measured):
            return
        verdict = self.tracker.check(t, measured)
        self.desired = verdict.desired
        if verdict.done:
            self._end_goal(verdict.code == ResultCode.SUCCESSFUL, int(verdict.code),
                           verdict.message)

    def _end_goal(self, succeeded: bool, code: int, message: str) -> None:
        """Mark the active goal finished (the executor thread sends the result)."""
        if self.tracker is None or self.finished is not None:
            return
        self.finished = (succeeded, int(code), message)
        self.core.safety.end_trajectory(time.monotonic(), hold=not succeeded)

    # ------------------------------------------------------------------ the action
    def _on_goal(self, request: FollowJointTrajectory.Goal) -> GoalResponse:
        with self.lock:
            safety = self.core.safety
            goal = goal_from_message(request)
            answer = self.rules.accept(goal, self._now(), active=safety.mode == 'enabled')
            reason = answer.reason
            if answer.accepted:
                reason = safety.trajectory_reason(
                    goal.joint_names, [(p.time_from_start, p.positions) for p in goal.points])
            mode, fault = safety.mode, safety.fault
        if reason:
            if mode != 'enabled':
                reason += f' (the arm is {mode}{": " + fault if fault else ""})'
            self.get_logger().error(f'goal rejected: {reason}')
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _on_accepted(self, goal_handle) -> None:
        with self.lock:
            if self.goal_handle is not None:
                # The previous goal is answered now: preempted, or with the end the bus
                # cycle gave it if that is not sent yet (else its client never hears).
                if self.finished is None:
                    self.finished = (False, ResultCode.INVALID_GOAL, PREEMPTED_MESSAGE)
                self._send_result()
            safety = self.core.safety
            start = [safety.setpoint.get(j, safety.measured.get(j) or 0.0) for j in self.joints]
            self.tracker = GoalTracker(self.rules, goal_from_message(goal_handle.request),
                                       self._now(), start)
            self.goal_handle = goal_handle
            self.result_future = self.results.open(goal_handle)
            self.finished = None
        points = goal_handle.request.trajectory.points
        self.get_logger().info(f'goal accepted: {len(points)} point(s), '
                               f'{seconds_of(points[-1].time_from_start):.2f} s')
        goal_handle.execute()

    async def _execute(self, goal_handle) -> FollowJointTrajectory.Result:
        return await self.results.result(goal_handle)

    def _on_cancel(self, goal_handle) -> CancelResponse:
        return CancelResponse.ACCEPT

    def _monitor_goal(self) -> None:
        with self.lock:
            handle = self.goal_handle
            if handle is None:
                return
            if self.finished is None and handle.is_cancel_requested:
                self.finished = (None, ResultCode.SUCCESSFUL, '')
                self.core.safety.end_trajectory(time.monotonic(), hold=True)
            if self.finished is not None:
                self._send_result()
                return
            if self.desired is not None and self.tracker is not None:
                measured = [self.core.safety.measured.get(j) or 0.0 for j in self.joints]
                feedback = feedback_message(self.joints, self.desired, measured,
                                            [0.0] * len(self.joints),
                                            self._now() - self.tracker.trajectory.start_time)
                feedback.header.stamp = self.get_clock().now().to_msg()
                handle.publish_feedback(feedback)

    def _send_result(self) -> None:
        handle, future, finished = self.goal_handle, self.result_future, self.finished
        self.tracker, self.goal_handle, self.result_future = None, None, None
        self.desired = None
        if handle is None or future is None or finished is None:
            return
        succeeded, code, message = finished
        end_goal(handle, future, succeeded, code, message)
        if succeeded is False:
            self.get_logger().warning(f'goal aborted: {message}')

    # ------------------------------------------------------------------ services, topics
    def _answer(self, response: Trigger.Response, ok: bool, message: str) -> Trigger.Response:
        response.success, response.message = ok, message
        # rclpy refuses one call site logging at two severities: two call sites.
        if ok:
            self.get_logger().info(message)
        else:
            self.get_logger().error(message)
        return response

    def _written(self) -> bool:
        """Wait (holding the lock's condition) for the bus thread's next write; False when it
        wrote nothing within apply_wait (a stalled bus thread or a port that blocks)."""
        target = self.cycles + 1
        return self.cycle_written.wait_for(lambda: self.cycles >= target, self.apply_wait)

    def _enable(self, _: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        # Answer after the bus cycle that switched torque on: a client that reads the servos
        # on the reply finds them on (or is told why not).
        with self.cycle_written:
            refusal = eeprom_refusal(self.core.bus, self.core.calibration)
            if refusal:
                return self._answer(response, False, refusal)
            outcome = self.core.safety.enable(time.monotonic())
            if not outcome.ok:
                return self._answer(response, False, outcome.message)
            if not self._written():
                self.core.safety.disable()
                return self._answer(response, False, 'cannot enable: the bus wrote nothing in '
                                    f'{self.apply_wait:.2f} s; torque left off')
            safety = self.core.safety
            if safety.mode != 'enabled':
                return self._answer(response, False, 'cannot enable: '
                                    f'{self.core.bus_error or safety.fault or safety.mode}')
        return self._answer(response, True, outcome.message)

    def _disable(self, _: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        with self.cycle_written:
            outcome = self.core.safety.disable()
            self._end_goal(False, ResultCode.PATH_TOLERANCE_VIOLATED, 'torque disabled')
            unwritten = self._torque_off_unwritten()
        return self._answer(response, outcome.ok, outcome.message + unwritten)

    def _estop(self, _: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        return self._answer(response, True, self._stop('e-stop service', wait=True))

    def _stop(self, source: str, wait: bool = False) -> str:
        with self.cycle_written:
            outcome = self.core.safety.estop(source)
            self._end_goal(False, ResultCode.PATH_TOLERANCE_VIOLATED,
                           f'{source}: torque off on every servo')
            unwritten = self._torque_off_unwritten() if wait else ''
        return outcome.message + unwritten

    def _torque_off_unwritten(self) -> str:
        """'' once the bus thread's next write (torque off) is done, else the words that say
        it is not (holding the lock's condition)."""
        if self._written():
            return ''
        return (f' (the bus wrote nothing in {self.apply_wait:.2f} s: torque goes off on its '
                'next cycle)')

    def _reset(self, _: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        with self.lock:
            outcome = self.core.safety.reset()
        return self._answer(response, outcome.ok, outcome.message)

    def _on_emergency_stop(self, message: Bool) -> None:
        if message.data and self.core.safety.mode != 'estop':
            self.get_logger().error(self._stop('emergency_stop topic'))

    def _on_commands(self, message: Float64MultiArray) -> None:
        values = list(message.data)
        if len(values) != len(self.joints):
            self.get_logger().error(f'~/commands: {len(values)} values for the '
                                    f'{len(self.joints)} joints {list(self.joints)}',
                                    throttle_duration_sec=1.0)
            return
        with self.lock:
            if self.tracker is not None:
                reason = 'a trajectory goal is running'
            else:
                outcome = self.core.safety.command(dict(zip(self.joints, values)),
                                                   time.monotonic())
                reason = '' if outcome.ok else outcome.message
                if outcome.ok and outcome.message:
                    self.get_logger().warning(outcome.message, throttle_duration_sec=1.0)
        if reason:
            self.get_logger().error(f'~/commands refused: {reason}', throttle_duration_sec=1.0)

    def _publish_diagnostics(self) -> None:
        with self.lock:
            statuses = self.core.diagnostics(self.get_name())
            starts = list(self.cycle_times)
        rate = (len(starts) - 1) / (starts[-1] - starts[0]) if len(starts) > 2 and \
            starts[-1] > starts[0] else 0.0
        message = DiagnosticArray(status=[DiagnosticStatus(
            level=bytes([s.level]), name=s.name, message=s.message, hardware_id=s.hardware_id,
            values=[KeyValue(key=k, value=v) for k, v in s.values] + (
                [KeyValue(key='bus cycles (Hz)', value=f'{rate:.1f}')]
                if s.name.endswith(': bus') else [])) for s in statuses])
        message.header.stamp = self.get_clock().now().to_msg()
        self.diagnostics_pub.publish(message)

    def destroy_node(self) -> None:
        self.running = False
        if getattr(self, 'thread', None) is not None:
            self.thread.join(timeout=2.0)
        if getattr(self, 'core', None) is not None:
            self.core.bus.close()     # torque stays as it is: a falling arm is worse
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return run(ServoBridge, args)


if __name__ == '__main__':
    sys.exit(main())
