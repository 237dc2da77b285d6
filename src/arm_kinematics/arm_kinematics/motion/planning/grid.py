"""The grid joint-path planner: a detour around the floor (and the obstacle) for arms with
two pitch joints (``plan_detour``, and ``GridPlanner``, its ``JointPathPlanner`` face).
The search itself is in ``planning.grid_search``.

Paths are piecewise linear in joint space between waypoints. Units: radians, metres,
seconds.

Detour planner (``plan_detour``): a graph search (A*, 8-connected, Euclidean cost in radians)
over a grid of (shoulder, elbow) poses at ``resolution`` (default 4°) inside the joint
limits. The other joints are not searched:

- when only a vertical base yaw moves besides them and only the floor counts (pointer3's
  case), the yaw follows the progress along the path (interpolated): turning a vertical
  base changes no height, so one map at any yaw is exact;
- otherwise (wrist joints, or the obstacle, which the yaw does see) the search runs on two
  layers, one map at the start's values of the other joints and one at the goal's, joined
  by "transfer" cells where those joints can move from start to goal values in place
  (cells free in both maps, the most clearance first, each transfer checked).

Every free cell keeps a margin that covers how far a link can sag between two neighbouring
cells, so the edges between free cells are clear too (a wider first-order margin is tried
when that is not enough). The found path is shortened by dropping collinear cells and by
greedy shortcuts, then every waypoint segment is sampled finely (no link point moves more
than ``max_point_step`` between samples) and the plan is returned only if every sample is
clear. The answer is *safe, not necessarily shortest*: the grid, the margins, the transfer
choice and the greedy shortcuts all trade length for a simple, bounded search. No clear path
on the grid is an error (``PlanCode.NO_PATH``), never a move.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import enum
import math
from time import perf_counter

import numpy as np

from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.planning.base import GRID, JointPathPlan
from arm_kinematics.motion.planning.grid_search import default_search_joints, GridSearch
from arm_kinematics.motion.safety_paths import MAX_POINT_STEP, sample_path, time_at_velocity_limits
from arm_kinematics.scene.geometry import SafetyGeometry

DEFAULT_RESOLUTION = math.radians(4.0)
# Grid resolutions accepted (rad): finer than 0.5° makes maps of 10^5+ cells (slow), coarser
# than 20° cannot thread the arm between floor and obstacle.
MIN_RESOLUTION = math.radians(0.5)
MAX_RESOLUTION = math.radians(20.0)
class PlanCode(enum.IntEnum):
    """Outcome of a detour request; values match arm_interfaces/PlanDetour."""

    OK = 0                 # waypoints returned (the straight path, or a detour)
    INVALID_INPUT = 1      # wrong size, not finite, outside the joint limits, bad resolution
    START_UNSAFE = 2       # the start pose itself violates the floor (or touches the obstacle)
    GOAL_UNSAFE = 3        # the goal pose itself does
    NO_PATH = 4            # no clear path on the grid: do not move
    NOT_APPLICABLE = 5     # the arm has no two pitch joints to search over
    INTERNAL_ERROR = 6     # raised inside the planner (ROS side); nothing planned
    NO_JOINT_STATE = 7     # start omitted and no joint state received yet (ROS side)


@dataclass(frozen=True)
class DetourPlan:
    """Answer of ``plan_detour``.

    Attributes:
        code: PlanCode.
        message: what happened, in words a person can act on.
        waypoints: (K, n) joint positions, rad, start and goal included; empty on failure.
        times: (K,) s, when each waypoint is reached moving at the URDF velocity limits.
        detoured: True when the straight path was not clear and a detour was planned.
        grid_path: (M, 2) (shoulder, elbow) grid cells of the detour before shortening.
        expanded: grid cells expanded by the search.
        samples_checked: poses checked in the final verification.
        min_floor_clearance: lowest floor clearance along the returned path, m.
        plan_time: wall time, s.
    """

    code: PlanCode
    message: str
    waypoints: np.ndarray
    times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    detoured: bool = False
    grid_path: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=int))
    expanded: int = 0
    samples_checked: int = 0
    min_floor_clearance: float = math.nan
    plan_time: float = 0.0

    @property
    def success(self) -> bool:
        return self.code == PlanCode.OK


def limited_joint_vector(value: object, model: ArmModel, what: str
                          ) -> tuple[np.ndarray | None, str]:
    """``value`` as the arm's joint vector inside its limits (clipped by at most 1e-9 rad),
    or (None, why it is not one)."""
    try:
        vector = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        return None, f'{what} is not a numeric vector'
    if vector.shape != (model.dof,):
        return None, f'{what} has {vector.size} values, the arm has {model.dof} joints'
    if not np.isfinite(vector).all():
        return None, f'{what} is not finite: {vector.tolist()}'
    outside = [f'{model.joint_names[k]}={vector[k]:.4f} rad' for k in range(model.dof)
               if not model.lower[k] - 1e-9 <= vector[k] <= model.upper[k] + 1e-9]
    if outside:
        return None, f'{what} is outside the joint limits: {", ".join(outside)}'
    return np.clip(vector, model.lower, model.upper), ''


def plan_detour(geometry: SafetyGeometry, start: object, goal: object,
                resolution: float = DEFAULT_RESOLUTION, avoid_obstacle: bool = False,
                max_point_step: float = MAX_POINT_STEP,
                search_joints: tuple[int, int] | None = None) -> DetourPlan:
    """A clear path from ``start`` to ``goal``: the straight one if it is clear, else a detour.

    Args:
        geometry: the arm's safety geometry.
        start, goal: joint positions, rad, inside the limits.
        resolution: grid step of the detour search, rad (0.5° to 20°; default 4°).
        avoid_obstacle: the path must also keep clear of the obstacle (else only the floor).
        max_point_step: sampling density of every check, m.
        search_joints: the two joints searched (default: the first two with horizontal axes).

    Returns:
        DetourPlan; never raises for bad input (INVALID_INPUT with the reason). Safe, not
        necessarily shortest: see the module docstring.
    """
    began = perf_counter()
    model = geometry.model

    def fail(code: PlanCode, message: str, **extra: object) -> DetourPlan:
        return DetourPlan(code, message, np.zeros((0, model.dof)),
                          plan_time=perf_counter() - began, **extra)

    q_start, reason = limited_joint_vector(start, model, 'start')
    if q_start is None:
        return fail(PlanCode.INVALID_INPUT, reason)
    q_goal, reason = limited_joint_vector(goal, model, 'goal')
    if q_goal is None:
        return fail(PlanCode.INVALID_INPUT, reason)
    if isinstance(resolution, bool) or not isinstance(resolution, (int, float)) or \
            not MIN_RESOLUTION - 1e-12 <= resolution <= MAX_RESOLUTION + 1e-12:
        return fail(PlanCode.INVALID_INPUT,
                    f'resolution {resolution!r} rad is outside {MIN_RESOLUTION:.4f}..'
                    f'{MAX_RESOLUTION:.4f} rad (0.5° to 20°)')
    if not (math.isfinite(max_point_step) and max_point_step > 0.0):
        return fail(PlanCode.INVALID_INPUT, f'max_point_step {max_point_step!r} must be > 0 m')
    ends = geometry.check(np.array([q_start, q_goal]))
    counted = ends.floor_violation.any(axis=1)
    if avoid_obstacle:
        counted |= ends.obstacle_contact.any(axis=1)
    for k, (code, word) in enumerate(((PlanCode.START_UNSAFE, 'start'),
                                      (PlanCode.GOAL_UNSAFE, 'goal'))):
        if counted[k]:
            return fail(code, f'the {word} pose is not clear: {ends.pose(k).message}')

    if np.abs(q_goal - q_start).max() < 1e-12:
        # One waypoint: a repeated one would give an executor a zero-length, zero-time step.
        return DetourPlan(PlanCode.OK, 'start and goal are the same pose',
                          q_start[None, :].copy(), np.zeros(1), samples_checked=1,
                          min_floor_clearance=float(ends.min_floor_clearance[0]),
                          plan_time=perf_counter() - began)
    straight = sample_path(geometry, np.array([q_start, q_goal]), None, 0.0, max_point_step)
    straight_clearance = geometry.clearance(straight.positions, avoid_obstacle)
    if (straight_clearance >= 0.0).all():
        checks = geometry.check(straight.positions)
        return DetourPlan(PlanCode.OK, f'the straight path is clear ({len(straight.positions)} '
                          'samples)', np.array([q_start, q_goal]),
                          time_at_velocity_limits(model, np.array([q_start, q_goal])),
                          samples_checked=len(straight.positions),
                          min_floor_clearance=float(checks.min_floor_clearance.min()),
                          plan_time=perf_counter() - began)
    joints = search_joints or default_search_joints(model)
    if joints is None:
        return fail(PlanCode.NOT_APPLICABLE, 'the straight path is not clear and this arm has '
                    'no two pitch joints to search a detour over')
    # Name the worst sample, not the first (which only grazes the floor).
    blocked_by = geometry.check(
        straight.positions[int(np.argmin(straight_clearance))]).pose(0).message
    planner = GridSearch(geometry, q_start, q_goal, resolution, avoid_obstacle, max_point_step,
                       joints)
    what = 'floor and obstacle' if avoid_obstacle and geometry.obstacle_enabled else 'floor'
    reasons = []
    for margin in (planner.sag, planner.lipschitz):
        points, cells, reason = planner.plan(margin)
        if points is None:
            reasons.append(reason)
            continue
        for candidate in (planner.shorten(points), points):
            samples = sample_path(geometry, candidate, None, 0.0, max_point_step)
            if geometry.unsafe(samples.positions, avoid_obstacle).any():
                continue
            checks = geometry.check(samples.positions)
            return DetourPlan(
                PlanCode.OK,
                f'the straight path is not clear ({blocked_by}); detour of '
                f'{len(candidate)} waypoints around the {what}, every one of '
                f'{len(samples.positions)} samples clear', candidate,
                time_at_velocity_limits(model, candidate), True,
                np.array([(a, b) for _, a, b in cells], dtype=int), planner.expanded,
                len(samples.positions), float(checks.min_floor_clearance.min()),
                perf_counter() - began)
        reasons.append('the grid path failed the fine check between cells')
    return fail(PlanCode.NO_PATH, f'no clear path around the {what}: {reasons[0]}; '
                'do not move', expanded=planner.expanded)


class GridPlanner:
    """The grid detour as a ``JointPathPlanner``: the floor and, with ``avoid_obstacle``,
    the obstacle of one arm's ``SafetyGeometry``."""

    name = GRID
    avoids_collisions = False

    def __init__(self, geometry: SafetyGeometry, avoid_obstacle: bool = False,
                 resolution: float = DEFAULT_RESOLUTION) -> None:
        self.geometry = geometry
        self.avoid_obstacle = bool(avoid_obstacle)
        self.resolution = resolution

    def plan(self, start: np.ndarray, goal: np.ndarray) -> JointPathPlan:
        plan = plan_detour(self.geometry, start, goal, self.resolution,
                           avoid_obstacle=self.avoid_obstacle)
        return JointPathPlan(plan.success, np.asarray(plan.waypoints, dtype=float),
                             plan.message, plan.plan_time)
