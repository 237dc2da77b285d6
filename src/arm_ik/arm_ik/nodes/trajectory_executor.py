"""trajectory_executor: moves one arm with the motion laws and publishes what it commands.

Publishes (relative names, in the arm's namespace): joint_states (sensor_msgs/JointState at
``publish_rate``, stamped with the instant its pose was sampled); <controller_topic>
(trajectory_msgs/JointTrajectory with ``output: joint_trajectory``, std_msgs/Float64MultiArray
with ``output: forward_position``); with ``output: follow_joint_trajectory`` each move is one
goal of the control_msgs/FollowJointTrajectory action <controller_action> (controller_link:
tolerances of the arm configuration's controller section, the controller's feedback forwarded
into MoveToTarget's, its result mapped to a MotionErrorCode with its words, the goal cancelled
when the executor stops the move); plan (arm_interfaces/PlannedPath, latched: the planned
move as data, or the part of a Cartesian line that could be followed, feasible false);
planned_path (visualization_msgs/MarkerArray, latched, drawn from plan); ~/status
(arm_interfaces/ExecutorStatus, latched, on every change of state).
Subscribes: emergency_stop (std_msgs/Bool, reliable + transient local: a stop sent before
this node started still reaches it), target (geometry_msgs/PointStamped, the live target,
``follow_target``), <feedback_topic> (sensor_msgs/JointState of the real arm), scene
(arm_interfaces/Scene, latched, of the safety monitor: every plan, live target and follow
step is checked against it and self-collision, and a blocked joint move is planned round;
meshes resolve through ``mesh_search_paths``).
Services: ~/reset (std_srvs/Trigger), ~/stop (std_srvs/Trigger: hold whatever moves, as a
cancel does; move_group's stop), ~/execute_trajectory (arm_interfaces/ExecuteTrajectory).
Action: ~/move_to_target (arm_interfaces/MoveToTarget). Parameters: executor_parameters.TABLE;
robot_description is replaceable at run time (same joints, new lengths; not while moving).

Semantics: the rules are the core's, listed in ``arm_kinematics.motion.executor``'s docstring
(one goal at a time, checked before the first point, holding, start pose, stale feedback,
emergency stop); the controller route's in ``arm_kinematics.control.executor_link``.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
import sys
import threading
import time
from typing import Any

from geometry_msgs.msg import PointStamped
import numpy as np
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Float64MultiArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from arm_ik.goal_refusals import refusal_message, refusal_publisher
from arm_ik.middleware import cancel_settled, ControlThread, shutting_down
from arm_ik.nodes import motion_messages as messages
from arm_ik.nodes.common import (
    arm_of,
    declare_arm_model,
    declare_mesh_search_paths,
    declare_parameters,
    DescriptionReload,
    LATCHED_QOS,
    run,
    StartupError,
)
from arm_ik.nodes.control_messages import controller_feedback_into, goal_message
from arm_ik.nodes.controller_link import ControllerLink
from arm_ik.nodes.executor_parameters import arm_defaults, outputs_of, TABLE
from arm_ik.nodes.marker_messages import planned_path_markers
from arm_ik.nodes.scene_messages import SceneFollower
from arm_interfaces.action import MoveToTarget
from arm_interfaces.msg import ExecutorStatus, PlannedPath, Scene
from arm_interfaces.srv import ExecuteTrajectory
from arm_kinematics.common.joint_state import positions_by_name
from arm_kinematics.control.codes import ControllerOutcome
from arm_kinematics.control.executor_link import ControllerMoves
from arm_kinematics.control.settings import goal_tolerance_of, path_tolerance_of, waits_of
from arm_kinematics.description.passive_joints import PassiveJoints
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion import worker
from arm_kinematics.motion.commands import trajectory_from_points
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.motion.executor import (
    ExecutorCore,
    ExecutorSettings,
    Feedback,
    goal_refusal_words,
    goal_report,
    GoalEnd,
    settings_reason,
    WallClock,
)
from arm_kinematics.motion.executor_planning import ExecutorPlanning
from arm_kinematics.motion.follow import LiveFollow, Verdict
from arm_kinematics.motion.move_types import Plan, PlanFailure
from arm_kinematics.motion.planner import MotionPlanner
from arm_kinematics.motion.runner import Owner
from arm_kinematics.motion.safety_check import SceneData
from arm_kinematics.motion.trajectory import Trajectory

EXECUTOR_THREADS = 8


class TrajectoryExecutor(Node):
    """Plans, checks and executes moves of one arm; see the module docstring."""

    def __init__(self, attach: Callable[[TrajectoryExecutor], Any] | None = None) -> None:
        """Args:
            attach: builds an interface on this executor once it is ready (servo_node's
                ``ServoInterface``), kept as ``attached``.
        """
        super().__init__('trajectory_executor')
        self.arm, self.model, self._config = declare_arm_model(self, reloadable=True)
        self.names = tuple(self.model.joint_names)
        self._passive = PassiveJoints.of(self.model)
        values = self._declare_parameters()
        self._read_fixed_parameters(values)
        # Plans are checked against self-collision and the safety monitor's scene.
        self._mesh_paths = declare_mesh_search_paths(self)
        try:
            self._plans = ExecutorPlanning(self._spec_of, self.model,
                                           not values['planning_process'],
                                           self.get_logger().error)
        except ValueError as error:
            raise StartupError(f'cannot build the motion planner: {error}') from None
        planner = self._plans.planner
        reason = settings_reason(values, planner.dispatcher.solver_reason)
        if reason:
            raise StartupError(f'bad parameter: {reason}')
        settings = ExecutorSettings.from_values(values)
        feedback = Feedback(self.out.feedback_topic, settings.feedback_stale_periods,
                            settings.motion.period) if self.out.feedback_topic else None
        self.core = ExecutorCore(self.names, self.out.initial, planner, settings,
                                 values['publish_on_start'], feedback)
        self.runner = self.core.runner
        # A refused IK answer or follow step comes later, throttled by the follow itself.
        self.follow = LiveFollow(self.core, self.model, self.model.base_link,
                                 partial(self._submit, 'solve_target'),
                                 lambda refused: self.get_logger().warning(refused.message))
        self._output_lock = threading.Lock()
        self._wall = WallClock()

        # The tick alone in its group (timer) or on its own thread; the emergency stop alone
        # (never queued behind a target's IK); inputs share one; goals are reentrant (a goal
        # thread blocks while its move runs).
        timer_group, stop_group, input_group = (MutuallyExclusiveCallbackGroup() for _ in 'tsi')
        goal_group = ReentrantCallbackGroup()
        self.state_publisher = self.create_publisher(JointState, 'joint_states', 10)
        kind = {'joint_trajectory': JointTrajectory, 'forward_position': Float64MultiArray}
        self.controller_publisher = self.create_publisher(
            kind[self.out.output], self.out.controller_topic, 10) \
            if self.out.output in kind else None
        self.plan_publisher = self.create_publisher(PlannedPath, 'plan', LATCHED_QOS)
        self.path_publisher = self.create_publisher(MarkerArray, 'planned_path', LATCHED_QOS)
        self.status_publisher = self.create_publisher(ExecutorStatus, '~/status', LATCHED_QOS)
        # The words of a refused goal, for its client (arm_ik.goal_refusals says why).
        self.refusal_publisher = refusal_publisher(self)
        self.link = self._controller_link() if self.out.output == 'follow_joint_trajectory' \
            else None
        self.create_subscription(Bool, 'emergency_stop', self._on_emergency_stop, LATCHED_QOS,
                                 callback_group=stop_group)
        if feedback is not None:
            self.create_subscription(JointState, self.out.feedback_topic, self._on_feedback,
                                     qos_profile_sensor_data, callback_group=input_group)
        if values['follow_target'] and self.link is not None:
            self.get_logger().warning('follow_target ignored: the live target needs a streaming '
                                   'output (joint_trajectory or forward_position), not '
                                   'follow_joint_trajectory')
        elif values['follow_target']:
            self.create_subscription(PointStamped, 'target', self._on_target,
                                     qos_profile_sensor_data, callback_group=input_group)
        self.create_service(Trigger, '~/reset', self._on_reset, callback_group=input_group)
        self.create_service(Trigger, '~/stop', self._on_stop, callback_group=stop_group)
        self.create_service(ExecuteTrajectory, '~/execute_trajectory',
                            self._on_execute_trajectory, callback_group=goal_group)
        self.action_server = ActionServer(
            self, MoveToTarget, '~/move_to_target', self._execute_goal,
            callback_group=goal_group, goal_callback=self._on_goal_request,
            cancel_callback=self._on_cancel)
        self._scene_follower = SceneFollower(self, self.model.base_link, self._mesh_paths,
                                             self._use_scene, input_group)
        TABLE.watch(self, self._apply_parameters,
                    lambda v: settings_reason(v, self.core.planner.dispatcher.solver_reason))
        self._reload = DescriptionReload(self, self.model, self._plans.planner_of,
                                         self._use_planner,
                                         busy=self.core.busy_reason)
        self.timer = self._loop = None
        if values['control_loop'] == 'thread':
            self._loop = ControlThread(self.context, lambda: 1.0 / self.core.settings.publish_rate,
                                       self._on_tick, values['realtime_priority'],
                                       self.get_logger())
        else:
            self.timer = self.create_timer(1.0 / settings.publish_rate, self._on_tick,
                                           callback_group=timer_group)
        target = self.link.action if self.link is not None else self.out.controller_topic
        self.get_logger().info(
            f'{self.arm}: output {self.out.output}'
            + (f' on {target}' if self.out.output != 'none' else '')
            + f', {settings.publish_rate:g} Hz, default law {settings.motion.default_law}, '
            f'feedback {self.out.feedback_topic or "none"}, safety '
            f'{"on" if self._config.safety_enabled else "off"}, planning in a '
            f'{self._plans.pool.kind}')
        self.attached = attach(self) if attach is not None else None

    @property
    def output_lock(self) -> threading.Lock:
        """Held while the runner's owner changes with the outputs (attached interfaces)."""
        return self._output_lock

    # ------------------------------------------------------------------ parameters
    def _declare_parameters(self) -> dict[str, Any]:
        values = declare_parameters(self, TABLE, arm_defaults(self.model, self._config),
                                    prefix='bad ')
        self._default_solver = arm_of(self.model, self._config, self.arm).default_solver
        return values

    def _read_fixed_parameters(self, values: dict[str, Any]) -> None:
        try:
            self.out = outputs_of(values, self.model, self.resolve_topic_name,
                                  self._config.controller.action)
        except ValueError as error:
            raise StartupError(str(error)) from None

    def _apply_parameters(self, values: dict[str, Any]) -> None:
        if self.core.use_settings(ExecutorSettings.from_values(values)) and \
                self.timer is not None:
            self.timer.timer_period_ns = int(1e9 / self.core.settings.publish_rate)

    # ------------------------------------------------------------------ the controller action
    def _controller_link(self) -> ControllerLink:
        controller = self._config.controller
        self._goal_tolerances = (path_tolerance_of(controller), goal_tolerance_of(controller),
                                 controller.goal_time_tolerance)
        link = ControllerLink(self, self.out.controller_action, waits_of(controller),
                              controller.goal_time_tolerance, MutuallyExclusiveCallbackGroup(),
                              self._on_controller_outcome)
        self.moves = ControllerMoves(self.core, link.action, self._output_lock,
                                     self._controller_positions)
        return link

    def _on_controller_outcome(self, owner: Owner, outcome: ControllerOutcome) -> None:
        line = self.moves.outcome(owner, outcome, time.monotonic())
        # One call site per severity: rclpy refuses a call site whose severity changes.
        if line is not None and line.level == 'info':
            self.get_logger().info(line.text)
        elif line is not None:
            self.get_logger().warning(line.text)

    def _controller_positions(self, owner: Owner) -> np.ndarray | None:
        """The actual positions in the controller's last feedback of ``owner``'s goal."""
        controller = self.link.latest_feedback(owner)
        if controller is None:
            return None
        q, _ = positions_by_name(self.names, controller.joint_names, controller.actual.positions)
        return q

    # ------------------------------------------------------------------ the arm model
    def _spec_of(self, model: ArmModel, scene: SceneData | None) -> worker.PlannerSpec:
        return worker.PlannerSpec(model.urdf, self.arm, self._config, model.base_link,
                                  model.tip_link, self._default_solver, SolveOptions(),
                                  avoid_obstacle=self.get_parameter('avoid_obstacle').value,
                                  mesh_search_paths=tuple(self._mesh_paths), scene=scene)

    def _use_scene(self, scene: Scene) -> None:
        """A new scene from the safety monitor: plans (ExecutorPlanning) and the live
        follow's tick check take it."""
        self._plans.use_scene(scene, self.core)
        reason = self.follow.set_scene(self._plans.scene)
        if reason:
            self.get_logger().error(reason)

    def _use_planner(self, built: tuple[worker.PlannerSpec, MotionPlanner]) -> None:
        self.model = built[1].model
        self._passive = PassiveJoints.of(self.model)
        self._plans.use_planner(built, self.core)
        self.follow.reset(self.model)

    def _submit(self, name: str, *args: object) -> Future:
        return self._plans.submit(self.core, name, *args)

    def destroy_node(self) -> None:
        if self._loop is not None:
            self._loop.stop()
        self._plans.pool.close()
        super().destroy_node()

    # ------------------------------------------------------------------ inputs
    def _on_feedback(self, message: JointState) -> None:
        q, reason = positions_by_name(self.names, message.name, message.position)
        if q is None:
            # Not a measurement (a NaN, a missing joint): the state goes stale, not wrong.
            self.get_logger().warning(f'{self.out.feedback_topic}: joint state ignored: {reason}',
                                   throttle_duration_sec=5.0)
            return
        self.core.measured(q, time.monotonic())

    def _on_emergency_stop(self, message: Bool) -> None:
        if self.core.emergency_stop(bool(message.data), time.monotonic()):
            if self.link is not None:
                self.link.cancel_all('emergency stop')
            self.get_logger().warning('emergency stop: holding', throttle_duration_sec=1.0)

    def _on_reset(self, request: Trigger.Request, response: Trigger.Response
                  ) -> Trigger.Response:
        response.success, response.message = self.core.reset()
        return response

    def _on_stop(self, request: Trigger.Request, response: Trigger.Response
                 ) -> Trigger.Response:
        moving = self.core.stop(time.monotonic(), 'stopped by a client (~/stop); the arm '
                                'holds where it was')
        if moving and self.link is not None:
            self.link.cancel_all('stopped by a client')
        response.success = True
        response.message = 'stopped: holding' if moving else 'nothing was moving'
        return response

    def _on_target(self, message: PointStamped) -> None:
        outcome = self.follow.target(
            np.array([message.point.x, message.point.y, message.point.z]),
            message.header.frame_id, time.monotonic())
        if outcome.verdict in (Verdict.BAD, Verdict.REFUSED):
            self.get_logger().warning(outcome.message, throttle_duration_sec=2.0)
        elif outcome.verdict == Verdict.BUSY:
            self.get_logger().info(outcome.message, throttle_duration_sec=5.0)

    # ------------------------------------------------------------------ the control tick
    def _on_tick(self) -> None:
        # Sampled at `now`, stamped with the same instant, published right after.
        now = time.monotonic()
        stamp = Time(nanoseconds=self._wall.nanoseconds(now)).to_msg()
        self.core.check_feedback(now)
        stale = self.moves.stale_end(now) if self.link is not None else None
        if stale is not None:
            self.link.end_all(*stale)
        with self._output_lock:
            tick = self.runner.tick(now)
            if tick.q is not None:
                self.state_publisher.publish(messages.joint_state_message(
                    self.names, self._passive, tick.q, tick.v, stamp))
                command = messages.command_message(self.out, tick,
                                                   self.core.settings.motion.period)
                if command is not None and self.controller_publisher is not None:
                    self.controller_publisher.publish(command)
        if self.link is None:
            tick.finish()       # with the action, the controller's result ends the move
        if tick.changed:
            self.status_publisher.publish(messages.status_message(
                self.runner.status(), self.core.feedback_age(now),
                self.get_clock().now().to_msg()))

    def _begin(self, trajectory: Trajectory, owner: Owner) -> tuple[MotionCode, str]:
        """Hand a checked trajectory to the runner and the controller, atomically."""
        message = messages.trajectory_message(trajectory, self.out.controller_order,
                                              self.out.controller_joints) \
            if self.out.output in ('joint_trajectory', 'follow_joint_trajectory') else None
        if self.link is not None and not self.link.wait_for_server(self.link.waits.server_wait):
            return self.moves.missing(self.link.waits.server_wait)
        tolerance = self.core.settings.motion.validation.start_tolerance
        with self._output_lock:
            code, reason = self.runner.start(trajectory, owner, time.monotonic(), tolerance)
            if code == MotionCode.SUCCESS and message is not None:
                if self.link is not None:
                    self.link.send(goal_message(message, *self._goal_tolerances), owner,
                                   trajectory.duration)
                else:
                    self.controller_publisher.publish(message)
        return code, reason

    def _publish_plan(self, outcome: Plan | PlanFailure) -> None:
        path = messages.planned_path_message(outcome, self.model.base_link, self.names,
                                             self.get_clock().now().to_msg())
        self.plan_publisher.publish(path)
        self.path_publisher.publish(planned_path_markers(path))

    # ------------------------------------------------------------------ the action
    def _on_goal_request(self, _goal: MoveToTarget.Goal) -> GoalResponse:
        """Every goal is accepted (a refused one ends at once with its code and words),
        except while the node shuts down: that rejection's words go out first."""
        if not shutting_down(self.context):
            return GoalResponse.ACCEPT
        self.refusal_publisher.publish(refusal_message(self, goal_refusal_words(
            'a new goal', MotionCode.INTERNAL_ERROR, 'the executor is shutting down')))
        return GoalResponse.REJECT

    def _on_cancel(self, goal_handle: ServerGoalHandle) -> CancelResponse:
        self.core.cancel(bytes(goal_handle.goal_id.uuid), time.monotonic())
        return CancelResponse.ACCEPT

    def _execute_goal(self, goal_handle: ServerGoalHandle) -> MoveToTarget.Result:
        uuid = bytes(goal_handle.goal_id.uuid)
        if self.link is not None:
            self.moves.adopt_measured(time.monotonic())
        owner = self.core.register(uuid, f'goal {uuid.hex()[:8]}')
        try:
            end = self.core.run_goal(
                owner, messages.goal_from_message(goal_handle.request),
                lambda: goal_handle.is_cancel_requested, partial(self._submit, 'plan'),
                self._begin, self._publish_plan,
                lambda progress: goal_handle.publish_feedback(controller_feedback_into(
                    messages.feedback_message(progress, self.names,
                                              self.get_clock().now().to_msg()),
                    self.link.latest_feedback(owner) if self.link is not None else None)))
            if self.link is not None:
                end = self.moves.settled(end, self.link.settle(owner), time.monotonic())
            return self._finish_goal(goal_handle, owner, end)
        except Exception as error:  # noqa: BLE001 - a bug must end the goal, not the node
            if shutting_down(self.context):
                return MoveToTarget.Result(message='the executor shut down')
            self.runner.stop(time.monotonic(), MotionCode.INTERNAL_ERROR, str(error), owner)
            self.get_logger().error(f'{owner.name}: {type(error).__name__}: {error}')
            return self._finish_goal(goal_handle, owner, GoalEnd(
                MotionCode.INTERNAL_ERROR, f'the executor raised {type(error).__name__}: {error}'))
        finally:
            self.core.unregister(uuid, owner)

    def _finish_goal(self, goal_handle: ServerGoalHandle, owner: Owner, end: GoalEnd
                     ) -> MoveToTarget.Result:
        report = goal_report(owner, self.runner.pose(), end.plan, end.path, self.core.tip_of)
        result = messages.result_message(end.code, end.message, report, end.ik_code,
                                         owner.record, self.names)
        if end.refused:         # its words out before the result
            self.refusal_publisher.publish(refusal_message(self, goal_refusal_words(
                owner.name, end.code, end.message)))
        if not goal_handle.is_active:
            return result
        if end.code == MotionCode.SUCCESS:
            goal_handle.succeed()
        elif end.code == MotionCode.CANCELED and cancel_settled(goal_handle):
            goal_handle.canceled()
        else:
            goal_handle.abort()
        if end.code != MotionCode.SUCCESS:
            self.get_logger().info(f'{owner.name}: {end.code.name}: {end.message}')
        return result

    # ------------------------------------------------------------------ client trajectories
    def _on_execute_trajectory(self, request: ExecuteTrajectory.Request,
                               response: ExecuteTrajectory.Response
                               ) -> ExecuteTrajectory.Response:
        try:
            code, message = self._execute_trajectory(request.trajectory)
        except Exception as error:  # noqa: BLE001 - an escaping exception stops the service
            code, message = MotionCode.INTERNAL_ERROR, f'{type(error).__name__}: {error}'
        response.error_code.val = int(code)
        response.message = message
        if code != MotionCode.SUCCESS:
            self.get_logger().info(f'execute_trajectory refused: {code.name}: {message}')
        return response

    def _execute_trajectory(self, message: JointTrajectory) -> tuple[MotionCode, str]:
        if self.link is not None:
            self.moves.adopt_measured(time.monotonic())
        trajectory, error = trajectory_from_points(self.names, message.joint_names,
                                                   messages.points_from_message(message))
        if error is not None:
            return error.code, error.message
        return self.core.client_trajectory(
            trajectory, lambda *args: self._submit('validate', *args).result(timeout=30.0),
            self._begin)


def main(args: list[str] | None = None) -> None:
    sys.exit(run(TrajectoryExecutor, args, threads=EXECUTOR_THREADS))


if __name__ == '__main__':
    main()
