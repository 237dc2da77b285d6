"""Yaw + three parallel pitch (+ tool roll) arms (solvers.planar), served by ``analytic``:
the SO-101 of example-robot-data and the synthetic 4-DOF test/urdf/yaw_three_pitch.urdf.
Recognition and refusals with reasons, every solution by FK, the solution set against a
numeric search of its own (damped Newton on position + approach pitch from many seeds;
DLS for full poses),
limits, whole turns, singular targets, the POSITION sweep against a brute-force grid, and
the vectorised forms against one target at a time. ROS-free."""

from __future__ import annotations

import math
from pathlib import Path
import re

import numpy as np
import pytest

from arm_kinematics.arm import choose_solver
from arm_kinematics.description.bundled import load_model
from arm_kinematics.ik.closed_form.dispatch import PlanarAnalyticSolver
from arm_kinematics.ik.closed_form.yaw_three_pitch import PlanarFamily, recognise_planar
from arm_kinematics.ik.closed_form.yaw_three_pitch_solver import PlanarFamilySolver, SWEEP_STEPS
from arm_kinematics.ik.closed_form.yaw_two_pitch import AnalyticSolver, BRANCHES
from arm_kinematics.ik.request import IKDispatcher, IKRequest
from arm_kinematics.ik.result import ErrorCode, GoalType
from arm_kinematics.ik.solvers import solver_class
from arm_kinematics.ik.solvers.base import SolveOptions, workspace_from_model
from arm_kinematics.ik.solvers.dls import DLSSolver
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.path_ik import PathIK
from arm_testing.ik_checks import angle_gap, largest_pose_error, numeric_answers_among
from arm_testing.real_arms import REAL_ARMS
from arm_testing.urdf_edits import edited_urdf

SYNTHETIC = Path(__file__).parent / 'urdf' / 'yaw_three_pitch.urdf'
ARMS = ('so101', 'synthetic')
FK_TOLERANCE = 1e-9          # m and rad
ALL = SolveOptions(return_all=True)


def _urdf(arm: str) -> str:
    return REAL_ARMS['so101'].urdf() if arm == 'so101' else SYNTHETIC.read_text()


def _model_of(urdf: str, arm: str) -> ArmModel:
    if arm == 'so101':
        return ArmModel.from_urdf(urdf, REAL_ARMS['so101'].base, REAL_ARMS['so101'].tip)
    return ArmModel.from_urdf(urdf, 'base_link', 'tool0')


_MODELS: dict[str, ArmModel] = {}


def _model(arm: str) -> ArmModel:
    if arm not in _MODELS:
        _MODELS[arm] = _model_of(_urdf(arm), arm)
    return _MODELS[arm]


def _solver(arm: str) -> PlanarAnalyticSolver:
    model = _model(arm)
    return PlanarAnalyticSolver(model, workspace_from_model(model))


def _goals(arm: str, count: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, tip positions, approach pitches) of random configurations inside the limits."""
    model = _model(arm)
    q = model.random_configurations(count, np.random.default_rng(seed))
    return q, model.fk_batch(q)[:, :3, 3], _solver(arm).engine.approach_pitch(q)


def _goals_and_seeds(arm: str, count: int, seed: int, offset: float
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(tip positions, approach pitches, joint seeds): the goals of ``_goals`` with seeds
    ``offset`` rad from the configurations that reach them, clamped to the limits."""
    q, targets, pitches = _goals(arm, count, seed)
    return targets, pitches, _model(arm).clamp(q + offset)


def _perturbed_so101(joint: str, xyz: str) -> ArmModel:
    return _model_of(edited_urdf(_urdf('so101'), {joint: {'axis/xyz': xyz}}), 'so101')


# ---------------------------------------------------------------------- recognition
def test_so101_is_recognised_with_its_lengths_from_the_urdf():
    family = recognise_planar(_model('so101'))
    assert isinstance(family, PlanarFamily), family
    p = family.parameters
    assert p['roll'] and family.roll
    # The URDF's elbow_flex origin (-0.11257, -0.028) and wrist_flex origin
    # (-0.1349, 0.0052) in the planes of their parents; the gripper frame
    # (-0.0079, -0.000218) off the roll axis.
    assert p['l1'] == pytest.approx(math.hypot(0.11257, 0.028), abs=1e-9)
    assert p['l2'] == pytest.approx(math.hypot(0.1349, 0.0052), abs=1e-9)
    assert p['tip_off_roll'] == pytest.approx(math.hypot(0.0079, 0.000218121), abs=1e-6)
    # The lift joint 3 cm in front of the pan axis; the pitch axes parallel to rounding.
    assert p['shoulder_forward'] == pytest.approx(0.0304, abs=1e-4)
    assert family.drift < 1e-12


def test_synthetic_arm_is_recognised_with_its_offsets():
    family = recognise_planar(_model('synthetic'))
    assert isinstance(family, PlanarFamily), family
    p = family.parameters
    assert not p['roll']
    assert p['l1'] == pytest.approx(math.hypot(0.03, 0.12), abs=1e-12)
    assert p['l2'] == pytest.approx(math.hypot(0.13, 0.01), abs=1e-12)
    assert p['lateral'] == pytest.approx(0.025, abs=1e-12)
    assert p['shoulder_forward'] == pytest.approx(0.03, abs=1e-12)
    assert p['zero_angles'][0] == pytest.approx(math.atan2(0.12, 0.03), abs=1e-12)
    assert p['zero_angles'][1] == pytest.approx(math.atan2(-0.01, 0.13), abs=1e-12)


@pytest.mark.parametrize('arm', ARMS)
def test_choose_solver_names_the_family_and_keeps_dls_for_position_goals(arm):
    # The family's position-only goals sweep the free pitch (about 6 ms a request), so the
    # default position goal stays with dls; `analytic` serves the arm by name.
    solver, reason = choose_solver(_model(arm))
    assert solver == 'dls' and 'analytic serves it by name' in reason
    assert 'yaw + three parallel pitch' in reason
    assert ('tool roll' in reason) == (arm == 'so101')
    assert solver_class('analytic') is PlanarAnalyticSolver
    assert isinstance(_solver(arm)._delegate, PlanarFamilySolver)


def test_panda_is_refused_with_the_reason():
    spec = REAL_ARMS['panda']
    model = ArmModel.from_urdf(spec.urdf(), spec.base, spec.tip)
    assert 'needs 4 or 5 joints' in recognise_planar(model)
    reason = PlanarAnalyticSolver.applicability(model)
    assert 'not yaw + three pitch: needs 4 or 5 joints' in reason and '7' in reason
    assert choose_solver(model)[0] == 'dls'


def test_a_so101_with_its_elbow_off_by_a_milliradian_is_refused_with_the_reason():
    model = _perturbed_so101('elbow_flex', '0.001 0 1')
    reason = PlanarAnalyticSolver.applicability(model)
    assert re.search(r'axes 2 and 3 are not parallel \(0\.001 rad, tolerance 1e-06\)',
                     reason), reason
    solver, words = choose_solver(model)
    assert solver == 'dls' and 'axes 2 and 3 are not parallel' in words
    answer = PlanarAnalyticSolver(model, workspace_from_model(model)).solve([0.2, 0.0, 0.2])
    assert answer.code == ErrorCode.SOLVER_NOT_APPLICABLE and 'not parallel' in answer.reason


def test_drift_inside_the_tolerance_that_the_closed_form_misses_is_refused_by_the_fk_check():
    # 1e-7 rad passes the 1e-6 geometry test; the closed form then misses FK by ~1e-8.
    reason = recognise_planar(_perturbed_so101('wrist_flex', '1e-7 0 1'))
    assert 'the yaw + three-pitch closed form misses FK by' in reason, reason


def test_a_roll_out_of_the_arm_plane_and_a_tilted_yaw_are_refused_with_the_reason():
    assert 'axis 5 is not a roll in the arm plane' in recognise_planar(
        _perturbed_so101('wrist_roll', '0 0.1 1'))
    assert 'from vertical (no base yaw' in recognise_planar(
        _perturbed_so101('shoulder_pan', '0.1 0 1'))


def test_yaw_two_pitch_arms_keep_the_analytic_solver_exactly(load_arm):
    model = load_arm('pointer3')
    facade = PlanarAnalyticSolver(model, workspace_from_model(model))
    plain = AnalyticSolver(model, workspace_from_model(model))
    assert isinstance(facade._delegate, AnalyticSolver)
    assert PlanarAnalyticSolver.applicability(model) == AnalyticSolver.applicability(model)
    for q in model.random_configurations(10, np.random.default_rng(4)):
        target = model.fk(q)[:3, 3]
        a, b = facade.solve(target, None, GoalType.POSITION, q, ALL), \
            plain.solve(target, None, GoalType.POSITION, q, ALL)
        assert (a.code, a.branch, a.reason) == (b.code, b.branch, b.reason)
        np.testing.assert_array_equal(a.q, b.q)
    assert facade.solve(target, approach_pitch=0.1).code == ErrorCode.SOLVER_NOT_APPLICABLE
    six = load_arm('six_axis')
    assert '3 joints' in PlanarAnalyticSolver.applicability(six)


# ---------------------------------------------------------------------- solutions
@pytest.mark.parametrize('arm', ARMS)
def test_every_returned_solution_reaches_the_position_and_the_pitch(arm):
    model = _model(arm)
    solver = _solver(arm)
    q, targets, pitches = _goals(arm, 40, 1)
    for q0, target, pitch in zip(q, targets, pitches):
        result = solver.solve(target, None, GoalType.POSITION, q0, ALL,
                              approach_pitch=float(pitch))
        assert result.success, result.reason
        assert result.branch in BRANCHES and result.position_error < FK_TOLERANCE
        # The configuration the goal came from is the nearest solution to itself.
        np.testing.assert_allclose(result.q, q0, atol=1e-9)
        assert result.solutions
        for solution in result.solutions:
            assert solution.label in BRANCHES and model.within_limits(solution.q)
            assert np.linalg.norm(model.fk(solution.q)[:3, 3] - target) < FK_TOLERANCE
            assert abs(solver.engine.approach_pitch(solution.q)[0] - pitch) < FK_TOLERANCE
            if model.dof == 5:
                assert solution.q[4] == q0[4]     # the roll keeps the seed's value


@pytest.mark.parametrize('arm', ARMS)
def test_tool_down(arm):
    model = _model(arm)
    solver = _solver(arm)
    seed = model.clamp(np.array([0.3, 0.5, 0.4, 0.9, 0.2][:model.dof]))
    solved = 0
    for target in ([0.2, 0.05, 0.05], [0.15, -0.1, 0.1], [0.0, 0.22, 0.08], [0.25, 0.0, 0.02],
                   [0.18, 0.12, 0.0], [0.22, -0.05, 0.1]):
        result = solver.solve(target, None, GoalType.TOOL_DOWN, seed, ALL)
        if not result.success:
            assert result.code in (ErrorCode.JOINT_LIMITS, ErrorCode.OUT_OF_REACH)
            continue
        solved += 1
        # The synthetic tool axis lies in the arm plane: -Z exactly. The SO-101's leans
        # out of it by its URDF's rounding (about 7e-6 rad), which the answer reports.
        assert result.orientation_error < (1e-9 if arm == 'synthetic' else 1e-5)
        for solution in result.solutions:
            assert np.linalg.norm(model.fk(solution.q)[:3, 3] - target) < FK_TOLERANCE
            assert abs(solver.engine.approach_pitch(solution.q)[0] + math.pi / 2) < \
                FK_TOLERANCE
    assert solved >= 3


def _numeric_solutions(arm: str, target: np.ndarray, pitch: float, roll: float | None,
                       seeds: np.ndarray) -> list[np.ndarray]:
    """Damped Newton on (position, approach pitch) in the four free joints, from each seed;
    the converged answers (no joint limits)."""
    model = _model(arm)
    engine = _solver(arm).engine

    def residual(x: np.ndarray) -> np.ndarray:
        q = np.append(x, roll) if roll is not None else x
        error = np.empty(4)
        error[:3] = model.fk(q)[:3, 3] - target
        error[3] = math.remainder(float(engine.approach_pitch(q)[0]) - pitch, 2 * math.pi)
        return error

    found = []
    for seed in seeds:
        x = seed[:4].copy()
        for _ in range(60):
            r = residual(x)
            if np.abs(r).max() < 1e-12:
                break
            jacobian = np.empty((4, 4))
            for j in range(4):
                step = np.zeros(4)
                step[j] = 1e-7
                jacobian[:, j] = (residual(x + step) - residual(x - step)) / 2e-7
            x = x - np.linalg.solve(jacobian.T @ jacobian + 1e-10 * np.eye(4), jacobian.T @ r)
        if np.abs(residual(x)).max() < 1e-10:
            found.append(np.append(x, roll) if roll is not None else x)
    return found


@pytest.mark.parametrize('arm', ARMS)
def test_solution_set_equals_a_numeric_search_from_many_seeds(arm):
    model = _model(arm)
    engine = _solver(arm).engine
    rng = np.random.default_rng(8)
    q, targets, pitches = _goals(arm, 3, 9)
    for q0, target, pitch in zip(q, targets, pitches):
        raw, ok, _ = engine.solve_raw(target[None], pitch, q0)
        ours = raw[0][ok[0]]
        # Seeds over the whole turn of every joint, not only the limits: the closed form
        # lists solutions past the limits too before they are filtered.
        seeds = rng.uniform(-math.pi, math.pi, size=(60, model.dof))
        theirs = _numeric_solutions(arm, target, float(pitch),
                                    float(q0[4]) if model.dof == 5 else None, seeds)
        assert len(theirs) >= 20
        for found in theirs:
            assert min(angle_gap(found, mine) for mine in ours) < 1e-7
        for mine in ours:
            assert min(angle_gap(found, mine) for found in theirs) < 1e-7


@pytest.mark.parametrize('arm', ARMS)
def test_full_poses_solve_the_roll_too_and_every_solution_reaches_the_pose(arm):
    model = _model(arm)
    solver = _solver(arm)
    q, _, _ = _goals(arm, 30, 14)
    for q0 in q:
        pose = model.fk(q0)
        result = solver.solve(pose[:3, 3], pose[:3, :3], GoalType.FULL_POSE,
                              model.clamp(q0 * 0.9), ALL)
        assert result.success, result.reason
        assert result.position_error < FK_TOLERANCE and result.orientation_error < FK_TOLERANCE
        assert angle_gap(result.q, q0) < 1e-9 or any(
            angle_gap(s.q, q0) < 1e-9 for s in result.solutions)
        for solution in result.solutions:
            assert model.within_limits(solution.q)
            assert largest_pose_error(model, solution.q, pose) < FK_TOLERANCE


@pytest.mark.parametrize('arm', ARMS)
def test_full_pose_solution_set_holds_every_numeric_answer(arm):
    """Independent of the closed form: DLS on the full pose from 40 seeds."""
    model = _model(arm)
    engine = _solver(arm).engine
    dls = DLSSolver(model, workspace_from_model(model))
    options = SolveOptions(tolerance=1e-11, orientation_tolerance=1e-11, max_iterations=400,
                           restarts=0, respect_limits=False)
    rng = np.random.default_rng(15)
    q, _, _ = _goals(arm, 3, 16)
    for q0 in q:
        pose = model.fk(q0)
        raw, ok, _, miss, tilt = engine.solve_pose(pose[:3, 3], pose[:3, :3], q0)
        ours = raw[ok & (miss < 1e-9) & (tilt < 1e-9)]
        seeds = rng.uniform(-math.pi, math.pi, size=(40, model.dof))
        assert numeric_answers_among(model, dls, pose, seeds, options, ours, 1e-9) > 0


def test_a_full_pose_with_the_tool_straight_down_takes_the_yaw_from_the_position():
    model = _model('so101')
    solver = _solver('so101')
    seed = model.clamp(np.array([0.3, 0.5, 0.4, 0.9, 0.2]))
    target = [0.2, 0.05, 0.05]
    down = solver.solve(target, None, GoalType.TOOL_DOWN, seed)
    assert down.success, down.reason
    reached = model.fk(down.q)[:3, :3]
    # The pose of that solution: the roll axis along the yaw axis up to the URDF's
    # rounding, so the orientation alone would leave the yaw to a few µrad of tilt.
    exact = solver.solve(target, reached, GoalType.FULL_POSE, seed, ALL)
    assert exact.success and 'roll axis along the yaw axis' in exact.reason, exact.reason
    assert exact.position_error < FK_TOLERANCE and exact.orientation_error < FK_TOLERANCE
    # Exactly -Z, as a user writes it: about 7e-6 rad away from anything the SO-101
    # reaches; solved within the orientation tolerance, the miss reported.
    heading = math.atan2(reached[1, 0], reached[0, 0])
    c, s = math.cos(heading), math.sin(heading)
    written = np.array([[c, s, 0.0], [s, -c, 0.0], [0.0, 0.0, -1.0]])
    result = solver.solve(target, written, GoalType.FULL_POSE, seed)
    assert result.success, result.reason
    assert 1e-7 < result.orientation_error < 1e-5 and result.position_error < 1e-6


def test_full_poses_the_arm_cannot_take_are_refused_with_how_far_off():
    for arm, turn, words in (('so101', 'z', 'm from the target'),
                             ('synthetic', 'z', 'm from the target'),
                             ('synthetic', 'x', 'leans the pitch axis 0.1')):
        model = _model(arm)
        pose = model.fk(model.clamp(np.full(model.dof, 0.3)))
        c, s = math.cos(0.2), math.sin(0.2)
        extra = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) if turn == 'z' else \
            np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
        # Turned about the base z (the yaw would have to turn, leaving the target), or
        # about the tool x (tilting the pitch axis, which no joint of a 4-DOF arm does; by
        # 0.2 rad times the cosine of the tool x's elevation, 0.10 rad here).
        rotation = extra @ pose[:3, :3] if turn == 'z' else pose[:3, :3] @ extra
        result = _solver(arm).solve(pose[:3, 3], rotation, GoalType.FULL_POSE)
        assert result.code == ErrorCode.SOLVER_NOT_APPLICABLE and words in result.reason, \
            (arm, result.reason)
        assert 'use TOOL_DOWN, or POSITION with an approach pitch' in result.reason


def test_whole_turn_copies_of_the_yaw_are_listed_and_the_seed_picks_one():
    model = _model('synthetic')            # yaw limits ±4 rad: more than a full turn
    solver = _solver('synthetic')
    q0 = np.array([-2.6, 0.3, 0.8, -0.5])
    target = model.fk(q0)[:3, 3]
    pitch = float(solver.engine.approach_pitch(q0)[0])
    result = solver.solve(target, None, GoalType.POSITION, q0, ALL, approach_pitch=pitch)
    own = [s.q for s in result.solutions if s.label == result.branch]
    assert len(own) == 2
    assert abs(abs(own[0][0] - own[1][0]) - 2 * math.pi) < 1e-12
    np.testing.assert_allclose(own[0][1:], own[1][1:])
    shifted = q0 + [2 * math.pi, 0.0, 0.0, 0.0]
    again = solver.solve(target, None, GoalType.POSITION, shifted, approach_pitch=pitch)
    np.testing.assert_allclose(again.q, shifted, atol=1e-9)


# ---------------------------------------------------------------------- edge cases
def _narrowed_synthetic() -> PlanarAnalyticSolver:
    urdf = _urdf('synthetic').replace('lower="-2.5" upper="2.5"', 'lower="0.0" upper="2.5"') \
        .replace('lower="-4.0" upper="4.0"', 'lower="-0.5" upper="0.5"')
    model = _model_of(urdf, 'synthetic')
    return PlanarAnalyticSolver(model, workspace_from_model(model))


def test_only_out_of_limit_solutions_give_joint_limits_with_how_far_out():
    solver = _narrowed_synthetic()
    q0 = np.array([0.2, 0.3, -1.0, 0.4])          # the elbow below its new lower limit
    target = _model('synthetic').fk(q0)[:3, 3]
    pitch = float(solver.engine.approach_pitch(q0)[0])
    result = solver.solve(target, None, GoalType.POSITION, q0, approach_pitch=pitch)
    assert result.code == ErrorCode.JOINT_LIMITS and result.q is None
    assert re.search(r'every solution breaks a joint limit; the nearest, elbow_up: elbow '
                     r'would need -57\.3°, 57\.3° outside its limits \[0\.0°, 143\.2°\] '
                     r'\(4 branches out of limits\)', result.reason), result.reason
    named = solver.solve(target, None, GoalType.POSITION, q0,
                         SolveOptions(branch='flipped_elbow_up'), approach_pitch=pitch)
    assert named.code == ErrorCode.JOINT_LIMITS
    assert named.reason.startswith('flipped_elbow_up: yaw would need')


def test_a_stretched_arm_gives_a_defined_answer_and_says_so():
    solver = _solver('synthetic')
    model = _model('synthetic')
    e = solver.engine
    tri = e.triangle.tri
    straight = math.atan2(tri[1], tri[0])      # the elbow angle of a straight arm
    q0 = np.array([0.2, 0.1, straight, 0.3])
    target = model.fk(q0)[:3, 3]
    pitch = float(e.approach_pitch(q0)[0])
    result = solver.solve(target, None, GoalType.POSITION, q0, ALL, approach_pitch=pitch)
    assert result.success and 'arm stretched' in result.reason, result.reason
    for solution in result.solutions:
        assert np.all(np.isfinite(solution.q))
        assert np.linalg.norm(model.fk(solution.q)[:3, 3] - target) < FK_TOLERANCE


def test_a_target_on_the_yaw_axis_keeps_the_seed_yaw_and_says_so():
    # The synthetic arm with its shoulder moved into the yaw axis's plane: no lateral offset.
    model = _model_of(_urdf('synthetic').replace('xyz="0.03 0.025 0.06"', 'xyz="0.03 0 0.06"'),
                      'synthetic')
    solver = PlanarAnalyticSolver(model, workspace_from_model(model))
    seed = np.array([0.7, 0.2, 0.3, 0.1])
    result = solver.solve([0.0, 0.0, 0.3], None, GoalType.POSITION, seed, ALL,
                          approach_pitch=0.4)
    assert result.success and 'shoulder singular' in result.reason, result.reason
    raw, ok, _ = solver.engine.solve_raw(np.array([[0.0, 0.0, 0.3]]), 0.4, seed)
    assert ok.all()
    np.testing.assert_allclose(raw[0, :, 0], [0.7, 0.7, 0.7 + math.pi, 0.7 + math.pi])
    # With no direction toward the target, the pitch is measured from the facing arm's
    # forward (the seed's yaw); the flipped solutions point the tool the same way in space.
    tool = model.fk(raw[0, 0])[:3, 2]
    for q, label in zip(raw[0], BRANCHES):
        assert np.all(np.isfinite(q))
        reached = model.fk(q)
        assert np.linalg.norm(reached[:3, 3] - [0.0, 0.0, 0.3]) < FK_TOLERANCE
        np.testing.assert_allclose(reached[:3, 2], tool, atol=FK_TOLERANCE)
        if not label.startswith('flipped'):
            assert abs(solver.engine.approach_pitch(q)[0] - 0.4) < FK_TOLERANCE


@pytest.mark.parametrize('arm', ARMS)
def test_unreachable_targets_give_finite_angles_and_their_codes(arm):
    solver = _solver(arm)
    family_solver = solver._delegate
    positions = np.array([[5.0, 0.0, 0.0], [0.0, 0.0, 0.4], [0.0, 0.0, 0.0]])
    q, valid, _ = family_solver.solve_pitches(positions, np.zeros(3))
    assert np.all(np.isfinite(q)) and not valid[0].any()
    assert solver.solve([3.0, 0.0, 0.2], approach_pitch=0.0).code == ErrorCode.OUT_OF_REACH
    # Nearer the yaw axis than the arm plane's lateral offset (synthetic: 25 mm).
    if arm == 'synthetic':
        near = solver.solve([0.01, 0.0, 0.2], approach_pitch=0.0)
        assert near.code == ErrorCode.INSIDE_INNER_HOLE, near.reason
        assert "nearer than the arm plane's lateral offset of 0.0250 m" in near.reason
    far = solver.solve([0.0, 0.3, 0.25], None, GoalType.TOOL_DOWN)
    assert far.code in (ErrorCode.OUT_OF_REACH, ErrorCode.INSIDE_INNER_HOLE), far.reason


def test_full_pose_and_bad_requests_say_why():
    solver = _solver('so101')
    target = _model('so101').fk(np.zeros(5))[:3, 3]
    assert solver.solve(target, None, GoalType.FULL_POSE).code == ErrorCode.INVALID_INPUT
    assert solver.solve(target, [0.0, 0.0, 0.0, 0.0], GoalType.FULL_POSE).code == \
        ErrorCode.INVALID_INPUT
    assert solver.solve(target, None, GoalType.TOOL_DOWN,
                        approach_pitch=0.2).code == ErrorCode.INVALID_INPUT
    assert solver.solve(target, approach_pitch=math.nan).code == ErrorCode.INVALID_INPUT
    assert solver.solve(target, seed=[0.0] * 4).code == ErrorCode.INVALID_INPUT
    assert solver.solve(target, options=SolveOptions(branch='wrist_flip')).code == \
        ErrorCode.INVALID_INPUT


# ---------------------------------------------------------------------- POSITION goals
@pytest.mark.parametrize('arm', ARMS)
def test_position_goals_sweep_the_pitch_to_the_solution_nearest_the_seed(arm):
    solver = _solver(arm)
    targets, _, seeds = _goals_and_seeds(arm, 4, 12, 0.05)
    fine = np.linspace(-math.pi, math.pi, 20 * SWEEP_STEPS, endpoint=False)
    for target, seed in zip(targets, seeds):
        result = solver.solve(target, None, GoalType.POSITION, seed)
        assert result.success, result.reason
        assert result.position_error < FK_TOLERANCE
        # No pitch on a grid 20 times finer gives a solution nearer the seed.
        brute, valid, _ = solver.solve_pitches(np.repeat(target[None], len(fine), axis=0),
                                               fine, seed)
        steps = np.abs(brute - seed).max(axis=2)[valid]
        assert result.max_joint_step <= steps.min() + 1e-6
        named = solver.solve(target, None, GoalType.POSITION, seed,
                             SolveOptions(branch='flipped_elbow_down'))
        if named.success:
            assert named.branch == 'flipped_elbow_down'
            assert named.position_error < FK_TOLERANCE


def test_a_position_the_seeds_roll_cannot_reach_falls_back_to_dls_with_the_roll_free():
    model = _model('so101')
    solver = _solver('so101')
    target = np.array([-0.2064, -0.1119, 0.3967])
    seed = np.array([-0.569, -0.240, -0.681, 1.579, -0.706])
    fine = np.linspace(-math.pi, math.pi, 20 * SWEEP_STEPS, endpoint=False)
    _, valid, _ = solver.solve_pitches(np.repeat(target[None], len(fine), axis=0), fine, seed)
    assert not valid.any()          # no pitch inside the limits with the seed's roll
    result = solver.solve(target, None, GoalType.POSITION, seed)
    assert result.success and 'roll free' in result.reason, result.reason
    assert result.position_error < SolveOptions().tolerance
    assert abs(result.q[4] - seed[4]) > 0.01       # the roll turned
    assert model.within_limits(result.q)


def test_position_goals_through_the_dispatcher_of_the_so101():
    model = _model('so101')
    dispatcher = IKDispatcher(model, workspace_from_model(model), 'analytic')
    home = model.clamp(np.zeros(5))
    target = model.fk(model.clamp(home + 0.3))[:3, 3]
    for goal in (GoalType.POSITION, GoalType.TOOL_DOWN):
        answer = dispatcher.solve(IKRequest(position=target.tolist(), goal=goal,
                                            return_all=True), SolveOptions(), home)
        if goal == GoalType.TOOL_DOWN and not answer.result.success:
            assert answer.result.code in (ErrorCode.OUT_OF_REACH, ErrorCode.JOINT_LIMITS)
            continue
        assert answer.solver == 'analytic' and answer.result.success, answer.result.reason
        assert answer.result.position_error < FK_TOLERANCE
        assert answer.result.solutions


# ---------------------------------------------------------------------- vectorised
@pytest.mark.parametrize('arm', ARMS)
def test_vectorised_equals_one_by_one(arm):
    model = _model(arm)
    solver = _solver(arm)
    targets, pitches, seeds = _goals_and_seeds(arm, 40, 6, 0.1)
    batch, valid, flags = solver.solve_pitches(targets, pitches, seeds)
    assert batch.shape == (40, 4, model.dof) and valid.shape == flags.shape == (40, 4)
    assert valid.any(axis=1).all()
    for index, target in enumerate(targets):
        for branch_index, label in enumerate(BRANCHES):
            one = solver.solve(target, None, GoalType.POSITION, seeds[index],
                               SolveOptions(branch=label),
                               approach_pitch=float(pitches[index]))
            assert one.success == bool(valid[index, branch_index]), (index, label, one.reason)
            if one.success:
                np.testing.assert_allclose(batch[index, branch_index], one.q, atol=1e-12)


@pytest.mark.parametrize('arm', ARMS)
def test_vectorised_position_goals_equal_one_by_one(arm):
    model = _model(arm)
    solver = _solver(arm)
    _, targets, _ = _goals(arm, 6, 13)
    targets = np.vstack([targets, [[9.0, 0.0, 0.0]], [[math.nan, 0.0, 0.0]]])
    seed = model.clamp(np.full(model.dof, 0.2))
    q, codes = solver.solve_batch(targets, '', seed)
    assert codes[-2] == ErrorCode.OUT_OF_REACH and codes[-1] == ErrorCode.INVALID_INPUT
    assert np.isnan(q[-2:]).all()
    for index, target in enumerate(targets[:-2]):
        one = solver.solve(target, None, GoalType.POSITION, seed)
        assert int(codes[index]) == int(one.code), one.reason
        if one.success:
            np.testing.assert_allclose(q[index], one.q, atol=1e-9)


def test_path_ik_batches_of_so101_positions_equal_one_by_one():
    model = _model('so101')
    dispatcher = IKDispatcher(model, workspace_from_model(model), 'analytic')
    home = model.clamp(np.zeros(5))
    _, targets, _ = _goals('so101', 5, 17)
    requests = [IKRequest(position=list(map(float, t))) for t in [*targets, [9.0, 0.0, 0.0]]]
    batch = PathIK(dispatcher).batch(requests, SolveOptions(), home)
    for request, answer in zip(requests, batch, strict=True):
        one = dispatcher.solve(request, SolveOptions(), home)
        assert answer.result.code == one.result.code, one.result.reason
        if one.result.success:
            assert answer.result.branch == one.result.branch
            np.testing.assert_allclose(answer.result.q, one.result.q, atol=1e-9)
            assert answer.result.position_error < FK_TOLERANCE


def test_the_bundled_arms_keep_their_solvers():
    # The four bundled arms are not of this family (3 or 5 joints of other shapes, 6).
    for arm, expected in (('pointer3', 'analytic'), ('six_axis', 'closed_form')):
        assert choose_solver(load_model(arm))[0] == expected
    reason = recognise_planar(load_model('ccd5'))
    assert isinstance(reason, str) and reason
