"""arm_kinematics: the ROS-free core of the arm pipeline.

Every rule and formula lives here, laid out as the data flows (docs/ARCHITECTURE.md):
``common`` → ``model`` (the chain: FK, Jacobians, limits) → ``description`` (the arm
configuration beside the URDF) → ``scene`` (floor, obstacles, collision) → ``ik`` (requests,
solvers, closed forms) → ``arm`` (the arm as one value) → ``motion`` (planners, path IK, motion
laws, the executor's decisions) → ``tasks``; ``visual`` and ``analysis`` on top. Each layer
imports only the ones before it, and nothing here imports rclpy or a message package, so the
whole core is used and tested without ROS.
"""
