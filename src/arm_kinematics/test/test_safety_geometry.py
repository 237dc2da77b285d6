"""Safety core: configuration, link capsules, floor clearance and obstacle contact.

Expected values are computed by hand from the arm's numbers (pointer3: shoulder 0.405 m
above the floor, upper arm l1 = 0.95 m, forearm l2 = 0.85 m), not by the code under test.
"""

from __future__ import annotations

import copy
from dataclasses import replace
import math

import numpy as np
import pytest

from arm_kinematics.description.bundled import ARMS, load_arm_config, load_safety_config
from arm_kinematics.description.safety_config import parse_safety_config, SafetyConfigError
from arm_kinematics.scene.geometry import SafetyGeometry, segment_point_distance, Verdict

SHOULDER_Z, L1, L2 = 0.405, 0.95, 0.85
UPPER_R, FORE_R, ROD = 0.25, 0.19, 0.075
DEG = math.pi / 180.0


def with_obstacle(geometry: SafetyGeometry, center, radius: float = 0.25) -> SafetyGeometry:
    config = geometry.config
    return SafetyGeometry(geometry.model, replace(config, obstacle=replace(
        config.obstacle, enabled=True, center=tuple(center), radius=radius)))


# ---------------------------------------------------------------------------- config
@pytest.mark.parametrize('arm', ARMS)
def test_every_arm_has_a_valid_safety_section(arm, load_arm):
    config = load_safety_config(arm)
    geometry = SafetyGeometry(load_arm(arm), config)
    assert geometry.link_names
    assert all(r > 0 for r in geometry.radii)
    assert config.obstacle.rod_radius == pytest.approx(ROD)


def test_pointer3_config_is_the_specified_one():
    config = load_safety_config('pointer3')
    assert config.floor_enabled and config.floor_below_shoulder == pytest.approx(SHOULDER_Z)
    assert [(link.name, link.radius) for link in config.links] == \
        [('upper_arm_link', UPPER_R), ('forearm_link', FORE_R)]
    # Reference Y-up (x 1.3, up 0.8 above the shoulder, lateral 0.35) in REP-103 base_link.
    assert config.obstacle.center == pytest.approx((1.3, -0.35, 0.8 + SHOULDER_Z))
    assert config.obstacle.enabled


def _broken(path: str, value: object) -> dict:
    section = copy.deepcopy(load_arm_config('pointer3')['safety'])
    *parents, key = path.split('.')
    target = section
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    if value is KeyError:
        del target[key]
    else:
        target[key] = value
    return section


@pytest.mark.parametrize('path, value, words', [
    ('links.0.radius', -0.1, 'links[0].radius is -0.1 (must be > 0)'),
    ('links.1.radius', 0.0, 'links[1].radius is 0.0 (must be > 0)'),
    ('links.0.radius', math.nan, 'links[0].radius is nan (must be finite)'),
    ('links.0.radius', math.inf, 'links[0].radius is inf (must be finite)'),
    ('links.0.radius', 'wide', 'links[0].radius must be a number'),
    ('obstacle.radius', -1.0, 'obstacle.radius is -1.0'),
    ('obstacle.rod_radius', 0.0, 'obstacle.rod_radius is 0.0'),
    ('obstacle.center', [1.0, 2.0], 'obstacle.center must be [x, y, z]'),
    ('obstacle.center', [1.0, math.nan, 2.0], 'obstacle.center[1] is nan'),
    ('floor_below_shoulder', -0.4, 'floor_below_shoulder is -0.4 (must be >= 0)'),
    ('floor_enabled', 'yes', 'floor_enabled must be true or false'),
    ('floor_enabled', KeyError, 'lacks floor_enabled'),
    ('obstacle.colour', 'red', 'unknown key(s) colour'),
    ('links', [], 'non-empty list'),
])
def test_broken_safety_sections_raise_naming_the_key(path, value, words):
    with pytest.raises(SafetyConfigError) as info:
        parse_safety_config(_broken(path, value), 'pointer3')
    assert words in str(info.value)
    assert str(info.value).startswith('pointer3 safety')


def test_missing_section_and_unknown_joint_are_errors(pointer3_model):
    with pytest.raises(SafetyConfigError, match='no safety section'):
        parse_safety_config(None, 'pointer3')
    section = _broken('links.0.joint', 'knee')
    with pytest.raises(SafetyConfigError, match='joint "knee", which is not one of'):
        SafetyGeometry(pointer3_model, parse_safety_config(section))


def test_obstacle_radius_update_is_validated(geometry):
    for bad in (0.0, -0.2, math.nan, math.inf):
        with pytest.raises(SafetyConfigError):
            geometry.with_obstacle_radius(bad)
    bigger = geometry.with_obstacle_radius(0.4)
    assert bigger.contact_distance == pytest.approx(0.4 + ROD)
    assert geometry.contact_distance == pytest.approx(0.25 + ROD)   # unchanged original


# ---------------------------------------------------------------------------- floor
def test_capsules_run_between_joint_origins(geometry):
    start, end, tip = geometry.link_segments([0.0, 0.0, 0.0])
    assert start[0] == pytest.approx(np.array([[0, 0, SHOULDER_Z], [L1, 0, SHOULDER_Z]]))
    assert end[0] == pytest.approx(np.array([[L1, 0, SHOULDER_Z], [L1 + L2, 0, SHOULDER_Z]]))
    assert tip[0] == pytest.approx([L1 + L2, 0, SHOULDER_Z])
    assert geometry.floor_z == pytest.approx(0.0)


def test_horizontal_arm_clearance_is_shoulder_height_minus_radius(geometry):
    check = geometry.check_pose([0.3, 0.0, 0.0])      # yaw changes no height
    assert check.floor_clearance == pytest.approx([SHOULDER_Z - UPPER_R, SHOULDER_Z - FORE_R])
    assert check.verdict == Verdict.SAFE and check.safe
    assert check.min_floor_clearance == pytest.approx(0.155)


def test_forearm_hanging_down_is_below_the_floor_by_hand_computed_depth(geometry):
    check = geometry.check_pose([0.0, 0.0, -90.0 * DEG])
    # Wrist at z = 0.405 - 0.85 = -0.445; capsule bottom 0.19 lower.
    assert check.floor_clearance[1] == pytest.approx(SHOULDER_Z - L2 - FORE_R)
    assert check.floor_clearance[0] == pytest.approx(SHOULDER_Z - UPPER_R)
    assert list(check.floor_violation) == [False, True]
    assert check.verdict == Verdict.FLOOR_VIOLATION
    assert 'forearm_link 0.635 m below the floor' in check.message


def test_links_lying_on_the_floor(load_arm):
    # manipulator3d's shoulder is on its desk plane: at q = 0 both links lie on it.
    model = load_arm('manipulator3d')
    config = replace(load_safety_config('manipulator3d'), floor_enabled=True,
                     floor_below_shoulder=0.0)
    check = SafetyGeometry(model, config).check_pose([0.0, 0.0, 0.0])
    assert check.floor_clearance == pytest.approx([-0.03, -0.03])   # by each capsule radius
    assert check.floor_violation.all() and check.verdict == Verdict.FLOOR_VIOLATION
    # Lifted by exactly one radius, the capsules touch the floor without a violation.
    config = replace(config, floor_below_shoulder=0.03)
    check = SafetyGeometry(model, config).check_pose([0.0, 0.0, 0.0])
    assert check.floor_clearance == pytest.approx([0.0, 0.0], abs=1e-12)
    assert check.verdict == Verdict.SAFE


def test_floor_disabled_reports_infinite_clearance(geometry):
    off = SafetyGeometry(geometry.model, replace(geometry.config, floor_enabled=False))
    check = off.check_pose([0.0, 0.0, -90.0 * DEG])
    assert np.isinf(check.floor_clearance).all() and not check.floor_violation.any()


# ---------------------------------------------------------------------------- obstacle
@pytest.mark.parametrize('offset, touching', [(-0.001, True), (0.001, False)])
def test_rod_just_touching_the_ball(geometry, offset, touching):
    # Forearm horizontal from x = 0.95 to 1.8 at the shoulder height; the ball straight
    # above its middle at radius + rod radius (0.325 m) ± 1 mm.
    distance = 0.25 + ROD + offset
    ball = with_obstacle(geometry, [1.3, 0.0, SHOULDER_Z + distance])
    check = ball.check_pose([0.0, 0.0, 0.0])
    assert check.obstacle_distance[1] == pytest.approx(distance, abs=1e-12)
    assert bool(check.obstacle_contact[1]) is touching
    assert check.min_obstacle_distance == pytest.approx(distance, abs=1e-12)
    assert check.closest_points[1] == pytest.approx([1.3, 0.0, SHOULDER_Z])
    assert check.verdict == (Verdict.OBSTACLE_CONTACT if touching else Verdict.SAFE)


@pytest.mark.parametrize('offset, touching', [(-0.001, True), (0.001, False)])
def test_contact_beyond_the_tip_uses_the_endpoint(geometry, offset, touching):
    # Ball on the forearm's axis past the tip, with the base turned 90°: the nearest
    # point is the tip itself at (0, 1.8, 0.405).
    distance = 0.25 + ROD + offset
    ball = with_obstacle(geometry, [0.0, L1 + L2 + distance, SHOULDER_Z])
    check = ball.check_pose([90.0 * DEG, 0.0, 0.0])
    assert check.obstacle_distance[1] == pytest.approx(distance, abs=1e-9)
    assert bool(check.obstacle_contact[1]) is touching


def test_radius_change_changes_the_verdict(geometry):
    ball = with_obstacle(geometry, [1.3, 0.0, SHOULDER_Z + 0.4])
    assert ball.check_pose([0.0, 0.0, 0.0]).verdict == Verdict.SAFE
    assert ball.with_obstacle_radius(0.33).check_pose([0.0, 0.0, 0.0]).verdict == \
        Verdict.OBSTACLE_CONTACT


def test_pointer3_home_pose_is_clear(geometry):
    home = [0.0, 30.0 * DEG, -60.0 * DEG]
    check = geometry.check_pose(home)
    assert check.verdict == Verdict.SAFE, check.message
    # Straight arm aimed at the configured ball touches it.
    centre = np.array([1.3, -0.35, 1.205]) - [0.0, 0.0, SHOULDER_Z]
    aim = [math.atan2(centre[1], centre[0]), math.atan2(centre[2], math.hypot(*centre[:2])),
           0.0]
    assert geometry.check_pose(aim).verdict == Verdict.OBSTACLE_CONTACT


def test_segment_point_distance_by_hand():
    start = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    end = np.array([[2.0, 0.0, 0.0], [2.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    distance, nearest = segment_point_distance(start, end, np.array([1.0, 3.0, 4.0]))
    assert distance[0] == pytest.approx(5.0)                       # foot inside
    assert nearest[0] == pytest.approx([1.0, 0.0, 0.0])
    distance, _ = segment_point_distance(start, end, np.array([-3.0, 4.0, 0.0]))
    assert distance[1] == pytest.approx(5.0)                       # clamped at the start
    assert distance[2] == pytest.approx(math.sqrt(16 + 9 + 1))     # zero-length segment


# ---------------------------------------------------------------------------- batches
@pytest.mark.parametrize('arm', ARMS)
def test_vectorised_check_equals_scalar_check(arm, load_arm):
    model = load_arm(arm)
    config = load_safety_config(arm)
    config = replace(config, floor_enabled=True, obstacle=replace(config.obstacle, enabled=True))
    geometry = SafetyGeometry(model, config)
    q = model.random_configurations(64, np.random.default_rng(5))
    batch = geometry.check(q)
    for index in range(len(q)):
        single = geometry.check_pose(q[index])
        assert single.verdict == batch.verdict[index]
        # One pose goes through the model's compiled kernel, 64 through the batch path:
        # the same numbers up to rounding.
        np.testing.assert_allclose(single.floor_clearance, batch.floor_clearance[index],
                                   rtol=0.0, atol=1e-12)
        np.testing.assert_allclose(single.obstacle_distance, batch.obstacle_distance[index],
                                   rtol=0.0, atol=1e-12)
        np.testing.assert_array_equal(single.obstacle_contact, batch.obstacle_contact[index])
    assert set(np.unique(batch.verdict)) <= {0, 1, 2}
    np.testing.assert_array_equal(geometry.unsafe(q), batch.verdict != Verdict.SAFE)


@pytest.mark.parametrize('arm', ARMS)
def test_one_pose_floor_clearance_equals_the_batch(arm, load_arm):
    # pose_floor_clearance (plain floats, what the floor rules use per IK request) against
    # floor_clearance_and_tips of the same poses in one batch (the numpy path).
    model = load_arm(arm)
    config = replace(load_safety_config(arm), floor_enabled=True)
    geometry = SafetyGeometry(model, config)
    q = model.random_configurations(64, np.random.default_rng(11))
    clearance, tips = geometry.floor_clearance_and_tips(q)
    for index in range(len(q)):
        lowest, tip = geometry.pose_floor_clearance(q[index].tolist())
        assert lowest == pytest.approx(clearance[index], abs=1e-12)
        np.testing.assert_allclose(tip, tips[index], rtol=0.0, atol=1e-12)
    assert np.isfinite(clearance).all()
    off = SafetyGeometry(model, replace(config, floor_enabled=False))
    lowest, tip = off.pose_floor_clearance(q[0].tolist())
    assert lowest == math.inf
    np.testing.assert_allclose(tip, tips[0], rtol=0.0, atol=1e-12)


def test_one_pose_floor_clearance_by_hand(geometry):
    # Forearm hanging straight down from a horizontal upper arm: its lower end (the tip) is
    # 0.85 m under the shoulder, so the forearm capsule is 0.85 + 0.19 − 0.405 m too low.
    lowest, tip = geometry.pose_floor_clearance([0.0, 0.0, -90.0 * DEG])
    assert lowest == pytest.approx(SHOULDER_Z - L2 - FORE_R, abs=1e-12)
    assert tip == pytest.approx((L1, 0.0, SHOULDER_Z - L2), abs=1e-12)


def test_non_finite_poses_are_never_judged_safe(geometry):
    q = np.array([[0.0, 0.0, 0.0], [math.nan, 0.0, 0.0], [0.0, math.inf, 0.0]])
    checks = geometry.check(q)
    assert list(checks.verdict) == [Verdict.SAFE, Verdict.INVALID_INPUT, Verdict.INVALID_INPUT]
    assert geometry.unsafe(q).tolist() == [False, True, True]
    assert 'not finite' in checks.pose(1).message
    with pytest.raises(ValueError, match=r'shape \(N, 3\)'):
        geometry.check(np.zeros((2, 4)))


def test_point_motion_bound_holds(geometry):
    model = geometry.model
    rng = np.random.default_rng(9)
    q = model.random_configurations(500, rng)
    step = rng.normal(scale=0.05, size=q.shape)
    bound = geometry.max_point_motion(q, q + step)
    start_a, end_a, _ = geometry.link_segments(q)
    start_b, end_b, _ = geometry.link_segments(q + step)
    moved = np.maximum(np.linalg.norm(start_b - start_a, axis=2).max(axis=1),
                       np.linalg.norm(end_b - end_a, axis=2).max(axis=1))
    assert (moved <= bound + 1e-12).all()
