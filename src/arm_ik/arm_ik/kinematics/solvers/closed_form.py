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

from collections.abc import Sequence
import math
from time import perf_counter

import numpy as np

from arm_ik.kinematics.model import ArmModel
from arm_ik.kinematics.result import check_vector, ErrorCode, GoalType, IKResult, Solution
from arm_ik.kinematics.solvers.analytic import (
    arm_triangle, fast_vector, GEOMETRY_TOLERANCE, JointRanges, NEAREST, PI, TWO_PI,
    yaw_pitch_geometry, YawPitchGeometry)
from arm_ik.kinematics.solvers.base import SolveOptions, Solver, Workspace
from arm_ik.kinematics.transforms import quaternion_to_matrix

ARM_LABELS = ('front_up', 'front_down', 'back_up', 'back_down')
BRANCHES = tuple(f'{arm}_{wrist}' for arm in ARM_LABELS for wrist in ('noflip', 'flip'))
# |sin| of the wrist bend below which q4 and q6 turn about one line (wrist singularity):
# q4 is then kept from the seed and q6 takes the whole turn.
WRIST_SINGULAR = 1e-9
# Largest |RᵀR − I| entry accepted for a rotation-matrix goal (as the dls solver).
ROTATION_TOLERANCE = 1e-6
_DEFAULT_OPTIONS = SolveOptions()

Matrix = tuple[float, float, float, float, float, float, float, float, float]
Vector = tuple[float, float, float]


def _mat_mul(a: Sequence[float], b: Sequence[float]) -> Matrix:
    """Product of two row-major 3×3 matrices given as 9 floats."""
    a0, a1, a2, a3, a4, a5, a6, a7, a8 = a
    b0, b1, b2, b3, b4, b5, b6, b7, b8 = b
    return (a0 * b0 + a1 * b3 + a2 * b6, a0 * b1 + a1 * b4 + a2 * b7, a0 * b2 + a1 * b5 + a2 * b8,
            a3 * b0 + a4 * b3 + a5 * b6, a3 * b1 + a4 * b4 + a5 * b7, a3 * b2 + a4 * b5 + a5 * b8,
            a6 * b0 + a7 * b3 + a8 * b6, a6 * b1 + a7 * b4 + a8 * b7, a6 * b2 + a7 * b5 + a8 * b8)


def _mat_vec(m: Sequence[float], v: Sequence[float]) -> Vector:
    return (m[0] * v[0] + m[1] * v[1] + m[2] * v[2], m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
            m[6] * v[0] + m[7] * v[1] + m[8] * v[2])


def _rotation(axis: Sequence[float], angle: float) -> Matrix:
    """Rodrigues rotation about a unit axis, row-major 9 floats."""
    x, y, z = axis
    c, s = math.cos(angle), math.sin(angle)
    v = 1.0 - c
    return (c + x * x * v, x * y * v - z * s, x * z * v + y * s,
            x * y * v + z * s, c + y * y * v, y * z * v - x * s,
            x * z * v - y * s, y * z * v + x * s, c + z * z * v)


def rotation_angle(a: Sequence[float], b: Sequence[float]) -> float:
    """Angle (rad) of the rotation between two rotation matrices; accurate near 0 and π."""
    # Δ = aᵀ·b; trace and skew part from column dot products, then atan2.
    trace = sum(a[i] * b[i] for i in range(9))
    d = [[a[i] * b[j] + a[3 + i] * b[3 + j] + a[6 + i] * b[6 + j] for j in range(3)]
         for i in range(3)]
    skew = math.sqrt((d[2][1] - d[1][2]) ** 2 + (d[0][2] - d[2][0]) ** 2
                     + (d[1][0] - d[0][1]) ** 2)
    return math.atan2(0.5 * skew, 0.5 * (trace - 1.0))


def parse_orientation(orientation: object) -> tuple[Matrix | None, str]:
    """Row-major rotation matrix of a goal orientation, or (None, reason); never raises.

    Accepts a quaternion (x, y, z, w) as in geometry_msgs (normalised here) or a 3×3
    rotation matrix (orthonormal to ROTATION_TOLERANCE), the same inputs as the dls solver.
    """
    quaternion = fast_vector(orientation, 4)
    if quaternion is not None:
        x, y, z, w = quaternion
        norm = math.sqrt(x * x + y * y + z * z + w * w)
        if 1e-6 < norm < 1e150:
            x, y, z, w = x / norm, y / norm, z / norm, w / norm
            return ((1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w),
                     2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w),
                     2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y)),
                    '')
    try:
        array = np.asarray(orientation, dtype=float)
    except (TypeError, ValueError):
        return None, 'target orientation is not numeric'
    if array.size == 4:
        vector, reason = check_vector(array, 4, 'target orientation quaternion')
        if vector is None:
            return None, reason
        norm = float(np.linalg.norm(vector / max(np.abs(vector).max(), 1e-300))) * \
            float(np.abs(vector).max())
        if not 1e-6 < norm < 1e150:
            return None, f'target orientation quaternion has norm {norm:.3g} (must be > 0)'
        return tuple(quaternion_to_matrix(*(vector / norm)).reshape(-1).tolist()), ''
    if array.shape in ((3, 3), (9,)):
        vector, reason = check_vector(array, 9, 'target orientation matrix')
        if vector is None:
            return None, reason
        matrix = vector.reshape(3, 3)
        if np.abs(matrix @ matrix.T - np.eye(3)).max() > ROTATION_TOLERANCE or \
                np.linalg.det(matrix) < 0.0:
            return None, 'target orientation matrix is not a rotation'
        # Project onto SO(3) so the decomposition is exact for the nearest rotation.
        u, _, vt = np.linalg.svd(matrix)
        return tuple((u @ vt).reshape(-1).tolist()), ''
    return None, (f'target orientation has {array.size} values; expected a quaternion '
                  '(x, y, z, w) or a 3x3 rotation matrix')


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def _wrist_centre(origins: np.ndarray, axes: np.ndarray) -> tuple[np.ndarray, float]:
    """Least-squares point nearest the three wrist axes and its largest distance to them."""
    normal = np.zeros((3, 3))
    rhs = np.zeros(3)
    for origin, axis in zip(origins, axes, strict=True):
        projector = np.eye(3) - np.outer(axis, axis)
        normal += projector
        rhs += projector @ origin
    point = np.linalg.lstsq(normal, rhs, rcond=None)[0]
    gap = max(float(np.linalg.norm((np.eye(3) - np.outer(a, a)) @ (point - o)))
              for o, a in zip(origins, axes, strict=True))
    return point, gap


class SphericalWristSolver(Solver):
    """All closed-form solutions of a yaw + two-pitch + spherical-wrist arm.

    Labels ``{front|back}_{up|down}_{noflip|flip}``: front faces the target with the
    yaw (back is yaw + π, reaching over), up/down is the elbow above/below the
    shoulder→wrist-centre line, noflip/flip the two wrist bends (noflip has the wrist
    bend q5 on the positive side of its straight value).

    Goals:
        FULL_POSE: position and orientation (quaternion x, y, z, w or 3×3 matrix).
        TOOL_DOWN: tool Z axis along −Z of the base; the free turn about it is taken from
            the seed's tool heading.
        POSITION: the position with the seed's tool orientation (translation-only jog).
            When no solution keeps that orientation (wrist centre out of reach or joint
            limits), the tool is turned, with the least rotation from the seed's, to
            point away from the shoulder along the shoulder→target line, then towards
            it; the first orientation with a valid solution is used.
    """

    name = 'closed_form'

    def __init__(self, model: ArmModel, workspace: Workspace,
                 home: Sequence[float] | None = None) -> None:
        """Prepare the constants of ``model``.

        Args:
            model: the arm; an inapplicable one makes every solve SOLVER_NOT_APPLICABLE.
            workspace: the tip reach pre-check (``workspace_from_model``).
            home: default seed (rad); the zero pose clamped into the limits when None.
        """
        super().__init__(model, workspace)
        self._not_applicable = self.applicability(model)
        self.ranges = JointRanges(model.lower, model.upper)
        if home is None:
            home = model.clamp(np.zeros(model.dof))
        self.home = tuple(float(v) for v in home)
        self._checked_options: SolveOptions | None = None
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
        centre, gap = _wrist_centre(origins[3:], axes[3:])
        if gap > GEOMETRY_TOLERANCE:
            return f'the last three joint axes do not meet in one point (gap {gap:.3g} m)'
        if abs(float(np.dot(axes[3], axes[4]))) > GEOMETRY_TOLERANCE or \
                abs(float(np.dot(axes[4], axes[5]))) > GEOMETRY_TOLERANCE:
            return 'the wrist axes 4 ⟂ 5 ⟂ 6 are not perpendicular in turn'
        geometry = yaw_pitch_geometry(origins, axes, centre)
        return geometry if isinstance(geometry, str) else ''

    def _prepare_constants(self, model: ArmModel) -> None:
        origins, axes, _ = model.joint_origins_and_axes(np.zeros(6))
        zero = model.fk(np.zeros(6))
        centre, _ = _wrist_centre(origins[3:], axes[3:])
        geometry = yaw_pitch_geometry(origins, axes, centre)
        assert isinstance(geometry, YawPitchGeometry)
        self.geometry = geometry
        g = geometry
        self._elbow_offset = g.phi2 - g.phi1
        # Frame B: z = yaw axis (with its sign), y = shoulder axis, x = y × z.
        zb, yb = _unit(axes[0]), _unit(axes[1])
        basis = np.column_stack([np.cross(yb, zb), yb, zb])           # world ← B
        rotation0 = zero[:3, :3]
        to_b = basis.T
        self._basis = tuple(basis.reshape(-1).tolist())
        self._basis_is_identity = bool(np.allclose(basis, np.eye(3), atol=1e-15))
        self._after_b = tuple((to_b @ rotation0).reshape(-1).tolist())   # Bᵀ·R(0)
        a, b, c = (to_b @ _unit(axes[i]) for i in (3, 4, 5))
        e1 = _unit(np.cross(a, b))        # any unit vector ⟂ a (b ⟂ a, so this is safe)
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

    # ------------------------------------------------------------------ kinematics
    def forward_pose(self, q: Sequence[float]) -> tuple[Vector, Matrix]:
        """Tip position (m) and row-major rotation of joint angles ``q`` (rad), plain math.

        The same product of exponentials as ArmModel.fk, specialised to this arm class.
        """
        q1, q2, q3, q4, q5, q6 = q
        a, b, c = self._axes_b
        wrist = _mat_mul(_mat_mul(_rotation(a, q4), _rotation(b, q5)), _rotation(c, q6))
        theta = q2 + self.geometry.elbow_sign * q3
        ct, st = math.cos(theta), math.sin(theta)
        c1, s1 = math.cos(q1), math.sin(q1)
        # Rz(q1)·Ry(θ) in B coordinates.
        arm = (c1 * ct, -s1, c1 * st, s1 * ct, c1, s1 * st, -st, 0.0, ct)
        rotation = _mat_mul(_mat_mul(arm, wrist), self._after_b)
        if not self._basis_is_identity:
            rotation = _mat_mul(self._basis, rotation)
        centre = self.geometry.forward(q1, q2, q3)
        offset = _mat_vec(rotation, self._wrist_tool)
        return (centre[0] - offset[0], centre[1] - offset[1], centre[2] - offset[2]), rotation

    def solutions(self, position: Sequence[float], rotation: Sequence[float],
                  reference: Sequence[float]) -> tuple[list[tuple[str, tuple]], str]:
        """Every labelled solution (rad, not yet wrapped into limits) of a tip pose.

        Args:
            position: tip position (m, base frame).
            rotation: tip rotation, row-major 9 floats.
            reference: seed (rad); its yaw is used on the yaw axis and its q4 at a
                straight wrist.

        Returns:
            (solutions, reason): 8 solutions, or [] and why the wrist centre is out of
            reach for this orientation.
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
            return [], (f'the wrist centre for this orientation is {distance:.3f} m from the '
                        f'shoulder; it must be within [{near:.3f}, {far:.3f}] m')
        yaw, alpha_up, alpha_down, up_beta = arm_triangle(g, centre, reference[0])
        # T_B·c and T_B·b, with T_B = Bᵀ·R·R(0)ᵀ·B.
        tc, tb = _mat_vec(r, self._c_tool), _mat_vec(r, self._b_tool)
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
        out = []
        for label, q1, cq, sq, alpha, beta in arms:
            q2 = alpha - phi1
            q3 = s * (beta - offset)
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
                out.append((label + suffix, (q1, q2, q3, q4, q5, math.atan2(across, along))))
        return out, ''

    # ------------------------------------------------------------------ goals
    def _goal_rotation(self, goal: int, orientation: object,
                       reference: Sequence[float]) -> tuple[list[Matrix], str]:
        """Rotations to try for a goal, in order, or ([], reason) for a bad orientation."""
        if goal == GoalType.FULL_POSE:
            if orientation is None:
                return [], 'a FULL_POSE goal needs a target orientation'
            rotation, reason = parse_orientation(orientation)
            return ([rotation], '') if rotation is not None else ([], reason)
        _, seed_rotation = self.forward_pose(reference)
        if goal == GoalType.TOOL_DOWN:
            # Tool heading from the seed: its x axis on the floor, else its y axis.
            if math.hypot(seed_rotation[0], seed_rotation[3]) > 1e-6:
                heading = math.atan2(seed_rotation[3], seed_rotation[0])
            else:
                heading = math.atan2(seed_rotation[4], seed_rotation[1]) + 0.5 * PI
            ch, sh = math.cos(heading), math.sin(heading)
            # Rz(heading)·Rx(π): x = (ch, sh, 0), y = (sh, −ch, 0), z = (0, 0, −1).
            return [(ch, sh, 0.0, sh, -ch, 0.0, 0.0, 0.0, -1.0)], ''
        return [seed_rotation], ''

    def _position_fallbacks(self, position: Sequence[float],
                            seed_rotation: Matrix) -> list[Matrix]:
        """The seed's rotation turned, least, so the tool points out of / into the shoulder."""
        g = self.geometry
        radial = [position[i] - g.shoulder[i] for i in range(3)]
        norm = math.hypot(*radial)
        if norm < 1e-9:
            return []
        radial = [v / norm for v in radial]
        # Current direction tool → wrist centre, in the base frame.
        towards_wrist = _mat_vec(seed_rotation, self._wrist_tool)
        length = math.hypot(*towards_wrist)
        if length < 1e-12:
            return []
        current = [v / length for v in towards_wrist]
        turned = []
        for wanted in ([-v for v in radial], radial):      # wrist nearer / farther
            axis = np.cross(current, wanted)
            sin_angle = float(np.linalg.norm(axis))
            cos_angle = float(np.dot(current, wanted))
            if sin_angle < 1e-12:
                axis = np.cross(current, [1.0, 0.0, 0.0] if abs(current[0]) < 0.9
                                else [0.0, 1.0, 0.0])
                sin_angle = float(np.linalg.norm(axis))
                cos_angle = cos_angle if cos_angle > 0.0 else -1.0
                axis_angle = 0.0 if cos_angle > 0.0 else PI
            else:
                axis_angle = math.atan2(sin_angle, cos_angle)
            turn = _rotation(tuple((axis / sin_angle).tolist()), axis_angle)
            turned.append(_mat_mul(turn, seed_rotation))
        return turned

    # ------------------------------------------------------------------ solve
    def _failure(self, start: float, code: ErrorCode, reason: str) -> IKResult:
        return IKResult(code, reason, solve_time=perf_counter() - start)

    def solve(self, position: object, orientation: object = None,
              goal: GoalType = GoalType.FULL_POSE, seed: object = None,
              options: SolveOptions = _DEFAULT_OPTIONS) -> IKResult:
        """Solve one goal in closed form; never raises.

        Args:
            position: tip position (m, base frame), 3 values.
            orientation: FULL_POSE only: quaternion (x, y, z, w) or 3×3 rotation matrix.
            goal: FULL_POSE, TOOL_DOWN or POSITION (see the class docstring).
            seed: reference configuration (rad); the home pose when None.
            options: ``branch`` ('' / 'nearest' or a label of BRANCHES), ``return_all``.

        Returns:
            IKResult; a solution past a joint limit is never returned as success.
        """
        start = perf_counter()
        if self._not_applicable:
            return self._failure(start, ErrorCode.SOLVER_NOT_APPLICABLE, self._not_applicable)
        if options is not self._checked_options:
            checked, reason = options.validated()
            if checked is None:
                return self._failure(start, ErrorCode.INVALID_INPUT, reason)
            self._checked_options = options
        branch = options.branch
        if branch not in NEAREST and branch not in BRANCHES:
            return self._failure(start, ErrorCode.INVALID_INPUT,
                                 f'unknown branch "{branch}"; valid: nearest, '
                                 + ', '.join(BRANCHES))
        if goal not in (GoalType.FULL_POSE, GoalType.TOOL_DOWN, GoalType.POSITION):
            return self._failure(start, ErrorCode.INVALID_INPUT, f'unknown goal type {goal!r}')
        target, failure = self.workspace.check_position(position)
        if failure is not None:
            failure.solve_time = perf_counter() - start
            return failure
        target = tuple(target.tolist())
        if seed is None:
            reference = self.home
        else:
            reference = fast_vector(seed, 6)
            if reference is None:
                vector, reason = check_vector(seed, 6, 'seed')
                if vector is None:
                    return self._failure(start, ErrorCode.INVALID_INPUT, reason)
                reference = tuple(vector.tolist())
        rotations, reason = self._goal_rotation(goal, orientation, reference)
        if not rotations:
            return self._failure(start, ErrorCode.INVALID_INPUT, reason)
        code, reason = ErrorCode.OUT_OF_REACH, ''
        attempt = 0
        while attempt < len(rotations):
            rotation = rotations[attempt]
            candidates, why = self.solutions(target, rotation, reference)
            if candidates:
                result = self._choose(start, target, rotation, goal, reference, candidates,
                                      branch, options.return_all)
                if result.success or goal != GoalType.POSITION:
                    return result
                code, why = result.code, result.reason
            if attempt == 0:
                code = code if candidates else ErrorCode.OUT_OF_REACH
                reason = why
                if goal == GoalType.POSITION:
                    rotations += self._position_fallbacks(target, rotation)
            attempt += 1
        if goal == GoalType.POSITION and len(rotations) > 1:
            reason += ' (the tool turned along the shoulder→target line did not help either)'
        return self._failure(start, code, reason)

    def _choose(self, start: float, target: Vector, rotation: Matrix, goal: int,
                reference: Sequence[float], candidates: list, branch: str,
                return_all: bool) -> IKResult:
        ranges = self.ranges
        shift, base, top, lower, upper = (ranges.shift, ranges.base, ranges.top,
                                          ranges.lower, ranges.upper)
        nearest = branch in NEAREST
        best = None
        best_step = math.inf
        valid = []
        for label, q in candidates:
            if not (nearest or return_all or label == branch):
                continue
            wrapped = []
            for j in range(6):
                angle = (q[j] + shift[j]) % TWO_PI + base[j]
                if angle > top[j]:
                    break
                wrapped.append(lower[j] if angle < lower[j] else
                               upper[j] if angle > upper[j] else angle)
            else:
                valid.append((label, wrapped))
                if nearest or label == branch:
                    step = max(abs(wrapped[j] - reference[j]) for j in range(6))
                    if step < best_step or best is None:
                        best, best_step = (label, wrapped), step
        if best is None:
            names = self.model.joint_names
            if nearest:
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
