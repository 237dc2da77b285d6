"""The safety package seen from the motion side: path checks, pose checks, detours, contacts.

The motion core only needs three functions (check a trajectory, check one pose, plan a detour
between two poses); ``SafetyAdapter`` provides them from ``kinematics.safety``. Planners take
it as an optional, injectable dependency, so motion works (without the floor) where the
safety configuration is absent.

Policy: the floor is a hard limit (a path through it is UNSAFE_PATH or detoured). Touching
the obstacle is reported as contacts (times and tool points, sampled at 60 Hz, as the
reference system reports them) and blocks the move only with ``avoid_obstacle``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from arm_ik.kinematics.model import ArmModel
from arm_ik.kinematics.motion.errors import MotionCode, MotionError
from arm_ik.kinematics.motion.trajectory import Trajectory
from arm_ik.kinematics.motion.validation import PathReport


class SafetyAdapter:
    """Path checks, pose checks and detours of one arm from its ``SafetyGeometry``."""

    def __init__(self, geometry: Any, avoid_obstacle: bool = False) -> None:
        """Args:
            geometry: a ``kinematics.safety.SafetyGeometry``.
            avoid_obstacle: obstacle contact is a violation (else only reported).
        """
        from arm_ik.kinematics.safety import paths
        self.geometry = geometry
        self.avoid_obstacle = bool(avoid_obstacle)
        self._paths = paths

    def check_trajectory(self, trajectory: Trajectory) -> PathReport:
        """Check every sample (refined so no link point moves more than 2 cm between checks)
        and collect obstacle contacts at 60 Hz of motion time."""
        times = trajectory.times
        if len(times) == 1:
            times = None
        result = self._paths.check_path(self.geometry, trajectory.positions, times,
                                        obstacle=self.avoid_obstacle)
        contacts = self._paths.sample_contacts(self.geometry, trajectory.positions, times)
        error = None
        if not result.safe:
            error = MotionError(MotionCode.UNSAFE_PATH, f'the path is not safe: {result.message}')
        return PathReport(error, np.asarray(contacts.times, dtype=float),
                          np.asarray(contacts.tips, dtype=float).reshape(-1, 3), result.message)

    def check_pose(self, q: np.ndarray) -> str:
        """'' when pose ``q`` (rad) is clear of the floor (and the obstacle when avoided)."""
        check = self.geometry.check_pose(np.asarray(q, dtype=float))
        if check.safe:
            return ''
        if not self.avoid_obstacle and check.verdict.name == 'OBSTACLE_CONTACT':
            return ''
        return check.message

    def detour(self, start: np.ndarray, goal: np.ndarray) -> tuple[np.ndarray | None, str]:
        """Joint waypoints (K, n) from ``start`` to ``goal`` clear of the floor, or (None, why)."""
        from arm_ik.kinematics.safety.planning import plan_detour
        plan = plan_detour(self.geometry, start, goal, avoid_obstacle=self.avoid_obstacle)
        if not plan.success:
            return None, plan.message
        return np.asarray(plan.waypoints, dtype=float), plan.message


def load_safety(model: ArmModel, arm_config: Mapping[str, Any], arm: str,
                avoid_obstacle: bool = False) -> SafetyAdapter | None:
    """The arm's SafetyAdapter from its YAML's ``safety:`` section.

    Returns:
        None when the safety package is not installed or the YAML has no section.

    Raises:
        ValueError (SafetyConfigError): the section exists but is invalid.
    """
    if arm_config.get('safety') is None:
        return None
    try:
        from arm_ik.kinematics.safety.config import safety_config_of
        from arm_ik.kinematics.safety.geometry import SafetyGeometry
    except ImportError:
        return None
    return SafetyAdapter(SafetyGeometry(model, safety_config_of(arm_config, arm)), avoid_obstacle)
