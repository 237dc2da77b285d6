"""Benchmark of the servo bridge on the simulated bus: 6 servos at 1 Mbaud, both protocols.

The simulated bus (arm_servos.sim, its own process on a pty) answers when the bytes would have
crossed a real 1 Mbaud wire, so the figures include the wire time; the bridge talks to it
through the SDKs' PortHandler exactly as to a USB adapter.

1. the bus cycle (sync read of every servo, the safety rules, sync write of the goals,
   ``arm_servos.bridge.BridgeCore``) run back to back: cycles per second, beside the
   theoretical limit of the wire from the packet sizes (baud / 10 bits / bytes per cycle);
2. the node's own bus loop (``arm_servos.runner.BridgeRunner``) at 100 Hz with a command
   stream: command-to-bus latency (from ``BridgeRunner.command`` to the end of the sync write
   that carries it, plus the write's own wire time; a command is written at once, between
   two cycles, not at the next), p50 / p99, and loop jitter (each cycle's interval minus the
   period); beside it the peer in the same run: each command waiting for the next cycle;
3. both again with faults injected all along: one lost reply and one corrupt reply every
   0.1 s (each retried within its cycle);
4. where a free-running cycle's time goes: the wire, the bridge's CPU (SDK + pyserial, and
   arm_servos, from cProfile), the simulated bus's CPU, and waiting to be scheduled; beside it
   the same with the simulated bus writing each reply of a sync read when due (the peer);
5. the ``servo_bridge`` node itself (rate 100 and 250 Hz): joint_states messages per second
   received over DDS.

Results merge into ``bench_results.json`` under ``servos``.
Run from a built workspace: ``python benchmarks/bench_servos.py [--quick]``.
"""

from __future__ import annotations

import argparse
import bisect
import cProfile
import datetime
import math
import os
from pathlib import Path
import pstats
import sys
import tempfile
import threading
import time
from typing import Any, TYPE_CHECKING

import numpy as np
from results_file import detect_distro, merge_section

if TYPE_CHECKING:
    from arm_servos.bridge import BridgeCore, JointReading
    from arm_servos.runner import BridgeRunner
    from arm_servos.sim.process import SimProcess

REPO = Path(__file__).resolve().parents[1]
IDS = (1, 2, 3, 4, 5, 6)
BAUD = 1_000_000
PACED_RATE = 100.0


def _core(protocol: str, link: str) -> BridgeCore:
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

    def __init__(self, sim: SimProcess, every: float = 0.1) -> None:
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


def _enabled(core: BridgeCore) -> None:
    """Enable again after a fault (a stretch of lost replies) so every run moves the arm."""
    for _ in range(50):
        if core.safety.mode == 'enabled':
            return
        core.cycle(time.monotonic())
        core.safety.enable(time.monotonic())


def free_running(core: BridgeCore, seconds: float) -> dict[str, Any]:
    _enabled(core)
    cycles, start = 0, time.monotonic()
    while time.monotonic() - start < seconds:
        core.cycle(time.monotonic())
        cycles += 1
    return {'rate_hz': cycles / (time.monotonic() - start), 'cycles': cycles}


def _runner(core: BridgeCore) -> BridgeRunner:
    """The servo_bridge node's own bus loop around ``core`` (arm_servos.runner)."""
    from arm_kinematics.control.goal_rules import ControllerSettings, TrajectoryGoalRules
    from arm_servos.runner import BridgeRunner
    joints = core.calibration.names
    return BridgeRunner(core, TrajectoryGoalRules(ControllerSettings(joints)), joints,
                        PACED_RATE, time.monotonic, apply_wait=1.0)


def paced(core: BridgeCore, seconds: float, write_on_command: bool = True) -> dict[str, Any]:
    """The node's loop (BridgeRunner, PACED_RATE) with a command at a random moment of every
    cycle from another thread, as ~/commands arrive: command-to-bus latency from the call to
    the end of the first sync write that started after the rules took the command, plus that
    write's wire time; jitter: each cycle's interval minus the period."""
    _enabled(core)
    runner = _runner(core)
    runner.write_on_command = write_on_command
    rng = np.random.default_rng(7)
    period = 1.0 / PACED_RATE
    write_wire = core.bus.instruction_overhead + len(IDS) * (1 + core.bus.goal_length)
    wire = write_wire * 10.0 / BAUD
    writes: list[tuple[float, float]] = []
    starts: list[float] = []
    commands: list[tuple[float, float]] = []
    write_goals, cycle = core.bus.write_goals, runner.cycle

    def timed_write(goals: dict[int, int]) -> None:
        began = time.monotonic()
        write_goals(goals)
        writes.append((began, time.monotonic()))

    def timed_cycle(now: float) -> JointReading:
        starts.append(now)
        return cycle(now)

    accepted: list[float] = []
    safety_command = core.safety.command

    def timed_command(*args: Any, **kwargs: Any) -> Any:   # when the rules took it (locked)
        accepted.append(time.monotonic())
        return safety_command(*args, **kwargs)

    core.bus.write_goals, runner.cycle = timed_write, timed_cycle
    core.safety.command = timed_command
    stop = threading.Event()

    def commander() -> None:      # the ROS side: commands arrive at any moment
        target = 0.3
        while not stop.wait(period * rng.uniform(0.5, 1.5)):
            target = -target
            sent = time.monotonic()
            refusal, _ = runner.command([target] * len(IDS))
            if not refusal:
                commands.append((sent, accepted[-1]))

    thread = threading.Thread(target=commander, daemon=True)
    runner.start()
    thread.start()
    time.sleep(seconds)
    stop.set()
    thread.join()
    runner.stop(close_bus=False)       # the next stretch uses the same bus
    core.bus.write_goals = write_goals
    del core.safety.command        # the instance attribute: the class's method again
    write_starts = [w[0] for w in writes]
    latencies = []
    for sent, taken in commands:
        index = bisect.bisect_left(write_starts, taken)
        if index < len(writes):
            latencies.append(writes[index][1] - sent + wire)
    latency = np.array(latencies or [math.nan]) * 1e3
    late = np.abs(np.diff(starts) - period) * 1e3 if len(starts) > 2 else np.array([math.nan])
    return {'latency_ms': {'p50': float(np.percentile(latency, 50)),
                           'p99': float(np.percentile(latency, 99))},
            'jitter_ms': {'p50': float(np.percentile(late, 50)),
                          'p99': float(np.percentile(late, 99)), 'max': float(late.max())},
            'commands': len(latencies)}


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (Linux /proc)."""
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def where_time_goes(core: BridgeCore, sim: SimProcess, seconds: float) -> dict[str, Any]:
    """One free-running stretch, per cycle: the wire's share (from the packet sizes), the
    bridge's CPU (and in a profiled stretch, the shares of the SDK with pyserial and of
    arm_servos), the simulated bus's CPU, and the rest: waiting to be scheduled (both
    processes wake several times per cycle; on a busy machine each wake-up waits for a core)."""
    _enabled(core)
    cycles, cpu, sim_cpu = 0, time.process_time(), _cpu_seconds(sim.process.pid)
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        core.cycle(time.monotonic())
        cycles += 1
    wall = time.monotonic() - start
    cpu, sim_cpu = time.process_time() - cpu, _cpu_seconds(sim.process.pid) - sim_cpu
    profile = cProfile.Profile()
    profile.enable()
    profiled_start = time.monotonic()
    while time.monotonic() - profiled_start < min(seconds, 1.0):
        core.cycle(time.monotonic())
    profile.disable()
    shares = {'sdk_and_pyserial': 0.0, 'arm_servos': 0.0, 'waiting_in_select': 0.0,
              'other': 0.0}
    for (path, _, name), row in pstats.Stats(profile).stats.items():
        own = row[2]
        if 'select' in name and path == '~':
            shares['waiting_in_select'] += own
        elif 'scservo_sdk' in path or 'dynamixel_sdk' in path or '/serial/' in path or \
                path == '~':
            shares['sdk_and_pyserial'] += own
        elif 'arm_servos' in path:
            shares['arm_servos'] += own
        else:
            shares['other'] += own
    busy = sum(v for k, v in shares.items() if k != 'waiting_in_select') or 1.0
    per_cycle = wall / cycles * 1e3
    wire = core.bus.read_bytes_per_cycle() * 10.0 / BAUD * 1e3
    bridge = cpu / cycles * 1e3
    simulated = sim_cpu / cycles * 1e3
    return {'cycle_ms': per_cycle, 'wire_ms': wire, 'bridge_cpu_ms': bridge,
            'bridge_cpu_shares': {k: v / busy for k, v in shares.items()
                                  if k != 'waiting_in_select'},
            'sim_cpu_ms': simulated,
            'scheduling_ms': per_cycle - wire - bridge - simulated}


def bus_figures(protocol: str, seconds: float, return_delay: int = 0) -> dict[str, Any]:
    from arm_servos.bridge import theoretical_rate
    from arm_servos.sim.process import SimProcess
    link = Path(tempfile.mkdtemp(prefix='bench_servos_')) / 'bus'
    figures = {}
    # The peer, in the same run: the simulated bus writing each reply when it is due.
    delay = ['--return-delay', str(return_delay)]
    with SimProcess(link, protocol, per_reply=True, extra=delay) as sim:
        core = _core(protocol, str(link))
        figures['per_reply_sim'] = {'free_running': free_running(core, seconds),
                                    'time': where_time_goes(core, sim, seconds)}
        core.bus.close()
    with SimProcess(link, protocol, extra=delay) as sim:
        core = _core(protocol, str(link))
        bytes_per_cycle = core.bus.read_bytes_per_cycle()
        figures.update({'bytes_per_cycle': bytes_per_cycle,
                        'wire_limit_hz': theoretical_rate(bytes_per_cycle, BAUD),
                        'time': where_time_goes(core, sim, seconds)})
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
                # The peer, same run: each command waits for the next cycle's write.
                figures['clean_next_cycle_write'] = paced(core, seconds, write_on_command=False)
            after = core.bus.stats.as_dict()
            figures[label] = {'free_running': free, 'paced_100hz': timed,
                              **{k: after[k] - stats_before[k]
                                 for k in ('lost', 'checksum_errors', 'retries')},
                              'arm_stops': core.faults - faults_before}
        core.bus.close()
    return figures


def node_rates(seconds: float, return_delay: int = 0) -> dict[str, Any]:
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
            # The previous node's last messages (delivered now) are no sign this one is up.
            for _ in range(50):
                executor.spin_once(timeout_sec=0.01)
            stamps.clear()
            link = Path(tempfile.mkdtemp(prefix='bench_servos_')) / 'bus'
            with SimProcess(link, 'feetech', extra=['--return-delay', str(return_delay)]) as _, \
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
    parser.add_argument('--bus-only', action='store_true', help='leave out the node figures')
    parser.add_argument('--output', type=Path, default=REPO / 'bench_results.json')
    parser.add_argument('--return-delay', type=int, default=0,
                        help="the simulated servos' Return_Delay_Time, 2 us units (0, the "
                        'default: as LeRobot and servo_calibrate --return-delay 0 leave them; '
                        '10: 20 us, the figures before; 250: the factory)')
    args = parser.parse_args(argv)
    # As the servo_bridge node's main() does (arm_ik.nodes.servo_bridge): its bus thread and
    # the thread delivering commands hand the GIL over every 0.5 ms, not the default 5 ms.
    sys.setswitchinterval(0.0005)
    seconds = 1.0 if args.quick else 4.0
    section: dict = {'date': datetime.date.today().isoformat(), 'servos': len(IDS),
                     'baud': BAUD, 'cpu_count': os.cpu_count(),
                     'return_delay_us': 2 * args.return_delay}
    print(f'{"protocol":10s} {"run":7s} | {"cycles/s":>8s} {"wire max":>8s} {"share":>5s} | '
          f'{"cmd→bus p50":>11s} {"p99":>6s} | {"jitter p50":>10s} {"p99":>6s} {"max":>6s} | '
          f'{"lost":>4s} {"corrupt":>7s} {"retries":>7s} {"stops":>5s}')
    times = {}
    for protocol in ('feetech', 'dynamixel'):
        figures = bus_figures(protocol, seconds, args.return_delay)
        section[protocol] = figures
        times[protocol] = figures
        limit = figures['wire_limit_hz']
        for run in ('clean', 'faults'):
            row = figures[run]
            paced_row = row['paced_100hz']
            rate = row['free_running']['rate_hz']
            print(f'{protocol:10s} {run:7s} | {rate:8.0f} {limit:8.0f} {rate / limit:5.0%} | '
                  f'{paced_row["latency_ms"]["p50"]:9.2f}ms '
                  f'{paced_row["latency_ms"]["p99"]:6.2f} | '
                  f'{paced_row["jitter_ms"]["p50"]:8.2f}ms {paced_row["jitter_ms"]["p99"]:6.2f} '
                  f'{paced_row["jitter_ms"]["max"]:6.2f} | {row["lost"]:4d} '
                  f'{row["checksum_errors"]:7d} {row["retries"]:7d} {row["arm_stops"]:5d}')
        old = figures['clean_next_cycle_write']['latency_ms']
        print(f'{protocol:10s} peer    | {"":8s} {"":8s} {"":5s} | {old["p50"]:9.2f}ms '
              f'{old["p99"]:6.2f} | (a command waiting for the next cycle\'s write, same run)')
        peer = figures['per_reply_sim']['free_running']['rate_hz']
        print(f'{protocol:10s} peer    | {peer:8.0f} {limit:8.0f} {peer / limit:5.0%} | '
              '(the simulated bus writing each reply when due, same run)')
    print('\nwhere the time of a free-running cycle goes, ms per cycle (bridge CPU: SDK + '
          'pyserial / arm_servos shares; scheduling: the rest, waiting for a core):')
    for protocol, figures in times.items():
        for label, row in (('coalesced sim', figures['time']),
                           ('per-reply sim', figures['per_reply_sim']['time'])):
            shares = row['bridge_cpu_shares']
            print(f'{protocol:10s} {label:13s} | cycle {row["cycle_ms"]:5.2f} = wire '
                  f'{row["wire_ms"]:4.2f} + bridge CPU {row["bridge_cpu_ms"]:4.2f} '
                  f'({shares["sdk_and_pyserial"]:.0%} SDK+pyserial, '
                  f'{shares["arm_servos"]:.0%} arm_servos) + sim CPU {row["sim_cpu_ms"]:4.2f} '
                  f'+ scheduling {row["scheduling_ms"]:5.2f}')
    rates = {} if args.bus_only else node_rates(2.0 if args.quick else 5.0, args.return_delay)
    section['node_joint_states_hz'] = rates
    for rate, received in rates.items():
        print(f'servo_bridge rate {rate} Hz: {received:.1f} joint_states/s received over DDS')
    distro, _ = detect_distro()
    merge_section(args.output, 'servos', section, distro)
    print(f'\nmerged into {args.output} under servos/{distro}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
