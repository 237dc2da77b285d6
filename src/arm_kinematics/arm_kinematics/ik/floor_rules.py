"""Floor rules for choosing among closed-form IK solutions (yaw + two-pitch arms).

1. If the chosen elbow branch would put a link capsule below the floor and the other elbow
   is clear, use the other and say so ("elbow up would hit the floor by 0.12 m; using elbow
   down").
2. If every solution would, return the closest pose that stays above the floor and how far
   short of the target its tip is (metres), with ``ErrorCode.PARTIAL_SOLUTION``: a partial
   answer, never a pose through the floor. With no clear pose at all: FLOOR_COLLISION.

The minimum target height (pointer3: 0.1 m above the shoulder) is ``Workspace``'s rule and
is applied by the solver before these. Units: metres and radians.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
import math
from time import perf_counter

import numpy as np

from arm_kinematics.ik.result import ErrorCode, GoalType, IKResult, Solution
from arm_kinematics.ik.solvers.base import SolveOptions, Solver
from arm_kinematics.scene.geometry import SafetyGeometry

# The partial answer keeps this much air under its lowest capsule (m), so that rounding of
# the joint positions on their way to the arm cannot put it through the floor.
PARTIAL_MARGIN = 1e-3
# Grid steps of the closest-pose search (rad): a coarse sweep of the whole (shoulder, elbow)
# range, then finer windows around the best cells (the last: 0.3 mm at 1.8 m reach).
SEARCH_STEPS = (math.radians(3.0), math.radians(0.4), math.radians(0.05), math.radians(0.01))
# Coarse cells refined: the best few from different parts of the map, so that a second
# clear region a little farther away at the coarse step is not lost.
REFINED_CANDIDATES = 3
# Poses evaluated per batch by the closest-pose search.
SEARCH_CHUNK = 512


@dataclass(frozen=True, slots=True)
class FloorChoice:
    """What the floor rules decided for one target.

    Attributes:
        code: OK (a clear solution reaches the target), PARTIAL_SOLUTION (closest clear pose,
            short of the target) or FLOOR_COLLISION (no clear pose at all).
        q: joint positions to use (rad), None for FLOOR_COLLISION.
        branch: label of the solution used; 'closest_above_floor' for a partial answer.
        switched: the solver's choice was replaced because it would hit the floor.
        message: what was done, in words ('' when the first choice was clear).
        shortfall: distance from the returned tip to the target, m (0 when reached).
        tip: tip position of ``q``, m.
        floor_clearance: lowest capsule point of ``q`` above the floor, m.
    """

    code: ErrorCode
    q: np.ndarray | None
    branch: str
    switched: bool
    message: str
    shortfall: float
    tip: np.ndarray | None
    floor_clearance: float


def branch_words(label: str) -> str:
    """'flipped_elbow_up' → 'flipped elbow up' (for messages)."""
    return label.replace('_', ' ')


def elbow_partner(label: str) -> str:
    """The other elbow of the same facing: elbow_up ↔ elbow_down (flipped stays flipped)."""
    if label.endswith('elbow_up'):
        return label[:-len('up')] + 'down'
    if label.endswith('elbow_down'):
        return label[:-len('down')] + 'up'
    return ''


def keep_if_clear(geometry: SafetyGeometry, q: np.ndarray, label: str,
                  target: np.ndarray) -> FloorChoice | None:
    """The first rule: a solution clear of the floor is kept as it is (None: blocked)."""
    lowest, tip = geometry.pose_floor_clearance(q.tolist())
    if not lowest >= 0.0:       # below the floor, or NaN: never kept as clear
        return None
    tx, ty, tz = target.tolist()
    return FloorChoice(ErrorCode.OK, q, label, False, '',
                       math.hypot(tip[0] - tx, tip[1] - ty, tip[2] - tz), np.array(tip), lowest)


def choose_above_floor(geometry: SafetyGeometry, solutions: Sequence[Solution], chosen: str,
                       target: Sequence[float], search_joints: tuple[int, int] = (1, 2),
                       margin: float = PARTIAL_MARGIN) -> FloorChoice:
    """Apply the floor rules to the valid solutions of one target.

    Args:
        geometry: the arm's safety geometry (floor and capsules).
        solutions: every valid labelled solution (``return_all``), including ``chosen``.
        chosen: label the solver picked.
        target: the target tip position, m.
        search_joints: joints searched for the closest clear pose when every solution is
            blocked (shoulder, elbow); the others keep the chosen solution's values.
        margin: clearance the partial answer keeps above the floor, m.

    Returns:
        FloorChoice. An alternative solution is preferred in this order: the other elbow of
        the same facing, then the remaining ones nearest the chosen pose (largest joint move).

    Raises:
        ValueError: ``chosen`` is not among ``solutions``.
    """
    by_label = {s.label: np.asarray(s.q, dtype=float) for s in solutions}
    if chosen not in by_label:
        raise ValueError(f'chosen branch "{chosen}" is not among the solutions '
                         f'({", ".join(by_label) or "none"})')
    target = np.asarray(target, dtype=float)
    first = by_label[chosen]
    kept = keep_if_clear(geometry, first, chosen, target)
    if kept is not None:
        return kept
    labels = list(by_label)
    lowest, tip_positions = geometry.floor_clearance_and_tips(
        np.array([by_label[label] for label in labels]))
    clearance = dict(zip(labels, lowest.tolist()))
    tips = dict(zip(labels, tip_positions))
    partner = elbow_partner(chosen)
    others = sorted((label for label in labels if label not in (chosen, partner)),
                    key=lambda label: float(np.abs(by_label[label] - first).max()))
    order = ([partner] if partner in by_label else []) + others
    blocked = f'{branch_words(chosen)} would hit the floor by {-clearance[chosen]:.2f} m'
    for label in order:
        if clearance[label] >= 0.0:
            return FloorChoice(ErrorCode.OK, by_label[label], label, True,
                               f'{blocked}; using {branch_words(label)}',
                               float(np.linalg.norm(tips[label] - target)), tips[label],
                               clearance[label])
    if partner in by_label:
        blocked += (f' and {branch_words(partner)} by {-clearance[partner]:.2f} m')
    elif partner:
        blocked += f' ({branch_words(partner)} is past a joint limit)'
    found = closest_clear_pose(geometry, target, first, search_joints, margin)
    if found is None:
        return FloorChoice(ErrorCode.FLOOR_COLLISION, None, '', True,
                           f'{blocked}; no pose of the arm stays above the floor',
                           math.inf, None, clearance[chosen])
    q, tip, shortfall, lowest = found
    return FloorChoice(ErrorCode.PARTIAL_SOLUTION, q, 'closest_above_floor', True,
                       f'{blocked}; the closest pose above the floor is {shortfall:.3f} m '
                       'short of the target', shortfall, tip, lowest)


def closest_clear_pose(geometry: SafetyGeometry, target: Sequence[float], base_q: np.ndarray,
                       search_joints: tuple[int, int] = (1, 2),
                       margin: float = PARTIAL_MARGIN,
                       steps: Sequence[float] = SEARCH_STEPS
                       ) -> tuple[np.ndarray, np.ndarray, float, float] | None:
    """The pose whose tip is closest to ``target`` among poses at least ``margin`` above the
    floor, searched over two joints inside their limits (coarse grid, then finer windows).

    The other joints keep ``base_q``'s values: for a vertical base yaw facing the target this
    loses nothing, because turning the base changes no height.

    Args:
        geometry: the arm's safety geometry.
        target: tip target, m.
        base_q: pose supplying the joints that are not searched (rad).
        search_joints: the two joints searched (default shoulder, elbow).
        margin: required floor clearance, m.
        steps: grid steps (rad), coarse to fine; each finer grid spans ±1 previous step.

    Returns:
        (q, tip, shortfall m, floor clearance m), or None when no grid pose is clear.
    """
    model = geometry.model
    target = np.asarray(target, dtype=float)
    base_q = np.asarray(base_q, dtype=float)
    i, j = search_joints
    lower, upper = model.lower[[i, j]], model.upper[[i, j]]

    def evaluate(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        grid_a, grid_b = np.meshgrid(a, b, indexing='ij')
        poses = np.repeat(base_q[None, :], grid_a.size, axis=0)
        poses[:, i], poses[:, j] = grid_a.ravel(), grid_b.ravel()
        distance = np.empty(len(poses))
        clear = np.empty(len(poses))
        # In chunks: the whole grid at once needs ~12 MB of temporaries, which the allocator
        # keeps after the first search (a lasting step in a server's memory).
        for first in range(0, len(poses), SEARCH_CHUNK):
            chunk = slice(first, first + SEARCH_CHUNK)
            start, end, tips = geometry.link_segments(poses[chunk])
            clear[chunk] = (np.minimum(start[..., 2], end[..., 2]) - geometry.radii
                            - geometry.floor_z).min(axis=1)
            distance[chunk] = np.linalg.norm(tips - target, axis=1)
        distance[clear < margin] = math.inf
        return poses, distance, clear

    coarse = steps[0]
    poses, distance, clear = evaluate(_axis(lower[0], upper[0], coarse),
                                      _axis(lower[1], upper[1], coarse))
    if not np.isfinite(distance).any():
        return None
    best = None
    for index in _spread_best(poses[:, [i, j]], distance, coarse, REFINED_CANDIDATES):
        centre, value = poses[index, [i, j]], distance[index]
        pose, lowest = poses[index], clear[index]
        for previous, step in zip(steps, steps[1:]):
            a = _axis(max(lower[0], centre[0] - previous), min(upper[0], centre[0] + previous),
                      step)
            b = _axis(max(lower[1], centre[1] - previous), min(upper[1], centre[1] + previous),
                      step)
            fine_poses, fine_distance, fine_clear = evaluate(a, b)
            k = int(np.argmin(fine_distance))
            if fine_distance[k] < value:
                centre, value = fine_poses[k, [i, j]], fine_distance[k]
                pose, lowest = fine_poses[k], fine_clear[k]
        if best is None or value < best[2]:
            best = (pose, lowest, value)
    pose, lowest, value = best
    tip = geometry.link_segments(pose)[2][0]
    return pose, tip, float(value), float(lowest)


def _axis(low: float, high: float, step: float) -> np.ndarray:
    """Grid values from ``low`` to ``high`` inclusive, at most ``step`` apart."""
    count = max(2, int(math.ceil((high - low) / step - 1e-9)) + 1)
    return np.linspace(low, high, count)


def _spread_best(cells: np.ndarray, distance: np.ndarray, step: float,
                 count: int) -> list[int]:
    """Indices of up to ``count`` finite minima of ``distance`` at least 3 steps apart."""
    chosen: list[int] = []
    for index in np.argsort(distance):
        if not np.isfinite(distance[index]) or len(chosen) == count:
            break
        if all(np.abs(cells[index] - cells[c]).max() > 3.0 * step for c in chosen):
            chosen.append(int(index))
    return chosen


def apply_floor_rules(geometry: SafetyGeometry, result: IKResult, position: object,
                      keep_alternatives: bool) -> tuple[IKResult, FloorChoice | None]:
    """The floor rules applied to a closed-form answer solved with ``return_all``.

    Args:
        geometry: the arm's safety geometry; with the floor disabled the answer is unchanged.
        result: the solver's answer, with every labelled solution in ``solutions``.
        position: target tip position, m.
        keep_alternatives: keep ``solutions`` in the returned result (the caller asked for
            them); otherwise they are dropped once the rules have used them.

    Returns:
        (result, choice): the result carries the code, reason, q, branch, tip and
        ``position_error`` (the shortfall for a partial answer) of the choice; choice is
        None when the solver failed or the floor is disabled.
    """
    solutions = list(result.solutions)
    if not keep_alternatives:
        result = replace(result, solutions=[])
    if not result.success or result.q is None or not geometry.floor_enabled:
        return result, None
    choice = choose_above_floor(geometry, solutions, result.branch, np.asarray(position, float))
    if choice.code == ErrorCode.OK and not choice.switched:
        return result, choice
    return replace(result, code=choice.code, reason=choice.message, q=choice.q,
                   branch=choice.branch, tip_position=choice.tip,
                   position_error=choice.shortfall), choice


def solve_above_floor(solver: Solver, geometry: SafetyGeometry, position: object,
                      seed: object = None, options: SolveOptions = SolveOptions(), *,
                      orientation: object = None, goal: GoalType = GoalType.POSITION
                      ) -> tuple[IKResult, FloorChoice | None]:
    """Solve a target with a closed-form solver and apply the floor rules to the answer.

    The solver's chosen solution is judged first; only when it is blocked is the target
    solved again for every labelled solution to choose among (most answers are clear,
    and this runs on every closed-form request of the IK services).

    Args:
        solver: a closed-form solver that returns every labelled solution with
            ``return_all`` (``Solver.labelled``).
        geometry: the arm's safety geometry; with the floor disabled the answer is unchanged.
        position: target tip position, m.
        seed: reference joint positions (rad), as for ``solver.solve``.
        options: solver options; the alternatives are returned only when they ask for them.
        orientation, goal: as for ``solver.solve``.

    Returns:
        As ``apply_floor_rules``, with the solve time of both steps; the choice is None
        when the solver failed or the floor is disabled.
    """
    start = perf_counter()
    result = solver.solve(position, orientation, goal, seed, options)
    if not result.success or result.q is None or not geometry.floor_enabled:
        return result, None
    target = np.asarray(position, dtype=float)
    kept = keep_if_clear(geometry, result.q, result.branch, target)
    if kept is not None:
        result.solve_time = perf_counter() - start   # a fresh result of ours
        return result, kept
    every = result if options.return_all else solver.solve(
        position, orientation, goal, seed, options.with_changes(return_all=True))
    result, choice = apply_floor_rules(geometry, every, target, options.return_all)
    return replace(result, solve_time=perf_counter() - start), choice
