"""The old path of the six-joint families: ``dispatch`` (``recognise``, the
``closed_form`` solver), ``family`` (``Family``), ``six_joint`` (the shared engine and
``FamilySolver``), ``ur`` and ``opw``. Kept so code that imports from here still works;
new code imports from those modules."""

from arm_kinematics.ik.closed_form.common import (
    ANGLE_TOLERANCE,
    CHECK_CONFIGURATIONS,
    CHECK_TOLERANCE,
    FLAG_WORDS,
    flag_words,
    LINE_TOLERANCE,
    SHOULDER_SINGULAR,
    SINGULAR,
    solved,
    STRETCHED,
    WRIST_SINGULAR,
)
from arm_kinematics.ik.closed_form.dispatch import (
    ClosedFormSolver,
    FAMILY_NAMES,
    recognise,
    SIX_JOINT_FAMILIES,
)
from arm_kinematics.ik.closed_form.family import Family
from arm_kinematics.ik.closed_form.opw import opw_forward, OPWEngine, recognise_opw
from arm_kinematics.ik.closed_form.six_joint import FamilyEngine, FamilySolver, ScalarEngine
from arm_kinematics.ik.closed_form.ur import recognise_ur, UREngine

__all__ = ['ANGLE_TOLERANCE', 'CHECK_CONFIGURATIONS', 'CHECK_TOLERANCE', 'ClosedFormSolver',
           'Family', 'FAMILY_NAMES', 'FamilyEngine', 'FamilySolver', 'FLAG_WORDS',
           'flag_words', 'LINE_TOLERANCE', 'opw_forward', 'OPWEngine', 'recognise',
           'recognise_opw', 'recognise_ur', 'ScalarEngine', 'SHOULDER_SINGULAR', 'SINGULAR',
           'SIX_JOINT_FAMILIES', 'solved', 'STRETCHED', 'UREngine', 'WRIST_SINGULAR']
