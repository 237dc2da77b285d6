"""The six-joint families with a closed form (UR, OPW): their shared engine and solver.

``FamilyEngine`` is the vectorised closed form shared by the UR (``ur``) and OPW (``opw``)
families: the yaw from the solved point (UR: where axes 5 and 6 cross; OPW: the wrist
centre), the shoulder-elbow triangle of the parallel axes 2 and 3 and the wrist bend are
the same; each family's module subclasses it with its own order of the wrist steps
(``_solve``), and ``ScalarEngine`` the same for one pose in plain floats.

``FamilySolver`` turns the 8 raw solutions into the labelled answer: joint limits, the
whole-turn copies of multi-turn joints, the branch nearest the seed, the goals (FULL_POSE,
TOOL_DOWN, POSITION), JOINT_LIMITS with how far out. The solvers work in
product-of-exponentials form on the world axes at q = 0, so joint offsets, axis signs and
rotated fixed joints of the URDF need no convention. Units: metres and radians.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import itertools
import math
from time import perf_counter

import numpy as np

from arm_kinematics.ik.closed_form import family_kernel
from arm_kinematics.ik.closed_form.common import (
    ANGLE_TOLERANCE,
    answer_nearest,
    checked_request,
    fk_check,
    flag_words,
    goal_orientation,
    LIMIT_TOLERANCE,
    LINE_TOLERANCE,
    outside_limits,
    prepared_limits,
    SHOULDER_SINGULAR,
    SINGULAR,
    SIX_JOINT_CHECK_TOLERANCE,
    solved,
    STRETCHED,
    tool_down_rotation,
    turns,
    TWO_PI,
    wrap_rows,
)
from arm_kinematics.ik.closed_form.family import Family
from arm_kinematics.ik.closed_form.geometry import (
    cosine_equation,
    parallel,
    perpendicular,
    PitchTriangle,
    rotate,
    unit,
)
from arm_kinematics.ik.closed_form.spherical_wrist import BRANCHES
from arm_kinematics.ik.result import ErrorCode, GoalType, IKResult
from arm_kinematics.ik.solvers.base import (
    ClosedFormBase,
    NEAREST,
    SolveOptions,
    Solver,
    Workspace,
)
from arm_kinematics.model.arm_model import ArmModel

_DEFAULT_OPTIONS = SolveOptions()
# Newton steps that take a closed form within SIX_JOINT_CHECK_TOLERANCE of FK (a rounded
# URDF) to float precision: the error squares each step, 1e-6 → 1e-12 → 1e-16.
_REFINE_STEPS = 3


def joint_frame(model: ArmModel) -> tuple[np.ndarray, np.ndarray, np.ndarray] | str:
    """(origins (6, 3), unit axes (6, 3), tip pose) at q = 0, or why not six joints."""
    if model.dof != 6:
        return f'needs 6 joints; {model.name or "this arm"} has {model.dof}'
    origins, axes, _ = model.joint_origins_and_axes(np.zeros(6))
    # The numpy walk, not the kernel: recognising the family (arm_info, arm_config) solves
    # nothing and must not load numba.
    return origins, np.array([unit(a) for a in axes]), model.frames(np.zeros(6))[-1]


def axis_rules(axes: np.ndarray, parallel_pairs: Sequence[tuple[int, int]],
               perpendicular_pairs: Sequence[tuple[int, int]]) -> tuple[list[float], str]:
    """(how far each pair is from the rule, rad; '' or why the first that breaks it
    does), the pairs' axes (0-based) parallel, then perpendicular, to ANGLE_TOLERANCE."""
    drifts: list[float] = []
    for pairs, measure, words in ((parallel_pairs, parallel, 'not parallel ({:.3g} rad, '),
                                  (perpendicular_pairs, perpendicular,
                                   'not perpendicular ({:.3g} rad off, ')):
        for i, j in pairs:
            drifts.append(measure(axes[i], axes[j]))
            if drifts[-1] > ANGLE_TOLERANCE:
                return drifts, (f'axes {i + 1} and {j + 1} are ' + words.format(drifts[-1])
                                + f'tolerance {ANGLE_TOLERANCE:g})')
    return drifts, ''


def frame_and_rules(model: ArmModel, parallel_pairs: Sequence[tuple[int, int]],
                    perpendicular_pairs: Sequence[tuple[int, int]],
                    then: Callable[[np.ndarray, np.ndarray, np.ndarray, list[float]],
                                   Family | str]) -> Family | str:
    """``then(origins, axes, tip pose at q = 0, drifts)`` for a six-joint arm whose axes keep
    the rules (``axis_rules``): the rest of a family's recognition; else why not."""
    frame = joint_frame(model)
    if isinstance(frame, str):
        return frame
    drifts, reason = axis_rules(frame[1], parallel_pairs, perpendicular_pairs)
    return reason or then(*frame, drifts)


def check_against_fk(model: ArmModel, family: Family) -> str:
    """'' when the closed form of ``family`` finds random configurations again, else why."""
    engine = family.engine(model, family)

    def solve(q: np.ndarray, frames: np.ndarray) -> tuple:
        return engine.solve_raw(frames[:, :3, 3], frames[:, :3, :3], q)

    def miss(good: np.ndarray, frame: np.ndarray, _: int) -> float:
        reached = model.fk_batch(good)
        return max(float(np.abs(reached[:, :3, 3] - frame[:3, 3]).max()),
                   float(np.abs(reached[:, :3, :3] - frame[:3, :3]).max()))

    return fk_check(model, solve, miss, family.name,
                    f'{LINE_TOLERANCE:g} m / {ANGLE_TOLERANCE:g} rad',
                    f'geometry drift {family.drift:.3g}', SIX_JOINT_CHECK_TOLERANCE)


# ---------------------------------------------------------------------- the engine
class FamilyEngine:
    """The vectorised closed form of a six-joint family: 8 raw solutions per pose."""

    point_words = 'the solved point'

    def __init__(self, model: ArmModel, family: Family) -> None:
        self.model = model
        self.family = family
        o, w = family.origins, family.axes
        self.o, self.w = o, w
        n = w[1]
        self.n = n
        self.signs = np.array([1.0 if np.dot(w[i], n) > 0.0 else -1.0 for i in range(6)])
        zero = family.zero
        self.r0 = zero[:3, :3]
        self.p0 = zero[:3, 3]
        self.point_tool = self.r0.T @ (family.point - self.p0)
        up = np.array([0.0, 0.0, 1.0])
        self.up = w[0] * (1.0 if np.dot(w[0], up) >= 0.0 else -1.0) \
            if abs(np.dot(w[0], up)) > 0.5 else w[0]
        # Forward at q = 0: across axes 1 and 2, toward the solved point.
        forward = np.cross(n, w[0])
        if np.dot(family.point - o[0], forward) < 0.0:
            forward = -forward
        self.forward = unit(forward - np.dot(forward, w[0]) * w[0])
        self.side = np.cross(w[0], self.forward)
        self.d = float(np.dot(family.point - o[0], n))
        self.k1 = float(np.dot(w[0], n))
        self.w1xn = np.cross(w[0], n)
        self.carried = self._carried_point()
        # The wrist bend: a·cos q5 + b·sin q5 + c = (axis before the wrist)·(axis 6).
        before = self._bend_axis()
        k = float(np.dot(before, w[4]))
        self.q5_coeffs = (float(np.dot(before, w[5])) - k * float(np.dot(w[4], w[5])),
                          float(np.dot(before, np.cross(w[4], w[5]))),
                          k * float(np.dot(w[4], w[5])))
        self.delta = math.atan2(self.q5_coeffs[1], self.q5_coeffs[0])
        self.w6_perp = unit(np.cross(w[5], [1.0, 0.0, 0.0]) if abs(w[5][0]) < 0.9
                            else np.cross(w[5], [0.0, 1.0, 0.0]))
        # The two-link triangle in the plane across n: axis 2 → axis 3 → carried point.
        self.triangle = PitchTriangle(n, o[1], o[2], w[1], w[2], self.carried, self.up)

    def _carried_point(self) -> np.ndarray:
        """The point axes 2 and 3 carry (zero pose)."""
        return self.family.point

    def _bend_axis(self) -> np.ndarray:
        """The axis the wrist bend is measured from (the one before axis 5)."""
        return self.w[3]

    # -------------------------------------------------------------- pieces
    def _yaw(self, points: np.ndarray, seed_q1: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q1 (M, 2), front first; solvable (M,); flags (M, 2)."""
        w1, n, o1 = self.w[0], self.n, self.o[0]
        v = points - o1
        along = v @ w1
        a = v @ n - self.k1 * along
        b = v @ self.w1xn
        centre, half, solvable, _ = cosine_equation(a, b, self.d - self.k1 * along)
        on_axis = np.hypot(a, b) < SINGULAR
        # On the axis any yaw does: the seed's, and the seed's + π (centre ± half).
        centre = np.where(on_axis, seed_q1 + 0.5 * math.pi, centre)
        half = np.where(on_axis, 0.5 * math.pi, half)
        solvable = solvable | on_axis
        q1 = np.stack([centre + half, centre - half], axis=1)
        # Front: the solved point ahead of the arm once the yaw is undone.
        vf, vg = v @ self.forward, v @ self.side
        score = np.cos(q1) * vf[:, None] + np.sin(q1) * vg[:, None]
        swap = score[:, 1] > score[:, 0]
        q1 = np.where(swap[:, None], q1[:, ::-1], q1)
        flags = np.where(on_axis[:, None], SHOULDER_SINGULAR, 0) * np.ones((1, 2), int)
        return q1, solvable, flags

    def _triangle(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                  np.ndarray, np.ndarray]:
        """q2, q3 (M, 2), elbow up first; solvable (M,); too near (M,); flags (M, 2)."""
        q2, q3, solvable, too_near, edge = self.triangle.solve(x)
        flags = np.where(edge[:, None], STRETCHED, 0) * np.ones((1, 2), int)
        return q2, q3, solvable, too_near, flags

    def _bend(self, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The wrist bend joint (q5) (M, 2), noflip first, and the singular mask (M,)."""
        a, b, c = self.q5_coeffs
        _, half, _, _ = cosine_equation(a, b, rhs - c)
        return np.stack([self.delta + half, self.delta - half], axis=1), \
            np.abs(np.sin(half)) < SINGULAR

    def _undo_yaw(self, q1: np.ndarray, points: np.ndarray) -> np.ndarray:
        """g1⁻¹·points for yaws q1 (M,), points (M, 3)."""
        return rotate(self.w[0], -q1, points - self.o[0]) + self.o[0]

    # -------------------------------------------------------------- solve
    def solve_raw(self, positions: np.ndarray, rotations: np.ndarray, seeds: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Eight solutions per pose, unwrapped, in BRANCHES order.

        Args:
            positions: (N, 3) tip positions, m.
            rotations: (N, 3, 3) tip rotations.
            seeds: (N, 6) or (6,) reference joints, rad (used where a joint is free).

        Returns:
            (q (N, 8, 6), reachable (N, 8), flags (N, 8): bits WRIST_SINGULAR, ...). A
            pose out of reach gives finite angles with reachable False, never NaN;
            ``last_too_near`` (N, 8) tells a point inside the inner hole from one beyond.
        """
        positions = np.asarray(positions, dtype=float).reshape(-1, 3)
        rotations = np.asarray(rotations, dtype=float).reshape(-1, 3, 3)
        count = len(positions)
        seeds = np.broadcast_to(np.asarray(seeds, dtype=float), (count, 6))
        point = np.einsum('nij,j->ni', rotations, self.point_tool) + positions
        return self._solve(point, rotations, seeds)

    def _solve(self, point: np.ndarray, rotations: np.ndarray, seeds: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        raise NotImplementedError


# ---------------------------------------------------------------------- one pose
class ScalarEngine:
    """FamilyEngine's closed form for one pose, compiled (``family_kernel``): the engine's
    constants in plain floats, packed into ``table``; same labels and order."""

    ur = False

    def __init__(self, engine: FamilyEngine) -> None:
        def t(v: np.ndarray) -> tuple:
            return tuple(float(x) for x in np.ravel(v))
        e = engine
        self.w = tuple(t(a) for a in e.w)
        self.o = tuple(t(a) for a in e.o)
        self.n = t(e.n)
        self.s = t(e.signs)
        self.r0t = t(e.r0.T)
        self.point_tool = t(e.point_tool)
        self.up, self.forward = t(e.up), t(e.forward)
        self.side = t(e.side)
        self.d, self.k1, self.w1xn = e.d, e.k1, t(e.w1xn)
        self.q5 = e.q5_coeffs
        self.delta = e.delta
        self.triangle = e.triangle
        self.w6_perp = t(e.w6_perp)
        self.r0t_w6 = t(e.r0.T @ e.w[5])
        self._family_constants(engine)
        self.table = family_kernel.table_of(self)

    def _family_constants(self, engine: FamilyEngine) -> None:
        """The family's own constants (before ``table`` is packed)."""

    def solve_arrays(self, position: Sequence[float], rotation: Sequence[float],
                     seed: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
        """(q (8, 6) rad, reachable (8,), flags (8,), every branch too near) in BRANCHES
        order: one compiled call."""
        q, ok, flags = np.empty((8, 6)), np.empty(8, np.bool_), np.empty(8, np.int64)
        near_all = family_kernel.family_solve(
            self.table, self.ur, np.asarray(position, dtype=float),
            np.asarray(rotation, dtype=float).reshape(-1), np.asarray(seed, dtype=float),
            q, ok, flags)
        return q, ok, flags, bool(near_all)

    def solve(self, position: Sequence[float], rotation: Sequence[float],
              seed: Sequence[float]) -> tuple[list[tuple[tuple, bool, int]], bool]:
        """([(q, reachable, flags)] × 8 in BRANCHES order, every branch too near).

        Args:
            position: tip position, m. rotation: row-major 9 floats. seed: 6 joints, rad.
        """
        q, ok, flags, near_all = self.solve_arrays(position, rotation, seed)
        return (list(zip(map(tuple, q.tolist()), ok.tolist(), flags.tolist(), strict=True)),
                near_all)


# ---------------------------------------------------------------------- the solver
class FamilySolver(ClosedFormBase):
    """Every closed-form solution of a UR-family or OPW-family arm, labelled.

    Labels are those of the spherical-wrist solver (closed_form.BRANCHES):
    ``{front|back}_{up|down}_{noflip|flip}``: front has the solved point (UR: where axes 5
    and 6 cross; OPW: the wrist centre) ahead of the arm, up the elbow above the line from
    the shoulder to it, noflip the wrist bend (q5) on the positive side of its straight
    value. Joints whose range spans more than a full turn give every whole-turn copy inside
    the limits, with the same label (the links are where they were).

    Goals:
        FULL_POSE: position and orientation (quaternion x, y, z, w or 3×3 matrix).
        TOOL_DOWN: tool z along −Z of the base, the heading about it from the seed.
        POSITION: the seed's tool orientation held; when no solution inside the limits
            keeps it, damped least squares from the seed answers (branch '').
    """

    name = 'closed_form'
    labelled = True
    branch_labels = BRANCHES

    def __init__(self, model: ArmModel, workspace: Workspace, family: Family,
                 home: Sequence[float] | None = None) -> None:
        """Prepare the engine of ``family`` (from ``recognise``) for ``model``.

        Args:
            model: the arm.
            workspace: the tip reach pre-check.
            family: a 'ur' or 'opw' family of ``model``.
            home: default seed (rad); the zero pose clamped into the limits when None.
        """
        super().__init__(model, workspace)
        self.family = family
        self.engine = family.engine(model, family)
        self.scalar = self.engine.scalar(self.engine)
        self.ranges, self.gate, self.home = prepared_limits(model, workspace, home)
        r = self.ranges
        # Per joint: the wrap constants of JointRanges and whether a second copy can fit.
        self._joint_constants = tuple(
            (shift, base, top, lo, hi, hi - lo >= TWO_PI - 2.0 * LIMIT_TOLERANCE)
            for shift, base, top, lo, hi in zip(r.shift, r.base, r.top, r.lower, r.upper,
                                                strict=True))
        self._dls: Solver | None = None
        self._lower = np.array(r.lower, dtype=float)
        self._upper = np.array(r.upper, dtype=float)
        # Load the compiled closed form now (from numba's disk cache, tens of ms), not
        # inside the first request's solve.
        zero = model.fk(np.asarray(self.home))
        self._nearest_inside(zero[:3, 3], zero[:3, :3], self.home)
        self.scalar.solve_arrays(zero[:3, 3], zero[:3, :3], self.home)

    # ------------------------------------------------------------------ batches
    def solve_poses(self, positions: np.ndarray, rotations: np.ndarray,
                    seeds: np.ndarray | Sequence[float] | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every branch of N poses in one call, inside the joint limits.

        Args:
            positions: (N, 3) tip positions, m.
            rotations: (N, 3, 3) tip rotations.
            seeds: (N, 6) or (6,) reference joints, rad (for free joints at
                singularities and for the whole turn nearest the seed); home when None.

        Returns:
            (q (N, 8, 6) rad in BRANCHES order, valid (N, 8), flags (N, 8)): valid means
            reachable and inside the limits; q of a multi-turn joint is the whole-turn copy
            nearest the seed (the others are q ± 2π inside the limits, see
            ``turn_copies``); invalid rows hold finite unwrapped angles.
        """
        seeds = np.asarray(self.home if seeds is None else seeds, dtype=float)
        raw, ok, flags = self.engine.solve_raw(positions, rotations, seeds)
        return (*wrap_rows(raw, ok, self.ranges, seeds), flags)

    def solve_all(self, position: Sequence[float], rotation: Sequence[float],
                  seed: Sequence[float] | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every distinct solution of one pose: the 8 branches, each as the whole-turn copy
        nearest the seed (the peers' all-solutions call, with the joint limits applied): the
        copy a solve naming the branch answers. One compiled call.

        Args:
            position: tip position, m (3 floats). rotation: tip rotation, row-major 9
                floats (or a 3×3 array). seed: reference joints, rad; home when None.

        Returns:
            (q (8, 6) rad in BRANCHES order, valid (8,), flags (8,)); invalid rows hold
            finite unwrapped angles.
        """
        q, valid, flags, _, _ = self._nearest_inside(
            position, rotation, self.home if seed is None else seed)
        return q, valid, flags

    def solve_all_poses(self, positions: np.ndarray, rotations: np.ndarray,
                        seed: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """``solve_all`` of N poses ((N, 3) m, (N, 3, 3)) from one seed in one compiled
        call: (q (N, 8, 6), valid (N, 8))."""
        count = len(positions)
        inputs = np.empty((count, 18))
        inputs[:, 0:3], inputs[:, 3:12], inputs[:, 12:18] = positions, \
            np.reshape(rotations, (count, 9)), seed
        q, valid = np.empty((count, 8, 6)), np.empty((count, 8), np.bool_)
        family_kernel.nearest_inside_poses(self.scalar.table, self.scalar.ur, inputs,
                                           self._lower, self._upper, LIMIT_TOLERANCE, q,
                                           valid, np.empty((count, 8), np.int64),
                                           np.empty((count, 8)))
        return q, valid

    def _nearest_inside(self, position: Sequence[float], rotation: Sequence[float],
                        seed: Sequence[float]
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool]:
        """``family_kernel.nearest_inside``: (q, valid, flags, largest move from the seed
        (inf where not valid), every branch too near)."""
        inputs = np.empty(18)
        inputs[0:3] = position
        inputs[3:12] = np.ravel(rotation) if isinstance(rotation, np.ndarray) else rotation
        inputs[12:18] = seed
        q, valid = np.empty((8, 6)), np.empty(8, np.bool_)
        flags, steps = np.empty(8, np.int64), np.empty(8)
        near_all = family_kernel.nearest_inside(self.scalar.table, self.scalar.ur, inputs,
                                                self._lower, self._upper, LIMIT_TOLERANCE, q,
                                                valid, flags, steps)
        return q, valid, flags, steps, bool(near_all)

    def turn_copies(self, q: Sequence[float]) -> list[tuple[float, ...]]:
        """Every whole-turn copy of ``q`` (rad) inside the limits (q itself included)."""
        choices = [turns(float(angle), lo, hi) for angle, lo, hi in
                   zip(q, self.ranges.lower, self.ranges.upper, strict=True)]
        return [tuple(c) for c in itertools.product(*choices)]

    # ------------------------------------------------------------------ one pose
    def all_solutions(self, position: Sequence[float], rotation: Sequence[float],
                      reference: Sequence[float]
                      ) -> tuple[list[tuple[str, tuple, int]], list[tuple[str, float, str]],
                                 ErrorCode, str]:
        """Labelled solutions of one pose inside the limits, with every whole-turn copy.

        Args:
            position: tip position, m. rotation: tip rotation, row-major 9 floats.
            reference: the seed, rad (free joints at singularities keep its values).

        Returns:
            (solutions [(label, per-joint whole-turn copies inside the limits, flags)],
            out-of-limit branches [(label, rad past, words)], code, reason): code OK
            when some branch is reachable, else OUT_OF_REACH or INSIDE_INNER_HOLE and why.
        """
        raw, too_near = self.scalar.solve(position, rotation, reference)
        ok = [good for _, good, _ in raw]
        flags = [flag for _, _, flag in raw]
        raw = [q for q, _, _ in raw]
        if not any(ok):
            point = self.engine.point_words
            if too_near:
                return [], [], ErrorCode.INSIDE_INNER_HOLE, (
                    f'the point {point} is too near the shoulder for this orientation')
            return [], [], ErrorCode.OUT_OF_REACH, (
                f'the point {point} is out of reach for this orientation')
        found, outside = [], []
        names = self.model.joint_names
        constants = self._joint_constants
        for label, q, good, flag in zip(BRANCHES, raw, ok, flags, strict=True):
            if not good:
                continue
            # turns() inlined (the hot path): the lowest copy, then more for long ranges.
            choices = []
            for angle, (shift, base, top, lo, hi, multi) in zip(q, constants, strict=True):
                first = (angle + shift) % TWO_PI + base
                if first > top:
                    break
                first = lo if first < lo else hi if first > hi else first
                if multi:
                    copies = [first]
                    following = first + TWO_PI
                    while following <= top:
                        copies.append(hi if following > hi else following)
                        following += TWO_PI
                    choices.append(copies)
                else:
                    choices.append((first,))
            else:
                found.append((label, choices, int(flag)))
                continue
            outside.append(outside_limits(label, q, self.ranges, names))
        return found, outside, ErrorCode.OK, ''

    def goal_rotation(self, goal: int, orientation: object, reference: Sequence[float]
                      ) -> tuple[tuple[float, ...] | None, str]:
        """The tool rotation a goal asks of the closed form (row-major 9 floats), or (None,
        reason): FULL_POSE its own; TOOL_DOWN down, headed as the seed's tool; POSITION
        the seed's."""
        if goal == GoalType.FULL_POSE:
            return goal_orientation(orientation)
        seed_rotation = self.model.fk(np.asarray(reference))[:3, :3]
        if goal == GoalType.POSITION:
            return tuple(seed_rotation.reshape(-1).tolist()), ''
        return tool_down_rotation(seed_rotation.reshape(-1).tolist()), ''

    def solve(self, position: object, orientation: object = None,
              goal: GoalType = GoalType.POSITION, seed: object = None,
              options: SolveOptions = _DEFAULT_OPTIONS) -> IKResult:
        """One goal (FULL_POSE, TOOL_DOWN or POSITION, see the class docstring) from the
        seed (home when None), with the arguments of ``SphericalWristSolver.solve``; never
        raises. JOINT_LIMITS names the branch nearest to its limits and how far out."""
        start = perf_counter()
        target, reference, failure = checked_request(self, start, options, BRANCHES, goal,
                                                     position, seed)
        if failure is not None:
            return failure
        branch = options.branch
        rotation, reason = self.goal_rotation(goal, orientation, reference)
        if rotation is None:
            return self._failure(start, ErrorCode.INVALID_INPUT, reason)
        if not options.return_all:
            # The common case, compiled: every branch as its copy nearest the seed, the
            # nearest (or the named one) when it lies inside the limits. The other cases
            # (none inside, a named branch outside, every copy wanted) take the path
            # below, which also says why.
            q, valid, flags, steps, _ = self._nearest_inside(target, rotation, reference)
            index = int(np.argmin(steps)) if branch in NEAREST else BRANCHES.index(branch)
            if valid[index]:
                reason = f'solved in closed form ({self.family.name} family)'
                if flags[index]:
                    reason += f'; {flag_words(int(flags[index]))}'
                return self._within_tolerance(
                    solved(self.model, start, target, goal, rotation, BRANCHES[index],
                           tuple(q[index].tolist()), float(steps[index]), reason, []),
                    goal, target, rotation, options)
        found, outside, code, reason = self.all_solutions(target, rotation, reference)
        if code == ErrorCode.OK:
            result = answer_nearest(self, start, target, goal, rotation, self.family.name,
                                    found, outside, reference, branch, options.return_all,
                                    'pose')
            if result.success:
                return self._within_tolerance(result, goal, target, rotation, options)
            if goal != GoalType.POSITION:
                return result
            code, reason = result.code, result.reason
        if goal == GoalType.POSITION:
            return self._position_by_dls(start, target, reference, options, reason)
        return self._failure(start, code, reason)

    def _within_tolerance(self, result: IKResult, goal_type: int, target: Sequence[float],
                          rotation: Sequence[float], options: SolveOptions) -> IKResult:
        """``result`` when its FK meets the request's tolerances; else the closed form of a
        URDF whose rounding it absorbs only to SIX_JOINT_CHECK_TOLERANCE, refined by Newton
        steps toward the pose the branch was solved for, or NOT_CONVERGED with the miss."""
        if result.position_error <= options.tolerance and \
                result.orientation_error <= options.orientation_tolerance:
            return result
        started = perf_counter()
        missed = (result.position_error, result.orientation_error)
        goal = np.eye(4)
        goal[:3, :3] = np.reshape(rotation, (3, 3))
        goal[:3, 3] = target
        q = np.array(result.q, dtype=float)
        for _ in range(_REFINE_STEPS):
            pose = self.model.fk(q)
            turn = goal[:3, :3] @ pose[:3, :3].T
            error = np.concatenate([goal[:3, 3] - pose[:3, 3], 0.5 * np.array(
                [turn[2, 1] - turn[1, 2], turn[0, 2] - turn[2, 0], turn[1, 0] - turn[0, 1]])])
            # Clamped: a solution on a joint limit stays inside it.
            q = self.model.clamp(q + np.linalg.lstsq(self.model.jacobian(q), error,
                                                     rcond=None)[0])
        better = solved(self.model, 0.0, target, goal_type, rotation, result.branch,
                        tuple(q.tolist()), result.max_joint_step, result.reason,
                        result.solutions)
        better.solve_time = result.solve_time + perf_counter() - started
        words = f'closed form missed FK by {missed[0]:.3g} m / {missed[1]:.3g} rad'
        if better.position_error <= options.tolerance and \
                better.orientation_error <= options.orientation_tolerance:
            better.reason += f'; {words}, refined by {_REFINE_STEPS} Newton steps'
            return better
        return IKResult(ErrorCode.NOT_CONVERGED,
                        f'{words} and Newton steps from it leave {better.position_error:.3g} m / '
                        f'{better.orientation_error:.3g} rad, more than the tolerance '
                        f'{options.tolerance:g} m / {options.orientation_tolerance:g} rad',
                        result.q, result.branch, result.tip_position, result.position_error,
                        result.orientation_error, solve_time=better.solve_time)

    def _position_by_dls(self, start: float, target: Sequence[float],
                         reference: Sequence[float], options: SolveOptions,
                         why: str) -> IKResult:
        """A position goal the seed's tool orientation cannot reach: DLS from the seed."""
        if self._dls is None:
            from arm_kinematics.ik.solvers.dls import DLSSolver
            self._dls = DLSSolver(self.model, self.workspace)
        # DLS knows no branches (it refuses a label): its answer is labelled '' anyway.
        options = options.with_changes(branch='') if options.branch else options
        result = self._dls.solve(target, None, GoalType.POSITION, reference, options)
        note = (f"the seed's tool orientation gives no solution ({why}); damped least "
                'squares from the seed')
        result.reason = f'{note}: {result.reason}' if result.reason else note
        result.solve_time = perf_counter() - start
        return result
