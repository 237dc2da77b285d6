"""The tool path of a path IK request: the start's tool pose, then straight segments
(position linear, orientation by slerp) or circular arcs through an ``arc_through`` point
to every waypoint, cut into samples no farther apart than the request's steps. No ROS.

Units: m, rad.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

import numpy as np

from arm_kinematics.common.checks import is_numeric
from arm_kinematics.common.transforms import matrix_to_quaternion, quaternion_to_matrix
from arm_kinematics.motion.path_request import MAX_PATH_SAMPLES, PathSettings

# A first waypoint this close to the start's tool pose (m, rad) is the start itself.
SAME_POSE = 1e-6
# An arc whose three points are this close to a line (sine of the angle at the start) has
# no circle to follow: refused as INVALID_INPUT.
COLLINEAR = 1e-6


@dataclass(frozen=True)
class Circle:
    """The circle through three points: centre, radius, plane basis (e1 toward the first
    point, e2 = normal × e1, the way round to the third point), angle of the third point."""

    centre: np.ndarray
    radius: float
    e1: np.ndarray
    e2: np.ndarray
    normal: np.ndarray
    angle: float            # rad, (0, 2π): from the first point to the third

    @staticmethod
    def through(a: np.ndarray, m: np.ndarray, b: np.ndarray) -> Circle | str:
        """The circle from ``a`` through ``m`` to ``b``, or why there is none."""
        u, v = m - a, b - a
        w = np.cross(u, v)
        lengths = float(np.linalg.norm(u) * np.linalg.norm(v))
        if min(float(np.linalg.norm(u)), float(np.linalg.norm(v)),
               float(np.linalg.norm(b - m))) <= SAME_POSE:
            return 'two of its three points (previous pose, arc_through, waypoint) coincide'
        if float(np.linalg.norm(w)) <= COLLINEAR * lengths:
            return 'its three points (previous pose, arc_through, waypoint) lie on a line'
        offset = np.cross(float(u @ u) * v - float(v @ v) * u, w) / (2.0 * float(w @ w))
        centre = a + offset
        radius = float(np.linalg.norm(offset))
        e1 = -offset / radius
        normal = w / float(np.linalg.norm(w))
        e2 = np.cross(normal, e1)
        circle = Circle(centre, radius, e1, e2, normal, 0.0)
        return Circle(centre, radius, e1, e2, normal, circle.angle_of(b))

    def angle_of(self, point: np.ndarray) -> float:
        d = point - self.centre
        return float(np.mod(math.atan2(float(d @ self.e2), float(d @ self.e1)), 2.0 * math.pi))

    def point(self, angle: float) -> np.ndarray:
        return self.centre + self.radius * (math.cos(angle) * self.e1 +
                                            math.sin(angle) * self.e2)

    def distance(self, point: np.ndarray, low: float, high: float) -> float:
        """Distance (m) of ``point`` from the piece of the arc between two angles."""
        d = point - self.centre
        height = float(d @ self.normal)
        flat = d - height * self.normal
        angle = math.atan2(float(flat @ self.e2), float(flat @ self.e1))
        if np.mod(angle - low, 2.0 * math.pi) <= high - low:
            return math.hypot(float(np.linalg.norm(flat)) - self.radius, height)
        return min(float(np.linalg.norm(point - self.point(low))),
                   float(np.linalg.norm(point - self.point(high))))


@dataclass(frozen=True)
class ArcPiece:
    """One interval of the tool path that lies on an arc: its circle and end angles."""

    circle: Circle
    low: float
    high: float


class ToolPath:
    """The densified tool path: samples on straight segments or arcs, interpolated by u."""

    def __init__(self, positions: np.ndarray, rotations: np.ndarray | None,
                 waypoint_of_sample: np.ndarray, rotation_weight: float,
                 pieces: Sequence[ArcPiece | None] = ()) -> None:
        self.positions = positions                  # (M, 3)
        self.rotations = rotations                  # (M, 3, 3) or None
        self.waypoint_of_sample = waypoint_of_sample  # (M,) request waypoint each heads to
        self._quaternions: dict[int, tuple[float, float, float, float]] = {}
        # pieces[k]: the arc interval k (samples k to k + 1) lies on; None: straight.
        self.pieces = list(pieces) or [None] * max(len(positions) - 1, 0)
        steps = np.linalg.norm(np.diff(positions, axis=0), axis=1)
        if pieces:
            for k, piece in enumerate(self.pieces):
                if piece is not None:
                    steps[k] = piece.circle.radius * (piece.high - piece.low)
        angles = np.zeros(len(steps))
        if rotations is not None:
            # trace(Aᵀ·B) of consecutive rotations, without forming Aᵀ·B.
            trace = np.einsum('kij,kij->k', rotations[:-1], rotations[1:])
            angles = np.arccos(np.clip((trace - 1.0) / 2.0, -1.0, 1.0))
        self.angles = angles
        # Size of each segment for the min_step rule: a rotation in metres at the step ratio.
        self.sizes = np.maximum(steps, angles * rotation_weight)
        measure = steps if steps.sum() > 1e-9 else angles
        self.cumulative = np.concatenate([[0.0], np.cumsum(measure)])

    def __len__(self) -> int:
        return len(self.positions)

    def pose(self, u: float) -> tuple[np.ndarray, np.ndarray | None]:
        k = min(int(math.floor(u)), len(self) - 2) if len(self) > 1 else 0
        t = u - k
        position = self.position(u)
        if self.rotations is None or t <= 0.0 or len(self) == 1:
            return position, None if self.rotations is None else self.rotations[k]
        # slerp_rotation in plain floats, with each sample's quaternion converted once: the
        # halving of a step asks for many poses between the same two samples, and numpy's
        # per-call cost on 4-vectors was most of a closed form's solve.
        return position, quaternion_to_matrix(*_slerp_floats(self._quaternion(k),
                                                             self._quaternion(k + 1), t))

    def _quaternion(self, k: int) -> tuple[float, float, float, float]:
        quaternion = self._quaternions.get(k)
        if quaternion is None:
            quaternion = self._quaternions[k] = matrix_to_quaternion(self.rotations[k])
        return quaternion

    def position(self, u: float) -> np.ndarray:
        """The tool position at ``u`` alone (no slerp of the rotation)."""
        k = min(int(math.floor(u)), len(self) - 2) if len(self) > 1 else 0
        t = u - k
        if t <= 0.0 or len(self) == 1:
            return self.positions[k]
        piece = self.pieces[k]
        if piece is None:
            return self.positions[k] + t * (self.positions[k + 1] - self.positions[k])
        return piece.circle.point(piece.low + t * (piece.high - piece.low))

    def deviation(self, point: np.ndarray, u_a: float, u_b: float) -> float:
        """Distance (m) of ``point`` from the tool path between two parameters of one
        interval (``u_a`` < ``u_b``): from the straight segment or the piece of the arc."""
        k = min(int(math.floor(u_a)), len(self) - 2) if len(self) > 1 else 0
        piece = self.pieces[k] if self.pieces else None
        if piece is None:
            return segment_distance(point, self.position(u_a), self.position(u_b))
        span = piece.high - piece.low
        return piece.circle.distance(point, piece.low + (u_a - k) * span,
                                     piece.low + (u_b - k) * span)

    def sample_deviations(self, points: np.ndarray, offset: int = 0) -> np.ndarray:
        """``deviation`` of each ``points[i]`` (K, 3) from the tool path between samples
        offset + i and offset + i + 1, at once: (K,) m."""
        count = len(points)
        a, b = self.positions[offset:offset + count], self.positions[offset + 1:offset + count + 1]
        ab = b - a
        squared = np.einsum('ij,ij->i', ab, ab)
        along = np.einsum('ij,ij->i', points - a, ab) / np.where(squared > 0.0, squared, 1.0)
        along = np.where(squared > 0.0, np.clip(along, 0.0, 1.0), 0.0)
        out = np.linalg.norm(points - (a + along[:, None] * ab), axis=1)
        for i, piece in enumerate(self.pieces[offset:offset + count]):
            if piece is not None:
                out[i] = piece.circle.distance(points[i], piece.low, piece.high)
        return out

    def size(self, u_a: float, u_b: float) -> float:
        """Tool travel (m, rotation weighted) between two parameters of one segment."""
        k = min(int(math.floor(u_a)), len(self) - 2)
        return abs(u_b - u_a) * float(self.sizes[k])

    def length_at(self, u: float) -> float:
        if len(self) == 1:
            return 0.0
        k = min(int(math.floor(u)), len(self) - 2)
        return float(self.cumulative[k] + (u - k) * (self.cumulative[k + 1] -
                                                       self.cumulative[k]))

    def lengths_at(self, us: np.ndarray) -> np.ndarray:
        """``length_at`` of every parameter in ``us`` at once (the same arithmetic)."""
        us = np.asarray(us, dtype=float)
        if len(self) == 1:
            return np.zeros(len(us))
        k = np.minimum(np.floor(us).astype(int), len(self) - 2)
        return self.cumulative[k] + (us - k) * (self.cumulative[k + 1] - self.cumulative[k])

    @property
    def length(self) -> float:
        return float(self.cumulative[-1])


def slerp_quaternion(qa: np.ndarray, qb: np.ndarray, t: float) -> np.ndarray:
    """The unit quaternion a fraction ``t`` of the short way from ``qa`` to ``qb``."""
    dot = float(qa @ qb)
    if dot < 0.0:
        qb, dot = -qb, -dot
    angle = math.acos(min(dot, 1.0))
    if angle < 1e-9:
        q = qa + t * (qb - qa)
    else:
        q = (math.sin((1.0 - t) * angle) * qa + math.sin(t * angle) * qb) / math.sin(angle)
    return q / np.linalg.norm(q)


def _slerp_floats(qa: Sequence[float], qb: Sequence[float], t: float
                  ) -> tuple[float, float, float, float]:
    """``slerp_quaternion`` on plain floats (x, y, z, w)."""
    ax, ay, az, aw = qa
    bx, by, bz, bw = qb
    dot = ax * bx + ay * by + az * bz + aw * bw
    if dot < 0.0:
        bx, by, bz, bw, dot = -bx, -by, -bz, -bw, -dot
    angle = math.acos(min(dot, 1.0))
    if angle < 1e-9:
        ka, kb = 1.0 - t, t
    else:
        ka, kb = math.sin((1.0 - t) * angle) / math.sin(angle), \
            math.sin(t * angle) / math.sin(angle)
    x, y, z, w = ka * ax + kb * bx, ka * ay + kb * by, ka * az + kb * bz, ka * aw + kb * bw
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    return x / norm, y / norm, z / norm, w / norm


def slerp_rotation(a: np.ndarray, b: np.ndarray, t: float) -> np.ndarray:
    q = slerp_quaternion(np.array(matrix_to_quaternion(a)), np.array(matrix_to_quaternion(b)), t)
    return quaternion_to_matrix(*q)


def slerp_rotations(a: np.ndarray, b: np.ndarray, fractions: np.ndarray) -> np.ndarray:
    """``slerp_rotation`` at every fraction (K,) at once: (K, 3, 3)."""
    qa = np.array(matrix_to_quaternion(a))
    qb = np.array(matrix_to_quaternion(b))
    dot = float(qa @ qb)
    if dot < 0.0:
        qb, dot = -qb, -dot
    angle = math.acos(min(dot, 1.0))
    t = np.asarray(fractions, dtype=float)[:, None]
    if angle < 1e-9:
        q = qa + t * (qb - qa)
    else:
        q = (np.sin((1.0 - t) * angle) * qa + np.sin(t * angle) * qb) / math.sin(angle)
    x, y, z, w = (q / np.linalg.norm(q, axis=1, keepdims=True)).T
    out = np.empty((len(q), 3, 3))
    out[:, 0, 0], out[:, 0, 1], out[:, 0, 2] = \
        1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
    out[:, 1, 0], out[:, 1, 1], out[:, 1, 2] = \
        2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
    out[:, 2, 0], out[:, 2, 1], out[:, 2, 2] = \
        2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
    return out


def segment_distance(point: Sequence[float], a: Sequence[float], b: Sequence[float]
                     ) -> float:
    """Distance (m) of ``point`` from the segment a–b (in plain floats: it runs on every
    step of a path, where numpy's per-call cost on 3-vectors was most of the time)."""
    px, py, pz = float(point[0]), float(point[1]), float(point[2])
    ax, ay, az = float(a[0]), float(a[1]), float(a[2])
    ux, uy, uz = float(b[0]) - ax, float(b[1]) - ay, float(b[2]) - az
    denominator = ux * ux + uy * uy + uz * uz
    t = 0.0 if denominator <= 0.0 else \
        min(max(((px - ax) * ux + (py - ay) * uy + (pz - az) * uz) / denominator, 0.0), 1.0)
    return math.hypot(px - (ax + t * ux), py - (ay + t * uy), pz - (az + t * uz))


def arc_points(points: Sequence[Sequence[float] | None], waypoints: int
                ) -> tuple[list[np.ndarray | None] | None, str]:
    """The arc point of every waypoint's segment (None: straight), or (None, why not)."""
    if points is None or len(points) == 0:
        return [None] * waypoints, ''
    if len(points) != waypoints:
        return None, (f'arc_through has {len(points)} points for {waypoints} waypoints (one '
                      'per waypoint, NaN for a straight segment, or none)')
    out: list[np.ndarray | None] = []
    for index, point in enumerate(points):
        if point is None:
            out.append(None)
            continue
        value = np.asarray(point, dtype=float).reshape(-1) if is_numeric(point) else None
        if value is None or value.shape != (3,):
            return None, f'arc_through[{index}] must be 3 numbers (x, y, z), m'
        if np.isnan(value).all():
            out.append(None)
        elif not np.isfinite(value).all():
            return None, (f'arc_through[{index}] = {value.tolist()}: give a finite point, or '
                          'NaN in all three for a straight segment')
        else:
            out.append(value)
    return out, ''



def rotation_angle(a: np.ndarray, b: np.ndarray) -> float:
    cosine = (float(np.trace(a.T @ b)) - 1.0) / 2.0
    return math.acos(min(max(cosine, -1.0), 1.0))



def build_tool_path(start_frame: np.ndarray, positions: Sequence[np.ndarray],
                    orientations: Sequence[np.ndarray] | None, settings: PathSettings,
                    throughs: Sequence[np.ndarray | None]) -> tuple[ToolPath | None, str]:
    """The sampled tool path from the start's tool frame (4x4) through every waypoint
    (positions, m; rotation matrices, or None when orientation is not followed), or
    (None, why there is none)."""
    frame = start_frame
    full = orientations is not None
    vertices = [frame[:3, 3]] + list(positions)
    turns = [frame[:3, :3]] + list(orientations) if full else None
    # owners[k]: the request waypoint vertex k is (the start's pose heads to waypoint 0);
    # arcs[k]: the arc point of the segment that ends at vertex k.
    owners = [0] + list(range(len(positions)))
    arcs = [None] + list(throughs)
    if np.linalg.norm(vertices[1] - vertices[0]) <= SAME_POSE and \
            (not full or rotation_angle(turns[0], turns[1]) <= SAME_POSE):
        if arcs[1] is not None:
            return None, "arc_through[0]: the arc ends at the start's own tool pose"
        # The line starts at the start's own tool pose: that waypoint is the start.
        del vertices[1], owners[0], arcs[1]
        if full:
            del turns[1]
    # Each segment's samples as one array (a row per sample), joined once at the end.
    positions = [vertices[0][None]]
    rotations = [turns[0][None]] if full else None
    heading = [owners[0]]
    pieces: list[ArcPiece | None] = []
    total = 1
    for k in range(1, len(vertices)):
        a, b = vertices[k - 1], vertices[k]
        circle = None
        if arcs[k] is not None:
            circle = Circle.through(a, arcs[k], b)
            if isinstance(circle, str):
                return None, f'arc_through[{owners[k]}]: no arc: {circle}'
        length = float(np.linalg.norm(b - a)) if circle is None else \
            circle.radius * circle.angle
        angle = rotation_angle(turns[k - 1], turns[k]) if full else 0.0
        count = max(1, math.ceil(length / settings.max_cartesian_step - 1e-9),
                    math.ceil(angle / settings.max_rotation_step - 1e-9))
        total += count
        if total > MAX_PATH_SAMPLES:
            return None, (f'the path needs more than {MAX_PATH_SAMPLES} samples at '
                          f'{settings.max_cartesian_step:g} m / '
                          f'{settings.max_rotation_step:g} rad; give larger steps')
        fractions = np.arange(1, count + 1) / count
        if full:
            # Every sample's rotation of the segment at once: a slerp per sample in numpy
            # calls was 12 % of the time of a closed-form (UR5) path.
            rotations.append(slerp_rotations(turns[k - 1], turns[k], fractions))
        heading.extend([owners[k]] * count)
        if circle is None:
            positions.append(a + fractions[:, None] * (b - a))
            pieces.extend([None] * count)
            continue
        # The last sample is the waypoint itself, not the circle's rounding of it.
        positions.append(np.array([circle.point(t * circle.angle) for t in fractions[:-1]]
                                  + [b]).reshape(count, 3))
        pieces.extend(ArcPiece(circle, (i - 1) / count * circle.angle, i / count * circle.angle)
                      for i in range(1, count + 1))
    weight = settings.max_cartesian_step / settings.max_rotation_step
    return ToolPath(np.concatenate(positions), None if not full else np.concatenate(rotations),
                    np.array(heading), weight, pieces), ''
