"""MoveIt's move_group interface as plain decisions over the project's core.

Each capability (``kinematics``, ``cartesian``, ``plan``, ``scene_diff``) is a plain object
taking plain values and answering with an ``Answer``: MoveIt's error code, the project's
words and the value. The move_group node only turns messages into these values and back.
Groups, named states and allowed collision pairs come from an SRDF (``srdf``) or, without
one, from the arm's chain (``robot``).
"""
