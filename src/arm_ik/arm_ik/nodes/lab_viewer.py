"""lab_viewer: the arm in a browser (viser), with a panel that drives the running pipeline.

An ordinary client of the other nodes: it subscribes to what they publish, calls their
services and the executor's action, and sets their parameters through their own
set_parameters services (so each node validates, and a refusal comes back with its reason).
It serves http://127.0.0.1:<port> only, unless ``host`` says otherwise.

Parameters: robot_description, arm, base_frame, tip_frame, urdf_file, host, port,
control_service and the names of the pipeline's nodes (read-only); render_rate, target_rate,
error_history, service_timeout.
Subscribes (relative, in the arm's namespace): joint_states, arm_info, ik_status,
safety_status (its collision witness too: pairs in the readout, objects and links marked),
plan (arm_interfaces/PlannedPath: tip path and ghosts), scene (arm_interfaces/Scene, latched:
the collision objects drawn), ball_state, target_status, trajectory_executor/status and
/parameter_events (to show changes made elsewhere).
Publishes: ``target`` (geometry_msgs/PointStamped, while "Live follow" is on) and
``~/shown_joint_states`` (sensor_msgs/JointState: each pose the browser was given).
Calls: ik_server/solve_ik, safety_monitor/joint_map, target_input/run_cycle and stop_cycle,
the action trajectory_executor/move_to_target.
Serves, with ``control_service``: ``~/set_controls`` (rcl_interfaces/SetParameters), which
changes panel inputs and presses buttons by key exactly as a browser user would (scripts and
tests); each result carries the panel's outcome.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
import sys
import time
from typing import Any

from geometry_msgs.msg import PointStamped
import numpy as np
from rcl_interfaces.msg import ParameterEvent, SetParametersResult
from rcl_interfaces.srv import SetParameters
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.node import Node
from rclpy.parameter import parameter_value_to_python
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from arm_ik.batched_subscription import BatchedSubscription
from arm_ik.lab import texts
from arm_ik.lab.controls import (
    arm_controls,
    Control,
    EXECUTOR,
    follow_parameter,
    length_controls,
)
from arm_ik.lab.drawing import ErrorHistory
from arm_ik.lab.layout import LabLayout
from arm_ik.lab.panel import Outcome
from arm_ik.lab.scene import floor_of, LabScene, obstacle_of
from arm_ik.lab.server import check_listen, ServerError, start_server
from arm_ik.lab.state import LabState
from arm_ik.lab.urdf_view import arm_view_of, ArmView, search_paths
from arm_ik.middleware import ExecutorHop
from arm_ik.nodes.common import (
    constant_names,
    declare_arm_model,
    LATCHED_QOS,
    run,
    safety_geometry_of,
    StartupError,
    STATE_BATCH_PERIOD,
    subscribe_joint_states,
)
from arm_ik.nodes.lab_moves import LabMoves
from arm_ik.nodes.lab_parameters import NODE_NAMES, PARAMETERS
from arm_ik.nodes.lab_remote import Pipeline
from arm_ik.nodes.lab_scene_feed import LabSceneFeed
from arm_ik.nodes.motion_messages import plan_drawing_from_message
from arm_ik.nodes.parameters import ParameterError
from arm_ik.nodes.task_messages import TARGET_STATUS_QOS
from arm_interfaces.msg import (
    ArmInfo,
    BallState,
    ExecutorStatus,
    IKStatus,
    PlannedPath,
    SafetyStatus,
    TargetStatus,
)
from arm_kinematics.common.joint_state import positions_by_name
from arm_kinematics.description.bundled import home_from_config
from arm_kinematics.ik.solvers.base import workspace_from_model
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.planning.grid_search import default_search_joints
from arm_kinematics.scene.geometry import SafetyGeometry
from arm_kinematics.visual.arm_visual import pose_metrics

EXECUTOR_THREADS = 4
READOUT_PERIOD = 0.25      # s between readout and error-plot refreshes (each is a message)
EXECUTOR_STATES = constant_names(ExecutorStatus)
TARGET_STATES = constant_names(TargetStatus)


class LabViewer(LabMoves, Node):
    """Serves the browser lab of one arm; see the module docstring."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('lab_viewer', **kwargs)
        self.arm, self.model, config = declare_arm_model(self)
        try:
            values = PARAMETERS.declare(self)
        except (InvalidParameterTypeException, InvalidParameterValueException,
                ParameterError) as error:
            # e.g. port:=70000 or render_rate:=20 (an integer): say so, no traceback.
            raise StartupError(f'bad parameter: {error}') from None
        PARAMETERS.watch(self, self._apply_parameters)
        self.names = tuple(self.model.joint_names)
        self.workspace = workspace = workspace_from_model(self.model)
        self.home = np.array(home_from_config(self.model, config))
        self._config = config
        geometry = _safety_geometry(self.model, config, self.arm)

        # The chain walked in numpy here and below: the lab never solves, so it does not
        # load numba (docs/tests.md).
        self.state = LabState(self.model.frames(self.home)[-1, :3, 3])
        self._errors = ErrorHistory(time.monotonic())
        self._last_readout = 0.0
        self._last_path: JointTrajectory | None = None

        self._io = MutuallyExclusiveCallbackGroup()
        self._calls = ReentrantCallbackGroup()
        self._ticks = MutuallyExclusiveCallbackGroup()
        self._hop = ExecutorHop(self, self._calls)
        self._work = ThreadPoolExecutor(max_workers=2, thread_name_prefix='lab')
        self.pipeline = Pipeline(self, {key: values[key] for key in NODE_NAMES}, self._calls)
        try:
            check_listen(values['host'])
            self.server = start_server(values['host'], values['port'], f'arm lab: {self.arm}')
        except ServerError as error:
            raise StartupError(str(error)) from None
        self._mesh_paths = search_paths(values['urdf_file'])
        try:
            self.view = self._arm_view(self.model, geometry)
        except (ValueError, KeyError) as error:
            self.server.stop()
            raise StartupError(f'the URDF cannot be drawn: {error}') from None
        self.view.show(self.home)
        self.scene = LabScene(self.server, workspace.shoulder, workspace.max_reach,
                              workspace.min_reach, floor_of(geometry), obstacle_of(geometry),
                              self.state.target()[0])
        self.scene.target.on_update(lambda _event: self._on_drag())
        self.controls = arm_controls(self.model, config)
        self._parameter_keys = {control.target: control.key for control in self.controls
                                if control.target}
        self.layout = LabLayout(self.server.gui, self.controls,
                                length_controls(config), self._apply, self._report,
                                self.names,
                                joint_map=default_search_joints(self.model) is not None,
                                damping_sweep='damping_sweep' in config.experiments,
                                joint_map_note=texts.joint_map_note(self.model))
        self.layout.arm_note.content = texts.arm_note(self.view.capsules, self.view.reason)
        self.layout.wire_buttons({
            'plan_and_go': self._plan_and_go, 'home': self._go_home,
            'cycle_start': lambda: self._trigger('cycle_start'),
            'cycle_stop': self._pause_cycle, 'refresh_joint_map': self._refresh_joint_map,
            'damping_sweep': self._damping_sweep, 'apply_lengths': self._apply_lengths},
            lambda outcome: self.state.fail(outcome.message))
        self._create_ros_io(values)
        host = values['host']
        self.get_logger().info(f'{self.arm}: browser lab at http://{host}:'
                               f'{self.server.get_port()}{texts.exposure_note(host)}')
        self._background(self.pipeline.sync, self._parameter_keys, self.layout.show,
                         self._timeout)

    def _background(self, function: Callable[..., object], *args: object) -> None:
        """Run ``function(*args)`` on the lab's work threads; an exception is logged, not
        kept in a future nobody reads."""
        def report(future: Future) -> None:
            if not future.cancelled() and future.exception() is not None:
                error = future.exception()
                self.get_logger().error(f'{function.__name__} raised {type(error).__name__}: '
                                        f'{error}', throttle_duration_sec=5.0)
        self._work.submit(function, *args).add_done_callback(report)

    def _use_model(self, model: ArmModel) -> None:
        """Draw the arm and its reach with new link lengths (on the render tick, which owns
        the scene)."""
        # Same scene names: the old arm goes first, or removing it would remove the new one.
        self.view.remove()
        workspace = workspace_from_model(model)
        geometry = _safety_geometry(model, self._config, self.arm)
        self.view = self._arm_view(model, geometry)
        self.model, self.workspace = model, workspace
        self.scene.set_reach(workspace.shoulder, workspace.max_reach, workspace.min_reach,
                             floor_of(geometry))
        self.scene_feed.use_model(model)
        self.layout.arm_note.content = texts.arm_note(self.view.capsules, self.view.reason)
        self.get_logger().info(f'arm drawn with the new link lengths: reach '
                               f'{workspace.max_reach:.3f} m')

    def _arm_view(self, model: ArmModel, geometry: SafetyGeometry | None) -> ArmView:
        """``arm_view_of`` (capsules logged with the reason, once per drawing)."""
        view = arm_view_of(self.server, model, geometry, self.arm, self._mesh_paths)
        if view.capsules:
            self.get_logger().warning(f'arm drawn as capsules (its safety geometry): '
                                      f'{view.reason}')
        return view

    # ------------------------------------------------------------------ parameters
    def _apply_parameters(self, values: dict[str, Any]) -> None:
        for timer, rate in ((self._render_timer, 'render_rate'),
                            (self._stream_timer, 'target_rate')):
            if timer.timer_period_ns != int(1e9 / values[rate]):
                timer.timer_period_ns = int(1e9 / values[rate])

    @property
    def _timeout(self) -> float:
        return float(self.get_parameter('service_timeout').value)

    # ------------------------------------------------------------------ ROS wiring
    def _create_ros_io(self, values: dict[str, Any]) -> None:
        sub = partial(self.create_subscription, callback_group=self._io)
        self.joint_states = subscribe_joint_states(self, self._on_joint_states,
                                                   callback_group=self._io)
        sub(ArmInfo, 'arm_info', self._on_arm_info, LATCHED_QOS)
        sub(IKStatus, 'ik_status', self._on_ik_status, 10)
        # The scene and what safety_monitor says of the pose: floor, ball, collisions.
        self.scene_feed = LabSceneFeed(self, self.state, self.model, self._mesh_paths, self._io,
                                       lambda: self._background(self._refresh_joint_map))
        # Judged per joint_states message: batched as they are.
        self.safety_status = BatchedSubscription(
            self, SafetyStatus, 'safety_status', self.scene_feed.on_safety_status,
            QoSProfile(depth=10), STATE_BATCH_PERIOD, self._io)
        sub(PlannedPath, 'plan', self._on_plan, LATCHED_QOS)
        sub(BallState, 'ball_state', self._on_ball_state, LATCHED_QOS)
        sub(TargetStatus, 'target_status', self._on_target_status, TARGET_STATUS_QOS)
        sub(ExecutorStatus, f'{values["executor_node"]}/status', self._on_executor_status,
            LATCHED_QOS)
        sub(ParameterEvent, '/parameter_events', self._on_parameter_event, 100)
        self.target_publisher = self.create_publisher(PointStamped, 'target', 10)
        self.shown_publisher = self.create_publisher(JointState, '~/shown_joint_states', 10)
        self._render_timer = self.create_timer(1.0 / values['render_rate'], self._render,
                                               callback_group=self._ticks)
        self._stream_timer = self.create_timer(1.0 / values['target_rate'],
                                               self._stream_target, callback_group=self._ticks)
        if values['control_service']:
            self.create_service(SetParameters, '~/set_controls', self._on_set_controls,
                                callback_group=MutuallyExclusiveCallbackGroup())

    # ------------------------------------------------------------------ subscriptions
    def _on_joint_states(self, message: JointState) -> None:
        q, reason = positions_by_name(self.names, message.name, message.position)
        if q is None:
            self.state.rejected(reason)
            self.get_logger().warning(f'joint_states ignored: {reason}',
                                      throttle_duration_sec=2.0)
        elif self.state.measured(q) and self.layout.joint_map is not None:
            # A map from the start, not "no map yet" until the first move ends.
            self._background(self._first_joint_map)

    def _on_arm_info(self, message: ArmInfo) -> None:
        names = list(message.home.name) or list(self.names)
        home, reason = positions_by_name(self.names, names, message.home.position)
        if home is not None:
            self.home = home

    def _on_ik_status(self, message: IKStatus) -> None:
        self.state.record_ik(message.solver, message.branch, message.error_code.val,
                             message.message, message.position_error, message.iterations)

    def _on_plan(self, message: PlannedPath) -> None:
        self.scene.set_plan(plan_drawing_from_message(message))

    def _on_ball_state(self, message: BallState) -> None:
        position = message.position
        self.state.update_scene('ball', (position.x, position.y, position.z), message.radius,
                                message.attached)

    def _on_target_status(self, message: TargetStatus) -> None:
        started = message.state == TargetStatus.STARTED
        self.state.cycle_report(
            texts.cycle_line(TARGET_STATES.get(message.state, str(message.state)),
                             message.sequence, message.cycle, message.phase, message.source,
                             message.message),
            message.source == 'sequence', started or message.state == TargetStatus.SUCCEEDED,
            np.array([message.target.x, message.target.y, message.target.z])
            if started and message.step_kind in ('move', 'target') else None)
        self.layout.cycle_status.content = texts.cycle_markdown(self.state.cycle_running,
                                                                self.state.texts['cycle'])

    def _on_executor_status(self, message: ExecutorStatus) -> None:
        self.state.texts['executor'] = texts.status_text(
            EXECUTOR_STATES.get(message.state, str(message.state)), message.message)

    def _on_parameter_event(self, event: ParameterEvent) -> None:
        owner = self.pipeline.owner_of(event.node)
        if owner is None:
            return
        for parameter in list(event.changed_parameters) + list(event.new_parameters):
            key = self._parameter_keys.get((owner, parameter.name))
            if key:
                self.layout.show(key, parameter_value_to_python(parameter.value))

    # ------------------------------------------------------------------ panel changes
    def _apply(self, control: Control, value: Any) -> Outcome:
        """One accepted input change: the owning node's parameter, or the lab's own."""
        if control.target is None:
            if control.key == 'orientation':
                self.scene.set_target_rotations(value == 'full pose')
            if control.key == 'live_follow' and not value:
                self.state.track(None)
            note = self._take_over() if control.key == 'live_follow' and value else ''
            return Outcome(True, f'{control.label}: {value}{note}')
        owner, parameter = control.target
        ok, message = self.pipeline.remotes[owner].set(parameter, value, self._timeout)
        follow = follow_parameter(control.key, value)
        if ok and follow:
            ok, answer = self.pipeline.remotes[EXECUTOR].set(follow, value, self._timeout)
            message = f'{message}; {answer}'
        return Outcome(ok, message)

    def _report(self, control: Control, outcome: Outcome) -> None:
        self.layout.show_outcome(outcome)
        if not outcome.ok:
            self.state.fail(outcome.message)
            self.get_logger().info(f'panel: {control.key}: {outcome.message}')

    # ------------------------------------------------------------------ rendering
    def _render(self) -> None:
        drawn = self.state.take_render()
        q, fresh, updates = drawn.q, drawn.fresh, drawn.updates
        for kind, draw in (('obstacle_place', self.scene.place_obstacle),
                           ('obstacle', self.scene.set_obstacle), ('ball', self.scene.set_ball),
                           ('objects', self.scene.objects.show)):
            if kind in updates:
                draw(*updates[kind])
        if 'model' in updates:
            self._use_model(*updates['model'])
            fresh = True
        self.scene.set_contacts(drawn.contacts)      # redrawn only when they changed
        self.scene.objects.set_collision(drawn.collision.objects,
                                         self.scene_feed.marks.marks(drawn.collision, q))
        if q is None:
            return
        if fresh and self.view.show(q):
            shown = JointState(name=list(self.names), position=[float(v) for v in q])
            shown.header.stamp = self.get_clock().now().to_msg()
            self.shown_publisher.publish(shown)
        now = time.monotonic()
        tip = None if drawn.tracked is None else self.model.frames(q)[-1, :3, 3]
        self._errors.update(now, drawn.tracked, tip,
                            float(self.get_parameter('error_history').value))
        if now - self._last_readout < READOUT_PERIOD:
            return
        self._last_readout = now
        # The full readout (Jacobian, SVD) only when it is shown, not on every render tick.
        readout = pose_metrics(self.model, self.workspace, q)
        ik, failure, rejected, reason = self.state.readout()
        self.layout.readouts.content = texts.table(texts.readout_rows(
            readout, drawn.tracked, ik, self.state.texts['executor'],
            self.state.texts['safety'], failure, rejected, reason, self.state.texts['collision']))
        errors = self._errors.arrays()
        if errors is not None:
            self.layout.plot(self.layout.error_plot, *errors)

    # ------------------------------------------------------------------ control service
    def _on_set_controls(self, request: SetParameters.Request,
                         response: SetParameters.Response) -> SetParameters.Response:
        for parameter in request.parameters:
            try:
                outcome = self.set_control(parameter.name,
                                           parameter_value_to_python(parameter.value))
            except Exception as error:  # noqa: BLE001 - answer, never stop serving
                outcome = Outcome(False, f'{type(error).__name__}: {error}')
            response.results.append(SetParametersResult(successful=outcome.ok,
                                                        reason=outcome.message))
        return response

    def set_control(self, key: str, value: Any) -> Outcome:
        """What a browser user does with input or button ``key`` (the target: [x, y, z])."""
        return self.layout.set_control(key, value, self.set_target)

    def destroy_node(self) -> None:
        self._work.shutdown(wait=False, cancel_futures=True)
        server = getattr(self, 'server', None)
        if server is not None:
            server.stop()
        super().destroy_node()


def _safety_geometry(model: ArmModel, config: dict, arm: str) -> SafetyGeometry | None:
    """Floor and obstacle of the arm's YAML (None when it has no usable safety section)."""
    try:
        return safety_geometry_of(model, config, arm)
    except StartupError:
        return None


def main(args: list[str] | None = None) -> None:
    sys.exit(run(LabViewer, args, threads=EXECUTOR_THREADS))


if __name__ == '__main__':
    main()
