"""Which arm pose counts as current when a decision follows a move: the rule, without ROS.

A move's result and the arm's joint states reach a client on separate streams, with no order
between them: the result can be taken before the joint states of the move's end (or any of
the move), so "the last joint state received" may still show where the arm was before the
move. A decision taken on it (attach the ball, let it go, the next step) then judges a stale
tip. ``CurrentPose`` says which pose may be used instead:

- the final state a result carries (the executor's last commanded pose) is current from the
  instant the result is taken;
- a joint state is current only when it is stamped at or after the instant the last result
  was taken; one stamped before it shows where the arm was, however late it arrives (so an
  unstamped state, stamp 0, never counts once a move has ended);
- of those, the newest by stamp wins (a measured state after the result replaces the
  commanded end: on a real arm it is the truth);
- with neither, the caller waits for one up to ``wait`` seconds, then decides without it and
  says so (``timeout_reason``).

Stamps are ROS-clock seconds (the joint states' header stamps and the instant a result was
taken, on the same clock); ``now`` is a monotonic clock for the wait, s. Positions are the
arm's joints in chain order, rad or m.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import enum
import math

import numpy as np

DEFAULT_WAIT = 2.0   # s, for a joint state stamped after a result that carried no final state


class PoseState(enum.StrEnum):
    """Whether a decision may be taken now."""

    CURRENT = 'current'      # a current pose is known: decide on it
    WAITING = 'waiting'      # none yet, within the wait: ask again later
    TIMED_OUT = 'timed_out'  # none came within the wait: decide without it, and say so


@dataclass(frozen=True, slots=True)
class PoseFix:
    """A pose known to be current.

    Attributes:
        positions: the joints in chain order.
        stamp: ROS time the pose holds from, s.
        source: 'result' (a result's final state) or 'joint_states'.
    """

    positions: np.ndarray
    stamp: float
    source: str


def _wait_of(wait: float) -> float:
    wait = float(wait)
    if not (math.isfinite(wait) and wait > 0.0):
        raise ValueError(f'the wait for a current pose must be a finite number > 0 s, got '
                         f'{wait!r}')
    return wait


def _positions(positions: Sequence[float] | None) -> np.ndarray | None:
    if positions is None:
        return None
    q = np.asarray(positions, dtype=float).reshape(-1).copy()
    return q if q.size and np.all(np.isfinite(q)) else None


class CurrentPose:
    """The newest pose known to be current, and the bounded wait for one.

    Not thread-safe: call it from one thread (a node's executor).
    """

    def __init__(self, wait: float = DEFAULT_WAIT) -> None:
        """Start with no pose known and no move ended (any joint state counts until one has).

        Args:
            wait: how long a decision waits for a current pose, s (> 0).

        Raises:
            ValueError: a wait that is not a finite number > 0.
        """
        self._wait = _wait_of(wait)
        self.since = -math.inf            # ROS time of the last result taken, s
        self.fix: PoseFix | None = None
        self._deadline: float | None = None
        self._waited = self._wait         # the wait the deadline was set with, s

    @property
    def wait(self) -> float:
        """How long a decision waits for a current pose, s; a new value serves the next
        wait (one in progress keeps its deadline)."""
        return self._wait

    @wait.setter
    def wait(self, value: float) -> None:
        self._wait = _wait_of(value)

    @property
    def positions(self) -> np.ndarray | None:
        """The current pose (a copy), None when none is known."""
        return None if self.fix is None else self.fix.positions.copy()

    def move_ended(self, stamp: float, final: Sequence[float] | None = None) -> None:
        """A move's result was taken at ROS time ``stamp`` (s): from now on only ``final``
        (its final state, when it carries one) or a joint state stamped from ``stamp`` on is
        current. Also for a failed or lost goal (``final`` None): the arm may have moved."""
        self.since = float(stamp)
        q = _positions(final)
        self.fix = None if q is None else PoseFix(q, self.since, 'result')
        self._deadline = None

    def measured(self, positions: Sequence[float], stamp: float) -> bool:
        """A joint state stamped ``stamp`` (ROS time, s); True when it is current (it became
        the pose decisions use), False when it is older than the last result or than the
        pose already held, or not finite."""
        q = _positions(positions)
        stamp = float(stamp)
        if q is None or not math.isfinite(stamp) or stamp < self.since:
            return False
        if self.fix is not None and stamp < self.fix.stamp:
            return False
        self.fix = PoseFix(q, stamp, 'joint_states')
        self._deadline = None
        return True

    def state(self, now: float) -> PoseState:
        """Whether a decision may be taken at monotonic time ``now`` (s); the first call
        without a current pose starts the wait, which ends with the next ``move_ended`` or
        current joint state."""
        if self.fix is not None:
            return PoseState.CURRENT
        if self._deadline is None:
            self._deadline = float(now) + self._wait
            self._waited = self._wait
        return PoseState.WAITING if now < self._deadline else PoseState.TIMED_OUT

    def timeout_reason(self) -> str:
        """Why no pose is current, for a status after a timed-out wait."""
        if math.isinf(self.since):
            return f'no joint state came within {self._waited:g} s'
        return (f"no joint state stamped after the last move's result came within "
                f'{self._waited:g} s, and the result carried no final state')
