"""The solver of the yaw + three-pitch family (``yaw_three_pitch``): goals, limits, branches.

Its engine (``yaw_three_pitch.PlanarEngine``) solves a position and an approach pitch;
this solver turns that into the answers of the four goals (see the family's module
docstring): POSITION with ``approach_pitch`` and TOOL_DOWN in closed form, POSITION alone
by sweeping the free pitch (SWEEP_STEPS, then zooming grids), FULL_POSE when the
orientation and the position agree. Units: metres and radians.
"""

from __future__ import annotations

from collections.abc import Sequence
import math
from time import perf_counter

import numpy as np

from arm_kinematics.ik.closed_form.common import (
    answer_nearest,
    check_batch_arguments,
    goal_orientation,
    outside_limits,
    prepared_limits,
    target_and_seed,
    turns,
    TWO_PI,
    wrap_rows,
)
from arm_kinematics.ik.closed_form.yaw_three_pitch import (
    FAMILY_NAME,
    PlanarEngine,
    PlanarFamily,
    ScalarPlanarEngine,
)
from arm_kinematics.ik.closed_form.yaw_two_pitch import AnalyticSolver, BRANCHES
from arm_kinematics.ik.result import ErrorCode, GoalType, IKResult
from arm_kinematics.ik.solvers.base import ClosedFormBase, NEAREST, SolveOptions, Solver, Workspace
from arm_kinematics.model.arm_model import ArmModel

# The free pitch of a POSITION goal: a grid over a full turn, then REFINE_ROUNDS zooms of
# REFINE_POINTS pitches each across the best one's neighbourhood (a grid cell either side,
# then 2/32 of the previous width): the pitch to 1° · (1/16)^4 ≈ 3e-7 rad.
SWEEP_STEPS = 360
REFINE_POINTS = 33
REFINE_ROUNDS = 4
# Rows per engine call in a vectorised sweep (memory, not speed: ~1 kB a row).
CHUNK_ROWS = 200_000
_DEFAULT_OPTIONS = SolveOptions()


class TipOfChain:
    """``forward(*q)``: the tip position (m) at joints q (rad), by FK.

    The one piece of ``analytic.YawPitchGeometry`` that callers of ``solve_batch`` read
    (path_ik measures its batch rows with it), for this family's 4 or 5 joints.
    """

    def __init__(self, model: ArmModel) -> None:
        self.model = model

    def forward(self, *q: float) -> tuple[float, float, float]:
        tip = self.model.fk(np.array(q))[:3, 3]
        return float(tip[0]), float(tip[1]), float(tip[2])


class PlanarFamilySolver(ClosedFormBase):
    """Every closed-form solution of a yaw + three-pitch arm, labelled by analytic.BRANCHES.

    ``elbow_up`` / ``elbow_down`` face the target, ``flipped_*`` turn the base to reach over
    it; "up" is the elbow above the line from the shoulder to the wrist. Joints whose
    range spans more than a full turn give every whole-turn copy inside the limits with the
    same label. A roll joint keeps the seed's value (FULL_POSE solves it). The tip may sit
    anywhere on the last link, off the roll axis too (SO-101: 7.9 mm): with the roll held
    it is a fixed point, whose offset along the pitch axes enters the yaw.

    Goals: POSITION with ``approach_pitch`` (rad) given: closed form; TOOL_DOWN: the pitch
    -pi/2; POSITION alone: the free pitch swept (module docstring); FULL_POSE: the roll
    (and everything else) from the pose when the orientation and position agree within
    the request's tolerances, else SOLVER_NOT_APPLICABLE with how far they disagree.
    """

    name = 'analytic'
    labelled = True

    def __init__(self, model: ArmModel, workspace: Workspace, family: PlanarFamily,
                 home: Sequence[float] | None = None) -> None:
        """Prepare the engine of ``family`` (from ``recognise_planar``) for ``model``.

        Args:
            model: the arm. workspace: the tip reach pre-check.
            family: the recognised family of ``model``.
            home: default seed (rad); the zero pose clamped into the limits when None.
        """
        super().__init__(model, workspace)
        self.family = family
        self.engine = PlanarEngine(model, family)
        self.scalar = ScalarPlanarEngine(self.engine)
        self.ranges, self.gate, self.home = prepared_limits(model, workspace, home)
        self._dls: Solver | None = None
        self.geometry = TipOfChain(model)

    # ------------------------------------------------------------------ batches
    def solve_pitches(self, positions: np.ndarray, pitches: np.ndarray | float,
                      seeds: np.ndarray | Sequence[float] | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every branch of N (position, approach pitch) goals in one call, inside the limits.

        Args:
            positions: (N, 3) tip positions, m. pitches: (N,) or one approach pitch, rad.
            seeds: (N, n) or (n,) reference joints, rad; home when None.

        Returns:
            (q (N, 4, n) rad in BRANCHES order, valid (N, 4), flags (N, 4)): valid means
            reachable and inside the limits; a multi-turn joint holds the copy nearest the
            seed; invalid rows hold finite unwrapped angles.
        """
        seeds = np.asarray(self.home if seeds is None else seeds, dtype=float)
        raw, ok, flags = self.engine.solve_raw(positions, pitches, seeds)
        return (*wrap_rows(raw, ok, self.ranges, seeds), flags)

    def sweep(self, positions: np.ndarray, seeds: np.ndarray | Sequence[float] | None = None,
              branch: str = '') -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """POSITION goals: for each target and branch, the free pitch nearest the seed.

        A grid of SWEEP_STEPS pitches, then REFINE_ROUNDS zooms around the best point,
        minimising the largest joint move from the
        seed among solutions inside the limits.

        Args:
            positions: (N, 3) m. seeds: (N, n) or (n,) rad; home when None.
            branch: a label of BRANCHES to sweep only it, '' for all four.

        Returns:
            (q (N, B, n), valid (N, B), pitch (N, B)) with B = 4 (or 1 for a named branch).
        """
        points = np.asarray(positions, dtype=float).reshape(-1, 3)
        count = len(points)
        dof = self.model.dof
        seeds = np.broadcast_to(np.asarray(self.home if seeds is None else seeds,
                                           dtype=float), (count, dof))
        wanted = list(range(4)) if branch in NEAREST else [BRANCHES.index(branch)]
        # Chunks of targets bound the memory (~1 kB per engine row).
        per_chunk = max(1, CHUNK_ROWS // max(SWEEP_STEPS, len(wanted) * REFINE_POINTS))
        if count > per_chunk:
            parts = [self.sweep(points[i:i + per_chunk], seeds[i:i + per_chunk], branch)
                     for i in range(0, count, per_chunk)]
            return tuple(np.concatenate(arrays) for arrays in zip(*parts, strict=True))
        grid = -math.pi + TWO_PI * np.arange(SWEEP_STEPS) / SWEEP_STEPS
        steps = self._steps(np.repeat(points, SWEEP_STEPS, axis=0), np.tile(grid, count),
                            np.repeat(seeds, SWEEP_STEPS, axis=0), wanted)
        best_pitch = grid[np.argmin(steps.reshape(count, SWEEP_STEPS, len(wanted)), axis=1)]
        # Zoom: REFINE_POINTS pitches across the best one's neighbourhood, every (target,
        # branch) at once; the centre is among them, so a round never makes it worse, and
        # the kinks of the largest-joint-move measure need no derivative.
        branches = len(wanted)
        offsets = np.linspace(-1.0, 1.0, REFINE_POINTS)
        flat_points = np.repeat(points, branches * REFINE_POINTS, axis=0)
        flat_seeds = np.repeat(seeds, branches * REFINE_POINTS, axis=0)
        column = np.tile(np.repeat(np.arange(branches), REFINE_POINTS), count)
        rows = np.arange(len(column))
        pitch = best_pitch
        width = TWO_PI / SWEEP_STEPS
        for _ in range(REFINE_ROUNDS):
            candidates = pitch[:, :, None] + width * offsets           # (N, B, K)
            steps = self._steps(flat_points, candidates.reshape(-1), flat_seeds, wanted)
            costs = steps[rows, column].reshape(count, branches, REFINE_POINTS)
            pick = np.argmin(costs, axis=2)
            pitch = np.take_along_axis(candidates, pick[:, :, None], axis=2)[:, :, 0]
            width *= 2.0 / (REFINE_POINTS - 1)
        flat_points = np.repeat(points, branches, axis=0)
        flat_seeds = np.repeat(seeds, branches, axis=0)
        column = np.tile(np.arange(branches), count)
        q, valid, _ = self.solve_pitches(flat_points, pitch.reshape(-1), flat_seeds)
        pick = np.arange(len(column))
        q = q[pick, np.array(wanted)[column]].reshape(count, len(wanted), dof)
        valid = valid[pick, np.array(wanted)[column]].reshape(count, len(wanted))
        return q, valid, pitch

    def _steps(self, points: np.ndarray, pitches: np.ndarray, seeds: np.ndarray,
               wanted: Sequence[int]) -> np.ndarray:
        """Largest joint move from the seed (M, B) of the wanted branches; inf if invalid."""
        q, valid, _ = self.solve_pitches(points, pitches, seeds)
        q, valid = q[:, wanted], valid[:, wanted]
        steps = np.abs(q - seeds[:, None, :]).max(axis=2)
        steps[~valid] = np.inf
        return steps

    def solve_batch(self, targets: np.ndarray, branch: str = 'elbow_up',
                    seed: Sequence[float] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """POSITION goals in one call, as ``AnalyticSolver.solve_batch`` (path_ik uses it).

        Returns:
            (q (N, n) rad, codes (N,) ErrorCode values); rows that are not OK hold NaN.

        Raises:
            ValueError: targets not (N, 3), or an unknown branch.
        """
        points = check_batch_arguments(targets, branch, BRANCHES)
        gate = self.gate
        codes = AnalyticSolver._precheck_batch(np.nan_to_num(points), *gate.shoulder,
                                               gate.min_z, gate.max_r, gate.min_r)
        codes[~np.isfinite(points).all(axis=1)] = ErrorCode.INVALID_INPUT
        reference = np.asarray(self.home if seed is None else seed, dtype=float)
        q, valid, _ = self.sweep(np.nan_to_num(points), reference, branch)
        steps = np.abs(q - reference).max(axis=2)
        steps[~valid] = np.inf
        pick = np.argmin(steps, axis=1)
        rows = np.arange(len(points))
        chosen = q[rows, pick]
        found = np.isfinite(steps[rows, pick])
        pending = codes == ErrorCode.OK
        codes[pending & ~found] = ErrorCode.OUT_OF_REACH
        chosen[codes != ErrorCode.OK] = np.nan
        return chosen, codes

    # ------------------------------------------------------------------ one request
    def solve(self, position: object, orientation: object = None,
              goal: GoalType = GoalType.POSITION, seed: object = None,
              options: SolveOptions = _DEFAULT_OPTIONS, *,
              approach_pitch: float | None = None) -> IKResult:
        """Solve one goal; never raises.

        Args:
            position: tip position (m, base frame), 3 values.
            orientation: FULL_POSE only: quaternion (x, y, z, w) or 3×3 rotation matrix.
            goal: POSITION (with or without ``approach_pitch``), TOOL_DOWN or FULL_POSE.
            seed: reference configuration (rad; the roll is kept); home when None.
            options: ``branch`` ('' / 'nearest' or a label of BRANCHES), ``return_all``.
            approach_pitch: the tool's approach pitch (rad, see the module docstring) of a
                POSITION goal; None sweeps it.

        Returns:
            IKResult; JOINT_LIMITS names the solution nearest to the limits and how far.
        """
        start = perf_counter()
        failure = self._options_failure(start, options, BRANCHES)
        if failure is not None:
            return failure
        branch = options.branch
        rotation = None
        if goal == GoalType.FULL_POSE:
            if approach_pitch is not None:
                return self._failure(start, ErrorCode.INVALID_INPUT,
                                     'a FULL_POSE goal sets the approach pitch itself')
            rotation, reason = goal_orientation(orientation)
            if rotation is None:
                return self._failure(start, ErrorCode.INVALID_INPUT, reason)
        elif goal not in (GoalType.POSITION, GoalType.TOOL_DOWN):
            return self._failure(start, ErrorCode.INVALID_INPUT, f'unknown goal type {goal!r}')
        if approach_pitch is not None:
            if goal == GoalType.TOOL_DOWN:
                return self._failure(start, ErrorCode.INVALID_INPUT,
                                     'TOOL_DOWN sets the approach pitch (-pi/2) itself; give '
                                     'approach_pitch with a POSITION goal')
            if not (isinstance(approach_pitch, (int, float)) and math.isfinite(approach_pitch)):
                return self._failure(start, ErrorCode.INVALID_INPUT,
                                     f'approach_pitch must be a finite angle, got '
                                     f'{approach_pitch!r}')
        target, reference, failure = target_and_seed(self, start, position, seed)
        if failure is not None:
            return failure
        pitch = -0.5 * math.pi if goal == GoalType.TOOL_DOWN else approach_pitch
        if rotation is not None:
            raw, ok, flags, miss, tilt = self.engine.solve_pose(
                target, np.array(rotation).reshape(3, 3), reference,
                options.orientation_tolerance)
            reachable = (miss <= options.tolerance) & (tilt <= options.orientation_tolerance)
            if not reachable.any():
                return self._failure(start, ErrorCode.SOLVER_NOT_APPLICABLE,
                                     self._pose_unreachable(miss, tilt, options))
            ok = ok & reachable
            if not ok.any():
                return self._failure(start, ErrorCode.OUT_OF_REACH,
                                     'the target is out of reach with this orientation')
            pitches = np.full(4, math.nan)
            flags = flags.tolist()
        elif pitch is None:
            q, valid, pitches = self.sweep(np.array([target]), np.array(reference))
            raw, ok = q[0], valid[0]
            pitches = pitches[0]
            flags = np.zeros(4, int)
            near = np.zeros(4, bool)
        else:
            rows, near_all = self.scalar.solve(target, pitch, reference)
            raw = np.array([q for q, _, _ in rows])
            ok = np.array([good for _, good, _ in rows])
            flags = [flag for _, _, flag in rows]
            near = np.full(4, near_all)
            pitches = np.full(4, pitch)
        found, outside = [], []
        names = self.model.joint_names
        lower, upper = self.ranges.lower, self.ranges.upper
        for label, q, good, flag, at in zip(BRANCHES, raw.tolist(), ok, flags, pitches,
                                            strict=True):
            if not good:
                continue
            choices = [turns(angle, lower[j], upper[j]) for j, angle in enumerate(q)]
            if all(choices):
                found.append((label, choices, int(flag), float(at)))
            else:
                outside.append(outside_limits(label, q, self.ranges, names))
        if not ok.any():
            if pitch is None:
                # The sweep keeps only solutions inside the limits.
                failure = self._failure(start, ErrorCode.JOINT_LIMITS if self._reachable(
                    target, reference) else ErrorCode.OUT_OF_REACH, self._sweep_failure(
                    target, reference))
                return self._position_by_dls(start, target, reference, options, failure)
            if near.all():
                return self._failure(start, ErrorCode.INSIDE_INNER_HOLE,
                                     self._too_near(target, reference, pitch))
            return self._failure(start, ErrorCode.OUT_OF_REACH, (
                f'the target is out of reach at the approach pitch {math.degrees(pitch):.1f}°'))
        return answer_nearest(self, start, target, goal, rotation, FAMILY_NAME, found, outside,
                              reference, branch, options.return_all)

    def _position_by_dls(self, start: float, target: Sequence[float],
                         reference: Sequence[float], options: SolveOptions,
                         failure: IKResult) -> IKResult:
        """A position no pitch reaches with the seed's roll: DLS from the seed, roll free.

        The tip off the roll axis (SO-101: 7.9 mm) moves with the roll, so a target the
        held roll misses may be reached by turning it, as the families fall back for a
        position the seed's orientation misses. Without a roll the sweep has said it all.
        """
        if self.model.dof != 5:
            return failure
        if self._dls is None:
            from arm_kinematics.ik.solvers.dls import DLSSolver
            self._dls = DLSSolver(self.model, self.workspace)
        # DLS knows no branches (it refuses a label): its answer is labelled '' anyway.
        options = options.with_changes(branch='') if options.branch else options
        result = self._dls.solve(target, None, GoalType.POSITION, reference, options)
        if not result.success:
            return failure
        result.reason = (f"{failure.reason} (the seed's roll); damped least squares from the "
                         f'seed, roll free: {result.reason}')
        result.solve_time = perf_counter() - start
        return result

    def _pose_unreachable(self, miss: np.ndarray, tilt: np.ndarray,
                          options: SolveOptions) -> str:
        """Why no solution of a full pose exists: the orientation and position disagree."""
        use = ('a yaw + three-pitch arm reaches a full pose only where its orientation and '
               'position agree: use TOOL_DOWN, or POSITION with an approach pitch')
        lean = float(tilt.min())
        if lean > options.orientation_tolerance:
            return (f'the orientation leans the pitch axis {lean:.3g} rad from any the yaw '
                    f'reaches (tolerance {options.orientation_tolerance:g} rad); {use}')
        return (f'the orientation puts the arm plane {float(miss.min()):.3g} m from the '
                f'target (tolerance {options.tolerance:g} m); {use}')

    def _too_near(self, target: Sequence[float], reference: Sequence[float],
                  pitch: float) -> str:
        """Why a target is too near: inside the arm plane's lateral offset, or folded."""
        e = self.engine
        tip, _ = e.tip_and_tool(np.array(reference[4:5]) if e.dof == 5 else None, 1)
        lateral = abs(float((tip[0] - e.o[0]) @ e.n))
        v = np.asarray(target) - e.o[0]
        across = float(np.linalg.norm(v - np.dot(v, e.w[0]) * e.w[0]))
        if across < lateral:
            return (f'the target is {across:.4f} m from the yaw axis, nearer than the arm '
                    f"plane's lateral offset of {lateral:.4f} m")
        return (f'the target is too near the shoulder for the approach pitch '
                f'{math.degrees(pitch):.1f}°')

    def _reachable(self, target: Sequence[float], reference: Sequence[float]) -> bool:
        """True when some pitch on the sweep grid reaches ``target`` ignoring the limits."""
        grid = -math.pi + TWO_PI * np.arange(SWEEP_STEPS) / SWEEP_STEPS
        _, ok, _ = self.engine.solve_raw(np.repeat([target], SWEEP_STEPS, axis=0), grid,
                                         np.array(reference))
        return bool(ok.any())

    def _sweep_failure(self, target: Sequence[float], reference: Sequence[float]) -> str:
        if not self._reachable(target, reference):
            return (f'no approach pitch on a {360.0 / SWEEP_STEPS:g}° grid reaches the target '
                    'with this roll')
        return (f'every approach pitch on a {360.0 / SWEEP_STEPS:g}° grid reaches the target '
                'only past a joint limit')
