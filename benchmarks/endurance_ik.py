"""Endurance of the IK services (RELIABILITY case 27): random valid and invalid requests at a
fixed rate for a long time against real ik_server processes.

Servers: one ik_server per arm (pointer3 and six_axis by default), each in its own process on
a private ROS domain with localhost discovery. One client sends requests open loop (it never
waits for a reply before the next send) at ``--rate`` per second for ``--duration`` seconds:
about 70 % valid targets (FK of random joint positions inside the reach rules, clear of the
floor) on a random applicable solver or the default service, and 30 % invalid ones (NaN, inf,
1e308, out of reach, inside the hole, below the minimum height, unknown solver, negative
timeout, iteration and damping values, unknown seed names, a zero quaternion).

Checked and reported:
  * no server crashes, and every request is answered (none unanswered after 10 s);
  * every success satisfies |FK(IK(p)) - p| <= 1e-6 m (requests ask for 1e-7 m), and no
    invalid request is ever answered OK;
  * resident memory (VmRSS) growth of each server from the end of the warm-up (40 s) to the
    end (medians of the first and last five 1 s samples), at most a few MB. RSS first climbs
    while every code path is used once. Later single steps of ~12 MB come from the floor
    rules' closest-safe-pose search (PARTIAL_SOLUTION / FLOOR_COLLISION answers of six_axis
    allocate ~12 MB of temporaries): after the first such free glibc raises its dynamic mmap
    threshold, and later ones stay in the arena of the executor thread that ran them, one
    step per thread at most. ``--malloc-mmap-threshold 131072`` pins the threshold and the
    steps disappear; a leak would keep growing either way;
  * the thread count of each server stays constant after the warm-up;
  * a probe request right after the run is still answered OK.

Prints the figures and merges them under the top-level key ``endurance`` of
``bench_results.json`` (one sub-key per ROS distro; other keys are kept). The integration
test ``test_ik_endurance.py`` runs the same function for 40 s (20 s warm-up) with the mmap
threshold pinned.

Run from a built workspace: ``python benchmarks/endurance_ik.py [--duration 120]``.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import math
import os
from pathlib import Path
import statistics
import sys
import time
from typing import Any

from results_file import detect_distro, merge_section

REPO = Path(__file__).resolve().parents[1]
# The domain lock protocol and the FK target generator of the integration tests.

import numpy as np  # noqa: E402

from arm_testing.ik_graph import APPLICABLE, fk_position, fk_targets, IKGraph, workspace  # noqa: E402

ARMS = ('pointer3', 'six_axis')
REPLY_TIMEOUT = 10.0          # s: a request unanswered after this is lost (a hang)
FK_TOLERANCE = 1e-6           # m, what every success must meet
REQUEST_TOLERANCE = 1e-7      # m, asked of the numeric solvers so that they meet it
INVALID_SHARE = 0.3
SAMPLE_PERIOD = 1.0           # s between memory / thread samples
MEMORY_LIMIT_KB = 5 * 1024    # "no growth beyond a few MB"
INVALID_KINDS = ('nan', 'inf', 'huge', 'out_of_reach', 'inside_hole', 'below_min_height',
                 'unknown_solver', 'negative_timeout', 'negative_iterations',
                 'negative_damping', 'unknown_seed_names', 'zero_quaternion')


def proc_status(pid: int) -> tuple[int, int]:
    """(VmRSS kB, thread count) of a process."""
    rss = threads = -1
    with open(f'/proc/{pid}/status', encoding='ascii') as status:
        for line in status:
            if line.startswith('VmRSS:'):
                rss = int(line.split()[1])
            elif line.startswith('Threads:'):
                threads = int(line.split()[1])
    return rss, threads


def invalid_request(kind: str, arm: str, valid_target: np.ndarray, rng: np.random.Generator):
    """(request, solver or None) that every server must refuse."""
    from arm_ik.client import build_request
    from arm_kinematics.ik.result import GoalType
    rules = workspace(arm)
    solver = str(rng.choice(APPLICABLE[arm]))
    target = valid_target.copy()
    if kind == 'nan':
        target[rng.integers(3)] = math.nan
    elif kind == 'inf':
        target[rng.integers(3)] = math.inf * rng.choice([-1.0, 1.0])
    elif kind == 'huge':
        target[rng.integers(3)] = 1e308
    elif kind == 'out_of_reach':
        direction = rng.normal(size=3)
        direction[2] = abs(direction[2]) + 0.5        # above the shoulder: out of reach only
        target = rules.shoulder + 1.5 * rules.max_reach * direction / np.linalg.norm(direction)
    elif kind == 'inside_hole':
        # Only two-link arms have a hole (the others can fold back onto the shoulder).
        target = rules.shoulder + np.array([0.0, 0.0, 0.5 * rules.min_reach])
        if rules.min_reach <= 0.0:
            target[2] = math.nan
    elif kind == 'below_min_height':
        target = rules.shoulder + np.array([0.5, 0.0, -0.3])
        if rules.min_height_above_shoulder is None:
            target[2] = -5.0                          # under the floor, far out of reach
    request = build_request(target, tolerance=REQUEST_TOLERANCE)
    if kind == 'unknown_solver':
        request.solver = str(rng.choice(['fabrik', 'DLS', 'dls ', 'ccd\n']))
        return request, None
    if kind == 'negative_timeout':
        request.timeout.sec = -1
    elif kind == 'negative_iterations':
        request.max_iterations = -1
    elif kind == 'negative_damping':
        request.damping = -0.1
    elif kind == 'unknown_seed_names':
        request.seed.name = ['no_such_joint']
        request.seed.position = [0.0]
    elif kind == 'zero_quaternion':
        request.goal_type = int(GoalType.FULL_POSE)
        request.target.pose.orientation.w = 0.0
    return request, solver


class Endurance(IKGraph):
    """The integration tests' IKGraph (servers on a private domain, one client node) plus
    the bookkeeping of one run."""

    def __init__(self, arms: tuple[str, ...], seed: int,
                 server_env: dict[str, str] | None = None) -> None:
        super().__init__()
        self.arms = arms
        self.server_env = dict(server_env or {})
        self.rng = np.random.default_rng(seed)

    # ------------------------------------------------------------------ set-up
    def start_servers(self) -> None:
        from arm_ik.client import build_request
        from arm_interfaces.srv import SolveIK
        from arm_testing.ros_harness import call_service
        for arm in self.arms:
            self.start(arm, extra_env=self.server_env)
        self.wait_ready(*self.arms, timeout=60.0)
        for arm in self.arms:
            # The closed-form services answer from a node of their own: one answered call
            # on every service proves each reply path (resent while a reply is lost).
            for solver in APPLICABLE[arm]:
                call_service(self.client(arm, solver), SolveIK.Request(), self.spin,
                             REPLY_TIMEOUT, attempt=2.0)
            # A burst of concurrent numeric solves before the baseline: every pool thread
            # (the server starts them all at once) runs a solve and fills its malloc arena.
            # Four solves that never converge (they run to their 0.5 s timeout) hold the
            # heavy slots while the rest are shed as BUSY on the other pool threads.
            burst = [self.call_async(arm, 'dls', build_request(
                fk_position(arm, q), tolerance=1e-300, timeout=0.5, max_iterations=100_000))
                for q in fk_targets(arm, 30, seed=5)]
            self.wait_all(burst, REPLY_TIMEOUT)

    # ------------------------------------------------------------------ the run
    def run(self, duration: float, rate: float, warmup: float,
            log=print) -> dict[str, Any]:
        """Send for ``duration`` s at ``rate``/s; figures after a ``warmup`` s lead-in."""
        from arm_ik.client import build_request
        from arm_kinematics.ik.result import ErrorCode
        targets = {arm: [fk_position(arm, q) for q in fk_targets(arm, 400, seed=7)]
                   for arm in self.arms}
        pending: dict[Any, tuple[float, str, str, np.ndarray | None, str | None]] = {}
        codes: collections.Counter = collections.Counter()
        latencies: list[float] = []
        errors: list[float] = []
        invalid_ok: list[str] = []
        lost = sent = successes = 0
        samples: dict[str, list[tuple[float, int, int]]] = {arm: [] for arm in self.arms}

        def settle(now: float) -> None:
            nonlocal lost, successes
            for future in [f for f in pending if f.done()]:
                started, arm, kind, target, solver = pending.pop(future)
                response = future.result()
                latencies.append(now - started)
                code = ErrorCode(response.error_code.val)
                codes[code.name] += 1
                if kind != 'valid':
                    if code == ErrorCode.OK:
                        invalid_ok.append(f'{arm} {kind}: {response.message}')
                    continue
                if code == ErrorCode.OK:
                    successes += 1
                    q = np.array(response.solution.position)
                    errors.append(float(np.linalg.norm(fk_position(arm, q) - target)))
            for future in [f for f, v in pending.items() if now - v[0] > REPLY_TIMEOUT]:
                pending.pop(future)
                lost += 1

        start = time.monotonic()
        next_send = start
        next_sample = start
        period = 1.0 / rate
        while True:
            now = time.monotonic()
            if now >= start + duration:
                break
            if now >= next_sample:
                next_sample += SAMPLE_PERIOD
                for arm, process in self.servers.items():
                    if not process.alive():
                        raise RuntimeError(f'ik_server {arm} crashed:\n{process.output()}')
                    rss, threads = proc_status(process.popen.pid)
                    samples[arm].append((now - start, rss, threads))
            if now >= next_send:
                next_send += period
                arm = self.arms[int(self.rng.integers(len(self.arms)))]
                valid = targets[arm][int(self.rng.integers(len(targets[arm])))]
                if self.rng.random() < INVALID_SHARE:
                    kind = INVALID_KINDS[int(self.rng.integers(len(INVALID_KINDS)))]
                    request, solver = invalid_request(kind, arm, valid, self.rng)
                    target = None
                else:
                    kind, target = 'valid', valid
                    choices = list(APPLICABLE[arm]) + [None]
                    solver = choices[int(self.rng.integers(len(choices)))]
                    request = build_request(valid, tolerance=REQUEST_TOLERANCE)
                future = self.client(arm, solver).call_async(request)
                pending[future] = (now, arm, kind, target, solver)
                sent += 1
            self.executor.spin_once(timeout_sec=max(0.0, min(next_send, next_sample)
                                                    - time.monotonic()))
            settle(time.monotonic())
        # Drain: every request still gets its answer (or counts as lost).
        drain_end = time.monotonic() + REPLY_TIMEOUT
        while pending and time.monotonic() < drain_end:
            self.executor.spin_once(timeout_sec=0.05)
            settle(time.monotonic())
        lost += len(pending)
        elapsed = time.monotonic() - start
        probe = self._probe()
        servers = {arm: self._memory_figures(samples[arm], warmup) for arm in self.arms}
        ordered = sorted(latencies)
        result = {
            'duration_s': round(elapsed, 1), 'rate_per_s': rate, 'arms': list(self.arms),
            'sent': sent, 'answered': len(latencies), 'lost': lost,
            'achieved_rate_per_s': round(sent / duration, 1),
            'valid_successes': successes, 'codes': dict(sorted(codes.items())),
            'invalid_answered_ok': invalid_ok[:10],
            'max_fk_error_m': max(errors) if errors else 0.0,
            'fk_tolerance_m': FK_TOLERANCE,
            'latency_p50_ms': round(1e3 * ordered[len(ordered) // 2], 2) if ordered else None,
            'latency_p99_ms': round(1e3 * ordered[int(0.99 * (len(ordered) - 1))], 2)
            if ordered else None,
            'servers': servers, 'server_env': self.server_env, 'probe_ok_after_run': probe,
            'crashed': [arm for arm, p in self.servers.items() if not p.alive()],
        }
        result['passed'] = bool(
            not result['crashed'] and lost == 0 and not invalid_ok and probe and
            result['max_fk_error_m'] <= FK_TOLERANCE and successes > 0 and
            all(s['rss_growth_kb'] <= MEMORY_LIMIT_KB and s['threads_constant']
                for s in servers.values()))
        log(report(result))
        return result

    def _probe(self) -> bool:
        """A valid request to every server after the run is answered OK, promptly."""
        from arm_ik.client import build_request
        from arm_kinematics.ik.result import ErrorCode
        for arm in self.arms:
            target = fk_position(arm, fk_targets(arm, 1, seed=99)[0])
            future = self.client(arm, 'dls').call_async(build_request(target))
            deadline = time.monotonic() + 2.0
            while not future.done() and time.monotonic() < deadline:
                self.executor.spin_once(timeout_sec=0.02)
            if not future.done() or future.result().error_code.val != ErrorCode.OK:
                return False
        return True

    @staticmethod
    def _memory_figures(samples: list[tuple[float, int, int]], warmup: float) -> dict:
        after = [s for s in samples if s[0] >= warmup] or samples
        head = statistics.median(s[1] for s in after[:5])
        tail = statistics.median(s[1] for s in after[-5:])
        threads = sorted({s[2] for s in after})
        return {'rss_first_sample_kb': samples[0][1] if samples else -1,
                'rss_start_kb': int(head), 'rss_end_kb': int(tail),
                'rss_max_kb': max(s[1] for s in after), 'rss_growth_kb': int(tail - head),
                'threads': threads, 'threads_constant': len(threads) == 1,
                'samples': len(after),
                # Every tenth sample (s after the start, kB), to tell a leak from a step.
                'rss_series_kb': [[round(s[0]), s[1]] for s in after[::10]]}


def run_endurance(duration: float = 120.0, rate: float = 50.0, arms: tuple[str, ...] = ARMS,
                  warmup: float = 40.0, seed: int = 2024, log=print,
                  server_env: dict[str, str] | None = None) -> dict[str, Any]:
    """Start the servers (with ``server_env`` added to their environment), run, stop them;
    the figures (see the module docstring)."""
    run = Endurance(arms, seed, server_env)
    try:
        run.start_servers()
        return run.run(duration, rate, warmup, log)
    finally:
        run.close()


def report(result: dict[str, Any]) -> str:
    lines = [f'endurance: {result["sent"]} requests in {result["duration_s"]} s '
             f'({result["achieved_rate_per_s"]}/s) to {", ".join(result["arms"])}',
             f'  answered {result["answered"]}, lost {result["lost"]}, crashed '
             f'{result["crashed"] or "none"}, probe after the run '
             f'{"OK" if result["probe_ok_after_run"] else "FAILED"}',
             f'  valid successes {result["valid_successes"]}, max |FK(IK(p)) - p| '
             f'{result["max_fk_error_m"]:.2e} m (limit {result["fk_tolerance_m"]:g}), '
             f'invalid answered OK: {len(result["invalid_answered_ok"])}',
             f'  latency p50 {result["latency_p50_ms"]} ms, p99 {result["latency_p99_ms"]} ms',
             f'  codes {result["codes"]}']
    for arm, s in result['servers'].items():
        lines.append(f'  {arm}: RSS after start {s["rss_first_sample_kb"] / 1024:.1f} MB, '
                     f'after warm-up {s["rss_start_kb"] / 1024:.1f} -> '
                     f'{s["rss_end_kb"] / 1024:.1f} MB (growth {s["rss_growth_kb"]} kB, max '
                     f'{s["rss_max_kb"] / 1024:.1f} MB), threads {s["threads"]}')
    lines.append(f'  {"PASSED" if result["passed"] else "FAILED"}')
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--duration', type=float, default=120.0, help='s (default 120)')
    parser.add_argument('--rate', type=float, default=50.0, help='requests per s')
    parser.add_argument('--warmup', type=float, default=40.0,
                        help='s of requests before the memory and thread baseline (the '
                             "servers' per-thread malloc arenas fill up during it)")
    parser.add_argument('--arms', nargs='+', default=list(ARMS))
    parser.add_argument('--seed', type=int, default=2024)
    parser.add_argument('--output', type=Path, default=REPO / 'bench_results.json')
    parser.add_argument('--malloc-mmap-threshold', type=int, default=0, metavar='BYTES',
                        help='run the servers with MALLOC_MMAP_THRESHOLD_=BYTES (a fixed '
                             'threshold: large temporaries always go back to the OS)')
    parser.add_argument('--no-write', action='store_true', help='print only')
    args = parser.parse_args(argv)
    if not (math.isfinite(args.duration) and args.duration > args.warmup >= 0.0):
        parser.error('--duration must exceed --warmup (both finite, warmup >= 0)')
    if not (math.isfinite(args.rate) and 0.0 < args.rate <= 1000.0):
        parser.error('--rate must be in (0, 1000]')
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    env = {'MALLOC_MMAP_THRESHOLD_': str(args.malloc_mmap_threshold)} \
        if args.malloc_mmap_threshold > 0 else None
    result = run_endurance(args.duration, args.rate, tuple(args.arms), args.warmup, args.seed,
                           server_env=env)
    result['date'] = datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds')
    if not args.no_write:
        merge_section(args.output, 'endurance', result, detect_distro()[0])
        print(f'merged under "endurance" in {args.output}')
    return 0 if result['passed'] else 1


if __name__ == '__main__':
    sys.exit(main())
