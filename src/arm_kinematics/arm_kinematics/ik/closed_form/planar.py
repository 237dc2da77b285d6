"""The old path of the yaw + three-pitch family: ``yaw_three_pitch`` (recognition and the
engines), ``yaw_three_pitch_solver`` (its solver) and ``dispatch`` (the ``analytic``
solver). Kept so code that imports from here still works; new code imports from those
modules."""

from arm_kinematics.ik.closed_form.common import FLAG_WORDS as PLANAR_FLAG_WORDS
from arm_kinematics.ik.closed_form.common import ROLL_ALONG_YAW
from arm_kinematics.ik.closed_form.dispatch import planar_family, PlanarAnalyticSolver
from arm_kinematics.ik.closed_form.yaw_three_pitch import (
    check_against_fk,
    FAMILY_NAME,
    PlanarEngine,
    PlanarFamily,
    recognise_planar,
    ScalarPlanarEngine,
    SHAPE_TOLERANCE,
)
from arm_kinematics.ik.closed_form.yaw_three_pitch_solver import (
    CHUNK_ROWS,
    PlanarFamilySolver,
    REFINE_POINTS,
    REFINE_ROUNDS,
    SWEEP_STEPS,
    TipOfChain,
)

__all__ = ['check_against_fk', 'CHUNK_ROWS', 'FAMILY_NAME', 'PLANAR_FLAG_WORDS',
           'PlanarAnalyticSolver', 'planar_family', 'PlanarEngine', 'PlanarFamily',
           'PlanarFamilySolver', 'recognise_planar', 'REFINE_POINTS', 'REFINE_ROUNDS',
           'ROLL_ALONG_YAW', 'ScalarPlanarEngine', 'SHAPE_TOLERANCE', 'SWEEP_STEPS',
           'TipOfChain']
