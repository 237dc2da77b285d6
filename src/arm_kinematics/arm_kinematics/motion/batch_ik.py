"""Batch IK: many IK targets in one call, each answered as a single request would be,
with position targets of the analytic solver solved together (vectorised). No ROS."""

from __future__ import annotations

from collections.abc import Sequence
import math
import time

import numpy as np

from arm_kinematics.ik.closed_form.yaw_two_pitch import BRANCHES as ANALYTIC_BRANCHES
from arm_kinematics.ik.request import IKAnswer, IKDispatcher, IKRequest, PreparedRequest
from arm_kinematics.ik.result import ErrorCode, GoalType, IKResult
from arm_kinematics.ik.solvers.base import NEAREST, SolveOptions

# Targets of one batch request at most.
MAX_BATCH = 10_000


class BatchTooLargeError(ValueError):
    """A batch request over MAX_BATCH targets."""


class BatchIK:
    """Batch IK of one arm, on its dispatcher (solvers, floor rules)."""

    def __init__(self, dispatcher: IKDispatcher) -> None:
        self.dispatcher = dispatcher

    def answer(self, requests: Sequence[IKRequest], defaults: SolveOptions,
               fallback_seed: np.ndarray) -> list[IKAnswer]:
        """Answer many IK requests: one IKAnswer per request, equal to one-by-one answers.

        Each request is validated by ``IKDispatcher.prepare`` (as a single request).
        Position requests to the analytic solver on an arm without floor rules are solved
        together by ``AnalyticSolver.solve_batch`` (a call per branch, the nearest chosen
        as the scalar solver does); any row it cannot answer alone goes the single way.

        Raises:
            BatchTooLargeError: more than MAX_BATCH requests.
        """
        if len(requests) > MAX_BATCH:
            raise BatchTooLargeError(f'{len(requests)} targets in one batch; at most {MAX_BATCH}')
        answers: list[IKAnswer | None] = [None] * len(requests)
        groups: dict[tuple, list[tuple[int, PreparedRequest]]] = {}
        dispatcher = self.dispatcher
        for index, request in enumerate(requests):
            prepared = dispatcher.prepare(request, defaults, fallback_seed)
            if isinstance(prepared, IKAnswer):
                answers[index] = prepared
            elif self._vectorisable(prepared):
                key = (prepared.options.branch, tuple(prepared.seed.tolist()))
                groups.setdefault(key, []).append((index, prepared))
            else:
                answers[index] = dispatcher.run(prepared)
        for (branch, seed), members in groups.items():
            for (index, prepared), answer in zip(members, self._analytic_batch(
                    [p for _, p in members], branch, seed), strict=True):
                answers[index] = answer if answer is not None else dispatcher.run(prepared)
        return answers       # type: ignore[return-value]

    def _vectorisable(self, prepared: PreparedRequest) -> bool:
        return (prepared.solver == 'analytic' and self.dispatcher.safety is None and
                prepared.goal == GoalType.POSITION and not prepared.options.return_all)

    def _analytic_batch(self, members: Sequence[PreparedRequest], branch: str,
                        seed: tuple[float, ...]) -> list[IKAnswer | None]:
        """Vectorised analytic answers; None for rows left to the scalar solver."""
        solver = self.dispatcher.solvers['analytic']
        started = time.perf_counter()
        targets = np.array([p.position for p in members])
        labels = ANALYTIC_BRANCHES if branch in NEAREST else (branch,)
        solved = [solver.solve_batch(targets, label, seed) for label in labels]
        stacked = np.stack([q for q, _ in solved])                     # (B, N, 3)
        ok = np.stack([codes == ErrorCode.OK for _, codes in solved])  # (B, N)
        steps = np.abs(stacked - np.asarray(seed)).max(axis=2)
        steps[~ok] = np.inf
        pick = np.argmin(steps, axis=0)                 # first of the nearest, as solve()
        rows = np.arange(len(members))
        chosen = stacked[pick, rows]
        best = steps[pick, rows]
        tips = np.array([solver.geometry.forward(*q) if math.isfinite(s) else (math.nan,) * 3
                         for q, s in zip(chosen, best, strict=True)])
        errors = np.linalg.norm(tips - targets, axis=1)
        share = (time.perf_counter() - started) / max(len(members), 1)
        answers: list[IKAnswer | None] = []
        for row, prepared in enumerate(members):
            if not math.isfinite(best[row]):
                answers.append(None)    # a failure: its reason comes from the scalar solve
                continue
            result = IKResult(ErrorCode.OK, 'solved in closed form', chosen[row].copy(),
                              labels[int(pick[row])], tips[row].copy(), float(errors[row]), 0.0,
                              0, float(best[row]), [], share)
            answers.append(self.dispatcher.measure(IKAnswer(result, 'analytic',
                                                            target=prepared.position)))
        return answers

