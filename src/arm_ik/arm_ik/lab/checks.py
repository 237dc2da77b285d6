"""Checks every value passes before it reaches the browser view or a running node."""

from __future__ import annotations

from collections.abc import Sequence
import ipaddress
import math

import numpy as np

LOOPBACK_NAMES = ('localhost',)


def finite_vector(values: Sequence[float], size: int, what: str) -> tuple[np.ndarray | None,
                                                                          str]:
    """``values`` as a float vector of ``size`` finite entries, or (None, the reason)."""
    try:
        vector = np.asarray([float(v) for v in values], dtype=float)
    except (TypeError, ValueError):
        return None, f'{what} is not a list of numbers'
    if vector.shape != (size,):
        return None, f'{what} has {vector.size} values, expected {size}'
    if not np.all(np.isfinite(vector)):
        return None, f'{what} holds NaN or inf'
    return vector, ''


def host_reason(host: str) -> str:
    """'' when ``host`` is an address a server can bind (an IP literal or localhost)."""
    if host in LOOPBACK_NAMES:
        return ''
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return f'host "{host}" is not an IP address or localhost (e.g. 127.0.0.1)'
    return ''


def is_loopback(host: str) -> bool:
    """True when ``host`` is reachable from this machine only."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def positive_reason(value: object, what: str) -> str:
    """'' when ``value`` is a finite number > 0, else why not."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f'{what} must be a number, got {value!r}'
    if not math.isfinite(value) or value <= 0.0:
        return f'{what} must be finite and > 0, got {value!r}'
    return ''
