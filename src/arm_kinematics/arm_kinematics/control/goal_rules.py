"""A FollowJointTrajectory goal as plain data, the rules that accept it, and its interpolation.

``TrajectoryGoalRules.accept`` applies joint_trajectory_controller's documented checks, in its
order and with its words (validate_trajectory_msg): joint names, an empty trajectory, a non-zero
final velocity, a trajectory that ends in the past, times not strictly increasing, per-point
sizes, effort fields. It is stricter in three places where JTC lets harm through: NaN or inf
values, duplicate joint names and negative times are rejected too (see RELIABILITY: NaN passes
DDS and JTC unchanged).

A start far from the current state is not a rejection in JTC: it accepts the goal and checks the
path tolerance on its first sample, which aborts with PATH_TOLERANCE_VIOLATED.
``GoalTracker`` reproduces that; ``start_violations`` tells a client before it sends.

Units: rad (m), rad/s, rad/s², s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import math

import numpy as np

from arm_kinematics.control.tolerances import (
    check,
    goal_tolerances,
    JointTolerance,
    SegmentTolerances,
    Violation,
)

# Velocities below this count as zero at the trajectory's end (JTC: float epsilon).
FINAL_VELOCITY_EPSILON = float(np.finfo(np.float32).eps)


@dataclass(frozen=True)
class TrajectoryPoint:
    """One point of a goal; empty tuples where the goal gives no values."""

    time_from_start: float
    positions: tuple[float, ...]
    velocities: tuple[float, ...] = ()
    accelerations: tuple[float, ...] = ()
    effort: tuple[float, ...] = ()


@dataclass(frozen=True)
class TrajectoryGoal:
    """A FollowJointTrajectory goal without ROS types.

    Attributes:
        joint_names: the trajectory's joint order.
        points: the trajectory points.
        start_time: header stamp in s of the controller's clock; 0: start on arrival.
        path_tolerance, goal_tolerance: (joint, JointTolerance) as the goal lists them.
        goal_time_tolerance: s; 0: the controller's default.
    """

    joint_names: tuple[str, ...]
    points: tuple[TrajectoryPoint, ...]
    start_time: float = 0.0
    path_tolerance: tuple[tuple[str, JointTolerance], ...] = ()
    goal_tolerance: tuple[tuple[str, JointTolerance], ...] = ()
    goal_time_tolerance: float = 0.0


@dataclass(frozen=True)
class Acceptance:
    """accept()'s answer: accepted, or the reason in JTC's words (its log line)."""

    accepted: bool
    reason: str = ''


@dataclass(frozen=True)
class ControllerSettings:
    """What joint_trajectory_controller reads from its parameters for these rules.

    Attributes:
        joints: the controller's joints (``joints`` parameter), its order.
        defaults: ``constraints`` (trajectory → path, goal and stopped_velocity_tolerance → goal,
            goal_time).
        allow_nonzero_velocity_at_trajectory_end: as in JTC.

    Goals must name every controller joint (JTC's default, allow_partial_joints_goal: false);
    partial goals are not modelled.
    """

    joints: tuple[str, ...]
    defaults: SegmentTolerances = field(default_factory=SegmentTolerances)
    allow_nonzero_velocity_at_trajectory_end: bool = False


def _finite(values: Sequence[float]) -> bool:
    return all(math.isfinite(v) for v in values)


class TrajectoryGoalRules:
    """Accepts or rejects goals as joint_trajectory_controller does; one per controller."""

    def __init__(self, settings: ControllerSettings):
        if not settings.joints or len(set(settings.joints)) != len(settings.joints):
            raise ValueError(f'controller joints must be unique and non-empty: {settings.joints}')
        self.settings = settings

    @property
    def joints(self) -> tuple[str, ...]:
        return self.settings.joints

    def accept(self, goal: TrajectoryGoal, now: float, active: bool = True) -> Acceptance:
        """Accept ``goal`` at controller time ``now`` (s), or say why not."""
        reason = self._reason(goal, now, active)
        return Acceptance(not reason, reason)

    def _reason(self, goal: TrajectoryGoal, now: float, active: bool) -> str:
        s = self.settings
        names, points = goal.joint_names, goal.points
        if not active:
            return "Can't accept new action goals. Controller is not running."
        if len(names) != len(s.joints):
            return ("Joints on incoming trajectory don't match the controller joints "
                    f'({len(names)} given, {len(s.joints)} expected: {", ".join(s.joints)}).')
        if not names:
            return 'Empty joint names on incoming trajectory.'
        if not points:
            return 'Empty trajectory received.'
        for name in names:
            if name not in s.joints:
                return f"Incoming joint {name} doesn't match the controller's joints."
        if len(set(names)) != len(names):
            return f'Duplicate joint names on incoming trajectory: {", ".join(names)}.'
        if not s.allow_nonzero_velocity_at_trajectory_end:
            for name, v in zip(names, points[-1].velocities):
                if not abs(v) <= FINAL_VELOCITY_EPSILON:
                    return (f'Velocity of last trajectory point of joint {name} is not zero: '
                            f'{v:.15f}')
        if not math.isfinite(goal.start_time) or not math.isfinite(goal.goal_time_tolerance):
            return 'Header stamp or goal_time_tolerance is not finite.'
        if goal.start_time != 0.0 and goal.start_time + points[-1].time_from_start < now:
            return (f'Received trajectory with non-zero start time ({goal.start_time:f}) that '
                    f'ends in the past ({goal.start_time + points[-1].time_from_start:f})')
        previous = 0.0
        for i, point in enumerate(points):
            t = point.time_from_start
            if not math.isfinite(t) or t < 0.0:
                return f'Time of point {i} is negative or not finite: {t}'
            if i > 0 and t <= previous:
                return (f'Time between points {i - 1} and {i} is not strictly increasing, it is '
                        f'{previous:f} and {t:f} respectively')
            previous = t
            for label, values, allow_empty in (('positions', point.positions, False),
                                               ('velocities', point.velocities, True),
                                               ('accelerations', point.accelerations, True)):
                if allow_empty and not values:
                    continue
                if len(values) != len(names):
                    return (f'Mismatch between joint_names size ({len(names)}) and {label} '
                            f'({len(values)}) at point #{i}.')
                if not _finite(values):
                    return f'Point #{i} has a NaN or infinite value in {label}.'
            if point.effort:
                return ('Trajectories with effort fields are only supported for controllers '
                        "using the 'effort' command interface.")
        return ''

    def tolerances(self, goal: TrajectoryGoal) -> tuple[SegmentTolerances, str]:
        """The goal's tolerances over the controller's defaults (and a warning, if reverted)."""
        return goal_tolerances(self.settings.defaults, goal.path_tolerance, goal.goal_tolerance,
                               goal.goal_time_tolerance)

    def start_violations(self, goal: TrajectoryGoal, current: Sequence[float]) -> list[Violation]:
        """Path-tolerance violations of a first point at time 0 against the current positions
        (``current`` in controller joint order): what JTC's first sample will abort for."""
        if not goal.points or goal.points[0].time_from_start > 0.0:
            return []
        order = [goal.joint_names.index(j) for j in self.joints if j in goal.joint_names]
        first = np.asarray(goal.points[0].positions)[order]
        tolerances, _ = self.tolerances(goal)
        joints = [j for j in self.joints if j in goal.joint_names]
        current_of = dict(zip(self.joints, current))
        return check(joints, tolerances.path, [current_of[j] - p for j, p in zip(joints, first)])


@dataclass(frozen=True)
class Sample:
    """The desired state at one time; ``index``: the point being approached (-1: before the
    first segment starts), ``past_end``: at or after the last point's time."""

    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray
    index: int
    past_end: bool


class SampledTrajectory:
    """An accepted goal in controller joint order, interpolated as JTC's splines do: linear
    between points with positions only, cubic with velocities, quintic with accelerations; the
    first segment runs from the state at acceptance to the first point.

    Args:
        goal: an accepted goal.
        joints: controller joint order (every goal joint among them).
        start_time: controller time (s) the trajectory starts (the stamp, or arrival time).
        start_positions, start_velocities: the state at acceptance, controller order.
    """

    def __init__(self, goal: TrajectoryGoal, joints: Sequence[str], start_time: float,
                 start_positions: Sequence[float],
                 start_velocities: Sequence[float] | None = None):
        order = [goal.joint_names.index(j) for j in joints]
        n = len(joints)
        self.start_time = float(start_time)
        self.times = np.array([0.0] + [p.time_from_start for p in goal.points])
        q0 = np.asarray(start_positions, dtype=float)
        v0 = np.zeros(n) if start_velocities is None else np.asarray(start_velocities, float)

        def column(values: tuple[float, ...], default: np.ndarray | None) -> np.ndarray | None:
            return np.asarray(values, dtype=float)[order] if values else default

        self.has_velocities = all(p.velocities for p in goal.points)
        self.has_accelerations = self.has_velocities and all(p.accelerations for p in goal.points)
        self.q = np.vstack([q0] + [column(p.positions, None) for p in goal.points])
        zeros = np.zeros(n)
        self.v = np.vstack([v0] + [column(p.velocities, zeros) for p in goal.points])
        self.a = np.vstack([zeros] + [column(p.accelerations, zeros) for p in goal.points])

    @property
    def end_time(self) -> float:
        """Controller time (s) of the last point."""
        return self.start_time + float(self.times[-1])

    def sample(self, t: float) -> Sample:
        """The desired state at controller time ``t`` (s)."""
        rel = t - self.start_time
        last = len(self.times) - 1
        if rel <= 0.0:
            return Sample(self.q[0].copy(), self.v[0].copy(), self.a[0].copy(), -1, last == 0)
        if rel >= self.times[-1]:
            return Sample(self.q[-1].copy(), self.v[-1].copy(), self.a[-1].copy(), last - 1, True)
        k = int(np.searchsorted(self.times, rel, side='right'))   # segment k-1 → k
        t0, t1 = self.times[k - 1], self.times[k]
        duration, s = t1 - t0, rel - t0
        if self.has_accelerations:
            q, v, a = _quintic(self.q[k - 1], self.v[k - 1], self.a[k - 1], self.q[k],
                               self.v[k], self.a[k], duration, s)
        elif self.has_velocities:
            q, v, a = _cubic(self.q[k - 1], self.v[k - 1], self.q[k], self.v[k], duration, s)
        else:
            slope = (self.q[k] - self.q[k - 1]) / duration
            q, v, a = self.q[k - 1] + slope * s, slope, np.zeros_like(slope)
        return Sample(q, v, a, k - 1, False)


def _cubic(p0, v0, p1, v1, duration, s):
    T = duration  # noqa: N806 (the textbook name)
    c2 = (3 * (p1 - p0) - (2 * v0 + v1) * T) / T**2
    c3 = (2 * (p0 - p1) + (v0 + v1) * T) / T**3
    return (p0 + v0 * s + c2 * s**2 + c3 * s**3, v0 + 2 * c2 * s + 3 * c3 * s**2,
            2 * c2 + 6 * c3 * s)


def _quintic(p0, v0, a0, p1, v1, a1, duration, s):
    T = duration  # noqa: N806 (the textbook name)
    c3 = (20 * (p1 - p0) - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T**2) / (2 * T**3)
    c4 = (30 * (p0 - p1) + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T**2) / (2 * T**4)
    c5 = (12 * (p1 - p0) - 6 * (v1 + v0) * T - (a0 - a1) * T**2) / (2 * T**5)
    q = p0 + v0 * s + a0 / 2 * s**2 + c3 * s**3 + c4 * s**4 + c5 * s**5
    v = v0 + a0 * s + 3 * c3 * s**2 + 4 * c4 * s**3 + 5 * c5 * s**4
    a = a0 + 6 * c3 * s + 12 * c4 * s**2 + 20 * c5 * s**3
    return q, v, a
