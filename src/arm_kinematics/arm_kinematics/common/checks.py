"""The small value checks every layer shares: finite vectors and numbers in a range.

Each returns the reason a value is unusable ('' when it is fine) instead of raising, so a
node can answer a request with it and a config loader can wrap it in its own error type.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ['check_vector', 'is_finite_number', 'is_numeric', 'number_reason', 'positive_reason']


def is_numeric(value: object) -> bool:
    """True when numpy can read ``value`` as floats (of any shape; NaN and inf included)."""
    try:
        np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return False
    return True


def is_finite_number(value: object) -> bool:
    """True for a finite int or float; a bool is not a number here (``true`` in a YAML file is
    a typo, not 1)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and \
        math.isfinite(value)


def number_reason(value: object, what: str, low: float | None = None,
                  high: float | None = None, low_open: bool = False,
                  high_open: bool = False, unit: str = '') -> str:
    """'' when ``value`` is a finite real number within [low, high], else why not.

    ``low_open``/``high_open`` exclude the bound itself; ``unit`` is appended to the bounds
    in the message (e.g. 'm', 's'). The value is shown as given (0.0 stays 0.0, as the
    config loaders' messages show it).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f'{what} must be a number, got {value!r}'
    if not math.isfinite(value):
        return f'{what} is {value} (must be finite)'
    suffix = f' {unit}' if unit else ''
    if low is not None and (value <= low if low_open else value < low):
        return f'{what} is {value} (must be {">" if low_open else ">="} {low:g}{suffix})'
    if high is not None and (value >= high if high_open else value > high):
        return f'{what} is {value} (must be {"<" if high_open else "<="} {high:g}{suffix})'
    return ''


def positive_reason(value: object, what: str, unit: str = '', allow_zero: bool = False) -> str:
    """'' when ``value`` is a finite real number > 0 (>= 0 with ``allow_zero``)."""
    return number_reason(value, what, low=0.0, low_open=not allow_zero, unit=unit)


def check_vector(value: object, size: int, field_name: str) -> tuple[np.ndarray | None, str]:
    """Convert ``value`` to a finite float vector of ``size``; on failure return (None, reason).

    Never raises: bad shapes, non-numbers, NaN and inf all come back as a reason naming
    the field and the offending component.
    """
    try:
        vector = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        return None, f'{field_name} is not a numeric vector'
    if vector.shape != (size,):
        return None, f'{field_name} has {vector.size} values, expected {size}'
    bad = np.flatnonzero(~np.isfinite(vector))
    if bad.size:
        index = int(bad[0])
        return None, f'{field_name}[{index}] is {vector[index]} (must be finite)'
    return vector, ''
