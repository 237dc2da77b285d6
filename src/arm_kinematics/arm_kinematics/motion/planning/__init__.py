"""Joint-path planners behind one interface (``base.JointPathPlanner``): the grid detour
(``grid``, its search in ``grid_search``) and OMPL sampling (``sampling``), chosen by name
in ``registry``; the (shoulder, elbow) joint map the grid searches (``joint_map``)."""

from arm_kinematics.motion.planning.base import (
    default_path_planner,
    GRID,
    JointPathPlan,
    JointPathPlanner,
    PATH_PLANNERS,
    SAMPLING,
)
from arm_kinematics.motion.planning.registry import path_planner

__all__ = ['default_path_planner', 'GRID', 'JointPathPlan', 'JointPathPlanner',
           'PATH_PLANNERS', 'path_planner', 'SAMPLING']
