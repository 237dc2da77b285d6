"""Moved: the grid detour planner is ``motion.planning.grid`` (its search
``motion.planning.grid_search``) and the joint map ``motion.planning.joint_map``; path and
contact sampling are ``motion.safety_paths``. Every name stays importable from here."""

from arm_kinematics.motion.planning.grid import (
    DEFAULT_RESOLUTION,
    DetourPlan,
    GridPlanner,
    MAX_RESOLUTION,
    MIN_RESOLUTION,
    plan_detour,
    PlanCode,
)
from arm_kinematics.motion.planning.grid_search import (
    default_search_joints,
    grid_axis,
    MAX_SHORTCUT_WAYPOINTS,
    SHORTCUT_BATCH,
)
from arm_kinematics.motion.planning.joint_map import joint_map, JointMap, JointMapError, MapCode
from arm_kinematics.motion.safety_paths import (
    check_path,
    CONTACT_RATE,
    Contacts,
    contacts_of,
    MAX_POINT_STEP,
    sample_contacts,
    sample_in_time,
    sample_path,
    time_at_velocity_limits,
)

__all__ = ['CONTACT_RATE', 'check_path', 'Contacts', 'contacts_of', 'DEFAULT_RESOLUTION',
           'default_search_joints', 'DetourPlan', 'grid_axis', 'GridPlanner', 'joint_map',
           'JointMap', 'JointMapError', 'MapCode', 'MAX_POINT_STEP', 'MAX_RESOLUTION',
           'MAX_SHORTCUT_WAYPOINTS', 'MIN_RESOLUTION', 'plan_detour', 'PlanCode',
           'sample_contacts', 'sample_in_time', 'sample_path', 'SHORTCUT_BATCH',
           'time_at_velocity_limits']
