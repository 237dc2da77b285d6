"""A move's goal, the motion planner's settings, and what planning a move gives back: a
``Plan`` (a validated trajectory, its preview and, for a Cartesian line, how far path IK
followed it) or a ``PlanFailure``. Used by ``motion.planner.MotionPlanner`` and the executor.

Units: m, rad, s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math

import numpy as np

from arm_kinematics.common.checks import is_finite_number
from arm_kinematics.ik.result import GoalType
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion import laws
from arm_kinematics.motion.errors import MotionError
from arm_kinematics.motion.path_request import PathCode
from arm_kinematics.motion.planning.base import PATH_PLANNERS
from arm_kinematics.motion.trajectory import Trajectory
from arm_kinematics.motion.validation import Validation, ValidationSettings


@dataclass(frozen=True)
class MoveGoal:
    """Plain-Python form of a MoveToTarget goal (see the .action for every field)."""

    position: tuple[float, ...] = (0.0, 0.0, 0.0)
    orientation: tuple[float, ...] = (0.0, 0.0, 0.0, 1.0)   # x, y, z, w
    goal_type: int = int(GoalType.POSITION)
    frame_id: str = ''
    joint_names: tuple[str, ...] = ()
    joint_positions: tuple[float, ...] = ()
    solver: str = ''
    branch: str = ''
    motion_law: str = ''
    duration: float = 0.0
    speed_scale: float = 0.0

    @property
    def is_joint_goal(self) -> bool:
        """A joint-space target (IK skipped): names or positions given."""
        return bool(self.joint_names) or bool(self.joint_positions)


@dataclass(frozen=True)
class MotionSettings:
    """The executor's motion parameters (one immutable snapshot per plan).

    Attributes:
        period: control period, s: sample spacing of timed laws, tick of streaming laws.
        default_law: law of goals that name none.
        speed_scale: default fraction of the URDF velocity limits, (0, 1].
        exponential_gain: k of the exponential law, 1/s.
        speed_cap_iterations: CCD sweeps per tick of the speed-cap law.
        settle_tolerance: the exponential law is done within this of the goal, rad.
        position_tolerance: the speed-cap law is done within this of the target, m.
        max_condition: singularity threshold of Cartesian lines (condition number).
        max_joint_step: largest joint change between two samples of a Cartesian line, rad.
        min_duration: shortest timed move, s.
        max_duration: longest move, s.
        detour: plan a detour when a joint-space path goes through the floor or collides.
        path_planner: the detour planner: 'grid' (the safety planner's 4° grid over two
            pitch joints, floor and obstacle only), 'sampling' (OMPL RRTConnect against
            self-collision, the scene and the floor) or '' for the arm's default (grid for a
            yaw + two-pitch pointer, sampling otherwise).
        validation: tolerances of the trajectory checks.
    """

    period: float = 0.01
    default_law: str = laws.MIN_JERK
    speed_scale: float = 0.5
    exponential_gain: float = 3.0
    speed_cap_iterations: int = 3
    settle_tolerance: float = 1e-3
    position_tolerance: float = 1e-3
    max_condition: float = 50.0
    max_joint_step: float = 0.2
    min_duration: float = 0.2
    max_duration: float = 60.0
    detour: bool = True
    path_planner: str = ''
    validation: ValidationSettings = field(default_factory=ValidationSettings)

    def validated(self) -> tuple[MotionSettings | None, str]:
        """(self, '') when every value is usable, else (None, reason)."""
        positive = ('period', 'speed_scale', 'exponential_gain', 'settle_tolerance',
                    'position_tolerance', 'max_condition', 'max_joint_step', 'max_duration')
        for name in positive:
            value = getattr(self, name)
            if not is_finite_number(value) or value <= 0.0:
                return None, f'{name} must be a finite number > 0, got {value!r}'
        if self.speed_scale > 1.0:
            return None, f'speed_scale must be in (0, 1], got {self.speed_scale}'
        if self.max_condition < 1.0:
            return None, f'max_condition must be >= 1, got {self.max_condition}'
        if not (math.isfinite(self.min_duration) and 0.0 <= self.min_duration
                <= self.max_duration):
            return None, (f'min_duration must be in [0, max_duration], got '
                          f'{self.min_duration}')
        if isinstance(self.speed_cap_iterations, bool) or \
                not isinstance(self.speed_cap_iterations, int) or \
                not 1 <= self.speed_cap_iterations <= 1000:
            return None, f'speed_cap_iterations must be 1..1000, got {self.speed_cap_iterations!r}'
        if self.path_planner not in ('',) + PATH_PLANNERS:
            return None, (f'path_planner "{self.path_planner}" is not one of '
                          f'{", ".join(PATH_PLANNERS)} (or empty for the arm\'s default)')
        if self.default_law not in laws.LAWS:
            return None, (f'default_law "{self.default_law}" is not one of '
                          f'{", ".join(laws.LAWS)}')
        return self, ''


@dataclass(frozen=True)
class Preview:
    """What a planned move looks like, for markers.

    Attributes:
        tips: (K, 3) tool path, m (at most ``max_points`` samples, ends included).
        ghosts: (G, n + 1, 3) joint origins and tool point of G poses along the move, m.
    """

    tips: np.ndarray
    ghosts: np.ndarray


def preview_rows(count: int, max_points: int = 300) -> np.ndarray:
    """Indices of at most ``max_points`` samples of ``count``, evenly spread, ends included:
    the samples a preview's tool path is drawn through."""
    return np.unique(np.linspace(0, count - 1, min(count, max_points)).round().astype(int))


def preview_of(model: ArmModel, trajectory: Trajectory, ghosts: int = 5,
               max_points: int = 300) -> Preview:
    """Tool path and ghost snapshots of ``trajectory`` (computed where the plan is made)."""
    rows = preview_rows(len(trajectory), max_points)
    count = len(trajectory)
    tips = model.fk_batch(trajectory.positions[rows])[:, :3, 3]
    picks = np.unique(np.linspace(0, count - 1, min(count, ghosts)).round().astype(int))
    frames = model.frames_batch(trajectory.positions[picks])
    return Preview(tips, frames[:, :, :3, 3])


@dataclass(frozen=True)
class PathOutcome:
    """How far path IK followed a Cartesian line (the MoveToTarget result's path_* fields).

    The default is "no Cartesian line" (joint-space laws, speed cap, goals refused before
    the line was tried): fraction 0, code OK, waypoint 0.

    Attributes:
        fraction: share of the line's length followed, 0..1.
        stop_code: PathCode (CartesianPath.srv constants); OK when followed to the end.
        stop_waypoint: index of the first waypoint not reached (1, the count, when none).
    """

    fraction: float = 0.0
    stop_code: PathCode = PathCode.OK
    stop_waypoint: int = 0

    @staticmethod
    def followed(waypoints: int = 1) -> PathOutcome:
        """The outcome of a line followed to its end."""
        return PathOutcome(1.0, PathCode.OK, waypoints)


@dataclass(frozen=True)
class Plan:
    """A validated move.

    Attributes:
        trajectory: what will be executed.
        law: the motion law used.
        target: tool point aimed at, m (for the final error).
        goal_q: joint goal, rad (the IK answer or the joint target; None for speed cap).
        validation: the checks' outcome, with the contacts on the way.
        message: what was planned, in words (stretching and detours included).
        detoured: a detour replaced the straight joint path.
        preview: tool path and ghost poses for markers.
        path: the Cartesian line's path IK outcome (PathOutcome.followed()); the default
            (nothing) for the other laws.
    """

    trajectory: Trajectory
    law: str
    target: np.ndarray
    goal_q: np.ndarray | None
    validation: Validation
    message: str
    detoured: bool = False
    preview: Preview | None = None
    path: PathOutcome = field(default_factory=lambda: PathOutcome())

    @property
    def contact_times(self) -> np.ndarray:
        path = self.validation.path
        return path.contact_times if path is not None else np.zeros(0)

    @property
    def contact_points(self) -> np.ndarray:
        path = self.validation.path
        return path.contact_points if path is not None else np.zeros((0, 3))


@dataclass(frozen=True)
class PlanFailure:
    """A move that will not be made.

    Attributes:
        error: the MotionError.
        reached: (K, 3) tool points a Cartesian line followed before failing, m.
        point: where the line failed, m (None otherwise).
        path: how far path IK followed the Cartesian line (the default when the move is
            not a line or failed before it was tried; followed() when the line was
            followed and a later check refused it).
    """

    error: MotionError
    reached: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    point: np.ndarray | None = None
    path: PathOutcome = field(default_factory=lambda: PathOutcome())
