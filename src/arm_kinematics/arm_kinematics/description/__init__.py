"""What a user writes: the URDF's chain and the plain arm configuration beside it.

- ``arm_config``: ``ArmConfig``, the per-arm YAML validated (home, IK defaults, safety,
  motion, collision, lab sections), and ``home_of``;
- ``frames``: the default base and tip of a URDF;
- ``chain_rules``: the chain checks parsing alone does not make;
- ``passive_joints``: movable joints outside the chain (held, published);
- ``safety_config`` / ``collision_config``: the ``safety`` and ``collision`` sections;
- ``meshes``: where ``package://`` mesh files are;
- ``bundled``: the example arms of ``arm_description`` (xacro → URDF → model).
"""
