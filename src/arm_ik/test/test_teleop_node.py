"""Leader-follower teleoperation as real processes: two simulated buses, a servo_bridge in the
leader role, one as the follower, and the teleop node; one process group for the module
(issue 38.2, RELIABILITY 44).

Covered: the leader bridge never writes torque nor a goal and refuses enable; the follower
moves with a hand moving the leader (its gripper range mapped); a leader unplugged holds the
follower at its measured position, and it follows again only on ~/resume, refused while the
leader is far from the follower (naming the joint); a leader jump faster than a hand holds it
too; an e-stop of the follower's bridge (its ~/estop service) holds teleop and blocks resume;
a teleop whose files give other joints than the follower bridge's refuses to start, naming
both lists.
"""

from __future__ import annotations

from pathlib import Path
import time

import pytest

from arm_testing.real_arms import REAL_ARMS
from arm_testing.ros_harness import call_service, DomainClaim, wait_for

SERVOS = Path(__file__).resolve().parents[2] / 'arm_servos' / 'calibration'
LEADER_CAL, FOLLOWER_CAL = SERVOS / 'so101_leader.yaml', SERVOS / 'so101.yaml'
JOINTS = ('shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex', 'wrist_roll', 'gripper')
TIP = 'moving_jaw_so101_v1_link'    # the gripper on the follower's chain: ~/commands drive it
RATE = 1 / 651.898647               # rad per tick


class Pair:
    def __init__(self, domain, group, leader_sim, follower_sim, leader_link, follower_link):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String
        from std_srvs.srv import Trigger
        self.leader_sim, self.follower_sim = leader_sim, follower_sim
        urdf = REAL_ARMS['so101'].urdf()
        common = {'robot_description': urdf, 'tip_frame': TIP, 'reply_timeout': 0.03,
                  'silent_cycles': 25}
        self.leader = group.start_node('arm_ik', 'servo_bridge', namespace='/leader', params={
            **common, 'calibration_file': str(LEADER_CAL), 'port': str(leader_link),
            'role': 'leader', 'rate': 200.0})
        self.follower = group.start_node('arm_ik', 'servo_bridge', namespace='/follower',
                                         params={**common, 'calibration_file': str(FOLLOWER_CAL),
                                                 'port': str(follower_link),
                                                 'velocity_cap': 2.0})
        self.teleop = group.start_node('arm_ik', 'teleop', namespace='/follower', params={
            'robot_description': urdf, 'tip_frame': TIP,
            'leader_calibration': str(LEADER_CAL), 'follower_calibration': str(FOLLOWER_CAL),
            # A busy test machine may hold a process for a while: call the leader silent
            # after 0.5 s here (0.1 s by default), the follower after 2 s.
            'silent_timeout': 0.5, 'follower_timeout': 2.0})
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain.domain_id)
        self.node = rclpy.create_node('teleop_test', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.states = {'leader': [], 'follower': []}
        for arm in self.states:
            self.node.create_subscription(
                JointState, f'/{arm}/joint_states',
                lambda m, arm=arm: self.states[arm].append(dict(zip(m.name, m.position))), 50)
        self.teleop_state: list[str] = []
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.node.create_subscription(String, '/follower/teleop/state',
                                      lambda m: self.teleop_state.append(m.data), latched)
        self.clients = {name: self.node.create_client(Trigger, name) for name in (
            '/leader/servo_bridge/enable', '/follower/servo_bridge/enable',
            '/follower/servo_bridge/estop', '/follower/teleop/resume')}
        self.group, self.urdf = group, urdf

    def spin(self) -> None:
        self.executor.spin_once(timeout_sec=0.05)

    def wait(self, condition, what: str, timeout: float = 20.0) -> None:
        for process in (self.leader, self.follower, self.teleop):
            if not process.alive():
                raise AssertionError(f'a node died:\n{process.output()}')
        wait_for(condition, timeout, self.spin, what)

    def call(self, name: str):
        from std_srvs.srv import Trigger
        client = self.clients[name]
        self.wait(client.service_is_ready, name)
        return call_service(client, Trigger.Request(), self.spin, 10.0)

    def resume(self) -> None:
        """~/resume, again while it is refused for a stale leader reading (a busy machine may
        hold the leader's process past silent_timeout)."""
        deadline = time.monotonic() + 20.0
        while True:
            reply = self.call('/follower/teleop/resume')
            if reply.success or time.monotonic() > deadline:
                break
            self.settle(0.2)
        assert reply.success, reply.message

    def settle(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.spin()

    def hand(self, ticks: dict[int, int]) -> None:
        self.leader_sim.command('hand ' + ' '.join(f'{i}:{t}' for i, t in ticks.items()))

    def last(self, arm: str) -> dict[str, float]:
        self.wait(lambda: bool(self.states[arm]), f'{arm} joint_states')
        return self.states[arm][-1]

    def close(self) -> None:
        import rclpy
        self.node.destroy_node()
        self.executor.shutdown()
        rclpy.shutdown(context=self.context)


@pytest.fixture(scope='module')
def pair(tmp_path_factory):
    from arm_bringup.process_group import ProcessGroup
    from arm_servos.sim.process import SimProcess
    folder = tmp_path_factory.mktemp('teleop')
    domain = DomainClaim()
    # The leader homed off mid-travel as its calibration says; the follower at mid-travel.
    with SimProcess(folder / 'leader', 'feetech',
                    position='2011,2093,1987,2070,2048,2100') as leader_sim, \
            SimProcess(folder / 'follower', 'feetech', goal='2600') as follower_sim, \
            ProcessGroup(env=domain.environment()) as group:
        pair = Pair(domain, group, leader_sim, follower_sim, folder / 'leader',
                    folder / 'follower')
        try:
            yield pair
        finally:
            pair.close()
    domain.release()


def test_the_leader_only_reads_and_refuses_enable(pair):
    pair.wait(lambda: len(pair.states['leader']) > 20, 'leader joint_states')
    assert all(abs(v) < 0.01 for v in pair.last('leader').values()), pair.last('leader')
    refused = pair.call('/leader/servo_bridge/enable')
    assert not refused.success and 'teleoperation leader' in refused.message
    # Torque switched off once on connect (a hand must move it), nothing else written.
    assert pair.leader_sim.command('writes') == 'goal writes 0, torque writes 1'


def test_the_follower_moves_with_the_leader_after_resume(pair):
    # teleop starts once it has read the follower bridge's controller_joints.
    pair.wait(lambda: bool(pair.teleop_state), "teleop's state", 60.0)
    assert pair.teleop_state[-1].startswith('waiting')
    assert pair.call('/follower/servo_bridge/enable').success
    pair.wait(lambda: abs(pair.last('leader')['shoulder_pan']) < 0.01, 'a fresh leader')
    pair.resume()
    # A hand moving the leader: pan +0.3 rad, wrist_flex (mounted the other way) +0.2 rad,
    # the handle to the middle of its range, in small steps as a hand does.
    for step in range(1, 31):
        f = step / 30
        pair.hand({1: 2011 + round(0.3 / RATE * f), 4: 2070 - round(0.2 / RATE * f),
                   6: 2100 + round(0.45 / RATE * f)})
        pair.settle(0.03)
    grip_low, grip_high = -0.111981, 1.74533      # the follower's jaw; the handle: 0 … 0.9
    pair.wait(lambda: abs(pair.last('follower')['shoulder_pan'] - 0.3) < 0.02 and
              abs(pair.last('follower')['wrist_flex'] - 0.2) < 0.02 and
              abs(pair.last('follower')['gripper'] - (grip_low + grip_high) / 2) < 0.03,
              'the follower there')
    assert pair.teleop_state[-1] == 'following'


def test_an_unplugged_leader_holds_the_follower_until_resume(pair):
    pair.leader_sim.command('vanish')
    pair.wait(lambda: pair.teleop_state[-1].startswith('held: leader silent'), 'held')
    held = pair.last('follower')
    pair.leader_sim.command('replug')
    count = len(pair.states['leader'])
    pair.wait(lambda: len(pair.states['leader']) > count + 20, 'leader joint_states again')
    pair.hand({1: 2011})            # the leader moved while unplugged
    pair.settle(0.5)
    assert pair.teleop_state[-1].startswith('held')          # not without a request
    assert all(abs(pair.last('follower')[j] - held[j]) < 0.02 for j in JOINTS)
    refused = pair.call('/follower/teleop/resume')           # 0.3 rad away: no run to it
    assert not refused.success and 'from the follower at shoulder_pan' in refused.message
    pair.hand({1: 2011 + round(0.15 / RATE)})                # brought within 0.2 rad
    pair.resume()
    pair.wait(lambda: abs(pair.last('follower')['shoulder_pan'] - 0.15) < 0.02,
              'following again')


def test_a_leader_jump_faster_than_a_hand_holds_the_follower(pair):
    assert pair.teleop_state[-1] == 'following'
    pair.hand({3: 1987 + 600})      # 0.92 rad between two readings
    pair.wait(lambda: 'jumped' in pair.teleop_state[-1], 'held after the jump')
    pair.settle(0.5)
    assert abs(pair.last('follower')['elbow_flex']) < 0.1, 'the jump was passed on'
    assert 'Traceback' not in pair.teleop.output()


def test_an_estop_of_the_follower_bridge_holds_teleop_and_blocks_resume(pair):
    # Should 4: the follower e-stopped through its own service, not the topic.
    pair.hand({3: 1987})            # the leader back where the follower held
    pair.settle(0.3)
    pair.resume()
    pair.call('/follower/servo_bridge/estop')
    pair.wait(lambda: 'the follower is estop: e-stop service' in pair.teleop_state[-1],
              'teleop held by the follower e-stop')
    refused = pair.call('/follower/teleop/resume')
    assert not refused.success and 'the follower is estop' in refused.message


def test_teleop_refuses_to_start_when_the_follower_bridge_drives_other_joints(pair):
    # M2: a tip short of the gripper gives teleop five joints, the bridge has six.
    other = pair.group.start_node('arm_ik', 'teleop', namespace='/other', params={
        'robot_description': pair.urdf, 'tip_frame': 'gripper_link',
        'follower_ns': '/follower', 'leader_calibration': str(LEADER_CAL),
        'follower_calibration': str(FOLLOWER_CAL)})
    deadline = time.monotonic() + 60.0
    while other.alive() and time.monotonic() < deadline:
        pair.settle(0.2)
    assert not other.alive()
    output = other.output()
    assert "the follower bridge's controller joints ['shoulder_pan'" in output
    assert "are not teleop's ['shoulder_pan'" in output and 'Traceback' not in output
