"""The condition numbers path IK checks every sample against: of the Jacobian rows a goal
constrains (position rows; TOOL_DOWN adds the two rows that tilt the tool axis, FULL_POSE
the three rotation rows, each times a reach so all rows are m). No ROS.
"""

from __future__ import annotations

import math

import numpy as np

from arm_kinematics.ik.result import GoalType
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.model.kernel import compiled, pose_and_jacobian


def condition_number(model: ArmModel, reach: float, q: np.ndarray, goal: GoalType) -> float:
    """Condition number of the goal's constraint Jacobian at ``q`` (dimensionless): position
    rows; FULL_POSE adds the rotation rows and TOOL_DOWN the two that tilt the tool axis,
    both times ``reach`` (m) so all rows are m."""
    return float(condition_numbers(model, reach, np.reshape(q, (1, -1)), goal)[0])


def condition_numbers(model: ArmModel, reach: float, qs: np.ndarray, goal: GoalType,
                      below: float = math.inf) -> np.ndarray:
    """``condition_number`` of every row of ``qs`` (N, n), every goal in one compiled call
    (a closed form's path checks branches at every sample: numpy's SVD of one 6×6, or a
    Python loop of ``metrics.condition_number``, cost more than the closed form).

    ``below``: a finite bound makes the entry of a pose whose condition number is proven
    below it 0.0 instead of the number (for a check against that bound: the proof, a
    Cholesky factorisation of G − trace(G)/below²·I, G the rows' Gram matrix, costs a
    fraction of the eigenvalues)."""
    qs = np.ascontiguousarray(qs, dtype=float).reshape(-1, model.dof)
    out = np.empty(len(qs))
    rows = 3 if goal == GoalType.POSITION else 5 if goal == GoalType.TOOL_DOWN else 6
    _task_conditions(qs, model.kernel.chain, rows, float(reach), float(below), out)
    return out


# As metrics.condition_number: an eigenvalue of the Gram matrix below this fraction of the
# largest is rounding noise (eigvalsh is accurate to about n·eps·λmax): condition ∞.
_SINGULAR_EIGENVALUE_RATIO = 64.0 * np.finfo(float).eps


@compiled
def _task_conditions(qs, chain, count, reach, below, out):
    """σmax/σmin of the constraint rows of the Jacobian at each row of ``qs``: the
    ``count`` = 3 position rows; 5 adds the two rotation rows that tilt the tool axis
    (tool x and y in the base, TOOL_DOWN), 6 all three (FULL_POSE), each × ``reach``.
    From the eigenvalues of the rows' Gram matrix (a third of an SVD's time), or the
    SVD where those have lost λmin; inf when there are more rows than joints or σmin is at
    rounding level (position rows: metrics' rule on λmin); 0.0 where the Gram
    matrix less trace/below² on its diagonal is positive definite (λmin > trace/below² ≥
    λmax/below², so the number is below ``below``)."""
    n = qs.shape[1]
    pose, jacobian = np.empty(12), np.empty((6, n))
    rows = np.empty((count, n))
    gram = np.empty((count, count))
    factor = np.empty((count, count))
    screen = below < math.inf
    for i in range(qs.shape[0]):
        if count > n:
            out[i] = math.inf
            continue
        pose_and_jacobian(qs[i], chain, pose, jacobian)
        rows[:3, :] = jacobian[:3, :]
        if count == 5:
            for c in range(2):
                for j in range(n):
                    rows[3 + c, j] = reach * (pose[3 + c] * jacobian[3, j] + pose[6 + c]
                                              * jacobian[4, j] + pose[9 + c] * jacobian[5, j])
        elif count == 6:
            rows[3:, :] = reach * jacobian[3:, :]
        for a in range(count):
            for b in range(a + 1):
                total = 0.0
                for j in range(n):
                    total += rows[a, j] * rows[b, j]
                gram[a, b] = total
                gram[b, a] = total
        if screen and _positive_definite_less(gram, count, factor, below):
            out[i] = 0.0
            continue
        eigenvalues = np.linalg.eigvalsh(gram)              # ascending
        largest, smallest = eigenvalues[count - 1], eigenvalues[0]
        if largest > 0.0 and smallest > _SINGULAR_EIGENVALUE_RATIO * largest:
            out[i] = math.sqrt(largest / smallest)
        elif count == 3:
            out[i] = math.inf               # metrics.condition_number's rule
        else:
            # Past about 8e6 the eigenvalues of G have lost λmin: the SVD of the rows
            # resolves condition numbers up to 1e15, as this check always did.
            singular = np.linalg.svd(rows)[1]
            out[i] = math.inf if singular[count - 1] <= singular[0] * 1e-15 else \
                singular[0] / singular[count - 1]


@compiled
def _positive_definite_less(gram, count, factor, below):
    """Whether ``gram`` − trace/below²·I is positive definite: its Cholesky factorisation
    (into ``factor``) meets no pivot ≤ 0."""
    trace = 0.0
    for a in range(count):
        trace += gram[a, a]
    shift = trace / (below * below)
    for j in range(count):
        pivot = gram[j, j] - shift
        for k in range(j):
            pivot -= factor[j, k] * factor[j, k]
        if not pivot > 0.0:
            return False
        factor[j, j] = math.sqrt(pivot)
        for i in range(j + 1, count):
            total = gram[i, j]
            for k in range(j):
                total -= factor[i, k] * factor[j, k]
            factor[i, j] = total / factor[j, j]
    return True
