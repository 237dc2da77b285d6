"""Motion planning for safety: a detour planner around the floor and the (shoulder, elbow)
joint map. Path sampling, contact sampling and ``check_path`` live in ``paths`` and are
re-exported here.

Paths are piecewise linear in joint space between waypoints. Units: radians, metres,
seconds.

Detour planner (``plan_detour``): a graph search (A*, 8-connected, Euclidean cost in radians)
over a grid of (shoulder, elbow) poses at ``resolution`` (default 4°) inside the joint
limits. The other joints (the base yaw, wrist joints) are not searched: they move linearly
from their start to their goal values in proportion to the progress along the path, and a
grid cell is blocked when it is unsafe for any of their values on the way (for the floor
alone and a vertical base yaw only the yaw moves, and turning the base changes no height,
so one map is exact). Cells also keep a margin that covers how far a link can sag between
two neighbouring cells. The found path is shortened by dropping collinear cells and by
shortcuts, then every waypoint segment is sampled finely (no link point moves more than
``max_point_step`` between samples) and the plan is returned only if every sample is clear.
The answer is *safe, not necessarily shortest*: the grid, the margins and the greedy
shortcuts all trade length for a simple, bounded search. No clear path on the grid is an
error (``PlanCode.NO_PATH``), never a move.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import enum
import heapq
import math
from time import perf_counter

import numpy as np

from arm_ik.kinematics.model import ArmModel
from arm_ik.kinematics.safety.geometry import SafetyGeometry, segment_point_distance
from arm_ik.kinematics.safety.paths import (
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

__all__ = ['CONTACT_RATE', 'check_path', 'Contacts', 'DEFAULT_RESOLUTION', 'DetourPlan',
           'joint_map', 'JointMap', 'MAX_POINT_STEP', 'plan_detour', 'PlanCode',
           'sample_contacts', 'sample_path', 'time_at_velocity_limits']

DEFAULT_RESOLUTION = math.radians(4.0)
# Grid resolutions accepted (rad): finer than 0.5° makes maps of 10^5+ cells (slow), coarser
# than 20° cannot thread the arm between floor and obstacle.
MIN_RESOLUTION = math.radians(0.5)
MAX_RESOLUTION = math.radians(20.0)
# Greedy shortcutting tries every later waypoint; above this many it only drops collinear
# cells (keeps the plan time bounded).
MAX_SHORTCUT_WAYPOINTS = 60
# The passenger joints (yaw, wrist) are sampled at most this many times per map.
MAX_PASSENGER_SAMPLES = 91


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
        self.step = np.array([self.axis_a[1] - self.axis_a[0], self.axis_b[1] - self.axis_b[0]])
        reach = geometry.joint_reach[[i, j]]
        # Sag of a link between two neighbouring cells (second-order bound of a point's path
        # off the straight blend of its two ends): keeps every edge between free cells clear.
        self.sag = float(self.step.sum() * (self.step @ reach)) / 8.0
        # First-order bound, used when the sag margin was not enough (obstacle distance is
        # not smooth) — half a diagonal step's largest point motion.
        self.lipschitz = float(self.step @ reach) / 2.0
        self.passengers = [k for k in range(self.model.dof) if k not in joints]
        self.expanded = 0

    # -------------------------------------------------------------- blocked cells
    def _vertical_base_yaw(self) -> bool:
        """Joint 0 turns everything about a vertical axis (and is not searched)."""
        _, axes, _ = self.model.joint_origins_and_axes(np.zeros(self.model.dof))
        return 0 not in self.joints and abs(abs(axes[0][2]) - 1.0) < 1e-9

    def _passenger_values(self) -> tuple[np.ndarray, bool]:
        """Samples (T, n) of the unsearched joints on the way, and whether only a vertical
        base yaw varies among them."""
        delta = self.goal - self.start
        moving = [k for k in self.passengers if abs(delta[k]) > 1e-12]
        yaw_is_free = self._vertical_base_yaw()
        if yaw_is_free and not (self.avoid_obstacle and self.geometry.obstacle_enabled):
            # Turning a vertical base changes no height: the floor map does not depend on it.
            moving = [k for k in moving if k != 0]
        if not moving:
            return self.start[None, :].copy(), True
        spread = max(abs(delta[k]) for k in moving)
        count = min(MAX_PASSENGER_SAMPLES, int(math.ceil(spread / self.step.min())) + 1)
        return (self.start + np.linspace(0.0, 1.0, count)[:, None] * delta,
                yaw_is_free and moving == [0])

    def blocked(self, margin: float) -> np.ndarray:
        """(A, B) cells unsafe (within ``margin``, m) for any passenger value on the way."""
        i, j = self.joints
        grid_a, grid_b = np.meshgrid(self.axis_a, self.axis_b, indexing='ij')
        values, yaw_only = self._passenger_values()

        def poses_at(base: np.ndarray) -> np.ndarray:
            poses = np.repeat(base[None, :], grid_a.size, axis=0)
            poses[:, i], poses[:, j] = grid_a.ravel(), grid_b.ravel()
            return poses

        if not yaw_only:
            blocked = np.zeros(grid_a.size, dtype=bool)
            for base in values:
                blocked |= self.geometry.unsafe(poses_at(base), self.avoid_obstacle, margin)
            return blocked.reshape(grid_a.shape)
        # Only the base yaw moves: compute the links once and turn the obstacle centre the
        # other way about the yaw axis instead (the same relative geometry, T times cheaper).
        g = self.geometry
        start, end, _ = g.link_segments(poses_at(values[0]))
        blocked = np.zeros(grid_a.size, dtype=bool)
        if g.floor_enabled:
            blocked |= (np.minimum(start[..., 2], end[..., 2]) - g.radii - g.floor_z
                        < margin).any(axis=1)
        if self.avoid_obstacle and g.obstacle_enabled:
            origins, axes, _ = self.model.joint_origins_and_axes(np.zeros(self.model.dof))
            pivot, sign = origins[0], float(np.sign(axes[0][2]))
            relative = g.obstacle_center - pivot
            for turn in sign * (values[:, 0] - values[0, 0]):
                c, s = math.cos(-turn), math.sin(-turn)
                centre = pivot + np.array([c * relative[0] - s * relative[1],
                                           s * relative[0] + c * relative[1], relative[2]])
                distance, _ = segment_point_distance(start, end, centre)
                blocked |= (distance < g.contact_distance + margin).any(axis=1)
        return blocked.reshape(grid_a.shape)

    # -------------------------------------------------------------- path pieces
    def segment_clear(self, a: np.ndarray, b: np.ndarray) -> bool:
        samples = sample_path(self.geometry, np.array([a, b]), None, 0.0, self.max_point_step)
        return not self.geometry.unsafe(samples.positions, self.avoid_obstacle).any()

    def connect(self, q: np.ndarray, free: np.ndarray, tries: int = 16) -> tuple[int, int] | None:
        """The nearest free cell reachable from ``q`` along a clear straight segment."""
        i, j = self.joints
        cells = np.argwhere(free)
        if not len(cells):
            return None
        angles = np.column_stack([self.axis_a[cells[:, 0]], self.axis_b[cells[:, 1]]])
        order = np.argsort(np.hypot(angles[:, 0] - q[i], angles[:, 1] - q[j]))[:tries]
        for index in order:
            node = q.copy()
            node[i], node[j] = angles[index]
            if self.segment_clear(q, node):
                return int(cells[index, 0]), int(cells[index, 1])
        return None

    def search(self, free: np.ndarray, source: tuple[int, int],
               target: tuple[int, int]) -> list[tuple[int, int]] | None:
        """A* over the 8-connected free cells; cost and heuristic in radians."""
        rows, cols = free.shape
        da, db = self.step
        moves = [(di, dj, math.hypot(di * da, dj * db))
                 for di in (-1, 0, 1) for dj in (-1, 0, 1) if di or dj]
        free_flat = free.ravel().tolist()
        ti, tj = target

        def heuristic(a: int, b: int) -> float:
            return math.hypot((a - ti) * da, (b - tj) * db)

        source_index = source[0] * cols + source[1]
        target_index = ti * cols + tj
        cost = {source_index: 0.0}
        parent = {source_index: -1}
        frontier = [(heuristic(*source), 0.0, source_index)]
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
                    path.append((index // cols, index % cols))
                    index = parent[index]
                return path[::-1]
            a, b = divmod(index, cols)
            for di, dj, length in moves:
                na, nb = a + di, b + dj
                if not (0 <= na < rows and 0 <= nb < cols):
                    continue
                neighbour = na * cols + nb
                if not free_flat[neighbour] or neighbour in closed:
                    continue
                new_cost = g + length
                if new_cost < cost.get(neighbour, math.inf):
                    cost[neighbour] = new_cost
                    parent[neighbour] = index
                    heapq.heappush(frontier, (new_cost + heuristic(na, nb), new_cost, neighbour))
        return None

    def waypoints(self, cells: list[tuple[int, int]]) -> np.ndarray:
        """Full joint waypoints: start, the cells, goal; passengers follow the progress."""
        i, j = self.joints
        plane = np.array([[self.start[i], self.start[j]]]
                         + [[self.axis_a[a], self.axis_b[b]] for a, b in cells]
                         + [[self.goal[i], self.goal[j]]])
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
            for later in range(len(points) - 1, here, -1):
                if later == here + 1 or self.segment_clear(points[here], points[later]):
                    result.append(later)
                    break
        return points[result]


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
    if not (isinstance(resolution, (int, float)) and MIN_RESOLUTION - 1e-12 <= resolution
            <= MAX_RESOLUTION + 1e-12):
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

    straight = sample_path(geometry, np.array([q_start, q_goal]), None, 0.0, max_point_step)
    straight_checks = geometry.check(straight.positions)
    straight_bad = np.flatnonzero(geometry.unsafe(straight.positions, avoid_obstacle))
    if not straight_bad.size:
        return DetourPlan(PlanCode.OK, f'the straight path is clear ({len(straight.positions)} '
                          'samples)', np.array([q_start, q_goal]),
                          time_at_velocity_limits(model, np.array([q_start, q_goal])),
                          samples_checked=len(straight.positions),
                          min_floor_clearance=float(straight_checks.min_floor_clearance.min()),
                          plan_time=perf_counter() - began)
    joints = search_joints or default_search_joints(model)
    if joints is None:
        return fail(PlanCode.NOT_APPLICABLE, 'the straight path is not clear and this arm has '
                    'no two pitch joints to search a detour over')
    # Name the worst sample, not the first (which only grazes the floor).
    worst = straight_checks.min_floor_clearance
    if avoid_obstacle:
        worst = np.minimum(worst, straight_checks.min_obstacle_distance
                           - geometry.contact_distance)
    blocked_by = straight_checks.pose(int(np.argmin(worst))).message
    planner = _Planner(geometry, q_start, q_goal, resolution, avoid_obstacle, max_point_step,
                       joints)
    what = 'floor and obstacle' if avoid_obstacle and geometry.obstacle_enabled else 'floor'
    last_reason = ''
    for margin in (planner.sag, planner.lipschitz):
        free = ~planner.blocked(margin)
        source = planner.connect(q_start, free)
        target = planner.connect(q_goal, free)
        if source is None or target is None:
            word = 'start' if source is None else 'goal'
            last_reason = (f'no grid pose near the {word} can be reached along a clear '
                           'straight segment')
            continue
        cells = planner.search(free, source, target)
        if cells is None:
            last_reason = (f'the {what} cuts the start off from the goal on the '
                           f'{math.degrees(planner.step.max()):.1f}° grid '
                           f'({int(free.sum())} of {free.size} cells free)')
            continue
        points = planner.waypoints(cells)
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
                time_at_velocity_limits(model, candidate), True, np.array(cells),
                planner.expanded, len(samples.positions),
                float(checks.min_floor_clearance.min()), perf_counter() - began)
        last_reason = 'the grid path failed the fine check between cells'
    return fail(PlanCode.NO_PATH, f'no clear path around the {what}: {last_reason}; '
                'do not move', expanded=planner.expanded)


# ---------------------------------------------------------------------------- joint map
def joint_map(geometry: SafetyGeometry, base_q: object, resolution: float = DEFAULT_RESOLUTION,
              waypoints: np.ndarray | None = None, times: np.ndarray | None = None,
              rate: float = CONTACT_RATE,
              search_joints: tuple[int, int] | None = None) -> JointMap:
    """The (shoulder, elbow) map at ``base_q``'s other joints (the current base yaw), with the
    floor and contact cells marked and, when given, a path and its measured contacts.

    Args:
        geometry: the arm's safety geometry.
        base_q: (n,) rad; supplies the yaw (and wrist joints) of the map.
        resolution: grid step, rad (0.5° to 20°).
        waypoints, times: an optional path (K, n) rad and (K,) s (None: velocity limits).
        rate: path sampling rate, Hz (contacts are measured at these samples).
        search_joints: the two mapped joints (default shoulder, elbow).

    Raises:
        ValueError: bad shapes, non-finite values, a resolution out of range, or an arm
            without two pitch joints.
    """
    model = geometry.model
    base, reason = _joint_vector(base_q, model, 'base pose')
    if base is None:
        raise ValueError(reason)
    if not MIN_RESOLUTION - 1e-12 <= resolution <= MAX_RESOLUTION + 1e-12:
        raise ValueError(f'resolution {resolution} rad is outside {MIN_RESOLUTION:.4f}..'
                         f'{MAX_RESOLUTION:.4f} rad')
    joints = search_joints or default_search_joints(model)
    if joints is None:
        raise ValueError('this arm has no two pitch joints to map')
    i, j = joints
    axis_a = grid_axis(model.lower[i], model.upper[i], resolution)
    axis_b = grid_axis(model.lower[j], model.upper[j], resolution)
    grid_a, grid_b = np.meshgrid(axis_a, axis_b, indexing='ij')
    poses = np.repeat(base[None, :], grid_a.size, axis=0)
    poses[:, i], poses[:, j] = grid_a.ravel(), grid_b.ravel()
    checks = geometry.check(poses)
    floor = checks.floor_violation.any(axis=1).reshape(grid_a.shape)
    contact = checks.obstacle_contact.any(axis=1).reshape(grid_a.shape)
    empty = Contacts(np.zeros(0), np.zeros((0, 3)), np.zeros((0, model.dof)), np.zeros(0), ())
    if waypoints is None:
        return JointMap((model.joint_names[i], model.joint_names[j]), joints, base, axis_a,
                        axis_b, floor, contact, np.zeros((0, 2)), np.zeros((0, 2), dtype=int),
                        np.zeros(0), empty, np.zeros((0, 2)))
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
                    contacts.positions[:, [i, j]] if len(contacts) else np.zeros((0, 2)))

