"""The vector maths every closed-form family shares, in two forms.

- Plain floats on tuples (``mat_mul``, ``turn``, ``cosine_one``...): one
  request makes about a hundred small operations, each of which costs more as a numpy call
  than as arithmetic.
- numpy over rows (``rotate``, ``rotations``, ``angle_between``, ``cosine_equation``...):
  many poses, branches or pitches at once.
- Lines at q = 0 (``parallel``, ``perpendicular``, ``line_gap``, ``meeting_point``,
  ``foot``): how the families recognise an arm from its axes.

Rotations are row-major 9-float tuples in the scalar form. Units: metres and radians.
"""

from __future__ import annotations

from collections.abc import Sequence
import math

import numpy as np

Matrix = tuple[float, float, float, float, float, float, float, float, float]
Vector = tuple[float, float, float]
Vec = Vector
# A law-of-cosines ratio up to this far past ±1 is rounding (a stretched or folded arm)
# and is clamped; beyond it the target is out of reach.
STRETCH_SLACK = 1e-9
UP = np.array([0.0, 0.0, 1.0])


# ---------------------------------------------------------------------- plain floats
def mat_mul(a: Sequence[float], b: Sequence[float]) -> Matrix:
    """Product of two row-major 3×3 matrices given as 9 floats."""
    a0, a1, a2, a3, a4, a5, a6, a7, a8 = a
    b0, b1, b2, b3, b4, b5, b6, b7, b8 = b
    return (a0 * b0 + a1 * b3 + a2 * b6, a0 * b1 + a1 * b4 + a2 * b7, a0 * b2 + a1 * b5 + a2 * b8,
            a3 * b0 + a4 * b3 + a5 * b6, a3 * b1 + a4 * b4 + a5 * b7, a3 * b2 + a4 * b5 + a5 * b8,
            a6 * b0 + a7 * b3 + a8 * b6, a6 * b1 + a7 * b4 + a8 * b7, a6 * b2 + a7 * b5 + a8 * b8)


def mat_vec(m: Sequence[float], v: Sequence[float]) -> Vector:
    """m·v for a row-major 3×3 ``m``."""
    return (m[0] * v[0] + m[1] * v[1] + m[2] * v[2], m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
            m[6] * v[0] + m[7] * v[1] + m[8] * v[2])


def rotation(axis: Sequence[float], angle: float) -> Matrix:
    """Rodrigues rotation about a unit axis, row-major 9 floats."""
    return rotation_cs(axis, math.cos(angle), math.sin(angle))


def rotation_cs(axis: Sequence[float], c: float, s: float) -> Matrix:
    """``rotation`` by the angle whose cosine and sine are c and s."""
    x, y, z = axis
    v = 1.0 - c
    return (c + x * x * v, x * y * v - z * s, x * z * v + y * s,
            x * y * v + z * s, c + y * y * v, y * z * v - x * s,
            x * z * v - y * s, y * z * v + x * s, c + z * z * v)


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def vcross(a: Sequence[float], b: Sequence[float]) -> Vector:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def sub(a: Sequence[float], b: Sequence[float]) -> Vector:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def turn(w: Sequence[float], angle: float, v: Sequence[float]) -> Vector:
    """``v`` turned about the unit axis ``w`` by ``angle`` (Rodrigues)."""
    c, s = math.cos(angle), math.sin(angle)
    k = (1.0 - c) * dot(w, v)
    x = vcross(w, v)
    return (v[0] * c + x[0] * s + w[0] * k, v[1] * c + x[1] * s + w[1] * k,
            v[2] * c + x[2] * s + w[2] * k)


def cosine_one(a: float, b: float, rhs: float) -> tuple[float, float, bool, bool]:
    """``cosine_equation`` for one equation."""
    r = math.hypot(a, b)
    ratio = rhs / max(r, 1e-300)
    half = math.acos(1.0 if ratio > 1.0 else -1.0 if ratio < -1.0 else ratio)
    return (math.atan2(b, a), half, abs(ratio) <= 1.0 + STRETCH_SLACK,
            abs(math.sin(half)) < 1e-7)


def rotation_angle(a: Sequence[float], b: Sequence[float]) -> float:
    """Angle (rad) of the rotation between two rotation matrices; accurate near 0 and π."""
    a0, a1, a2, a3, a4, a5, a6, a7, a8 = a
    b0, b1, b2, b3, b4, b5, b6, b7, b8 = b
    # Δ = aᵀ·b: its trace gives cos, its skew part 2·sin·axis; atan2 keeps small angles.
    trace = a0 * b0 + a1 * b1 + a2 * b2 + a3 * b3 + a4 * b4 + a5 * b5 + a6 * b6 + a7 * b7 + \
        a8 * b8
    x = (a2 * b1 + a5 * b4 + a8 * b7) - (a1 * b2 + a4 * b5 + a7 * b8)     # Δ21 − Δ12
    y = (a0 * b2 + a3 * b5 + a6 * b8) - (a2 * b0 + a5 * b3 + a8 * b6)     # Δ02 − Δ20
    z = (a1 * b0 + a4 * b3 + a7 * b6) - (a0 * b1 + a3 * b4 + a6 * b7)     # Δ10 − Δ01
    return math.atan2(0.5 * math.sqrt(x * x + y * y + z * z), 0.5 * (trace - 1.0))


# ---------------------------------------------------------------------- numpy over rows
def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def skew(w: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product of (M, 3) arrays (either may be one (3,) vector); np.cross
    costs several times more in call overhead at the sizes of one request."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise dot products of two (M, 3) arrays."""
    return np.einsum('ij,ij->i', a, b)


def rotations(axis: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Rodrigues rotations about a fixed unit ``axis`` for angles (M,), shape (M, 3, 3)."""
    k = skew(axis)
    s = np.sin(angles)[:, None, None]
    c = np.cos(angles)[:, None, None]
    return np.eye(3) + s * k + (1.0 - c) * (k @ k)


def rotate(axis: np.ndarray, angles: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Vectors v (M, 3) (or one (3,)) turned about the unit ``axis`` by angles (M,)."""
    c, s = np.cos(angles)[:, None], np.sin(angles)[:, None]
    x, y, z = axis
    if v.ndim == 1:
        a, b, d = v
        k = np.array([y * d - z * b, z * a - x * d, x * b - y * a])
        return v * c + k * s + (1.0 - c) * (float(v @ axis) * axis)
    a, b, d = v[:, 0], v[:, 1], v[:, 2]
    k = np.stack([y * d - z * b, z * a - x * d, x * b - y * a], axis=1)
    return v * c + k * s + (1.0 - c) * ((v @ axis)[:, None] * axis)


def angle_between(axis: np.ndarray, p: np.ndarray, q: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Paden-Kahan subproblem 1: the angle turning p onto q about ``axis`` (rows), and
    the length of p's part across the axis (0: any angle does)."""
    pp = p - np.outer(p @ axis, axis)
    qq = q - np.outer(q @ axis, axis)
    return (np.arctan2(cross(pp, qq) @ axis, np.einsum('ij,ij->i', pp, qq)),
            np.linalg.norm(pp, axis=1))


def cosine_equation(a: float | np.ndarray, b: float | np.ndarray, rhs: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """a·cos x + b·sin x = rhs as x = centre ± half: (centre, half, solvable, at_edge)."""
    r = np.hypot(a, b)
    ratio = rhs / np.maximum(r, 1e-300)
    solvable = np.abs(ratio) <= 1.0 + STRETCH_SLACK
    half = np.arccos(np.clip(ratio, -1.0, 1.0))
    at_edge = np.abs(np.sin(half)) < 1e-7
    return np.broadcast_to(np.arctan2(b, a), np.shape(rhs)), half, solvable, at_edge


# ---------------------------------------------------------------------- lines at q = 0
def parallel(a: np.ndarray, b: np.ndarray) -> float:
    """Angle (rad) between two axes as lines (0 for parallel or antiparallel)."""
    return math.atan2(float(np.linalg.norm(np.cross(a, b))), abs(float(np.dot(a, b))))


def perpendicular(a: np.ndarray, b: np.ndarray) -> float:
    """How far (rad) two axes are from perpendicular."""
    return abs(math.asin(max(-1.0, min(1.0, float(np.dot(a, b))))))


def line_gap(o1: np.ndarray, w1: np.ndarray, o2: np.ndarray, w2: np.ndarray) -> float:
    """Shortest distance between two lines (m)."""
    normal = np.cross(w1, w2)
    norm = float(np.linalg.norm(normal))
    if norm < 1e-12:
        d = o2 - o1
        return float(np.linalg.norm(d - np.dot(d, w1) * w1))
    return abs(float(np.dot(o2 - o1, normal))) / norm


def meeting_point(origins: Sequence[np.ndarray], axes: Sequence[np.ndarray]
                  ) -> tuple[np.ndarray, float]:
    """Least-squares point nearest some lines, and its largest distance to them (m)."""
    normal = np.zeros((3, 3))
    rhs = np.zeros(3)
    for origin, axis in zip(origins, axes, strict=True):
        projector = np.eye(3) - np.outer(axis, axis)
        normal += projector
        rhs += projector @ origin
    point = np.linalg.lstsq(normal, rhs, rcond=None)[0]
    gap = max(float(np.linalg.norm((np.eye(3) - np.outer(a, a)) @ (point - o)))
              for o, a in zip(origins, axes, strict=True))
    return point, gap


def foot(point: np.ndarray, origin: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """Foot of ``point`` on the line (origin, axis)."""
    return origin + float(np.dot(point - origin, axis)) * axis


# ---------------------------------------------------------------------- the pitch triangle
class PitchTriangle:
    """Two parallel pitch axes carrying a point: the shoulder-elbow triangle every family
    with parallel pitch joints (yaw + three pitch, UR, OPW) solves after its yaw.

    Built from the zero pose: ``n`` the pitch axes' common direction, ``o2`` a point of the
    first pitch axis, ``w2``/``w3`` the two axes (±n), ``carried`` the point the second
    carries, ``o3`` a point of the second axis, ``up`` the base's up (elbow "up" is the
    elbow on its side of the line to the point).
    """

    def __init__(self, n: np.ndarray, o2: np.ndarray, o3: np.ndarray, w2: np.ndarray,
                 w3: np.ndarray, carried: np.ndarray, up: np.ndarray) -> None:
        self.n, self.o2, self.w2, self.w3, self.up = n, o2, w2, w3, up
        proj = np.eye(3) - np.outer(n, n)
        self.link_a = proj @ (o3 - o2)
        self.link_b = proj @ (carried - o3)
        self.tri = (float(self.link_a @ self.link_b),
                    float(self.link_a @ np.cross(w3, self.link_b)),
                    float(self.link_a @ self.link_a + self.link_b @ self.link_b))
        # The scalar form works in the plane across n, on (e1, e2) with e1 × e2 = n: a turn
        # about w2 = s2·n by q is a planar turn by s2·q.
        e1 = unit(np.cross(n, [1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else
                  np.cross(n, [0.0, 1.0, 0.0]))
        e2 = np.cross(n, e1)
        self._e = tuple(float(v) for v in (*e1, *e2))
        self._plane = np.column_stack([e1, e2])
        self._centre = math.atan2(self.tri[1], self.tri[0])
        self._spread = max(math.hypot(self.tri[0], self.tri[1]), 1e-300)
        self._o2 = _floats(o2)
        self._s2 = 1.0 if float(np.dot(w2, n)) > 0.0 else -1.0
        self._s3 = 1.0 if float(np.dot(w3, n)) > 0.0 else -1.0
        self._a = (float(self.link_a @ e1), float(self.link_a @ e2))
        self._b = (float(self.link_b @ e1), float(self.link_b @ e2))
        self._up = (float(up @ e1), float(up @ e2))

    def solve(self, x: np.ndarray) -> tuple[np.ndarray, ...]:
        """The pitch axes carry the point to ``x`` (M, 3), in the yaw-undone frame.

        The same planar steps as ``solve_one``, on columns.

        Returns:
            q2, q3 (M, 2), elbow up first; solvable, too near, at the edge (M,).
        """
        y = (x - self.o2) @ self._plane                  # (M, 2): the point across n
        y1, y2 = y[:, 0], y[:, 1]
        reach_sq = y1 * y1 + y2 * y2
        a3, b3, squares = self.tri
        centre, half, solvable, edge = cosine_equation(a3, b3, 0.5 * (reach_sq - squares))
        q3 = np.stack([centre + half, centre - half], axis=1)
        # n × y, turned to the base's up side.
        sense = np.where(-y2 * self._up[0] + y1 * self._up[1] < 0.0, -1.0, 1.0)
        p1, p2 = -y2 * sense, y1 * sense
        (a1, a2), (b1, b2) = self._a, self._b
        c, s = np.cos(q3), self._s3 * np.sin(q3)
        r1 = a1 + b1 * c - b2 * s
        r2 = a2 + b1 * s + b2 * c
        along = r1 * y1[:, None] + r2 * y2[:, None]
        across = r1 * y2[:, None] - r2 * y1[:, None]
        q2 = self._s2 * np.arctan2(across, along)
        score = (a1 * along - a2 * across) * p1[:, None] + \
            (a1 * across + a2 * along) * p2[:, None]
        swap = score[:, 1] > score[:, 0]
        q2 = np.where(swap[:, None], q2[:, ::-1], q2)
        q3 = np.where(swap[:, None], q3[:, ::-1], q3)
        return q2, q3, solvable, reach_sq < squares, edge

    def solve_one(self, x: Sequence[float]) -> tuple[list[tuple[float, float]], bool, bool,
                                                      bool]:
        """``solve`` for one point in plain floats: ([(q2, q3)] × 2 elbow up first,
        solvable, too near, at the edge)."""
        e10, e11, e12, e20, e21, e22 = self._e
        o2 = self._o2
        d0, d1, d2 = x[0] - o2[0], x[1] - o2[1], x[2] - o2[2]
        y1 = d0 * e10 + d1 * e11 + d2 * e12          # the point across n, in (e1, e2)
        y2 = d0 * e20 + d1 * e21 + d2 * e22
        reach_sq = y1 * y1 + y2 * y2
        # cosine_one(a3, b3, ·) with its constant part (centre, |(a3, b3)|) computed once.
        squares = self.tri[2]
        ratio = 0.5 * (reach_sq - squares) / self._spread
        half = math.acos(1.0 if ratio > 1.0 else -1.0 if ratio < -1.0 else ratio)
        solvable, edge = abs(ratio) <= 1.0 + STRETCH_SLACK, abs(math.sin(half)) < 1e-7
        centre = self._centre
        # n × y, turned to the base's up side: the side an "up" elbow lies on.
        p1, p2 = -y2, y1
        if p1 * self._up[0] + p2 * self._up[1] < 0.0:
            p1, p2 = y2, -y1
        a1, a2 = self._a
        b1, b2 = self._b
        s2, s3 = self._s2, self._s3
        out = []
        for q3 in (centre + half, centre - half):
            c, s = math.cos(q3), s3 * math.sin(q3)
            r1 = a1 + b1 * c - b2 * s                  # a + (b turned by q3)
            r2 = a2 + b1 * s + b2 * c
            along, across = r1 * y1 + r2 * y2, r1 * y2 - r2 * y1
            turned = math.atan2(across, along)         # turns reach onto y in the plane
            # The elbow (a turned by that angle) across the line, times |reach|·|y|: the
            # same factor for both elbows of a reachable point, so it orders them alike.
            score = (a1 * along - a2 * across) * p1 + (a1 * across + a2 * along) * p2
            out.append((score, s2 * turned, q3))
        if out[1][0] > out[0][0]:
            out.reverse()
        return [(q2, q3) for _, q2, q3 in out], solvable, reach_sq < squares, edge

def _floats(v: np.ndarray) -> tuple[float, ...]:
    return tuple(float(x) for x in np.ravel(v))
