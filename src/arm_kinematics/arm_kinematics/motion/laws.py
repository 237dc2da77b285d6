"""The motion laws: how the arm gets from where it is to a target.

Timed laws are generators: they return a whole sampled ``Trajectory`` before anything moves,
so it can be checked first (``validation``).

- Minimum jerk in joint space (the reference six-axis arm): q(t) = q0 + (q1 − q0)·s(t/T) with
  s(τ) = 10τ³ − 15τ⁴ + 6τ⁵, zero velocity and acceleration at both ends (``joint_min_jerk``).
- Minimum jerk along a straight tool line and linear Cartesian (the reference Manipulator3D,
  α = clamp(t/T, 0, 1), p = a + (b − a)·α) with IK at every sample: see ``cartesian``.

Streaming laws are steppers: each control tick moves the arm a little from its current pose,
so they can follow a live target; for a goal the executor simulates them tick by tick into a
trajectory (``simulate``) and checks that like any other.

- Exponential smoothing (the reference pointing arm): every joint closes the same fraction
  1 − e^(−k·dt) of its remaining gap per tick, a straight line in joint space
  (``ExponentialSmoothing``).
- Motor speed cap (the reference CCD arm): a set number of CCD iterations per tick, each joint
  turning at most ω_max·dt (``SpeedCap``).

Units: rad, rad/s, s, m.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import math
from typing import Protocol

import numpy as np

from arm_kinematics.motion.trajectory import Interpolation, Trajectory

EXPONENTIAL = 'exponential'
SPEED_CAP = 'speed_cap'
MIN_JERK = 'min_jerk'
MIN_JERK_CARTESIAN = 'min_jerk_cartesian'
LINEAR_CARTESIAN = 'linear_cartesian'
LAWS = (EXPONENTIAL, SPEED_CAP, MIN_JERK, MIN_JERK_CARTESIAN, LINEAR_CARTESIAN)
STREAMING_LAWS = (EXPONENTIAL, SPEED_CAP)
CARTESIAN_LAWS = (MIN_JERK_CARTESIAN, LINEAR_CARTESIAN)

# Peak of ds/dτ of the minimum-jerk profile (at τ = 1/2): 30/16.
MIN_JERK_PEAK_SPEED = 1.875
# Peak of |d²s/dτ²| (at τ = 1/2 ∓ √3/6): 10/√3.
MIN_JERK_PEAK_ACCELERATION = 10.0 / math.sqrt(3.0)


# ---------------------------------------------------------------------------- profiles
def min_jerk(tau: np.ndarray | float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The minimum-jerk profile and its derivatives.

    Args:
        tau: normalised time t/T (dimensionless); clipped to [0, 1].

    Returns:
        (s, ds/dτ, d²s/dτ²): s(τ) = 10τ³ − 15τ⁴ + 6τ⁵ goes 0 → 1 with zero first and second
        derivatives at both ends.
    """
    t = np.clip(np.asarray(tau, dtype=float), 0.0, 1.0)
    t2 = t * t
    t3 = t2 * t
    s = t3 * (10.0 - 15.0 * t + 6.0 * t2)
    ds = 30.0 * t2 * (1.0 - 2.0 * t + t2)
    dds = 60.0 * t * (1.0 - 3.0 * t + 2.0 * t2)
    return s, ds, dds


def linear(tau: np.ndarray | float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The linear profile α = clamp(τ, 0, 1), with dα/dτ = 1 inside and 0 outside."""
    t = np.asarray(tau, dtype=float)
    inside = (t > 0.0) & (t < 1.0)
    return np.clip(t, 0.0, 1.0), inside.astype(float), np.zeros_like(t)


def sample_times(duration: float, period: float) -> np.ndarray:
    """Times 0, period, 2·period, … and ``duration`` itself (s), strictly increasing.

    A last step shorter than 1 % of the period is merged into the previous one, so no
    segment is degenerate.
    """
    if not duration > 0.0:
        return np.zeros(1)
    count = max(int(math.ceil(duration / period - 0.01)), 1)
    times = np.arange(count + 1) * period
    times[-1] = duration
    return times


def min_jerk_duration(q0: np.ndarray, q1: np.ndarray, velocity_limits: np.ndarray) -> float:
    """Shortest minimum-jerk duration (s) whose peak joint speed stays within the limits.

    The peak of q̇ is 1.875·|Δq|/T, so T = 1.875·max_i |Δq_i| / v_i.
    """
    delta = np.abs(np.asarray(q1, dtype=float) - np.asarray(q0, dtype=float))
    return float(MIN_JERK_PEAK_SPEED * np.max(delta / velocity_limits)) if delta.size else 0.0


def joint_min_jerk(joint_names: tuple[str, ...], q0: np.ndarray, q1: np.ndarray,
                   duration: float, period: float) -> Trajectory:
    """Minimum-jerk move in joint space: a straight joint line with the s(τ) profile.

    Args:
        joint_names: chain order.
        q0, q1: start and goal, rad (n,).
        duration: T, s; 0 gives a single sample at ``q1`` (for q0 == q1).
        period: sample spacing, s (> 0).

    Returns:
        Trajectory with analytic velocities q̇ = (q1 − q0)·ṡ/T, zero at both ends.
    """
    q0 = np.asarray(q0, dtype=float)
    q1 = np.asarray(q1, dtype=float)
    if not duration > 0.0:
        return Trajectory.hold(joint_names, q1, MIN_JERK)
    times = sample_times(duration, period)
    s, ds, _ = min_jerk(times / duration)
    delta = q1 - q0
    positions = q0 + s[:, None] * delta
    velocities = (ds / duration)[:, None] * delta
    positions[-1] = q1
    velocities[[0, -1]] = 0.0
    return Trajectory(tuple(joint_names), times, positions, velocities,
                      Interpolation.HERMITE, MIN_JERK)


# ---------------------------------------------------------------------------- streaming laws
class ExponentialSmoothing:
    """Each joint closes the fraction 1 − e^(−k·dt) of its gap to the goal per tick.

    The step is additionally scaled down, the same factor for every joint so the path stays a
    straight joint line, when a joint would exceed its speed limit; with small gaps the law is
    exactly exponential. No goal, a non-finite one or one past a joint limit → the arm stays.
    """

    def __init__(self, gain: float, speed_limits: np.ndarray, lower: np.ndarray,
                 upper: np.ndarray) -> None:
        """Args:
            gain: k, 1/s (> 0).
            speed_limits: (n,) rad/s (> 0), usually the URDF limits × speed scale.
            lower, upper: (n,) joint limits, rad.
        """
        if not (math.isfinite(gain) and gain > 0.0):
            raise ValueError(f'gain must be finite and > 0 1/s, got {gain}')
        self.gain = float(gain)
        self.speed_limits = np.asarray(speed_limits, dtype=float)
        self.lower = np.asarray(lower, dtype=float)
        self.upper = np.asarray(upper, dtype=float)

    def fraction(self, dt: float) -> float:
        """Share of the gap closed in one tick of ``dt`` s: 1 − e^(−k·dt)."""
        return 1.0 - math.exp(-self.gain * dt)

    def goal_reason(self, goal: np.ndarray | None) -> str:
        """'' when the arm may head for ``goal``, else why it stays."""
        if goal is None:
            return 'no goal'
        goal = np.asarray(goal, dtype=float)
        if goal.shape != self.lower.shape or not np.all(np.isfinite(goal)):
            return 'goal is not a finite joint vector'
        if np.any(goal < self.lower - 1e-9) or np.any(goal > self.upper + 1e-9):
            return 'goal is past a joint limit'
        return ''

    def step(self, q: np.ndarray, goal: np.ndarray | None, dt: float) -> np.ndarray:
        """The pose one tick later.

        Args:
            q: current positions, rad (n,).
            goal: goal positions, rad (n,), or None.
            dt: tick length, s (≥ 0).

        Returns:
            New positions (a copy of ``q`` when the arm stays).
        """
        q = np.asarray(q, dtype=float)
        if self.goal_reason(goal) or not dt > 0.0:
            return q.copy()
        delta = (np.asarray(goal, dtype=float) - q) * self.fraction(dt)
        ratio = float(np.max(np.abs(delta) / (self.speed_limits * dt)))
        if ratio > 1.0:
            delta /= ratio
        return q + delta


class StepSolver(Protocol):
    """What SpeedCap needs of a solver: ``CCDSolver.step``."""

    def step(self, q: object, target: object, iterations: int = 1, max_step: float = 0.0,
             respect_limits: bool = True) -> tuple: ...


class SpeedCap:
    """A set number of CCD iterations per tick; each joint turns at most ω_i·dt per tick."""

    def __init__(self, solver: StepSolver, speed_limits: np.ndarray, iterations: int) -> None:
        """Args:
            solver: a ``CCDSolver`` of the arm (its ``step`` runs the sweeps).
            speed_limits: (n,) ω_max per joint, rad/s (> 0).
            iterations: CCD sweeps per tick (≥ 1).
        """
        if iterations < 1:
            raise ValueError(f'iterations must be >= 1, got {iterations}')
        self.solver = solver
        self.speed_limits = np.asarray(speed_limits, dtype=float)
        self.iterations = int(iterations)

    def step(self, q: np.ndarray, target: np.ndarray, dt: float) -> np.ndarray:
        """The pose one tick of ``dt`` s later (rad).

        The CCD sweeps run with the largest joint's cap (the solver takes one cap); each
        joint's change is then clipped to its own ω_i·dt, so no joint is ever faster.
        """
        q = np.asarray(q, dtype=float)
        if not dt > 0.0:
            return q.copy()
        caps = self.speed_limits * dt
        result = self.solver.step(q, target, self.iterations, float(caps.max()), True)
        return q + np.clip(np.asarray(result[0]) - q, -caps, caps)


# ---------------------------------------------------------------------------- simulation
@dataclass(frozen=True)
class Simulation:
    """A streaming law played tick by tick into a trajectory.

    Attributes:
        trajectory: the samples (linear interpolation; velocities are segment slopes).
        converged: the stop condition was met before ``max_duration``.
        stalled: progress stopped before convergence.
        message: the outcome in words.
    """

    trajectory: Trajectory
    converged: bool
    stalled: bool
    message: str


def simulate(joint_names: tuple[str, ...], q0: np.ndarray,
             step: Callable[[np.ndarray, float], np.ndarray],
             remaining: Callable[[np.ndarray], float], tolerance: float, period: float,
             max_duration: float, law: str, final: np.ndarray | None = None,
             stall_time: float = 1.0) -> Simulation:
    """Run a streaming law at ``period`` until ``remaining(q) <= tolerance``.

    Args:
        joint_names: chain order.
        q0: start, rad.
        step: q → q one tick later (the tick length is ``period``).
        remaining: how far q is from done (rad or m: the law's own measure).
        tolerance: done when ``remaining`` is at most this.
        period: tick length, s.
        max_duration: give up after this many seconds of simulated motion.
        law: name recorded in the trajectory.
        final: when given, appended as the last sample once converged (the exact goal, so
            the move ends there and not a tolerance short).
        stall_time: give up when ``remaining`` has not fallen by 1 % within this long, s.

    Returns:
        Simulation; the last sample always has zero velocity.
    """
    q = np.asarray(q0, dtype=float).copy()
    positions = [q.copy()]
    left = remaining(q)
    converged = left <= tolerance
    stalled = False
    window = max(int(round(stall_time / period)), 1)
    history = [left]
    ticks = int(math.ceil(max_duration / period))
    for _ in range(ticks):
        if converged:
            break
        q = step(q, period)
        positions.append(q.copy())
        left = remaining(q)
        history.append(left)
        if left <= tolerance:
            converged = True
        elif len(history) > window and left > 0.99 * history[-1 - window]:
            stalled = True
            break
    if converged and final is not None and not np.array_equal(positions[-1], final):
        positions.append(np.asarray(final, dtype=float).copy())
    array = np.array(positions)
    times = np.arange(len(array)) * period
    velocities = np.zeros_like(array)
    velocities[:-1] = np.diff(array, axis=0) / period
    if converged:
        message = f'converged in {times[-1]:.2f} s'
    elif stalled:
        message = (f'stalled at {left:.4g} from the goal after {times[-1]:.2f} s '
                   f'(tolerance {tolerance:g})')
    else:
        message = f'not converged within {max_duration:g} s ({left:.4g} left)'
    return Simulation(Trajectory(tuple(joint_names), times, array, velocities,
                                 Interpolation.LINEAR, law), converged, stalled, message)


# ---------------------------------------------------------------------------- live follow
class ExponentialFollow:
    """Exponential smoothing towards the latest joint goal (None: stay where it is)."""

    def __init__(self, law: ExponentialSmoothing) -> None:
        self.law = law
        self.goal: np.ndarray | None = None   # replaced whole, so a reader never sees half

    def step(self, q: np.ndarray, dt: float) -> np.ndarray:
        return self.law.step(q, self.goal, dt)


class SpeedCapFollow:
    """Speed-capped CCD towards the latest tool target (None: stay where it is)."""

    def __init__(self, law: SpeedCap) -> None:
        self.law = law
        self.target: np.ndarray | None = None

    def step(self, q: np.ndarray, dt: float) -> np.ndarray:
        target = self.target
        if target is None:
            return np.asarray(q, dtype=float).copy()
        return self.law.step(q, target, dt)
