# Copyright 2026 arm_ik maintainers
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Shared fixtures: expand each arm's xacro from the SOURCE tree (no install needed).

The arm facts below (joint order, default lengths, which arg moves which joint) are
written out from the project's arm specification on purpose, not read from the package's
YAML, so that the tests check the package against the specification.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import xacro

PACKAGE_DIR = Path(__file__).resolve().parents[1]
URDF_DIR = PACKAGE_DIR / 'urdf'
CONFIG_DIR = PACKAGE_DIR / 'config'
RVIZ_DIR = PACKAGE_DIR / 'rviz'


@dataclass(frozen=True)
class ArmSpec:
    """What the specification says about one arm.

    Attributes:
        name: arm name, also the stem of ``urdf/<name>.urdf.xacro``.
        joints: movable joint names, base to tip.
        limits_deg: (lower, upper) position limit of each joint in ``joints``, degrees.
        length_args: xacro length args with their default values (m, or a factor).
        mass_args: xacro mass args with their default values (kg).
        arg_origin: for a length arg, the joint whose origin equals it and the origin
            component index (0 = x, 1 = y, 2 = z).

    """

    name: str
    joints: tuple[str, ...]
    limits_deg: tuple[tuple[float, float], ...]
    length_args: dict[str, float]
    mass_args: dict[str, float] = field(default_factory=dict)
    arg_origin: dict[str, tuple[str, int]] = field(default_factory=dict)


ARM_SPECS: dict[str, ArmSpec] = {
    'pointer3': ArmSpec(
        name='pointer3',
        joints=('base_yaw', 'shoulder_pitch', 'elbow_pitch'),
        limits_deg=((-180.0, 180.0), (-90.0, 180.0), (-160.0, 160.0)),
        length_args={'l1': 0.95, 'l2': 0.85, 'shoulder_height': 0.405},
        arg_origin={
            'l1': ('elbow_pitch', 0),
            'l2': ('tool0_joint', 0),
            'shoulder_height': ('shoulder_pitch', 2),
        },
    ),
    'ccd5': ArmSpec(
        name='ccd5',
        joints=('base_yaw', 'shoulder_pitch', 'elbow_pitch', 'wrist_pitch', 'wrist_tip_pitch'),
        limits_deg=(
            (-180.0, 180.0),
            (-100.0, 100.0),
            (-135.0, 135.0),
            (-120.0, 120.0),
            (-120.0, 120.0),
        ),
        length_args={'link_scale': 1.0},
    ),
    'six_axis': ArmSpec(
        name='six_axis',
        joints=(
            'base_yaw',
            'shoulder_pitch',
            'elbow_pitch',
            'wrist_roll',
            'wrist_pitch',
            'tool_roll',
        ),
        limits_deg=(
            (-170.0, 170.0),
            (-120.0, 120.0),
            (-150.0, 150.0),
            (-180.0, 180.0),
            (-120.0, 120.0),
            (-180.0, 180.0),
        ),
        length_args={'h': 0.40, 'L1': 0.95, 'L2': 0.85, 'L3': 0.22, 'L4': 0.30},
        arg_origin={
            'h': ('shoulder_pitch', 2),
            'L1': ('elbow_pitch', 2),
            'L2': ('wrist_roll', 2),
            'L3': ('tool_roll', 2),
            'L4': ('tool0_joint', 2),
        },
    ),
    'manipulator3d': ArmSpec(
        name='manipulator3d',
        joints=('base_yaw', 'shoulder_pitch', 'elbow_pitch'),
        limits_deg=((-180.0, 180.0), (0.0, 180.0), (-150.0, 150.0)),
        length_args={'L1': 0.60, 'L2': 0.50},
        mass_args={'m1': 1.2, 'm2': 0.8},
        arg_origin={'L1': ('elbow_pitch', 0), 'L2': ('tool0_joint', 0)},
    ),
}

ARMS: tuple[str, ...] = tuple(ARM_SPECS)


def expand_xacro(arm: str, **mappings: str) -> str:
    """Expand ``urdf/<arm>.urdf.xacro`` from the source tree with xacro args ``mappings``.

    Raises:
        xacro.XacroException: when the expansion fails (e.g. a bad length argument).

    """
    path = URDF_DIR / f'{arm}.urdf.xacro'
    # xacro stores its arg defaults into the mappings dict it is given: pass a fresh copy.
    doc = xacro.process_file(str(path), mappings={k: str(v) for k, v in mappings.items()})
    return doc.toprettyxml(indent='  ')


@pytest.fixture(params=ARMS)
def arm(request: pytest.FixtureRequest) -> str:
    """Return each arm name in turn."""
    return request.param


@pytest.fixture
def spec(arm: str) -> ArmSpec:
    """Return the specification of the current arm."""
    return ARM_SPECS[arm]


@pytest.fixture
def urdf_xml(arm: str) -> str:
    """Return the current arm's URDF expanded with default arguments."""
    return expand_xacro(arm)


@pytest.fixture
def expand() -> Callable[..., str]:
    """Return the expansion function, for tests that pass their own xacro args."""
    return expand_xacro
