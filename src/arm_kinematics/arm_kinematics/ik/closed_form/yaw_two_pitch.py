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
    PI,
    prepared_limits,
    target_and_seed,
    TWO_PI,
    wrap_into_array,
)
from arm_kinematics.ik.result import ErrorCode, GoalType, IKResult, Solution
from arm_kinematics.ik.solvers.base import ClosedFormBase, NEAREST, SolveOptions, Workspace
from arm_kinematics.model.arm_model import ArmModel

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
            ValueError: targets is not (N, 3), the branch is unknown, or the solver does
                not apply to the model (a programming error, not a per-row failure).
        """
        if self._not_applicable:
            raise ValueError(self._not_applicable)
        points = check_batch_arguments(targets, branch, BRANCHES)
        reference = self.home if seed is None else tuple(float(v) for v in seed)
        g = self.geometry
        gate = self.gate
        with np.errstate(all='ignore'):
            codes = self._precheck_batch(points, *gate.shoulder, gate.min_z, gate.max_r,
                                         gate.min_r)
            gs = g.shoulder
            dx, dy, dz = points[:, 0] - gs[0], points[:, 1] - gs[1], points[:, 2] - gs[2]
            rho = np.hypot(dx, dy)
            heading = np.arctan2(dy, dx) - (g.plane + (PI if g.facing < 0.0 else 0.0))
            yaw = g.yaw_sign * heading
            u = g.facing * rho
            on_axis = np.flatnonzero(rho <= ON_AXIS)
            if on_axis.size:
                yaw[on_axis] = reference[0]
                bearing = g.plane + g.yaw_sign * reference[0]
                u[on_axis] = dx[on_axis] * math.cos(bearing) + dy[on_axis] * math.sin(bearing)
            c = ((dx * dx + dy * dy + dz * dz) - (g.l1 * g.l1 + g.l2 * g.l2)) / \
                (2.0 * g.l1 * g.l2)
            c = np.clip(c, -1.0, 1.0)
            beta = np.arccos(c)
            up_beta = -beta if g.facing > 0.0 else beta
            gamma = np.arctan2(dz, u)
            sin_b = g.l2 * np.sin(up_beta)
            cos_b = g.l1 + g.l2 * np.cos(up_beta)
            wanted = BRANCHES if branch in NEAREST else (branch,)
            solutions = []
            for label in wanted:
                down = 'down' in label
                alpha = gamma - np.arctan2(-sin_b if down else sin_b, cos_b)
                b = -up_beta if down else up_beta
                if label.startswith('flipped'):
                    q1, alpha, b = yaw + PI, PI - alpha, -b
                else:
                    q1 = yaw
                q = np.empty((len(points), 3))
                lower, upper = self.ranges.lower, self.ranges.upper
                q[:, 0], ok1 = wrap_into_array(q1, lower[0], upper[0])
                q[:, 1], ok2 = wrap_into_array(alpha - g.phi1, lower[1], upper[1])
                q[:, 2], ok3 = wrap_into_array(g.elbow_sign * (b - self._elbow_offset),
                                               lower[2], upper[2])
                solutions.append((self.ranges.toward_array(q, reference), ok1 & ok2 & ok3))
            if len(solutions) == 1:
                q, ok = solutions[0]
            else:
                stacked = np.stack([s[0] for s in solutions])              # (4, N, 3)
                steps = np.abs(stacked - np.asarray(reference)).max(axis=2)
                steps[~np.stack([s[1] for s in solutions])] = np.inf
                pick = np.argmin(steps, axis=0)
                q = stacked[pick, np.arange(len(points))]
                ok = np.isfinite(steps[pick, np.arange(len(points))])
        pending = codes == ErrorCode.OK
        codes[pending & ~ok] = ErrorCode.JOINT_LIMITS
        q[codes != ErrorCode.OK] = np.nan
        return q, codes

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
