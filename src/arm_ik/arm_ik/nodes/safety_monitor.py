"""safety_monitor: an independent witness of the arm's safety (floor, obstacle), and the
services that check a path or plan a detour before a move.

It judges every ``joint_states`` message it sees, whoever publishes it.

Parameters: arm, base_frame, tip_frame (read-only); robot_description (a new one with the
same joints, e.g. new link lengths, rebuilds the links checked); obstacle_radius (m,
changeable at run time); stale_periods; min_stale_timeout (s); grid_resolution_deg;
contact_sample_rate (Hz); max_point_step (m); marker_rate (Hz); marker_lifetime (s);
scene_file (YAML of scene objects loaded at start-up, all or nothing; read-only);
mesh_search_paths (folders for package:// and relative meshes, separated by ':'; read-only).
Subscribes: ``joint_states`` (sensor_msgs/JointState, sensor-data QoS; names in any order).
Publishes: ``safety_status`` (arm_interfaces/SafetyStatus) per joint_states message, and STALE
when they stop for more than ``stale_periods`` periods; ``safety_markers``
(visualization_msgs/MarkerArray: floor, obstacle, link capsules, contact points); ``scene``
(arm_interfaces/Scene, latched) and ``scene_markers`` (MarkerArray, latched) on every accepted
scene change.
Services: ``~/check_path`` (CheckPath), ``~/plan_detour`` (PlanDetour), ``~/joint_map``
(GetJointMap), ``~/scene/apply`` (ApplySceneObject: add, or replace by id),
``~/scene/remove`` (RemoveSceneObject).

Besides the floor / obstacle verdict (unchanged), every judged pose is checked for
self-collision and scene contact with the URDF's collision shapes (kinematics.collision): the
status says which pairs touch and the closest pair. The scene is the node's own; services
change it whole or not at all, and the joint_states callback checks against a snapshot.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
import math
import sys
import threading
import time

import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import Marker, MarkerArray

from arm_ik.kinematics.arm import ArmConfigError
from arm_ik.kinematics.collision import CollisionChecker, CollisionReport, Scene, SceneError
from arm_ik.kinematics.joint_state import joint_order, positions_by_name
from arm_ik.kinematics.model import ArmModel
from arm_ik.kinematics.safety.config import positive_reason, SafetyConfigError
from arm_ik.kinematics.safety.geometry import PoseCheck, SafetyGeometry, Verdict
from arm_ik.kinematics.safety.paths import check_path, MAX_POINT_STEP
from arm_ik.kinematics.safety.planning import (
    joint_map,
    MAX_RESOLUTION,
    MIN_RESOLUTION,
    plan_detour,
    PlanCode,
)
from arm_ik.middleware import HandoffExecutor
from arm_ik.nodes import marker_messages as draw
from arm_ik.nodes import scene_messages
from arm_ik.nodes.common import (
    arm_of,
    declare_arm_model,
    declare_mesh_search_paths,
    describe,
    DescriptionReload,
    LATCHED_QOS,
    run,
    safety_geometry_of,
    StartupError,
)
from arm_ik.nodes.conversions import checked_seconds, point
from arm_interfaces.msg import JointMap as JointMapMsg
from arm_interfaces.msg import SafetyStatus
from arm_interfaces.msg import Scene as SceneMsg
from arm_interfaces.srv import (
    ApplySceneObject,
    CheckPath,
    GetJointMap,
    PlanDetour,
    RemoveSceneObject,
)

SERVICE_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
EXECUTOR_THREADS = 4
# The stale check runs this often (s); STALE is repeated this often while it lasts (s).
WATCH_PERIOD = 0.02
STALE_REPEAT = 1.0
# Period assumed before two joint_states have arrived (s).
DEFAULT_PERIOD = 0.1
# A check_path request may not ask for more samples than this (memory and time bound).
MAX_PATH_SAMPLES = 2_000_000
# A measured pose this far (rad) past a joint limit is read as on the limit (sensor noise).
MEASURED_LIMIT_SLACK = 1e-3
NUMERIC_PARAMETERS = ('obstacle_radius', 'stale_periods', 'min_stale_timeout',
                      'grid_resolution_deg', 'contact_sample_rate', 'max_point_step',
                      'marker_rate', 'marker_lifetime')


@dataclass(frozen=True)
class Settings:
    """One immutable snapshot of everything the callbacks read; swapped whole on updates."""

    geometry: SafetyGeometry
    stale_periods: float
    min_stale_timeout: float
    resolution: float
    sample_rate: float
    max_point_step: float
    marker_rate: float
    marker_lifetime: float


def parameter_reason(name: str, value: object) -> str:
    """'' when ``value`` is acceptable for parameter ``name``, else why not."""
    reason = positive_reason(value, name)
    if reason:
        return reason
    if name == 'grid_resolution_deg' and not \
            math.degrees(MIN_RESOLUTION) <= value <= math.degrees(MAX_RESOLUTION):
        return (f'grid_resolution_deg is {value} (must be within '
                f'{math.degrees(MIN_RESOLUTION):g}..{math.degrees(MAX_RESOLUTION):g})')
    return ''


# ---------------------------------------------------------------------------- conversions
def joint_state_positions(model: ArmModel, names: list[str], positions: list[float],
                          what: str) -> np.ndarray:
    """Positions in chain order from a request's names + positions (exactly the arm's joints
    in any order; no names: chain order).

    Raises:
        ValueError: sizes, repeated, missing or unknown names, non-finite values; the message
            names them.
    """
    if not names:
        if len(positions) != model.dof:
            raise ValueError(f'{what} has no names and {len(positions)} positions; give names '
                             f'or {model.dof} positions in chain order')
        q = np.asarray(positions, dtype=float)
    else:
        if len(names) != len(positions):
            raise ValueError(f'{what} has {len(names)} names but {len(positions)} positions')
        order, reason = joint_order(model.joint_names, names, what)
        if order is None:
            raise ValueError(reason)
        q = np.array([float(positions[k]) for k in order])
    bad = [model.joint_names[k] for k in np.flatnonzero(~np.isfinite(q))]
    if bad:
        raise ValueError(f'{what} positions of {", ".join(bad)} are not finite')
    return q


def trajectory_arrays(model: ArmModel, trajectory: JointTrajectory) -> tuple[np.ndarray,
                                                                              np.ndarray]:
    """(waypoints (K, n) rad in chain order, times (K,) s) of a JointTrajectory.

    Raises:
        ValueError: no points, bad names or sizes, non-finite values, positions outside the
            joint limits, times that are not strictly increasing.
    """
    names = list(trajectory.joint_names)
    if not trajectory.points:
        raise ValueError('the path has no points')
    waypoints = np.array([joint_state_positions(model, names, list(point.positions),
                                                f'path point {k}')
                          for k, point in enumerate(trajectory.points)])
    times = np.array([checked_seconds(point.time_from_start, f'path point {k} time')
                      for k, point in enumerate(trajectory.points)])
    low = waypoints < model.lower - 1e-9
    high = waypoints > model.upper + 1e-9
    if (low | high).any():
        k, j = np.argwhere(low | high)[0]
        raise ValueError(f'path point {k}: {model.joint_names[j]} = {waypoints[k, j]:.4f} rad '
                         f'is outside [{model.lower[j]:.4f}, {model.upper[j]:.4f}]')
    if len(times) > 1 and np.any(np.diff(times) <= 0.0):
        k = int(np.flatnonzero(np.diff(times) <= 0.0)[0]) + 1
        raise ValueError(f'path times must increase strictly: point {k} at {times[k]:g} s '
                         f'follows {times[k - 1]:g} s')
    return waypoints, times


def sample_rate_of(value: float, default: float) -> float:
    if not math.isfinite(value) or value < 0.0:
        raise ValueError(f'sample_rate {value} must be finite and >= 0 Hz (0: node default)')
    return value or default


# ---------------------------------------------------------------------------- markers
FLOOR_RGBA = (0.5, 0.5, 0.5, 0.35)
OBSTACLE_CLEAR_RGBA = (0.1, 0.8, 0.2, 0.6)
OBSTACLE_CONTACT_RGBA = (0.9, 0.1, 0.1, 0.8)
CONTACT_RGBA = (1.0, 0.0, 0.0, 1.0)


def safety_markers(geometry: SafetyGeometry, check: PoseCheck, q: np.ndarray, frame: str,
                   stamp, lifetime: float) -> MarkerArray:
    """Floor plane, obstacle ball (red on contact), link capsules and contact points."""
    markers = []
    if geometry.floor_enabled:
        floor = draw.marker(frame, 'floor', 0, Marker.CUBE, FLOOR_RGBA, lifetime)
        floor.pose.position = point([geometry.shoulder[0], geometry.shoulder[1],
                                     geometry.floor_z - 0.005])
        floor.scale.x = floor.scale.y = 2.0 * (geometry.model.max_reach() + 0.5)
        floor.scale.z = 0.01
        markers.append(floor)
    if geometry.obstacle_enabled:
        touching = bool(check.obstacle_contact.any())
        ball = draw.marker(frame, 'obstacle', 0, Marker.SPHERE,
                           OBSTACLE_CONTACT_RGBA if touching else OBSTACLE_CLEAR_RGBA, lifetime)
        ball.pose.position = point(geometry.obstacle_center)
        ball.scale.x = ball.scale.y = ball.scale.z = 2.0 * geometry.config.obstacle.radius
        markers.append(ball)
    starts, ends, _ = geometry.link_segments(q)
    markers += draw.capsule_markers(frame, starts[0], ends[0], geometry.radii,
                                    check.floor_violation, lifetime)
    contacts = draw.marker(frame, 'contacts', 0, Marker.SPHERE_LIST, CONTACT_RGBA, lifetime)
    contacts.scale.x = contacts.scale.y = contacts.scale.z = 0.05
    contacts.points = [point(check.closest_points[k])
                       for k in np.flatnonzero(check.obstacle_contact)]
    if not contacts.points:
        contacts.action = Marker.DELETE     # no contact now: remove the last ones at once
    markers.append(contacts)
    for m in markers:
        m.header.stamp = stamp
    return MarkerArray(markers=markers)


# ---------------------------------------------------------------------------- node
class SafetyMonitor(Node):
    """Judges joint_states, publishes the verdict and markers, serves path checks."""

    def __init__(self) -> None:
        super().__init__('safety_monitor')
        self.arm, self.model, self._config = declare_arm_model(self, reloadable=True)
        geometry = self._geometry(self.model)
        self._declare_parameters(geometry)
        self._scene_lock = threading.Lock()
        self.checker = self._checker(self.model)
        self.scene = Scene(self.model.base_link, self.checker.search_paths)
        scene_file = self.get_parameter('scene_file').value.strip()
        if scene_file:
            try:
                self.scene.load_yaml(scene_file)
            except SceneError as error:
                raise StartupError(f'scene_file refused: {error}') from None
        # The joint_states callback checks against this snapshot; services swap in a new one.
        self._scene_snapshot = self.scene.copy()
        self._last_collision: tuple[bool, bool] | None = None
        self.settings = self._settings(geometry)
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)

        self._lock = threading.Lock()
        self._last_q: np.ndarray | None = None
        self._last_valid = None          # monotonic time of the last valid joint_states
        self._intervals: deque[float] = deque(maxlen=20)
        self._stale_sent = None          # monotonic time STALE was last published
        self._last_markers = -math.inf
        self._last_verdict: Verdict | None = None
        self.malformed_count = 0

        state_group = MutuallyExclusiveCallbackGroup()
        service_group = ReentrantCallbackGroup()
        self.status_publisher = self.create_publisher(SafetyStatus, 'safety_status', 10)
        self.marker_publisher = self.create_publisher(MarkerArray, 'safety_markers', 10)
        self.scene_publisher = self.create_publisher(SceneMsg, 'scene', LATCHED_QOS)
        self.scene_marker_publisher = self.create_publisher(MarkerArray, 'scene_markers',
                                                            LATCHED_QOS)
        scene_group = MutuallyExclusiveCallbackGroup()
        for kind, name, handler in ((ApplySceneObject, '~/scene/apply', self._apply_object),
                                    (RemoveSceneObject, '~/scene/remove',
                                     self._remove_object)):
            self.create_service(kind, name, self._scene_guarded(kind, handler),
                                qos_profile=SERVICE_QOS, callback_group=scene_group)
        self._publish_scene()
        self.create_subscription(JointState, 'joint_states', self._on_joint_states,
                                 qos_profile_sensor_data, callback_group=state_group)
        self.create_timer(WATCH_PERIOD, self._watch, callback_group=state_group)
        for kind, name, handler in ((CheckPath, '~/check_path', self._check_path),
                                    (PlanDetour, '~/plan_detour', self._plan_detour),
                                    (GetJointMap, '~/joint_map', self._joint_map)):
            self.create_service(kind, name, self._guarded(kind, handler),
                                qos_profile=SERVICE_QOS, callback_group=service_group)
        g = geometry
        floor = f'at z = {g.floor_z:.3f} m' if g.floor_enabled else 'off'
        ball = f'r = {g.config.obstacle.radius:.3f} m' if g.obstacle_enabled else 'off'
        self.get_logger().info(f'{self.arm}: watching {", ".join(g.link_names)}; floor '
                               f'{floor}; obstacle {ball}; collision shapes on '
                               f'{", ".join(self.checker.links)} '
                               f'({len(self.checker.checked_pairs)} link pairs checked); '
                               f'scene: {len(self.scene)} objects')
        self._reload = DescriptionReload(self, self.model, self._geometry_now,
                                         self._use_geometry)

    def _checker(self, model: ArmModel) -> CollisionChecker:
        """The collision checker of ``model`` (its mesh warnings logged: a link whose mesh is
        missing is checked with its fallback shape, never skipped silently).

        Raises:
            StartupError: the collision section does not fit ``model``.
        """
        try:
            checker = arm_of(model, self._config, self.arm).collision_checker(
                search_paths=self._mesh_paths)
        except ArmConfigError as error:
            raise StartupError(str(error)) from None
        for warning in checker.warnings:
            self.get_logger().warning(f'collision geometry: {warning}')
        return checker

    # ------------------------------------------------------------------ the arm model
    def _geometry(self, model: ArmModel) -> SafetyGeometry:
        """Capsules, floor and obstacle of ``model`` from the arm's safety configuration.

        Raises:
            StartupError: the configuration does not fit ``model``.
        """
        return safety_geometry_of(model, self._config, self.arm)

    def _geometry_now(self, model: ArmModel) -> tuple[SafetyGeometry, CollisionChecker]:
        """The geometry and collision checker of a new ``model`` with the obstacle radius in
        use now."""
        geometry = self._geometry(model)
        radius = self.settings.geometry.config.obstacle.radius
        if radius != geometry.config.obstacle.radius:
            try:
                geometry = geometry.with_obstacle_radius(radius)
            except SafetyConfigError as error:
                raise StartupError(str(error)) from None
        return geometry, self._checker(model)

    def _use_geometry(self, built: tuple[SafetyGeometry, CollisionChecker]) -> None:
        # _settings applies an obstacle_radius set in the same update as robot_description.
        geometry, self.checker = built
        self.model = geometry.model
        self.settings = self._settings(geometry)
        # The next joint_states is judged, logged and drawn with the new links at once.
        self._last_verdict = None
        self._last_markers = -math.inf

    # ------------------------------------------------------------------ parameters
    def _declare_parameters(self, geometry: SafetyGeometry) -> None:
        defaults = {
            'obstacle_radius': (geometry.config.obstacle.radius,
                                'obstacle ball radius, m (> 0, finite); changeable at run time'),
            'stale_periods': (3.0, 'joint_states periods without a message before STALE'),
            'min_stale_timeout': (0.1, 'shortest silence reported as STALE, s (jitter guard)'),
            'grid_resolution_deg': (4.0, 'default grid step of detours and joint maps, deg '
                                         '(0.5..20)'),
            'contact_sample_rate': (60.0, 'default samples per second of motion, Hz'),
            'max_point_step': (MAX_POINT_STEP, 'largest link motion between path samples, m'),
            'marker_rate': (10.0, 'most safety_markers messages per second, Hz'),
            'marker_lifetime': (0.5, 'lifetime of every marker, s (stale ones disappear)'),
        }
        for name, (value, text) in defaults.items():
            self.declare_parameter(name, float(value), describe(text))
            reason = parameter_reason(name, self.get_parameter(name).value)
            if reason:
                raise StartupError(f'parameter {reason}')
        self.declare_parameter('scene_file', '', describe(
            'YAML of scene objects ({objects: [...]}, kinematics.collision.scene) loaded at '
            'start-up, all or nothing (a refused file stops the node with the reason); empty: '
            'an empty scene', read_only=True))
        self._mesh_paths = declare_mesh_search_paths(self)

    def _settings(self, geometry: SafetyGeometry) -> Settings:
        value = {name: float(self.get_parameter(name).value) for name in NUMERIC_PARAMETERS}
        if value['obstacle_radius'] != geometry.config.obstacle.radius:
            geometry = geometry.with_obstacle_radius(value['obstacle_radius'])
        return Settings(geometry, value['stale_periods'], value['min_stale_timeout'],
                        math.radians(value['grid_resolution_deg']),
                        value['contact_sample_rate'], value['max_point_step'],
                        value['marker_rate'], value['marker_lifetime'])

    def _validate_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        for parameter in parameters:
            if parameter.name in NUMERIC_PARAMETERS:
                reason = parameter_reason(parameter.name, parameter.value)
                if reason:
                    return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    def _apply_parameters(self, parameters: list[Parameter]) -> None:
        # One immutable snapshot swapped in: a check in flight keeps the set it started with.
        self.settings = self._settings(self.settings.geometry)
        if any(p.name == 'obstacle_radius' for p in parameters):
            self.get_logger().info(f'obstacle radius now '
                                   f'{self.settings.geometry.config.obstacle.radius:.3f} m')

    # ------------------------------------------------------------------ joint states
    def _on_joint_states(self, message: JointState) -> None:
        try:
            self._judge(message)
        except Exception as error:  # noqa: BLE001 - a witness must outlive any bad message
            if not self.context.ok():
                return      # shut down while judging (Ctrl-C): the publisher went too
            self.get_logger().error(f'joint_states callback raised: {error!r}',
                                    throttle_duration_sec=1.0)

    def _judge(self, message: JointState) -> None:
        settings = self.settings
        q, reason = positions_by_name(self.model.joint_names, message.name, message.position)
        if q is None:
            self.malformed_count += 1
            self.get_logger().warning(f'ignored joint_states: {reason}',
                                      throttle_duration_sec=1.0)
            status = self._status_header(message)
            status.verdict = Verdict.INVALID_INPUT
            status.message = f'joint_states ignored: {reason}'
            self.status_publisher.publish(status)
            return
        now = time.monotonic()
        with self._lock:
            if self._last_valid is not None:
                self._intervals.append(now - self._last_valid)
            self._last_valid = now
            self._stale_sent = None
            # Kept for plan_detour / joint_map starts: noise just past a limit is clipped;
            # farther out it stays, and the planner refuses it with the reason.
            slack = MEASURED_LIMIT_SLACK
            inside = (q >= self.model.lower - slack) & (q <= self.model.upper + slack)
            self._last_q = np.where(inside, self.model.clamp(q), q)
        check = settings.geometry.check_pose(q)
        status = self._status_header(message)
        self._fill_status(status, settings.geometry, check, q)
        checker, snapshot = self.checker, self._scene_snapshot
        if checker.scene is not snapshot:
            checker.scene = snapshot
        report = checker.check(q)
        fill_collision(status, report, snapshot.version)
        self.status_publisher.publish(status)
        state = (report.self_collision, report.scene_collision)
        if state != self._last_collision:
            if report.collides:
                self.get_logger().warning(report.message)
            elif self._last_collision is not None:
                self.get_logger().info(report.message)
            self._last_collision = state
        if check.verdict != self._last_verdict:
            # rclpy refuses one call site logging at two severities: two call sites.
            if check.safe:
                self.get_logger().info(f'{check.verdict.name}: {check.message}')
            else:
                self.get_logger().warning(f'{check.verdict.name}: {check.message}')
            self._last_verdict = check.verdict
        if now - self._last_markers >= 1.0 / settings.marker_rate:
            self._last_markers = now
            self.marker_publisher.publish(safety_markers(
                settings.geometry, check, q, self.model.base_link, status.header.stamp,
                settings.marker_lifetime))

    def _status_header(self, message: JointState | None) -> SafetyStatus:
        status = SafetyStatus()
        stamp = message.header.stamp if message is not None else None
        status.header.stamp = stamp if stamp is not None and (stamp.sec or stamp.nanosec) \
            else self.get_clock().now().to_msg()
        status.header.frame_id = self.model.base_link
        geometry = self.settings.geometry
        status.floor_enabled = geometry.floor_enabled
        status.obstacle_enabled = geometry.obstacle_enabled
        status.obstacle_radius = geometry.config.obstacle.radius
        status.contact_distance = geometry.contact_distance
        status.malformed_count = self.malformed_count
        status.min_floor_clearance = math.nan
        status.min_obstacle_distance = math.nan
        status.closest_distance = math.nan
        return status

    def _fill_status(self, status: SafetyStatus, geometry: SafetyGeometry, check: PoseCheck,
                     q: np.ndarray) -> None:
        status.verdict = int(check.verdict)
        status.message = check.message
        status.joint_state = JointState(name=list(self.model.joint_names),
                                        position=[float(v) for v in q])
        status.joint_state.header = status.header
        status.link_names = list(check.link_names)
        status.floor_clearance = [float(v) for v in check.floor_clearance]
        status.obstacle_distance = [float(v) for v in check.obstacle_distance]
        status.floor_violation = [bool(v) for v in check.floor_violation]
        status.obstacle_contact = [bool(v) for v in check.obstacle_contact]
        status.contact_points = [point(check.closest_points[k])
                                 for k in np.flatnonzero(check.obstacle_contact)]
        status.min_floor_clearance = check.min_floor_clearance
        status.min_obstacle_distance = check.min_obstacle_distance
        status.tip = point(check.tip)

    def _watch(self) -> None:
        """Publish STALE when joint_states stopped for more than stale_periods periods."""
        settings = self.settings
        now = time.monotonic()
        with self._lock:
            last, sent = self._last_valid, self._stale_sent
            period = float(np.median(self._intervals)) if self._intervals else DEFAULT_PERIOD
            timeout = max(settings.stale_periods * period, settings.min_stale_timeout)
            if last is not None and now - last <= timeout:
                return
            if sent is not None and now - sent < STALE_REPEAT:
                return
            self._stale_sent = now
        status = self._status_header(None)
        status.verdict = Verdict.STALE
        status.message = ('no joint_states received yet' if last is None else
                          f'no valid joint_states for {now - last:.2f} s (period '
                          f'{period:.3f} s, stale after {timeout:.2f} s)')
        if sent is None and last is not None:
            self.get_logger().warning(status.message)
            self._last_verdict = Verdict.STALE
        self.status_publisher.publish(status)

    # ------------------------------------------------------------------ services
    def _guarded(self, kind, handler):
        """Wrap a handler: an exception becomes INTERNAL_ERROR, the node keeps serving."""
        def callback(request, response):
            try:
                return handler(request, response)
            except Exception as error:  # noqa: BLE001 - the node must survive any fault
                self.get_logger().error(f'{kind.__name__} raised: {error!r}')
                response = kind.Response()
                response.error_code = response.INTERNAL_ERROR
                response.message = f'internal error: {error!r}'
                return response
        return callback

    def _scene_guarded(self, kind, handler):
        """Wrap a scene handler: a refusal or a fault is success false with the reason."""
        def callback(request, response):
            try:
                with self._scene_lock:
                    return handler(request, response)
            except SceneError as error:
                response.success = False
                response.message = str(error)
            except Exception as error:  # noqa: BLE001 - the node must survive any fault
                self.get_logger().error(f'{kind.__name__} raised: {error!r}')
                response.success = False
                response.message = f'internal error: {error!r} (the scene is unchanged)'
            response.version = self.scene.version
            self.get_logger().warning(f'{kind.__name__} refused: {response.message}')
            return response
        return callback

    def _apply_object(self, request: ApplySceneObject.Request,
                      response: ApplySceneObject.Response) -> ApplySceneObject.Response:
        item, replaced = self.scene.put(scene_messages.spec_from_message(request.object))
        self._publish_scene()
        response.success = True
        response.version = self.scene.version
        response.message = (f'{"replaced" if replaced else "added"} {item.spec["type"]} '
                            f'"{item.id}" (scene version {self.scene.version}, '
                            f'{len(self.scene)} objects)')
        self.get_logger().info(response.message)
        return response

    def _remove_object(self, request: RemoveSceneObject.Request,
                       response: RemoveSceneObject.Response) -> RemoveSceneObject.Response:
        item = self.scene.remove(request.id)
        self._publish_scene()
        response.success = True
        response.version = self.scene.version
        response.message = (f'removed "{item.id}" (scene version {self.scene.version}, '
                            f'{len(self.scene)} objects)')
        self.get_logger().info(response.message)
        return response

    def _publish_scene(self) -> None:
        """Swap in the new snapshot, then publish the scene and its markers (latched)."""
        self._scene_snapshot = self.scene.copy()
        stamp = self.get_clock().now().to_msg()
        self.scene_publisher.publish(scene_messages.scene_message(self.scene, stamp))
        self.scene_marker_publisher.publish(scene_messages.scene_markers(self.scene, stamp))

    def _check_path(self, request: CheckPath.Request,
                    response: CheckPath.Response) -> CheckPath.Response:
        settings = self.settings
        response.first_violation_index = -1
        response.first_violation_time = -1.0
        try:
            waypoints, times = trajectory_arrays(self.model, request.path)
            rate = sample_rate_of(request.sample_rate, settings.sample_rate)
            expected = (times[-1] - times[0]) * rate + float(np.sum(
                settings.geometry.max_point_motion(waypoints[:-1], waypoints[1:]))) / \
                settings.max_point_step
            if expected > MAX_PATH_SAMPLES:
                raise ValueError(f'the path needs about {expected:.3g} samples; the most is '
                                 f'{MAX_PATH_SAMPLES} (shorten it or lower sample_rate)')
        except ValueError as error:
            response.error_code = response.INVALID_INPUT
            response.message = str(error)
            return response
        result = check_path(settings.geometry, waypoints, times - times[0], rate,
                            settings.max_point_step, request.obstacle_is_violation)
        checks = result.checks
        response.error_code = response.CHECKED
        response.message = result.message
        response.safe = result.safe
        response.sample_count = len(checks)
        response.min_floor_clearance = float(np.min(checks.min_floor_clearance))
        response.min_obstacle_distance = float(np.min(checks.min_obstacle_distance))
        response.contact_times = [float(t + times[0]) for t in result.contacts.times]
        response.contact_tips = [point(tip) for tip in result.contacts.tips]
        if not result.safe:
            index = result.first_violation
            pose = checks.pose(index)
            response.first_violation_index = index
            response.first_violation_time = float(result.first_violation_time + times[0])
            response.first_violation_verdict = int(result.first_violation_verdict)
            response.first_violation_links = [
                name for k, name in enumerate(pose.link_names)
                if pose.floor_violation[k] or (request.obstacle_is_violation
                                               and pose.obstacle_contact[k])]
            response.first_violation_state = JointState(
                name=list(self.model.joint_names),
                position=[float(v) for v in result.samples.positions[index]])
            response.first_violation_tip = point(pose.tip)
        if request.return_samples:
            verdicts = checks.verdict.copy()
            if not request.obstacle_is_violation:
                verdicts[verdicts == Verdict.OBSTACLE_CONTACT] = Verdict.SAFE
            response.sample_times = [float(t + times[0]) for t in result.samples.times]
            response.sample_verdicts = [int(v) for v in verdicts]
        return response

    def _plan_detour(self, request: PlanDetour.Request,
                     response: PlanDetour.Response) -> PlanDetour.Response:
        settings = self.settings
        try:
            if not request.start.name and not request.start.position:
                with self._lock:
                    start = None if self._last_q is None else self._last_q.copy()
                if start is None:
                    response.error_code = response.NO_JOINT_STATE
                    response.message = ('start is empty and no joint_states have been '
                                        'received; give the start')
                    return response
            else:
                start = joint_state_positions(self.model, list(request.start.name),
                                              list(request.start.position), 'start')
            goal = joint_state_positions(self.model, list(request.goal.name),
                                         list(request.goal.position), 'goal')
            resolution = request.resolution
            if not math.isfinite(resolution) or resolution < 0.0:
                raise ValueError(f'resolution {resolution} must be finite and >= 0 rad '
                                 '(0: node default)')
        except ValueError as error:
            response.error_code = response.INVALID_INPUT
            response.message = str(error)
            return response
        plan = plan_detour(settings.geometry, start, goal, resolution or settings.resolution,
                           request.avoid_obstacle, settings.max_point_step)
        response.error_code = int(plan.code)
        response.message = plan.message
        response.detoured = plan.detoured
        response.plan_time = plan.plan_time
        response.cells_expanded = plan.expanded
        if plan.code == PlanCode.OK:
            response.path.header.stamp = self.get_clock().now().to_msg()
            response.path.header.frame_id = self.model.base_link
            response.path.joint_names = list(self.model.joint_names)
            response.path.points = [
                JointTrajectoryPoint(positions=[float(v) for v in q],
                                     time_from_start=draw.duration(float(t)))
                for q, t in zip(plan.waypoints, plan.times)]
            response.min_floor_clearance = plan.min_floor_clearance
            response.samples_checked = plan.samples_checked
        else:
            response.min_floor_clearance = math.nan
            self.get_logger().warning(f'plan_detour: {plan.code.name}: {plan.message}')
        return response

    def _joint_map(self, request: GetJointMap.Request,
                   response: GetJointMap.Response) -> GetJointMap.Response:
        settings = self.settings
        try:
            if request.use_current_state:
                with self._lock:
                    base = None if self._last_q is None else self._last_q.copy()
                if base is None:
                    response.error_code = response.NO_JOINT_STATE
                    response.message = 'no joint_states have been received yet'
                    return response
            else:
                base = joint_state_positions(self.model, list(request.base_state.name),
                                             list(request.base_state.position), 'base_state')
            waypoints = times = None
            if request.path.points:
                waypoints, times = trajectory_arrays(self.model, request.path)
                times = times - times[0]
            rate = sample_rate_of(request.sample_rate, settings.sample_rate)
            resolution = request.resolution or settings.resolution
            if waypoints is not None and len(waypoints) > 1 and \
                    times[-1] * rate > MAX_PATH_SAMPLES:
                raise ValueError(f'the path needs {times[-1] * rate:.3g} samples; the most is '
                                 f'{MAX_PATH_SAMPLES}')
            result = joint_map(settings.geometry, base, resolution, waypoints,
                               times if waypoints is not None and len(waypoints) > 1 else None,
                               rate)
        except ValueError as error:
            not_applicable = 'no two pitch joints' in str(error)
            response.error_code = response.NOT_APPLICABLE if not_applicable else \
                response.INVALID_INPUT
            response.message = str(error)
            return response
        message = JointMapMsg()
        message.header.stamp = self.get_clock().now().to_msg()
        message.header.frame_id = self.model.base_link
        message.axis_joint_names = list(result.joint_names)
        message.base_state = JointState(name=list(self.model.joint_names),
                                        position=[float(v) for v in result.base_q])
        message.row_min, message.column_min = float(result.axis_a[0]), float(result.axis_b[0])
        message.row_step = float(result.axis_a[1] - result.axis_a[0])
        message.column_step = float(result.axis_b[1] - result.axis_b[0])
        message.row_count, message.column_count = len(result.axis_a), len(result.axis_b)
        cells = result.floor.astype(np.uint8) * JointMapMsg.CELL_FLOOR + \
            result.contact.astype(np.uint8) * JointMapMsg.CELL_CONTACT
        message.cells = cells.ravel().tobytes()
        message.path_rows = result.path[:, 0].tolist()
        message.path_columns = result.path[:, 1].tolist()
        message.path_times = result.path_times.tolist()
        message.contact_times = result.contacts.times.tolist()
        message.contact_rows = result.contact_angles[:, 0].tolist()
        message.contact_columns = result.contact_angles[:, 1].tolist()
        message.contact_tips = [point(tip) for tip in result.contacts.tips]
        response.error_code = response.OK
        response.message = (f'{len(result.axis_a)} x {len(result.axis_b)} cells, '
                            f'{int(result.floor.sum())} below the floor, '
                            f'{int(result.contact.sum())} in contact; '
                            f'{len(result.path)} path samples, {len(result.contacts)} contacts')
        response.map = message
        return response


def fill_collision(status: SafetyStatus, report: CollisionReport, version: int) -> None:
    """The collision witness fields of a status from the checker's report."""
    status.collision_checked = True
    status.self_collision = report.self_collision
    status.scene_contact = report.scene_collision
    status.contact_pairs = [f'{c.a}|{c.b}' for c in report.contacts]
    closest = report.closest
    status.closest_pair = '' if closest is None else f'{closest.a}|{closest.b}'
    status.closest_distance = math.nan if closest is None else float(closest.distance)
    status.collision_message = report.message
    status.scene_version = int(version)


def main(args: list[str] | None = None) -> None:
    sys.exit(run(SafetyMonitor, args,
                 executor_factory=lambda: HandoffExecutor(num_threads=EXECUTOR_THREADS)))


if __name__ == '__main__':
    main()
