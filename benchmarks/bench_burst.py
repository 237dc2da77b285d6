"""Benchmark of RELIABILITY case 13's load: the figures its test no longer bounds.

A real six_axis ik_server over DDS (its own ROS domain, localhost): 100 warm-up calls, then
500 requests sent at once, then one every 10 ms for 10 s (routes: ~/solve_ik, dls,
closed_form, ccd; every tenth request has a NaN target), the same load as
``test_ik_reliability.test_case_13_burst_then_steady_stream`` (``arm_testing.burst``).

Prints and merges under ``burst`` in ``bench_results.json``: the burst's wall time (the
case's "500 in under 0.1 s"; the test bounds this thread's CPU time instead, which holds on
a busy machine), the latency p50 / p99 / max, the codes (OK, shed BUSY, INVALID_INPUT) and
the server's RSS growth. ``idle_goal`` says what an idle machine gives (the bounds the test
had before issue 39): burst < 0.1 s, slowest answer < 5 s, more than 1000 OK of 1500.

Run from a built workspace: ``python benchmarks/bench_burst.py [--quick]`` (quick: a
2-second stream).
"""

from __future__ import annotations

import argparse
import datetime
import os
from pathlib import Path
import sys

import numpy as np
from results_file import detect_distro, merge_section

REPO = Path(__file__).resolve().parents[1]
IDLE_GOAL = {'burst_s': 0.1, 'max_latency_s': 5.0, 'ok_of_1500': 1000}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='a 2-second stream')
    parser.add_argument('--output', type=Path, default=REPO / 'bench_results.json')
    args = parser.parse_args(argv)
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    from arm_ik.client import build_request
    from arm_testing.arm_fixtures import use_source_description
    use_source_description(REPO / 'src')
    from arm_testing.burst import burst_then_stream, requests
    from arm_testing.ik_graph import ik_servers

    arm = 'six_axis'
    count = 200 if args.quick else 1000
    with ik_servers(arm) as graph:
        run = burst_then_stream(graph, arm, requests(arm, lambda t: build_request(
            np.asarray(t, dtype=float).tolist())), count=count)
    latencies = np.array(run.latencies())
    codes = run.codes()
    section = {
        'date': datetime.date.today().isoformat(),
        'requests': len(run.sent),
        'burst_s': round(run.burst_wall, 4),
        'burst_cpu_s': round(run.burst_cpu, 4),
        'latency_p50_s': round(float(np.median(latencies)), 4),
        'latency_p99_s': round(float(np.percentile(latencies, 99)), 4),
        'latency_max_s': round(float(latencies.max()), 4),
        'codes': codes,
        'rss_growth_kb': run.growth_kb,
        'load_average': os.getloadavg()[0],
        'idle_goal': IDLE_GOAL,
    }
    print(f'case 13 load on {arm}: {run.summary()}; load average {section["load_average"]:.1f}')
    for key, goal in (('burst_s', IDLE_GOAL['burst_s']),
                      ('latency_max_s', IDLE_GOAL['max_latency_s'])):
        verdict = 'within' if section[key] < goal else 'OVER (a busy machine?)'
        print(f'  {key} {section[key]:.3f} s: {verdict} the idle goal {goal:g} s')
    distro, _ = detect_distro()
    merge_section(args.output, 'burst', section, distro)
    return 0


if __name__ == '__main__':
    sys.exit(main())
