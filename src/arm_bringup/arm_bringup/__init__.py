"""arm_bringup: parameters and the launch-free runner of the arm IK pipeline."""
