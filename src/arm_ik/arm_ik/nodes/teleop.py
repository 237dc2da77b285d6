"""teleop: a leader arm moved by hand drives a follower arm, through the follower's bridge.

A thin adapter around arm_servos.teleop (the joint mapping through both calibrations and the
rules of when to hold). The follower's servo_bridge applies all of its own safety rules to
what this node sends (calibrated range, velocity limits, e-stop, the command stream's stop).

Subscribes: <leader_ns>/joint_states (the leader bridge, role leader), <follower_ns>/joint_states
(the follower's measured state: stale, it holds), <follower_ns>/servo_bridge/state (the
follower bridge's mode: anything but enabled holds), emergency_stop (std_msgs/Bool, latched:
true holds until it says false, and the follower's bridge latches its own e-stop).
Publishes: <follower_ns>/servo_bridge/commands (std_msgs/Float64MultiArray, in the order of
the follower bridge's ``controller_joints`` parameter, read at start-up: a bridge driving
other joints is refused in one line naming both lists), ~/state (std_msgs/String, latched:
following, or held and why).
Serves: ~/resume (follow again, from the next leader reading; refused while the leader is
silent or more than resume_tolerance from the follower, the follower stale or not enabled, the
e-stop latched), ~/hold (std_srvs/Trigger).
Calls: <follower_ns>/servo_bridge/hold on each hold: the bridge holds at its own measured
position (teleop never sends a position it measured earlier) and its next motion is slow.

It starts held ('waiting'): teleoperation begins, and after any hold resumes, only on request.
"""

from __future__ import annotations

import sys
import time

from rcl_interfaces.srv import GetParameters
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Float64MultiArray, String
from std_srvs.srv import Trigger

from arm_ik.arm_config import read_description
from arm_ik.nodes.common import (
    declare_parameters,
    LATCHED_QOS,
    run,
    StartupError,
    wait_for_description,
)
from arm_ik.nodes.parameters import Param, ParameterTable
from arm_ik.servo_description import ServoArm
from arm_kinematics.model.arm_model import DescriptionError
from arm_servos.calibration import CalibrationError
from arm_servos.teleop import controller_order, Decision, JointMap, Teleop, TeleopConfig

PARAMETERS = ParameterTable(
    Param('robot_description', '', 'URDF text of both arms (empty: urdf_file, else the '
          'robot_description topic)', read_only=True),
    Param('urdf_file', '', 'URDF file, read when robot_description is empty', read_only=True),
    Param('base_frame', '', "root link of the follower's driven chain (empty: the URDF's root)",
          read_only=True),
    Param('tip_frame', '', "tip link of the follower's driven chain: the follower bridge's "
          'own tip_frame (its controller joints)', read_only=True),
    Param('leader_calibration', '', "the leader's calibration file (required)", read_only=True),
    Param('follower_calibration', '', "the follower's calibration file (required)",
          read_only=True),
    Param('leader_ns', '/leader', "namespace of the leader's servo_bridge", read_only=True),
    Param('follower_ns', '/follower', "namespace of the follower's servo_bridge",
          read_only=True),
    Param('gripper', 'gripper', "the gripper joint: its leader range mapped onto the "
          "follower's ('' for none)", read_only=True),
    Param('silent_timeout', 0.1, 's without a leader reading before the follower holds',
          read_only=True, low=0.0, high=10.0, low_open=True),
    Param('max_leader_speed', 8.0, 'rad/s a leader joint may move by hand; a faster step '
          'between two readings holds the follower', read_only=True, low=0.0, high=100.0,
          low_open=True),
    Param('jump_margin', 0.05, 'rad allowed above max_leader_speed per reading (noise)',
          read_only=True, low=0.0, high=1.0),
    Param('check_rate', 100.0, 'Hz, the leader-silence check', read_only=True, low=1.0,
          high=1000.0),
    Param('resume_tolerance', 0.2, 'rad a joint of the leader may be from the follower for '
          '~/resume to follow', read_only=True, low=0.0, high=6.3, low_open=True),
    Param('follower_timeout', 0.25, "s without the follower's joint_states before it holds",
          read_only=True, low=0.0, high=10.0, low_open=True),
    Param('bridge_wait', 30.0, "s to wait at start-up for the follower bridge's "
          'controller_joints', read_only=True, low=0.0, high=600.0, low_open=True),
)


class TeleopNode(Node):
    def __init__(self) -> None:
        super().__init__('teleop')
        values = declare_parameters(self, PARAMETERS)
        for required in ('leader_calibration', 'follower_calibration'):
            if not values[required]:
                raise StartupError(f'parameter {required} is required')
        urdf = values['robot_description']
        try:
            if not urdf and values['urdf_file']:
                urdf = read_description(values['urdf_file'])
            urdf = urdf or wait_for_description(self)
            arm = ServoArm.from_urdf(urdf, values['base_frame'], values['tip_frame'])
            follower = arm.load(values['follower_calibration'], urdf)
            leader = arm.load(values['leader_calibration'], urdf)
            own = tuple(n for n in follower.names if n in arm.chain)
        except (DescriptionError, CalibrationError, ValueError) as error:
            raise StartupError(str(error)) from None
        follower_ns, leader_ns = (values[k].rstrip('/') for k in ('follower_ns', 'leader_ns'))
        bridge = f'{follower_ns}/servo_bridge'
        try:
            # By name (review M2): what is sent follows the bridge's own order.
            joints = controller_order(own, self._controller_joints(bridge,
                                                                   values['bridge_wait']))
            self.teleop = Teleop(JointMap(leader, follower, joints, values['gripper']),
                                 TeleopConfig(values['silent_timeout'],
                                              values['max_leader_speed'],
                                              values['jump_margin'], values['gripper'],
                                              values['resume_tolerance'],
                                              values['follower_timeout']))
        except ValueError as error:
            raise StartupError(str(error)) from None
        self.joints = joints
        self.hold_client = self.create_client(Trigger, f'{bridge}/hold')
        self.command_pub = self.create_publisher(
            Float64MultiArray, f'{follower_ns}/servo_bridge/commands', QoSProfile(depth=10))
        self.state_pub = self.create_publisher(String, '~/state', LATCHED_QOS)
        # Keep last 1: the newest reading is the one to act on; a queue is latency (the
        # jump check uses the readings' stamps, so a reading dropped here only widens dt).
        self.create_subscription(JointState, f'{leader_ns}/joint_states', self._on_leader,
                                 QoSProfile(depth=1))
        self.create_subscription(JointState, f'{follower_ns}/joint_states', self._on_follower,
                                 QoSProfile(depth=1))
        self.create_subscription(String, f'{bridge}/state', self._on_follower_state,
                                 LATCHED_QOS)
        self.create_subscription(Bool, 'emergency_stop', self._on_emergency_stop, LATCHED_QOS)
        self.create_service(Trigger, '~/resume', self._resume)
        self.create_service(Trigger, '~/hold', self._hold)
        self.create_timer(1.0 / values['check_rate'], self._check)
        self._publish_state()
        self.get_logger().info(
            f'leader {leader_ns} drives follower {follower_ns}: joints {", ".join(joints)}; '
            'waiting for ~/resume')

    def _on_leader(self, message: JointState) -> None:
        stamp = message.header.stamp.sec + message.header.stamp.nanosec * 1e-9
        self._act(self.teleop.leader(message.name, message.position, stamp, time.monotonic()))

    def _controller_joints(self, bridge: str, timeout: float) -> tuple[str, ...]:
        """The follower bridge's read-only ``controller_joints``, waited for at start-up."""
        client = self.create_client(GetParameters, f'{bridge}/get_parameters')
        executor = SingleThreadedExecutor(context=self.context)
        executor.add_node(self)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline and self.context.ok():
                if not client.wait_for_service(timeout_sec=0.5):
                    continue
                future = client.call_async(GetParameters.Request(names=['controller_joints']))
                while not future.done() and time.monotonic() < deadline:
                    executor.spin_once(timeout_sec=0.1)
                if future.done() and future.result() is not None:
                    values = future.result().values
                    if values and values[0].string_array_value:
                        return tuple(values[0].string_array_value)
        finally:
            executor.remove_node(self)
            executor.shutdown()
            self.destroy_client(client)
        raise StartupError(f'no controller_joints from the follower bridge {bridge} within '
                           f'{timeout:g} s (start it first, or set follower_ns)')

    def _on_follower(self, message: JointState) -> None:
        self.teleop.follower(message.name, message.position, time.monotonic())

    def _on_follower_state(self, message: String) -> None:
        self._act(self.teleop.follower_state(message.data))

    def _check(self) -> None:
        self._act(self.teleop.check(time.monotonic()))

    def _act(self, decision: Decision) -> None:
        if decision.command is not None:
            self.command_pub.publish(Float64MultiArray(data=list(decision.command)))
            if decision.clipped:
                self.get_logger().warning(
                    f'leader outside the follower range: {", ".join(decision.clipped)} '
                    'clipped', throttle_duration_sec=1.0)
        if decision.hold:
            # The bridge holds at its own, fresh, measured position (Should 4); without
            # its ~/hold it holds after its command_timeout, nothing more being sent.
            if self.hold_client.service_is_ready():
                self.hold_client.call_async(Trigger.Request())
            else:
                self.get_logger().error("the follower bridge's ~/hold is not available: it "
                                        'holds after its command_timeout')
            self.get_logger().error(f'follower held at its measured position: '
                                    f'{decision.reason}; ~/resume to follow again')
        self._publish_state()

    def _publish_state(self) -> None:
        """~/state when it changed (called after every decision)."""
        state = self.teleop.state
        text = state if state == 'following' else f'{state}: {self.teleop.reason}'
        if text != getattr(self, '_published', None):
            self._published = text
            self.state_pub.publish(String(data=text))

    def _resume(self, _: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        outcome = self.teleop.resume(time.monotonic())
        response.success, response.message = outcome.ok, outcome.message
        self.get_logger().info(f'resume: {outcome.message}')
        self._publish_state()
        return response

    def _hold(self, _: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        self._act(self.teleop.hold('hold requested'))
        response.success, response.message = True, f'{self.teleop.state}: {self.teleop.reason}'
        self._publish_state()
        return response

    def _on_emergency_stop(self, message: Bool) -> None:
        self._act(self.teleop.estop(bool(message.data)))


def main(args: list[str] | None = None) -> int:
    return run(TeleopNode, args)


if __name__ == '__main__':
    sys.exit(main())
