"""The grid search behind the detour planner (``planning.grid.plan_detour``): A* over a
grid of (shoulder, elbow) poses, one layer at the start's other joints and, when those move
and matter, a second at the goal's joined by in-place transfer cells; then the path's
waypoints and their greedy shortening. See planning/grid.py for the method.

Units: radians, metres.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.scene.geometry import SafetyGeometry

# Greedy shortcutting tries every later waypoint; above this many it only drops collinear
# cells (keeps the plan time bounded).
MAX_SHORTCUT_WAYPOINTS = 60
# Shortcut candidates checked per batched call (far ones first: a far success saves the rest).
SHORTCUT_BATCH = 4


def default_search_joints(model: ArmModel) -> tuple[int, int] | None:
    """The first two joints with a horizontal axis at q = 0 (shoulder, elbow), or None."""
    _, axes, _ = model.joint_origins_and_axes(np.zeros(model.dof))
    horizontal = [i for i, axis in enumerate(axes) if abs(axis[2]) < 1e-6]
    return (horizontal[0], horizontal[1]) if len(horizontal) >= 2 else None


def grid_axis(low: float, high: float, resolution: float) -> np.ndarray:
    """Angles from ``low`` to ``high`` inclusive, evenly spaced at most ``resolution`` apart."""
    count = max(2, int(math.ceil((high - low) / resolution - 1e-9)) + 1)
    return np.linspace(low, high, count)


class GridSearch:
    """One detour search; see planning/grid.py's docstring for the method."""

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
        return drop_repeats(points)

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


def drop_repeats(points: np.ndarray) -> np.ndarray:
    keep = np.concatenate([[True], np.abs(np.diff(points, axis=0)).max(axis=1) > 1e-12])
    keep[-1] = True
    return points[keep]
