"""Plain-array geometry for the lab's scene: coloured polylines, gradients, readout values."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
import math

import numpy as np

from arm_kinematics.ik.metrics import manipulability
from arm_kinematics.model.arm_model import ArmModel

# Planned tip path: blue at the start, orange at the end (as the RViz markers).
PATH_START = np.array([40, 110, 255], dtype=float)
PATH_END = np.array([255, 140, 20], dtype=float)


def gradient(count: int, start: np.ndarray = PATH_START,
             end: np.ndarray = PATH_END) -> np.ndarray:
    """(count, 3) uint8 colours from ``start`` to ``end``."""
    if count <= 0:
        return np.zeros((0, 3), dtype=np.uint8)
    fraction = np.linspace(0.0, 1.0, count)[:, None]
    return np.round(start + (end - start) * fraction).astype(np.uint8)


def polyline_segments(points: Sequence[Sequence[float]]) -> np.ndarray:
    """(N-1, 2, 3) segments joining consecutive finite points (non-finite points dropped)."""
    array = np.asarray(points, dtype=float).reshape(-1, 3)
    array = array[np.all(np.isfinite(array), axis=1)]
    if len(array) < 2:
        return np.zeros((0, 2, 3))
    return np.stack([array[:-1], array[1:]], axis=1)


def gradient_segments(points: Sequence[Sequence[float]]) -> tuple[np.ndarray, np.ndarray]:
    """Segments of a path and their (N-1, 2, 3) colours, blue at the start to orange."""
    segments = polyline_segments(points)
    colours = gradient(len(segments) + 1)
    return segments, np.stack([colours[:-1], colours[1:]], axis=1) if len(segments) else \
        np.zeros((0, 2, 3), dtype=np.uint8)


def manipulability_along(model: ArmModel, path: np.ndarray) -> np.ndarray:
    """w of every pose of a (K, n) joint path (the position rows in numpy: the lab never
    solves, and does not load numba to draw)."""
    return np.array([manipulability(rows) for rows in
                     model.position_jacobian_batch(np.asarray(path, dtype=float))])


def format_number(value: float, digits: int = 3) -> str:
    """A number for the panel: 'inf' and '-' (NaN) in words, never a crash."""
    if math.isnan(value):
        return '-'
    if math.isinf(value):
        return '∞'
    return f'{value:.{digits}f}'


class ErrorHistory:
    """The live tracking error of the last seconds, as (t s since ``start``, error mm)."""

    def __init__(self, start: float) -> None:
        self._start = start
        self._points: deque[tuple[float, float]] = deque()

    def update(self, now: float, tracked: np.ndarray | None, tip: np.ndarray | None,
               length: float) -> None:
        """The error at ``now`` (s, the clock of ``start``) while a target is tracked;
        points older than ``length`` s go."""
        t = now - self._start
        if tracked is not None and tip is not None:
            self._points.append((t, float(np.linalg.norm(tracked - tip)) * 1000.0))
        while self._points and self._points[0][0] < t - length:
            self._points.popleft()

    def arrays(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(times, errors), or None while there are fewer than two points to plot."""
        if len(self._points) < 2:
            return None
        times, errors = np.array(self._points).T
        return times, errors
