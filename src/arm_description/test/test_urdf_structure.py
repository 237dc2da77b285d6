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

"""Structure of the expanded URDFs: tree, names, limits, inertials, xacro args, config."""

from __future__ import annotations

import math
import pathlib
import re
import subprocess
import sys
import typing
import xml.etree.ElementTree as ET

import pytest
import xacro
import yaml

if typing.TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from conftest import ArmSpec

PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[1]

BAD_VALUES = ('-0.5', '0', '0.0', '-0.0', 'nan', 'inf', '-inf', 'abc', '')
POSITIVE_MESSAGE = 'must be a finite number > 0'


# ---------------------------------------------------------------------------- helpers


def parse(urdf_xml: str) -> ET.Element:
    root = ET.fromstring(urdf_xml)
    assert root.tag == 'robot'
    return root


def joints_by_name(robot: ET.Element) -> dict[str, ET.Element]:
    return {j.attrib['name']: j for j in robot.findall('joint')}


def links_by_name(robot: ET.Element) -> dict[str, ET.Element]:
    return {link.attrib['name']: link for link in robot.findall('link')}


def floats(text: str) -> list[float]:
    return [float(v) for v in text.split()]


def origin_xyz(joint: ET.Element) -> list[float]:
    origin = joint.find('origin')
    if origin is None:
        return [0.0, 0.0, 0.0]
    return floats(origin.attrib.get('xyz', '0 0 0'))


def chain_joints(robot: ET.Element, tip: str = 'tool0') -> list[ET.Element]:
    """Joints from the root link down to ``tip``, in order."""
    by_child = {j.find('child').attrib['link']: j for j in robot.findall('joint')}
    chain = []
    link = tip
    while link in by_child:
        joint = by_child[link]
        chain.append(joint)
        link = joint.find('parent').attrib['link']
        assert len(chain) <= len(by_child), 'cycle in the joint tree'
    return chain[::-1]


def movable(robot: ET.Element) -> list[ET.Element]:
    return [j for j in robot.findall('joint') if j.attrib['type'] != 'fixed']


def limits(joint: ET.Element) -> tuple[float, float, float, float]:
    """(lower, upper, velocity, effort) of a joint's <limit>."""
    lim = joint.find('limit')
    assert lim is not None, f'joint {joint.attrib["name"]} has no <limit>'
    return tuple(float(lim.attrib[k]) for k in ('lower', 'upper', 'velocity', 'effort'))


def expect_bad_arg(expand: Callable[..., str], arm: str, arg: str, value: str) -> None:
    with pytest.raises(xacro.XacroException) as info:
        expand(arm, **{arg: value})
    message = str(info.value)
    assert POSITIVE_MESSAGE in message, message
    assert re.search(rf'\b{re.escape(arg)}\b', message), message


# ------------------------------------------------------------------------------ tree


def test_single_root_is_base_link(urdf_xml: str) -> None:
    robot = parse(urdf_xml)
    links = set(links_by_name(robot))
    children = [j.find('child').attrib['link'] for j in robot.findall('joint')]
    assert len(children) == len(set(children)), 'a link has two parent joints'
    assert set(children) <= links
    assert {j.find('parent').attrib['link'] for j in robot.findall('joint')} <= links
    assert sorted(links - set(children)) == ['base_link']


def test_tool0_is_a_fixed_leaf_frame(urdf_xml: str) -> None:
    robot = parse(urdf_xml)
    assert 'tool0' in links_by_name(robot)
    (joint,) = [j for j in robot.findall('joint') if j.find('child').attrib['link'] == 'tool0']
    assert joint.attrib['type'] == 'fixed'
    assert not [j for j in robot.findall('joint') if j.find('parent').attrib['link'] == 'tool0']


def test_joint_names_in_chain_order(urdf_xml: str, spec: ArmSpec) -> None:
    robot = parse(urdf_xml)
    chain = chain_joints(robot)
    assert chain[0].find('parent').attrib['link'] == 'base_link'
    assert [j.attrib['name'] for j in chain if j.attrib['type'] != 'fixed'] == list(spec.joints)
    assert chain[-1].attrib['type'] == 'fixed'
    # No movable joint outside the base_link -> tool0 chain.
    assert sorted(j.attrib['name'] for j in movable(robot)) == sorted(spec.joints)


# ---------------------------------------------------------------------------- joints


def test_movable_joints_are_revolute_with_valid_limits(urdf_xml: str) -> None:
    for joint in movable(parse(urdf_xml)):
        name = joint.attrib['name']
        assert joint.attrib['type'] == 'revolute', name
        lower, upper, velocity, effort = limits(joint)
        assert all(math.isfinite(v) for v in (lower, upper, velocity, effort)), name
        assert lower < upper, name
        assert velocity > 0.0, name
        assert effort > 0.0, name
        axis = floats(joint.find('axis').attrib['xyz'])
        assert math.isclose(math.hypot(*axis), 1.0, abs_tol=1e-12), name


def test_limits_match_specification(urdf_xml: str, spec: ArmSpec) -> None:
    joints = joints_by_name(parse(urdf_xml))
    for name, (lower_deg, upper_deg) in zip(spec.joints, spec.limits_deg, strict=True):
        lower, upper, _, _ = limits(joints[name])
        assert lower == pytest.approx(math.radians(lower_deg), abs=1e-12), name
        assert upper == pytest.approx(math.radians(upper_deg), abs=1e-12), name


# -------------------------------------------------------------------------- inertials


def test_every_moving_link_has_a_physical_inertial(urdf_xml: str) -> None:
    robot = parse(urdf_xml)
    links = links_by_name(robot)
    for joint in movable(robot):
        name = joint.find('child').attrib['link']
        inertial = links[name].find('inertial')
        assert inertial is not None, f'{name} has no <inertial>'
        assert float(inertial.find('mass').attrib['value']) > 0.0, name
        inertia = inertial.find('inertia').attrib
        ixx, iyy, izz = (float(inertia[k]) for k in ('ixx', 'iyy', 'izz'))
        assert min(ixx, iyy, izz) > 0.0, name
        # Principal moments of a real body satisfy the triangle inequality.
        assert ixx + iyy >= izz, name
        assert iyy + izz >= ixx, name
        assert izz + ixx >= iyy, name


def test_every_visual_has_a_collision(urdf_xml: str) -> None:
    for link in parse(urdf_xml).findall('link'):
        assert len(link.findall('collision')) == len(link.findall('visual')), link.attrib


@pytest.mark.parametrize(
    'args',
    [{}, {'L1': '0.45', 'L2': '0.35', 'm1': '2.5', 'm2': '0.25'}],
    ids=['defaults', 'overridden'],
)
def test_manipulator3d_links_are_uniform_rods(
    expand: Callable[..., str], args: dict[str, str]
) -> None:
    values = {'L1': 0.60, 'L2': 0.50, 'm1': 1.2, 'm2': 0.8} | {
        k: float(v) for k, v in args.items()
    }
    links = links_by_name(parse(expand('manipulator3d', **args)))
    for link_name, length, mass in (
        ('upper_arm_link', values['L1'], values['m1']),
        ('forearm_link', values['L2'], values['m2']),
    ):
        inertial = links[link_name].find('inertial')
        assert float(inertial.find('mass').attrib['value']) == pytest.approx(mass, abs=1e-12)
        assert floats(inertial.find('origin').attrib['xyz']) == pytest.approx(
            [length / 2.0, 0.0, 0.0], abs=1e-12
        )
        inertia = {k: float(v) for k, v in inertial.find('inertia').attrib.items()}
        # About the rod centre; about the joint it is m*L^2/3 (parallel-axis theorem).
        expected = mass * length**2 / 12.0
        assert inertia['iyy'] == pytest.approx(expected, abs=1e-12)
        assert inertia['izz'] == pytest.approx(expected, abs=1e-12)
        assert inertia['iyy'] + mass * (length / 2.0) ** 2 == pytest.approx(
            mass * length**2 / 3.0, abs=1e-12
        )
        assert 0.0 < inertia['ixx'] < 0.1 * expected  # thin: the axial moment is small
        assert inertia['ixy'] == inertia['ixz'] == inertia['iyz'] == 0.0


# ------------------------------------------------------------------------- xacro args


def test_defaults_equal_specification(spec: ArmSpec, expand: Callable[..., str]) -> None:
    """The YAML defaults are the specification's numbers: explicit args change nothing."""
    explicit = {k: repr(v) for k, v in (spec.length_args | spec.mass_args).items()}
    assert expand(spec.name, **explicit) == expand(spec.name)


def test_length_args_move_their_joint(spec: ArmSpec, expand: Callable[..., str]) -> None:
    for arg, (joint_name, index) in spec.arg_origin.items():
        value = round(spec.length_args[arg] * 1.25 + 0.01, 6)
        joints = joints_by_name(parse(expand(spec.name, **{arg: str(value)})))
        assert origin_xyz(joints[joint_name])[index] == pytest.approx(value, abs=1e-12), arg
        defaults = joints_by_name(parse(expand(spec.name)))
        for other, joint in defaults.items():
            if other != joint_name:
                assert origin_xyz(joints[other]) == origin_xyz(joint), (arg, other)


def test_ccd5_link_scale_scales_every_segment(expand: Callable[..., str]) -> None:
    base = joints_by_name(parse(expand('ccd5')))
    scaled = joints_by_name(parse(expand('ccd5', link_scale='1.7')))
    segments = {
        'shoulder_pitch': 0.15,
        'elbow_pitch': 0.45,
        'wrist_pitch': 0.40,
        'wrist_tip_pitch': 0.20,
        'tool0_joint': 0.10,
    }
    for name, length in segments.items():
        assert origin_xyz(base[name]) == pytest.approx([0.0, 0.0, length], abs=1e-12), name
        assert origin_xyz(scaled[name]) == pytest.approx([0.0, 0.0, 1.7 * length], abs=1e-12)
    assert origin_xyz(scaled['base_yaw']) == [0.0, 0.0, 0.0]


@pytest.mark.parametrize('value', BAD_VALUES)
def test_bad_length_or_mass_arg_fails_loudly(
    spec: ArmSpec, expand: Callable[..., str], value: str
) -> None:
    for arg in (*spec.length_args, *spec.mass_args):
        expect_bad_arg(expand, spec.name, arg, value)


def test_prefix_applies_to_every_name(spec: ArmSpec, expand: Callable[..., str]) -> None:
    robot = parse(expand(spec.name, prefix='left_'))
    names = [e.attrib['name'] for e in (*robot.findall('link'), *robot.findall('joint'))]
    assert all(n.startswith('left_') for n in names), names
    assert 'left_base_link' in names
    assert 'left_tool0' in names
    chain = chain_joints(robot, tip='left_tool0')
    assert [j.attrib['name'] for j in chain if j.attrib['type'] != 'fixed'] == [
        f'left_{n}' for n in spec.joints
    ]


def test_xacro_cli_rejects_negative_length(spec: ArmSpec) -> None:
    """Exit non-zero with the reason on stderr from the xacro CLI that launch files run."""
    arg = next(iter(spec.length_args))
    path = PACKAGE_DIR / 'urdf' / f'{spec.name}.urdf.xacro'
    cli = 'import sys, xacro; sys.exit(xacro.main())'
    result = subprocess.run(
        [sys.executable, '-c', cli, str(path), f'{arg}:=-1'],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0
    assert POSITIVE_MESSAGE in result.stderr, result.stderr


# ---------------------------------------------------------------------------- config


def load_config(arm: str) -> dict[str, Any]:
    return yaml.safe_load((PACKAGE_DIR / 'config' / f'{arm}.yaml').read_text())


def test_home_pose_is_inside_the_limits(urdf_xml: str, spec: ArmSpec) -> None:
    home = load_config(spec.name)['home_pose']
    assert list(home) == list(spec.joints)
    joints = joints_by_name(parse(urdf_xml))
    for name, value in home.items():
        lower, upper, _, _ = limits(joints[name])
        assert lower <= value <= upper, (name, value)


def test_every_config_number_cites_a_source(arm: str) -> None:
    number = re.compile(r':\s*\[?-?\d')
    lines = (PACKAGE_DIR / 'config' / f'{arm}.yaml').read_text().splitlines()
    for line_no, line in enumerate(lines, 1):
        content = line.split('#', 1)[0]
        if number.search(content):
            assert re.search(r'#.*source: \[(spec|assumed)\]', line), f'line {line_no}: {line}'


@pytest.mark.parametrize(
    ('field', 'value', 'message'),
    [
        ('upper_deg', -180.0, 'needs lower_deg < upper_deg'),  # <= every lower limit
        ('velocity', 0.0, 'velocity > 0'),
        ('effort', -1.0, 'effort > 0'),
        ('effort', None, 'no key'),
    ],
    ids=['upper_below_lower', 'zero_velocity', 'negative_effort', 'missing_effort'],
)
def test_broken_config_fails_loudly(
    spec: ArmSpec,
    expand: Callable[..., str],
    tmp_path: pathlib.Path,
    field: str,
    value: float | None,
    message: str,
) -> None:
    config = load_config(spec.name)
    joint = spec.joints[0]
    if value is None:
        del config['joint_limits'][joint][field]
    else:
        config['joint_limits'][joint][field] = value
    broken = tmp_path / f'{spec.name}.yaml'
    broken.write_text(yaml.safe_dump(config))
    with pytest.raises(xacro.XacroException) as info:
        expand(spec.name, config_file=str(broken))
    assert message in str(info.value)
    if value is not None:
        assert joint in str(info.value)
