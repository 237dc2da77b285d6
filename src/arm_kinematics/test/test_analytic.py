"""Closed-form yaw + two-pitch solver (analytic) on the real arm descriptions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arm_kinematics.description.bundled import load_arm_config
from arm_kinematics.ik.closed_form.analytic import AnalyticSolver, BRANCHES, wrap_into
from arm_kinematics.ik.result import ErrorCode, GoalType
from arm_kinematics.ik.solvers.base import SolveOptions, workspace_from_model
from arm_kinematics.model.arm_model import ArmModel
from arm_testing.ik_checks import same_angles
from arm_testing.urdf_edits import edited_urdf

ARMS = ('pointer3', 'manipulator3d')
TARGETS = 500
EXACT = 1e-9        # m: a closed form must reproduce its target to rounding
ALL = SolveOptions(return_all=True)


def _min_height(arm: str) -> float | None:
    value = (load_arm_config(arm).get('ik') or {}).get('min_height_above_shoulder')
    return None if value is None else float(value)


def _solver(model: ArmModel, min_height: float | None) -> AnalyticSolver:
    return AnalyticSolver(model, workspace_from_model(model, min_height))


@pytest.fixture(scope='module')
def analytic_solver(load_arm):
    cache = {}

    def get(arm: str) -> AnalyticSolver:
        if arm not in cache:
            cache[arm] = _solver(load_arm(arm), _min_height(arm))
        return cache[arm]
    return get


def _fk_targets(model: ArmModel, count: int = TARGETS, seed: int = 7):
    q = model.random_configurations(count, np.random.default_rng(seed))
    return q, model.fk_batch(q)[:, :3, 3]


def _assert_clean(result) -> None:
    """A failure is an answer: no configuration, no NaN anywhere."""
    assert not result.success
    assert result.q is None and result.tip_position is None
    assert not math.isnan(result.position_error) and not math.isnan(result.solve_time)
    assert result.reason


# ------------------------------------------------------------------ applicability
@pytest.mark.parametrize('arm', ARMS)
def test_applies_to_yaw_pitch_pitch_arms(load_arm, arm):
    assert AnalyticSolver.applicability(load_arm(arm)) == ''


@pytest.mark.parametrize('arm', ('ccd5', 'six_axis'))
def test_refuses_other_arms_with_a_reason(load_arm, arm):
    model = load_arm(arm)
    reason = AnalyticSolver.applicability(model)
    assert '3 joints' in reason and str(model.dof) in reason
    solver = AnalyticSolver(model, workspace_from_model(model))
    result = solver.solve([0.5, 0.0, 1.0])
    assert result.code == ErrorCode.SOLVER_NOT_APPLICABLE and result.reason == reason
    with pytest.raises(ValueError):
        solver.solve_batch(np.zeros((2, 3)))


def test_geometry_comes_from_the_urdf(load_arm):
    model = load_arm('pointer3', l1='0.5', l2='1.25', shoulder_height='0.3')
    solver = _solver(model, None)
    g = solver.geometry
    assert (g.l1, g.l2) == pytest.approx((0.5, 1.25), abs=1e-12)
    assert g.shoulder == pytest.approx((0.0, 0.0, 0.3), abs=1e-12)
    q, targets = _fk_targets(model, 100)
    for target in targets:
        result = solver.solve(target)
        assert result.success, result.reason
        assert np.linalg.norm(model.fk(result.q)[:3, 3] - target) < EXACT


@pytest.mark.parametrize('axes', [
    {'shoulder_pitch': '0 1 0', 'elbow_pitch': '0 1 0'},
    {'base_yaw': '0 0 -1', 'elbow_pitch': '0 1 0'},
])
def test_axis_signs_come_from_the_urdf(urdf_of, axes):
    model = ArmModel.from_urdf(edited_urdf(urdf_of('pointer3'),
                                         {name: {'axis/xyz': xyz} for name, xyz in axes.items()}))
    solver = _solver(model, None)
    configurations, targets = _fk_targets(model, 200, seed=3)
    for q, target in zip(configurations, targets, strict=True):
        result = solver.solve(target, options=ALL)
        assert result.success, result.reason
        assert any(same_angles(s.q, q, 1e-7) for s in result.solutions)
        for solution in result.solutions:
            assert np.linalg.norm(model.fk(solution.q)[:3, 3] - target) < EXACT


# ------------------------------------------------------------------ round trips
@pytest.mark.parametrize('arm', ARMS)
def test_fk_of_ik_reproduces_500_targets(load_arm, analytic_solver, arm):
    model, solver = load_arm(arm), analytic_solver(arm)
    configurations, targets = _fk_targets(model)
    minimum = _min_height(arm)
    solved = 0
    for q, target in zip(configurations, targets, strict=True):
        result = solver.solve(target, options=ALL)
        if minimum is not None and target[2] - solver.workspace.shoulder[2] < minimum:
            assert result.code == ErrorCode.BELOW_MIN_HEIGHT
            _assert_clean(result)
            continue
        assert result.success, result.reason
        solved += 1
        reached = model.fk(result.q)[:3, 3]
        assert np.linalg.norm(reached - target) < EXACT
        np.testing.assert_allclose(result.tip_position, reached, atol=1e-12)
        assert result.position_error == pytest.approx(np.linalg.norm(reached - target),
                                                       abs=1e-12)
        assert model.within_limits(result.q, 0.0)
        assert result.branch in BRANCHES and result.iterations == 0
        assert result.orientation_error == 0.0 and result.solve_time > 0.0
        assert result.max_joint_step == pytest.approx(
            np.abs(result.q - model.clamp(np.zeros(3))).max())
        # The configuration that made the target is one of the labelled solutions.
        assert any(same_angles(s.q, q, 1e-7) for s in result.solutions)
    assert solved > TARGETS // 2


@pytest.mark.parametrize('arm', ARMS)
def test_every_branch_reproduces_the_target_within_limits(load_arm, analytic_solver, arm):
    model, solver = load_arm(arm), analytic_solver(arm)
    shoulder = solver.workspace.shoulder
    _, targets = _fk_targets(model, 200, seed=11)
    for target in targets:
        result = solver.solve(target, options=ALL)
        if not result.success:
            continue
        labels = [s.label for s in result.solutions]
        assert len(labels) == len(set(labels)) and set(labels) <= set(BRANCHES)
        assert result.branch in labels
        for solution in result.solutions:
            assert model.within_limits(solution.q, 0.0)
            frames = model.frames(solution.q)
            assert np.linalg.norm(frames[-1, :3, 3] - target) < EXACT
            # "up": the elbow lies above the shoulder→target line (in their common plane).
            elbow, line = frames[2, :3, 3] - shoulder, target - shoulder
            normal = np.array([0.0, 0.0, 1.0]) - line[2] * line / (line @ line)
            offset = elbow @ normal / max(np.linalg.norm(normal), 1e-300)
            if np.linalg.norm(normal) > 1e-6 and abs(offset) > 1e-6:
                assert (offset > 0.0) == solution.label.endswith('elbow_up'), solution


# ------------------------------------------------------------------ branch choice
def test_named_branches_and_nearest(analytic_solver):
    solver = analytic_solver('pointer3')
    target = [0.4, 0.2, 1.5]        # high and near: all four branches within limits
    every = {s.label: s.q for s in solver.solve(target, options=ALL).solutions}
    assert set(every) == set(BRANCHES)
    for label, q in every.items():
        named = solver.solve(target, options=SolveOptions(branch=label))
        assert named.success and named.branch == label
        np.testing.assert_array_equal(named.q, q)
        # A seed right next to a solution picks that solution.
        nearest = solver.solve(target, seed=q + 0.01, options=SolveOptions(branch='nearest'))
        assert nearest.branch == label
        assert nearest.max_joint_step == pytest.approx(0.01, abs=1e-9)


def test_unknown_branch_lists_the_valid_ones(analytic_solver):
    result = analytic_solver('pointer3').solve([0.9, 0.4, 1.1],
                                               options=SolveOptions(branch='elbow_sideways'))
    assert result.code == ErrorCode.INVALID_INPUT
    assert all(label in result.reason for label in BRANCHES)


@pytest.mark.parametrize('arm', ARMS)
def test_named_branch_past_a_limit_is_refused(load_arm, analytic_solver, arm):
    model, solver = load_arm(arm), analytic_solver(arm)
    _, targets = _fk_targets(model, 300, seed=5)
    refused = 0
    for target in targets:
        every = solver.solve(target, options=ALL)
        if not every.success:
            continue
        for label in set(BRANCHES) - {s.label for s in every.solutions}:
            result = solver.solve(target, options=SolveOptions(branch=label))
            assert result.code == ErrorCode.JOINT_LIMITS
            assert any(name in result.reason for name in model.joint_names)
            assert label in result.reason
            _assert_clean(result)
            refused += 1
    assert refused > 0


def test_no_solution_within_limits_is_joint_limits(urdf_of):
    # An elbow that may bend only a little cannot reach a target near the shoulder.
    model = ArmModel.from_urdf(edited_urdf(
        urdf_of('manipulator3d'), {'elbow_pitch': {'limit/lower': '-0.3', 'limit/upper': '0.3'}}))
    result = _solver(model, 0.0).solve([0.3, 0.0, 0.1])
    assert result.code == ErrorCode.JOINT_LIMITS
    assert 'elbow_pitch' in result.reason
    _assert_clean(result)


def test_multi_turn_joint_takes_the_turn_nearest_the_seed(urdf_of):
    model = ArmModel.from_urdf(edited_urdf(
        urdf_of('pointer3'), {'base_yaw': {'limit/lower': '-6.0', 'limit/upper': '6.0'}}))
    solver = _solver(model, 0.1)
    cases = (([0.9, -0.4, 1.1], 0.0, -math.atan2(0.4, 0.9)),
             ([0.9, -0.4, 1.1], 5.5, 2 * math.pi - math.atan2(0.4, 0.9)),
             ([0.9, 0.4, 1.1], -4.0, math.atan2(0.4, 0.9) - 2 * math.pi),
             ([0.9, 0.4, 1.1], 5.5, math.atan2(0.4, 0.9)))      # + 2π would pass 6 rad
    for target, seed_yaw, expected in cases:
        target = np.array(target)
        seed = [seed_yaw, 1.0, -1.5]
        result = solver.solve(target, seed=seed, options=SolveOptions(branch='elbow_up'))
        assert result.success and result.q[0] == pytest.approx(expected, abs=1e-12)
        q, codes = solver.solve_batch(target[None, :], seed=seed)
        assert codes[0] == ErrorCode.OK
        np.testing.assert_allclose(q[0], result.q, atol=1e-12)


def test_target_on_the_yaw_axis_keeps_the_seed_yaw(load_arm, analytic_solver):
    model, solver = load_arm('pointer3'), analytic_solver('pointer3')
    target = np.array([0.0, 0.0, 0.405 + 1.2])
    for yaw in (-2.0, 0.0, 0.7, 3.0):
        result = solver.solve(target, seed=[yaw, 0.5, -1.0])
        assert result.success, result.reason
        assert result.q[0] == pytest.approx(yaw, abs=1e-12)
        assert np.linalg.norm(model.fk(result.q)[:3, 3] - target) < EXACT


# ------------------------------------------------------------------ refusals
def _bad_targets(solver: AnalyticSolver):
    shoulder = solver.workspace.shoulder
    reach = solver.workspace.max_reach
    return [
        ([math.nan, 0.0, 1.0], ErrorCode.INVALID_INPUT),
        ([math.inf, 0.0, 1.0], ErrorCode.INVALID_INPUT),
        ([0.5, -math.inf, 1.0], ErrorCode.INVALID_INPUT),
        ([1e308, 1e308, 1e308], ErrorCode.OUT_OF_REACH),
        ([-1e308, 0.0, 1e308], ErrorCode.OUT_OF_REACH),
        ([0.5, 1.0], ErrorCode.INVALID_INPUT),
        ([0.5, 1.0, 1.0, 0.0], ErrorCode.INVALID_INPUT),
        (np.zeros((3, 3)), ErrorCode.INVALID_INPUT),
        ('0.5 0 1', ErrorCode.INVALID_INPUT),
        (None, ErrorCode.INVALID_INPUT),
        ([0.5, 'a', 1.0], ErrorCode.INVALID_INPUT),
        (shoulder + [0.0, reach * 0.6, reach * 0.8 + 1e-6], ErrorCode.OUT_OF_REACH),
    ]


@pytest.mark.parametrize('arm', ARMS)
def test_bad_and_unreachable_targets_give_their_codes(analytic_solver, arm):
    solver = analytic_solver(arm)
    for target, code in _bad_targets(solver):
        result = solver.solve(target)
        assert result.code == code, (target, result)
        _assert_clean(result)


def test_below_min_height_and_inner_hole(load_arm, analytic_solver):
    pointer = analytic_solver('pointer3')
    low = pointer.solve([0.8, 0.0, 0.405 + 0.05])
    assert low.code == ErrorCode.BELOW_MIN_HEIGHT
    _assert_clean(low)
    desk = analytic_solver('manipulator3d')
    assert desk.solve([0.5, 0.0, -0.01]).code == ErrorCode.BELOW_MIN_HEIGHT
    hole = desk.solve([0.05, 0.0, 0.02])
    assert hole.code == ErrorCode.INSIDE_INNER_HOLE
    _assert_clean(hole)
    # Without the height rule the pointer's hole (|l1 − l2| = 0.1 m) shows as well.
    free = _solver(load_arm('pointer3'), None)
    assert free.solve([0.03, 0.0, 0.405 - 0.05]).code == ErrorCode.INSIDE_INNER_HOLE


def test_bad_seed_and_options_are_invalid_input(analytic_solver):
    solver = analytic_solver('pointer3')
    for seed in ([0.0, 0.0], [0.0, math.nan, 0.0], 'abc', np.zeros(4)):
        result = solver.solve([0.9, 0.4, 1.1], seed=seed)
        assert result.code == ErrorCode.INVALID_INPUT and 'seed' in result.reason
    result = solver.solve([0.9, 0.4, 1.1], options=SolveOptions(tolerance=-1.0))
    assert result.code == ErrorCode.INVALID_INPUT
    result = solver.solve([0.9, 0.4, 1.1], [0, 0, 0, 1], GoalType.FULL_POSE)
    assert result.code == ErrorCode.SOLVER_NOT_APPLICABLE


@pytest.mark.parametrize('arm', ARMS)
def test_full_stretch_and_one_ulp_past_never_give_nan(analytic_solver, arm):
    solver = analytic_solver(arm)
    g = solver.geometry
    shoulder = np.array(g.shoulder)
    reach = g.l1 + g.l2
    for direction in ([1.0, 0.0, 0.3], [0.3, -0.5, 1.0], [0.0, 0.0, 1.0]):
        unit = np.asarray(direction) / np.linalg.norm(direction)
        distances = [reach, math.nextafter(reach, math.inf), reach + 5e-13,
                     math.nextafter(reach + 1e-12, math.inf) + 1e-15, reach + 1e-9]
        for distance in distances:
            target = shoulder + distance * unit
            for options in (SolveOptions(), SolveOptions(branch='elbow_down')):
                result = solver.solve(target, options=options)
                if distance <= reach + 1e-12:
                    assert result.success, (distance, result.reason)
                    assert np.all(np.isfinite(result.q))
                    assert result.position_error < 1e-11
                else:
                    assert result.code in (ErrorCode.OK, ErrorCode.OUT_OF_REACH)
                    if result.success:
                        assert np.all(np.isfinite(result.q))
            q, codes = solver.solve_batch(target[None, :])
            assert codes[0] in (ErrorCode.OK, ErrorCode.OUT_OF_REACH)
            assert codes[0] != ErrorCode.OK or np.all(np.isfinite(q))


def test_wrap_into_limits():
    assert wrap_into(3 * math.pi / 2, -math.pi, math.pi) == pytest.approx(-math.pi / 2)
    assert wrap_into(-math.pi - 1e-12, -math.pi, math.pi) == -math.pi
    assert wrap_into(2.9, -2.8, 2.8) is None
    assert wrap_into(2.8 + 5e-10, -2.8, 2.8) == 2.8


# ------------------------------------------------------------------ determinism, batch
def test_deterministic(analytic_solver):
    solver = analytic_solver('pointer3')
    first = solver.solve([0.9, 0.4, 1.1], options=ALL)
    second = solver.solve([0.9, 0.4, 1.1], options=ALL)
    assert first.branch == second.branch
    np.testing.assert_array_equal(first.q, second.q)
    assert [(s.label, s.q.tolist()) for s in first.solutions] == \
        [(s.label, s.q.tolist()) for s in second.solutions]
    targets = _fk_targets(solver.model, 100)[1]
    q1, c1 = solver.solve_batch(targets)
    q2, c2 = solver.solve_batch(targets)
    np.testing.assert_array_equal(q1, q2)
    np.testing.assert_array_equal(c1, c2)


def _mixed_targets(solver: AnalyticSolver, count: int = 600) -> np.ndarray:
    rng = np.random.default_rng(21)
    reach = solver.workspace.max_reach
    targets = solver.workspace.shoulder + rng.uniform(-1.1 * reach, 1.1 * reach, (count, 3))
    targets[::37] = np.nan
    targets[5::41, 1] = np.inf
    targets[7::43] = 1e308
    targets[9::47] = solver.workspace.shoulder            # inside the hole
    targets[11::53] = solver.workspace.shoulder + [0.0, 0.0, 0.5]   # on the yaw axis
    return targets


@pytest.mark.parametrize('arm', ARMS)
@pytest.mark.parametrize('branch', BRANCHES + ('nearest',))
def test_batch_matches_scalar(analytic_solver, arm, branch):
    solver = analytic_solver(arm)
    targets = _mixed_targets(solver)
    seed = [0.4, 0.8, -0.6]
    q, codes = solver.solve_batch(targets, branch=branch, seed=seed)
    assert q.shape == (len(targets), 3) and codes.shape == (len(targets),)
    options = SolveOptions(branch=branch)
    for row, target in enumerate(targets):
        result = solver.solve(target, seed=seed, options=options)
        assert codes[row] == result.code, (row, target, result.reason)
        if result.success:
            np.testing.assert_allclose(q[row], result.q, atol=1e-12)
        else:
            assert np.all(np.isnan(q[row]))
    assert {int(c) for c in codes} >= {ErrorCode.OK, ErrorCode.INVALID_INPUT,
                                       ErrorCode.OUT_OF_REACH}


def test_batch_rejects_bad_arguments(analytic_solver):
    solver = analytic_solver('pointer3')
    with pytest.raises(ValueError):
        solver.solve_batch(np.zeros((4, 2)))
    with pytest.raises(ValueError):
        solver.solve_batch(np.zeros((4, 3)), branch='sideways')
    q, codes = solver.solve_batch(np.zeros((0, 3)))
    assert q.shape == (0, 3) and codes.shape == (0,)
