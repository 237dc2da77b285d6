"""Joint paths sampled for safety: timing, dense sampling, obstacle contacts in time, and the
check of a whole path before it is executed.

Paths are piecewise linear in joint space between waypoints. Units: radians, metres,
seconds. Contacts are sampled 60 times per second of motion (``sample_contacts``), so a
contact on the way is reported with its time and tip position, not only one at the end;
``check_path`` samples both by time and by distance (no capsule point moves more than
``MAX_POINT_STEP`` between samples).
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.scene.geometry import PoseChecks, SafetyGeometry, Verdict

# Sampling density of path checks: no capsule point moves farther than this between samples.
MAX_POINT_STEP = 0.02
# Obstacle contact sampled this many times per second of motion.
CONTACT_RATE = 60.0


@dataclass(frozen=True)
class PathSamples:
    """A piecewise-linear joint path sampled densely.

    Attributes:
        positions: (S, n) joint positions, rad.
        times: (S,) time from the path start, s.
        segment: (S,) index of the waypoint segment each sample lies on.
    """

    positions: np.ndarray
    times: np.ndarray
    segment: np.ndarray


@dataclass(frozen=True)
class Contacts:
    """Samples of a motion in which a link touches the obstacle.

    Attributes:
        times: (K,) s from the path start.
        tips: (K, 3) tip positions, m.
        positions: (K, n) joint positions, rad.
        distances: (K,) smallest link-to-centre distance, m.
        links: per contact, the names of the touching links.
    """

    times: np.ndarray
    tips: np.ndarray
    positions: np.ndarray
    distances: np.ndarray
    links: tuple[tuple[str, ...], ...]

    def __len__(self) -> int:
        return len(self.times)


@dataclass(frozen=True)
class PathCheck:
    """A joint path checked sample by sample.

    Attributes:
        samples: the samples checked.
        checks: their PoseChecks.
        first_violation: index of the first sample that is not SAFE, -1 when all are.
        first_violation_time: its time, s (NaN when none).
        first_violation_verdict: its Verdict (SAFE when none).
        contacts: the samples touching the obstacle (on the way as well as at the end).
        message: the outcome in words.
    """

    samples: PathSamples
    checks: PoseChecks
    first_violation: int
    first_violation_time: float
    first_violation_verdict: Verdict
    contacts: Contacts
    message: str

    @property
    def safe(self) -> bool:
        return self.first_violation < 0


# ---------------------------------------------------------------------------- timing
def time_at_velocity_limits(model: ArmModel, waypoints: np.ndarray,
                            scale: float = 1.0) -> np.ndarray:
    """Times (s) at which a piecewise-linear path reaches each waypoint when every segment
    takes as long as its slowest joint needs at ``scale`` × the URDF velocity limits.

    Accelerations are ignored: an executor adds its own profile.
    """
    waypoints = np.atleast_2d(np.asarray(waypoints, dtype=float))
    steps = np.abs(np.diff(waypoints, axis=0)) / (model.velocity_limits * scale)
    durations = steps.max(axis=1) if len(steps) else np.zeros(0)
    return np.concatenate([[0.0], np.cumsum(durations)])


# ---------------------------------------------------------------------------- sampling
def check_times(times: np.ndarray, count: int) -> str:
    """'' when ``times`` are ``count`` finite, non-negative, strictly increasing values."""
    if times.shape != (count,):
        return f'{times.size} times for {count} waypoints'
    if not np.isfinite(times).all():
        return 'times must be finite'
    if count and times[0] < 0.0:
        return f'times must be >= 0, the first is {times[0]}'
    if np.any(np.diff(times) <= 0.0):
        index = int(np.flatnonzero(np.diff(times) <= 0.0)[0])
        return (f'times must increase strictly; point {index + 1} at {times[index + 1]} s '
                f'follows {times[index]} s')
    return ''


def sample_path(geometry: SafetyGeometry, waypoints: np.ndarray,
                times: np.ndarray | None = None, rate: float = 0.0,
                max_point_step: float = MAX_POINT_STEP) -> PathSamples:
    """Sample a piecewise-linear joint path finely, uniformly in time on each segment.

    Args:
        geometry: supplies ``max_point_motion`` (how far links move per joint step).
        waypoints: (K, n) joint positions, rad.
        times: (K,) s, strictly increasing; None: timed at the URDF velocity limits.
        rate: at least this many samples per second of motion (Hz); 0: none required.
        max_point_step: no capsule point moves farther than this between samples, m.

    Returns:
        PathSamples, the first and last waypoint included.

    Raises:
        ValueError: bad shapes, non-finite values or times that do not increase.
    """
    waypoints = np.atleast_2d(np.asarray(waypoints, dtype=float))
    if waypoints.ndim != 2 or waypoints.shape[1] != geometry.model.dof or not len(waypoints):
        raise ValueError(f'waypoints must have shape (K, {geometry.model.dof}), '
                         f'got {waypoints.shape}')
    if not np.isfinite(waypoints).all():
        raise ValueError('waypoints must be finite')
    if times is None:
        times = time_at_velocity_limits(geometry.model, waypoints)
        times = times + np.arange(len(times)) * 1e-9     # repeated waypoints: still increasing
    times = np.asarray(times, dtype=float).reshape(-1)
    reason = check_times(times, len(waypoints))
    if reason:
        raise ValueError(reason)
    if not (math.isfinite(max_point_step) and max_point_step > 0.0):
        raise ValueError(f'max_point_step must be finite and > 0, got {max_point_step}')
    motion = geometry.max_point_motion(waypoints[:-1], waypoints[1:])
    counts = np.ceil(motion / max_point_step)
    if rate > 0.0:
        counts = np.maximum(counts, np.ceil(np.diff(times) * rate - 1e-9))
    counts = np.maximum(counts, 1).astype(int)
    segment = np.repeat(np.arange(len(counts)), counts)
    fraction = np.concatenate([np.arange(c) / c for c in counts]) if len(counts) else \
        np.zeros(0)
    start, end = waypoints[segment], waypoints[segment + 1]
    positions = np.vstack([start + fraction[:, None] * (end - start), waypoints[-1:]])
    sample_times = np.concatenate([times[segment] + fraction * np.diff(times)[segment],
                                   times[-1:]])
    segment = np.concatenate([segment, [max(len(counts) - 1, 0)]])
    return PathSamples(positions, sample_times, segment)


def contacts_of(checks: PoseChecks, samples: PathSamples,
                mask: np.ndarray | None = None) -> Contacts:
    """The samples of ``checks`` (taken at ``samples``) in contact with the obstacle."""
    touching = checks.obstacle_contact.any(axis=1)
    if mask is not None:
        touching &= mask
    index = np.flatnonzero(touching)
    names = checks.link_names
    return Contacts(samples.times[index], checks.tips[index], samples.positions[index],
                    checks.obstacle_distance[index].min(axis=1) if len(index) else np.zeros(0),
                    tuple(tuple(names[k] for k in np.flatnonzero(checks.obstacle_contact[i]))
                          for i in index))


def sample_in_time(model: ArmModel, waypoints: np.ndarray, times: np.ndarray | None = None,
                   rate: float = CONTACT_RATE) -> PathSamples:
    """Samples of a timed piecewise-linear motion at t0 + k / rate, and at its end.

    Args:
        model: the arm (for the velocity limits when ``times`` is None).
        waypoints: (K, n) rad. times: (K,) s strictly increasing (None: timed at the URDF
            velocity limits).
        rate: samples per second of motion, Hz (> 0).

    Raises:
        ValueError: bad shapes, non-finite values, a bad rate or times that do not increase.
    """
    if not (isinstance(rate, (int, float)) and math.isfinite(rate) and rate > 0.0):
        raise ValueError(f'rate must be finite and > 0 Hz, got {rate!r}')
    waypoints = np.atleast_2d(np.asarray(waypoints, dtype=float))
    if waypoints.ndim != 2 or waypoints.shape[1] != model.dof or not len(waypoints):
        raise ValueError(f'waypoints must have shape (K, {model.dof}), got {waypoints.shape}')
    if not np.isfinite(waypoints).all():
        raise ValueError('waypoints must be finite')
    if times is None:
        times = time_at_velocity_limits(model, waypoints)
        times = times + np.arange(len(times)) * 1e-9     # repeated waypoints: still increasing
    times = np.asarray(times, dtype=float).reshape(-1)
    reason = check_times(times, len(waypoints))
    if reason:
        raise ValueError(reason)
    duration = float(times[-1] - times[0])
    grid = times[0] + np.arange(int(math.floor(duration * rate + 1e-9)) + 1) / rate
    if grid[-1] < times[-1] - 1e-12:
        grid = np.append(grid, times[-1])
    positions = np.column_stack([np.interp(grid, times, waypoints[:, k])
                                 for k in range(model.dof)])
    segment = np.clip(np.searchsorted(times, grid, side='right') - 1, 0,
                      max(len(times) - 2, 0))
    return PathSamples(positions, grid, segment)


def sample_contacts(geometry: SafetyGeometry, waypoints: np.ndarray,
                    times: np.ndarray | None = None, rate: float = CONTACT_RATE) -> Contacts:
    """Obstacle contacts of a timed motion, sampled ``rate`` times per second of motion.

    Samples lie at t0 + k / rate and at the end, so a contact on the way is reported with
    its time and tip position as well as one at the end. A contact shorter than 1 / rate
    can fall between samples; ``check_path`` also samples by distance moved.

    Args:
        geometry: the arm's safety geometry.
        waypoints: (K, n) rad. times: (K,) s (None: timed at the velocity limits).
        rate: samples per second of motion, Hz (> 0).

    Raises:
        ValueError: as ``sample_in_time``.
    """
    samples = sample_in_time(geometry.model, waypoints, times, rate)
    return contacts_of(geometry.check(samples.positions), samples)


def check_path(geometry: SafetyGeometry, waypoints: np.ndarray,
               times: np.ndarray | None = None, rate: float = CONTACT_RATE,
               max_point_step: float = MAX_POINT_STEP, obstacle: bool = True) -> PathCheck:
    """Check a whole joint path before it is executed.

    Args:
        geometry: the arm's safety geometry.
        waypoints: (K, n) joint positions, rad (K = 1 checks one pose).
        times: (K,) s strictly increasing; None: timed at the URDF velocity limits.
        rate: samples per second of motion at least, Hz; 0 for distance-only sampling.
        max_point_step: no capsule point moves farther between samples, m.
        obstacle: obstacle contact counts as a violation (it is reported in ``contacts``
            either way).

    Returns:
        PathCheck with the first violation, its time and verdict.

    Raises:
        ValueError: bad shapes, non-finite values, times that do not increase.
    """
    samples = sample_path(geometry, waypoints, times, rate, max_point_step)
    checks = geometry.check(samples.positions)
    verdict = checks.verdict.copy()
    if not obstacle:
        verdict[verdict == Verdict.OBSTACLE_CONTACT] = Verdict.SAFE
    bad = np.flatnonzero(verdict != Verdict.SAFE)
    contacts = contacts_of(checks, samples)
    if bad.size:
        index = int(bad[0])
        kind = Verdict(int(verdict[index]))
        message = (f'{kind.name.lower().replace("_", " ")} at t = {samples.times[index]:.3f} s '
                   f'(sample {index} of {len(verdict)}): {checks.pose(index).message}')
        return PathCheck(samples, checks, index, float(samples.times[index]), kind, contacts,
                         message)
    message = f'clear: {len(verdict)} samples'
    if len(contacts):
        message += f'; {len(contacts)} in contact with the obstacle (not counted)'
    return PathCheck(samples, checks, -1, math.nan, Verdict.SAFE, contacts, message)


