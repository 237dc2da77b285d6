"""The collision library behind the checker, in one module: coal (hpp-fcl's successor).

Chosen on measured speed against python-fcl 0.7 on the same shapes, poses and pairs (this
machine, shared, CPU time; benchmarks/bench_collision.py for the per-pose figures):

- distance, which the checker needs for the closest pair: box-sphere 0.5 µs (coal) against
  1.8 µs (fcl); two Panda convex hulls apart 3.5-4.7 µs against 5.1-12 µs, overlapping
  14 µs against 79 µs; FK plus every checked pair of a Panda pose with meshes about 200 µs
  against 290 µs;
- yes/no contact: python-fcl is faster per pair (FK plus every pair of a Panda pose about
  125 µs against 190 µs), but the checker culls pairs by bounds first (``is_free`` about
  55 µs), so distance speed decides;
- a transform update 0.7-1 µs against 3.4 µs;
- triangle meshes (scene objects with ``convex: false``) are slow in both for distance
  (about 1.5 ms per pair of 1050-triangle meshes) and fast for contact (0.7 µs coal, 7.9 µs
  fcl).

Everything else in the package talks to this module only: shapes are opaque ``Geometry``
values, poses are 4×4 NumPy matrices, and a ``PairQuery`` answers distance and contact for one
fixed pair of shapes.

Units: metres.
"""

from __future__ import annotations

from dataclasses import dataclass

import coal
import numpy as np

NAME = 'coal'
VERSION = f'{coal.COAL_MAJOR_VERSION}.{coal.COAL_MINOR_VERSION}.{coal.COAL_PATCH_VERSION}'


@dataclass(frozen=True, eq=False)
class Geometry:
    """One shape of the library in its own frame.

    Attributes:
        native: the library's object.
        solid: True when a distance query answers a negative (penetration) depth for shapes
            that overlap (primitives and convex hulls); False for a triangle mesh, which is a
            surface: its overlaps are found by a contact query instead.
    """

    native: object
    solid: bool


def box(size: np.ndarray) -> Geometry:
    """A box of full side lengths ``size`` (3,), centred on its frame, m."""
    return Geometry(coal.Box(*map(float, size)), True)


def sphere(radius: float) -> Geometry:
    """A sphere of ``radius`` m centred on its frame."""
    return Geometry(coal.Sphere(float(radius)), True)


def cylinder(radius: float, length: float) -> Geometry:
    """A cylinder along its frame's z axis, centred, as URDF's <cylinder>, m."""
    return Geometry(coal.Cylinder(float(radius), float(length)), True)


def capsule(radius: float, length: float) -> Geometry:
    """A capsule along its frame's z axis, centred; ``length`` excludes the caps, m."""
    return Geometry(coal.Capsule(float(radius), float(length)), True)


def convex(vertices: np.ndarray, faces: np.ndarray) -> Geometry:
    """A convex polytope from the vertices and triangles of a convex hull."""
    points = coal.StdVec_Vec3s()
    for point in np.asarray(vertices, dtype=float):
        points.append(point)
    triangles = coal.StdVec_Triangle()
    for a, b, c in np.asarray(faces, dtype=np.int64).tolist():
        triangles.append(coal.Triangle(a, b, c))
    return Geometry(coal.Convex(points, triangles), True)


def mesh(vertices: np.ndarray, faces: np.ndarray) -> Geometry:
    """A triangle mesh (a surface) with its bounding-volume hierarchy."""
    vertices = np.asarray(vertices, dtype=float)
    faces = np.asarray(faces, dtype=np.int64)
    model = coal.BVHModelOBBRSS()
    model.beginModel(len(faces), len(vertices))
    model.addVertices(vertices)
    model.addTriangles(faces)
    model.endModel()
    return Geometry(model, False)


def transform(matrix: np.ndarray) -> coal.Transform3s:
    """The library's rigid transform of a 4×4 matrix."""
    return coal.Transform3s(matrix[:3, :3], matrix[:3, 3])


class PairQuery:
    """Distance and contact of one fixed pair of shapes; the library's per-pair functors are
    built once, so a query costs only the narrow phase."""

    __slots__ = ('_distance', '_collide', '_dreq', '_dres', '_creq', '_cres', 'signed')

    def __init__(self, a: Geometry, b: Geometry) -> None:
        self._distance = coal.ComputeDistance(a.native, b.native)
        self._collide = coal.ComputeCollision(a.native, b.native)
        self._dreq = coal.DistanceRequest()
        self._dres = coal.DistanceResult()
        self._creq = coal.CollisionRequest()
        # The yes/no query needs GJK's verdict only: EPA's penetration depth costs up to
        # 40 µs for deeply overlapping convex pairs (measured) and is not used here.
        self._creq.epa_max_iterations = 0
        self._cres = coal.CollisionResult()
        # Two solids answer a signed distance; a mesh needs the contact query for overlaps.
        self.signed = a.solid and b.solid

    def distance(self, pose_a: coal.Transform3s, pose_b: coal.Transform3s) -> float:
        """Distance between the shapes at these poses, m; negative: penetration depth
        (solids), 0 when a mesh touches or crosses the other shape."""
        self._dres.clear()
        value = float(self._distance(pose_a, pose_b, self._dreq, self._dres))
        if not self.signed and value <= 0.0:
            return 0.0
        if not self.signed and self.collide(pose_a, pose_b):
            # A mesh whose triangles cross the other shape: the distance query's answer is
            # then that of the nearest other triangles, not a contact.
            return 0.0
        return value

    def collide(self, pose_a: coal.Transform3s, pose_b: coal.Transform3s) -> bool:
        """True when the shapes touch or overlap at these poses."""
        self._cres.clear()
        self._collide(pose_a, pose_b, self._creq, self._cres)
        return bool(self._cres.isCollision())
