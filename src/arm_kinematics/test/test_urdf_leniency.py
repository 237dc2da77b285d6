"""Descriptions urdfdom accepts load (with a warning naming the joint where a value was
assumed), broken ones are refused in one line naming the joint and attribute (RELIABILITY
case 24); mimic joints in the chain follow their leader; the default frames are the ones a
user would pick; a tool frame on the last joint's origin is accepted.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from arm_kinematics.arm import ArmConfig, load_arm, load_config_chain
from arm_kinematics.common.transforms import matrix_to_quaternion
from arm_kinematics.common.urdf_tree import lenient_text, read_tree
from arm_kinematics.description.chain_rules import load_chain
from arm_kinematics.description.frames import choose_frames, default_frames
from arm_kinematics.description.passive_joints import PassiveJoints
from arm_kinematics.ik.request import IKRequest
from arm_kinematics.ik.result import GoalType
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_kinematics.model.arm_model import ArmModel, DEFAULT_JOINT_SPEED, DescriptionError
from arm_testing.real_arms import REAL_ARMS, robots_dir

LIMIT = '<limit lower="-2" upper="2" velocity="1" effort="1"/>'


def arm(joint3: str = '', limit2: str = LIMIT, tip_xyz: str = '0.2 0 0', head: str = '',
        extra: str = '') -> str:
    """A yaw + pitch arm, a third joint (``joint3``: its type, axis, limit, mimic) and a
    fixed tool frame."""
    third = joint3 or f'type="revolute"><axis xyz="0 1 0"/>{LIMIT}'
    third = third.replace('>', '><parent link="b"/><child link="c"/>'
                          '<origin xyz="0.3 0 0" rpy="0.2 0 0"/>', 1)
    return f"""{head}<robot name="lenient"{extra}>
  <link name="base_link"/><link name="a"/><link name="b"/><link name="c"/><link name="tool0"/>
  <joint name="j1" type="revolute"><parent link="base_link"/><child link="a"/>
    <origin xyz="0 0 0.3"/><axis xyz="0 0 1"/>{LIMIT}</joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/>
    <origin xyz="0 0.05 0.1"/><axis xyz="0 1 0"/>{limit2}</joint>
  <joint name="j3" {third}</joint>
  <joint name="tool" type="fixed"><parent link="c"/><child link="tool0"/>
    <origin xyz="{tip_xyz}"/></joint>
</robot>"""


def yourdfpy_pose(urdf: str, values: dict[str, float], tip: str = 'tool0',
                  base: str = 'base_link') -> np.ndarray:
    """The tip pose by yourdfpy, a separately written URDF library (mimics included)."""
    import yourdfpy
    robot = yourdfpy.URDF.load(io.StringIO(urdf), load_meshes=False,
                               build_collision_scene_graph=False)
    robot.update_cfg({name: value for name, value in values.items()
                      if name in robot.actuated_joint_names})
    return robot.get_transform(tip, base)


def numeric_jacobian(model: ArmModel, q: np.ndarray, step: float = 1e-7) -> np.ndarray:
    columns, base = [], model.fk(q)
    for index in range(model.dof):
        moved = q.copy()
        moved[index] += step
        pose = model.fk(moved)
        delta = pose[:3, :3] @ base[:3, :3].T
        columns.append(np.concatenate([(pose[:3, 3] - base[:3, 3]) / step, np.array(
            [delta[2, 1] - delta[1, 2], delta[0, 2] - delta[2, 0], delta[1, 0] - delta[0, 1]])
            / (2.0 * step)]))
    return np.array(columns).T


# ---------------------------------------------------------------------------- leniency
def test_a_limit_without_lower_or_upper_reads_zero_with_a_warning():
    model = ArmModel.from_urdf(arm(limit2='<limit upper="1" velocity="1"/>'), tip_link='tool0')
    assert model.lower[1] == 0.0 and model.upper[1] == 1.0
    assert any('joint "j2": <limit> has no lower; read as 0' in note for note in model.notes)


def test_both_missing_lock_the_joint_and_a_continuous_joint_stays_unbounded():
    urdf = arm(limit2='<limit effort="3" velocity="2"/>',
               joint3='type="continuous"><axis xyz="0 1 0"/><limit effort="1" velocity="1"/>')
    model = ArmModel.from_urdf(urdf)
    assert model.joint_names == ('j1', 'j3')
    assert any('joint "j2" is locked (lower == upper = 0)' in note for note in model.notes)
    assert model.wraps[1] and model.upper[1] - model.lower[1] == pytest.approx(2 * math.pi)


def test_a_locked_joint_is_fixed_at_its_value_and_published_there():
    urdf = arm(limit2='<limit lower="0.4" upper="0.4" velocity="1"/>')
    model = ArmModel.from_urdf(urdf)
    assert model.joint_names == ('j1', 'j3')
    q = np.array([0.3, -0.7])
    np.testing.assert_allclose(model.fk(q), yourdfpy_pose(urdf, {'j1': 0.3, 'j2': 0.4,
                                                                'j3': -0.7}), atol=1e-12)
    passive = PassiveJoints.of(model)
    assert passive.names == ('j2',) and passive.positions(q) == [0.4]


def test_velocity_zero_or_missing_is_unknown_and_takes_the_configured_speed():
    urdf = arm(limit2='<limit lower="-1" upper="1" velocity="0"/>',
               joint3='type="revolute"><axis xyz="0 1 0"/><limit lower="-1" upper="1"/>')
    model = ArmModel.from_urdf(urdf)
    assert model.velocity_limits.tolist() == [1.0, DEFAULT_JOINT_SPEED, DEFAULT_JOINT_SPEED]
    for joint in ('j2', 'j3'):
        assert any(f'joint "{joint}": no velocity limit in the URDF' in n for n in model.notes)
    config = ArmConfig.from_mapping({'motion': {'default_joint_speed': 0.25}})
    assert load_config_chain(urdf, config).model.velocity_limits.tolist() == [1.0, 0.25, 0.25]
    with pytest.raises(ValueError, match='motion.default_joint_speed must be > 0'):
        ArmConfig.from_mapping({'motion': {'default_joint_speed': 0}})


def test_vendor_prefixes_and_a_blank_line_before_the_declaration_are_accepted():
    urdf = arm(head='\n\n<?xml version="1.0"?>\n', extra=' drake:declaration="none"')
    urdf = urdf.replace('<joint name="j1"', '<joint drake:rotor_inertia="1e-4" name="j1"')
    assert ArmModel.from_urdf(urdf).joint_names == ('j1', 'j2', 'j3')
    default_namespace = arm().replace('<robot name="lenient"',
                                      '<robot xmlns="http://www.ros.org" name="lenient"')
    assert ArmModel.from_urdf(default_namespace).joint_names == ('j1', 'j2', 'j3')
    # The same text for other readers (the lab's yourdfpy, which lxml would refuse).
    import yourdfpy
    robot = yourdfpy.URDF.load(io.BytesIO(lenient_text(urdf).encode('utf-8')),
                               load_meshes=False, build_collision_scene_graph=False)
    assert robot.actuated_joint_names == ['j1', 'j2', 'j3']


@pytest.mark.parametrize(('old', 'new', 'words'), [
    ('<axis xyz="0 0 1"/>', '<axis xyz="0 one 1"/>',
     'joint "j1" has a degenerate axis: <axis> xyz="0 one 1" is not 3 finite numbers'),
    ('<axis xyz="0 0 1"/>', '<axis xyz="0 0"/>', 'joint "j1" has a degenerate axis'),
    ('<origin xyz="0 0 0.3"/>', '<origin xyz="0 0 nan"/>',
     'joint "j1": <origin> xyz="0 0 nan" is not 3 finite numbers'),
    ('<origin xyz="0 0 0.3"/>', '<origin xyz="0 0 0.3" rpy="0 x 0"/>',
     'joint "j1": <origin> rpy="0 x 0" is not 3 finite numbers'),
    (LIMIT, '<limit lower="-2" upper="two" velocity="1"/>',
     'joint "j1": <limit> upper="two" is not a number'),
    (LIMIT, '<limit lower="-2" upper="2" velocity="1" effort="lots"/>',
     'joint "j1": <limit> effort="lots" is not a number'),
    (LIMIT, '<limit lower="-2" upper="2" velocity="-1"/>',
     'joint "j1": <limit> velocity="-1" is negative'),
    ('type="revolute"><parent link="base_link"/><child link="a"/>\n    <origin xyz="0 0 0.3"/>'
     f'<axis xyz="0 0 1"/>{LIMIT}',
     'type="prismatic"><parent link="base_link"/><child link="a"/>\n    <origin xyz="0 0 0.3"/>'
     '<axis xyz="0 0 1"/><limit lower="2" upper="-2" velocity="1"/>',
     'joint "j1": lower limit 2.0 is not below upper limit -2.0 (read as "no limit" on a '
     'revolute joint'),
    ('<child link="a"/>', '<child link="nowhere"/>',
     'joint "j1": <child link="nowhere"> is not a link of the description'),
    ('type="revolute"><parent link="base_link"/>', 'type="hinge"><parent link="base_link"/>',
     'joint "j1": type="hinge" is not a URDF joint type'),
])
def test_a_broken_value_is_one_line_naming_the_joint_and_attribute(old, new, words):
    urdf = arm()
    assert old in urdf
    with pytest.raises(DescriptionError) as raised:
        ArmModel.from_urdf(urdf.replace(old, new, 1))
    assert words in str(raised.value) and '\n' not in str(raised.value), str(raised.value)


def test_an_empty_or_non_urdf_text_is_one_line():
    for text, words in (('', 'robot_description is empty'),
                        ('<robot name="x"><link', 'not valid XML'),
                        ('<model/>', 'root element is <model>, expected <robot>'),
                        ('<robot name="x"/>', 'the description has no links')):
        with pytest.raises(DescriptionError, match=words):
            load_chain(text)


# ---------------------------------------------------------------------------- mimic joints
MIMIC = ('type="revolute"><axis xyz="0 1 0"/><limit lower="-0.5" upper="1.5" velocity="1"/>'
         '<mimic joint="j2" multiplier="-0.5" offset="0.1"/>')


def test_a_mimic_joint_follows_its_leader_in_fk_and_the_jacobian():
    urdf = arm(joint3=MIMIC)
    model = ArmModel.from_urdf(urdf)
    assert model.joint_names == ('j1', 'j2') and model.followers == ('j3',)
    rng = np.random.default_rng(3)
    for q in model.random_configurations(10, rng):
        expected = yourdfpy_pose(urdf, {'j1': q[0], 'j2': q[1]})
        np.testing.assert_allclose(model.fk(q), expected, atol=1e-12)
        np.testing.assert_allclose(model.frames_batch(np.array([q, q]))[1, -1], expected,
                                   atol=1e-12)
        np.testing.assert_allclose(model.jacobian(q), numeric_jacobian(model, q), atol=2e-6)
        np.testing.assert_allclose(model.position_jacobian_batch(q[None])[0],
                                   model.jacobian(q)[:3], atol=1e-12)


def test_the_leader_range_and_speed_are_narrowed_so_the_follower_stays_inside_its_own():
    # j3 = -0.5 j2 + 0.1 in [-0.5, 1.5]  <=>  j2 in [-2.8, 1.2]; j2's own range is [-2, 2].
    model = ArmModel.from_urdf(arm(joint3=MIMIC.replace('velocity="1"', 'velocity="0.2"')))
    assert model.lower[1] == pytest.approx(-2.0) and model.upper[1] == pytest.approx(1.2)
    assert model.velocity_limits[1] == pytest.approx(0.4)     # 0.2 rad/s / |-0.5|


def test_ik_never_moves_a_mimic_joint_on_its_own_and_the_executor_publishes_it():
    urdf = arm(joint3=MIMIC)
    loaded = load_arm(urdf)
    model = loaded.model
    rng = np.random.default_rng(4)
    dispatcher = loaded.dispatcher()
    for q in model.random_configurations(6, rng):
        target = model.fk(q)[:3, 3]
        answer = dispatcher.solve(IKRequest(position=target.tolist()), SolveOptions(),
                                  loaded.home)
        assert answer.result.success, answer.result.reason
        assert len(answer.result.q) == 2 and model.within_limits(answer.result.q)
        np.testing.assert_allclose(model.fk(answer.result.q)[:3, 3], target, atol=1e-4)
    passive = PassiveJoints.of(model)
    assert passive.names == ('j3',)
    assert passive.positions([0.3, 0.8]) == [pytest.approx(-0.5 * 0.8 + 0.1)]


@pytest.mark.parametrize(('mimic', 'words'), [
    ('<mimic joint="nobody"/>', 'joint "j3" mimics unknown joint "nobody"'),
    ('<mimic joint="j3"/>', 'mimic joints form a cycle: j3 -> j3'),
    ('<mimic joint="tool"/>', 'joint "j3" mimics joint "tool", which is fixed'),
    ('<mimic joint="j2" multiplier="x"/>', 'joint "j3": <mimic> multiplier="x" is not 1 '
     'finite number'),
    ('<mimic joint="j2" offset="9"/>', 'mimic joint "j3" cannot stay inside its limits'),
])
def test_a_broken_mimic_is_refused_with_the_names(mimic, words):
    joint3 = f'type="revolute"><axis xyz="0 1 0"/>{LIMIT}{mimic}'
    with pytest.raises(DescriptionError) as raised:
        ArmModel.from_urdf(arm(joint3=joint3))
    assert words in str(raised.value), str(raised.value)


def test_a_mimic_cycle_through_two_joints_is_named():
    urdf = arm(joint3=f'type="revolute"><axis xyz="0 1 0"/>{LIMIT}<mimic joint="j2"/>')
    urdf = urdf.replace(f'<axis xyz="0 1 0"/>{LIMIT}</joint>',
                        f'<axis xyz="0 1 0"/>{LIMIT}<mimic joint="j3"/></joint>', 1)
    with pytest.raises(DescriptionError, match='mimic joints form a cycle: j(2|3) -> '):
        read_tree(urdf)


def test_the_panda_to_a_finger_follows_the_finger_rule():
    urdf = REAL_ARMS['panda'].urdf()
    model = ArmModel.from_urdf(urdf, 'panda_link0', 'panda_rightfinger')
    # finger_joint2 mimics finger_joint1, which this chain does not hold: fixed where the
    # executor holds finger_joint1 (0), and named.
    assert model.dof == 7
    assert any('"panda_finger_joint2" follows "panda_finger_joint1"' in n for n in model.notes)


# ---------------------------------------------------------------------------- frames
@pytest.mark.parametrize(('path', 'tip'), [
    ('panda_description/urdf/panda.urdf', 'panda_hand'),
    ('ur_description/urdf/ur5_robot.urdf', 'tool0'),
    ('xarm_description/urdf/xarm7.urdf', 'link_eef'),
    ('so_arm_description/urdf/so101.urdf', 'gripper_frame_link'),
    ('z1_description/urdf/z1.urdf', 'gripperStator'),
    ('kinova_description/robots/kinova.urdf', 'j2s6s200_end_effector'),
    ('baxter_description/urdf/baxter.urdf', 'left_hand_link'),
    ('pr2_description/urdf/pr2.urdf', 'l_gripper_tool_frame'),
])
def test_the_default_tip_is_the_tool_frame_a_user_would_pick(path, tip):
    frames = choose_frames(read_tree((robots_dir() / path).read_text(encoding='utf-8')))
    assert frames.tip == tip, frames.describe()
    assert 'set base_frame/tip_frame' in frames.describe()


def test_the_reason_and_the_other_candidates_are_given():
    frames = choose_frames(read_tree(REAL_ARMS['panda'].urdf()))
    line = frames.describe()
    assert 'tool-frame name *_hand' in line and 'other candidates: panda_hand_tcp' in line
    assert default_frames(REAL_ARMS['ur5'].urdf()) == ('world', 'tool0')


def test_a_given_base_gets_its_default_tip_below_it():
    loaded = load_chain(REAL_ARMS['ur5'].urdf(), base='base_link')
    assert (loaded.model.base_link, loaded.model.tip_link) == ('base_link', 'tool0')
    assert loaded.report()[0].startswith('frames base_link -> tool0 (tool-frame name tool0')


# ---------------------------------------------------------------------------- tool frames
def test_a_tool_frame_on_the_last_joints_origin_is_accepted_and_solved():
    urdf = REAL_ARMS['ur5'].urdf()
    loaded = load_arm(urdf, None, 'base_link', 'wrist_3_link')
    model = loaded.model
    assert np.allclose(model.tip_offset[:3, 3], 0.0)
    assert loaded.default_solver == 'closed_form', loaded.solver_reason   # still a UR
    rng = np.random.default_rng(7)
    dispatcher = loaded.dispatcher()
    for q in model.random_configurations(5, rng):
        pose = model.fk(q)
        request = IKRequest(position=pose[:3, 3].tolist(),
                            orientation=list(matrix_to_quaternion(pose[:3, :3])),
                            goal=int(GoalType.FULL_POSE))
        answer = dispatcher.solve(request, SolveOptions(), loaded.home)
        assert answer.result.success, answer.result.reason
        np.testing.assert_allclose(model.fk(answer.result.q), pose, atol=1e-4)


def test_two_joints_on_one_axis_through_one_point_are_still_refused():
    urdf = arm().replace('<origin xyz="0.3 0 0" rpy="0.2 0 0"/>', '<origin xyz="0 0 0"/>')
    with pytest.raises(DescriptionError, match='from joint "j2" to joint "j3" has zero length'):
        load_chain(urdf)


def test_the_safety_motion_bound_covers_what_a_mimic_joint_moves():
    # The floor and obstacle checks step along a path by this bound: a leader also turns
    # its follower (times its multiplier), which moves the links after it.
    urdf = arm(joint3=MIMIC.replace('multiplier="-0.5"', 'multiplier="2"').replace(
        'lower="-0.5" upper="1.5"', 'lower="-5" upper="5"'))
    loaded = load_arm(urdf)
    model, safety = loaded.model, loaded.safety
    rng = np.random.default_rng(9)
    for q in model.random_configurations(200, rng):
        step = q + [0.0, rng.choice([-0.01, 0.01])]       # the leader alone
        moved = np.linalg.norm(model.frames(step)[:, :3, 3] - model.frames(q)[:, :3, 3],
                               axis=1).max()
        assert moved <= safety.max_point_motion(q, step) + 1e-12


def test_collision_shapes_ride_along_a_mimic_joint():
    box = '<collision><geometry><box size="0.05 0.05 0.2"/></geometry></collision>'
    urdf = arm(joint3=MIMIC).replace('<link name="b"/><link name="c"/>',
                                     f'<link name="b">{box}</link><link name="c">{box}</link>')
    loaded = load_arm(urdf)
    model = loaded.model
    checker = loaded.collision_checker()
    import yourdfpy
    robot = yourdfpy.URDF.load(io.StringIO(urdf), load_meshes=False,
                               build_collision_scene_graph=False)
    rng = np.random.default_rng(12)
    for q in model.random_configurations(5, rng):
        robot.update_cfg({'j1': q[0], 'j2': q[1]})
        poses = checker.link_poses(q)
        assert {'b', 'c'} <= set(poses)
        for link in ('b', 'c'):
            np.testing.assert_allclose(poses[link], robot.get_transform(link, 'base_link'),
                                       atol=1e-12)
        checker.check(q)                                # poses every shape without error


def test_a_floating_base_joint_puts_the_default_base_on_the_body_it_carries():
    urdf = arm().replace('<link name="base_link"/>', '<link name="world"/><link name="base_link"/>'
                         '<joint name="float" type="floating"><parent link="world"/>'
                         '<child link="base_link"/></joint>')
    loaded = load_chain(urdf)
    assert (loaded.model.base_link, loaded.model.tip_link) == ('base_link', 'tool0')
    assert 'base below the floating joint "float"' in loaded.report()[0]


def test_a_slide_carrying_the_tool_on_its_own_frame_builds_and_solves():
    # A linear axis with the tool on its carriage: at 0 the carriage and the tool sit on the
    # base origin, but the slide moves the tool (its safety capsule is a ball there).
    urdf = ('<robot name="axis"><link name="base_link"/><link name="carriage"/>'
            '<joint name="slide" type="prismatic"><parent link="base_link"/>'
            '<child link="carriage"/><axis xyz="1 0 0"/>'
            '<limit lower="0" upper="0.5" velocity="0.2"/></joint></robot>')
    loaded = load_arm(urdf)
    assert loaded.model.tip_link == 'carriage'
    answer = loaded.dispatcher().solve(IKRequest(position=[0.3, 0.0, 0.0]), SolveOptions(),
                                       loaded.home)
    assert answer.result.success and answer.result.q[0] == pytest.approx(0.3, abs=1e-4)
