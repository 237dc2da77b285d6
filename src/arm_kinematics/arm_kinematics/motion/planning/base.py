"""The one interface of the joint-path planners: ``plan(start, goal) -> JointPathPlan``.

A joint-path planner finds joint waypoints from a start pose to a goal pose that keep clear
of what it sees; the motion planner times them (min-jerk segments) and validates the result
as any other trajectory. Two implement it, chosen by name (``motion.path_planner`` in the
arm config, ``MotionSettings.path_planner``) in ``planning.registry``:

- ``grid`` (``planning.grid.GridPlanner``): A* on a grid over two pitch joints, the floor
  and (when avoided) the obstacle; exact and complete for a yaw + two-pitch pointer.
- ``sampling`` (``planning.sampling.SamplingPlanner``): OMPL RRTConnect against
  self-collision, the scene and the floor rules; any arm.

A new planner is a class with a ``name``, an ``avoids_collisions`` flag and ``plan``, added
to ``planning.registry.PLANNERS``.

Units: rad.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from arm_kinematics.common import names
from arm_kinematics.model.arm_model import ArmModel

GRID = names.GRID_PLANNER
SAMPLING = names.SAMPLING_PLANNER
PATH_PLANNERS = names.PATH_PLANNERS


@dataclass(frozen=True)
class JointPathPlan:
    """What a joint-path planner answers.

    Attributes:
        success: a clear path was found.
        path: (K, n) joint waypoints, start first and goal last, rad; (0, n) on failure.
        reason: how the path was found, or why there is none, in words.
        planning_time: wall time of the request, s.
    """

    success: bool
    path: np.ndarray
    reason: str
    planning_time: float = 0.0


class JointPathPlanner(Protocol):
    """A planner of clear joint paths between two poses.

    Attributes:
        name: its name in ``motion.path_planner`` (GRID, SAMPLING).
        avoids_collisions: it keeps clear of self-collision and the scene (else the floor
            and the obstacle only); a move that collides is left to such a planner.
    """

    name: str
    avoids_collisions: bool

    def plan(self, start: np.ndarray, goal: np.ndarray) -> JointPathPlan:
        """A clear joint path from ``start`` to ``goal`` (rad), or why there is none;
        never raises for an unplannable request."""
        ...


def default_path_planner(model: ArmModel) -> str:
    """GRID for a yaw + two-pitch pointer (a vertical base yaw, then two horizontal joints:
    pointer3's case, where the 4° grid over the two pitches is exact and complete), SAMPLING
    for every other arm."""
    if model.dof != 3:
        return SAMPLING
    _, axes, _ = model.joint_origins_and_axes(np.zeros(model.dof))
    vertical = abs(abs(float(axes[0][2])) - 1.0) < 1e-6
    pitches = all(abs(float(axis[2])) < 1e-6 for axis in axes[1:])
    return GRID if vertical and pitches else SAMPLING
