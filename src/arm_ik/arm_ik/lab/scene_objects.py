"""The scene's collision objects as the lab draws them (plain data: no ROS, no viser).

Every object of a ``scene`` message is judged on its own with the core Scene's rules (id,
type, sizes, the base frame, a finite pose with a non-zero quaternion): a bad one is left out
with a warning and the others are drawn, so one malformed object never blanks the view (a
checker, by contrast, keeps its previous scene: see scene_messages.SceneFollower).

A mesh is drawn as its triangles, loaded with trimesh from the lab's search paths (cached by
file and scale, so moving it loads nothing). When the file cannot be found or read here, it
is drawn as the box its publisher measured (SceneObject ``mesh_bounds``), with a warning; with
no bounds either it is left out, with a warning.

Objects whose mapping carries a ``rule`` key (the floor and the obstacle ball, once they are
scene objects) are skipped: the lab draws those with its own floor and ball code.

Units: metres; poses in the base frame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from arm_kinematics.common.transforms import matrix_to_quaternion
from arm_kinematics.description.meshes import resolve_mesh
from arm_kinematics.scene.objects import Scene, SceneError

# Meshes kept loaded (a scene holds a few; an old one is dropped first).
MESH_CACHE = 16


@dataclass(frozen=True, eq=False)
class ObjectDrawing:
    """One object as the 3D view draws it.

    Attributes:
        id: the object's id.
        kind: 'box', 'sphere', 'cylinder', 'mesh' or 'bounds' (a mesh drawn as its box).
        pose: 4×4 pose of the object in the base frame.
        size: box and bounds: full sides; sphere: (radius,); cylinder: (radius, length);
            mesh: ().
        centre: (3,) centre of the drawn shape in the object's frame (the bounds' centre;
            zeros otherwise).
        vertices, faces: a mesh's scaled triangles (None for the other kinds).
        source: what the shape came from (a mesh's file and scale): with kind and size, it
            decides whether a drawn node can be moved in place or must be drawn anew.
    """

    id: str
    kind: str
    pose: np.ndarray
    size: tuple[float, ...] = ()
    centre: np.ndarray = field(default_factory=lambda: np.zeros(3))
    vertices: np.ndarray | None = None
    faces: np.ndarray | None = None
    source: tuple = ()

    @property
    def shape_key(self) -> tuple:
        return (self.kind, self.size, tuple(self.centre.tolist()), self.source)

    @property
    def position(self) -> tuple[float, float, float]:
        """Where the drawn shape's centre is in the base frame, m."""
        return tuple(float(v) for v in self.pose[:3, :3] @ self.centre + self.pose[:3, 3])

    @property
    def wxyz(self) -> tuple[float, float, float, float]:
        """The pose's rotation as a quaternion (w, x, y, z), viser's order."""
        x, y, z, w = matrix_to_quaternion(self.pose[:3, :3])
        return float(w), float(x), float(y), float(z)


class SceneDrawings:
    """Turns scene messages' objects into drawings; see the module docstring.

    Args:
        frame: the base frame (an object naming another is left out).
        search_paths: where mesh files are looked for.
    """

    def __init__(self, frame: str, search_paths: Sequence[str | Path] = ()) -> None:
        self._scene = Scene(frame, search_paths)
        self.search_paths = list(search_paths)
        self._meshes: dict[tuple, tuple[np.ndarray, np.ndarray] | str] = {}

    def drawings(self, entries: Sequence[tuple[Mapping, Sequence[float]]]
                 ) -> tuple[list[ObjectDrawing], list[str]]:
        """The drawings of ``entries`` ((object mapping, mesh bounds) each, as
        scene_messages.object_entries gives them) and a warning per object left out or drawn
        as its box. A second object with the same id is left out."""
        drawn: list[ObjectDrawing] = []
        warnings: list[str] = []
        seen: set[str] = set()
        for spec, bounds in entries:
            if isinstance(spec, Mapping) and 'rule' in spec:
                continue                  # drawn by the lab's floor / ball code
            try:
                drawing, warning = self._drawing(spec, bounds)
            except SceneError as error:
                warnings.append(f'{error}; not drawn')
                continue
            if drawing.id in seen:
                warnings.append(f'scene object "{drawing.id}" is given twice; the second is '
                                'not drawn')
                continue
            seen.add(drawing.id)
            drawn.append(drawing)
            if warning:
                warnings.append(warning)
        return drawn, warnings

    def _drawing(self, spec: Mapping, bounds: Sequence[float]) -> tuple[ObjectDrawing, str]:
        if not isinstance(spec, Mapping) or spec.get('type') != 'mesh':
            item = self._scene.build(spec)        # every rule, sizes included
            clean = item.spec
            size = {'box': lambda: tuple(float(v) for v in clean['size']),
                    'sphere': lambda: (float(clean['radius']),),
                    'cylinder': lambda: (float(clean['radius']), float(clean['length']))
                    }[clean['type']]()
            return ObjectDrawing(item.id, clean['type'], item.pose, size), ''
        object_id, pose, clean = self._scene.check_spec(spec)
        where = f'scene object "{object_id}"'
        scale = _scale(clean.get('scale', (1.0, 1.0, 1.0)), where)
        filename = clean.get('file')
        loaded = self._mesh(filename, scale) if isinstance(filename, str) and filename else \
            f'a mesh needs a file, got {filename!r}'
        if not isinstance(loaded, str):
            vertices, faces = loaded
            return ObjectDrawing(object_id, 'mesh', pose, vertices=vertices, faces=faces,
                                 source=(filename, scale)), ''
        box = _bounds(bounds)
        if box is None:
            raise SceneError(f'{where}: {loaded}, and the message gives no mesh_bounds to '
                             'draw instead')
        low, high = box
        return (ObjectDrawing(object_id, 'bounds', pose, tuple(float(v) for v in high - low),
                              0.5 * (low + high), source=(filename, scale)),
                f'{where}: {loaded}; drawn as its bounding box')

    def _mesh(self, filename: str, scale: tuple[float, float, float]
              ) -> tuple[np.ndarray, np.ndarray] | str:
        """(vertices, faces) of a mesh file, scaled, or why it cannot be drawn (cached)."""
        key = (filename, scale)
        if key not in self._meshes:
            if len(self._meshes) >= MESH_CACHE:
                self._meshes.pop(next(iter(self._meshes)))
            self._meshes[key] = self._load(filename, scale)
        return self._meshes[key]

    def _load(self, filename: str, scale: tuple[float, float, float]
              ) -> tuple[np.ndarray, np.ndarray] | str:
        path = resolve_mesh(filename, self.search_paths)
        if path is None:
            return (f'mesh file {filename} not found here (searched '
                    f'{len(self.search_paths)} folders)')
        try:
            import trimesh
            mesh = trimesh.load(str(path), force='mesh')
            vertices = np.asarray(mesh.vertices, dtype=float) * np.asarray(scale)
            faces = np.asarray(mesh.faces, dtype=np.int64)
        except Exception as error:  # noqa: BLE001 - trimesh raises many kinds for bad files
            return f'mesh {filename} does not load: {type(error).__name__}: {error}'
        if len(faces) == 0 or not np.all(np.isfinite(vertices)):
            return f'mesh {filename} has no usable triangles'
        return vertices.astype(np.float32), faces.astype(np.uint32)


def _scale(value: object, where: str) -> tuple[float, float, float]:
    try:
        scale = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        scale = np.zeros(0)
    if scale.shape != (3,) or not np.all(np.isfinite(scale)) or np.any(scale <= 0.0):
        raise SceneError(f'{where}: mesh scale must be three finite factors > 0, got '
                         f'{value!r}')
    return tuple(float(v) for v in scale)


def _bounds(values: Sequence[float]) -> tuple[np.ndarray, np.ndarray] | None:
    """(low, high) corners of a [min x, y, z, max x, y, z] box, or None when it is not one
    (empty, the wrong count, not finite, or without volume)."""
    box = np.asarray(values, dtype=float).reshape(-1)
    if box.shape != (6,) or not np.all(np.isfinite(box)) or np.any(box[3:] <= box[:3]):
        return None
    return box[:3], box[3:]
