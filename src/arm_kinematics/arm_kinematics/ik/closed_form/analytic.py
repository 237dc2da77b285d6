"""The old path of the yaw + two-pitch family: ``yaw_two_pitch`` (its solver and geometry)
and ``common`` (joint ranges, wrapping, the position gate). Kept so code that imports
from here still works; new code imports from those modules."""

from arm_kinematics.ik.closed_form.common import (
    GEOMETRY_TOLERANCE,
    JointRanges,
    LIMIT_TOLERANCE,
    PI,
    PositionGate,
    TWO_PI,
    wrap_into,
    wrap_into_array,
)
from arm_kinematics.ik.closed_form.yaw_two_pitch import (
    AnalyticSolver,
    arm_triangle,
    BRANCHES,
    ON_AXIS,
    yaw_pitch_geometry,
    YawPitchGeometry,
)
from arm_kinematics.ik.solvers.base import NEAREST

__all__ = ['AnalyticSolver', 'arm_triangle', 'BRANCHES', 'GEOMETRY_TOLERANCE', 'JointRanges',
           'LIMIT_TOLERANCE', 'NEAREST', 'ON_AXIS', 'PI', 'PositionGate', 'TWO_PI',
           'wrap_into', 'wrap_into_array', 'yaw_pitch_geometry', 'YawPitchGeometry']
