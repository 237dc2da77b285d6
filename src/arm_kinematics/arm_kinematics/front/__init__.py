"""The front door of the core: ``from arm_kinematics import Arm`` (``front.arm``) and the
answers its methods give (``front.answers``). The top layer: it uses the layers below and
nothing uses it."""

from arm_kinematics.front.answers import (
    CheckVerdict,
    IKBranches,
    IKSolution,
    MotionPlan,
    PathAnswer,
    Pose,
    Solution,
)
from arm_kinematics.front.arm import Arm

__all__ = ['Arm', 'CheckVerdict', 'IKBranches', 'IKSolution', 'MotionPlan', 'PathAnswer',
           'Pose', 'Solution']
