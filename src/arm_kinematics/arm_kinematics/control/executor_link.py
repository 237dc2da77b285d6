"""The trajectory executor's rules for moves a controller plays (output
``follow_joint_trajectory``), without ROS: what a controller's outcome does to the move and
the commanded state, which pose is measured, when a stale joint state ends the moves still
waiting for their result, and how a move the executor ended is reported once its
controller goal is settled.

The node (``arm_ik.nodes.trajectory_executor``) keeps the action client
(``arm_ik.nodes.controller_link``) and turns these answers into messages and log lines.

Units: rad, s (monotonic clock).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
import threading

import numpy as np

from arm_kinematics.common.log_line import LogLine
from arm_kinematics.control.codes import ControllerOutcome, motion_code_of, Outcome
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.motion.executor import ExecutorCore, GoalEnd
from arm_kinematics.motion.runner import Owner

# Codes a controller result gives a move: the move's end is the controller's own words.
CONTROLLER_CODES = (MotionCode.CONTROLLER_MISSING, MotionCode.CONTROLLER_REJECTED,
                    MotionCode.PATH_TOLERANCE_VIOLATED, MotionCode.GOAL_TOLERANCE_VIOLATED,
                    MotionCode.CONTROLLER_ABORTED, MotionCode.CONTROLLER_LOST)


class ControllerMoves:
    """The executor's decisions about moves sent to a FollowJointTrajectory controller.

    Args:
        core: the executor's core (its runner and measured-state feedback).
        action: the controller action's resolved name (in the words).
        lock: the node's output lock, held while the commanded state changes.
        controller_positions: the actual positions (chain order) in the controller's last
            feedback of an owner's goal, or None.
    """

    def __init__(self, core: ExecutorCore, action: str, lock: threading.Lock,
                 controller_positions: Callable[[Owner], np.ndarray | None]) -> None:
        self.core = core
        self.action = action
        self._lock = lock
        self._controller_positions = controller_positions

    def missing(self, wait: float) -> tuple[MotionCode, str]:
        """The move's end when no action server appeared within ``wait`` s."""
        return MotionCode.CONTROLLER_MISSING, (
            f'no FollowJointTrajectory action server on {self.action} within {wait:g} s: is '
            'the controller running and active?')

    def measured(self, now: float, owner: Owner) -> np.ndarray | None:
        """The measured pose (chain order): the feedback topic's when fresh, else the actual
        state in the controller's last feedback of ``owner``'s goal."""
        feedback = self.core.feedback
        if feedback is not None:
            q, age = feedback.latest(now)
            if q is not None and not age.stale:
                return q
        return self._controller_positions(owner)

    def adopt_measured(self, now: float) -> None:
        """The controller holds the arm between moves, where it ended (a fault, a cancel it
        never acknowledged): the commanded state of an arm at rest follows the measured one,
        so the next move starts where the arm is (no effect while a move runs)."""
        if self.core.feedback is None:
            return
        q, age = self.core.feedback.latest(now)
        if q is not None and not age.stale:
            with self._lock:
                self.core.runner.set_pose(q)

    def outcome(self, owner: Owner, outcome: ControllerOutcome, now: float) -> LogLine | None:
        """The controller ended ``owner``'s goal: end the move with its words; on a failure
        hold, and let the commanded state follow the measured one. Returns the line to log."""
        if owner.done.is_set():
            # The executor ended the move (cancel, new goal, stop): this is the cancel's end.
            level = 'info' if outcome.outcome is Outcome.CANCELED else 'warning'
            return LogLine(level, f'{owner.name}: controller goal: {outcome.message}')
        code = motion_code_of(outcome.outcome)
        if code == MotionCode.SUCCESS:
            owner.finish(code, outcome.message)
            return None
        message = f'{self.action}: {outcome.message}'
        runner = self.core.runner
        with self._lock:
            runner.stop(now, code, message, owner)
            owner.finish(code, message)
            measured = self.measured(now, owner)
            if measured is not None:
                runner.set_pose(measured)
        return LogLine('warning', f'{owner.name}: {code.name}: {message}')

    def stale_end(self, now: float) -> tuple[MotionCode, str] | None:
        """(code, words) ending every move still waiting for its controller's result when
        the measured joint state is stale: a move past its playback is no longer the
        runner's to stop."""
        feedback = self.core.feedback
        if feedback is None:
            return None
        measured, age = feedback.latest(now)
        if measured is None or not age.stale:
            return None
        return MotionCode.NO_JOINT_STATE, (
            f'measured joint state on {feedback.topic} is stale ({age.age:.3f} s old, more '
            f'than {age.limit:.3f} s)')

    def settled(self, end: GoalEnd, outcome: ControllerOutcome | None, now: float) -> GoalEnd:
        """A move's end once its controller goal was cancelled and acknowledged (or the wait
        ran out), said in the result. A stale joint state with the server gone is the
        controller dying (its joint states stop with it)."""
        if outcome is None or end.code in (MotionCode.SUCCESS, *CONTROLLER_CODES):
            return end
        if end.code == MotionCode.NO_JOINT_STATE and outcome.outcome in (
                Outcome.CANCEL_UNANSWERED, Outcome.CONTROLLER_LOST):
            # Its joint states stopped and it answers nothing: the controller is gone. The
            # arm is where it was last measured, and the commanded state goes there too.
            measured = self.core.feedback.latest(now)[0] \
                if self.core.feedback is not None else None
            if measured is not None:
                with self._lock:
                    self.core.runner.set_pose(measured)
            return replace(end, code=MotionCode.CONTROLLER_LOST, message=(
                f'{self.action}: the controller went away during the goal: its joint '
                f'states stopped ({end.message}) and {outcome.message}'))
        if outcome.outcome is Outcome.CANCELED:
            return replace(end, message=f'{end.message}; the controller goal was cancelled')
        return replace(end, message=f'{end.message}; controller goal: {outcome.message}')
