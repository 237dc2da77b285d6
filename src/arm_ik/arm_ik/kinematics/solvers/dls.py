"""Damped least squares (Levenberg–Marquardt) IK for any serial chain, and its FK kernel.

The generic :class:`~arm_ik.kinematics.model.ArmModel` FK costs tens of microseconds per
call because it builds 4×4 numpy matrices joint by joint. A numeric solver calls FK and
the Jacobian hundreds of times per request, so this module compiles, once per model, a
straight-line FK + Jacobian function in plain Python floats (:class:`ChainKernel`): the
joint offsets and axes are read from the model and written into the code as constants,
terms that are zero are dropped, and rotations about ±X/±Y/±Z mix only two columns.
Nothing is hard-coded: a different URDF gives a different kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import math
import time

import numpy as np

from arm_ik.kinematics.model import ArmModel, FULL_TURN
from arm_ik.kinematics.result import check_vector, ErrorCode, GoalType, IKResult
from arm_ik.kinematics.solvers.base import Solver, SolveOptions, Workspace
from arm_ik.kinematics.transforms import quaternion_to_matrix

# --------------------------------------------------------------------------------------
# FK / Jacobian kernel
# --------------------------------------------------------------------------------------

Entry = str | float   # a generated variable name or a constant folded at generation time


class _Code:
    """Collects straight-line SSA code; every value is a fresh name or a folded constant."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._count = 0

    def value(self, terms: Sequence[Sequence[Entry]], constant: float = 0.0) -> Entry:
        """Emit ``constant + Σ Π factors`` and return its name (or the constant itself).

        Each term is a product of factors, each a variable name or a float. Products with
        a zero factor vanish and constant products are folded, so a joint offset along one
        axis costs one multiply instead of nine.
        """
        parts = []
        for factors in terms:
            scale = 1.0
            names = []
            for factor in factors:
                if isinstance(factor, str):
                    names.append(factor)
                else:
                    scale *= factor
            if scale == 0.0:
                continue
            if not names:
                constant += scale
                continue
            parts.append((scale, names))
        if not parts:
            return float(constant)
        if len(parts) == 1 and parts[0][0] == 1.0 and len(parts[0][1]) == 1 and constant == 0.0:
            return parts[0][1][0]   # a pure alias: floats are immutable, so no copy is needed
        text = []
        for scale, names in parts:
            product = '*'.join(names)
            if scale == 1.0:
                text.append(product)
            elif scale == -1.0:
                text.append(f'-{product}')
            else:
                text.append(f'{scale!r}*{product}')
        if constant != 0.0:
            text.append(repr(float(constant)))
        return self.assign(' + '.join(text))

    def assign(self, expression: str) -> str:
        self._count += 1
        name = f't{self._count}'
        self.lines.append(f'{name} = {expression}')
        return name


def _literal(entry: Entry) -> str:
    return entry if isinstance(entry, str) else repr(float(entry))


def _kernel_source(model: ArmModel) -> str:
    """Python source of ``pose``, ``pose_jacobian`` and ``joint_frames`` for ``model``."""
    code = _Code()
    n = model.dof
    rotation: list[list[Entry]] = [[1.0 if i == j else 0.0 for j in range(3)] for i in range(3)]
    position: list[Entry] = [0.0, 0.0, 0.0]

    origins: list[list[Entry]] = []
    axes: list[list[Entry]] = []
    for index, joint in enumerate(model.joints):
        translation = joint.offset[:3, 3]
        position = [code.value([(position[k], 1.0)]
                               + [(rotation[k][j], float(translation[j])) for j in range(3)])
                    for k in range(3)]
        fixed = joint.offset[:3, :3]
        if not np.array_equal(fixed, np.eye(3)):
            rotation = [[code.value([(rotation[k][m], float(fixed[m][j])) for m in range(3)])
                         for j in range(3)] for k in range(3)]
        axis = [float(a) for a in joint.axis]
        origins.append(list(position))
        axes.append([code.value([(rotation[k][m], axis[m]) for m in range(3)])
                     for k in range(3)])
        cos_name = code.assign(f'cos(q{index})')
        sin_name = code.assign(f'sin(q{index})')
        unit = [m for m in range(3) if axis[m] != 0.0]
        if len(unit) == 1 and abs(axis[unit[0]]) == 1.0:
            # Rotation about ±e_k mixes only the other two columns (a, b) in cyclic order.
            k = unit[0]
            sign = axis[k]
            a, b = (k + 1) % 3, (k + 2) % 3
            new_a = [code.value([(rotation[r][a], cos_name), (rotation[r][b], sin_name, sign)])
                     for r in range(3)]
            new_b = [code.value([(rotation[r][b], cos_name), (rotation[r][a], sin_name, -sign)])
                     for r in range(3)]
            for r in range(3):
                rotation[r][a] = new_a[r]
                rotation[r][b] = new_b[r]
        else:
            # General axis, Rodrigues: M = I + s·K + (1 − c)·K².
            x, y, z = axis
            skew = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
            skew_sq = skew @ skew
            versine = code.assign(f'1.0 - {cos_name}')
            local = [[code.value([(sin_name, float(skew[i][j])),
                                  (versine, float(skew_sq[i][j]))], 1.0 if i == j else 0.0)
                      for j in range(3)] for i in range(3)]
            rotation = [[code.value([(rotation[r][m], local[m][j]) for m in range(3)])
                         for j in range(3)] for r in range(3)]
    tip = model.tip_offset
    position = [code.value([(position[k], 1.0)]
                           + [(rotation[k][j], float(tip[j, 3])) for j in range(3)])
                for k in range(3)]
    if not np.array_equal(tip[:3, :3], np.eye(3)):
        rotation = [[code.value([(rotation[k][m], float(tip[m][j])) for m in range(3)])
                     for j in range(3)] for k in range(3)]
    body = list(code.lines)
    pose = ', '.join(_literal(e) for e in position + [rotation[i][j] for i in range(3)
                                                       for j in range(3)])

    # Geometric Jacobian columns: linear w_i × (p − o_i), angular w_i.
    jacobian_code = _Code()
    jacobian_code._count = code._count
    rows: list[list[Entry]] = [[0.0] * n for _ in range(6)]
    for index in range(n):
        w = axes[index]
        d = [jacobian_code.value([(position[k], 1.0), (origins[index][k], -1.0)])
             for k in range(3)]
        rows[0][index] = jacobian_code.value([(w[1], d[2]), (w[2], d[1], -1.0)])
        rows[1][index] = jacobian_code.value([(w[2], d[0]), (w[0], d[2], -1.0)])
        rows[2][index] = jacobian_code.value([(w[0], d[1]), (w[1], d[0], -1.0)])
        for k in range(3):
            rows[3 + k][index] = w[k]
    jacobian = ', '.join(_literal(e) for row in rows for e in row)
    frames = ', '.join('(' + ', '.join(_literal(e) for e in origins[i] + axes[i]) + ')'
                       for i in range(n))
    unpack = ', '.join(f'q{i}' for i in range(n)) + (',' if n == 1 else '')
    indent = '    '

    def function(name: str, extra: list[str], result: str) -> list[str]:
        return ([f'def {name}(q):', f'{indent}{unpack} = q']
                + [indent + line for line in body + extra] + [f'{indent}return {result}', ''])

    source = (function('pose', [], f'({pose})')
              + function('pose_jacobian', jacobian_code.lines, f'({pose}), [{jacobian}]')
              + function('joint_frames', [], f'[{frames}], ({_literal(position[0])}, '
                                             f'{_literal(position[1])}, {_literal(position[2])})'))
    return '\n'.join(source)


class ChainKernel:
    """Allocation-light FK and geometric Jacobian of one :class:`ArmModel`.

    All three functions take joint positions as a sequence of Python floats (radians; a
    list is fastest, numpy scalars are slower) and return plain floats:

    * ``pose(q)`` → ``(px, py, pz, r00, r01, r02, r10, ..., r22)``: tip position (metres)
      and rotation matrix, row-major, in the base frame.
    * ``pose_jacobian(q)`` → ``(pose, jacobian)``: the pose as above and the geometric
      Jacobian as a row-major list of 6·n floats (rows vx vy vz wx wy wz).
    * ``joint_frames(q)`` → ``(frames, tip)``: per joint ``(ox, oy, oz, ax, ay, az)``, its
      world origin and unit axis, and the tip position.

    Attributes:
        source: the generated Python source (for inspection and debugging).
    """

    def __init__(self, model: ArmModel) -> None:
        self.model = model
        self.dof = model.dof
        self.source = _kernel_source(model)
        namespace: dict[str, object] = {'cos': math.cos, 'sin': math.sin}
        # The source holds only names generated above and float reprs from the model.
        exec(compile(self.source, f'<ChainKernel {model.name}>', 'exec'), namespace)  # noqa: S102
        self.pose: Callable[[Sequence[float]], tuple[float, ...]] = namespace['pose']
        self.pose_jacobian: Callable[[Sequence[float]], tuple[tuple[float, ...], list[float]]] \
            = namespace['pose_jacobian']
        self.joint_frames: Callable[[Sequence[float]], tuple[list[tuple[float, ...]],
                                                             tuple[float, float, float]]] \
            = namespace['joint_frames']

    def fk(self, q: Sequence[float]) -> np.ndarray:
        """Tip transform (4×4, metres) like :meth:`ArmModel.fk`, through the fast kernel."""
        pose = self.pose([float(v) for v in q])
        transform = np.eye(4)
        transform[:3, 3] = pose[:3]
        transform[:3, :3] = np.reshape(pose[3:], (3, 3))
        return transform

    def jacobian(self, q: Sequence[float]) -> np.ndarray:
        """Geometric Jacobian (6, n) like :meth:`ArmModel.jacobian`, through the fast kernel."""
        _, jacobian = self.pose_jacobian([float(v) for v in q])
        return np.reshape(jacobian, (6, self.dof))


# --------------------------------------------------------------------------------------
# Helpers shared with the CCD solver and the experiments
# --------------------------------------------------------------------------------------

def damped_least_squares_step(jacobian: np.ndarray, error: np.ndarray,
                              damping: float) -> np.ndarray:
    """The plain DLS step Δq = Jᵀ (J Jᵀ + λ² I)⁻¹ e.

    Args:
        jacobian: task Jacobian (m, n).
        error: task error e (m,), metres / radians.
        damping: λ (> 0), in the units of the Jacobian's singular values (metres).

    Returns:
        Joint step (n,), radians.
    """
    normal = jacobian @ jacobian.T
    normal[np.diag_indices_from(normal)] += damping * damping
    return jacobian.T @ np.linalg.solve(normal, error)


class JointLimiter:
    """Applies the joint limits of a model to a list of floats: clamp, or wrap full turns.

    Joints whose range spans a full turn are wrapped into ``[lower, lower + 2π)`` instead of
    clamped: a clamp there would stop the solver at an artificial wall (measured: full-pose
    solve rate on six_axis 85 % with clamping, 94 % with wrapping, before restarts).
    """

    def __init__(self, model: ArmModel, respect_limits: bool = True) -> None:
        self.lower = model.lower.tolist()
        self.upper = model.upper.tolist()
        self.wraps = model.wraps.tolist()
        self.active = respect_limits
        self.indices = range(model.dof)

    def apply(self, q: list[float]) -> list[float]:
        """``q`` inside the limits (new list), or ``q`` itself when limits are ignored."""
        if not self.active:
            return q
        out = []
        for value, low, high, wraps in zip(q, self.lower, self.upper, self.wraps):
            if wraps:
                if value < low or value >= low + FULL_TURN:
                    value = low + math.fmod(value - low, FULL_TURN)
                    if value < low:
                        value += FULL_TURN
            elif value < low:
                value = low
            elif value > high:
                value = high
            out.append(value)
        return out

    def random(self, rng: np.random.Generator) -> list[float]:
        """A configuration drawn uniformly inside the limits (restart seeds)."""
        return rng.uniform(self.lower, self.upper).tolist()


def parse_orientation(orientation: object) -> tuple[list[float] | None, str]:
    """Rotation of a target as a row-major list of 9 floats, or (None, reason).

    Accepts a quaternion (x, y, z, w) as in geometry_msgs, normalised here, or a 3×3
    rotation matrix (checked for orthonormality to 1e-6).
    """
    try:
        array = np.asarray(orientation, dtype=float)
    except (TypeError, ValueError):
        return None, 'target orientation is not numeric'
    if array.size == 4:
        vector, reason = check_vector(array, 4, 'target orientation quaternion')
        if vector is None:
            return None, reason
        norm = math.sqrt(float(vector @ vector)) if np.all(np.abs(vector) < 1e150) else math.inf
        if not 1e-6 < norm < 1e150:
            return None, f'target orientation quaternion has norm {norm:.3g} (must be > 0)'
        vector = vector / norm
        return quaternion_to_matrix(*vector).reshape(-1).tolist(), ''
    if array.shape == (3, 3):
        vector, reason = check_vector(array, 9, 'target orientation matrix')
        if vector is None:
            return None, reason
        matrix = vector.reshape(3, 3)
        if np.abs(matrix @ matrix.T - np.eye(3)).max() > 1e-6 or np.linalg.det(matrix) < 0:
            return None, 'target orientation matrix is not a rotation'
        return vector.tolist(), ''
    return None, (f'target orientation has {array.size} values; expected a quaternion '
                  '(x, y, z, w) or a 3x3 rotation matrix')


def rotation_error_fast(current: Sequence[float], target: Sequence[float]
                        ) -> tuple[float, float, float, float]:
    """Angle-axis vector (radians) rotating ``current`` onto ``target`` and its angle.

    Same result as :func:`arm_ik.kinematics.transforms.rotation_error`, in plain floats.

    Args:
        current, target: rotation matrices as row-major sequences of 9 floats.

    Returns:
        (ex, ey, ez, angle): world-frame angle-axis vector and its length, radians.
    """
    c00, c01, c02, c10, c11, c12, c20, c21, c22 = current
    t00, t01, t02, t10, t11, t12, t20, t21, t22 = target
    # delta = target · currentᵀ
    d00 = t00 * c00 + t01 * c01 + t02 * c02
    d11 = t10 * c10 + t11 * c11 + t12 * c12
    d22 = t20 * c20 + t21 * c21 + t22 * c22
    d01 = t00 * c10 + t01 * c11 + t02 * c12
    d10 = t10 * c00 + t11 * c01 + t12 * c02
    d02 = t00 * c20 + t01 * c21 + t02 * c22
    d20 = t20 * c00 + t21 * c01 + t22 * c02
    d12 = t10 * c20 + t11 * c21 + t12 * c22
    d21 = t20 * c10 + t21 * c11 + t22 * c12
    vx, vy, vz = d21 - d12, d02 - d20, d10 - d01
    cos_angle = (d00 + d11 + d22 - 1.0) * 0.5
    sin_angle = 0.5 * math.sqrt(vx * vx + vy * vy + vz * vz)
    # atan2 keeps full precision at both small angles and near a half turn.
    angle = math.atan2(sin_angle, cos_angle)
    if angle < 1e-9:
        return 0.5 * vx, 0.5 * vy, 0.5 * vz, angle
    if math.pi - angle < 1e-6:
        # Near a half turn the skew part vanishes; the axis is in the symmetric part.
        diagonal = ((d00 + 1.0) * 0.5, (d11 + 1.0) * 0.5, (d22 + 1.0) * 0.5)
        column = max(range(3), key=diagonal.__getitem__)
        symmetric = ((d00 + 1.0) * 0.5, (d01 + d10) * 0.25, (d02 + d20) * 0.25,
                     (d01 + d10) * 0.25, (d11 + 1.0) * 0.5, (d12 + d21) * 0.25,
                     (d02 + d20) * 0.25, (d12 + d21) * 0.25, (d22 + 1.0) * 0.5)
        ax, ay, az = symmetric[column], symmetric[3 + column], symmetric[6 + column]
        # Pick the sign that agrees with the (small) skew part, so the result is continuous.
        if ax * vx + ay * vy + az * vz < 0.0:
            ax, ay, az = -ax, -ay, -az
        norm = math.sqrt(ax * ax + ay * ay + az * az)
        scale = angle / norm
        return ax * scale, ay * scale, az * scale, angle
    scale = angle / (2.0 * sin_angle)
    return vx * scale, vy * scale, vz * scale, angle


def position_error(pose: Sequence[float], target: Sequence[float]) -> float:
    """Euclidean distance (metres) between a kernel pose's position and ``target``."""
    return math.sqrt((target[0] - pose[0]) ** 2 + (target[1] - pose[1]) ** 2
                     + (target[2] - pose[2]) ** 2)
