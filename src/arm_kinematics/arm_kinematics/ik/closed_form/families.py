"""Arm families with a closed-form IK, recognised from the URDF, and their solvers.

Recognition looks at the joint axes and origins at q = 0 (``ArmModel.joint_origins_and_axes``)
and names the family of a chain, with its parameters, or says why it is none:

- ``yaw_two_pitch``: a yaw and two parallel pitch joints (pointer3, manipulator3d), by the
  rules of ``analytic.AnalyticSolver``, which serves it.
- ``spherical_wrist``: yaw, two parallel pitch joints and three wrist axes meeting in one
  point on the forearm line (six_axis); served by ``closed_form.SphericalWristSolver``.
- ``ur``: axes 2, 3 and 4 parallel and perpendicular to axis 1, axis 5 perpendicular to
  axis 4, axis 6 perpendicular to axis 5 and crossing it (UR3/5/10, e-Series): up to 8
  solutions.
- ``opw``: an ortho-parallel base (axis 1 perpendicular to the parallel axes 2 and 3,
  offsets a1, a2, b allowed) and a spherical wrist (Brandstötter, Angerer, Hofbaur 2014,
  "An analytical solution of the inverse kinematics problem of industrial serial
  manipulators with an ortho-parallel basis and a spherical wrist"): up to 8 solutions.

Tolerances: LINE_TOLERANCE (1e-6 m) for axes that must cross and ANGLE_TOLERANCE (1e-6 rad)
for axes that must be parallel or perpendicular. Vendor URDFs round their numbers to
about a micrometre (the UR5's 0.10915 m is 0.109150 to six digits), so a tighter tolerance
would refuse real arms; a looser one would accept arms whose closed form is visibly wrong.
The closed form is exact for the ideal geometry only, so after recognition it is checked
against FK on CHECK_CONFIGURATIONS random configurations (CHECK_TOLERANCE, 1e-9 m and
rad): an arm that passes the geometry test but fails the check is refused with the size
of the miss, and falls back to dls.

The solvers work in product-of-exponentials form on the world axes at q = 0, so joint
offsets, axis signs and rotated fixed joints of the URDF need no convention: the OPW
parameters (and the UR DH lengths) are extracted for reporting and for the peers, not
used by the solution. Every step is numpy over N poses at once (``solve_poses``); one
request is the case N = 1. Units: metres and radians.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import itertools
import math
from time import perf_counter
import weakref

import numpy as np

from arm_kinematics.ik.closed_form.analytic import (
    AnalyticSolver,
    JointRanges,
    LIMIT_TOLERANCE,
    PositionGate,
    TWO_PI,
    wrap_into_array,
)
from arm_kinematics.ik.closed_form.spherical_wrist import (
    _mat_mul,
    _mat_vec,
    _rotation,
    BRANCHES,
    parse_orientation,
    rotation_angle,
    SphericalWristSolver,
)
from arm_kinematics.ik.result import (
    ErrorCode,
    GoalType,
    IKResult,
    Solution,
)
from arm_kinematics.ik.solvers.base import ClosedFormBase, NEAREST, SolveOptions, Solver, Workspace
from arm_kinematics.model.arm_model import ArmModel

# Axes that must cross may miss by this much (m); see the module docstring for why.
LINE_TOLERANCE = 1e-6
# Axes that must be parallel or perpendicular may be off by this much (rad).
ANGLE_TOLERANCE = 1e-6
# The closed form must reproduce FK to this (m for positions, rad for rotations).
CHECK_TOLERANCE = 1e-9
CHECK_CONFIGURATIONS = 8
# |sin| of a bend below which two axes turn about one line (wrist singular, or the
# point on the yaw axis): the joint that became free is kept from the seed.
SINGULAR = 1e-9
# A law-of-cosines ratio up to this far past ±1 is rounding (a stretched or folded arm)
# and is clamped; beyond it the target is out of reach.
STRETCH_SLACK = 1e-9

# Flags of a solution (bits), reported in words by FLAG_WORDS.
WRIST_SINGULAR, SHOULDER_SINGULAR, STRETCHED = 1, 2, 4
FLAG_WORDS = {WRIST_SINGULAR: 'wrist singular (two wrist axes on one line; one joint kept '
                              'from the seed)',
              SHOULDER_SINGULAR: 'shoulder singular (the wrist point on the first axis; '
                                 'the first joint kept from the seed)',
              STRETCHED: 'arm stretched or folded (the elbow at its reach boundary)'}
# The yaw + two-pitch arms are the analytic solver's; the others closed_form's.
FAMILY_NAMES = ('yaw_two_pitch', 'spherical_wrist', 'ur', 'opw')
SIX_JOINT_FAMILIES = ('spherical_wrist', 'ur', 'opw')
_DEFAULT_OPTIONS = SolveOptions()


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def _skew(w: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _parallel(a: np.ndarray, b: np.ndarray) -> float:
    """Angle (rad) between two axes as lines (0 for parallel or antiparallel)."""
    return math.atan2(float(np.linalg.norm(np.cross(a, b))), abs(float(np.dot(a, b))))


def _perpendicular(a: np.ndarray, b: np.ndarray) -> float:
    """How far (rad) two axes are from perpendicular."""
    return abs(math.asin(max(-1.0, min(1.0, float(np.dot(a, b))))))


def _line_gap(o1: np.ndarray, w1: np.ndarray, o2: np.ndarray, w2: np.ndarray) -> float:
    """Shortest distance between two lines (m)."""
    cross = np.cross(w1, w2)
    norm = float(np.linalg.norm(cross))
    if norm < 1e-12:
        d = o2 - o1
        return float(np.linalg.norm(d - np.dot(d, w1) * w1))
    return abs(float(np.dot(o2 - o1, cross))) / norm


def _meeting_point(origins: Sequence[np.ndarray], axes: Sequence[np.ndarray]
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


def _foot(point: np.ndarray, origin: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """Foot of ``point`` on the line (origin, axis)."""
    return origin + float(np.dot(point - origin, axis)) * axis


# ---------------------------------------------------------------------- families
@dataclass(frozen=True, eq=False)
class Family:
    """A recognised arm family: its name, its parameters and the zero-pose geometry.

    Attributes:
        name: 'spherical_wrist', 'ur' or 'opw'.
        parameters: the family's lengths (m) and angles (rad), for reports and peers.
            ur: d1, a2, a3, d4, d5, d6 (the DH lengths, positive). opw: a1, a2, b, c1, c2,
            c3, c4 (m), offsets and sign_corrections (per joint), plus base (4×4, URDF
            base → OPW base) and tool (4×4, OPW flange → URDF tip), all such that
            fk_urdf(q) = base · fk_opw(sign · q + offset) · tool.
        origins, axes: joint origins (6, 3) and unit axes (6, 3) at q = 0, base frame.
        zero: tip transform at q = 0 (4×4).
        point: the point the position part solves for (UR: where axes 5 and 6 cross;
            OPW: the wrist centre), at q = 0 (m).
        drift: the largest deviation from the ideal geometry found (m or rad).
    """

    name: str
    parameters: dict = field(default_factory=dict, repr=False)
    origins: np.ndarray | None = field(default=None, repr=False)
    axes: np.ndarray | None = field(default=None, repr=False)
    zero: np.ndarray | None = field(default=None, repr=False)
    point: np.ndarray | None = field(default=None, repr=False)
    drift: float = 0.0

    def describe(self) -> str:
        """One line: the family and its lengths (mm)."""
        words = {'ur': 'UR family (three parallel middle axes, offset wrist)',
                 'opw': 'OPW family (ortho-parallel base, spherical wrist)',
                 'spherical_wrist': 'spherical-wrist six-axis (wrist centre on the forearm '
                                    'line)',
                 'yaw_two_pitch': 'yaw + two parallel pitch joints'}[self.name]
        lengths = ', '.join(f'{key} {1000.0 * value:.1f}' for key, value in
                            self.parameters.items() if isinstance(value, float))
        return f'{words}: {lengths} mm' if lengths else words


def _joint_frame(model: ArmModel) -> tuple[np.ndarray, np.ndarray, np.ndarray] | str:
    if model.dof != 6:
        return f'needs 6 joints; {model.name or "this arm"} has {model.dof}'
    origins, axes, _ = model.joint_origins_and_axes(np.zeros(6))
    return origins, np.array([_unit(a) for a in axes]), model.fk(np.zeros(6))


def recognise_ur(model: ArmModel) -> Family | str:
    """The UR family of ``model`` with its DH lengths, or why it is not one."""
    frame = _joint_frame(model)
    if isinstance(frame, str):
        return frame
    o, w, zero = frame
    drifts = []
    for i, j in ((1, 2), (1, 3)):
        drifts.append(_parallel(w[i], w[j]))
        if drifts[-1] > ANGLE_TOLERANCE:
            return (f'axes {i + 1} and {j + 1} are not parallel ({drifts[-1]:.3g} rad, '
                    f'tolerance {ANGLE_TOLERANCE:g})')
    for i, j in ((0, 1), (3, 4), (4, 5)):
        drifts.append(_perpendicular(w[i], w[j]))
        if drifts[-1] > ANGLE_TOLERANCE:
            return (f'axes {i + 1} and {j + 1} are not perpendicular ({drifts[-1]:.3g} rad '
                    f'off, tolerance {ANGLE_TOLERANCE:g})')
    gap = _line_gap(o[4], w[4], o[5], w[5])
    drifts.append(gap)
    if gap > LINE_TOLERANCE:
        return f'axes 5 and 6 do not cross (gap {gap:.3g} m, tolerance {LINE_TOLERANCE:g} m)'
    n = w[1]
    a2 = _line_gap(o[1], n, o[2], n)
    a3 = _line_gap(o[2], n, o[3], n)
    if min(a2, a3) < LINE_TOLERANCE:
        return f'axes 2, 3 and 4 are not spread apart (a2 {a2:.3g} m, a3 {a3:.3g} m)'
    point, _ = _meeting_point([o[4], o[5]], [w[4], w[5]])
    d1 = float(np.dot(_foot(o[1], o[0], w[0]) - _foot(np.zeros(3), o[0], w[0]), w[0]))
    parameters = {
        'd1': abs(d1), 'a2': a2, 'a3': a3,
        'd4': abs(float(np.dot(point - o[0], n))),
        'd5': _line_gap(o[3], w[3], point, w[3]),
        'd6': abs(float(np.dot(zero[:3, 3] - point, w[5]))),
    }
    return Family('ur', parameters, o, w, zero, point, max(drifts))


def recognise_opw(model: ArmModel) -> Family | str:
    """The OPW family of ``model`` with its seven lengths, offsets and signs, or why not."""
    frame = _joint_frame(model)
    if isinstance(frame, str):
        return frame
    o, w, zero = frame
    drifts = [_parallel(w[1], w[2])]
    if drifts[-1] > ANGLE_TOLERANCE:
        return (f'axes 2 and 3 are not parallel ({drifts[-1]:.3g} rad, tolerance '
                f'{ANGLE_TOLERANCE:g})')
    for i, j in ((0, 1), (1, 3), (3, 4), (4, 5)):
        drifts.append(_perpendicular(w[i], w[j]))
        if drifts[-1] > ANGLE_TOLERANCE:
            return (f'axes {i + 1} and {j + 1} are not perpendicular ({drifts[-1]:.3g} rad '
                    f'off, tolerance {ANGLE_TOLERANCE:g})')
    centre, gap = _meeting_point(o[3:], w[3:])
    drifts.append(gap)
    if gap > LINE_TOLERANCE:
        return (f'the last three axes do not meet in one point (gap {gap:.3g} m, tolerance '
                f'{LINE_TOLERANCE:g} m): no spherical wrist')
    if _line_gap(o[1], w[1], o[2], w[2]) < LINE_TOLERANCE:
        return 'axes 2 and 3 coincide (no upper arm)'
    parameters = _opw_parameters(model, o, w, zero, centre)
    if isinstance(parameters, str):
        return parameters
    return Family('opw', parameters, o, w, zero, centre, max(drifts))


def _opw_parameters(model: ArmModel, o: np.ndarray, w: np.ndarray, zero: np.ndarray,
                    centre: np.ndarray) -> dict | str:
    """OPW's a1, a2, b, c1..c4, offsets, signs and base/tool transforms (see Family).

    The OPW base frame B has z on axis 1 (along the URDF base z when they agree), y along
    axis 2 and x toward the wrist centre; joint angles map as θ = sign·q + offset.
    """
    up = np.array([0.0, 0.0, 1.0])
    z = w[0] if float(np.dot(w[0], up)) >= 0.0 else -w[0]
    origin = _foot(np.zeros(3), o[0], z)
    outward = centre - origin
    outward = outward - np.dot(outward, z) * z
    if np.linalg.norm(outward) < LINE_TOLERANCE:
        outward = np.cross(w[1], z)
    y = _unit(np.cross(z, _unit(outward)))
    x = np.cross(y, z)
    signs = [1.0] * 6
    offsets = [0.0] * 6
    signs[0] = 1.0 if np.dot(w[0], z) > 0.0 else -1.0
    signs[1] = 1.0 if np.dot(w[1], y) > 0.0 else -1.0
    signs[2] = 1.0 if np.dot(w[2], y) > 0.0 else -1.0

    def xz(v: np.ndarray) -> tuple[float, float]:
        return float(np.dot(v, x)), float(np.dot(v, z))

    p2 = o[1] - origin
    a1, c1 = xz(p2)
    upper = o[2] - o[1]
    ux, uz = xz(upper)
    c2 = math.hypot(ux, uz)
    # OPW's θ2 turns the upper arm from +z toward +x (a rotation about +y).
    offsets[1] = math.atan2(ux, uz)
    forearm = centre - o[2]
    w4 = w[3] if float(np.dot(forearm, w[3])) >= 0.0 else -w[3]
    signs[3] = 1.0 if np.dot(w[3], w4) > 0.0 else -1.0
    fx, fz = xz(w4)
    summed = math.atan2(fx, fz)                       # θ2 + θ3 at the URDF zero pose
    offsets[2] = math.remainder(summed - offsets[1], TWO_PI)
    c3 = float(np.dot(forearm, w4))
    a2 = float(np.dot(forearm, np.cross(y, w4)))
    b = float(np.dot(centre - origin, y))
    # Wrist: θ4 turns y (the wrist frame's y) about w4 onto axis 5; θ5 turns w4 onto axis 6.
    w5 = w[4]
    offsets[3] = math.atan2(float(np.dot(np.cross(y, w5), w4)), float(np.dot(y, w5)))
    tip = zero[:3, 3]
    w6 = w[5] if float(np.dot(tip - centre, w[5])) >= 0.0 else -w[5]
    signs[5] = 1.0 if np.dot(w[5], w6) > 0.0 else -1.0
    offsets[4] = math.atan2(float(np.dot(np.cross(w4, w6), w5)), float(np.dot(w4, w6)))
    c4 = float(np.dot(tip - centre, w6))
    base = np.eye(4)
    base[:3, :3] = np.column_stack([x, y, z])
    base[:3, 3] = origin
    parameters = {'a1': a1, 'a2': a2, 'b': b, 'c1': c1, 'c2': c2, 'c3': c3, 'c4': c4,
                  'offsets': tuple(offsets), 'sign_corrections': tuple(signs)}
    theta0 = np.array(offsets)
    tool = np.linalg.inv(base @ opw_forward(parameters, theta0)) @ zero
    parameters['base'] = base
    parameters['tool'] = tool
    # The extraction is right when it reproduces FK everywhere, not only at q = 0.
    rng = np.random.default_rng(11)
    for q in model.random_configurations(CHECK_CONFIGURATIONS, rng):
        theta = np.array(signs) * q + theta0
        miss = float(np.abs(base @ opw_forward(parameters, theta) @ tool - model.fk(q)).max())
        if miss > 1e-9:
            return f'the OPW parameters extracted from the URDF miss FK by {miss:.3g}'
    return parameters


def opw_forward(p: dict, theta: Sequence[float]) -> np.ndarray:
    """Flange pose (4×4) of OPW parameters ``p`` at OPW joint angles ``theta`` (rad).

    Brandstötter et al. 2014, eq. (1)-(3): the wrist centre from a1, a2, b, c1, c2, c3;
    the wrist Rz(θ4)·Ry(θ5)·Rz(θ6) on the arm's Rz(θ1)·Ry(θ2 + θ3); the flange c4 along z.
    """
    t1, t2, t3, t4, t5, t6 = (float(v) for v in theta)
    psi3 = math.atan2(p['a2'], p['c3'])
    k = math.hypot(p['a2'], p['c3'])
    cx1 = p['c2'] * math.sin(t2) + k * math.sin(t2 + t3 + psi3) + p['a1']
    cy1 = p['b']
    cz1 = p['c2'] * math.cos(t2) + k * math.cos(t2 + t3 + psi3)
    c1, s1 = math.cos(t1), math.sin(t1)
    centre = np.array([cx1 * c1 - cy1 * s1, cx1 * s1 + cy1 * c1, cz1 + p['c1']])

    def rz(a: float) -> np.ndarray:
        return np.array([[math.cos(a), -math.sin(a), 0.0], [math.sin(a), math.cos(a), 0.0],
                         [0.0, 0.0, 1.0]])

    def ry(a: float) -> np.ndarray:
        return np.array([[math.cos(a), 0.0, math.sin(a)], [0.0, 1.0, 0.0],
                         [-math.sin(a), 0.0, math.cos(a)]])

    rotation = rz(t1) @ ry(t2 + t3) @ rz(t4) @ ry(t5) @ rz(t6)
    out = np.eye(4)
    out[:3, :3] = rotation
    out[:3, 3] = centre + p['c4'] * rotation[:, 2]
    return out


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def recognise(model: ArmModel) -> tuple[Family | None, dict[str, str]]:
    """(family, {family name: reason it is not that family}) of ``model``, cached per model.

    Tried in the order of FAMILY_NAMES; the first that fits the geometry and passes the
    FK check on random configurations wins. ``family`` is None when none fits.
    """
    cached = _CACHE.get(model)
    if cached is not None:
        return cached
    reasons: dict[str, str] = {}
    found = None
    # The two closed forms that existed before the families, by their own rules.
    planar = AnalyticSolver.applicability(model)
    spherical = SphericalWristSolver.applicability(model)
    if not planar:
        found = Family('yaw_two_pitch')
    elif not spherical:
        reasons['yaw_two_pitch'] = planar
        found = Family('spherical_wrist')
    else:
        reasons['yaw_two_pitch'] = planar
        reasons['spherical_wrist'] = spherical
        for name, recogniser in (('ur', recognise_ur), ('opw', recognise_opw)):
            family = recogniser(model)
            if isinstance(family, str):
                reasons[name] = family
                continue
            miss = _check_against_fk(model, family)
            if miss:
                reasons[name] = miss
                continue
            found = family
            break
    _CACHE[model] = (found, reasons)
    return found, reasons


def _check_against_fk(model: ArmModel, family: Family) -> str:
    """'' when the closed form of ``family`` finds random configurations again, else why."""
    engine = FamilyEngine(model, family)
    rng = np.random.default_rng(5)
    q = model.random_configurations(CHECK_CONFIGURATIONS, rng)
    poses = model.fk_batch(q)
    raw, ok, _ = engine.solve_raw(poses[:, :3, 3], poses[:, :3, :3], q)
    worst = 0.0
    for index in range(len(q)):
        good = raw[index][ok[index]]
        if not len(good):
            return (f'the {family.name} closed form finds no solution of a reachable pose '
                    f'(recognised within {LINE_TOLERANCE:g} m / {ANGLE_TOLERANCE:g} rad)')
        reached = model.fk_batch(good)
        miss = max(float(np.abs(reached[:, :3, 3] - poses[index, :3, 3]).max()),
                   float(np.abs(reached[:, :3, :3] - poses[index, :3, :3]).max()))
        # The configuration itself must be among the solutions (up to whole turns).
        step = np.abs(np.remainder(good - q[index] + math.pi, TWO_PI) - math.pi).max(axis=1)
        worst = max(worst, miss, float(step.min()))
    if worst > CHECK_TOLERANCE:
        return (f'the {family.name} closed form misses FK by {worst:.3g} on random '
                f'configurations (geometry drift {family.drift:.3g} within the recognition '
                f'tolerance; the check needs {CHECK_TOLERANCE:g})')
    return ''


# ---------------------------------------------------------------------- the engine
def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product of (M, 3) arrays (either may be one (3,) vector); np.cross
    costs several times more in call overhead at the sizes of one request."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def _rotations(axis: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Rodrigues rotations about a fixed unit ``axis`` for angles (M,), shape (M, 3, 3)."""
    k = _skew(axis)
    s = np.sin(angles)[:, None, None]
    c = np.cos(angles)[:, None, None]
    return np.eye(3) + s * k + (1.0 - c) * (k @ k)


def _rotate(axis: np.ndarray, angles: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Vectors v (M, 3) (or one (3,)) rotated about ``axis`` by angles (M,)."""
    c, s = np.cos(angles)[:, None], np.sin(angles)[:, None]
    if v.ndim == 1:
        return v * c + np.cross(axis, v) * s + np.outer(1.0 - c, float(v @ axis) * axis)
    return v * c + _cross(axis, v) * s + (v @ axis)[:, None] * (1.0 - c) * axis


def _angle_between(axis: np.ndarray, p: np.ndarray, q: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Paden-Kahan subproblem 1: the angle turning p onto q about ``axis`` (rows), and
    the length of p's part across the axis (0: any angle does)."""
    pp = p - np.outer(p @ axis, axis)
    qq = q - np.outer(q @ axis, axis)
    return (np.arctan2(_cross(pp, qq) @ axis, np.einsum('ij,ij->i', pp, qq)),
            np.linalg.norm(pp, axis=1))


def _cosine_equation(a: float | np.ndarray, b: float | np.ndarray, rhs: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """a·cos x + b·sin x = rhs as x = centre ± half: (centre, half, solvable, at_edge)."""
    r = np.hypot(a, b)
    ratio = rhs / np.maximum(r, 1e-300)
    solvable = np.abs(ratio) <= 1.0 + STRETCH_SLACK
    half = np.arccos(np.clip(ratio, -1.0, 1.0))
    at_edge = np.abs(np.sin(half)) < 1e-7
    return np.broadcast_to(np.arctan2(b, a), np.shape(rhs)), half, solvable, at_edge


class FamilyEngine:
    """The vectorised closed form of a UR or OPW family: 8 raw solutions per pose."""

    def __init__(self, model: ArmModel, family: Family) -> None:
        self.model = model
        self.family = family
        o, w = family.origins, family.axes
        self.o, self.w = o, w
        n = w[1]
        self.n = n
        self.signs = np.array([1.0 if np.dot(w[i], n) > 0.0 else -1.0 for i in range(6)])
        zero = family.zero
        self.r0 = zero[:3, :3]
        self.p0 = zero[:3, 3]
        self.point_tool = self.r0.T @ (family.point - self.p0)
        up = np.array([0.0, 0.0, 1.0])
        self.up = w[0] * (1.0 if np.dot(w[0], up) >= 0.0 else -1.0) \
            if abs(np.dot(w[0], up)) > 0.5 else w[0]
        # Forward at q = 0: across axes 1 and 2, toward the solved point.
        forward = np.cross(n, w[0])
        if np.dot(family.point - o[0], forward) < 0.0:
            forward = -forward
        self.forward = _unit(forward - np.dot(forward, w[0]) * w[0])
        self.d = float(np.dot(family.point - o[0], n))
        w1n = float(np.dot(w[0], n))
        self.k1 = w1n
        self.w1xn = np.cross(w[0], n)
        if family.name == 'ur':
            # The point carried by axes 2 and 3: the solved point's foot on axis 4.
            self.carried = _foot(family.point, o[3], w[3])
            self.lever = family.point - self.carried
            k = float(np.dot(n, w[4]))
            self.q5_coeffs = (float(np.dot(n, w[5])) - k * float(np.dot(w[4], w[5])),
                              float(np.dot(n, np.cross(w[4], w[5]))),
                              k * float(np.dot(w[4], w[5])))
            self.n_perp = _unit(np.cross(n, [1.0, 0.0, 0.0]) if abs(n[0]) < 0.9
                                else np.cross(n, [0.0, 1.0, 0.0]))
        else:
            self.carried = family.point
            k = float(np.dot(w[3], w[4]))
            self.q5_coeffs = (float(np.dot(w[3], w[5])) - k * float(np.dot(w[4], w[5])),
                              float(np.dot(w[3], np.cross(w[4], w[5]))),
                              k * float(np.dot(w[4], w[5])))
        self.w6_perp = _unit(np.cross(w[5], [1.0, 0.0, 0.0]) if abs(w[5][0]) < 0.9
                             else np.cross(w[5], [0.0, 1.0, 0.0]))
        # The two-link triangle in the plane across n: axis 2 → axis 3 → carried point.
        proj = np.eye(3) - np.outer(n, n)
        self.link_a = proj @ (o[2] - o[1])
        self.link_b = proj @ (self.carried - o[2])
        self.tri = (float(self.link_a @ self.link_b),
                    float(self.link_a @ np.cross(w[2], self.link_b)),
                    float(self.link_a @ self.link_a + self.link_b @ self.link_b))
        self.delta = math.atan2(self.q5_coeffs[1], self.q5_coeffs[0])

    # -------------------------------------------------------------- pieces
    def _yaw(self, points: np.ndarray, seed_q1: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q1 (M, 2), front first; solvable (M,); flags (M, 2)."""
        w1, n, o1 = self.w[0], self.n, self.o[0]
        v = points - o1
        along = v @ w1
        a = v @ n - self.k1 * along
        b = v @ self.w1xn
        centre, half, solvable, _ = _cosine_equation(a, b, self.d - self.k1 * along)
        on_axis = np.hypot(a, b) < SINGULAR
        # On the axis any yaw does: the seed's, and the seed's + π (centre ± half).
        centre = np.where(on_axis, seed_q1 + 0.5 * math.pi, centre)
        half = np.where(on_axis, 0.5 * math.pi, half)
        solvable = solvable | on_axis
        q1 = np.stack([centre + half, centre - half], axis=1)
        # Front: the solved point ahead of the arm once the yaw is undone.
        f, g = self.forward, np.cross(w1, self.forward)
        vf, vg = v @ f, v @ g
        score = np.cos(q1) * vf[:, None] + np.sin(q1) * vg[:, None]
        swap = score[:, 1] > score[:, 0]
        q1 = np.where(swap[:, None], q1[:, ::-1], q1)
        flags = np.where(on_axis[:, None], SHOULDER_SINGULAR, 0) * np.ones((1, 2), int)
        return q1, solvable, flags

    def _triangle(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                  np.ndarray, np.ndarray]:
        """Axes 2, 3 carry ``carried`` to x (M, 3), in the yaw-undone frame.

        Returns:
            q2, q3 (M, 2), elbow up first; solvable (M,); too near (M,); flags (M, 2).
        """
        n, o2 = self.n, self.o[1]
        y = x - o2
        y = y - np.outer(y @ n, n)
        reach_sq = np.einsum('ij,ij->i', y, y)
        a3, b3, squares = self.tri
        centre, half, solvable, edge = _cosine_equation(a3, b3, 0.5 * (reach_sq - squares))
        q3 = np.stack([centre + half, centre - half], axis=1)
        q2 = np.empty_like(q3)
        score = np.empty_like(q3)
        perp = _cross(n, y)
        perp *= np.where(perp @ self.up < 0.0, -1.0, 1.0)[:, None]
        for k in range(2):
            reach = self.link_a + _rotate(self.w[2], q3[:, k], self.link_b)
            q2[:, k], _ = _angle_between(self.w[1], reach, y)
            elbow = _rotate(self.w[1], q2[:, k], self.link_a)
            score[:, k] = np.einsum('ij,ij->i', elbow, perp)
        swap = score[:, 1] > score[:, 0]
        q2 = np.where(swap[:, None], q2[:, ::-1], q2)
        q3 = np.where(swap[:, None], q3[:, ::-1], q3)
        too_near = reach_sq < squares
        flags = np.where(edge[:, None], STRETCHED, 0) * np.ones((1, 2), int)
        return q2, q3, solvable, too_near, flags

    def _bend(self, rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The wrist bend joint (q5) (M, 2), noflip first, and the singular mask (M,)."""
        a, b, c = self.q5_coeffs
        _, half, _, _ = _cosine_equation(a, b, rhs - c)
        return np.stack([self.delta + half, self.delta - half], axis=1), \
            np.abs(np.sin(half)) < SINGULAR

    # -------------------------------------------------------------- solve
    def solve_raw(self, positions: np.ndarray, rotations: np.ndarray, seeds: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Eight solutions per pose, unwrapped, in BRANCHES order.

        Args:
            positions: (N, 3) tip positions, m.
            rotations: (N, 3, 3) tip rotations.
            seeds: (N, 6) or (6,) reference joints, rad (used where a joint is free).

        Returns:
            (q (N, 8, 6), reachable (N, 8), flags (N, 8): bits WRIST_SINGULAR, ...). A
            pose out of reach gives finite angles with reachable False, never NaN.
        """
        positions = np.asarray(positions, dtype=float).reshape(-1, 3)
        rotations = np.asarray(rotations, dtype=float).reshape(-1, 3, 3)
        count = len(positions)
        seeds = np.broadcast_to(np.asarray(seeds, dtype=float), (count, 6))
        point = np.einsum('nij,j->ni', rotations, self.point_tool) + positions
        if self.family.name == 'ur':
            return self._solve_ur(point, rotations, seeds)
        return self._solve_opw(point, rotations, seeds)

    def _undo_yaw(self, q1: np.ndarray, points: np.ndarray) -> np.ndarray:
        """g1⁻¹·points for yaws q1 (M,), points (M, 3)."""
        return _rotate(self.w[0], -q1, points - self.o[0]) + self.o[0]

    def _solve_ur(self, point: np.ndarray, rotations: np.ndarray, seeds: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        w, n = self.w, self.n
        count = len(point)
        q1, ok1, flag1 = self._yaw(point, seeds[:, 0])
        # Rows (pose, shoulder): M = 2N.
        q1 = q1.reshape(-1)
        rot = np.repeat(rotations, 2, axis=0)
        pts = np.repeat(point, 2, axis=0)
        seed = np.repeat(seeds, 2, axis=0)
        n1 = _rotate(w[0], q1, n)
        axis6 = rot @ (self.r0.T @ w[5])
        q5, wrist_singular = self._bend(np.einsum('ij,ij->i', n1, axis6))
        # Rows (pose, shoulder, wrist): 4N.
        q5 = q5.reshape(-1)
        wrist_singular = np.repeat(wrist_singular, 2)
        q1 = np.repeat(q1, 2)
        rot = np.repeat(rot, 2, axis=0)
        pts = np.repeat(pts, 2, axis=0)
        seed = np.repeat(seed, 2, axis=0)
        n1 = np.repeat(n1, 2, axis=0)
        # R6·m = R5ᵀ·n with m = R0·Rᵀ·R1·n (n is fixed by the three parallel joints).
        m = np.einsum('ij,njk,nk->ni', self.r0, rot.transpose(0, 2, 1), n1)
        target = _rotate(w[4], -q5, n)
        q6, across = _angle_between(w[5], m, target)
        flip = np.tile([0.0, math.pi], 2 * count)
        free = wrist_singular | (across < SINGULAR)
        q6 = np.where(free, seed[:, 5] + flip, q6)
        # R234 = R1ᵀ·R·R0ᵀ·R6ᵀ·R5ᵀ, a turn θ about n.
        r1 = _rotations(w[0], q1)
        r234 = (r1.transpose(0, 2, 1) @ rot @ self.r0.T @ _rotations(w[5], -q6)
                @ _rotations(w[4], -q5))
        u = r234 @ self.n_perp
        theta = np.arctan2(_cross(self.n_perp, u) @ n, u @ self.n_perp)
        x = self._undo_yaw(q1, pts) - r234 @ self.lever
        q2, q3, ok3, near, flag3 = self._triangle(x)
        # Rows (pose, shoulder, wrist, elbow): 8N.
        s = self.signs
        q4 = s[3] * (theta[:, None] - s[1] * q2 - s[2] * q3)
        q = np.stack([np.repeat(q1, 2), q2.reshape(-1),
                      q3.reshape(-1), q4.reshape(-1), np.repeat(q5, 2), np.repeat(q6, 2)],
                     axis=1)
        ok = np.repeat(ok1, 8) & np.repeat(ok3, 2)
        flags = (np.repeat(flag1.reshape(-1), 4) | np.repeat(
            np.where(free, WRIST_SINGULAR, 0), 2) | flag3.reshape(-1))
        # (pose, shoulder, wrist, elbow) → (pose, shoulder, elbow, wrist).
        order = (0, 1, 3, 2)
        q = q.reshape(count, 2, 2, 2, 6).transpose(*order, 4).reshape(count, 8, 6)
        ok = ok.reshape(count, 2, 2, 2).transpose(*order).reshape(count, 8)
        flags = flags.reshape(count, 2, 2, 2).transpose(*order).reshape(count, 8)
        self.last_too_near = np.repeat(near, 2).reshape(count, 2, 2, 2).transpose(
            *order).reshape(count, 8)
        return np.nan_to_num(q), ok, flags

    def _solve_opw(self, centre: np.ndarray, rotations: np.ndarray, seeds: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        w = self.w
        count = len(centre)
        q1, ok1, flag1 = self._yaw(centre, seeds[:, 0])
        q1 = q1.reshape(-1)                                     # rows (pose, shoulder)
        x = self._undo_yaw(q1, np.repeat(centre, 2, axis=0))
        q2, q3, ok3, near, flag3 = self._triangle(x)
        q1 = np.repeat(q1, 2)                                   # rows (pose, sh., elbow)
        q2, q3 = q2.reshape(-1), q3.reshape(-1)
        rot = np.repeat(rotations, 4, axis=0)
        seed = np.repeat(seeds, 4, axis=0)
        r123 = _rotations(w[0], q1) @ _rotations(w[1], q2) @ _rotations(w[2], q3)
        r456 = r123.transpose(0, 2, 1) @ rot @ self.r0.T
        axis6 = r456 @ w[5]
        q5, singular = self._bend(axis6 @ w[3])
        q5 = q5.reshape(-1)                                     # rows (pose, sh., el., wrist)
        singular = np.repeat(singular, 2)
        axis6 = np.repeat(axis6, 2, axis=0)
        r456 = np.repeat(r456, 2, axis=0)
        seed = np.repeat(seed, 2, axis=0)
        q4, across = _angle_between(w[3], _rotate(w[4], q5, w[5]), axis6)
        free = singular | (across < SINGULAR)
        q4 = np.where(free, seed[:, 3] + np.tile([0.0, math.pi], 4 * count), q4)
        r6 = _rotations(w[4], -q5) @ _rotations(w[3], -q4) @ r456
        u = r6 @ self.w6_perp
        q6 = np.arctan2(_cross(self.w6_perp, u) @ w[5], u @ self.w6_perp)
        q = np.stack([np.repeat(q1, 2), np.repeat(q2, 2), np.repeat(q3, 2), q4, q5, q6],
                     axis=1).reshape(count, 8, 6)
        ok = (np.repeat(ok1, 4) & ok3.repeat(2)).repeat(2).reshape(count, 8)
        flags = (np.repeat(flag1.reshape(-1), 4) | np.repeat(flag3.reshape(-1), 2)
                 | np.where(free, WRIST_SINGULAR, 0))
        self.last_too_near = np.repeat(near, 4).reshape(count, 8)
        return np.nan_to_num(q), ok, flags.reshape(count, 8)


# ---------------------------------------------------------------------- one pose
# The same steps as FamilyEngine on plain floats: one request makes about a hundred small
# operations, each of which costs more as a numpy call than as arithmetic.
Vec = tuple[float, float, float]


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _vcross(a: Sequence[float], b: Sequence[float]) -> Vec:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _turn(w: Sequence[float], angle: float, v: Sequence[float]) -> Vec:
    """``v`` turned about the unit axis ``w`` by ``angle`` (Rodrigues)."""
    c, s = math.cos(angle), math.sin(angle)
    k = (1.0 - c) * _dot(w, v)
    x = _vcross(w, v)
    return (v[0] * c + x[0] * s + w[0] * k, v[1] * c + x[1] * s + w[1] * k,
            v[2] * c + x[2] * s + w[2] * k)


def _mat_t_vec(m: Sequence[float], v: Sequence[float]) -> Vec:
    return (m[0] * v[0] + m[3] * v[1] + m[6] * v[2], m[1] * v[0] + m[4] * v[1] + m[7] * v[2],
            m[2] * v[0] + m[5] * v[1] + m[8] * v[2])


def _transpose(m: Sequence[float]) -> tuple[float, ...]:
    return (m[0], m[3], m[6], m[1], m[4], m[7], m[2], m[5], m[8])


def _angle_one(w: Sequence[float], p: Sequence[float], q: Sequence[float]
               ) -> tuple[float, float]:
    """``_angle_between`` for one pair of vectors: (angle, length of p across w)."""
    kp, kq = _dot(p, w), _dot(q, w)
    pp = (p[0] - kp * w[0], p[1] - kp * w[1], p[2] - kp * w[2])
    qq = (q[0] - kq * w[0], q[1] - kq * w[1], q[2] - kq * w[2])
    return math.atan2(_dot(_vcross(pp, qq), w), _dot(pp, qq)), math.sqrt(_dot(pp, pp))


def _cosine_one(a: float, b: float, rhs: float) -> tuple[float, float, bool, bool]:
    """``_cosine_equation`` for one equation."""
    r = math.hypot(a, b)
    ratio = rhs / max(r, 1e-300)
    half = math.acos(1.0 if ratio > 1.0 else -1.0 if ratio < -1.0 else ratio)
    return (math.atan2(b, a), half, abs(ratio) <= 1.0 + STRETCH_SLACK,
            abs(math.sin(half)) < 1e-7)


class ScalarEngine:
    """FamilyEngine's closed form for one pose, in plain floats (same labels and order)."""

    def __init__(self, engine: FamilyEngine) -> None:
        def t(v: np.ndarray) -> tuple:
            return tuple(float(x) for x in np.ravel(v))
        e = engine
        self.ur = e.family.name == 'ur'
        self.w = tuple(t(a) for a in e.w)
        self.o = tuple(t(a) for a in e.o)
        self.n = t(e.n)
        self.s = t(e.signs)
        self.r0t = t(e.r0.T)
        self.point_tool = t(e.point_tool)
        self.up, self.forward = t(e.up), t(e.forward)
        self.side = t(np.cross(e.w[0], e.forward))
        self.d, self.k1, self.w1xn = e.d, e.k1, t(e.w1xn)
        self.q5 = e.q5_coeffs
        self.delta = e.delta
        self.link_a, self.link_b, self.tri = t(e.link_a), t(e.link_b), e.tri
        self.w6_perp = t(e.w6_perp)
        self.r0t_w6 = t(e.r0.T @ e.w[5])
        if self.ur:
            self.lever, self.n_perp = t(e.lever), t(e.n_perp)

    def _yaw(self, point: Vec, seed: float) -> tuple[list[float], bool, int, Vec]:
        w1, o1 = self.w[0], self.o[0]
        v = (point[0] - o1[0], point[1] - o1[1], point[2] - o1[2])
        along = _dot(v, w1)
        a = _dot(v, self.n) - self.k1 * along
        b = _dot(v, self.w1xn)
        centre, half, solvable, _ = _cosine_one(a, b, self.d - self.k1 * along)
        flag = 0
        if math.hypot(a, b) < SINGULAR:
            # On the axis any yaw does: the seed's, and the seed's + π (centre ± half).
            centre, half, solvable, flag = seed + 0.5 * math.pi, 0.5 * math.pi, True, \
                SHOULDER_SINGULAR
        q1 = [centre + half, centre - half]
        vf, vg = _dot(v, self.forward), _dot(v, self.side)
        if math.cos(q1[1]) * vf + math.sin(q1[1]) * vg > math.cos(q1[0]) * vf + \
                math.sin(q1[0]) * vg:
            q1.reverse()
        return q1, solvable, flag, v

    def _triangle(self, x: Vec) -> tuple[list[tuple[float, float]], bool, bool, int]:
        n, o2 = self.n, self.o[1]
        y = (x[0] - o2[0], x[1] - o2[1], x[2] - o2[2])
        k = _dot(y, n)
        y = (y[0] - k * n[0], y[1] - k * n[1], y[2] - k * n[2])
        reach_sq = _dot(y, y)
        a3, b3, squares = self.tri
        centre, half, solvable, edge = _cosine_one(a3, b3, 0.5 * (reach_sq - squares))
        perp = _vcross(n, y)
        if _dot(perp, self.up) < 0.0:
            perp = (-perp[0], -perp[1], -perp[2])
        out = []
        for q3 in (centre + half, centre - half):
            b = _turn(self.w[2], q3, self.link_b)
            reach = (self.link_a[0] + b[0], self.link_a[1] + b[1], self.link_a[2] + b[2])
            q2, _ = _angle_one(self.w[1], reach, y)
            out.append((_dot(_turn(self.w[1], q2, self.link_a), perp), q2, q3))
        if out[1][0] > out[0][0]:
            out.reverse()
        return ([(q2, q3) for _, q2, q3 in out], solvable, reach_sq < squares,
                STRETCHED if edge else 0)

    def solve(self, position: Sequence[float], rotation: Sequence[float],
              seed: Sequence[float]) -> tuple[list[tuple[tuple, bool, int]], bool]:
        """([(q, reachable, flags)] × 8 in BRANCHES order, every branch too near).

        Args:
            position: tip position, m. rotation: row-major 9 floats. seed: 6 joints, rad.
        """
        point = _mat_vec(rotation, self.point_tool)
        point = (point[0] + position[0], point[1] + position[1], point[2] + position[2])
        q1s, solvable, flag1, v = self._yaw(point, seed[0])
        out: list = [None] * 8
        near_all = True
        w, o = self.w, self.o
        flip = (0.0, math.pi)
        a5, b5, c5 = self.q5
        r5 = math.hypot(a5, b5)
        goal_r0t = _mat_mul(rotation, self.r0t)
        for i, q1 in enumerate(q1s):
            r1 = _rotation(w[0], q1)
            undone = _turn(w[0], -q1, v)
            if self.ur:
                n1 = _turn(w[0], q1, self.n)
                axis6 = _mat_vec(rotation, self.r0t_w6)
                ratio = (_dot(n1, axis6) - c5) / r5
                half = math.acos(1.0 if ratio > 1.0 else -1.0 if ratio < -1.0 else ratio)
                wrist_singular = abs(math.sin(half)) < SINGULAR
                m = _mat_t_vec(self.r0t, _mat_t_vec(rotation, n1))
                base = _mat_mul(_transpose(r1), goal_r0t)
                for j, q5 in enumerate((self.delta + half, self.delta - half)):
                    q6, across = _angle_one(w[5], m, _turn(w[4], -q5, self.n))
                    free = wrist_singular or across < SINGULAR
                    if free:
                        q6 = seed[5] + flip[j]
                    # R234 = base·R6ᵀ·R5ᵀ, applied to two vectors only.
                    u = _mat_vec(base, _turn(w[5], -q6, _turn(w[4], -q5, self.n_perp)))
                    theta = math.atan2(_dot(_vcross(self.n_perp, u), self.n),
                                       _dot(u, self.n_perp))
                    lever = _mat_vec(base, _turn(w[5], -q6, _turn(w[4], -q5, self.lever)))
                    x = (undone[0] + o[0][0] - lever[0], undone[1] + o[0][1] - lever[1],
                         undone[2] + o[0][2] - lever[2])
                    pairs, ok3, near, flag3 = self._triangle(x)
                    near_all &= near
                    flags = flag1 | flag3 | (WRIST_SINGULAR if free else 0)
                    for k, (q2, q3) in enumerate(pairs):
                        q4 = self.s[3] * (theta - self.s[1] * q2 - self.s[2] * q3)
                        out[i * 4 + k * 2 + j] = ((q1, q2, q3, q4, q5, q6),
                                                  solvable and ok3, flags)
                continue
            x = (undone[0] + o[0][0], undone[1] + o[0][1], undone[2] + o[0][2])
            pairs, ok3, near, flag3 = self._triangle(x)
            near_all &= near
            for k, (q2, q3) in enumerate(pairs):
                # Axes 2 and 3 are parallel: R2·R3 is one turn about n.
                r123 = _mat_mul(r1, _rotation(self.n, self.s[1] * q2 + self.s[2] * q3))
                r456 = _mat_mul(_transpose(r123), goal_r0t)
                axis6 = _mat_vec(r456, w[5])
                ratio = (_dot(w[3], axis6) - c5) / r5
                half = math.acos(1.0 if ratio > 1.0 else -1.0 if ratio < -1.0 else ratio)
                wrist_singular = abs(math.sin(half)) < SINGULAR
                for j, q5 in enumerate((self.delta + half, self.delta - half)):
                    q4, across = _angle_one(w[3], _turn(w[4], q5, w[5]), axis6)
                    free = wrist_singular or across < SINGULAR
                    if free:
                        q4 = seed[3] + flip[j]
                    # R6 = R5ᵀ·R4ᵀ·R456, applied to one vector across axis 6.
                    u = _turn(w[4], -q5, _turn(w[3], -q4, _mat_vec(r456, self.w6_perp)))
                    q6 = math.atan2(_dot(_vcross(self.w6_perp, u), w[5]),
                                    _dot(u, self.w6_perp))
                    out[i * 4 + k * 2 + j] = ((q1, q2, q3, q4, q5, q6), solvable and ok3,
                                              flag1 | flag3 | (WRIST_SINGULAR if free else 0))
        return out, near_all


# ---------------------------------------------------------------------- solvers
def _turns(angle: float, lower: float, upper: float) -> list[float]:
    """Every ``angle`` + 2πk inside [lower, upper] (± LIMIT_TOLERANCE, clamped onto them)."""
    first = (angle + (LIMIT_TOLERANCE - lower)) % TWO_PI + (lower - LIMIT_TOLERANCE)
    out = []
    while first <= upper + LIMIT_TOLERANCE:
        out.append(lower if first < lower else upper if first > upper else first)
        first += TWO_PI
    return out


def _past_limits(angle: float, lower: float, upper: float) -> float:
    """How far (rad) the nearest whole-turn copy of ``angle`` lies outside [lower, upper]."""
    wrapped = (angle - lower) % TWO_PI + lower          # in [lower, lower + 2π)
    if wrapped <= upper:
        return 0.0
    return min(wrapped - upper, lower + TWO_PI - wrapped)


def flag_words(flags: int) -> str:
    """The singularities named by a solution's flag bits ('' for none)."""
    return '; '.join(words for bit, words in FLAG_WORDS.items() if flags & bit)


class FamilySolver(ClosedFormBase):
    """Every closed-form solution of a UR-family or OPW-family arm, labelled.

    Labels are those of the spherical-wrist solver (closed_form.BRANCHES):
    ``{front|back}_{up|down}_{noflip|flip}``: front has the solved point (UR: where axes 5
    and 6 cross; OPW: the wrist centre) ahead of the arm, up the elbow above the line from
    the shoulder to it, noflip the wrist bend (q5) on the positive side of its straight
    value. Joints whose range spans more than a full turn give every whole-turn copy inside
    the limits, with the same label (the links are where they were).

    Goals:
        FULL_POSE: position and orientation (quaternion x, y, z, w or 3×3 matrix).
        TOOL_DOWN: tool z along −Z of the base, the heading about it from the seed.
        POSITION: the seed's tool orientation held; when no solution inside the limits
            keeps it, damped least squares from the seed answers (branch '').
    """

    name = 'closed_form'
    labelled = True

    def __init__(self, model: ArmModel, workspace: Workspace, family: Family,
                 home: Sequence[float] | None = None) -> None:
        """Prepare the engine of ``family`` (from ``recognise``) for ``model``.

        Args:
            model: the arm.
            workspace: the tip reach pre-check.
            family: a 'ur' or 'opw' family of ``model``.
            home: default seed (rad); the zero pose clamped into the limits when None.
        """
        super().__init__(model, workspace)
        self.family = family
        self.engine = FamilyEngine(model, family)
        self.scalar = ScalarEngine(self.engine)
        self.ranges = JointRanges(model.lower, model.upper)
        r = self.ranges
        # Per joint: the wrap constants of JointRanges and whether a second copy can fit.
        self._joint_constants = tuple(
            (shift, base, top, lo, hi, hi - lo >= TWO_PI - 2.0 * LIMIT_TOLERANCE)
            for shift, base, top, lo, hi in zip(r.shift, r.base, r.top, r.lower, r.upper,
                                                strict=True))
        self.gate = PositionGate(workspace)
        if home is None:
            home = model.clamp(np.zeros(model.dof))
        self.home = tuple(float(v) for v in home)
        self._dls: Solver | None = None

    # ------------------------------------------------------------------ batches
    def solve_poses(self, positions: np.ndarray, rotations: np.ndarray,
                    seeds: np.ndarray | Sequence[float] | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every branch of N poses in one call, inside the joint limits.

        Args:
            positions: (N, 3) tip positions, m.
            rotations: (N, 3, 3) tip rotations.
            seeds: (N, 6) or (6,) reference joints, rad (for free joints at
                singularities and for the whole turn nearest the seed); home when None.

        Returns:
            (q (N, 8, 6) rad in BRANCHES order, valid (N, 8), flags (N, 8)): valid means
            reachable and inside the limits; q of a multi-turn joint is the whole-turn copy
            nearest the seed (the others are q ± 2π inside the limits, see
            ``turn_copies``); invalid rows hold finite unwrapped angles.
        """
        seeds = np.asarray(self.home if seeds is None else seeds, dtype=float)
        raw, ok, flags = self.engine.solve_raw(positions, rotations, seeds)
        count = len(raw)
        q = raw.copy()
        valid = ok.copy()
        for j in range(6):
            wrapped, inside = wrap_into_array(raw[:, :, j], self.ranges.lower[j],
                                              self.ranges.upper[j])
            q[:, :, j] = wrapped
            valid &= inside
        if self.ranges.multi_turn:
            reference = np.broadcast_to(seeds, (count, 6))
            flat = self.ranges.toward_array(q.reshape(-1, 6),
                                            np.repeat(reference, 8, axis=0).T)
            q = flat.reshape(count, 8, 6)
        return q, valid, flags

    def turn_copies(self, q: Sequence[float]) -> list[tuple[float, ...]]:
        """Every whole-turn copy of ``q`` (rad) inside the limits (q itself included)."""
        choices = [_turns(float(angle), lo, hi) for angle, lo, hi in
                   zip(q, self.ranges.lower, self.ranges.upper, strict=True)]
        return [tuple(c) for c in itertools.product(*choices)]

    # ------------------------------------------------------------------ one pose
    def all_solutions(self, position: Sequence[float], rotation: Sequence[float],
                      reference: Sequence[float]
                      ) -> tuple[list[tuple[str, tuple, int]], list[tuple[str, float, str]],
                                 ErrorCode, str]:
        """Labelled solutions of one pose inside the limits, with every whole-turn copy.

        Args:
            position: tip position, m. rotation: tip rotation, row-major 9 floats.
            reference: the seed, rad (free joints at singularities keep its values).

        Returns:
            (solutions [(label, per-joint whole-turn copies inside the limits, flags)],
            out-of-limit branches [(label, rad past, words)], code, reason): code OK
            when some branch is reachable, else OUT_OF_REACH or INSIDE_INNER_HOLE and why.
        """
        raw, too_near = self.scalar.solve(position, rotation, reference)
        ok = [good for _, good, _ in raw]
        flags = [flag for _, _, flag in raw]
        raw = [q for q, _, _ in raw]
        if not any(ok):
            point = 'where axes 5 and 6 cross' if self.family.name == 'ur' else \
                'the wrist centre'
            if too_near:
                return [], [], ErrorCode.INSIDE_INNER_HOLE, (
                    f'the point {point} is too near the shoulder for this orientation')
            return [], [], ErrorCode.OUT_OF_REACH, (
                f'the point {point} is out of reach for this orientation')
        found, outside = [], []
        names = self.model.joint_names
        lower, upper = self.ranges.lower, self.ranges.upper
        constants = self._joint_constants
        for label, q, good, flag in zip(BRANCHES, raw, ok, flags, strict=True):
            if not good:
                continue
            # _turns inlined (the hot path): the lowest copy, then more for long ranges.
            choices = []
            for angle, (shift, base, top, lo, hi, multi) in zip(q, constants, strict=True):
                first = (angle + shift) % TWO_PI + base
                if first > top:
                    break
                first = lo if first < lo else hi if first > hi else first
                if multi:
                    copies = [first]
                    following = first + TWO_PI
                    while following <= top:
                        copies.append(hi if following > hi else following)
                        following += TWO_PI
                    choices.append(copies)
                else:
                    choices.append((first,))
            else:
                found.append((label, choices, int(flag)))
                continue
            past = [(_past_limits(angle, lower[j], upper[j]), j) for j, angle in enumerate(q)]
            worst, joint = max(past)
            outside.append((label, worst, f'{names[joint]} would need '
                            f'{math.degrees(math.remainder(q[joint], TWO_PI)):.1f}°, '
                            f'{math.degrees(worst):.1f}° outside its limits '
                            f'[{math.degrees(lower[joint]):.1f}°, '
                            f'{math.degrees(upper[joint]):.1f}°]'))
        return found, outside, ErrorCode.OK, ''

    def _goal_rotation(self, goal: int, orientation: object, reference: Sequence[float]
                       ) -> tuple[tuple[float, ...] | None, str]:
        """The goal's tool rotation (row-major 9 floats), or (None, reason)."""
        if goal == GoalType.FULL_POSE:
            if orientation is None:
                return None, 'a FULL_POSE goal needs a target orientation'
            return parse_orientation(orientation)
        seed_rotation = self.model.fk(np.asarray(reference))[:3, :3]
        if goal == GoalType.POSITION:
            return tuple(seed_rotation.reshape(-1).tolist()), ''
        # TOOL_DOWN: the heading of the seed's tool x axis (its y axis when x is vertical).
        if math.hypot(seed_rotation[0, 0], seed_rotation[1, 0]) > 1e-6:
            heading = math.atan2(seed_rotation[1, 0], seed_rotation[0, 0])
        else:
            heading = math.atan2(seed_rotation[1, 1], seed_rotation[0, 1]) + 0.5 * math.pi
        ch, sh = math.cos(heading), math.sin(heading)
        return (ch, sh, 0.0, sh, -ch, 0.0, 0.0, 0.0, -1.0), ''

    def solve(self, position: object, orientation: object = None,
              goal: GoalType = GoalType.POSITION, seed: object = None,
              options: SolveOptions = _DEFAULT_OPTIONS) -> IKResult:
        """Solve one goal in closed form; never raises.

        Args:
            position: tip position (m, base frame), 3 values.
            orientation: FULL_POSE only: quaternion (x, y, z, w) or 3×3 rotation matrix.
            goal: FULL_POSE, TOOL_DOWN or POSITION (see the class docstring).
            seed: reference configuration (rad); the home pose when None.
            options: ``branch`` ('' / 'nearest' or a label of BRANCHES), ``return_all``;
                limits are always respected.

        Returns:
            IKResult; JOINT_LIMITS names the branch nearest to the limits and how far out.
        """
        start = perf_counter()
        failure = self._options_failure(start, options, BRANCHES)
        if failure is not None:
            return failure
        branch = options.branch
        if goal not in (GoalType.FULL_POSE, GoalType.TOOL_DOWN, GoalType.POSITION):
            return self._failure(start, ErrorCode.INVALID_INPUT, f'unknown goal type {goal!r}')
        target, failure = self._target(start, position)
        if failure is not None:
            return failure
        reference, failure = self._reference(start, seed, 6)
        if failure is not None:
            return failure
        rotation, reason = self._goal_rotation(goal, orientation, reference)
        if rotation is None:
            return self._failure(start, ErrorCode.INVALID_INPUT, reason)
        found, outside, code, reason = self.all_solutions(target, rotation, reference)
        if code == ErrorCode.OK:
            result = self._choose(start, target, rotation, goal, reference, found, outside,
                                  branch, options.return_all)
            if result.success or goal != GoalType.POSITION:
                return result
            code, reason = result.code, result.reason
        if goal == GoalType.POSITION:
            return self._position_by_dls(start, target, reference, options, reason)
        return self._failure(start, code, reason)

    def _position_by_dls(self, start: float, target: Sequence[float],
                         reference: Sequence[float], options: SolveOptions,
                         why: str) -> IKResult:
        """A position goal the seed's tool orientation cannot reach: DLS from the seed."""
        if self._dls is None:
            from arm_kinematics.ik.solvers.dls import DLSSolver
            self._dls = DLSSolver(self.model, self.workspace)
        result = self._dls.solve(target, None, GoalType.POSITION, reference, options)
        note = (f"the seed's tool orientation gives no solution ({why}); damped least "
                'squares from the seed')
        result.reason = f'{note}: {result.reason}' if result.reason else note
        result.solve_time = perf_counter() - start
        return result

    def _choose(self, start: float, target: Sequence[float], rotation: Sequence[float],
                goal: int, reference: Sequence[float], found: list, outside: list,
                branch: str, return_all: bool) -> IKResult:
        nearest = branch in NEAREST
        best, best_step = None, math.inf
        for label, choices, flags in found:
            if nearest or label == branch:
                # The copy nearest the seed joint by joint (the joints turn independently).
                q = tuple(copies[0] if len(copies) == 1 else
                          min(copies, key=lambda a, r=r: abs(a - r))
                          for copies, r in zip(choices, reference, strict=True))
                q1, q2, q3, q4, q5, q6 = q
                r1, r2, r3, r4, r5, r6 = reference
                step = max(abs(q1 - r1), abs(q2 - r2), abs(q3 - r3), abs(q4 - r4),
                           abs(q5 - r5), abs(q6 - r6))
                if step < best_step:
                    best, best_step = (label, q, flags), step
        if best is None:
            return self._none_within_limits(start, branch, outside, 'pose')
        label, q, flags = best
        reason = f'solved in closed form ({self.family.name} family)'
        if flags:
            reason += f'; {flag_words(flags)}'
        solutions = []
        if return_all:
            labels, rows = [], []
            for name, choices, _ in found:
                copies = list(itertools.product(*choices))
                labels += [name] * len(copies)
                rows += copies
            # One array, one row per solution: a UR5 lists 256 copies, and an array each
            # would cost more than the closed form.
            table = np.array(rows)
            solutions = [Solution(name, row) for name, row in zip(labels, table, strict=True)]
        return solved(self.model, start, target, goal, rotation, label, q, best_step, reason,
                      solutions)


def solved(model: ArmModel, start: float, target: Sequence[float], goal: int,
           rotation: Sequence[float] | None, label: str, q: Sequence[float], step: float,
           reason: str, solutions: list[Solution]) -> IKResult:
    """The OK answer of a labelled closed form: the chosen solution checked by FK (tip
    error, and the tool angle error for FULL_POSE (against ``rotation``) or TOOL_DOWN)."""
    reached = model.fk(np.array(q))
    tip = reached[:3, 3]
    error = float(np.linalg.norm(tip - np.asarray(target)))
    if goal == GoalType.FULL_POSE and rotation is not None:
        angle = rotation_angle(rotation, reached[:3, :3].reshape(-1).tolist())
    elif goal == GoalType.TOOL_DOWN:
        angle = math.atan2(math.hypot(reached[0, 2], reached[1, 2]), -reached[2, 2])
    else:
        angle = 0.0
    return IKResult(ErrorCode.OK, reason, np.array(q), label, tip, error, angle, 0, step,
                    solutions, perf_counter() - start)


class ClosedFormSolver(Solver):
    """The ``closed_form`` solver: the closed form of the family ``recognise`` finds.

    A spherical-wrist six-axis arm (six_axis) is served by ``SphericalWristSolver``
    unchanged; UR-family and OPW-family arms by ``FamilySolver``. Attributes of the
    solver it dispatches to are reachable on this one.
    """

    name = 'closed_form'
    labelled = True

    def __init__(self, model: ArmModel, workspace: Workspace,
                 home: Sequence[float] | None = None) -> None:
        super().__init__(model, workspace)
        family, _ = recognise(model)
        self._not_applicable = self.applicability(model)
        if self._not_applicable:
            family = None
        self.family = family
        if family is None:
            self._delegate: Solver | None = None
        elif family.name == 'spherical_wrist':
            self._delegate = SphericalWristSolver(model, workspace, home)
        else:
            self._delegate = FamilySolver(model, workspace, family, home)

    @classmethod
    def applicability(cls, model: ArmModel) -> str:
        """'' when a closed-form family fits ``model``, else why none does."""
        family, reasons = recognise(model)
        if family is not None and family.name in SIX_JOINT_FAMILIES:
            return ''
        if model.dof != 6:
            return SphericalWristSolver.applicability(model)
        return 'no closed-form family fits: ' + '; '.join(
            f'{name}: {reason}' for name, reason in reasons.items()
            if name in SIX_JOINT_FAMILIES)

    @classmethod
    def family_description(cls, model: ArmModel) -> str:
        """The recognised family in words ('' when none)."""
        family, _ = recognise(model)
        return '' if family is None or family.name not in SIX_JOINT_FAMILIES else \
            family.describe()

    def __getattr__(self, name: str) -> object:
        delegate = self.__dict__.get('_delegate')
        if delegate is None:
            raise AttributeError(name)
        return getattr(delegate, name)

    def solve(self, position: object, orientation: object = None,
              goal: GoalType = GoalType.POSITION, seed: object = None,
              options: SolveOptions = _DEFAULT_OPTIONS) -> IKResult:
        """As the recognised family's solver; SOLVER_NOT_APPLICABLE when none fits."""
        if self._delegate is None:
            return IKResult(ErrorCode.SOLVER_NOT_APPLICABLE, self._not_applicable)
        return self._delegate.solve(position, orientation, goal, seed, options)
