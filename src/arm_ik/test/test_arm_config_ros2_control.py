"""``arm_config --ros2-control DIR``: the files for an arm we did not describe, from its URDF
and an arm configuration with a controller section; bad input refused in one line."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import pytest
import yaml

from arm_ik.arm_config import main
from arm_testing.real_arms import REAL_ARMS

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
