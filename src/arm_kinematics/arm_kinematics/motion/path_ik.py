"""Path IK: a tool path (waypoints or a straight line) as one continuous joint path, and
batch IK (many targets in one call). No ROS.

The tool path starts at the tool pose of the start joint state and runs straight (position
linear, orientation by slerp) through every waypoint, or, for a segment given an
``arc_through`` point, along the circular arc from the previous pose through that point to
the waypoint (Pilz CIRC's "interim" point: three points fix the circle and the way round,
also for arcs over half a turn; the orientation slerps in proportion to the arc angle). It
is cut into samples no farther apart than ``max_cartesian_step`` (m, along the arc) and
``max_rotation_step`` (rad), then followed:

- a solver that returns every labelled solution (the closed forms, ``Solver.labelled``):
  dynamic programming over all solutions of every sample (and their whole-turn copies on
  joints of more than one turn) picks the branch sequence of least total joint motion
  (sum of |Δq| over joints and samples); no branch change unless the request allows one,
  and then only where both branches meet (every joint within ``max_joint_step``);
- any other solver: seeded continuation, each sample seeded with the previous answer.

Between two accepted samples the path is then checked and, where needed, split in halves
(a new sample solved at the middle) until it holds or the step is ``min_step`` long:

- joint jump: any joint changes by more than ``max_joint_step`` (rad, or m for a
  prismatic joint) between two consecutive samples. An absolute bound on every joint,
  never relative to the other steps or to a mean (MoveIt's ``jump_threshold``);
- deviation: the tool at the joint-space midpoint of the two samples is farther than
  ``max_deviation`` (m) from the tool path between their tool points (the straight
  segment, or the piece of the arc).

A sample is refused (and the path stops there, localised to ``min_step``) when it is
unreachable, needs a joint past its limit, touches the floor or the obstacle
(``SafetyGeometry.check``), or the Jacobian of the goal's constraints has a condition
number above ``max_condition`` (position rows; FULL_POSE adds the rotation rows and
TOOL_DOWN the two that tilt the tool axis, both times the arm's reach so all rows are m).

The joint path is timed with the linear law (every segment at the speed of its slowest
joint, ``velocity_scale`` × the URDF velocity limits) or min-jerk along the whole path
(the same path, ``s(τ)`` of ``laws.min_jerk``: zero speed at both ends, peak 1.875 × the
linear speed, so the duration is 1.875 × the linear one and the limits still hold).

Units: m, rad (m for prismatic joints), s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import enum
import math
import time

import numpy as np

from arm_kinematics.common.transforms import matrix_to_quaternion, quaternion_to_matrix
from arm_kinematics.ik import metrics
from arm_kinematics.ik.closed_form.analytic import BRANCHES as ANALYTIC_BRANCHES
from arm_kinematics.ik.closed_form.analytic import NEAREST
from arm_kinematics.ik.request import IKAnswer, IKDispatcher, IKRequest, PreparedRequest
from arm_kinematics.ik.result import ErrorCode, GoalType, IKResult
from arm_kinematics.ik.solvers.base import SolveOptions, Solver
from arm_kinematics.motion.laws import min_jerk, MIN_JERK_PEAK_SPEED
from arm_kinematics.motion.trajectory import Interpolation, Trajectory
from arm_kinematics.scene.geometry import SafetyGeometry, Verdict

# Defaults of the request fields (documented units).
DEFAULT_MAX_CARTESIAN_STEP = 0.01     # m between samples of the tool path
DEFAULT_MAX_ROTATION_STEP = 0.05      # rad between samples of the tool path
DEFAULT_MAX_JOINT_STEP = 0.1          # rad (m for prismatic) between consecutive samples
DEFAULT_MAX_DEVIATION = 0.001         # m, tool off the straight line between samples
DEFAULT_MIN_STEP = 0.0005             # m, the shortest sub-step of the subdivision
DEFAULT_MAX_CONDITION = 100.0         # condition number above which a pose is singular
DEFAULT_TIMEOUT = 5.0                 # s for the whole path
MAX_PATH_TIMEOUT = 60.0               # s
# Samples of one tool path at most (10 m at 1 mm); a request over it is refused.
MAX_PATH_SAMPLES = 10_000
# Random restarts of a numeric solver at a path sample (it is seeded with the previous one).
PATH_RESTARTS = 0
# Targets of one batch request at most.
MAX_BATCH = 10_000
LINEAR_TIMING, MIN_JERK_TIMING = 'linear', 'min_jerk'
TIMINGS = (LINEAR_TIMING, MIN_JERK_TIMING)
# A first waypoint this close to the start's tool pose (m, rad) is the start itself.
SAME_POSE = 1e-6
# An arc whose three points are this close to a line (sine of the angle at the start) has
# no circle to follow: refused as INVALID_INPUT.
COLLINEAR = 1e-6
# Tolerance of "at a joint limit" when naming the joint that stopped a path, rad (or m).
AT_LIMIT = 1e-3


class PathCode(enum.IntEnum):
    """Why a path stopped (OK: followed to the end). Values match CartesianPath.srv."""

    OK = 0
    JOINT_JUMP = 1          # a joint would move more than max_joint_step between samples
    SINGULARITY = 2         # condition number above max_condition
    JOINT_LIMIT = 3         # the path needs a joint past its limit
    UNREACHABLE = 4         # no IK solution (out of reach, inside the hole, too low...)
    FLOOR_CONTACT = 5       # a link would touch the floor
    OBSTACLE_CONTACT = 6    # a link would touch the obstacle
    TIMEOUT = 7             # the path's time budget ran out
    DEVIATION = 8           # the tool leaves the path by more than max_deviation at min_step
    INVALID_INPUT = 9       # the request itself is unusable (see the message)
    BUSY = 10               # the server has no capacity for the path now (ik_server only)
    INTERNAL_ERROR = 11     # a bug on the server's side (ik_server only)


class BatchTooLargeError(ValueError):
    """A batch request over MAX_BATCH targets."""


@dataclass(frozen=True)
class ToolPose:
    """A tool pose in the base frame: position (m) and quaternion (x, y, z, w)."""

    position: Sequence[float]
    orientation: Sequence[float] = (0.0, 0.0, 0.0, 1.0)


@dataclass
class PathRequest:
    """A path IK request; zero in a numeric field means its documented default.

    Attributes:
        start: start joint positions in chain order (rad, m for prismatic joints).
        waypoints: tool poses after the start's own; a line between poses a and b is
            ``[a, b]`` (a first waypoint at the start's tool pose is dropped).
        arc_through: empty (every segment straight) or one entry per waypoint: None, or
            a point (m, same frame) the segment to that waypoint passes through on a
            circular arc from the previous pose; None or NaN: a straight segment.
        goal: GoalType: POSITION (orientations ignored), TOOL_DOWN (tool Z along −Z of the
            base; orientations ignored) or FULL_POSE.
        frame_id: '' or the base frame.
        solver: '' for the arm's default, else a solver name.
        max_cartesian_step: m between samples of the tool path (default 0.01).
        max_rotation_step: rad between samples (FULL_POSE; default 0.05).
        max_joint_step: rad (m for prismatic) any joint may change between two
            consecutive samples of the result (default 0.1).
        max_deviation: m the tool may leave the straight line between samples
            (default 0.001).
        min_step: m, the shortest sub-step the subdivision tries (default 0.0005); a
            rotation counts max_cartesian_step / max_rotation_step m per rad.
        max_condition: largest condition number allowed (default 100).
        allow_branch_change: closed forms: allow a change of branch label where the two
            branches meet.
        partial: return the joint path up to the stop (else no path unless complete).
        timeout: s for the whole path (default 5, at most 60).
        timing: 'linear' or 'min_jerk' (default 'min_jerk').
        velocity_scale: fraction of the URDF velocity limits, (0, 1] (default 1).
        joint_limits: LIMITS_DEFAULT, LIMITS_ON or LIMITS_OFF as in IKRequest.
    """

    start: Sequence[float]
    waypoints: Sequence[ToolPose]
    goal: int = GoalType.POSITION
    arc_through: Sequence[Sequence[float] | None] = ()
    frame_id: str = ''
    solver: str = ''
    max_cartesian_step: float = 0.0
    max_rotation_step: float = 0.0
    max_joint_step: float = 0.0
    max_deviation: float = 0.0
    min_step: float = 0.0
    max_condition: float = 0.0
    allow_branch_change: bool = False
    partial: bool = True
    timeout: float = 0.0
    timing: str = ''
    velocity_scale: float = 0.0
    joint_limits: int = 0


@dataclass
class PathResult:
    """What a path IK request gives back.

    Attributes:
        code: PathCode (OK: the whole path is followed).
        message: where and why it stopped, in words.
        trajectory: the timed joint path (start included); None when nothing may be
            returned (not partial and not complete, or invalid input).
        fraction: share of the tool path's length followed, 0..1 (its length in m; a
            path that only turns the tool is measured in rad).
        stop_sample: index of the first path sample not reached (len(samples) when
            complete); samples are the start's tool pose followed by the cut waypoints.
        stop_waypoint: index into the request's waypoints of the first one not reached
            (len(waypoints) when complete).
        stop_position: tool position at the last joint sample, m.
        stop_orientation: its quaternion (x, y, z, w).
        failed_position: the tool position that could not be followed, m (NaN if none).
        joint: the joint concerned (JOINT_JUMP, JOINT_LIMIT), else ''.
        joint_step: JOINT_JUMP: how far that joint would move in one step, rad (or m).
        condition_number: at the stop pose (SINGULARITY: of the refused pose).
        ik_code: the solver's ErrorCode behind UNREACHABLE / JOINT_LIMIT / INVALID_INPUT.
        solver: the solver used.
        branches: branch label of every joint sample ('' for numeric solvers).
        progress: share of the path length at every joint sample, 0..1 (for a Cartesian
            timing law: the tool is at that share of the path at that sample).
        largest_step: the largest single-joint change between two returned samples.
        samples: path samples the tool path was cut into.
        solve_time: s.
    """

    code: PathCode
    message: str
    trajectory: Trajectory | None = None
    fraction: float = 0.0
    stop_sample: int = 0
    stop_waypoint: int = 0
    stop_position: np.ndarray = field(default_factory=lambda: np.full(3, math.nan))
    stop_orientation: np.ndarray = field(default_factory=lambda: np.array([0., 0., 0., 1.]))
    failed_position: np.ndarray = field(default_factory=lambda: np.full(3, math.nan))
    joint: str = ''
    joint_step: float = 0.0
    condition_number: float = math.nan
    ik_code: ErrorCode = ErrorCode.OK
    solver: str = ''
    branches: list[str] = field(default_factory=list)
    progress: np.ndarray = field(default_factory=lambda: np.zeros(0))
    largest_step: float = 0.0
    samples: int = 0
    solve_time: float = 0.0

    @property
    def success(self) -> bool:
        return self.code == PathCode.OK


@dataclass(frozen=True)
class _Settings:
    max_cartesian_step: float
    max_rotation_step: float
    max_joint_step: float
    max_deviation: float
    min_step: float
    max_condition: float
    timeout: float
    timing: str
    velocity_scale: float


@dataclass
class _Stop:
    """Why one sample or one step is refused."""

    code: PathCode
    message: str
    ik_code: ErrorCode = ErrorCode.OK
    joint: str = ''
    joint_step: float = 0.0
    condition: float = math.nan


@dataclass
class _Sample:
    u: float                 # path parameter: sample index, fractional between samples
    q: np.ndarray
    label: str = ''


def _settings(request: PathRequest) -> tuple[_Settings | None, str]:
    def pick(name: str, default: float, upper: float = math.inf) -> float | str:
        value = getattr(request, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not math.isfinite(value) or value < 0.0:
            return f'{name} must be a finite number >= 0 (0: default), got {value!r}'
        if value > upper:
            return f'{name} {value:g} exceeds its maximum {upper:g}'
        return float(value) if value > 0.0 else default

    values = {
        'max_cartesian_step': pick('max_cartesian_step', DEFAULT_MAX_CARTESIAN_STEP),
        'max_rotation_step': pick('max_rotation_step', DEFAULT_MAX_ROTATION_STEP, math.pi),
        'max_joint_step': pick('max_joint_step', DEFAULT_MAX_JOINT_STEP),
        'max_deviation': pick('max_deviation', DEFAULT_MAX_DEVIATION),
        'min_step': pick('min_step', DEFAULT_MIN_STEP),
        'max_condition': pick('max_condition', DEFAULT_MAX_CONDITION),
        'timeout': pick('timeout', DEFAULT_TIMEOUT, MAX_PATH_TIMEOUT),
        'velocity_scale': pick('velocity_scale', 1.0, 1.0),
    }
    for value in values.values():
        if isinstance(value, str):
            return None, value
    if values['max_condition'] < 1.0:
        return None, f'max_condition must be >= 1, got {values["max_condition"]:g}'
    timing = request.timing or MIN_JERK_TIMING
    if timing not in TIMINGS:
        return None, f'timing "{request.timing}" is not one of {", ".join(TIMINGS)}'
    return _Settings(timing=timing, **values), ''


@dataclass(frozen=True)
class _Circle:
    """The circle through three points: centre, radius, plane basis (e1 toward the first
    point, e2 = normal × e1, the way round to the third point), angle of the third point."""

    centre: np.ndarray
    radius: float
    e1: np.ndarray
    e2: np.ndarray
    normal: np.ndarray
    angle: float            # rad, (0, 2π): from the first point to the third

    @staticmethod
    def through(a: np.ndarray, m: np.ndarray, b: np.ndarray) -> _Circle | str:
        """The circle from ``a`` through ``m`` to ``b``, or why there is none."""
        u, v = m - a, b - a
        w = np.cross(u, v)
        lengths = float(np.linalg.norm(u) * np.linalg.norm(v))
        if min(float(np.linalg.norm(u)), float(np.linalg.norm(v)),
               float(np.linalg.norm(b - m))) <= SAME_POSE:
            return 'two of its three points (previous pose, arc_through, waypoint) coincide'
        if float(np.linalg.norm(w)) <= COLLINEAR * lengths:
            return 'its three points (previous pose, arc_through, waypoint) lie on a line'
        offset = np.cross(float(u @ u) * v - float(v @ v) * u, w) / (2.0 * float(w @ w))
        centre = a + offset
        radius = float(np.linalg.norm(offset))
        e1 = -offset / radius
        normal = w / float(np.linalg.norm(w))
        e2 = np.cross(normal, e1)
        circle = _Circle(centre, radius, e1, e2, normal, 0.0)
        return _Circle(centre, radius, e1, e2, normal, circle.angle_of(b))

    def angle_of(self, point: np.ndarray) -> float:
        d = point - self.centre
        return float(np.mod(math.atan2(float(d @ self.e2), float(d @ self.e1)), 2.0 * math.pi))

    def point(self, angle: float) -> np.ndarray:
        return self.centre + self.radius * (math.cos(angle) * self.e1 +
                                            math.sin(angle) * self.e2)

    def distance(self, point: np.ndarray, low: float, high: float) -> float:
        """Distance (m) of ``point`` from the piece of the arc between two angles."""
        d = point - self.centre
        height = float(d @ self.normal)
        flat = d - height * self.normal
        angle = math.atan2(float(flat @ self.e2), float(flat @ self.e1))
        if np.mod(angle - low, 2.0 * math.pi) <= high - low:
            return math.hypot(float(np.linalg.norm(flat)) - self.radius, height)
        return min(float(np.linalg.norm(point - self.point(low))),
                   float(np.linalg.norm(point - self.point(high))))


@dataclass(frozen=True)
class _Piece:
    """One interval of the tool path that lies on an arc: its circle and end angles."""

    circle: _Circle
    low: float
    high: float


class _ToolPath:
    """The densified tool path: samples on straight segments or arcs, interpolated by u."""

    def __init__(self, positions: np.ndarray, rotations: np.ndarray | None,
                 waypoint_of_sample: np.ndarray, rotation_weight: float,
                 pieces: Sequence[_Piece | None] = ()) -> None:
        self.positions = positions                  # (M, 3)
        self.rotations = rotations                  # (M, 3, 3) or None
        self.waypoint_of_sample = waypoint_of_sample  # (M,) request waypoint each heads to
        # pieces[k]: the arc interval k (samples k to k + 1) lies on; None: straight.
        self.pieces = list(pieces) or [None] * max(len(positions) - 1, 0)
        steps = np.linalg.norm(np.diff(positions, axis=0), axis=1)
        for k, piece in enumerate(self.pieces):
            if piece is not None:
                steps[k] = piece.circle.radius * (piece.high - piece.low)
        angles = np.zeros(len(steps))
        if rotations is not None:
            relative = np.einsum('kji,kjl->kil', rotations[:-1], rotations[1:])
            cosine = np.clip((np.trace(relative, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0)
            angles = np.arccos(cosine)
        self.angles = angles
        # Size of each segment for the min_step rule: a rotation in metres at the step ratio.
        self.sizes = np.maximum(steps, angles * rotation_weight)
        measure = steps if steps.sum() > 1e-9 else angles
        self.cumulative = np.concatenate([[0.0], np.cumsum(measure)])

    def __len__(self) -> int:
        return len(self.positions)

    def pose(self, u: float) -> tuple[np.ndarray, np.ndarray | None]:
        k = min(int(math.floor(u)), len(self) - 2) if len(self) > 1 else 0
        t = u - k
        if t <= 0.0 or len(self) == 1:
            return self.positions[k], None if self.rotations is None else self.rotations[k]
        piece = self.pieces[k]
        if piece is None:
            position = self.positions[k] + t * (self.positions[k + 1] - self.positions[k])
        else:
            position = piece.circle.point(piece.low + t * (piece.high - piece.low))
        if self.rotations is None:
            return position, None
        return position, _slerp(self.rotations[k], self.rotations[k + 1], t)

    def deviation(self, point: np.ndarray, u_a: float, u_b: float) -> float:
        """Distance (m) of ``point`` from the tool path between two parameters of one
        interval (``u_a`` < ``u_b``): from the straight segment or the piece of the arc."""
        k = min(int(math.floor(u_a)), len(self) - 2) if len(self) > 1 else 0
        piece = self.pieces[k] if self.pieces else None
        if piece is None:
            return _segment_distance(point, self.pose(u_a)[0], self.pose(u_b)[0])
        span = piece.high - piece.low
        return piece.circle.distance(point, piece.low + (u_a - k) * span,
                                     piece.low + (u_b - k) * span)

    def size(self, u_a: float, u_b: float) -> float:
        """Tool travel (m, rotation weighted) between two parameters of one segment."""
        k = min(int(math.floor(u_a)), len(self) - 2)
        return abs(u_b - u_a) * float(self.sizes[k])

    def length_at(self, u: float) -> float:
        if len(self) == 1:
            return 0.0
        k = min(int(math.floor(u)), len(self) - 2)
        return float(self.cumulative[k] + (u - k) * (self.cumulative[k + 1] -
                                                       self.cumulative[k]))

    @property
    def length(self) -> float:
        return float(self.cumulative[-1])


def slerp_quaternion(qa: np.ndarray, qb: np.ndarray, t: float) -> np.ndarray:
    """The unit quaternion a fraction ``t`` of the short way from ``qa`` to ``qb``."""
    dot = float(qa @ qb)
    if dot < 0.0:
        qb, dot = -qb, -dot
    angle = math.acos(min(dot, 1.0))
    if angle < 1e-9:
        q = qa + t * (qb - qa)
    else:
        q = (math.sin((1.0 - t) * angle) * qa + math.sin(t * angle) * qb) / math.sin(angle)
    return q / np.linalg.norm(q)


def _slerp(a: np.ndarray, b: np.ndarray, t: float) -> np.ndarray:
    q = slerp_quaternion(np.array(matrix_to_quaternion(a)), np.array(matrix_to_quaternion(b)), t)
    return quaternion_to_matrix(*q)


def _segment_distance(point: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Distance (m) of ``point`` from the segment a–b."""
    ab = b - a
    denominator = float(ab @ ab)
    t = 0.0 if denominator <= 0.0 else min(max(float((point - a) @ ab) / denominator, 0.0),
                                           1.0)
    return float(np.linalg.norm(point - (a + t * ab)))


class PathIK:
    """Path IK and batch IK of one arm, on its dispatcher (solvers, floor rules).

    Args:
        dispatcher: the arm's IKDispatcher (``Arm.dispatcher()``).
        safety: the arm's SafetyGeometry (floor and obstacle; ``Arm.safety``); None: no
            contact checks.
        reach: characteristic length (m) scaling rotation rows of the Jacobian for the
            condition number; the workspace's maximum reach when 0.
    """

    def __init__(self, dispatcher: IKDispatcher, safety: SafetyGeometry | None = None,
                 reach: float = 0.0) -> None:
        self.dispatcher = dispatcher
        self.model = dispatcher.model
        checks = safety is not None and (safety.floor_enabled or safety.obstacle_enabled)
        self.safety = safety if checks else None
        self.reach = reach or float(dispatcher.workspace.max_reach)

    # ------------------------------------------------------------------ metrics
    def condition(self, q: np.ndarray, goal: GoalType) -> float:
        """Condition number of the goal's constraint Jacobian at ``q`` (dimensionless)."""
        jacobian = self.model.jacobian(q)
        if goal == GoalType.POSITION:
            return metrics.condition_number(jacobian[:3])
        angular = jacobian[3:] * self.reach
        if goal == GoalType.TOOL_DOWN:
            rotation = self.model.fk(q)[:3, :3]
            # Turning about the tool axis is free for TOOL_DOWN: only the two tilts count.
            angular = rotation[:, :2].T @ angular
        rows = np.vstack([jacobian[:3], angular])
        singular = np.linalg.svd(rows, compute_uv=False)
        if singular[-1] <= singular[0] * 1e-15 or rows.shape[0] > rows.shape[1]:
            return math.inf
        return float(singular[0] / singular[-1])

    # ------------------------------------------------------------------ path IK
    def follow(self, request: PathRequest, defaults: SolveOptions) -> PathResult:
        """Follow a tool path from ``request.start``; never raises for bad input.

        Args:
            request: the path request (see PathRequest).
            defaults: the server's solver options (tolerance, iterations...).

        Returns:
            PathResult: OK with the whole path, or where and why it stopped.
        """
        started = time.perf_counter()
        result = self._follow(request, defaults, started)
        result.solve_time = time.perf_counter() - started
        return result

    def _follow(self, request: PathRequest, defaults: SolveOptions,
                started: float) -> PathResult:
        model = self.model
        settings, reason = _settings(request)
        if settings is None:
            return PathResult(PathCode.INVALID_INPUT, reason)
        start = np.asarray(request.start, dtype=float).reshape(-1) \
            if _is_numeric(request.start) else None
        if start is None or start.shape != (model.dof,) or not np.isfinite(start).all():
            return PathResult(PathCode.INVALID_INPUT,
                              f'start must be {model.dof} finite joint positions in chain '
                              f'order ({", ".join(model.joint_names)})')
        if not request.waypoints:
            return PathResult(PathCode.INVALID_INPUT, 'the path has no waypoint')
        prepared: list[PreparedRequest] = []
        for index, pose in enumerate(request.waypoints):
            answer = self.dispatcher.prepare(
                IKRequest(position=pose.position, orientation=pose.orientation,
                          goal=request.goal, frame_id=request.frame_id, solver=request.solver,
                          joint_limits=request.joint_limits), defaults, start)
            if isinstance(answer, IKAnswer):
                return PathResult(PathCode.INVALID_INPUT,
                                  f'waypoint {index}: {answer.result.code.name}: '
                                  f'{answer.result.reason}', stop_waypoint=index,
                                  ik_code=answer.result.code, solver=answer.solver)
            prepared.append(answer)
        throughs, reason = _arc_points(request.arc_through, len(prepared))
        if throughs is None:
            return PathResult(PathCode.INVALID_INPUT, reason)
        goal = prepared[0].goal
        solver = self.dispatcher.solvers[prepared[0].solver]
        options = prepared[0].options.with_changes(branch='', return_all=solver.labelled)
        if not solver.labelled:
            # A restart from a random seed lands on some far solution, which the jump check
            # refuses anyway: without restarts a sample that does not converge from the
            # previous one fails at once, instead of after every restart.
            options = options.with_changes(restarts=PATH_RESTARTS)
        path, reason = self._tool_path(start, prepared, goal, settings, throughs)
        if path is None:
            return PathResult(PathCode.INVALID_INPUT, reason, solver=solver.name)
        run = _Run(self, solver, goal, options, settings, path, start,
                   started + settings.timeout, request.allow_branch_change)
        samples, stop = run.solve()
        return self._result(run, samples, stop, request, len(request.waypoints))

    def _tool_path(self, start: np.ndarray, prepared: Sequence[PreparedRequest],
                   goal: GoalType, settings: _Settings,
                   throughs: Sequence[np.ndarray | None]) -> tuple[_ToolPath | None, str]:
        frame = self.model.fk(start)
        full = goal == GoalType.FULL_POSE
        vertices = [frame[:3, 3]] + [p.position for p in prepared]
        turns = [frame[:3, :3]] + [p.orientation for p in prepared] if full else None
        # owners[k]: the request waypoint vertex k is (the start's pose heads to waypoint 0);
        # arcs[k]: the arc point of the segment that ends at vertex k.
        owners = [0] + list(range(len(prepared)))
        arcs = [None] + list(throughs)
        if np.linalg.norm(vertices[1] - vertices[0]) <= SAME_POSE and \
                (not full or _angle(turns[0], turns[1]) <= SAME_POSE):
            if arcs[1] is not None:
                return None, "arc_through[0]: the arc ends at the start's own tool pose"
            # The line starts at the start's own tool pose: that waypoint is the start.
            del vertices[1], owners[0], arcs[1]
            if full:
                del turns[1]
        positions = [vertices[0]]
        rotations = [turns[0]] if full else None
        heading = [owners[0]]
        pieces: list[_Piece | None] = []
        for k in range(1, len(vertices)):
            a, b = vertices[k - 1], vertices[k]
            circle = None
            if arcs[k] is not None:
                circle = _Circle.through(a, arcs[k], b)
                if isinstance(circle, str):
                    return None, f'arc_through[{owners[k]}]: no arc: {circle}'
            length = float(np.linalg.norm(b - a)) if circle is None else \
                circle.radius * circle.angle
            angle = _angle(turns[k - 1], turns[k]) if full else 0.0
            count = max(1, math.ceil(length / settings.max_cartesian_step - 1e-9),
                        math.ceil(angle / settings.max_rotation_step - 1e-9))
            if len(positions) + count > MAX_PATH_SAMPLES:
                return None, (f'the path needs more than {MAX_PATH_SAMPLES} samples at '
                              f'{settings.max_cartesian_step:g} m / '
                              f'{settings.max_rotation_step:g} rad; give larger steps')
            for i in range(1, count + 1):
                t = i / count
                if circle is None:
                    positions.append(a + t * (b - a))
                    pieces.append(None)
                else:
                    # The last sample is the waypoint itself, not the circle's rounding of it.
                    positions.append(b if i == count else circle.point(t * circle.angle))
                    pieces.append(_Piece(circle, (i - 1) / count * circle.angle,
                                         t * circle.angle))
                if full:
                    rotations.append(_slerp(turns[k - 1], turns[k], t))
                heading.append(owners[k])
        weight = settings.max_cartesian_step / settings.max_rotation_step
        return _ToolPath(np.array(positions), None if not full else np.array(rotations),
                         np.array(heading), weight, pieces), ''

    def _result(self, run: _Run, samples: list[_Sample], stop: _Stop | None,
                request: PathRequest, waypoints: int) -> PathResult:
        model, path = self.model, run.path
        q = np.array([s.q for s in samples])
        last = samples[-1]
        frame = model.fk(last.q)
        steps = np.abs(np.diff(q, axis=0)) if len(q) > 1 else np.zeros((0, model.dof))
        fraction = 1.0 if path.length <= 0.0 else path.length_at(last.u) / path.length
        result = PathResult(
            PathCode.OK if stop is None else stop.code, '', None, min(max(fraction, 0.0), 1.0),
            len(path), waypoints, frame[:3, 3].copy(),
            np.array(matrix_to_quaternion(frame[:3, :3])), solver=run.solver.name,
            branches=[s.label for s in samples],
            progress=np.array([path.length_at(s.u) / path.length if path.length > 0.0 else 1.0
                               for s in samples]),
            largest_step=float(steps.max()) if steps.size else 0.0, samples=len(path),
            condition_number=self.condition(last.q, run.goal))
        complete = stop is None
        if complete:
            result.fraction = 1.0
            result.message = (f'followed the whole path: {len(samples)} joint samples for '
                              f'{len(path)} path samples, largest joint step '
                              f'{result.largest_step:.4f} (limit {run.settings.max_joint_step:g})')
        else:
            failed = run.failed_u if run.failed_u is not None else last.u
            result.stop_sample = 0 if failed <= 0.0 else \
                min(int(math.floor(last.u)) + 1, len(path) - 1)
            result.stop_waypoint = int(path.waypoint_of_sample[result.stop_sample])
            result.failed_position = path.pose(failed)[0].copy()
            result.joint, result.joint_step, result.ik_code = stop.joint, stop.joint_step, \
                stop.ik_code
            if math.isfinite(stop.condition):
                result.condition_number = stop.condition
            point = result.failed_position
            result.message = (f'{stop.code.name} at {100.0 * result.fraction:.1f} % of the path '
                              f'(heading to waypoint {result.stop_waypoint}, tool '
                              f'({point[0]:.3f}, {point[1]:.3f}, {point[2]:.3f}) m): '
                              f'{stop.message}')
        if complete or request.partial:
            result.trajectory = _timed(model, q, run.settings, [s.u for s in samples])
        return result

    # ------------------------------------------------------------------ batch IK
    def batch(self, requests: Sequence[IKRequest], defaults: SolveOptions,
              fallback_seed: np.ndarray) -> list[IKAnswer]:
        """Answer many IK requests: one IKAnswer per request, equal to one-by-one answers.

        Each request is validated by ``IKDispatcher.prepare`` (as a single request).
        Position requests to the analytic solver on an arm without floor rules are solved
        together by ``AnalyticSolver.solve_batch`` (a call per branch, the nearest chosen
        as the scalar solver does); any row it cannot answer alone goes the single way.

        Raises:
            BatchTooLargeError: more than MAX_BATCH requests.
        """
        if len(requests) > MAX_BATCH:
            raise BatchTooLargeError(f'{len(requests)} targets in one batch; at most {MAX_BATCH}')
        answers: list[IKAnswer | None] = [None] * len(requests)
        groups: dict[tuple, list[tuple[int, PreparedRequest]]] = {}
        dispatcher = self.dispatcher
        for index, request in enumerate(requests):
            prepared = dispatcher.prepare(request, defaults, fallback_seed)
            if isinstance(prepared, IKAnswer):
                answers[index] = prepared
            elif self._vectorisable(prepared):
                key = (prepared.options.branch, tuple(prepared.seed.tolist()))
                groups.setdefault(key, []).append((index, prepared))
            else:
                answers[index] = dispatcher.run(prepared)
        for (branch, seed), members in groups.items():
            for (index, prepared), answer in zip(members, self._analytic_batch(
                    [p for _, p in members], branch, seed), strict=True):
                answers[index] = answer if answer is not None else dispatcher.run(prepared)
        return answers       # type: ignore[return-value]

    def _vectorisable(self, prepared: PreparedRequest) -> bool:
        return (prepared.solver == 'analytic' and self.dispatcher.safety is None and
                prepared.goal == GoalType.POSITION and not prepared.options.return_all)

    def _analytic_batch(self, members: Sequence[PreparedRequest], branch: str,
                        seed: tuple[float, ...]) -> list[IKAnswer | None]:
        """Vectorised analytic answers; None for rows left to the scalar solver."""
        solver = self.dispatcher.solvers['analytic']
        started = time.perf_counter()
        targets = np.array([p.position for p in members])
        labels = ANALYTIC_BRANCHES if branch in NEAREST else (branch,)
        solved = [solver.solve_batch(targets, label, seed) for label in labels]
        stacked = np.stack([q for q, _ in solved])                     # (B, N, 3)
        ok = np.stack([codes == ErrorCode.OK for _, codes in solved])  # (B, N)
        steps = np.abs(stacked - np.asarray(seed)).max(axis=2)
        steps[~ok] = np.inf
        pick = np.argmin(steps, axis=0)                 # first of the nearest, as solve()
        rows = np.arange(len(members))
        chosen = stacked[pick, rows]
        best = steps[pick, rows]
        tips = np.array([solver.geometry.forward(*q) if math.isfinite(s) else (math.nan,) * 3
                         for q, s in zip(chosen, best, strict=True)])
        errors = np.linalg.norm(tips - targets, axis=1)
        share = (time.perf_counter() - started) / max(len(members), 1)
        answers: list[IKAnswer | None] = []
        for row, prepared in enumerate(members):
            if not math.isfinite(best[row]):
                answers.append(None)    # a failure: its reason comes from the scalar solve
                continue
            result = IKResult(ErrorCode.OK, 'solved in closed form', chosen[row].copy(),
                              labels[int(pick[row])], tips[row].copy(), float(errors[row]), 0.0,
                              0, float(best[row]), [], share)
            answers.append(self.dispatcher.measure(IKAnswer(result, 'analytic',
                                                            target=prepared.position)))
        return answers


def _arc_points(points: Sequence[Sequence[float] | None], waypoints: int
                ) -> tuple[list[np.ndarray | None] | None, str]:
    """The arc point of every waypoint's segment (None: straight), or (None, why not)."""
    if points is None or len(points) == 0:
        return [None] * waypoints, ''
    if len(points) != waypoints:
        return None, (f'arc_through has {len(points)} points for {waypoints} waypoints (one '
                      'per waypoint, NaN for a straight segment, or none)')
    out: list[np.ndarray | None] = []
    for index, point in enumerate(points):
        if point is None:
            out.append(None)
            continue
        value = np.asarray(point, dtype=float).reshape(-1) if _is_numeric(point) else None
        if value is None or value.shape != (3,):
            return None, f'arc_through[{index}] must be 3 numbers (x, y, z), m'
        if np.isnan(value).all():
            out.append(None)
        elif not np.isfinite(value).all():
            return None, (f'arc_through[{index}] = {value.tolist()}: give a finite point, or '
                          'NaN in all three for a straight segment')
        else:
            out.append(value)
    return out, ''


def _is_numeric(value: object) -> bool:
    try:
        np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return False
    return True


def _angle(a: np.ndarray, b: np.ndarray) -> float:
    cosine = (float(np.trace(a.T @ b)) - 1.0) / 2.0
    return math.acos(min(max(cosine, -1.0), 1.0))


# Whole-turn offsets of a joint value tried for the copies of a solution, rad.
_TURNS = np.array([-4.0, -2.0, 0.0, 2.0, 4.0]) * math.pi


class _Run:
    """One path being followed: the sample solver, the checks and the subdivision."""

    def __init__(self, owner: PathIK, solver: Solver, goal: GoalType, options: SolveOptions,
                 settings: _Settings, path: _ToolPath, start: np.ndarray, deadline: float,
                 allow_branch_change: bool) -> None:
        self.owner, self.model = owner, owner.model
        self.solver, self.goal, self.options = solver, goal, options
        self.settings, self.path, self.start = settings, path, start
        self.deadline, self.allow_change = deadline, allow_branch_change
        self.labelled = solver.labelled
        self.failed_u: float | None = None
        self.refused: dict[str, _Stop] = {}
        model = self.model
        # Joints whose range holds more than one turn have copies q ± 2π inside it.
        self.turns = [j for j in range(model.dof) if model.joints[j].wraps and
                      model.upper[j] - model.lower[j] > 2.0 * math.pi + 1e-9]

    # ------------------------------------------------------------------ one sample
    def _solve(self, u: float, seed: np.ndarray) -> IKResult:
        position, rotation = self.path.pose(u)
        remaining = self.deadline - time.perf_counter()
        options = self.options.with_changes(timeout=max(min(self.options.timeout, remaining),
                                                        1e-3))
        return self.solver.solve(position, rotation, self.goal, seed, options)

    def _timed_out(self) -> _Stop | None:
        if time.perf_counter() >= self.deadline:
            return _Stop(PathCode.TIMEOUT, f'the path took longer than its timeout of '
                         f'{self.settings.timeout:g} s')
        return None

    def _failure(self, result: IKResult, previous: np.ndarray | None) -> _Stop:
        if result.code == ErrorCode.TIMED_OUT:
            return _Stop(PathCode.TIMEOUT, f'{result.code.name}: {result.reason}', result.code)
        joint = '' if previous is None else self._joint_at_limit(previous)
        if result.code == ErrorCode.JOINT_LIMITS or joint:
            name = joint or self._named_joint(result.reason)
            return _Stop(PathCode.JOINT_LIMIT, f'{name or "a joint"} at its limit '
                         f'({result.code.name}: {result.reason})', result.code, name)
        return _Stop(PathCode.UNREACHABLE, f'{result.code.name}: {result.reason}', result.code)

    def _named_joint(self, reason: str) -> str:
        return next((name for name in self.model.joint_names if name in reason), '')

    def _nearest_limit(self, q: np.ndarray) -> str:
        model = self.model
        margin = np.minimum(q - model.lower, model.upper - q)
        return model.joint_names[int(np.argmin(margin))]

    def _joint_at_limit(self, q: np.ndarray) -> str:
        model = self.model
        at = np.flatnonzero((q <= model.lower + AT_LIMIT) | (q >= model.upper - AT_LIMIT))
        return model.joint_names[int(at[0])] if at.size else ''

    def _pose_checks(self, candidates: np.ndarray) -> tuple[np.ndarray, list[_Stop | None]]:
        """(ok mask, stop per candidate) for the limits, contacts and singularity."""
        model, settings = self.model, self.settings
        stops: list[_Stop | None] = [None] * len(candidates)
        inside = np.all((candidates >= model.lower - 1e-9) & (candidates <= model.upper + 1e-9),
                        axis=1)
        verdicts = None
        if self.owner.safety is not None:
            checks = self.owner.safety.check(candidates)
            verdicts = checks.verdict
        for i, q in enumerate(candidates):
            if not inside[i]:
                j = int(np.argmax(np.maximum(model.lower - q, q - model.upper)))
                stops[i] = _Stop(PathCode.JOINT_LIMIT, f'{model.joint_names[j]} = {q[j]:.4f} '
                                 f'outside [{model.lower[j]:.4f}, {model.upper[j]:.4f}]',
                                 ErrorCode.JOINT_LIMITS, model.joint_names[j])
            elif verdicts is not None and verdicts[i] != Verdict.SAFE:
                pose = checks.pose(i)
                code = PathCode.FLOOR_CONTACT if verdicts[i] == Verdict.FLOOR_VIOLATION \
                    else PathCode.OBSTACLE_CONTACT
                stops[i] = _Stop(code, pose.message, ErrorCode.FLOOR_COLLISION)
            else:
                condition = self.owner.condition(q, self.goal)
                if condition > settings.max_condition:
                    stops[i] = _Stop(PathCode.SINGULARITY, f'condition number {condition:.3g} '
                                     f'> {settings.max_condition:g}', condition=condition)
        return np.array([s is None for s in stops], dtype=bool), stops

    def _copies(self, q: np.ndarray, reference: np.ndarray) -> list[np.ndarray]:
        """``q`` and its whole-turn copies inside the limits that a continuous path from a
        ``reference`` row (P, n) can reach: on every joint of more than one turn, the copies
        within half a turn plus one step of some reference value (a farther copy needs a
        jump to get to, so it can never be a state of a continuous path)."""
        out = [np.asarray(q, dtype=float)]
        model = self.model
        reach = math.pi + self.settings.max_joint_step
        for j in self.turns:
            candidates = q[j] + _TURNS
            keep = (candidates >= model.lower[j] - 1e-9) & \
                (candidates <= model.upper[j] + 1e-9) & \
                (np.abs(reference[:, j][None, :] - candidates[:, None]).min(axis=1) <= reach)
            values = candidates[keep].tolist() or [q[j]]
            more = []
            for base in out:
                for value in values:
                    copy = base.copy()
                    copy[j] = value
                    more.append(copy)
            out = more
        return out

    def _states(self, u: float, reference: np.ndarray
                ) -> tuple[list[tuple[str, np.ndarray]], _Stop | None]:
        """Every allowed labelled solution at ``u`` (closed forms), or why none.

        ``self.refused`` keeps why each label's solutions were refused (a singular or
        colliding pose), so a branch that vanishes is reported for its own reason.
        """
        self.refused: dict[str, _Stop] = {}
        result = self._solve(u, self.start)
        if not result.success:
            return [], self._failure(result, None)
        solutions = [(s.label, s.q) for s in result.solutions] or [(result.branch, result.q)]
        # A solver may list whole-turn copies itself: keep one per label, _copies adds the
        # ones a continuous path can use.
        labels = [label for label, _ in solutions]
        values = np.array([q for _, q in solutions], dtype=float)
        keys = values.copy()
        keys[:, self.turns] = np.mod(keys[:, self.turns], 2.0 * math.pi)
        keys = np.round(keys, 9) + 0.0          # + 0.0: -0.0 and 0.0 are one key
        # The first of each (label, joint values modulo a turn): a dict, as a sample has a
        # handful of solutions and np.unique(axis=0) costs more than the solve.
        first = list({(label, key.tobytes()): i for i, (label, key) in
                      reversed(list(enumerate(zip(labels, keys, strict=True))))}.values())
        states = [(labels[i], copy) for i in sorted(first)
                  for copy in self._copies(values[i], reference)]
        # A state farther than half a turn (plus a step) from every state before it, on some
        # joint, is never the next sample of a continuous path: left out before the checks.
        array = np.array([q for _, q in states])
        gap = np.abs(array[:, None, :] - reference[None, :, :]).max(axis=2).min(axis=1)
        near = gap <= math.pi + self.settings.max_joint_step
        if near.any():
            states = [state for state, keep in zip(states, near, strict=True) if keep]
        ok, stops = self._pose_checks(np.array([q for _, q in states]))
        kept = [state for state, good in zip(states, ok, strict=True) if good]
        for (label, _), stop in zip(states, stops, strict=True):
            if stop is not None:
                self.refused.setdefault(label, stop)
        if kept:
            return kept, None
        return [], next(s for s in stops if s is not None)

    def _attempt(self, u: float, previous: _Sample, labels: Sequence[str]
                 ) -> tuple[_Sample | None, _Stop | None]:
        """Solve one sample from ``previous``: the candidate, or why there is none."""
        stop = self._timed_out()
        if stop is not None:
            return None, stop
        if self.labelled:
            states, stop = self._states(u, previous.q.reshape(1, -1))
            if stop is not None:
                return None, stop
            allowed = [(label, q) for label, q in states if not labels or label in labels]
            if not allowed:
                return None, self._vanished(labels, states)
            label, q = min(allowed, key=lambda s: float(np.abs(s[1] - previous.q).sum()))
            return _Sample(u, q, label), None
        result = self._solve(u, previous.q)
        if not result.success or result.q is None:
            return None, self._failure(result, previous.q)
        ok, stops = self._pose_checks(np.asarray(result.q, dtype=float).reshape(1, -1))
        if not ok[0]:
            return None, stops[0]
        return _Sample(u, np.asarray(result.q, dtype=float)), None

    def _vanished(self, labels: Sequence[str], states: list) -> _Stop:
        others = sorted({label for label, _ in states})
        for label in labels:
            if label in self.refused:
                # The branch is there but its pose is refused (singular, in contact...).
                return self.refused[label]
        return _Stop(PathCode.JOINT_LIMIT, f'branch {"/".join(labels)} has no solution inside '
                     f'the limits here (branches {", ".join(others)} have; a branch change is '
                     'not allowed)', ErrorCode.JOINT_LIMITS)

    def _transition(self, a: _Sample, b: _Sample) -> _Stop | None:
        """The jump and deviation checks between two consecutive samples."""
        model, settings = self.model, self.settings
        step = np.abs(b.q - a.q)
        worst = int(np.argmax(step))
        if step[worst] > settings.max_joint_step:
            return _Stop(PathCode.JOINT_JUMP, f'{model.joint_names[worst]} would move '
                         f'{step[worst]:.4f} between two samples (max_joint_step '
                         f'{settings.max_joint_step:g})', joint=model.joint_names[worst],
                         joint_step=float(step[worst]))
        middle = model.fk(0.5 * (a.q + b.q))[:3, 3]
        deviation = self.path.deviation(middle, a.u, b.u)
        if deviation > settings.max_deviation:
            return _Stop(PathCode.DEVIATION, f'the tool would leave the path by '
                         f'{deviation:.4f} m between two samples (max_deviation '
                         f'{settings.max_deviation:g} m)')
        return None

    # ------------------------------------------------------------------ the path
    def solve(self) -> tuple[list[_Sample], _Stop | None]:
        first = _Sample(0.0, self.start.copy(), '')
        ok, stops = self._pose_checks(self.start.reshape(1, -1))
        if not ok[0]:
            self.failed_u = 0.0
            stop = stops[0]
            stop.message = f'the start pose is refused: {stop.message}'
            return [first], stop
        if self.labelled:
            return self._solve_branches(first)
        samples = [first]
        for k in range(1, len(self.path)):
            stop = self._advance(samples, float(k), ())
            if stop is not None:
                return samples, stop
        return samples, None

    def _advance(self, samples: list[_Sample], u_target: float, labels: Sequence[str],
                 guess: _Sample | None = None) -> _Stop | None:
        """Extend ``samples`` to ``u_target``, halving the step where a check fails."""
        targets = [u_target]
        while targets:
            current = samples[-1]
            u = targets[-1]
            if guess is not None and u == guess.u:
                candidate, stop = guess, None
            else:
                allowed = tuple(sorted({label for label in (current.label, *labels) if label}))
                candidate, stop = self._attempt(u, current, allowed)
            if candidate is not None:
                stop = self._transition(current, candidate)
            if stop is None:
                samples.append(candidate)
                targets.pop()
                continue
            if stop.code == PathCode.TIMEOUT or \
                    self.path.size(current.u, u) <= self.settings.min_step:
                self.failed_u = u
                joint = self._joint_at_limit(current.q)
                if stop.code == PathCode.JOINT_LIMIT:
                    # The joint the last sample holds at its limit, else the one nearest it.
                    stop.joint = joint or self._nearest_limit(current.q)
                elif stop.code in (PathCode.JOINT_JUMP, PathCode.DEVIATION,
                                   PathCode.UNREACHABLE):
                    if joint:
                        stop = _Stop(PathCode.JOINT_LIMIT, f'{joint} is at its limit, and '
                                     f'then: {stop.message}', ErrorCode.JOINT_LIMITS, joint)
                return stop
            targets.append(0.5 * (current.u + u))
        return None

    def _solve_branches(self, first: _Sample) -> tuple[list[_Sample], _Stop | None]:
        """Dynamic programming over every solution of every path sample, then refinement."""
        max_step = self.settings.max_joint_step
        start_label = self._start_label()
        layers: list[list[tuple[str, np.ndarray]]] = [[(start_label, self.start)]]
        costs = [np.zeros(1)]
        parents: list[np.ndarray] = [np.zeros(1, dtype=int)]
        stop: _Stop | None = None
        for k in range(1, len(self.path)):
            timeout = self._timed_out()
            reference = np.array([q for _, q in layers[-1]])
            states, stop = (None, timeout) if timeout else self._states(float(k), reference)
            if stop is not None:
                break
            previous = layers[-1]
            prev_q = np.array([q for _, q in previous])
            prev_labels = [label for label, _ in previous]
            q = np.array([q for _, q in states])
            motion = np.abs(q[:, None, :] - prev_q[None, :, :])          # (S, P, n)
            total = motion.sum(axis=2) + costs[-1][None, :]
            same = np.array([[label == other or not other for other in prev_labels]
                             for label, _ in states])
            if self.allow_change:
                # A change of label only where both branches meet (a continuous step).
                same |= motion.max(axis=2) <= max_step
            total[~same] = np.inf
            parent = np.argmin(total, axis=1)
            cost = total[np.arange(len(states)), parent]
            alive = np.isfinite(cost)
            if not alive.any():
                labels = sorted({label for label in prev_labels})
                stop = self._vanished(labels, states)
                break
            layers.append([s for s, a in zip(states, alive, strict=True) if a])
            costs.append(cost[alive])
            parents.append(parent[alive])
        if stop is not None:
            self.failed_u = float(len(layers))
        # Backtrack from the cheapest state of the last layer reached.
        index = int(np.argmin(costs[-1]))
        chosen = []
        for k in range(len(layers) - 1, -1, -1):
            chosen.append((k, *layers[k][index]))
            index = int(parents[k][index])
        chosen.reverse()
        samples = [first]
        first.label = start_label
        for k, label, q in chosen[1:]:
            refine = self._advance(samples, float(k), (label,), _Sample(float(k), q, label))
            if refine is not None:
                return samples, refine
            samples[-1].label = label
        if stop is not None:
            # Localise the stop between the last sample and the refused one.
            stop = self._localise(samples, stop)
        return samples, stop

    def _localise(self, samples: list[_Sample], stop: _Stop) -> _Stop:
        """The stop found by halving the step from the last sample toward the refused one."""
        u_fail = math.floor(samples[-1].u) + 1.0
        labels = (samples[-1].label,) if samples[-1].label else ()
        probe = self._advance(samples, u_fail, labels)
        if probe is None:
            self.failed_u = u_fail
            return stop
        return probe

    def _start_label(self) -> str:
        """The branch label of the start pose, '' when no solution matches it."""
        frame = self.model.fk(self.start)
        turn = frame[:3, :3] if self.goal == GoalType.FULL_POSE else None
        result = self.solver.solve(frame[:3, 3], turn, self.goal, self.start,
                                   self.options.with_changes(return_all=True))
        for solution in result.solutions:
            for copy in self._copies(solution.q, self.start.reshape(1, -1)):
                if float(np.abs(copy - self.start).max()) <= 1e-6:
                    return solution.label
        return ''


def _timed(model: object, q: np.ndarray, settings: _Settings,
           u: Sequence[float]) -> Trajectory:
    """Time a joint path: linear (each step at its slowest joint's limit) or min-jerk."""
    names = tuple(model.joint_names)
    if len(q) == 1:
        return Trajectory.hold(names, q[0], settings.timing)
    limits = np.asarray(model.velocity_limits, dtype=float) * settings.velocity_scale
    durations = (np.abs(np.diff(q, axis=0)) / limits).max(axis=1)
    # A step with no joint motion (a pure re-sample) still takes a little time.
    durations = np.maximum(durations, 1e-6)
    linear_times = np.concatenate([[0.0], np.cumsum(durations)])
    if settings.timing == LINEAR_TIMING:
        times = linear_times
    else:
        total = float(linear_times[-1])
        duration = MIN_JERK_PEAK_SPEED * total
        s = linear_times / total
        # Invert s(τ) (monotonic) by bisection, all samples at once.
        low, high = np.zeros_like(s), np.ones_like(s)
        for _ in range(60):
            middle = 0.5 * (low + high)
            below = min_jerk(middle)[0] < s
            low, high = np.where(below, middle, low), np.where(below, high, middle)
        times = 0.5 * (low + high) * duration
        times[0], times[-1] = 0.0, duration
        # Strictly increasing even where two samples round to one time.
        times = np.maximum.accumulate(times + np.arange(len(times)) * 1e-12)
    velocities = np.gradient(q, times, axis=0)
    velocities[[0, -1]] = 0.0
    return Trajectory(names, times, q.copy(), velocities, Interpolation.LINEAR,
                      settings.timing)
