"""MoveIt's error codes (moveit_msgs/MoveItErrorCodes, identical values) and the answer every
capability gives: a code, the project's words and the value asked for."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SUCCESS = 1
FAILURE = 99999
PLANNING_FAILED = -1
INVALID_MOTION_PLAN = -2
MOTION_PLAN_INVALIDATED_BY_ENVIRONMENT_CHANGE = -3
CONTROL_FAILED = -4
UNABLE_TO_AQUIRE_SENSOR_DATA = -5
TIMED_OUT = -6
PREEMPTED = -7
START_STATE_IN_COLLISION = -10
START_STATE_VIOLATES_PATH_CONSTRAINTS = -11
START_STATE_INVALID = -26
GOAL_IN_COLLISION = -12
GOAL_VIOLATES_PATH_CONSTRAINTS = -13
GOAL_CONSTRAINTS_VIOLATED = -14
GOAL_STATE_INVALID = -27
UNRECOGNIZED_GOAL_TYPE = -28
INVALID_GROUP_NAME = -15
INVALID_GOAL_CONSTRAINTS = -16
INVALID_ROBOT_STATE = -17
INVALID_LINK_NAME = -18
INVALID_OBJECT_NAME = -19
FRAME_TRANSFORM_FAILURE = -21
COLLISION_CHECKING_UNAVAILABLE = -22
ROBOT_STATE_STALE = -23
SENSOR_INFO_STALE = -24
COMMUNICATION_FAILURE = -25
CRASH = -29
ABORT = -30
NO_IK_SOLUTION = -31

NAMES = {value: name for name, value in dict(globals()).items()
         if name.isupper() and isinstance(value, int)}


def code_name(code: int) -> str:
    """MoveIt's name of ``code`` ('UNKNOWN(n)' for a value MoveIt does not define)."""
    return NAMES.get(code, f'UNKNOWN({code})')


@dataclass(frozen=True)
class Answer:
    """A capability's decision: MoveIt's code, the words, and the value (None on failure)."""

    code: int
    message: str
    value: Any = None

    @property
    def success(self) -> bool:
        return self.code == SUCCESS


def fail(code: int, message: str) -> Answer:
    return Answer(code, message)
