"""One FollowJointTrajectory goal on the client side: a state machine with bounded waits.

The action client (rclpy, in the node) reports what happens; ``ControllerGoalMonitor`` decides
what it means and when waiting has lasted too long. Time is passed in (s, monotonic), so every
rule is tested without ROS. Every wait is bounded:

- the server must appear within ``server_wait`` (else SERVER_MISSING);
- the goal request must be answered within ``response_wait`` (else CONTROLLER_LOST);
- while the goal runs, the server must stay on the graph and feedback must not stop for more
  than ``silence_timeout`` (JTC sends feedback every action_monitor_rate period, 20 Hz by
  default); the result must come within the trajectory's duration plus its goal time tolerance
  plus ``result_margin`` (else CONTROLLER_LOST: the controller died or hangs);
- a cancel must be acknowledged within ``cancel_wait`` (else CANCEL_UNANSWERED).

A goal never goes out twice: after any outcome the monitor is DONE and a new goal needs a new
monitor.
"""

from __future__ import annotations

from dataclasses import dataclass
import enum
import math
import threading

from arm_kinematics.control.codes import ControllerOutcome, Outcome, outcome_of_result

# action_msgs/GoalStatus values the monitor reads.
STATUS_SUCCEEDED, STATUS_CANCELED, STATUS_ABORTED = 4, 5, 6


class ClientState(enum.Enum):
    WAITING_SERVER = 'waiting for the server'
    SENT = 'sent'
    ACTIVE = 'active'
    CANCELING = 'canceling'
    DONE = 'done'


@dataclass(frozen=True)
class Waits:
    """The bounded waits, s (all > 0)."""

    server_wait: float = 2.0
    response_wait: float = 2.0
    silence_timeout: float = 1.0
    result_margin: float = 1.0
    cancel_wait: float = 1.0

    def __post_init__(self) -> None:
        for name in ('server_wait', 'response_wait', 'silence_timeout', 'result_margin',
                     'cancel_wait'):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f'{name} must be a finite number of seconds > 0, got {value}')


class ControllerGoalMonitor:
    """The life of one controller goal, from waiting for the server to its outcome.

    Args:
        waits: the bounded waits.
        duration: the trajectory's duration, s.
        goal_time_tolerance: the goal's goal_time_tolerance, s.
        now: monotonic time the goal is handed over, s.
    """

    def __init__(self, waits: Waits, duration: float, goal_time_tolerance: float, now: float):
        self.waits = waits
        self._duration = duration + goal_time_tolerance
        self._lock = threading.Lock()
        self.state = ClientState.WAITING_SERVER
        self._deadline = now + waits.server_wait
        self._last_heard = now
        self._result_deadline = math.inf
        self.cancel_reason = ''
        self.cancel_requested_at: float | None = None
        self.outcome: ControllerOutcome | None = None

    @property
    def done(self) -> bool:
        return self.state is ClientState.DONE

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
            if self.state not in (ClientState.SENT, ClientState.CANCELING):
                return
            if not accepted:
                self._finish(ControllerOutcome(Outcome.REJECTED))
                return
            self._last_heard = now
            self._result_deadline = now + self._duration + self.waits.result_margin
            if self.state is ClientState.SENT:
                self.state = ClientState.ACTIVE

    def feedback(self, now: float) -> None:
        with self._lock:
            self._last_heard = now

    def result(self, status: int, error_code: int, error_string: str) -> None:
        """The goal's result arrived (status: action_msgs/GoalStatus)."""
        with self._lock:
            if self.done:
                return
            if status == STATUS_CANCELED:
                self._finish(ControllerOutcome(Outcome.CANCELED, None, self._cancel_detail()))
            elif status == STATUS_SUCCEEDED and error_code == 0:
                self._finish(outcome_of_result(error_code, error_string))
            elif status == STATUS_ABORTED and error_code == 0:
                self._finish(ControllerOutcome(Outcome.ABORTED, 0, error_string.strip()))
            else:
                self._finish(outcome_of_result(error_code, error_string))

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
            self._deadline = now + self.waits.cancel_wait
            return True

    def cancel_answered(self, goal_canceling: bool, now: float) -> None:
        """The server answered the cancel request; ``goal_canceling``: our goal is among the
        goals it cancels. A refused cancel (the goal had just finished) leaves the result to
        decide."""
        with self._lock:
            if self.done:
                return
            if goal_canceling:
                self._finish(ControllerOutcome(Outcome.CANCELED, None, self._cancel_detail()))

    def poll(self, now: float, server_present: bool = True) -> ControllerOutcome | None:
        """The outcome once a wait has run out (or the goal ended); None while it runs."""
        with self._lock:
            if self.done:
                return self.outcome
            state, w = self.state, self.waits
            if state is ClientState.WAITING_SERVER and now > self._deadline:
                self._finish(ControllerOutcome(Outcome.SERVER_MISSING, None,
                                               f'waited {w.server_wait:g} s'))
            elif state is ClientState.SENT and now > self._deadline:
                self._finish(ControllerOutcome(
                    Outcome.CONTROLLER_LOST, None,
                    f'the goal request got no answer within {w.response_wait:g} s'))
            elif state is ClientState.CANCELING and now > self._deadline:
                self._finish(ControllerOutcome(
                    Outcome.CANCEL_UNANSWERED, None,
                    f'{self.cancel_reason}; no acknowledgement within {w.cancel_wait:g} s'))
            elif state is ClientState.ACTIVE:
                if not server_present:
                    self._finish(ControllerOutcome(
                        Outcome.CONTROLLER_LOST, None,
                        'the action server left the graph during the goal'))
                elif now - self._last_heard > w.silence_timeout:
                    self._finish(ControllerOutcome(
                        Outcome.CONTROLLER_LOST, None,
                        f'no feedback for {now - self._last_heard:.2f} s '
                        f'(limit {w.silence_timeout:g} s)'))
                elif now > self._result_deadline:
                    self._finish(ControllerOutcome(
                        Outcome.CONTROLLER_LOST, None,
                        f'no result {w.result_margin:g} s after the trajectory should have '
                        'ended'))
            return self.outcome

    def _cancel_detail(self) -> str:
        return self.cancel_reason or 'cancelled by the controller side'

    def _finish(self, outcome: ControllerOutcome) -> None:
        self.outcome = outcome
        self.state = ClientState.DONE
