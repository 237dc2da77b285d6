"""Benchmark of the servo bridge on the simulated bus: 6 servos at 1 Mbaud, both protocols.

The simulated bus (arm_servos.sim, its own process on a pty) answers when the bytes would have
crossed a real 1 Mbaud wire, so the figures include the wire time; the bridge talks to it
through the SDKs' PortHandler exactly as to a USB adapter.

1. the bus cycle (sync read of every servo, the safety rules, sync write of the goals,
   ``arm_servos.bridge.BridgeCore``) run back to back: cycles per second, beside the
   theoretical limit of the wire from the packet sizes (baud / 10 bits / bytes per cycle);
2. the same cycle paced at 100 Hz with a command stream: command-to-bus latency (from
   ``ServoSafety.command`` to the end of the sync write that carries it, plus the write's own
   wire time), p50 / p99, and loop jitter (cycle start minus its schedule), p50 / p99 / max;
3. both again with faults injected all along: one lost reply and one corrupt reply every
   0.1 s (each retried within its cycle);
4. the ``servo_bridge`` node itself (rate 100 and 250 Hz): joint_states messages per second
   received over DDS.

Results merge into ``bench_results.json`` under ``servos``.
Run from a built workspace: ``python benchmarks/bench_servos.py [--quick]``.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
from pathlib import Path
import sys
import tempfile
import threading
import time

import numpy as np
from results_file import detect_distro, merge_section

REPO = Path(__file__).resolve().parents[1]
IDS = (1, 2, 3, 4, 5, 6)
BAUD = 1_000_000
PACED_RATE = 100.0


def _core(protocol: str, link: str):
    from arm_servos.bridge import BridgeCore
    from arm_servos.calibration import Calibration, JointCalibration
    from arm_servos.drivers import DRIVERS
    from arm_servos.safety import SafetyConfig, ServoSafety
    tpr = 4096 / (2 * math.pi)
    joints = tuple(JointCalibration(f'j{i}', i, 'servo', tpr, 1, 2048, -2.0, 2.0) for i in IDS)
    bus = DRIVERS[protocol](link, IDS, baudrate=BAUD)
    bus.open()
    safety = ServoSafety(joints, {j.name: 6.0 for j in joints},
                         SafetyConfig(approach_velocity=6.0, silent_cycles=5))
    core = BridgeCore(bus, Calibration(protocol, BAUD, joints), safety)
    core.faults = 0
    read = core.read

    def counted(now: float) -> str:    # how often a run of losses stopped the arm
        fault = read(now)
        core.faults += bool(fault)
        return fault
    core.read = counted
    for _ in range(50):          # the first replies of a fresh pty may come late
        core.cycle(time.monotonic())
        if safety.enable(time.monotonic()).ok:
            break
    assert safety.mode == 'enabled', 'the simulated servos did not answer'
    return core


class Injector:
    """One lost and one corrupt reply every ``every`` seconds, from its own thread."""

    def __init__(self, sim, every: float = 0.1) -> None:
        self.sim, self.every = sim, every
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        servo = 0
        while not self.stop.wait(self.every):
            self.sim.command(f'lose {IDS[servo % 6]} 1')
            self.sim.command(f'corrupt {IDS[(servo + 3) % 6]} 1')
            servo += 1

    def __enter__(self) -> Injector:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()


def _enabled(core) -> None:
    """Enable again after a fault (a stretch of lost replies) so every run moves the arm."""
    for _ in range(50):
        if core.safety.mode == 'enabled':
            return
        core.cycle(time.monotonic())
        core.safety.enable(time.monotonic())


def free_running(core, seconds: float) -> dict:
    _enabled(core)
    cycles, start = 0, time.monotonic()
    while time.monotonic() - start < seconds:
        core.cycle(time.monotonic())
        cycles += 1
    return {'rate_hz': cycles / (time.monotonic() - start), 'cycles': cycles}


def paced(core, seconds: float, rate: float = PACED_RATE) -> dict:
    """The node's loop at ``rate`` with a new command at a random moment of every cycle."""
    _enabled(core)
    rng = np.random.default_rng(7)
    period = 1.0 / rate
    write_wire = core.bus.instruction_overhead + len(IDS) * (1 + core.bus.goal_length)
    wire = write_wire * 10.0 / BAUD
    latencies, jitter = [], []
    pending: list[float] = []
    lock = threading.Lock()
    stop = threading.Event()

    def commander() -> None:      # the ROS side: commands arrive at any moment
        target = 0.3
        while not stop.is_set():
            time.sleep(period * rng.uniform(0.5, 1.5))
            target = -target
            with lock:
                sent = time.monotonic()
                if core.safety.command({f'j{i}': target for i in IDS}, sent).ok:
                    pending.append(sent)

    thread = threading.Thread(target=commander, daemon=True)
    thread.start()
    start = next_cycle = time.monotonic()
    while time.monotonic() - start < seconds:
        began = time.monotonic()
        jitter.append(began - next_cycle)
        with lock:
            core.read(began)
            core.write(time.monotonic())
            written = time.monotonic()
            latencies += [written - t + wire for t in pending]
            pending.clear()
        next_cycle += period
        delay = next_cycle - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        elif delay < -period:
            next_cycle = time.monotonic()
    stop.set()
    thread.join()
    latency = np.array(latencies or [math.nan]) * 1e3
    late = np.abs(np.array(jitter)) * 1e3
    return {'latency_ms': {'p50': float(np.percentile(latency, 50)),
                           'p99': float(np.percentile(latency, 99))},
            'jitter_ms': {'p50': float(np.percentile(late, 50)),
                          'p99': float(np.percentile(late, 99)), 'max': float(late.max())},
            'commands': len(latencies)}


def bus_figures(protocol: str, seconds: float) -> dict:
    from arm_servos.bridge import theoretical_rate
    from arm_servos.sim.process import SimProcess
    link = Path(tempfile.mkdtemp(prefix='bench_servos_')) / 'bus'
    with SimProcess(link, protocol) as sim:
        core = _core(protocol, str(link))
        bytes_per_cycle = core.bus.read_bytes_per_cycle()
        figures = {'bytes_per_cycle': bytes_per_cycle,
                   'wire_limit_hz': theoretical_rate(bytes_per_cycle, BAUD)}
        for label, faults in (('clean', False), ('faults', True)):
            stats_before = dict(core.bus.stats.as_dict())
            faults_before = core.faults
            if faults:
                with Injector(sim):
                    free = free_running(core, seconds)
                    timed = paced(core, seconds)
            else:
                free = free_running(core, seconds)
                timed = paced(core, seconds)
            after = core.bus.stats.as_dict()
            figures[label] = {'free_running': free, 'paced_100hz': timed,
                              **{k: after[k] - stats_before[k]
                                 for k in ('lost', 'checksum_errors', 'retries')},
                              'arm_stops': core.faults - faults_before}
        core.bus.close()
    return figures


def node_rates(seconds: float) -> dict:
    """joint_states per second from the servo_bridge node at two configured rates."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    from arm_bringup.process_group import ProcessGroup
    from arm_servos.sim.process import SimProcess
    from arm_testing.real_arms import REAL_ARMS
    from arm_testing.ros_harness import DomainClaim
    calibration = REPO / 'src' / 'arm_servos' / 'calibration' / 'so101.yaml'
    rates = {}
    domain = DomainClaim()
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain.domain_id)
    node = rclpy.create_node('bench_servos', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    stamps: list[float] = []
    node.create_subscription(JointState, '/so101/joint_states',
                             lambda _: stamps.append(time.monotonic()), 1000)
    try:
        for rate in (100.0, 250.0):
            link = Path(tempfile.mkdtemp(prefix='bench_servos_')) / 'bus'
            with SimProcess(link, 'feetech') as _, \
                    ProcessGroup(env=domain.environment()) as group:
                bridge = group.start_node('arm_ik', 'servo_bridge', namespace='/so101', params={
                    'robot_description': REAL_ARMS['so101'].urdf(),
                    'calibration_file': str(calibration), 'port': str(link), 'rate': rate})
                deadline = time.monotonic() + 30.0
                while len(stamps) < 50 and time.monotonic() < deadline and bridge.alive():
                    executor.spin_once(timeout_sec=0.05)
                stamps.clear()
                end = time.monotonic() + seconds
                while time.monotonic() < end:
                    executor.spin_once(timeout_sec=0.01)
                received = [t for t in stamps if t <= end]
                rates[f'{rate:g}'] = len(received) / seconds if received else 0.0
    finally:
        node.destroy_node()
        executor.shutdown()
        rclpy.shutdown(context=context)
        domain.release()
    return rates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='shorter runs, for smoke tests')
    parser.add_argument('--output', type=Path, default=REPO / 'bench_results.json')
    args = parser.parse_args(argv)
    seconds = 1.0 if args.quick else 4.0
    section: dict = {'date': datetime.date.today().isoformat(), 'servos': len(IDS),
                     'baud': BAUD, 'cpu_count': os.cpu_count()}
    print(f'{"protocol":10s} {"run":7s} | {"cycles/s":>8s} {"wire max":>8s} | '
          f'{"cmd→bus p50":>11s} {"p99":>6s} | {"jitter p50":>10s} {"p99":>6s} {"max":>6s} | '
          f'{"lost":>4s} {"corrupt":>7s} {"retries":>7s} {"stops":>5s}')
    for protocol in ('feetech', 'dynamixel'):
        figures = bus_figures(protocol, seconds)
        section[protocol] = figures
        for run in ('clean', 'faults'):
            row = figures[run]
            paced_row = row['paced_100hz']
            print(f'{protocol:10s} {run:7s} | {row["free_running"]["rate_hz"]:8.0f} '
                  f'{figures["wire_limit_hz"]:8.0f} | '
                  f'{paced_row["latency_ms"]["p50"]:9.2f}ms '
                  f'{paced_row["latency_ms"]["p99"]:6.2f} | '
                  f'{paced_row["jitter_ms"]["p50"]:8.2f}ms {paced_row["jitter_ms"]["p99"]:6.2f} '
                  f'{paced_row["jitter_ms"]["max"]:6.2f} | {row["lost"]:4d} '
                  f'{row["checksum_errors"]:7d} {row["retries"]:7d} {row["arm_stops"]:5d}')
    rates = node_rates(2.0 if args.quick else 5.0)
    section['node_joint_states_hz'] = rates
    for rate, received in rates.items():
        print(f'servo_bridge rate {rate} Hz: {received:.1f} joint_states/s received over DDS')
    distro, _ = detect_distro()
    merge_section(args.output, 'servos', section, distro)
    print(f'\nmerged into {args.output} under servos/{distro}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
