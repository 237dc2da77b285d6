"""The live follow's last check, in the control tick, and how its refusals are reported.

A follow law's step (exponential or speed-cap CCD) is computed in the control tick, so only
the tick can check what it commands. ``GuardedFollow`` wraps the law the runner steps: every
step, from the commanded pose to the next, is checked for self-collision and the scene with
the planner's rules and spacing (``CollisionGuard.check_segment``: no link point moves more
than 1 cm between checked poses) before the runner takes it; a step that collides is not
taken (the arm stays where it is, the follow goes on and takes the next target). The floor
stays the runner's own per-tick pose check (a step through it stops the follow).

``RefusalThrottle`` decides when a refusal is reported: a 30 Hz stream of blocked targets, or
a 100 Hz tick of blocked steps, must not flood the log.
"""

from __future__ import annotations

from collections.abc import Callable
import math
import threading
from typing import Any

import numpy as np

from arm_kinematics.motion.runner import FollowLaw
from arm_kinematics.motion.safety_check import CollisionGuard

REPORT_INTERVAL = 2.0     # s between two reports of refused live targets or steps


class StepGuard:
    """Self-collision and the scene of each follow step, checked in the control tick.

    Its checker is its own (the planner's may be planning in another thread, and a checker
    serves one thread) and is built here, at once: its allowed pairs take 0.1-1 s to
    compute, never in a tick. ``collision`` None (the executor checks no collisions): every
    step passes. A checker that cannot be built (a collision section or mesh it refuses, as
    the planning process's would) refuses every step, with why: the arm stays.
    """

    def __init__(self, collision: CollisionGuard | None, scene: Any = None) -> None:
        self._checks = collision is not None
        self._guard = None
        self._broken = ''
        if collision is not None:
            try:
                self._guard = collision.twin()
                self._guard.warm()
                self._guard.set_scene(scene)
            except Exception as error:  # noqa: BLE001 - any builder error: refuse, not crash
                self._broken = (f'the collision checker cannot be built: '
                                f'{type(error).__name__}: {error}')

    def set_scene(self, scene: Any) -> None:
        """Check against ``scene`` (a ``kinematics.collision.Scene``, None: empty) from the
        next step on (the tick builds its pairs with the objects once, at its first check)."""
        if self._guard is not None:
            self._guard.set_scene(scene)

    def reason(self, q: np.ndarray, new: np.ndarray) -> str:
        """'' when the arm may go from ``q`` (the pose commanded last, cleared by the tick
        before) to ``new`` (rad), else the first contact."""
        if not self._checks or np.array_equal(q, new):
            return ''
        return self._broken or self._guard.check_step(q, new)


class GuardedFollow:
    """A follow law whose every step passes ``guard`` first: what the runner steps.

    Args:
        law: the follow law (``laws.ExponentialFollow`` or ``laws.SpeedCapFollow``).
        refused: told why, each time a step is not taken (in the control tick).
    """

    def __init__(self, law: FollowLaw, guard: StepGuard,
                 refused: Callable[[str], None]) -> None:
        self.law = law
        self.guard = guard
        self._refused = refused

    def step(self, q: np.ndarray, dt: float) -> np.ndarray:
        new = np.asarray(self.law.step(q, dt), dtype=float)
        if new.shape != np.shape(q) or not np.all(np.isfinite(new)):
            return new          # the runner refuses it (and says so)
        try:
            reason = self.guard.reason(q, new)
        except Exception as error:  # noqa: BLE001 - the tick must go on: stay instead
            reason = f'the collision check raised {type(error).__name__}: {error}'
        if reason:
            self._refused(reason)
            return np.array(q, dtype=float)
        return new


class RefusalThrottle:
    """When to report a refusal: the first at once, then at most one per ``interval`` s,
    with how many were not reported since (thread-safe: the planning callbacks and the
    control tick both refuse)."""

    def __init__(self, interval: float = REPORT_INTERVAL) -> None:
        self.interval = float(interval)
        self._lock = threading.Lock()
        self._last = -math.inf
        self._held = 0

    def admit(self, now: float) -> int | None:
        """None: do not report this refusal (counted); else report it, with this many
        refusals since the last report that were not reported."""
        with self._lock:
            if now - self._last < self.interval:
                self._held += 1
                return None
            held, self._held, self._last = self._held, 0, now
            return held
