"""MotionPlanner with the collision checker: every plan is checked for self-collision and the
scene, a blocked joint move is planned round (OMPL for most arms, the grid for pointer3), and
a move that cannot be planned is NO_PATH with the reason.

The UR5 of example-robot-data (URDF meshes, no configuration) is the arm the package was not
written for; a box stands where its wrist passes when the base turns from START to GOAL.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arm_kinematics.description.bundled import load_arm_config
from arm_kinematics.motion import worker
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.motion.move_types import MotionSettings, MoveGoal, Plan, PlanFailure
from arm_kinematics.motion.planning import default_path_planner, GRID, SAMPLING
from arm_kinematics.motion.safety_check import SceneData
from arm_kinematics.motion.trajectory import Trajectory
from arm_testing.real_arms import UR5_BLOCKING_BOX as BOX
from arm_testing.real_arms import ur5_planner_and_checker

DEG = math.pi / 180.0
START = (0.0, -1.2, 1.2, -1.57, -1.57, 0.0)       # wrist at (0.64, 0.11, 0.49) m
GOAL = (1.6, -1.2, 1.2, -1.57, -1.57, 0.0)        # the base turned by 1.6 rad
# Where the wrist is half-way round: the straight joint move goes through it.
# The dense check of the tests: finer than the planner's own 1 cm.
TEST_STEP = 0.005


@pytest.fixture(scope='module')
def ur5():
    """(planner, an independent checker of the same arm and scene for the assertions)."""
    return ur5_planner_and_checker()


def joint_goal(planner, q) -> MoveGoal:
    return MoveGoal(joint_names=tuple(planner.model.joint_names),
                    joint_positions=tuple(float(v) for v in q))


def test_a_ur5_blocked_by_a_box_is_planned_round_and_every_dense_sample_is_clear(ur5):
    planner, checker = ur5
    straight = checker.check_path([START, GOAL], TEST_STEP)
    assert not straight.free and straight.report.scene_collision, 'the box must block the move'
    settings = MotionSettings(speed_scale=0.5)
    plan = planner.plan(joint_goal(planner, GOAL), np.array(START), settings)
    assert isinstance(plan, Plan), plan.error
    assert plan.detoured and 'collision-free detour' in plan.message, plan.message
    trajectory = plan.trajectory
    assert trajectory.positions[0] == pytest.approx(START)
    assert trajectory.positions[-1] == pytest.approx(GOAL, abs=1e-12)
    assert not trajectory.velocities[-1].any()
    limits = planner.model.velocity_limits * settings.speed_scale
    assert np.all(np.abs(trajectory.velocities) <= limits * 1.011)
    # Every sample of the executed path, densified further, is clear of the box and the arm.
    dense = checker.check_path(trajectory.positions, TEST_STEP)
    assert dense.free, dense.report.message
    assert dense.samples > 100


def test_without_the_box_the_straight_move_is_kept(ur5):
    planner, _ = ur5
    try:
        planner.set_scene(SceneData('base_link', (), 2))
        plan = planner.plan(joint_goal(planner, GOAL), np.array(START))
        assert isinstance(plan, Plan) and not plan.detoured, plan
        assert 'joint space' in plan.message
    finally:
        planner.set_scene(SceneData('base_link', (BOX,), 3))


def test_a_goal_inside_the_box_is_no_path_with_the_reason(ur5):
    planner, checker = ur5
    inside = np.array([0.95, -1.2, 1.2, -1.57, -1.57, 0.0])
    assert checker.check(inside).scene_collision
    plan = planner.plan(joint_goal(planner, inside), np.array(START))
    assert isinstance(plan, PlanFailure)
    assert plan.error.code == MotionCode.NO_PATH
    message = plan.error.message
    assert message.startswith('the path collides') and 'no collision-free path' in message
    assert 'the goal is in collision' in message and 'box' in message, message


def test_no_path_within_the_time_budget_is_no_path_naming_the_budget(ur5):
    planner, _ = ur5
    guard = planner.collision
    budget = guard.time_budget
    try:
        guard.time_budget = 1e-4        # OMPL gets no time to search
        plan = planner.plan(joint_goal(planner, GOAL), np.array(START))
    finally:
        guard.time_budget = budget
    assert isinstance(plan, PlanFailure), plan.message
    assert plan.error.code == MotionCode.NO_PATH
    message = plan.error.message
    assert 'no collision-free path' in message and 'the straight path is blocked' in message
    assert 'box' in message, message


def test_a_client_trajectory_through_the_box_is_refused(ur5):
    planner, _ = ur5
    straight = planner.plan(joint_goal(planner, GOAL), np.array(START),
                            MotionSettings(detour=False))
    assert isinstance(straight, PlanFailure)
    assert straight.error.code == MotionCode.UNSAFE_PATH
    assert 'the path collides' in straight.error.message and 'box' in straight.error.message
    names = planner.model.joint_names
    times = np.linspace(0.0, 4.0, 401)
    fraction = (times / times[-1])[:, None]
    positions = np.array(START) + fraction * (np.array(GOAL) - np.array(START))
    velocities = np.gradient(positions, times, axis=0)
    velocities[[0, -1]] = 0.0
    check = planner.validate(Trajectory(tuple(names), times, positions, velocities),
                             np.array(START))
    assert check.error is not None and check.error.code == MotionCode.UNSAFE_PATH
    assert 'the path collides' in check.error.message


def test_scene_data_crosses_a_process_boundary_as_plain_data():
    import pickle
    data = SceneData('base_link', (BOX,), 4, ('/nowhere',))
    again = pickle.loads(pickle.dumps(data))
    scene = again.build()
    assert scene.ids == ('box',) and scene.version == 4
    assert SceneData.of(scene).objects[0]['size'] == [0.2, 0.2, 0.4]


# ---------------------------------------------------------------------------- pointer3
FOLDED = np.array([0.0, 40.0 * DEG, -156.0 * DEG])     # the straight move to LEVEL dips
LEVEL = np.array([0.0, 0.0, 0.0])                      # below the floor (test_safety_planning)


@pytest.fixture(scope='module')
def pointer3(urdf_of):
    return worker.build_planner(worker.PlannerSpec(
        urdf_of('pointer3'), 'pointer3', load_arm_config('pointer3'),
        default_solver='analytic'))


def test_pointer3_keeps_its_grid_and_other_arms_default_to_sampling(pointer3, ur5, urdf_of):
    assert default_path_planner(pointer3.model) == GRID
    assert default_path_planner(ur5[0].model) == SAMPLING
    six = worker.build_planner(worker.PlannerSpec(urdf_of('six_axis'), 'six_axis',
                                                  load_arm_config('six_axis')))
    assert default_path_planner(six.model) == SAMPLING


@pytest.mark.parametrize('choice, words', [('', 'around the floor'), (GRID, 'around the floor'),
                                           (SAMPLING, 'collision-free detour')])
def test_pointer3_floor_detour_by_grid_by_default_and_sampling_on_request(pointer3, choice,
                                                                          words):
    settings = MotionSettings(path_planner=choice)
    plan = pointer3.plan(joint_goal(pointer3, LEVEL), FOLDED, settings)
    assert isinstance(plan, Plan), plan.error
    assert plan.detoured and words in plan.message, plan.message
    geometry = pointer3.safety.geometry
    times = np.linspace(0.0, plan.trajectory.duration, 2000)
    poses = np.array([plan.trajectory.sample(t)[0] for t in times])
    assert geometry.floor_clearance(poses).min() >= 0.0


def test_an_unknown_path_planner_is_refused():
    settings, reason = MotionSettings(path_planner='rrt').validated()
    assert settings is None and 'path_planner "rrt"' in reason and 'grid' in reason


def test_an_arm_config_chooses_its_detour_planner(urdf_of):
    from arm_kinematics.arm import ArmConfig, ArmConfigError
    data = load_arm_config('pointer3').data
    chosen = ArmConfig.from_mapping({**data, 'motion': {**(data.get('motion') or {}),
                                                        'path_planner': 'sampling'}})
    planner = worker.build_planner(worker.PlannerSpec(urdf_of('pointer3'), 'pointer3', chosen,
                                                      default_solver='analytic'))
    assert planner.default_path_planner == SAMPLING
    plan = planner.plan(joint_goal(planner, LEVEL), FOLDED)
    assert isinstance(plan, Plan) and 'collision-free detour' in plan.message, plan
    with pytest.raises(ArmConfigError, match='motion.path_planner'):
        ArmConfig.from_mapping({**data, 'motion': {'path_planner': 'rrt'}})


def test_pointer3_blocked_by_a_scene_box_goes_from_the_grid_to_sampling(pointer3):
    """The grid sees the floor and the ball only: a box in the way is the sampling
    planner's, even for pointer3 (whose default stays the grid)."""
    start, goal = np.array([-0.6, 0.5, -0.5]), np.array([0.6, 0.5, -0.5])
    checker = pointer3.collision.checker
    links = checker.link_poses(np.array([0.0, 0.5, -0.5]))
    tip_link = checker.links[-1]
    box = {'id': 'box', 'type': 'box', 'size': [0.15, 0.15, 0.15],
           'pose': {'xyz': links[tip_link][:3, 3].tolist()}}
    try:
        pointer3.set_scene(SceneData(pointer3.model.base_link, (box,), 1))
        checker = pointer3.collision.checker        # now with the box
        assert not checker.check_path([start, goal], TEST_STEP).free
        plan = pointer3.plan(joint_goal(pointer3, goal), start)
        assert isinstance(plan, Plan), plan.error
        assert 'collision-free detour' in plan.message, plan.message
        dense = checker.check_path(plan.trajectory.positions, TEST_STEP)
        assert dense.free, dense.report.message
    finally:
        pointer3.set_scene(None)
