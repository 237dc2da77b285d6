"""FollowJointTrajectory result codes and the outcomes a client reports, in words.

The codes are control_msgs/action/FollowJointTrajectory's Result constants. A client sees more
outcomes than codes: a rejected goal carries no result at all (joint_trajectory_controller only
logs why), a missing server or a controller that stops answering never sends one. ``Outcome``
names every case; ``ControllerOutcome`` carries one with its message. MoveIt's
FollowJointTrajectoryControllerHandle reports these cases too, but as "CONTROL_FAILED"; here
each has its own words.
"""

from __future__ import annotations

from dataclasses import dataclass
import enum

from arm_kinematics.motion.errors import MotionCode


class ResultCode(enum.IntEnum):
    """control_msgs/action/FollowJointTrajectory Result.error_code values."""

    SUCCESSFUL = 0
    INVALID_GOAL = -1
    INVALID_JOINTS = -2
    OLD_HEADER_TIMESTAMP = -3
    PATH_TOLERANCE_VIOLATED = -4
    GOAL_TOLERANCE_VIOLATED = -5


class Outcome(enum.Enum):
    """How a controller goal ended, as a client sees it."""

    SUCCEEDED = 'succeeded'
    REJECTED = 'rejected'                    # refused at the goal request, no result
    INVALID_GOAL = 'invalid goal'            # aborted with INVALID_GOAL (e.g. preempted)
    INVALID_JOINTS = 'invalid joints'
    OLD_HEADER_TIMESTAMP = 'old header timestamp'
    PATH_TOLERANCE_VIOLATED = 'path tolerance violated'
    GOAL_TOLERANCE_VIOLATED = 'goal tolerance violated'
    ABORTED = 'aborted'                      # aborted with a code this table does not know
    CANCELED = 'canceled'                    # our cancel, acknowledged
    CANCEL_UNANSWERED = 'cancel unanswered'  # our cancel, never acknowledged in time
    SERVER_MISSING = 'server missing'        # no action server within the wait
    CONTROLLER_LOST = 'controller lost'      # server gone or silent during the goal
    OVERDUE = 'overdue'                      # talking, but no result long after the end


RESULT_OUTCOMES: dict[int, Outcome] = {
    ResultCode.SUCCESSFUL: Outcome.SUCCEEDED,
    ResultCode.INVALID_GOAL: Outcome.INVALID_GOAL,
    ResultCode.INVALID_JOINTS: Outcome.INVALID_JOINTS,
    ResultCode.OLD_HEADER_TIMESTAMP: Outcome.OLD_HEADER_TIMESTAMP,
    ResultCode.PATH_TOLERANCE_VIOLATED: Outcome.PATH_TOLERANCE_VIOLATED,
    ResultCode.GOAL_TOLERANCE_VIOLATED: Outcome.GOAL_TOLERANCE_VIOLATED,
}

# What each outcome means for the person reading it; the controller's own words follow.
EXPLANATIONS: dict[Outcome, str] = {
    Outcome.SUCCEEDED: 'the controller reached the goal within its tolerances',
    Outcome.REJECTED: ('the controller rejected the goal (joint_trajectory_controller logs why: '
                       'joint names, an empty trajectory, times not strictly increasing, a '
                       'non-zero final velocity, a trajectory that ends in the past, or the '
                       'controller is not active)'),
    Outcome.INVALID_GOAL: 'the controller aborted the goal as invalid',
    Outcome.INVALID_JOINTS: "the goal's joints do not match the controller's joints",
    Outcome.OLD_HEADER_TIMESTAMP: "the goal's header stamp lies in the past",
    Outcome.PATH_TOLERANCE_VIOLATED: ('the arm left the path tolerance while moving; the '
                                      'controller aborted and holds'),
    Outcome.GOAL_TOLERANCE_VIOLATED: ('the arm was not within the goal tolerance by the end '
                                      'time plus goal_time_tolerance'),
    Outcome.ABORTED: 'the controller aborted the goal',
    Outcome.CANCELED: 'the controller goal was cancelled and the cancel acknowledged',
    Outcome.CANCEL_UNANSWERED: 'the controller never acknowledged the cancel',
    Outcome.SERVER_MISSING: 'no FollowJointTrajectory action server answered',
    Outcome.CONTROLLER_LOST: 'the controller went away during the goal (no result)',
    Outcome.OVERDUE: ('the controller sent no result long after the trajectory should have '
                      'ended; the client stopped waiting'),
}


@dataclass(frozen=True, slots=True)
class ControllerOutcome:
    """How one controller goal ended.

    Attributes:
        outcome: the case (``Outcome``).
        error_code: the action's error_code when a result came, else None.
        detail: the controller's error_string or our own facts (which joint, how far, how long).
    """

    outcome: Outcome
    error_code: int | None = None
    detail: str = ''

    @property
    def succeeded(self) -> bool:
        return self.outcome is Outcome.SUCCEEDED

    @property
    def message(self) -> str:
        """One line a person can act on: what happened, then the controller's words."""
        text = EXPLANATIONS[self.outcome]
        if self.error_code is not None and self.outcome is Outcome.ABORTED:
            text += f' (error_code {self.error_code})'
        return f'{text}: {self.detail}' if self.detail else text


def outcome_of_result(error_code: int, error_string: str) -> ControllerOutcome:
    """The outcome of a result the controller sent (status SUCCEEDED or ABORTED)."""
    outcome = RESULT_OUTCOMES.get(int(error_code), Outcome.ABORTED)
    return ControllerOutcome(outcome, int(error_code), error_string.strip())


def motion_code_of(outcome: Outcome) -> MotionCode:
    """The MoveToTarget code of a controller outcome (the message carries the details)."""
    return {
        Outcome.SUCCEEDED: MotionCode.SUCCESS,
        Outcome.REJECTED: MotionCode.CONTROLLER_REJECTED,
        Outcome.PATH_TOLERANCE_VIOLATED: MotionCode.PATH_TOLERANCE_VIOLATED,
        Outcome.GOAL_TOLERANCE_VIOLATED: MotionCode.GOAL_TOLERANCE_VIOLATED,
        Outcome.SERVER_MISSING: MotionCode.CONTROLLER_MISSING,
        Outcome.CONTROLLER_LOST: MotionCode.CONTROLLER_LOST,
        Outcome.CANCELED: MotionCode.CANCELED,
        Outcome.CANCEL_UNANSWERED: MotionCode.CANCELED,
        Outcome.OVERDUE: MotionCode.CONTROLLER_ABORTED,
    }.get(outcome, MotionCode.CONTROLLER_ABORTED)
