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
import math
import time

import numpy as np

from arm_kinematics.common.checks import is_numeric
from arm_kinematics.common.transforms import matrix_to_quaternion
from arm_kinematics.ik.request import IKAnswer, IKDispatcher, IKRequest, PreparedRequest
from arm_kinematics.ik.result import GoalType
from arm_kinematics.ik.solvers.base import SolveOptions

# The request, the result and the batch are in their own modules; importable from here too.
from arm_kinematics.motion.batch_ik import BatchIK, BatchTooLargeError, MAX_BATCH  # noqa: F401
from arm_kinematics.motion.path_conditions import condition_number, condition_numbers
from arm_kinematics.motion.path_following import PathRun
from arm_kinematics.motion.path_request import (  # noqa: F401
    DEFAULT_MAX_CARTESIAN_STEP,
    DEFAULT_MAX_CONDITION,
    DEFAULT_MAX_DEVIATION,
    DEFAULT_MAX_JOINT_STEP,
    DEFAULT_MAX_ROTATION_STEP,
    DEFAULT_MIN_STEP,
    DEFAULT_TIMEOUT,
    LINEAR_TIMING,
    MAX_PATH_SAMPLES,
    MAX_PATH_TIMEOUT,
    MIN_JERK_TIMING,
    PATH_RESTARTS,
    path_settings,
    PathCode,
    PathRequest,
    PathResult,
    TIMINGS,
    ToolPose,
)
from arm_kinematics.motion.path_stops import PathSample, PathStop
from arm_kinematics.motion.path_timing import time_joint_path
from arm_kinematics.motion.tool_path import arc_points, build_tool_path, slerp_quaternion  # noqa: F401
from arm_kinematics.scene.geometry import SafetyGeometry


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
        self._batch = BatchIK(dispatcher)
        self._warmed: set[str] = set()      # the solvers a path has already been run with

    # ------------------------------------------------------------------ metrics
    def condition(self, q: np.ndarray, goal: GoalType) -> float:
        """Condition number of the goal's constraint Jacobian at ``q`` (dimensionless)."""
        return condition_number(self.model, self.reach, q, goal)

    def conditions(self, qs: np.ndarray, goal: GoalType, below: float = math.inf
                   ) -> np.ndarray:
        """``condition`` of every row of ``qs`` (N, n), in one call (0.0 where it is proven
        below ``below``: see ``path_conditions.condition_numbers``)."""
        return condition_numbers(self.model, self.reach, qs, goal, below)

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
        settings, reason = path_settings(request)
        if settings is None:
            return PathResult(PathCode.INVALID_INPUT, reason)
        start = np.asarray(request.start, dtype=float).reshape(-1) \
            if is_numeric(request.start) else None
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
        throughs, reason = arc_points(request.arc_through, len(prepared))
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
        orientations = [p.orientation for p in prepared] \
            if goal == GoalType.FULL_POSE else None
        path, reason = build_tool_path(model.fk(start), [p.position for p in prepared],
                                       orientations, settings, throughs)
        if path is None:
            return PathResult(PathCode.INVALID_INPUT, reason, solver=solver.name)
        run = PathRun(model, self.conditions, self.safety, solver, goal, options, settings,
                      path, start, started + settings.timeout, request.allow_branch_change)
        if solver.name not in self._warmed:
            # The first path compiles (or loads from numba's disk cache) the solver and the
            # checks it calls: 2.2-2.8 s cold on the six_axis arm, 2 ms a path after. Its
            # timeout counts the path, not that: a first 5 cm line on a loaded machine timed
            # out at 0 %.
            began = time.perf_counter()
            if run.warm_up():
                self._warmed.add(solver.name)
            run.deadline += time.perf_counter() - began
        samples, stop = run.solve()
        return self._result(run, samples, stop, request, len(request.waypoints))

    def _result(self, run: PathRun, samples: list[PathSample], stop: PathStop | None,
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
            progress=path.lengths_at([s.u for s in samples]) / path.length
            if path.length > 0.0 else np.ones(len(samples)),
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
            result.failed_position = path.position(failed).copy()
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
            result.trajectory = time_joint_path(model, q, run.settings, [s.u for s in samples])
        return result

    # ------------------------------------------------------------------ batch IK
    def batch(self, requests: Sequence[IKRequest], defaults: SolveOptions,
              fallback_seed: np.ndarray) -> list[IKAnswer]:
        """One IKAnswer per request, equal to one-by-one answers (see ``BatchIK.answer``).

        Raises:
            BatchTooLargeError: more than MAX_BATCH requests.
        """
        return self._batch.answer(requests, defaults, fallback_seed)
