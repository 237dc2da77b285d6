"""The names an arm configuration or a request may give to a solver, an objective or a path
planner: one list each, held here because the layer that reads them (``description``) sits
below the layers that implement them (``ik``, ``motion``); a test holds each list to its
registry.
"""

# ik.default_solver and SolveIK.solver (arm_kinematics.ik.solvers.SOLVERS registers these).
SOLVER_NAMES = ('analytic', 'closed_form', 'ccd', 'dls')

# ik.objective and SolveIK.objective (arm_kinematics.ik.objectives defines them).
OBJECTIVE_NAMES = ('first', 'closest', 'manipulability', 'centred')

# motion.path_planner and MoveToTarget.path_planner (arm_kinematics.motion.planning.registry).
GRID_PLANNER = 'grid'
SAMPLING_PLANNER = 'sampling'
PATH_PLANNERS = (GRID_PLANNER, SAMPLING_PLANNER)
