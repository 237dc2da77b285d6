"""Serial-bus servos without ROS: bus drivers, calibration, safety rules, a simulated bus."""
