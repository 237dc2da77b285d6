"""Path IK's request and result: the fields, their defaults and limits, the stop codes,
and the validation of the numeric settings. No ROS.

Units: m, rad (m for prismatic joints), s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import enum
import math

import numpy as np

from arm_kinematics.common.checks import is_finite_number
from arm_kinematics.ik.result import ErrorCode, GoalType
from arm_kinematics.motion.trajectory import Trajectory

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
LINEAR_TIMING, MIN_JERK_TIMING = 'linear', 'min_jerk'
TIMINGS = (LINEAR_TIMING, MIN_JERK_TIMING)


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
class PathSettings:
    """The numeric settings of one request, defaults filled in (see PathRequest)."""

    max_cartesian_step: float
    max_rotation_step: float
    max_joint_step: float
    max_deviation: float
    min_step: float
    max_condition: float
    timeout: float
    timing: str
    velocity_scale: float



def path_settings(request: PathRequest) -> tuple[PathSettings | None, str]:
    """The request's settings with defaults filled in, or (None, why they are unusable)."""
    def pick(name: str, default: float, upper: float = math.inf) -> float | str:
        value = getattr(request, name)
        if not is_finite_number(value) or value < 0.0:
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
    return PathSettings(timing=timing, **values), ''

