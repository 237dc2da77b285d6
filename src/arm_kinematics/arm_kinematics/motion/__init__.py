"""Motion without ROS: the motion laws, trajectory checks, joint commands and move planning.

- ``laws``: minimum jerk in joint space, exponential smoothing and motor speed cap steppers,
  simulation of a streaming law into a trajectory.
- ``cartesian``: straight tool lines (minimum jerk, linear) timed on the joint path of
  path IK (``kinematics.path_ik``, the one implementation of path IK).
- ``trajectory``: the sampled ``Trajectory`` and its interpolation.
- ``validation``: every check a trajectory passes before it runs.
- ``commands``: joint commands and client trajectories, checked and reordered.
- ``planner``: one move from goal to validated trajectory (``MotionPlanner``).
- ``safety_check``: the safety package's path checks and detours for the planner.
- ``worker``: building the planner in a separate planning process.
"""
