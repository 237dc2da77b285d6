"""Closed-form IK of a six-joint arm with a spherical wrist (six_axis).

Pieper's split: the wrist centre (where the last three axes meet) depends only on the
first three joints, so the position is solved by the yaw + shoulder/elbow triangle of
``analytic`` and the orientation by a three-axis (generalised Euler) decomposition.
Up to 2 (yaw front/back) × 2 (elbow up/down) × 2 (wrist flip) = 8 solutions.

All geometry comes from the ArmModel, in product-of-exponentials form: with world axes
ω_i at q = 0, R(q) = Rot(ω1, q1)···Rot(ω6, q6)·R(0). Work is done in a base-aligned frame
B whose z is the yaw axis and y the shoulder axis, where the first three rotations are
plain Rz(q1)·Ry(q2 + s·q3). Plain ``math`` on tuples: a 3-vector in numpy costs more in
call overhead than the arithmetic itself. Units: metres and radians.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import partial
import math
from time import perf_counter

import numpy as np

from arm_kinematics.ik.closed_form.common import (
    checked_request,
    GEOMETRY_TOLERANCE,
    goal_orientation,
    nearest,
    PI,
    prepared_limits,
    tool_down_rotation,
    TWO_PI,
    wrap_into,
    wrap_one,
)
from arm_kinematics.ik.closed_form.common import (
    parse_orientation as parse_orientation,  # its old home: code imports it from here
)
from arm_kinematics.ik.closed_form.geometry import (
    mat_mul,
    mat_vec,
    Matrix,
    meeting_point,
    rotation_angle,
    unit,
    Vector,
)
from arm_kinematics.ik.closed_form.geometry import (
    rotation as rodrigues,
)
from arm_kinematics.ik.closed_form.yaw_two_pitch import (
    arm_triangle,
    yaw_pitch_geometry,
    YawPitchGeometry,
)
from arm_kinematics.ik.result import ErrorCode, GoalType, IKResult, Solution
from arm_kinematics.ik.solvers.base import ClosedFormBase, NEAREST, SolveOptions, Workspace
from arm_kinematics.model.arm_model import ArmModel

FAMILY_NAME = 'spherical_wrist'
ARM_LABELS = ('front_up', 'front_down', 'back_up', 'back_down')
BRANCHES = tuple(f'{arm}_{wrist}' for arm in ARM_LABELS for wrist in ('noflip', 'flip'))
# |sin| of the wrist bend below which q4 and q6 turn about one line (wrist singularity):
# q4 is then kept from the seed and q6 takes the whole turn.
WRIST_SINGULAR = 1e-9
_DEFAULT_OPTIONS = SolveOptions()

# A solution generator: within_limits → (labelled solutions, code, reason).
Attempt = Callable[[bool], tuple[list[tuple[str, tuple]], ErrorCode, str]]



class SphericalWristSolver(ClosedFormBase):
    """All closed-form solutions of a yaw + two-pitch + spherical-wrist arm.

    Labels ``{front|back}_{up|down}_{noflip|flip}``: front faces the target with the
    yaw (back is yaw + π, reaching over), up/down is the elbow above/below the
    shoulder→wrist-centre line, noflip/flip the two wrist bends (noflip has the wrist
    bend q5 on the positive side of its straight value).

    Goals:
        FULL_POSE: position and orientation (quaternion x, y, z, w or 3×3 matrix).
        TOOL_DOWN: tool Z axis along −Z of the base; the free turn about it is taken from
            the seed's tool heading.
        POSITION: tried in order, the first with a solution inside the limits wins:
            1. the seed's tool orientation (a translation-only jog keeps the tool
               attitude; the wrist centre is p − R_seed·offset);
            2. the seed's wrist angles held (the tool rides on the forearm);
            3. other wrist bends held, from a grid of 30° bends × 45° rolls, nearest the
               seed's first.
            Not complete: a reachable position may in rare cases still be refused (the
            dls solver searches continuously). The orientation error reported is 0.
    """

    name = 'closed_form'
    labelled = True

    def __init__(self, model: ArmModel, workspace: Workspace,
                 home: Sequence[float] | None = None) -> None:
        """The wrist decomposition of ``model`` (an arm it does not apply to makes every
        solve SOLVER_NOT_APPLICABLE), the tip reach pre-check ``workspace`` and the default
        seed ``home`` (rad; the zero pose clamped into the limits when None)."""
        super().__init__(model, workspace)
        self._not_applicable = self.applicability(model)
        self.ranges, self.gate, self.home = prepared_limits(model, workspace, home)
        self._joint_constants = tuple(zip(self.ranges.shift, self.ranges.base, self.ranges.top,
                                          self.ranges.lower, self.ranges.upper, strict=True))
        if not self._not_applicable:
            self._prepare_constants(model)

    @classmethod
    def applicability(cls, model: ArmModel) -> str:
        """'' for a yaw, two parallel pitch joints and a spherical wrist, else why not.

        Checked numerically on the URDF's zero pose, not by joint names.
        """
        if model.dof != 6:
            return (f'the closed-form solver needs 6 joints (yaw, shoulder, elbow, '
                    f'spherical wrist); {model.name or "this arm"} has {model.dof}')
        origins, axes, _ = model.joint_origins_and_axes(np.zeros(6))
        centre, gap = meeting_point(origins[3:], axes[3:])
        if gap > GEOMETRY_TOLERANCE:
            return f'the last three joint axes do not meet in one point (gap {gap:.3g} m)'
        if abs(float(np.dot(axes[3], axes[4]))) > GEOMETRY_TOLERANCE or \
                abs(float(np.dot(axes[4], axes[5]))) > GEOMETRY_TOLERANCE:
            return 'the wrist axes 4 ⟂ 5 ⟂ 6 are not perpendicular in turn'
        geometry = yaw_pitch_geometry(origins, axes, centre)
        return geometry if isinstance(geometry, str) else ''

    def _prepare_constants(self, model: ArmModel) -> None:
        origins, axes, _ = model.joint_origins_and_axes(np.zeros(6))
        self._zero_origins, self._zero_axes = origins, axes
        zero = model.fk(np.zeros(6))
        centre, _ = meeting_point(origins[3:], axes[3:])
        geometry = yaw_pitch_geometry(origins, axes, centre)
        assert isinstance(geometry, YawPitchGeometry)
        self.geometry = geometry
        g = geometry
        self._elbow_offset = g.phi2 - g.phi1
        # Frame B: z = yaw axis (with its sign), y = shoulder axis, x = y × z.
        zb, yb = unit(axes[0]), unit(axes[1])
        basis = np.column_stack([np.cross(yb, zb), yb, zb])           # world ← B
        rotation0 = zero[:3, :3]
        to_b = basis.T
        self._basis = tuple(basis.reshape(-1).tolist())
        self._basis_is_identity = bool(np.allclose(basis, np.eye(3), atol=1e-15))
        self._after_b = tuple((to_b @ rotation0).reshape(-1).tolist())   # Bᵀ·R(0)
        a, b, c = (to_b @ unit(axes[i]) for i in (3, 4, 5))
        e1 = unit(np.cross(a, b))        # any unit vector ⟂ a (b ⟂ a, so this is safe)
        e2 = np.cross(a, e1)              # (e1, e2, a) right-handed
        bxc = np.cross(b, c)
        cxb = -bxc
        self._axes_b = (tuple(a.tolist()), tuple(b.tolist()), tuple(c.tolist()))
        # a·Rb(q5)·c = cos(q5 − δ): the wrist bend is measured from δ.
        self._delta = math.atan2(float(a @ bxc), float(a @ c))
        # Rb(q5)c = c cos q5 + (b × c) sin q5, in the (e1, e2) plane of the q4 rotation.
        self._v_coeffs = (float(e1 @ c), float(e1 @ bxc), float(e2 @ c), float(e2 @ bxc))
        self._e = (tuple(e1.tolist()), tuple(e2.tolist()), tuple(a.tolist()))
        # In (e1, e2, a) coordinates: b, c × b and c, for q6 from q4 and q5.
        self._b_e = tuple(float(v) for v in (e1 @ b, e2 @ b, a @ b))
        self._cxb_e = tuple(float(v) for v in (e1 @ cxb, e2 @ cxb, a @ cxb))
        self._c_e = tuple(float(v) for v in (e1 @ c, e2 @ c, a @ c))
        # Tool-frame vectors whose images under the goal rotation give T_B·c and T_B·b
        # (T_B = Bᵀ·R_goal·R(0)ᵀ·B), and the wrist centre seen from the tool.
        self._c_tool = tuple((rotation0.T @ basis @ c).tolist())
        self._b_tool = tuple((rotation0.T @ basis @ b).tolist())
        self._wrist_tool = tuple((rotation0.T @ (centre - zero[:3, 3])).tolist())
        self._wrist_reach = (abs(g.l1 - g.l2) - 1e-12, g.l1 + g.l2 + 1e-12)
        # For a wrist held still: the tip seen from the wrist centre at q = 0 (in B), and
        # the plane of the pitch joints (shoulder axis a1, forward f0, elbow point).
        a1 = unit(axes[1])
        shoulder = np.array(g.shoulder)
        elbow = origins[2] - np.dot(origins[2] - shoulder, a1) * a1
        self._tip_from_centre_b = tuple((to_b @ (zero[:3, 3] - centre)).tolist())
        self._centre0 = tuple(centre.tolist())
        self._a1 = tuple(a1.tolist())
        self._f0 = tuple(np.cross([0.0, 0.0, 1.0], a1).tolist())
        self._elbow0 = tuple(elbow.tolist())
        self._wrist_grid = self._make_wrist_grid()

    def _make_wrist_grid(self) -> tuple[tuple[float, float], ...]:
        """Wrist (q4, q5) pairs tried for position goals: 30° bends × 45° rolls in limits."""
        lower, upper = self.ranges.lower, self.ranges.upper
        bends = [self._delta + math.radians(30.0 * k) for k in range(-6, 7)]
        rolls = [math.radians(45.0 * k) for k in range(-4, 4)]
        grid = []
        for bend in bends:
            q5 = wrap_into(bend, lower[4], upper[4])
            if q5 is None:
                continue
            for roll in rolls:
                q4 = wrap_into(roll, lower[3], upper[3])
                if q4 is not None:
                    grid.append((q4, q5))
        return tuple(grid)

    # ------------------------------------------------------------------ kinematics
    def forward_pose(self, q: Sequence[float]) -> tuple[Vector, Matrix]:
        """Tip position (m) and row-major rotation of joint angles ``q`` (rad), plain math.

        The same product of exponentials as ArmModel.fk, specialised to this arm class.
        """
        q1, q2, q3, q4, q5, q6 = q
        a, b, c = self._axes_b
        wrist = mat_mul(mat_mul(rodrigues(a, q4), rodrigues(b, q5)), rodrigues(c, q6))
        theta = q2 + self.geometry.elbow_sign * q3
        ct, st = math.cos(theta), math.sin(theta)
        c1, s1 = math.cos(q1), math.sin(q1)
        # Rz(q1)·Ry(θ) in B coordinates.
        arm = (c1 * ct, -s1, c1 * st, s1 * ct, c1, s1 * st, -st, 0.0, ct)
        rotation = mat_mul(mat_mul(arm, wrist), self._after_b)
        if not self._basis_is_identity:
            rotation = mat_mul(self._basis, rotation)
        centre = self.geometry.forward(q1, q2, q3)
        offset = mat_vec(rotation, self._wrist_tool)
        return (centre[0] - offset[0], centre[1] - offset[1], centre[2] - offset[2]), rotation

    def solutions(self, position: Sequence[float], rotation: Sequence[float],
                  reference: Sequence[float], within_limits: bool = False
                  ) -> tuple[list[tuple[str, tuple]], ErrorCode, str]:
        """Every labelled solution of a tip pose (rad).

        Args:
            position: tip position (m, base frame).
            rotation: tip rotation, row-major 9 floats.
            reference: seed (rad); its yaw is used on the yaw axis and its q4 at a
                straight wrist.
            within_limits: keep only the solutions inside the joint limits, wrapped by
                whole turns and clamped onto them; else all 8, unwrapped.

        Returns:
            (solutions, code, reason): 8 solutions with code OK, or [] with
            OUT_OF_REACH / INSIDE_INNER_HOLE and why the wrist centre cannot be reached
            with this orientation.
        """
        r = rotation
        tx, ty, tz = self._wrist_tool
        centre = (position[0] + r[0] * tx + r[1] * ty + r[2] * tz,
                  position[1] + r[3] * tx + r[4] * ty + r[5] * tz,
                  position[2] + r[6] * tx + r[7] * ty + r[8] * tz)
        g = self.geometry
        distance = math.hypot(centre[0] - g.shoulder[0], centre[1] - g.shoulder[1],
                              centre[2] - g.shoulder[2])
        near, far = self._wrist_reach
        if not near <= distance <= far:
            code = ErrorCode.OUT_OF_REACH if distance > far else ErrorCode.INSIDE_INNER_HOLE
            return [], code, (f'the wrist centre for this orientation is {distance:.3f} m '
                              f'from the shoulder; it must be within [{near:.3f}, '
                              f'{far:.3f}] m')
        # No lateral offset here (checked by applicability), so back yaw = yaw + π.
        yaw, _, alpha_up, alpha_down, up_beta = arm_triangle(g, centre, reference[0])
        # T_B·c and T_B·b, with T_B = Bᵀ·R·R(0)ᵀ·B.
        tc, tb = mat_vec(r, self._c_tool), mat_vec(r, self._b_tool)
        if not self._basis_is_identity:
            bt = self._basis
            tc = (bt[0] * tc[0] + bt[3] * tc[1] + bt[6] * tc[2],
                  bt[1] * tc[0] + bt[4] * tc[1] + bt[7] * tc[2],
                  bt[2] * tc[0] + bt[5] * tc[1] + bt[8] * tc[2])
            tb = (bt[0] * tb[0] + bt[3] * tb[1] + bt[6] * tb[2],
                  bt[1] * tb[0] + bt[4] * tb[1] + bt[7] * tb[2],
                  bt[2] * tb[0] + bt[5] * tb[1] + bt[8] * tb[2])
        phi1, phi2, offset, s = g.phi1, g.phi2, self._elbow_offset, g.elbow_sign
        c1, s1 = math.cos(yaw), math.sin(yaw)
        arms = (
            # (label, q1, cos q1, sin q1, link-1 angle α, elbow β); back: yaw + π, α → π − α.
            ('front_up', yaw, c1, s1, alpha_up, up_beta),
            ('front_down', yaw, c1, s1, alpha_down, -up_beta),
            ('back_up', yaw + PI, -c1, -s1, PI - alpha_up, -up_beta),
            ('back_down', yaw + PI, -c1, -s1, PI - alpha_down, up_beta),
        )
        (e1x, e1y, e1z), (e2x, e2y, e2z), (ax, ay, az) = self._e
        delta = self._delta
        vc1, vbc1, vc2, vbc2 = self._v_coeffs
        b1, b2, b3 = self._b_e
        k1, k2, k3 = self._cxb_e
        n1, n2, n3 = self._c_e
        seed_q4 = reference[3]
        if within_limits:
            (j1, j2, j3, j4, j5, j6) = self._joint_constants
        out = []
        for label, q1, cq, sq, alpha, beta in arms:
            q2 = alpha - phi1
            q3 = s * (beta - offset)
            if within_limits:
                # A yaw/shoulder/elbow outside its range rules out both wrists: skip them.
                q1, q2, q3 = wrap_one(q1, j1), wrap_one(q2, j2), wrap_one(q3, j3)
                if q1 is None or q2 is None or q3 is None:
                    continue
            theta = alpha + beta - phi2          # = q2 + s·q3, the summed pitch
            ct, st = math.cos(theta), math.sin(theta)
            # M = Ry(−θ)·Rz(−q1)·T_B applied to c and b, then in (e1, e2, a) coordinates.
            vx, vy = cq * tc[0] + sq * tc[1], cq * tc[1] - sq * tc[0]
            mx, my, mz = ct * vx - st * tc[2], vy, st * vx + ct * tc[2]
            w1 = e1x * mx + e1y * my + e1z * mz
            w2 = e2x * mx + e2y * my + e2z * mz
            k = ax * mx + ay * my + az * mz
            vx, vy = cq * tb[0] + sq * tb[1], cq * tb[1] - sq * tb[0]
            mx, my, mz = ct * vx - st * tb[2], vy, st * vx + ct * tb[2]
            m1 = e1x * mx + e1y * my + e1z * mz
            m2 = e2x * mx + e2y * my + e2z * mz
            m3 = ax * mx + ay * my + az * mz
            perp = math.hypot(w1, w2)
            bend = math.atan2(perp, k)           # |q5 − δ|, accurate near 0 and π
            heading = math.atan2(w2, w1)
            for suffix, sign in (('_noflip', 1.0), ('_flip', -1.0)):
                q5 = delta + sign * bend
                c5, s5 = math.cos(q5), math.sin(q5)
                if perp > WRIST_SINGULAR:
                    q4 = heading - math.atan2(vc2 * c5 + vbc2 * s5, vc1 * c5 + vbc1 * s5)
                else:
                    # q4 and q6 turn about one line: keep q4 from the seed (flip: + π).
                    q4 = seed_q4 if sign > 0.0 else seed_q4 + PI
                c4, s4 = math.cos(q4), math.sin(q4)
                # y = Ra(−q4)·M·b; Rc(q6)·b = Rb(−q5)·y gives q6 from q4 and q5 exactly.
                z1, z2 = m1 * c4 + m2 * s4, m2 * c4 - m1 * s4
                along = b1 * z1 + b2 * z2 + b3 * m3
                across = (k1 * c5 + n1 * s5) * z1 + (k2 * c5 + n2 * s5) * z2 + \
                    (k3 * c5 + n3 * s5) * m3
                q6 = math.atan2(across, along)
                if within_limits:
                    q4, q5, q6 = wrap_one(q4, j4), wrap_one(q5, j5), wrap_one(q6, j6)
                    if q4 is None or q5 is None or q6 is None:
                        continue
                out.append((label + suffix, (q1, q2, q3, q4, q5, q6)))
        return out, ErrorCode.OK, ''

    # ------------------------------------------------------------------ goals
    def _attempts(self, goal: int, rotation: Matrix | None, target: Vector,
                  reference: Sequence[float]) -> Iterator[tuple[Matrix | None, Attempt]]:
        """Ways to reach a goal, tried in order: (rotation or None, solution generator)."""
        if goal == GoalType.FULL_POSE:
            yield rotation, partial(self.solutions, target, rotation, reference)
            return
        _, seed_rotation = self.forward_pose(reference)
        if goal == GoalType.TOOL_DOWN:
            down = tool_down_rotation(seed_rotation)
            yield down, partial(self.solutions, target, down, reference)
            return
        yield seed_rotation, partial(self.solutions, target, seed_rotation, reference)
        q4, q5, q6 = reference[3], reference[4], reference[5]
        yield None, partial(self.rigid_wrist_solutions, target, reference, (q4, q5, q6))
        # Other wrist bends, the ones nearest the seed's first.
        for roll, bend in sorted(self._wrist_grid,
                                 key=lambda w: max(abs(w[0] - q4), abs(w[1] - q5))):
            yield None, partial(self.rigid_wrist_solutions, target, reference,
                                (roll, bend, q6))

    def rigid_wrist_geometry(self, wrist: Sequence[float]) -> YawPitchGeometry:
        """The yaw + two-pitch geometry of the tip with the wrist held at ``wrist`` (rad).

        The tip is then a point of the forearm; bent sideways it sits off the plane of the
        pitch joints (``lateral``). Facing is the arm's, so labels keep their meaning.
        """
        a, b, c = self._axes_b
        rotation = mat_mul(mat_mul(rodrigues(a, wrist[0]), rodrigues(b, wrist[1])),
                            rodrigues(c, wrist[2]))
        v = mat_vec(rotation, self._tip_from_centre_b)
        if not self._basis_is_identity:
            v = mat_vec(self._basis, v)
        g = self.geometry
        tip = [self._centre0[i] + v[i] for i in range(3)]
        a1, f0 = self._a1, self._f0
        lateral = sum((tip[i] - g.shoulder[i]) * a1[i] for i in range(3))
        link = [tip[i] - lateral * a1[i] - self._elbow0[i] for i in range(3)]
        along = link[0] * f0[0] + link[1] * f0[1] + link[2] * f0[2]
        return YawPitchGeometry(g.shoulder, g.yaw_sign, g.plane, g.facing, g.l1,
                                math.hypot(along, link[2]), g.phi1, math.atan2(link[2], along),
                                g.elbow_sign, lateral if abs(lateral) > 1e-12 else 0.0)

    def rigid_wrist_solutions(self, position: Sequence[float], reference: Sequence[float],
                              wrist: Sequence[float], within_limits: bool = False
                              ) -> tuple[list[tuple[str, tuple]], ErrorCode, str]:
        """Solutions for a tip position with the wrist joints held at ``wrist`` (rad).

        The yaw and the shoulder/elbow triangle place the tip, a point of the forearm.
        Labels are those of ``solutions``; the wrist part names the bend of ``wrist``.
        Otherwise the same arguments and returns as ``solutions``.
        """
        g = self.rigid_wrist_geometry(wrist)
        distance_sq = sum((position[i] - g.shoulder[i]) ** 2 for i in range(3))
        planar = math.sqrt(max(distance_sq - g.lateral * g.lateral, 0.0))
        triangle = arm_triangle(g, position, reference[0])
        if triangle is None or planar > g.l1 + g.l2 + 1e-12:
            return [], ErrorCode.OUT_OF_REACH, 'out of reach with the wrist held'
        if planar < abs(g.l1 - g.l2) - 1e-12:
            return [], ErrorCode.INSIDE_INNER_HOLE, 'too near with the wrist held'
        yaw, back_yaw, alpha_up, alpha_down, up_beta = triangle
        suffix = '_noflip' if math.remainder(wrist[1] - self._delta, TWO_PI) >= 0.0 \
            else '_flip'
        offset, s = g.phi2 - g.phi1, g.elbow_sign
        wrist = tuple(wrist)
        out = []
        for label, q1, alpha, beta in (('front_up', yaw, alpha_up, up_beta),
                                       ('front_down', yaw, alpha_down, -up_beta),
                                       ('back_up', back_yaw, PI - alpha_up, -up_beta),
                                       ('back_down', back_yaw, PI - alpha_down, up_beta)):
            q = (q1, alpha - g.phi1, s * (beta - offset)) + wrist
            if within_limits:
                q = self.ranges.wrap(q)
                if q is None:
                    continue
            out.append((label + suffix, q))
        return out, ErrorCode.OK, ''

    # ------------------------------------------------------------------ solve
    def solve(self, position: object, orientation: object = None,
              goal: GoalType = GoalType.POSITION, seed: object = None,
              options: SolveOptions = _DEFAULT_OPTIONS) -> IKResult:
        """Solve one goal in closed form; never raises.

        Args:
            position: tip position (m, base frame), 3 values.
            orientation: FULL_POSE only: quaternion (x, y, z, w) or 3×3 rotation matrix.
            goal: FULL_POSE, TOOL_DOWN or POSITION (see the class docstring).
            seed: reference configuration (rad); the home pose when None.
            options: ``branch`` ('' / 'nearest' or a label of BRANCHES), ``return_all``;
                the iteration settings and ``respect_limits`` do not apply (limits are
                always respected).

        Returns:
            IKResult; a solution past a joint limit is never returned as success.
        """
        start = perf_counter()
        if self._not_applicable:
            return self._failure(start, ErrorCode.SOLVER_NOT_APPLICABLE, self._not_applicable)
        target, reference, failure = checked_request(self, start, options, BRANCHES, goal,
                                                     position, seed)
        if failure is not None:
            return failure
        branch = options.branch
        goal_rotation = None
        if goal == GoalType.FULL_POSE:
            goal_rotation, reason = goal_orientation(orientation)
            if goal_rotation is None:
                return self._failure(start, ErrorCode.INVALID_INPUT, reason)
        first_failure = None
        tries = 0
        for rotation, attempt in self._attempts(goal, goal_rotation, target, reference):
            tries += 1
            valid, code, reason = attempt(True)
            if code == ErrorCode.OK:
                result = self._choose(start, target, rotation, goal, reference, valid,
                                      branch, options.return_all, attempt)
                if result.success:
                    return result
                code, reason = result.code, result.reason
            if first_failure is None:
                first_failure = (code, reason)
        code, reason = first_failure
        if tries > 1:
            reason += ('; holding the wrist as in the seed or at other bends did not give a '
                       'solution either')
        return self._failure(start, code, reason)

    def _choose(self, start: float, target: Vector, rotation: Matrix | None, goal: int,
                reference: Sequence[float], valid: list, branch: str, return_all: bool,
                attempt: Attempt) -> IKResult:
        if self.ranges.multi_turn:
            valid = [(label, self.ranges.toward(q, reference)) for label, q in valid]
        best, best_step = nearest(valid, reference, branch)
        if best is None:
            names = self.model.joint_names
            ranges = self.ranges
            candidates, _, _ = attempt(False)
            if branch in NEAREST:
                reason = 'every solution breaks a joint limit: ' + '; '.join(
                    ranges.reason(label, q, names) for label, q in candidates)
            else:
                q = next(q for label, q in candidates if label == branch)
                reason = ranges.reason(branch, q, names)
            return self._failure(start, ErrorCode.JOINT_LIMITS, reason)
        label, q = best
        tip, reached = self.forward_pose(q)
        error = math.hypot(tip[0] - target[0], tip[1] - target[1], tip[2] - target[2])
        if goal == GoalType.FULL_POSE:
            angle = rotation_angle(rotation, reached)
        elif goal == GoalType.TOOL_DOWN:
            angle = math.atan2(math.hypot(reached[2], reached[5]), -reached[8])
        else:
            angle = 0.0
        solutions = [Solution(name, np.array(angles)) for name, angles in valid] \
            if return_all else []
        return IKResult(ErrorCode.OK, 'solved in closed form', np.array(q), label,
                        np.array(tip), error, angle, 0, best_step, solutions,
                        perf_counter() - start)
