"""The controller rules of arm_kinematics.control, without ROS: acceptance as JTC does it,
tolerance resolution, interpolation, path/goal tolerance verdicts and the result codes (the
client's goal state machine: test_control_client_state.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arm_kinematics.control.codes import ControllerOutcome, Outcome, outcome_of_result, ResultCode
from arm_kinematics.control.goal_rules import (
    ControllerSettings,
    SampledTrajectory,
    TrajectoryGoal,
    TrajectoryGoalRules,
    TrajectoryPoint,
)
from arm_kinematics.control.tolerances import JointTolerance, SegmentTolerances
from arm_kinematics.control.tracker import GoalState, GoalTracker

JOINTS = ('a', 'b')
PATH = JointTolerance(position=0.1)
GOAL = JointTolerance(position=0.01, velocity=0.05)
DEFAULTS = SegmentTolerances(path={'a': PATH, 'b': PATH}, goal={'a': GOAL, 'b': GOAL},
                             goal_time=0.5)


@pytest.fixture
def rules():
    return TrajectoryGoalRules(ControllerSettings(JOINTS, DEFAULTS))


def goal(*points, names=JOINTS, **kwargs):
    return TrajectoryGoal(tuple(names), tuple(points), **kwargs)


def point(t, q, v=(), a=(), effort=()):
    return TrajectoryPoint(t, tuple(q), tuple(v), tuple(a), tuple(effort))


GOOD = goal(point(0.5, (0.5, 0.0)), point(1.0, (1.0, -1.0), (0.0, 0.0)))


def test_accepts_a_valid_goal_in_any_joint_order(rules):
    assert rules.accept(GOOD, now=10.0).accepted
    swapped = goal(point(1.0, (-1.0, 1.0)), names=('b', 'a'))
    assert rules.accept(swapped, now=10.0).accepted


@pytest.mark.parametrize('bad, words', [
    (goal(point(1.0, (1.0,)), names=('a',)), "don't match the controller joints"),
    (goal(names=()), "don't match the controller joints"),
    (goal(names=('a', 'b')), 'Empty trajectory received'),
    (goal(point(1.0, (1.0, 1.0)), names=('a', 'c')), "Incoming joint c doesn't match"),
    (goal(point(1.0, (1.0, 1.0)), names=('a', 'a')), 'Duplicate joint names'),
    (goal(point(1.0, (1.0, 1.0), (0.1, 0.0))), 'Velocity of last trajectory point of joint a'),
    (goal(point(1.0, (0, 0)), point(1.0, (1, 1))), 'not strictly increasing'),
    (goal(point(1.0, (0, 0)), point(0.5, (1, 1))), 'not strictly increasing'),
    (goal(point(-1.0, (0, 0))), 'negative'),
    (goal(point(1.0, (0,))), 'Mismatch between joint_names size (2) and positions (1)'),
    (goal(point(1.0, (0, 0), (0,))), 'velocities (1) at point #0'),
    (goal(point(1.0, (math.nan, 0))), 'NaN or infinite value in positions'),
    (goal(point(1.0, (math.inf, 0))), 'NaN or infinite value in positions'),
    (goal(point(1.0, (0, 0), effort=(1, 1))), 'effort'),
    (goal(point(1.0, (0, 0)), start_time=5.0), 'ends in the past'),
])
def test_rejects_as_jtc_with_its_reason(rules, bad, words):
    answer = rules.accept(bad, now=10.0)
    assert not answer.accepted
    assert words in answer.reason


def test_rejects_when_not_active_and_accepts_a_future_stamp(rules):
    assert 'not running' in rules.accept(GOOD, now=10.0, active=False).reason
    assert rules.accept(goal(point(1.0, (0, 0)), start_time=9.5), now=10.0).accepted


def test_goal_tolerances_override_defaults_erase_and_revert(rules):
    tolerances, warning = rules.tolerances(goal(
        point(1.0, (0, 0)), path_tolerance=(('a', JointTolerance(0.3)),
                                            ('b', JointTolerance(-1.0))),
        goal_time_tolerance=2.0))
    assert warning == ''
    assert tolerances.path['a'].position == 0.3 and tolerances.path['b'].position == 0.0
    assert tolerances.goal['a'] == GOAL and tolerances.goal_time == 2.0
    for bad in (('c', JointTolerance(0.3)), ('a', JointTolerance(-2.0)),
                ('a', JointTolerance(math.nan))):
        tolerances, warning = rules.tolerances(goal(point(1.0, (0, 0)), path_tolerance=(bad,)))
        assert tolerances == DEFAULTS and 'using the default tolerances' in warning


def test_linear_cubic_quintic_interpolation_meet_the_points():
    linear = SampledTrajectory(goal(point(1.0, (1.0, 2.0)), point(3.0, (3.0, 2.0))), JOINTS,
                               10.0, (0.0, 0.0))
    s = linear.sample(10.5)
    np.testing.assert_allclose(s.positions, (0.5, 1.0))
    np.testing.assert_allclose(s.velocities, (1.0, 2.0))
    assert s.index == 0 and not s.past_end
    np.testing.assert_allclose(linear.sample(12.0).positions, (2.0, 2.0))
    assert linear.sample(13.0).past_end and linear.sample(9.0).index == -1
    cubic = SampledTrajectory(goal(point(2.0, (1.0, 1.0), (0.0, 0.0))), JOINTS, 0.0, (0, 0))
    mid = cubic.sample(1.0)
    np.testing.assert_allclose(mid.positions, (0.5, 0.5))
    np.testing.assert_allclose(mid.velocities, (0.75, 0.75))
    quintic = SampledTrajectory(goal(point(2.0, (1.0, 1.0), (0, 0), (0, 0))), JOINTS, 0.0,
                                (0, 0))
    q = quintic.sample(1.0)
    np.testing.assert_allclose(q.positions, (0.5, 0.5))
    np.testing.assert_allclose(q.velocities, (0.9375, 0.9375))
    np.testing.assert_allclose(quintic.sample(2.0 - 1e-9).positions, (1, 1), atol=1e-6)


def test_tracker_succeeds_when_following(rules):
    tracker = GoalTracker(rules, GOOD, 0.0, (0.0, 0.0))
    for t in np.arange(0.0, 1.0, 0.01):
        verdict = tracker.check(t, tracker.sample(t).positions)
        assert verdict.state is GoalState.RUNNING
    done = tracker.check(1.0, (1.0, -1.0), (0.0, 0.0))
    assert done.code is ResultCode.SUCCESSFUL and done.message == 'Goal successfully reached!'
    assert tracker.check(2.0, (5.0, 5.0)).code is ResultCode.SUCCESSFUL   # stays done


def test_tracker_path_violation_names_joint_and_error(rules):
    tracker = GoalTracker(rules, GOOD, 0.0, (0.0, 0.0))
    tracker.check(0.0, (0.0, 0.0))
    verdict = tracker.check(0.4, (0.0, 0.0))       # lagging: desired a = 0.4
    assert verdict.state is GoalState.ABORTED
    assert verdict.code is ResultCode.PATH_TOLERANCE_VIOLATED
    assert "joint 'a' position error +0.4000 rad exceeds the tolerance 0.1000" in verdict.message


def test_tracker_first_point_at_zero_far_from_state_aborts_on_first_sample(rules):
    far = goal(point(0.0, (0.5, 0.0)), point(1.0, (1.0, 0.0)))
    assert [v.joint for v in rules.start_violations(far, (0.0, 0.0))] == ['a']
    assert rules.start_violations(GOOD, (0.0, 0.0)) == []
    tracker = GoalTracker(rules, far, 0.0, (0.0, 0.0))
    verdict = tracker.check(0.01, (0.0, 0.0))
    assert verdict.code is ResultCode.PATH_TOLERANCE_VIOLATED


def test_tracker_goal_tolerance_waits_goal_time_then_aborts(rules):
    tracker = GoalTracker(rules, GOOD, 0.0, (0.0, 0.0))
    tracker.check(0.0, (0.0, 0.0))
    short = (0.95, -0.95)                           # within path, outside goal tolerance
    assert tracker.check(1.2, short).state is GoalState.RUNNING
    verdict = tracker.check(1.6, short)
    assert verdict.code is ResultCode.GOAL_TOLERANCE_VIOLATED
    assert 'goal_time_tolerance exceeding by 0.6' in verdict.message
    assert "joint 'a'" in verdict.message


def test_nan_state_is_a_violation(rules):
    tracker = GoalTracker(rules, GOOD, 0.0, (0.0, 0.0))
    assert tracker.check(0.1, (math.nan, 0.0)).code is ResultCode.PATH_TOLERANCE_VIOLATED


def test_outcomes_of_results_have_their_own_words():
    messages = {outcome_of_result(code, 'x').message for code in ResultCode}
    assert len(messages) == len(ResultCode)
    unknown = outcome_of_result(-42, 'strange')
    assert unknown.outcome is Outcome.ABORTED and '-42' in unknown.message
    assert ControllerOutcome(Outcome.REJECTED).message.startswith('the controller rejected')
