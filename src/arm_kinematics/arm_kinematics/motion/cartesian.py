"""Straight tool lines for the executor: min-jerk and linear Cartesian, timed on path IK.

The joint path of a line is solved once, by path IK (``kinematics.path_ik.PathIK.follow``,
the same function behind ik_server's ``~/ik/cartesian_path``), so the executor and the
service can never disagree about whether or how a line is followed. This module only does
what path IK leaves to the motion law:

- timing: the tool point follows p(t) = a + (b − a)·s(t/T), with s the minimum-jerk profile
  or the linear α = clamp(t/T, 0, 1) (the reference Manipulator3D law). Path IK gives every
  joint sample its share of the line (``PathResult.progress``); the trajectory is sampled
  at the control period (finer when the tool would travel more than MAX_POINT_STEP between
  samples) and the joints at share s(t/T) are interpolated between the two path samples
  around it. No IK is solved again, so stretching T to the velocity limits costs no solve;
  between two path samples the joints move on the straight joint-space segment path IK
  checked (the tool stays within ``max_deviation`` of the line there);
- failures: a ``PathResult`` that stops becomes a ``CartesianFailure`` with the path's
  own message and a short kind (``KINDS``).

Units: m, rad, s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from arm_kinematics.ik.result import ErrorCode
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.laws import (
    linear,
    LINEAR_CARTESIAN,
    min_jerk,
    MIN_JERK_CARTESIAN,
    MIN_JERK_PEAK_SPEED,
    sample_times,
)
from arm_kinematics.motion.path_request import PathCode, PathResult
from arm_kinematics.motion.trajectory import Interpolation, Trajectory

# Largest tool travel between two samples, m: the line is solved (and sampled) at least
# this densely.
MAX_POINT_STEP = 0.005
# Upper bound of samples of one line (60 s at 100 Hz is 6000).
MAX_SAMPLES = 20000

# The CartesianFailure kind of every path stop code: the short names the line's failures
# always had ('ik', 'joint_limit', 'singularity', 'jump'), and one per stop path IK adds.
# Clients see the code itself (MoveToTarget path_stop_code), never the kind.
KINDS = {
    PathCode.JOINT_JUMP: 'jump',
    PathCode.SINGULARITY: 'singularity',
    PathCode.JOINT_LIMIT: 'joint_limit',
    PathCode.UNREACHABLE: 'ik',
    PathCode.FLOOR_CONTACT: 'floor',
    PathCode.OBSTACLE_CONTACT: 'obstacle',
    PathCode.TIMEOUT: 'timeout',
    PathCode.DEVIATION: 'deviation',
    PathCode.INVALID_INPUT: 'ik',
    PathCode.BUSY: 'internal',
    PathCode.INTERNAL_ERROR: 'internal',
}


@dataclass(frozen=True)
class CartesianFailure:
    """Where and why a straight tool line cannot be followed.

    Attributes:
        kind: KINDS of ``code`` ('ik', 'joint_limit', 'singularity', 'jump', 'floor',
            'obstacle', 'timeout', 'deviation', 'internal').
        code: the path IK stop code (CartesianPath.srv constants).
        fraction: share of the line's length followed, 0..1.
        waypoint: the request waypoint not reached (0: the line's end).
        point: the tool point that could not be followed, m.
        message: the reason in words, naming the joint or the condition number.
        ik_code: the IK ErrorCode behind 'ik' and 'joint_limit' failures, else None.
        reached: (K, 3) tool points of the joint samples followed before the stop, m.
    """

    kind: str
    code: PathCode
    fraction: float
    waypoint: int
    point: np.ndarray
    message: str
    ik_code: ErrorCode | None = None
    reached: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))


def line_failure(model: ArmModel, result: PathResult) -> CartesianFailure:
    """The CartesianFailure of a path IK result that stopped (its message kept whole)."""
    point = np.asarray(result.failed_position, dtype=float)
    if not np.isfinite(point).all():
        point = np.asarray(result.stop_position, dtype=float)
    reached = np.zeros((0, 3))
    if result.trajectory is not None:
        reached = model.fk_batch(result.trajectory.positions)[:, :3, 3]
    where = 'at the start' if not np.isfinite(point).all() else \
        f'at tool ({point[0]:.3f}, {point[1]:.3f}, {point[2]:.3f}) m'
    ik_code = result.ik_code if result.ik_code != ErrorCode.OK else None
    return CartesianFailure(KINDS.get(result.code, 'internal'), result.code,
                            float(result.fraction), int(result.stop_waypoint), point,
                            f'the straight tool line fails {where}: {result.message}',
                            ik_code, reached)


def line_period(length: float, duration: float, period: float, peak_speed: float) -> float:
    """Sample spacing (s) so that the tool moves at most MAX_POINT_STEP between samples."""
    if length <= 0.0:
        return period
    finest = duration * MAX_POINT_STEP / (peak_speed * length)
    return max(min(period, finest), duration / MAX_SAMPLES)


def time_line(model: ArmModel, path: np.ndarray, progress: np.ndarray, duration: float,
              period: float, law: str = MIN_JERK_CARTESIAN) -> Trajectory:
    """Time a joint path along a straight tool line with a Cartesian law.

    Args:
        model: the arm.
        path: (M, n) joint samples of the line (path IK's, start first), rad.
        progress: (M,) share of the line's length at every sample, 0..1, increasing.
        duration: T, s (> 0).
        period: largest sample spacing, s (the control period); finer when needed to keep
            the tool travel per sample within MAX_POINT_STEP.
        law: MIN_JERK_CARTESIAN (s(τ) = 10τ³ − 15τ⁴ + 6τ⁵) or LINEAR_CARTESIAN (α = τ).

    Returns:
        Trajectory (Hermite; velocities by finite differences, zero at both ends, tips
        filled) whose tool share at time t is s(t/T).

    Raises:
        ValueError: ``law`` is not a Cartesian law, duration/period are not > 0, or the
            path and its progress do not match.
    """
    if law not in (MIN_JERK_CARTESIAN, LINEAR_CARTESIAN):
        raise ValueError(f'{law!r} is not a Cartesian law')
    if not (duration > 0.0 and period > 0.0):
        raise ValueError(f'duration and period must be > 0 s, got {duration}, {period}')
    path = np.asarray(path, dtype=float)
    progress = np.asarray(progress, dtype=float)
    if path.ndim != 2 or path.shape[1] != model.dof or progress.shape != (len(path),):
        raise ValueError(f'a path of shape {path.shape} with {progress.shape} shares does not '
                         f'fit an arm of {model.dof} joints')
    names = tuple(model.joint_names)
    if len(path) == 1:
        return Trajectory.hold(names, path[0], law)
    tips_of_path = model.fk_batch(path)[:, :3, 3]
    length = float(np.linalg.norm(np.diff(tips_of_path, axis=0), axis=1).sum())
    profile = min_jerk if law == MIN_JERK_CARTESIAN else linear
    peak = MIN_JERK_PEAK_SPEED if law == MIN_JERK_CARTESIAN else 1.0
    times = sample_times(duration, line_period(length, duration, period, peak))
    shares = profile(times / duration)[0]
    # Strictly increasing knots for the interpolation, however the path rounded.
    knots = np.maximum.accumulate(progress + np.arange(len(progress)) * 1e-15)
    knots = (knots - knots[0]) / (knots[-1] - knots[0])
    positions = np.column_stack([np.interp(shares, knots, path[:, j])
                                 for j in range(model.dof)])
    positions[0], positions[-1] = path[0], path[-1]
    velocities = np.gradient(positions, times, axis=0)
    velocities[[0, -1]] = 0.0
    tips = model.fk_batch(positions)[:, :3, 3]
    return Trajectory(names, times, positions, velocities, Interpolation.HERMITE, law, tips)
