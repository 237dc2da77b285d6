"""Fixtures for arm_ik tests: arm models for the core, real nodes over DDS for integration."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# The integration fixtures live in ros_harness, so arm_bringup's tests share them.
from arm_testing.ros_harness import processes, ros_domain, ros_node  # noqa: E402, F401

ARMS = ('pointer3', 'ccd5', 'six_axis', 'manipulator3d')
SOURCE_DESCRIPTION = Path(__file__).resolve().parents[2] / 'arm_description'


def _description_available() -> bool:
    try:
        from ament_index_python.packages import get_package_share_directory
        get_package_share_directory('arm_description')
        return True
    except (ImportError, LookupError, OSError):
        return False


# Integration tests must never discover anything beyond this machine.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

if not os.environ.get('ARM_DESCRIPTION_DIR') and not _description_available():
    # Core tests run from a source tree too (no build): read the xacros in place.
    os.environ['ARM_DESCRIPTION_DIR'] = str(SOURCE_DESCRIPTION)


@pytest.fixture(scope='session')
def load_arm():
    """Factory: ``load_arm('six_axis')`` → ArmModel (cached per arm and mapping)."""
    from arm_ik.kinematics.description import load_model
    cache = {}

    def load(arm: str, **mappings: str):
        key = (arm, tuple(sorted(mappings.items())))
        if key not in cache:
            cache[key] = load_model(arm, dict(mappings) or None)
        return cache[key]
    return load


@pytest.fixture(scope='session')
def urdf_of():
    """Factory: ``urdf_of('pointer3')`` → expanded URDF text."""
    from arm_ik.kinematics.description import expand_xacro
    return lambda arm, **mappings: expand_xacro(arm, dict(mappings) or None)


@pytest.fixture
def viser_server():
    """A viser server on a free loopback port (the lab's 3D scene), stopped afterwards."""
    viser = pytest.importorskip('viser')
    server = viser.ViserServer(host='127.0.0.1', port=0, verbose=False)
    yield server
    server.stop()
