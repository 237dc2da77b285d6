"""The shared harness of arm_ik's and arm_bringup's tests and of the benchmarks.

ros_harness (a private ROS_DOMAIN_ID per test module, node processes, service calls),
ik_graph (an ik_server started for tests and benchmarks), motion_harness (executor
recorders), real_arms (UR5, Panda, SO-101 of example-robot-data), bringup_harness (launch
files read without launch), readme_snippets (the documents' blocks), faulty_ik_server (an
ik_server whose solver raises, for the fault tests); for the core's tests, without ROS:
ik_checks (angles modulo whole turns, pose errors, a solver per arm) and urdf_edits (a URDF
with some joints changed). It imports arm_ik and arm_bringup at run time; none of their
production code imports it.
"""
