"""Fixtures for arm_ik tests: arm models for the core, real nodes over DDS for integration."""

from __future__ import annotations

import os

# The integration fixtures live in ros_harness, so arm_bringup's tests share them.
from pathlib import Path

import pytest

from arm_testing.arm_fixtures import load_arm, urdf_of, use_source_description  # noqa: F401
from arm_testing.ros_harness import processes, ros_domain, ros_node  # noqa: E402, F401

ARMS = ('pointer3', 'ccd5', 'six_axis', 'manipulator3d')

# Integration tests must never discover anything beyond this machine.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
use_source_description(Path(__file__).resolve().parents[2])


@pytest.fixture
def viser_server():
    """A viser server on a free loopback port (the lab's 3D scene), stopped afterwards."""
    viser = pytest.importorskip('viser')
    server = viser.ViserServer(host='127.0.0.1', port=0, verbose=False)
    yield server
    server.stop()
