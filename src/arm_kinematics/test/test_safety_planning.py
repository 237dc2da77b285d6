"""Motion checks: dense path sampling, detours around the floor, contacts in time, joint map."""

from __future__ import annotations

from dataclasses import replace
import math

import numpy as np
import pytest

from arm_kinematics.description.bundled import load_safety_config
from arm_kinematics.motion.planning.grid import DEFAULT_RESOLUTION, plan_detour, PlanCode
from arm_kinematics.motion.planning.joint_map import joint_map
from arm_kinematics.motion.safety_paths import (
    check_path,
    sample_contacts,
    sample_path,
    time_at_velocity_limits,
)
from arm_kinematics.scene.geometry import SafetyGeometry, Verdict

DEG = math.pi / 180.0
SHOULDER_Z, L1, L2 = 0.405, 0.95, 0.85
# Forearm folded back under a raised upper arm, and the arm horizontal: both clear, but
# half-way along the straight joint path (shoulder 20°, elbow -78°) the wrist is at
# 0.405 + 0.95 sin 20° + 0.85 sin(-58°) = 0.009 m, 0.18 m too low for its 0.19 m capsule.
FOLDED = np.array([0.0, 40.0 * DEG, -156.0 * DEG])
LEVEL = np.array([0.0, 0.0, 0.0])
# The configured ball seen from the shoulder (base_link [1.3, -0.35, 1.205]).
CENTRE = np.array([1.3, -0.35, 0.8])
BEARING = math.atan2(CENTRE[1], CENTRE[0])
ELEVATION = math.atan2(CENTRE[2], math.hypot(CENTRE[0], CENTRE[1]))


def dense_unsafe(geometry: SafetyGeometry, waypoints: np.ndarray, obstacle: bool,
                 per_segment: int = 4000) -> bool:
    """An independent check: thousands of uniform samples per segment."""
    fraction = np.linspace(0.0, 1.0, per_segment)[:, None]
    samples = np.vstack([a + fraction * (b - a) for a, b in zip(waypoints, waypoints[1:])])
    return bool(geometry.unsafe(samples, obstacle).any())


# ---------------------------------------------------------------------------- sampling
def test_timing_at_velocity_limits_by_hand(geometry):
    # pointer3 limits 1.0, 1.0, 1.2 rad/s: 0.5 rad of yaw takes 0.5 s, 0.6 rad of elbow 0.5 s.
    times = time_at_velocity_limits(geometry.model, np.array([[0, 0, 0], [0.5, 0.2, 0.6],
                                                              [0.5, 0.2, 0.0]]))
    assert times == pytest.approx([0.0, 0.5, 1.0])


def test_samples_are_dense_enough(geometry):
    samples = sample_path(geometry, np.array([FOLDED, LEVEL, [2.0, 1.0, 1.0]]))
    start, end, _ = geometry.link_segments(samples.positions)
    moved = np.maximum(np.linalg.norm(np.diff(start, axis=0), axis=2),
                       np.linalg.norm(np.diff(end, axis=0), axis=2)).max()
    assert moved <= 0.02
    assert samples.positions[0] == pytest.approx(FOLDED)
    assert samples.positions[-1] == pytest.approx([2.0, 1.0, 1.0])
    assert np.all(np.diff(samples.times) > 0.0)


def test_straight_path_through_the_floor_is_found(geometry):
    assert geometry.check_pose(FOLDED).safe and geometry.check_pose(LEVEL).safe
    middle = geometry.check_pose((FOLDED + LEVEL) / 2.0)
    wrist_z = SHOULDER_Z + L1 * math.sin(20 * DEG) + L2 * math.sin(-58 * DEG)
    assert middle.floor_clearance[1] == pytest.approx(wrist_z - 0.19)
    result = check_path(geometry, np.array([FOLDED, LEVEL]), np.array([0.0, 3.0]))
    assert not result.safe and result.first_violation_verdict == Verdict.FLOOR_VIOLATION
    assert 0.0 < result.first_violation_time < 1.5
    assert 'forearm_link' in result.message


def test_bad_paths_are_refused(geometry):
    with pytest.raises(ValueError, match='increase strictly'):
        check_path(geometry, np.array([FOLDED, LEVEL]), np.array([1.0, 1.0]))
    with pytest.raises(ValueError, match='finite'):
        check_path(geometry, np.array([FOLDED, [math.nan, 0, 0]]))
    with pytest.raises(ValueError, match='shape'):
        check_path(geometry, np.zeros((2, 4)))
    with pytest.raises(ValueError, match='rate'):
        sample_contacts(geometry, np.array([FOLDED, LEVEL]), rate=0.0)


# ---------------------------------------------------------------------------- detours
def test_straight_path_through_the_floor_is_replaced_by_a_clear_detour(geometry):
    plan = plan_detour(geometry, FOLDED, LEVEL)
    assert plan.code == PlanCode.OK and plan.detoured, plan.message
    assert plan.waypoints[0] == pytest.approx(FOLDED)
    assert plan.waypoints[-1] == pytest.approx(LEVEL)
    assert len(plan.waypoints) >= 3
    assert not dense_unsafe(geometry, plan.waypoints, obstacle=False)
    assert check_path(geometry, plan.waypoints, plan.times, obstacle=False).safe
    assert plan.min_floor_clearance >= 0.0
    assert np.all(np.diff(plan.times) > 0.0)
    assert 'below the floor' in plan.message and 'every one of' in plan.message
    assert all(geometry.model.within_limits(q) for q in plan.waypoints)


def test_clear_straight_path_is_kept(geometry):
    goal = np.array([0.5, 45.0 * DEG, -30.0 * DEG])
    plan = plan_detour(geometry, [0.0, 30.0 * DEG, -60.0 * DEG], goal)
    assert plan.code == PlanCode.OK and not plan.detoured
    assert len(plan.waypoints) == 2 and plan.waypoints[-1] == pytest.approx(goal)


def test_same_start_and_goal_is_one_waypoint(geometry):
    plan = plan_detour(geometry, LEVEL, LEVEL)
    assert plan.code == PlanCode.OK and plan.waypoints.shape == (1, 3)
    assert plan.times.tolist() == [0.0]


@pytest.mark.parametrize('degrees', [2.0, 4.0, 8.0])
def test_grid_resolution_is_a_parameter(geometry, degrees):
    plan = plan_detour(geometry, FOLDED, LEVEL, resolution=degrees * DEG)
    assert plan.code == PlanCode.OK and plan.detoured
    assert not dense_unsafe(geometry, plan.waypoints, obstacle=False)


@pytest.mark.parametrize('start, goal, code, words', [
    ([0.0, 0.0, -90.0 * DEG], LEVEL, PlanCode.START_UNSAFE, 'start pose is not clear'),
    (LEVEL, [0.0, 0.0, -90.0 * DEG], PlanCode.GOAL_UNSAFE, 'goal pose is not clear'),
    ([math.nan, 0.0, 0.0], LEVEL, PlanCode.INVALID_INPUT, 'not finite'),
    ([0.0, 0.0], LEVEL, PlanCode.INVALID_INPUT, '2 values, the arm has 3 joints'),
    (LEVEL, [0.0, 0.0, 3.0], PlanCode.INVALID_INPUT, 'outside the joint limits'),
])
def test_bad_requests_are_clear_errors(geometry, start, goal, code, words):
    plan = plan_detour(geometry, start, goal)
    assert plan.code == code and words in plan.message
    assert plan.waypoints.shape == (0, 3) and not plan.success


@pytest.mark.parametrize('resolution', [0.1 * DEG, 30.0 * DEG, math.nan, -DEFAULT_RESOLUTION])
def test_bad_resolution_is_refused(geometry, resolution):
    plan = plan_detour(geometry, FOLDED, LEVEL, resolution=resolution)
    assert plan.code == PlanCode.INVALID_INPUT and 'resolution' in plan.message


def test_no_safe_path_is_a_clear_error(geometry):
    # A ball 0.6 m above the shoulder (radius 0.3 m) touches the upper arm for every shoulder
    # angle between 51° and 129° (0.6 |cos a| < 0.375): a wall across the whole
    # (shoulder, elbow) map between the arm pointing forward and pointing back.
    config = geometry.config
    wall = SafetyGeometry(geometry.model, replace(config, obstacle=replace(
        config.obstacle, center=(0.0, 0.0, SHOULDER_Z + 0.6), radius=0.3)))
    back = [0.0, 150.0 * DEG, 0.0]
    assert wall.check_pose(back).safe and wall.check_pose(LEVEL).safe
    plan = plan_detour(wall, LEVEL, back, avoid_obstacle=True)
    assert plan.code == PlanCode.NO_PATH and not plan.success
    assert 'cut the start off from the goal' in plan.message and 'do not move' in plan.message
    assert plan.waypoints.shape == (0, 3)
    # Without obstacle avoidance the floor alone lets the arm swing over the top.
    assert plan_detour(wall, LEVEL, back).code == PlanCode.OK


@pytest.mark.parametrize('arm', ['ccd5', 'six_axis', 'pointer3'])
def test_every_detour_of_random_dipping_paths_is_clear(arm, load_arm):
    model = load_arm(arm)
    geometry = SafetyGeometry(model, load_safety_config(arm))
    rng = np.random.default_rng(11)
    poses = model.random_configurations(4000, rng)
    poses = poses[~geometry.unsafe(poses, obstacle=False)]
    planned = 0
    for start, goal in zip(poses[::2], poses[1::2]):
        if check_path(geometry, np.array([start, goal]), rate=0.0, obstacle=False).safe:
            continue
        plan = plan_detour(geometry, start, goal)
        assert plan.code in (PlanCode.OK, PlanCode.NO_PATH), plan.message
        if plan.success:
            assert plan.detoured
            assert not dense_unsafe(geometry, plan.waypoints, obstacle=False, per_segment=1500)
            planned += 1
        if planned == 4:
            break
    assert planned == 4


def test_detour_around_the_obstacle_when_asked(geometry):
    # A straight arm swept in yaw through the ball (see the contact test below).
    start = [BEARING - 45 * DEG, ELEVATION, 0.0]
    goal = [BEARING + 45 * DEG, ELEVATION, 0.0]
    plain = plan_detour(geometry, start, goal)
    assert plain.code == PlanCode.OK and not plain.detoured     # the floor alone is clear
    plan = plan_detour(geometry, start, goal, avoid_obstacle=True)
    assert plan.code == PlanCode.OK and plan.detoured, plan.message
    assert not dense_unsafe(geometry, plan.waypoints, obstacle=True)
    assert 'floor and obstacle' in plan.message


# ---------------------------------------------------------------------------- contacts
def first_contact_time(duration: float) -> float:
    """When a straight arm at the ball's elevation, yawing 90° at a constant rate from 45°
    before the ball's bearing, first comes within 0.325 m of its centre (spherical
    trigonometry: cos θ = cos²e cos Δψ + sin²e, distance = |c| sin θ)."""
    distance = float(np.linalg.norm(CENTRE))
    theta = math.asin(0.325 / distance)
    cos_e2, sin_e2 = math.cos(ELEVATION) ** 2, math.sin(ELEVATION) ** 2
    delta = math.acos((math.cos(theta) - sin_e2) / cos_e2)
    return (45.0 * DEG - delta) / (90.0 * DEG) * duration


def test_contact_on_the_way_but_not_at_the_end(geometry):
    start = [BEARING - 45 * DEG, ELEVATION, 0.0]
    goal = [BEARING + 45 * DEG, ELEVATION, 0.0]
    waypoints, times = np.array([start, goal]), np.array([0.0, 2.0])
    assert geometry.check_pose(start).safe and geometry.check_pose(goal).safe
    contacts = sample_contacts(geometry, waypoints, times, rate=60.0)
    expected = first_contact_time(2.0)
    assert len(contacts) > 0
    assert 0.0 <= contacts.times[0] - expected <= 1.0 / 60.0 + 1e-9
    assert contacts.times[-1] <= 2.0 - expected + 1e-9                 # symmetric exit
    assert contacts.times[-1] < 2.0                                    # none at the end
    assert np.allclose(np.diff(contacts.times), 1.0 / 60.0)            # 60 samples per second
    assert all('forearm_link' in links for links in contacts.links)
    # Tip positions: the straight arm's tip, 1.8 m from the shoulder.
    reach = np.linalg.norm(contacts.tips - [0.0, 0.0, SHOULDER_Z], axis=1)
    assert reach == pytest.approx(np.full(len(reach), L1 + L2))
    assert (contacts.distances < 0.325).all()
    result = check_path(geometry, waypoints, times)
    assert result.first_violation_verdict == Verdict.OBSTACLE_CONTACT
    assert 0.0 <= result.first_violation_time - expected <= 1.0 / 60.0 + 1e-9
    reported = check_path(geometry, waypoints, times, obstacle=False)
    assert reported.safe and len(reported.contacts) > 0     # reported, not counted


# ---------------------------------------------------------------------------- joint map
def test_joint_map_marks_floor_and_contact_cells(geometry):
    at_ball = joint_map(geometry, [BEARING, 0.0, 0.0])
    a, b = at_ball.axis_a, at_ball.axis_b
    assert at_ball.joint_names == ('shoulder_pitch', 'elbow_pitch')
    assert a[0] == pytest.approx(-90 * DEG) and a[-1] == pytest.approx(180 * DEG)
    assert np.diff(a).max() <= DEFAULT_RESOLUTION + 1e-12
    assert at_ball.floor.shape == at_ball.contact.shape == (len(a), len(b))

    def cell(shoulder: float, elbow: float) -> tuple[int, int]:
        return int(np.argmin(abs(a - shoulder))), int(np.argmin(abs(b - elbow)))

    assert at_ball.floor[cell(0.0, -90 * DEG)]           # forearm hanging down
    assert not at_ball.floor[cell(90 * DEG, 0.0)]        # arm straight up
    assert at_ball.contact[cell(ELEVATION, 0.0)]         # straight arm aimed at the ball
    # Turned away, nothing touches; the floor cells do not depend on the yaw.
    away = joint_map(geometry, [BEARING + math.pi / 2, 0.0, 0.0])
    assert not away.contact.any()
    np.testing.assert_array_equal(away.floor, at_ball.floor)


def test_joint_map_carries_the_path_and_its_contacts(geometry):
    start = [BEARING - 45 * DEG, ELEVATION, 0.0]
    goal = [BEARING + 45 * DEG, ELEVATION, 0.0]
    result = joint_map(geometry, start, waypoints=np.array([start, goal]),
                       times=np.array([0.0, 2.0]))
    assert len(result.path) == len(result.path_times) == 121          # 2 s at 60 Hz + end
    assert result.path == pytest.approx(np.tile([ELEVATION, 0.0], (121, 1)))
    assert len(result.contacts) > 0
    assert result.contact_angles == pytest.approx(
        np.tile([ELEVATION, 0.0], (len(result.contacts), 1)))
    rows, cols = result.path_cells.T
    assert (0 <= rows).all() and (rows < len(result.axis_a)).all()
    assert (0 <= cols).all() and (cols < len(result.axis_b)).all()
    # The map is drawn at the start's yaw, 45° away from the ball: the path touches the ball
    # while its cells there are not marked (the base was still turning).
    assert not result.contact[rows, cols].any()


def test_joint_map_marks_self_collision_and_scene_contact_cells(load_arm):
    """With a collision checker, the cells in self-collision and touching a scene object are
    marked: each one as the checker says of that cell's pose (pointer3 folds its forearm
    onto its upper arm; a post stands where the elbow passes)."""
    from arm_kinematics.arm import build_arm
    from arm_kinematics.description.bundled import load_arm_config
    from arm_kinematics.scene.objects import Scene
    model = load_arm('pointer3')
    arm = build_arm(model, load_arm_config('pointer3'), 'pointer3')
    checker = arm.collision_checker(scene=Scene(model.base_link))
    elbow = checker.link_poses(arm.home)['forearm_link'][:3, 3]
    checker.scene.add({'id': 'post', 'type': 'cylinder', 'radius': 0.03, 'length': 0.2,
                       'pose': {'xyz': elbow.tolist()}})
    plain = joint_map(arm.safety, arm.home, math.radians(8.0))
    assert plain.self_collision is None and plain.scene_contact is None
    result = joint_map(arm.safety, arm.home, math.radians(8.0), checker=checker)
    assert result.scene_version == checker.scene.version == 1
    assert (result.floor == plain.floor).all() and (result.contact == plain.contact).all()
    assert result.self_collision.any() and result.scene_contact.any()
    i, j = result.search_joints
    for row, column in [(r, c) for r in range(0, len(result.axis_a), 3)
                        for c in range(0, len(result.axis_b), 3)]:
        q = arm.home.copy()
        q[i], q[j] = result.axis_a[row], result.axis_b[column]
        report = checker.check(q)
        assert result.self_collision[row, column] == report.self_collision
        assert result.scene_contact[row, column] == report.scene_collision
