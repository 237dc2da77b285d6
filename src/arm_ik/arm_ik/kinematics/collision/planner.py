"""A joint-space planner for any arm: OMPL's RRTConnect (its official Python bindings, ompl
2.x) with path simplification, every state and motion checked by a ``CollisionChecker``.

OMPL checks a motion at states ``resolution × maximum extent`` apart in joint space (Euclidean
distance, rad). A joint step of Euclidean length d moves no link point more than
d · ‖R‖₂, R being the per-joint reach of ``CollisionChecker.max_link_motion`` (Cauchy-Schwarz on
Σ |Δq_i| R_i), so the resolution is set to ``max_step / ‖R‖₂``: no link moves more than
``max_step`` between two checks while planning and simplifying. The answer is then checked once
more, on its own, by ``CollisionChecker.check_path`` at the same ``max_step``.

RRTConnect: bidirectional, no cost to optimise, the usual first choice for single queries in
MoveIt's OMPL pipeline; the shortcutting simplifier makes its paths short.

Units: radians, metres, seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
import time

import numpy as np

from arm_ik.kinematics.collision.checker import CollisionChecker

SUCCESS = 'SUCCESS'
NO_PATH = 'NO_PATH'
# OMPL takes a seed only before its first random number (later: an error, no effect).
_seeded = False


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
                    seed: int | None = None) -> PlanResult:
    """A collision-free joint path from ``start`` to ``goal``.

    Args:
        checker: self-collision and the scene (its current state).
        start, goal: joint positions (n,), rad, inside the limits.
        time_budget: planning time, s (simplification gets what is left, at least 10 %).
        max_step: largest link motion between two checked poses, m.
        seed: OMPL's random seed, honoured on the process's first plan only (OMPL's rule;
            None: OMPL's own).

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
    straight = checker.check_path([start, goal], max_step)
    if straight.free:
        return PlanResult(SUCCESS, np.array([start, goal]), 'the straight joint path is clear',
                          time.perf_counter() - began, True, straight.samples)
    from ompl import base as ob
    from ompl import geometric as og
    from ompl import util as ou
    ou.setLogLevel(ou.LogLevel.LOG_WARN)
    global _seeded
    if seed is not None and not _seeded:
        ou.RNG.setSeed(int(seed) + 1)   # OMPL refuses 0
    _seeded = True
    space = ob.RealVectorStateSpace(model.dof)
    bounds = ob.RealVectorBounds(model.dof)
    for index in range(model.dof):
        bounds.setLow(index, float(model.lower[index]))
        bounds.setHigh(index, float(model.upper[index]))
    space.setBounds(bounds)
    setup = og.SimpleSetup(space)
    dof = model.dof

    def valid(state: object) -> bool:
        return checker.is_free(np.fromiter((state[i] for i in range(dof)), float, dof))

    setup.setStateValidityChecker(valid)
    info = setup.getSpaceInformation()
    reach = float(np.linalg.norm(checker._motion_radius))
    joint_step = max_step / reach if reach > 0 else math.inf
    info.setStateValidityCheckingResolution(min(1.0, joint_step / space.getMaximumExtent()))
    states = []
    for q in (start, goal):
        state = space.allocState()
        for index, value in enumerate(q.tolist()):
            state[index] = value
        states.append(state)
    setup.setStartAndGoalStates(*states)
    setup.setPlanner(og.RRTConnect(info))
    status = setup.solve(max(time_budget, 1e-3))
    if not setup.haveExactSolutionPath():
        return refuse(f'no collision-free path found in {time_budget:g} s (OMPL RRTConnect: '
                      f'{status.asString()}); the straight path is blocked at segment 0 by '
                      f'{straight.report.message}')
    left = time_budget - (time.perf_counter() - began)
    setup.simplifySolution(max(left, 0.1 * time_budget))
    solution = setup.getSolutionPath()
    path = np.array([[solution.getState(i)[j] for j in range(dof)]
                     for i in range(solution.getStateCount())])
    path[0], path[-1] = start, goal
    check = checker.check_path(path, max_step)
    if not check.free:
        # OMPL's checks are as dense as this one, so this means the checker and the planner
        # disagree (a scene change while planning): refuse rather than run it.
        return refuse(f'the planned path failed the dense validation at segment '
                      f'{check.segment}: {check.report.message}')
    return PlanResult(SUCCESS, path, f'RRTConnect + simplification, {len(path)} waypoints, '
                      f'{check.samples} dense samples clear', time.perf_counter() - began,
                      False, check.samples)
