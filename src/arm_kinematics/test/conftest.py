"""Fixtures of the core's tests: the bundled arms, read from the source tree when no
workspace is built (the core's tests need no ROS at all)."""

from pathlib import Path

from arm_testing.arm_fixtures import load_arm, urdf_of, use_source_description  # noqa: F401

use_source_description(Path(__file__).resolve().parents[2])
