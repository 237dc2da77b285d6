"""Scripted tasks without ROS: sequences of moves read from YAML and the pick-and-place cycles.

- ``sequences``: load and validate a sequence file (``load_sequence``, ``TaskSequence``,
  ``SequenceError``), override named points (``with_points``), parse console input.
- ``pick_place``: the two pick-and-place state machines (``CYCLES``), the ball that follows the
  tool while attached (``Ball``), the cycle runner (``PickPlaceMachine``) and the reachability
  check of a sequence's points (``check_reachable``).
- ``current_pose``: which arm pose counts as current for a decision after a move (a result's
  final state or a joint state stamped after the result), and the bounded wait for one
  (``CurrentPose``).
- ``cycle``: what target_input decides (``CycleRunner``: targets, the cycle's steps, timeouts,
  the ball), fed events and returning effects (``cycle_effects``: ``SendGoal``, ``Report``...).
"""
