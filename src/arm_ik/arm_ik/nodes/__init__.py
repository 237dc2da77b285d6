"""Thin rclpy nodes around the kinematics core."""
