"""Benchmark of what idle nodes cost: CPU per node of an arm's pipeline while nothing moves,
beside the trajectory executor's joint_states (100 Hz as shipped).

Also, in the same run, two bare subscriber processes on a 100 Hz JointState stream: one with
rclpy's own subscription on a SingleThreadedExecutor (the peer: what a node pays per message
for its executor's wake-up), one with arm_ik's BatchedSubscription (messages taken on a thread
of their own, handed to the executor every 50 ms). Their ratio is the saving per message;
the pipeline's figures are what the nodes pay in all.

CPU is read from /proc (user + system time of each process) over ``--seconds`` once every
node has run ``--settle`` seconds. Prints a table and merges the figures under the top-level
key ``idle_nodes`` of ``bench_results.json`` (one sub-key per ROS distro).

Run from a built workspace: ``python benchmarks/bench_idle.py [--quick] [--arm six_axis]``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time

from results_file import detect_distro, merge_section

HERE = Path(__file__).resolve().parent
RATE = 100.0         # Hz of the bare subscribers' stream


def cpu_seconds(pid: int) -> float:
    with open(f'/proc/{pid}/stat', encoding='ascii') as stat:
        fields = stat.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def worker(mode: str) -> None:
    """A bare node: 'source' publishes JointState at RATE; 'stock' and 'batched' take it."""
    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState
    rclpy.init()
    node = rclpy.create_node(f'idle_{mode}')
    if mode == 'source':
        publisher = node.create_publisher(JointState, 'joint_states', qos_profile_sensor_data)
        names = [f'joint_{index}' for index in range(6)]
        node.create_timer(1.0 / RATE, lambda: publisher.publish(
            JointState(name=names, position=[0.1] * 6)))
    elif mode == 'stock':
        node.create_subscription(JointState, 'joint_states', lambda message: None,
                                 qos_profile_sensor_data)
    else:
        from arm_ik.nodes.common import subscribe_joint_states
        node.batched = subscribe_joint_states(node, lambda message: None)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        while rclpy.ok():
            executor.spin_once(timeout_sec=0.5)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass        # terminated by the benchmark


def measure(processes: dict[str, int], settle: float, seconds: float) -> dict[str, float]:
    """% of one core per process over ``seconds``, after ``settle``."""
    time.sleep(settle)
    before = {name: cpu_seconds(pid) for name, pid in processes.items()}
    time.sleep(seconds)
    return {name: round(100.0 * (cpu_seconds(pid) - before[name]) / seconds, 1)
            for name, pid in processes.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='10 s of measuring, not 30')
    parser.add_argument('--arm', default='six_axis', help='bundled arm of the pipeline')
    parser.add_argument('--settle', type=float, default=15.0, help='s before measuring')
    parser.add_argument('--seconds', type=float, help='s of measuring')
    parser.add_argument('--worker', choices=('source', 'stock', 'batched'),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return 0
    seconds = args.seconds or (10.0 if args.quick else 30.0)

    from arm_bringup.pipeline import expand_description, LaunchOptions, pipeline_nodes
    from arm_bringup.process_group import ProcessGroup
    from arm_testing.ros_harness import claimed_domain

    figures: dict[str, dict[str, float]] = {}
    with claimed_domain() as claim, ProcessGroup(env=claim.environment()) as group, \
            tempfile.TemporaryDirectory() as scratch:
        started = {}
        for node in pipeline_nodes(args.arm, expand_description(args.arm), LaunchOptions()):
            started[node.executable] = group.start_node(
                'arm_ik', node.executable, namespace=node.namespace,
                params_files=node.write_params(scratch))
        pipeline = measure({name: process.popen.pid for name, process in started.items()},
                           args.settle, seconds)
        dead = [name for name, process in started.items() if not process.alive()]
        if dead:
            print(f'nodes that died: {", ".join(dead)}', file=sys.stderr)
            return 1
        figures['pipeline'] = pipeline
    with claimed_domain() as claim:
        env = {**os.environ, **claim.environment()}
        bare = {mode: subprocess.Popen([sys.executable, __file__, '--worker', mode], env=env)
                for mode in ('source', 'stock', 'batched')}
        try:
            figures['bare_subscriber'] = measure(
                {mode: process.pid for mode, process in bare.items()}, 5.0, seconds)
        finally:
            for process in bare.values():
                process.terminate()
                process.wait(timeout=10)

    print(f'\nIdle CPU, % of one core over {seconds:.0f} s ({args.arm} pipeline, '
          f"joint_states at the executor's 100 Hz):")
    for name, share in figures['pipeline'].items():
        print(f'  {name:22s} {share:5.1f} %')
    print(f'  {"all nodes":22s} {sum(figures["pipeline"].values()):5.1f} %')
    bare_figures = figures['bare_subscriber']
    print(f'\nA bare subscriber of a {RATE:.0f} Hz JointState stream:')
    print(f'  rclpy subscription (peer)  {bare_figures["stock"]:5.1f} %')
    print(f'  BatchedSubscription        {bare_figures["batched"]:5.1f} %')
    if bare_figures['batched'] > 0:
        ratio = bare_figures['stock'] / bare_figures['batched']
        print(f'  ratio peer / batched       {ratio:5.1f}')
    distro, _ = detect_distro()
    merge_section(HERE.parent / 'bench_results.json', 'idle_nodes',
                  {'arm': args.arm, 'seconds': seconds, **figures}, distro)
    return 0


if __name__ == '__main__':
    sys.exit(main())
