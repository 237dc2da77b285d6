"""Floor rules when choosing among closed-form solutions: elbow switching, partial answers."""

from __future__ import annotations

from dataclasses import replace
import math
import re

import numpy as np
import pytest

from arm_kinematics.description.bundled import load_safety_config
from arm_kinematics.description.safety_config import LinkSpec
from arm_kinematics.ik.closed_form.yaw_two_pitch import AnalyticSolver
from arm_kinematics.ik.floor_rules import (
    choose_above_floor,
    elbow_partner,
    PARTIAL_MARGIN,
    solve_above_floor,
)
from arm_kinematics.ik.result import ErrorCode, Solution
from arm_kinematics.ik.solvers.base import SolveOptions, workspace_from_model
from arm_kinematics.scene.geometry import SafetyGeometry

SHOULDER_Z = 0.405


@pytest.fixture(scope='module')
def solver(pointer3_model):
    return AnalyticSolver(pointer3_model, workspace_from_model(pointer3_model, 0.1))


@pytest.fixture(scope='module')
def thin(pointer3_model):
    """pointer3 with 5 cm capsules, so that a target can sit below floor + radius."""
    config = load_safety_config('pointer3')
    links = tuple(LinkSpec(link.name, link.joint, 0.05) for link in config.links)
    return SafetyGeometry(pointer3_model, replace(config, links=links))


@pytest.fixture(scope='module')
def free_solver(pointer3_model):
    """The analytic solver without the 0.1 m minimum-height rule (for low targets)."""
    return AnalyticSolver(pointer3_model, workspace_from_model(pointer3_model, None))


def all_solutions(solver, target):
    result = solver.solve(target, options=SolveOptions(return_all=True))
    assert result.success, result.reason
    return result.solutions


def test_elbow_partner_labels():
    assert elbow_partner('elbow_up') == 'elbow_down'
    assert elbow_partner('elbow_down') == 'elbow_up'
    assert elbow_partner('flipped_elbow_down') == 'flipped_elbow_up'
    assert elbow_partner('') == ''


def test_clear_choice_is_kept(geometry, solver):
    target = [0.8, 0.0, 0.6]
    choice = choose_above_floor(geometry, all_solutions(solver, target), 'elbow_up', target)
    assert choice.code == ErrorCode.OK and not choice.switched and choice.message == ''
    assert choice.branch == 'elbow_up' and choice.shortfall < 1e-9
    assert choice.floor_clearance >= 0.0


def test_blocked_elbow_switches_to_the_other_and_says_so(geometry, solver):
    target = [0.8, 0.0, 0.6]
    solutions = all_solutions(solver, target)
    down = next(s.q for s in solutions if s.label == 'elbow_down')
    depth = -geometry.check_pose(down).min_floor_clearance
    assert depth > 0.0                                  # elbow down does hit the floor
    choice = choose_above_floor(geometry, solutions, 'elbow_down', target)
    assert choice.code == ErrorCode.OK and choice.switched
    assert choice.branch == 'elbow_up'
    assert choice.message == f'elbow down would hit the floor by {depth:.2f} m; using elbow up'
    assert re.fullmatch(r'elbow down would hit the floor by \d+\.\d\d m; using elbow up',
                        choice.message)
    assert geometry.check_pose(choice.q).safe
    assert choice.shortfall < 1e-9                     # the target is still reached


def test_solver_pipeline_reports_the_switch(geometry, solver):
    result, choice = solve_above_floor(solver, geometry, [1.2, 0.3, 0.6],
                                       options=SolveOptions(branch='elbow_down'))
    assert result.success and result.branch == 'elbow_up' and choice.switched
    assert result.reason.startswith('elbow down would hit the floor by ')
    assert result.position_error < 1e-9
    assert result.solutions == []                      # the caller did not ask for them


def test_below_minimum_height_is_refused_before_the_rules(geometry, solver):
    result, choice = solve_above_floor(solver, geometry, [1.0, 0.0, SHOULDER_Z + 0.05])
    assert result.code == ErrorCode.BELOW_MIN_HEIGHT and choice is None


def test_both_blocked_gives_the_closest_pose_above_the_floor(thin, free_solver):
    # The wrist must stay 0.05 m (its capsule radius) above the floor: a target at
    # z = 0.02 m is 0.03 m too low for every solution. The closest clear pose keeps its tip
    # at 0.05 m + the 1 mm margin straight above the target.
    target = [1.2, 0.0, 0.02]
    solutions = all_solutions(free_solver, target)
    choice = choose_above_floor(thin, solutions, 'elbow_up', target)
    expected = 0.05 + PARTIAL_MARGIN - 0.02
    assert choice.code == ErrorCode.PARTIAL_SOLUTION and choice.switched
    assert choice.shortfall == pytest.approx(expected, abs=1e-3)
    assert choice.tip[2] == pytest.approx(0.02 + expected, abs=1e-3)
    # Sideways the distance changes only to second order: a few mm of grid slack is allowed.
    assert choice.tip[:2] == pytest.approx([1.2, 0.0], abs=5e-3)
    assert np.linalg.norm(choice.tip - target) == pytest.approx(choice.shortfall, abs=1e-9)
    check = thin.check_pose(choice.q)
    assert check.safe and check.min_floor_clearance >= PARTIAL_MARGIN - 1e-12
    assert choice.floor_clearance == pytest.approx(check.min_floor_clearance)
    assert thin.model.within_limits(choice.q)
    assert re.fullmatch(r'elbow up would hit the floor by 0\.03 m and elbow down by \d\.\d\d m; '
                        r'the closest pose above the floor is 0\.03\d m short of the target',
                        choice.message), choice.message


def test_partial_answer_through_the_solver_is_never_success(thin, free_solver):
    result, choice = solve_above_floor(free_solver, thin, [0.6, 0.3, 0.0])
    assert result.code == ErrorCode.PARTIAL_SOLUTION and not result.success
    assert result.position_error == pytest.approx(choice.shortfall)
    assert result.q is not None and thin.check_pose(result.q).safe
    # From above, the closest clear tip height is floor + radius + margin.
    assert choice.shortfall == pytest.approx(0.05 + PARTIAL_MARGIN, abs=1e-3)


def test_no_clear_pose_at_all_is_a_floor_collision(pointer3_model, solver):
    # Floor 0.1 m under the shoulder with 0.25 m capsules: the upper arm's capsule around the
    # shoulder is always below it, so no pose of the arm is clear.
    high = SafetyGeometry(pointer3_model, replace(load_safety_config('pointer3'),
                                            floor_below_shoulder=0.1))
    target = [0.8, 0.0, 0.6]
    choice = choose_above_floor(high, all_solutions(solver, target), 'elbow_up', target)
    assert choice.code == ErrorCode.FLOOR_COLLISION and choice.q is None
    assert 'no pose of the arm stays above the floor' in choice.message
    assert math.isinf(choice.shortfall)


def test_floor_disabled_leaves_the_answer_alone(pointer3_model, solver):
    off = SafetyGeometry(pointer3_model,
                         replace(load_safety_config('pointer3'), floor_enabled=False))
    result, choice = solve_above_floor(solver, off, [0.8, 0.0, 0.6],
                                       options=SolveOptions(branch='elbow_down'))
    assert result.success and result.branch == 'elbow_down' and choice is None


def test_unknown_chosen_label_is_a_programming_error(geometry):
    with pytest.raises(ValueError, match='not among the solutions'):
        choose_above_floor(geometry, [Solution('elbow_up', np.zeros(3))], 'elbow_down',
                           [1.0, 0.0, 1.0])
