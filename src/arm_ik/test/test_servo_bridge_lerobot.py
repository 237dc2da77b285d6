"""servo_bridge on a LeRobot calibration file as LeRobot wrote it, the simulated SO-101's
servos holding its homing offsets in EEPROM (servo_sim --lerobot): the joints read LeRobot's
DEGREES zero at mid-range, a goal reaches its angles; a servo whose Homing_Offset changed is
refused before any torque, on enable and at start-up, naming the joint and the field; a motor
name the URDF lacks stops the node naming it (RELIABILITY 43).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arm_testing.real_arms import REAL_ARMS
from arm_testing.ros_harness import call_service, DomainClaim, wait_for

NS = '/lerobot'
CHAIN = ('shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex', 'wrist_roll')
FOLLOWER = Path(__file__).resolve().parents[2] / 'arm_servos' / 'test' / \
    'lerobot_calibrations' / 'robots' / 'so101_follower' / 'blue_follower.json'


class Client:
    def __init__(self, domain_id: int) -> None:
        from control_msgs.action import FollowJointTrajectory
        import rclpy
        from rclpy.action import ActionClient
        from rclpy.executors import SingleThreadedExecutor
        from sensor_msgs.msg import JointState
        from std_srvs.srv import Trigger
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node('lerobot_test_client', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.states: list = []
        self.node.create_subscription(JointState, f'{NS}/joint_states', self.states.append, 50)
        self.services = {n: self.node.create_client(Trigger, f'{NS}/servo_bridge/{n}')
                         for n in ('enable', 'disable')}
        self.action = ActionClient(self.node, FollowJointTrajectory,
                                   f'{NS}/servo_bridge/follow_joint_trajectory')

    def spin(self) -> None:
        self.executor.spin_once(timeout_sec=0.05)

    def call(self, name: str):
        from std_srvs.srv import Trigger
        wait_for(self.services[name].service_is_ready, 30.0, self.spin, f'~/{name}')
        return call_service(self.services[name], Trigger.Request(), self.spin, 10.0)

    def positions(self) -> dict[str, float]:
        count = len(self.states)
        wait_for(lambda: len(self.states) > count, 20.0, self.spin, 'joint_states')
        return dict(zip(self.states[-1].name, self.states[-1].position))

    def close(self) -> None:
        import rclpy
        self.node.destroy_node()
        self.executor.shutdown()
        rclpy.shutdown(context=self.context)


@pytest.fixture(scope='module')
def rig(tmp_path_factory):
    from arm_bringup.process_group import ProcessGroup
    from arm_servos.sim.process import SimProcess
    link = tmp_path_factory.mktemp('lerobot') / 'ttySIM'
    domain = DomainClaim()
    with SimProcess(link, 'feetech', extra=['--lerobot', str(FOLLOWER)]) as sim, \
            ProcessGroup(env=domain.environment()) as group:
        client = Client(domain.domain_id)
        try:
            yield sim, group, client, link, REAL_ARMS['so101'].urdf()
        finally:
            client.close()
    domain.release()


def _bridge(group, urdf: str, link: Path, calibration: Path, name: str = 'servo_bridge'):
    return group.start_node('arm_ik', 'servo_bridge', name=name, namespace=NS, params={
        'robot_description': urdf, 'tip_frame': 'gripper_frame_link',
        'calibration_file': str(calibration), 'port': str(link), 'rate': 100.0,
        'reply_timeout': 0.03, 'silent_cycles': 25, 'approach_velocity': 1.0,
        'goal_time': 2.0})


def test_the_bridge_runs_on_the_lerobot_file_and_refuses_a_recalibrated_servo(rig):
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint
    sim, group, client, link, urdf = rig
    bridge = _bridge(group, urdf, link, FOLLOWER)
    start = client.positions()
    assert all(abs(start[j]) < 0.002 for j in CHAIN), start    # LeRobot's mid-range zero
    reply = client.call('enable')
    assert reply.success, reply.message + bridge.output()
    target = [0.3, -0.4, 0.5, -0.2, 0.6]
    wait_for(client.action.server_is_ready, 30.0, client.spin, 'the action server')
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = list(CHAIN)
    goal.trajectory.points = [JointTrajectoryPoint(positions=target, velocities=[0.0] * 5,
                                                   time_from_start=Duration(sec=2))]
    future = client.action.send_goal_async(goal)
    wait_for(future.done, 20.0, client.spin, 'the goal answer')
    result = future.result().get_result_async()
    wait_for(result.done, 30.0, client.spin, 'the goal result')
    assert result.result().result.error_code == 0, result.result().result.error_string
    measured = client.positions()
    for joint, value in zip(CHAIN, target):
        assert measured[joint] == pytest.approx(value, abs=0.03)
    assert client.call('disable').success
    torque_writes = sim.command('writes')
    # LeRobot recalibrated the elbow since this file was written.
    sim.command('homing 3 1017')
    reply = client.call('enable')
    assert not reply.success
    assert 'joints.elbow_flex.homing_offset: the file says 1081, servo 3 holds 1017' in \
        reply.message
    assert sim.command('writes') == torque_writes     # nothing written: no torque
    group.stop(bridge)
    # Started on the recalibrated arm: refused before the bus loop starts.
    again = _bridge(group, urdf, link, FOLLOWER, name='servo_bridge_again')
    assert again.wait_for_exit(30.0) == 1
    output = again.output()
    assert '[FATAL]' in output and 'joints.elbow_flex.homing_offset' in output
    assert 'Traceback' not in output
    assert sim.command('writes') == torque_writes
    sim.command('homing 3 1081')


def test_a_motor_name_the_urdf_lacks_stops_the_node_naming_it(rig, tmp_path):
    sim, group, client, link, urdf = rig
    data = json.loads(FOLLOWER.read_text(encoding='utf-8'))
    data['wrist_yaw'] = data.pop('wrist_roll')
    path = tmp_path / 'so101_follower' / 'renamed.json'
    path.parent.mkdir()
    path.write_text(json.dumps(data, indent=4), encoding='utf-8')
    bridge = _bridge(group, urdf, link, path, name='servo_bridge_renamed')
    assert bridge.wait_for_exit(30.0) == 1
    output = bridge.output()
    assert 'wrist_yaw: motor name is not a movable joint of the URDF' in output
    assert '[FATAL]' in output and 'Traceback' not in output
