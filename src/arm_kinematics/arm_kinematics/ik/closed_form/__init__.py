"""Closed-form IK: one engine, one module per family.

- ``family``: the protocol (how a family recognises an arm and how it solves a pose) and
  ``Family``, the recognised parameters;
- ``dispatch``: the families in the order they are tried (``FAMILIES``, ``recognise``)
  and the two registered solvers over them, ``analytic`` and ``closed_form``;
- the families: ``yaw_two_pitch`` (pointer3, manipulator3d), ``yaw_three_pitch`` with
  ``yaw_three_pitch_solver`` (yaw + three parallel pitch + optional tool roll: SO-101),
  ``spherical_wrist`` (six_axis), ``ur`` (UR3/5/10, e-Series) and ``opw`` (industrial
  ortho-parallel arms), the last two over the shared six-joint engine ``six_joint``;
- shared maths: ``geometry`` (vectors, rotations, lines, the pitch triangle) and ``common``
  (tolerances, joint limits and whole turns, goal orientation, nearest solution, answers).

``analytic``, ``families`` and ``planar`` are the old paths, re-exporting the same objects.
A new family is a module with ``recognise(model)`` and a solver, and a line in
``dispatch.FAMILIES``.
"""
