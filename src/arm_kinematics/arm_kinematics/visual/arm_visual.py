"""Geometry, colours and text of the arm's markers and pictures (plain arrays, no ROS).

The markers node (RViz) and ``tools/render_arms.py`` (matplotlib) both draw from here, so
the reach shell, the dashed floor circles, the tip-path colours and the readout look the same
everywhere. Units: metres, radians; colours are (r, g, b, a) in [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import math

import numpy as np

from arm_kinematics.common.checks import positive_reason
from arm_kinematics.ik.metrics import condition_number, manipulability, reach_fraction
from arm_kinematics.ik.solvers.base import Workspace
from arm_kinematics.model.arm_model import ArmModel

Colour = tuple[float, float, float, float]

# The planned tip path runs from blue (start) to orange (end).
PATH_START: Colour = (0.12, 0.45, 0.95, 1.0)
PATH_END: Colour = (1.0, 0.55, 0.05, 1.0)
# Floor circles every this many metres from the arm's base axis.
REACH_CIRCLE_SPACING = 0.5
# A readout line longer than this is cut (RViz text does not wrap).
READOUT_WIDTH = 72


# ---------------------------------------------------------------------------- checks
def colour_reason(value: object, what: str) -> str:
    """'' when ``value`` is 4 finite numbers in [0, 1] (r, g, b, a), else why not."""
    try:
        values = [float(v) for v in value]          # type: ignore[union-attr]
    except (TypeError, ValueError):
        return f'{what} must be 4 numbers r, g, b, a in [0, 1], got {value!r}'
    if len(values) != 4:
        return f'{what} must have 4 values r, g, b, a, got {len(values)}'
    for channel, number in zip('rgba', values):
        if not math.isfinite(number) or not 0.0 <= number <= 1.0:
            return f'{what}: {channel} = {number} is not in [0, 1]'
    return ''


# ---------------------------------------------------------------------------- colours
def colour_ramp(fractions: object, start: Colour = PATH_START,
                end: Colour = PATH_END) -> np.ndarray:
    """Colours (N, 4) blended linearly from ``start`` (fraction 0) to ``end`` (fraction 1).

    Fractions outside [0, 1] are clipped; a NaN fraction takes the start colour.
    """
    f = np.nan_to_num(np.clip(np.asarray(fractions, dtype=float).reshape(-1), 0.0, 1.0))
    a, b = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
    return a[None, :] + f[:, None] * (b - a)[None, :]


def path_colours(count: int, start: Colour = PATH_START, end: Colour = PATH_END) -> np.ndarray:
    """One colour per vertex of a path of ``count`` points, start to end (N, 4)."""
    if count <= 0:
        return np.zeros((0, 4))
    if count == 1:
        return np.asarray([start], dtype=float)
    return colour_ramp(np.linspace(0.0, 1.0, count), start, end)


# ---------------------------------------------------------------------------- reach shell
@dataclass(frozen=True)
class ReachShell:
    """Where the tip can be: between two spheres around the shoulder.

    Attributes:
        centre: shoulder position in the base frame, m.
        outer: outer radius, m.
        inner: radius of the unreachable hole, m (0: none).
    """

    centre: np.ndarray
    outer: float
    inner: float = 0.0

    @property
    def has_hole(self) -> bool:
        return self.inner > 1e-9


def reach_shell(workspace: Workspace) -> ReachShell:
    """The reach shell of an arm's workspace."""
    return ReachShell(np.asarray(workspace.shoulder, dtype=float).copy(),
                      float(workspace.max_reach), float(workspace.min_reach))


def sphere_wireframe(centre: Sequence[float], radius: float, meridians: int = 12,
                     parallels: int = 5, segments: int = 48) -> list[np.ndarray]:
    """Polylines (each (K, 3)) of a sphere: ``meridians`` half-circles pole to pole and
    ``parallels`` circles of latitude (the equator among them when the count is odd)."""
    c = np.asarray(centre, dtype=float)
    lines = []
    polar = np.linspace(0.0, math.pi, segments // 2 + 1)
    for k in range(meridians):
        azimuth = 2.0 * math.pi * k / meridians
        lines.append(c + radius * np.column_stack([np.sin(polar) * math.cos(azimuth),
                                                   np.sin(polar) * math.sin(azimuth),
                                                   np.cos(polar)]))
    around = np.linspace(0.0, 2.0 * math.pi, segments + 1)
    for k in range(1, parallels + 1):
        latitude = math.pi * k / (parallels + 1) - math.pi / 2.0
        ring = radius * math.cos(latitude)
        lines.append(c + np.column_stack([ring * np.cos(around), ring * np.sin(around),
                                          np.full_like(around, radius * math.sin(latitude))]))
    return lines


# ---------------------------------------------------------------------------- floor
def reach_circle_radii(max_reach: float, spacing: float = REACH_CIRCLE_SPACING) -> np.ndarray:
    """Radii of the floor circles: every ``spacing`` m up to and including ``max_reach``.

    Raises:
        ValueError: ``spacing`` or ``max_reach`` not a finite number > 0.
    """
    for value, what in ((spacing, 'circle spacing'), (max_reach, 'maximum reach')):
        reason = positive_reason(value, what)
        if reason:
            raise ValueError(reason)
    count = int(math.floor(max_reach / spacing + 1e-9))
    return spacing * np.arange(1, count + 1, dtype=float)


def circle_points(centre: Sequence[float], radius: float, segments: int = 96) -> np.ndarray:
    """Closed polyline (segments + 1, 3) of a horizontal circle around ``centre``."""
    c = np.asarray(centre, dtype=float)
    angle = np.linspace(0.0, 2.0 * math.pi, segments + 1)
    return c + np.column_stack([radius * np.cos(angle), radius * np.sin(angle),
                                np.zeros_like(angle)])


def dashed_circle(centre: Sequence[float], radius: float, dash: float = 0.06,
                  duty: float = 0.5) -> np.ndarray:
    """Dashes of a horizontal circle as segment end points (2K, 3) (a LINE_LIST).

    Args:
        centre: circle centre, m (its z is the height of the circle).
        radius: m (> 0).
        dash: length of one dash plus its gap, m (at least 12 dashes are drawn).
        duty: fraction of each period that is drawn, (0, 1].
    """
    count = max(12, int(round(2.0 * math.pi * radius / dash)))
    start = 2.0 * math.pi * np.arange(count) / count
    end = start + 2.0 * math.pi * duty / count
    c = np.asarray(centre, dtype=float)
    points = np.empty((2 * count, 3))
    points[0::2] = c + np.column_stack([radius * np.cos(start), radius * np.sin(start),
                                        np.zeros(count)])
    points[1::2] = c + np.column_stack([radius * np.cos(end), radius * np.sin(end),
                                        np.zeros(count)])
    return points


def floor_half_size(max_reach: float, spacing: float = REACH_CIRCLE_SPACING) -> float:
    """Half side of the square floor drawn under an arm: the reach and one more spacing."""
    return float(spacing * (math.floor(max_reach / spacing + 1e-9) + 1))


# ---------------------------------------------------------------------------- shapes
def wire_cube_edges(centre: Sequence[float], size: float) -> np.ndarray:
    """The 12 edges of an axis-aligned cube of side ``size`` as end points (24, 3)."""
    c = np.asarray(centre, dtype=float)
    h = size / 2.0
    corners = np.array([[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)])
    edges = [(a, b) for a in range(8) for b in range(a + 1, 8)
             if np.count_nonzero(corners[a] != corners[b]) == 1]
    return c + np.array([corners[k] for edge in edges for k in edge])


def polyline_segments(points: np.ndarray) -> np.ndarray:
    """A polyline (K, 3) as LINE_LIST end points (2(K - 1), 3)."""
    points = np.asarray(points, dtype=float)
    if len(points) < 2:
        return np.zeros((0, 3))
    return np.repeat(points, 2, axis=0)[1:-1]


def z_to_direction(direction: Sequence[float]) -> tuple[float, float, float, float]:
    """Quaternion (x, y, z, w) turning +Z onto ``direction`` (a cylinder's axis)."""
    d = np.asarray(direction, dtype=float)
    length = float(np.linalg.norm(d))
    if not math.isfinite(length) or length < 1e-12:
        return 0.0, 0.0, 0.0, 1.0
    d = d / length
    axis = np.cross([0.0, 0.0, 1.0], d)
    sin_angle, cos_angle = float(np.linalg.norm(axis)), float(d[2])
    if sin_angle < 1e-12:
        # Along +Z: no turn; along -Z: half a turn about X.
        return (0.0, 0.0, 0.0, 1.0) if cos_angle > 0.0 else (1.0, 0.0, 0.0, 0.0)
    half = math.atan2(sin_angle, cos_angle) / 2.0
    x, y, z = (axis / sin_angle * math.sin(half)).tolist()
    return x, y, z, math.cos(half)


def skeleton_points(model: ArmModel, q: Sequence[float]) -> np.ndarray:
    """The arm as a polyline (n + 2, 3): base origin, every joint origin, the tip, m."""
    frames = model.frames(np.asarray(q, dtype=float))
    return np.vstack([np.zeros((1, 3)), frames[:, :3, 3]])


# ---------------------------------------------------------------------------- readout
@dataclass(frozen=True)
class PoseMetrics:
    """Dexterity of one pose: tip (m), Yoshikawa w, condition number, reach fraction."""

    tip: np.ndarray
    manipulability: float
    condition_number: float
    reach_fraction: float


def pose_metrics(model: ArmModel, workspace: Workspace, q: Sequence[float]) -> PoseMetrics:
    """Tip, w, condition number (inf when singular) and reach fraction of pose ``q``.

    Raises:
        ValueError: ``q`` is not ``model.dof`` finite numbers.
    """
    q = np.asarray(q, dtype=float)
    if q.shape != (model.dof,) or not np.all(np.isfinite(q)):
        raise ValueError(f'pose must be {model.dof} finite numbers, got {q.tolist()}')
    # The position rows in numpy, not through the kernel: the markers and the lab draw these
    # for every pose and never solve, so they do not load numba for them.
    jacobian = model.position_jacobian_batch(q[None])[0]
    tip = model.frames(q)[-1, :3, 3]
    return PoseMetrics(tip, manipulability(jacobian), condition_number(jacobian),
                       reach_fraction(workspace, tip))


@dataclass(frozen=True)
class Readout:
    """What the text readout shows; None where nothing is known yet.

    Attributes:
        arm: arm name.
        tip: current tip position, m.
        ik_error: position error of the last IK answer, m.
        manipulability: Yoshikawa w of the current pose.
        condition_number: of the current pose (inf when singular).
        reach_fraction: current tip distance from the shoulder / maximum reach.
        solver, branch: of the last IK answer ('' when none).
        failure: the last failure, 'CODE: reason' ('' when none).
    """

    arm: str = ''
    tip: np.ndarray | None = None
    ik_error: float | None = None
    manipulability: float | None = None
    condition_number: float | None = None
    reach_fraction: float | None = None
    solver: str = ''
    branch: str = ''
    failure: str = ''


def _number(value: float | None, digits: int, unit: str = '') -> str:
    if value is None or math.isnan(value):
        return '-'
    if math.isinf(value):
        return 'inf'
    return f'{value:.{digits}f}{unit}'


def _cut(text: str, width: int = READOUT_WIDTH) -> str:
    # One line: a newline inside a reason would break the four-line layout.
    text = text.replace('\r', ' ').replace('\n', ' ')
    return text if len(text) <= width else text[:width - 3] + '...'


def format_readout(readout: Readout) -> str:
    """The readout as four short lines (tip, IK numbers, solver, last failure)."""
    if readout.tip is None:
        tip = 'tip: no joint state yet'
    else:
        x, y, z = (float(v) for v in readout.tip)
        tip = f'tip x {x:+.3f}  y {y:+.3f}  z {z:+.3f} m'
    reach = None if readout.reach_fraction is None else 100.0 * readout.reach_fraction
    error_mm = None if readout.ik_error is None else readout.ik_error * 1e3
    numbers = (f'IK error {_number(error_mm, 3, " mm")}'
               f'   w {_number(readout.manipulability, 3)}'
               f'   cond {_number(readout.condition_number, 1)}'
               f'   reach {_number(reach, 0, " %")}')
    solver = f'solver {readout.solver or "-"}   branch {readout.branch or "-"}'
    failure = f'last failure: {readout.failure or "none"}'
    lines = [f'{readout.arm}  {tip}' if readout.arm else tip, numbers, solver, failure]
    return '\n'.join(_cut(line) for line in lines)


# ---------------------------------------------------------------------------- planned path
# Bounds on what one planned path can make a viewer keep (the executor sends ~300 tips).
MAX_PATH_POINTS = 20_000
MAX_GHOSTS = 64


@dataclass(frozen=True)
class PlanDrawing:
    """What viewers draw of a planned move (arm_interfaces/PlannedPath), finite points only.

    Attributes:
        feasible: False for the part of a Cartesian line that could be followed.
        law: motion law of the plan.
        tips: (K, 3) tool path, m.
        ghosts: arm skeletons along the move, each (n, 3) with n ≥ 2, m.
        target: the goal's target point, m (None: the plan names none).
        failure_point: where a Cartesian line stopped, m (None: it did not).
    """

    feasible: bool = True
    law: str = ''
    tips: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    ghosts: tuple[np.ndarray, ...] = ()
    target: np.ndarray | None = None
    failure_point: np.ndarray | None = None


def finite_rows(points: object, limit: int = MAX_PATH_POINTS) -> np.ndarray:
    """The finite rows among the first ``limit`` of (N, 3) ``points``."""
    values = np.asarray(points, dtype=float).reshape(-1, 3)[:limit]
    return values[np.all(np.isfinite(values), axis=1)]


def finite_point(point: object) -> np.ndarray | None:
    """``point`` as a (3,) array, or None when any coordinate is not finite."""
    values = np.asarray(point, dtype=float).reshape(3)
    return values if np.all(np.isfinite(values)) else None


def plan_drawing(feasible: bool, law: str, tips: object, ghost_points: object,
                 ghost_sizes: Sequence[int], target: object | None = None,
                 failure_point: object | None = None) -> PlanDrawing:
    """A PlanDrawing from flat values: ghost i is the next ``ghost_sizes[i]`` of
    ``ghost_points``. Non-finite points are dropped, a ghost left with fewer than two points
    too; sizes that do not add up to the points given keep no ghost at all."""
    flat = np.asarray(ghost_points, dtype=float).reshape(-1, 3)
    ghosts: list[np.ndarray] = []
    if sum(int(size) for size in ghost_sizes) == len(flat):
        start = 0
        for size in ghost_sizes[:MAX_GHOSTS]:
            kept = finite_rows(flat[start:start + int(size)])
            start += int(size)
            if len(kept) > 1:
                ghosts.append(kept)
    return PlanDrawing(
        bool(feasible), str(law), finite_rows(tips), tuple(ghosts),
        None if target is None else finite_point(target),
        None if failure_point is None else finite_point(failure_point))
