"""The joint-path planners by name: the one place a name (``motion.path_planner``) becomes a
planner of an arm's checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arm_kinematics.motion.planning.base import GRID, JointPathPlanner, SAMPLING
from arm_kinematics.motion.planning.grid import GridPlanner
from arm_kinematics.motion.planning.sampling import SamplingPlanner


def _grid(safety: Any, collision: Any) -> JointPathPlanner | None:
    if safety is None:
        return None
    return GridPlanner(safety.geometry, safety.avoid_obstacle)


def _sampling(safety: Any, collision: Any) -> JointPathPlanner | None:
    if collision is None:
        return None
    return SamplingPlanner(collision, None if safety is None else safety.pose_rule)


# Each builds its planner from the arm's checks (a SafetyAdapter, a CollisionGuard), or
# None when the checks it plans against are absent.
PLANNERS: dict[str, Callable[[Any, Any], JointPathPlanner | None]] = {
    GRID: _grid,
    SAMPLING: _sampling,
}


def path_planner(name: str, safety: Any, collision: Any) -> JointPathPlanner:
    """The planner called ``name`` (GRID, SAMPLING) on these checks.

    Args:
        name: the planner's name.
        safety: the arm's ``SafetyAdapter`` (floor and obstacle), or None.
        collision: its ``CollisionGuard`` (self-collision and the scene), or None.

    Raises:
        ValueError: an unknown name, or the checks the planner needs are absent.
    """
    build = PLANNERS.get(name)
    if build is None:
        raise ValueError(f'path planner "{name}" is not one of {", ".join(PLANNERS)}')
    planner = build(safety, collision)
    if planner is None:
        raise ValueError(f'the {name} path planner has no checks to plan against on this arm')
    return planner
