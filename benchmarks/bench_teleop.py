"""Benchmark of leader-follower teleoperation on two simulated buses (issue 38.2).

Two ``servo_sim`` buses (6 STS3215 each, 1 Mbaud), ``servo_bridge`` in the leader role at
250 Hz and as the follower, and the ``teleop`` node, each in its own process as in the demo.
Measured:

1. latency from a leader movement to the follower's goal on the bus: the benchmark moves one
   leader servo by a few ticks (``hand``, at a time.monotonic() taken before the command is
   sent to the leader's simulated bus), then asks the follower's simulated bus when the first
   goal for that servo differing from the one before reached it (``changed``); CLOCK_MONOTONIC
   is one clock for every process. The path: the leader's next sync read, its joint_states
   over DDS, teleop's mapping and rules, the follower's ~/commands over DDS, its write on
   command, the write's bytes. p50 / p99 / max over the samples;
2. the leader's joint_states per second received over DDS (6 servos; the target is 200+).

Results merge into ``bench_results.json`` under ``teleop``.
Run from a built workspace: ``python benchmarks/bench_teleop.py [--quick]``.
"""

from __future__ import annotations

import argparse
import datetime
import os
from pathlib import Path
import sys
import tempfile
import time
from typing import Any

import numpy as np
from results_file import detect_distro, merge_section

REPO = Path(__file__).resolve().parents[1]
CALIBRATION = REPO / 'src' / 'arm_servos' / 'calibration'
LEADER_HOME = '2011,2093,1987,2070,2048,2100'
TIP = 'moving_jaw_so101_v1_link'
TICKS_PER_RAD = 651.898647


def measure(samples: int, rate_seconds: float) -> dict[str, Any]:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    from std_srvs.srv import Trigger

    from arm_bringup.process_group import ProcessGroup
    from arm_servos.sim.process import SimProcess
    from arm_testing.real_arms import REAL_ARMS
    from arm_testing.ros_harness import call_service, DomainClaim, wait_for
    folder = Path(tempfile.mkdtemp(prefix='bench_teleop_'))
    urdf = REAL_ARMS['so101'].urdf()
    domain = DomainClaim()
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain.domain_id)
    node = rclpy.create_node('bench_teleop', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    stamps: list[float] = []
    readings: list[tuple[float, float]] = []     # (the leader's read, monotonic; its pan)
    wall_minus_monotonic = time.time() - time.monotonic()   # joint_states stamps: wall time

    def leader_state(message: Any) -> None:     # sensor_msgs/JointState
        stamps.append(time.monotonic())
        stamp = message.header.stamp.sec + message.header.stamp.nanosec * 1e-9
        readings.append((stamp - wall_minus_monotonic, message.position[0]))
    node.create_subscription(JointState, '/leader/joint_states', leader_state, 1000)
    state: list[str] = ['']
    node.create_subscription(String, '/follower/teleop/state',
                             lambda m: state.__setitem__(0, m.data),
                             QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                                        durability=DurabilityPolicy.TRANSIENT_LOCAL))

    def spin() -> None:
        executor.spin_once(timeout_sec=0.01)

    def call(name: str) -> str:
        client = node.create_client(Trigger, name)
        wait_for(client.service_is_ready, 30.0, spin, name)
        reply = call_service(client, Trigger.Request(), spin, 10.0)
        return '' if reply.success else reply.message

    common = {'robot_description': urdf, 'tip_frame': TIP, 'reply_timeout': 0.03,
              'silent_cycles': 25}
    leader_cal, follower_cal = CALIBRATION / 'so101_leader.yaml', CALIBRATION / 'so101.yaml'
    latencies: list[float] = []
    leader_part: list[float] = []
    follower_part: list[float] = []
    missed = holds = 0
    try:
        with SimProcess(folder / 'leader', 'feetech', position=LEADER_HOME) as leader_sim, \
                SimProcess(folder / 'follower', 'feetech') as follower_sim, \
                ProcessGroup(env=domain.environment()) as group:
            group.start_node('arm_ik', 'servo_bridge', namespace='/leader', params={
                **common, 'calibration_file': str(leader_cal), 'port': str(leader_sim.link),
                'role': 'leader', 'rate': 250.0})
            group.start_node('arm_ik', 'servo_bridge', namespace='/follower', params={
                **common, 'calibration_file': str(follower_cal),
                'port': str(follower_sim.link), 'approach_velocity': 10.0})
            group.start_node('arm_ik', 'teleop', namespace='/follower', params={
                'robot_description': urdf, 'tip_frame': TIP,
                'leader_calibration': str(leader_cal),
                'follower_calibration': str(follower_cal), 'silent_timeout': 0.5})
            wait_for(lambda: len(stamps) > 100, 60.0, spin, 'leader joint_states')
            stamps.clear()
            end = time.monotonic() + rate_seconds
            while time.monotonic() < end:
                spin()
            leader_rate = len([t for t in stamps if t <= end]) / rate_seconds
            refusal = call('/follower/servo_bridge/enable')
            if refusal:
                raise RuntimeError(f'follower enable refused: {refusal}')
            position = 2011
            for sample in range(samples):
                if state[0] != 'following':
                    holds += state[0].startswith('held')
                    call('/follower/teleop/resume')
                    wait_for(lambda: state[0] == 'following', 10.0, spin, 'following')
                    time.sleep(0.2)
                position += 8 if sample % 2 == 0 else -8     # 0.012 rad: a hand's step
                sent = time.monotonic()
                leader_sim.command(f'hand 1:{position}')
                deadline = sent + 1.0
                answer = 'none'
                while answer == 'none' and time.monotonic() < deadline:
                    time.sleep(0.001)
                    answer = follower_sim.command(f'changed 1 {sent:.6f}')
                end = time.monotonic() + 0.06       # the follower reaches it; DDS settles
                while time.monotonic() < end:
                    spin()
                if answer == 'none':
                    missed += 1
                    continue
                on_bus = float(answer.split()[0])
                latencies.append(on_bus - sent)
                # The split: the leader's read that first saw the move (its stamp).
                angle = (position - 2011) / TICKS_PER_RAD
                read = next((t for t, pan in readings if t >= sent - 0.001 and
                             abs(pan - angle) < 1e-6), None)
                if read is not None:
                    leader_part.append(read - sent)
                    follower_part.append(on_bus - read)
                readings.clear()
    finally:
        node.destroy_node()
        executor.shutdown()
        rclpy.shutdown(context=context)
        domain.release()
    def percentiles(values: list[float]) -> dict[str, float]:
        array = np.array(values or [np.nan]) * 1e3
        return {'p50': float(np.percentile(array, 50)), 'p99': float(np.percentile(array, 99)),
                'max': float(np.max(array))}
    return {'leader_joint_states_hz': leader_rate, 'latency_ms': percentiles(latencies),
            # From the move to the leader's read that saw it (the leader's bus cycle), and
            # from that read to the follower's goal on its bus (the leader's publish, DDS,
            # teleop, DDS, the follower bridge's write).
            'leader_read_ms': percentiles(leader_part),
            'read_to_follower_bus_ms': percentiles(follower_part),
            'samples': len(latencies), 'missed': missed, 'holds': holds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='fewer samples, for smoke runs')
    parser.add_argument('--output', type=Path, default=REPO / 'bench_results.json')
    args = parser.parse_args(argv)
    figures = measure(60 if args.quick else 300, 2.0 if args.quick else 5.0)
    section = {'date': datetime.date.today().isoformat(), 'cpu_count': os.cpu_count(),
               **figures}
    latency = figures['latency_ms']
    print(f'leader joint_states over DDS: {figures["leader_joint_states_hz"]:.0f} Hz '
          '(leader bridge at 250 Hz, 6 servos)')
    print(f'leader movement → follower goal on the bus: p50 {latency["p50"]:.2f} ms, '
          f'p99 {latency["p99"]:.2f} ms, max {latency["max"]:.2f} ms over '
          f'{figures["samples"]} movements ({figures["missed"]} never reached the bus within '
          f'1 s, {figures["holds"]} holds resumed)')
    for key, words in (('leader_read_ms', 'move → the leader read that saw it'),
                       ('read_to_follower_bus_ms', "that read → the follower's bus (DDS, "
                                                   'teleop, DDS, write)')):
        part = figures[key]
        print(f'  of which {words}: p50 {part["p50"]:.2f} ms, p99 {part["p99"]:.2f} ms')
    distro, _ = detect_distro()
    merge_section(args.output, 'teleop', section, distro)
    print(f'\nmerged into {args.output} under teleop/{distro}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
