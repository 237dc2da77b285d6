"""The plain values target_input's core (kinematics.tasks.cycle) takes and returns.

Settings in (``CycleSettings``), results in (``GoalOutcome``), effects out (``SendGoal``,
``DropGoal``, ``Report``, ``MoveBall``, ``Log``, ``AskConsole``): frozen dataclasses a node
turns into messages and calls. Units: m, rad, s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import enum

import numpy as np

from arm_kinematics.common.log_line import LogLine
from arm_kinematics.tasks.current_pose import DEFAULT_WAIT
from arm_kinematics.tasks.pick_place import Ball, DEFAULT_GRASP_TOLERANCE
from arm_kinematics.tasks.sequences import MoveSettings


class ReportState(enum.IntEnum):
    """What became of a target or step; values match arm_interfaces/TargetStatus."""

    STARTED = 0
    SUCCEEDED = 1
    FAILED = 2
    REFUSED = 3
    STOPPED = 4
    FINISHED = 5


@dataclass(frozen=True)
class CycleSettings:
    """Immutable snapshot of the run-time settings (the node swaps a new one in whole).

    Attributes:
        clicks: motion law, duration (s), speed scale and solver of clicked targets; the
            solver also serves sequence moves that name none and the reachability check.
        goal_pose_type: what a goal_pose asks of the tool: position, tool_down, full_pose.
        cycles: cycles of the sequence, 0 = until stopped.
        grasp_tolerance: largest tip-to-ball distance at attach, m.
        result_timeout: time a move may take beyond its duration, s.
        response_timeout: time for the executor to accept or reject a goal, s.
        ball_rate: highest publish rate of the carried ball, Hz (<= 0: every tick).
        current_pose_timeout: how long a decision waits for a pose known to be current, s.
        autostart: start the cycle once the action server is up.
        interactive: ask START and GOAL on the console before the cycle.
    """

    clicks: MoveSettings = MoveSettings()
    goal_pose_type: str = 'position'
    cycles: int = 0
    grasp_tolerance: float = DEFAULT_GRASP_TOLERANCE
    result_timeout: float = 30.0
    response_timeout: float = 3.0
    ball_rate: float = 30.0
    current_pose_timeout: float = DEFAULT_WAIT
    autostart: bool = True
    interactive: bool = False


@dataclass(frozen=True)
class GoalRequest:
    """A MoveToTarget goal as data: the tool at ``position`` (m) in ``frame_id``, or the
    joint pose ``joints`` (rad, chain order; ``position`` is then its FK tip, for logs)."""

    frame_id: str
    position: tuple[float, float, float]
    settings: MoveSettings
    goal_type: str = 'position'
    orientation: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)
    joints: tuple[float, ...] | None = None


@dataclass(frozen=True)
class SendGoal:
    """Send ``goal`` as the goal ``token``; ``duration`` (s) is the move's own length."""

    token: int
    goal: GoalRequest
    duration: float
    source: str
    target_name: str


@dataclass(frozen=True)
class DropGoal:
    """Stop tracking goal ``token``; ``cancel``: ask the executor to cancel it too."""

    token: int
    cancel: bool


@dataclass(frozen=True)
class Report:
    """One arm_interfaces/TargetStatus (fields as there; ``target`` None: not set)."""

    state: ReportState
    source: str
    message: str
    sequence: str = ''
    cycle: int = 0
    step: int = 0
    phase: str = ''
    step_kind: str = 'target'
    target_name: str = ''
    target: tuple[float, float, float] | None = None
    code: int = 0
    ik_code: int = 0
    final_error: float = 0.0

    @property
    def level(self) -> str:
        """Log level that matches the state: error, warn or info."""
        if self.state in (ReportState.FAILED, ReportState.REFUSED):
            return 'error'
        return 'warn' if self.state == ReportState.STOPPED else 'info'

    @property
    def line(self) -> str:
        """The report as one log line."""
        where = self.source
        if self.sequence:
            where += f' {self.sequence}' + (f' cycle {self.cycle}' if self.cycle else '')
        if self.phase:
            where += f' {self.phase}'
        return f'[{where}] {self.state.name}: {self.message}'


@dataclass(frozen=True)
class MoveBall:
    """Publish the ball (arm_interfaces/BallState and its marker) as it is now."""

    ball: Ball
    sequence: str
    cycle: int
    phase: str


# A log line at ``level`` 'info', 'warn' or 'error' (the shared LogLine).
Log = LogLine


@dataclass(frozen=True)
class AskConsole:
    """Ask these points on the console (``defaults``: name -> point, m), then call
    ``console_answered`` and ``prepare``."""

    names: tuple[str, ...]
    defaults: Mapping[str, np.ndarray]


Effect = SendGoal | DropGoal | Report | MoveBall | Log | AskConsole


@dataclass(frozen=True)
class GoalOutcome:
    """A MoveToTarget result as data.

    Attributes:
        succeeded: the goal's status is SUCCEEDED.
        status: the goal's status (action_msgs/GoalStatus), for messages.
        code, ik_code: MotionErrorCode and IKErrorCode values.
        message, final_error: the result's (final_error in m).
        final: the joints at the end of the executed path (chain order), None when unknown.
    """

    succeeded: bool
    status: int
    code: int
    message: str = ''
    ik_code: int = 0
    final_error: float = 0.0
    final: np.ndarray | None = None
