"""Trajectory validation and joint-command checks (RELIABILITY 14-16), without ROS."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arm_kinematics.motion import laws
from arm_kinematics.motion.commands import (
    joint_vector,
    trajectory_from_points,
    TrajectoryPoint,
)
from arm_kinematics.motion.errors import MotionCode, MotionError
from arm_kinematics.motion.trajectory import Interpolation, Trajectory
from arm_kinematics.motion.validation import (
    PathReport,
    validate_trajectory,
    ValidationSettings,
)

HOME = np.array([0.0, 0.5235987755982988, -1.0471975511965976])
NAMES = ('base_yaw', 'shoulder_pitch', 'elbow_pitch')


@pytest.fixture
def arm(load_arm):
    return load_arm('pointer3')


def _move(arm, goal=(0.3, 0.7, -0.8), duration=2.0) -> Trajectory:
    return laws.joint_min_jerk(arm.joint_names, HOME, np.array(goal), duration, 0.01)


def _with(trajectory: Trajectory, **arrays) -> Trajectory:
    values = {'times': trajectory.times.copy(), 'positions': trajectory.positions.copy(),
              'velocities': trajectory.velocities.copy()}
    values.update(arrays)
    return Trajectory(trajectory.joint_names, values['times'], values['positions'],
                      values['velocities'], trajectory.interpolation, trajectory.law)


def test_a_valid_trajectory_passes(arm):
    result = validate_trajectory(_move(arm), arm, HOME)
    assert result.ok and result.error is None


@pytest.mark.parametrize('field, index, value, words', [
    ('positions', (40, 1), math.nan, 'position of shoulder_pitch at point 40 is nan'),
    ('positions', (3, 2), math.inf, 'position of elbow_pitch at point 3 is inf'),
    ('velocities', (10, 0), -math.inf, 'velocity of base_yaw at point 10 is -inf'),
    ('times', (5,), math.nan, 'time of point 5 is nan'),
])
def test_non_finite_values_are_rejected(arm, field, index, value, words):
    trajectory = _move(arm)
    array = getattr(trajectory, field).copy()
    array[index] = value
    error = validate_trajectory(_with(trajectory, **{field: array}), arm, HOME).error
    assert error.code == MotionCode.TRAJECTORY_INVALID
    assert words in error.message


def test_times_must_be_non_negative_and_strictly_increasing(arm):
    trajectory = _move(arm)
    times = trajectory.times.copy()
    times[7] = times[6]
    error = validate_trajectory(_with(trajectory, times=times), arm, HOME).error
    assert error.code == MotionCode.TRAJECTORY_INVALID
    assert 'increase strictly: point 7' in error.message
    error = validate_trajectory(_with(trajectory, times=trajectory.times - 0.5), arm, HOME).error
    assert error.code == MotionCode.TRAJECTORY_INVALID and '>= 0' in error.message


def test_the_last_point_must_be_at_rest(arm):
    trajectory = _move(arm)
    velocities = trajectory.velocities.copy()
    velocities[-1, 2] = 0.01
    error = validate_trajectory(_with(trajectory, velocities=velocities), arm, HOME).error
    assert error.code == MotionCode.TRAJECTORY_INVALID
    assert 'final velocity of elbow_pitch is 0.01' in error.message


def test_position_limits(arm):
    error = validate_trajectory(_move(arm, goal=(0.0, 0.5, -3.0), duration=20.0), arm,
                                HOME).error
    assert error.code == MotionCode.TRAJECTORY_INVALID
    assert 'elbow_pitch' in error.message and 'outside its limits' in error.message


def test_velocity_limits_are_rejected_not_rescaled(arm):
    fast = _move(arm, goal=(1.5, 0.5, -1.0), duration=1.0)   # base yaw peaks at 2.8 rad/s
    result = validate_trajectory(fast, arm, HOME)
    assert result.error.code == MotionCode.TRAJECTORY_INVALID
    assert 'base_yaw' in result.error.message and 'beyond its limit 1.0000' in \
        result.error.message
    # Slopes between samples count even when the declared velocities are zero.
    sneaky = _with(fast, velocities=np.zeros_like(fast.velocities))
    error = validate_trajectory(sneaky, arm, HOME).error
    assert error.code == MotionCode.TRAJECTORY_INVALID and 'between points' in error.message


def test_start_must_match_the_current_state(arm):
    current = HOME + [0.0, 0.0, 0.05]
    error = validate_trajectory(_move(arm), arm, current).error
    assert error.code == MotionCode.START_MISMATCH
    assert 'elbow_pitch' in error.message and '0.05' in error.message
    loose = ValidationSettings(start_tolerance=0.1)
    assert validate_trajectory(_move(arm), arm, current, loose).ok


def test_wrong_names_or_shapes_are_rejected(arm):
    trajectory = _move(arm)
    swapped = Trajectory(tuple(reversed(trajectory.joint_names)), trajectory.times,
                         trajectory.positions, trajectory.velocities)
    assert validate_trajectory(swapped, arm, HOME).error.code == MotionCode.TRAJECTORY_INVALID
    short = _with(trajectory, velocities=trajectory.velocities[:-1])
    error = validate_trajectory(short, arm, HOME).error
    assert error.code == MotionCode.TRAJECTORY_INVALID and 'shapes' in error.message


def test_the_path_check_runs_last_and_reports_contacts(arm):
    calls = []

    def unsafe(trajectory):
        calls.append(trajectory)
        return PathReport(MotionError(MotionCode.UNSAFE_PATH, 'floor at t = 1.2 s'))

    bad = _move(arm)
    bad_positions = bad.positions.copy()
    bad_positions[3, 0] = math.nan
    assert validate_trajectory(_with(bad, positions=bad_positions), arm, HOME,
                               path_check=unsafe).error.code == MotionCode.TRAJECTORY_INVALID
    assert not calls                                  # never checked a broken trajectory
    result = validate_trajectory(_move(arm), arm, HOME, path_check=unsafe)
    assert result.error.code == MotionCode.UNSAFE_PATH and len(calls) == 1

    def contact(trajectory):
        return PathReport(None, np.array([0.5]), np.array([[1.0, 0.0, 1.0]]), 'clear')
    result = validate_trajectory(_move(arm), arm, HOME, path_check=contact)
    assert result.ok and result.path.contact_times.tolist() == [0.5]


def test_a_floor_dip_is_found_by_the_safety_check(load_arm):
    from arm_kinematics.description.bundled import load_arm_config
    from arm_kinematics.motion.safety_check import load_safety
    model = load_arm('six_axis')
    safety = load_safety(model, load_arm_config('six_axis'), 'six_axis')
    assert safety is not None
    start = np.array([0.0, -1.79, 0.17, 1.12, 0.61, -2.37])
    goal = np.array([0.0, -0.97, -1.65, -1.39, -1.66, -1.02])
    assert not safety.check_pose(start) and not safety.check_pose(goal)   # both ends safe
    dip = laws.joint_min_jerk(model.joint_names, start, goal, 6.0, 0.01)
    error = validate_trajectory(dip, model, start, path_check=safety.check_trajectory).error
    assert error.code == MotionCode.UNSAFE_PATH and 'below the floor' in error.message


# ---------------------------------------------------------------------------- commands
@pytest.mark.parametrize('names, positions, words', [
    ([], [0.1, 0.2, 0.3], 'has no joint names'),
    (['base_yaw', 'shoulder_pitch'], [0.1, 0.2], 'missing elbow_pitch'),
    (['base_yaw', 'shoulder_pitch', 'elbow_pitch'], [0.1, 0.2], 'has 2 values for 3'),
    (['base_yaw', 'base_yaw', 'elbow_pitch'], [0.1, 0.2, 0.3], "repeats joint name(s) 'base_yaw'"),
    (['base_yaw', 'shoulder', 'elbow_pitch'], [0.1, 0.2, 0.3], "unknown 'shoulder'"),
    (['base_yaw', 'shoulder_pitch', 'elbow_pitch '], [0.1, 0.2, 0.3], "unknown 'elbow_pitch '"),
    (['base_yaw', 'shoulder_pitch', 'elbow_pitch'], [0.1, math.nan, 0.3],
     'shoulder_pitch is nan'),
])
def test_bad_joint_commands_are_rejected(names, positions, words):
    vector, error = joint_vector(NAMES, names, positions)
    assert vector is None
    assert error.code == MotionCode.INVALID_GOAL and words in error.message


def test_jumbled_joint_names_are_reordered():
    vector, error = joint_vector(NAMES, ['elbow_pitch', 'base_yaw', 'shoulder_pitch'],
                                 [-0.3, 0.1, 0.2])
    assert error is None and vector.tolist() == [0.1, 0.2, -0.3]


def test_client_trajectory_is_reordered_and_checked():
    names = ['shoulder_pitch', 'elbow_pitch', 'base_yaw']
    points = [TrajectoryPoint(0.0, [0.5, -1.0, 0.0]), TrajectoryPoint(1.0, [0.6, -1.1, 0.2])]
    trajectory, error = trajectory_from_points(NAMES, names, points)
    assert error is None
    assert trajectory.positions.tolist() == [[0.0, 0.5, -1.0], [0.2, 0.6, -1.1]]
    assert trajectory.interpolation is Interpolation.LINEAR
    assert trajectory.velocities[0].tolist() == pytest.approx([0.2, 0.1, -0.1])
    assert not trajectory.velocities[-1].any()
    mixed = [TrajectoryPoint(0.0, [0.5, -1.0, 0.0], [0.0, 0.0, 0.0]),
             TrajectoryPoint(1.0, [0.6, -1.1, 0.2])]
    _, error = trajectory_from_points(NAMES, names, mixed)
    assert error.code == MotionCode.INVALID_GOAL and 'on every point or on none' in error.message
    _, error = trajectory_from_points(NAMES, names, [TrajectoryPoint(0.0, [0.5, -1.0])])
    assert 'point 0 positions has 2 values for 3' in error.message
    _, error = trajectory_from_points(NAMES, names, [])
    assert 'no points' in error.message
