"""MotionPlanner: goal checks, IK, each law end to end, time scaling, floor and detours."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arm_kinematics.arm import ArmConfig
from arm_kinematics.description.bundled import load_arm_config
from arm_kinematics.ik.request import IKRequest
from arm_kinematics.ik.result import ErrorCode, GoalType
from arm_kinematics.motion import worker
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.motion.move_types import (
    MotionSettings,
    MoveGoal,
    PathOutcome,
    Plan,
    PlanFailure,
)
from arm_kinematics.motion.path_request import PathCode
from arm_kinematics.motion.validation import validate_trajectory

HOMES = {'six_axis': np.array([0.0, 0.35, 0.9, 0.0, 0.6, 0.0]),
         # pointer3's home tip is 0.05 m above the shoulder, below its 0.1 m target rule, so
         # Cartesian lines from home fail at once: start above it.
         'pointer3': np.array([0.0, 0.6, -0.6]),
         'ccd5': np.array([0.0, 0.35, 0.7, 0.7, 0.0]),
         'manipulator3d': np.array([0.0, 0.7853981633974483, -1.5707963267948966])}
SOLVERS = {'six_axis': 'dls', 'pointer3': 'analytic', 'ccd5': 'ccd', 'manipulator3d': 'analytic'}
# Reachable, safe targets per arm (m), away from the workspace rules.
TARGETS = {'six_axis': (1.0, 0.6, 0.5), 'pointer3': (1.2, 0.3, 0.9), 'ccd5': (0.6, 0.3, 0.5),
           'manipulator3d': (0.5, 0.3, 0.3)}


@pytest.fixture(scope='module')
def planners(urdf_of):
    cache = {}

    def get(arm: str):
        if arm not in cache:
            cache[arm] = worker.build_planner(worker.PlannerSpec(
                urdf_of(arm), arm, load_arm_config(arm), default_solver=SOLVERS[arm]))
        return cache[arm]
    return get


def _plan(planners, arm, settings=MotionSettings(), start=None, **goal):
    planner = planners(arm)
    return planner, planner.plan(MoveGoal(**goal), HOMES[arm] if start is None else start,
                                 settings)


@pytest.mark.parametrize('arm', ['six_axis', 'pointer3', 'ccd5', 'manipulator3d'])
@pytest.mark.parametrize('law', ['min_jerk', 'exponential', 'speed_cap', 'min_jerk_cartesian',
                                 'linear_cartesian'])
def test_every_law_reaches_the_target_within_the_limits(planners, arm, law):
    settings = MotionSettings(speed_scale=0.8)
    planner, plan = _plan(planners, arm, settings, position=TARGETS[arm], motion_law=law)
    assert isinstance(plan, Plan), plan.error
    model = planner.model
    trajectory = plan.trajectory
    assert trajectory.law == law and plan.law == law
    tolerance = settings.position_tolerance if law == 'speed_cap' else 2e-4
    assert np.linalg.norm(model.fk(trajectory.end)[:3, 3] - TARGETS[arm]) <= tolerance
    assert np.all(np.abs(trajectory.velocities) <= model.velocity_limits * 0.8 * 1.011)
    assert trajectory.positions[0].tolist() == HOMES[arm].tolist()
    assert not trajectory.velocities[-1].any()
    assert validate_trajectory(trajectory, model, HOMES[arm]).ok


@pytest.mark.parametrize('goal, words', [
    ({'motion_law': 'Min_Jerk'}, 'unknown motion_law "Min_Jerk"'),
    ({'motion_law': 'fabrik'}, 'valid (exact, lower case)'),
    ({'duration': math.nan}, 'duration nan'),
    ({'duration': -1.0}, 'duration -1.0'),
    ({'duration': 1e9}, 'duration 1000000000.0'),
    ({'speed_scale': 1.5}, 'speed_scale 1.5'),
    ({'speed_scale': math.inf}, 'speed_scale inf'),
    ({'position': (math.nan, 0.0, 1.0)}, 'target.pose.position.x is nan'),
    ({'position': (1.0, 0.0, -math.inf)}, 'target.pose.position.z is -inf'),
    ({'goal_type': 2, 'orientation': (0.0, math.nan, 0.0, 1.0)},
     'target.pose.orientation.y is nan'),
    ({'goal_type': 2, 'orientation': (0.0, 0.0, 0.0, 0.0)}, 'norm 0'),
    ({'goal_type': 7}, 'goal_type 7'),
    ({'frame_id': 'world'}, 'frame "world" is not the base frame'),
    ({'joint_names': ('base_yaw',), 'joint_positions': (0.1,)}, 'missing shoulder_pitch'),
    ({'joint_positions': (0.1, 0.2, 0.3, 0.0, 0.0, 0.0)}, 'has no joint names'),
    ({'joint_names': ('base_yaw', 'shoulder_pitch', 'elbow_pitch', 'wrist_roll', 'wrist_pitch',
                      'tool_roll'), 'joint_positions': (0.0,) * 6,
      'motion_law': 'linear_cartesian'}, 'needs a Cartesian target'),
    ({'goal_type': 1, 'motion_law': 'speed_cap'}, 'tool positions only'),
])
def test_malformed_goals_are_invalid(planners, goal, words):
    goal.setdefault('position', TARGETS['six_axis'])
    _, plan = _plan(planners, 'six_axis', **goal)
    assert isinstance(plan, PlanFailure)
    assert plan.error.code == MotionCode.INVALID_GOAL, plan.error
    assert words in plan.error.message


def test_ik_failures_carry_the_ik_code(planners):
    _, plan = _plan(planners, 'six_axis', position=(5.0, 0.0, 1.0))
    assert plan.error.code == MotionCode.IK_FAILED
    assert plan.error.ik_code == ErrorCode.OUT_OF_REACH and 'maximum reach' in plan.error.message
    _, plan = _plan(planners, 'six_axis', position=TARGETS['six_axis'], solver='fabrik')
    assert plan.error.code == MotionCode.IK_FAILED
    assert plan.error.ik_code == ErrorCode.UNKNOWN_SOLVER


def test_a_cartesian_line_that_fails_says_where(planners):
    # From the home pose to a point beyond the shoulder: the line passes close to the base
    # column's axis, where the arm folds.
    _, plan = _plan(planners, 'manipulator3d', position=(-0.5, 0.0, 0.3),
                    motion_law='min_jerk_cartesian')
    assert isinstance(plan, PlanFailure)
    assert plan.error.code == MotionCode.CARTESIAN_PATH_FAILED, plan.error
    assert 'straight tool line fails at' in plan.error.message
    assert plan.point is not None and len(plan.reached) > 0
    # Path IK's outcome travels with the failure: the elbow limit, short of the line's end.
    assert plan.path.stop_code == PathCode.JOINT_LIMIT and plan.path.stop_waypoint == 0
    assert 0.0 < plan.path.fraction < 1.0
    assert 'JOINT_LIMIT at' in plan.error.message and 'elbow_pitch' in plan.error.message


@pytest.mark.parametrize('law', ['min_jerk_cartesian', 'linear_cartesian'])
def test_a_cartesian_line_reports_the_whole_line_followed(planners, law):
    _, plan = _plan(planners, 'six_axis', position=TARGETS['six_axis'], motion_law=law)
    assert isinstance(plan, Plan), plan.error
    assert plan.path == PathOutcome(1.0, PathCode.OK, 1)
    assert 'path IK samples' in plan.message
    # Joint-space laws follow no line.
    _, joint = _plan(planners, 'six_axis', position=TARGETS['six_axis'], motion_law='min_jerk')
    assert joint.path == PathOutcome(0.0, PathCode.OK, 0)


@pytest.mark.parametrize('avoid', [False, True])
def test_a_line_past_the_obstacle_follows_the_obstacle_policy(urdf_of, avoid):
    # Path IK refuses obstacle contact only where the executor does (avoid_obstacle); else
    # the line runs and its contacts are reported, as for every other law.
    data = load_arm_config('six_axis').as_mapping()
    data['safety']['obstacle']['enabled'] = True      # ball (1.2, 0, 1.2), r 0.2, rod 0.075
    planner = worker.build_planner(worker.PlannerSpec(
        urdf_of('six_axis'), 'six_axis', ArmConfig.from_mapping(data), default_solver='dls',
        avoid_obstacle=avoid))
    start = _tool_down_start(planner, (1.2, -0.8, 0.9))
    plan = planner.plan(MoveGoal(position=(1.2, 0.8, 0.9), goal_type=int(GoalType.TOOL_DOWN),
                                 motion_law='linear_cartesian'), start)
    if not avoid:
        assert isinstance(plan, Plan), plan.error
        assert plan.path.stop_code == PathCode.OK and len(plan.contact_times) > 0
        return
    assert isinstance(plan, PlanFailure)
    assert plan.error.code == MotionCode.CARTESIAN_PATH_FAILED, plan.error
    assert plan.path.stop_code == PathCode.OBSTACLE_CONTACT, plan.error
    # The vertical wrist rod touches 0.275 m (ball + rod radius) before the ball's centre.
    assert plan.path.fraction == pytest.approx((0.8 - 0.275) / 1.6, abs=2e-3)
    assert plan.reached[-1][1] == pytest.approx(-0.275, abs=2e-3)


def _tool_down_start(planner, position):
    model = planner.model
    answer = planner.dispatcher.solve(IKRequest(
        position=position, goal=int(GoalType.TOOL_DOWN), seed_names=model.joint_names,
        seed_positions=tuple(HOMES['six_axis'])), planner.ik_options, HOMES['six_axis'])
    assert answer.result.success, answer.result.reason
    return np.asarray(answer.result.q, dtype=float)


def test_a_tool_down_line_from_a_tool_down_start_keeps_the_tool_down(planners):
    # Path IK's TOOL_DOWN samples: the tool stays down all along, its heading free.
    planner = planners('six_axis')
    start = _tool_down_start(planner, (1.0, 0.3, 0.6))
    _, plan = _plan(planners, 'six_axis', start=start, position=(0.8, 0.0, 0.5),
                    goal_type=int(GoalType.TOOL_DOWN), motion_law='linear_cartesian')
    assert isinstance(plan, Plan), plan.error
    frames = planner.model.fk_batch(plan.trajectory.positions)
    assert np.degrees(np.arccos(np.clip(-frames[:, 2, 2], -1.0, 1.0))).max() < 0.1
    assert np.linalg.norm(frames[-1, :3, 3] - (0.8, 0.0, 0.5)) < 2e-4


def test_a_tool_down_line_from_another_orientation_turns_the_tool_on_the_way(planners):
    # From home (tool 74 degrees off down) the tool turns to down by slerp along the line,
    # as the executor's line always did: a TOOL_DOWN path would need the turn at once.
    planner = planners('six_axis')
    _, plan = _plan(planners, 'six_axis', position=TARGETS['six_axis'],
                    goal_type=int(GoalType.TOOL_DOWN), motion_law='min_jerk_cartesian')
    assert isinstance(plan, Plan), plan.error
    tilt = np.degrees(np.arccos(np.clip(
        -planner.model.fk_batch(plan.trajectory.positions)[:, 2, 2], -1.0, 1.0)))
    assert tilt[0] > 60.0 and tilt[-1] < 0.1
    assert np.all(np.diff(tilt) <= 1e-6)          # turning toward down all the way


def test_short_durations_are_stretched_to_the_velocity_limits(planners):
    settings = MotionSettings(speed_scale=0.5)
    planner, plan = _plan(planners, 'six_axis', settings, position=TARGETS['six_axis'],
                          motion_law='min_jerk', duration=0.1)
    assert isinstance(plan, Plan)
    assert 'stretched from 0.1 s' in plan.message and plan.trajectory.duration > 0.1
    peak = np.abs(plan.trajectory.velocities).max(axis=0) / planner.model.velocity_limits
    assert peak.max() == pytest.approx(0.5, rel=0.01)
    _, slow = _plan(planners, 'six_axis', settings, position=TARGETS['six_axis'],
                    motion_law='min_jerk', duration=9.0)
    assert slow.trajectory.duration == pytest.approx(9.0) and 'stretched' not in slow.message
    _, line = _plan(planners, 'six_axis', settings, position=TARGETS['six_axis'],
                    motion_law='min_jerk_cartesian', duration=0.1)
    assert isinstance(line, Plan) and 'stretched from 0.1 s' in line.message


def test_joint_targets_in_any_order(planners):
    names = ('elbow_pitch', 'base_yaw', 'shoulder_pitch')
    planner, plan = _plan(planners, 'pointer3', joint_names=names,
                          joint_positions=(-0.9, 0.3, 0.7))
    assert isinstance(plan, Plan), plan.error
    assert plan.trajectory.end.tolist() == pytest.approx([0.3, 0.7, -0.9])
    assert plan.goal_q.tolist() == pytest.approx([0.3, 0.7, -0.9])


def test_a_goal_past_a_joint_limit_is_refused(planners):
    _, plan = _plan(planners, 'pointer3', joint_names=('base_yaw', 'shoulder_pitch',
                                                        'elbow_pitch'),
                    joint_positions=(0.0, 0.5, -3.0))
    assert plan.error.code == MotionCode.TRAJECTORY_INVALID
    assert 'elbow_pitch' in plan.error.message
    _, plan = _plan(planners, 'pointer3', joint_names=('base_yaw', 'shoulder_pitch',
                                                        'elbow_pitch'),
                    joint_positions=(0.0, 0.5, -3.0), motion_law='exponential')
    assert plan.error.code == MotionCode.TRAJECTORY_INVALID and 'joint limit' in \
        plan.error.message


SIX_NAMES = ('base_yaw', 'shoulder_pitch', 'elbow_pitch', 'wrist_roll', 'wrist_pitch',
             'tool_roll')
DIP_START = np.array([0.0, -1.79, 0.17, 1.12, 0.61, -2.37])
DIP_GOAL = (0.0, -0.97, -1.65, -1.39, -1.66, -1.02)


def test_a_goal_below_the_floor_is_unsafe(planners):
    _, plan = _plan(planners, 'six_axis', joint_names=SIX_NAMES,
                    joint_positions=(0.0, 1.9, 1.5, 0.0, 0.5, 0.0))
    assert plan.error.code == MotionCode.UNSAFE_PATH
    assert 'below the floor' in plan.error.message


def test_a_dip_below_the_floor_is_detoured(planners):
    planner, plan = _plan(planners, 'six_axis', start=DIP_START, joint_names=SIX_NAMES,
                          joint_positions=DIP_GOAL)
    assert isinstance(plan, Plan), plan.error
    assert plan.detoured and 'detour' in plan.message
    geometry = planner.safety.geometry
    times = np.linspace(0.0, plan.trajectory.duration, 2000)
    poses = np.array([plan.trajectory.sample(t)[0] for t in times])
    assert geometry.floor_clearance(poses).min() >= 0.0
    no_detour = MotionSettings(detour=False)
    _, plan = _plan(planners, 'six_axis', no_detour, start=DIP_START, joint_names=SIX_NAMES,
                    joint_positions=DIP_GOAL)
    assert plan.error.code == MotionCode.UNSAFE_PATH


def test_the_planner_never_raises(planners):
    planner = planners('pointer3')
    original = planner.dispatcher.solve

    def broken(*args, **kwargs):
        raise ZeroDivisionError('injected')
    planner.dispatcher.solve = broken
    try:
        plan = planner.plan(MoveGoal(position=TARGETS['pointer3']), HOMES['pointer3'])
    finally:
        planner.dispatcher.solve = original
    assert plan.error.code == MotionCode.INTERNAL_ERROR and 'ZeroDivisionError' in \
        plan.error.message
    plan = planner.plan(MoveGoal(position=TARGETS['pointer3']), np.array([0.0, math.nan, 0.0]))
    assert plan.error.code == MotionCode.NO_JOINT_STATE


def test_settings_are_validated():
    assert MotionSettings().validated()[0] is not None
    for change, words in [({'period': 0.0}, 'period'), ({'speed_scale': 2.0}, 'speed_scale'),
                          ({'exponential_gain': math.nan}, 'exponential_gain'),
                          ({'default_law': 'jump'}, 'default_law'),
                          ({'speed_cap_iterations': 0}, 'speed_cap_iterations'),
                          ({'min_duration': 100.0}, 'min_duration')]:
        settings, reason = MotionSettings(**change).validated()
        assert settings is None and words in reason


def test_the_worker_entry_points(urdf_of):
    worker.initialize(worker.PlannerSpec(urdf_of('pointer3'), 'pointer3',
                                         load_arm_config('pointer3'),
                                         default_solver='analytic'))
    assert worker.ready()
    plan = worker.plan(MoveGoal(position=TARGETS['pointer3']), HOMES['pointer3'],
                       MotionSettings())
    assert isinstance(plan, Plan)
