"""Dexterity and reach metrics of an arm configuration (plain numbers, SI units)."""

from __future__ import annotations

import math

import numpy as np

from arm_ik.kinematics.solvers.base import Workspace

# Eigenvalues of Jv·Jvᵀ below this fraction of the largest are rounding noise: eigvalsh
# is accurate to about n·eps·λmax, so the matrix counts as singular (condition ∞).
_SINGULAR_EIGENVALUE_RATIO = 64.0 * np.finfo(float).eps
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
    rows = _position_rows(jv)
    determinant = float(np.linalg.det(rows @ rows.T))
    # A singular product can come out a hair below zero; that is still "no volume".
    return math.sqrt(determinant) if determinant > 0.0 else 0.0


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
    rows = _position_rows(jv)
    eigenvalues = np.linalg.eigvalsh(rows @ rows.T)   # ascending, real (symmetric)
    largest, smallest = float(eigenvalues[-1]), float(eigenvalues[0])
    if largest <= 0.0 or smallest <= _SINGULAR_EIGENVALUE_RATIO * largest:
        return math.inf
    return math.sqrt(largest / smallest)


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
    try:
        point = np.asarray(position, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        return math.nan
    if point.shape != (3,) or not np.all(np.isfinite(point)):
        return math.nan
    # hypot does not overflow for 1e308 coordinates.
    distance = math.hypot(*(point - workspace.shoulder).tolist())
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
