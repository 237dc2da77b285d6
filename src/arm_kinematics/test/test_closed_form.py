"""Closed-form spherical-wrist solver (closed_form) on the real six_axis description."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

from arm_kinematics.common.transforms import matrix_to_quaternion, rotation_error
from arm_kinematics.ik.closed_form.spherical_wrist import (
    BRANCHES,
    parse_orientation,
    SphericalWristSolver,
)
from arm_kinematics.ik.result import ErrorCode, GoalType
from arm_kinematics.ik.solvers.base import SolveOptions, workspace_from_model
from arm_kinematics.model.arm_model import ArmModel
from arm_testing.ik_checks import same_angles
from arm_testing.urdf_edits import edited_urdf

TARGETS = 500
EXACT = 1e-9        # m and rad: a closed form must reproduce its pose to rounding
ALL = SolveOptions(return_all=True)
FULL = GoalType.FULL_POSE


def _solver(model: ArmModel) -> SphericalWristSolver:
    return SphericalWristSolver(model, workspace_from_model(model))


@pytest.fixture(scope='module')
def six(load_arm):
    model = load_arm('six_axis')
    return model, _solver(model)


def _poses(model: ArmModel, count: int = TARGETS, seed: int = 17):
    q = model.random_configurations(count, np.random.default_rng(seed))
    return q, model.fk_batch(q)


def _pose_error(model: ArmModel, q: np.ndarray, pose: np.ndarray) -> tuple[float, float]:
    reached = model.fk(q)
    return (float(np.linalg.norm(reached[:3, 3] - pose[:3, 3])),
            float(np.linalg.norm(rotation_error(reached[:3, :3], pose[:3, :3]))))


def _assert_clean(result) -> None:
    assert not result.success
    assert result.q is None and result.tip_position is None
    assert not math.isnan(result.position_error) and result.reason


def _edited(urdf: str, edits: dict[str, dict[str, str]]) -> ArmModel:
    """The arm of the URDF with attributes of joint sub-elements changed (edited_urdf)."""
    return ArmModel.from_urdf(edited_urdf(urdf, edits))


def _assert_every_solution_reaches(model: ArmModel, result, pose: np.ndarray) -> None:
    for solution in result.solutions:
        position_error, orientation_error = _pose_error(model, solution.q, pose)
        assert position_error < EXACT and orientation_error < EXACT, solution


# ------------------------------------------------------------------ applicability
def test_applies_to_six_axis_only(load_arm):
    assert SphericalWristSolver.applicability(load_arm('six_axis')) == ''
    for arm in ('pointer3', 'ccd5', 'manipulator3d'):
        model = load_arm(arm)
        reason = SphericalWristSolver.applicability(model)
        assert '6 joints' in reason
        result = _solver(model).solve([0.5, 0.0, 1.0])
        assert result.code == ErrorCode.SOLVER_NOT_APPLICABLE and result.reason == reason


def test_wrist_that_is_not_spherical_is_refused(urdf_of):
    model = _edited(urdf_of('six_axis'), {'wrist_pitch': {'origin/xyz': '0.05 0 0'}})
    assert 'do not meet' in SphericalWristSolver.applicability(model)
    model = _edited(urdf_of('six_axis'), {'shoulder_pitch': {'axis/xyz': '1 0 0'}})
    assert 'parallel' in SphericalWristSolver.applicability(model)


def test_forward_pose_matches_the_model(six):
    model, solver = six
    configurations, poses = _poses(model, 200, seed=2)
    for q, pose in zip(configurations, poses, strict=True):
        position, rotation = solver.forward_pose(q)
        np.testing.assert_allclose(position, pose[:3, 3], atol=1e-12)
        np.testing.assert_allclose(np.reshape(rotation, (3, 3)), pose[:3, :3], atol=1e-12)


# ------------------------------------------------------------------ full pose
def test_full_pose_round_trip_500(six):
    model, solver = six
    configurations, poses = _poses(model)
    for q, pose in zip(configurations, poses, strict=True):
        quaternion = matrix_to_quaternion(pose[:3, :3])
        result = solver.solve(pose[:3, 3], quaternion, FULL, options=ALL)
        assert result.success, result.reason
        position_error, orientation_error = _pose_error(model, result.q, pose)
        assert position_error < EXACT and orientation_error < EXACT
        assert result.position_error < EXACT and result.orientation_error < EXACT
        np.testing.assert_allclose(result.tip_position, pose[:3, 3], atol=EXACT)
        assert model.within_limits(result.q, 0.0) and result.branch in BRANCHES
        labels = [s.label for s in result.solutions]
        assert len(labels) == len(set(labels)) and result.branch in labels
        for solution in result.solutions:
            assert model.within_limits(solution.q, 0.0)
            position_error, orientation_error = _pose_error(model, solution.q, pose)
            assert position_error < EXACT and orientation_error < EXACT, solution
        # The configuration that made the pose is among the solutions (mod 2π).
        assert any(same_angles(s.q, q, 1e-6) for s in result.solutions), q


def test_all_eight_labels_when_limits_allow(urdf_of):
    # With limits wide open every pose has its 8 distinct solutions.
    wide = {name: {'limit/lower': '-6.2', 'limit/upper': '6.2'}
            for name in ('base_yaw', 'shoulder_pitch', 'elbow_pitch', 'wrist_roll',
                         'wrist_pitch', 'tool_roll')}
    model = _edited(urdf_of('six_axis'), wide)
    solver = _solver(model)
    shoulder = np.array(solver.geometry.shoulder)
    _, poses = _poses(model, 100, seed=4)
    for pose in poses:
        result = solver.solve(pose[:3, 3], pose[:3, :3], FULL, options=ALL)
        assert sorted(s.label for s in result.solutions) == sorted(BRANCHES)
        for solution in result.solutions:
            frames = model.frames(solution.q)
            assert np.linalg.norm(frames[-1, :3, 3] - pose[:3, 3]) < EXACT
            # Labels mean what they say: the wrist bend sign, and the elbow above or
            # below the shoulder→wrist-centre line.
            assert (math.remainder(solution.q[4], 2 * math.pi) >= 0.0) == \
                solution.label.endswith('_noflip')
            elbow, line = frames[2, :3, 3] - shoulder, frames[3, :3, 3] - shoulder
            normal = np.array([0.0, 0.0, 1.0]) - line[2] * line / (line @ line)
            if np.linalg.norm(normal) > 1e-6:
                offset = elbow @ normal / np.linalg.norm(normal)
                if abs(offset) > 1e-6:
                    assert (offset > 0.0) == ('_up_' in solution.label), solution


@pytest.mark.parametrize('edits', [
    # Axis signs flipped (the frame B is then not the base frame) and a rotated tool.
    {'shoulder_pitch': {'axis/xyz': '0 -1 0'}, 'elbow_pitch': {'axis/xyz': '0 -1 0'},
     'base_yaw': {'axis/xyz': '0 0 -1'}},
    {'wrist_roll': {'axis/xyz': '0 0 -1'}, 'tool_roll': {'axis/xyz': '0 0 -1'},
     'elbow_pitch': {'axis/xyz': '0 -1 0'}},
])
def test_geometry_and_signs_come_from_the_urdf(urdf_of, edits):
    urdf = urdf_of('six_axis', h='0.3', L1='0.7', L2='1.1', L3='0.15', L4='0.2')
    root = ElementTree.fromstring(urdf)
    for joint in root.findall('joint'):
        if joint.get('type') == 'fixed' and joint.find('child').get('link') == 'tool0':
            joint.find('origin').set('rpy', '0.3 -0.2 0.5')
    model = _edited(ElementTree.tostring(root, encoding='unicode'), edits)
    solver = _solver(model)
    assert (solver.geometry.l1, solver.geometry.l2) == pytest.approx((0.7, 1.1), abs=1e-12)
    configurations, poses = _poses(model, 200, seed=8)
    for q, pose in zip(configurations, poses, strict=True):
        result = solver.solve(pose[:3, 3], pose[:3, :3], FULL, options=ALL)
        assert result.success, result.reason
        assert any(same_angles(s.q, q, 1e-6) for s in result.solutions)
        _assert_every_solution_reaches(model, result, pose)


def test_straight_wrist_keeps_the_seed_q4(six):
    model, solver = six
    q = np.array([0.4, 0.5, 0.9, 0.0, 0.0, 0.3])       # q5 = 0: q4 and q6 share one axis
    pose = model.fk(q)
    for seed_q4 in (-1.0, 0.0, 0.7):
        seed = q.copy()
        seed[3], seed[5] = seed_q4, 0.0
        result = solver.solve(pose[:3, 3], pose[:3, :3], FULL, seed=seed, options=ALL)
        assert result.success and result.branch.endswith('noflip')
        assert result.q[3] == pytest.approx(seed_q4, abs=1e-9)
        _assert_every_solution_reaches(model, result, pose)


def test_wrist_centre_on_the_yaw_axis_keeps_the_seed_yaw(six):
    model, solver = six
    pose = model.fk(np.array([0.7, 0.0, 0.0, 0.4, 0.9, -0.3]))     # arm straight up
    for yaw in (-1.0, 0.0, 0.7, 2.5):
        seed = np.array([yaw, 0.0, 0.0, 0.0, 0.5, 0.0])
        result = solver.solve(pose[:3, 3], pose[:3, :3], FULL, seed=seed, options=ALL)
        assert result.success, result.reason
        assert result.q[0] == pytest.approx(yaw, abs=1e-12)
        _assert_every_solution_reaches(model, result, pose)


def test_orientation_forms_agree(six):
    model, solver = six
    pose = model.fk(np.array([0.3, 0.4, 0.8, 0.2, 0.7, -0.4]))
    quaternion = np.array(matrix_to_quaternion(pose[:3, :3]))
    results = [solver.solve(pose[:3, 3], orientation, FULL) for orientation in
               (quaternion, 3.0 * quaternion, -quaternion, pose[:3, :3], pose[:3, :3].tolist(),
                pose[:3, :3] + 1e-9)]
    for result in results:
        assert result.success and result.branch == results[0].branch
        np.testing.assert_allclose(result.q, results[0].q, atol=1e-8)


def test_bad_orientations_are_invalid_input(six):
    _, solver = six
    target = [0.8, 0.2, 1.5]
    for orientation in (None, [0, 0, 0, 0], [0, 0, math.nan, 1], [1, 0, 0], np.eye(3) * 2,
                        np.diag([1.0, 1.0, -1.0]), 'up', [[1, 0], [0, 1]], [1e200] * 4):
        result = solver.solve(target, orientation, FULL)
        assert result.code == ErrorCode.INVALID_INPUT, orientation
        _assert_clean(result)
    assert parse_orientation([0, 0, 0, 2])[0] == pytest.approx((1, 0, 0, 0, 1, 0, 0, 0, 1))


def test_wrist_centre_out_of_reach_for_the_orientation(six):
    _, solver = six
    shoulder = np.array(solver.geometry.shoulder)
    target = shoulder + [2.0, 0.0, 0.0]
    # Tool pointing back at the shoulder puts the wrist centre 2.52 m out.
    pointing_back = np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    result = solver.solve(target, pointing_back, FULL)
    assert result.code == ErrorCode.OUT_OF_REACH and 'wrist centre' in result.reason
    _assert_clean(result)
    inward = solver.solve(shoulder + [0.0, 0.0, 0.55], np.eye(3), FULL)
    assert inward.code == ErrorCode.INSIDE_INNER_HOLE
    _assert_clean(inward)


# ------------------------------------------------------------------ branches
def test_named_branch_nearest_and_unknown(six):
    model, solver = six
    pose = model.fk(np.array([0.3, 0.4, 0.8, 0.2, 0.7, -0.4]))
    every = {s.label: s.q for s in solver.solve(pose[:3, 3], pose[:3, :3], FULL,
                                                options=ALL).solutions}
    assert len(every) >= 2
    for label, q in every.items():
        named = solver.solve(pose[:3, 3], pose[:3, :3], FULL,
                             options=SolveOptions(branch=label))
        assert named.success and named.branch == label
        np.testing.assert_array_equal(named.q, q)
        nearest = solver.solve(pose[:3, 3], pose[:3, :3], FULL, seed=q + 0.01)
        assert nearest.branch == label
    for label in set(BRANCHES) - set(every):
        refused = solver.solve(pose[:3, 3], pose[:3, :3], FULL,
                               options=SolveOptions(branch=label))
        assert refused.code == ErrorCode.JOINT_LIMITS and label in refused.reason
        assert any(name in refused.reason for name in model.joint_names)
        _assert_clean(refused)
    unknown = solver.solve(pose[:3, 3], pose[:3, :3], FULL, options=SolveOptions(branch='up'))
    assert unknown.code == ErrorCode.INVALID_INPUT
    assert all(label in unknown.reason for label in BRANCHES)


# ------------------------------------------------------------------ other goals
def test_position_goal_keeps_the_seed_orientation(six):
    model, solver = six
    configurations, poses = _poses(model, 200, seed=9)
    rng = np.random.default_rng(10)
    for q, pose in zip(configurations, poses, strict=True):
        # Seeded with the configuration itself, the answer is that configuration.
        result = solver.solve(pose[:3, 3], goal=GoalType.POSITION, seed=q)
        assert result.success and same_angles(result.q, q, 1e-7)
        assert result.orientation_error == 0.0
        # From a nearby seed the tool keeps the seed's orientation.
        seed = model.clamp(q + rng.normal(0.0, 0.05, 6))
        result = solver.solve(pose[:3, 3], goal=GoalType.POSITION, seed=seed)
        assert result.success, result.reason
        reached = model.fk(result.q)
        assert np.linalg.norm(reached[:3, 3] - pose[:3, 3]) < EXACT
        assert model.within_limits(result.q, 0.0)


def test_position_goal_holds_a_wrist_when_the_seed_orientation_cannot_reach(six):
    model, solver = six
    shoulder = np.array(solver.geometry.shoulder)
    # From the straight-up home pose these need another tool orientation.
    for target in (shoulder + [2.2, 0.0, 0.1], shoulder + [0.0, -1.5, -1.4],
                   shoulder + [0.3, 0.2, 0.1], [0.63222313, -0.00692764, 0.42885994]):
        result = solver.solve(target, goal=GoalType.POSITION)
        assert result.success, (target, result.reason)
        assert np.linalg.norm(model.fk(result.q)[:3, 3] - target) < EXACT
        assert model.within_limits(result.q, 0.0)


def test_position_goal_reaches_fk_targets_from_any_seed(six):
    model, solver = six
    rng = np.random.default_rng(14)
    _, poses = _poses(model, 300, seed=13)
    for pose in poses:
        for seed in (None, model.random_configurations(1, rng)[0]):
            result = solver.solve(pose[:3, 3], goal=GoalType.POSITION, seed=seed)
            assert result.success, result.reason
            assert np.linalg.norm(model.fk(result.q)[:3, 3] - pose[:3, 3]) < EXACT
            assert model.within_limits(result.q, 0.0)


def test_rigid_wrist_geometry_matches_the_model(six):
    model, solver = six
    for q in model.random_configurations(200, np.random.default_rng(15)):
        geometry = solver.rigid_wrist_geometry(q[3:])
        np.testing.assert_allclose(geometry.forward(*q[:3]), model.fk(q)[:3, 3], atol=1e-12)


def test_tool_down(six):
    model, solver = six
    rng = np.random.default_rng(12)
    shoulder = np.array(solver.geometry.shoulder)
    solved = 0
    for _ in range(300):
        radius, bearing = rng.uniform(0.4, 1.6), rng.uniform(-math.pi, math.pi)
        target = shoulder + [radius * math.cos(bearing), radius * math.sin(bearing),
                             rng.uniform(-1.2, 0.6)]
        seed = model.random_configurations(1, rng)[0]
        result = solver.solve(target, goal=GoalType.TOOL_DOWN, seed=seed)
        if not result.success:
            assert result.code in (ErrorCode.OUT_OF_REACH, ErrorCode.INSIDE_INNER_HOLE,
                                   ErrorCode.JOINT_LIMITS)
            continue
        solved += 1
        reached = model.fk(result.q)
        assert np.linalg.norm(reached[:3, 3] - target) < EXACT
        assert reached[:3, 2] == pytest.approx([0.0, 0.0, -1.0], abs=EXACT)
        assert result.orientation_error < EXACT and model.within_limits(result.q, 0.0)
        # The free turn about the tool axis follows the seed's tool heading.
        seed_x = model.fk(seed)[:3, 0]
        if math.hypot(seed_x[0], seed_x[1]) > 1e-3:
            assert math.atan2(reached[1, 0], reached[0, 0]) == pytest.approx(
                math.atan2(seed_x[1], seed_x[0]), abs=1e-9)
    assert solved > 250


# ------------------------------------------------------------------ refusals, determinism
def test_bad_targets_and_seeds(six):
    _, solver = six
    reach = solver.workspace.max_reach
    shoulder = solver.workspace.shoulder
    cases = [([math.nan, 0.0, 1.0], ErrorCode.INVALID_INPUT),
             ([0.0, math.inf, 1.0], ErrorCode.INVALID_INPUT),
             ([1e308, 0.0, 1e308], ErrorCode.OUT_OF_REACH),
             ([0.5, 1.0], ErrorCode.INVALID_INPUT),
             ([0.5, 1.0, 1.0, 1.0], ErrorCode.INVALID_INPUT),
             (None, ErrorCode.INVALID_INPUT),
             (shoulder + [reach + 1e-6, 0.0, 0.0], ErrorCode.OUT_OF_REACH)]
    for goal in (GoalType.POSITION, GoalType.TOOL_DOWN, FULL):
        for target, code in cases:
            result = solver.solve(target, [0, 0, 0, 1], goal)
            assert result.code == code, (goal, target, result.reason)
            _assert_clean(result)
    for seed in ([0.0] * 5, [0.0] * 5 + [math.nan], 'x'):
        result = solver.solve([0.8, 0.2, 1.5], [0, 0, 0, 1], FULL, seed=seed)
        assert result.code == ErrorCode.INVALID_INPUT and 'seed' in result.reason
    assert solver.solve([0.8, 0.2, 1.5], goal=99).code == ErrorCode.INVALID_INPUT


def test_full_stretch_never_gives_nan(six):
    model, solver = six
    # Straight arm pointing sideways: the wrist centre at exactly l1 + l2 (and past it by
    # rounding) from the shoulder.
    q = np.array([0.3, 1.2, 0.0, 0.0, 0.0, 0.0])
    pose = model.fk(q)
    for scale in (1.0, 1.0 + 2e-16, 1.0 + 1e-13):
        target = solver.workspace.shoulder + scale * (pose[:3, 3] - solver.workspace.shoulder)
        result = solver.solve(target, pose[:3, :3], FULL, options=ALL)
        assert result.code in (ErrorCode.OK, ErrorCode.OUT_OF_REACH)
        if result.success:
            assert all(np.all(np.isfinite(s.q)) for s in result.solutions)
            assert result.position_error < 1e-11


def test_deterministic(six):
    model, solver = six
    pose = model.fk(np.array([0.3, 0.4, 0.8, 0.2, 0.7, -0.4]))
    runs = [solver.solve(pose[:3, 3], pose[:3, :3], FULL, options=ALL) for _ in range(3)]
    for run in runs[1:]:
        assert run.branch == runs[0].branch
        np.testing.assert_array_equal(run.q, runs[0].q)
        assert [(s.label, s.q.tolist()) for s in run.solutions] == \
            [(s.label, s.q.tolist()) for s in runs[0].solutions]
