"""servo_bridge as a real process on the simulated bus process (SO-101, Feetech, 1 Mbaud), a
test client over DDS; one process group for the module (RELIABILITY 32-38).

Covered: a stale goal left in the servos does not move the arm at start-up or on enable; a
FollowJointTrajectory goal reaches its target from measured feedback; an out-of-range goal is
refused (and servo_client prints the bridge's reason); a ~/commands stream moves the arm
and its stop holds the measured pose; an overload
and a silent servo abort the goal with the servo and the error in words and show in
/diagnostics; an e-stop turns torque off and nothing is written after; the
adapter vanishing is a clear error and the arm restarts in place after an explicit enable; a
bad calibration file stops the node with the field named; the trajectory executor, unchanged,
drives the bridge through follow_joint_trajectory.
"""

from __future__ import annotations

from pathlib import Path
import re
import time

import pytest

from arm_testing.real_arms import REAL_ARMS
from arm_testing.ros_harness import call_service, DomainClaim, wait_for

NS = '/so101'
CHAIN = ('shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex', 'wrist_roll')
ALL = CHAIN + ('gripper',)
SERVOS = Path(__file__).resolve().parents[2] / 'arm_servos'
EXAMPLE = SERVOS / 'calibration' / 'so101.yaml'
BROKEN = SERVOS / 'test' / 'broken_calibrations'
PATH_TOLERANCE_VIOLATED = -4
MEASURED = 'measured_joint_states'


class Rig:
    """The simulated bus, the bridge and a client node on one domain."""

    def __init__(self, domain: DomainClaim, group, link: Path, sim) -> None:
        from control_msgs.action import FollowJointTrajectory
        from diagnostic_msgs.msg import DiagnosticArray
        import rclpy
        from rclpy.action import ActionClient
        from rclpy.executors import SingleThreadedExecutor
        from sensor_msgs.msg import JointState
        from std_srvs.srv import Trigger
        self.sim, self.group, self.link = sim, group, link
        self.domain_id = domain.domain_id
        self.urdf = REAL_ARMS['so101'].urdf()
        # The measured state on its own topic, as joint_state_broadcaster's beside a
        # controller: the executor publishes its commanded state on joint_states.
        self.bridge = group.start_node('arm_ik', 'servo_bridge', namespace=NS, remappings={
            'joint_states': MEASURED}, params={
            'robot_description': self.urdf, 'tip_frame': 'gripper_frame_link',
            'calibration_file': str(EXAMPLE), 'port': str(link), 'rate': 100.0,
            # A busy test machine may delay the simulated servos: wait longer for replies
            # than a real bus needs, and call a servo silent after 25 cycles, not 5.
            'reply_timeout': 0.03, 'silent_cycles': 25, 'approach_velocity': 1.0,
            'goal_time': 2.0, 'diagnostics_rate': 5.0, 'velocity_cap': 0.6})
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain.domain_id)
        self.node = rclpy.create_node('servo_test_client', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.states: list = []
        self.diagnostics: list = []
        self.node.create_subscription(JointState, f'{NS}/{MEASURED}',
                                      lambda m: self.states.append((time.time(), m)), 100)
        self.node.create_subscription(DiagnosticArray, '/diagnostics',
                                      self.diagnostics.append, 100)
        self.services = {name: self.node.create_client(Trigger, f'{NS}/servo_bridge/{name}')
                         for name in ('enable', 'disable', 'estop', 'reset_estop')}
        self.action = ActionClient(self.node, FollowJointTrajectory,
                                   f'{NS}/servo_bridge/follow_joint_trajectory')

    def spin(self, timeout: float = 0.05) -> None:
        self.executor.spin_once(timeout_sec=timeout)

    def wait(self, condition, what: str, timeout: float = 20.0) -> None:
        if not self.bridge.alive():
            raise AssertionError(f'servo_bridge died:\n{self.bridge.output()}')
        wait_for(condition, timeout, self.spin, what)

    def call(self, name: str):
        from std_srvs.srv import Trigger
        client = self.services[name]
        self.wait(client.service_is_ready, f'~/{name}')
        return call_service(client, Trigger.Request(), self.spin, 10.0)

    def positions(self) -> dict[str, float]:
        """The bridge's measured positions in a joint_states message stamped after this call.
        The rig's node is spun only in its own waits, so the messages queued while a test was
        elsewhere (a move through MotionClient) come first; the newest of those may be a second
        old on a loaded machine."""
        now = time.time()

        def stamp(message) -> float:
            return message.header.stamp.sec + message.header.stamp.nanosec * 1e-9

        self.wait(lambda: bool(self.states) and stamp(self.states[-1][1]) >= now,
                  'joint_states stamped after the call')
        message = self.states[-1][1]
        return dict(zip(message.name, message.position))

    def settle(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.spin()

    def send(self, target: dict[str, float], seconds: float = 1.5):
        """Send a one-point goal; (accepted, result or None)."""
        from builtin_interfaces.msg import Duration
        from control_msgs.action import FollowJointTrajectory
        from trajectory_msgs.msg import JointTrajectoryPoint
        self.wait(lambda: self.action.server_is_ready(), 'the action server')
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = list(target)
        goal.trajectory.points = [JointTrajectoryPoint(
            positions=list(target.values()), velocities=[0.0] * len(target),
            time_from_start=Duration(sec=int(seconds), nanosec=int(seconds % 1 * 1e9)))]
        future = self.action.send_goal_async(goal)
        self.wait(future.done, 'the goal answer')
        handle = future.result()
        return handle

    def result(self, handle, timeout: float = 20.0):
        future = handle.get_result_async()
        self.wait(future.done, 'the goal result', timeout)
        return future.result().result

    def last_diagnostic(self, name_part: str):
        for array in reversed(self.diagnostics):
            for status in array.status:
                if name_part in status.name:
                    return status
        return None

    def close(self) -> None:
        self.node.destroy_node()
        self.executor.shutdown()
        import rclpy
        rclpy.shutdown(context=self.context)


@pytest.fixture(scope='module')
def rig(tmp_path_factory):
    from arm_bringup.process_group import ProcessGroup
    from arm_servos.sim.process import SimProcess
    link = tmp_path_factory.mktemp('servo_bridge') / 'ttySIM'
    domain = DomainClaim()
    # Every servo at mid-travel (0 rad) holding a stale goal of 2600 ticks (+0.85 rad).
    with SimProcess(link, 'feetech', position='2048', goal='2600') as sim, \
            ProcessGroup(env=domain.environment()) as group:
        rig = Rig(domain, group, link, sim)
        try:
            yield rig
        finally:
            rig.close()
    domain.release()


def _enable(rig: Rig) -> None:
    reply = rig.call('enable')
    assert reply.success, reply.message


def test_start_up_and_enable_do_not_move_an_arm_holding_a_stale_goal(rig):
    rig.wait(lambda: len(rig.states) > 20, 'joint_states')
    message = rig.states[-1][1]
    assert tuple(message.name) == ALL
    assert all(abs(p) < 0.01 for p in message.position)
    assert 'torque off' in rig.sim.command('status') and 'torque on' not in \
        rig.sim.command('status')
    _enable(rig)
    rig.settle(0.5)
    assert 'torque off' not in rig.sim.command('status')
    assert all(abs(p) < 0.01 for p in rig.positions().values()), rig.positions()


def test_a_goal_reaches_its_target_from_measured_feedback(rig):
    target = dict(zip(CHAIN, (0.3, -0.2, 0.4, 0.1, 0.5)))
    handle = rig.send(target, 1.5)
    assert handle.accepted
    result = rig.result(handle)
    assert result.error_code == 0, result.error_string
    measured = rig.positions()
    for joint, value in target.items():
        assert measured[joint] == pytest.approx(value, abs=0.02)
    assert measured['gripper'] == pytest.approx(0.0, abs=0.01)      # held off the chain


def test_a_goal_outside_the_calibrated_range_is_refused(rig):
    handle = rig.send(dict(zip(CHAIN, (0.0, 0.0, 1.68, 0.0, 0.0))), 2.0)   # elbow ≤ 1.629
    assert not handle.accepted
    rig.wait(lambda: 'elbow_flex: point 0 at 1.6800 rad is outside the calibrated range'
             in rig.bridge.output(), 'the refusal in the log')


def test_servo_client_prints_the_bridges_own_reason_for_a_rejected_goal(rig, monkeypatch):
    """The action protocol carries no reason for a rejection: the bridge publishes it on
    ~/goal_rejections and servo_client prints it, as it prints an abort's (issue 39.5)."""
    from arm_ik.servo_client import BridgeClient
    monkeypatch.setenv('ROS_DOMAIN_ID', str(rig.domain_id))
    client = BridgeClient(NS, timeout=30.0, client_name='servo_client_test')
    try:
        ok, message = client.move([0.0, 0.0, 1.68, 0.0, 0.0], 2.0)
    finally:
        client.close()
    assert not ok
    assert 'the servo bridge rejected the goal: elbow_flex: point 0 at 1.6800 rad is ' \
        'outside the calibrated range' in message, message


def test_an_overload_aborts_the_goal_in_words_and_shows_in_diagnostics(rig):
    handle = rig.send(dict(zip(CHAIN, (-0.3, 0.2, 0.0, 0.0, 0.0))), 3.0)
    assert handle.accepted
    rig.settle(0.3)
    rig.sim.command('error 3 overload')
    result = rig.result(handle)
    assert result.error_code == PATH_TOLERANCE_VIOLATED
    assert 'servo 3 (elbow_flex) reports overload' in result.error_string
    rig.wait(lambda: (s := rig.last_diagnostic('servo 3 (elbow_flex)')) is not None and
             s.message == 'overload' and s.level == b'\x02', 'servo 3 overload in /diagnostics')
    values = {kv.key: kv.value for kv in rig.last_diagnostic('servo 3').values}
    assert values['voltage (V)'] == '7.4' and values['errors'] == 'overload'
    refused = rig.call('enable')
    assert not refused.success and 'servo 3 (elbow_flex) reports overload' in refused.message
    rig.sim.command('error 3 clear')
    rig.settle(0.2)
    before = rig.positions()
    _enable(rig)
    rig.settle(0.3)
    after = rig.positions()
    assert all(abs(after[j] - before[j]) < 0.02 for j in ALL)        # restarts in place


def test_a_silent_servo_stops_the_arm_naming_it(rig):
    handle = rig.send(dict(zip(CHAIN, (0.0, 0.0, 0.0, 0.3, 0.0))), 3.0)
    assert handle.accepted
    rig.settle(0.2)
    rig.sim.command('remove 4')
    result = rig.result(handle)
    rig.sim.command('restore 4')
    assert result.error_code == PATH_TOLERANCE_VIOLATED
    assert re.search(r'servo 4 \(wrist_flex\) not answering for \d+ cycles', result.error_string)
    rig.settle(0.3)
    _enable(rig)


def test_a_command_stream_moves_the_arm_and_its_stop_holds_the_measured_pose(rig):
    """~/commands as forward_position_controller: the arm follows the stream; when the
    stream stops the bridge holds where the arm is (RELIABILITY 36); out of range: refused."""
    from std_msgs.msg import Float64MultiArray
    publisher = rig.node.create_publisher(Float64MultiArray, f'{NS}/servo_bridge/commands', 10)
    target = [0.25, 0.0, 0.0, 0.0, 0.0]
    try:
        end = time.monotonic() + 2.0
        while time.monotonic() < end:           # a 20 Hz stream toward the target
            publisher.publish(Float64MultiArray(data=target))
            rig.settle(0.05)
        assert rig.positions()['shoulder_pan'] == pytest.approx(0.25, abs=0.02)
        publisher.publish(Float64MultiArray(data=[0.0, 0.0, 3.0, 0.0, 0.0]))
        rig.wait(lambda: 'elbow_flex: 3.0000 rad is outside the calibrated range'
                 in rig.bridge.output(), 'the refused command in the log')
        publisher.publish(Float64MultiArray(data=[-0.5, 0.0, 0.0, 0.0, 0.0]))
        rig.settle(1.2)      # one command, then silence: 0.5 s timeout at 0.6 rad/s (velocity_cap)
        held = rig.positions()['shoulder_pan']
        assert -0.5 + 0.05 < held < 0.25 - 0.02  # it started toward -0.5, then held
        rig.settle(0.5)
        assert rig.positions()['shoulder_pan'] == pytest.approx(held, abs=0.01)
    finally:
        rig.node.destroy_publisher(publisher)


def test_estop_turns_torque_off_and_nothing_is_written_after(rig):
    handle = rig.send(dict(zip(CHAIN, (0.2, 0.2, 0.2, 0.2, 0.2))), 3.0)
    assert handle.accepted
    rig.settle(0.3)
    assert rig.call('estop').success
    result = rig.result(handle)
    assert result.error_code == PATH_TOLERANCE_VIOLATED and 'e-stop' in result.error_string
    rig.settle(0.1)
    assert 'torque on' not in rig.sim.command('status')
    writes = rig.sim.command('writes')
    rig.settle(0.5)
    assert rig.sim.command('writes') == writes                     # nothing sent after
    refused = rig.call('enable')
    assert not refused.success and 'e-stop is latched' in refused.message
    assert not rig.send(dict(zip(CHAIN, (0.0,) * 5)), 2.0).accepted
    assert rig.call('reset_estop').success
    _enable(rig)


def test_an_unplugged_adapter_is_a_clear_error_and_recovers_on_enable(rig):
    rig.sim.command('vanish')
    rig.wait(lambda: (s := rig.last_diagnostic('servo_bridge: bus')) is not None and
             'serial adapter on' in s.message and 'lost' in s.message, 'the adapter error')
    assert 'Traceback' not in rig.bridge.output()
    rig.sim.command('replug')
    count = len(rig.states)
    rig.wait(lambda: len(rig.states) > count + 20, 'joint_states again')
    before = rig.positions()
    _enable(rig)
    rig.settle(0.3)
    after = rig.positions()
    assert all(abs(after[j] - before[j]) < 0.02 for j in ALL)


@pytest.mark.parametrize('name, words', [
    ('repeated_id', 'joints.wrist_roll.id: 4 repeats the id of joints.wrist_flex'),
    ('range_outside_urdf', 'joints.elbow_flex.range: [-1.69, 2.5] rad is outside the URDF'),
    ('missing_field', 'joints.shoulder_lift.offset: missing'),
])
def test_a_bad_calibration_file_stops_the_node_with_the_field_named(rig, name, words):
    process = rig.group.start_node('arm_ik', 'servo_bridge', name=f'bad_{name}', namespace=NS,
                                   params={'robot_description': rig.urdf,
                                           'calibration_file': str(BROKEN / f'{name}.yaml'),
                                           'port': str(rig.link)})
    assert process.wait_for_exit(30.0) == 1
    output = process.output()
    assert '[FATAL]' in output and words in output and 'Traceback' not in output


def test_the_executor_drives_the_bridge_through_follow_joint_trajectory(rig):
    """trajectory_executor with output follow_joint_trajectory, unchanged, on the bridge's
    action: a MoveToTarget joint goal reaches its target on the measured joint_states."""
    from arm_testing.motion_harness import MotionClient
    rig.call('reset_estop')
    _enable(rig)
    rig.group.start_node('arm_ik', 'trajectory_executor', namespace=NS, params={
        'robot_description': rig.urdf, 'arm': 'so101', 'base_frame': 'base_link',
        'tip_frame': 'gripper_frame_link', 'output': 'follow_joint_trajectory',
        'controller_action': 'servo_bridge/follow_joint_trajectory',
        'feedback_topic': MEASURED, 'follow_target': False,
        'feedback_stale_periods': 10.0})
    client = MotionClient(rig.domain_id, NS, CHAIN)
    try:
        client.wait_for_server(60.0)
        target = [0.2, -0.3, 0.3, 0.2, -0.4]
        deadline = time.monotonic() + 30.0
        while True:      # until the executor has the measured state (NO_JOINT_STATE before)
            outcome = client.move(client.goal(joints=target, law='min_jerk', duration=2.0))
            if outcome.code != 10 or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert outcome.code == 0, outcome.message
        rig.settle(0.3)
        measured = rig.positions()
        for joint, value in zip(CHAIN, target):
            assert measured[joint] == pytest.approx(value, abs=0.03)
    finally:
        client.close()
