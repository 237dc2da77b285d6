"""The scene: what the arm can touch, and whether it does (ROS-free).

- ``CollisionChecker`` (``checker``): self-collision with an allowed-pairs list and a scene,
  per pose and along joint paths (``check``, ``is_free``, ``check_path``, ``max_link_motion``),
  answered as ``collision_report``'s types, its broad phase in ``pair_bounds``;
- ``Scene`` (``objects``): boxes, spheres, cylinders and meshes in the base frame;
- ``compute_allowed_pairs`` (``allowed``): adjacent, default (home), always and never pairs;
- ``SafetyGeometry`` (``geometry``): link capsules, the floor plane and the obstacle ball,
  pose checks vectorised over N poses (``Verdict``);
- ``scene_rules``: the floor and the ball as scene objects judged by their own rules;
- ``monitor``: what the safety monitor decides of each measured pose;
- ``backend``: the one module that talks to the collision library (coal).

Planning round the scene lives one layer up, in ``arm_kinematics.motion.planning``.

Nothing is imported here: the floor and ball rules (``geometry``) serve every node, while the
collision modules load coal, which only the nodes that check collisions should pay for at
start-up. Import the module you need.
"""
