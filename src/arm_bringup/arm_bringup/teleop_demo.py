"""``make demo SERVOS=sim TELEOP=1``: leader-follower teleoperation of two SO-101 arms on two
simulated servo buses, recorded to the MCAP.

Starts two ``servo_sim`` buses (the leader homed off mid-travel, as its calibration says; the
follower holding a stale goal), ``servo_bridge`` in the leader role (reads only, 250 Hz) and
as the follower, the ``teleop`` node, and ``mcap_recorder`` (/leader/ and /follower/ topics,
/rosout). Each cycle: enable the follower, resume teleop, a scripted hand moves all six
leader joints (the follower tracks them, the handle's range mapped onto the jaw's), the
leader unplugged (the follower holds, and stays held after the leader is back until a
resume, refused while the leader is far from the follower), a leader jump faster than a
hand (held again, nothing passed on), resume, home.
Exit status 0 when every step had its expected outcome.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
import tempfile
import time

from arm_bringup.driver import StepResult
from arm_bringup.process_group import ProcessGroup
from arm_bringup.report import print_recording, Summary
from arm_bringup.servo_demo import _so101_urdf

TIP = 'moving_jaw_so101_v1_link'     # the gripper on the follower's chain
TICKS_PER_RAD = 651.898647
LEADER_HOME = (2011, 2093, 1987, 2070, 2048, 2100)   # ticks at 0 rad (so101_leader.yaml)
LEADER_DIRECTION = (1, 1, 1, -1, 1, 1)
# The scripted hand: amplitude (rad) and period (s) per joint; the handle 0 … 0.9 rad.
HAND = ((0.5, 4.0), (0.35, 5.0), (0.4, 3.5), (0.4, 4.5), (0.8, 6.0), (0.45, 3.0))
JOINTS = ('shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex', 'wrist_roll', 'gripper')
GRIP_FOLLOWER, GRIP_LEADER = (-0.111981, 1.74533), (0.0, 0.9)


def _calibrations() -> tuple[Path, Path]:
    from ament_index_python.packages import get_package_share_directory
    share = Path(get_package_share_directory('arm_servos')) / 'calibration'
    return share / 'so101_leader.yaml', share / 'so101.yaml'


def hand_angles(t: float) -> tuple[float, ...]:
    """The scripted hand's leader angles at ``t`` s (rad; the handle from its closed end)."""
    angles = [a * math.sin(2 * math.pi * t / p) for a, p in HAND[:5]]
    amplitude, period = HAND[5]
    angles.append(amplitude * (1 - math.cos(2 * math.pi * t / period)))
    return tuple(angles)


def hand_script(duration: float = 6.0, update: float = 0.02) -> list[tuple[float, ...]]:
    """The scripted hand's angles, one update every ``update`` s of its script for
    ``duration`` s. The script advances by one update's time per update, not by the wall
    clock: a demo process stalled 100 ms by a loaded machine moved the leader 0.074 rad in one
    step, which the teleop rightly held as a jump (0.05 rad + 8 rad/s over the leader's 2.5 ms
    between readings); a stall now slows the hand down instead."""
    return [hand_angles(k * update) for k in range(1, round(duration / update) + 1)]


def hand_ticks(angles) -> dict[int, int]:
    return {i + 1: round(home + d * a * TICKS_PER_RAD) for i, (home, d, a) in
            enumerate(zip(LEADER_HOME, LEADER_DIRECTION, angles))}


def expected_follower(angles) -> tuple[float, ...]:
    grip = (angles[5] - GRIP_LEADER[0]) / (GRIP_LEADER[1] - GRIP_LEADER[0])
    return tuple(angles[:5]) + (GRIP_FOLLOWER[0] + grip * (GRIP_FOLLOWER[1] -
                                                            GRIP_FOLLOWER[0]),)


class Watcher:
    """The demo's own node: both arms' joint_states, teleop's state, the services it calls."""

    def __init__(self) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node('teleop_demo', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.last: dict[str, dict[str, float]] = {}
        self.counts = {'leader': 0, 'follower': 0}
        for arm in ('leader', 'follower'):
            self.node.create_subscription(JointState, f'/{arm}/joint_states',
                                          lambda m, arm=arm: self._state(arm, m), 50)
        self.state = ''
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.node.create_subscription(String, '/follower/teleop/state',
                                      lambda m: setattr(self, 'state', m.data), latched)
        self._clients: dict[str, object] = {}

    def _state(self, arm: str, message) -> None:
        self.last[arm] = dict(zip(message.name, message.position))
        self.counts[arm] += 1

    def spin_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)

    def wait(self, condition, seconds: float) -> bool:
        end = time.monotonic() + seconds
        while not condition():
            if time.monotonic() > end:
                return False
            self.executor.spin_once(timeout_sec=0.02)
        return True

    def call(self, service: str) -> tuple[bool, str]:
        from std_srvs.srv import Trigger

        from arm_ik.middleware import call_until_answered
        client = self._clients.get(service)
        if client is None:
            client = self._clients[service] = self.node.create_client(Trigger, service)
        if not self.wait(client.service_is_ready, 30.0):
            raise TimeoutError(f'{service} is not there')
        reply = call_until_answered(client, Trigger.Request(),
                                    lambda: self.executor.spin_once(timeout_sec=0.05), 30.0)
        if reply is None:
            raise TimeoutError(f'{service} did not answer')
        return reply.success, reply.message

    def recording(self, topics: list[str], seconds: float) -> bool:
        def subscribed() -> bool:
            try:
                names = {t for t, _ in self.node.get_subscriber_names_and_types_by_node(
                    'mcap_recorder', '/')}
            except Exception:  # noqa: BLE001 - the recorder is not discovered yet
                return False
            return set(topics) <= names
        return self.wait(subscribed, seconds)

    def close(self) -> None:
        import rclpy
        self.node.destroy_node()
        self.executor.shutdown()
        rclpy.try_shutdown(context=self.context)


def run(cycles: int, mcap: Path | None) -> int:
    """Run the teleop demo for ``cycles`` cycles (0: until Ctrl-C); exit status."""
    from arm_servos.sim.process import SimProcess
    summary = Summary()
    log_dir = tempfile.mkdtemp(prefix='arm_teleop_demo_')
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    try:
        urdf = _so101_urdf()
        leader_cal, follower_cal = _calibrations()
    except (FileNotFoundError, LookupError) as error:
        print(f'demo: {error}', flush=True)
        return 2
    print(f'demo: SO-101 leader and follower on two simulated Feetech buses, recording to '
          f'{mcap or "nothing"}; node logs in {log_dir}', flush=True)
    watcher = None
    common = {'urdf_file': str(urdf), 'tip_frame': TIP, 'reply_timeout': 0.03,
              'silent_cycles': 25}
    try:
        with SimProcess(Path(log_dir) / 'leader_bus', 'feetech',
                        position=','.join(map(str, LEADER_HOME))) as leader_sim, \
                SimProcess(Path(log_dir) / 'follower_bus', 'feetech', goal='2600') as \
                follower_sim, ProcessGroup(log_dir=log_dir) as recorder, \
                ProcessGroup(log_dir=log_dir) as group:
            watcher = Watcher()
            if mcap is not None:
                recorder.start_node('arm_bringup', 'mcap_recorder', params={
                    'output': str(mcap), 'prefixes': ['/leader/', '/follower/'],
                    'topics': ['/rosout']})
            group.start_node('arm_ik', 'servo_bridge', namespace='/leader', params={
                **common, 'calibration_file': str(leader_cal),
                'port': str(leader_sim.link), 'role': 'leader', 'rate': 250.0})
            group.start_node('arm_ik', 'servo_bridge', namespace='/follower', params={
                **common, 'calibration_file': str(follower_cal),
                'port': str(follower_sim.link),
                # The first motion after enable catches up with the leader at this speed
                # (0.3 rad/s by default: slower than the hand, it would never catch up).
                'approach_velocity': 1.5})
            teleop = group.start_node('arm_ik', 'teleop', namespace='/follower', params={
                'urdf_file': str(urdf), 'tip_frame': TIP,
                'leader_calibration': str(leader_cal), 'follower_calibration': str(follower_cal),
                # The simulated buses share two cores with everything else here.
                'silent_timeout': 0.3, 'follower_timeout': 1.0})
            if mcap is not None and not watcher.recording(
                    ['/leader/joint_states', '/follower/joint_states'], 30.0):
                print('demo: note: the recorder has not subscribed to both arms yet', flush=True)
            try:
                while cycles <= 0 or summary.cycles < cycles:
                    print(f'cycle {summary.cycles + 1}:', flush=True)
                    _cycle(watcher, leader_sim, summary)
                    summary.cycles += 1
                    dead = [p for p in group.processes if not p.alive()]
                    if dead:
                        summary.record(StepResult(False, 'a node died:\n' +
                                                  dead[0].output()[-1500:]))
                        break
            except TimeoutError as error:
                summary.record(StepResult(False, f'{error}; the end of the teleop log:\n'
                                          f'{teleop.output()[-1500:]}'))
            watcher.close()
            watcher = None
    except KeyboardInterrupt:
        print('demo: interrupted; every process stopped', flush=True)
    finally:
        if watcher is not None:
            watcher.close()
    if mcap is not None and mcap.exists():
        print_recording(mcap, '/follower')
    print(summary.line(), flush=True)
    return 0 if summary.steps_failed == 0 else 1


def _step(summary: Summary, ok: bool, text: str) -> None:
    summary.record(StepResult(ok, text))


def _resume(watcher: Watcher) -> tuple[bool, str]:
    """~/resume, again while refused for want of a fresh leader reading (at start-up teleop
    may not have discovered the leader yet; a busy machine may hold a process a while)."""
    deadline = time.monotonic() + 20.0
    while True:
        ok, message = watcher.call('/follower/teleop/resume')
        if ok or time.monotonic() > deadline:
            return ok, message
        watcher.spin_for(0.3)


def _error(watcher: Watcher, angles) -> float:
    follower = watcher.last.get('follower', {})
    return max(abs(follower.get(j, math.inf) - e)
               for j, e in zip(JOINTS, expected_follower(angles)))


def _cycle(watcher: Watcher, leader_sim, summary: Summary) -> None:
    leader_sim.command('hand ' + ' '.join(f'{i}:{t}' for i, t in
                                           hand_ticks(hand_angles(0.0)).items()))
    ok, message = watcher.call('/follower/servo_bridge/enable')
    _step(summary, ok, f'enable the follower: {message}')
    watcher.wait(lambda: watcher.counts['leader'] > 10, 10.0)
    watcher.spin_for(0.3)
    ok, message = _resume(watcher)
    _step(summary, ok, f'resume teleop: {message}')
    # The scripted hand, 50 updates a second for 6 s; the follower's error after each update
    # (it lags by its rate limit and the buses' cycles).
    errors = []
    for angles in hand_script(6.0, 0.02):
        leader_sim.command('hand ' + ' '.join(f'{i}:{v}' for i, v in
                                               hand_ticks(angles).items()))
        watcher.spin_for(0.02)
        errors.append(_error(watcher, angles))
    settled = hand_angles(6.0)
    leader_sim.command('hand ' + ' '.join(f'{i}:{v}' for i, v in
                                           hand_ticks(settled).items()))
    watcher.wait(lambda: _error(watcher, settled) < 0.03, 5.0)
    error = _error(watcher, settled)
    _step(summary, error < 0.03 and watcher.state == 'following',
          f'a hand moves the leader for 6 s: the follower tracks it (largest error while '
          f'moving {max(errors):.3f} rad, median {sorted(errors)[len(errors) // 2]:.3f}; '
          f'{error:.3f} rad once the hand stops; gripper range mapped)')
    leader_sim.command('vanish')
    held = watcher.wait(lambda: watcher.state.startswith('held'), 5.0)
    watcher.spin_for(0.3)
    before = dict(watcher.last['follower'])
    leader_sim.command('replug')
    leader_sim.command('hand ' + ' '.join(f'{i}:{v}' for i, v in
                                           hand_ticks(hand_angles(0.0)).items()))
    count = watcher.counts['leader']
    watcher.wait(lambda: watcher.counts['leader'] > count + 50, 10.0)
    after = watcher.last['follower']
    still = max(abs(after[j] - before[j]) for j in JOINTS)
    _step(summary, held and still < 0.02 and watcher.state.startswith('held'),
          f'leader unplugged: {watcher.state}; the follower held (moved {still:.3f} rad) and '
          'stays held once the leader is back')
    # The leader came back at its home pose, up to 0.4 rad from where the follower held:
    # resume is refused (naming the joints) until the hand brings it to the follower.
    far_ok, far = watcher.call('/follower/teleop/resume')
    leader_sim.command('hand ' + ' '.join(f'{i}:{v}' for i, v in
                                           hand_ticks(settled).items()))
    watcher.spin_for(0.3)
    ok, message = _resume(watcher)
    back = watcher.wait(lambda: _error(watcher, settled) < 0.03, 10.0)
    _step(summary, not far_ok and 'from the follower at' in far and ok and back,
          f'resume refused while the leader is far ({far}); once it is brought to the '
          f'follower: {message}')
    jumped = dict(hand_ticks(settled))
    jumped[3] += 600
    leader_sim.command('hand ' + ' '.join(f'{i}:{v}' for i, v in jumped.items()))
    held = watcher.wait(lambda: 'jumped' in watcher.state, 5.0)
    watcher.spin_for(0.3)
    elbow = watcher.last['follower']['elbow_flex']
    _step(summary, held and abs(elbow - settled[2]) < 0.05, f'a leader jump: {watcher.state}; '
          f'the follower held (elbow at {elbow:+.3f} rad)')
    leader_sim.command('hand ' + ' '.join(f'{i}:{v}' for i, v in
                                           hand_ticks(settled).items()))
    watcher.spin_for(0.3)
    ok, message = _resume(watcher)
    for k in range(1, 51):     # home: the hand brings the leader back to zero, slowly
        home_angles = tuple(a * (1 - k / 50) for a in settled)
        leader_sim.command('hand ' + ' '.join(f'{i}:{v}' for i, v in
                                               hand_ticks(home_angles).items()))
        watcher.spin_for(0.02)
    home = watcher.wait(lambda: _error(watcher, hand_angles(0.0)) < 0.03, 10.0)
    _step(summary, ok and home, f'resume: {message}; the hand brings both arms home')
