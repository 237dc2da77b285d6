"""Outcomes of a motion request as plain values (the codes of arm_interfaces/MotionErrorCode).

A motion that cannot be made is an answer (``MotionError``), never an exception and never a
partial move: every generator and check returns one instead of raising.
"""

from __future__ import annotations

from dataclasses import dataclass
import enum

from arm_kinematics.ik.result import ErrorCode


class MotionCode(enum.IntEnum):
    """Why a move succeeded or failed. Values match arm_interfaces/MotionErrorCode."""

    SUCCESS = 0
    IK_FAILED = 1
    INVALID_GOAL = 2
    TRAJECTORY_INVALID = 3
    UNSAFE_PATH = 4
    START_MISMATCH = 5
    CANCELED = 6
    PREEMPTED = 7
    EMERGENCY_STOPPED = 8
    WATCHDOG = 9
    NO_JOINT_STATE = 10
    CARTESIAN_PATH_FAILED = 11
    INTERNAL_ERROR = 12
    NO_PATH = 13
    # output follow_joint_trajectory: what the controller said (arm_kinematics.control.codes)
    CONTROLLER_MISSING = 14
    CONTROLLER_REJECTED = 15
    PATH_TOLERANCE_VIOLATED = 16
    GOAL_TOLERANCE_VIOLATED = 17
    CONTROLLER_ABORTED = 18
    CONTROLLER_LOST = 19


@dataclass(frozen=True, slots=True)
class MotionError:
    """A refused or failed move.

    Attributes:
        code: MotionCode.
        message: what happened, in words a person can act on.
        ik_code: the IK ErrorCode when ``code`` is IK_FAILED or CARTESIAN_PATH_FAILED
            because a solve failed; None otherwise.
    """

    code: MotionCode
    message: str
    ik_code: ErrorCode | None = None

    def __str__(self) -> str:
        return f'{self.code.name}: {self.message}'


def invalid_goal(message: str) -> MotionError:
    """A MotionError for a malformed goal or command."""
    return MotionError(MotionCode.INVALID_GOAL, message)


def trajectory_invalid(message: str) -> MotionError:
    """A MotionError for a trajectory that breaks a rule (finite, limits, times...)."""
    return MotionError(MotionCode.TRAJECTORY_INVALID, message)
