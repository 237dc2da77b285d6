"""Moved: the sampling planner (OMPL RRTConnect) is ``motion.planning.sampling``. Every name
stays importable from here."""

from arm_kinematics.motion.planning.sampling import (
    COARSE,
    MAX_REPAIRS,
    NO_PATH,
    path_length,
    plan_joint_path,
    PlanResult,
    SamplingPlanner,
    SIMPLIFY_PASSES,
    SUCCESS,
)

__all__ = ['COARSE', 'MAX_REPAIRS', 'NO_PATH', 'path_length', 'plan_joint_path', 'PlanResult',
           'SamplingPlanner', 'SIMPLIFY_PASSES', 'SUCCESS']
