"""A sampled joint trajectory: what every timed motion law produces and the executor plays.

Samples hold times (s from the start), positions (rad) and velocities (rad/s) in the arm's
chain order, like trajectory_msgs/JointTrajectory. Between samples the executor interpolates:
cubic Hermite when the velocities are the law's own (min-jerk, Cartesian lines), linear when
they are segment velocities (streaming laws simulated tick by tick, client trajectories
without velocities), so what is published always lies on the path that was checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
import enum

import numpy as np


class Interpolation(enum.Enum):
    """How positions between two samples are computed."""

    HERMITE = 'hermite'   # cubic through both positions with both velocities
    LINEAR = 'linear'     # straight segment; the velocity is the segment's slope


@dataclass(frozen=True)
class Trajectory:
    """Samples of a joint motion.

    Attributes:
        joint_names: joints of the columns, chain order.
        times: (N,) s from the start, strictly increasing (checked by ``validation``).
        positions: (N, n) rad.
        velocities: (N, n) rad/s.
        interpolation: how ``sample`` fills the time between samples.
        law: the motion law that made it ('' for a client's trajectory).
        tips: (N, 3) tool positions, m, when the generator computed them; else None.
    """

    joint_names: tuple[str, ...]
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    interpolation: Interpolation = Interpolation.HERMITE
    law: str = ''
    tips: np.ndarray | None = field(default=None, compare=False)

    def __len__(self) -> int:
        return len(self.times)

    @property
    def duration(self) -> float:
        """Time of the last sample, s (0 for a single point)."""
        return float(self.times[-1]) if len(self.times) else 0.0

    @property
    def start(self) -> np.ndarray:
        return self.positions[0]

    @property
    def end(self) -> np.ndarray:
        return self.positions[-1]

    @classmethod
    def hold(cls, joint_names: tuple[str, ...], q: np.ndarray, law: str = '') -> Trajectory:
        """A single sample at ``q`` (rad), zero velocity: the arm stays."""
        q = np.asarray(q, dtype=float).reshape(1, -1)
        return cls(tuple(joint_names), np.zeros(1), q.copy(), np.zeros_like(q),
                   Interpolation.LINEAR, law)

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Position (rad) and velocity (rad/s) at ``t`` s; held at the ends outside [0, T].

        Args:
            t: time from the start, s.

        Returns:
            (q, v), each (n,); v is zero before the start and after the end.
        """
        times = self.times
        rest = np.zeros(self.positions.shape[1])
        if len(times) == 1:
            return self.positions[0].copy(), rest
        if t <= times[0]:
            return self.positions[0].copy(), self.velocities[0].copy() if t == times[0] else rest
        if t >= times[-1]:
            return self.positions[-1].copy(), \
                self.velocities[-1].copy() if t == times[-1] else rest
        k = int(np.searchsorted(times, t, side='right')) - 1
        t0, t1 = times[k], times[k + 1]
        h = t1 - t0
        u = (t - t0) / h
        p0, p1 = self.positions[k], self.positions[k + 1]
        if self.interpolation is Interpolation.LINEAR:
            slope = (p1 - p0) / h
            return p0 + slope * (t - t0), slope
        v0, v1 = self.velocities[k], self.velocities[k + 1]
        u2, u3 = u * u, u * u * u
        h00, h10, h01, h11 = 2 * u3 - 3 * u2 + 1, u3 - 2 * u2 + u, -2 * u3 + 3 * u2, u3 - u2
        d00, d10, d01, d11 = 6 * u2 - 6 * u, 3 * u2 - 4 * u + 1, -6 * u2 + 6 * u, 3 * u2 - 2 * u
        q = h00 * p0 + h10 * h * v0 + h01 * p1 + h11 * h * v1
        v = (d00 * p0 + d10 * h * v0 + d01 * p1 + d11 * h * v1) / h
        return q, v

    def shifted(self, offset: float) -> Trajectory:
        """Every time plus ``offset`` s (to chain segments)."""
        return replace(self, times=self.times + offset)


def concatenate(parts: list[Trajectory]) -> Trajectory:
    """Segments played one after the other; each must start where the previous one ended.

    The shared sample at each junction appears once. Interpolation is Hermite when any part
    uses it (a linear part's velocities are its segment slopes, which Hermite reproduces on
    a straight segment only approximately, so mixed parts are avoided by the planner).
    """
    if not parts:
        raise ValueError('no trajectory to concatenate')
    times, positions, velocities, tips = [parts[0].times], [parts[0].positions], \
        [parts[0].velocities], [parts[0].tips]
    offset = parts[0].duration
    for part in parts[1:]:
        times.append(part.times[1:] + offset)
        positions.append(part.positions[1:])
        velocities.append(part.velocities[1:])
        tips.append(None if part.tips is None else part.tips[1:])
        offset += part.duration
    have_tips = all(t is not None for t in tips)
    first = parts[0]
    return Trajectory(first.joint_names, np.concatenate(times), np.vstack(positions),
                      np.vstack(velocities), first.interpolation, first.law,
                      np.vstack(tips) if have_tips else None)
