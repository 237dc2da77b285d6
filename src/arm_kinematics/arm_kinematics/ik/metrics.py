"""Dexterity and reach metrics of an arm configuration (plain numbers, SI units)."""

from __future__ import annotations

from collections.abc import Sequence
import math
import operator

import numpy as np

from arm_kinematics.ik.result import fast_vector
from arm_kinematics.ik.solvers.base import Workspace

# Eigenvalues of Jv·Jvᵀ below this fraction of the largest are rounding noise: eigvalsh
# is accurate to about n·eps·λmax, so the matrix counts as singular (condition ∞).
_SINGULAR_EIGENVALUE_RATIO = 64.0 * np.finfo(float).eps
# The closed-form eigenvalues are used when their rounding bound is below this fraction of
# λmin; otherwise (ill-conditioned, or a nearly double eigenvalue) LAPACK recomputes them.
_CLOSED_FORM_RELATIVE_ERROR = 1e-9
_EPS = float(np.finfo(float).eps)
_TWO_THIRDS_PI = 2.0 * math.pi / 3.0
_SQRT2, _SQRT6 = math.sqrt(2.0), math.sqrt(6.0)
# |sin q2| below this is a straight or folded elbow (sin π is 1.2e-16, not 0).
_STRAIGHT_ELBOW = 1e-12


def _position_rows(jacobian: object) -> np.ndarray:
    """The linear-velocity rows of a (2|3|6, n) Jacobian, checked to be finite.

    Two rows are a planar arm seen in its plane; of six rows the first three are linear.
    """
    matrix = np.asarray(jacobian, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] not in (2, 3, 6) or matrix.shape[1] == 0:
        raise ValueError(f'expected a (2, n), (3, n) or (6, n) Jacobian, got shape '
                         f'{matrix.shape}')
    if not np.all(np.isfinite(matrix)):
        raise ValueError('the Jacobian holds NaN or inf')
    return matrix[:3]


def manipulability(jv: object) -> float:
    """Yoshikawa's manipulability sqrt(det(Jv·Jvᵀ)) of the position rows.

    Args:
        jv: (3, n) linear-velocity Jacobian in m/rad, a (6, n) geometric Jacobian whose
            first three rows are used, or a (2, n) planar one.

    Returns:
        The volume measure in m^k/rad^k for k position rows (0 when singular or n < k).
        For a planar two-link arm (2 × 2) it equals l1·l2·|sin q2| m²/rad².

    Raises:
        ValueError: wrong shape or non-finite entries.
    """
    return dexterity(_position_rows(jv).tolist())[0]


def condition_number(jv: object) -> float:
    """Ratio σmax/σmin of the position rows, from the eigenvalues of Jv·Jvᵀ.

    Args:
        jv: (2, n), (3, n) or (6, n) Jacobian (m/rad); only position rows are used.

    Returns:
        A number ≥ 1 (dimensionless); math.inf when the rows are rank-deficient to
        rounding precision (e.g. a stretched arm), never a division error.

    Raises:
        ValueError: wrong shape or non-finite entries.
    """
    return dexterity(_position_rows(jv).tolist())[1]


def dexterity(rows: Sequence[Sequence[float]]) -> tuple[float, float]:
    """(manipulability, condition number) of 2 or 3 finite position rows of a Jacobian.

    One Gram matrix G = Jv·Jvᵀ serves both: manipulability sqrt(det G), condition number
    sqrt(λmax/λmin) of G's eigenvalues. In plain floats, because the IK services report
    both on every answer, where numpy's per-call cost would exceed the arithmetic: the
    eigenvalues come in closed form (the quadratic for two rows, Smith's trigonometric
    solution of the characteristic cubic for three), with a rounding bound; where that
    bound is not below 1e-9 of λmin (an ill-conditioned G, or a nearly double eigenvalue,
    where the cubic loses half the digits) LAPACK's eigvalsh is used instead.

    Args:
        rows: the position rows (m/rad), each with one entry per joint; the caller
            guarantees they are finite (``manipulability`` / ``condition_number`` check).

    Returns:
        (m^k/rad^k, dimensionless ≥ 1 or math.inf), as the two functions above.
    """
    mul = operator.mul
    if len(rows) == 2:
        a, b = rows
        g00, g01, g11 = sum(map(mul, a, a)), sum(map(mul, a, b)), sum(map(mul, b, b))
        gram = ((g00, g01), (g01, g11))
        determinant = g00 * g11 - g01 * g01
        mean = 0.5 * (g00 + g11)
        spread = math.hypot(0.5 * (g00 - g11), g01)
        largest, smallest = mean + spread, mean - spread
        bound = 4.0 * _EPS * (abs(mean) + spread)
    else:
        a, b, c = rows
        g00, g01, g02 = sum(map(mul, a, a)), sum(map(mul, a, b)), sum(map(mul, a, c))
        g11, g12, g22 = sum(map(mul, b, b)), sum(map(mul, b, c)), sum(map(mul, c, c))
        gram = ((g00, g01, g02), (g01, g11, g12), (g02, g12, g22))
        determinant = (g00 * (g11 * g22 - g12 * g12) - g01 * (g01 * g22 - g12 * g02)
                       + g02 * (g01 * g12 - g11 * g02))
        largest, smallest, bound = _symmetric3_extreme_eigenvalues(g00, g01, g02, g11, g12,
                                                                   g22)
    # A singular product can come out a hair below zero; that is still "no volume".
    volume = math.sqrt(determinant) if determinant > 0.0 else 0.0
    if not bound < _CLOSED_FORM_RELATIVE_ERROR * smallest:
        eigenvalues = np.linalg.eigvalsh(np.array(gram))   # ascending, real (symmetric)
        largest, smallest = float(eigenvalues[-1]), float(eigenvalues[0])
    if largest <= 0.0 or smallest <= _SINGULAR_EIGENVALUE_RATIO * largest:
        return volume, math.inf
    return volume, math.sqrt(largest / smallest)


def dexterity_batch(jv: object) -> tuple[np.ndarray, np.ndarray]:
    """(manipulability, condition number) of N poses at once, as ``dexterity`` pose by pose.

    Args:
        jv: (N, k, n) position rows (k = 2 or 3, m/rad), finite.

    Returns:
        Two (N,) arrays: sqrt(det(Jv·Jvᵀ)) in m^k/rad^k (0 when singular) and σmax/σmin
        (math.inf when rank-deficient to rounding precision, the rule of ``dexterity``).

    Raises:
        ValueError: wrong shape or non-finite entries.
    """
    rows = np.asarray(jv, dtype=float)
    if rows.ndim != 3 or rows.shape[1] not in (2, 3) or rows.shape[2] == 0:
        raise ValueError(f'expected (N, 2|3, n) position rows, got shape {rows.shape}')
    if not np.all(np.isfinite(rows)):
        raise ValueError('the Jacobians hold NaN or inf')
    gram = rows @ np.swapaxes(rows, 1, 2)
    eigenvalues = np.linalg.eigvalsh(gram)          # ascending, per pose
    volume = np.sqrt(np.maximum(np.linalg.det(gram), 0.0))
    largest, smallest = eigenvalues[:, -1], eigenvalues[:, 0]
    singular = (largest <= 0.0) | (smallest <= _SINGULAR_EIGENVALUE_RATIO * largest)
    with np.errstate(divide='ignore', invalid='ignore'):
        condition = np.where(singular, math.inf, np.sqrt(largest / np.where(singular, 1.0,
                                                                             smallest)))
    return volume, condition


def _symmetric3_extreme_eigenvalues(g00: float, g01: float, g02: float, g11: float,
                                    g12: float, g22: float) -> tuple[float, float, float]:
    """Largest and smallest eigenvalue of a symmetric 3×3 matrix (Smith, CACM 1961), and a
    bound of their rounding error.

    The angle comes from arccos(r), whose error grows as 1/sqrt(1 − r²) where two
    eigenvalues meet (r = ±1); the bound says so (checked against LAPACK in the tests).
    """
    mean = (g00 + g11 + g22) / 3.0
    d0, d1, d2 = g00 - mean, g11 - mean, g22 - mean
    # sqrt((d0² + d1² + d2² + 2·(g01² + g02² + g12²)) / 6), without under- or overflow.
    p = math.hypot(d0, d1, d2, _SQRT2 * g01, _SQRT2 * g02, _SQRT2 * g12) / _SQRT6
    if p == 0.0:      # a multiple of the identity
        return mean, mean, 4.0 * _EPS * abs(mean)
    scale = 2.0 * p * p * p
    if not 0.0 < scale < math.inf:   # p³ under- or overflows: no bound, LAPACK decides
        return mean, mean, math.inf
    # det((G − mean·I) / p) / 2, the cosine of three times the angle below.
    r = (d0 * (d1 * d2 - g12 * g12) - g01 * (g01 * d2 - g12 * g02)
         + g02 * (g01 * g12 - d1 * g02)) / scale
    r = -1.0 if r < -1.0 else 1.0 if r > 1.0 else r
    angle = math.acos(r) / 3.0
    apart = 1.0 - r * r
    bound = 8.0 * _EPS * (abs(mean) + 2.0 * p) * (
        1.0 + (1.0 / math.sqrt(apart) if apart > 0.0 else math.inf))
    return (mean + 2.0 * p * math.cos(angle),
            mean + 2.0 * p * math.cos(angle + _TWO_THIRDS_PI), bound)


def reach_fraction(workspace: Workspace, position: object) -> float:
    """Distance of ``position`` from the shoulder as a fraction of the maximum reach.

    Never raises, so it can describe any request, including a malformed one.

    Args:
        workspace: the arm's reach rules (metres).
        position: point in the base frame, 3 values in metres.

    Returns:
        0 at the shoulder, 1 on the outer shell, > 1 outside (dimensionless); math.inf
        for a zero maximum reach; NaN when ``position`` is not 3 finite numbers.
    """
    point = fast_vector(position, 3)
    if point is None:
        try:
            array = np.asarray(position, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            return math.nan
        if array.shape != (3,) or not np.all(np.isfinite(array)):
            return math.nan
        point = array.tolist()
    sx, sy, sz = workspace.shoulder.tolist()
    # hypot does not overflow for 1e308 coordinates.
    distance = math.hypot(point[0] - sx, point[1] - sy, point[2] - sz)
    if workspace.max_reach <= 0.0:
        return math.inf
    return distance / workspace.max_reach


def elbow_sensitivity(l1: float, l2: float, r: float, q2: float) -> float:
    """How fast the elbow must turn per metre of shoulder-to-target distance.

    From r² = l1² + l2² + 2·l1·l2·cos q2: |dq2/dr| = r / (l1·l2·|sin q2|).

    Args:
        l1, l2: link lengths, m.
        r: shoulder-to-target distance, m.
        q2: elbow angle, rad (0 = stretched).

    Returns:
        rad/m; math.inf at full stretch or fold (|sin q2| ≈ 0) or for a zero link.
    """
    denominator = l1 * l2 * abs(math.sin(q2))
    if not denominator > _STRAIGHT_ELBOW * max(l1 * l2, 1e-300):
        return math.inf
    return abs(r) / denominator
