"""The motion laws' shapes, without ROS: min-jerk, exponential, speed cap, Cartesian lines."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arm_kinematics.ik.request import IKDispatcher
from arm_kinematics.ik.result import ErrorCode
from arm_kinematics.ik.solvers.base import SolveOptions, workspace_from_model
from arm_kinematics.ik.solvers.ccd import CCDSolver
from arm_kinematics.motion import laws
from arm_kinematics.motion.cartesian import (
    CartesianFailure,
    line_failure,
    MAX_POINT_STEP,
    time_line,
)
from arm_kinematics.motion.path_ik import PathIK
from arm_kinematics.motion.path_request import PathCode, PathRequest, PathResult, ToolPose
from arm_kinematics.motion.trajectory import concatenate, Interpolation, Trajectory
from arm_kinematics.motion.validation import peak_speed_ratio

SIX_HOME = np.array([0.0, 0.35, 0.9, 0.0, 0.6, 0.0])


def _accelerations(trajectory: Trajectory) -> np.ndarray:
    return np.gradient(trajectory.velocities, trajectory.times, axis=0, edge_order=2)


# ---------------------------------------------------------------------------- min jerk
def test_min_jerk_profile_ends_and_peak():
    s, ds, dds = laws.min_jerk(np.array([0.0, 0.5, 1.0]))
    assert s.tolist() == pytest.approx([0.0, 0.5, 1.0])
    assert ds[[0, 2]].tolist() == pytest.approx([0.0, 0.0])
    assert dds[[0, 2]].tolist() == pytest.approx([0.0, 0.0])
    assert ds[1] == pytest.approx(laws.MIN_JERK_PEAK_SPEED)
    tau = np.linspace(0.0, 1.0, 100001)
    s, ds, dds = laws.min_jerk(tau)
    assert np.all(np.diff(s) >= 0.0)
    assert np.abs(dds).max() == pytest.approx(laws.MIN_JERK_PEAK_ACCELERATION, rel=1e-6)
    # Derivatives agree with finite differences of s.
    assert np.allclose(np.gradient(s, tau), ds, atol=1e-4)
    assert np.allclose(np.gradient(ds, tau), dds, atol=1e-3)


def test_min_jerk_profile_is_clamped_outside_the_move():
    s, ds, dds = laws.min_jerk(np.array([-1.0, 2.0]))
    assert s.tolist() == [0.0, 1.0] and ds.tolist() == [0.0, 0.0] and dds.tolist() == [0.0, 0.0]


def test_joint_min_jerk_shape():
    q0 = np.array([0.0, 0.5, -1.0])
    q1 = np.array([1.0, -0.2, 0.4])
    trajectory = laws.joint_min_jerk(('a', 'b', 'c'), q0, q1, 2.0, 0.01)
    assert trajectory.times[0] == 0.0 and trajectory.times[-1] == 2.0
    assert np.all(np.diff(trajectory.times) > 0.0)
    assert trajectory.positions[0].tolist() == q0.tolist()
    assert trajectory.positions[-1].tolist() == q1.tolist()
    # Velocity and acceleration vanish at both ends.
    assert np.abs(trajectory.velocities[[0, -1]]).max() == 0.0
    acceleration = _accelerations(trajectory)
    assert np.abs(acceleration[[0, -1]]).max() < 0.02 * np.abs(acceleration).max()
    # Peak speed 1.875 |Δq| / T, at the middle.
    assert np.abs(trajectory.velocities).max(axis=0) == pytest.approx(
        1.875 * np.abs(q1 - q0) / 2.0, rel=1e-3)
    # A straight line in joint space.
    fraction = (trajectory.positions - q0) / (q1 - q0)
    assert np.allclose(fraction, fraction[:, :1], atol=1e-12)


def test_min_jerk_duration_respects_the_limits():
    q0, q1 = np.zeros(2), np.array([1.0, -3.0])
    limits = np.array([1.0, 2.0])
    duration = laws.min_jerk_duration(q0, q1, limits)
    assert duration == pytest.approx(1.875 * 1.5)
    trajectory = laws.joint_min_jerk(('a', 'b'), q0, q1, duration, 0.001)
    assert np.all(np.abs(trajectory.velocities).max(axis=0) <= limits * (1 + 1e-6))


def test_sample_times_end_exactly_and_increase():
    times = laws.sample_times(1.005, 0.01)
    assert times[-1] == 1.005 and np.all(np.diff(times) > 0.0)
    assert laws.sample_times(0.0, 0.01).tolist() == [0.0]


# ---------------------------------------------------------------------------- exponential
def _exponential(gain=3.0, speed=10.0):
    return laws.ExponentialSmoothing(gain, np.full(3, speed), np.full(3, -3.0), np.full(3, 3.0))


def test_exponential_closes_the_same_fraction_every_tick():
    law = _exponential()
    goal = np.array([0.3, -0.2, 0.1])
    q = np.zeros(3)
    dt = 0.01
    expected = 1.0 - math.exp(-3.0 * dt)
    assert law.fraction(dt) == pytest.approx(expected)
    for _ in range(200):
        new = law.step(q, goal, dt)
        closed = (new - q) / (goal - q)
        assert np.allclose(closed, expected, rtol=1e-12)
        q = new
    # After 2 s the gap is e^(-6) of the start.
    assert np.abs(goal - q).max() == pytest.approx(0.3 * math.exp(-6.0), rel=1e-9)


def test_exponential_speed_limit_keeps_a_straight_line():
    law = _exponential(gain=3.0, speed=0.5)
    goal = np.array([2.0, -1.0, 0.5])
    q = np.zeros(3)
    for _ in range(100):
        new = law.step(q, goal, 0.01)
        assert np.abs(new - q).max() <= 0.5 * 0.01 + 1e-12
        direction = (new - q) / np.linalg.norm(new - q)
        assert np.allclose(direction, goal / np.linalg.norm(goal))
        q = new


@pytest.mark.parametrize('goal', [None, np.array([math.nan, 0.0, 0.0]),
                                  np.array([0.0, 3.5, 0.0]), np.array([0.0, 0.0])])
def test_exponential_stays_without_a_valid_goal(goal):
    law = _exponential()
    q = np.array([0.1, 0.2, 0.3])
    assert law.step(q, goal, 0.01).tolist() == q.tolist()
    assert law.goal_reason(goal)


def test_simulated_exponential_ends_at_rest_on_the_goal():
    law = _exponential()
    goal = np.array([0.5, 0.5, -0.5])
    result = laws.simulate(('a', 'b', 'c'), np.zeros(3), lambda q, dt: law.step(q, goal, dt),
                           lambda q: float(np.abs(goal - q).max()), 1e-3, 0.01, 30.0,
                           laws.EXPONENTIAL, final=goal)
    assert result.converged
    trajectory = result.trajectory
    assert trajectory.interpolation is Interpolation.LINEAR
    assert trajectory.positions[-1].tolist() == goal.tolist()
    assert not trajectory.velocities[-1].any()
    # Settles within 1 mrad: ln(0.5 / 1e-3) / 3 ≈ 2.07 s.
    assert trajectory.duration == pytest.approx(math.log(0.5 / 1e-3) / 3.0, abs=0.02)


# ---------------------------------------------------------------------------- speed cap
def test_speed_cap_never_exceeds_the_joint_speeds(load_arm):
    model = load_arm('ccd5')
    solver = CCDSolver(model, workspace_from_model(model))
    speeds = model.velocity_limits * 0.5
    cap = laws.SpeedCap(solver, speeds, iterations=3)
    q0 = np.array([0.0, 0.35, 0.7, 0.7, 0.0])
    target = model.fk(np.array([0.8, 0.6, 0.9, 0.3, 0.2]))[:3, 3]
    result = laws.simulate(model.joint_names, q0, lambda q, dt: cap.step(q, target, dt),
                           lambda q: float(np.linalg.norm(model.fk(q)[:3, 3] - target)),
                           1e-3, 0.01, 20.0, laws.SPEED_CAP)
    assert result.converged, result.message
    steps = np.abs(np.diff(result.trajectory.positions, axis=0))
    assert np.all(steps <= speeds * 0.01 + 1e-12)
    # It is the cap that sets the pace: some joint runs at its cap for a while.
    assert np.isclose(steps, speeds * 0.01).any()
    assert np.linalg.norm(model.fk(result.trajectory.end)[:3, 3] - target) <= 1e-3


def test_speed_cap_rejects_zero_iterations(load_arm):
    model = load_arm('ccd5')
    with pytest.raises(ValueError):
        laws.SpeedCap(CCDSolver(model, workspace_from_model(model)), model.velocity_limits, 0)


# ---------------------------------------------------------------------------- Cartesian lines
# The executor's Cartesian laws time the joint path of path IK (one implementation of path
# IK): these tests follow a line with PathIK as the planner does, then time it.
def _follow(model, solver, q0, end, max_condition=50.0, max_joint_step=0.2, min_height=None):
    dispatcher = IKDispatcher(model, workspace_from_model(model, min_height), solver)
    return PathIK(dispatcher).follow(PathRequest(
        start=tuple(q0), waypoints=[ToolPose(tuple(end))], solver=solver,
        max_cartesian_step=MAX_POINT_STEP, max_joint_step=max_joint_step,
        max_condition=max_condition, timing='linear'), SolveOptions())


def _line(model, q0, end, duration, law=laws.MIN_JERK_CARTESIAN, solver='dls', **limits):
    result = _follow(model, solver, q0, end, **limits)
    if not result.success:
        return line_failure(model, result)
    return time_line(model, result.trajectory.positions, result.progress, duration, 0.01, law)


@pytest.mark.parametrize('law', [laws.MIN_JERK_CARTESIAN, laws.LINEAR_CARTESIAN])
def test_cartesian_line_is_straight(law, load_arm):
    model = load_arm('six_axis')
    start = model.fk(SIX_HOME)[:3, 3]
    end = np.array([1.0, 0.6, 0.5])
    trajectory = _line(model, SIX_HOME, end, 3.0, law)
    assert isinstance(trajectory, Trajectory), getattr(trajectory, 'message', '')
    assert trajectory.duration == 3.0 and np.diff(trajectory.times).max() <= 0.01 + 1e-12
    direction = (end - start) / np.linalg.norm(end - start)
    # Every sample and the interpolation between samples stay on the line.
    times = np.linspace(0.0, trajectory.duration, 997)
    points = model.fk_batch(np.array([trajectory.sample(t)[0] for t in times]))[:, :3, 3]
    offsets = np.linalg.norm(np.cross(points - start, direction), axis=1)
    assert offsets.max() < 1e-4
    assert np.linalg.norm(model.fk(trajectory.end)[:3, 3] - end) < 2e-4
    along = (points - start) @ direction
    assert np.all(np.diff(along) >= -2e-4)           # never backwards (IK tolerance 1e-4 m)
    assert not trajectory.velocities[[0, -1]].any()
    progress = (trajectory.tips - start) @ direction / np.linalg.norm(end - start)
    if law == laws.MIN_JERK_CARTESIAN:
        # Tool progress follows s(τ) within the IK tolerance.
        s = laws.min_jerk(trajectory.times / trajectory.duration)[0]
        assert np.abs(progress - s).max() < 2e-4
    else:
        # Constant tool speed: α = t / T.
        assert np.abs(progress - trajectory.times / trajectory.duration).max() < 2e-4


def test_min_jerk_cartesian_starts_and_ends_at_rest(load_arm):
    model = load_arm('six_axis')
    trajectory = _line(model, SIX_HOME, np.array([1.2, -0.4, 0.9]), 2.0)
    tips = trajectory.tips
    speed = np.linalg.norm(np.gradient(tips, trajectory.times, axis=0), axis=1)
    acceleration = np.linalg.norm(np.gradient(np.gradient(tips, trajectory.times, axis=0),
                                              trajectory.times, axis=0), axis=1)
    assert speed[0] < 0.01 * speed.max() and speed[-1] < 0.01 * speed.max()
    assert acceleration[1] < 0.05 * acceleration.max()
    assert acceleration[-2] < 0.05 * acceleration.max()


def test_a_line_is_retimed_without_changing_its_path(load_arm):
    # Stretching T (the planner's velocity loop) reuses the one path IK answer: the pose at
    # share s is the same for every T, and the speeds scale by 1 / T.
    model = load_arm('six_axis')
    result = _follow(model, 'dls', SIX_HOME, (1.0, 0.6, 0.5))
    assert result.success, result.message
    path, progress = result.trajectory.positions, result.progress
    fast = time_line(model, path, progress, 1.5, 0.01, laws.LINEAR_CARTESIAN)
    slow = time_line(model, path, progress, 3.0, 0.01, laws.LINEAR_CARTESIAN)
    # The knots differ (at most MAX_POINT_STEP of tool travel apart, so finer for the fast
    # one); Hermite between them agrees to far below any IK tolerance.
    for t in np.linspace(0.0, 1.5, 41):
        assert np.abs(fast.sample(t)[0] - slow.sample(2.0 * t)[0]).max() < 1e-5
    limits = model.velocity_limits
    assert peak_speed_ratio(slow, limits) == pytest.approx(peak_speed_ratio(fast, limits) / 2,
                                                           rel=1e-4)
    assert fast.positions[0].tolist() == SIX_HOME.tolist()
    assert fast.end.tolist() == path[-1].tolist()


def test_time_line_refuses_other_laws_and_mismatched_paths(load_arm):
    model = load_arm('six_axis')
    path = np.array([SIX_HOME, SIX_HOME + 0.01])
    with pytest.raises(ValueError, match='not a Cartesian law'):
        time_line(model, path, np.array([0.0, 1.0]), 1.0, 0.01, laws.MIN_JERK)
    with pytest.raises(ValueError, match='does not fit'):
        time_line(model, path, np.array([0.0, 0.5, 1.0]), 1.0, 0.01)
    hold = time_line(model, path[:1], np.array([1.0]), 1.0, 0.01)
    assert len(hold) == 1 and hold.end.tolist() == SIX_HOME.tolist()


def test_cartesian_line_reports_a_singularity_instead_of_jumping(load_arm):
    model = load_arm('six_axis')
    # Towards full stretch: the position Jacobian loses rank before the end.
    direction = model.fk(SIX_HOME)[:3, 3] - model.shoulder_position()
    end = model.shoulder_position() + direction / np.linalg.norm(direction) * 2.319
    failure = _line(model, SIX_HOME, end, 3.0, max_condition=50.0)
    assert isinstance(failure, CartesianFailure)
    assert failure.kind in ('singularity', 'jump', 'ik'), failure.message
    assert 0.0 < failure.fraction < 1.0 and failure.waypoint == 0
    assert 'straight tool line fails at' in failure.message
    # The tool points followed lie on the line, short of the failure point.
    reached = failure.reached
    assert len(reached) > 1
    start = model.fk(SIX_HOME)[:3, 3]
    assert np.linalg.norm(reached[-1] - start) < np.linalg.norm(failure.point - start) + 1e-9


def test_cartesian_line_reports_an_ik_failure_on_the_way(load_arm):
    model = load_arm('pointer3')
    q0 = np.array([0.0, 0.6, -0.6])
    start = model.fk(q0)[:3, 3]
    # Down through the arm's minimum height (0.1 m above the shoulder).
    failure = _line(model, q0, start - [0.0, 0.0, 0.8], 3.0, solver='analytic', min_height=0.1)
    assert isinstance(failure, CartesianFailure)
    assert failure.kind == 'ik' and failure.code == PathCode.UNREACHABLE
    assert failure.ik_code == ErrorCode.BELOW_MIN_HEIGHT, failure.message
    assert failure.point[2] == pytest.approx(model.shoulder_position()[2] + 0.1, abs=0.01)


def test_cartesian_line_reports_a_joint_limit(load_arm):
    model = load_arm('manipulator3d')
    q0 = np.array([0.0, 1.2, -2.4])
    start = model.fk(q0)[:3, 3]
    # Towards the shoulder: the elbow would have to fold past its 150 degree limit.
    failure = _line(model, q0, np.array([-start[0], 0.0, start[2]]), 3.0, solver='analytic')
    assert isinstance(failure, CartesianFailure)
    assert failure.kind == 'joint_limit' and failure.ik_code == ErrorCode.JOINT_LIMITS
    assert 'elbow_pitch' in failure.message and 0.0 < failure.fraction < 0.5


@pytest.mark.parametrize('code, kind', [
    (PathCode.JOINT_JUMP, 'jump'), (PathCode.SINGULARITY, 'singularity'),
    (PathCode.JOINT_LIMIT, 'joint_limit'), (PathCode.UNREACHABLE, 'ik'),
    (PathCode.FLOOR_CONTACT, 'floor'), (PathCode.OBSTACLE_CONTACT, 'obstacle'),
    (PathCode.TIMEOUT, 'timeout'), (PathCode.DEVIATION, 'deviation'),
    (PathCode.INVALID_INPUT, 'ik')])
def test_every_path_stop_becomes_a_failure_that_keeps_its_message(load_arm, code, kind):
    model = load_arm('six_axis')
    ik_code = ErrorCode.JOINT_LIMITS if code == PathCode.JOINT_LIMIT else ErrorCode.OK
    result = PathResult(code, f'{code.name} at 40.0 % of the path: elbow_pitch would move '
                        '0.3000', fraction=0.4, stop_waypoint=0,
                        failed_position=np.array([0.5, 0.1, 0.7]), ik_code=ik_code)
    failure = line_failure(model, result)
    assert failure.kind == kind and failure.code == code
    assert failure.message == ('the straight tool line fails at tool (0.500, 0.100, 0.700) m: '
                               f'{result.message}')
    assert failure.fraction == 0.4 and failure.point.tolist() == [0.5, 0.1, 0.7]
    assert failure.ik_code == (ErrorCode.JOINT_LIMITS if code == PathCode.JOINT_LIMIT else None)
    assert failure.reached.shape == (0, 3)


# ---------------------------------------------------------------------------- trajectory
def test_hermite_sampling_reproduces_a_cubic():
    times = np.array([0.0, 0.4, 1.0])
    cubic = lambda t: 1.0 + 2.0 * t - 3.0 * t ** 2 + 0.5 * t ** 3  # noqa: E731
    slope = lambda t: 2.0 - 6.0 * t + 1.5 * t ** 2  # noqa: E731
    trajectory = Trajectory(('a',), times, cubic(times)[:, None], slope(times)[:, None])
    for t in np.linspace(0.0, 1.0, 37):
        q, v = trajectory.sample(t)
        assert q[0] == pytest.approx(cubic(t)) and v[0] == pytest.approx(slope(t))
    q, v = trajectory.sample(5.0)
    assert q[0] == pytest.approx(cubic(1.0)) and v[0] == 0.0


def test_linear_sampling_and_hold():
    trajectory = Trajectory(('a',), np.array([0.0, 1.0]), np.array([[0.0], [2.0]]),
                            np.array([[2.0], [0.0]]), Interpolation.LINEAR)
    assert trajectory.sample(0.25)[0][0] == pytest.approx(0.5)
    assert trajectory.sample(0.25)[1][0] == pytest.approx(2.0)
    hold = Trajectory.hold(('a', 'b'), np.array([0.1, 0.2]))
    q, v = hold.sample(3.0)
    assert q.tolist() == [0.1, 0.2] and v.tolist() == [0.0, 0.0]


def test_concatenate_chains_segments():
    first = laws.joint_min_jerk(('a',), np.zeros(1), np.ones(1), 1.0, 0.1)
    second = laws.joint_min_jerk(('a',), np.ones(1), np.zeros(1), 0.5, 0.1)
    both = concatenate([first, second])
    assert both.duration == pytest.approx(1.5)
    assert np.all(np.diff(both.times) > 0.0)
    assert both.positions[-1][0] == 0.0 and len(both) == len(first) + len(second) - 1
