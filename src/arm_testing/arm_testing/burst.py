"""RELIABILITY case 13's load as one function: a burst of requests sent as fast as this
process can, then a steady stream, against a real ik_server of an ``IKGraph``.

Shared by the test (``test_ik_reliability.test_case_13_burst_then_steady_stream``, bounds
that hold on a busy machine) and ``benchmarks/bench_burst.py`` (the figures: the burst's wall
time, latencies, the share shed BUSY), so both load the server the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
import math
import time
from typing import Any

import numpy as np

from arm_interfaces.srv import SolveIK
from arm_testing.ik_graph import fk_position, fk_targets, IKGraph, rss_kb

ROUTES = (None, 'dls', 'closed_form', 'ccd', 'dls')   # None: ~/solve_ik's default solver


@dataclass
class BurstRun:
    """What a run sent and when each answer came (perf_counter s)."""

    sent: list[tuple[int, float, Any, list[float]]] = field(default_factory=list)
    answered: dict[int, float] = field(default_factory=dict)
    burst_wall: float = 0.0          # s, wall time to send the burst
    burst_cpu: float = 0.0           # s, this thread's CPU time to send it
    baseline_kb: int = 0             # the server's RSS after the warm-up
    growth_kb: int = 0               # and its growth by the end

    def latencies(self) -> list[float]:
        return [self.answered[index] - at for index, at, _, _ in self.sent]

    def codes(self) -> dict[str, int]:
        from arm_kinematics.ik.result import ErrorCode
        counts: dict[str, int] = {}
        for _, _, future, _ in self.sent:
            name = ErrorCode(future.result().error_code.val).name
            counts[name] = counts.get(name, 0) + 1
        return counts

    def summary(self) -> str:
        latencies = self.latencies()
        return (f'burst sent in {self.burst_wall * 1e3:.1f} ms ({self.burst_cpu * 1e3:.1f} ms '
                f'CPU); codes {self.codes()}; latency p50 {np.median(latencies) * 1e3:.1f} '
                f'ms, max {max(latencies) * 1e3:.1f} ms; RSS {self.baseline_kb} kB + '
                f'{self.growth_kb} kB')


def requests(arm: str, build: Callable[..., SolveIK.Request]
             ) -> Callable[[int], tuple[str | None, SolveIK.Request, list[float]]]:
    """Request ``index``: (solver route, request, target); every tenth has a NaN target."""
    targets = [fk_position(arm, q) for q in fk_targets(arm, 50, seed=13)]

    def make(index: int) -> tuple[str | None, SolveIK.Request, list[float]]:
        target = targets[index % len(targets)]
        if index % 10 == 9:    # every tenth request is malformed
            return 'dls', build([math.nan, target[1], target[2]]), target
        return ROUTES[index % len(ROUTES)], build(target), target
    return make


def burst_then_stream(graph: IKGraph, arm: str,
                      make: Callable[[int], tuple[str | None, SolveIK.Request, list[float]]],
                      burst: int = 500, period: float = 0.01, count: int = 1000,
                      hang_wait: float = 60.0) -> BurstRun:
    """Warm up (100 calls), send ``burst`` requests at once, then one every ``period`` s
    ``count`` times, spinning in between; wait until every one is answered (AssertionError
    after ``hang_wait`` s: hung)."""
    for index in range(100):
        graph.call(arm, *make(index)[:2])
    run = BurstRun(baseline_kb=rss_kb(graph.servers[arm]))

    def note(index: int, future: Any, target: list[float]) -> None:
        run.sent.append((index, time.perf_counter(), future, target))
        future.add_done_callback(lambda _: run.answered.setdefault(index, time.perf_counter()))

    first = [make(i) for i in range(burst)]       # built before the clock starts
    clients = [graph.client(arm, solver) for solver, _, _ in first]
    started, started_cpu = time.perf_counter(), time.thread_time()
    for index, ((_, request, target), client) in enumerate(zip(first, clients, strict=True)):
        note(index, client.call_async(request), target)
    run.burst_wall = time.perf_counter() - started
    run.burst_cpu = time.thread_time() - started_cpu

    stream_start = time.perf_counter()
    for k in range(count):
        due = stream_start + k * period
        while (now := time.perf_counter()) < due:
            graph.spin(due - now)
        solver, request, target = make(burst + k)
        note(burst + k, graph.call_async(arm, solver, request), target)
    # None hanging: a lost reply never comes, a slow one does; the wait only ends early.
    graph.wait_all([entry[2] for entry in run.sent], hang_wait)
    # Done callbacks run as executor tasks, a spin after the reply was taken.
    graph.wait_until(lambda: len(run.answered) == len(run.sent), 5.0, 'done callbacks')
    run.growth_kb = rss_kb(graph.servers[arm]) - run.baseline_kb
    return run
