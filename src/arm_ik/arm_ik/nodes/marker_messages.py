"""visualization_msgs builders of the markers node: one function per namespace (and its
ArmReadout, the same numbers as the readout text).

Every builder takes plain arrays (from ``kinematics.visual``) and returns Markers in the base
frame with stamp 0 (RViz draws them with the latest transform). Namespaces, so a user can
toggle each kind in RViz: floor, reach_circles, reach_shell, target, tip_path, path_failure,
ghosts, contacts, link_capsules, readout.
"""

from __future__ import annotations

from collections.abc import Sequence
import math

from builtin_interfaces.msg import Time
import numpy as np
from visualization_msgs.msg import Marker, MarkerArray

from arm_ik.nodes.conversions import colour, duration, point
from arm_interfaces.msg import ArmReadout, PlannedPath
from arm_kinematics.visual.arm_visual import (
    Colour,
    colour_ramp,
    dashed_circle,
    floor_half_size,
    path_colours,
    PoseMetrics,
    reach_circle_radii,
    ReachShell,
    wire_cube_edges,
    z_to_direction,
)
from arm_kinematics.visual.marker_scene import FAILED, IKAnswer, PENDING, REACHED

NAMESPACES = ('floor', 'reach_circles', 'reach_shell', 'target', 'tip_path', 'path_failure',
              'ghosts', 'contacts', 'link_capsules', 'readout')
# Target colours by what became of it.
TARGET_PENDING: Colour = (1.0, 0.85, 0.2, 1.0)
TARGET_REACHED: Colour = (0.2, 1.0, 0.45, 1.0)
TARGET_FAILED: Colour = (1.0, 0.2, 0.15, 1.0)
TARGET_COLOURS = {PENDING: TARGET_PENDING, REACHED: TARGET_REACHED, FAILED: TARGET_FAILED}
_FAILURE: Colour = (1.0, 0.1, 0.1, 0.9)
_CAPSULE_OK: Colour = (0.2, 0.45, 0.95, 0.25)
_CAPSULE_LOW: Colour = (0.95, 0.2, 0.1, 0.45)
_GHOST_ALPHA = 0.35


def marker(frame: str, namespace: str, ident: int, kind: int, rgba: Sequence[float],
           lifetime: float = 0.0) -> Marker:
    """An ADD marker with identity pose, unit scale and ``rgba``."""
    m = Marker(ns=namespace, id=ident, type=kind, action=Marker.ADD, lifetime=duration(lifetime))
    m.header.frame_id = frame
    m.pose.orientation.w = 1.0
    m.scale.x = m.scale.y = m.scale.z = 1.0
    m.color = colour(rgba)
    return m


def delete_all(frame: str) -> Marker:
    """DELETEALL: first in every array, so nothing of an earlier message or run lingers."""
    m = Marker(action=Marker.DELETEALL)
    m.header.frame_id = frame
    return m


def floor_markers(frame: str, shell: ReachShell, floor_z: float, spacing: float,
                  floor_rgba: Colour, circle_rgba: Colour, text_size: float) -> list[Marker]:
    """The floor square under the arm, dashed circles every ``spacing`` m around the base
    axis, each labelled with its radius."""
    centre = np.array([shell.centre[0], shell.centre[1], floor_z])
    half = floor_half_size(shell.outer, spacing)
    plane = marker(frame, 'floor', 0, Marker.CUBE, floor_rgba)
    plane.pose.position = point(centre - [0.0, 0.0, 0.003])     # just under the circles
    plane.scale.x = plane.scale.y = 2.0 * half
    plane.scale.z = 0.004
    result = [plane]
    dashes = marker(frame, 'reach_circles', 0, Marker.LINE_LIST, circle_rgba)
    dashes.scale.x = 0.008
    radii = reach_circle_radii(shell.outer, spacing)
    segments = [dashed_circle(centre + [0.0, 0.0, 0.002], r) for r in radii]
    dashes.points = [point(p) for p in np.vstack(segments)] if segments else []
    result.append(dashes)
    for k, radius in enumerate(radii, start=1):
        label = marker(frame, 'reach_circles', k, Marker.TEXT_VIEW_FACING, circle_rgba)
        label.pose.position = point(centre + [radius * math.cos(math.pi / 4.0),
                                              -radius * math.sin(math.pi / 4.0), 0.03])
        label.scale.z = 0.6 * text_size
        label.text = f'{radius:g} m'
        result.append(label)
    return result


def shell_markers(frame: str, shell: ReachShell, shell_rgba: Colour,
                  hole_rgba: Colour) -> list[Marker]:
    """Translucent outer reach sphere, and the inner hole where the arm has one."""
    outer = marker(frame, 'reach_shell', 0, Marker.SPHERE, shell_rgba)
    outer.pose.position = point(shell.centre)
    outer.scale.x = outer.scale.y = outer.scale.z = 2.0 * shell.outer
    result = [outer]
    if shell.has_hole:
        hole = marker(frame, 'reach_shell', 1, Marker.SPHERE, hole_rgba)
        hole.pose.position = point(shell.centre)
        hole.scale.x = hole.scale.y = hole.scale.z = 2.0 * shell.inner
        result.append(hole)
    return result


def target_markers(frame: str, target: np.ndarray, rgba: Colour, size: float,
                   lifetime: float) -> list[Marker]:
    """A glowing sphere (a bright core in a faint halo) inside a wire cube."""
    core = marker(frame, 'target', 0, Marker.SPHERE, rgba, lifetime)
    core.pose.position = point(target)
    core.scale.x = core.scale.y = core.scale.z = 0.35 * size
    halo = marker(frame, 'target', 1, Marker.SPHERE, (rgba[0], rgba[1], rgba[2], 0.25),
                  lifetime)
    halo.pose.position = point(target)
    halo.scale.x = halo.scale.y = halo.scale.z = 0.7 * size
    cube = marker(frame, 'target', 2, Marker.LINE_LIST, (rgba[0], rgba[1], rgba[2], 0.9),
                  lifetime)
    cube.scale.x = max(0.004, 0.04 * size)
    cube.points = [point(p) for p in wire_cube_edges(target, size)]
    return [core, halo, cube]


def path_markers(frame: str, tips: np.ndarray, start: Colour, end: Colour, width: float,
                 lifetime: float) -> list[Marker]:
    """The planned tip path, each vertex coloured from ``start`` to ``end``, with dots at
    both ends."""
    if len(tips) < 2:
        return []
    line = marker(frame, 'tip_path', 0, Marker.LINE_STRIP, start, lifetime)
    line.scale.x = width
    line.points = [point(p) for p in tips]
    line.colors = [colour(c) for c in path_colours(len(tips), start, end)]
    ends = marker(frame, 'tip_path', 1, Marker.SPHERE_LIST, start, lifetime)
    ends.scale.x = ends.scale.y = ends.scale.z = 2.5 * width
    ends.points = [point(tips[0]), point(tips[-1])]
    ends.colors = [colour(start), colour(end)]
    return [line, ends]


def failure_marker(frame: str, where: np.ndarray, size: float, lifetime: float) -> Marker:
    """Where a planned Cartesian line failed."""
    ball = marker(frame, 'path_failure', 0, Marker.SPHERE, _FAILURE, lifetime)
    ball.pose.position = point(where)
    ball.scale.x = ball.scale.y = ball.scale.z = size
    return ball


def ghost_markers(frame: str, ghosts: Sequence[np.ndarray], start: Colour, end: Colour,
                  width: float, lifetime: float) -> list[Marker]:
    """Faint arm skeletons along the planned move, tinted like the path at their time."""
    result = []
    tints = colour_ramp(np.linspace(0.0, 1.0, len(ghosts)) if len(ghosts) > 1 else [0.0],
                        start, end)
    for k, (ghost, tint) in enumerate(zip(ghosts, tints)):
        rgba = (tint[0], tint[1], tint[2], _GHOST_ALPHA)
        line = marker(frame, 'ghosts', 2 * k, Marker.LINE_STRIP, rgba, lifetime)
        line.scale.x = width
        line.points = [point(p) for p in ghost]
        joints = marker(frame, 'ghosts', 2 * k + 1, Marker.SPHERE_LIST, rgba, lifetime)
        joints.scale.x = joints.scale.y = joints.scale.z = 2.0 * width
        joints.points = list(line.points)
        result += [line, joints]
    return result


def contact_marker(frame: str, points: Sequence[np.ndarray], rgba: Colour, size: float,
                   lifetime: float) -> list[Marker]:
    """Red dots where the safety monitor measured obstacle contact."""
    if not len(points):
        return []
    dots = marker(frame, 'contacts', 0, Marker.SPHERE_LIST, rgba, lifetime)
    dots.scale.x = dots.scale.y = dots.scale.z = size
    dots.points = [point(p) for p in points]
    return [dots]


def capsule_markers(frame: str, starts: np.ndarray, ends: np.ndarray, radii: np.ndarray,
                    below_floor: np.ndarray, lifetime: float) -> list[Marker]:
    """Each checked link as a cylinder with ball ends; red where it reaches below the floor."""
    result = []
    for k, (a, b, radius) in enumerate(zip(starts, ends, radii)):
        rgba = _CAPSULE_LOW if below_floor[k] else _CAPSULE_OK
        body = marker(frame, 'link_capsules', 2 * k, Marker.CYLINDER, rgba, lifetime)
        body.pose.position = point((a + b) / 2.0)
        x, y, z, w = z_to_direction(b - a)
        body.pose.orientation.x, body.pose.orientation.y = x, y
        body.pose.orientation.z, body.pose.orientation.w = z, w
        body.scale.x = body.scale.y = 2.0 * float(radius)
        body.scale.z = max(float(np.linalg.norm(b - a)), 1e-4)
        caps = marker(frame, 'link_capsules', 2 * k + 1, Marker.SPHERE_LIST, rgba, lifetime)
        caps.scale.x = caps.scale.y = caps.scale.z = 2.0 * float(radius)
        caps.points = [point(a), point(b)]
        result += [body, caps]
    return result


def readout_message(arm: str, frame: str, stamp: Time, joint_names: Sequence[str],
                    ignored_states: int, q: np.ndarray | None, metrics: PoseMetrics | None,
                    target: np.ndarray | None, ik: IKAnswer | None, failure: str,
                    text: str) -> ArmReadout:
    """The readout's numbers; ``q`` and ``metrics`` None when the pose is stale or unknown
    (tracking_error -1: no pose or no target)."""
    message = ArmReadout(arm=arm, joint_names=list(joint_names),
                         ignored_joint_states=ignored_states, tracking_error=-1.0,
                         last_failure=failure, text=text)
    message.header.frame_id, message.header.stamp = frame, stamp
    if q is not None and metrics is not None:
        message.has_state = True
        message.joint_positions = [float(v) for v in q]
        message.tip = point(metrics.tip)
        message.manipulability = float(metrics.manipulability)
        message.condition_number = float(metrics.condition_number)
        message.reach_fraction = float(metrics.reach_fraction)
    if target is not None:
        message.has_target = True
        message.target = point(target)
        if metrics is not None and q is not None:
            message.tracking_error = float(np.linalg.norm(metrics.tip - target))
    if ik is not None:
        message.has_ik_answer = True
        message.solver, message.branch = ik.solver, ik.branch
        message.ik_error_code.val = ik.code
        message.ik_position_error = float(ik.position_error)
    return message


def readout_marker(frame: str, text: str, where: np.ndarray, rgba: Colour, size: float,
                   lifetime: float) -> Marker:
    """The text readout, facing the camera."""
    label = marker(frame, 'readout', 0, Marker.TEXT_VIEW_FACING, rgba, lifetime)
    label.pose.position = point(where)
    label.scale.z = size
    label.text = text
    return label


# ---------------------------------------------------------------------------------------
# The ball of target_input's pick-and-place cycle (topic ball_marker, latched).

BALL_FREE: Colour = (0.2, 0.75, 0.3, 1.0)       # lying free
BALL_CARRIED: Colour = (1.0, 0.55, 0.1, 1.0)    # carried by the tool


def ball_marker(frame: str, stamp: Time, position: Sequence[float] | None, radius: float = 0.0,
                attached: bool = False, namespace: str = 'ball') -> Marker:
    """A sphere of ``radius`` m at ``position``, orange while carried, green while free;
    DELETE when ``position`` is None.

    Lifetime 0 (it stays) because it is republished on every change and latched; the node
    sends DELETE on shutdown so nothing stale remains.
    """
    m = Marker(ns=namespace, id=0)
    m.header.stamp = stamp
    m.header.frame_id = frame
    if position is None:
        m.action = Marker.DELETE
        return m
    m.type = Marker.SPHERE
    m.action = Marker.ADD
    m.pose.position = point(position)
    m.pose.orientation.w = 1.0
    m.scale.x = m.scale.y = m.scale.z = 2.0 * float(radius)
    m.color = colour(BALL_CARRIED if attached else BALL_FREE)
    return m


# ---------------------------------------------------------------------------- safety monitor
# The safety_markers array of safety_monitor: floor plane, obstacle ball, link capsules and
# contact points of the pose it judged last (stamped, with a lifetime: stale ones vanish).
SAFETY_FLOOR: Colour = (0.5, 0.5, 0.5, 0.35)
SAFETY_OBSTACLE_CLEAR: Colour = (0.1, 0.8, 0.2, 0.6)
SAFETY_OBSTACLE_CONTACT: Colour = (0.9, 0.1, 0.1, 0.8)
SAFETY_CONTACT: Colour = (1.0, 0.0, 0.0, 1.0)


def safety_markers(geometry, check, q: np.ndarray, frame: str, stamp,
                   lifetime: float) -> list[Marker]:
    """Floor plane, obstacle ball (red on contact), link capsules and contact points of
    ``q`` judged as ``check`` (a kinematics.safety PoseCheck of ``geometry``)."""
    markers = []
    if geometry.floor_enabled:
        floor = marker(frame, 'floor', 0, Marker.CUBE, SAFETY_FLOOR, lifetime)
        floor.pose.position = point([geometry.shoulder[0], geometry.shoulder[1],
                                     geometry.floor_z - 0.005])
        floor.scale.x = floor.scale.y = 2.0 * (geometry.model.max_reach() + 0.5)
        floor.scale.z = 0.01
        markers.append(floor)
    if geometry.obstacle_enabled:
        touching = bool(check.obstacle_contact.any())
        ball = marker(frame, 'obstacle', 0, Marker.SPHERE,
                      SAFETY_OBSTACLE_CONTACT if touching else SAFETY_OBSTACLE_CLEAR, lifetime)
        ball.pose.position = point(geometry.obstacle_center)
        ball.scale.x = ball.scale.y = ball.scale.z = 2.0 * geometry.config.obstacle.radius
        markers.append(ball)
    starts, ends, _ = geometry.link_segments(q)
    markers += capsule_markers(frame, starts[0], ends[0], geometry.radii,
                               check.floor_violation, lifetime)
    contacts = marker(frame, 'contacts', 0, Marker.SPHERE_LIST, SAFETY_CONTACT, lifetime)
    contacts.scale.x = contacts.scale.y = contacts.scale.z = 0.05
    contacts.points = [point(check.closest_points[k])
                       for k in np.flatnonzero(check.obstacle_contact)]
    if not contacts.points:
        contacts.action = Marker.DELETE     # no contact now: remove the last ones at once
    markers.append(contacts)
    for m in markers:
        m.header.stamp = stamp
    return markers


# ---------------------------------------------------------------------- planned_path
# trajectory_executor's latched planned_path MarkerArray, drawn from its PlannedPath message
# (one conversion path: plan -> PlannedPath -> markers): a plan's tool path (green line),
# ghost poses (grey skeletons) and target (blue ball); a failed Cartesian line's part
# followed (orange) and failing point (red). A DELETEALL first, so markers of an earlier
# plan never linger.
_PLANNED_PATH: Colour = (0.1, 0.8, 0.2, 1.0)
_PLANNED_GHOST: Colour = (0.7, 0.7, 0.75, 0.35)
_PLANNED_TARGET: Colour = (0.2, 0.4, 1.0, 0.9)
_FAILED_PATH: Colour = (1.0, 0.5, 0.0, 1.0)
_FAILED_POINT: Colour = (1.0, 0.1, 0.1, 0.9)


def _planned_marker(frame: str, namespace: str, ident: int, kind: int, rgba: Colour,
                    width: float) -> Marker:
    m = marker(frame, namespace, ident, kind, rgba)
    m.scale.x = m.scale.y = m.scale.z = width
    return m


def planned_path_markers(path: PlannedPath) -> MarkerArray:
    """The planned_path MarkerArray of a PlannedPath message (see the section comment)."""
    frame = path.header.frame_id
    markers = MarkerArray(markers=[delete_all(frame)])
    if path.feasible:
        line = _planned_marker(frame, 'tip_path', 0, Marker.LINE_STRIP, _PLANNED_PATH, 0.01)
        line.points = list(path.tip_path)
        markers.markers.append(line)
        start = 0
        for index, size in enumerate(path.ghost_sizes):
            skeleton = _planned_marker(frame, 'ghosts', index, Marker.LINE_STRIP,
                                       _PLANNED_GHOST, 0.03)
            skeleton.points = list(path.ghost_points[start:start + size])
            start += size
            markers.markers.append(skeleton)
    else:
        if len(path.tip_path) > 1:
            line = _planned_marker(frame, 'tip_path', 0, Marker.LINE_STRIP, _FAILED_PATH, 0.01)
            line.points = list(path.tip_path)
            markers.markers.append(line)
        if path.has_failure_point:
            ball = _planned_marker(frame, 'failure', 0, Marker.SPHERE, _FAILED_POINT, 0.06)
            ball.pose.position = path.failure_point
            markers.markers.append(ball)
    if path.has_target:
        ball = _planned_marker(frame, 'target', 0, Marker.SPHERE, _PLANNED_TARGET, 0.05)
        ball.pose.position = path.target
        markers.markers.append(ball)
    return markers
