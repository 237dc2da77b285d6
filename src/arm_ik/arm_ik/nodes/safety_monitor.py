"""safety_monitor: an independent witness of the arm's safety (floor, obstacle), and the
services that check a path or plan a detour before a move.

It judges every ``joint_states`` message it sees, whoever publishes it.

Parameters: arm, base_frame, tip_frame (read-only); robot_description (a new one with the
same joints, e.g. new link lengths, rebuilds the links checked); obstacle_radius (m,
changeable at run time: the radius of the scene's ball); stale_periods; min_stale_timeout
(s); grid_resolution_deg; contact_sample_rate (Hz); max_point_step (m); marker_rate (Hz);
marker_lifetime (s); scene_file (YAML of scene objects loaded at start-up, all or nothing;
read-only); mesh_search_paths (folders for package:// and relative meshes, separated by ':';
read-only).
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
change it whole or not at all, and the joint_states callback checks against a snapshot. The
arm's floor and ball are in it as ``floor`` (fixed) and ``obstacle`` (moved, resized, removed
like any object), judged by their own rules (kinematics.safety.scene_rules). The
joint map marks the cells in self-collision and in scene contact too (its own checker).
"""

from __future__ import annotations

import math
import sys
import threading
import time

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from visualization_msgs.msg import MarkerArray

from arm_ik.nodes import marker_messages as draw
from arm_ik.nodes.common import (
    arm_of,
    declare_arm_model,
    declare_mesh_search_paths,
    DescriptionReload,
    run,
    SAFETY_BATCH_PERIOD,
    safety_geometry_of,
    StartupError,
    subscribe_joint_states,
)
from arm_ik.nodes.parameters import Param, ParameterError, ParameterTable
from arm_ik.nodes.safety_messages import (
    checked_path,
    fill_check_path,
    fill_collision,
    fill_detour,
    fill_pose,
    joint_map_message,
    joint_map_summary,
    map_path,
    resolution_of,
    state_positions,
    status_header,
)
from arm_ik.nodes.scene_server import SceneServer
from arm_interfaces.msg import SafetyStatus
from arm_interfaces.srv import (
    CheckPath,
    GetJointMap,
    PlanDetour,
)
from arm_kinematics.arm import ArmConfigError
from arm_kinematics.common.joint_state import positions_by_name
from arm_kinematics.description.safety_config import SafetyConfigError
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.planning.grid import (
    MAX_RESOLUTION,
    MIN_RESOLUTION,
    plan_detour,
    PlanCode,
)
from arm_kinematics.motion.planning.joint_map import joint_map, JointMapError
from arm_kinematics.motion.safety_paths import check_path, MAX_POINT_STEP
from arm_kinematics.scene.checker import CollisionChecker
from arm_kinematics.scene.geometry import SafetyGeometry, Verdict
from arm_kinematics.scene.monitor import (
    LogLine,
    MonitorSettings,
    SafetyWatch,
    watching,
)
from arm_kinematics.scene.objects import Scene, SceneError
from arm_kinematics.scene.scene_rules import (
    floor_spec,
    geometry_in,
    obstacle_in,
    resized_ball,
    SceneRules,
)

SERVICE_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
EXECUTOR_THREADS = 4
WATCH_PERIOD = 0.02   # s; how often the stale check runs


def _positive(name: str, default: float, description: str) -> Param:
    return Param(name, default, description, low=0.0, low_open=True)


# obstacle_radius's default is the arm configuration's (given to declare).
PARAMETERS = ParameterTable(
    _positive('obstacle_radius', 0.25,
              'radius of the scene\'s ball "obstacle", m (> 0, finite); changeable at run '
              'time (no effect while the scene has no ball)'),
    _positive('stale_periods', 3.0, 'joint_states periods without a message before STALE'),
    _positive('min_stale_timeout', 0.1, 'shortest silence reported as STALE, s (jitter guard)'),
    Param('grid_resolution_deg', 4.0, 'default grid step of detours and joint maps, deg '
          '(0.5..20)', low=math.degrees(MIN_RESOLUTION), high=math.degrees(MAX_RESOLUTION)),
    _positive('contact_sample_rate', 60.0, 'default samples per second of motion, Hz'),
    _positive('max_point_step', MAX_POINT_STEP, 'largest link motion between path samples, m'),
    _positive('marker_rate', 10.0, 'most safety_markers messages per second, Hz'),
    _positive('marker_lifetime', 0.5, 'lifetime of every marker, s (stale ones disappear)'),
    Param('scene_file', '', 'YAML of scene objects ({objects: [...]}, '
          'kinematics.collision.scene) loaded at start-up, all or nothing (a refused file stops '
          'the node with the reason); empty: an empty scene', read_only=True),
)


class SafetyMonitor(Node):
    """Judges joint_states, publishes the verdict and markers, serves path checks."""

    def __init__(self) -> None:
        super().__init__('safety_monitor')
        self.arm, self.model, self._config = declare_arm_model(self, reloadable=True)
        geometry = safety_geometry_of(self.model, self._config, self.arm)
        try:
            values = PARAMETERS.declare(
                self, {'obstacle_radius': geometry.config.obstacle.radius})
            # The configuration's ball with the radius asked for: the scene's "obstacle".
            self._config_geometry = geometry.with_obstacle_radius(values['obstacle_radius'])
        except (ParameterError, SafetyConfigError) as error:
            raise StartupError(str(error)) from None
        self._mesh_paths = declare_mesh_search_paths(self)
        self.checker = self._checker(self.model)
        # The joint map service judges its cells for collisions on a checker of its own (a
        # checker serves one thread; the joint_states callback has the other), one map at a
        # time.
        self._map_checker = self.checker.twin()
        self._map_lock = threading.Lock()

        state_group = MutuallyExclusiveCallbackGroup()
        service_group = ReentrantCallbackGroup()
        self.status_publisher = self.create_publisher(SafetyStatus, 'safety_status', 10)
        self.marker_publisher = self.create_publisher(MarkerArray, 'safety_markers', 10)
        try:
            # The joint_states callback checks against its snapshot.
            self.scenes = SceneServer(self, self.model.base_link, self.checker.search_paths,
                                      values['scene_file'].strip(), SERVICE_QOS,
                                      SceneRules(self._config_geometry), self._use_scene)
        except SceneError as error:
            raise StartupError(f'scene_file refused: {error}') from None
        self.settings = self._settings(self._config_geometry, values)
        self.watch = SafetyWatch(self.settings.stale_periods, self.settings.min_stale_timeout)
        PARAMETERS.watch(self, self._apply_parameters)
        self.joint_states = subscribe_joint_states(self, self._on_joint_states,
                                                   SAFETY_BATCH_PERIOD, state_group)
        self.create_timer(WATCH_PERIOD, self._watch, callback_group=state_group)
        for kind, name, handler in ((CheckPath, '~/check_path', self._check_path),
                                    (PlanDetour, '~/plan_detour', self._plan_detour),
                                    (GetJointMap, '~/joint_map', self._joint_map)):
            self.create_service(kind, name, self._guarded(kind, handler),
                                qos_profile=SERVICE_QOS, callback_group=service_group)
        self.get_logger().info(watching(self.arm, self.settings.geometry, self.checker,
                                        self.scenes.scene))
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
    def _geometry_now(self, model: ArmModel) -> tuple[SafetyGeometry, CollisionChecker]:
        """The configuration's geometry of a new ``model`` and its collision checker (the
        ball stays where the scene has it)."""
        return safety_geometry_of(model, self._config, self.arm), self._checker(model)

    def _use_geometry(self, built: tuple[SafetyGeometry, CollisionChecker]) -> None:
        self._config_geometry, self.checker = built
        self._map_checker = self.checker.twin()
        self.model = self._config_geometry.model
        # New lengths move the floor (it lies below the shoulder): the scene's floor follows.
        if self._config_geometry.floor_enabled:
            self.scenes.put(floor_spec(self._config_geometry))
        self.settings = self._settings(self._config_geometry, PARAMETERS.values(self))
        # The next joint_states is judged, logged and drawn with the new links at once.
        self.watch.forget_verdict()

    # ------------------------------------------------------------------ parameters
    def _settings(self, geometry: SafetyGeometry, values: dict) -> MonitorSettings:
        """The settings of ``values`` with ``geometry``'s ball where the scene has it."""
        return MonitorSettings.of(geometry_in(geometry, self.scenes.snapshot), values)

    def _apply_parameters(self, values: dict) -> None:
        # One immutable snapshot swapped in: a check in flight keeps the set it started with.
        resized = resized_ball(self.scenes.snapshot, values['obstacle_radius'])
        if resized is not None:
            # The radius is the scene ball's: every node following the scene gets it.
            self.scenes.put(resized)
            self.get_logger().info(f'obstacle radius now {resized["radius"]:.3f} m')
        self.settings = self._settings(self._config_geometry, values)
        self.watch.configure(self.settings.stale_periods, self.settings.min_stale_timeout)

    def _use_scene(self, scene: Scene) -> None:
        """An accepted scene change: the ball's rule follows it, and obstacle_radius tells the
        radius of the scene's ball."""
        ball = obstacle_in(scene)
        self.settings = self._settings(self._config_geometry, PARAMETERS.values(self))
        if ball is not None and ball[1] != self.get_parameter('obstacle_radius').value:
            self.set_parameters([Parameter('obstacle_radius', value=ball[1])])

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
            text = self.watch.refuse(reason)
            self.get_logger().warning(f'ignored joint_states: {reason}',
                                      throttle_duration_sec=1.0)
            status = self._status(message)
            status.verdict = Verdict.INVALID_INPUT
            status.message = text
            self.status_publisher.publish(status)
            return
        judged = self.watch.judge(q, time.monotonic(), settings.geometry, self.checker,
                                  self.scenes.snapshot, settings.marker_rate)
        status = self._status(message)
        fill_pose(status, settings.geometry.model, judged.check, q)
        fill_collision(status, judged.report, judged.scene_version)
        self.status_publisher.publish(status)
        self._log(judged.logs)
        if judged.draw_markers:
            self.marker_publisher.publish(MarkerArray(markers=draw.safety_markers(
                settings.geometry, judged.check, q, self.model.base_link, status.header.stamp,
                settings.marker_lifetime)))

    def _watch(self) -> None:
        """Publish STALE when joint_states stopped for more than stale_periods periods."""
        notice = self.watch.stale(time.monotonic())
        if notice is None:
            return
        status = self._status(None)
        status.verdict = Verdict.STALE
        status.message = notice.message
        self._log(notice.logs)
        self.status_publisher.publish(status)

    def _status(self, message: JointState | None) -> SafetyStatus:
        stamp = message.header.stamp if message is not None else None
        if stamp is None or not (stamp.sec or stamp.nanosec):
            stamp = self.get_clock().now().to_msg()
        return status_header(stamp, self.model.base_link, self.settings.geometry,
                             self.watch.malformed_count)

    def _log(self, lines: tuple[LogLine, ...]) -> None:
        # rclpy refuses one call site logging at two severities: two call sites.
        for line in lines:
            if line.level == 'warning':
                self.get_logger().warning(line.text)
            else:
                self.get_logger().info(line.text)

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

    def _check_path(self, request: CheckPath.Request,
                    response: CheckPath.Response) -> CheckPath.Response:
        settings = self.settings
        model = settings.geometry.model
        response.first_violation_index = -1
        response.first_violation_time = -1.0
        try:
            waypoints, times, rate = checked_path(settings.geometry, request.path,
                                                  request.sample_rate, settings.sample_rate,
                                                  settings.max_point_step)
        except ValueError as error:
            response.error_code = response.INVALID_INPUT
            response.message = str(error)
            return response
        result = check_path(settings.geometry, waypoints, times - times[0], rate,
                            settings.max_point_step, request.obstacle_is_violation)
        return fill_check_path(response, result, model, float(times[0]),
                               request.obstacle_is_violation, request.return_samples)

    def _plan_detour(self, request: PlanDetour.Request,
                     response: PlanDetour.Response) -> PlanDetour.Response:
        settings = self.settings
        model = settings.geometry.model
        try:
            if not request.start.name and not request.start.position:
                start = self.watch.last_pose()
                if start is None:
                    response.error_code = response.NO_JOINT_STATE
                    response.message = ('start is empty and no joint_states have been '
                                        'received; give the start')
                    return response
            else:
                start = state_positions(model, request.start, 'start')
            goal = state_positions(model, request.goal, 'goal')
            resolution = resolution_of(request.resolution, settings.resolution)
        except ValueError as error:
            response.error_code = response.INVALID_INPUT
            response.message = str(error)
            return response
        plan = plan_detour(settings.geometry, start, goal, resolution, request.avoid_obstacle,
                           settings.max_point_step)
        fill_detour(response, plan, model, self.get_clock().now().to_msg())
        if plan.code != PlanCode.OK:
            self.get_logger().warning(f'plan_detour: {plan.code.name}: {plan.message}')
        return response

    def _joint_map(self, request: GetJointMap.Request,
                   response: GetJointMap.Response) -> GetJointMap.Response:
        settings = self.settings
        model = settings.geometry.model
        try:
            if request.use_current_state:
                base = self.watch.last_pose()
                if base is None:
                    response.error_code = response.NO_JOINT_STATE
                    response.message = 'no joint_states have been received yet'
                    return response
            else:
                base = state_positions(model, request.base_state, 'base_state')
            waypoints, times, rate = map_path(model, request.path, request.sample_rate,
                                              settings.sample_rate)
            with self._map_lock:
                checker = self._map_checker
                checker.scene = self.scenes.snapshot
                result = joint_map(settings.geometry, base, request.resolution or
                                   settings.resolution, waypoints, times, rate,
                                   checker=checker)
        except JointMapError as error:
            response.error_code = int(error.code)
            response.message = str(error)
            return response
        except ValueError as error:
            response.error_code = response.INVALID_INPUT
            response.message = str(error)
            return response
        response.error_code = response.OK
        response.message = joint_map_summary(result)
        response.map = joint_map_message(result, model, self.get_clock().now().to_msg())
        return response


def main(args: list[str] | None = None) -> None:
    sys.exit(run(SafetyMonitor, args, threads=EXECUTOR_THREADS))


if __name__ == '__main__':
    main()
