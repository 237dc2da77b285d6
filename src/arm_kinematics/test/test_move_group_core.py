"""The move_group core (arm_kinematics.moveit): the SRDF reader, groups and frames, and the
decisions of each capability with MoveIt's codes, on the bundled six_axis arm."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arm_kinematics.common.transforms import matrix_to_quaternion
from arm_kinematics.moveit import codes
from arm_kinematics.moveit.cartesian import CartesianCapability, CartesianQuery
from arm_kinematics.moveit.kinematics import IKQuery, JointBound, KinematicsCapability
from arm_kinematics.moveit.plan import (
    GoalSet,
    OrientationGoal,
    PlanCapability,
    PlanQuery,
    PositionGoal,
)
from arm_kinematics.moveit.robot import MoveItRobot
from arm_kinematics.moveit.scene_diff import (
    ADD,
    APPEND,
    CollisionObjectSpec,
    Mesh,
    MOVE,
    PlanningSceneState,
    Primitive,
    REMOVE,
)
from arm_kinematics.moveit.srdf import group_joints, read_srdf, SRDFError

JOINTS = ('base_yaw', 'shoulder_pitch', 'elbow_pitch', 'wrist_roll', 'wrist_pitch',
          'tool_roll')
SRDF_TEXT = """<?xml version="1.0"?>
<robot name="six_axis">
  <group name="manipulator"><chain base_link="base_link" tip_link="tool0"/></group>
  <group name="wrist"><joint name="wrist_roll"/><joint name="wrist_pitch"/>
    <joint name="tool_roll"/></group>
  <group name="both"><group name="wrist"/><joint name="base_yaw"/></group>
  <group_state name="up" group="manipulator">
    <joint name="base_yaw" value="0"/><joint name="shoulder_pitch" value="0"/>
    <joint name="elbow_pitch" value="0.2"/><joint name="wrist_roll" value="0"/>
    <joint name="wrist_pitch" value="0"/><joint name="tool_roll" value="0"/>
  </group_state>
  <end_effector name="tool" parent_link="tool0" group="wrist"/>
  <disable_collisions link1="base_link" link2="upper_arm_link" reason="Never"/>
</robot>
"""


def translation(x: float, y: float, z: float) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, 3] = (x, y, z)
    return pose


@pytest.fixture(scope='module')
def six():
    """The six_axis arm with every capability, as the node builds them."""
    from arm_kinematics.arm import load_arm as build
    from arm_kinematics.description.bundled import expand_xacro, load_arm_config
    from arm_kinematics.motion import worker
    urdf, config = expand_xacro('six_axis'), load_arm_config('six_axis')
    arm = build(urdf, config)
    robot = MoveItRobot(arm, read_srdf(SRDF_TEXT))
    scene = PlanningSceneState(robot)
    checker = arm.collision_checker(scene.scene)
    planner = worker.build_planner(worker.PlannerSpec(
        urdf, arm.label, config, arm.model.base_link, arm.model.tip_link, arm.default_solver))
    kinematics = KinematicsCapability(robot, arm.dispatcher())
    return {'arm': arm, 'robot': robot, 'scene': scene, 'checker': checker,
            'kinematics': kinematics,
            'cartesian': CartesianCapability(robot, planner.path_ik, lambda: checker),
            'plan': PlanCapability(kinematics, planner, lambda: checker),
            'home': arm.home.copy()}


def tool_pose(six, q):
    pose = six['arm'].model.fk(q)
    return tuple(pose[:3, 3]), matrix_to_quaternion(pose[:3, :3])


# ---------------------------------------------------------------------- SRDF
def test_srdf_reads_groups_states_effectors_and_pairs():
    srdf = read_srdf(SRDF_TEXT)
    assert srdf.groups['manipulator'].chains == (('base_link', 'tool0'),)
    assert srdf.groups['both'].subgroups == ('wrist',)
    assert srdf.group_states['manipulator']['up']['elbow_pitch'] == 0.2
    assert srdf.end_effectors[0].parent_link == 'tool0'
    assert srdf.disabled_collisions == (('base_link', 'upper_arm_link', 'Never'),)


def test_srdf_groups_resolve_to_movable_joints(urdf_of):
    from arm_kinematics.common.urdf_tree import read_tree
    tree, srdf = read_tree(urdf_of('six_axis')), read_srdf(SRDF_TEXT)
    assert tuple(group_joints(srdf, 'manipulator', tree)) == JOINTS
    assert group_joints(srdf, 'both', tree) == ['base_yaw', 'wrist_roll', 'wrist_pitch',
                                                'tool_roll']


@pytest.mark.parametrize('text, words', [
    ('<robot', 'not readable XML'),
    ('<robo/>', 'root element'),
    ('<robot><group/></robot>', 'has no "name"'),
    ('<robot><group_state name="a" group="g"><joint name="j" value="x"/></group_state>'
     '</robot>', 'not a number'),
])
def test_srdf_refusals_name_the_element(text, words):
    with pytest.raises(SRDFError, match=words):
        read_srdf(text)


def test_srdf_unknown_joint_is_refused(urdf_of):
    from arm_kinematics.common.urdf_tree import read_tree
    srdf = read_srdf('<robot><group name="g"><joint name="nope"/></group></robot>')
    with pytest.raises(SRDFError, match='"nope"'):
        group_joints(srdf, 'g', read_tree(urdf_of('six_axis')))


# ---------------------------------------------------------------------- robot
def test_groups_served_and_not_with_reasons(six):
    robot = six['robot']
    assert robot.served_groups == ['manipulator']
    assert robot.group('manipulator').success
    wrist = robot.group('wrist')
    assert wrist.code == codes.INVALID_GROUP_NAME and 'leaves' in wrist.message
    unknown = robot.group('nope')
    assert unknown.code == codes.INVALID_GROUP_NAME and 'manipulator' in unknown.message


def test_without_srdf_the_chain_is_one_group_with_home(six):
    robot = MoveItRobot(six['arm'])
    assert robot.served_groups == ['arm']
    assert robot.named_state('arm', 'home').success
    assert MoveItRobot(six['arm'], default_group='six').served_groups == ['six']


def test_frames_above_at_and_below_the_base(six):
    robot, q = six['robot'], six['home']
    assert np.allclose(robot.frame_pose('', q).value, np.eye(4))
    assert np.allclose(robot.frame_pose('tool0', q).value, six['arm'].model.fk(q))
    assert robot.frame_pose('nowhere', q).code == codes.FRAME_TRANSFORM_FAILURE
    assert robot.link_pose('nowhere', q).code == codes.INVALID_LINK_NAME


def test_robot_state_checks(six):
    robot, q = six['robot'], six['home']
    assert robot.state(['base_yaw'], [0.5], q).value[0] == 0.5
    assert robot.state(['base_yaw'], [math.nan], q).code == codes.INVALID_ROBOT_STATE
    assert robot.state(['nope'], [0.0], q).code == codes.INVALID_ROBOT_STATE
    assert robot.state(['base_yaw'], [], q).code == codes.INVALID_ROBOT_STATE


# ---------------------------------------------------------------------- kinematics
def test_ik_round_trip_and_fk_in_another_frame(six):
    kinematics, q = six['kinematics'], six['home']
    position, orientation = tool_pose(six, q + 0.1)
    answer = kinematics.ik(IKQuery('manipulator', position, orientation), q)
    assert answer.success, answer.message
    assert np.allclose(six['arm'].model.fk(answer.value)[:3, 3], position, atol=1e-3)
    fk = kinematics.fk(['tool0'], 'tool0', [], [], q)
    assert fk.success and np.allclose(fk.value[0][1], 0.0, atol=1e-9)


@pytest.mark.parametrize('change, code', [
    ({'group': 'nope'}, codes.INVALID_GROUP_NAME),
    ({'frame_id': 'nowhere'}, codes.FRAME_TRANSFORM_FAILURE),
    ({'ik_link': 'nowhere'}, codes.INVALID_LINK_NAME),
    ({'ik_link': 'base_link'}, codes.INVALID_LINK_NAME),
    ({'position': (math.nan, 0.0, 0.0)}, codes.INVALID_GOAL_CONSTRAINTS),
    ({'orientation': (0.0, 0.0, 0.0, 0.0)}, codes.INVALID_GOAL_CONSTRAINTS),
    ({'position': (30.0, 0.0, 0.0)}, codes.NO_IK_SOLUTION),
    ({'seed_names': ['base_yaw'], 'seed_positions': [math.inf]}, codes.INVALID_ROBOT_STATE),
    ({'timeout': -1.0}, codes.INVALID_GOAL_CONSTRAINTS),
    ({'joint_bounds': [JointBound('nope', 0.0, 0.1, 0.1)]}, codes.INVALID_GOAL_CONSTRAINTS),
])
def test_ik_refusals_use_moveit_codes(six, change, code):
    position, orientation = tool_pose(six, six['home'] + 0.1)
    values = {'group': 'manipulator', 'position': position, 'orientation': orientation}
    values.update(change)
    answer = six['kinematics'].ik(IKQuery(**values), six['home'])
    assert answer.code == code, answer.message
    assert answer.message


def test_ik_honours_joint_constraints(six):
    q = six['home']
    target = q + 0.1
    position, orientation = tool_pose(six, target)
    bound = JointBound('base_yaw', float(target[0]), 0.01, 0.01)
    answer = six['kinematics'].ik(IKQuery('manipulator', position, orientation,
                                          joint_bounds=[bound]), q)
    assert answer.success and bound.holds(answer.value[0])


def test_fk_unknown_link_and_frame(six):
    kinematics, q = six['kinematics'], six['home']
    assert kinematics.fk(['nope'], '', [], [], q).code == codes.INVALID_LINK_NAME
    assert kinematics.fk(['tool0'], 'nope', [], [], q).code == codes.FRAME_TRANSFORM_FAILURE


# ---------------------------------------------------------------------- Cartesian
def test_cartesian_line_followed_whole(six):
    q = six['home']
    (x, y, z), orientation = tool_pose(six, q)
    answer = six['cartesian'].plan(CartesianQuery('manipulator', [((x, y, z - 0.05),
                                                                   orientation)]), q)
    assert answer.success and answer.value.fraction == pytest.approx(1.0)
    trajectory = answer.value.trajectory
    assert np.allclose(six['arm'].model.fk(trajectory.positions[-1])[:3, 3], (x, y, z - 0.05),
                       atol=1e-3)


@pytest.mark.parametrize('change, code', [
    ({'waypoints': []}, codes.INVALID_GOAL_CONSTRAINTS),
    ({'group': 'wrist'}, codes.INVALID_GROUP_NAME),
    ({'frame_id': 'nope'}, codes.FRAME_TRANSFORM_FAILURE),
    ({'link_name': 'nope'}, codes.INVALID_LINK_NAME),
    ({'max_step': math.nan}, codes.INVALID_GOAL_CONSTRAINTS),
    ({'path_constraints': 1}, codes.INVALID_GOAL_CONSTRAINTS),
    ({'waypoints': [((math.nan, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))]},
     codes.INVALID_GOAL_CONSTRAINTS),
])
def test_cartesian_refusals(six, change, code):
    q = six['home']
    (x, y, z), orientation = tool_pose(six, q)
    values = {'group': 'manipulator', 'waypoints': [((x, y, z - 0.05), orientation)]}
    values.update(change)
    answer = six['cartesian'].plan(CartesianQuery(**values), q)
    assert answer.code == code, answer.message


def test_cartesian_revolute_threshold_cuts_the_path(six):
    q = six['home']
    (x, y, z), orientation = tool_pose(six, q)
    answer = six['cartesian'].plan(CartesianQuery(
        'manipulator', [((x, y, z - 0.2), orientation)], revolute_jump_threshold=1e-4), q)
    assert answer.success and answer.value.fraction < 1.0


# ---------------------------------------------------------------------- plans
def test_plan_joint_goal_named_state_and_pose_goal(six):
    plan, q = six['plan'], six['home']
    goal = GoalSet(joints=[JointBound(n, float(v) + 0.2, 1e-3, 1e-3)
                           for n, v in zip(JOINTS, q)])
    answer = plan.plan(PlanQuery('manipulator', [goal]), q)
    assert answer.success, answer.message
    assert np.allclose(answer.value.trajectory.positions[-1], q + 0.2, atol=1e-6)
    named = plan.plan(PlanQuery('manipulator', [GoalSet(name='up')]), q)
    assert named.success and named.value.goal[2] == pytest.approx(0.2)
    position, orientation = tool_pose(six, q + 0.15)
    pose_goal = GoalSet(positions=[PositionGoal('tool0', '', position)],
                        orientations=[OrientationGoal('tool0', '', orientation)])
    answer = plan.plan(PlanQuery('manipulator', [pose_goal], velocity_scale=0.3), q)
    assert answer.success, answer.message
    assert np.allclose(six['arm'].model.fk(answer.value.goal)[:3, 3], position, atol=2e-3)


@pytest.mark.parametrize('query, code, words', [
    (PlanQuery('nope', [GoalSet(name='up')]), codes.INVALID_GROUP_NAME, 'unknown group'),
    (PlanQuery('manipulator', []), codes.INVALID_GOAL_CONSTRAINTS, 'no goal'),
    (PlanQuery('manipulator', [GoalSet(visibility=1)]), codes.INVALID_GOAL_CONSTRAINTS,
     'visibility'),
    (PlanQuery('manipulator', [GoalSet(name='up')], path_constraints=1),
     codes.INVALID_GOAL_CONSTRAINTS, 'path constraints'),
    (PlanQuery('manipulator', [GoalSet(name='nope')]), codes.INVALID_GOAL_CONSTRAINTS,
     'no named state'),
    (PlanQuery('manipulator', [GoalSet(name='up')], velocity_scale=math.nan),
     codes.INVALID_GOAL_CONSTRAINTS, 'finite'),
    (PlanQuery('manipulator', [GoalSet(joints=[JointBound('base_yaw', 99.0, 0.0, 0.0)])]),
     codes.INVALID_GOAL_CONSTRAINTS, 'limits'),
    (PlanQuery('manipulator', [GoalSet(positions=[PositionGoal('tool0', 'nope',
                                                               (1.0, 0, 0))])]),
     codes.FRAME_TRANSFORM_FAILURE, 'nope'),
])
def test_plan_refusals(six, query, code, words):
    answer = six['plan'].plan(query, six['home'])
    assert answer.code == code and words in answer.message, answer.message


def test_goal_in_a_box_is_goal_in_collision(six):
    q, scene = six['home'], six['scene']
    position, orientation = tool_pose(six, q + 0.3)
    box = CollisionObjectSpec('box', '', translation(*position), ADD,
                              (Primitive('box', (0.05, 0.05, 0.05)),))
    try:
        assert scene.apply(box, q).success
        six['checker'].scene = scene.scene
        answer = six['plan'].plan(PlanQuery('manipulator', [GoalSet(
            positions=[PositionGoal('tool0', '', position)],
            orientations=[OrientationGoal('tool0', '', orientation)])]), q)
        assert answer.code in (codes.GOAL_IN_COLLISION, codes.NO_IK_SOLUTION), answer.message
        assert answer.code == codes.GOAL_IN_COLLISION or 'collision' in answer.message
    finally:
        scene.clear()
        six['checker'].scene = scene.scene


# ---------------------------------------------------------------------- scene
def test_scene_add_move_append_remove_attach_detach(tmp_path, six):
    q = six['home']
    state = PlanningSceneState(six['robot'], mesh_folder=str(tmp_path))
    box = CollisionObjectSpec('b', '', translation(1.0, 0.0, 0.2), ADD,
                              (Primitive('box', (0.1, 0.1, 0.1)),))
    assert state.apply(box, q).success and state.scene.ids == ('b',)
    moved = state.apply(CollisionObjectSpec('b', '', translation(1.0, 0.5, 0.2), MOVE), q)
    assert moved.success and np.allclose(state.scene.get('b').pose[:3, 3], (1.0, 0.5, 0.2))
    appended = state.apply(CollisionObjectSpec('b', '', translation(1.0, 0.5, 0.2), APPEND,
                                               (Primitive('sphere', (0.05,),
                                                          translation(0, 0, 0.2)),)), q)
    assert appended.success and set(state.scene.ids) == {'b', 'b#1'}
    tetra = Mesh(np.array([[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]], float),
                 np.array([[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]))
    assert state.apply(CollisionObjectSpec('m', 'tool0', np.eye(4), ADD, (), (tetra,)),
                       q).success
    assert list(tmp_path.glob('*.stl'))
    assert state.attach('tool0', CollisionObjectSpec('m'), ['tool0'], q).success
    assert 'm' not in state.scene.ids and 'm' in state.attached
    assert state.detach('m', q + 0.1).success and 'm' in state.scene.ids
    assert state.apply(CollisionObjectSpec('b', operation=REMOVE), q).success
    assert state.scene.ids == ('m',)


@pytest.mark.parametrize('spec, code', [
    (CollisionObjectSpec('c', '', np.eye(4), ADD, (Primitive('cone', (0.1, 0.1)),)),
     codes.INVALID_OBJECT_NAME),
    (CollisionObjectSpec('c', '', np.eye(4), ADD, (Primitive('box', (0.1, math.nan, 1)),)),
     codes.INVALID_OBJECT_NAME),
    (CollisionObjectSpec('c', 'nope', np.eye(4), ADD, (Primitive('sphere', (0.1,)),)),
     codes.FRAME_TRANSFORM_FAILURE),
    (CollisionObjectSpec('gone', operation=REMOVE), codes.INVALID_OBJECT_NAME),
    (CollisionObjectSpec('gone', operation=MOVE), codes.INVALID_OBJECT_NAME),
])
def test_scene_refusals_keep_the_scene(six, spec, code):
    state = PlanningSceneState(six['robot'])
    answer = state.apply(spec, six['home'])
    assert answer.code == code, answer.message
    assert state.scene.ids == ()


def test_the_chain_srdf_reads_back_as_one_group_with_home(six):
    from arm_kinematics.moveit.robot import chain_srdf
    srdf = read_srdf(chain_srdf(six['arm'], 'six'))
    robot = MoveItRobot(six['arm'], srdf)
    assert robot.served_groups == ['six']
    home = robot.named_state('six', 'home').value
    assert [home[j] for j in JOINTS] == pytest.approx(list(six['home']))


def test_srdf_pairs_join_the_checker_allowed_pairs(six):
    from arm_kinematics.moveit.robot import with_allowed_pairs
    arm = with_allowed_pairs(six['arm'], six['robot'].allowed_pairs())
    pairs = {frozenset(entry[:2]) for entry in arm.collision_checker().allowed}
    assert frozenset(('base_link', 'upper_arm_link')) in pairs


def test_srdf_pair_reasons_become_the_checker_reasons(six):
    from arm_kinematics.moveit.robot import with_allowed_pairs
    checker = six['arm'].collision_checker()
    known = {frozenset(entry[:2]) for entry in checker.allowed}
    links = list(checker.links)
    new = [(a, b) for i, a in enumerate(links) for b in links[i + 1:]
           if frozenset((a, b)) not in known][:2]
    assert new, 'every pair is already allowed'
    pairs = [(new[0][0], new[0][1], 'Never'), (new[-1][0], new[-1][1], 'Whatever')]
    arm = with_allowed_pairs(six['arm'], pairs)
    reasons = {frozenset(entry[:2]): entry[2] for entry in arm.collision_checker().allowed}
    assert reasons[frozenset(new[0])] == 'never'
    assert reasons[frozenset(new[-1])] in ('user', 'never')


def test_an_srdf_without_groups_gets_the_chain_group(six):
    from arm_kinematics.moveit.robot import served_srdf
    pairs_only = ('<robot name="six_axis"><disable_collisions link1="base_link" '
                  'link2="upper_arm_link" reason="Never"/></robot>')
    served = read_srdf(served_srdf(pairs_only, six['arm']))
    assert list(served.groups) == ['arm'] and served.disabled_collisions
    assert served_srdf(SRDF_TEXT, six['arm']) == SRDF_TEXT
    assert 'arm' in read_srdf(served_srdf('', six['arm'])).groups


def test_an_attached_object_is_checked_as_part_of_the_robot(six):
    from arm_kinematics.moveit.attached import arm_with_attached, link_name
    q = six['home']
    state = PlanningSceneState(six['robot'])
    held = CollisionObjectSpec('held', 'tool0', translation(0.0, 0.0, 0.15), ADD,
                               (Primitive('box', (0.06, 0.06, 0.2)),))
    assert state.apply(held, q).success
    assert state.attach('tool0', CollisionObjectSpec('held'), ['tool_link'], q).success
    base = six['arm'].collision_checker()
    arm, urdf = arm_with_attached(six['arm'], state.attached, state, base)
    assert link_name('held') in urdf and arm.model.joint_names == six['arm'].model.joint_names
    checker = arm.collision_checker(state.scene)
    assert checker.is_free(q), checker.check(q).message
    # A box where the held object is, clear of the arm itself: a collision only when held.
    where = six['robot'].link_pose('tool0', q).value @ translation(0.0, 0.0, 0.25)
    assert state.apply(CollisionObjectSpec('wall', '', where, ADD,
                                           (Primitive('box', (0.05, 0.05, 0.05)),)), q).success
    checker.scene = state.scene
    base.scene = state.scene
    assert base.is_free(q)
    report = checker.check(q)
    assert report.collides and link_name('held') in report.message
