"""The planning scene as move_group keeps it: world collision objects (boxes, spheres,
cylinders, meshes) with ADD / REMOVE / APPEND / MOVE, objects attached to a link and detached
again, all turned into the one ``scene.objects.Scene`` the project's checker, IK and planner
use.

Objects are stored in the base frame: an object given in a moving link's frame is placed
where that link is at the current state when it arrives (MoveIt's world objects do the same).
Attached objects are kept (and reported) with their link and touch links; they leave the
world while attached and come back where the link put them when detached.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
import hashlib
import math
from pathlib import Path
import tempfile
import threading

import numpy as np

from arm_kinematics.moveit import codes
from arm_kinematics.moveit.codes import Answer
from arm_kinematics.moveit.robot import MoveItRobot
from arm_kinematics.scene.objects import Scene, SceneError

ADD, REMOVE, APPEND, MOVE = 0, 1, 2, 3
PRIMITIVE_KINDS = {1: 'box', 2: 'sphere', 3: 'cylinder', 4: 'cone'}
DIMENSIONS = {'box': 3, 'sphere': 1, 'cylinder': 2, 'cone': 2}


@dataclass(frozen=True)
class Primitive:
    """A SolidPrimitive: kind, dimensions as MoveIt orders them (box x y z; sphere r;
    cylinder height, radius), pose in the object's frame."""

    kind: str
    dimensions: tuple[float, ...]
    pose: np.ndarray = field(default_factory=lambda: np.eye(4))


@dataclass(frozen=True)
class Mesh:
    vertices: np.ndarray                 # (N, 3) m
    triangles: np.ndarray                # (M, 3) vertex indices
    pose: np.ndarray = field(default_factory=lambda: np.eye(4))


@dataclass(frozen=True)
class CollisionObjectSpec:
    """A CollisionObject as plain values (``pose``: the object's pose in ``frame_id``)."""

    id: str
    frame_id: str = ''
    pose: np.ndarray = field(default_factory=lambda: np.eye(4))
    operation: int = ADD
    primitives: tuple[Primitive, ...] = ()
    meshes: tuple[Mesh, ...] = ()


@dataclass(frozen=True)
class Attached:
    link: str
    spec: CollisionObjectSpec            # posed in the link's frame
    touch_links: tuple[str, ...] = ()


def _finite(values: object) -> bool:
    array = np.asarray(values, dtype=float)
    return bool(np.all(np.isfinite(array)))


def shape_reason(spec: CollisionObjectSpec) -> str:
    """'' when every shape of ``spec`` is usable here, else why not."""
    where = f'collision object "{spec.id}"'
    if not _finite(spec.pose):
        return f'{where}: its pose is not finite'
    for primitive in spec.primitives:
        if primitive.kind not in ('box', 'sphere', 'cylinder'):
            return (f'{where}: a {primitive.kind} is not a shape the collision checker has '
                    '(box, sphere, cylinder, mesh)')
        dims = primitive.dimensions
        if len(dims) < DIMENSIONS[primitive.kind] or not all(
                isinstance(d, (int, float)) and math.isfinite(d) and d > 0
                for d in dims[:DIMENSIONS[primitive.kind]]):
            return (f'{where}: a {primitive.kind} needs {DIMENSIONS[primitive.kind]} finite '
                    f'dimensions > 0, got {list(dims)}')
        if not _finite(primitive.pose):
            return f'{where}: a primitive pose is not finite'
    for mesh in spec.meshes:
        if len(mesh.vertices) < 3 or len(mesh.triangles) < 1 or not _finite(mesh.vertices) \
                or not _finite(mesh.pose):
            return f'{where}: a mesh needs 3+ finite vertices and 1+ triangles'
        if np.max(mesh.triangles) >= len(mesh.vertices) or np.min(mesh.triangles) < 0:
            return f'{where}: a mesh triangle names a vertex it does not have'
    return ''


class PlanningSceneState:
    """The world and attached objects, and the Scene built from them (swapped whole).

    Args:
        robot: the robot (frames for objects given in a link's frame).
        search_paths: mesh folders of the Scene.
        mesh_folder: where inline meshes are written as STL files (a temporary folder when
            None).
    """

    def __init__(self, robot: MoveItRobot, search_paths: Sequence[str] = (),
                 mesh_folder: str | None = None) -> None:
        self.robot = robot
        self.search_paths = list(search_paths)
        self._mesh_folder = Path(mesh_folder or tempfile.mkdtemp(prefix='move_group_meshes_'))
        self.world: dict[str, CollisionObjectSpec] = {}
        self.attached: dict[str, Attached] = {}
        self.scene = Scene(robot.base_link, self.search_paths)
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ world
    def _in_base(self, spec: CollisionObjectSpec, q: np.ndarray) -> Answer:
        frame = self.robot.frame_pose(spec.frame_id, q)
        if not frame.success:
            return codes.fail(codes.FRAME_TRANSFORM_FAILURE,
                              f'collision object "{spec.id}": {frame.message}')
        return Answer(codes.SUCCESS, '', replace(spec, frame_id=self.robot.base_link,
                                                 pose=frame.value @ spec.pose))

    def apply(self, spec: CollisionObjectSpec, q: np.ndarray) -> Answer:
        """One CollisionObject on the world (value: the new Scene)."""
        with self._lock:
            world = dict(self.world)
            if spec.operation == REMOVE:
                if not spec.id:
                    world.clear()
                elif spec.id not in world:
                    return codes.fail(codes.INVALID_OBJECT_NAME,
                                      f'no world object "{spec.id}" to remove')
                else:
                    del world[spec.id]
                return self._commit(world, dict(self.attached))
            if not spec.id:
                return codes.fail(codes.INVALID_OBJECT_NAME, 'a collision object needs an id')
            reason = shape_reason(spec)
            if reason:
                return codes.fail(codes.INVALID_OBJECT_NAME, reason)
            placed = self._in_base(spec, q)
            if not placed.success:
                return placed
            spec = placed.value
            if spec.operation == ADD:
                if not (spec.primitives or spec.meshes):
                    return codes.fail(codes.INVALID_OBJECT_NAME,
                                      f'collision object "{spec.id}": ADD without shapes')
                world[spec.id] = spec
            elif spec.operation in (APPEND, MOVE):
                old = world.get(spec.id)
                if old is None:
                    if spec.operation == MOVE:
                        return codes.fail(codes.INVALID_OBJECT_NAME,
                                          f'no world object "{spec.id}" to move')
                    world[spec.id] = spec
                elif spec.operation == APPEND:
                    # New shapes are given in the new pose's frame: bring them into the old.
                    relative = np.linalg.inv(old.pose) @ spec.pose
                    world[spec.id] = replace(old, primitives=old.primitives + tuple(
                        replace(p, pose=relative @ p.pose) for p in spec.primitives),
                        meshes=old.meshes + tuple(replace(m, pose=relative @ m.pose)
                                                  for m in spec.meshes))
                else:
                    world[spec.id] = replace(old, pose=spec.pose)
            else:
                return codes.fail(codes.INVALID_OBJECT_NAME,
                                  f'collision object "{spec.id}": unknown operation '
                                  f'{spec.operation}')
            return self._commit(world, dict(self.attached))

    # ------------------------------------------------------------------ attached
    def attach(self, link: str, spec: CollisionObjectSpec, touch_links: Sequence[str],
               q: np.ndarray) -> Answer:
        """An AttachedCollisionObject with ADD: a new object on ``link``, or a world object
        (same id, no shapes) taken off the world onto ``link``."""
        with self._lock:
            pose = self.robot.link_pose(link, q)
            if not pose.success:
                return pose
            link_inverse = np.linalg.inv(pose.value)
            world, attached = dict(self.world), dict(self.attached)
            if not spec.id:
                return codes.fail(codes.INVALID_OBJECT_NAME, 'an attached object needs an id')
            if spec.primitives or spec.meshes:
                reason = shape_reason(spec)
                if reason:
                    return codes.fail(codes.INVALID_OBJECT_NAME, reason)
                frame_id = spec.frame_id.lstrip('/') or link
                if frame_id == link:
                    in_link = replace(spec, frame_id=link)
                else:
                    placed = self._in_base(spec, q)
                    if not placed.success:
                        return placed
                    in_link = replace(placed.value, frame_id=link,
                                      pose=link_inverse @ placed.value.pose)
                world.pop(spec.id, None)
            elif spec.id in world:
                old = world.pop(spec.id)
                in_link = replace(old, frame_id=link, pose=link_inverse @ old.pose)
            else:
                return codes.fail(codes.INVALID_OBJECT_NAME,
                                  f'attach "{spec.id}": no shapes given and no world object '
                                  'of that id')
            attached[spec.id] = Attached(link, replace(in_link, operation=ADD),
                                         tuple(touch_links))
            return self._commit(world, attached)

    def detach(self, object_id: str, q: np.ndarray) -> Answer:
        """Detach ``object_id`` ('' every object): back into the world where its link holds
        it now."""
        with self._lock:
            world, attached = dict(self.world), dict(self.attached)
            ids = list(attached) if not object_id else [object_id]
            for name in ids:
                item = attached.pop(name, None)
                if item is None:
                    return codes.fail(codes.INVALID_OBJECT_NAME,
                                      f'no attached object "{name}" to detach')
                pose = self.robot.link_pose(item.link, q)
                world[name] = replace(item.spec, frame_id=self.robot.base_link,
                                      pose=pose.value @ item.spec.pose)
            return self._commit(world, attached)

    def clear(self) -> Answer:
        with self._lock:
            return self._commit({}, {})

    # ------------------------------------------------------------------ the scene
    def _commit(self, world: dict[str, CollisionObjectSpec],
                attached: dict[str, Attached]) -> Answer:
        """Build the Scene of ``world``; on success it replaces the current one whole."""
        scene = Scene(self.robot.base_link, self.search_paths)
        try:
            for spec in world.values():
                for entry in self.scene_entries(spec):
                    scene.add(entry)
        except (SceneError, ValueError) as error:
            return codes.fail(codes.INVALID_OBJECT_NAME, str(error))
        scene.version = self.scene.version + 1
        self.world, self.attached, self.scene = world, attached, scene
        return Answer(codes.SUCCESS, f'{len(world)} world and {len(attached)} attached '
                      'objects', scene)

    def scene_entries(self, spec: CollisionObjectSpec) -> list[dict]:
        """The project's scene objects of one world object (one per shape: "id", "id#1"…)."""
        entries = []
        shapes = [*spec.primitives, *spec.meshes]
        for i, shape in enumerate(shapes):
            pose = spec.pose @ shape.pose
            entry: dict = {'id': spec.id if i == 0 else f'{spec.id}#{i}',
                           'pose': pose.tolist()}
            if isinstance(shape, Mesh):
                entry.update(type='mesh', file=self.mesh_file(shape))
            elif shape.kind == 'box':
                entry.update(type='box', size=[float(d) for d in shape.dimensions[:3]])
            elif shape.kind == 'sphere':
                entry.update(type='sphere', radius=float(shape.dimensions[0]))
            else:
                entry.update(type='cylinder', length=float(shape.dimensions[0]),
                             radius=float(shape.dimensions[1]))
            entries.append(entry)
        return entries

    def mesh_file(self, mesh: Mesh) -> str:
        """An inline mesh written once as a binary STL (named by its content)."""
        import trimesh
        vertices = np.asarray(mesh.vertices, dtype=float)
        faces = np.asarray(mesh.triangles, dtype=np.int64)
        digest = hashlib.sha1(vertices.tobytes() + faces.tobytes()).hexdigest()[:16]
        path = self._mesh_folder / f'{digest}.stl'
        if not path.exists():
            self._mesh_folder.mkdir(parents=True, exist_ok=True)
            trimesh.Trimesh(vertices, faces, process=False).export(str(path))
        return str(path)
