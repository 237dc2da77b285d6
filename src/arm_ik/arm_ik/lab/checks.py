"""Checks every value passes before it reaches the browser view or a running node."""

from __future__ import annotations

from collections.abc import Sequence
import ipaddress
import math

import numpy as np

LOOPBACK_NAMES = ('localhost',)


def joint_positions(names: Sequence[str], positions: Sequence[float],
                    joint_names: Sequence[str]) -> tuple[np.ndarray | None, str]:
    """The arm's joint positions (chain order) from a JointState's names and positions.

    Extra joints (a gripper, another arm) are ignored; the arm's own must each appear once
    with a finite value.

    Returns:
        (q (n,) rad, '') when usable, else (None, the reason in words).
    """
    names, positions = list(names), list(positions)
    if len(names) != len(positions):
        return None, f'{len(names)} names but {len(positions)} positions'
    index: dict[str, int] = {}
    for k, name in enumerate(names):
        if name in index and name in joint_names:
            return None, f'joint {name} appears twice'
        index[name] = k
    missing = [name for name in joint_names if name not in index]
    if missing:
        return None, f'missing joints {", ".join(missing)}'
    try:
        q = np.array([float(positions[index[name]]) for name in joint_names])
    except (TypeError, ValueError) as error:
        return None, f'positions are not numbers ({error})'
    bad = [name for name, value in zip(joint_names, q) if not math.isfinite(value)]
    if bad:
        return None, f'non-finite position of {", ".join(bad)}'
    return q, ''


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
