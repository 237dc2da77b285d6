"""One move from the current pose to a goal: check the goal, solve IK, run the law, validate.

``MotionPlanner.plan`` turns a ``MoveGoal`` (the plain form of a MoveToTarget goal) into a
``Plan`` — a validated trajectory with its contacts — or a ``PlanFailure`` carrying a
MotionError; it never raises and never returns a partial move.

- IK is done in process with ``IKDispatcher`` and the solvers themselves (no service call):
  the Cartesian laws follow their line with path IK (``PathIK``, the core of ik_server's
  ``~/ik/cartesian_path``: one solve per path sample, hundreds per move), which over DDS
  would cost a round trip each, and the planner must not depend on another node being up.
- Streaming laws (exponential, speed cap) are simulated tick by tick at the control period,
  so what the arm will do is known and checked before it starts.
- Time scaling: timed laws stretch their duration until every joint stays within
  speed_scale × its URDF velocity limit (a goal's duration is a minimum, never shortened);
  the message says when it was stretched.
- Every trajectory (planned or a client's) is checked for the floor (``SafetyAdapter``) and,
  with a ``CollisionGuard``, for self-collision and the scene (URDF collision shapes, no link
  point moving more than 1 cm between checked poses).
- A blocked joint-space path is replaced by a detour (min-jerk segments through waypoints,
  validated again as the trajectory that runs) when one exists: the grid planner's (floor and
  obstacle; the default of a yaw + two-pitch pointer such as pointer3) or OMPL's (self-
  collision, the scene and the floor; every other arm), as ``motion.path_planner`` or
  ``MotionSettings.path_planner`` says; the grid's failure on a collision goes to OMPL. A
  move the floor blocks and no planner clears is UNSAFE_PATH; one that collides (self or
  scene) is NO_PATH with the planner's reason. A Cartesian line cannot be detoured.

Units: m, rad, s.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
import math

import numpy as np

from arm_kinematics.common.transforms import matrix_to_quaternion, quaternion_to_matrix
from arm_kinematics.ik.request import IKDispatcher, IKRequest
from arm_kinematics.ik.result import check_vector, ErrorCode, GoalType
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion import laws
from arm_kinematics.motion.cartesian import line_failure, MAX_POINT_STEP, time_line
from arm_kinematics.motion.commands import joint_vector
from arm_kinematics.motion.errors import MotionCode, MotionError
from arm_kinematics.motion.path_ik import (
    DEFAULT_MAX_CONDITION,
    PathCode,
    PathIK,
    PathRequest,
    ToolPose,
)
from arm_kinematics.motion.safety_check import (
    COLLIDES,
    CollisionGuard,
    default_path_planner,
    GRID,
    PATH_PLANNERS,
    SafetyAdapter,
    SAMPLING,
    SceneData,
)
from arm_kinematics.motion.trajectory import concatenate, Trajectory
from arm_kinematics.motion.validation import (
    peak_speed_ratio,
    validate_trajectory,
    Validation,
    ValidationSettings,
)

# Wall-clock budget of the path IK of one Cartesian line, s (a 1 m line at 5 mm is 200
# samples, well under a second; the margin is for a loaded machine, never for a hang).
LINE_TIMEOUT = 20.0


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
            if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                    not math.isfinite(value) or value <= 0.0:
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


def _fail(code: MotionCode, message: str, ik_code: ErrorCode | None = None) -> PlanFailure:
    return PlanFailure(MotionError(code, message, ik_code))


class MotionPlanner:
    """Plans moves of one arm; holds the IK solvers and the optional safety checks."""

    def __init__(self, model: ArmModel, dispatcher: IKDispatcher,
                 ik_options: SolveOptions = SolveOptions(),
                 safety: SafetyAdapter | None = None,
                 collision: CollisionGuard | None = None) -> None:
        """Args:
            model: the arm.
            dispatcher: its IK solvers (``IKDispatcher``).
            ik_options: solver settings of every solve.
            safety: floor/obstacle checks and detours; None: no safety check.
            collision: self-collision and scene checks and the sampling planner; None:
                none.
        """
        self.model = model
        self.collision = collision
        self.default_path_planner = default_path_planner(model)
        self.dispatcher = dispatcher
        self.ik_options = ik_options
        self.safety = safety
        # One path IK for every Cartesian line (the core function ik_server serves too).
        # Its contact checks follow the executor's policy: the floor always, the obstacle
        # only when contact blocks a move (else contacts are reported, not refused).
        geometry = None
        if safety is not None:
            geometry = safety.geometry
            if not safety.avoid_obstacle and geometry.obstacle_enabled:
                config = geometry.config
                geometry = type(geometry)(model, replace(
                    config, obstacle=replace(config.obstacle, enabled=False)))
        self.path_ik = PathIK(dispatcher, geometry)

    def set_scene(self, scene: SceneData | None) -> None:
        """Check against this scene from the next plan on (plain data; None: empty).

        Raises:
            SceneError: an object cannot be built here (the previous scene stays).
        """
        if self.collision is not None:
            self.collision.set_scene(None if scene is None else scene.build())

    # ------------------------------------------------------------------ entry point
    def plan(self, goal: MoveGoal, start: np.ndarray,
             settings: MotionSettings = MotionSettings()) -> Plan | PlanFailure:
        """Plan ``goal`` from ``start`` (rad); never raises (a bug is INTERNAL_ERROR)."""
        try:
            return self._plan(goal, start, settings)
        except Exception as error:  # any bug must become an answer, never a dead executor
            return _fail(MotionCode.INTERNAL_ERROR,
                         f'the planner raised {type(error).__name__}: {error}')

    def _plan(self, goal: MoveGoal, start: np.ndarray,
              settings: MotionSettings) -> Plan | PlanFailure:
        model = self.model
        start_q, reason = check_vector(start, model.dof, 'current joint state')
        if start_q is None:
            return _fail(MotionCode.NO_JOINT_STATE, reason)
        law = goal.motion_law or settings.default_law
        if law not in laws.LAWS:
            return _fail(MotionCode.INVALID_GOAL,
                         f'unknown motion_law "{goal.motion_law}"; valid (exact, lower case): '
                         f'{", ".join(laws.LAWS)}, or empty for the default '
                         f'({settings.default_law})')
        duration = goal.duration
        if not (isinstance(duration, (int, float)) and math.isfinite(duration) and
                0.0 <= duration <= settings.max_duration):
            return _fail(MotionCode.INVALID_GOAL, f'duration {duration!r} s must be finite, '
                         f'>= 0 and <= {settings.max_duration:g} s (0: from the velocity limits)')
        scale = goal.speed_scale
        if not (isinstance(scale, (int, float)) and math.isfinite(scale) and 0.0 <= scale <= 1.0):
            return _fail(MotionCode.INVALID_GOAL,
                         f'speed_scale {scale!r} must be in (0, 1] (0: the executor default)')
        settings = replace(settings, speed_scale=scale or settings.speed_scale)
        if goal.is_joint_goal:
            return self._plan_joint_goal(goal, law, start_q, settings)
        return self._plan_cartesian_goal(goal, law, start_q, settings)

    # ------------------------------------------------------------------ goals
    def _plan_joint_goal(self, goal: MoveGoal, law: str, start: np.ndarray,
                         settings: MotionSettings) -> Plan | PlanFailure:
        if law in laws.CARTESIAN_LAWS or law == laws.SPEED_CAP:
            return _fail(MotionCode.INVALID_GOAL,
                         f'motion_law {law} needs a Cartesian target; joint targets move with '
                         f'{laws.MIN_JERK} or {laws.EXPONENTIAL}')
        q_goal, error = joint_vector(self.model.joint_names, goal.joint_names,
                                     goal.joint_positions)
        if error is not None:
            return PlanFailure(error)
        return self._plan_joint_space(law, start, q_goal, self.model.fk(q_goal)[:3, 3],
                                      goal.duration, settings)

    def _check_target(self, goal: MoveGoal) -> tuple[GoalType | None, np.ndarray | None, str]:
        try:
            goal_type = GoalType(goal.goal_type)
        except ValueError:
            return None, None, (f'goal_type {goal.goal_type} is not one of 0 (position), '
                                '1 (tool down), 2 (full pose)')
        frame = goal.frame_id.lstrip('/')
        if frame not in ('', self.model.base_link):
            return None, None, (f'target frame "{goal.frame_id}" is not the base frame '
                                f'"{self.model.base_link}" (no TF lookup is done)')
        position = np.asarray(goal.position, dtype=float)
        for axis, value in zip('xyz', position):
            if not math.isfinite(value):
                return None, None, f'target.pose.position.{axis} is {value} (must be finite)'
        rotation = None
        if goal_type == GoalType.FULL_POSE:
            quaternion = np.asarray(goal.orientation, dtype=float)
            for axis, value in zip('xyzw', quaternion):
                if not math.isfinite(value):
                    return None, None, (f'target.pose.orientation.{axis} is {value} '
                                        '(must be finite)')
            norm = float(np.linalg.norm(quaternion))
            if not 1e-6 < norm < 1e150:
                return None, None, (f'target.pose.orientation has norm {norm:g}; give a unit '
                                    'quaternion')
            rotation = quaternion_to_matrix(*quaternion)
        return goal_type, rotation, ''

    def _solve_goal(self, goal: MoveGoal, goal_type: GoalType, start: np.ndarray
                    ) -> tuple[np.ndarray | None, PlanFailure | None]:
        request = IKRequest(position=tuple(goal.position), orientation=tuple(goal.orientation),
                            goal=int(goal_type), frame_id=goal.frame_id, solver=goal.solver,
                            seed_names=self.model.joint_names, seed_positions=tuple(start),
                            branch=goal.branch)
        answer = self.dispatcher.solve(request, self.ik_options, start)
        result = answer.result
        if not result.success or result.q is None:
            return None, _fail(MotionCode.IK_FAILED,
                               f'IK ({answer.solver}) failed: {result.code.name}: {result.reason}',
                               result.code)
        return np.asarray(result.q, dtype=float), None

    def _plan_cartesian_goal(self, goal: MoveGoal, law: str, start: np.ndarray,
                             settings: MotionSettings) -> Plan | PlanFailure:
        goal_type, rotation, reason = self._check_target(goal)
        if goal_type is None:
            return _fail(MotionCode.INVALID_GOAL, reason)
        if law == laws.SPEED_CAP and goal_type != GoalType.POSITION:
            return _fail(MotionCode.INVALID_GOAL, 'motion_law speed_cap follows tool positions '
                         f'only (goal_type 0), not {goal_type.name}')
        q_goal, failure = self._solve_goal(goal, goal_type, start)
        if failure is not None:
            return failure
        target = np.asarray(goal.position, dtype=float)
        if law in (laws.MIN_JERK, laws.EXPONENTIAL):
            return self._plan_joint_space(law, start, q_goal, target, goal.duration, settings)
        if law == laws.SPEED_CAP:
            return self._plan_speed_cap(start, target, settings)
        return self._plan_cartesian_line(goal, law, goal_type, rotation, start, q_goal, target,
                                         settings)

    # ------------------------------------------------------------------ laws
    def _speed_limits(self, settings: MotionSettings) -> np.ndarray:
        return self.model.velocity_limits * settings.speed_scale

    def _plan_joint_space(self, law: str, start: np.ndarray, q_goal: np.ndarray,
                          target: np.ndarray, duration: float,
                          settings: MotionSettings) -> Plan | PlanFailure:
        if law == laws.EXPONENTIAL:
            trajectory, message = self._exponential(start, q_goal, settings)
            if trajectory is None:
                return _fail(MotionCode.TRAJECTORY_INVALID, message)
        else:
            trajectory, message = self._min_jerk(start, q_goal, duration, settings)
        validation = self._validate(trajectory, start, settings)
        if validation.error is not None and validation.error.code == MotionCode.UNSAFE_PATH:
            return self._detour(law, start, q_goal, target, validation, settings)
        return self._finish(trajectory, law, target, q_goal, validation, message)

    def _min_jerk(self, start: np.ndarray, q_goal: np.ndarray, duration: float,
                  settings: MotionSettings) -> tuple[Trajectory, str]:
        names = self.model.joint_names
        if np.array_equal(start, q_goal):
            return Trajectory.hold(names, q_goal, laws.MIN_JERK), 'already there'
        shortest = max(laws.min_jerk_duration(start, q_goal, self._speed_limits(settings)),
                       settings.min_duration)
        chosen = max(duration, shortest)
        message = f'{laws.MIN_JERK} in joint space, {chosen:.2f} s'
        if 0.0 < duration < shortest:
            message += (f' (duration stretched from {duration:g} s to respect '
                        f'{settings.speed_scale:g} x the velocity limits)')
        return laws.joint_min_jerk(names, start, q_goal, chosen, settings.period), message

    def _exponential(self, start: np.ndarray, q_goal: np.ndarray,
                     settings: MotionSettings) -> tuple[Trajectory | None, str]:
        model = self.model
        law = laws.ExponentialSmoothing(settings.exponential_gain, self._speed_limits(settings),
                                        model.lower, model.upper)
        reason = law.goal_reason(q_goal)
        if reason:
            return None, f'{laws.EXPONENTIAL}: {reason}'
        result = laws.simulate(
            model.joint_names, start, lambda q, dt: law.step(q, q_goal, dt),
            lambda q: float(np.max(np.abs(q_goal - q))), settings.settle_tolerance,
            settings.period, settings.max_duration, laws.EXPONENTIAL, final=q_goal)
        if not result.converged:
            return None, f'{laws.EXPONENTIAL}: {result.message}'
        return result.trajectory, (f'{laws.EXPONENTIAL} (k = {settings.exponential_gain:g} 1/s) '
                                   f'{result.message}')

    def _plan_speed_cap(self, start: np.ndarray, target: np.ndarray,
                        settings: MotionSettings) -> Plan | PlanFailure:
        model = self.model
        solver = self.dispatcher.solvers.get('ccd')
        if solver is None:
            return _fail(MotionCode.INVALID_GOAL, 'motion_law speed_cap needs the ccd solver, '
                         f'which does not apply to this arm: '
                         f'{self.dispatcher.solver_reason("ccd")}')
        cap = laws.SpeedCap(solver, self._speed_limits(settings), settings.speed_cap_iterations)
        result = laws.simulate(
            model.joint_names, start, lambda q, dt: cap.step(q, target, dt),
            lambda q: float(np.linalg.norm(model.fk(q)[:3, 3] - target)),
            settings.position_tolerance, settings.period, settings.max_duration, laws.SPEED_CAP)
        if not result.converged:
            return _fail(MotionCode.IK_FAILED, f'{laws.SPEED_CAP}: CCD {result.message}',
                         ErrorCode.NOT_CONVERGED)
        message = (f'{laws.SPEED_CAP} ({settings.speed_cap_iterations} CCD iterations per '
                   f'{settings.period * 1e3:g} ms tick) {result.message}')
        validation = self._validate(result.trajectory, start, settings)
        return self._finish(result.trajectory, laws.SPEED_CAP, target, None, validation,
                            message)

    def _plan_cartesian_line(self, goal: MoveGoal, law: str, goal_type: GoalType,
                             rotation: np.ndarray | None, start: np.ndarray,
                             q_goal: np.ndarray, target: np.ndarray,
                             settings: MotionSettings) -> Plan | PlanFailure:
        """The straight tool line: path IK once, then the law's timing stretched to the
        velocity limits (no IK per stretch)."""
        model = self.model
        path_goal, orientation = goal_type, tuple(goal.orientation)
        if goal_type == GoalType.TOOL_DOWN and not self._tool_down(start):
            # Not tool down at the start: the tool turns from its start orientation to the
            # IK answer's (tool down, the turn about the tool axis nearest the start) by
            # slerp, every sample a full pose, as the line did before path IK; a TOOL_DOWN
            # path would need the whole turn at its first sample (a jump).
            path_goal = GoalType.FULL_POSE
            orientation = tuple(matrix_to_quaternion(model.fk(q_goal)[:3, :3]))
        elif rotation is not None:
            orientation = tuple(matrix_to_quaternion(rotation))
        request = PathRequest(
            start=tuple(start), waypoints=[ToolPose(tuple(target), orientation)],
            goal=int(path_goal), frame_id=goal.frame_id,
            solver=goal.solver or self.dispatcher.default_solver,
            max_cartesian_step=MAX_POINT_STEP, max_joint_step=settings.max_joint_step,
            max_condition=self._line_condition(path_goal, settings), partial=True,
            timeout=LINE_TIMEOUT,
            timing='linear')
        result = self.path_ik.follow(request, self.ik_options)
        if not result.success or result.trajectory is None:
            failure = line_failure(model, result)
            return PlanFailure(MotionError(MotionCode.CARTESIAN_PATH_FAILED, failure.message,
                                           failure.ik_code), failure.reached, failure.point,
                               PathOutcome(failure.fraction, failure.code, failure.waypoint))
        path = result.trajectory.positions
        outcome = PathOutcome.followed(len(request.waypoints))
        limits = self._speed_limits(settings)
        peak = laws.MIN_JERK_PEAK_SPEED if law == laws.MIN_JERK_CARTESIAN else 1.0
        # First guess from the joint-space distance; the line is then stretched to the limits.
        shortest = max(peak * float(np.max(np.abs(path[-1] - start) / limits)),
                       settings.min_duration)
        chosen = max(goal.duration, shortest)
        for _ in range(4):
            line = time_line(model, path, result.progress, chosen, settings.period, law)
            ratio = peak_speed_ratio(line, limits)
            if ratio <= 1.0 + 1e-6:
                break
            if chosen * ratio > settings.max_duration:
                return _fail(MotionCode.TRAJECTORY_INVALID,
                             f'the straight tool line needs {chosen * ratio:.1f} s at '
                             f'{settings.speed_scale:g} x the velocity limits, more than '
                             f'max_duration {settings.max_duration:g} s')
            chosen *= ratio * 1.01
        message = f'{law}: straight tool line of {np.linalg.norm(target - line.tips[0]):.3f} m ' \
                  f'in {chosen:.2f} s, {len(path)} path IK samples ({result.solver}, largest ' \
                  f'joint step {result.largest_step:.3f})'
        if 0.0 < goal.duration < chosen:
            message += (f' (duration stretched from {goal.duration:g} s to respect '
                        f'{settings.speed_scale:g} x the velocity limits)')
        validation = self._validate(line, start, settings)
        return replace(self._finish(line, law, target, line.end, validation, message),
                       path=outcome)

    @staticmethod
    def _line_condition(goal: GoalType, settings: MotionSettings) -> float:
        """The singularity threshold of a line's path IK.

        Position lines keep the executor's ``max_condition`` on the position rows, the
        measure it always had. Path IK measures a tool-down or full-pose line on the
        goal's own rows (the rotation rows times the reach), which is larger for the same
        pose (six_axis at home: 3.9 on the position rows, 14.8 on all six), so those lines
        get at least path IK's own default: the threshold ``~/ik/cartesian_path`` uses.
        """
        if goal == GoalType.POSITION:
            return settings.max_condition
        return max(settings.max_condition, DEFAULT_MAX_CONDITION)

    def _tool_down(self, q: np.ndarray) -> bool:
        """The tool Z axis at ``q`` points along −Z of the base (within the IK tolerance)."""
        axis = self.model.fk(q)[:3, 2]
        return float(-axis[2]) >= math.cos(self.ik_options.orientation_tolerance)

    # ------------------------------------------------------------------ checks
    def validate(self, trajectory: Trajectory, start: np.ndarray,
                 settings: MotionSettings = MotionSettings()) -> Validation:
        """Every check of ``validation`` (with the safety path check) on a client's
        trajectory; never raises (a bug is INTERNAL_ERROR)."""
        try:
            return self._validate(trajectory, start, settings)
        except Exception as error:  # a bug must become an answer, never a dead executor
            return Validation(MotionError(MotionCode.INTERNAL_ERROR,
                                          f'validation raised {type(error).__name__}: {error}'))

    def check_move(self, start: np.ndarray, goal: np.ndarray) -> str:
        """'' when the straight joint move ``start`` → ``goal`` (rad) passes the checks every
        trajectory gets, else why not: the goal pose (the floor, the obstacle when avoided;
        self-collision and the scene, naming the pairs), then the way there (the floor's
        2 cm, the collision checker's 1 cm spacing). The live target's check: an
        exponential follow moves along this segment."""
        goal = np.asarray(goal, dtype=float)
        segment = np.array([start, goal], dtype=float)
        floor, collision = self.safety, self.collision
        checks = (
            ('the goal is not safe', floor, lambda: floor.check_pose(goal)),
            ('the goal is in collision', collision, lambda: collision.check_pose(goal)),
            ('the way there is not safe', floor, lambda: floor.check_path(segment)),
            ('the way there collides', collision, lambda: collision.check_segment(segment)),
        )
        for what, rules, check in checks:
            reason = check() if rules is not None else ''
            if reason:
                return f'{what}: {reason}'
        return ''

    def _validate(self, trajectory: Trajectory, start: np.ndarray,
                  settings: MotionSettings) -> Validation:
        return validate_trajectory(trajectory, self.model, start, settings.validation,
                                   self._path_check())

    def _path_check(self):
        """The floor check, then (when the floor is clear) self-collision and the scene."""
        floor = self.safety.check_trajectory if self.safety is not None else None
        if self.collision is None:
            return floor
        collision = self.collision.check_trajectory
        if floor is None:
            return collision

        def both(trajectory: Trajectory):
            report = floor(trajectory)
            if report.error is not None:
                return report
            other = collision(trajectory)
            return replace(report, error=other.error,
                           message='; '.join(m for m in (report.message, other.message) if m))
        return both

    def _detour(self, law: str, start: np.ndarray, q_goal: np.ndarray, target: np.ndarray,
                validation: Validation, settings: MotionSettings) -> Plan | PlanFailure:
        """The blocked straight joint move replaced by a clear one: the grid detour (floor
        and obstacle) or the sampling planner (self-collision, the scene and the floor), as
        ``settings.path_planner`` or the arm's default says."""
        if not settings.detour or (self.safety is None and self.collision is None):
            return PlanFailure(validation.error)
        choice = settings.path_planner or self.default_path_planner
        if self.collision is None:
            choice = GRID
        elif self.safety is None:
            choice = SAMPLING
        if choice == SAMPLING:
            return self._sampling_detour(law, start, q_goal, target, validation, settings)
        planned = self._grid_detour(law, start, q_goal, target, validation, settings)
        # The grid sees the floor and the obstacle only: a move that collides (itself or
        # its grid detour) with the arm or the scene goes to the sampling planner.
        if isinstance(planned, PlanFailure) and self.collision is not None and \
                (validation.error.message.startswith(COLLIDES) or
                 planned.error.message.startswith(COLLIDES)):
            return self._sampling_detour(law, start, q_goal, target, validation, settings)
        return planned

    def _waypoint_trajectory(self, law: str, waypoints: np.ndarray,
                             settings: MotionSettings) -> Trajectory | None:
        """Min-jerk segments through ``waypoints`` (at rest at each, every segment within
        speed_scale × the velocity limits); None when they are all one pose."""
        parts = [self._min_jerk(a, b, 0.0, settings)[0]
                 for a, b in zip(waypoints[:-1], waypoints[1:]) if not np.array_equal(a, b)]
        return replace(concatenate(parts), law=law) if parts else None

    def _grid_detour(self, law: str, start: np.ndarray, q_goal: np.ndarray,
                     target: np.ndarray, validation: Validation,
                     settings: MotionSettings) -> Plan | PlanFailure:
        blocked = validation.error.message
        waypoints, message = self.safety.detour(start, q_goal)
        if waypoints is None:
            return _fail(MotionCode.UNSAFE_PATH, f'{blocked}; no detour: {message}')
        trajectory = self._waypoint_trajectory(law, waypoints, settings)
        if trajectory is None:
            return PlanFailure(validation.error)
        checked = self._validate(trajectory, start, settings)
        return self._finish(trajectory, law, target, q_goal, checked,
                            f'{law} replaced by a detour of {len(waypoints)} waypoints '
                            f'({trajectory.duration:.2f} s, min-jerk segments): {message}',
                            detoured=True)

    def _sampling_detour(self, law: str, start: np.ndarray, q_goal: np.ndarray,
                         target: np.ndarray, validation: Validation,
                         settings: MotionSettings) -> Plan | PlanFailure:
        """OMPL's path (validated densely by the collision checker and the floor rule), timed
        as min-jerk segments and validated again as the trajectory that will run."""
        blocked = validation.error.message
        # A move the floor (or obstacle) blocks stays UNSAFE_PATH, as with the grid; NO_PATH
        # is for moves blocked by self-collision or the scene.
        code = MotionCode.NO_PATH if blocked.startswith(COLLIDES) else MotionCode.UNSAFE_PATH
        rule = self.safety.pose_rule(start, q_goal) if self.safety is not None else None
        result = self.collision.plan(start, q_goal, rule)
        if not result.ok:
            return _fail(code, f'{blocked}; no collision-free path: {result.reason}')
        trajectory = self._waypoint_trajectory(law, result.path, settings)
        if trajectory is None:
            return PlanFailure(validation.error)
        checked = self._validate(trajectory, start, settings)
        if checked.error is not None and checked.error.code == MotionCode.UNSAFE_PATH:
            return _fail(code, f'{blocked}; the planned path was refused when timed: '
                         f'{checked.error.message}')
        return self._finish(trajectory, law, target, q_goal, checked,
                            f'{law} replaced by a collision-free detour of '
                            f'{len(result.path)} waypoints ({trajectory.duration:.2f} s, '
                            f'min-jerk segments, planned in '
                            f'{result.planning_time * 1000:.0f} ms): {result.reason}',
                            detoured=True)

    def _finish(self, trajectory: Trajectory, law: str, target: np.ndarray,
                goal_q: np.ndarray | None, validation: Validation, message: str,
                detoured: bool = False) -> Plan | PlanFailure:
        if validation.error is not None:
            return PlanFailure(validation.error)
        return Plan(trajectory, law, np.asarray(target, dtype=float), goal_q, validation,
                    message, detoured, preview_of(self.model, trajectory))
