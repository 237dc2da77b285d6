"""Closed-form IK of a yaw + two-parallel-pitch arm (pointer3, manipulator3d).

Every number (shoulder position, link lengths, axis signs, zero-pose link directions)
is read from the ArmModel built from the URDF; nothing about a particular arm is
restated here. Units: metres and radians throughout.

The planar convention: after the yaw, the arm moves in a vertical plane spanned by a
horizontal unit vector ``f`` and the base ``z`` with ``a1 × f = z`` (a1 = shoulder axis),
so a positive shoulder rotation turns counter-clockwise in (f, z). Link 1 then points at
``alpha = phi1 + q2`` and link 2 at ``alpha + beta`` with ``beta = phi2 - phi1 + s·q3``
(s = ±1 when the elbow axis is parallel / antiparallel to the shoulder axis).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math
from time import perf_counter

import numpy as np

from arm_kinematics.ik.closed_form.common import (
    check_batch_arguments,
    GEOMETRY_TOLERANCE,
    LIMIT_TOLERANCE,
    PI,
    prepared_limits,
    target_and_seed,
    TWO_PI,
)
from arm_kinematics.ik.result import ErrorCode, GoalType, IKResult, Solution
from arm_kinematics.ik.solvers.base import ClosedFormBase, NEAREST, SolveOptions, Workspace
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.model.kernel import compiled

FAMILY_NAME = 'yaw_two_pitch'
# Below this horizontal distance (m) from the yaw axis the bearing is meaningless and
# the yaw is taken from the seed instead; the lateral error this allows is < 1e-12 m.
ON_AXIS = 1e-12

BRANCHES = ('elbow_up', 'elbow_down', 'flipped_elbow_up', 'flipped_elbow_down')
_DEFAULT_OPTIONS = SolveOptions()


@dataclass(frozen=True)
class YawPitchGeometry:
    """A yaw joint and two parallel horizontal pitch joints reduced to numbers.

    Attributes:
        shoulder: point where the shoulder axis meets the yaw axis (m, base frame).
        yaw_sign: +1 when the yaw axis is +Z, -1 when it is -Z.
        plane: bearing of the planar forward direction ``f`` at yaw 0 (rad).
        facing: +1 when the arm faces ``f`` (zero pose, or its first move, points along
            +f), -1 when it faces -f; "front" solutions face the target.
        l1: shoulder → elbow, in the plane (m).
        l2: elbow → end point (tip or wrist centre), in the plane (m).
        phi1, phi2: planar angles of link 1 and link 2 at q = 0 (rad).
        elbow_sign: +1 when the elbow axis is parallel to the shoulder axis, else -1.
        lateral: offset of the end point along the shoulder axis (m); 0 for the arms the
            solvers accept, non-zero only for a wrist held bent sideways.
    """

    shoulder: tuple[float, float, float]
    yaw_sign: float
    plane: float
    facing: float
    l1: float
    l2: float
    phi1: float
    phi2: float
    elbow_sign: float
    lateral: float = 0.0

    def forward(self, q1: float, q2: float, q3: float) -> tuple[float, float, float]:
        """End point (m, base frame) for yaw q1, shoulder q2, elbow q3 (rad): planar FK."""
        alpha = self.phi1 + q2
        gamma = self.phi2 + q2 + self.elbow_sign * q3
        along = self.l1 * math.cos(alpha) + self.l2 * math.cos(gamma)
        up = self.l1 * math.sin(alpha) + self.l2 * math.sin(gamma)
        bearing = self.plane + self.yaw_sign * q1
        cb, sb = math.cos(bearing), math.sin(bearing)
        sx, sy, sz = self.shoulder
        # The shoulder axis points along (sin, −cos) of the plane bearing (z × a1 = f).
        side = self.lateral
        return sx + along * cb + side * sb, sy + along * sb - side * cb, sz + up


def yaw_pitch_geometry(origins: np.ndarray, axes: np.ndarray, end: np.ndarray,
                       allow_lateral: bool = False) -> YawPitchGeometry | str:
    """Reduce joints 0..2 (world origins and axes at q = 0) and an end point to numbers.

    Args:
        origins: (≥3, 3) joint origins at q = 0 (m); only the first three are read.
        axes: (≥3, 3) unit joint axes at q = 0.
        end: the point the two pitch links carry (tip, or the wrist centre), at q = 0.
        allow_lateral: accept an end point offset along the shoulder axis.

    Returns:
        The geometry, or a sentence saying why the joints are not of this kind.
    """
    tol = GEOMETRY_TOLERANCE
    a0, a1, a2 = (np.asarray(axes[i], dtype=float) for i in range(3))
    if abs(abs(a0[2]) - 1.0) > tol:
        return f'the first joint axis {np.round(a0, 6).tolist()} is not vertical (no base yaw)'
    if abs(a1[2]) > tol:
        return f'the second joint axis {np.round(a1, 6).tolist()} is not horizontal'
    cross = float(np.dot(a1, a2))
    if abs(abs(cross) - 1.0) > tol:
        return 'the second and third joint axes are not parallel'
    o0, o1, o2 = (np.asarray(origins[i], dtype=float) for i in range(3))
    end = np.asarray(end, dtype=float)
    # Joint origins may sit anywhere along their axes: project them into the arm plane.
    shoulder = o1 - np.dot(o1 - o0, a1) * a1
    if math.hypot(*(shoulder - o0)[:2]) > tol:
        return 'the shoulder axis does not cross the yaw axis (shoulder offset)'
    elbow = o2 - np.dot(o2 - shoulder, a2) * a2
    lateral = float(np.dot(end - shoulder, a1))
    if abs(lateral) > tol and not allow_lateral:
        return 'the end point is offset sideways from the plane of the pitch joints'
    if abs(lateral) <= tol:
        lateral = 0.0
    end = end - lateral * a1     # its projection into the plane of the pitch joints
    up = np.array([0.0, 0.0, 1.0])
    forward = np.cross(up, a1)   # a1 × f = z: positive shoulder motion is counter-clockwise
    link1, link2 = elbow - shoulder, end - elbow
    l1, l2 = float(np.linalg.norm(link1)), float(np.linalg.norm(link2))
    if l1 < tol or l2 < tol:
        return f'degenerate link lengths l1={l1:.3g} m, l2={l2:.3g} m'
    # The arm faces where its zero pose points; a vertical zero pose faces where the
    # first positive shoulder move takes it.
    reach = end - shoulder
    along = float(np.dot(reach, forward))
    if abs(along) < tol:
        along = float(np.dot(np.cross(a1, reach), forward))
    return YawPitchGeometry(
        shoulder=(float(shoulder[0]), float(shoulder[1]), float(shoulder[2])),
        yaw_sign=1.0 if a0[2] > 0.0 else -1.0,
        plane=math.atan2(forward[1], forward[0]),
        facing=-1.0 if along < 0.0 else 1.0,
        l1=l1, l2=l2,
        phi1=math.atan2(float(link1[2]), float(np.dot(link1, forward))),
        phi2=math.atan2(float(link2[2]), float(np.dot(link2, forward))),
        elbow_sign=1.0 if cross > 0.0 else -1.0,
        lateral=lateral)


def arm_triangle(g: YawPitchGeometry, target: Sequence[float],
                 seed_yaw: float) -> tuple[float, float, float, float, float] | None:
    """Yaws and planar link angles that put the end point of ``g`` on ``target``.

    The target must have passed the reach check (|c| may exceed 1 by rounding only).

    Args:
        g: the arm geometry.
        target: end point (m, base frame).
        seed_yaw: yaw (rad) used when the target lies on the yaw axis.

    Returns:
        (yaw, back_yaw, alpha_up, alpha_down, up_beta), radians: the yaw facing the target
        and the one reaching over (yaw + π without a lateral offset), link 1's planar
        angle for the elbow above / below the shoulder→target line, and the planar elbow
        angle of the elbow-up solution (elbow-down: its negative). The reaching-over
        solutions mirror these: alpha → π − alpha, beta → −beta. None when a lateral
        offset keeps the end point from the target (too near the yaw axis).
    """
    sx, sy, sz = g.shoulder
    dx, dy, dz = target[0] - sx, target[1] - sy, target[2] - sz
    rho = math.hypot(dx, dy)
    side = g.lateral
    if side != 0.0:
        if rho < abs(side):
            return None
        # Horizontal reach u·f + side·n = (dx, dy) with n ⟂ f: |u| = √(ρ² − side²).
        u = g.facing * math.sqrt((rho - side) * (rho + side))
        bearing = math.atan2(dy, dx)
        yaw = g.yaw_sign * (bearing + math.atan2(side, u) - g.plane)
        back_yaw = g.yaw_sign * (bearing + math.atan2(side, -u) - g.plane)
    elif rho > ON_AXIS:
        # Face the target: the facing direction (plane bearing, or its opposite) turned
        # by the yaw points along the target's bearing.
        heading = math.atan2(dy, dx) - g.plane
        if g.facing < 0.0:
            heading -= PI
        yaw = g.yaw_sign * heading
        back_yaw = yaw + PI
        u = g.facing * rho
    else:
        yaw = seed_yaw
        back_yaw = yaw + PI
        bearing = g.plane + g.yaw_sign * yaw
        u = dx * math.cos(bearing) + dy * math.sin(bearing)
    l1, l2 = g.l1, g.l2
    planar_sq = (u * u if side != 0.0 else dx * dx + dy * dy) + dz * dz
    c = (planar_sq - (l1 * l1 + l2 * l2)) / (2.0 * l1 * l2)
    # Clamped, so a target one ulp past full stretch gives a straight arm, never NaN.
    beta = math.acos(1.0 if c > 1.0 else -1.0 if c < -1.0 else c)
    # Elbow above the shoulder→target line ⇔ beta·u < 0 (sign of the planar cross product).
    up_beta = -beta if g.facing > 0.0 else beta
    gamma = math.atan2(dz, u)
    sin_b = l2 * math.sin(up_beta)
    cos_b = l1 + l2 * math.cos(up_beta)
    return (yaw, back_yaw, gamma - math.atan2(sin_b, cos_b), gamma - math.atan2(-sin_b, cos_b),
            up_beta)


class AnalyticSolver(ClosedFormBase):
    """Exact IK of yaw + two parallel pitch joints; position goals only.

    Up to four solutions: ``elbow_up`` / ``elbow_down`` facing the target and the
    base-flipped ``flipped_elbow_up`` / ``flipped_elbow_down`` (yaw + π, reaching over
    the top, same link positions in space). "Up" means the elbow lies above the line
    from the shoulder to the target.
    """

    name = 'analytic'
    labelled = True
    branch_labels = BRANCHES

    def __init__(self, model: ArmModel, workspace: Workspace,
                 home: Sequence[float] | None = None) -> None:
        """Prepare the constants of ``model``.

        Args:
            model: the arm; an inapplicable one makes every solve SOLVER_NOT_APPLICABLE.
            workspace: the reach pre-check, normally ``workspace_from_model(model, ...)``.
            home: default seed (rad); the zero pose clamped into the limits when None.
        """
        super().__init__(model, workspace)
        self._not_applicable = self.applicability(model)
        self.ranges, self.gate, self.home = prepared_limits(model, workspace, home)
        if self._not_applicable:
            return
        origins, axes, tip = model.joint_origins_and_axes(np.zeros(model.dof))
        geometry = yaw_pitch_geometry(origins, axes, tip)
        assert isinstance(geometry, YawPitchGeometry)
        self.geometry = geometry
        g = geometry
        self._elbow_offset = g.phi2 - g.phi1
        # The compiled batch's constant arguments, built once: path IK calls it per sample.
        gate, ranges = self.gate, self.ranges
        self._kernel_constants = (
            np.array([*g.shoulder, g.plane, g.facing, g.yaw_sign, g.l1, g.l2, g.phi1,
                      g.elbow_sign, self._elbow_offset]),
            np.array([*gate.shoulder, gate.min_z, gate.max_r, gate.min_r]),
            np.array(ranges.lower), np.array(ranges.upper),
            np.array([j in ranges.multi_turn for j in range(3)], dtype=np.bool_))
        # Load the compiled batch now (from numba's disk cache), not inside a request.
        self._branches_of(np.zeros((1, 3)), self.home, BRANCHES)

    @classmethod
    def applicability(cls, model: ArmModel) -> str:
        """'' for yaw + two parallel horizontal pitch joints in one plane, else why not."""
        if model.dof != 3:
            return (f'the analytic solver needs 3 joints (yaw, shoulder, elbow); '
                    f'{model.name or "this arm"} has {model.dof}')
        origins, axes, tip = model.joint_origins_and_axes(np.zeros(model.dof))
        geometry = yaw_pitch_geometry(origins, axes, tip)
        return geometry if isinstance(geometry, str) else ''

    # ------------------------------------------------------------------ scalar solve
    def candidates(self, target: tuple[float, float, float],
                   seed_yaw: float) -> list[tuple[str, float, float, float]]:
        """All four labelled (q1, q2, q3) of a target that passed the reach pre-check.

        Angles are not yet wrapped into the joint limits. ``seed_yaw`` is used only when
        the target lies on the yaw axis.
        """
        g = self.geometry
        yaw, flipped, alpha_up, alpha_down, up_beta = arm_triangle(g, target, seed_yaw)
        phi1, offset, s = g.phi1, self._elbow_offset, g.elbow_sign
        return [
            ('elbow_up', yaw, alpha_up - phi1, s * (up_beta - offset)),
            ('elbow_down', yaw, alpha_down - phi1, s * (-up_beta - offset)),
            # Same links in space with the base turned half a turn: alpha → π − alpha.
            ('flipped_elbow_up', flipped, PI - alpha_up - phi1, s * (-up_beta - offset)),
            ('flipped_elbow_down', flipped, PI - alpha_down - phi1, s * (up_beta - offset)),
        ]

    def solve(self, position: object, orientation: object = None,
              goal: GoalType = GoalType.POSITION, seed: object = None,
              options: SolveOptions = _DEFAULT_OPTIONS) -> IKResult:
        """Solve a position goal in closed form; never raises.

        Args:
            position: target tip position (m, base frame), 3 values.
            orientation: ignored (a 3-DOF arm cannot choose its tool orientation).
            goal: must be GoalType.POSITION, else SOLVER_NOT_APPLICABLE.
            seed: reference configuration (rad) for 'nearest' and for targets on the yaw
                axis; the home pose when None.
            options: ``branch`` ('' / 'nearest' or a label of BRANCHES) and
                ``return_all``; the iteration settings do not apply, nor does
                ``respect_limits`` (limits are always respected).

        Returns:
            IKResult with the chosen branch; a solution past a joint limit is never
            returned as success.
        """
        start = perf_counter()
        if self._not_applicable:
            return self._failure(start, ErrorCode.SOLVER_NOT_APPLICABLE, self._not_applicable)
        if goal != GoalType.POSITION:
            return self._failure(start, ErrorCode.SOLVER_NOT_APPLICABLE,
                                 'the analytic solver reaches positions only; a 3-joint arm '
                                 'cannot also set the tool orientation')
        failure = self._options_failure(start, options, BRANCHES)
        if failure is not None:
            return failure
        branch = options.branch
        target, reference, failure = target_and_seed(self, start, position, seed)
        if failure is not None:
            return failure
        candidates = self.candidates(target, reference[0])
        return self._choose(start, target, reference, candidates, branch, options.return_all)

    def _choose(self, start: float, target: tuple[float, float, float],
                reference: tuple[float, ...], candidates: list, branch: str,
                return_all: bool) -> IKResult:
        r1, r2, r3 = reference
        ranges = self.ranges
        (lo1, lo2, lo3), (hi1, hi2, hi3) = ranges.lower, ranges.upper
        (s1, s2, s3), (b1, b2, b3), (t1, t2, t3) = ranges.shift, ranges.base, ranges.top
        nearest = branch in NEAREST
        best = None
        best_step = math.inf
        valid = []
        for label, q1, q2, q3 in candidates:
            if not nearest and label != branch and not return_all:
                continue
            # Inline JointRanges.wrap: this loop is most of a solve's time.
            w1 = (q1 + s1) % TWO_PI + b1
            w2 = (q2 + s2) % TWO_PI + b2
            w3 = (q3 + s3) % TWO_PI + b3
            if w1 > t1 or w2 > t2 or w3 > t3:
                continue
            q = (lo1 if w1 < lo1 else hi1 if w1 > hi1 else w1,
                 lo2 if w2 < lo2 else hi2 if w2 > hi2 else w2,
                 lo3 if w3 < lo3 else hi3 if w3 > hi3 else w3)
            if ranges.multi_turn:
                q = ranges.toward(q, reference)
            valid.append((label, q))
            if nearest or label == branch:
                # max(|Δq1|, |Δq2|, |Δq3|) without three calls of abs and one of max.
                step = q[0] - r1 if q[0] > r1 else r1 - q[0]
                d = q[1] - r2 if q[1] > r2 else r2 - q[1]
                if d > step:
                    step = d
                d = q[2] - r3 if q[2] > r3 else r3 - q[2]
                if d > step:
                    step = d
                if step < best_step or best is None:
                    best, best_step = (label, q), step
        if best is None:
            names = self.model.joint_names
            if nearest:
                reasons = '; '.join(ranges.reason(c[0], c[1:], names) for c in candidates)
                reason = f'every solution breaks a joint limit: {reasons}'
            else:
                wanted = next(c for c in candidates if c[0] == branch)
                reason = ranges.reason(branch, wanted[1:], names)
            return self._failure(start, ErrorCode.JOINT_LIMITS, reason)
        label, q = best
        tip = self.geometry.forward(*q)
        error = math.hypot(tip[0] - target[0], tip[1] - target[1], tip[2] - target[2])
        solutions = [Solution(name, np.array(angles)) for name, angles in valid] \
            if return_all else []
        return IKResult(ErrorCode.OK, 'solved in closed form', np.array(q), label,
                        np.array(tip), error, 0.0, 0, best_step, solutions,
                        perf_counter() - start)

    # ------------------------------------------------------------------ batch solve
    def solve_batch(self, targets: np.ndarray, branch: str = 'elbow_up',
                    seed: Sequence[float] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Solve many position targets at once (vectorised).

        Args:
            targets: (N, 3) positions, m, base frame. Rows may hold NaN/inf.
            branch: a label of BRANCHES (default 'elbow_up'), or '' / 'nearest' for the
                valid solution nearest ``seed`` by the largest single-joint move.
            seed: reference configuration (rad) for 'nearest' and for targets on the yaw
                axis; the home pose when None.

        Returns:
            (q, codes): q (N, 3) radians, codes (N,) int ErrorCode values, the same codes
            as ``solve`` gives row by row. Rows whose code is not OK are NaN so they cannot
            be commanded by mistake.

        Raises:
            ValueError: targets is not (N, 3), the branch is unknown, the seed is not 3
                finite values, or the solver does not apply to the model (a programming
                error, not a per-row failure).
        """
        if self._not_applicable:
            raise ValueError(self._not_applicable)
        points = check_batch_arguments(targets, branch, BRANCHES)
        reference = self.home if seed is None else _seed(seed)
        wanted = BRANCHES if branch in NEAREST else (branch,)
        codes, stacked, inside = self._branches_of(points, reference, wanted)
        if len(wanted) == 1:
            q, ok = stacked[0], inside[0]
        else:
            steps = np.abs(stacked - np.asarray(reference)).max(axis=2)
            steps[~inside] = np.inf
            pick = np.argmin(steps, axis=0)
            q = stacked[pick, np.arange(len(points))]
            ok = np.isfinite(steps[pick, np.arange(len(points))])
        pending = codes == ErrorCode.OK
        codes[pending & ~ok] = ErrorCode.JOINT_LIMITS
        q[codes != ErrorCode.OK] = np.nan
        return q, codes

    def solve_all_poses(self, positions: np.ndarray, rotations: object,
                        seed: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """Every branch of N position targets in one compiled call, for path IK.

        Args:
            positions: (N, 3) finite tip positions, m, base frame.
            rotations: ignored (position goals only), as ``solve``'s orientation.
            seed: reference joints, rad: the whole turn of a multi-turn joint and the yaw
                of a target on the yaw axis, as ``solve``'s seed.

        Returns:
            (q (N, 4, 3) rad in BRANCHES order, valid (N, 4)): valid means past the reach
            pre-check and inside the limits: the solutions ``solve`` lists with
            ``return_all`` (to rounding: libm's and numpy's functions may differ in the
            last bit); invalid entries hold clamped angles, never to be commanded.

        Raises:
            ValueError: a seed that is not 3 finite values.
        """
        points = np.asarray(positions, dtype=float).reshape(-1, 3)
        codes, stacked, inside = self._branches_of(points, _seed(seed),
                                                   BRANCHES)
        valid = inside & (codes == ErrorCode.OK)[None, :]
        return stacked.transpose(1, 0, 2), valid.T

    def _branches_of(self, points: np.ndarray, reference: Sequence[float],
                     wanted: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(pre-check codes (N,), q (B, N, 3) wrapped into the limits and turned toward
        ``reference``, inside (B, N)) of the ``wanted`` branches of N targets."""
        count = len(points)
        q = np.empty((len(BRANCHES), count, 3))
        inside = np.empty((len(BRANCHES), count), dtype=np.bool_)
        codes = np.empty(count, dtype=np.int64)
        _all_branches(np.ascontiguousarray(points, dtype=float), *self._kernel_constants,
                      np.array(reference, dtype=float), LIMIT_TOLERANCE, _CODES, q, inside,
                      codes)
        if tuple(wanted) != BRANCHES:
            rows = [BRANCHES.index(label) for label in wanted]
            q, inside = q[rows], inside[rows]
        return codes, q, inside


    @staticmethod
    def _precheck_batch(points: np.ndarray, sx: float, sy: float, sz: float, min_z: float,
                        max_r: float, min_r: float) -> np.ndarray:
        """Row codes of Workspace.check_position, in its order (errors already ignored)."""
        rx, ry, rz = points[:, 0] - sx, points[:, 1] - sy, points[:, 2] - sz
        distance = np.hypot(np.hypot(rx, ry), rz)
        codes = np.full(len(points), int(ErrorCode.OK), dtype=np.int64)
        codes[distance < min_r] = ErrorCode.INSIDE_INNER_HOLE
        codes[distance > max_r] = ErrorCode.OUT_OF_REACH
        codes[rz < min_z] = ErrorCode.BELOW_MIN_HEIGHT
        codes[~np.isfinite(points).all(axis=1)] = ErrorCode.INVALID_INPUT
        return codes

def _seed(seed: Sequence[float]) -> tuple[float, float, float]:
    """A batch's seed as 3 finite floats, or ValueError (the compiled call reads 3)."""
    values = np.asarray(seed, dtype=float).reshape(-1)
    if values.shape != (3,) or not np.isfinite(values).all():
        raise ValueError(f'the seed must be 3 finite joint values, got {values.tolist()}')
    return tuple(values.tolist())


# The pre-check's codes, in the order _all_branches writes them.
_CODES = np.array([ErrorCode.OK, ErrorCode.INSIDE_INNER_HOLE, ErrorCode.OUT_OF_REACH,
                   ErrorCode.BELOW_MIN_HEIGHT, ErrorCode.INVALID_INPUT], dtype=np.int64)


@compiled
def _all_branches(points, geometry, gate, lower, upper, multi, reference, tolerance,
                  codes_of, q, inside, codes):
    """Every branch of N position targets, compiled (path IK solves a branch per sample,
    and numpy's per-call cost was most of a batch's time): the arithmetic of
    ``arm_triangle`` and ``candidates``, the position gate of ``Workspace.check_position``
    and the wrapping of ``wrap_into_array`` / ``JointRanges.toward_array``.

    Args:
        points (N, 3); geometry: shoulder xyz, plane, facing, yaw_sign, l1, l2, phi1,
        elbow_sign, elbow offset; gate: shoulder xyz, min_z, max_r, min_r; lower, upper,
        multi (3,): the limits and the joints of more than a turn; reference (3,): the
        seed; tolerance: closed_form.common.LIMIT_TOLERANCE (an argument, so a change of
        it reaches the compiled cache); codes_of: OK, INSIDE_INNER_HOLE, OUT_OF_REACH,
        BELOW_MIN_HEIGHT, INVALID_INPUT. Written: q (4, N, 3) in BRANCHES order, inside
        (4, N), codes (N,).
    """
    sx, sy, sz, plane, facing, yaw_sign, l1, l2, phi1, elbow_sign, elbow_offset = \
        geometry[0], geometry[1], geometry[2], geometry[3], geometry[4], geometry[5], \
        geometry[6], geometry[7], geometry[8], geometry[9], geometry[10]
    values = np.empty(3)
    for i in range(points.shape[0]):
        px, py, pz = points[i, 0], points[i, 1], points[i, 2]
        rx, ry, rz = px - gate[0], py - gate[1], pz - gate[2]
        distance = math.hypot(math.hypot(rx, ry), rz)
        code = codes_of[0]
        if distance < gate[5]:
            code = codes_of[1]
        if distance > gate[4]:
            code = codes_of[2]
        if rz < gate[3]:
            code = codes_of[3]
        if not (math.isfinite(px) and math.isfinite(py) and math.isfinite(pz)):
            code = codes_of[4]
        codes[i] = code
        dx, dy, dz = px - sx, py - sy, pz - sz
        rho = math.hypot(dx, dy)
        yaw = yaw_sign * (math.atan2(dy, dx) - (plane + (PI if facing < 0.0 else 0.0)))
        u = facing * rho
        if rho <= ON_AXIS:
            yaw = reference[0]
            bearing = plane + yaw_sign * reference[0]
            u = dx * math.cos(bearing) + dy * math.sin(bearing)
        c = ((dx * dx + dy * dy + dz * dz) - (l1 * l1 + l2 * l2)) / (2.0 * l1 * l2)
        c = min(max(c, -1.0), 1.0)
        beta = math.acos(c)
        up_beta = -beta if facing > 0.0 else beta
        gamma = math.atan2(dz, u)
        sin_b = l2 * math.sin(up_beta)
        cos_b = l1 + l2 * math.cos(up_beta)
        for branch in range(4):
            down = branch % 2 == 1
            alpha = gamma - math.atan2(-sin_b if down else sin_b, cos_b)
            b = -up_beta if down else up_beta
            q1 = yaw
            if branch >= 2:                     # flipped: the base half a turn round
                q1, alpha, b = yaw + PI, PI - alpha, -b
            values[0], values[1] = q1, alpha - phi1
            values[2] = elbow_sign * (b - elbow_offset)
            ok = True
            for j in range(3):
                wrapped = (values[j] + (tolerance - lower[j])) % TWO_PI + \
                    (lower[j] - tolerance)
                ok = ok and wrapped <= upper[j] + tolerance
                angle = min(max(wrapped, lower[j]), upper[j])
                if multi[j]:
                    room = math.floor((upper[j] - angle) / TWO_PI)
                    angle += min(max(float(round((reference[j] - angle) / TWO_PI)), 0.0),
                                 room) * TWO_PI
                q[branch, i, j] = angle
            inside[branch, i] = ok
