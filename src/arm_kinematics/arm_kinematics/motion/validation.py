"""Every trajectory is checked before its first point is sent; a failure is a MotionError.

The checks, in order (the first failure is reported; nothing of the trajectory runs):

1. shape: names are the arm's joints in chain order, arrays (N,), (N, n), (N, n), N ≥ 1
   (TRAJECTORY_INVALID);
2. finite times, positions and velocities — NaN and inf pass through DDS and through
   ros2_control unchanged, so this boundary must stop them (TRAJECTORY_INVALID);
3. times non-negative and strictly increasing (TRAJECTORY_INVALID);
4. zero velocity at the last point: the arm must be at rest when the trajectory ends
   (TRAJECTORY_INVALID);
5. joint position limits of the URDF (TRAJECTORY_INVALID);
6. URDF velocity limits, for the declared velocities and for the slope between consecutive
   samples. Policy: **reject**. Validation never rescales a trajectory: the motion laws
   time-scale their own plans to the limits before they are checked (a goal's duration is a
   minimum), and a client's trajectory that is too fast is refused (TRAJECTORY_INVALID);
7. the first point within ``start_tolerance`` of the current joint state (START_MISMATCH);
8. the safety path check (floor, obstacle contacts), when one is given (UNSAFE_PATH).

Units: rad, rad/s, s, m.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
import math

import numpy as np

from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.errors import MotionCode, MotionError, trajectory_invalid
from arm_kinematics.motion.trajectory import Trajectory


@dataclass(frozen=True, slots=True)
class ValidationSettings:
    """Tolerances of the checks.

    Attributes:
        start_tolerance: largest distance of the first point from the current state, rad
            (per joint).
        velocity_tolerance: fraction by which a speed may exceed its limit (finite
            differences of a time-scaled plan land on the limit up to rounding).
        final_velocity_tolerance: largest |velocity| at the last point, rad/s.
        limit_tolerance: slack on the position limits, rad.
    """

    start_tolerance: float = 0.02
    velocity_tolerance: float = 0.01
    final_velocity_tolerance: float = 1e-9
    limit_tolerance: float = 1e-9


@dataclass(frozen=True)
class PathReport:
    """What the safety path check found.

    Attributes:
        error: UNSAFE_PATH (with where and why) or None when the path is clear.
        contact_times: (K,) s from the start, obstacle contacts sampled at 60 Hz.
        contact_points: (K, 3) tool positions at those contacts, m.
        message: the check's summary in words.
    """

    error: MotionError | None = None
    contact_times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    contact_points: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    message: str = ''


PathCheck = Callable[[Trajectory], PathReport]
"""A safety check of a whole trajectory (see ``motion.safety_check``)."""


@dataclass(frozen=True)
class Validation:
    """Outcome of ``validate_trajectory``: ``error`` is None when the trajectory may run."""

    error: MotionError | None
    path: PathReport | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _first_bad(mask: np.ndarray) -> tuple[int, int]:
    """(sample, joint) of the first True of an (N, n) mask."""
    sample, joint = np.argwhere(mask)[0]
    return int(sample), int(joint)


def check_shape(trajectory: Trajectory, model: ArmModel) -> str:
    """'' when the arrays and names fit the arm, else the reason."""
    n = model.dof
    if tuple(trajectory.joint_names) != tuple(model.joint_names):
        return (f"joint names {list(trajectory.joint_names)} are not the arm's joints in "
                f'chain order {list(model.joint_names)}')
    count = len(trajectory.times)
    if count == 0:
        return 'the trajectory has no points'
    if trajectory.times.shape != (count,) or trajectory.positions.shape != (count, n) or \
            trajectory.velocities.shape != (count, n):
        return (f'array shapes {trajectory.times.shape}, {trajectory.positions.shape}, '
                f'{trajectory.velocities.shape} do not match ({count},), ({count}, {n})')
    return ''


def check_finite(trajectory: Trajectory) -> str:
    """'' when every time, position and velocity is finite, else the first offender."""
    if not np.all(np.isfinite(trajectory.times)):
        index = int(np.flatnonzero(~np.isfinite(trajectory.times))[0])
        return f'time of point {index} is {trajectory.times[index]} (must be finite)'
    for what, array in (('position', trajectory.positions),
                        ('velocity', trajectory.velocities)):
        bad = ~np.isfinite(array)
        if bad.any():
            sample, joint = _first_bad(bad)
            return (f'{what} of {trajectory.joint_names[joint]} at point {sample} is '
                    f'{array[sample, joint]} (must be finite)')
    return ''


def check_times(times: np.ndarray) -> str:
    """'' when times are ≥ 0 and strictly increasing, else the first offender."""
    if times[0] < 0.0:
        return f'time of point 0 is {times[0]:g} s (must be >= 0)'
    steps = np.diff(times)
    if np.any(steps <= 0.0):
        index = int(np.flatnonzero(steps <= 0.0)[0]) + 1
        return (f'times must increase strictly: point {index} at {times[index]:g} s follows '
                f'{times[index - 1]:g} s')
    return ''


def check_final_velocity(trajectory: Trajectory, tolerance: float) -> str:
    """'' when the last point is at rest, else the joint that still moves."""
    final = np.abs(trajectory.velocities[-1])
    if np.any(final > tolerance):
        joint = int(np.argmax(final))
        return (f'final velocity of {trajectory.joint_names[joint]} is '
                f'{trajectory.velocities[-1, joint]:g} rad/s (the last point must be at rest)')
    return ''


def check_position_limits(trajectory: Trajectory, model: ArmModel, tolerance: float) -> str:
    """'' when every point is inside the URDF position limits, else the first offender."""
    positions = trajectory.positions
    bad = (positions < model.lower - tolerance) | (positions > model.upper + tolerance)
    if bad.any():
        sample, joint = _first_bad(bad)
        return (f'{model.joint_names[joint]} = {positions[sample, joint]:.4f} rad at point '
                f'{sample} (t = {trajectory.times[sample]:.3f} s) is outside its limits '
                f'[{model.lower[joint]:.4f}, {model.upper[joint]:.4f}]')
    return ''


def check_velocity_limits(trajectory: Trajectory, model: ArmModel, tolerance: float) -> str:
    """'' when declared velocities and slopes between samples respect the URDF limits."""
    allowed = model.velocity_limits * (1.0 + tolerance) + 1e-9
    reason = _speed_reason(trajectory, model, 'velocity', trajectory.velocities, allowed)
    if reason or len(trajectory.times) < 2:
        return reason
    slopes = np.abs(np.diff(trajectory.positions, axis=0)) / np.diff(trajectory.times)[:, None]
    return _speed_reason(trajectory, model, 'speed', slopes, allowed)


def _speed_reason(trajectory: Trajectory, model: ArmModel, what: str, speeds: np.ndarray,
                  allowed: np.ndarray) -> str:
    """'' when every |speeds| (rad/s, a row per point, or per step between two points when
    there is one row fewer) is within ``allowed``, else the first joint beyond its limit."""
    fast = np.abs(speeds) > allowed
    if not fast.any():
        return ''
    sample, joint = _first_bad(fast)
    where = f'at point {sample}' if len(speeds) == len(trajectory.times) else \
        f'between points {sample} and {sample + 1}'
    return (f'{what} of {model.joint_names[joint]} {where} (t = '
            f'{trajectory.times[sample]:.3f} s) is {speeds[sample, joint]:.4f} rad/s, beyond '
            f'its limit {model.velocity_limits[joint]:.4f} rad/s')


def check_start(trajectory: Trajectory, model: ArmModel, current: np.ndarray,
                tolerance: float) -> str:
    """'' when the first point is within ``tolerance`` (rad) of ``current``."""
    gap = np.abs(trajectory.positions[0] - np.asarray(current, dtype=float))
    joint = int(np.argmax(gap))
    if not gap[joint] <= tolerance:
        return (f'the trajectory starts {gap[joint]:.4f} rad away from the current state on '
                f'{model.joint_names[joint]} (first point {trajectory.positions[0, joint]:.4f},'
                f' current {current[joint]:.4f} rad; tolerance {tolerance:g} rad)')
    return ''


def validate_trajectory(trajectory: Trajectory, model: ArmModel, current: np.ndarray,
                        settings: ValidationSettings = ValidationSettings(),
                        path_check: PathCheck | None = None) -> Validation:
    """Run every check of the module docstring; the first failure wins.

    Args:
        trajectory: what would be executed.
        model: the arm (limits).
        current: the current joint state, rad (n,) — measured when there is feedback,
            else the commanded pose.
        settings: tolerances.
        path_check: the safety check of the whole path; None skips it.

    Returns:
        Validation with the error (None: may run) and the path report (contacts).
    """
    # Each check assumes the ones before it passed (shapes, then finite values, then times).
    checks = (lambda: check_shape(trajectory, model),
              lambda: check_finite(trajectory),
              lambda: check_times(trajectory.times),
              lambda: check_final_velocity(trajectory, settings.final_velocity_tolerance),
              lambda: check_position_limits(trajectory, model, settings.limit_tolerance),
              lambda: check_velocity_limits(trajectory, model, settings.velocity_tolerance))
    for check in checks:
        reason = check()
        if reason:
            return Validation(trajectory_invalid(reason))
    current = np.asarray(current, dtype=float)
    if current.shape != (model.dof,) or not np.all(np.isfinite(current)):
        return Validation(MotionError(MotionCode.NO_JOINT_STATE,
                                      f'the current joint state {current.tolist()} is not '
                                      f'{model.dof} finite values'))
    reason = check_start(trajectory, model, current, settings.start_tolerance)
    if reason:
        return Validation(MotionError(MotionCode.START_MISMATCH, reason))
    if path_check is None:
        return Validation(None)
    report = path_check(trajectory)
    return Validation(report.error, report)


def peak_speed_ratio(trajectory: Trajectory, speed_limits: np.ndarray) -> float:
    """Largest |q̇_i| / limit_i over declared velocities and sample slopes (≥ 0).

    A generator stretches its duration by this factor when it exceeds 1 (time scaling).
    """
    limits = np.asarray(speed_limits, dtype=float)
    ratio = float(np.max(np.abs(trajectory.velocities) / limits)) if len(trajectory) else 0.0
    if len(trajectory.times) > 1:
        slopes = np.abs(np.diff(trajectory.positions, axis=0)) / \
            np.diff(trajectory.times)[:, None]
        ratio = max(ratio, float(np.max(slopes / limits)))
    return ratio if math.isfinite(ratio) else math.inf
