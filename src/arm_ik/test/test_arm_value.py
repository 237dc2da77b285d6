"""The arm as one value (kinematics.arm): any URDF plus a plain ArmConfig, no arm names.

Real arms from example-robot-data (UR5, Panda, SO-101) go through the same constructor as the
bundled examples: FK against a second URDF library, the solver chosen from the structure,
defaults derived from the URDF, the starting configuration the arm_config command writes,
and configuration errors that name the key.
"""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
import yaml

from arm_ik import arm_config as arm_config_command
from arm_kinematics.analysis.config_writer import starting_config
from arm_kinematics.arm import (
    ArmConfig,
    ArmConfigError,
    build_arm,
    default_frames,
    load_arm,
)
from arm_kinematics.common.transforms import matrix_to_quaternion
from arm_kinematics.description.bundled import ARMS, expand_xacro, load_arm_config
from arm_kinematics.description.meshes import default_search_paths
from arm_kinematics.ik.request import IKRequest
from arm_kinematics.ik.result import GoalType
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_kinematics.ik.solvers.dls import DLSSolver
from arm_kinematics.motion import worker
from arm_testing.real_arms import REAL_ARMS

REAL = sorted(REAL_ARMS)


@pytest.fixture(scope='module')
def real_arm():
    cache = {}

    def get(name: str):
        if name not in cache:
            spec = REAL_ARMS[name]
            cache[name] = load_arm(spec.urdf(), None, spec.base, spec.tip)
        return cache[name]
    return get


@pytest.mark.parametrize('name', REAL)
def test_fk_of_a_real_arm_equals_a_second_urdf_library(name, real_arm):
    import yourdfpy
    spec = REAL_ARMS[name]
    robot = yourdfpy.URDF.load(io.BytesIO(spec.path.read_bytes()), load_meshes=False,
                               build_scene_graph=True, build_collision_scene_graph=False,
                               load_collision_meshes=False)
    model = real_arm(name).model
    rng = np.random.default_rng(7)
    for q in model.random_configurations(20, rng):
        robot.update_cfg(dict(zip(model.joint_names, q)))
        expected = robot.get_transform(spec.tip, spec.base)
        np.testing.assert_allclose(model.fk(q), expected, atol=1e-9)


@pytest.mark.parametrize('name', REAL)
def test_defaults_from_the_urdf_alone(name, real_arm):
    arm = real_arm(name)
    model = arm.model
    assert arm.label == model.name
    if name == 'ur5':
        # The UR family's closed form, recognised from the URDF (solvers.families).
        assert arm.default_solver == 'closed_form' and 'UR family' in arm.solver_reason
    elif name == 'so101':
        # Yaw + three parallel pitch + tool roll (solvers.planar): analytic serves it by
        # name; the default position goal stays with dls (a pitch sweep costs ~6 ms).
        assert arm.default_solver == 'dls' and 'analytic serves it by name' in \
            arm.solver_reason and 'yaw + three parallel pitch + tool roll' in arm.solver_reason
        assert arm.dispatcher().solver_reason('analytic') == ''
    else:
        assert arm.default_solver == 'dls' and 'no closed form' in arm.solver_reason
    assert not arm.safety_enabled
    assert not arm.safety.floor_enabled and not arm.safety.obstacle_enabled
    np.testing.assert_allclose(arm.home, model.clamp(np.zeros(model.dof)))
    assert model.within_limits(arm.home)
    assert arm.config.default_law == 'min_jerk'
    # Nothing moves the arm into a check it cannot pass: the home pose is judged safe.
    assert arm.safety.check_pose(arm.home).safe


@pytest.mark.parametrize('name', REAL)
def test_reach_sphere_holds_every_tip(name, real_arm):
    """The reach pre-check never refuses a reachable target (SO-101's shoulder sits beside
    its pan axis, so a sphere round the shoulder at q = 0 missed 4 % of its workspace)."""
    arm = real_arm(name)
    q = arm.model.random_configurations(5000, np.random.default_rng(3))
    tips = arm.model.fk_batch(q)[:, :3, 3]
    distance = np.linalg.norm(tips - arm.workspace.shoulder, axis=1)
    assert distance.max() <= arm.workspace.max_reach + 1e-9


@pytest.mark.parametrize('name', REAL)
def test_every_position_target_of_a_real_arm_is_solved(name, real_arm):
    arm = real_arm(name)
    dispatcher = arm.dispatcher()
    rng = np.random.default_rng(11)
    targets = arm.model.fk_batch(arm.model.random_configurations(25, rng))[:, :3, 3]
    options = SolveOptions(timeout=2.0)
    for target in targets:
        answer = dispatcher.solve(IKRequest(position=target.tolist()), options, arm.home)
        assert answer.result.success, (target, answer.result.reason)
        reached = arm.model.fk(answer.result.q)[:3, 3]
        assert np.linalg.norm(reached - target) < 1e-4
        assert arm.model.within_limits(answer.result.q)


@pytest.mark.parametrize('name', ['ur5', 'panda'])
def test_full_pose_targets_of_six_and_seven_joint_arms(name, real_arm):
    arm = real_arm(name)
    solver = DLSSolver(arm.model, arm.workspace)
    rng = np.random.default_rng(5)
    solved = 0
    poses = arm.model.fk_batch(arm.model.random_configurations(20, rng))
    for pose in poses:
        result = solver.solve(pose[:3, 3], matrix_to_quaternion(pose[:3, :3]),
                              goal=GoalType.FULL_POSE, seed=arm.home,
                              options=SolveOptions(timeout=2.0))
        solved += bool(result.success)
    assert solved == len(poses)


def test_default_frames_of_real_urdfs():
    assert default_frames(REAL_ARMS['ur5'].urdf()) == ('world', 'tool0')
    # The tool frame the gripper's jaw hangs from, never the jaw: the arm's own five joints.
    assert default_frames(REAL_ARMS['so101'].urdf()) == ('base_link', 'gripper_frame_link')
    assert default_frames(REAL_ARMS['panda'].urdf()) == ('panda_link0', 'panda_hand')


@pytest.mark.parametrize('arm', ARMS)
def test_bundled_examples_are_configurations_like_any_other(arm):
    config = load_arm_config(arm)
    built = load_arm(expand_xacro(arm), config)
    assert built.label == arm
    assert built.default_solver == config['ik']['default_solver']
    assert built.config.default_law == config['motion']['default_law']
    assert built.safety_enabled == (arm != 'manipulator3d')   # its floor and ball are off


@pytest.mark.parametrize('arm', ARMS)
def test_planning_process_and_nodes_share_one_arm(arm):
    """The executor's planning process builds the same arm value as ik_server and
    target_input (the same dispatcher rules): one target and seed, one answer."""
    config = load_arm_config(arm)
    urdf = expand_xacro(arm)
    built = load_arm(urdf, config)
    planner = worker.build_planner(worker.PlannerSpec(urdf, arm, config,
                                                      default_solver=built.default_solver))
    model = built.model
    target = model.fk(built.home + 0.2)[:3, 3].tolist()
    options = SolveOptions(timeout=2.0)
    here = built.dispatcher().solve(IKRequest(position=target), options, built.home)
    there = planner.dispatcher.solve(IKRequest(position=target), options, built.home)
    assert here.result.code == there.result.code
    np.testing.assert_allclose(here.result.q, there.result.q, atol=1e-12)
    assert (planner.dispatcher.safety is None) == (built.dispatcher().safety is None)


@pytest.mark.parametrize('name', REAL)
def test_starting_configuration_validates_and_builds(name):
    spec = REAL_ARMS[name]
    data = starting_config(spec.urdf(), spec.base, spec.tip, default_search_paths(spec.path))
    config = ArmConfig.from_mapping(yaml.safe_load(yaml.safe_dump(data)), 'written')
    arm = load_arm(spec.urdf(), config)
    assert (arm.model.base_link, arm.model.tip_link) == (spec.base, spec.tip)
    assert not arm.safety_enabled
    radii = [link['radius'] for link in data['safety']['links']]
    assert radii and all(0.0 < r < 0.5 for r in radii)
    # The meshes of example-robot-data resolve beside the URDF: no default radius left.
    assert not any('default' in note for note in data['info']['capsule_radii_from'].values())


def test_arm_config_command_writes_a_file_that_checks(tmp_path, capsys):
    spec = REAL_ARMS['ur5']
    assert arm_config_command.main([str(spec.path), '--base', spec.base,
                                    '--tip', spec.tip]) == 0
    written = tmp_path / 'ur5.yaml'
    written.write_text(capsys.readouterr().out, encoding='utf-8')
    assert arm_config_command.main([str(written), '--check', str(spec.path)]) == 0
    assert 'valid for ur5' in capsys.readouterr().out
    assert arm_config_command.main([str(spec.path), '--tip', 'no_such_link']) == 1
    assert 'no_such_link' in capsys.readouterr().err


def test_arm_config_says_which_frames_it_chose_and_why(capsys):
    # No --base, --tip: the defaults, their reason and the other candidates on stderr (the
    # YAML on stdout carries them in info).
    assert arm_config_command.main([str(REAL_ARMS['panda'].path)]) == 0
    captured = capsys.readouterr()
    assert 'arm_config: frames panda_link0 -> panda_hand (tool-frame name *_hand' in \
        captured.err and 'other candidates: panda_hand_tcp' in captured.err
    data = yaml.safe_load(captured.out)
    assert data['frames'] == {'base': 'panda_link0', 'tip': 'panda_hand'}
    assert data['info']['frames'].startswith('frames panda_link0 -> panda_hand')


@pytest.mark.parametrize(('data', 'words'), [
    ([1, 2], 'must be a mapping'),
    ({'sefety': {}}, 'unknown key(s) sefety'),
    ({'ik': {'default_solver': 'DLS'}}, 'ik.default_solver'),
    ({'ik': {'damping': float('nan')}}, 'ik.damping'),
    ({'ik': {'tolerance': 0.0}}, 'ik.tolerance is 0.0 (must be > 0)'),
    ({'ik': {'max_iterations': 0}}, 'ik.max_iterations'),
    ({'ik': {'speed': 1}}, 'ik has unknown key(s) speed'),
    ({'home_pose': 'up'}, 'home_pose must be'),
    ({'home_pose': {'j1': float('inf')}}, 'home_pose.j1'),
    ({'frames': {'tip': ''}}, 'frames.tip'),
    ({'lab': {'experiments': ['fly']}}, 'lab.experiments'),
    ({'safety': {'floor_enabled': 'yes'}}, 'safety'),
    ({'arm': 'my-arm'}, "arm: 'my-arm' is not a ROS name"),
])
def test_configuration_errors_name_the_key(data, words):
    with pytest.raises(ArmConfigError, match=None) as raised:
        ArmConfig.from_mapping(data, 'my_arm.yaml')
    assert words in str(raised.value) and 'my_arm.yaml' in str(raised.value)


def test_a_configuration_that_does_not_fit_the_urdf_is_refused(real_arm):
    model = real_arm('ur5').model
    with pytest.raises(ArmConfigError, match='home_pose has 3 values'):
        build_arm(model, ArmConfig.from_mapping({'home_pose': [0.0, 0.1, 0.2]}))
    with pytest.raises(ArmConfigError, match='elbow'):
        build_arm(model, ArmConfig.from_mapping({'home_pose': {'elbow': 0.1}}))
    with pytest.raises(ArmConfigError, match='does not apply'):
        build_arm(model, ArmConfig.from_mapping({'ik': {'default_solver': 'analytic'}}))


def test_a_robot_name_that_is_no_ros_name_becomes_a_label_that_is():
    # Exporters name robots 'ARM.SLDASM' or 'ur5e-cell'; the label becomes the namespace.
    spec = REAL_ARMS['ur5']
    urdf = re.sub(r'<robot\s+name="[^"]*"', '<robot name="3D.SLDASM-arm"', spec.urdf(), count=1)
    assert load_arm(urdf, None, spec.base, spec.tip).label == '_3D_SLDASM_arm'
    with pytest.raises(ArmConfigError, match="'my.arm' is not a ROS name"):
        load_arm(urdf, None, spec.base, spec.tip, 'my.arm')


def test_unreadable_configuration_files(tmp_path):
    with pytest.raises(ArmConfigError, match='cannot be read'):
        ArmConfig.from_file(tmp_path / 'missing.yaml')
    broken = tmp_path / 'broken.yaml'
    broken.write_text('ik: [unclosed', encoding='utf-8')
    with pytest.raises(ArmConfigError, match='not valid YAML'):
        ArmConfig.from_file(broken)
    urdf = tmp_path / 'robot.urdf'
    urdf.write_text('\n<?xml version="1.0"?>\n<robot name="r"><!-- note: x --></robot>\n',
                    encoding='utf-8')
    with pytest.raises(ArmConfigError, match=r'not valid YAML: the file is XML \(a URDF'):
        ArmConfig.from_file(urdf)
    binary = tmp_path / 'binary.yaml'
    binary.write_bytes(b'\xff\xfe\x00arm')
    with pytest.raises(ArmConfigError, match='cannot be read: not UTF-8 text'):
        ArmConfig.from_file(binary)


def test_arm_config_check_given_a_urdf_says_which_file_goes_first(capsys):
    path = str(REAL_ARMS['ur5'].path)
    assert arm_config_command.main([path, '--check']) == 1
    error = capsys.readouterr().err
    assert error.strip().count('\n') == 0, error
    assert 'is a URDF or xacro file, not an arm configuration' in error
    assert f'arm_config CONFIG.yaml --check {path}' in error


def test_arm_builds_its_collision_checker_with_the_written_allowed_pairs():
    """arm_config writes the allowed pairs; an arm built from that file uses them as they are
    (no computation at start-up), checks at its home pose and reuses them for a new checker."""
    spec = REAL_ARMS['ur5']
    data = starting_config(spec.urdf(), spec.base, spec.tip, default_search_paths(spec.path))
    written = data['collision']['allowed_pairs']
    assert written and all(len(entry) == 3 for entry in written)
    assert ['shoulder_link', 'upper_arm_link', 'adjacent'] in written
    edited = yaml.safe_load(yaml.safe_dump(data))
    edited['collision']['allowed_pairs'] = written[:3]
    arm = load_arm(spec.urdf(), ArmConfig.from_mapping(edited, 'edited'))
    checker = arm.collision_checker(urdf_path=spec.path)
    assert checker.allowed_pairs() == written[:3]
    np.testing.assert_array_equal(checker.home, arm.home)
    assert checker.is_free(arm.home) == (not checker.check(arm.home).collides)
    plain = load_arm(spec.urdf(), ArmConfig())
    first = plain.collision_checker(urdf_path=spec.path)
    again = plain.collision_checker(urdf_path=spec.path)
    assert first is not again and again.allowed_pairs() == first.allowed_pairs()
    assert sorted(map(tuple, first.allowed_pairs())) == sorted(map(tuple, written))


def test_an_allowed_pair_naming_an_unknown_link_is_refused_with_the_reason():
    spec = REAL_ARMS['ur5']
    config = ArmConfig.from_mapping({'collision': {'allowed_pairs': [['base_link', 'nope']]}})
    arm = load_arm(spec.urdf(), config)
    with pytest.raises(ArmConfigError, match='"nope"'):
        arm.collision_checker(urdf_path=spec.path)


def test_arm_config_check_refuses_allowed_pairs_the_urdf_does_not_have(tmp_path, capsys):
    spec = REAL_ARMS['ur5']
    written = tmp_path / 'ur5.yaml'
    written.write_text(yaml.safe_dump({'collision': {'allowed_pairs': [
        ['base_link', 'shoulder_link', 'adjacent'], ['base_link', 'elbow', 'user']]}}),
        encoding='utf-8')
    assert arm_config_command.main([str(written), '--check', str(spec.path)]) == 1
    assert '"elbow"' in capsys.readouterr().err


@pytest.mark.parametrize(('geometry', 'radius', 'how'), [
    ('<box size="0.2 0.1 0.1"/>', 0.5 * np.hypot(0.1, 0.1), 'box'),
    ('<box size="0 0.1 nan"/>', 0.04, 'unreadable <box>: default 0.04 m'),
    ('<cylinder radius="0.03" length="0.2"/>', 0.03, 'cylinder'),
    ('<sphere radius="inf"/>', 0.04, 'sphere: default 0.04 m'),
])
def test_capsule_radii_come_only_from_valid_collision_shapes(geometry, radius, how):
    from xml.etree import ElementTree

    from arm_kinematics.analysis.config_writer import link_radius
    link = ElementTree.fromstring(f'<link name="a"><collision><geometry>{geometry}</geometry>'
                                  '</collision></link>')
    assert link_radius(link, []) == (pytest.approx(radius), how)
