"""Small helpers every layer shares: value checks, transforms, joint-state reading, staleness.

- ``checks``: finite vectors and numbers in a range, as reasons (``check_vector``,
  ``number_reason``, ``positive_reason``);
- ``transforms``: homogeneous transforms, quaternions, RPY (metres, radians);
- ``joint_state``: the arm's joint positions out of a joint state (``joint_order``);
- ``staleness``: when a periodic stream counts as stale (``StreamWatch``);
- ``log_line``: a line for a node's log, as a core decides it (``LogLine``);
- ``names``: the solver, objective and path-planner names a configuration may give.
"""
