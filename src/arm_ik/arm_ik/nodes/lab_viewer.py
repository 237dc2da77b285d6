"""lab_viewer: the arm in a browser (viser), with a panel that drives the running pipeline.

An ordinary client of the other nodes: it subscribes to what they publish, calls their
services and the executor's action, and sets their parameters through their own
set_parameters services (so each node validates, and a refusal comes back with its reason).
It serves http://127.0.0.1:<port> only, unless ``host`` says otherwise.

Parameters: robot_description, arm, base_frame, tip_frame, urdf_file, host, port,
control_service and the names of the pipeline's nodes (read-only); render_rate, target_rate,
error_history, service_timeout.
Subscribes (relative, in the arm's namespace): joint_states, arm_info, ik_status,
safety_status, planned_path, ball_state, target_status, trajectory_executor/status and
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

from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
import socket
import sys
import threading
import time
from typing import Any

from geometry_msgs.msg import PointStamped
import numpy as np
from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterEvent,
    SetParametersResult,
)
from rcl_interfaces.srv import SetParameters
from rclpy.action import ActionClient
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.node import Node
from rclpy.parameter import Parameter, parameter_value_to_python
from rclpy.qos import DurabilityPolicy, qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import Marker, MarkerArray

from arm_ik.client import SERVICE_QOS
from arm_ik.kinematics.arm import default_safety_section
from arm_ik.kinematics.description import home_from_config
from arm_ik.kinematics.joint_state import positions_by_name
from arm_ik.kinematics.model import ArmModel
from arm_ik.kinematics.motion import laws
from arm_ik.kinematics.safety.config import parse_safety_config
from arm_ik.kinematics.safety.geometry import SafetyGeometry
from arm_ik.kinematics.safety.planning import default_search_joints
from arm_ik.kinematics.solvers.base import workspace_from_model
from arm_ik.kinematics.visual import pose_metrics
from arm_ik.lab import checks, texts
from arm_ik.lab.controls import (
    arm_controls,
    Control,
    EXECUTOR,
    IK_SERVER,
    length_controls,
    SAFETY,
)
from arm_ik.lab.layout import LabLayout
from arm_ik.lab.panel import Outcome
from arm_ik.lab.scene import LabScene
from arm_ik.lab.urdf_view import ArmView, search_paths
from arm_ik.middleware import HandoffExecutor
from arm_ik.nodes.common import (
    constant_names,
    declare_arm_model,
    describe,
    LATCHED_QOS,
    run,
    safety_geometry_of,
    StartupError,
)
from arm_ik.nodes.lab_moves import LabMoves
from arm_ik.nodes.lab_remote import ExecutorHop, RemoteParameters
from arm_interfaces.action import MoveToTarget
from arm_interfaces.msg import (
    ArmInfo,
    BallState,
    ExecutorStatus,
    IKStatus,
    SafetyStatus,
    TargetStatus,
)
from arm_interfaces.srv import GetJointMap, SolveIK

EXECUTOR_THREADS = 4
STATUS_QOS = QoSProfile(depth=20, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)
READOUT_PERIOD = 0.25      # s between readout and error-plot refreshes (each is a message)
EXECUTOR_STATES = constant_names(ExecutorStatus)
SAFETY_VERDICTS = constant_names(SafetyStatus)
TARGET_STATES = constant_names(TargetStatus)


def _range(low: float, high: float) -> FloatingPointRange:
    return FloatingPointRange(from_value=low, to_value=high, step=0.0)


class LabViewer(LabMoves, Node):
    """Serves the browser lab of one arm; see the module docstring."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('lab_viewer', **kwargs)
        self.arm, self.model, config = declare_arm_model(self)
        try:
            self._declare_parameters()
        except (InvalidParameterTypeException, InvalidParameterValueException) as error:
            # e.g. port:=70000 or render_rate:=20 (an integer): say so, no traceback.
            raise StartupError(f'bad parameter: {error}') from None
        host, port = self.get_parameter('host').value, int(self.get_parameter('port').value)
        _check_listen(host)
        self.names = tuple(self.model.joint_names)
        workspace = workspace_from_model(self.model)
        self.workspace = workspace
        self.home = np.array(home_from_config(self.model, config))
        self._config = config
        geometry = _safety_geometry(self.model, config, self.arm)

        self._lock = threading.Lock()
        self._measured: np.ndarray | None = None      # last checked joint_states, rad
        self._new_pose = False
        self._rejected = 0
        self._reject_reason = ''
        self._ik: dict[str, Any] = {}
        self._failure = ''
        self._target = self.model.fk(self.home)[:3, 3]
        self._target_wxyz = np.array([1.0, 0.0, 0.0, 0.0])
        self._tracked: np.ndarray | None = None       # target the arm is chasing, m
        self._errors: deque[tuple[float, float]] = deque()
        self._started = time.monotonic()
        self._last_readout = 0.0
        self._preview_busy = False
        self._preview_again = False
        self._move_contacts: list[np.ndarray] = []
        self._status_contacts: list[np.ndarray] = []
        self._last_path: JointTrajectory | None = None
        self._texts = {'executor': '-', 'safety': '-', 'cycle': ''}
        self._cycle_running = False     # target_input's scripted cycle, from target_status
        self._map_pending = True        # the first joint map, once joint_states come
        self._scene_updates: dict[str, tuple] = {}

        self._io = MutuallyExclusiveCallbackGroup()
        self._calls = ReentrantCallbackGroup()
        self._ticks = MutuallyExclusiveCallbackGroup()
        self._hop = ExecutorHop(self, self._calls)
        self._work = ThreadPoolExecutor(max_workers=2, thread_name_prefix='lab')
        self._create_clients()

        try:
            import viser
            import yourdfpy  # noqa: F401  (ViserUrdf draws the URDF through it)
        except ImportError as error:
            raise StartupError(f'{error.name} is not installed: pip install viser==1.1.1 '
                               'yourdfpy==0.0.60 (pinned in requirements/dev.txt)') from None
        self.server = viser.ViserServer(host=host, port=port, label=f'arm lab: {self.arm}',
                                        verbose=False)
        # The share button would tunnel this page through viser's public relay: never.
        self.server.request_share_url = _share_refused
        self.server.gui.configure_theme(control_width='large', show_share_button=False,
                                        brand_color=(38, 89, 191))
        self._mesh_paths = search_paths(str(self.get_parameter('urdf_file').value))
        try:
            self.view = self._arm_view(self.model, geometry)
        except (ValueError, KeyError) as error:
            self.server.stop()
            raise StartupError(f'the URDF cannot be drawn: {error}') from None
        self.view.show(self.home)
        self.scene = LabScene(self.server, workspace.shoulder, workspace.max_reach,
                              workspace.min_reach,
                              geometry.floor_z if geometry and geometry.floor_enabled else None,
                              (geometry.obstacle_center, geometry.config.obstacle.radius)
                              if geometry and geometry.obstacle_enabled else None,
                              self._target)
        self.scene.target.on_update(lambda _event: self._on_drag())
        self.controls = arm_controls(self.model, config)
        self._parameter_keys = {(target[0], target[1]): control.key
                                for control in self.controls if control.target
                                for target in [control.target]}
        self.layout = LabLayout(self.server.gui, self.controls,
                                length_controls(config), self._apply, self._report,
                                self.names,
                                joint_map=default_search_joints(self.model) is not None,
                                damping_sweep='damping_sweep' in config.experiments,
                                joint_map_note=texts.joint_map_note(self.model))
        self._note_arm_drawing()
        self._wire_buttons()
        self._create_ros_io()
        url = f'http://{host}:{self.server.get_port()}'
        self.get_logger().info(f'{self.arm}: browser lab at {url}'
                               + ('' if checks.is_loopback(host) else
                                  f' (host {host} is reachable from other machines: anyone '
                                  'who can open it can move the arm)'))
        self._background(self._sync_from_nodes)

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
                             geometry.floor_z if geometry and geometry.floor_enabled else None)
        self._note_arm_drawing()
        self.get_logger().info(f'arm drawn with the new link lengths: reach '
                               f'{workspace.max_reach:.3f} m')

    def _arm_view(self, model: ArmModel, geometry: SafetyGeometry | None) -> ArmView:
        """The arm drawn from its URDF meshes, or as capsules when they cannot be shown
        (logged with the reason, once per drawing)."""
        capsules = geometry or SafetyGeometry(model, parse_safety_config(
            default_safety_section(model), self.arm))
        view = ArmView(self.server, model.urdf, self.names, capsules, paths=self._mesh_paths)
        if view.capsules:
            self.get_logger().warning(f'arm drawn as capsules (its safety geometry): '
                                      f'{view.reason}')
        return view

    def _note_arm_drawing(self) -> None:
        """Say on the page, not only in the log, when the arm is capsules and why."""
        self.layout.arm_note.content = (
            f'*The arm is drawn as the capsules of its safety geometry:* {self.view.reason}.'
            if self.view.capsules else '')

    # ------------------------------------------------------------------ parameters
    def _declare_parameters(self) -> None:
        declare = self.declare_parameter
        declare('host', '127.0.0.1', describe(
            'address the web server listens on; 127.0.0.1: this machine only (0.0.0.0 would '
            'let anyone on the network drive the arm)', read_only=True))
        declare('port', 8080, describe(
            'TCP port of the web server (0: any free port; a port in use: the next free one, '
            'logged)', read_only=True,
            integer_range=[IntegerRange(from_value=0, to_value=65535, step=1)]))
        declare('urdf_file', '', describe(
            'path of the URDF file robot_description came from, if any: package:// meshes '
            'are looked for in its folder and its parents (then AMENT_PREFIX_PATH and '
            'ROS_PACKAGE_PATH); meshes that are not found are drawn as capsules',
            read_only=True))
        declare('control_service', False, describe(
            'serve ~/set_controls (rcl_interfaces/SetParameters) to change panel inputs and '
            'press buttons by key, as a browser user would (scripts, tests)', read_only=True))
        for key, default in (('ik_node', IK_SERVER), ('executor_node', EXECUTOR),
                             ('safety_node', SAFETY), ('target_node', 'target_input'),
                             ('info_node', 'arm_info'), ('markers_node', 'markers'),
                             ('state_publisher_node', 'robot_state_publisher')):
            declare(key, default, describe(
                f"name of the pipeline's {default} node in this namespace", read_only=True))
        declare('render_rate', 20.0, describe(
            'most arm poses sent to the browser per second, Hz',
            floating_point_range=[_range(1.0, 60.0)]))
        declare('target_rate', 20.0, describe(
            'rate of the live target stream while "Live follow" is on, Hz (above the '
            "executor watchdog's 1 / watchdog_timeout)",
            floating_point_range=[_range(1.0, 100.0)]))
        declare('error_history', 30.0, describe(
            'length of the live tracking-error plot, s', floating_point_range=[_range(1.0,
                                                                                   600.0)]))
        declare('service_timeout', 2.0, describe(
            "longest wait for a node's answer (parameters, services), s",
            floating_point_range=[_range(0.05, 30.0)]))
        reason = checks.host_reason(self.get_parameter('host').value)
        if reason:
            raise StartupError(f'parameter host: {reason}')
        for name in ('render_rate', 'target_rate', 'error_history', 'service_timeout'):
            reason = checks.positive_reason(self.get_parameter(name).value, name)
            if reason:
                raise StartupError(f'parameter {reason}')
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)

    def _validate_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        for parameter in parameters:
            if parameter.name in ('render_rate', 'target_rate', 'error_history',
                                  'service_timeout'):
                reason = checks.positive_reason(parameter.value, parameter.name)
                if reason:
                    return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    def _apply_parameters(self, parameters: list[Parameter]) -> None:
        names = {parameter.name for parameter in parameters}
        if 'render_rate' in names:
            self._render_timer.timer_period_ns = int(1e9 / self.get_parameter(
                'render_rate').value)
        if 'target_rate' in names:
            self._stream_timer.timer_period_ns = int(1e9 / self.get_parameter(
                'target_rate').value)

    @property
    def _timeout(self) -> float:
        return float(self.get_parameter('service_timeout').value)

    # ------------------------------------------------------------------ ROS wiring
    def _node_name(self, key: str) -> str:
        return str(self.get_parameter(key).value)

    def _create_clients(self) -> None:
        ik, executor = self._node_name('ik_node'), self._node_name('executor_node')
        safety, target = self._node_name('safety_node'), self._node_name('target_node')
        self.remotes = {IK_SERVER: RemoteParameters(self, ik, self._calls),
                        EXECUTOR: RemoteParameters(self, executor, self._calls),
                        SAFETY: RemoteParameters(self, safety, self._calls),
                        'arm_info': RemoteParameters(self, self._node_name('info_node'),
                                                     self._calls)}
        self.ik_client = self.create_client(SolveIK, f'{ik}/solve_ik', qos_profile=SERVICE_QOS,
                                            callback_group=self._calls)
        self.map_client = self.create_client(GetJointMap, f'{safety}/joint_map',
                                             callback_group=self._calls)
        self.cycle_clients = {
            'cycle_start': self.create_client(Trigger, f'{target}/run_cycle',
                                              callback_group=self._calls),
            'cycle_stop': self.create_client(Trigger, f'{target}/stop_cycle',
                                             callback_group=self._calls)}
        self.move_client = ActionClient(self, MoveToTarget, f'{executor}/move_to_target',
                                        callback_group=self._calls)
        self._full_names = {key: self._qualified(remote.name)
                            for key, remote in self.remotes.items()}
        # Every node that holds robot_description, executor first (it refuses while the arm
        # moves, before anything changed); (remote, required): the lab cannot work without
        # the first three; the others are skipped when they do not run (robot_state_publisher
        # and RViz only with a ROS install).
        self.description_holders = [
            (self.remotes[EXECUTOR], True), (self.remotes[IK_SERVER], True),
            (self.remotes[SAFETY], True), (self.remotes['arm_info'], False),
            (RemoteParameters(self, target, self._calls), False),
            (RemoteParameters(self, self._node_name('markers_node'), self._calls), False),
            (RemoteParameters(self, self._node_name('state_publisher_node'), self._calls),
             False)]

    def _qualified(self, name: str) -> str:
        namespace = self.get_namespace().rstrip('/')
        return name if name.startswith('/') else f'{namespace}/{name}'

    def _create_ros_io(self) -> None:
        sub = self.create_subscription
        sub(JointState, 'joint_states', self._on_joint_states, qos_profile_sensor_data,
            callback_group=self._io)
        sub(ArmInfo, 'arm_info', self._on_arm_info, LATCHED_QOS, callback_group=self._io)
        sub(IKStatus, 'ik_status', self._on_ik_status, 10, callback_group=self._io)
        sub(SafetyStatus, 'safety_status', self._on_safety_status, 10, callback_group=self._io)
        sub(MarkerArray, 'planned_path', self._on_planned_path, LATCHED_QOS,
            callback_group=self._io)
        sub(BallState, 'ball_state', self._on_ball_state, LATCHED_QOS, callback_group=self._io)
        sub(TargetStatus, 'target_status', self._on_target_status, STATUS_QOS,
            callback_group=self._io)
        sub(ExecutorStatus, f'{self._node_name("executor_node")}/status',
            self._on_executor_status, LATCHED_QOS, callback_group=self._io)
        sub(ParameterEvent, '/parameter_events', self._on_parameter_event, 100,
            callback_group=self._io)
        self.target_publisher = self.create_publisher(PointStamped, 'target', 10)
        self.shown_publisher = self.create_publisher(JointState, '~/shown_joint_states', 10)
        self._render_timer = self.create_timer(
            1.0 / self.get_parameter('render_rate').value, self._render,
            callback_group=self._ticks)
        self._stream_timer = self.create_timer(
            1.0 / self.get_parameter('target_rate').value, self._stream_target,
            callback_group=self._ticks)
        if self.get_parameter('control_service').value:
            self.create_service(SetParameters, '~/set_controls', self._on_set_controls,
                                callback_group=MutuallyExclusiveCallbackGroup())

    # ------------------------------------------------------------------ subscriptions
    def _on_joint_states(self, message: JointState) -> None:
        q, reason = positions_by_name(self.names, message.name, message.position)
        first_map = False
        with self._lock:
            if q is None:
                self._rejected += 1
                self._reject_reason = reason
            else:
                self._measured, self._new_pose = q, True
                first_map, self._map_pending = self._map_pending, False
        if q is not None and first_map and self.layout.joint_map is not None:
            # A map from the start, not "no map yet" until the first move ends.
            self._background(self._first_joint_map)
        if q is None:
            self.get_logger().warning(f'joint_states ignored: {reason}',
                                      throttle_duration_sec=2.0)

    def _on_arm_info(self, message: ArmInfo) -> None:
        names = list(message.home.name) or list(self.names)
        home, reason = positions_by_name(self.names, names, message.home.position)
        if home is not None:
            self.home = home

    def _on_ik_status(self, message: IKStatus) -> None:
        self._record_ik(message.solver, message.branch, message.error_code.val,
                        message.message, message.position_error, message.iterations)

    def _record_ik(self, solver: str, branch: str, code: int, text: str, error: float,
                   iterations: int) -> None:
        with self._lock:
            self._ik = {'solver': solver, 'branch': branch, 'code': code, 'error': error,
                        'iterations': iterations}
            if code != 0:
                self._failure = f'IK: {text}'

    def _on_safety_status(self, message: SafetyStatus) -> None:
        name = SAFETY_VERDICTS.get(message.verdict, str(message.verdict))
        self._texts['safety'] = name if message.verdict == SafetyStatus.SAFE else \
            f'{name}: {message.message}'
        if message.verdict in (SafetyStatus.STALE, SafetyStatus.INVALID_INPUT):
            return
        touching = message.verdict == SafetyStatus.OBSTACLE_CONTACT or \
            any(message.obstacle_contact)
        points = [np.array([p.x, p.y, p.z]) for p in message.contact_points]
        # Drawn at the render rate (this comes with every joint_states message).
        with self._lock:
            self._scene_updates['obstacle'] = (message.obstacle_radius, touching)
            self._status_contacts = points

    def _on_planned_path(self, message: MarkerArray) -> None:
        tips, ghosts = None, []
        for marker in message.markers:
            if marker.action == Marker.DELETEALL:
                tips, ghosts = [], []
            elif marker.ns in ('tip_path',) and marker.type == Marker.LINE_STRIP:
                tips = [(p.x, p.y, p.z) for p in marker.points]
            elif marker.ns == 'ghosts' and marker.type == Marker.LINE_STRIP:
                ghosts.append([(p.x, p.y, p.z) for p in marker.points])
        if tips is not None:
            self.scene.set_path(tips)
        self.scene.set_ghosts(ghosts)

    def _on_ball_state(self, message: BallState) -> None:
        position = message.position
        with self._lock:
            self._scene_updates['ball'] = ((position.x, position.y, position.z),
                                           message.radius, message.attached)

    def _on_target_status(self, message: TargetStatus) -> None:
        state = TARGET_STATES.get(message.state, str(message.state))
        where = f'{message.sequence} cycle {message.cycle}, {message.phase}' \
            if message.sequence else message.source
        self._texts['cycle'] = f'**{state}** ({where}): {message.message}'
        if message.source == 'sequence':
            self._cycle_running = message.state in (TargetStatus.STARTED,
                                                    TargetStatus.SUCCEEDED)
        if message.state == TargetStatus.STARTED and message.step_kind in ('move', 'target'):
            # A move of target_input (its cycle, a click): the live error plot follows it
            # too, not only the panel's own moves.
            point = np.array([message.target.x, message.target.y, message.target.z])
            if np.all(np.isfinite(point)):
                with self._lock:
                    self._tracked = point
        self.layout.cycle_status.content = texts.cycle_markdown(self._cycle_running,
                                                                self._texts['cycle'])

    def _on_executor_status(self, message: ExecutorStatus) -> None:
        state = EXECUTOR_STATES.get(message.state, str(message.state))
        self._texts['executor'] = f'{state}' + (f': {message.message}' if message.message
                                                else '')

    def _on_parameter_event(self, event: ParameterEvent) -> None:
        owner = next((key for key, name in self._full_names.items() if name == event.node),
                     None)
        if owner is None:
            return
        for parameter in list(event.changed_parameters) + list(event.new_parameters):
            key = self._parameter_keys.get((owner, parameter.name))
            panel = self.layout.panel_of(key) if key else None
            if panel is not None:
                panel.show(key, parameter_value_to_python(parameter.value))

    def _sync_from_nodes(self) -> None:
        """Show the nodes' own values once they answer (they may start after the lab)."""
        pending = {owner for owner in (IK_SERVER, EXECUTOR, SAFETY)}
        deadline = time.monotonic() + 60.0
        while pending and time.monotonic() < deadline and self.context.ok():
            for owner in list(pending):
                remote = self.remotes[owner]
                if not remote.ready:
                    continue
                wanted = {parameter: key for (node, parameter), key in
                          self._parameter_keys.items() if node == owner}
                values = remote.get(list(wanted), self._timeout)
                for parameter, value in values.items():
                    key = wanted[parameter]
                    panel = self.layout.panel_of(key)
                    if panel is not None:
                        panel.show(key, value)
                if values:
                    pending.discard(owner)
            time.sleep(0.5)

    # ------------------------------------------------------------------ panel changes
    def _apply(self, control: Control, value: Any) -> Outcome:
        """One accepted input change: the owning node's parameter, or the lab's own."""
        if control.target is None:
            if control.key == 'orientation':
                self.scene.set_target_rotations(value == 'full pose')
            if control.key == 'live_follow' and not value:
                with self._lock:
                    self._tracked = None
            note = self._take_over() if control.key == 'live_follow' and value else ''
            return Outcome(True, f'{control.label}: {value}{note}')
        owner, parameter = control.target
        remote = self.remotes[owner]
        ok, message = remote.set(parameter, value, self._timeout)
        # Live follow runs on the executor with parameters of its own: the same choice there
        # (a law that cannot stream, min_jerk or linear, leaves follow_law as it is).
        follow = {'solver': 'follow_solver', 'motion_law': 'follow_law'}.get(control.key)
        if ok and follow and (follow != 'follow_law' or value in laws.STREAMING_LAWS):
            ok, answer = self.remotes[EXECUTOR].set(follow, value, self._timeout)
            message = f'{message}; {answer}'
        return Outcome(ok, message)

    def _report(self, control: Control, outcome: Outcome) -> None:
        mark = '✓' if outcome.ok else '✗'
        self.layout.messages.content = f'{mark} {outcome.message}'
        if not outcome.ok:
            with self._lock:
                self._failure = outcome.message
            self.get_logger().info(f'panel: {control.key}: {outcome.message}')

    def _wire_buttons(self) -> None:
        actions = {'plan_and_go': self._plan_and_go, 'home': self._go_home,
                   'cycle_start': lambda: self._trigger('cycle_start'),
                   'cycle_stop': self._pause_cycle,
                   'refresh_joint_map': self._refresh_joint_map,
                   'damping_sweep': self._damping_sweep,
                   'apply_lengths': self._apply_lengths}
        self._button_outcomes: dict[str, Outcome] = {}
        for key, handle in self.layout.buttons.items():
            handle.on_click(lambda _event, key=key: self._press(key, actions[key]))

    def _press(self, key: str, action) -> None:
        try:
            outcome = action()
        except Exception as error:  # noqa: BLE001 - a failing button must not stop the lab
            outcome = Outcome(False, f'{key} failed: {type(error).__name__}: {error}')
        self._button_outcomes[key] = outcome
        self.layout.messages.content = f'{"✓" if outcome.ok else "✗"} {outcome.message}'
        if not outcome.ok:
            with self._lock:
                self._failure = outcome.message

    # ------------------------------------------------------------------ rendering
    def _render(self) -> None:
        with self._lock:
            q, fresh = self._measured, self._new_pose
            self._new_pose = False
            tracked = self._tracked
            updates, self._scene_updates = self._scene_updates, {}
            contacts = self._move_contacts + self._status_contacts
        if 'obstacle' in updates:
            self.scene.set_obstacle(*updates['obstacle'])
        if 'ball' in updates:
            self.scene.set_ball(*updates['ball'])
        if 'model' in updates:
            self._use_model(*updates['model'])
            fresh = True
        self.scene.set_contacts(contacts)      # redrawn only when they changed
        if q is None:
            return
        if fresh and self.view.show(q):
            shown = JointState(name=list(self.names), position=[float(v) for v in q])
            shown.header.stamp = self.get_clock().now().to_msg()
            self.shown_publisher.publish(shown)
        now = time.monotonic()
        if tracked is not None:
            tip = self.model.fk(q)[:3, 3]
            self._errors.append((now - self._started,
                                 float(np.linalg.norm(tracked - tip)) * 1000.0))
        history = float(self.get_parameter('error_history').value)
        while self._errors and self._errors[0][0] < now - self._started - history:
            self._errors.popleft()
        if now - self._last_readout < READOUT_PERIOD:
            return
        self._last_readout = now
        # The full readout (Jacobian, SVD) only when it is shown, not on every render tick.
        readout = pose_metrics(self.model, self.workspace, q)
        self.layout.readouts.content = self._readout_text(readout, tracked)
        if len(self._errors) >= 2:
            times, errors = np.array(self._errors).T
            self.layout.plot(self.layout.error_plot, times, errors)

    def _readout_text(self, readout, tracked: np.ndarray | None) -> str:
        with self._lock:
            ik, failure = dict(self._ik), self._failure
            rejected, reason = self._rejected, self._reject_reason
        return texts.table(texts.readout_rows(readout, tracked, ik, self._texts['executor'],
                                              self._texts['safety'], failure, rejected,
                                              reason))

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
        if key == 'target':
            position, reason = checks.finite_vector(value if isinstance(value, (list, tuple))
                                                    else [], 3, 'target')
            return Outcome(False, reason) if position is None else self.set_target(position)
        if key in self.layout.buttons:
            self._button_outcomes.pop(key, None)
            self.layout.buttons[key].value = True      # runs its on_click in this thread
            return self._button_outcomes.get(key, Outcome(False, f'{key}: no outcome'))
        panel = self.layout.panel_of(key)
        if panel is None:
            known = [c.key for c in self.controls] + list(self.layout.buttons) + ['target']
            return Outcome(False, f'no control "{key}"; controls: {", ".join(known)}')
        return panel.set(key, value)

    def destroy_node(self) -> None:
        self._work.shutdown(wait=False, cancel_futures=True)
        server = getattr(self, 'server', None)
        if server is not None:
            server.stop()
        super().destroy_node()


def _share_refused(*_args: object, **_kwargs: object) -> None:
    return None


def _check_listen(host: str) -> None:
    """Refuse to start when ``host`` cannot be bound (viser would retry ports forever)."""
    family = socket.AF_INET6 if ':' in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, 0))
        except OSError as error:
            raise StartupError(f'cannot listen on host {host}: {error}') from None


def _safety_geometry(model: ArmModel, config: dict, arm: str) -> SafetyGeometry | None:
    """Floor and obstacle of the arm's YAML (None when it has no usable safety section)."""
    try:
        return safety_geometry_of(model, config, arm)
    except StartupError:
        return None


def main(args: list[str] | None = None) -> None:
    sys.exit(run(LabViewer, args,
                 executor_factory=lambda: HandoffExecutor(num_threads=EXECUTOR_THREADS)))


if __name__ == '__main__':
    main()
