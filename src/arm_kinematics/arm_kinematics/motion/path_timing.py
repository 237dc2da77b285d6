"""Timing of a followed joint path: linear (every step at its slowest joint's limit) or
min-jerk along the whole path (see motion/path_ik.py). No ROS.

Units: m, rad (m for prismatic joints), s.
"""

from __future__ import annotations

from collections.abc import Sequence
import math

import numpy as np

from arm_kinematics.model.kernel import compiled
from arm_kinematics.motion.laws import MIN_JERK_PEAK_SPEED
from arm_kinematics.motion.path_request import LINEAR_TIMING, PathSettings
from arm_kinematics.motion.trajectory import Interpolation, Trajectory


def time_joint_path(model: object, q: np.ndarray, settings: PathSettings,
           u: Sequence[float]) -> Trajectory:
    """Time a joint path: linear (each step at its slowest joint's limit) or min-jerk."""
    names = tuple(model.joint_names)
    if len(q) == 1:
        return Trajectory.hold(names, q[0], settings.timing)
    limits = np.asarray(model.velocity_limits, dtype=float) * settings.velocity_scale
    q = np.ascontiguousarray(q, dtype=float)
    times, velocities = np.empty(len(q)), np.zeros_like(q)
    _time_path(q, limits, settings.timing != LINEAR_TIMING, MIN_JERK_PEAK_SPEED, times,
               velocities)
    return Trajectory(names, times, q.copy(), velocities, Interpolation.LINEAR,
                      settings.timing)


@compiled
def _time_path(q, limits, min_jerk, peak, times, velocities):
    """The times and velocities of ``time_joint_path``, compiled (in numpy, a few dozen
    calls cost more than a short path's solves; the arithmetic is numpy's, term for term).

    Each step takes its slowest joint's time at ``limits`` (at least 1e-6 s: a pure
    re-sample still takes a little); min-jerk maps those linear times through s(τ) of
    ``laws.min_jerk`` over ``peak`` × the linear duration. Velocities: np.gradient's
    second-order central differences on uneven spacing inside, zero at both ends."""
    count, n = q.shape
    times[0] = 0.0
    for i in range(1, count):
        slowest = 0.0
        for j in range(n):
            motion = abs(q[i, j] - q[i - 1, j])
            # numpy's x / 0 (inf; 0 / 0 is nan, which max passes over), without the
            # compiled division's ZeroDivisionError.
            if limits[j] > 0.0:
                slowest = max(slowest, motion / limits[j])
            elif motion > 0.0:
                slowest = math.inf
        times[i] = times[i - 1] + max(slowest, 1e-6)
    if min_jerk:
        total = times[count - 1]
        duration = peak * total
        times[:] = _invert_min_jerk(times / total) * duration
        times[0], times[count - 1] = 0.0, duration
        # Strictly increasing even where two samples round to one time.
        for i in range(count):
            times[i] += i * 1e-12
            if i and times[i] < times[i - 1]:
                times[i] = times[i - 1]
    for i in range(1, count - 1):
        dx1, dx2 = times[i] - times[i - 1], times[i + 1] - times[i]
        a = -(dx2) / (dx1 * (dx1 + dx2))
        b = (dx2 - dx1) / (dx1 * dx2)
        c = dx1 / (dx2 * (dx1 + dx2))
        for j in range(n):
            velocities[i, j] = a * q[i - 1, j] + b * q[i, j] + c * q[i + 1, j]


@compiled
def _invert_min_jerk(s):
    """τ in [0, 1] with min_jerk's s(τ) = ``s`` for each entry, by bisection (s is
    monotonic; 60 halvings reach the last bit). Compiled: in numpy the 60 passes over the
    samples cost more than the path's solves."""
    out = np.empty_like(s)
    for i in range(s.shape[0]):
        low, high = 0.0, 1.0
        for _ in range(60):
            middle = 0.5 * (low + high)
            # min_jerk's s(τ) alone (its derivatives are not needed here).
            square = middle * middle
            if square * middle * (10.0 - 15.0 * middle + 6.0 * square) < s[i]:
                low = middle
            else:
                high = middle
        out[i] = 0.5 * (low + high)
    return out
