"""markers: what RViz shows of one arm besides its model, and the readout numbers for plots.

Parameters: arm, base_frame, tip_frame (read-only); robot_description (a new one with the
same joints, e.g. new link lengths, redraws the reach shell, floor and capsules at once); the
rates, sizes, durations and colours of ``marker_settings`` (validated: NaN, inf, negative,
zero and wrongly typed values are rejected with a reason and the old value kept).
Subscribes (relative names, in the arm's namespace):
  joint_states    sensor_msgs/JointState (sensor-data QoS; NaN/inf or malformed: ignored)
  arm_info        arm_interfaces/ArmInfo (latched): the reach shell it announces
  ik_status       arm_interfaces/IKStatus: target, IK error, solver, branch, failures
  plan            arm_interfaces/PlannedPath (latched) of trajectory_executor: tip path,
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
Sent on change (at most update_rate per second) and as a heartbeat (republish_rate). What
each input changes in the drawing is decided in ``kinematics.marker_scene``; the Marker
builders are in ``marker_messages``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import math
import sys
import time

from rclpy.node import Node
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState
from visualization_msgs.msg import Marker, MarkerArray

from arm_ik.batched_subscription import BatchedSubscription
from arm_ik.nodes import marker_messages as draw
from arm_ik.nodes.common import (
    declare_arm_model,
    declare_parameters,
    DescriptionReload,
    LATCHED_QOS,
    run,
    safety_geometry_of,
    StartupError,
    STATE_BATCH_PERIOD,
    subscribe_joint_states,
)
from arm_ik.nodes.marker_settings import MarkerSettings, PARAMETERS, settings_reason
from arm_ik.nodes.motion_messages import plan_drawing_from_message
from arm_ik.nodes.task_messages import TARGET_STATUS_QOS
from arm_interfaces.msg import (
    ArmInfo,
    ArmReadout,
    IKStatus,
    PlannedPath,
    SafetyStatus,
    TargetStatus,
)
from arm_kinematics.common.joint_state import positions_by_name
from arm_kinematics.ik.solvers.base import Workspace, workspace_from_model
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.scene.geometry import SafetyGeometry
from arm_kinematics.visual.arm_visual import (
    format_readout,
    pose_metrics,
    PoseMetrics,
    reach_shell,
    ReachShell,
    Readout,
)
from arm_kinematics.visual.marker_scene import IKAnswer, MarkerScene

# target_status states → MarkerScene.target_report's words.
REPORTS = {TargetStatus.STARTED: 'started', TargetStatus.SUCCEEDED: 'succeeded',
           TargetStatus.FAILED: 'failed', TargetStatus.REFUSED: 'refused'}


def _xyz(p) -> tuple[float, float, float]:
    return (p.x, p.y, p.z)


@dataclass(frozen=True)
class ArmShapes:
    """What the node draws of one arm model: capsules and floor, reach rules, shell."""

    model: ArmModel
    geometry: SafetyGeometry
    workspace: Workspace
    shell: ReachShell


class MarkersNode(Node):
    """Turns the arm's state and the pipeline's status topics into markers and a readout."""

    def __init__(self) -> None:
        super().__init__('markers')
        self.arm, self.model, self._config = declare_arm_model(self, reloadable=True)
        shapes = self._shapes(self.model)
        self.geometry, self.workspace = shapes.geometry, shapes.workspace
        self.frame = self.model.base_link
        values = declare_parameters(self, PARAMETERS, prefix='bad ')
        reason = settings_reason(values)
        if reason:
            raise StartupError(f'bad parameter: {reason}')
        self.settings = MarkerSettings.from_values(values)
        PARAMETERS.watch(self, self._apply_parameters, settings_reason)

        self.scene = MarkerScene(shapes.shell)
        self._dirty = True
        self._last_publish = -math.inf
        self._last_readout = -math.inf
        self._state_shown = False
        self._built: dict[str, tuple[tuple, list[Marker]]] = {}

        self.marker_publisher = self.create_publisher(MarkerArray, 'markers', LATCHED_QOS)
        self.readout_publisher = self.create_publisher(ArmReadout, 'readout', 10)
        self.joint_states = subscribe_joint_states(self, self._on_joint_states)
        self.create_subscription(ArmInfo, 'arm_info', self._on_arm_info, LATCHED_QOS)
        self.create_subscription(IKStatus, 'ik_status', self._on_ik_status, 10)
        self.create_subscription(PlannedPath, 'plan', self._on_plan, LATCHED_QOS)
        # Judged per joint_states message: batched as they are.
        self.safety_status = BatchedSubscription(self, SafetyStatus, 'safety_status',
                                                 self._on_safety_status, QoSProfile(depth=10),
                                                 STATE_BATCH_PERIOD)
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
    def _apply_parameters(self, values: dict) -> None:
        old_rate = self.settings.update_rate
        self.settings = MarkerSettings.from_values(values)
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
        if self.scene.pose(q, now, message.header.stamp):
            self._dirty = True              # the tick paces it to update_rate
        if now - self._last_readout >= 1.0 / self.settings.readout_rate:
            self._publish_readout(now)

    def _on_arm_info(self, message: ArmInfo) -> None:
        if self.scene.announced_shell(_xyz(message.shoulder), message.max_reach,
                                      message.min_reach):
            self._dirty = True
        else:
            self.get_logger().warning('arm_info with a non-finite or empty reach ignored')

    def _on_ik_status(self, message: IKStatus) -> None:
        self.scene.ik_answered(IKAnswer(message.solver, message.branch,
                                        int(message.error_code.val),
                                        float(message.position_error)),
                               _xyz(message.target), message.message)
        self._dirty = True
        self._publish_readout(time.monotonic())

    def _on_plan(self, message: PlannedPath) -> None:
        self.scene.planned(plan_drawing_from_message(message))
        self._dirty = True

    def _on_safety_status(self, message: SafetyStatus) -> None:
        if self.scene.measured_contacts([_xyz(p) for p in message.contact_points],
                                        time.monotonic(), self.settings.contact_memory):
            self._dirty = True

    def _on_target_status(self, message: TargetStatus) -> None:
        if self.scene.target_report(REPORTS.get(message.state, ''), _xyz(message.target),
                                    message.phase or message.source, message.message):
            self._dirty = True

    # ------------------------------------------------------------------ output
    def _state_fresh(self, now: float) -> bool:
        return self.scene.fresh(now, self.settings.state_timeout)

    def _tick(self) -> None:
        now = time.monotonic()
        scene, settings = self.scene, self.settings
        if scene.expire_contacts(now, settings.contact_memory):
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
        return self.scene.readout(self.arm, self._pose_metrics() if self._state_fresh(now)
                                  else None)

    def _publish_markers(self, now: float) -> None:
        s, scene, frame = self.settings, self.scene, self.frame
        life = s.marker_lifetime
        markers = [draw.delete_all(frame)]
        markers += self._reuse('scene', (scene.shell, self.geometry, s), lambda: (
            draw.floor_markers(frame, scene.shell, self.geometry.floor_z, s.circle_spacing,
                               s.floor_colour, s.circle_colour, s.text_size)
            + draw.shell_markers(frame, scene.shell, s.shell_colour, s.hole_colour)))
        if scene.target is not None:
            markers += draw.target_markers(frame, scene.target,
                                           draw.TARGET_COLOURS[scene.target_fate],
                                           s.target_size, life)
        plan = scene.plan
        markers += self._reuse('path', (plan, s), lambda: draw.path_markers(
            frame, plan.tips, s.path_start_colour, s.path_end_colour, s.path_width, life))
        if plan.failure_point is not None:
            markers.append(draw.failure_marker(frame, plan.failure_point, 2.0 * s.contact_size,
                                               life))
        markers += draw.ghost_markers(frame, plan.ghosts, s.path_start_colour,
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
        scene.drawn_q = scene.q if fresh else None

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
        fresh = self._state_fresh(now)
        stamp = scene.q_stamp if fresh and scene.q_stamp is not None else None
        if stamp is None or not (stamp.sec or stamp.nanosec):
            stamp = self.get_clock().now().to_msg()
        self.readout_publisher.publish(draw.readout_message(
            self.arm, self.frame, stamp, self.model.joint_names, scene.ignored_states,
            scene.q if fresh else None, self._pose_metrics() if fresh else None,
            scene.target, scene.ik, scene.failure, format_readout(self._readout(now))))
        self._last_readout = now


def main(args: list[str] | None = None) -> None:
    sys.exit(run(MarkersNode, args))


if __name__ == '__main__':
    main()
