"""Benchmark of the trajectory executor's publish timing while IK-heavy Cartesian moves run.

The executor (six_axis, ``output: forward_position``, speed_scale 1) runs in its own process
on a private ROS_DOMAIN_ID. This script sends MoveToTarget goals back to back: straight tool
lines (``min_jerk_cartesian``, full pose, DLS with IK at every sample) between two poses, so
the executor plans hundreds of IK solves per goal while the previous move's trajectory and
the next plan alternate for the whole window. A subscriber in a third process records every
``joint_states`` message: its header stamp (set by the executor at publish time) and its
arrival time.

- publish jitter: |Δstamp − 1/rate| between consecutive messages (p50, p99, max), the
  executor's own timing; goal p99 ≤ 2 ms at 100 Hz;
- receive jitter: |Δarrival − 1/rate| in the subscriber process (middleware and scheduling
  included; for reference, a plain rclpy publisher measured about 10 ms p99 here).

Rows, at 100 Hz and 250 Hz: the shipped configuration idle (no goals) and under load, then
under load with one choice undone each: no SCHED_FIFO priority for the control thread
(``realtime_priority: 0``), an rclpy timer in its own callback group instead of the thread
(``control_loop: timer``), planning in a thread of the executor's process
(``planning_process: false``); then, instead of goals, a live target stream (30 Hz round a
15 cm circle through the tool at home) followed with the exponential law (each IK answer and
the way there checked in the planning process, each follow step checked for collisions in
the control tick) and with the speed cap (each CCD step computed and checked in the tick).
Each row records the 1-minute load average of the machine, since other work on a 2-core
machine shows in every figure. ``--configs`` and ``--rates`` run a subset (it still replaces
the distro's ``motion`` section: use ``--output`` elsewhere for a partial run).
Merges the figures under the top-level key ``motion`` of ``bench_results.json`` (one
sub-key per ROS distro; other keys are kept).

Run from a built workspace: ``python benchmarks/bench_motion.py [--quick]``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
from pathlib import Path
import subprocess
import sys
import time
from typing import Any

from results_file import detect_distro, merge_section

REPO = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

ARM = 'six_axis'
NAMESPACE = f'/{ARM}'
GOAL_P99_MS = 2.0
# Two full poses, tool pointing down, 1.0 m apart: each line needs ~400 full-pose IK solves.
POSES = ((1.0, 0.6, 0.6), (1.2, -0.5, 1.0))
TOOL_DOWN = (0.0, 1.0, 0.0, 0.0)          # quaternion x, y, z, w: tool z along -Z
# The live target stream: 30 Hz round a 15 cm circle through the tool at home, 4 s a lap.
TARGET_RATE, TARGET_RADIUS, TARGET_LAP = 30.0, 0.15, 4.0


# ---------------------------------------------------------------------- subscriber process
def run_subscriber(spec: dict[str, Any]) -> dict[str, Any]:
    """Record (stamp, arrival) of joint_states from ``spec['start_at']`` for ``window`` s."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    rclpy.init()
    node = rclpy.create_node(f'bench_motion_listener_{os.getpid()}')
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    records: list[tuple[float, float]] = []
    start_at, stop_at = spec['start_at'], spec['start_at'] + spec['window']

    def on_state(message: JointState) -> None:
        now = time.time()
        if start_at <= now <= stop_at:
            records.append((message.header.stamp.sec + message.header.stamp.nanosec * 1e-9,
                            now))
    node.create_subscription(JointState, f'{NAMESPACE}/joint_states', on_state, 100)
    try:
        while time.time() < stop_at:
            executor.spin_once(timeout_sec=0.05)
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
    return {'records': records}


# ---------------------------------------------------------------------- load (targets)
def stream_targets(window: float) -> dict[str, Any]:
    """Publish a live target at TARGET_RATE for ``window`` s, round a circle through the
    tool at the arm's home (every target followed: each IK answer and the way there checked
    in the planning process, each follow step in the control tick)."""
    from geometry_msgs.msg import PointStamped
    import numpy as np
    import rclpy
    from rclpy.qos import qos_profile_sensor_data

    from arm_kinematics.description.bundled import home_from_config, load_arm_config, load_model

    model = load_model(ARM)
    centre = model.fk(np.asarray(home_from_config(model, load_arm_config(ARM))))[:3, 3]
    rclpy.init()
    node = rclpy.create_node('bench_motion_targets')
    publisher = node.create_publisher(PointStamped, f'{NAMESPACE}/target',
                                      qos_profile_sensor_data)
    sent = 0
    try:
        began = time.time()
        while time.time() < began + window:
            angle = 2.0 * math.pi * (time.time() - began) / TARGET_LAP
            message = PointStamped()
            message.point.x, message.point.y, message.point.z = (float(v) for v in centre + (
                TARGET_RADIUS * np.array([0.0, math.sin(angle), math.cos(angle) - 1.0])))
            publisher.publish(message)
            sent += 1
            time.sleep(1.0 / TARGET_RATE)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return {'goals': 0, 'succeeded': 0, 'ik_samples': 0, 'targets': sent, 'failures': []}


# ---------------------------------------------------------------------- load (goals)
def send_goals(window: float, load: bool) -> dict[str, Any]:
    """Send Cartesian goals back to back for ``window`` s; counts of goals and IK samples."""
    import rclpy
    from rclpy.action import ActionClient

    from arm_interfaces.action import MoveToTarget

    rclpy.init()
    node = rclpy.create_node('bench_motion_client')
    client = ActionClient(node, MoveToTarget, f'{NAMESPACE}/trajectory_executor/move_to_target')
    stats = {'goals': 0, 'succeeded': 0, 'ik_samples': 0, 'failures': []}
    try:
        if not client.wait_for_server(timeout_sec=60.0):
            raise RuntimeError('move_to_target not available')
        deadline = time.time() + window
        index = 0
        while load and time.time() < deadline:
            goal = MoveToTarget.Goal()
            pose = goal.target.pose
            pose.position.x, pose.position.y, pose.position.z = POSES[index % 2]
            (pose.orientation.x, pose.orientation.y, pose.orientation.z,
             pose.orientation.w) = TOOL_DOWN
            goal.goal_type = MoveToTarget.Goal.GOAL_FULL_POSE
            goal.motion_law = 'min_jerk_cartesian'
            goal.duration = 0.5
            future = client.send_goal_async(goal)
            rclpy.spin_until_future_complete(node, future, timeout_sec=30.0)
            handle = future.result()
            result_future = handle.get_result_async()
            rclpy.spin_until_future_complete(node, result_future, timeout_sec=60.0)
            result = result_future.result().result
            stats['goals'] += 1
            if result.error_code.val == 0:
                stats['succeeded'] += 1
                words = result.message.split(' IK samples')[0].split()
                stats['ik_samples'] += int(words[-1]) if words and words[-1].isdigit() else 0
            else:
                stats['failures'].append(result.message[:200])
            index += 1
        if not load:
            time.sleep(window)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return stats


# ---------------------------------------------------------------------- one row
def jitter(times: list[float], period: float) -> dict[str, float]:
    import numpy as np
    if len(times) < 3:
        return {'count': len(times), 'p50_ms': math.nan, 'p99_ms': math.nan,
                'max_ms': math.nan, 'mean_period_ms': math.nan}
    deltas = np.diff(np.asarray(times))
    error = np.abs(deltas - period) * 1e3
    return {'count': len(times), 'p50_ms': float(np.percentile(error, 50)),
            'p99_ms': float(np.percentile(error, 99)), 'max_ms': float(error.max()),
            'mean_period_ms': float(deltas.mean() * 1e3)}


IDLE, GOALS, TARGETS = 'idle', 'cartesian goals', 'live targets'
# (label, load, parameters changed from the shipped defaults)
CONFIGS = (
    ('shipped, idle', IDLE, {}),
    ('shipped', GOALS, {}),
    ('no realtime priority', GOALS, {'realtime_priority': 0}),
    ('rclpy timer', GOALS, {'control_loop': 'timer'}),
    ('planning in a thread', GOALS, {'planning_process': False}),
    ('live target', TARGETS, {}),
    ('live target, speed cap', TARGETS, {'follow_law': 'speed_cap'}),
)


def measure(env: dict[str, str], rate: float, label: str, load: str, window: float,
            log_dir: Path, extra: dict[str, Any]) -> dict[str, Any]:
    from arm_bringup.process_group import ProcessGroup
    from arm_kinematics.description.bundled import expand_xacro

    group = ProcessGroup(env=env, log_dir=str(log_dir))
    try:
        process = group.start_node('arm_ik', 'trajectory_executor', namespace=NAMESPACE, params={
            'robot_description': expand_xacro(ARM), 'arm': ARM, 'publish_rate': float(rate),
            'output': 'forward_position', 'speed_scale': 1.0,
            'motion_law': 'min_jerk_cartesian', **extra})
        # Start listening once the executor runs (discovery and the planner process: ~5 s).
        start_at = time.time() + 8.0
        listener = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), '--subscriber',
             json.dumps({'start_at': start_at, 'window': window})],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(max(0.0, start_at - time.time() - 1.0))
        os.environ.update({k: env[k] for k in ('ROS_DOMAIN_ID', 'ROS_AUTOMATIC_DISCOVERY_RANGE')})
        try:
            stats = stream_targets(window + 1.0) if load == TARGETS else \
                send_goals(window + 1.0, load == GOALS)
        except RuntimeError as error:
            raise RuntimeError(f'{error}; executor log:\n{process.output()[-3000:]}') from None
        out, err = listener.communicate(timeout=120)
        if listener.returncode != 0:
            raise RuntimeError(f'subscriber failed:\n{err[-3000:]}')
        records = json.loads(out.strip().splitlines()[-1])['records']
        if not process.alive():
            raise RuntimeError(f'the executor died:\n{process.output()[-3000:]}')
        realtime_refused = 'not granted' in process.output()
    finally:
        group.close()
    period = 1.0 / rate
    return {'rate_hz': rate, 'config': label, 'parameters': extra,
            'load': load, 'window_s': window, 'targets': stats.get('targets', 0),
            'loadavg_1min': os.getloadavg()[0], 'realtime_refused': realtime_refused,
            'publish': jitter([r[0] for r in records], period),
            'receive': jitter([r[1] for r in records], period),
            'goals': stats['goals'], 'goals_succeeded': stats['succeeded'],
            'ik_samples': stats['ik_samples'], 'failures': stats['failures'][:3]}


# ---------------------------------------------------------------------- results
def table(rows: list[dict[str, Any]]) -> str:
    lines = [f'{"rate":>5s} {"configuration":22s} {"load":15s} {"lavg":>5s} {"msgs":>5s} '
             f'{"goals":>5s} {"IK":>6s} | {"pub p50":>7s} {"pub p99":>7s} {"pub max":>7s} | '
             f'{"rcv p50":>7s} {"rcv p99":>7s} {"rcv max":>7s}  (ms)']
    for row in rows:
        pub, rcv = row['publish'], row['receive']
        lines.append(f'{row["rate_hz"]:5.0f} {row["config"]:22s} {row["load"]:15s} '
                     f'{row["loadavg_1min"]:5.2f} '
                     f'{pub["count"]:5d} {row["goals"]:5d} {row["ik_samples"]:6d} | '
                     f'{pub["p50_ms"]:7.3f} {pub["p99_ms"]:7.3f} {pub["max_ms"]:7.2f} | '
                     f'{rcv["p50_ms"]:7.3f} {rcv["p99_ms"]:7.3f} {rcv["max_ms"]:7.2f}')
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='4 s windows (smoke run)')
    parser.add_argument('--window', type=float, default=None,
                        help='measured seconds per row (default 15; --quick 4)')
    parser.add_argument('--output', type=Path, default=REPO / 'bench_results.json')
    parser.add_argument('--configs', default='',
                        help='configuration labels to run, separated by ; (default: all)')
    parser.add_argument('--rates', default='100,250', help='publish rates, Hz (default 100,250)')
    parser.add_argument('--subscriber', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.subscriber:
        print(json.dumps(run_subscriber(json.loads(args.subscriber))))
        return 0

    import tempfile

    from arm_testing.ros_harness import DomainClaim

    window = args.window or (4.0 if args.quick else 15.0)
    distro, rclpy_version = detect_distro()
    claim = DomainClaim()
    env = claim.environment()
    env['PYTHONUNBUFFERED'] = '1'
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix='bench_motion_') as logs:
            chosen = [c for c in CONFIGS if not args.configs or c[0] in
                      args.configs.split(';')]
            for rate in (float(r) for r in args.rates.split(',')):
                for label, load, extra in chosen:
                    print(f'{distro}: {rate:.0f} Hz, {label} ...', flush=True)
                    rows.append(measure(env, rate, label, load, window, Path(logs), extra))
    finally:
        claim.release()
    at_100 = next((r for r in rows if r['config'] == 'shipped' and r['rate_hz'] == 100.0),
                  None)
    goals = {} if at_100 is None else \
        {'publish_p99_le_2ms_at_100hz_under_load': at_100['publish']['p99_ms'] <= GOAL_P99_MS}
    section = {
        'generated': datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds'),
        'rclpy': rclpy_version, 'rmw': os.environ.get('RMW_IMPLEMENTATION', 'default'),
        'cpus': os.cpu_count(), 'arm': ARM, 'window_s': window,
        'note': 'jitter = |period - 1/rate|; publish: from the header stamps (the instant '
                'each pose is sampled, just before it is published); receive: arrival times '
                'in a subscriber process; load: back-to-back min_jerk_cartesian full-pose '
                'goals (DLS at every sample); shipped: control thread at SCHED_FIFO 50 '
                '(when granted), planning in a separate process',
        'rows': rows, 'goals': goals,
    }
    print()
    print(table(rows))
    for goal, met in goals.items():
        print(f'goal {goal}: {"met" if met else "NOT met"}')
    merge_section(args.output, 'motion', section, distro)
    print(f'\nmerged into {args.output} under motion/{distro}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
