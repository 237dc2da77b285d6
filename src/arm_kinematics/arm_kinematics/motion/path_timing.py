"""Timing of a followed joint path: linear (every step at its slowest joint's limit) or
min-jerk along the whole path (see motion/path_ik.py). No ROS.

Units: m, rad (m for prismatic joints), s.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

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
    durations = (np.abs(np.diff(q, axis=0)) / limits).max(axis=1)
    # A step with no joint motion (a pure re-sample) still takes a little time.
    durations = np.maximum(durations, 1e-6)
    linear_times = np.concatenate([[0.0], np.cumsum(durations)])
    if settings.timing == LINEAR_TIMING:
        times = linear_times
    else:
        total = float(linear_times[-1])
        duration = MIN_JERK_PEAK_SPEED * total
        s = linear_times / total
        # Invert s(τ) (monotonic) by bisection, all samples at once.
        low, high = np.zeros_like(s), np.ones_like(s)
        for _ in range(60):
            middle = 0.5 * (low + high)
            # min_jerk's s(τ) alone (its derivatives are not needed here).
            square = middle * middle
            below = square * middle * (10.0 - 15.0 * middle + 6.0 * square) < s
            low, high = np.where(below, middle, low), np.where(below, high, middle)
        times = 0.5 * (low + high) * duration
        times[0], times[-1] = 0.0, duration
        # Strictly increasing even where two samples round to one time.
        times = np.maximum.accumulate(times + np.arange(len(times)) * 1e-12)
    velocities = np.gradient(q, times, axis=0)
    velocities[[0, -1]] = 0.0
    return Trajectory(names, times, q.copy(), velocities, Interpolation.LINEAR,
                      settings.timing)
