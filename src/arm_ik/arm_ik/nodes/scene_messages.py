"""Scene messages <-> kinematics.collision.Scene mappings, and the scene as RViz markers.

Only conversions live here: every rule (sizes > 0, finite numbers, the base frame, meshes that
load, all or nothing) is the core Scene's, so a node and a YAML file refuse the same input with
the same reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from geometry_msgs.msg import Pose
import numpy as np
from rclpy.node import Node
from visualization_msgs.msg import Marker, MarkerArray

from arm_ik.nodes import marker_messages as draw
from arm_interfaces.msg import Scene as SceneMsg
from arm_interfaces.msg import SceneObject as SceneObjectMsg
from arm_kinematics.common.transforms import matrix_to_quaternion
from arm_kinematics.description.meshes import resolve_mesh
from arm_kinematics.scene.objects import KINDS, Scene, SceneError, SceneObject

SCENE_RGBA = (0.55, 0.45, 0.85, 0.6)


def spec_from_message(message: SceneObjectMsg) -> dict:
    """The Scene mapping of one SceneObject message (validated later by ``Scene.build``).

    Raises:
        SceneError: ``size`` has the wrong count for the type (the other rules are the
            Scene's).
    """
    kind = message.type
    where = f'scene object "{message.id}"'
    spec: dict = {'id': message.id, 'type': kind, 'frame': message.frame_id,
                  'pose': pose_spec(message.pose)}
    if message.rule:
        spec['rule'] = message.rule
    sizes = [float(v) for v in message.size]
    if kind == 'box':
        if len(sizes) != 3:
            raise SceneError(f'{where}: a box needs size [x, y, z] (3 numbers), got {sizes}')
        spec['size'] = sizes
    elif kind == 'sphere':
        if len(sizes) != 1:
            raise SceneError(f'{where}: a sphere needs size [radius], got {sizes}')
        spec['radius'] = sizes[0]
    elif kind == 'cylinder':
        if len(sizes) != 2:
            raise SceneError(f'{where}: a cylinder needs size [radius, length], got {sizes}')
        spec['radius'], spec['length'] = sizes
    elif kind == 'mesh':
        if sizes:
            raise SceneError(f'{where}: a mesh takes no size (use scale), got {sizes}')
        spec['file'] = message.mesh_file
        spec['convex'] = bool(message.convex)
        if len(message.scale):
            spec['scale'] = [float(v) for v in message.scale]
    elif kind not in KINDS:
        pass    # the Scene names the valid types
    return spec


def pose_spec(pose: Pose) -> dict:
    """{xyz, quaternion} of a geometry_msgs/Pose (the Scene checks finiteness and zero)."""
    p, o = pose.position, pose.orientation
    return {'xyz': [float(p.x), float(p.y), float(p.z)],
            'quaternion': [float(o.x), float(o.y), float(o.z), float(o.w)]}


def pose_message(matrix: np.ndarray) -> Pose:
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = (float(v) for v in matrix[:3, 3])
    x, y, z, w = matrix_to_quaternion(matrix[:3, :3])
    pose.orientation.x, pose.orientation.y = float(x), float(y)
    pose.orientation.z, pose.orientation.w = float(z), float(w)
    return pose


def object_message(item: SceneObject, frame: str) -> SceneObjectMsg:
    """The SceneObject message of a scene object (sizes from its validated spec)."""
    spec = item.spec
    message = SceneObjectMsg(id=item.id, type=spec['type'], frame_id=frame,
                             pose=pose_message(item.pose), rule=item.rule)
    if spec['type'] == 'box':
        message.size = [float(v) for v in spec['size']]
    elif spec['type'] == 'sphere':
        message.size = [float(spec['radius'])]
    elif spec['type'] == 'cylinder':
        message.size = [float(spec['radius']), float(spec['length'])]
    else:
        message.mesh_file = str(spec['file'])
        message.scale = [float(v) for v in spec.get('scale', (1.0, 1.0, 1.0))]
        message.convex = bool(spec.get('convex', False))
        message.mesh_bounds = mesh_bounds(item)
    return message


def mesh_bounds(item: SceneObject) -> list[float]:
    """[min x, y, z, max x, y, z] of an object's shape in its own frame, m (the box a viewer
    draws when it cannot load the mesh file)."""
    shape = item.shape
    half = shape.half_extents if shape.half_extents is not None else np.full(3, shape.radius)
    return [float(v) for v in np.concatenate([shape.centre - half, shape.centre + half])]


def scene_message(scene: Scene, stamp) -> SceneMsg:
    message = SceneMsg(version=scene.version,
                       objects=[object_message(item, scene.frame) for item in scene.objects])
    message.header.frame_id = scene.frame
    message.header.stamp = stamp
    return message


def scene_from_message(message: SceneMsg, frame: str,
                       search_paths: Sequence[str] = ()) -> Scene:
    """A Scene holding the message's objects and version (a subscriber's copy).

    Raises:
        SceneError: an object is refused (the frame differs, a mesh does not load here).
    """
    scene = Scene(frame, list(search_paths))
    scene.add_all([spec_from_message(item) for item in message.objects])
    scene.version = int(message.version)
    return scene


def object_entries(message: SceneMsg) -> tuple[list[tuple[dict, list[float]]], list[str]]:
    """Each object's Scene mapping with its ``mesh_bounds``, for a viewer that draws the
    objects one by one: an object whose sizes do not fit its type is left out with the
    reason (the Scene's own rules are the viewer's to apply, per object)."""
    entries, refused = [], []
    for item in message.objects:
        try:
            entries.append((spec_from_message(item), [float(v) for v in item.mesh_bounds]))
        except SceneError as error:
            refused.append(str(error))
    return entries, refused


def scene_markers(scene: Scene, stamp) -> MarkerArray:
    """Every object as a marker after a DELETEALL, so removed objects vanish from RViz. The
    floor and the ball (rule objects) are left to safety_markers, which colours them by
    their own rules' contact."""
    frame = scene.frame
    markers = [draw.delete_all(frame)]
    for ident, item in enumerate(scene.checked_objects):
        spec = item.spec
        kind = {'box': Marker.CUBE, 'sphere': Marker.SPHERE, 'cylinder': Marker.CYLINDER,
                'mesh': Marker.MESH_RESOURCE}[spec['type']]
        m = draw.marker(frame, 'scene', ident, kind, SCENE_RGBA)
        m.pose = pose_message(item.pose)
        m.text = item.id
        if spec['type'] == 'box':
            m.scale.x, m.scale.y, m.scale.z = (float(v) for v in spec['size'])
        elif spec['type'] == 'sphere':
            m.scale.x = m.scale.y = m.scale.z = 2.0 * float(spec['radius'])
        elif spec['type'] == 'cylinder':
            m.scale.x = m.scale.y = 2.0 * float(spec['radius'])
            m.scale.z = float(spec['length'])
        else:
            path = resolve_mesh(str(spec['file']), scene.search_paths)
            m.mesh_resource = spec['file'] if str(spec['file']).startswith('package://') \
                else f'file://{path}'
            m.scale.x, m.scale.y, m.scale.z = (float(v) for v in
                                               spec.get('scale', (1.0, 1.0, 1.0)))
        markers.append(m)
    for m in markers:
        m.header.stamp = stamp
    return MarkerArray(markers=markers)


class SceneFollower:
    """A node's copy of the scene published by safety_monitor (``scene``, latched).

    Each accepted message becomes a new Scene handed whole to ``use`` (checkers in other
    threads keep the one they hold until they take the next). A message this node cannot
    rebuild (a mesh missing on this machine) keeps the previous scene and says why, rather
    than checking against a scene with an object left out.
    """

    def __init__(self, node: Node, frame: str, search_paths: Sequence[str],
                 use: Callable[[Scene], None], callback_group=None) -> None:
        from arm_ik.nodes.common import LATCHED_QOS
        self._node = node
        self.frame = frame
        self.search_paths = list(search_paths)
        self._use = use
        self.scene: Scene | None = None
        node.create_subscription(SceneMsg, 'scene', self._on_scene, LATCHED_QOS,
                                 callback_group=callback_group)

    def _on_scene(self, message: SceneMsg) -> None:
        try:
            scene = scene_from_message(message, self.frame, self.search_paths)
        except SceneError as error:
            kept = 'none' if self.scene is None else self.scene.version
            self._node.get_logger().error(f'scene version {message.version} not usable here: '
                                          f'{error}; keeping version {kept}')
            return
        self.scene = scene
        self._use(scene)
        self._node.get_logger().info(f'scene version {scene.version}: {len(scene)} objects '
                                     f'({", ".join(scene.ids) or "none"})')
