"""The collision library behind the checker, in one module: coal (hpp-fcl's successor).

Chosen on measured speed against python-fcl 0.7 on the same shapes, poses and pairs (this
machine, shared, CPU time; benchmarks/bench_collision.py for the per-pose figures):

- distance, which the checker needs for the closest pair: box-sphere 0.5 µs (coal) against
  1.8 µs (fcl); two Panda convex hulls apart 3.5-4.7 µs against 5.1-12 µs, overlapping
  14 µs against 79 µs; FK plus every checked pair of a Panda pose with meshes about 200 µs
  against 290 µs;
- yes/no contact: python-fcl is faster per pair (FK plus every pair of a Panda pose about
  125 µs against 190 µs), but the checker culls pairs by bounds first (``is_free`` of a Panda
  pose about 35-40 µs), so distance speed decides;
- a transform update 0.7-1 µs against 3.4 µs; composing two 0.15 µs (``ShapePoser``);
- triangle meshes (scene objects with ``convex: false``) are slow in both for distance
  (about 1.5 ms per pair of 1050-triangle meshes) and fast for contact (0.7 µs coal, 7.9 µs
  fcl).

Everything else in the package talks to this module only: shapes are opaque ``Geometry``
values, poses are 4×4 NumPy matrices (or rows of position and rotation, see ``ShapePoser``),
a ``PairQuery`` answers distance and contact for one fixed pair of shapes, and a
``ShapePoser`` builds the library transforms of a chain's shapes at one pose.

Units: metres.
"""

from __future__ import annotations

from collections.abc import Sequence
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


class ShapePoser:
    """The library transforms of a chain's shapes at one pose, each built on first use: a
    pose's pairs are mostly settled by their bounds, so most shapes never need one.

    A shape's transform is its joint frame's times its constant offset, composed by the
    library (0.15 µs, where converting a 4×4 matrix costs about 1.2 µs); a joint frame is
    built once per pose from its row of ``frames``. Shapes on the base (frame 0, never
    moved) keep their offset's transform. One pose at a time (``start``), so one thread.

    Args:
        frame_of: per shape, its extended frame (0: the base, i + 1: joint i's frame).
        offsets: (G, 4, 4) per shape, its pose in that frame.
        joints: number of joint frames.
    """

    __slots__ = ('_frame_of', '_offsets', '_template', '_pool', '_frames', '_posed',
                 'shapes')

    def __init__(self, frame_of: Sequence[int], offsets: np.ndarray, joints: int) -> None:
        self._frame_of = [int(frame) for frame in frame_of]
        self._offsets = [transform(offset) for offset in offsets]
        self._template = [offset if frame == 0 else None
                          for frame, offset in zip(self._frame_of, self._offsets)]
        # One transform per joint frame, overwritten pose after pose (no allocation); the
        # shapes' transforms are new objects, so none of them changes afterwards.
        self._pool = [coal.Transform3s() for _ in range(joints + 1)]
        self._frames = np.zeros((joints, 12))
        self._posed: list = []
        self.shapes: list = []

    def start(self, frames: np.ndarray) -> list:
        """Begin a pose; ``frames`` (joints, 12): per joint frame its position and rotation
        row-major, (px, py, pz, r00, r01, ..., r22) (ChainKernel.joint_poses).

        Returns:
            the shapes' transforms, None where not built yet (``shape`` builds one).
        """
        self._frames = frames
        self._posed = [None] * len(self._pool)
        self.shapes = list(self._template)
        return self.shapes

    def base_shape(self, index: int) -> coal.Transform3s:
        """The transform of shape ``index`` on the base (frame 0): its offset's, any pose."""
        return self._offsets[index]

    def shape(self, index: int) -> coal.Transform3s:
        """Shape ``index``'s transform at the current pose (built and kept in ``shapes``)."""
        frame = self._frame_of[index]
        posed = self._posed[frame]
        if posed is None:
            row = self._frames[frame - 1]
            posed = self._pool[frame]
            posed.setTransform(row[3:].reshape(3, 3), row[:3])
            self._posed[frame] = posed
        result = self.shapes[index] = posed * self._offsets[index]
        return result


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
