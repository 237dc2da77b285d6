"""Inverse kinematics: from a target to joint angles, with the reason when there are none.

- ``request``: one IK request end to end (``IKRequest`` → ``IKDispatcher`` → ``IKAnswer``):
  validate, pick the solver, solve, apply the floor rules, measure;
- ``result``: ``IKResult`` and ``ErrorCode``, a failure is an answer, not an exception;
- ``solvers``: the solver protocol (``solvers.base.Solver``), the registry by name and the
  numeric solvers (``ccd``, ``dls``);
- ``closed_form``: the closed-form families (yaw + pitch arms, spherical wrists, UR, OPW);
- ``default_solver``: which solver answers an arm whose configuration names none;
- ``floor_rules``: choosing among closed-form solutions by the floor;
- ``metrics``: manipulability, condition number, reach.
"""
