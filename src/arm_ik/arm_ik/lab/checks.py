"""Checks every value passes before it reaches the browser view or a running node.

The number and vector checks are the core's (kinematics.checks), named here as the lab's
modules call them; only the host checks are the lab's own.
"""

from __future__ import annotations

import ipaddress

from arm_ik.kinematics.checks import check_vector as finite_vector
from arm_ik.kinematics.checks import positive_reason

__all__ = ['finite_vector', 'host_reason', 'is_loopback', 'positive_reason']

LOOPBACK_NAMES = ('localhost',)


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
