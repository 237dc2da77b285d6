"""The executor's FollowJointTrajectory client (output ``follow_joint_trajectory``).

Each move goes to the controller as one goal, with the arm configuration's path and goal
tolerances and goal time. The rules (what a result means, how long to wait for the server,
the feedback, the result and a cancel's acknowledgement) are
``arm_kinematics.control.client_state.ControllerGoalMonitor``; this module only moves
messages and polls every ``POLL_PERIOD``.

When the executor ends a move itself (a cancel, a new goal, an emergency stop, a stale joint
state, a safety stop: the move's ``Owner`` is done), the controller's goal is cancelled and
the acknowledgement awaited for ``cancel_wait`` s; a cancel never acknowledged is logged. When
the controller ends it (a result, a rejection, the server gone or silent, a result long
overdue in the controller's own time), ``on_outcome`` is told, once, with the owner and the
outcome. A goal the client gave up on while the server may still run it is cancelled and
stays in the list ``cancel_all`` walks until the server answers the cancel, ends the goal or
is gone (``ControllerGoalMonitor.released``): an emergency stop always cancels it again.

Every request to the server (goal, result, cancel) goes out from the poll timer, which shares
a mutually exclusive callback group with the action client, and the client is
``LockedActionClient``: rclpy's ActionClient (the Jazzy wheels) loses a response that another
thread processes before the request's future is registered (ros2/rclpy#1123). Callbacks of
the futures only record what came.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
import threading
import time

from control_msgs.action import FollowJointTrajectory
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node

from arm_ik.middleware import LockedActionClient
from arm_ik.nodes.control_messages import tolerances_of
from arm_ik.nodes.conversions import seconds_of
from arm_kinematics.control.client_state import (
    ClientState,
    ControllerGoalMonitor,
    FeedbackErrors,
    Waits,
)
from arm_kinematics.control.codes import ControllerOutcome
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.motion.runner import Owner

POLL_PERIOD = 0.02      # s


@dataclass(eq=False)
class ControllerGoal:
    """One goal sent (or to be sent) for one move."""

    owner: Owner
    monitor: ControllerGoalMonitor
    message: FollowJointTrajectory.Goal
    handle: object | None = None              # rclpy ClientGoalHandle once accepted
    feedback: FollowJointTrajectory.Feedback | None = None
    sent_at: float | None = None              # monotonic s the goal request went out
    result_asked: bool = False
    cancel_sent: bool = False
    reported: bool = False                    # on_outcome was told
    ended: threading.Event = field(default_factory=threading.Event)


class ControllerLink:
    """Sends moves to a FollowJointTrajectory server and reports how each ended.

    Args:
        node: the executor node.
        action: the action name (relative names resolve in the node's namespace).
        waits: the bounded waits.
        goal_time: the goals' goal_time_tolerance, s.
        group: a mutually exclusive callback group, of the client and the poll timer only.
        on_outcome: called once per goal with (owner, outcome) when the goal ended.
    """

    def __init__(self, node: Node, action: str, waits: Waits, goal_time: float,
                 group: CallbackGroup,
                 on_outcome: Callable[[Owner, ControllerOutcome], None]) -> None:
        self.node = node
        self.waits = waits
        self.goal_time = goal_time
        self.client = LockedActionClient(node, FollowJointTrajectory, action, callback_group=group)
        self.action = node.resolve_topic_name(action)
        self._on_outcome = on_outcome
        self._lock = threading.Lock()
        self._goals: list[ControllerGoal] = []
        self._feedback_interval = 0.0            # the longest seen from this server, s
        self.timer = node.create_timer(POLL_PERIOD, self._poll, callback_group=group)
        # A new goal or cancel wakes the poll at once (same group), not at the next period.
        self._wake = node.create_guard_condition(self._poll, callback_group=group)

    # ------------------------------------------------------------------ sending
    def wait_for_server(self, timeout: float) -> bool:
        """True once the server is there (at most ``timeout`` s; call off the executor)."""
        deadline = time.monotonic() + timeout
        while not self.client.server_is_ready():
            if time.monotonic() >= deadline or not self.node.context.ok():
                return False
            time.sleep(POLL_PERIOD)
        return True

    def send(self, message: FollowJointTrajectory.Goal, owner: Owner, duration: float) -> None:
        """Send ``message`` for ``owner``'s move of ``duration`` s (at the next poll, at most
        ``POLL_PERIOD`` later)."""
        points = message.trajectory.points
        # joint_trajectory_controller's feedback time stops at the end once it heads for the
        # last point: the monitor allows for that segment.
        last_segment = seconds_of(points[-1].time_from_start) - \
            seconds_of(points[-2].time_from_start) if len(points) > 1 else None
        goal = ControllerGoal(owner, ControllerGoalMonitor(
            self.waits, duration, self.goal_time, time.monotonic(),
            dict(tolerances_of(message.path_tolerance)),
            dict(tolerances_of(message.goal_tolerance)),
            self._feedback_interval, last_segment), message)
        with self._lock:
            self._goals.append(goal)
        self._wake.trigger()

    def _dispatch(self, goal: ControllerGoal) -> None:
        if not goal.monitor.server_ready(time.monotonic()):
            return
        goal.sent_at = time.monotonic()
        future = self.client.send_goal_async(goal.message,
                                             feedback_callback=partial(self._on_feedback, goal))
        future.add_done_callback(partial(self._on_response, goal))

    # ------------------------------------------------------------------ answers
    def _on_response(self, goal: ControllerGoal, future) -> None:
        now = time.monotonic()
        handle = future.result() if future.exception() is None else None
        accepted = handle is not None and handle.accepted
        goal.monitor.response(accepted, now)
        if accepted:
            goal.handle = handle        # the poll asks for the result (and cancels if asked)
            with self._lock:
                if goal.monitor.cancel_pending and goal not in self._goals:
                    # Given up as gone, then accepted: back in the list, so the poll sends
                    # its cancel and cancel_all finds it.
                    self._goals.append(goal)
        self._check(goal)

    def _on_feedback(self, goal: ControllerGoal, message) -> None:
        feedback = message.feedback
        # desired.time_from_start: the controller's trajectory time (speed-scaled, its clock).
        goal.monitor.feedback(time.monotonic(), seconds_of(feedback.desired.time_from_start),
                              FeedbackErrors(tuple(feedback.joint_names),
                                             tuple(feedback.error.positions),
                                             tuple(feedback.error.velocities)))
        goal.feedback = feedback

    def _on_result(self, goal: ControllerGoal, future) -> None:
        if future.exception() is None:
            response = future.result()
            goal.monitor.result(response.status, response.result.error_code,
                                response.result.error_string)
        self._check(goal)


    def _on_cancel_answer(self, goal: ControllerGoal, future) -> None:
        if future.exception() is None:
            ours = bytes(goal.handle.goal_id.uuid)
            canceling = any(bytes(info.goal_id.uuid) == ours
                            for info in future.result().goals_canceling)
            goal.monitor.cancel_answered(canceling, time.monotonic())
        self._check(goal)

    # ------------------------------------------------------------------ cancel and poll
    def cancel(self, goal: ControllerGoal, reason: str) -> None:
        """Cancel ``goal``: the poll sends the request once the goal is accepted (a goal not
        yet sent never goes out)."""
        goal.monitor.request_cancel(reason, time.monotonic())
        self._check(goal)
        self._wake.trigger()

    def _poll(self) -> None:
        with self._lock:
            goals = list(self._goals)
        present = self.client.server_is_ready()
        now = time.monotonic()
        for goal in goals:
            if goal.owner.done.is_set() and goal.monitor.state in (
                    ClientState.WAITING_SERVER, ClientState.SENT, ClientState.ACTIVE):
                self.cancel(goal, _why(goal.owner))
            if goal.monitor.state is ClientState.WAITING_SERVER and present:
                self._dispatch(goal)
            if goal.handle is not None and not goal.result_asked:
                goal.result_asked = True
                goal.handle.get_result_async().add_done_callback(
                    partial(self._on_result, goal))
            # Our cancel, or the one owed for a goal given up on (sent once the goal has a
            # handle: an acceptance that comes after giving up is cancelled at once).
            if goal.handle is not None and not goal.cancel_sent and \
                    goal.monitor.cancel_pending:
                goal.cancel_sent = True
                goal.handle.cancel_goal_async().add_done_callback(
                    partial(self._on_cancel_answer, goal))
            goal.monitor.poll(now, present)
            self._check(goal)

    def _check(self, goal: ControllerGoal) -> None:
        """Report a goal that has ended, once; forget it once nothing is owed to the
        server."""
        monitor = goal.monitor
        if not monitor.done:
            return
        with self._lock:
            if goal not in self._goals:
                return
            if monitor.released:
                self._goals.remove(goal)
            report, goal.reported = not goal.reported, True
            self._feedback_interval = max(self._feedback_interval, monitor.feedback_interval)
        if not report:
            return
        try:
            self._on_outcome(goal.owner, monitor.outcome)
        finally:
            goal.ended.set()

    # ------------------------------------------------------------------ views
    def goal_of(self, owner: Owner) -> ControllerGoal | None:
        with self._lock:
            return next((g for g in reversed(self._goals) if g.owner is owner), None)

    def settle(self, owner: Owner) -> ControllerOutcome | None:
        """After ``owner``'s move ended: cancel its controller goal if it still runs and wait
        (bounded by the cancel wait) until the controller acknowledged it or the wait ran out.
        Returns the goal's outcome, None when no goal of it was left."""
        goal = self.goal_of(owner)
        if goal is None:
            return None
        if goal.monitor.state in (ClientState.WAITING_SERVER, ClientState.SENT,
                                  ClientState.ACTIVE):
            self.cancel(goal, _why(owner))
        goal.ended.wait(self.waits.cancel_wait + self.waits.response_wait + 2 * POLL_PERIOD)
        return goal.monitor.outcome

    def latest_feedback(self, owner: Owner) -> FollowJointTrajectory.Feedback | None:
        goal = self.goal_of(owner)
        return None if goal is None else goal.feedback

    def end_all(self, code: MotionCode, message: str) -> None:
        """End every move still waiting for its controller goal with ``code`` and
        ``message``; the poll then cancels the goals. For a stop the runner cannot see: its
        trajectory has ended, the controller's result has not come yet."""
        with self._lock:
            owners = [g.owner for g in self._goals if not g.owner.done.is_set()]
        for owner in owners:
            owner.finish(code, message)
        if owners:
            self._wake.trigger()

    def cancel_all(self, reason: str) -> None:
        """Cancel every goal the server may still run, now (an emergency stop does not wait
        for the poll): the running ones, and those given up on whose cancel is unanswered
        (their cancel goes out again)."""
        with self._lock:
            goals = list(self._goals)
        for goal in goals:
            if goal.monitor.state in (ClientState.WAITING_SERVER, ClientState.SENT,
                                      ClientState.ACTIVE):
                self.cancel(goal, reason)
            elif goal.monitor.done and goal.monitor.cancel_pending:
                goal.cancel_sent = False
        self._wake.trigger()


def _why(owner: Owner) -> str:
    if owner.outcome is None:
        return 'the move ended'
    return f'{owner.outcome.name.lower()}: {owner.message}' if owner.message else \
        owner.outcome.name.lower()
