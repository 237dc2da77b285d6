"""Path IK's fast routes against the plain ones they replace, without ROS: the compiled
every-branch call of the yaw + two pitch closed form, the compiled condition numbers and
timing, the unbroken prefix on position-only closed forms, and the search's pruning of
states no halving of a step can reach. Each must give what the plain route gives."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from arm_kinematics.arm import Arm, load_arm
from arm_kinematics.common.transforms import matrix_to_quaternion
from arm_kinematics.description.bundled import expand_xacro, load_arm_config
from arm_kinematics.ik.result import GoalType
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_kinematics.motion import path_following
from arm_kinematics.motion.laws import min_jerk
from arm_kinematics.motion.path_conditions import condition_numbers
from arm_kinematics.motion.path_following import PathRun
from arm_kinematics.motion.path_ik import PathIK
from arm_kinematics.motion.path_request import (
    MIN_JERK_TIMING,
    path_settings,
    PathCode,
    PathRequest,
    ToolPose,
)
from arm_kinematics.motion.path_timing import time_joint_path
from arm_kinematics.motion.tool_path import segment_distance, slerp_rotation, ToolPath
from arm_testing.real_arms import REAL_ARMS

OPTIONS = SolveOptions()
POSITION_ARMS = ('pointer3', 'manipulator3d')


def _bundled(name: str) -> Arm:
    return load_arm(expand_xacro(name), load_arm_config(name))


@pytest.fixture(scope='module')
def ur5() -> Arm:
    arm = REAL_ARMS['ur5']
    return load_arm(arm.urdf(), base_frame=arm.base, tip_frame=arm.tip)


def _lines(arm: Arm, count: int, seed: int) -> list[PathRequest]:
    """Straight lines from random configurations to the tool of others (the arm's own
    default goal: full pose for six joints, else position)."""
    rng = np.random.default_rng(seed)
    goal = GoalType.FULL_POSE if arm.model.dof >= 6 else GoalType.POSITION
    requests = []
    for _ in range(count):
        start, end = arm.model.random_configurations(2, rng)
        frame = arm.model.fk(end)
        requests.append(PathRequest(start, [ToolPose(frame[:3, 3].tolist(),
                                                     matrix_to_quaternion(frame[:3, :3]))],
                                    goal))
    return requests


def _same_paths(fast: list, slow: list, words: bool = True) -> None:
    for quick, plain in zip(fast, slow, strict=True):
        assert (quick.code, quick.samples, quick.branches, quick.stop_sample) == \
            (plain.code, plain.samples, plain.branches, plain.stop_sample), \
            (quick.message, plain.message)
        if words:
            assert quick.message == plain.message
        if plain.trajectory is None:
            assert quick.trajectory is None
        else:
            np.testing.assert_allclose(quick.trajectory.positions, plain.trajectory.positions,
                                       rtol=0.0, atol=1e-9)


def _wide_yaw_pointer3() -> Arm:
    """pointer3 with a yaw of more than a turn (±6 rad): its branches' whole turns toward
    the seed."""
    urdf = expand_xacro('pointer3').replace(
        'lower="-3.141592653589793" upper="3.141592653589793"', 'lower="-6.0" upper="6.0"', 1)
    assert 'lower="-6.0"' in urdf
    return load_arm(urdf, load_arm_config('pointer3'))


# ---------------------------------------------------------------------- closed form
@pytest.mark.parametrize('name', [*POSITION_ARMS, 'pointer3_wide_yaw'])
def test_every_branch_of_many_targets_is_what_the_scalar_solve_lists(name):
    arm = _wide_yaw_pointer3() if name == 'pointer3_wide_yaw' else _bundled(name)
    solver = arm.dispatcher().solvers['analytic']
    rng = np.random.default_rng(5)
    seed = arm.model.random_configurations(1, rng)[0]
    targets = arm.model.fk_batch(arm.model.random_configurations(150, rng))[:, :3, 3]
    shoulder = np.asarray(solver.geometry.shoulder)
    # On the yaw axis (the seed's yaw), out of reach, and at the shoulder (inside the hole).
    targets = np.vstack([targets, shoulder + [0.0, 0.0, 0.3], shoulder + [9.0, 0.0, 0.0],
                         shoulder])
    q, valid = solver.solve_all_poses(targets, None, seed)
    assert q.shape == (len(targets), 4, 3) and valid.shape == (len(targets), 4)
    listed = 0
    for target, branches, ok in zip(targets, q, valid, strict=True):
        result = solver.solve(target, None, GoalType.POSITION, seed,
                              OPTIONS.with_changes(return_all=True))
        expected = {s.label: s.q for s in result.solutions}
        got = {label: row for label, row, good in zip(solver.branch_labels, branches, ok,
                                                      strict=True) if good}
        assert got.keys() == expected.keys(), (target, result.reason)
        for label, row in got.items():
            np.testing.assert_allclose(row, expected[label], rtol=0.0, atol=1e-12)
        listed += len(got)
    assert listed > 150 and not valid[-2:].any()


def test_a_batch_refuses_bad_rows_and_a_bad_seed():
    solver = _wide_yaw_pointer3().dispatcher().solvers['analytic']
    targets = np.array([[0.6, 0.2, 0.9], [math.nan, 0.0, 0.9], [math.inf, 0.0, 0.9]])
    q, codes = solver.solve_batch(targets, 'nearest', (5.5, 0.3, -0.4))
    assert codes[0] == 0 and np.isfinite(q[0]).all() and q[0, 0] > math.pi   # turned
    assert (codes[1:] != 0).all() and np.isnan(q[1:]).all()
    for seed in ((math.nan, 0.0, 0.0), (0.0, 0.0)):
        with pytest.raises(ValueError, match='seed'):
            solver.solve_batch(targets, 'nearest', seed)


@pytest.mark.parametrize('name', POSITION_ARMS)
def test_a_position_path_through_its_unbroken_prefix_equals_the_search_alone(
        name, monkeypatch):
    arm = _bundled(name)
    requests = _lines(arm, 30, 7)
    fast = [PathIK(arm.dispatcher(), arm.safety).follow(r, OPTIONS) for r in requests]
    monkeypatch.setattr(PathRun, '_unbroken_prefix', lambda self, first: ([first], None, False))
    slow = [PathIK(arm.dispatcher(), arm.safety).follow(r, OPTIONS) for r in requests]
    _same_paths(fast, slow)
    assert any(r.code == PathCode.OK for r in fast) and any(r.code != PathCode.OK for r in fast)


def test_pruning_states_no_halving_reaches_changes_no_path(ur5, monkeypatch):
    # A whole-turn copy across a joint limit is pruned from the search; without the
    # pruning the search went on to the path's end and the refinement refused that step.
    # The search does every layer here (no prefix), so a state pruned wrongly shows.
    requests = _lines(ur5, 40, 3)
    monkeypatch.setattr(PathRun, '_unbroken_prefix', lambda self, first: ([first], None, False))
    pruned = []
    original = path_following.beyond_reach

    def counted(*args):
        pruned.append(1)
        return original(*args)

    monkeypatch.setattr(path_following, 'beyond_reach', counted)
    fast = [PathIK(ur5.dispatcher(), ur5.safety).follow(r, OPTIONS) for r in requests]
    monkeypatch.setattr(PathRun, '_reachable_motion', lambda self, u: math.inf)
    slow = [PathIK(ur5.dispatcher(), ur5.safety).follow(r, OPTIONS) for r in requests]
    # The same samples and stop; the words may name the cause from the other side.
    _same_paths(fast, slow, words=False)
    assert pruned


@pytest.mark.parametrize('allow_change', [False, True])
def test_keeping_a_refused_sample_through_the_halving_changes_no_path(ur5, allow_change,
                                                                      monkeypatch):
    # _advance keeps a sample's own refusal (PathStop.lasting) while it halves the step
    # toward it; solving it again each time must give the same paths, stops and words.
    requests = [dataclasses.replace(r, allow_branch_change=allow_change)
                for r in _lines(ur5, 30, 9)]
    kept = []
    original = PathRun._attempt

    def counted(self, u, previous, labels):
        candidate, stop = original(self, u, previous, labels)
        kept.append(candidate is None and stop.lasting)
        return candidate, stop

    monkeypatch.setattr(PathRun, '_attempt', counted)
    fast = [PathIK(ur5.dispatcher(), ur5.safety).follow(r, OPTIONS) for r in requests]

    def forgotten(self, u, previous, labels):
        candidate, stop = original(self, u, previous, labels)
        if stop is not None:
            stop.lasting = False
        return candidate, stop

    monkeypatch.setattr(PathRun, '_attempt', forgotten)
    slow = [PathIK(ur5.dispatcher(), ur5.safety).follow(r, OPTIONS) for r in requests]
    _same_paths(fast, slow)
    assert any(kept)


# ---------------------------------------------------------------------- conditions
def _svd_condition(rows: np.ndarray) -> float:
    singular = np.linalg.svd(rows, compute_uv=False)
    return math.inf if singular[-1] <= singular[0] * 1e-15 else singular[0] / singular[-1]


@pytest.mark.parametrize('goal', [GoalType.POSITION, GoalType.TOOL_DOWN, GoalType.FULL_POSE])
def test_the_compiled_condition_numbers_are_the_svd_ones(ur5, goal):
    model, reach = ur5.model, 0.9
    qs = model.random_configurations(40, np.random.default_rng(2))
    got = condition_numbers(model, reach, qs, goal)
    for q, value in zip(qs, got, strict=True):
        jacobian, rotation = model.jacobian(q), model.fk(q)[:3, :3]
        rows = [jacobian[:3]]
        if goal == GoalType.TOOL_DOWN:
            rows.append(reach * rotation[:, :2].T @ jacobian[3:])
        elif goal == GoalType.FULL_POSE:
            rows.append(reach * jacobian[3:])
        expected = _svd_condition(np.vstack(rows))
        assert value == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize('goal', [GoalType.POSITION, GoalType.TOOL_DOWN, GoalType.FULL_POSE])
def test_a_condition_number_proven_below_the_bound_is_zero_and_no_other(ur5, goal):
    model = ur5.model
    qs = model.random_configurations(300, np.random.default_rng(4))
    exact = condition_numbers(model, 0.9, qs, goal)
    bound = float(np.median(exact))
    screened = condition_numbers(model, 0.9, qs, goal, bound)
    proven = screened == 0.0
    assert np.all(exact[proven] < bound)
    np.testing.assert_array_equal(screened[~proven], exact[~proven])
    assert proven.sum() > 30 and (~proven).sum() >= 150


def test_a_nearly_stretched_arm_has_a_finite_number_as_the_svd_gives(ur5):
    # Past about 8e6 the Gram matrix's eigenvalues have lost λmin; the SVD answers.
    for bend in (1e-6, 1e-7):
        q = np.array([0.3, -math.pi / 2.0, bend, -1.0, 0.7, 0.2])
        jacobian = ur5.model.jacobian(q)
        expected = _svd_condition(np.vstack([jacobian[:3], 0.9 * jacobian[3:]]))
        got = condition_numbers(ur5.model, 0.9, q[None], GoalType.FULL_POSE)[0]
        assert expected > 1e7 and math.isfinite(got)
        assert got == pytest.approx(expected, rel=1e-3)


def test_a_stretched_arm_is_singular(ur5):
    stretched = np.array([0.0, -math.pi / 2.0, 0.0, -math.pi / 2.0, 0.0, 0.0])
    for goal in (GoalType.POSITION, GoalType.FULL_POSE):
        assert condition_numbers(ur5.model, 0.9, stretched[None], goal)[0] > 1e6


# ---------------------------------------------------------------------- timing
def test_the_compiled_timing_is_numpys(ur5):
    model = ur5.model
    rng = np.random.default_rng(8)
    q = np.cumsum(rng.uniform(-0.05, 0.05, (40, model.dof)), axis=0)
    q[10] = q[9]                                       # a pure re-sample takes 1e-6 s
    settings, _ = path_settings(PathRequest(q[0], [ToolPose([0.3, 0.0, 0.3])],
                                            timing=MIN_JERK_TIMING))
    trajectory = time_joint_path(model, q, settings, list(range(len(q))))
    limits = np.asarray(model.velocity_limits) * settings.velocity_scale
    linear = np.concatenate([[0.0], np.cumsum(np.maximum(
        (np.abs(np.diff(q, axis=0)) / limits).max(axis=1), 1e-6))])
    duration = 1.875 * linear[-1]
    # min_jerk's s(τ) at the computed times gives back the linear fractions (to the
    # nudge of i·1e-12 s that keeps the times strictly increasing).
    s = np.array([min_jerk(t / duration)[0] for t in trajectory.times])
    np.testing.assert_allclose(s[1:-1], (linear / linear[-1])[1:-1], rtol=0.0, atol=1e-9)
    assert trajectory.times[0] == 0.0 and trajectory.times[-1] == pytest.approx(duration)
    assert np.all(np.diff(trajectory.times) > 0.0)
    expected = np.gradient(q, trajectory.times, axis=0)
    expected[[0, -1]] = 0.0
    np.testing.assert_allclose(trajectory.velocities, expected, rtol=1e-12, atol=1e-12)


def test_the_linear_timing_is_each_step_at_its_slowest_joint(ur5):
    model = ur5.model
    q = np.cumsum(np.random.default_rng(6).uniform(-0.05, 0.05, (12, model.dof)), axis=0)
    settings, _ = path_settings(PathRequest(q[0], [ToolPose([0.3, 0.0, 0.3])],
                                            timing='linear'))
    trajectory = time_joint_path(model, q, settings, list(range(len(q))))
    limits = np.asarray(model.velocity_limits) * settings.velocity_scale
    expected = np.concatenate([[0.0], np.cumsum(np.maximum(
        (np.abs(np.diff(q, axis=0)) / limits).max(axis=1), 1e-6))])
    np.testing.assert_array_equal(trajectory.times, expected)
    gradient = np.gradient(q, expected, axis=0)
    gradient[[0, -1]] = 0.0
    np.testing.assert_array_equal(trajectory.velocities, gradient)


# ---------------------------------------------------------------------- tool path
def test_a_tool_pose_between_samples_is_the_slerp_and_the_segment_distance_numpys():
    rng = np.random.default_rng(1)
    quaternions = rng.normal(size=(3, 4))
    rotations = []
    for quaternion in quaternions / np.linalg.norm(quaternions, axis=1, keepdims=True):
        x, y, z, w = quaternion
        rotations.append(np.array([
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]))
    path = ToolPath(rng.normal(size=(3, 3)), np.array(rotations), np.zeros(3, dtype=int), 0.2)
    for u in (0.0, 0.25, 0.5, 1.0, 1.7, 2.0):
        k = min(int(u), 1)
        position, rotation = path.pose(u)
        np.testing.assert_allclose(rotation, slerp_rotation(rotations[k], rotations[k + 1],
                                                            u - k), rtol=0.0, atol=1e-12)
        np.testing.assert_allclose(position, path.positions[k] + (u - k) * (
            path.positions[k + 1] - path.positions[k]), rtol=0.0, atol=1e-15)
    for _ in range(50):
        point, a, b = rng.normal(size=(3, 3))
        ab = b - a
        t = min(max(float((point - a) @ ab) / float(ab @ ab), 0.0), 1.0)
        assert segment_distance(point, a, b) == pytest.approx(
            float(np.linalg.norm(point - (a + t * ab))), rel=1e-12)
    assert segment_distance([1.0, 2.0, 2.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]) == 3.0
