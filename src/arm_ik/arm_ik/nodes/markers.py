"""markers: what RViz shows of one arm besides its model, and the readout numbers for plots.

Parameters: arm, base_frame, tip_frame (read-only); robot_description (a new one with the
same joints, e.g. new link lengths, redraws the reach shell, floor and capsules at once); the
rates, sizes, durations and colours of ``marker_settings`` (validated: NaN, inf, negative,
zero and wrongly typed values are rejected with a reason and the old value kept).
Subscribes (relative names, in the arm's namespace):
  joint_states    sensor_msgs/JointState (sensor-data QoS; NaN/inf or malformed: ignored)
  arm_info        arm_interfaces/ArmInfo (latched): the reach shell it announces
  ik_status       arm_interfaces/IKStatus: target, IK error, solver, branch, failures
  planned_path    visualization_msgs/MarkerArray (latched) of trajectory_executor: tip path,
                  ghost poses, target, where a Cartesian line failed
  safety_status   arm_interfaces/SafetyStatus: measured contact points
  target_status   arm_interfaces/TargetStatus (transient local): targets and failed moves
Publishes:
  markers         visualization_msgs/MarkerArray, latched (transient local, depth 1). Every
                  message is the whole scene after a DELETEALL, so a late RViz gets all of it
                  and nothing of an earlier message or run lingers; changing markers carry
                  ``marker_lifetime`` and vanish when this node stops. Namespaces: floor,
                  reach_circles, reach_shell, target, tip_path, path_failure, ghosts,
                  contacts, link_capsules (show_capsules), readout.
  readout         arm_interfaces/ArmReadout: the readout's numbers (rqt_plot, PlotJuggler)
Sent on change (at most update_rate per second) and as a heartbeat (republish_rate).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
import math
import sys
import time

import numpy as np
from rcl_interfaces.msg import FloatingPointRange, SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from visualization_msgs.msg import Marker, MarkerArray

from arm_ik.kinematics.joint_state import positions_by_name
from arm_ik.kinematics.model import ArmModel
from arm_ik.kinematics.result import ErrorCode
from arm_ik.kinematics.safety.geometry import SafetyGeometry
from arm_ik.kinematics.solvers.base import Workspace, workspace_from_model
from arm_ik.kinematics.visual import (
    format_readout,
    pose_metrics,
    PoseMetrics,
    reach_shell,
    ReachShell,
    Readout,
)
from arm_ik.nodes import marker_messages as draw
from arm_ik.nodes.common import (
    declare_arm_model,
    describe,
    DescriptionReload,
    LATCHED_QOS,
    run,
    safety_geometry_of,
    StartupError,
)
from arm_ik.nodes.marker_settings import DESCRIPTIONS, MarkerSettings, NAMES, RANGES
from arm_interfaces.msg import ArmInfo, ArmReadout, IKStatus, SafetyStatus, TargetStatus

# target_status keeps its recent history for late joiners (target_input's STATUS_QOS).
TARGET_STATUS_QOS = QoSProfile(depth=20, reliability=ReliabilityPolicy.RELIABLE,
                               durability=DurabilityPolicy.TRANSIENT_LOCAL)
# Bounds on what one planned_path or safety_status can make this node keep.
MAX_PATH_POINTS = 20_000
MAX_GHOSTS = 64
MAX_CONTACTS = 500
CONTACT_MERGE = 0.01        # m: a contact this close to a kept one is the same dot
POSE_CHANGE = 1e-5          # rad: a smaller change of every joint is no motion to redraw


def _finite_point(p) -> np.ndarray | None:
    values = np.array([p.x, p.y, p.z], dtype=float)
    return values if np.all(np.isfinite(values)) else None


def _finite_points(points, limit: int) -> np.ndarray:
    values = np.array([[p.x, p.y, p.z] for p in points[:limit]], dtype=float).reshape(-1, 3)
    return values[np.all(np.isfinite(values), axis=1)]


@dataclass(frozen=True)
class ArmShapes:
    """What the node draws of one arm model: capsules and floor, reach rules, shell."""

    model: ArmModel
    geometry: SafetyGeometry
    workspace: Workspace
    shell: ReachShell


@dataclass
class Scene:
    """Everything drawn, as plain values; the node's callbacks update it."""

    shell: ReachShell
    q: np.ndarray | None = None
    q_time: float = -math.inf              # monotonic s of the last valid joint state
    q_stamp: object = None
    metrics: PoseMetrics | None = None
    ignored_states: int = 0
    target: np.ndarray | None = None
    target_colour: tuple = draw.TARGET_PENDING
    tips: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    ghosts: list[np.ndarray] = field(default_factory=list)
    failure_point: np.ndarray | None = None
    contacts: list[tuple[float, np.ndarray]] = field(default_factory=list)
    ik: IKStatus | None = None
    failure: str = ''


class MarkersNode(Node):
    """Turns the arm's state and the pipeline's status topics into markers and a readout."""

    def __init__(self) -> None:
        super().__init__('markers')
        self.arm, self.model, self._config = declare_arm_model(self, reloadable=True)
        shapes = self._shapes(self.model)
        self.geometry, self.workspace = shapes.geometry, shapes.workspace
        self.frame = self.model.base_link
        self._declare_parameters()
        self.settings = self._settings_from_parameters({})
        reason = self.settings.validated()
        if reason:
            raise StartupError(f'bad parameter: {reason}')
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)

        self.scene = Scene(shapes.shell)
        self._dirty = True
        self._last_publish = -math.inf
        self._last_readout = -math.inf
        self._state_shown = False
        self._drawn_q: np.ndarray | None = None
        self._built: dict[str, tuple[tuple, list[Marker]]] = {}

        self.marker_publisher = self.create_publisher(MarkerArray, 'markers', LATCHED_QOS)
        self.readout_publisher = self.create_publisher(ArmReadout, 'readout', 10)
        self.create_subscription(JointState, 'joint_states', self._on_joint_states,
                                 qos_profile_sensor_data)
        self.create_subscription(ArmInfo, 'arm_info', self._on_arm_info, LATCHED_QOS)
        self.create_subscription(IKStatus, 'ik_status', self._on_ik_status, 10)
        self.create_subscription(MarkerArray, 'planned_path', self._on_planned_path, LATCHED_QOS)
        self.create_subscription(SafetyStatus, 'safety_status', self._on_safety_status, 10)
        self.create_subscription(TargetStatus, 'target_status', self._on_target_status,
                                 TARGET_STATUS_QOS)
        self.timer = self.create_timer(1.0 / self.settings.update_rate, self._tick)
        # The first message (a DELETEALL and the static scene) clears what an earlier run of
        # this node left in RViz.
        self._publish_markers(time.monotonic())
        self.get_logger().info(
            f'{self.arm}: markers in {self.frame}; reach {self.scene.shell.outer:.3f} m'
            + (f', hole {self.scene.shell.inner:.3f} m' if self.scene.shell.has_hole else ''))
        self._reload = DescriptionReload(self, self.model, self._shapes, self._use_shapes)

    # ------------------------------------------------------------------ the arm model
    def _shapes(self, model: ArmModel) -> ArmShapes:
        """Safety geometry, reach rules and reach shell of ``model``.

        Raises:
            StartupError: the arm's safety configuration does not fit ``model``.
        """
        geometry = safety_geometry_of(model, self._config, self.arm)
        workspace = workspace_from_model(model)
        return ArmShapes(model, geometry, workspace, reach_shell(workspace))

    def _use_shapes(self, shapes: ArmShapes) -> None:
        self.model, self.geometry, self.workspace = shapes.model, shapes.geometry, \
            shapes.workspace
        scene = self.scene
        # The new model's shell (until an arm_info announces another), and the pose's
        # numbers through the new links; then the whole scene and readout at once.
        scene.shell = shapes.shell
        scene.metrics = None
        now = time.monotonic()
        self._publish_markers(now)
        self._publish_readout(now)

    # ------------------------------------------------------------------ parameters
    def _declare_parameters(self) -> None:
        defaults = MarkerSettings()
        for name in NAMES:
            value = getattr(defaults, name)
            if name in RANGES:
                low, high = RANGES[name]
                descriptor = describe(DESCRIPTIONS[name], floating_point_range=[
                    FloatingPointRange(from_value=low, to_value=high, step=0.0)])
                self.declare_parameter(name, float(value), descriptor)
            elif name.endswith('_colour'):
                self.declare_parameter(name, [float(v) for v in value],
                                       describe(DESCRIPTIONS[name]))
            else:
                self.declare_parameter(name, value, describe(DESCRIPTIONS[name]))

    def _settings_from_parameters(self, overrides: dict) -> MarkerSettings:
        values = {name: self.get_parameter(name).value for name in NAMES}
        values.update(overrides)
        return MarkerSettings().with_values(values)

    def _validate_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        overrides = {p.name: p.value for p in parameters if p.name in NAMES}
        if not overrides:
            return SetParametersResult(successful=True)
        reason = self._settings_from_parameters(overrides).validated()
        return SetParametersResult(successful=not reason, reason=reason)

    def _apply_parameters(self, parameters: list[Parameter]) -> None:
        old_rate = self.settings.update_rate
        self.settings = self._settings_from_parameters({})
        if self.settings.update_rate != old_rate:
            self.destroy_timer(self.timer)
            self.timer = self.create_timer(1.0 / self.settings.update_rate, self._tick)
        self._dirty = True

    # ------------------------------------------------------------------ inputs
    def _on_joint_states(self, message: JointState) -> None:
        q, reason = positions_by_name(self.model.joint_names, message.name, message.position)
        if q is None:
            # Checked before anything reaches a viewer: the last good pose stays on screen.
            self.scene.ignored_states += 1
            self.get_logger().warning(f'joint_states ignored: {reason}',
                                      throttle_duration_sec=2.0)
            return
        now = time.monotonic()
        scene = self.scene
        scene.q, scene.q_time, scene.q_stamp = q, now, message.header.stamp
        scene.metrics = None          # computed when first shown (_pose_metrics)
        # A holding arm repeats the same pose at its full rate: redraw only on motion (the
        # tick paces it to update_rate).
        if self._drawn_q is None or np.max(np.abs(q - self._drawn_q)) > POSE_CHANGE:
            self._dirty = True
        if now - self._last_readout >= 1.0 / self.settings.readout_rate:
            self._publish_readout(now)

    def _on_arm_info(self, message: ArmInfo) -> None:
        centre = _finite_point(message.shoulder)
        outer, inner = message.max_reach, message.min_reach
        if centre is None or not (math.isfinite(outer) and outer > 0.0) or \
                not (math.isfinite(inner) and 0.0 <= inner < outer):
            self.get_logger().warning('arm_info with a non-finite or empty reach ignored')
            return
        self.scene.shell = ReachShell(centre, float(outer), float(inner))
        self._dirty = True

    def _on_ik_status(self, message: IKStatus) -> None:
        scene = self.scene
        scene.ik = message
        code = int(message.error_code.val)
        target = _finite_point(message.target)
        if target is not None:
            scene.target = target
            scene.target_colour = draw.TARGET_REACHED if code == ErrorCode.OK else \
                draw.TARGET_PENDING if code == ErrorCode.PARTIAL_SOLUTION else draw.TARGET_FAILED
        if code not in (ErrorCode.OK, ErrorCode.BUSY):
            scene.failure = f'{_code_name(code)}: {message.message}'
        self._dirty = True
        self._publish_readout(time.monotonic())

    def _on_planned_path(self, message: MarkerArray) -> None:
        scene = self.scene
        ghosts: dict[int, np.ndarray] = {}
        for item in message.markers:
            if item.action == Marker.DELETEALL:
                scene.tips, scene.failure_point, ghosts = np.zeros((0, 3)), None, {}
            elif item.action != Marker.ADD:
                continue
            elif item.ns == 'tip_path':
                scene.tips = _finite_points(item.points, MAX_PATH_POINTS)
            elif item.ns == 'ghosts' and len(ghosts) < MAX_GHOSTS:
                points = _finite_points(item.points, MAX_PATH_POINTS)
                if len(points) > 1:
                    ghosts[item.id] = points
            elif item.ns in ('target', 'failure'):
                where = _finite_point(item.pose.position)
                if item.ns == 'failure':
                    scene.failure_point = where
                elif where is not None:
                    scene.target, scene.target_colour = where, draw.TARGET_PENDING
        scene.ghosts = [ghosts[k] for k in sorted(ghosts)]
        self._dirty = True

    def _on_safety_status(self, message: SafetyStatus) -> None:
        now = time.monotonic()
        scene = self.scene
        if self.settings.contact_memory == 0.0:
            if scene.contacts or message.contact_points:
                self._dirty = True
            scene.contacts = []
        for where in _finite_points(message.contact_points, MAX_CONTACTS):
            if any(np.linalg.norm(kept - where) < CONTACT_MERGE for _, kept in scene.contacts):
                continue
            scene.contacts.append((now, where))
            self._dirty = True
        del scene.contacts[:-MAX_CONTACTS]

    def _on_target_status(self, message: TargetStatus) -> None:
        scene = self.scene
        target = _finite_point(message.target)
        if message.state == TargetStatus.STARTED and target is not None:
            scene.target, scene.target_colour = target, draw.TARGET_PENDING
        elif message.state == TargetStatus.SUCCEEDED and target is not None:
            scene.target, scene.target_colour = target, draw.TARGET_REACHED
        elif message.state in (TargetStatus.FAILED, TargetStatus.REFUSED):
            what = message.phase or message.source or 'target'
            verb = 'refused' if message.state == TargetStatus.REFUSED else 'failed'
            scene.failure = f'{what} {verb}: {message.message}'
            if target is not None:
                scene.target, scene.target_colour = target, draw.TARGET_FAILED
        else:
            return
        self._dirty = True

    # ------------------------------------------------------------------ output
    def _state_fresh(self, now: float) -> bool:
        return self.scene.q is not None and now - self.scene.q_time <= self.settings.state_timeout

    def _tick(self) -> None:
        now = time.monotonic()
        scene, settings = self.scene, self.settings
        if settings.contact_memory > 0.0:
            kept = [c for c in scene.contacts if now - c[0] <= settings.contact_memory]
            if len(kept) != len(scene.contacts):
                scene.contacts = kept
                self._dirty = True
        if self._state_shown != self._state_fresh(now):
            self._dirty = True        # the pose went stale (or came back): redraw without it
        if self._dirty or now - self._last_publish >= 1.0 / settings.republish_rate:
            self._publish_markers(now)

    def _pose_metrics(self) -> PoseMetrics:
        """The current pose's numbers, computed once per pose when first shown: joint_states
        may come at 100 Hz or more, markers and readout go out at their own lower rates."""
        scene = self.scene
        if scene.metrics is None:
            scene.metrics = pose_metrics(self.model, self.workspace, scene.q)
        return scene.metrics

    def _readout(self, now: float) -> Readout:
        scene = self.scene
        fresh = self._state_fresh(now)
        metrics = self._pose_metrics() if fresh else None
        ik = scene.ik
        return Readout(
            arm=self.arm, tip=None if metrics is None else metrics.tip,
            ik_error=None if ik is None else float(ik.position_error),
            manipulability=None if metrics is None else metrics.manipulability,
            condition_number=None if metrics is None else metrics.condition_number,
            reach_fraction=None if metrics is None else metrics.reach_fraction,
            solver='' if ik is None else ik.solver, branch='' if ik is None else ik.branch,
            failure=scene.failure)

    def _publish_markers(self, now: float) -> None:
        s, scene, frame = self.settings, self.scene, self.frame
        life = s.marker_lifetime
        markers = [draw.delete_all(frame)]
        markers += self._reuse('scene', (scene.shell, self.geometry, s), lambda: (
            draw.floor_markers(frame, scene.shell, self.geometry.floor_z, s.circle_spacing,
                               s.floor_colour, s.circle_colour, s.text_size)
            + draw.shell_markers(frame, scene.shell, s.shell_colour, s.hole_colour)))
        if scene.target is not None:
            markers += draw.target_markers(frame, scene.target, scene.target_colour,
                                           s.target_size, life)
        markers += self._reuse('path', (scene.tips, s), lambda: draw.path_markers(
            frame, scene.tips, s.path_start_colour, s.path_end_colour, s.path_width, life))
        if scene.failure_point is not None:
            markers.append(draw.failure_marker(frame, scene.failure_point, 2.0 * s.contact_size,
                                               life))
        markers += draw.ghost_markers(frame, scene.ghosts, s.path_start_colour,
                                      s.path_end_colour, s.ghost_width, life)
        markers += draw.contact_marker(frame, [p for _, p in scene.contacts],
                                       s.contact_colour, s.contact_size, life)
        fresh = self._state_fresh(now)
        if fresh and s.show_capsules:
            starts, ends, _ = self.geometry.link_segments(scene.q)
            check = self.geometry.check_pose(scene.q)
            markers += draw.capsule_markers(frame, starts[0], ends[0], self.geometry.radii,
                                            check.floor_violation, life)
        where = scene.shell.centre + [0.0, 0.0, scene.shell.outer + 0.3]
        markers.append(draw.readout_marker(frame, format_readout(self._readout(now)), where,
                                           s.text_colour, s.text_size, life))
        self.marker_publisher.publish(MarkerArray(markers=markers))
        self._last_publish = now
        self._dirty = False
        self._state_shown = fresh
        self._drawn_q = scene.q if fresh else None

    def _reuse(self, part: str, inputs: tuple, build: Callable[[], list[Marker]]
               ) -> list[Marker]:
        """The markers of ``part`` as last built while the objects in ``inputs`` are the same
        (they are replaced, never changed in place): the floor circles and a path of up to
        20,000 points cost more to build than everything else while the arm moves."""
        built = self._built.get(part)
        if built is None or any(old is not new for old, new in zip(built[0], inputs)):
            built = (inputs, build())
            self._built[part] = built
        return built[1]

    def _publish_readout(self, now: float) -> None:
        scene = self.scene
        message = ArmReadout(arm=self.arm)
        message.header.frame_id = self.frame
        fresh = self._state_fresh(now)
        stamp = scene.q_stamp if fresh and scene.q_stamp is not None else None
        message.header.stamp = stamp if stamp is not None and (stamp.sec or stamp.nanosec) \
            else self.get_clock().now().to_msg()
        message.joint_names = list(self.model.joint_names)
        message.ignored_joint_states = scene.ignored_states
        message.tracking_error = -1.0
        if fresh:
            metrics = self._pose_metrics()
            message.has_state = True
            message.joint_positions = scene.q.tolist()
            message.tip = draw.point(metrics.tip)
            message.manipulability = float(metrics.manipulability)
            message.condition_number = float(metrics.condition_number)
            message.reach_fraction = float(metrics.reach_fraction)
        if scene.target is not None:
            message.has_target = True
            message.target = draw.point(scene.target)
            if fresh:
                message.tracking_error = float(np.linalg.norm(metrics.tip - scene.target))
        if scene.ik is not None:
            message.has_ik_answer = True
            message.solver, message.branch = scene.ik.solver, scene.ik.branch
            message.ik_error_code = scene.ik.error_code
            message.ik_position_error = float(scene.ik.position_error)
        message.last_failure = scene.failure
        message.text = format_readout(self._readout(now))
        self.readout_publisher.publish(message)
        self._last_readout = now


def _code_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f'code {code}'


def main(args: list[str] | None = None) -> None:
    sys.exit(run(MarkersNode, args))


if __name__ == '__main__':
    main()
