"""Benchmark of the IK services over DDS: round-trip latency and throughput from another
process, against an echo service (same interface, empty handler) as the floor.

Servers, each in its own process, on a private ROS_DOMAIN_ID with localhost discovery:
  * ik_server for pointer3 (``~/ik/analytic``) and six_axis (``~/ik/dls``), as shipped (the
    closed-form services on arm_ik's ServiceLoop, a thread of their own; the numeric ones on
    arm_ik's HandoffExecutor with 6 threads);
  * echo_server.py with SingleThreadedExecutor (rclpy's default: the floor rclpy sets, which
    the goals are measured against), rclpy's stock MultiThreadedExecutor (6 threads),
    HandoffExecutor (6 threads), ServiceLoop (the floor of ~/ik/analytic's own setup: the
    ratio against it is what the handler and its fuller reply cost) and, when this rclpy
    has it, rclpy.experimental.EventsExecutor.

Client processes (this script with ``--worker``) make sequential calls, each waiting for
its reply. Latency (p50/p95/p99) and single-client throughput: 2,000 calls per service from
one client process that takes the services in turns, 100 calls at a time (after 5 untimed
ones: a server's first answers after a pause are slow), so that a slow spell of the (shared,
virtual) machine falls on every service alike and the ratios compare like with like.
Then, service by service, four client processes at once, 500 calls each, for the
four-client throughput. A call without a reply within 5 s is counted as lost. Targets are
FK-generated, reachable and clear of the floor (every IK reply must be OK). Every row is
measured with three clients, because on Jazzy the client sets most of the floor:
  * single-suf:  SingleThreadedExecutor, spin_until_future_complete (rclpy's idiom). On
    Jazzy (rclpy 7.1.6) each such call leaves finished done-callback tasks in the
    executor that are never pruned (every call builds a new wait generator and drops the
    old one before its clean-up), so each call scans more of them: p50 3 ms over the
    first 300 calls, 45 ms after 1,800. Its figures depend on the number of calls;
  * single-once: SingleThreadedExecutor, a spin_once loop (what arm_ik's IKClient does);
  * events:      rclpy.experimental.EventsExecutor, spin_until_future_complete.

Prints a table and merges the figures under the top-level key ``services`` of
``bench_results.json`` (one sub-key per ROS distro; other keys are kept).

Run from a built workspace: ``python benchmarks/bench_services.py [--quick]``.
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
# The domain lock protocol of the integration tests, so a benchmark never shares a domain
# with a test run.

REPLY_TIMEOUT = 5.0          # s: a call unanswered after this is lost
ROW_BUDGET = 300.0           # s of timed calls per worker before a row is cut short
MAX_LOST = 10                # lost calls after which a row is cut short
WARMUP = 100                 # calls before timing (discovery, caches, first allocations)
BLOCK = 100                  # calls of one service before the next service's turn
TURN_WARMUP = 5              # untimed calls at the start of each turn
SEED = 2024
GOAL_RATIO = 1.2             # analytic p50 and p99 within 1.2× the echo's
GOAL_KILTED_P50_MS = 1.0
GOAL_KILTED_CALLS_PER_S = 500.0
ANALYTIC = 'pointer3 ~/ik/analytic'
HANDOFF_ECHO = 'echo, server Handoff(6)'
SINGLE_ECHO = 'echo, server Single'
LOOP_ECHO = 'echo, server ServiceLoop'
MULTI_ECHO = 'echo, server rclpy Multi(6)'
CLIENT_KINDS = ('single-suf', 'single-once', 'events')
DEFAULT_CLIENT = 'single-suf'   # rclpy's default executor and waiting idiom


# ---------------------------------------------------------------------- client worker
def run_worker(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Sequential calls of the spec's services, in interleaved blocks of BLOCK calls (so a
    slow spell of the machine hits every service alike); per service: latencies (s), lost
    count, reply codes, calling time."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from arm_ik.client import build_request, SERVICE_QOS
    from arm_interfaces.srv import SolveIK

    rclpy.init()
    kind = spec['client_executor']
    poll = kind == 'single-once'
    callers = []
    try:
        for index, service in enumerate(spec['services']):
            # A node and executor per service, so each waits only on its own client.
            node = rclpy.create_node(f'bench_client_{os.getpid()}_{index}')
            if kind == 'events':
                from rclpy.experimental import EventsExecutor
                executor = EventsExecutor()
            else:
                executor = SingleThreadedExecutor()
            executor.add_node(node)
            client = node.create_client(SolveIK, service['service'], qos_profile=SERVICE_QOS)
            callers.append((node, executor, client,
                            [build_request(target) for target in service['targets']]))
        for (_, _, client, _), service in zip(callers, spec['services']):
            if not client.wait_for_service(timeout_sec=60.0):
                return [{'error': f'{service["service"]} not available'}]

        def call(executor, client, request: SolveIK.Request) -> SolveIK.Response | None:
            future = client.call_async(request)
            if poll:
                # What IKClient.solve does: spin_once until the reply is in.
                deadline = time.monotonic() + REPLY_TIMEOUT
                while not future.done() and (left := deadline - time.monotonic()) > 0.0:
                    executor.spin_once(timeout_sec=left)
            else:
                executor.spin_until_future_complete(future, timeout_sec=REPLY_TIMEOUT)
            if not future.done():
                client.remove_pending_request(future)
                return None
            return future.result()

        for (_, executor, client, requests), service in zip(callers, spec['services']):
            if call(executor, client, requests[0]) is None:
                return [{'error': f'{service["service"]} does not answer'}]
            for index in range(WARMUP):
                call(executor, client, requests[index % len(requests)])
        # Concurrent clients start together, after every one has warmed up.
        start_at = spec.get('start_at')
        if start_at:
            time.sleep(max(0.0, start_at - time.time()))
        results = [{'latencies': [], 'lost': 0, 'codes': {}, 'elapsed': 0.0,
                    'started': time.time(), 'truncated': False} for _ in callers]
        for block_start in range(0, spec['calls'], BLOCK):
            for (_, executor, client, requests), result in zip(callers, results):
                if result['elapsed'] > ROW_BUDGET or result['lost'] >= MAX_LOST:
                    # A row that loses calls (5 s each) or crawls on a loaded machine stops
                    # here and says so, instead of holding the whole benchmark for hours.
                    result['truncated'] = True
                    continue
                # A server idle while the others had their turn answers its first calls
                # slowly (cold caches); they would land in every row's p99.
                for index in range(TURN_WARMUP if len(callers) > 1 else 0):
                    call(executor, client, requests[(block_start + index) % len(requests)])
                block_began = time.perf_counter()
                for index in range(block_start, min(block_start + BLOCK, spec['calls'])):
                    sent = time.perf_counter()
                    response = call(executor, client, requests[index % len(requests)])
                    if response is None:
                        result['lost'] += 1
                        continue
                    result['latencies'].append(time.perf_counter() - sent)
                    code = response.error_code.val
                    result['codes'][code] = result['codes'].get(code, 0) + 1
                result['elapsed'] += time.perf_counter() - block_began
        return results
    finally:
        for node, executor, _, _ in callers:
            executor.shutdown()
            node.destroy_node()
        rclpy.try_shutdown()


# ---------------------------------------------------------------------- orchestration
def fk_targets(arm: str, count: int) -> list[list[float]]:
    """Reachable tip positions clear of the floor (the integration tests' targets), so every
    IK reply must be OK."""
    from arm_testing import ik_graph
    return [ik_graph.fk_position(arm, q).tolist()
            for q in ik_graph.fk_targets(arm, count, seed=SEED)]


def start_workers(env: dict[str, str], specs: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Run one worker process per spec at the same time; per spec, its per-service results."""
    workers = [subprocess.Popen([sys.executable, str(Path(__file__).resolve()), '--worker',
                                 json.dumps(spec)], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for spec in specs]
    results = []
    for worker in workers:
        out, err = worker.communicate(timeout=3600)
        if worker.returncode != 0 or not out.strip():
            raise RuntimeError(f'worker failed ({worker.returncode}):\n{err[-3000:]}')
        results.append(json.loads(out.strip().splitlines()[-1]))
    for per_service in results:
        for result in per_service:
            if 'error' in result:
                raise RuntimeError(result['error'])
    return results


def percentile(values: list[float], q: float) -> float:
    import numpy as np
    return float(np.percentile(values, q)) if values else math.nan


def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    latencies = [v for r in results for v in r['latencies']]
    calls = sum(len(r['latencies']) + r['lost'] for r in results)
    answered = len(latencies)
    ok = sum(r['codes'].get('0', r['codes'].get(0, 0)) for r in results)
    # Throughput over the span in which every client was running.
    start = min(r['started'] for r in results)
    end = max(r['started'] + r['elapsed'] for r in results)
    return {
        'clients': len(results), 'calls': calls, 'answered': answered,
        'lost': sum(r['lost'] for r in results),
        'ok_rate': ok / answered if answered else 0.0,
        'p50_ms': percentile(latencies, 50) * 1e3, 'p95_ms': percentile(latencies, 95) * 1e3,
        'p99_ms': percentile(latencies, 99) * 1e3,
        'mean_ms': (sum(latencies) / answered * 1e3) if answered else math.nan,
        'calls_per_s': answered / (end - start) if end > start else math.nan,
        'truncated': any(r['truncated'] for r in results),
    }


def table(rows: dict[str, dict[str, Any]], title: str) -> str:
    lines = [title, f'{"service":26s} {"cli":>3s} {"calls":>6s} {"lost":>4s} {"ok":>5s} '
             f'{"p50 ms":>8s} {"p95 ms":>8s} {"p99 ms":>8s} {"calls/s":>8s}']
    for label, row in rows.items():
        lines.append(f'{label:26s} {row["clients"]:3d} {row["calls"]:6d} {row["lost"]:4d} '
                     f'{row["ok_rate"] * 100:4.0f}% {row["p50_ms"]:8.3f} {row["p95_ms"]:8.3f} '
                     f'{row["p99_ms"]:8.3f} {row["calls_per_s"]:8.0f}'
                     + ('  (cut short)' if row['truncated'] else ''))
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='200 calls per row (smoke run)')
    parser.add_argument('--calls', type=int, default=None,
                        help='timed calls per service and client (default 2000; --quick 200)')
    parser.add_argument('--clients', nargs='+', choices=CLIENT_KINDS, default=None,
                        help='client executors to measure (default: all this rclpy has)')
    parser.add_argument('--output', type=Path, default=REPO / 'bench_results.json')
    parser.add_argument('--worker', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(run_worker(json.loads(args.worker))))
        return 0

    from arm_bringup.process_group import ProcessGroup
    from arm_kinematics.description.bundled import expand_xacro
    from arm_testing.ros_harness import DomainClaim

    sys.path.insert(0, str(HERE))
    from echo_server import events_executor_available

    calls = args.calls or (200 if args.quick else 2000)
    distro, rclpy_version = detect_distro()
    claim = DomainClaim()
    env = claim.environment()
    env['PYTHONUNBUFFERED'] = '1'
    executors = ['single', 'multi', 'handoff', 'loop']
    executors += ['events'] if events_executor_available() else []
    group = ProcessGroup(env=env)
    echo_logs = []
    echoes: list[subprocess.Popen] = []
    try:
        for arm in ('pointer3', 'six_axis'):
            group.start_node('arm_ik', 'ik_server', namespace=f'/{arm}',
                             params={'robot_description': expand_xacro(arm), 'arm': arm})
        for kind in executors:
            log = open(group.log_dir / f'echo_{kind}.log', 'wb')
            echo_logs.append(log)
            echoes.append(subprocess.Popen(
                [sys.executable, str(HERE / 'echo_server.py'), '--executor', kind,
                 '--ros-args', '-r', f'__ns:=/echo_{kind}'],
                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        targets = {arm: fk_targets(arm, 200) for arm in ('pointer3', 'six_axis')}
        servers = [(SINGLE_ECHO, '/echo_single/echo_server/solve_ik', 'pointer3'),
                   (MULTI_ECHO, '/echo_multi/echo_server/solve_ik', 'pointer3'),
                   (HANDOFF_ECHO, '/echo_handoff/echo_server/solve_ik', 'pointer3'),
                   (LOOP_ECHO, '/echo_loop/echo_server/solve_ik', 'pointer3')]
        if 'events' in executors:
            servers.append(('echo, server Events', '/echo_events/echo_server/solve_ik',
                            'pointer3'))
        servers += [(ANALYTIC, '/pointer3/ik_server/ik/analytic', 'pointer3'),
                    ('six_axis ~/ik/dls', '/six_axis/ik_server/ik/dls', 'six_axis')]
        # The client side matters as much as the server: every row runs with the client on
        # SingleThreadedExecutor waiting with spin_until_future_complete (rclpy's idiom),
        # on SingleThreadedExecutor waiting with a spin_once loop (what IKClient does), and
        # on EventsExecutor where this rclpy has it.
        client_kinds = [kind for kind in CLIENT_KINDS[:3 if 'events' in executors else 2]
                        if args.clients is None or kind in args.clients]

        def spec(rows: list[tuple[str, str, str]], client: str, count: int,
                 start_at: float | None = None) -> dict[str, Any]:
            return {'services': [{'service': service, 'targets': targets[arm]}
                                 for _, service, arm in rows],
                    'calls': count, 'client_executor': client, 'start_at': start_at}

        one_client: dict[str, dict[str, Any]] = {kind: {} for kind in client_kinds}
        four_clients: dict[str, dict[str, Any]] = {kind: {} for kind in client_kinds}
        for kind in client_kinds:
            # Every server in one client process, taking turns in blocks of BLOCK calls: the
            # ratios compare services measured under the same conditions.
            print(f'{distro}: every service, client {kind}, 1 client, interleaved ...',
                  flush=True)
            [per_service] = start_workers(env, [spec(servers, kind, calls)])
            for (label, _, _), result in zip(servers, per_service):
                one_client[kind][label] = summarise([result])
        for kind in client_kinds:
            for row in servers:
                print(f'{distro}: {row[0]}, client {kind}, 4 clients ...', flush=True)
                # Every worker warms up first (about 2 s with discovery), then all start
                # together.
                start_at = time.time() + 8.0
                results = start_workers(env, [spec([row], kind, max(calls // 4, 50),
                                                   start_at)] * 4)
                four_clients[kind][row[0]] = summarise([result for [result] in results])
    finally:
        for echo in echoes:
            try:
                os.killpg(echo.pid, 2)
                echo.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(echo.pid, 9)
        for log in echo_logs:
            log.close()
        group.close()
        claim.release()

    ratios: dict[str, dict[str, float]] = {}
    goals: dict[str, bool] = {}
    for kind in client_kinds:
        analytic = one_client[kind][ANALYTIC]
        for floor_label in (SINGLE_ECHO, MULTI_ECHO, HANDOFF_ECHO, LOOP_ECHO):
            floor = one_client[kind][floor_label]
            ratios[f'client {kind}: analytic / {floor_label}'] = {
                'p50': analytic['p50_ms'] / floor['p50_ms'],
                'p99': analytic['p99_ms'] / floor['p99_ms']}
        # Against the floor rclpy sets: the echo on rclpy's default executor. (The ratio
        # against the ServiceLoop echo, above, is the cost of the handler and its reply.)
        floor = one_client[kind][SINGLE_ECHO]
        goals[f'client {kind}: analytic p50 within 1.2x echo'] = \
            analytic['p50_ms'] <= GOAL_RATIO * floor['p50_ms']
        goals[f'client {kind}: analytic p99 within 1.2x echo'] = \
            analytic['p99_ms'] <= GOAL_RATIO * floor['p99_ms']
        goals[f'client {kind}: no request lost with 4 clients'] = \
            all(r['lost'] == 0 for r in four_clients[kind].values())
        goals[f'client {kind}: every reply OK'] = \
            all(r['ok_rate'] == 1.0 for r in one_client[kind].values())
        if distro == 'kilted' and kind == DEFAULT_CLIENT:
            goals[f'client {kind}: analytic p50 <= 1 ms'] = \
                analytic['p50_ms'] <= GOAL_KILTED_P50_MS
            goals[f'client {kind}: analytic >= 500 calls/s, one client'] = \
                analytic['calls_per_s'] >= GOAL_KILTED_CALLS_PER_S
    section = {
        'generated': datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds'),
        'rclpy': rclpy_version,
        'rmw': os.environ.get('RMW_IMPLEMENTATION', 'default'),
        'calls_per_row': calls, 'warmup_calls': WARMUP, 'reply_timeout_s': REPLY_TIMEOUT,
        'cpus': os.cpu_count(),
        'note': 'sequential calls per client; ~/ik/analytic runs on arm_ik ServiceLoop, '
                "~/ik/dls on HandoffExecutor(6); goals against the echo on rclpy's default "
                'SingleThreadedExecutor; '
                'one_client / four_clients are keyed by the client executor, then the server',
        'one_client': one_client, 'four_clients': four_clients, 'ratios': ratios,
        'goals': goals,
    }
    for kind in client_kinds:
        print()
        print(table(one_client[kind], f'{distro} (rclpy {rclpy_version}), client executor '
                    f'{kind}: one client, {calls} calls'))
        print()
        print(table(four_clients[kind], f'{distro}, client executor {kind}: four concurrent '
                    f'clients, {max(calls // 4, 50)} calls each'))
    print()
    for label, ratio in ratios.items():
        print(f'{label}: p50 {ratio["p50"]:.2f}x, p99 {ratio["p99"]:.2f}x')
    for goal, met in goals.items():
        print(f'goal {goal}: {"met" if met else "NOT met"}')
    merge_section(args.output, 'services', section, distro)
    print(f'\nmerged into {args.output} under services/{distro}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
