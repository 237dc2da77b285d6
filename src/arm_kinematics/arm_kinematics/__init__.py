"""ROS-free kinematics core of arm_ik.

Everything numeric lives here: arm models built from URDF, forward kinematics,
Jacobians, metrics, inverse-kinematics solvers and their structured results.
Nothing in this package imports rclpy, so it can be used and tested without a
ROS graph.
"""
