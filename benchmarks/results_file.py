"""bench_results.json: every benchmark merges its own section, keeping the others."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any


def merge_section(path: Path, key: str, section: Any, distro: str | None = None) -> None:
    """Write ``section`` under ``key`` (or ``key``/``distro``), keeping every other entry.

    The read-modify-write is locked with a ``.json.lock`` file so benchmarks run side by
    side never drop each other's figures, and the file is replaced atomically.
    """
    with open(path.with_suffix('.json.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data: dict = {}
        if path.exists():
            try:
                data = json.loads(path.read_text(encoding='utf-8'))
            except json.JSONDecodeError:
                data = {}
            if not isinstance(data, dict):
                data = {}
        if distro is None:
            data[key] = section
        else:
            entry = data.get(key)
            entry = entry if isinstance(entry, dict) else {}
            entry[distro] = section
            data[key] = entry
        temporary = path.with_suffix('.json.tmp')
        temporary.write_text(json.dumps(data, indent=2) + '\n', encoding='utf-8')
        temporary.replace(path)


def detect_distro() -> tuple[str, str]:
    """(distro, rclpy version): ROS_DISTRO when set, else from the rclpy wheel's version."""
    from importlib import metadata
    try:
        version = metadata.version('ros-rclpy')
    except metadata.PackageNotFoundError:
        try:
            version = metadata.version('rclpy')
        except metadata.PackageNotFoundError:
            version = '?'
    if os.environ.get('ROS_DISTRO'):
        return os.environ['ROS_DISTRO'], version
    major = version.split('.')[0]
    return {'7': 'jazzy', '8': 'kilted', '9': 'kilted'}.get(major, f'rclpy-{version}'), version
