"""arm_ik: inverse kinematics for robot arms (core in arm_kinematics, nodes in arm_ik.nodes)."""
