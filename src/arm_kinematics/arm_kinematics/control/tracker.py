"""One accepted FollowJointTrajectory goal on the server side, checked as JTC checks it.

``GoalTracker`` is what a controller (the stand-in, the servo bridge) runs every cycle:
``sample(t)`` gives the command, ``check(t, actual)`` compares the measured state with it and
says whether the goal runs on, succeeded or aborted, with the result code and error string
joint_trajectory_controller would send, plus the joint and the error it only logs.

JTC's rules, kept here:
- the path tolerance is checked before the last point's time, and on the very first sample
  whatever its time (so a first point at time 0 far from the current state aborts at once);
- from the last point's time on, the goal tolerance must hold; with goal_time > 0 the goal
  aborts with GOAL_TOLERANCE_VIOLATED when it still does not hold goal_time s after the end;
  with goal_time = 0 the controller waits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import enum

import numpy as np

from arm_kinematics.control.codes import ResultCode
from arm_kinematics.control.goal_rules import (
    Sample,
    SampledTrajectory,
    TrajectoryGoal,
    TrajectoryGoalRules,
)
from arm_kinematics.control.tolerances import check, worst


class GoalState(enum.Enum):
    RUNNING = 'running'
    SUCCEEDED = 'succeeded'
    ABORTED = 'aborted'


@dataclass(frozen=True)
class Verdict:
    """One check: the state, and for a finished goal its result (code and words).

    Attributes:
        desired: the sample at that time (controller joint order).
        error: desired - actual positions (JTC's sign), rad.
    """

    state: GoalState
    desired: Sample
    error: np.ndarray
    code: ResultCode | None = None
    message: str = ''

    @property
    def done(self) -> bool:
        return self.state is not GoalState.RUNNING


class GoalTracker:
    """An accepted goal: its interpolated trajectory and tolerances from acceptance on.

    Args:
        rules: the controller's rules (joints, default tolerances).
        goal: a goal ``rules.accept`` accepted.
        now: controller time of acceptance, s.
        positions, velocities: the measured state then, controller order.
    """

    def __init__(self, rules: TrajectoryGoalRules, goal: TrajectoryGoal, now: float,
                 positions: Sequence[float], velocities: Sequence[float] | None = None):
        self.joints = rules.joints
        self.tolerances, self.warning = rules.tolerances(goal)
        start = goal.start_time if goal.start_time > 0.0 else now
        self.trajectory = SampledTrajectory(goal, self.joints, start, positions, velocities)
        self._first_sample = True
        self.final: Verdict | None = None

    def sample(self, t: float) -> Sample:
        """The command at controller time ``t``."""
        return self.trajectory.sample(t)

    def check(self, t: float, positions: Sequence[float],
              velocities: Sequence[float] | None = None) -> Verdict:
        """Compare the measured state at ``t`` with the trajectory; once done, stays done.

        Pass ``velocities`` only where JTC compares them: with a velocity (or effort) command
        interface. With position commands JTC's velocity error is 0, so the goal's velocity
        tolerance (stopped_velocity_tolerance) is never checked.
        """
        if self.final is not None:
            return self.final
        desired = self.trajectory.sample(t)
        actual = np.asarray(positions, dtype=float)
        error = desired.positions - actual       # JTC's sign: desired - actual
        velocity_error = None
        if velocities is not None and len(velocities):
            velocity_error = desired.velocities - np.asarray(velocities, dtype=float)
        first, self._first_sample = self._first_sample, False
        if not desired.past_end or first:
            path = check(self.joints, self.tolerances.path, error, velocity_error)
            if path:
                return self._finish(GoalState.ABORTED, desired, error,
                                    ResultCode.PATH_TOLERANCE_VIOLATED,
                                    f'Aborted due to path tolerance violation: {worst(path)}')
        if not desired.past_end:
            return Verdict(GoalState.RUNNING, desired, error)
        goal = check(self.joints, self.tolerances.goal, error, velocity_error)
        if not goal:
            return self._finish(GoalState.SUCCEEDED, desired, error, ResultCode.SUCCESSFUL,
                                'Goal successfully reached!')
        late = t - self.trajectory.end_time
        if self.tolerances.goal_time > 0.0 and late > self.tolerances.goal_time:
            return self._finish(GoalState.ABORTED, desired, error,
                                ResultCode.GOAL_TOLERANCE_VIOLATED,
                                f'Aborted due to goal_time_tolerance exceeding by {late:f} '
                                f'seconds: {worst(goal)}')
        return Verdict(GoalState.RUNNING, desired, error)

    def _finish(self, state: GoalState, desired: Sample, error: np.ndarray, code: ResultCode,
                message: str) -> Verdict:
        self.final = Verdict(state, desired, error, code, message)
        return self.final
