"""Checks of the lab's own values: the address its web server listens on (finite vectors and
positive numbers: ``kinematics.checks``)."""

from __future__ import annotations

import ipaddress

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
