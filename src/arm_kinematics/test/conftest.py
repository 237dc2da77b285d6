"""Fixtures of the core's tests: the bundled arms, read from the source tree when no
workspace is built (the core's tests need no ROS at all)."""

from pathlib import Path
import sys

import pytest

try:
    import arm_testing  # noqa: F401
except ImportError:
    # `pip install "./src/arm_kinematics[test]"` alone: the tests' helpers from the source
    # tree beside the core (the workspace and `make test-core` install them).
    sys.path.append(str(Path(__file__).resolve().parents[2] / 'arm_testing'))

from arm_testing.arm_fixtures import load_arm, urdf_of, use_source_description  # noqa: E402, F401

use_source_description(Path(__file__).resolve().parents[2])


@pytest.fixture(scope='module')
def pointer3_model():
    """The bundled pointer3 (shoulder 0.405 m above the floor, upper arm 0.95 m, forearm
    0.85 m): the arm whose safety figures the tests compute by hand."""
    from arm_kinematics.description.bundled import load_model
    return load_model('pointer3')


@pytest.fixture(scope='module')
def geometry(pointer3_model):
    """pointer3's SafetyGeometry with its bundled safety section (capsules, floor)."""
    from arm_kinematics.description.bundled import load_safety_config
    from arm_kinematics.scene.geometry import SafetyGeometry
    return SafetyGeometry(pointer3_model, load_safety_config('pointer3'))
