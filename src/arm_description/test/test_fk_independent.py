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

"""tool0 pose from the URDF against forward kinematics written out by hand.

The hand formulas come from the arm specification, not from the URDF: a wrong axis sign,
origin or length in a xacro file shows up here as a pose mismatch. The URDF side is
evaluated by yourdfpy and, when it is installed, by the project's own arm_ik core.
"""

from __future__ import annotations

import io
import typing
import zlib

import numpy as np
import pytest
import yourdfpy

if typing.TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from conftest import ArmSpec
    from numpy.typing import NDArray

    Array = NDArray[np.float64]

N_CONFIGS = 200
TOL = 1e-9  # m for positions; also used for rotation-matrix entries

# Non-default xacro args per arm, to check that the args reach the kinematics.
OVERRIDES: dict[str, dict[str, float]] = {
    'pointer3': {'l1': 1.1, 'l2': 0.7, 'shoulder_height': 0.5},
    'ccd5': {'link_scale': 1.7},
    'six_axis': {'h': 0.5, 'L1': 1.1, 'L2': 0.6, 'L3': 0.15, 'L4': 0.45},
    'manipulator3d': {'L1': 0.45, 'L2': 0.35},
}


# ------------------------------------------------------------------- hand kinematics


def rot_x(t: float) -> Array:
    c, s = np.cos(t), np.sin(t)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(t: float) -> Array:
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(t: float) -> Array:
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def pose(rotation: Array, position: Array) -> Array:
    out = np.eye(4)
    out[:3, :3] = rotation
    out[:3, 3] = position
    return out


def fk_elevation_arm(q: Array, l1: float, l2: float, z0: float) -> Array:
    """pointer3 and manipulator3d: yaw psi, elevation a above horizontal, relative bend b."""
    psi, a, b = q
    planar = np.array(
        [l1 * np.cos(a) + l2 * np.cos(a + b), 0.0, z0 + l1 * np.sin(a) + l2 * np.sin(a + b)]
    )
    # The forearm direction is +X raised by a + b: a rotation by -(a + b) about +Y.
    return pose(rot_z(psi) @ rot_y(-(a + b)), rot_z(psi) @ planar)


def fk_pointer3(q: Array, p: Mapping[str, float]) -> Array:
    return fk_elevation_arm(q, p['l1'], p['l2'], p['shoulder_height'])


def fk_manipulator3d(q: Array, p: Mapping[str, float]) -> Array:
    return fk_elevation_arm(q, p['L1'], p['L2'], 0.0)


def fk_ccd5(q: Array, p: Mapping[str, float]) -> Array:
    """Vertical chain: yaw, then segments tilted from +Z by cumulative pitch about +Y."""
    s = p['link_scale']
    column = 0.15 * s
    segments = s * np.array([0.45, 0.40, 0.20, 0.10])
    psi, pitches = q[0], np.asarray(q[1:])
    theta = np.cumsum(pitches)
    planar = np.array(
        [np.sum(segments * np.sin(theta)), 0.0, column + np.sum(segments * np.cos(theta))]
    )
    return pose(rot_z(psi) @ rot_y(theta[-1]), rot_z(psi) @ planar)


def fk_six_axis(q: Array, p: Mapping[str, float]) -> Array:
    """Evaluate the specification's Y-up product, then change basis once with P."""

    def rx(t: float) -> Array:
        return pose(rot_x(t), np.zeros(3))

    def ry(t: float) -> Array:
        return pose(rot_y(t), np.zeros(3))

    def tr_y(d: float) -> Array:
        return pose(np.eye(3), np.array([0.0, d, 0.0]))

    q1, q2, q3, q4, q5, q6 = q
    t_ref = (
        ry(q1)
        @ tr_y(p['h'])
        @ rx(q2)
        @ tr_y(p['L1'])
        @ rx(q3)
        @ tr_y(p['L2'])
        @ ry(q4)
        @ rx(q5)
        @ tr_y(p['L3'])
        @ ry(q6)
        @ tr_y(p['L4'])
    )
    # ROS X = reference Z, ROS Y = reference X, ROS Z = reference Y.
    perm = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    assert np.isclose(np.linalg.det(perm), 1.0)
    big_p = pose(perm, np.zeros(3))
    return big_p @ t_ref @ big_p.T


HAND_FK: dict[str, Callable[[Array, Mapping[str, float]], Array]] = {
    'pointer3': fk_pointer3,
    'ccd5': fk_ccd5,
    'six_axis': fk_six_axis,
    'manipulator3d': fk_manipulator3d,
}


# ---------------------------------------------------------------------------- helpers


def sample_configs(arm: str, lower: Array, upper: Array, n: int = N_CONFIGS) -> Array:
    """Draw n configurations uniformly within the limits, from a fixed per-arm seed."""
    rng = np.random.default_rng(zlib.crc32(arm.encode()))
    return rng.uniform(lower, upper, size=(n, len(lower)))


def load_yourdfpy(urdf_xml: str) -> yourdfpy.URDF:
    return yourdfpy.URDF.load(
        io.StringIO(urdf_xml),
        load_meshes=False,
        build_scene_graph=True,
        build_collision_scene_graph=False,
        load_collision_meshes=False,
    )


def assert_pose_close(actual: Array, expected: Array, what: str) -> None:
    actual = np.asarray(actual, dtype=float)
    assert actual.shape == (4, 4), what
    pos_err = np.max(np.abs(actual[:3, 3] - expected[:3, 3]))
    rot_err = np.max(np.abs(actual[:3, :3] - expected[:3, :3]))
    assert pos_err < TOL, f'{what}: position error {pos_err:.3e} m'
    assert rot_err < TOL, f'{what}: rotation error {rot_err:.3e}'
    assert np.allclose(actual[3], [0.0, 0.0, 0.0, 1.0], atol=TOL), what


@pytest.fixture(params=['defaults', 'overridden'])
def variant(
    request: pytest.FixtureRequest, spec: ArmSpec, expand: Callable[..., str]
) -> tuple[str, dict[str, float]]:
    """(URDF, length parameters used to build it), with default or overridden xacro args."""
    if request.param == 'defaults':
        return expand(spec.name), dict(spec.length_args)
    overrides = OVERRIDES[spec.name]
    urdf = expand(spec.name, **{k: repr(v) for k, v in overrides.items()})
    return urdf, dict(spec.length_args) | overrides


# ------------------------------------------------------------------------------ tests


def test_hand_fk_zero_pose(spec: ArmSpec) -> None:
    """Sanity of the hand formulas themselves: the specified zero pose."""
    p = spec.length_args
    tip = HAND_FK[spec.name](np.zeros(len(spec.joints)), p)
    if spec.name == 'pointer3':  # horizontal along +X at shoulder height
        expected = [p['l1'] + p['l2'], 0.0, p['shoulder_height']]
    elif spec.name == 'manipulator3d':  # along +X in the X-Y plane
        expected = [p['L1'] + p['L2'], 0.0, 0.0]
    elif spec.name == 'ccd5':  # straight up
        expected = [0.0, 0.0, 0.15 + 0.45 + 0.40 + 0.20 + 0.10]
    else:  # six_axis, straight up
        expected = [0.0, 0.0, p['h'] + p['L1'] + p['L2'] + p['L3'] + p['L4']]
    np.testing.assert_allclose(tip[:3, 3], expected, atol=1e-12)
    np.testing.assert_allclose(tip[:3, :3], np.eye(3), atol=1e-12)


def test_yourdfpy_fk_matches_hand_fk(spec: ArmSpec, variant: tuple[str, dict[str, float]]) -> None:
    urdf_xml, params = variant
    robot = load_yourdfpy(urdf_xml)
    assert tuple(robot.actuated_joint_names) == spec.joints
    joints = [robot.joint_map[name] for name in spec.joints]
    lower = np.array([j.limit.lower for j in joints])
    upper = np.array([j.limit.upper for j in joints])
    np.testing.assert_allclose(np.degrees(lower), [lo for lo, _ in spec.limits_deg], atol=1e-9)
    np.testing.assert_allclose(np.degrees(upper), [up for _, up in spec.limits_deg], atol=1e-9)

    for i, q in enumerate(sample_configs(spec.name, lower, upper)):
        robot.update_cfg(q)
        actual = robot.get_transform('tool0', 'base_link')
        assert_pose_close(actual, HAND_FK[spec.name](q, params), f'{spec.name} #{i} q={q}')


def test_arm_ik_core_fk_matches_hand_fk(
    spec: ArmSpec, variant: tuple[str, dict[str, float]]
) -> None:
    """The project's own kinematics core, when it is installed, agrees with the hand FK."""
    model_module = pytest.importorskip('arm_kinematics.model.arm_model')
    urdf_xml, params = variant
    model = model_module.ArmModel.from_urdf(urdf_xml)
    assert tuple(model.joint_names) == spec.joints
    lower = np.asarray(model.lower, dtype=float)
    upper = np.asarray(model.upper, dtype=float)
    np.testing.assert_allclose(np.degrees(lower), [lo for lo, _ in spec.limits_deg], atol=1e-9)
    np.testing.assert_allclose(np.degrees(upper), [up for _, up in spec.limits_deg], atol=1e-9)

    for i, q in enumerate(sample_configs(spec.name, lower, upper)):
        actual = model.fk(q)
        assert_pose_close(actual, HAND_FK[spec.name](q, params), f'{spec.name} #{i} q={q}')
