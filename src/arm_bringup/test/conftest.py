"""Fixtures of arm_bringup's tests: a private ROS domain, node processes, a test node.

The domain claim comes from arm_ik's test harness (one lock file per ROS_DOMAIN_ID), so these
tests never share a DDS domain with arm_ik's, run side by side.
"""

from __future__ import annotations

from collections.abc import Iterator
import os
from pathlib import Path
import sys

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / 'arm_ik' / 'test'))

from ros_harness import DomainClaim  # noqa: E402

# Integration tests must never discover anything beyond this machine.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

@pytest.fixture
def ros_domain() -> Iterator[DomainClaim]:
    """A ROS domain of this test's own (released afterwards)."""
    claim = DomainClaim()
    yield claim
    claim.release()


@pytest.fixture
def processes(ros_domain: DomainClaim):
    """A ProcessGroup on the test's domain; every process is stopped at teardown."""
    from arm_ik.process_group import ProcessGroup
    group = ProcessGroup(env=ros_domain.environment())
    yield group
    group.close()


@pytest.fixture
def ros_node(ros_domain: DomainClaim):
    """(node, spin): an rclpy node in its own Context on the test's domain."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain.domain_id)
    node = rclpy.create_node('bringup_test', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)

    def spin(timeout: float = 0.05) -> None:
        executor.spin_once(timeout_sec=timeout)
    yield node, spin
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown(context=context)
