"""Structured solver results: an IK failure is an answer, not an exception."""

from __future__ import annotations

from dataclasses import dataclass, field
import enum
import math

import numpy as np

from arm_kinematics.common.checks import check_vector

# check_vector lives with the other value checks; request code reaches it here too.
__all__ = ['check_vector']


class ErrorCode(enum.IntEnum):
    """Why a solve succeeded or failed. Values match the constants in arm_interfaces."""

    OK = 0
    OUT_OF_REACH = 1
    INSIDE_INNER_HOLE = 2
    BELOW_MIN_HEIGHT = 3
    JOINT_LIMITS = 4
    NOT_CONVERGED = 5
    TIMED_OUT = 6
    INVALID_INPUT = 7
    UNKNOWN_FRAME = 8
    UNKNOWN_JOINT_NAMES = 9
    UNKNOWN_SOLVER = 10
    SOLVER_NOT_APPLICABLE = 11
    FLOOR_COLLISION = 12
    PARTIAL_SOLUTION = 13
    BUSY = 14
    INTERNAL_ERROR = 15
    COLLISION = 16


class GoalType(enum.IntEnum):
    """What part of the tool pose a solve must reach."""

    POSITION = 0      # tip position only (3 constraints)
    TOOL_DOWN = 1     # tip position and tool Z axis pointing along −Z of the base
    FULL_POSE = 2     # position and orientation (6 constraints)


@dataclass(frozen=True, slots=True)
class Solution:
    """One labelled joint solution (radians), e.g. branch 'elbow_up'."""

    label: str
    q: np.ndarray


@dataclass(slots=True)
class IKResult:
    """Outcome of one IK request.

    Attributes:
        code: ErrorCode; ``success`` is ``code == OK``.
        reason: what happened, in words a person can act on.
        q: chosen joint positions (radians) or None when there is none to offer.
        branch: label of the chosen solution ('' for numeric solvers).
        tip_position: tip position reached by ``q`` (metres, base frame).
        position_error: |target − reached| (metres); inf when nothing was reached.
        orientation_error: rotation angle between target and reached tool (radians),
            0 for position-only goals.
        iterations: solver iterations used (0 for closed-form solvers).
        max_joint_step: largest single-joint change in one iteration (radians).
        solutions: every alternative solution when asked for.
        solve_time: wall time of the solve (seconds).
    """

    code: ErrorCode
    reason: str = ''
    q: np.ndarray | None = None
    branch: str = ''
    tip_position: np.ndarray | None = None
    position_error: float = math.inf
    orientation_error: float = 0.0
    iterations: int = 0
    max_joint_step: float = 0.0
    solutions: list[Solution] = field(default_factory=list)
    solve_time: float = 0.0

    @property
    def success(self) -> bool:
        return self.code == ErrorCode.OK


def invalid_input(reason: str) -> IKResult:
    """A result for malformed input (NaN, inf, wrong shape...)."""
    return IKResult(ErrorCode.INVALID_INPUT, reason)


def fast_vector(value: object, size: int) -> tuple[float, ...] | None:
    """Plain floats of a finite ``size``-vector given as list, tuple or 1-D float array.

    The common inputs take this path without numpy calls; anything else (or anything
    invalid) returns None and should go through ``check_vector`` for a precise reason.
    """
    kind = type(value)
    if kind is np.ndarray:
        if value.shape != (size,) or value.dtype.kind != 'f':
            return None
        floats = tuple(value.tolist())
    elif (kind is list or kind is tuple) and len(value) == size:
        try:
            floats = tuple(map(float, value))
        except (TypeError, ValueError):
            return None
    else:
        return None
    total = sum(floats)
    if total - total != 0.0:   # some component is NaN or ±inf (or the sum overflowed)
        for v in floats:
            if v - v != 0.0:
                return None
    return floats
