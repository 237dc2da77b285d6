"""Fixtures of the bundled arms for the core's tests and the nodes' tests (no ROS needed).

Both conftest files import them, so ``load_arm`` and ``urdf_of`` mean the same everywhere.
A source tree without a build reads the xacros in place (ARM_DESCRIPTION_DIR).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ARMS = ('pointer3', 'ccd5', 'six_axis', 'manipulator3d')


def _description_available() -> bool:
    try:
        from ament_index_python.packages import get_package_share_directory
        get_package_share_directory('arm_description')
        return True
    except (ImportError, LookupError, OSError):
        return False


def use_source_description(src: Path) -> None:
    """Point the core at the xacros of the source tree ``src`` (the folder holding
    arm_description) when no built arm_description is found."""
    if not os.environ.get('ARM_DESCRIPTION_DIR') and not _description_available():
        os.environ['ARM_DESCRIPTION_DIR'] = str(src / 'arm_description')


@pytest.fixture(scope='session')
def load_arm():
    """Factory: ``load_arm('six_axis')`` → ArmModel (cached per arm and mapping)."""
    from arm_kinematics.description.bundled import load_model
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
    from arm_kinematics.description.bundled import expand_xacro
    return lambda arm, **mappings: expand_xacro(arm, dict(mappings) or None)
