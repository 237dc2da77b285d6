"""The ros2_control files written for arms we did not describe (UR5, Panda of
example-robot-data): the xacro expands (real xacro) to a URDF whose <ros2_control> block names
exactly the chain's joints with the URDF's limits and the home pose, and the controllers YAML
has every field joint_trajectory_controller and the controller manager read, and nothing they
do not declare (ros2_controllers 4.42.1 for Jazzy, 5.17.0 for Kilted: ``JTC_PARAMETERS``).
joint_state_broadcaster gets the joints outside the chain as extra_joints (Panda's finger);
a URDF with its own <ros2_control> block (xArm7, TIAGo Pro) is refused, naming its plugin."""

from __future__ import annotations

import math
from pathlib import Path
import re
import xml.etree.ElementTree as ElementTree

import pytest
import yaml

from arm_kinematics.control.ros2_control_files import (
    broadcaster_extra_joints,
    controlled_joints,
    controller_name,
    controllers_yaml,
    existing_ros2_control,
    MOCK_PLUGIN,
    refuse_existing_blocks,
    ros2_control_xacro,
    top_level_xacro,
)
from arm_kinematics.control.settings import goal_tolerance_of, path_tolerance_of, waits_of
from arm_kinematics.description.controller_config import ControllerConfig, ignored_keys
from arm_testing.real_arms import REAL_ARMS, robots_dir

xacro = pytest.importorskip('xacro')
CHAINS = {'ur5': ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint',
                  'wrist_2_joint', 'wrist_3_joint'],
          'panda': [f'panda_joint{i}' for i in range(1, 8)]}
# Movable joints outside the chain that are no mimic (panda_finger_joint2 mimics joint1).
EXTRA_JOINTS = {'ur5': None, 'panda': ['panda_finger_joint1']}
# The parameters joint_trajectory_controller declares in both ros2_controllers 4.42.1 (Jazzy)
# and 5.17.0 (Kilted) (joint_trajectory_controller_parameters.yaml): top level, under
# constraints, and per joint under constraints. Undeclared ones are ignored without a word.
JTC_PARAMETERS = {
    'joints', 'command_joints', 'command_interfaces', 'state_interfaces', 'speed_scaling',
    'allow_partial_joints_goal', 'interpolate_from_desired_state',
    'allow_integration_in_goal_trajectories',
    'set_last_command_interface_value_as_state_on_activation', 'action_monitor_rate',
    'interpolation_method', 'allow_nonzero_velocity_at_trajectory_end', 'cmd_timeout', 'gains',
    'constraints'}
JTC_CONSTRAINTS = {'stopped_velocity_tolerance', 'goal_time', 'decelerate_on_cancel'}
JTC_JOINT_CONSTRAINTS = {'trajectory', 'goal', 'max_deceleration_on_cancel'}
# joint_state_broadcaster_parameters.yaml, the same in both.
JSB_PARAMETERS = {'use_local_topics', 'joints', 'extra_joints', 'interfaces',
                  'map_interface_to_joint_state', 'use_urdf_to_filter', 'frame_id',
                  'publish_dynamic_joint_states'}
SIX_AXIS_CONTROLLERS = Path(__file__).resolve().parents[2] / 'arm_bringup' / 'config' / \
    'controllers' / 'six_axis_controllers.yaml'


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
    return top, controllers_yaml(arm.model.joint_names, config, label,
                                 broadcaster_extra_joints(arm.model)), home


def undeclared(data: dict) -> list[str]:
    """The keys of a controllers YAML that neither JTC nor joint_state_broadcaster declares
    (on Jazzy and Kilted), as 'node.key'."""
    manager = data['/**/controller_manager']['ros__parameters']
    found = []
    for node, spec in manager.items():
        if not isinstance(spec, dict):
            continue
        params = data.get(f'/**/{node}', {}).get('ros__parameters', {})
        if spec['type'] == 'joint_state_broadcaster/JointStateBroadcaster':
            found += [f'{node}.{k}' for k in params if k not in JSB_PARAMETERS]
        elif spec['type'] == 'joint_trajectory_controller/JointTrajectoryController':
            found += [f'{node}.{k}' for k in params if k not in JTC_PARAMETERS]
            for key, value in params.get('constraints', {}).items():
                if key in params['joints']:
                    found += [f'{node}.constraints.{key}.{k}' for k in value
                              if k not in JTC_JOINT_CONSTRAINTS]
                elif key not in JTC_CONSTRAINTS:
                    found.append(f'{node}.constraints.{key}')
    return found


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


def one_joint_block(tmp_path: Path, name: str = 'j') -> Path:
    block = tmp_path / 'b.xacro'
    block.write_text(ros2_control_xacro(controlled_joints(
        [type('J', (), {'name': name, 'kind': 'continuous', 'lower': -math.pi,
                        'upper': math.pi})()], [0.5])))
    return block


def expand_call(tmp_path: Path, block: Path, call: str) -> ElementTree.Element:
    top = tmp_path / 'top.urdf.xacro'
    top.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">'
                   f'<xacro:include filename="{block}"/>{call}</robot>')
    return ElementTree.fromstring(xacro.process_file(str(top)).toxml())


def test_plugin_is_an_argument(tmp_path):
    robot = expand_call(tmp_path, one_joint_block(tmp_path),
                        '<xacro:arm_ros2_control name="s" plugin="my/Driver"/>')
    system = robot.find('ros2_control')
    assert system.findtext('hardware/plugin') == 'my/Driver'
    joint = system.find('joint')
    assert joint.get('name') == 'j'
    assert joint.find('command_interface').findall('param') == []   # continuous: no limits


def test_there_is_no_prefix_argument(tmp_path):
    # The joints are the URDF's names: a prefix would name joints the URDF does not have
    # (and the YAML would not follow), so xacro refuses the argument.
    block = one_joint_block(tmp_path)
    with pytest.raises(xacro.XacroException, match='prefix'):
        expand_call(tmp_path, block, '<xacro:arm_ros2_control name="s" prefix="left_"/>')


def test_a_joint_name_xacro_would_evaluate_stays_literal(tmp_path):
    robot = expand_call(tmp_path, one_joint_block(tmp_path, 'a${b}$(c)'),
                        '<xacro:arm_ros2_control name="s"/>')
    assert robot.find('ros2_control/joint').get('name') == 'a${b}$(c)'


@pytest.mark.parametrize('label', ['ur5', 'panda'])
def test_controllers_yaml_has_what_jtc_reads(label, tmp_path):
    config = ControllerConfig(path_tolerance=0.15, goal_tolerance=0.02, goal_time_tolerance=0.7,
                              update_rate=200)
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
    assert jtc['action_monitor_rate'] == 20.0
    assert 'state_publish_rate' not in jtc and 'open_loop_control' not in jtc
    assert undeclared(data) == []
    assert jtc['allow_partial_joints_goal'] is False
    constraints = jtc['constraints']
    assert constraints['goal_time'] == 0.7 and constraints['stopped_velocity_tolerance'] == 0.01
    for joint in CHAINS[label]:
        assert constraints[joint] == {'trajectory': 0.15, 'goal': 0.02}
    broadcaster = data['/**/joint_state_broadcaster']['ros__parameters']
    assert broadcaster['use_local_topics'] is True
    assert broadcaster.get('extra_joints') == EXTRA_JOINTS[label]


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


def test_the_bundled_six_axis_yaml_has_only_declared_parameters():
    data = yaml.safe_load(SIX_AXIS_CONTROLLERS.read_text(encoding='utf-8'))
    jtc = data['/**/joint_trajectory_controller']['ros__parameters']
    assert jtc['joints'] and jtc['constraints']['goal_time'] == 0.5
    assert undeclared(data) == []


def test_the_declared_check_catches_an_undeclared_key():
    # The oracle above would pass anything if it never looked at the keys.
    text = controllers_yaml(['a'], ControllerConfig(), 'x')
    data = yaml.safe_load(text)
    data['/**/joint_trajectory_controller']['ros__parameters']['state_publish_rate'] = 50.0
    data['/**/joint_trajectory_controller']['ros__parameters']['constraints']['a']['tol'] = 1
    data['/**/joint_state_broadcaster']['ros__parameters']['rate'] = 1
    assert sorted(undeclared(data)) == [
        'joint_state_broadcaster.rate', 'joint_trajectory_controller.constraints.a.tol',
        'joint_trajectory_controller.state_publish_rate']


def movable_joints(path: Path) -> tuple[set[str], set[str]]:
    """(movable joints, mimic joints) of a URDF, read straight from the file."""
    movable, mimics = set(), set()
    for joint in ElementTree.parse(path).getroot().iter('joint'):
        if joint.get('type') in ('revolute', 'continuous', 'prismatic'):
            movable.add(joint.get('name'))
            if joint.find('mimic') is not None:
                mimics.add(joint.get('name'))
    return movable, mimics


@pytest.mark.parametrize('label', ['ur5', 'panda'])
def test_every_movable_joint_has_a_state_for_robot_state_publisher(label, tmp_path):
    # robot_state_publisher places a link of a movable joint only when joint_states names
    # it (a mimic joint it computes from its leader): the block's joints (state interfaces)
    # plus the broadcaster's extra_joints plus the mimics must be every movable joint.
    top, text, _ = write_files(label, tmp_path, ControllerConfig())
    robot = ElementTree.fromstring(xacro.process_file(str(top)).toxml())
    block = [j.get('name') for j in robot.find('ros2_control').findall('joint')]
    extra = yaml.safe_load(text)['/**/joint_state_broadcaster']['ros__parameters'].get(
        'extra_joints', [])
    movable, mimics = movable_joints(REAL_ARMS[label].path)
    assert not set(block) & set(extra) and not set(extra) & mimics
    assert set(block) | set(extra) | mimics == movable
    assert ('extra_joints' in text.split('/**/')[0]) == bool(extra)    # the header says why


LOCKED_AND_OFFSET = """<robot name="r">
  <link name="base"/><link name="l1"/><link name="l2"/><link name="l3"/><link name="tip"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="tip"/><axis xyz="0 1 0"/>
    <origin xyz="0 0 0.5"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="slide" type="prismatic"><parent link="base"/><child link="l2"/>
    <axis xyz="1 0 0"/><limit lower="0.02" upper="0.05" effort="1" velocity="1"/></joint>
  <joint name="locked" type="revolute"><parent link="base"/><child link="l3"/>
    <axis xyz="0 0 1"/><limit lower="0.3" upper="0.3" effort="1" velocity="1"/></joint>
</robot>"""


def test_extra_joints_that_rest_away_from_zero_are_named_in_the_header():
    from arm_kinematics.arm import load_arm
    arm = load_arm(LOCKED_AND_OFFSET, base_frame='base', tip_frame='tip')
    extra = broadcaster_extra_joints(arm.model)
    assert extra == {'slide': 0.02, 'locked': 0.3}
    text = controllers_yaml(arm.model.joint_names, ControllerConfig(), 'r', extra)
    assert yaml.safe_load(text)['/**/joint_state_broadcaster']['ros__parameters'][
        'extra_joints'] == ['slide', 'locked']
    assert '# Not at 0 in the arm model' in text and 'slide (0.02), locked (0.3)' in text


@pytest.mark.parametrize('action, name, namespace', [
    ('joint_trajectory_controller/follow_joint_trajectory', 'joint_trajectory_controller', ''),
    ('arm_controller/follow_joint_trajectory', 'arm_controller', ''),
    ('left/arm_controller/follow_joint_trajectory', 'arm_controller', 'left'),
    ('/robot/scaled_jtc/follow_joint_trajectory', 'scaled_jtc', '/robot'),
    ('/scaled_jtc/follow_joint_trajectory', 'scaled_jtc', '/'),
])
def test_the_controller_is_the_segment_before_follow_joint_trajectory(action, name, namespace):
    assert controller_name(action) == name
    text = controllers_yaml(['a'], ControllerConfig(action=action), 'x')
    # The header says where controller_manager must run when the action names a namespace.
    started = re.search(r'# Start controller_manager in (\S+) ', text)
    assert (started.group(1) if started else '') == namespace
    data = yaml.safe_load(text)
    assert data['/**/controller_manager']['ros__parameters'][name]['type'] == \
        'joint_trajectory_controller/JointTrajectoryController'
    assert data[f'/**/{name}']['ros__parameters']['joints'] == ['a']


@pytest.mark.parametrize('action', [
    'follow_joint_trajectory', 'arm_controller', 'arm_controller/follow',
    'arm_controller/follow_joint_trajectory/', 'a//arm_controller/follow_joint_trajectory',
    '2arm/follow_joint_trajectory', 'arm-controller/follow_joint_trajectory'])
def test_other_action_forms_are_refused_with_the_form_that_works(action):
    with pytest.raises(ValueError, match='serves <controller>/follow_joint_trajectory'):
        controllers_yaml(['a'], ControllerConfig(action=action), 'x')


@pytest.mark.parametrize('action', ['left/arm_controller/follow_joint_trajectory',
                                    '/arm_controller/follow_joint_trajectory'])
def test_in_the_arms_namespace_the_action_is_controller_slash_follow(action):
    assert controller_name('arm_controller/follow_joint_trajectory', True) == 'arm_controller'
    with pytest.raises(ValueError, match="in the arm's namespace, where the executor reaches "
                                         'this one at arm_controller/follow_joint_trajectory'):
        controller_name(action, in_arm_namespace=True)


@pytest.mark.parametrize('relative, blocks', [
    ('xarm_description/urdf/xarm7.urdf',
     [('uf_robot_hardware/UFRobotSystemHardware', 'uf_robot_hardware/UFRobotSystemHardware',
       7)]),
    ('tiago_pro_description/robots/tiago_pro.urdf',
     [('ros2_control_tiago_pro_system_can', 'robot_control/RobotControl', 4),
      ('ros2_control_tiago_pro_system_dynamixel', 'robot_control/RobotControl', 2),
      ('ros2_control_tiago_pro_system_ethercat', 'robot_control/RobotControl', 27)]),
])
def test_a_urdf_with_its_own_ros2_control_block_is_refused(relative, blocks):
    urdf = (robots_dir() / relative).read_text(encoding='utf-8')
    assert [(b.name, b.plugin, len(b.joints)) for b in existing_ros2_control(urdf)] == blocks
    with pytest.raises(ValueError) as raised:
        refuse_existing_blocks(urdf, 'vendor.urdf')
    message = str(raised.value)
    assert '\n' not in message and message.startswith(
        f'vendor.urdf already has {len(blocks)} <ros2_control> block(s): ')
    for name, plugin, count in blocks:
        assert f"'{name}' (plugin {plugin}, {count} joints)" in message
    assert 'Remove the block(s) from the URDF' in message and "vendor's own" in message


def test_a_urdf_without_a_block_passes():
    refuse_existing_blocks(REAL_ARMS['ur5'].urdf(), 'ur5.urdf')     # no error


def test_state_publish_rate_is_accepted_and_named_as_ignored():
    # JTC on Jazzy/Kilted has no state_publish_rate: an older file still loads, the key
    # changes nothing, and arm_config says so.
    section = {'state_publish_rate': 25.0, 'goal_tolerance': 0.02}
    config = ControllerConfig.from_mapping(section)
    assert config == ControllerConfig(goal_tolerance=0.02)
    assert not hasattr(config, 'state_publish_rate')
    (note,) = ignored_keys(section)
    assert note.startswith('controller.state_publish_rate is ignored: ') and '#520' in note
    assert ignored_keys({'goal_tolerance': 0.02}) == []
