"""Motion planning for safety: a detour planner around the floor and the (shoulder, elbow)
joint map. Path sampling, contact sampling and ``check_path`` live in ``paths`` and are
re-exported here.

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
import heapq
import math
from time import perf_counter
from typing import TYPE_CHECKING

import numpy as np

from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.safety_paths import (
    check_path,
    CONTACT_RATE,
    Contacts,
    contacts_of,
    MAX_POINT_STEP,
    sample_contacts,
    sample_in_time,
    sample_path,
    time_at_velocity_limits,
)
from arm_kinematics.scene.geometry import SafetyGeometry

if TYPE_CHECKING:      # the collision package (and its library) only when a map asks
    from arm_kinematics.scene.checker import CollisionChecker

__all__ = ['CONTACT_RATE', 'check_path', 'Contacts', 'DEFAULT_RESOLUTION', 'DetourPlan',
           'joint_map', 'JointMap', 'JointMapError', 'MapCode', 'MAX_POINT_STEP', 'plan_detour',
           'PlanCode',
           'sample_contacts', 'sample_path', 'time_at_velocity_limits']

DEFAULT_RESOLUTION = math.radians(4.0)
# Grid resolutions accepted (rad): finer than 0.5° makes maps of 10^5+ cells (slow), coarser
# than 20° cannot thread the arm between floor and obstacle.
MIN_RESOLUTION = math.radians(0.5)
MAX_RESOLUTION = math.radians(20.0)
# Greedy shortcutting tries every later waypoint; above this many it only drops collinear
# cells (keeps the plan time bounded).
MAX_SHORTCUT_WAYPOINTS = 60
# Shortcut candidates checked per batched call (far ones first: a far success saves the rest).
SHORTCUT_BATCH = 4


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


@dataclass(frozen=True)
class JointMap:
    """The (shoulder, elbow) grid of one arm at fixed other joints, with a path on it.

    The cells are computed at ``base_q``'s yaw. During a real move the base is still
    turning, so the path can cross marked contact cells without touching the obstacle, or
    touch it without crossing them: the contacts measured on the path are the truth, the
    cells a guide. Floor cells do not depend on a vertical base yaw.

    Attributes:
        joint_names: names of the two mapped joints.
        search_joints: their indices.
        base_q: (n,) pose supplying every other joint (rad).
        axis_a, axis_b: (A,), (B,) grid angles of the two joints, rad.
        floor: (A, B) True where a capsule is below the floor.
        contact: (A, B) True where a rod touches the obstacle.
        path: (S, 2) the two joints' angles along the sampled path, rad.
        path_cells: (S, 2) nearest grid indices of those samples.
        path_times: (S,) s.
        contacts: measured contacts along the path.
        contact_angles: (K, 2) the two joints' angles at those contacts, rad.
        self_collision: (A, B) True where two links not allowed to touch are in contact
            (the URDF collision shapes); None when no collision checker judged the cells.
        scene_contact: (A, B) True where a link touches a scene object; None likewise.
        scene_version: version of the checker's scene the cells were judged against.
    """

    joint_names: tuple[str, str]
    search_joints: tuple[int, int]
    base_q: np.ndarray
    axis_a: np.ndarray
    axis_b: np.ndarray
    floor: np.ndarray
    contact: np.ndarray
    path: np.ndarray
    path_cells: np.ndarray
    path_times: np.ndarray
    contacts: Contacts
    contact_angles: np.ndarray
    self_collision: np.ndarray | None = None
    scene_contact: np.ndarray | None = None
    scene_version: int = 0


# ---------------------------------------------------------------------------- planning
def default_search_joints(model: ArmModel) -> tuple[int, int] | None:
    """The first two joints with a horizontal axis at q = 0 (shoulder, elbow), or None."""
    _, axes, _ = model.joint_origins_and_axes(np.zeros(model.dof))
    horizontal = [i for i, axis in enumerate(axes) if abs(axis[2]) < 1e-6]
    return (horizontal[0], horizontal[1]) if len(horizontal) >= 2 else None


def grid_axis(low: float, high: float, resolution: float) -> np.ndarray:
    """Angles from ``low`` to ``high`` inclusive, evenly spaced at most ``resolution`` apart."""
    count = max(2, int(math.ceil((high - low) / resolution - 1e-9)) + 1)
    return np.linspace(low, high, count)


class _Planner:
    """One detour search; see the module docstring for the method."""

    def __init__(self, geometry: SafetyGeometry, start: np.ndarray, goal: np.ndarray,
                 resolution: float, avoid_obstacle: bool, max_point_step: float,
                 joints: tuple[int, int]) -> None:
        self.geometry = geometry
        self.model = geometry.model
        self.start, self.goal = start, goal
        self.avoid_obstacle = avoid_obstacle
        self.max_point_step = max_point_step
        self.joints = joints
        i, j = joints
        self.axis_a = grid_axis(self.model.lower[i], self.model.upper[i], resolution)
        self.axis_b = grid_axis(self.model.lower[j], self.model.upper[j], resolution)
        self.shape = (len(self.axis_a), len(self.axis_b))
        self.step = np.array([self.axis_a[1] - self.axis_a[0], self.axis_b[1] - self.axis_b[0]])
        reach = geometry.joint_reach[[i, j]]
        # Sag of a link between two neighbouring cells (second-order bound of a point's path
        # off the straight blend of its two ends): keeps every edge between free cells clear.
        self.sag = float(self.step.sum() * (self.step @ reach)) / 8.0
        # First-order bound, used when the sag margin was not enough (obstacle distance is
        # not smooth): half a diagonal step's largest point motion.
        self.lipschitz = float(self.step @ reach) / 2.0
        others = np.array([k for k in range(self.model.dof) if k not in joints], dtype=int)
        moving = [int(k) for k in others if abs(goal[k] - start[k]) > 1e-12]
        _, axes, _ = self.model.joint_origins_and_axes(np.zeros(self.model.dof))
        if not (avoid_obstacle and geometry.obstacle_enabled) and \
                abs(abs(axes[0][2]) - 1.0) < 1e-9:
            # Turning a vertical base changes no height: it does not matter for the floor.
            moving = [k for k in moving if k != 0]
        # Layered search when joints that matter move besides the two searched ones.
        self.layers = 2 if moving else 1
        self.transfer_cost = float(np.linalg.norm(goal[others] - start[others]))
        self.clearance = [self._clearance(start)] + \
            ([self._clearance(goal)] if self.layers == 2 else [])
        self.expanded = 0

    def pose(self, cell: tuple[int, int], layer: int) -> np.ndarray:
        """Full joint positions of a cell with the start (layer 0) or goal (1) other joints."""
        q = (self.start if layer == 0 else self.goal).copy()
        q[self.joints[0]], q[self.joints[1]] = self.axis_a[cell[0]], self.axis_b[cell[1]]
        return q

    def _clearance(self, base: np.ndarray) -> np.ndarray:
        i, j = self.joints
        grid_a, grid_b = np.meshgrid(self.axis_a, self.axis_b, indexing='ij')
        poses = np.repeat(base[None, :], grid_a.size, axis=0)
        poses[:, i], poses[:, j] = grid_a.ravel(), grid_b.ravel()
        return self.geometry.clearance(poses, self.avoid_obstacle).reshape(self.shape)

    # -------------------------------------------------------------- path pieces
    def segment_clear(self, a: np.ndarray, b: np.ndarray) -> bool:
        return bool(self.segments_clear(a, b[None, :])[0])

    def segments_clear(self, a: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """(M,) whether each straight segment from ``a`` to ``ends[k]`` is clear, sampled so
        no capsule point moves more than ``max_point_step``; one batched check for all."""
        counts = np.maximum(np.ceil(self.geometry.max_point_motion(a, ends)
                                    / self.max_point_step), 1).astype(int) + 1
        owner = np.repeat(np.arange(len(ends)), counts)
        first = np.concatenate([[0], np.cumsum(counts)[:-1]])
        fraction = (np.arange(owner.size) - first[owner]) / (counts[owner] - 1)
        samples = a + fraction[:, None] * (ends[owner] - a)
        bad = self.geometry.unsafe(samples, self.avoid_obstacle)
        return ~np.logical_or.reduceat(bad, first)

    def connect(self, q: np.ndarray, free: np.ndarray, layer: int,
                tries: int = 16) -> tuple[int, int] | None:
        """The nearest free cell reachable from ``q`` along a clear straight segment."""
        i, j = self.joints
        cells = np.argwhere(free)
        order = np.argsort(np.hypot(self.axis_a[cells[:, 0]] - q[i],
                                    self.axis_b[cells[:, 1]] - q[j]))[:tries]
        nodes = np.array([self.pose((int(a), int(b)), layer) for a, b in cells[order]])
        clear = np.flatnonzero(self.segments_clear(q, nodes))
        if not clear.size:
            return None
        a, b = cells[order[clear[0]]]
        return int(a), int(b)

    def transfers(self, free: list[np.ndarray], batch: int = 16) -> np.ndarray:
        """(A, B) cells where the other joints can move from start to goal values in place.

        Candidates are the cells free in both layers with the most clearance; they are
        checked a batch at a time until some pass (safe, not necessarily the shortest).
        """
        allowed = np.zeros(self.shape, dtype=bool)
        both = free[0] & free[1]
        cells = np.argwhere(both)
        score = np.minimum(self.clearance[0], self.clearance[1])[both]
        cells = cells[np.argsort(-score)]
        for first in range(0, len(cells), batch):
            for a, b in cells[first:first + batch]:
                cell = (int(a), int(b))
                if self.segment_clear(self.pose(cell, 0), self.pose(cell, 1)):
                    allowed[cell] = True
            if allowed.any():
                break
        return allowed

    def search(self, free: list[np.ndarray], transfer: np.ndarray | None,
               source: tuple[int, int], target: tuple[int, int]
               ) -> list[tuple[int, int, int]] | None:
        """A* over the 8-connected free cells of each layer (and transfer edges between
        them); cost and heuristic in radians. Returns (layer, a, b) cells or None."""
        rows, cols = self.shape
        size = rows * cols
        da, db = self.step
        moves = [(di, dj, math.hypot(di * da, dj * db))
                 for di in (-1, 0, 1) for dj in (-1, 0, 1) if di or dj]
        free_flat = np.concatenate([f.ravel() for f in free]).tolist()
        transfer_flat = transfer.ravel().tolist() if transfer is not None else []
        last = self.layers - 1
        ti, tj = target

        def heuristic(layer: int, a: int, b: int) -> float:
            rest = self.transfer_cost if layer < last else 0.0
            return math.hypot((a - ti) * da, (b - tj) * db) + rest

        source_index = source[0] * cols + source[1]
        target_index = last * size + ti * cols + tj
        cost = {source_index: 0.0}
        parent = {source_index: -1}
        frontier = [(heuristic(0, *source), 0.0, source_index)]
        closed = set()
        while frontier:
            _, g, index = heapq.heappop(frontier)
            if index in closed:
                continue
            closed.add(index)
            self.expanded += 1
            if index == target_index:
                path = []
                while index != -1:
                    layer, rest = divmod(index, size)
                    path.append((layer, *divmod(rest, cols)))
                    index = parent[index]
                return path[::-1]
            layer, rest = divmod(index, size)
            a, b = divmod(rest, cols)
            steps = [(layer * size + (a + di) * cols + b + dj, length, a + di, b + dj)
                     for di, dj, length in moves
                     if 0 <= a + di < rows and 0 <= b + dj < cols]
            if layer < last and transfer_flat[rest]:
                steps.append((size + rest, self.transfer_cost, a, b))
            for neighbour, length, na, nb in steps:
                if not free_flat[neighbour] or neighbour in closed:
                    continue
                new_cost = g + length
                if new_cost < cost.get(neighbour, math.inf):
                    cost[neighbour] = new_cost
                    parent[neighbour] = index
                    heapq.heappush(frontier, (new_cost + heuristic(neighbour // size, na, nb),
                                              new_cost, neighbour))
        return None

    def waypoints(self, cells: list[tuple[int, int, int]]) -> np.ndarray:
        """Full joint waypoints: start, the cells, goal.

        With one layer the other joints (a vertical base yaw that the floor does not see)
        follow the progress along the path; with two they keep the start values up to the
        transfer cell and the goal values after it.
        """
        i, j = self.joints
        points = np.array([self.start] + [self.pose((a, b), layer) for layer, a, b in cells]
                          + [self.goal])
        if self.layers == 1:
            plane = points[:, [i, j]]
            lengths = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(plane, axis=0),
                                                                      axis=1))])
            progress = lengths / lengths[-1] if lengths[-1] > 0.0 else \
                np.linspace(0.0, 1.0, len(plane))
            points = self.start + progress[:, None] * (self.goal - self.start)
            points[:, i], points[:, j] = plane[:, 0], plane[:, 1]
        return _drop_repeats(points)

    def shorten(self, points: np.ndarray) -> np.ndarray:
        """Drop collinear waypoints, then greedy shortcuts (farthest clear jump first)."""
        keep = [0]
        for k in range(1, len(points) - 1):
            before, after = points[k] - points[keep[-1]], points[k + 1] - points[k]
            cross = np.linalg.norm(before) * np.linalg.norm(after) - before @ after
            if cross > 1e-9:
                keep.append(k)
        keep.append(len(points) - 1)
        points = points[keep]
        if len(points) > MAX_SHORTCUT_WAYPOINTS:
            return points
        result = [0]
        while result[-1] < len(points) - 1:
            here = result[-1]
            # The farthest waypoint reachable in a straight clear line, tried a few at a time
            # from the far end (one batched check each); the next one always is (it is a
            # step of the checked path).
            chosen = here + 1
            for top in range(len(points) - 1, here + 1, -SHORTCUT_BATCH):
                later = np.arange(max(here + 2, top - SHORTCUT_BATCH + 1), top + 1)
                clear = self.segments_clear(points[here], points[later])
                if clear.any():
                    chosen = int(later[clear].max())
                    break
            result.append(chosen)
        return points[result]

    def plan(self, margin: float) -> tuple[np.ndarray | None, list, str]:
        """Waypoints (or None), the grid path and the reason when there is none."""
        free = [clearance >= margin for clearance in self.clearance]
        what = 'floor and obstacle' if self.avoid_obstacle and \
            self.geometry.obstacle_enabled else 'floor'
        if not free[0].any() or not free[-1].any():
            return None, [], f'the {what} leaves no free cell on the grid'
        source = self.connect(self.start, free[0], 0)
        target = self.connect(self.goal, free[-1], self.layers - 1)
        if source is None or target is None:
            word = 'start' if source is None else 'goal'
            return None, [], (f'no grid pose near the {word} can be reached along a clear '
                              'straight segment')
        transfer = None
        if self.layers == 2:
            transfer = self.transfers(free)
            if not transfer.any():
                return None, [], ('no grid pose lets the other joints move from their start '
                                  'to their goal values clear of the ' + what)
        cells = self.search(free, transfer, source, target)
        if cells is None:
            counts = ', '.join(f'{int(f.sum())}' for f in free)
            return None, [], (f'the {what} cut the start off from the goal on the '
                              f'{math.degrees(self.step.max()):.1f}° grid ({counts} of '
                              f'{free[0].size} cells free)')
        return self.waypoints(cells), cells, ''


def _drop_repeats(points: np.ndarray) -> np.ndarray:
    keep = np.concatenate([[True], np.abs(np.diff(points, axis=0)).max(axis=1) > 1e-12])
    keep[-1] = True
    return points[keep]


def _joint_vector(value: object, model: ArmModel, what: str) -> tuple[np.ndarray | None, str]:
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

    q_start, reason = _joint_vector(start, model, 'start')
    if q_start is None:
        return fail(PlanCode.INVALID_INPUT, reason)
    q_goal, reason = _joint_vector(goal, model, 'goal')
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
    planner = _Planner(geometry, q_start, q_goal, resolution, avoid_obstacle, max_point_step,
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


# ---------------------------------------------------------------------------- joint map
class MapCode(enum.IntEnum):
    """Outcome of a joint map request; values match arm_interfaces/GetJointMap."""

    OK = 0
    INVALID_INPUT = 1      # bad shapes, non-finite values, a resolution out of range
    NOT_APPLICABLE = 2     # the arm has no two pitch joints to map
    NO_JOINT_STATE = 3     # the current state was asked for and none has arrived
    INTERNAL_ERROR = 4


class JointMapError(ValueError):
    """A joint map that cannot be made; ``code`` (a MapCode) says which kind of refusal."""

    def __init__(self, code: MapCode, message: str) -> None:
        super().__init__(message)
        self.code = code


def joint_map(geometry: SafetyGeometry, base_q: object, resolution: float = DEFAULT_RESOLUTION,
              waypoints: np.ndarray | None = None, times: np.ndarray | None = None,
              rate: float = CONTACT_RATE,
              search_joints: tuple[int, int] | None = None,
              checker: CollisionChecker | None = None) -> JointMap:
    """The (shoulder, elbow) map at ``base_q``'s other joints (the current base yaw), with the
    floor and contact cells marked and, when given, a path and its measured contacts.

    Args:
        geometry: the arm's safety geometry.
        base_q: (n,) rad; supplies the yaw (and wrist joints) of the map.
        resolution: grid step, rad (0.5° to 20°).
        waypoints, times: an optional path (K, n) rad and (K,) s (None: velocity limits).
        rate: path sampling rate, Hz (contacts are measured at these samples).
        search_joints: the two mapped joints (default shoulder, elbow).
        checker: a collision checker of the same arm (kinematics.collision), with the scene
            to judge against: the cells in self-collision and in scene contact are marked
            too (15-27 ms more for a 4° map of a bundled arm, bench_safety; None: not judged).

    Raises:
        JointMapError: INVALID_INPUT for bad shapes, non-finite values or a resolution out
            of range; NOT_APPLICABLE for an arm without two pitch joints.
    """
    model = geometry.model
    base, reason = _joint_vector(base_q, model, 'base pose')
    if base is None:
        raise JointMapError(MapCode.INVALID_INPUT, reason)
    if not MIN_RESOLUTION - 1e-12 <= resolution <= MAX_RESOLUTION + 1e-12:
        raise JointMapError(MapCode.INVALID_INPUT, f'resolution {resolution} rad is outside '
                            f'{MIN_RESOLUTION:.4f}..{MAX_RESOLUTION:.4f} rad')
    joints = search_joints or default_search_joints(model)
    if joints is None:
        raise JointMapError(MapCode.NOT_APPLICABLE, 'this arm has no two pitch joints to map')
    i, j = joints
    axis_a = grid_axis(model.lower[i], model.upper[i], resolution)
    axis_b = grid_axis(model.lower[j], model.upper[j], resolution)
    grid_a, grid_b = np.meshgrid(axis_a, axis_b, indexing='ij')
    poses = np.repeat(base[None, :], grid_a.size, axis=0)
    poses[:, i], poses[:, j] = grid_a.ravel(), grid_b.ravel()
    checks = geometry.check(poses)
    floor = checks.floor_violation.any(axis=1).reshape(grid_a.shape)
    contact = checks.obstacle_contact.any(axis=1).reshape(grid_a.shape)
    collision: dict = {}
    if checker is not None:
        self_cells, scene_cells = checker.blocked_masks(poses)
        collision = {'self_collision': self_cells.reshape(grid_a.shape),
                     'scene_contact': scene_cells.reshape(grid_a.shape),
                     'scene_version': int(checker.scene.version)}
    empty = Contacts(np.zeros(0), np.zeros((0, 3)), np.zeros((0, model.dof)), np.zeros(0), ())
    if waypoints is None:
        return JointMap((model.joint_names[i], model.joint_names[j]), joints, base, axis_a,
                        axis_b, floor, contact, np.zeros((0, 2)), np.zeros((0, 2), dtype=int),
                        np.zeros(0), empty, np.zeros((0, 2)), **collision)
    waypoints = np.atleast_2d(np.asarray(waypoints, dtype=float))
    samples = sample_in_time(model, waypoints, times, rate)
    path_checks = geometry.check(samples.positions)
    path = samples.positions[:, [i, j]]
    cells = np.column_stack([
        np.clip(np.rint((path[:, 0] - axis_a[0]) / (axis_a[1] - axis_a[0])), 0,
                len(axis_a) - 1),
        np.clip(np.rint((path[:, 1] - axis_b[0]) / (axis_b[1] - axis_b[0])), 0,
                len(axis_b) - 1)]).astype(int)
    contacts = contacts_of(path_checks, samples)
    return JointMap((model.joint_names[i], model.joint_names[j]), joints, base, axis_a, axis_b,
                    floor, contact, path, cells, samples.times, contacts,
                    contacts.positions[:, [i, j]] if len(contacts) else np.zeros((0, 2)),
                    **collision)
