"""The ros2_control files written for arms we did not describe (UR5, Panda of
example-robot-data): the xacro expands (real xacro) to a URDF whose <ros2_control> block names
exactly the chain's joints with the URDF's limits and the home pose, and the controllers YAML
has every field joint_trajectory_controller and the controller manager read."""

from __future__ import annotations

import math
from pathlib import Path
import xml.etree.ElementTree as ElementTree

import pytest
import yaml

from arm_kinematics.control.ros2_control_files import (
    controlled_joints,
    controllers_yaml,
    MOCK_PLUGIN,
    ros2_control_xacro,
    top_level_xacro,
)
from arm_kinematics.control.settings import goal_tolerance_of, path_tolerance_of, waits_of
from arm_kinematics.description.controller_config import ControllerConfig
from arm_testing.real_arms import REAL_ARMS

xacro = pytest.importorskip('xacro')
CHAINS = {'ur5': ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint',
                  'wrist_2_joint', 'wrist_3_joint'],
          'panda': [f'panda_joint{i}' for i in range(1, 8)]}


def urdf_limits(path: Path) -> dict[str, tuple[str, float, float]]:
    """(type, lower, upper) of every joint, read straight from the URDF (the oracle)."""
    limits = {}
    for joint in ElementTree.parse(path).getroot().iter('joint'):
        limit = joint.find('limit')
        if limit is not None and 'lower' in limit.attrib:
            limits[joint.get('name')] = (joint.get('type'), float(limit.get('lower')),
                                         float(limit.get('upper')))
    return limits


def write_files(label: str, folder: Path, config: ControllerConfig) -> tuple[Path, str, list]:
    from arm_kinematics.arm import load_arm
    arm_data = REAL_ARMS[label]
    arm = load_arm(arm_data.urdf(), base_frame=arm_data.base, tip_frame=arm_data.tip)
    home = [float(x) for x in arm.home]
    block = folder / f'{label}.ros2_control.xacro'
    block.write_text(ros2_control_xacro(controlled_joints(arm.model.joints, home), label))
    top = folder / f'{label}_ros2_control.urdf.xacro'
    top.write_text(top_level_xacro(label, str(arm_data.path), str(block), label))
    return top, controllers_yaml(arm.model.joint_names, config, label), home


@pytest.mark.parametrize('label', ['ur5', 'panda'])
def test_expanded_xacro_declares_exactly_the_chain_with_limits_and_home(label, tmp_path):
    top, _, home = write_files(label, tmp_path, ControllerConfig())
    robot = ElementTree.fromstring(xacro.process_file(str(top)).toxml())
    assert robot.get('name') == label
    # The arm itself is all there: every URDF joint, plus the one block.
    oracle = urdf_limits(REAL_ARMS[label].path)
    assert {j.get('name') for j in robot.findall('joint')} >= set(oracle)
    (system,) = robot.findall('ros2_control')
    assert system.get('type') == 'system' and system.findtext('hardware/plugin') == MOCK_PLUGIN
    joints = system.findall('joint')
    assert [j.get('name') for j in joints] == CHAINS[label]
    for joint, initial in zip(joints, home):
        kind, lower, upper = oracle[joint.get('name')]
        (command,) = joint.findall('command_interface')
        assert command.get('name') == 'position'
        params = {p.get('name'): float(p.text) for p in command.findall('param')}
        assert params == {'min': lower, 'max': upper}
        states = joint.findall('state_interface')
        assert [s.get('name') for s in states] == ['position', 'velocity']
        value = float(states[0].find("param[@name='initial_value']").text)
        assert value == initial and lower <= value <= upper


def test_plugin_and_prefix_are_arguments(tmp_path):
    block = tmp_path / 'b.xacro'
    block.write_text(ros2_control_xacro(controlled_joints(
        [type('J', (), {'name': 'j', 'kind': 'continuous', 'lower': -math.pi,
                        'upper': math.pi})()], [0.5])))
    top = tmp_path / 'top.urdf.xacro'
    top.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">'
                   f'<xacro:include filename="{block}"/>'
                   '<xacro:arm_ros2_control name="s" prefix="left_" plugin="my/Driver"/>'
                   '</robot>')
    robot = ElementTree.fromstring(xacro.process_file(str(top)).toxml())
    system = robot.find('ros2_control')
    assert system.findtext('hardware/plugin') == 'my/Driver'
    joint = system.find('joint')
    assert joint.get('name') == 'left_j'
    assert joint.find('command_interface').findall('param') == []   # continuous: no limits


@pytest.mark.parametrize('label', ['ur5', 'panda'])
def test_controllers_yaml_has_what_jtc_reads(label, tmp_path):
    config = ControllerConfig(path_tolerance=0.15, goal_tolerance=0.02, goal_time_tolerance=0.7,
                              state_publish_rate=25.0, update_rate=200)
    _, text, _ = write_files(label, tmp_path, config)
    data = yaml.safe_load(text)
    manager = data['/**/controller_manager']['ros__parameters']
    assert manager['update_rate'] == 200
    assert manager['joint_trajectory_controller']['type'] == \
        'joint_trajectory_controller/JointTrajectoryController'
    assert manager['joint_state_broadcaster']['type'] == \
        'joint_state_broadcaster/JointStateBroadcaster'
    jtc = data['/**/joint_trajectory_controller']['ros__parameters']
    assert jtc['joints'] == CHAINS[label]
    assert jtc['command_interfaces'] == ['position']
    assert jtc['state_interfaces'] == ['position', 'velocity']
    assert jtc['state_publish_rate'] == 25.0 and jtc['action_monitor_rate'] == 20.0
    assert jtc['allow_partial_joints_goal'] is False
    constraints = jtc['constraints']
    assert constraints['goal_time'] == 0.7 and constraints['stopped_velocity_tolerance'] == 0.01
    for joint in CHAINS[label]:
        assert constraints[joint] == {'trajectory': 0.15, 'goal': 0.02}
    assert data['/**/joint_state_broadcaster']['ros__parameters']['use_local_topics'] is True


@pytest.mark.parametrize('section, words', [
    ({'path_tolerance': -1.0}, 'controller.path_tolerance'),
    ({'goal_time_tolerance': math.nan}, 'controller.goal_time_tolerance'),
    ({'server_wait': 0.0}, 'controller.server_wait must be a finite number > 0'),
    ({'update_rate': 10.5}, 'controller.update_rate'),
    ({'action': '~/follow'}, 'controller.action'),
    ({'tolerance': 0.1}, 'unknown key(s) tolerance'),
])
def test_controller_section_refuses_bad_values(section, words):
    with pytest.raises(ValueError, match=None) as raised:
        ControllerConfig.from_mapping(section)
    assert words in str(raised.value)


def test_controller_section_defaults_and_goal_tolerances():
    config = ControllerConfig.from_mapping({'path_tolerance': 0, 'goal_tolerance': 0.05})
    assert path_tolerance_of(config).position == -1.0   # 0 in the arm config: erased
    assert goal_tolerance_of(config).position == 0.05
    assert goal_tolerance_of(config).velocity == 0.01
    assert waits_of(config).cancel_wait == 1.0
    assert config.action.endswith('follow_joint_trajectory')
