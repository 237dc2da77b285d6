"""The names an arm configuration or a request may give to a solver, an objective or a path
planner: one list each, held here because the layer that reads them (``description``) sits
below the layers that implement them (``ik``, ``motion``); a test holds each list to its
registry. And the rule for an arm's label, which becomes its namespace.
"""

import re

# ik.default_solver and SolveIK.solver (arm_kinematics.ik.solvers.SOLVERS registers these).
SOLVER_NAMES = ('analytic', 'closed_form', 'ccd', 'dls')

# ik.objective and SolveIK.objective (arm_kinematics.ik.objectives defines them).
OBJECTIVE_NAMES = ('first', 'closest', 'manipulability', 'centred')

# motion.path_planner and MoveToTarget.path_planner (arm_kinematics.motion.planning.registry).
GRID_PLANNER = 'grid'
SAMPLING_PLANNER = 'sampling'
PATH_PLANNERS = (GRID_PLANNER, SAMPLING_PLANNER)


def ros_name(text: str) -> str:
    """``text`` as one ROS name token (letters, digits and ``_``, not starting with a digit):
    a URDF robot name such as ``SO_ARM100.SLDASM`` or ``ur5e-cell`` becomes an arm label
    that can be a namespace. Empty when ``text`` holds no letter or digit."""
    token = re.sub(r'[^A-Za-z0-9_]+', '_', text.strip()).strip('_')
    return f'_{token}' if token[:1].isdigit() else token


def ros_name_reason(text: str) -> str:
    """Why ``text`` cannot be one ROS name token ('' when it can)."""
    if not re.fullmatch(r'[A-Za-z_][A-Za-z0-9_]*', text):
        return (f'{text!r} is not a ROS name (letters, digits and _, not starting with a '
                f'digit): it becomes the namespace; {ros_name(text)!r} would do')
    return ''
