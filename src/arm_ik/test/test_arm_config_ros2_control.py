"""``arm_config --ros2-control DIR``: the files for an arm we did not describe, from its URDF
and an arm configuration with a controller section; bad input refused in one line."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import pytest
import yaml

from arm_ik.arm_config import main
from arm_testing.real_arms import REAL_ARMS, robots_dir

xacro = pytest.importorskip('xacro')


@pytest.mark.parametrize('label', ['ur5', 'panda'])
def test_writes_the_three_files(label, tmp_path, capsys):
    arm = REAL_ARMS[label]
    config = tmp_path / 'arm.yaml'
    config.write_text(yaml.safe_dump({'arm': f'my_{label}', 'controller': {
        'path_tolerance': 0.1, 'goal_time_tolerance': 1.0}}))
    assert main([str(arm.path), '--base', arm.base, '--tip', arm.tip, '--arm-config',
                 str(config), '--ros2-control', str(tmp_path / 'out')]) == 0
    written = capsys.readouterr().out.split()
    assert [p.rsplit('/', 1)[1] for p in written] == [
        f'my_{label}.ros2_control.xacro', f'my_{label}_ros2_control.urdf.xacro',
        f'my_{label}_controllers.yaml']
    robot = ElementTree.fromstring(xacro.process_file(written[1]).toxml())
    system = robot.find('ros2_control')
    assert system.get('name') == f'my_{label}'
    joints = [j.get('name') for j in system.findall('joint')]
    controllers = yaml.safe_load(open(written[2]).read())
    jtc = controllers['/**/joint_trajectory_controller']['ros__parameters']
    assert jtc['joints'] == joints and len(joints) in (6, 7)
    assert jtc['constraints']['goal_time'] == 1.0
    assert all(jtc['constraints'][j]['trajectory'] == 0.1 for j in joints)


def test_bad_controller_section_is_refused_in_one_line(tmp_path, capsys):
    config = tmp_path / 'arm.yaml'
    config.write_text(yaml.safe_dump({'controller': {'goal_tolerance': -0.5}}))
    assert main([str(REAL_ARMS['ur5'].path), '--tip', 'tool0', '--arm-config', str(config),
                 '--ros2-control', str(tmp_path / 'out')]) == 1
    error = capsys.readouterr().err
    assert 'controller.goal_tolerance must be a finite number >= 0' in error
    assert error.count('\n') == 1 and not (tmp_path / 'out').exists()


def test_panda_fingers_are_the_broadcasters_extra_joints(tmp_path, capsys):
    arm = REAL_ARMS['panda']
    assert main([str(arm.path), '--base', arm.base, '--tip', arm.tip, '--ros2-control',
                 str(tmp_path)]) == 0
    controllers = capsys.readouterr().out.split()[2]
    data = yaml.safe_load(open(controllers).read())
    assert data['/**/joint_state_broadcaster']['ros__parameters']['extra_joints'] == [
        'panda_finger_joint1']      # panda_finger_joint2 mimics it


@pytest.mark.parametrize('relative, words', [
    ('xarm_description/urdf/xarm7.urdf',
     "xarm7.urdf already has 1 <ros2_control> block(s): "
     "'uf_robot_hardware/UFRobotSystemHardware' (plugin "
     'uf_robot_hardware/UFRobotSystemHardware, 7 joints)'),
    ('tiago_pro_description/robots/tiago_pro.urdf',
     "tiago_pro.urdf already has 3 <ros2_control> block(s): 'ros2_control_tiago_pro_system_can' "
     '(plugin robot_control/RobotControl, 4 joints)'),
])
def test_a_urdf_with_a_ros2_control_block_is_refused_in_one_line(relative, words, tmp_path,
                                                                 capsys):
    path = robots_dir() / relative
    tip = 'link_eef' if 'xarm' in relative else 'arm_left_tool_link'
    assert main([str(path), '--tip', tip, '--ros2-control', str(tmp_path / 'out')]) == 1
    error = capsys.readouterr().err
    assert error.startswith(f'arm_config: {words}') and error.count('\n') == 1
    assert "vendor's own ros2_control bringup" in error
    assert not (tmp_path / 'out').exists()


def test_an_action_of_another_form_is_refused_before_any_file(tmp_path, capsys):
    config = tmp_path / 'arm.yaml'
    config.write_text(yaml.safe_dump({'controller': {'action': 'arm_controller/follow'}}))
    assert main([str(REAL_ARMS['ur5'].path), '--tip', 'tool0', '--arm-config', str(config),
                 '--ros2-control', str(tmp_path / 'out')]) == 1
    error = capsys.readouterr().err
    assert "controller.action 'arm_controller/follow' is no joint_trajectory_controller " \
        'action: it serves <controller>/follow_joint_trajectory' in error
    assert error.count('\n') == 1 and not (tmp_path / 'out').exists()


def test_state_publish_rate_is_named_as_ignored(tmp_path, capsys):
    config = tmp_path / 'arm.yaml'
    config.write_text(yaml.safe_dump({'controller': {'state_publish_rate': 50.0}}))
    assert main([str(config), '--check']) == 0
    error = capsys.readouterr().err
    assert error.startswith('arm_config: note: controller.state_publish_rate is ignored: '
                            'joint_trajectory_controller on Jazzy and Kilted has no such ')
    assert main([str(REAL_ARMS['ur5'].path), '--tip', 'tool0', '--arm-config', str(config),
                 '--ros2-control', str(tmp_path / 'out')]) == 0
    captured = capsys.readouterr()
    assert 'state_publish_rate is ignored' in captured.err
    controllers = yaml.safe_load(open(captured.out.split()[2]).read())
    assert 'state_publish_rate' not in \
        controllers['/**/joint_trajectory_controller']['ros__parameters']
