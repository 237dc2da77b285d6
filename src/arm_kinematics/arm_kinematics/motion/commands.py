"""Incoming joint commands (a goal's joint target, a client's trajectory), checked and reordered.

Rules (RELIABILITY cases 14 and 15): names must be non-empty, unique and exactly the arm's
joints; every position array must have one value per name; velocities are all absent or one
per name on every point. Known names in any order are accepted and reordered into the
chain order. Times, limits and the final velocity are checked afterwards by ``validation``
on the trajectory built here. Every failure is an INVALID_GOAL naming the field, the sizes
or the names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from arm_kinematics.common.joint_state import joint_order
from arm_kinematics.motion.errors import invalid_goal, MotionError
from arm_kinematics.motion.trajectory import Interpolation, Trajectory


@dataclass(frozen=True)
class TrajectoryPoint:
    """One point of a client trajectory as received (any joint order).

    Attributes:
        time: time from start, s.
        positions: rad, one per name.
        velocities: rad/s, one per name, or empty.
    """

    time: float
    positions: Sequence[float]
    velocities: Sequence[float] = ()


def command_order(arm_names: Sequence[str], names: Sequence[str], what: str
                  ) -> tuple[list[int] | None, MotionError | None]:
    """Index into ``names`` of each arm joint, or the reason the names are not acceptable."""
    names = list(names)
    if not names:
        return None, invalid_goal(f"{what} has no joint names (the arm's joints: "
                                  f'{", ".join(arm_names)})')
    order, reason = joint_order(arm_names, names, what)
    return (order, None) if order is not None else (None, invalid_goal(reason))


def _values(values: Sequence[float], count: int, what: str, names: Sequence[str],
            allow_empty: bool = False, finite: bool = True
            ) -> tuple[np.ndarray | None, MotionError | None]:
    try:
        array = np.asarray(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        return None, invalid_goal(f'{what} is not a list of numbers')
    if allow_empty and array.size == 0:
        return array, None
    if array.size != count:
        return None, invalid_goal(f'{what} has {array.size} values for {count} joint names'
                                  + (' (give none or one per name)' if allow_empty else ''))
    bad = np.flatnonzero(~np.isfinite(array)) if finite else ()
    if len(bad):
        index = int(bad[0])
        return None, invalid_goal(f'{what} of {names[index]} is {array[index]} (must be finite)')
    return array, None


def joint_vector(arm_names: Sequence[str], names: Sequence[str], positions: Sequence[float],
                 what: str = 'joint_target') -> tuple[np.ndarray | None, MotionError | None]:
    """A named joint command as a vector in chain order.

    Args:
        arm_names: the arm's joints, chain order.
        names, positions: the command as received (any order).
        what: the field, for messages.

    Returns:
        (positions in chain order, None) or (None, INVALID_GOAL naming the problem).
    """
    order, error = command_order(arm_names, names, what)
    if error is not None:
        return None, error
    values, error = _values(positions, len(names), f'{what} positions', names)
    if error is not None:
        return None, error
    return values[order], None


def trajectory_from_points(arm_names: Sequence[str], names: Sequence[str],
                           points: Sequence[TrajectoryPoint], what: str = 'trajectory'
                           ) -> tuple[Trajectory | None, MotionError | None]:
    """A client trajectory in chain order, not yet validated (times, limits, start...).

    Velocities given on every point give Hermite interpolation; none at all give straight
    segments with their slopes as velocities and rest at the last point.

    Returns:
        (Trajectory, None) or (None, INVALID_GOAL naming the problem).
    """
    order, error = command_order(arm_names, names, what)
    if error is not None:
        return None, error
    if not points:
        return None, invalid_goal(f'{what} has no points')
    count = len(names)
    times = np.array([float(point.time) for point in points])
    positions = np.empty((len(points), count))
    velocities = np.empty((len(points), count))
    with_velocities = None
    for index, point in enumerate(points):
        # Non-finite values are left to validation (TRAJECTORY_INVALID names them).
        row, error = _values(point.positions, count, f'{what} point {index} positions', names,
                             finite=False)
        if error is not None:
            return None, error
        speed, error = _values(point.velocities, count, f'{what} point {index} velocities',
                               names, allow_empty=True, finite=False)
        if error is not None:
            return None, error
        has = speed.size > 0
        if with_velocities is None:
            with_velocities = has
        elif has != with_velocities:
            return None, invalid_goal(f'{what} point {index} has {speed.size} velocities; give '
                                      'velocities on every point or on none')
        positions[index] = row
        if has:
            velocities[index] = speed
    positions = positions[:, order]
    if with_velocities:
        velocities = velocities[:, order]
        interpolation = Interpolation.HERMITE
    else:
        velocities = np.zeros_like(positions)
        steps = np.diff(times)
        if len(points) > 1 and np.all(steps > 0.0):
            with np.errstate(invalid='ignore', over='ignore'):
                velocities[:-1] = np.diff(positions, axis=0) / steps[:, None]
        interpolation = Interpolation.LINEAR
    return Trajectory(tuple(arm_names), times, positions, velocities, interpolation), None
