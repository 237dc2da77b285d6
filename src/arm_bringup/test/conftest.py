"""Fixtures of arm_bringup's tests: a private ROS domain, node processes, a test node.

They are arm_ik's test harness fixtures (one lock file per ROS_DOMAIN_ID), so these tests
never share a DDS domain with arm_ik's, run side by side.
"""

from __future__ import annotations

import os

from arm_testing.ros_harness import processes, ros_domain, ros_node  # noqa: E402, F401

# Integration tests must never discover anything beyond this machine.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
