"""One move from the current pose to a goal: check the goal, solve IK, run the law, validate.

``MotionPlanner.plan`` turns a ``MoveGoal`` (the plain form of a MoveToTarget goal) into a
``Plan`` — a validated trajectory with its contacts — or a ``PlanFailure`` carrying a
MotionError (these types are in ``motion.move_types``); it never raises and never returns a
partial move.

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
  validated again as the trajectory that runs) when one exists: a joint-path planner of
  ``motion.planning``, the grid's (floor and obstacle; the default of a yaw + two-pitch
  pointer such as pointer3) or OMPL's (self-collision, the scene and the floor; every other
  arm), as ``motion.path_planner`` or ``MotionSettings.path_planner`` says; the grid's
  failure on a collision goes to OMPL. A move the floor blocks and no planner clears is
  UNSAFE_PATH; one that collides (self or scene) is NO_PATH with the planner's reason. A
  Cartesian line cannot be detoured.

Units: m, rad, s.
"""

from __future__ import annotations

from dataclasses import replace
import math

import numpy as np

from arm_kinematics.common.transforms import matrix_to_quaternion, quaternion_to_matrix
from arm_kinematics.ik.request import AVOID_DEFAULT, AVOID_ON, IKDispatcher, IKRequest
from arm_kinematics.ik.result import check_vector, ErrorCode, GoalType
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion import laws
from arm_kinematics.motion.cartesian import line_failure, MAX_POINT_STEP, time_line
from arm_kinematics.motion.commands import joint_vector
from arm_kinematics.motion.errors import MotionCode, MotionError

# The goal, settings and answers of a move live in move_types; importable from here too.
from arm_kinematics.motion.move_types import (  # noqa: F401
    MotionSettings,
    MoveGoal,
    PathOutcome,
    Plan,
    PlanFailure,
    Preview,
    preview_of,
    preview_rows,
)
from arm_kinematics.motion.path_ik import PathIK
from arm_kinematics.motion.path_request import (
    DEFAULT_MAX_CONDITION,
    PathRequest,
    ToolPose,
)
from arm_kinematics.motion.planning import (
    default_path_planner,
    GRID,
    JointPathPlanner,
    path_planner,
    SAMPLING,
)
from arm_kinematics.motion.safety_check import (
    COLLIDES,
    CollisionGuard,
    SafetyAdapter,
    SceneData,
)
from arm_kinematics.motion.trajectory import concatenate, Trajectory
from arm_kinematics.motion.validation import (
    peak_speed_ratio,
    validate_trajectory,
    Validation,
)

# A move goes to the solution nearest where the arm stands (least joint displacement;
# ik.objectives): the objective of every goal solve.
MOVE_OBJECTIVE = 'closest'
# Wall-clock budget of the path IK of one Cartesian line, s (a 1 m line at 5 mm is 200
# samples, well under a second; the margin is for a loaded machine, never for a hang).
LINE_TIMEOUT = 20.0


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
                            branch=goal.branch, objective=MOVE_OBJECTIVE,
                            # A goal in collision is refused below whatever IK answers, so
                            # IK is asked for a collision-free solution where it can check:
                            # the nearest one when it is free (the same answer), else the
                            # nearest free branch or seed (a position-only goal on a UR5
                            # whose nearest solution folds the forearm onto the wrist).
                            avoid_collisions=AVOID_ON if self.dispatcher.checks_collisions
                            else AVOID_DEFAULT)
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
        planner = path_planner(choice, self.safety, self.collision)
        planned = self._planned_detour(planner, law, start, q_goal, target, validation,
                                       settings)
        # The grid sees the floor and the obstacle only: a move that collides (itself or
        # its grid detour) with the arm or the scene goes to the sampling planner.
        if isinstance(planned, PlanFailure) and not planner.avoids_collisions and \
                self.collision is not None and \
                (validation.error.message.startswith(COLLIDES) or
                 planned.error.message.startswith(COLLIDES)):
            return self._planned_detour(path_planner(SAMPLING, self.safety, self.collision),
                                        law, start, q_goal, target, validation, settings)
        return planned

    def _waypoint_trajectory(self, law: str, waypoints: np.ndarray,
                             settings: MotionSettings) -> Trajectory | None:
        """Min-jerk segments through ``waypoints`` (at rest at each, every segment within
        speed_scale × the velocity limits); None when they are all one pose."""
        parts = [self._min_jerk(a, b, 0.0, settings)[0]
                 for a, b in zip(waypoints[:-1], waypoints[1:]) if not np.array_equal(a, b)]
        return replace(concatenate(parts), law=law) if parts else None

    def _planned_detour(self, planner: JointPathPlanner, law: str, start: np.ndarray,
                        q_goal: np.ndarray, target: np.ndarray, validation: Validation,
                        settings: MotionSettings) -> Plan | PlanFailure:
        """The planner's path, timed as min-jerk segments and validated again as the
        trajectory that will run.

        A planner that sees collisions (the sampling one) answers NO_PATH for a move that
        self-collision or the scene blocks, and a path refused once timed is its failure; a
        move the floor (or the obstacle) blocks stays UNSAFE_PATH with either planner.
        """
        blocked = validation.error.message
        if planner.avoids_collisions:
            code = MotionCode.NO_PATH if blocked.startswith(COLLIDES) else \
                MotionCode.UNSAFE_PATH
            none, found = 'no collision-free path', 'a collision-free detour'
        else:
            code, none, found = MotionCode.UNSAFE_PATH, 'no detour', 'a detour'
        plan = planner.plan(start, q_goal)
        if not plan.success:
            return _fail(code, f'{blocked}; {none}: {plan.reason}')
        trajectory = self._waypoint_trajectory(law, plan.path, settings)
        if trajectory is None:
            return PlanFailure(validation.error)
        checked = self._validate(trajectory, start, settings)
        if planner.avoids_collisions and checked.error is not None and \
                checked.error.code == MotionCode.UNSAFE_PATH:
            return _fail(code, f'{blocked}; the planned path was refused when timed: '
                         f'{checked.error.message}')
        timing = f', planned in {plan.planning_time * 1000:.0f} ms' \
            if planner.avoids_collisions else ''
        return self._finish(trajectory, law, target, q_goal, checked,
                            f'{law} replaced by {found} of {len(plan.path)} waypoints '
                            f'({trajectory.duration:.2f} s, min-jerk segments{timing}): '
                            f'{plan.reason}', detoured=True)

    def _finish(self, trajectory: Trajectory, law: str, target: np.ndarray,
                goal_q: np.ndarray | None, validation: Validation, message: str,
                detoured: bool = False) -> Plan | PlanFailure:
        if validation.error is not None:
            return PlanFailure(validation.error)
        return Plan(trajectory, law, np.asarray(target, dtype=float), goal_q, validation,
                    message, detoured, preview_of(self.model, trajectory))
