"""Timing of a followed joint path: linear (every step at its slowest joint's limit) or
min-jerk along the whole path (see motion/path_ik.py). No ROS.

Units: m, rad (m for prismatic joints), s.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    durations = (np.abs(np.diff(q, axis=0)) / limits).max(axis=1)
    # A step with no joint motion (a pure re-sample) still takes a little time.
    durations = np.maximum(durations, 1e-6)
    linear_times = np.concatenate([[0.0], np.cumsum(durations)])
    if settings.timing == LINEAR_TIMING:
        times = linear_times
    else:
        total = float(linear_times[-1])
        duration = MIN_JERK_PEAK_SPEED * total
        times = _invert_min_jerk(linear_times / total) * duration
        times[0], times[-1] = 0.0, duration
        # Strictly increasing even where two samples round to one time.
        times = np.maximum.accumulate(times + np.arange(len(times)) * 1e-12)
    velocities = _velocities(q, times)
    return Trajectory(names, times, q.copy(), velocities, Interpolation.LINEAR,
                      settings.timing)


def _velocities(q: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Joint velocities at the samples: np.gradient's second-order central differences
    on uneven spacing inside (its formula, term for term), zero at both ends. Written out:
    np.gradient's generality cost more than the differences on a short path."""
    velocities = np.zeros_like(q)
    dx = np.diff(times)
    dx1, dx2 = dx[:-1, None], dx[1:, None]
    a = -(dx2) / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    velocities[1:-1] = a * q[:-2] + b * q[1:-1] + c * q[2:]
    return velocities


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
