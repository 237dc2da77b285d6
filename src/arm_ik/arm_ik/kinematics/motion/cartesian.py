"""Straight tool lines: minimum jerk and linear Cartesian, with IK at every sample.

The tool point follows p(t) = a + (b − a)·s(t/T), with s the minimum-jerk profile or the
linear α = clamp(t/T, 0, 1) (the reference Manipulator3D law). Every sample is solved by IK,
seeded with the previous sample's answer, so the joints follow one continuous branch. Where
the line cannot be followed the generator stops and says where and why, instead of jumping:

- ``ik``: no solution at that point (out of reach, inside the hole, below the minimum
  height...), with the IK code;
- ``joint_limit``: the solution needs a joint past its limit;
- ``singularity``: the condition number of the position Jacobian exceeds the threshold;
- ``jump``: consecutive samples differ by more than the largest allowed joint step (a
  branch flip: the solver found the point only on another branch).

Units: m, rad, s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
import math

import numpy as np

from arm_ik.kinematics import metrics
from arm_ik.kinematics.model import ArmModel
from arm_ik.kinematics.motion.laws import (
    linear,
    LINEAR_CARTESIAN,
    min_jerk,
    MIN_JERK_CARTESIAN,
    MIN_JERK_PEAK_SPEED,
    sample_times,
)
from arm_ik.kinematics.motion.trajectory import Interpolation, Trajectory
from arm_ik.kinematics.result import ErrorCode, IKResult
from arm_ik.kinematics.transforms import matrix_to_quaternion, quaternion_to_matrix

# Largest tool travel between two samples, m: the line is solved at least this densely.
MAX_POINT_STEP = 0.005
# Upper bound of samples of one line (60 s at 100 Hz is 6000).
MAX_SAMPLES = 20000

IKFunction = Callable[[np.ndarray, 'np.ndarray | None', np.ndarray], IKResult]
"""(tool position (3,) m, tool rotation (3, 3) or None, seed (n,) rad) → IKResult."""


@dataclass(frozen=True)
class CartesianFailure:
    """Where and why a straight tool line cannot be followed.

    Attributes:
        kind: 'ik', 'joint_limit', 'singularity' or 'jump' (see the module docstring).
        index: sample index at which it failed.
        time: time of that sample in the planned motion, s.
        fraction: how far along the line, 0..1.
        point: the tool point that could not be reached, m.
        message: the reason in words, naming the joint or the condition number.
        ik_code: the IK ErrorCode for 'ik' and 'joint_limit' failures, else None.
        reached: (K, 3) tool points followed before the failure, m.
    """

    kind: str
    index: int
    time: float
    fraction: float
    point: np.ndarray
    message: str
    ik_code: ErrorCode | None = None
    reached: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))


def slerp_rotations(start: np.ndarray, end: np.ndarray) -> Callable[[float], np.ndarray]:
    """Rotation matrices from ``start`` to ``end`` (3×3) at fraction s ∈ [0, 1], the short way."""
    qa = np.array(matrix_to_quaternion(start))
    qb = np.array(matrix_to_quaternion(end))
    dot = float(qa @ qb)
    if dot < 0.0:
        qb, dot = -qb, -dot
    angle = math.acos(min(dot, 1.0))

    def at(s: float) -> np.ndarray:
        if angle < 1e-9:
            q = qa + s * (qb - qa)
        else:
            q = (math.sin((1.0 - s) * angle) * qa + math.sin(s * angle) * qb) / math.sin(angle)
        return quaternion_to_matrix(*q)
    return at


def line_period(length: float, duration: float, period: float, peak_speed: float) -> float:
    """Sample spacing (s) so that the tool moves at most MAX_POINT_STEP between samples."""
    if length <= 0.0:
        return period
    finest = duration * MAX_POINT_STEP / (peak_speed * length)
    return max(min(period, finest), duration / MAX_SAMPLES)


def cartesian_line(model: ArmModel, solve: IKFunction, q0: np.ndarray, end: np.ndarray,
                   duration: float, period: float, law: str = MIN_JERK_CARTESIAN,
                   max_condition: float = 50.0, max_joint_step: float = 0.2,
                   rotations: Callable[[float], np.ndarray] | None = None
                   ) -> Trajectory | CartesianFailure:
    """Follow the straight tool line from FK(q0) to ``end``.

    Args:
        model: the arm.
        solve: IK of one tool point, seeded (see ``IKFunction``).
        q0: start positions, rad; the line starts at its tool point.
        end: tool point at the end, m.
        duration: T, s (> 0).
        period: largest sample spacing, s (the control period); finer when needed to keep
            the tool travel per sample within MAX_POINT_STEP.
        law: MIN_JERK_CARTESIAN (s(τ) = 10τ³ − 15τ⁴ + 6τ⁵) or LINEAR_CARTESIAN (α = τ).
        max_condition: largest condition number of the position Jacobian allowed.
        max_joint_step: largest change of any joint between two samples, rad.
        rotations: tool rotation at fraction s (3×3), or None for position goals.

    Returns:
        Trajectory (Hermite; velocities by finite differences, zero at both ends, tips
        filled), or CartesianFailure at the first sample that cannot be followed.

    Raises:
        ValueError: ``law`` is not a Cartesian law, or duration/period are not > 0.
    """
    if law not in (MIN_JERK_CARTESIAN, LINEAR_CARTESIAN):
        raise ValueError(f'{law!r} is not a Cartesian law')
    if not (duration > 0.0 and period > 0.0):
        raise ValueError(f'duration and period must be > 0 s, got {duration}, {period}')
    q0 = np.asarray(q0, dtype=float)
    start = model.fk(q0)[:3, 3]
    end = np.asarray(end, dtype=float)
    profile = min_jerk if law == MIN_JERK_CARTESIAN else linear
    peak = MIN_JERK_PEAK_SPEED if law == MIN_JERK_CARTESIAN else 1.0
    spacing = line_period(float(np.linalg.norm(end - start)), duration, period, peak)
    times = sample_times(duration, spacing)
    fractions = profile(times / duration)[0]
    positions = np.empty((len(times), model.dof))
    tips = np.empty((len(times), 3))
    positions[0], tips[0] = q0, start

    def fail(kind: str, index: int, message: str, code: ErrorCode | None = None
             ) -> CartesianFailure:
        point = start + (end - start) * fractions[index]
        where = (f'at {100.0 * fractions[index]:.1f} % of the line (t = {times[index]:.2f} s, '
                 f'tool ({point[0]:.3f}, {point[1]:.3f}, {point[2]:.3f}) m)')
        return CartesianFailure(kind, index, float(times[index]), float(fractions[index]),
                                point, f'the straight tool line fails {where}: {message}',
                                code, tips[:index].copy())

    condition = metrics.condition_number(model.jacobian(q0)[:3])
    if condition > max_condition:
        return fail('singularity', 0, f'the start pose is singular (condition number '
                    f'{condition:.3g} > {max_condition:g})')
    previous = q0
    for index in range(1, len(times)):
        point = start + (end - start) * fractions[index]
        rotation = rotations(float(fractions[index])) if rotations is not None else None
        result = solve(point, rotation, previous)
        if not result.success or result.q is None:
            kind = 'joint_limit' if result.code == ErrorCode.JOINT_LIMITS else 'ik'
            return fail(kind, index, f'{result.code.name}: {result.reason}', result.code)
        q = np.asarray(result.q, dtype=float)
        outside = [f'{name} = {value:.3f} rad outside [{low:.3f}, {high:.3f}]'
                   for name, value, low, high in zip(model.joint_names, q, model.lower,
                                                     model.upper)
                   if not low - 1e-9 <= value <= high + 1e-9]
        if outside:
            return fail('joint_limit', index, f'joint limit: {"; ".join(outside)}',
                        ErrorCode.JOINT_LIMITS)
        step = np.abs(q - previous)
        worst = int(np.argmax(step))
        if step[worst] > max_joint_step:
            return fail('jump', index, f'{model.joint_names[worst]} would jump '
                        f'{step[worst]:.3f} rad between two samples (more than '
                        f'{max_joint_step:g} rad): no continuous IK branch, e.g. a joint '
                        'limit or a singularity on the way')
        condition = metrics.condition_number(model.jacobian(q)[:3])
        if condition > max_condition:
            return fail('singularity', index, f'singularity: condition number '
                        f'{condition:.3g} > {max_condition:g}')
        positions[index] = q
        tips[index] = model.fk(q)[:3, 3] if result.tip_position is None else \
            np.asarray(result.tip_position, dtype=float)
        previous = q
    if len(times) > 1:
        velocities = np.gradient(positions, times, axis=0)
    else:
        velocities = np.zeros_like(positions)
    velocities[[0, -1]] = 0.0
    return Trajectory(tuple(model.joint_names), times, positions, velocities,
                      Interpolation.HERMITE, law, tips)
