"""The sampling joint-path planner, for any arm: OMPL's RRTConnect (its official Python
bindings, ompl 2.x) with path simplification, every state and motion checked by a
``CollisionChecker``.

A motion (two states OMPL connects) is checked by a MotionValidator of ours: poses along
it no farther apart than ``step`` in ``CollisionChecker.max_link_motion`` (Σ |Δq_i| R_i, R the
per-joint reach: no link point moves more than ``step`` between two checked poses), all in
one ``all_free`` (a vectorised broad phase, the narrow phase midpoints first). The planner
first runs at ``COARSE × max_step`` (fewer checks, faster), and every answer is checked on its
own by ``check_path`` at ``max_step`` itself; a segment that fails is planned again at
``max_step`` (a short, local problem; at most ``MAX_REPAIRS``), and when that does not mend it
the whole path is, in what is left of the budget. Only a path that passed the dense check is
returned.

RRTConnect: bidirectional, no cost to optimise, the usual first choice for single queries in
MoveIt's OMPL pipeline; the shortcutting simplifier makes its paths short.

Units: radians, metres, seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import time
from typing import Any

import numpy as np

from arm_kinematics.motion.planning.base import JointPathPlan, SAMPLING
from arm_kinematics.scene.checker import CollisionChecker
from arm_kinematics.scene.collision_report import PathCheck

SUCCESS = 'SUCCESS'
NO_PATH = 'NO_PATH'
# OMPL takes a seed only before its first random number (later: an error, no effect).
_seeded = False
# Planning checks motions this many times coarser than the requested max_step (see below):
# 8 (8 cm at 1 cm) planned the benchmark's blocked pairs about 25 % faster than 4, with a
# segment to plan again in about one pair of 30.
COARSE = 8.0
# The simplifier's passes, in order (see _ompl_path).
SIMPLIFY_PASSES = ('reduceVertices', 'partialShortcutPath', 'reduceVertices',
                   'collapseCloseVertices')
# Segments of a coarse path that fail the dense validation and are planned again, at most.
MAX_REPAIRS = 3


@dataclass(frozen=True)
class PlanResult:
    """The answer of ``plan_joint_path``.

    Attributes:
        status: SUCCESS or NO_PATH.
        path: waypoints (M, n), start first and goal last (empty when NO_PATH), rad.
        reason: what happened, in words (why there is no path, or how it was found).
        planning_time: wall time of the whole request, s.
        straight: the straight joint path was clear (no sampling planner ran).
        samples: poses of the final dense validation.
    """

    status: str
    path: np.ndarray
    reason: str
    planning_time: float
    straight: bool = False
    samples: int = 0

    @property
    def ok(self) -> bool:
        return self.status == SUCCESS


def path_length(path: np.ndarray) -> float:
    """Sum of the Euclidean joint distances between consecutive waypoints, rad."""
    path = np.atleast_2d(path)
    return float(np.sum(np.linalg.norm(np.diff(path, axis=0), axis=1)))


def plan_joint_path(checker: CollisionChecker, start: np.ndarray, goal: np.ndarray,
                    time_budget: float = 1.0, max_step: float = 0.01,
                    seed: int | None = None, planner_range: float = 1.0,
                    state_check: Callable[[np.ndarray], bool] | None = None) -> PlanResult:
    """A collision-free joint path from ``start`` to ``goal``.

    Args:
        checker: self-collision and the scene (its current state).
        start, goal: joint positions (n,), rad, inside the limits.
        time_budget: planning time, s: the search gets at most 80 % of it, the
            simplifier's passes run while time is left.
        max_step: largest link motion between two checked poses, m.
        seed: OMPL's random seed, honoured on the process's first plan only (OMPL's rule;
            None: OMPL's own).
        planner_range: RRTConnect's longest tree edge, rad (OMPL's default, a fifth of the
            space's extent, is several radians for ±2π joints and gives wide detours; 1 rad
            gave paths about half as long on the UR5 test case).
        state_check: a further rule every pose must keep (True: allowed), e.g. the floor of
            the arm's safety rules; checked wherever the checker is (states, motions, the
            dense validation).

    Returns:
        SUCCESS with the waypoints (the straight line when it is clear), or NO_PATH with the
        reason: start or goal outside the limits or in collision, or no path in the budget.
    """
    began = time.perf_counter()
    model = checker.model
    start = np.asarray(start, dtype=float).reshape(model.dof)
    goal = np.asarray(goal, dtype=float).reshape(model.dof)

    def refuse(reason: str) -> PlanResult:
        return PlanResult(NO_PATH, np.zeros((0, model.dof)), reason,
                          time.perf_counter() - began)

    for name, q in (('start', start), ('goal', goal)):
        if not np.all(np.isfinite(q)):
            return refuse(f'the {name} is not finite')
        if not model.within_limits(q, 1e-9):
            return refuse(f'the {name} is outside the joint limits')
        report = checker.check(q)
        if report.collides:
            return refuse(f'the {name} is in collision: {report.message}')
        if state_check is not None and not state_check(q):
            return refuse(f"the {name} breaks the arm's safety rules (floor or obstacle)")
    straight = _check_path(checker, np.array([start, goal]), max_step, state_check)
    if straight.free:
        return PlanResult(SUCCESS, np.array([start, goal]), 'the straight joint path is clear',
                          time.perf_counter() - began, True, straight.samples)
    attempts = []
    # Planning at COARSE × max_step is several times faster; the dense validation below then
    # decides. A segment it refuses is planned again at max_step itself (a short, local
    # problem), and when that fails too, the whole path is.
    for step in (COARSE * max_step, max_step):
        left = time_budget - (time.perf_counter() - began)
        if left <= 0.0:
            break
        path, status = _ompl_path(checker, start, goal, step, left, planner_range, seed,
                                  state_check)
        if path is None:
            attempts.append(f'no collision-free path found in {time_budget:g} s (OMPL '
                            f'RRTConnect: {status})')
            break
        check = _check_path(checker, path, max_step, state_check)
        repairs = 0
        while not check.free and repairs < MAX_REPAIRS:
            left = time_budget - (time.perf_counter() - began)
            if left <= 0.0:
                break
            k = check.segment
            piece, _ = _ompl_path(checker, path[k], path[k + 1], max_step, left,
                                  planner_range, seed, state_check)
            if piece is None:
                break
            path = np.concatenate([path[:k], piece, path[k + 2:]])
            repairs += 1
            check = _check_path(checker, path, max_step, state_check)
        if check.free:
            mended = f', {repairs} segment(s) planned again at {max_step * 1000:g} mm' \
                if repairs else ''
            return PlanResult(SUCCESS, path, f'RRTConnect + simplification, {len(path)} '
                              f'waypoints, {check.samples} dense samples clear (planned at '
                              f'{step * 1000:g} mm{mended})', time.perf_counter() - began,
                              False, check.samples)
        attempts.append(f'the path planned at {step * 1000:g} mm failed the dense validation '
                        f'at segment {check.segment}: {_why(check)}')
    return refuse('; '.join(attempts or [f'the time budget of {time_budget:g} s ran out']) +
                  f'; the straight path is blocked: {_why(straight)}')


def _motion_validator(ob: object, info: object, checker: CollisionChecker, step: float,
                      state_check: Callable[[np.ndarray], bool] | None) -> object:
    """An OMPL MotionValidator: a motion is valid when every pose of it, no link point more
    than ``step`` m from the next, is free (and keeps ``state_check``); OMPL assumes the
    first state valid, so it is not checked again."""
    dof = checker.model.dof

    class Motions(ob.MotionValidator):
        def checkMotion(self, a: object, b: object) -> bool:  # noqa: N802 (OMPL's name)
            q_a = np.fromiter((a[i] for i in range(dof)), float, dof)
            q_b = np.fromiter((b[i] for i in range(dof)), float, dof)
            samples = checker.densify(np.array([q_a, q_b]), step)[0][1:]
            if not checker.all_free(samples):
                return False
            return state_check is None or all(state_check(q) for q in samples)

    return Motions(info)


def _why(check: PathCheck) -> str:
    return check.report.message if check.report is not None else \
        "a pose breaks the arm's safety rules (floor or obstacle)"


def _check_path(checker: CollisionChecker, path: np.ndarray, max_step: float,
                state_check: Callable[[np.ndarray], bool] | None) -> PathCheck:
    """``checker.check_path`` and, on the same dense samples, ``state_check``."""
    check = checker.check_path(path, max_step)
    if not check.free or state_check is None:
        return check
    samples, segments = checker.densify(path, max_step)
    for q, segment in zip(samples, segments.tolist()):
        if not state_check(q):
            return PathCheck(False, check.samples, segment, q.copy(), None)
    return check


def _ompl_path(checker: CollisionChecker, start: np.ndarray, goal: np.ndarray,
               step: float, budget: float, planner_range: float,
               seed: int | None, state_check: Callable[[np.ndarray], bool] | None = None
               ) -> tuple[np.ndarray | None, str]:
    """RRTConnect and simplification within ``budget`` s, motions checked so that no link
    point moves more than ``step`` m between checks; (waypoints, status) or (None, status)."""
    from ompl import base as ob
    from ompl import geometric as og
    from ompl import util as ou
    global _seeded
    ou.setLogLevel(ou.LogLevel.LOG_WARN)
    if seed is not None and not _seeded:
        ou.RNG.setSeed(int(seed) + 1)   # OMPL refuses 0
    _seeded = True
    began = time.perf_counter()
    model = checker.model
    dof = model.dof
    space = ob.RealVectorStateSpace(dof)
    bounds = ob.RealVectorBounds(dof)
    for index in range(dof):
        bounds.setLow(index, float(model.lower[index]))
        bounds.setHigh(index, float(model.upper[index]))
    space.setBounds(bounds)
    setup = og.SimpleSetup(space)

    def valid(state: object) -> bool:
        q = np.fromiter((state[i] for i in range(dof)), float, dof)
        return checker.is_free(q) and (state_check is None or bool(state_check(q)))

    setup.setStateValidityChecker(valid)
    info = setup.getSpaceInformation()
    reach = float(np.linalg.norm(checker._motion_radius))
    joint_step = step / reach if reach > 0 else 1.0
    info.setStateValidityCheckingResolution(min(1.0, joint_step / space.getMaximumExtent()))
    # Motions are checked by the checker's own path check: the link-motion bound per segment
    # (tighter than OMPL's Euclidean resolution) and one vectorised broad phase per motion.
    motions = _motion_validator(ob, info, checker, step, state_check)
    info.setMotionValidator(motions)
    states = []
    for q in (start, goal):
        state = space.allocState()
        for index, value in enumerate(q.tolist()):
            state[index] = value
        states.append(state)
    setup.setStartAndGoalStates(*states)
    planner = og.RRTConnect(info)
    planner.setRange(float(planner_range))
    setup.setPlanner(planner)
    # Most of the budget to find a path, the rest to shorten it.
    status = setup.solve(max(0.8 * budget, 1e-3))
    if not setup.haveExactSolutionPath():
        return None, status.asString()
    solution = setup.getSolutionPath()
    # A bounded sequence of the simplifier's passes instead of simplifySolution(time), which
    # loops (B-spline smoothing included) until its time is up: on the UR5 box case that
    # took the whole budget (≈1 s) for the same length these passes reach in tens of ms.
    simplifier = setup.getPathSimplifier()
    for name in SIMPLIFY_PASSES:
        shorten = getattr(simplifier, name)
        if time.perf_counter() - began > budget:
            break
        shorten(solution)
    path = np.array([[solution.getState(i)[j] for j in range(dof)]
                     for i in range(solution.getStateCount())])
    path[0], path[-1] = start, goal
    return path, status.asString()


class SamplingPlanner:
    """The sampling planner as a ``JointPathPlanner``: OMPL round self-collision and the
    scene of a ``CollisionGuard`` (its checker, time budget, spacing and seed) and, with
    ``floor_rule``, the arm's floor rules."""

    name = SAMPLING
    avoids_collisions = True

    def __init__(self, collision: Any,
                 floor_rule: Callable[[np.ndarray, np.ndarray],
                                      Callable[[np.ndarray], bool]] | None = None) -> None:
        """Args:
            collision: the arm's ``motion.safety_check.CollisionGuard``.
            floor_rule: ``SafetyAdapter.pose_rule``: (start, goal) -> the yes/no rule every
                pose of that plan keeps; None: no floor rule.
        """
        self.collision = collision
        self.floor_rule = floor_rule

    def plan(self, start: np.ndarray, goal: np.ndarray) -> JointPathPlan:
        rule = self.floor_rule(start, goal) if self.floor_rule is not None else None
        result = self.collision.plan(start, goal, rule)
        return JointPathPlan(result.ok, result.path, result.reason, result.planning_time)
