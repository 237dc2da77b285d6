"""What the safety monitor decides, without ROS: the verdict of each joint_states message,
what to log when, when the stream counts as stale and how often STALE is repeated.

``SafetyWatch`` is a plain object: the node hands it each message's positions (or the reason
they were refused) and the clock, and publishes what it returns. The stream's period is the
one estimator of ``kinematics.staleness`` (mean of recent intervals).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import math
import threading
from typing import Any

import numpy as np

from arm_kinematics.common.log_line import LogLine
from arm_kinematics.common.staleness import StreamWatch
from arm_kinematics.scene.checker import CollisionChecker
from arm_kinematics.scene.collision_report import CollisionReport
from arm_kinematics.scene.geometry import PoseCheck, SafetyGeometry, Verdict
from arm_kinematics.scene.objects import Scene

__all__ = ['DEFAULT_PERIOD', 'Judgement', 'LogLine', 'map_samples_reason', 'MAX_PATH_SAMPLES',
           'MEASURED_LIMIT_SLACK', 'path_samples_reason', 'SafetyWatch', 'STALE_REPEAT',
           'StaleNotice']

# STALE is repeated this often while it lasts (s).
STALE_REPEAT = 1.0
# Period assumed before two joint_states have arrived (s).
DEFAULT_PERIOD = 0.1
# A measured pose this far (rad) past a joint limit is read as on the limit (sensor noise).
MEASURED_LIMIT_SLACK = 1e-3


@dataclass(frozen=True)
class MonitorSettings:
    """One immutable snapshot of everything a monitor's callbacks read; swapped whole on
    updates (resolution in rad, rates in Hz, steps in m, times in s)."""

    geometry: SafetyGeometry
    stale_periods: float
    min_stale_timeout: float
    resolution: float
    sample_rate: float
    max_point_step: float
    marker_rate: float
    marker_lifetime: float

    @classmethod
    def of(cls, geometry: SafetyGeometry, values: Mapping[str, Any]) -> MonitorSettings:
        """From the node's parameter values (grid_resolution_deg in degrees)."""
        return cls(geometry, values['stale_periods'], values['min_stale_timeout'],
                   math.radians(values['grid_resolution_deg']), values['contact_sample_rate'],
                   values['max_point_step'], values['marker_rate'], values['marker_lifetime'])


@dataclass(frozen=True)
class Judgement:
    """What one valid joint_states message gives: the status's content and what else to do.

    Attributes:
        q: the judged positions, chain order (rad).
        check: the floor / obstacle verdict of the pose.
        report: the collision checker's report (self-collision, scene contact).
        scene_version: version of the scene the pose was checked against.
        logs: lines to log (only on a change of verdict or collision state).
        draw_markers: publish safety markers now (at most marker_rate per second).
    """

    q: np.ndarray
    check: PoseCheck
    report: CollisionReport
    scene_version: int
    logs: tuple[LogLine, ...]
    draw_markers: bool


@dataclass(frozen=True)
class _Judged:
    """The last pose judged and what it was judged against (held, so that identity holds)."""

    q: bytes
    geometry: SafetyGeometry
    checker: CollisionChecker
    scene: Scene
    scene_version: int
    check: PoseCheck
    report: CollisionReport

    def same(self, q: bytes, geometry: SafetyGeometry, checker: CollisionChecker,
             scene: Scene) -> bool:
        return (q == self.q and geometry is self.geometry and checker is self.checker
                and scene is self.scene and scene.version == self.scene_version)


@dataclass(frozen=True)
class StaleNotice:
    """A STALE status to publish now, with its message and what to log."""

    message: str
    logs: tuple[LogLine, ...]


class SafetyWatch:
    """The monitor's decisions about the joint_states stream (thread-safe: the subscription
    and the stale timer share it, services read the last pose).

    Args:
        stale_periods: the stream is stale after this many of its periods without a valid
            message.
        min_stale_timeout: the shortest silence reported as STALE (s), a jitter guard.
    """

    def __init__(self, stale_periods: float, min_stale_timeout: float) -> None:
        self.stream = StreamWatch(stale_periods, default_period=DEFAULT_PERIOD,
                                  min_timeout=min_stale_timeout)
        self._lock = threading.Lock()
        self._stale_sent: float | None = None    # when STALE was last published
        self._last_q: np.ndarray | None = None
        self._last_verdict: Verdict | None = None
        self._last_collision: tuple[bool, bool] | None = None
        self._last_markers = -math.inf
        self._judged: _Judged | None = None
        self.malformed_count = 0

    def configure(self, stale_periods: float, min_stale_timeout: float) -> None:
        """New stale settings (a run-time parameter update); the history is kept."""
        self.stream.stale_periods = stale_periods
        self.stream.min_timeout = min_stale_timeout

    def forget_verdict(self) -> None:
        """A new arm model: the next message is judged, logged and drawn afresh."""
        with self._lock:
            self._last_verdict = None
            self._last_markers = -math.inf

    def last_pose(self) -> np.ndarray | None:
        """The last valid measured pose (for plan_detour / joint_map starts), a copy."""
        with self._lock:
            return None if self._last_q is None else self._last_q.copy()

    def refuse(self, reason: str) -> str:
        """A malformed joint_states message: counted; returns the status message."""
        with self._lock:
            self.malformed_count += 1
        return f'joint_states ignored: {reason}'

    def judge(self, q: np.ndarray, now: float, geometry: SafetyGeometry,
              checker: CollisionChecker, scene: Scene, marker_rate: float) -> Judgement:
        """Judge one valid message's positions ``q`` (chain order) that arrived at ``now``
        (monotonic s) against ``geometry`` and, with ``checker``, the ``scene`` snapshot."""
        model = geometry.model
        self.stream.arrived(now)
        # Kept for plan_detour / joint_map starts: noise just past a limit is clipped;
        # farther out it stays, and the planner refuses it with the reason.
        slack = MEASURED_LIMIT_SLACK
        inside = (q >= model.lower - slack) & (q <= model.upper + slack)
        measured = np.where(inside, model.clamp(q), q)
        if checker.scene is not scene:
            checker.scene = scene
        # An arm at rest repeats its pose at the publisher's rate (100 Hz): the same pose
        # against the same geometry, checker and scene has the same verdict, so it is not
        # checked again (the collision check is most of a message's cost).
        key = q.tobytes()
        judged = self._judged
        if judged is not None and judged.same(key, geometry, checker, scene):
            check, report = judged.check, judged.report
        else:
            check = geometry.check_pose(q)
            report = checker.check(q)
            self._judged = _Judged(key, geometry, checker, scene, scene.version, check, report)
        logs = []
        with self._lock:
            self._stale_sent = None
            self._last_q = measured
            state = (report.self_collision, report.scene_collision)
            if state != self._last_collision:
                if report.collides:
                    logs.append(LogLine('warning', report.message))
                elif self._last_collision is not None:
                    logs.append(LogLine('info', report.message))
                self._last_collision = state
            if check.verdict != self._last_verdict:
                logs.append(LogLine('info' if check.safe else 'warning',
                                    f'{check.verdict.name}: {check.message}'))
                self._last_verdict = check.verdict
            draw = now - self._last_markers >= 1.0 / marker_rate
            if draw:
                self._last_markers = now
        return Judgement(q, check, report, scene.version, tuple(logs), draw)

    def stale(self, now: float) -> StaleNotice | None:
        """A STALE status to publish at ``now``, or None (the stream is live, or STALE was
        published less than STALE_REPEAT ago). The first STALE after valid messages is
        logged as a warning; before any message it is repeated without logging."""
        age = self.stream.age(now)
        if not age.stale:
            return None
        with self._lock:
            sent = self._stale_sent
            if sent is not None and now - sent < STALE_REPEAT:
                return None
            self._stale_sent = now
            never = self.stream.last is None
            if never:
                return StaleNotice('no joint_states received yet', ())
            message = (f'no valid joint_states for {age.age:.2f} s (period {age.period:.3f} '
                       f's, stale after {age.limit:.2f} s)')
            if sent is not None:
                return StaleNotice(message, ())
            self._last_verdict = Verdict.STALE
            return StaleNotice(message, (LogLine('warning', message),))


# ---------------------------------------------------------------------------- request bounds
# A check_path or joint_map request may not ask for more samples than this (memory, time).
MAX_PATH_SAMPLES = 2_000_000


def path_samples_reason(geometry: SafetyGeometry, waypoints: np.ndarray, times: np.ndarray,
                        rate: float, max_point_step: float) -> str:
    """'' when checking the path (``times`` s, ``rate`` Hz, at most ``max_point_step`` m of
    link motion between samples) stays within MAX_PATH_SAMPLES, else why not."""
    expected = (times[-1] - times[0]) * rate + float(np.sum(
        geometry.max_point_motion(waypoints[:-1], waypoints[1:]))) / max_point_step
    if expected > MAX_PATH_SAMPLES:
        return (f'the path needs about {expected:.3g} samples; the most is '
                f'{MAX_PATH_SAMPLES} (shorten it or lower sample_rate)')
    return ''


def map_samples_reason(duration: float, rate: float) -> str:
    """'' when a joint map's path of ``duration`` s sampled at ``rate`` Hz is small enough."""
    if duration * rate > MAX_PATH_SAMPLES:
        return f'the path needs {duration * rate:.3g} samples; the most is {MAX_PATH_SAMPLES}'
    return ''


def watching(arm: str, geometry: SafetyGeometry, checker: CollisionChecker,
             scene: Scene) -> str:
    """The start-up line of a monitor: what it watches, with which rules and shapes."""
    floor = f'at z = {geometry.floor_z:.3f} m' if geometry.floor_enabled else 'off'
    ball = f'r = {geometry.config.obstacle.radius:.3f} m' if geometry.obstacle_enabled \
        else 'off'
    return (f'{arm}: watching {", ".join(geometry.link_names)}; floor {floor}; obstacle '
            f'{ball}; collision shapes on {", ".join(checker.links)} '
            f'({len(checker.checked_pairs)} link pairs checked); scene: {len(scene)} objects '
            f'({", ".join(scene.ids) or "none"})')
