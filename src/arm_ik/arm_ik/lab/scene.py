"""The lab's 3D scene: floor, reach shell and hole, obstacle, target gizmo, planned path,
ghost snapshots, contact dots and the pick-and-place ball (the arm is ``ArmView``; the scene's
collision objects and the collision labels are ``objects``, an ``ObjectView``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from arm_ik.lab.colours import CARRIED, CONTACT_DOT, FREE, GHOST, REACH_HOLE, REACH_SHELL, TOUCHING
from arm_ik.lab.drawing import gradient_segments, polyline_segments
from arm_ik.lab.object_view import ObjectView
from arm_kinematics.scene.geometry import SafetyGeometry
from arm_kinematics.visual.arm_visual import PlanDrawing


class LabScene:
    """Scene nodes besides the arm; every setter ignores non-finite input."""

    def __init__(self, server, shoulder: np.ndarray, max_reach: float, min_reach: float,
                 floor_z: float | None, obstacle: tuple[np.ndarray, float] | None,
                 target: np.ndarray) -> None:
        self.scene = server.scene
        self.scene.set_up_direction('+z')
        # A camera that frames the reach shell from the front right, a little above.
        look_at = np.array([shoulder[0], shoulder[1], shoulder[2] - 0.15 * max_reach])
        direction = np.array([1.0, -0.95, 0.6]) / np.linalg.norm([1.0, -0.95, 0.6])
        server.initial_camera.look_at = tuple(float(v) for v in look_at)
        server.initial_camera.position = tuple(float(v) for v in
                                               look_at + 2.7 * max_reach * direction)
        self.set_reach(shoulder, max_reach, min_reach, floor_z)
        # Updated in place (radius, colour): safety_status comes with every joint_states.
        self._obstacle = None
        self._touching = False
        if obstacle is not None:
            self.place_obstacle(obstacle)
        self.target = self.scene.add_transform_controls(
            '/target', scale=float(max(0.2, 0.25 * max_reach)), position=tuple(target),
            disable_rotations=True, depth_test=False)
        self.scene.add_icosphere('/target/ball', radius=0.03, color=(40, 110, 255),
                                 cast_shadow=False)
        self._path = None
        self._ghosts = None
        self._contacts = None
        self._contact_points = np.zeros((0, 3))
        self._ball = None
        self.objects = ObjectView(self.scene)

    def set_reach(self, shoulder: np.ndarray, max_reach: float, min_reach: float,
                  floor_z: float | None) -> None:
        """Floor grid and reach shell (and hole) of the arm; again after new link lengths
        (viser replaces nodes of the same name)."""
        size = float(2.0 * (max_reach + 0.25))
        floor = 0.0 if floor_z is None else floor_z
        self.scene.add_grid('/floor', width=size, height=size, cell_size=0.1,
                            section_size=0.5, position=(float(shoulder[0]), float(shoulder[1]),
                                                        floor),
                            plane_color=(235, 235, 228), plane_opacity=0.5 if floor_z is not None
                            else 0.0)
        self.scene.add_icosphere('/reach/shell', radius=float(max_reach), color=REACH_SHELL,
                                 opacity=0.07, subdivisions=4, position=tuple(shoulder),
                                 cast_shadow=False, receive_shadow=False)
        self.scene.add_icosphere('/reach/hole', radius=float(max(min_reach, 1e-3)),
                                 color=REACH_HOLE, opacity=0.3, subdivisions=3,
                                 position=tuple(shoulder), visible=min_reach > 0.0,
                                 cast_shadow=False, receive_shadow=False)

    def set_target_rotations(self, enabled: bool) -> None:
        """Let the gizmo turn (full-pose goals) or only move."""
        self.target.disable_rotations = not enabled

    def place_obstacle(self, ball: tuple[np.ndarray, float] | None) -> None:
        """The ball where the scene has it (centre m, radius m), or hidden (None: removed)."""
        if ball is None:
            if self._obstacle is not None:
                self._obstacle.visible = False
            return
        centre, radius = ball
        if not np.all(np.isfinite(centre)) or not np.isfinite(radius) or radius <= 0.0:
            return
        if self._obstacle is None:
            self._obstacle = self.scene.add_icosphere(
                '/obstacle', radius=float(radius), color=FREE, opacity=0.75,
                subdivisions=3, position=tuple(float(v) for v in centre))
            return
        self._obstacle.position = tuple(float(v) for v in centre)
        self._obstacle.visible = True
        if float(radius) != self._obstacle.radius:
            self._obstacle.radius = float(radius)

    def set_obstacle(self, radius: float, touching: bool) -> None:
        """Radius (m) in use and whether the arm touches it (red) or not (green)."""
        if self._obstacle is None or not np.isfinite(radius) or radius <= 0.0:
            return
        if float(radius) != self._obstacle.radius:
            self._obstacle.radius = float(radius)
        if touching != self._touching:
            self._touching = touching
            self._obstacle.color = TOUCHING if touching else FREE

    def set_path(self, tips: Sequence[Sequence[float]]) -> None:
        """The planned tool-tip path, blue at the start to orange at the end."""
        segments, colours = gradient_segments(tips)
        self._path = self._replace_lines(self._path, '/plan/path', segments, colours, 6.0)

    def set_plan(self, plan: PlanDrawing) -> None:
        """A planned move (trajectory_executor's plan): its tip path and ghosts."""
        self.set_path(plan.tips)
        self.set_ghosts(plan.ghosts)

    def set_ghosts(self, skeletons: Sequence[Sequence[Sequence[float]]]) -> None:
        """Ghost snapshots of the arm along a planned move, one polyline each."""
        pieces = [polyline_segments(points) for points in skeletons]
        segments = np.concatenate(pieces) if pieces else np.zeros((0, 2, 3))
        self._ghosts = self._replace_lines(self._ghosts, '/plan/ghosts', segments, GHOST, 3.0)

    def _replace_lines(self, old, name: str, segments: np.ndarray, colours,
                       width: float):
        """Remove the line node ``old`` (None: none yet) and draw ``segments`` (n×2×3, m)
        as ``name``; the new node, or None when there is no segment to draw."""
        if old is not None:
            old.remove()
        if not len(segments):
            return None
        return self.scene.add_line_segments(name, segments, colours, line_width=width)

    def set_contacts(self, points: Sequence[Sequence[float]]) -> None:
        """Red dots where the arm touched (or touches) the obstacle."""
        array = np.asarray(points, dtype=float).reshape(-1, 3)
        array = array[np.all(np.isfinite(array), axis=1)]
        if array.shape == self._contact_points.shape and np.allclose(array,
                                                                     self._contact_points):
            return
        self._contact_points = array
        if self._contacts is not None:
            self._contacts.remove()
            self._contacts = None
        if len(array):
            self._contacts = self.scene.add_point_cloud(
                '/contacts', array.astype(np.float32), CONTACT_DOT, point_size=0.035,
                point_shape='circle')

    def set_ball(self, position: Sequence[float], radius: float, carried: bool) -> None:
        """The pick-and-place ball (moved in place while the tool carries it)."""
        centre = np.asarray(position, dtype=float)
        if not (np.all(np.isfinite(centre)) and np.isfinite(radius) and radius > 0.0):
            return
        colour = CARRIED if carried else FREE
        if self._ball is None:
            self._ball = self.scene.add_icosphere('/ball', radius=float(radius), color=colour,
                                                  position=tuple(float(v) for v in centre))
            return
        self._ball.position = tuple(float(v) for v in centre)
        if self._ball.radius != float(radius):
            self._ball.radius = float(radius)
        if tuple(self._ball.color) != colour:
            self._ball.color = colour


def floor_of(geometry: SafetyGeometry | None) -> float | None:
    """Height of the arm's floor, m (None: no floor)."""
    return geometry.floor_z if geometry and geometry.floor_enabled else None


def obstacle_of(geometry: SafetyGeometry | None) -> tuple[np.ndarray, float] | None:
    """Centre (m) and radius (m) of the arm's obstacle (None: none)."""
    if geometry is None or not geometry.obstacle_enabled:
        return None
    return geometry.obstacle_center, geometry.config.obstacle.radius
