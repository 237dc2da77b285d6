"""One FollowJointTrajectory goal on the client side: a state machine with bounded waits.

The action client (rclpy, in the node) reports what happens; ``ControllerGoalMonitor`` decides
what it means and when waiting has lasted too long. Time is passed in (s, monotonic), so every
rule is tested without ROS. Every wait is bounded:

- the server must appear within ``server_wait`` (else SERVER_MISSING);
- the goal request must be answered within ``response_wait`` (else CONTROLLER_LOST);
- while the goal runs the controller is "lost" only when it stops talking: no feedback and no
  result for the silence limit (see ``silence_limit``), or the action server absent from the
  graph for ``absence_wait`` (one poll missing it is not enough: discovery flickers);
- lateness is measured in the controller's own time, never by the wall clock alone: the
  feedback's desired.time_from_start tells where the controller is along the trajectory, on
  its clock and at its speed scaling (a speed slider, a pause; sim time may run slower than
  real time). A controller that reports its elapsed trajectory time (the stand-in) is late
  once that time passes the trajectory's end plus goal_time_tolerance plus
  ``result_margin``; with goal_time_tolerance 0 the controller waits for the goal tolerance
  forever, and the client stops waiting ``settle_wait`` of controller time after the end.
  joint_trajectory_controller reports the time of the waypoint it is heading for, which
  stops at the end: from the feedback that first reaches the end, the rest of the budget
  (the last segment, then the same after-end wait) is bounded by the wall clock, at
  ``stretch_limit`` x its controller time. A controller whose time runs slower than
  1/``stretch_limit`` of the wall clock (or whose feedback carries no time) is bounded by
  the wall clock: ``stretch_limit`` x the whole controller-time budget from acceptance.
  Past any of these bounds the outcome is OVERDUE;
- a cancel must be acknowledged within ``cancel_wait`` (else CANCEL_UNANSWERED).

Giving up is not forgetting: whenever the client ends a goal itself while the server may still
run it (OVERDUE, silence, an unanswered goal request or cancel), ``cancel_pending`` says a
cancel is owed and the goal must stay where an emergency stop finds it, until the server
answers the cancel, ends the goal, or is gone for ``absence_wait`` (``released``).

A goal never goes out twice: after any outcome the monitor is done and a new goal needs a new
monitor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import enum
import math
import threading

from arm_kinematics.control.codes import (
    ControllerOutcome,
    Outcome,
    outcome_of_result,
    ResultCode,
)
from arm_kinematics.control.tolerances import JointTolerance

# action_msgs/GoalStatus values the monitor reads.
STATUS_SUCCEEDED, STATUS_CANCELED, STATUS_ABORTED = 4, 5, 6
# joint_trajectory_controller aborts the running goal with these words when a newer goal
# arrives (INVALID_GOAL, ros2_controllers #2422).
PREEMPTED_WORDS = 'preempted by new incoming action'
# Until a feedback interval is known, feedback may take this long: joint_trajectory_controller
# accepts action_monitor_rate down to 0.1 Hz, and our configuration's rate need not be its.
FIRST_FEEDBACK_WAIT = 10.5
# The silence limit is this many of the longest feedback intervals received.
INTERVALS_OF_SILENCE = 3.0


class ClientState(enum.Enum):
    WAITING_SERVER = 'waiting for the server'
    SENT = 'sent'
    ACTIVE = 'active'
    CANCELING = 'canceling'
    DONE = 'done'


@dataclass(frozen=True)
class Waits:
    """The bounded waits, s (all > 0; ``stretch_limit``: a factor >= 1)."""

    server_wait: float = 2.0
    response_wait: float = 2.0
    silence_timeout: float = 2.0
    result_margin: float = 1.0
    cancel_wait: float = 1.0
    absence_wait: float = 1.0
    settle_wait: float = 10.0
    stretch_limit: float = 10.0

    def __post_init__(self) -> None:
        for name in ('server_wait', 'response_wait', 'silence_timeout', 'result_margin',
                     'cancel_wait', 'absence_wait', 'settle_wait', 'stretch_limit'):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f'{name} must be a finite number of seconds > 0, got {value}')
        if self.stretch_limit < 1.0:
            raise ValueError(f'stretch_limit must be >= 1, got {self.stretch_limit}')


@dataclass(frozen=True)
class FeedbackErrors:
    """The tracking errors of one feedback (desired - actual), by joint."""

    joints: tuple[str, ...]
    positions: tuple[float, ...]
    velocities: tuple[float, ...] = ()


class ControllerGoalMonitor:
    """The life of one controller goal, from waiting for the server to its outcome.

    Args:
        waits: the bounded waits.
        duration: the trajectory's duration (its last point's time_from_start), s.
        goal_time_tolerance: the goal's goal_time_tolerance, s (0: the controller waits).
        now: monotonic time the goal is handed over, s.
        path_tolerance, goal_tolerance: the tolerances the goal carries, by joint (to name
            the worst joint when the controller's words name none).
        feedback_interval: the longest feedback interval already seen from this server, s
            (0: unknown).
        last_segment: controller time from the trajectory's second-to-last point to its
            last, s (None: the whole duration).
    """

    def __init__(self, waits: Waits, duration: float, goal_time_tolerance: float, now: float,
                 path_tolerance: Mapping[str, JointTolerance] | None = None,
                 goal_tolerance: Mapping[str, JointTolerance] | None = None,
                 feedback_interval: float = 0.0, last_segment: float | None = None):
        self.waits = waits
        self._duration = duration
        self._goal_time = goal_time_tolerance
        # Controller time after which the result is overdue.
        after_end = goal_time_tolerance if goal_time_tolerance > 0.0 else waits.settle_wait
        self._controller_deadline = duration + after_end + waits.result_margin
        # Wall time the result may take once a feedback's time has reached the end.
        rest = duration if last_segment is None else min(max(last_segment, 0.0), duration)
        self._after_end_limit = waits.stretch_limit * (rest + after_end + waits.result_margin)
        self._end_seen_at: float | None = None
        self._path_tolerance = dict(path_tolerance or {})
        self._goal_tolerance = dict(goal_tolerance or {})
        self._lock = threading.Lock()
        self.state = ClientState.WAITING_SERVER
        self._deadline = now + waits.server_wait
        self._last_heard = now
        self._accepted_at: float | None = None
        self._absent_since: float | None = None
        self.feedback_interval = max(0.0, feedback_interval)
        self._heard_feedback = False
        self.controller_time: float | None = None
        self.errors: FeedbackErrors | None = None
        self.cancel_reason = ''
        self.cancel_requested_at: float | None = None
        self.cancel_pending = False
        self.outcome: ControllerOutcome | None = None

    @property
    def done(self) -> bool:
        """The goal's outcome is known (it may still owe a cancel: see ``released``)."""
        return self.state is ClientState.DONE

    @property
    def released(self) -> bool:
        """Done, and nothing is owed to the server: the client may forget the goal."""
        return self.done and not self.cancel_pending

    def silence_limit(self) -> float:
        """How long the controller may say nothing: ``silence_timeout`` at least, and three
        times the longest feedback interval received from this server; until an interval is
        known (two feedbacks, this goal's or an earlier one's), ``FIRST_FEEDBACK_WAIT``."""
        if self.feedback_interval > 0.0:
            return max(self.waits.silence_timeout,
                       INTERVALS_OF_SILENCE * self.feedback_interval)
        return max(self.waits.silence_timeout, FIRST_FEEDBACK_WAIT)

    def wall_limit(self) -> float:
        """Wall-clock s after acceptance when the result is overdue whatever the feedback
        says: the controller-time budget stretched ``stretch_limit`` times."""
        return self.waits.stretch_limit * self._controller_deadline

    def server_ready(self, now: float) -> bool:
        """The server is there and the goal goes out now; False if it must not (done)."""
        with self._lock:
            if self.state is not ClientState.WAITING_SERVER:
                return False
            self.state = ClientState.SENT
            self._deadline = now + self.waits.response_wait
            return True

    def response(self, accepted: bool, now: float) -> None:
        """The server answered the goal request."""
        with self._lock:
            if self.done:
                # Given up before the answer (also as gone: the server is back): an
                # accepted goal runs there and owes a cancel; a rejected one owes nothing.
                self.cancel_pending = accepted
                return
            if self.state not in (ClientState.SENT, ClientState.CANCELING):
                return
            if not accepted:
                self.cancel_pending = False
                self._finish(ControllerOutcome(Outcome.REJECTED))
                return
            self._last_heard = now
            self._accepted_at = now
            if self.state is ClientState.SENT:
                self.state = ClientState.ACTIVE

    def feedback(self, now: float, controller_time: float | None = None,
                 errors: FeedbackErrors | None = None) -> None:
        """A feedback arrived; ``controller_time``: its desired.time_from_start, s."""
        with self._lock:
            if self._heard_feedback:
                self.feedback_interval = max(self.feedback_interval, now - self._last_heard)
            self._heard_feedback = True
            self._last_heard = now
            if controller_time is not None and math.isfinite(controller_time):
                self.controller_time = max(self.controller_time or 0.0, controller_time)
                if self._end_seen_at is None and self.controller_time >= self._duration:
                    self._end_seen_at = now
            if errors is not None:
                self.errors = errors

    def result(self, status: int, error_code: int, error_string: str) -> None:
        """The goal's result arrived (status: action_msgs/GoalStatus)."""
        with self._lock:
            self.cancel_pending = False         # the server ended it: nothing owed
            if self.done:
                return
            words = error_string.strip()
            if status == STATUS_CANCELED:
                self._finish(ControllerOutcome(Outcome.CANCELED, None, self._cancel_detail()))
            elif status == STATUS_ABORTED and error_code == ResultCode.INVALID_GOAL and \
                    self.cancel_requested_at is not None and PREEMPTED_WORDS in words.lower():
                # We replaced (or cancelled) this goal and the controller ended it as
                # preempted by our newer goal before the cancel arrived: the expected end.
                self._finish(ControllerOutcome(Outcome.CANCELED, None, (
                    f'{self._cancel_detail()}; the controller ended it as replaced by the '
                    f'newer goal ("{words}")')))
            elif status == STATUS_SUCCEEDED and error_code == 0:
                self._finish(outcome_of_result(error_code, error_string))
            elif status == STATUS_ABORTED and error_code == 0:
                self._finish(ControllerOutcome(Outcome.ABORTED, 0, words))
            else:
                outcome = outcome_of_result(error_code, error_string)
                self._finish(ControllerOutcome(outcome.outcome, outcome.error_code,
                                               self._with_worst_joint(outcome)))

    def request_cancel(self, reason: str, now: float) -> bool:
        """Ask for a cancel (a new target, a cancel, an e-stop...). Returns True when the
        client must send a cancel request now (the goal is out); a goal still waiting for the
        server simply never goes out."""
        with self._lock:
            if self.done or self.state is ClientState.CANCELING:
                return False
            self.cancel_reason = reason
            self.cancel_requested_at = now
            if self.state is ClientState.WAITING_SERVER:
                self._finish(ControllerOutcome(Outcome.CANCELED, None,
                                               f'{reason}; the goal was never sent'))
                return False
            self.state = ClientState.CANCELING
            self.cancel_pending = True
            self._deadline = now + self.waits.cancel_wait
            return True

    def cancel_answered(self, goal_canceling: bool, now: float) -> None:
        """The server answered the cancel request; ``goal_canceling``: our goal is among the
        goals it cancels. A refused cancel (the goal had just finished) leaves the result to
        decide."""
        with self._lock:
            self.cancel_pending = False
            if self.done:
                return
            if goal_canceling:
                self._finish(ControllerOutcome(Outcome.CANCELED, None, self._cancel_detail()))

    def poll(self, now: float, server_present: bool = True) -> ControllerOutcome | None:
        """The outcome once a wait has run out (or the goal ended); None while it runs."""
        with self._lock:
            if server_present:
                self._absent_since = None
            elif self._absent_since is None:
                self._absent_since = now
            gone = self._absent_since is not None and \
                now - self._absent_since >= self.waits.absence_wait
            if self.done:
                if gone:
                    self.cancel_pending = False     # nobody left to cancel
                return self.outcome
            state, w = self.state, self.waits
            if state is ClientState.WAITING_SERVER and now > self._deadline:
                self._finish(ControllerOutcome(Outcome.SERVER_MISSING, None,
                                               f'waited {w.server_wait:g} s'))
            elif state is ClientState.SENT and now > self._deadline:
                self._give_up(not gone, ControllerOutcome(
                    Outcome.CONTROLLER_LOST, None,
                    f'the goal request got no answer within {w.response_wait:g} s'))
            elif state is ClientState.CANCELING and now > self._deadline:
                self._give_up(not gone, ControllerOutcome(
                    Outcome.CANCEL_UNANSWERED, None,
                    f'{self.cancel_reason}; no acknowledgement within {w.cancel_wait:g} s'))
            elif state is ClientState.ACTIVE:
                self._poll_active(now, gone)
            return self.outcome

    def _poll_active(self, now: float, gone: bool) -> None:
        silence, limit = now - self._last_heard, self.silence_limit()
        if gone:
            self._give_up(False, ControllerOutcome(
                Outcome.CONTROLLER_LOST, None,
                f'the action server left the graph during the goal (absent for '
                f'{now - self._absent_since:.2f} s)'))
        elif silence > limit:
            self._give_up(True, ControllerOutcome(
                Outcome.CONTROLLER_LOST, None,
                f'no feedback and no result for {silence:.2f} s (limit {limit:g} s); '
                'a cancel was sent'))
        elif self.controller_time is not None and \
                self.controller_time > self._controller_deadline:
            self._give_up(True, ControllerOutcome(Outcome.OVERDUE, None, (
                f"the controller's trajectory time is {self.controller_time:.2f} s, past the "
                f'end ({self._duration:.2f} s) plus {self._after_end_words()} plus '
                f'{self.waits.result_margin:g} s, without a result; a cancel was sent')))
        elif self._end_seen_at is not None and \
                now - self._end_seen_at > self._after_end_limit:
            self._give_up(True, ControllerOutcome(Outcome.OVERDUE, None, (
                f"no result {now - self._end_seen_at:.1f} s after the controller's feedback "
                f'reached the end of the trajectory ({self._duration:.2f} s; the limit is '
                f'{self.waits.stretch_limit:g} x the last segment, {self._after_end_words()} '
                f'and {self.waits.result_margin:g} s); a cancel was sent')))
        elif self._accepted_at is not None and \
                now - self._accepted_at > self.wall_limit():
            told = 'no trajectory time' if self.controller_time is None else \
                f'trajectory time {self.controller_time:.2f} s'
            self._give_up(True, ControllerOutcome(Outcome.OVERDUE, None, (
                f'no result {now - self._accepted_at:.1f} s after acceptance ({told} in its '
                f'feedback; the limit is {self.waits.stretch_limit:g} x '
                f'{self._controller_deadline:.2f} s of controller time); a cancel was sent')))

    def _after_end_words(self) -> str:
        if self._goal_time > 0.0:
            return f'goal_time_tolerance {self._goal_time:g} s'
        return (f'{self.waits.settle_wait:g} s of settling (goal_time_tolerance 0: the '
                'controller waits for the goal tolerance forever)')

    def _with_worst_joint(self, outcome: ControllerOutcome) -> str:
        """The controller's words, plus the worst joint of the last feedback when a tolerance
        failed and the words name no joint (joint_trajectory_controller's never do)."""
        detail = outcome.detail
        kind = {Outcome.PATH_TOLERANCE_VIOLATED: ('path', self._path_tolerance),
                Outcome.GOAL_TOLERANCE_VIOLATED: ('goal', self._goal_tolerance)
                }.get(outcome.outcome)
        if kind is None or self.errors is None or \
                any(joint in detail for joint in self.errors.joints):
            return detail
        worst = worst_joint(self.errors, kind[1], kind[0])
        if not worst:
            return detail
        return f'{detail}: {worst}' if detail else worst

    def _cancel_detail(self) -> str:
        return self.cancel_reason or 'cancelled by the controller side'

    def _give_up(self, cancel: bool, outcome: ControllerOutcome) -> None:
        """End the goal on the client's side; ``cancel``: the server may still run it."""
        self.cancel_pending = cancel
        if cancel and self.cancel_requested_at is None:
            self.cancel_reason = f'the client gave up: {outcome.outcome.value}'
        self._finish(outcome)

    def _finish(self, outcome: ControllerOutcome) -> None:
        self.outcome = outcome
        self.state = ClientState.DONE


def worst_joint(errors: FeedbackErrors, tolerances: Mapping[str, JointTolerance],
                kind: str) -> str:
    """The joint furthest outside (or nearest to) its tolerance in ``errors``, in words, e.g.
    'worst joint shoulder_pan_joint error +0.203 rad (path tolerance 0.1)'. Joints without a
    tolerance sent (0: the controller's default, -1: erased) rank by the size of their error
    after every joint that has one. '' when the feedback has no errors."""
    candidates = []
    for quantity, values, unit in (('position', errors.positions, 'rad'),
                                   ('velocity', errors.velocities, 'rad/s')):
        for joint, error in _pairs(errors.joints, values):
            limit = getattr(tolerances.get(joint, JointTolerance()), quantity)
            if limit > 0.0:
                rank = (1, abs(error) / limit if math.isfinite(error) else math.inf)
            elif quantity == 'position':
                rank = (0, abs(error) if math.isfinite(error) else math.inf)
            else:
                continue
            candidates.append((rank, joint, quantity, error, limit, unit))
    if not candidates:
        return ''
    _, joint, quantity, error, limit, unit = max(candidates, key=lambda c: c[0])
    what = 'error' if quantity == 'position' else 'velocity error'
    bound = f'{kind} tolerance {limit:g}' if limit > 0.0 else f'no {kind} tolerance sent'
    return f'worst joint {joint} {what} {error:+.3f} {unit} ({bound})'


def _pairs(joints: Sequence[str], values: Sequence[float]) -> list[tuple[str, float]]:
    return [(j, float(v)) for j, v in zip(joints, values)]
