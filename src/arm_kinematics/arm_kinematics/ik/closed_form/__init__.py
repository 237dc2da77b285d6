"""Closed-form IK families: each recognises an arm from its model and solves it exactly.

- ``analytic``: yaw + two parallel pitch joints (pointer3, manipulator3d);
- ``planar``: yaw + three parallel pitch joints and an optional tool roll (hobby arms);
- ``spherical_wrist``: six joints with a spherical wrist (six_axis);
- ``families``: the six-joint families recognised from a URDF (spherical wrist, UR, OPW)
  behind the ``closed_form`` solver.
"""
