"""The client's goal state machine (arm_kinematics.control.client_state), without ROS: bounded
waits, lateness measured in the controller's own time, "lost" only on silence or a sustained
absence of the server, a cancel owed for every goal given up on, the worst joint named in a
tolerance failure, and a replaced goal's preemption as the expected end."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arm_kinematics.control.client_state import (
    ClientState,
    ControllerGoalMonitor,
    FeedbackErrors,
    FIRST_FEEDBACK_WAIT,
    STATUS_ABORTED,
    STATUS_CANCELED,
    STATUS_SUCCEEDED,
    Waits,
    worst_joint,
)
from arm_kinematics.control.codes import motion_code_of, Outcome, ResultCode
from arm_kinematics.control.settings import SILENCE_FLOOR, waits_of
from arm_kinematics.control.tolerances import ERASED, JointTolerance
from arm_kinematics.description.controller_config import ControllerConfig
from arm_kinematics.motion.errors import MotionCode

WAITS = Waits(server_wait=1.0, response_wait=1.0, silence_timeout=0.5, result_margin=1.0,
              cancel_wait=0.5, absence_wait=0.3, settle_wait=5.0, stretch_limit=10.0)
JOINTS = ('shoulder_pan_joint', 'elbow_joint')
PATH = {j: JointTolerance(position=0.1) for j in JOINTS}
GOAL = {j: JointTolerance(position=0.01, velocity=0.02) for j in JOINTS}


def active(duration: float = 2.0, goal_time: float = 0.5, interval: float = 0.0
           ) -> ControllerGoalMonitor:
    """A monitor whose goal was accepted at t = 0.1."""
    m = ControllerGoalMonitor(WAITS, duration, goal_time, 0.0, PATH, GOAL, interval)
    assert m.server_ready(0.0) and m.state is ClientState.SENT
    m.response(True, 0.1)
    assert m.state is ClientState.ACTIVE
    return m


def run(m: ControllerGoalMonitor, t0: float, t1: float, rate: float = 1.0,
        period: float = 0.05) -> float:
    """Steady feedback every ``period`` from t0 to t1 whose controller time advances at
    ``rate`` per wall second; returns the last controller time sent."""
    controller = 0.0
    for t in np.arange(t0, t1, period):
        controller = (t - 0.1) * rate
        m.feedback(t, controller)
        assert m.poll(t) is None, m.outcome.message
    return controller


def test_server_missing_then_success():
    missing = ControllerGoalMonitor(WAITS, 2.0, 0.5, now=0.0)
    assert missing.poll(0.9) is None
    assert missing.poll(1.1).outcome is Outcome.SERVER_MISSING
    assert not missing.server_ready(1.2)            # never sent after giving up
    assert missing.released                         # nothing went out: nothing owed
    m = active()
    run(m, 0.15, 2.5)
    m.result(STATUS_SUCCEEDED, 0, 'Goal successfully reached!')
    assert m.outcome.succeeded and m.released


def test_a_stretched_move_with_steady_feedback_is_not_lost():
    """A speed slider at 20 %: the 2 s move takes 10 s of wall time; the controller's time,
    not the wall clock, says it is still on time."""
    m = active(duration=2.0, goal_time=0.5)
    last = run(m, 0.15, 12.0, rate=0.2)
    assert last > 2.0 and m.controller_time == pytest.approx(last)
    m.result(STATUS_SUCCEEDED, 0, '')
    assert m.outcome.succeeded


def test_goal_time_zero_waits_in_controller_time_then_gives_up_and_owes_a_cancel():
    m = active(duration=2.0, goal_time=0.0)
    run(m, 0.15, 0.1 + 2.0 + WAITS.settle_wait + WAITS.result_margin - 0.1)
    m.feedback(8.2, 8.1)                    # past 2 + settle 5 + margin 1 of controller time
    outcome = m.poll(8.2)
    assert outcome.outcome is Outcome.OVERDUE
    assert 'goal_time_tolerance 0' in outcome.message and 'cancel' in outcome.message
    assert m.cancel_pending and not m.released
    assert motion_code_of(outcome.outcome) is MotionCode.CONTROLLER_ABORTED


def test_controller_time_past_goal_time_without_result_is_overdue():
    m = active(duration=2.0, goal_time=0.5)
    run(m, 0.15, 3.5)                       # controller time 3.35: within 2 + 0.5 + 1
    m.feedback(3.7, 3.6)
    assert m.poll(3.7).outcome is Outcome.OVERDUE
    assert 'goal_time_tolerance 0.5 s' in m.outcome.message


def test_a_controller_reporting_its_next_waypoint_is_bounded_from_the_end():
    """joint_trajectory_controller's desired.time_from_start is the time of the waypoint it
    heads for (0.1 s apart here), which stops at the end: no result then is OVERDUE
    stretch_limit x (last segment + goal_time + margin) after the feedback reached the end,
    not only at the wall limit counted from acceptance."""
    m = ControllerGoalMonitor(WAITS, 2.0, 0.5, 0.0, PATH, GOAL, last_segment=0.1)
    m.server_ready(0.0)
    m.response(True, 0.1)
    seen = outcome = None
    for t in np.arange(0.15, 40.0, 0.05):
        waypoint = min(math.ceil((t - 0.1) / 0.1 - 1e-9) * 0.1, 2.0)
        m.feedback(t, waypoint)
        if seen is None and waypoint >= 2.0:
            seen = t
        outcome = m.poll(t)
        if outcome is not None:
            break
    assert outcome.outcome is Outcome.OVERDUE and 'reached the end' in outcome.message
    assert t == pytest.approx(seen + 10.0 * (0.1 + 0.5 + 1.0), abs=0.06)
    assert t < 0.1 + m.wall_limit() and m.cancel_pending


def test_feedback_without_time_is_bounded_by_the_wall_clock():
    """A controller whose feedback carries no trajectory time (or a paused one): the wall
    clock bounds the wait at stretch_limit times the controller-time budget."""
    m = active(duration=2.0, goal_time=0.5)
    limit = m.wall_limit()
    assert limit == pytest.approx(10.0 * (2.0 + 0.5 + 1.0))
    for t in np.arange(0.15, 0.1 + limit, 0.1):
        m.feedback(t)                       # no controller time
        assert m.poll(t) is None
    m.feedback(0.1 + limit + 0.05)
    assert m.poll(0.1 + limit + 0.1).outcome is Outcome.OVERDUE
    assert 'no trajectory time' in m.outcome.message and m.cancel_pending


def test_silence_is_lost_and_owes_a_cancel_until_answered():
    m = active(interval=0.05)
    run(m, 0.15, 1.0)
    assert m.poll(1.0 + 0.4) is None        # under silence_timeout 0.5
    outcome = m.poll(1.0 + 0.6)
    assert outcome.outcome is Outcome.CONTROLLER_LOST and 'no feedback' in outcome.message
    assert m.cancel_pending and not m.released
    m.cancel_answered(True, 1.7)            # late: the outcome stays, the cancel is done
    assert m.released and m.outcome is outcome


def test_silence_limit_learns_the_feedback_interval():
    """A controller at action_monitor_rate 0.5 Hz is never lost for its own period."""
    m = active(duration=20.0, goal_time=0.5)
    assert m.silence_limit() == FIRST_FEEDBACK_WAIT  # nothing heard: JTC's slowest rate
    for t in np.arange(1.0, 15.0, 2.0):
        m.feedback(t, t - 0.1)
        assert m.poll(t + 1.9) is None
    assert m.feedback_interval == pytest.approx(2.0)
    assert m.silence_limit() == pytest.approx(6.0)
    assert m.poll(13.0 + 6.1).outcome is Outcome.CONTROLLER_LOST
    # The next goal on the same server starts with what was learned.
    assert active(interval=m.feedback_interval).silence_limit() == pytest.approx(6.0)
    assert active(interval=0.05).silence_limit() == WAITS.silence_timeout


def test_server_absence_must_last():
    m = active()
    for t in np.arange(0.15, 1.0, 0.05):    # flickers: absent every other poll
        m.feedback(t, t)
        assert m.poll(t, server_present=bool(round(t * 20) % 2)) is None
    m.feedback(1.0, 0.9)
    assert m.poll(1.0, server_present=False) is None
    assert m.poll(1.2, server_present=False) is None
    outcome = m.poll(1.35, server_present=False)
    assert outcome.outcome is Outcome.CONTROLLER_LOST and 'left the graph' in outcome.message
    assert m.released                       # gone: nothing to cancel


def test_a_goal_given_up_stays_owed_until_the_server_ends_it_or_is_gone():
    # No answer to the goal request: the server may still have accepted it.
    m = ControllerGoalMonitor(WAITS, 2.0, 0.5, now=0.0)
    m.server_ready(0.0)
    assert m.poll(1.1).outcome is Outcome.CONTROLLER_LOST and m.cancel_pending
    m.response(True, 1.5)                   # accepted late: the cancel is still owed
    assert m.cancel_pending and m.state is ClientState.DONE
    m.result(STATUS_CANCELED, 0, '')        # the server ended it
    assert m.released and m.outcome.outcome is Outcome.CONTROLLER_LOST
    # A late rejection owes nothing.
    m = ControllerGoalMonitor(WAITS, 2.0, 0.5, now=0.0)
    m.server_ready(0.0)
    m.poll(1.1)
    m.response(False, 1.5)
    assert m.released
    # Given up as gone (nothing to cancel), then the server is back and accepts it: owed.
    m = ControllerGoalMonitor(WAITS, 2.0, 0.5, now=0.0)
    m.server_ready(0.0)
    m.poll(0.5, server_present=False)
    assert m.poll(1.1, server_present=False).outcome is Outcome.CONTROLLER_LOST
    assert m.released
    m.response(True, 1.5)
    assert m.cancel_pending and not m.released
    # An unanswered cancel stays owed until the server has been gone for absence_wait.
    m = active()
    assert m.request_cancel('emergency stop', 0.2)
    assert m.poll(0.8).outcome is Outcome.CANCEL_UNANSWERED and m.cancel_pending
    m.poll(0.9, server_present=False)
    assert m.cancel_pending
    m.poll(1.25, server_present=False)
    assert m.released


def test_cancel_paths():
    m = ControllerGoalMonitor(WAITS, 2.0, 0.5, now=0.0)
    assert not m.request_cancel('new target', 0.1)  # not sent yet: never goes out
    assert m.outcome.outcome is Outcome.CANCELED and not m.server_ready(0.2)
    assert m.released
    m = active()
    assert m.request_cancel('emergency stop', 0.2) and not m.request_cancel('again', 0.25)
    assert m.cancel_pending
    m.cancel_answered(True, 0.3)
    assert m.outcome.outcome is Outcome.CANCELED and 'emergency stop' in m.outcome.message
    assert m.released
    m = active()
    m.request_cancel('stale joint_states', 0.2)
    assert m.poll(0.6) is None
    assert m.poll(0.8).outcome is Outcome.CANCEL_UNANSWERED
    m = active()
    m.request_cancel('cancel', 0.2)
    m.cancel_answered(False, 0.25)          # refused: the result decides
    assert not m.done
    m.result(STATUS_CANCELED, 0, '')
    assert m.outcome.outcome is Outcome.CANCELED and m.released


def test_rejection_and_unknown_abort():
    m = ControllerGoalMonitor(WAITS, 2.0, 0.5, now=0.0)
    m.server_ready(0.0)
    m.response(False, 0.1)
    assert m.outcome.outcome is Outcome.REJECTED and m.released
    m = active()
    m.result(STATUS_ABORTED, 0, ' odd ')
    assert m.outcome.outcome is Outcome.ABORTED and m.outcome.detail == 'odd'


def errors(pan: float, elbow: float, vpan: float = 0.0, velbow: float = 0.0
           ) -> FeedbackErrors:
    return FeedbackErrors(JOINTS, (pan, elbow), (vpan, velbow))


def test_path_violation_names_the_worst_joint_from_the_last_feedback():
    m = active()
    m.feedback(0.5, 0.4, errors(0.05, -0.02))
    m.feedback(0.55, 0.45, errors(0.203, -0.09))
    m.result(STATUS_ABORTED, ResultCode.PATH_TOLERANCE_VIOLATED,
             'Aborted due to path tolerance violation')
    assert m.outcome.outcome is Outcome.PATH_TOLERANCE_VIOLATED
    assert m.outcome.detail == ('Aborted due to path tolerance violation: worst joint '
                                'shoulder_pan_joint error +0.203 rad (path tolerance 0.1)')


def test_goal_violation_ranks_against_the_goal_tolerances_velocity_included():
    m = active()
    m.feedback(2.6, 2.5, errors(0.004, -0.009, 0.001, 0.0))
    m.result(STATUS_ABORTED, ResultCode.GOAL_TOLERANCE_VIOLATED,
             'Aborted due to goal_time_tolerance exceeding by 0.510000 seconds')
    assert m.outcome.detail.endswith(
        'seconds: worst joint elbow_joint error -0.009 rad (goal tolerance 0.01)')
    m = active()
    m.feedback(2.6, 2.5, errors(0.001, 0.0, 0.0, 0.05))
    m.result(STATUS_ABORTED, ResultCode.GOAL_TOLERANCE_VIOLATED, 'Aborted')
    assert 'worst joint elbow_joint velocity error +0.050 rad/s (goal tolerance 0.02)' in \
        m.outcome.detail


def test_a_controller_that_names_the_joint_is_not_repeated():
    words = ("Aborted due to path tolerance violation: joint 'elbow_joint' position error "
             '+0.2034 rad exceeds the tolerance 0.1000 rad')
    m = active()
    m.feedback(0.5, 0.4, errors(0.05, 0.2034))
    m.result(STATUS_ABORTED, ResultCode.PATH_TOLERANCE_VIOLATED, words)
    assert m.outcome.detail == words
    m = active()                            # no feedback heard: the words alone
    m.result(STATUS_ABORTED, ResultCode.PATH_TOLERANCE_VIOLATED, 'Aborted')
    assert m.outcome.detail == 'Aborted'


def test_worst_joint_without_tolerances_sent_ranks_by_size():
    erased = {j: JointTolerance(position=ERASED) for j in JOINTS}
    assert worst_joint(errors(0.01, -0.3), erased, 'path') == \
        'worst joint elbow_joint error -0.300 rad (no path tolerance sent)'
    assert worst_joint(errors(0.01, 0.3), {JOINTS[0]: JointTolerance(0.001)}, 'path') == \
        'worst joint shoulder_pan_joint error +0.010 rad (path tolerance 0.001)'
    assert worst_joint(errors(math.nan, 0.3), PATH, 'path').startswith(
        'worst joint shoulder_pan_joint error +nan')
    assert worst_joint(FeedbackErrors(JOINTS, ()), PATH, 'path') == ''


def test_preemption_after_our_cancel_is_the_replaced_goals_expected_end():
    m = active()
    assert m.request_cancel('preempted by a new target', 0.5)
    m.result(STATUS_ABORTED, ResultCode.INVALID_GOAL,
             'Current goal preempted by new incoming action.')
    assert m.outcome.outcome is Outcome.CANCELED and m.released
    assert 'replaced by the newer goal' in m.outcome.message
    assert motion_code_of(m.outcome.outcome) is MotionCode.CANCELED
    # Someone else's goal preempting ours is a failure of our move.
    m = active()
    m.result(STATUS_ABORTED, ResultCode.INVALID_GOAL,
             'Current goal preempted by new incoming action.')
    assert m.outcome.outcome is Outcome.INVALID_GOAL


def test_waits_of_the_configuration_keep_a_silence_floor():
    assert waits_of(ControllerConfig()).silence_timeout == SILENCE_FLOOR
    assert waits_of(ControllerConfig(action_monitor_rate=1.0)).silence_timeout == 5.0
    assert waits_of(ControllerConfig(), silence_timeout=0.7).silence_timeout == 0.7


@pytest.mark.parametrize('bad', [0.0, -1.0, math.nan, math.inf])
def test_waits_are_validated(bad):
    with pytest.raises(ValueError, match='cancel_wait'):
        Waits(cancel_wait=bad)
    with pytest.raises(ValueError, match='stretch_limit'):
        Waits(stretch_limit=0.5 if bad == 0.0 else bad)
