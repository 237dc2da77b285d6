"""Shapes of the checker: URDF ``<collision>`` elements and scene objects as library geometry.

A ``Shape`` is one primitive or mesh with its fixed pose in a frame (a link's, or the base's
for scene objects), its library geometry and a bounding sphere (centre in that frame and
radius) used to skip pairs that cannot touch. Meshes are read with trimesh; a robot link's mesh
becomes its convex hull (a solid, checked with a signed distance: a conservative cover of the
link, as MoveIt's usual convex collision meshes), a scene mesh stays a triangle mesh unless
asked otherwise (a bin or a shelf is not convex).

Units: metres.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math
from pathlib import Path
from xml.etree import ElementTree

import numpy as np

from arm_kinematics.description.meshes import resolve_mesh
from arm_kinematics.scene import backend


class ShapeError(ValueError):
    """A shape that cannot be built; the message says why."""


@dataclass(frozen=True, eq=False)
class Shape:
    """One collision shape posed in its frame.

    Attributes:
        kind: 'box', 'sphere', 'cylinder', 'capsule', 'mesh' or 'convex'.
        dimensions: the sizes that made it (size, radius, length, file, scale), m.
        origin: 4×4 pose of the shape in its frame.
        geometry: the library's geometry.
        centre: (3,) bounding-sphere centre in the shape's own frame, m.
        radius: bounding-sphere radius, m.
        note: how it was obtained ('' for a plain primitive; the fallback's reason).
        half_extents: (3,) half sides of a box centred on ``centre`` and aligned with the
            shape's frame that holds the shape, m (a tighter bound than the sphere for
            flat or long objects such as a table).
    """

    kind: str
    dimensions: dict
    origin: np.ndarray
    geometry: backend.Geometry
    centre: np.ndarray
    radius: float
    note: str = ''
    half_extents: np.ndarray | None = None


def _positive(value: object, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ShapeError(f'{what} must be a number, got {value!r}') from None
    if not math.isfinite(number) or number <= 0.0:
        raise ShapeError(f'{what} must be a finite number > 0, got {value!r}')
    return number


def box_shape(size: Sequence[float], origin: np.ndarray | None = None) -> Shape:
    """A box of full side lengths ``size`` (3 values > 0), m.

    Raises:
        ShapeError: not three finite numbers > 0.
    """
    if isinstance(size, (str, bytes)) or not hasattr(size, '__len__') or len(size) != 3:
        raise ShapeError(f'box size must be three side lengths, got {size!r}')
    sides = np.array([_positive(v, 'box side') for v in size])
    return Shape('box', {'size': sides.tolist()}, _origin(origin), backend.box(sides),
                 np.zeros(3), 0.5 * float(np.linalg.norm(sides)), '', sides / 2)


def sphere_shape(radius: float, origin: np.ndarray | None = None) -> Shape:
    """A sphere of ``radius`` > 0, m.

    Raises:
        ShapeError: not a finite number > 0.
    """
    radius = _positive(radius, 'sphere radius')
    return Shape('sphere', {'radius': radius}, _origin(origin), backend.sphere(radius),
                 np.zeros(3), radius, '', np.full(3, radius))


def cylinder_shape(radius: float, length: float, origin: np.ndarray | None = None) -> Shape:
    """A cylinder along z of ``radius`` and ``length`` (both > 0), m.

    Raises:
        ShapeError: a size that is not a finite number > 0.
    """
    radius = _positive(radius, 'cylinder radius')
    length = _positive(length, 'cylinder length')
    return Shape('cylinder', {'radius': radius, 'length': length}, _origin(origin),
                 backend.cylinder(radius, length), np.zeros(3), math.hypot(radius, length / 2),
                 '', np.array([radius, radius, length / 2]))


def capsule_shape(radius: float, length: float, origin: np.ndarray | None = None,
                  note: str = '') -> Shape:
    """A capsule along z: ``length`` between the cap centres (≥ 0), ``radius`` > 0, m."""
    radius = _positive(radius, 'capsule radius')
    length = max(float(length), 0.0)
    return Shape('capsule', {'radius': radius, 'length': length}, _origin(origin),
                 backend.capsule(radius, length), np.zeros(3), radius + length / 2, note,
                 np.array([radius, radius, radius + length / 2]))


def mesh_shape(path: str | Path, scale: Sequence[float] = (1.0, 1.0, 1.0),
               origin: np.ndarray | None = None, convex: bool = True,
               label: str = '') -> Shape:
    """A mesh file as a convex hull (``convex``) or a triangle mesh.

    Raises:
        ShapeError: the file does not load, has no triangles, or the scale is not three
            finite numbers > 0.
    """
    if isinstance(scale, (str, bytes)) or len(scale) != 3:
        raise ShapeError(f'mesh scale must be three factors, got {scale!r}')
    factors = np.array([_positive(v, 'mesh scale') for v in scale])
    try:
        import trimesh
        loaded = trimesh.load(str(path), force='mesh')
        vertices = np.asarray(loaded.vertices, dtype=float) * factors
        faces = np.asarray(loaded.faces, dtype=np.int64)
    except Exception as error:   # noqa: BLE001 - trimesh raises many kinds for bad files
        raise ShapeError(f'mesh {label or path} does not load: {type(error).__name__}: '
                         f'{error}') from None
    if len(faces) == 0 or not np.all(np.isfinite(vertices)):
        raise ShapeError(f'mesh {label or path} has no usable triangles')
    if convex:
        vertices, faces = convex_hull(vertices)
        geometry = backend.convex(vertices, faces)
    else:
        geometry = backend.mesh(vertices, faces)
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    centre = 0.5 * (low + high)
    radius = float(np.max(np.linalg.norm(vertices - centre, axis=1)))
    return Shape('convex' if convex else 'mesh',
                 {'file': str(path), 'scale': factors.tolist()}, _origin(origin), geometry,
                 centre, radius, '', 0.5 * (high - low))


def convex_hull(vertices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(vertices, triangles) of the convex hull of ``vertices`` (Qhull through SciPy).

    Raises:
        ShapeError: the points span no volume (a flat or degenerate mesh).
    """
    from scipy.spatial import ConvexHull, QhullError
    try:
        hull = ConvexHull(vertices)
    except (QhullError, ValueError) as error:
        raise ShapeError(f'the mesh spans no volume ({str(error).splitlines()[0]})') from None
    index = np.full(len(vertices), -1, dtype=np.int64)
    index[hull.vertices] = np.arange(len(hull.vertices))
    return vertices[hull.vertices], index[hull.simplices]


def _origin(origin: np.ndarray | None) -> np.ndarray:
    return np.eye(4) if origin is None else np.asarray(origin, dtype=float)


def parse_origin(element: ElementTree.Element | None) -> np.ndarray:
    """4×4 of a URDF ``<origin xyz rpy>`` (identity when absent)."""
    from arm_kinematics.common.transforms import make_transform, rpy_to_matrix
    if element is None:
        return np.eye(4)
    xyz = [float(v) for v in element.get('xyz', '0 0 0').split()]
    rpy = [float(v) for v in element.get('rpy', '0 0 0').split()]
    return make_transform(rpy_to_matrix(*rpy), np.array(xyz))


def link_shapes(link: ElementTree.Element, search_paths: Sequence[str | Path],
                fallback: Shape | None, warn: list[str]) -> list[Shape]:
    """The ``<collision>`` shapes of a URDF link, each posed in the link frame.

    A mesh that cannot be found or read is replaced by ``fallback`` (posed by the caller in
    the link frame) and a warning is appended to ``warn``; nothing is skipped silently.
    """
    shapes: list[Shape] = []
    name = link.get('name')
    for collision in link.findall('collision'):
        origin = parse_origin(collision.find('origin'))
        geometry = collision.find('geometry')
        for element in (geometry if geometry is not None else ()):
            try:
                if element.tag == 'box':
                    shapes.append(box_shape([float(v) for v in element.get('size').split()],
                                            origin))
                elif element.tag == 'sphere':
                    shapes.append(sphere_shape(element.get('radius'), origin))
                elif element.tag == 'cylinder':
                    shapes.append(cylinder_shape(element.get('radius'), element.get('length'),
                                                 origin))
                elif element.tag == 'mesh':
                    shapes.append(_urdf_mesh(element, origin, search_paths))
                else:
                    raise ShapeError(f'<{element.tag}> is not a URDF collision shape')
            except (ShapeError, AttributeError, TypeError, ValueError) as error:
                if fallback is None:
                    warn.append(f'link "{name}": {error}; no fallback shape, the link has '
                                'no collision geometry')
                    continue
                warn.append(f'link "{name}": {error}; using a {fallback.kind} '
                            f'{fallback.dimensions} instead')
                shapes.append(Shape(fallback.kind, fallback.dimensions, fallback.origin,
                                    fallback.geometry, fallback.centre, fallback.radius,
                                    f'fallback: {error}', fallback.half_extents))
    return shapes


def _urdf_mesh(element: ElementTree.Element, origin: np.ndarray,
               search_paths: Sequence[str | Path]) -> Shape:
    filename = element.get('filename', '')
    path = resolve_mesh(filename, search_paths)
    if path is None:
        raise ShapeError(f'mesh {filename} not found (searched {len(search_paths)} folders)')
    scale = [float(v) for v in element.get('scale', '1 1 1').split()]
    return mesh_shape(path, scale, origin, convex=True, label=filename)
