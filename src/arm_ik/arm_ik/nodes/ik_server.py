"""ik_server: the IK services of one arm (analytic, closed-form, CCD, DLS).

Services (node-private, in the arm's namespace):
  ~/solve_ik          arm_interfaces/srv/SolveIK with the request's solver or the default
  ~/ik/<solver>       the same with one solver: analytic, closed_form, ccd, dls (the two
                      closed forms on a thread of their own: middleware.HiddenServices)
  ~/ik/cartesian_path arm_interfaces/srv/CartesianPath: a tool path as one continuous joint
                      path, or where and why it stops (kinematics.path_ik)
  ~/ik/batch          arm_interfaces/srv/SolveIKBatch: many targets, one answer each
Publishes ``ik_status`` (arm_interfaces/IKStatus) after each answered request (while anyone
subscribes) and subscribes to ``joint_states`` for the default seed and to ``scene``
(arm_interfaces/Scene, latched, from safety_monitor): SolveIK's ``avoid_collisions`` checks
solutions against that scene and self-collision (parameter ``mesh_search_paths`` for meshes). A new
``robot_description`` with the same joints (e.g. new link lengths) rebuilds the reach rules,
floor rules and solvers.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
import sys
import threading
import time

from geometry_msgs.msg import Point
import numpy as np
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import JointState

from arm_ik.client import SERVICE_QOS
from arm_ik.middleware import HiddenServices
from arm_ik.nodes.common import (
    arm_of,
    declare_arm_model,
    declare_mesh_search_paths,
    declare_parameters,
    DescriptionReload,
    run,
    StartupError,
    subscribe_joint_states,
)
from arm_ik.nodes.parameters import Param, ParameterTable
from arm_ik.nodes.path_messages import (
    batch_requests,
    fill_batch_response,
    fill_path_response,
    path_request,
)
from arm_ik.nodes.scene_messages import SceneFollower
from arm_interfaces.msg import IKStatus, LabelledSolution
from arm_interfaces.srv import CartesianPath, SolveIK, SolveIKBatch
from arm_kinematics.common.joint_state import positions_by_name
from arm_kinematics.ik.closed_form.common import distinct_solutions
from arm_kinematics.ik.objectives import OBJECTIVES
from arm_kinematics.ik.request import IKAnswer, IKDispatcher, IKRequest
from arm_kinematics.ik.result import ErrorCode, IKResult
from arm_kinematics.ik.solvers import SOLVERS
from arm_kinematics.ik.solvers.base import (
    MAX_ITERATIONS_CAP,
    MAX_TIMEOUT,
    SolveOptions,
    Workspace,
)
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.path_ik import PathIK
from arm_kinematics.motion.path_request import PathCode, PathResult
from arm_kinematics.scene.geometry import SafetyGeometry
from arm_kinematics.scene.scene_rules import geometry_in

CHEAP_SOLVERS = ('analytic', 'closed_form')
EXECUTOR_THREADS = 6
# What IKStatus repeats of the SolveIK answer, under the same field names and types.
STATUS_FIELDS_OF_RESPONSE = ('solver', 'branch', 'error_code', 'message', 'position_error',
                             'orientation_error', 'iterations', 'manipulability',
                             'condition_number', 'reach_fraction', 'solve_time', 'solution')
# default_solver, max_iterations, damping, tolerance and objective default to the arm
# configuration's.
PARAMETERS = ParameterTable(
    Param('default_solver', '', 'solver of ~/solve_ik when the request names none: '
          f'{", ".join(SOLVERS)}'),
    Param('max_iterations', 200, 'iteration limit of numeric solvers', low=1,
          high=MAX_ITERATIONS_CAP),
    Param('damping', 0.05, 'DLS damping lambda (> 0), rad-equivalent', low=0.0, high=10.0,
          low_open=True),
    Param('tolerance', 1e-4, 'position tolerance, m (> 0)', low=0.0, high=1.0, low_open=True),
    Param('orientation_tolerance', 1e-3, 'orientation tolerance, rad (> 0)', low=0.0,
          high=math.pi, low_open=True),
    Param('max_step', 0.0, 'largest change of any joint per iteration, rad (0: no cap)',
          low=0.0, high=math.pi),
    Param('timeout', 1.0, 'default solve timeout, s (> 0)', low=0.0, high=MAX_TIMEOUT,
          low_open=True),
    Param('respect_joint_limits', True,
          'keep solutions inside the URDF joint limits (requests may override)'),
    Param('restarts', 200, 'random restarts of numeric solvers when stalled', low=0,
          high=1000),
    Param('random_seed', 0, 'seed of the restart generator (same request, same answer)'),
    Param('objective', 'first', 'which solution when a goal has several (requests may '
          f'override): {", ".join(OBJECTIVES)}', choices=OBJECTIVES),
)


def solve_options(values: dict) -> SolveOptions:
    """The SolveOptions of a set of parameter values (not validated)."""
    names = ('max_iterations', 'damping', 'tolerance', 'orientation_tolerance', 'max_step',
             'timeout', 'restarts', 'random_seed', 'objective')
    return SolveOptions(**{name: values[name] for name in names},
                        respect_limits=values['respect_joint_limits'])


@dataclass(frozen=True)
class Derived:
    """What the server derives from one arm model; swapped in whole on a new description."""

    model: ArmModel
    workspace: Workspace
    home: np.ndarray
    dispatcher: IKDispatcher
    safety: SafetyGeometry      # the configuration's floor and ball


class IKServer(Node):
    """Serves SolveIK for one arm; a slow numeric solve never blocks a cheap analytic one."""

    def __init__(self) -> None:
        super().__init__('ik_server')
        self.arm, self.model, self._config = declare_arm_model(self, reloadable=True)
        ik_config = self._config.get('ik', {}) or {}
        values = declare_parameters(self, PARAMETERS, {
            'default_solver': arm_of(self.model, self._config, self.arm).default_solver,
            'max_iterations': int(ik_config.get('max_iterations', 200)),
            'damping': float(ik_config.get('damping', 0.05)),
            'tolerance': float(ik_config.get('tolerance', 1e-4)),
            'objective': str(ik_config.get('objective', 'first'))})
        self._mesh_paths = declare_mesh_search_paths(self)
        self._scene = None
        self._use_derived(self._derived(self.model))
        self.options = solve_options(values)
        PARAMETERS.watch(self, self._apply_parameters, self._parameters_reason)

        self._current_q: np.ndarray | None = None
        self._heavy_slots = threading.BoundedSemaphore(EXECUTOR_THREADS - 2)
        heavy_group = ReentrantCallbackGroup()
        state_group = MutuallyExclusiveCallbackGroup()
        self.joint_states = subscribe_joint_states(self, self._on_joint_states,
                                                   callback_group=state_group)
        self.status_publisher = self.create_publisher(IKStatus, 'ik_status', 10)
        self._scene_follower = SceneFollower(self, self.model.base_link, self._mesh_paths,
                                             self._use_scene, state_group)
        self.create_service(SolveIK, '~/solve_ik', self._serve(None), qos_profile=SERVICE_QOS,
                            callback_group=heavy_group)
        for name in SOLVERS:
            if name not in CHEAP_SOLVERS:
                self.create_service(SolveIK, f'~/ik/{name}', self._serve(name),
                                    qos_profile=SERVICE_QOS, callback_group=heavy_group)
        # The closed forms answer in 30-50 us: on a thread of their own (see HiddenServices).
        self._cheap = HiddenServices(
            self, 'closed_form', [(SolveIK, f'ik/{name}', self._serve(name))
                                  for name in CHEAP_SOLVERS], SERVICE_QOS,
            thread_name='closed_form_services')
        self.create_service(CartesianPath, '~/ik/cartesian_path', self._serve_path,
                            qos_profile=SERVICE_QOS, callback_group=heavy_group)
        self.create_service(SolveIKBatch, '~/ik/batch', self._serve_batch,
                            qos_profile=SERVICE_QOS, callback_group=heavy_group)
        self.get_logger().info(
            f'{self.arm}: solvers {", ".join(self.dispatcher.solvers)} '
            f'(default {self.dispatcher.default_solver})')
        self._reload = DescriptionReload(self, self.model, self._derived, self._use_derived)

    def destroy_node(self) -> None:
        cheap = getattr(self, '_cheap', None)
        if cheap is not None:
            cheap.close()
        super().destroy_node()

    # ------------------------------------------------------------------ the arm model
    def _derived(self, model: ArmModel) -> Derived:
        """Reach rules, home pose, floor rules and solvers of ``model``.

        Raises:
            StartupError: the safety settings or the default solver do not fit ``model``.
        """
        arm = arm_of(model, self._config, self.arm)
        try:
            dispatcher = arm.dispatcher(self.get_parameter('default_solver').value,
                                        self._mesh_paths)
        except ValueError as error:
            raise StartupError(str(error)) from None
        workspace, home = arm.workspace, arm.home
        return Derived(model, workspace, home, dispatcher, arm.safety)

    def _use_derived(self, derived: Derived) -> None:
        # default_solver may have changed in the same update as robot_description.
        solver = self.get_parameter('default_solver').value
        if solver in derived.dispatcher.solvers:
            derived.dispatcher.default_solver = solver
        # A request in flight keeps the dispatcher it took (answer_request reads it once).
        derived.dispatcher.scene = self._scene
        self.model, self.workspace, self.home = derived.model, derived.workspace, derived.home
        self.dispatcher = derived.dispatcher
        self._safety = derived.safety
        self.path_ik = PathIK(derived.dispatcher, geometry_in(derived.safety, self._scene))

    # ------------------------------------------------------------------ parameters
    def _parameters_reason(self, values: dict) -> str:
        """'' when a proposed set of values is usable as a whole, else why not."""
        reason = self.dispatcher.solver_reason(values['default_solver'])
        if reason:
            return reason
        _, reason = solve_options(values).validated()
        return reason

    def _apply_parameters(self, values: dict) -> None:
        # One immutable snapshot swapped in: a solve in flight keeps the set it started with.
        self.options = solve_options(values)
        self.dispatcher.default_solver = values['default_solver']

    def _use_scene(self, scene) -> None:
        # Swapped whole: a solve in flight finishes with the scene it started with.
        self._scene = scene
        self.dispatcher.scene = scene
        # Paths are checked against the ball where the scene has it (its own rule).
        self.path_ik = PathIK(self.dispatcher, geometry_in(self._safety, scene))

    # ------------------------------------------------------------------ serving
    def _on_joint_states(self, message: JointState) -> None:
        q, _ = positions_by_name(self.model.joint_names, message.name, message.position)
        if q is not None:       # an unusable state keeps the last good seed
            self._current_q = q

    def _serve(self, solver_name: str | None):
        def callback(request: SolveIK.Request, response: SolveIK.Response) -> SolveIK.Response:
            try:
                return self.answer_request(request, response, solver_name)
            except Exception as error:
                # An exception escaping a service callback stops rclpy serving and the
                # client never gets a reply; the dispatcher already turns solver errors
                # into INTERNAL_ERROR, this catches a bug anywhere else on the path.
                answer = IKAnswer(IKResult(ErrorCode.INTERNAL_ERROR,
                                           f'ik_server raised {type(error).__name__}: {error}'),
                                  solver_name or request.solver)
                return self._respond(SolveIK.Response(), answer, publish=False)
        return callback

    def answer_request(self, request: SolveIK.Request, response: SolveIK.Response,
                       solver_name: str | None) -> SolveIK.Response:
        """Answer one request; every path fills error_code and message."""
        if solver_name is not None and request.solver not in ('', solver_name):
            # An unknown name gets the same typed answer (with the valid names) as on
            # ~/solve_ik; a known but different one is a contradictory request.
            unknown = request.solver not in SOLVERS
            answer = IKAnswer(IKResult(
                ErrorCode.UNKNOWN_SOLVER if unknown else ErrorCode.INVALID_INPUT,
                f'this is the {solver_name} service; leave solver empty or call ~/solve_ik '
                f'(request named "{request.solver}")'
                + (f': {self.dispatcher.solver_reason(request.solver)}' if unknown else '')),
                solver_name)
            return self._respond(response, answer)
        pose = request.target.pose
        ik_request = IKRequest(
            position=(pose.position.x, pose.position.y, pose.position.z),
            orientation=(pose.orientation.x, pose.orientation.y, pose.orientation.z,
                         pose.orientation.w),
            goal=request.goal_type, frame_id=request.target.header.frame_id,
            solver=request.solver, seed_names=list(request.seed.name),
            seed_positions=list(request.seed.position), branch=request.branch,
            return_all=request.return_all_solutions, timeout_sec=request.timeout.sec,
            timeout_nanosec=request.timeout.nanosec, max_iterations=request.max_iterations,
            damping=request.damping, tolerance=request.tolerance,
            joint_limits=request.joint_limits, avoid_collisions=request.avoid_collisions,
            objective=request.objective)
        dispatcher = self.dispatcher     # one model for the whole request
        seed = self._current_q if self._current_q is not None else self.home
        prepared = dispatcher.prepare(ik_request, self.options, seed.copy(), solver_name)
        if isinstance(prepared, IKAnswer):
            return self._respond(response, prepared)
        # Malformed requests were refused above; only real solves compete for capacity.
        cheap = prepared.solver in CHEAP_SOLVERS
        if not cheap and not self._heavy_slots.acquire(blocking=False):
            answer = IKAnswer(IKResult(ErrorCode.BUSY, f'{EXECUTOR_THREADS - 2} numeric solves '
                                       'already running; retry later'), prepared.solver)
            return self._respond(response, answer, publish=False)
        try:
            answer = dispatcher.run(prepared)
        finally:
            if not cheap:
                self._heavy_slots.release()
        if answer.result.solutions:
            # Each distinct solution once (the copy nearest the seed), not every whole turn.
            answer.result.solutions = distinct_solutions(answer.result.solutions,
                                                         prepared.seed)
        return self._respond(response, answer)

    def _serve_path(self, request: CartesianPath.Request,
                    response: CartesianPath.Response) -> CartesianPath.Response:
        path_ik = self.path_ik       # one model for the whole request
        try:
            current = self._current_q if self._current_q is not None else self.home
            core = path_request(request, path_ik.model, current.copy())
            if isinstance(core, PathResult):
                result = core
            elif not self._heavy_slots.acquire(blocking=False):
                result = PathResult(PathCode.BUSY, f'{EXECUTOR_THREADS - 2} numeric requests '
                                    'already running; retry later')
            else:
                try:
                    result = path_ik.follow(core, self.options)
                finally:
                    self._heavy_slots.release()
        except Exception as error:   # an escaping exception would leave the client waiting
            result = PathResult(PathCode.INTERNAL_ERROR,
                                f'ik_server raised {type(error).__name__}: {error}')
        return fill_path_response(response, result, path_ik.model)

    def _serve_batch(self, request: SolveIKBatch.Request,
                     response: SolveIKBatch.Response) -> SolveIKBatch.Response:
        started = time.perf_counter()
        path_ik = self.path_ik
        try:
            requests, reason = batch_requests(request)
            if requests is None:
                response.error_code.val = int(ErrorCode.INVALID_INPUT)
                response.message = reason
                return response
            if not self._heavy_slots.acquire(blocking=False):
                response.error_code.val = int(ErrorCode.BUSY)
                response.message = (f'{EXECUTOR_THREADS - 2} numeric requests already '
                                    'running; retry later')
                return response
            try:
                current = self._current_q if self._current_q is not None else self.home
                answers = path_ik.batch(requests, self.options, current.copy())
            finally:
                self._heavy_slots.release()
            return fill_batch_response(response, answers, path_ik.model,
                                       time.perf_counter() - started)
        except Exception as error:   # an escaping exception would leave the client waiting
            response = SolveIKBatch.Response()
            response.error_code.val = int(ErrorCode.INTERNAL_ERROR)
            response.message = f'ik_server raised {type(error).__name__}: {error}'
            return response

    def _respond(self, response: SolveIK.Response, answer: IKAnswer,
                 publish: bool = True) -> SolveIK.Response:
        result = answer.result
        response.error_code.val = int(result.code)
        response.message = result.reason or ('solved' if result.success else result.code.name)
        response.solver = answer.solver
        response.branch = result.branch
        for name, convert in _RESULT_FIELDS:
            setattr(response, name, convert(getattr(result, name)))
        for name, convert in _ANSWER_FIELDS:
            setattr(response, name, convert(getattr(answer, name)))
        if result.q is not None and result.code in (ErrorCode.OK, ErrorCode.PARTIAL_SOLUTION):
            response.solution.header.stamp = self.get_clock().now().to_msg()
            response.solution.name = list(self.model.joint_names)
            response.solution.position = result.q.tolist()
        if result.tip_position is not None:
            achieved = response.achieved_position
            achieved.x, achieved.y, achieved.z = result.tip_position.tolist()
        if result.solutions:
            response.alternatives = [LabelledSolution(label=s.label, positions=s.q.tolist())
                                     for s in result.solutions]
        if not result.success:
            self.get_logger().debug(f'{answer.solver or "?"}: {result.code.name}: '
                                    f'{response.message}')
        # Building and publishing the status costs as much as an analytic solve: skip it
        # while nobody listens.
        if publish and self.status_publisher.get_subscription_count() > 0:
            self._publish_status(response, answer)
        return response

    def _publish_status(self, response: SolveIK.Response, answer: IKAnswer) -> None:
        status = IKStatus()
        status.header.stamp = self.get_clock().now().to_msg()
        status.header.frame_id = self.model.base_link
        for name in STATUS_FIELDS_OF_RESPONSE:
            setattr(status, name, getattr(response, name))
        if np.all(np.isfinite(answer.target)):
            status.target = Point(x=float(answer.target[0]), y=float(answer.target[1]),
                                  z=float(answer.target[2]))
        status.achieved = response.achieved_position
        self.status_publisher.publish(status)


def _finite_or_inf(value: float) -> float:
    value = float(value)
    return value if not math.isnan(value) else math.inf


# SolveIK.Response fields of the same name in the IKResult and in the IKAnswer, with the type
# the message wants (errors and conditioning: NaN, unknown, is sent as inf).
_RESULT_FIELDS = (('solve_time', float), ('iterations', int), ('max_joint_step', float),
                  ('position_error', _finite_or_inf), ('orientation_error', _finite_or_inf))
_ANSWER_FIELDS = (('manipulability', float), ('condition_number', _finite_or_inf),
                  ('reach_fraction', _finite_or_inf), ('branch_switched', bool),
                  ('shortfall', float), ('displacement', float), ('objective_value', float))


def main(args: list[str] | None = None) -> None:
    sys.exit(run(IKServer, args, threads=EXECUTOR_THREADS))


if __name__ == '__main__':
    main()
