"""The primitive message conversions every arm_ik node shares: points, durations, colours.

One rounding rule for durations (nanoseconds rounded, a carry into the seconds), one way to
read one back; the topic-specific conversions (motion, paths, tasks, scene, markers) build on
these in their own modules.
"""

from __future__ import annotations

from collections.abc import Sequence
import math

from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA


def point(xyz: Sequence[float]) -> Point:
    """geometry_msgs/Point from three numbers, m."""
    return Point(x=float(xyz[0]), y=float(xyz[1]), z=float(xyz[2]))


def duration(seconds: float) -> Duration:
    """builtin_interfaces/Duration of ``seconds`` ≥ 0, nanoseconds rounded (with the carry)."""
    whole = math.floor(seconds)
    nanoseconds = int(round((seconds - whole) * 1e9))
    if nanoseconds >= 1_000_000_000:
        whole, nanoseconds = whole + 1, nanoseconds - 1_000_000_000
    return Duration(sec=int(whole), nanosec=nanoseconds)


def seconds_of(value: Duration) -> float:
    """Seconds of a Duration as given (sec may be negative; nanosec is not checked)."""
    return value.sec + value.nanosec * 1e-9


def checked_seconds(value: Duration, what: str) -> float:
    """Seconds of a Duration that must be valid and ≥ 0.

    Raises:
        ValueError: negative seconds or nanoseconds outside 0..999999999 (names ``what``).
    """
    if value.sec < 0 or not 0 <= value.nanosec < 1_000_000_000:
        raise ValueError(f'{what} {value.sec} s {value.nanosec} ns is not a valid '
                         'non-negative duration')
    return seconds_of(value)


def colour(rgba: Sequence[float]) -> ColorRGBA:
    """std_msgs/ColorRGBA from r, g, b, a in [0, 1]."""
    return ColorRGBA(r=float(rgba[0]), g=float(rgba[1]), b=float(rgba[2]), a=float(rgba[3]))
