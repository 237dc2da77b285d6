"""When a periodic stream counts as stale: one estimator for every node that watches one.

The executor watches its feedback topic and the safety monitor watches joint_states; both
ask the same question (has this stream stopped?) and answer it here. The stream's period is
the *mean* of recent arrival intervals: DDS delivers in bursts, so a median can be a
fraction of the true period and would call a healthy stream stale.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
import math
import threading

HISTORY = 20    # arrival intervals kept to estimate the period


@dataclass(frozen=True)
class StreamAge:
    """The age of a stream's last message against the limit beyond which it is stale (s)."""

    age: float
    limit: float
    period: float

    @property
    def stale(self) -> bool:
        """True past the limit, and before the first message (a stream never heard)."""
        return self.age > self.limit or math.isinf(self.age)


class StreamWatch:
    """Arrival times of one stream; thread-safe (callbacks write, timers read).

    Args:
        stale_periods: the stream is stale after this many of its own periods of silence.
        min_period: the period never counts as shorter than this (s), e.g. the control period
            of a checker that only looks once per tick.
        default_period: the period assumed until two messages have arrived (s).
        min_timeout: the stale limit is never below this (s), a jitter guard.
    """

    def __init__(self, stale_periods: float, min_period: float = 0.0,
                 default_period: float = math.inf, min_timeout: float = 0.0) -> None:
        self.stale_periods = stale_periods
        self.min_period = min_period
        self.default_period = default_period
        self.min_timeout = min_timeout
        self._intervals: deque[float] = deque(maxlen=HISTORY)
        self._last: float | None = None
        self._lock = threading.Lock()

    def arrived(self, now: float) -> None:
        """Record a message that arrived at ``now`` (monotonic s)."""
        with self._lock:
            if self._last is not None and now >= self._last:
                self._intervals.append(now - self._last)
            self._last = now

    def reset(self) -> None:
        """Forget every arrival (a new stream, or a restart of its publisher)."""
        with self._lock:
            self._intervals.clear()
            self._last = None

    @property
    def last(self) -> float | None:
        """Monotonic time of the last arrival, None before the first."""
        return self._last

    def period(self) -> float:
        """The stream's period estimate (s)."""
        with self._lock:
            return self._period()

    def _period(self) -> float:
        intervals = self._intervals
        period = sum(intervals) / len(intervals) if intervals else self.default_period
        return max(period, self.min_period)

    def age(self, now: float) -> StreamAge:
        """Age of the last arrival at ``now``; infinite (and stale) before the first."""
        with self._lock:
            period = self._period()
            limit = max(self.stale_periods * period, self.min_timeout)
            if self._last is None:
                return StreamAge(math.inf, limit, period)
            return StreamAge(now - self._last, limit, period)
