"""Checks and conversions of the poses MoveIt messages carry (position + quaternion)."""

from __future__ import annotations

from collections.abc import Sequence
import math

import numpy as np

from arm_kinematics.common.transforms import make_transform, quaternion_to_matrix
from arm_kinematics.moveit import codes
from arm_kinematics.moveit.codes import Answer

# A quaternion further than this from unit length is refused rather than normalised:
# a client that sends one has a bug (zero, or a typo in a component).
QUATERNION_NORM_TOLERANCE = 1e-2


def pose_matrix(position: Sequence[float], orientation: Sequence[float], what: str,
                code: int = codes.INVALID_GOAL_CONSTRAINTS) -> Answer:
    """4×4 of a position (m) and quaternion (x, y, z, w), or ``code`` saying what is wrong."""
    values = [*position, *orientation]
    if len(values) != 7 or not all(isinstance(v, (int, float)) and math.isfinite(v)
                                   for v in values):
        return codes.fail(code, f'{what}: position {list(position)} and orientation '
                          f'{list(orientation)} must be 7 finite numbers')
    norm = math.sqrt(sum(v * v for v in orientation))
    if abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE:
        return codes.fail(code, f'{what}: the orientation quaternion has length {norm:.4g}, '
                          'not 1 (x, y, z, w; the identity is 0, 0, 0, 1)')
    x, y, z, w = (v / norm for v in orientation)
    return Answer(codes.SUCCESS, '', make_transform(quaternion_to_matrix(x, y, z, w),
                                                    np.asarray(position, dtype=float)))


def rotation_angle(a: np.ndarray, b: np.ndarray) -> float:
    """Angle (rad) of the rotation between two 3×3 rotations."""
    cosine = (np.trace(a.T @ b) - 1.0) / 2.0
    return float(math.acos(max(-1.0, min(1.0, cosine))))
