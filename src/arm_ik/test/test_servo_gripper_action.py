"""The bridge's GripperCommand action on the simulated SO-101 calibrated by LeRobot
(RELIABILITY 45), from a plain action client and from pymoveit2's GripperInterface as a user
writes it: open reaches its goal; closing on an object between the jaws ends stalled,
reached_goal false, the servo's torque limit set from max_effort, the servo not overloaded
and still gripping; a goal outside the gripper's range is rejected; the bridge's ~/hold (what
teleop calls) ends a running goal, aborted, the gripper held where it was."""

from __future__ import annotations

from pathlib import Path
import re
import threading
import time

import pytest

from arm_testing.real_arms import REAL_ARMS
from arm_testing.ros_harness import call_service, DomainClaim

NS = '/lerobot'
FOLLOWER = Path(__file__).resolve().parents[2] / 'arm_servos' / 'test' / \
    'lerobot_calibrations' / 'robots' / 'so101_follower' / 'blue_follower.json'
FULL_EFFORT = 2.9       # N·m, an STS3215 at 7.4 V


def _has_gripper_command() -> bool:
    try:
        from control_msgs.action import GripperCommand  # noqa: F401
    except ImportError:
        return False
    return True


pytestmark = pytest.mark.skipif(not _has_gripper_command(),
                                reason='control_msgs has no GripperCommand (issue 37 adds it)')


@pytest.fixture(scope='module')
def rig(tmp_path_factory):
    import rclpy
    from rclpy.executors import MultiThreadedExecutor

    from arm_bringup.process_group import ProcessGroup
    from arm_servos.sim.process import SimProcess
    link = tmp_path_factory.mktemp('gripper') / 'ttySIM'
    domain = DomainClaim()
    with SimProcess(link, 'feetech', tau=0.02, extra=['--lerobot', str(FOLLOWER)]) as sim, \
            ProcessGroup(env=domain.environment()) as group:
        bridge = group.start_node('arm_ik', 'servo_bridge', namespace=NS, params={
            'robot_description': REAL_ARMS['so101'].urdf(), 'tip_frame': 'gripper_frame_link',
            'calibration_file': str(FOLLOWER), 'port': str(link), 'reply_timeout': 0.03,
            'silent_cycles': 25, 'approach_velocity': 2.0, 'gripper_full_effort': FULL_EFFORT})
        context = rclpy.Context()
        rclpy.init(context=context, domain_id=domain.domain_id)
        node = rclpy.create_node('gripper_user', namespace=NS, context=context)
        executor = MultiThreadedExecutor(context=context)
        executor.add_node(node)
        spinner = threading.Thread(target=executor.spin, daemon=True)
        spinner.start()
        try:
            yield sim, bridge, node
        finally:
            executor.shutdown()
            node.destroy_node()
            rclpy.shutdown(context=context)
    domain.release()


def _enable(node, bridge) -> None:
    from std_srvs.srv import Trigger
    client = node.create_client(Trigger, 'servo_bridge/enable')
    deadline = time.monotonic() + 30.0
    while not client.service_is_ready():
        assert time.monotonic() < deadline, f'no ~/enable: {bridge.output()}'
        time.sleep(0.05)
    reply = call_service(client, Trigger.Request(), lambda: time.sleep(0.05), 20.0)
    assert reply.success, reply.message


def _torque_limit(sim) -> float:
    line = re.search(r'id 6: [^;]*', sim.command('status')).group(0)
    return float(re.search(r'torque limit ([\d.]+)', line).group(1))


def _object_at(sim, radians: float) -> None:
    """An object between the jaws, the gripper closing on it at ``radians``."""
    from arm_servos.lerobot import load_calibration
    calibration = load_calibration(FOLLOWER, REAL_ARMS['so101'].urdf(),
                                   ('shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex',
                                    'wrist_roll'))
    sim.command(f'block 6 {calibration.joint("gripper").to_ticks(radians)}')


def _send(client, position: float, max_effort: float, timeout: float = 20.0):
    """(status, result) of one GripperCommand goal."""
    from control_msgs.action import GripperCommand
    goal = GripperCommand.Goal()
    goal.command.position, goal.command.max_effort = position, max_effort
    future = client.send_goal_async(goal)
    deadline = time.monotonic() + timeout
    while not future.done():
        assert time.monotonic() < deadline, 'no answer to the goal'
        time.sleep(0.05)
    handle = future.result()
    assert handle.accepted
    result = handle.get_result_async()
    while not result.done():
        assert time.monotonic() < deadline, 'no result'
        time.sleep(0.05)
    return result.result().status, result.result().result


def test_a_grip_on_an_object_stalls_within_its_torque_and_keeps_holding(rig):
    from action_msgs.msg import GoalStatus
    from control_msgs.action import GripperCommand
    from rclpy.action import ActionClient
    sim, bridge, node = rig
    sim.command('unblock 6')
    _enable(node, bridge)
    client = ActionClient(node, GripperCommand, 'servo_bridge/gripper_cmd')
    assert client.wait_for_server(timeout_sec=30.0), bridge.output()
    status, result = _send(client, 1.5, 0.0)
    assert status == GoalStatus.STATUS_SUCCEEDED
    assert result.reached_goal and not result.stalled
    assert result.position == pytest.approx(1.5, abs=0.02)
    _object_at(sim, 0.5)
    status, result = _send(client, -0.1, 1.0)
    assert status == GoalStatus.STATUS_ABORTED
    assert result.stalled and not result.reached_goal
    assert result.position == pytest.approx(0.5, abs=0.02)
    limit = _torque_limit(sim)
    assert limit == pytest.approx(1.0 / FULL_EFFORT, abs=0.002)
    assert 0 < result.effort <= 1.0 + 0.01       # N·m: at the torque limit, not above
    time.sleep(1.5)                               # still gripping, not overloaded
    line = re.search(r'id 6: [^;]*', sim.command('status')).group(0)
    assert 'torque on' in line and float(re.search(r'load (-?[\d.]+)', line).group(1)) != 0
    assert 'overload' not in bridge.output()
    sim.command('unblock 6')


def test_pymoveit2_opens_and_a_grip_on_an_object_stalls(rig):
    pytest.importorskip('moveit_msgs', reason='pymoveit2 needs moveit_msgs (issue 37 adds it)')
    from pymoveit2 import GripperInterface
    from pymoveit2.gripper_command import GripperCommand
    sim, bridge, node = rig
    sim.command('unblock 6')
    _enable(node, bridge)
    gripper = GripperInterface(node, gripper_joint_names=['gripper'],
                               open_gripper_joint_positions=1.5,
                               closed_gripper_joint_positions=-0.1, max_effort=1.0,
                               gripper_command_action_name='servo_bridge/gripper_cmd',
                               interface=GripperCommand)
    deadline = time.monotonic() + 60.0      # a first run imports and discovers slowly
    while not gripper.gripper_command_action_client.server_is_ready():
        assert time.monotonic() < deadline, bridge.output()
        time.sleep(0.1)
    assert gripper.open()
    assert gripper.wait_until_executed(timeout_sec=60.0)
    assert gripper.motion_succeeded, gripper.last_failure()
    assert _torque_limit(sim) == pytest.approx(1.0 / FULL_EFFORT, abs=0.002)
    _object_at(sim, 0.5)
    assert gripper.close()
    # pymoveit2 answers whether the motion succeeded: a stall is not a success.
    assert not gripper.wait_until_executed(timeout_sec=60.0)
    assert gripper.backend.current_operation is None   # ended, not timed out
    result = gripper.backend._execution_lifecycle.last_result
    assert result.stalled and not result.reached_goal
    assert result.position == pytest.approx(0.5, abs=0.02)
    assert 'stalled' in gripper.last_failure()
    gripper.destroy()
    sim.command('unblock 6')


def test_a_goal_outside_the_gripper_range_is_rejected(rig):
    from control_msgs.action import GripperCommand
    from rclpy.action import ActionClient
    sim, bridge, node = rig
    client = ActionClient(node, GripperCommand, 'servo_bridge/gripper_cmd')
    assert client.wait_for_server(timeout_sec=30.0)
    goal = GripperCommand.Goal()
    goal.command.position = 3.0
    future = client.send_goal_async(goal)
    deadline = time.monotonic() + 20.0
    while not future.done():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert not future.result().accepted
    deadline = time.monotonic() + 10.0
    while 'gripper: 3.0000 is outside the calibrated range' not in bridge.output():
        assert time.monotonic() < deadline, bridge.output()
        time.sleep(0.1)


def _gripper_position(sim) -> float:
    """The simulated gripper's position now, rad, through the file's calibration."""
    from arm_servos.lerobot import load_calibration
    calibration = load_calibration(FOLLOWER, REAL_ARMS['so101'].urdf(),
                                   ('shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex',
                                    'wrist_roll'))
    ticks = float(re.search(r'id 6: pos (-?\d+)', sim.command('status')).group(1))
    return calibration.joint('gripper').to_radians(ticks)


def test_a_hold_ends_a_running_goal_and_the_gripper_stays_where_it_was(rig):
    from action_msgs.msg import GoalStatus
    from control_msgs.action import GripperCommand
    from rclpy.action import ActionClient
    from std_srvs.srv import Trigger
    sim, bridge, node = rig
    sim.command('unblock 6')
    _enable(node, bridge)
    client = ActionClient(node, GripperCommand, 'servo_bridge/gripper_cmd')
    assert client.wait_for_server(timeout_sec=30.0), bridge.output()
    status, _ = _send(client, -0.1, 0.0)
    assert status == GoalStatus.STATUS_SUCCEEDED
    hold = node.create_client(Trigger, 'servo_bridge/hold')
    assert hold.wait_for_service(timeout_sec=20.0)
    # A hold first: the next motion starts at approach_velocity (2 rad/s), so the goal below
    # takes about 0.9 s and the hold lands while it runs.
    assert call_service(hold, Trigger.Request(), lambda: time.sleep(0.02), 20.0).success
    goal = GripperCommand.Goal()
    goal.command.position, goal.command.max_effort = 1.7, 0.0
    moved = threading.Event()
    start = _gripper_position(sim)
    future = client.send_goal_async(
        goal, feedback_callback=lambda f: moved.set()
        if f.feedback.position > start + 0.1 else None)
    assert moved.wait(20.0), bridge.output()
    reply = call_service(hold, Trigger.Request(), lambda: time.sleep(0.01), 20.0)
    assert reply.success, reply.message
    result = future.result().get_result_async()
    deadline = time.monotonic() + 20.0
    while not result.done():
        assert time.monotonic() < deadline, 'no result'
        time.sleep(0.02)
    assert result.result().status == GoalStatus.STATUS_ABORTED
    held = result.result().result
    assert not held.reached_goal and not held.stalled
    assert start + 0.1 < held.position < 1.7 - 0.2, held.position
    # Nothing drives it on: it stays where the hold found it.
    time.sleep(0.6)
    first = _gripper_position(sim)
    time.sleep(0.4)
    assert _gripper_position(sim) == pytest.approx(first, abs=0.01)
    assert first == pytest.approx(held.position, abs=0.1)
    assert first < 1.7 - 0.2
    deadline = time.monotonic() + 10.0
    while 'gripper goal: hold requested: holding gripper at' not in bridge.output():
        assert time.monotonic() < deadline, bridge.output()
        time.sleep(0.1)
