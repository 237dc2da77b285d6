"""The commanded pose over time: who moves the arm now, and what each control tick sends.

``MotionRunner`` is the executor's state machine, without ROS and thread-safe: one owner at a
time (a trajectory, the live follow, or nobody: holding). The control timer calls ``tick``
every period and publishes what it returns; goal threads and subscriptions call ``start``,
``follow``, ``stop``, ``emergency_stop`` and ``reset``. Every stop freezes the pose the
running motion has at that instant, so holding never jumps; only the next tick (at most one
control period later) publishes it.

Units: rad, rad/s, s (monotonic clock).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
import enum
import math
import threading
from typing import Protocol

import numpy as np

from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.motion.trajectory import Trajectory


class Mode(enum.IntEnum):
    """What the runner does; values match arm_interfaces/ExecutorStatus."""

    IDLE = 0
    MOVING = 1
    FOLLOWING = 2
    HOLDING = 3
    EMERGENCY_STOP = 4
    STALE_FEEDBACK = 5
    WAITING = 6


class FollowLaw(Protocol):
    """A streaming law following a live target (see ``laws``)."""

    def step(self, q: np.ndarray, dt: float) -> np.ndarray:
        """The pose one tick of ``dt`` s later (``q`` itself to stay)."""


@dataclass
class Owner:
    """One motion request (a goal, a client trajectory, the live follow) and how it ended.

    Attributes:
        name: for messages.
        done: set when the motion ends, whatever the reason.
        outcome: SUCCESS when it ran to the end, else why it stopped (None while running).
        message: the reason in words.
        record: (t, q, v) of every tick commanded for it, t from its start, s.
    """

    name: str
    done: threading.Event = field(default_factory=threading.Event)
    outcome: MotionCode | None = None
    message: str = ''
    record: list[tuple[float, np.ndarray, np.ndarray]] = field(default_factory=list)

    def finish(self, outcome: MotionCode, message: str) -> None:
        if self.outcome is None:
            self.outcome = outcome
            self.message = message
        self.done.set()


@dataclass(frozen=True)
class Tick:
    """What one control tick publishes.

    Attributes:
        q, v: the commanded pose (rad) and velocity (rad/s); None: publish nothing at all.
        mode: the runner's mode after this tick.
        stream: a position-streaming output (forward_position) sends ``q`` this tick.
        point: a trajectory output sends ``q`` as a one-point trajectory (live follow).
        hold: the motion stopped this tick; a trajectory output sends a hold point at ``q``.
        changed: the mode or its reason changed (publish the status).
        finished: the owner whose trajectory ended this tick; the caller calls its
            ``finish`` once this tick is published, so whoever waits for it sees the last
            pose already out.
    """

    q: np.ndarray | None
    v: np.ndarray | None
    mode: Mode
    stream: bool = False
    point: bool = False
    hold: bool = False
    changed: bool = False
    finished: Owner | None = None

    def finish(self) -> None:
        """Tell the owner whose trajectory ended this tick (after publishing it)."""
        if self.finished is not None:
            self.finished.finish(MotionCode.SUCCESS, 'reached the end of the trajectory')


class MotionRunner:
    """The executor's commanded pose and its single owner; every method is thread-safe."""

    def __init__(self, joint_names: tuple[str, ...], initial: np.ndarray | None = None,
                 pose_check: Callable[[np.ndarray], str] | None = None) -> None:
        """Args:
            joint_names: chain order.
            initial: pose to hold from the start (rad); None: WAITING, publish nothing.
            pose_check: '' when a pose is safe, else why (checked every follow tick).
        """
        self.joint_names = tuple(joint_names)
        self._lock = threading.Lock()
        self._q = None if initial is None else np.asarray(initial, dtype=float).copy()
        self._v = np.zeros(len(self.joint_names))
        self._mode = Mode.WAITING if initial is None else Mode.IDLE
        self._message = 'waiting for a command' if initial is None else 'holding the start pose'
        self._code = MotionCode.SUCCESS
        self._owner: Owner | None = None
        self._trajectory: Trajectory | None = None
        self._started = 0.0
        self._hold_pending = False
        self._changed = True
        self._follow: FollowLaw | None = None
        self._follow_last = 0.0
        self._watchdog = math.inf
        self._last_tick: float | None = None
        self._tick_time = -math.inf     # when the last tick sampled, monotonic s
        self._pose_check = pose_check

    # ------------------------------------------------------------------ state
    @property
    def mode(self) -> Mode:
        return self._mode

    def pose(self) -> np.ndarray | None:
        """The commanded pose (rad), None while WAITING."""
        with self._lock:
            return None if self._q is None else self._q.copy()

    def status(self) -> tuple[Mode, MotionCode, str, str]:
        """(mode, code of the last event, message, law of the current motion)."""
        with self._lock:
            law = self._trajectory.law if self._trajectory is not None and \
                self._mode == Mode.MOVING else ''
            return self._mode, self._code, self._message, law

    def progress(self, owner: Owner, now: float) -> tuple[float, float]:
        """(elapsed, duration) of ``owner``'s trajectory, s ((0, 0) when not running)."""
        with self._lock:
            if self._owner is not owner or self._trajectory is None:
                return 0.0, 0.0
            return min(now - self._started, self._trajectory.duration), \
                self._trajectory.duration

    def _not_before_tick(self, now: float) -> float:
        """``now`` of a command, never earlier than the last tick: a caller delayed between
        reading its clock and taking the lock must not move the arm back to an instant
        that was already published, nor start a motion in the past."""
        return max(now, self._tick_time)

    def _set_mode(self, mode: Mode, code: MotionCode, message: str) -> None:
        if (mode, code, message) != (self._mode, self._code, self._message):
            self._changed = True
        self._mode, self._code, self._message = mode, code, message

    def _current(self, now: float) -> tuple[np.ndarray | None, np.ndarray]:
        """Pose and velocity the running motion has at ``now`` (without advancing it)."""
        if self._mode == Mode.MOVING and self._trajectory is not None:
            return self._trajectory.sample(now - self._started)
        return self._q, self._v

    # ------------------------------------------------------------------ commands
    def start(self, trajectory: Trajectory, owner: Owner, now: float,
              tolerance: float = math.inf) -> tuple[MotionCode, str]:
        """Run ``trajectory`` from ``now``; the previous owner ends PREEMPTED.

        Refused (nothing changes) during an emergency stop, or when the trajectory starts
        more than ``tolerance`` rad from the commanded pose.

        Returns:
            (SUCCESS, '') or (code, reason).
        """
        with self._lock:
            now = self._not_before_tick(now)
            if self._mode == Mode.EMERGENCY_STOP:
                return MotionCode.EMERGENCY_STOPPED, self._message
            current, _ = self._current(now)
            if current is not None:
                gap = float(np.max(np.abs(trajectory.start - current)))
                if not gap <= tolerance:
                    return MotionCode.START_MISMATCH, (
                        f'the trajectory starts {gap:.4f} rad from the commanded pose '
                        f'(tolerance {tolerance:g} rad)')
            self._take_over(owner, now, trajectory=trajectory)
            self._hold_pending = False
            self._q = trajectory.start.copy()
            self._set_mode(Mode.MOVING, MotionCode.SUCCESS, f'{owner.name}: '
                           f'{trajectory.law or "trajectory"} of {trajectory.duration:.2f} s')
            return MotionCode.SUCCESS, ''

    def follow(self, law: FollowLaw, owner: Owner, now: float, watchdog: float,
               start: np.ndarray | None = None) -> tuple[MotionCode, str]:
        """Follow a live target with ``law`` from ``now``; stale for ``watchdog`` s → hold.

        Args:
            start: pose to start from when WAITING (the measured state); ignored otherwise.
        """
        with self._lock:
            now = self._not_before_tick(now)
            if self._mode == Mode.EMERGENCY_STOP:
                return MotionCode.EMERGENCY_STOPPED, self._message
            if self._q is None:
                if start is None:
                    return MotionCode.NO_JOINT_STATE, 'no pose to start following from'
                self._q = np.asarray(start, dtype=float).copy()
            if self._mode == Mode.MOVING:
                self._q, self._v = self._current(now)
            self._take_over(owner, now, follow=law)
            self._follow_last = now
            self._watchdog = watchdog
            self._last_tick = now
            self._set_mode(Mode.FOLLOWING, MotionCode.SUCCESS, f'{owner.name}: following')
            return MotionCode.SUCCESS, ''

    def touch(self, now: float) -> None:
        """A live target arrived (feeds the watchdog)."""
        with self._lock:
            self._follow_last = now

    def following(self) -> bool:
        return self._mode == Mode.FOLLOWING

    def set_pose_check(self, pose_check: Callable[[np.ndarray], str] | None) -> None:
        """Replace the follow-tick pose check (a new arm model: new link lengths)."""
        with self._lock:
            self._pose_check = pose_check

    def set_pose(self, q: np.ndarray) -> None:
        """Adopt ``q`` (rad) as the commanded pose when nothing moves (e.g. the measured state
        before the first command after a restart)."""
        with self._lock:
            if self._mode in (Mode.MOVING, Mode.FOLLOWING):
                return
            self._q = np.asarray(q, dtype=float).copy()
            self._v = np.zeros_like(self._q)
            if self._mode == Mode.WAITING:
                self._set_mode(Mode.IDLE, MotionCode.SUCCESS, 'holding the measured pose')

    def stop(self, now: float, code: MotionCode, message: str, owner: Owner | None = None,
             mode: Mode = Mode.HOLDING) -> np.ndarray | None:
        """Hold the pose the motion has now; its owner ends with ``code``.

        Args:
            owner: stop only when this owner is the active one (None: whoever it is).
            mode: HOLDING, or STALE_FEEDBACK for a feedback timeout.

        Returns:
            The held pose (rad), None when there is none.
        """
        with self._lock:
            now = self._not_before_tick(now)
            if owner is not None and self._owner is not owner:
                return None if self._q is None else self._q.copy()
            self._freeze(now)
            self._end_owner(code, message)
            if self._mode != Mode.EMERGENCY_STOP and self._q is not None:
                self._set_mode(mode, code, message)
            return None if self._q is None else self._q.copy()

    def emergency_stop(self, now: float, message: str) -> np.ndarray | None:
        """Hold at once; every start and follow is refused until ``reset``."""
        with self._lock:
            now = self._not_before_tick(now)
            self._freeze(now)
            self._end_owner(MotionCode.EMERGENCY_STOPPED, message)
            self._set_mode(Mode.EMERGENCY_STOP, MotionCode.EMERGENCY_STOPPED, message)
            return None if self._q is None else self._q.copy()

    def reset(self, message: str = 'emergency stop reset') -> bool:
        """Leave the emergency stop (holding); False when there was none."""
        with self._lock:
            if self._mode != Mode.EMERGENCY_STOP:
                return False
            mode = Mode.HOLDING if self._q is not None else Mode.WAITING
            self._set_mode(mode, MotionCode.SUCCESS, message)
            return True

    def _freeze(self, now: float) -> None:
        moving = self._mode in (Mode.MOVING, Mode.FOLLOWING)
        if self._mode == Mode.MOVING:
            self._q, _ = self._current(now)
        if moving and self._q is not None:
            self._record(now, self._q, np.zeros_like(self._q))
            self._hold_pending = True
        self._v = np.zeros(len(self.joint_names))
        self._trajectory = None
        self._follow = None

    def _end_owner(self, code: MotionCode, message: str) -> None:
        if self._owner is not None:
            self._owner.finish(code, message)
            self._owner = None

    def _take_over(self, owner: Owner, now: float, trajectory: Trajectory | None = None,
                   follow: FollowLaw | None = None) -> None:
        """Give the arm to ``owner`` from ``now`` (the previous one ends PREEMPTED): it runs
        ``trajectory`` or follows with ``follow``."""
        self._end_owner(MotionCode.PREEMPTED, f'preempted by {owner.name}')
        self._owner = owner
        self._trajectory = trajectory
        self._started = now
        self._follow = follow

    def _record(self, now: float, q: np.ndarray, v: np.ndarray) -> None:
        if self._owner is not None:
            self._owner.record.append((now - self._started, q.copy(), v.copy()))

    # ------------------------------------------------------------------ the control tick
    def tick(self, now: float) -> Tick:
        """Advance to ``now`` and say what to publish."""
        with self._lock:
            self._tick_time = max(self._tick_time, now)
            changed = self._changed
            self._changed = False
            hold = self._hold_pending
            self._hold_pending = False
            if self._q is None:
                return Tick(None, None, self._mode, changed=changed)
            if self._mode == Mode.MOVING and self._trajectory is not None:
                return self._tick_trajectory(now, changed)
            if self._mode == Mode.FOLLOWING and self._follow is not None:
                return self._tick_follow(now, changed)
            return Tick(self._q.copy(), self._v.copy(), self._mode, stream=hold, hold=hold,
                        changed=changed)

    def _tick_trajectory(self, now: float, changed: bool) -> Tick:
        trajectory = self._trajectory
        elapsed = now - self._started
        self._q, self._v = trajectory.sample(elapsed)
        if self._owner is not None:
            self._owner.record.append((min(elapsed, trajectory.duration), self._q.copy(),
                                       self._v.copy()))
        if elapsed >= trajectory.duration:
            self._v = np.zeros_like(self._q)
            owner = self._owner
            self._owner = None
            self._trajectory = None
            self._set_mode(Mode.IDLE, MotionCode.SUCCESS,
                           f'{owner.name if owner else "trajectory"} done')
            return Tick(self._q.copy(), self._v.copy(), Mode.IDLE, stream=True, changed=True,
                        finished=owner)
        return Tick(self._q.copy(), self._v.copy(), Mode.MOVING, stream=True, changed=changed)

    def _tick_follow(self, now: float, changed: bool) -> Tick:
        if now - self._follow_last > self._watchdog:
            message = (f'live target stream stale for {now - self._follow_last:.2f} s (watchdog '
                       f'{self._watchdog:g} s): holding')
            return self._hold_after_follow(now, MotionCode.WATCHDOG, message)
        dt = now - (self._last_tick if self._last_tick is not None else now)
        self._last_tick = now
        new = np.asarray(self._follow.step(self._q, dt), dtype=float)
        reason = ''
        if new.shape != self._q.shape or not np.all(np.isfinite(new)):
            reason = 'the follow law produced a non-finite pose'
        elif self._pose_check is not None:
            reason = self._pose_check(new)
        if reason:
            message = f'live follow stopped: {reason}'
            return self._hold_after_follow(now, MotionCode.UNSAFE_PATH, message)
        self._v = (new - self._q) / dt if dt > 0.0 else np.zeros_like(new)
        self._q = new
        self._record(now, self._q, self._v)
        return Tick(self._q.copy(), self._v.copy(), Mode.FOLLOWING, stream=True, point=True,
                    changed=changed)

    def _hold_after_follow(self, now: float, code: MotionCode, message: str) -> Tick:
        """Stop following (the owner ends with ``code``) and hold where the arm is."""
        self._freeze(now)
        self._end_owner(code, message)
        self._set_mode(Mode.HOLDING, code, message)
        self._hold_pending = False
        return Tick(self._q.copy(), self._v.copy(), Mode.HOLDING, stream=True, hold=True,
                    changed=True)
