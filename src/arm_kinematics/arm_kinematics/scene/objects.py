"""The scene: objects (boxes, spheres, cylinders, meshes) posed in the arm's base frame.

Objects are added, moved and removed by id. Every change is validated in full before anything
is touched, so a refused change (``SceneError`` with the reason) leaves the scene exactly as it
was; a YAML file is loaded the same way, all objects or none. ``version`` counts accepted
changes so a checker knows when to rebuild its pair list.

Object mapping (YAML or service):

    id: table                      # unique, non-empty
    type: box                      # box | sphere | cylinder | mesh
    size: [1.0, 0.6, 0.02]         # box: full side lengths, m
    radius: 0.1                    # sphere, cylinder, m
    length: 0.3                    # cylinder, along its z axis, m
    file: package://pkg/m.stl      # mesh: package://, file:// or a path (search paths)
    scale: [1, 1, 1]               # mesh, optional
    convex: false                  # mesh, optional: check its convex hull instead
    frame: base_link               # optional; only the arm's base frame is accepted
    pose: {xyz: [x, y, z], rpy: [r, p, y]}      # or quaternion: [x, y, z, w]; m, rad
    rule: obstacle                 # set by the safety monitor only (see below)

A *rule object* (``rule: floor`` a box, ``rule: obstacle`` a sphere) is an arm's floor or
ball from its safety section (``scene.scene_rules``): it is in the scene so every
node sees, draws and moves it like any object, but it is judged by the arm's own safety rules
(capsules against the floor plane and the ball), never by the collision shapes, so those
rules stay exactly as they were. ``checked_objects`` leaves rule objects out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
import copy
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from arm_kinematics.common.checks import is_numeric
from arm_kinematics.common.transforms import make_transform, quaternion_to_matrix, rpy_to_matrix
from arm_kinematics.common.yaml_file import read_yaml_file, YamlFileError
from arm_kinematics.description.meshes import resolve_mesh
from arm_kinematics.scene.shapes import (
    box_shape,
    cylinder_shape,
    mesh_shape,
    Shape,
    ShapeError,
    sphere_shape,
)

KINDS = ('box', 'sphere', 'cylinder', 'mesh')
RULE_TYPES = {'floor': 'box', 'obstacle': 'sphere'}   # rule -> the type it must have
_KEYS = {'id', 'type', 'size', 'radius', 'length', 'file', 'scale', 'convex', 'frame', 'pose',
         'rule'}
_SIZE_KEYS = {'box': {'size'}, 'sphere': {'radius'}, 'cylinder': {'radius', 'length'},
              'mesh': {'file', 'scale', 'convex'}}


class SceneError(ValueError):
    """A scene change that was refused; the message says why. The scene is unchanged."""


@dataclass(frozen=True, eq=False)
class SceneObject:
    """One object of the scene.

    Attributes:
        id: its unique name.
        spec: the validated mapping it was made from (pose included, plain data).
        shape: the collision shape (its ``origin`` is the identity).
        pose: 4×4 pose in the base frame.
    """

    id: str
    spec: dict
    shape: Shape
    pose: np.ndarray

    @property
    def rule(self) -> str:
        """'floor' or 'obstacle' for the arm's own floor and ball, else ''."""
        return str(self.spec.get('rule') or '')


def _finite_vector(value: object, size: int, what: str) -> np.ndarray:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or \
            len(value) != size:
        raise SceneError(f'{what} must be a list of {size} numbers, got {value!r}')
    try:
        vector = np.array([float(v) for v in value])
    except (TypeError, ValueError):
        raise SceneError(f'{what} must be a list of {size} numbers, got {value!r}') from None
    if not np.all(np.isfinite(vector)):
        raise SceneError(f'{what} must be finite (no NaN or inf), got {value!r}')
    return vector


def parse_pose(pose: object, what: str = 'pose') -> np.ndarray:
    """4×4 from {xyz: [3], rpy: [3]} or {xyz: [3], quaternion: [x, y, z, w]} (m, rad), or a
    4×4 nested list / array.

    Raises:
        SceneError: missing or non-finite values, both rpy and quaternion, a zero quaternion,
            or a matrix whose rotation is not orthonormal.
    """
    if pose is None:
        return np.eye(4)
    if isinstance(pose, np.ndarray) or (isinstance(pose, Sequence) and
                                        not isinstance(pose, (str, bytes))):
        matrix = np.asarray(pose, dtype=float) if is_numeric(pose) else None
        if matrix is None or matrix.shape != (4, 4) or not np.all(np.isfinite(matrix)):
            raise SceneError(f'{what} must be a finite 4×4 matrix or {{xyz, rpy}}')
        rotation = matrix[:3, :3]
        if not np.allclose(rotation @ rotation.T, np.eye(3), atol=1e-6) or \
                not np.allclose(matrix[3], [0, 0, 0, 1]) or np.linalg.det(rotation) < 0:
            raise SceneError(f'{what}: the rotation is not a proper rotation matrix')
        return matrix.copy()
    if not isinstance(pose, Mapping):
        raise SceneError(f'{what} must be {{xyz: [x, y, z], rpy: [r, p, y]}}, got {pose!r}')
    unknown = sorted(str(k) for k in pose if k not in ('xyz', 'rpy', 'quaternion'))
    if unknown:
        raise SceneError(f'{what} has unknown key(s) {", ".join(unknown)} (known: xyz, rpy, '
                         'quaternion)')
    xyz = _finite_vector(pose.get('xyz', (0.0, 0.0, 0.0)), 3, f'{what}.xyz')
    if 'rpy' in pose and 'quaternion' in pose:
        raise SceneError(f'{what}: give rpy or quaternion, not both')
    if 'quaternion' in pose:
        quaternion = _finite_vector(pose['quaternion'], 4, f'{what}.quaternion')
        norm = float(np.linalg.norm(quaternion))
        if norm < 1e-9:
            raise SceneError(f'{what}.quaternion is zero')
        rotation = quaternion_to_matrix(*(quaternion / norm))
    else:
        rotation = rpy_to_matrix(*_finite_vector(pose.get('rpy', (0.0, 0.0, 0.0)), 3,
                                                 f'{what}.rpy'))
    return make_transform(rotation, xyz)


class Scene:
    """Objects posed in the arm's base frame.

    Args:
        frame: the base frame's name; an object naming another frame is refused.
        search_paths: folders where mesh files are looked for.
    """

    def __init__(self, frame: str, search_paths: Sequence[str | Path] = ()) -> None:
        self.frame = frame
        self.search_paths = list(search_paths)
        self._objects: dict[str, SceneObject] = {}
        self.version = 0

    # ------------------------------------------------------------------ views
    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._objects)

    @property
    def objects(self) -> tuple[SceneObject, ...]:
        return tuple(self._objects.values())

    @property
    def checked_objects(self) -> tuple[SceneObject, ...]:
        """The objects the collision shapes are checked against (rule objects left out)."""
        return tuple(item for item in self._objects.values() if not item.rule)

    def get(self, object_id: str) -> SceneObject:
        """The object named ``object_id``.

        Raises:
            SceneError: no such object.
        """
        if object_id not in self._objects:
            raise SceneError(self._unknown(object_id))
        return self._objects[object_id]

    def __len__(self) -> int:
        return len(self._objects)

    def __contains__(self, object_id: object) -> bool:
        return object_id in self._objects

    def as_list(self) -> list[dict]:
        """Every object as the plain mapping it was made from (for files and services)."""
        return [copy.deepcopy(item.spec) for item in self._objects.values()]

    # ------------------------------------------------------------------ changes
    def build(self, spec: Mapping) -> SceneObject:
        """Validate ``spec`` into an object without adding it.

        Raises:
            SceneError: the reason it is refused.
        """
        object_id, pose, clean = self.check_spec(spec)
        try:
            shape = self._shape(clean['type'], spec, f'scene object "{object_id}"')
        except ShapeError as error:
            raise SceneError(f'scene object "{object_id}": {error}') from None
        return SceneObject(object_id, clean, shape, pose)

    def check_spec(self, spec: Mapping) -> tuple[str, np.ndarray, dict]:
        """Every rule of ``build`` but the shape's own (sizes, a mesh file that loads): the
        id, type, keys, frame and pose, for a viewer that draws a mesh it cannot load as a
        box.

        Returns:
            (id, 4×4 pose in the base frame, a copy of the mapping with the base frame).

        Raises:
            SceneError: the reason it is refused.
        """
        if not isinstance(spec, Mapping):
            raise SceneError(f'a scene object must be a mapping, got {spec!r}')
        object_id = spec.get('id')
        if not isinstance(object_id, str) or not object_id.strip():
            raise SceneError(f'a scene object needs a non-empty string id, got {object_id!r}')
        where = f'scene object "{object_id}"'
        unknown = sorted(str(k) for k in spec if k not in _KEYS)
        if unknown:
            raise SceneError(f'{where}: unknown key(s) {", ".join(unknown)}')
        kind = spec.get('type')
        if kind not in KINDS:
            raise SceneError(f'{where}: type must be one of {", ".join(KINDS)}, got {kind!r}')
        foreign = sorted(k for k in set().union(*_SIZE_KEYS.values()) - _SIZE_KEYS[kind]
                         if k in spec)
        if foreign:
            raise SceneError(f'{where}: {", ".join(foreign)}: not used by a {kind}')
        rule = spec.get('rule') or ''
        if rule and RULE_TYPES.get(rule) != kind:
            known = ', '.join(f'{r} ({t})' for r, t in RULE_TYPES.items())
            raise SceneError(f'{where}: rule {rule!r} is not a rule of a {kind} '
                             f'(rules: {known})')
        frame = spec.get('frame', self.frame)
        if frame not in (self.frame, '', None):
            raise SceneError(f'{where}: frame "{frame}" is unknown; objects are posed in the '
                             f'base frame "{self.frame}"')
        pose = parse_pose(spec.get('pose'), f'{where}: pose')
        clean = copy.deepcopy(dict(spec))
        clean['frame'] = self.frame
        return object_id, pose, clean

    def _shape(self, kind: str, spec: Mapping, where: str) -> Shape:
        if kind == 'box':
            return box_shape(spec.get('size'))
        if kind == 'sphere':
            return sphere_shape(spec.get('radius'))
        if kind == 'cylinder':
            return cylinder_shape(spec.get('radius'), spec.get('length'))
        filename = spec.get('file')
        if not isinstance(filename, str) or not filename:
            raise ShapeError(f'a mesh needs a file, got {filename!r}')
        path = resolve_mesh(filename, self.search_paths)
        if path is None:
            raise ShapeError(f'mesh file {filename} not found (searched '
                             f'{len(self.search_paths)} folders)')
        convex = spec.get('convex', False)
        if not isinstance(convex, bool):
            raise ShapeError(f'convex must be true or false, got {convex!r}')
        return mesh_shape(path, spec.get('scale', (1.0, 1.0, 1.0)), None, convex, filename)

    def add(self, spec: Mapping) -> SceneObject:
        """Add one object.

        Raises:
            SceneError: invalid, or the id is already in use (nothing changes).
        """
        item = self.build(spec)
        if item.id in self._objects:
            raise SceneError(f'scene object "{item.id}" already exists; move or remove it')
        self._objects[item.id] = item
        self.version += 1
        return item

    def put(self, spec: Mapping) -> tuple[SceneObject, bool]:
        """Add an object, or replace the one with the same id (shape and pose): what a run-time
        "apply" asks for, so a client need not know whether the object exists yet.

        Returns:
            (the object, True when it replaced one).

        Raises:
            SceneError: invalid (nothing changes, the old object stays).
        """
        item = self.build(spec)
        replaced = item.id in self._objects
        self._objects[item.id] = item
        self.version += 1
        return item, replaced

    def copy(self) -> Scene:
        """A snapshot with the same objects and version: a checker in another thread reads
        it while this scene keeps changing (objects are immutable and shared)."""
        other = Scene(self.frame, self.search_paths)
        other._objects = dict(self._objects)
        other.version = self.version
        return other

    def add_all(self, specs: Iterable[Mapping]) -> list[SceneObject]:
        """Add several objects: all of them, or none when one is refused.

        Raises:
            SceneError: the first refusal, naming its object (nothing changes).
        """
        items = [self.build(spec) for spec in specs]
        ids = [item.id for item in items]
        for object_id in ids:
            if object_id in self._objects or ids.count(object_id) > 1:
                raise SceneError(f'scene object "{object_id}" is given twice or already '
                                 'exists')
        for item in items:
            self._objects[item.id] = item
        if items:
            self.version += 1
        return items

    def move(self, object_id: str, pose: object) -> SceneObject:
        """Give an object a new pose in the base frame.

        Raises:
            SceneError: unknown id or a bad pose (nothing changes).
        """
        if object_id not in self._objects:
            raise SceneError(self._unknown(object_id))
        matrix = parse_pose(pose, f'scene object "{object_id}": pose')
        old = self._objects[object_id]
        spec = copy.deepcopy(old.spec)
        spec['pose'] = pose.tolist() if isinstance(pose, np.ndarray) else copy.deepcopy(pose)
        self._objects[object_id] = SceneObject(object_id, spec, old.shape, matrix)
        self.version += 1
        return self._objects[object_id]

    def remove(self, object_id: str) -> SceneObject:
        """Remove an object and return it.

        Raises:
            SceneError: unknown id.
        """
        if object_id not in self._objects:
            raise SceneError(self._unknown(object_id))
        self.version += 1
        return self._objects.pop(object_id)

    def clear(self) -> None:
        """Remove every object."""
        if self._objects:
            self._objects.clear()
            self.version += 1

    def _unknown(self, object_id: object) -> str:
        known = ', '.join(self._objects) or 'none'
        return f'no scene object "{object_id}" (objects: {known})'

    # ------------------------------------------------------------------ files
    def load_yaml(self, path: str | Path) -> list[SceneObject]:
        """Add the objects of a YAML file ({objects: [...]} or a list): all or none.

        Raises:
            SceneError: the file cannot be read or parsed, or an object is refused.
        """
        path = Path(path).expanduser()
        try:
            data = read_yaml_file(path)
        except YamlFileError as error:
            raise SceneError(f'scene file {path}: {error}') from None
        if isinstance(data, Mapping):
            frame = data.get('frame', self.frame)
            if frame != self.frame:
                raise SceneError(f'scene file {path}: frame "{frame}" is not the base frame '
                                 f'"{self.frame}"')
            data = data.get('objects') or []
        if data is None:
            data = []
        if not isinstance(data, list):
            raise SceneError(f'scene file {path}: expected a list of objects or '
                             '{objects: [...]}')
        try:
            return self.add_all(data)
        except SceneError as error:
            raise SceneError(f'scene file {path}: {error}') from None


@dataclass(frozen=True)
class SceneData:
    """A scene as plain data (picklable): what crosses into the planning process.

    Attributes:
        frame: the base frame.
        objects: the objects' validated mappings (``Scene.as_list``).
        version: the scene's version (the safety monitor's count of changes).
        search_paths: mesh folders of this copy.
    """

    frame: str
    objects: tuple = ()
    version: int = 0
    search_paths: tuple[str, ...] = ()

    @staticmethod
    def of(scene: Scene) -> SceneData:
        """The plain data of a ``Scene``."""
        return SceneData(scene.frame, tuple(scene.as_list()), int(scene.version),
                         tuple(str(p) for p in scene.search_paths))

    def build(self) -> Scene:
        """The ``Scene`` of this data.

        Raises:
            SceneError: an object is refused here (a mesh that does not load).
        """
        scene = Scene(self.frame, list(self.search_paths))
        scene.add_all([dict(spec) for spec in self.objects])
        scene.version = self.version
        return scene
