"""Yaw + three parallel pitch joints (+ an optional tool roll): the 4-5-DOF hobby arms.

The family of most servo arms (SO-101, and the synthetic ``yaw_three_pitch`` test arm):
a yaw joint, three pitch joints with parallel axes roughly perpendicular to it, and
optionally a roll joint whose axis lies in the arm plane. Recognised from the URDF at
q = 0 (``recognise_planar``), solved in closed form in product-of-exponentials form on the
world axes, so joint offsets, axis signs, a lateral offset of the arm plane from the yaw
axis (SO-101's lift joint sits beside the pan axis) and a tip off the roll axis need no
convention.

Goals (4 constraints for 4 free joints; the roll, when there is one, keeps the seed's value,
except for a full pose):

- position plus the tool's approach pitch: the angle phi (rad) of the tool's approach axis
  (its z axis) in the arm plane, measured from the arm plane's horizontal direction that
  points from the yaw axis toward the target, positive upward; phi = -pi/2 is straight
  down, |phi| > pi/2 points back toward the base. Up to four solutions: the base facing
  the target or turned to reach over (``flipped_``), elbow up or down (analytic.BRANCHES).
  A target on the yaw axis (no lateral offset) has no direction toward it: the yaw is the
  seed's (and half a turn from it), flagged shoulder singular, and the pitch is measured
  from the facing arm's forward, so the flipped solutions point the tool the same way.
- TOOL_DOWN: the approach pitch -pi/2; the tool z is then -Z of the base exactly when the
  tool axis lies in the arm plane (on the SO-101 it leans out of it by 6e-6 to 7e-6 rad,
  which the answer's orientation_error reports).
- POSITION: the free pitch is swept (a grid of SWEEP_STEPS, then zooming grids) and the
  solution nearest the seed by the branch rules is chosen; when none exists with the
  seed's roll (the tip off the roll axis moves with it), damped least squares from the
  seed answers with the roll free, as the families do for a position.
- FULL_POSE: solved when reachable: the orientation fixes the yaw (two ways with a roll,
  one without), the total pitch and the roll; the position must then lie in that arm
  plane (within the request's tolerance, else SOLVER_NOT_APPLICABLE with the distance),
  and the elbow triangle gives up and down.

Tolerances. The closed form assumes exactly one thing of the geometry: that the three pitch
axes are parallel. That is checked to ANGLE_TOLERANCE (1e-6 rad, the families' choice:
vendor URDFs round to about a micrometre) and then against FK on random configurations
(CHECK_TOLERANCE, 1e-9 m / rad), so drift the closed form cannot absorb is refused with the
size of the miss. Everything else (the yaw axis direction, its angle to the pitch axes,
the lateral offset, the roll axis, the tip and tool offsets) enters the solution exactly
and only decides whether the labels mean what they say, so it is checked to SHAPE_TOLERANCE
(1e-3 rad): the SO-101's rpy values of 1.5708 and 3.14159 tilt its axes by 3.7e-6 and
2.7e-6 rad, beyond 1e-6 but harmless here. Units: metres and radians.
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
    BRANCHES,
    JointRanges,
    PositionGate,
    TWO_PI,
    wrap_into_array,
)
from arm_kinematics.ik.closed_form.families import (
    _angle_between,
    _cosine_equation,
    _cosine_one,
    _cross,
    _dot,
    _parallel,
    _past_limits,
    _perpendicular,
    _turn,
    _turns,
    _vcross,
    ANGLE_TOLERANCE,
    CHECK_TOLERANCE,
    FLAG_WORDS,
    LINE_TOLERANCE,
    ScalarEngine,
    SHOULDER_SINGULAR,
    SINGULAR,
    solved,
    STRETCHED,
    Vec,
)
from arm_kinematics.ik.closed_form.spherical_wrist import parse_orientation
from arm_kinematics.ik.result import (
    ErrorCode,
    GoalType,
    IKResult,
    Solution,
)
from arm_kinematics.ik.solvers.base import ClosedFormBase, NEAREST, SolveOptions, Solver, Workspace
from arm_kinematics.model.arm_model import ArmModel

FAMILY_NAME = 'yaw_three_pitch'
# A flag of the families' kind (bits 1, 2, 4 there): the yaw kept from the position.
ROLL_ALONG_YAW = 8
PLANAR_FLAG_WORDS = {**FLAG_WORDS, ROLL_ALONG_YAW: 'roll axis along the yaw axis (they turn '
                                                  'about one line; the yaw from the position)'}
# Shape conditions the closed form takes exactly (see the module docstring), rad.
SHAPE_TOLERANCE = 1e-3
CHECK_CONFIGURATIONS = 8
# The free pitch of a POSITION goal: a grid over a full turn, then REFINE_ROUNDS zooms of
# REFINE_POINTS pitches each across the best one's neighbourhood (a grid cell either side,
# then 2/32 of the previous width): the pitch to 1° · (1/16)^4 ≈ 3e-7 rad.
SWEEP_STEPS = 360
REFINE_POINTS = 33
REFINE_ROUNDS = 4
# Rows per engine call in a vectorised sweep (memory, not speed: ~1 kB a row).
CHUNK_ROWS = 200_000
UP = np.array([0.0, 0.0, 1.0])
_DEFAULT_OPTIONS = SolveOptions()


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


@dataclass(frozen=True, eq=False)
class PlanarFamily:
    """A recognised yaw + three-pitch arm: its lengths and the zero-pose geometry.

    Attributes:
        name: FAMILY_NAME.
        parameters: l1 (shoulder → elbow), l2 (elbow → wrist), l3 (wrist → tip, in the
            arm plane at roll 0), lateral (tip offset along the pitch axis from the yaw
            axis at roll 0), shoulder_forward (the shoulder axis's distance from the yaw
            axis across the plane), tip_off_roll (the tip's distance from the roll axis;
            0 without a roll), all m; zero_angles (the planar angles of the three links at
            q = 0 from the horizontal, rad) and roll (bool).
        origins, axes: joint origins (n, 3) and unit axes (n, 3) at q = 0, base frame.
        zero: tip transform at q = 0 (4×4).
        drift: the largest deviation of the pitch axes from parallel (rad).
    """

    name: str
    parameters: dict = field(default_factory=dict, repr=False)
    origins: np.ndarray | None = field(default=None, repr=False)
    axes: np.ndarray | None = field(default=None, repr=False)
    zero: np.ndarray | None = field(default=None, repr=False)
    drift: float = 0.0

    @property
    def roll(self) -> bool:
        return len(self.axes) == 5

    def describe(self) -> str:
        """One line: the family and its lengths (mm)."""
        words = 'yaw + three parallel pitch' + (' + tool roll' if self.roll else '')
        lengths = ', '.join(f'{key} {1000.0 * self.parameters[key]:.1f}' for key in
                            ('l1', 'l2', 'l3', 'lateral', 'tip_off_roll')
                            if key != 'tip_off_roll' or self.roll)
        return f'{words}: {lengths} mm'


def recognise_planar(model: ArmModel) -> PlanarFamily | str:
    """The yaw + three-pitch family of ``model`` with its parameters, or why it is not one.

    Checked at q = 0, in this order: 4 or 5 turning joints; a yaw (axis 1 within
    SHAPE_TOLERANCE of vertical); axes 2, 3, 4 parallel (ANGLE_TOLERANCE) and perpendicular
    to axis 1 (SHAPE_TOLERANCE); the links between them longer than LINE_TOLERANCE; a roll
    axis perpendicular to the pitch axes with the tool axis along it, or (no roll) the
    tool axis perpendicular to the pitch axes (SHAPE_TOLERANCE). The closed form is then
    checked against FK (``check_against_fk``).
    """
    name = model.name or 'this arm'
    if model.dof not in (4, 5):
        return (f'needs 4 or 5 joints (yaw, three pitch, optional roll); {name} has '
                f'{model.dof}')
    if model.prismatic.any():
        return 'a prismatic joint in the chain: this family turns joints only'
    origins, axes, _ = model.joint_origins_and_axes(np.zeros(model.dof))
    o = np.array(origins)
    w = np.array([_unit(a) for a in axes])
    zero = model.fk(np.zeros(model.dof))
    tilt = _parallel(w[0], UP)
    if tilt > SHAPE_TOLERANCE:
        return (f'axis 1 is {tilt:.3g} rad from vertical (no base yaw; tolerance '
                f'{SHAPE_TOLERANCE:g})')
    drifts = []
    for i in (2, 3):
        drifts.append(_parallel(w[1], w[i]))
        if drifts[-1] > ANGLE_TOLERANCE:
            return (f'axes 2 and {i + 1} are not parallel ({drifts[-1]:.3g} rad, tolerance '
                    f'{ANGLE_TOLERANCE:g})')
    off = _perpendicular(w[0], w[1])
    if off > SHAPE_TOLERANCE:
        return (f'axes 1 and 2 are not perpendicular ({off:.3g} rad off, tolerance '
                f'{SHAPE_TOLERANCE:g})')
    n = w[1]
    proj = np.eye(3) - np.outer(n, n)
    links = [float(np.linalg.norm(proj @ (o[i + 1] - o[i]))) for i in (1, 2)]
    if min(links) < LINE_TOLERANCE:
        return f'the pitch axes are not spread apart (links {links[0]:.3g} m, {links[1]:.3g} m)'
    tool = zero[:3, 2]
    tip = zero[:3, 3]
    if model.dof == 5:
        off = _perpendicular(w[4], n)
        if off > SHAPE_TOLERANCE:
            return (f'axis 5 is not a roll in the arm plane ({off:.3g} rad from '
                    f'perpendicular to the pitch axes, tolerance {SHAPE_TOLERANCE:g})')
        along = _parallel(tool, w[4])
        if along > SHAPE_TOLERANCE:
            return (f'the tool z axis is {along:.3g} rad off the roll axis (its approach '
                    f'pitch would change with the roll; tolerance {SHAPE_TOLERANCE:g})')
        rel = tip - o[4]
        tip_off_roll = float(np.linalg.norm(rel - np.dot(rel, w[4]) * w[4]))
    else:
        off = _perpendicular(tool, n)
        if off > SHAPE_TOLERANCE:
            return (f'the tool z axis is {off:.3g} rad out of the arm plane (no approach '
                    f'pitch; tolerance {SHAPE_TOLERANCE:g})')
        tip_off_roll = 0.0
    forward = _unit(np.cross(n, w[0]))
    if np.dot(tip - o[0], forward) < 0.0:
        forward = -forward
    horizontal = _unit(forward - np.dot(forward, UP) * UP)

    def planar_angle(v: np.ndarray) -> float:
        return math.atan2(float(np.dot(v, UP)), float(np.dot(v, horizontal)))

    shoulder_rel = o[1] - o[0]
    parameters = {
        'l1': links[0], 'l2': links[1],
        'l3': float(np.linalg.norm(proj @ (tip - o[3]))),
        'lateral': float(np.dot(tip - o[0], n)),
        'shoulder_forward': float(np.dot(shoulder_rel - np.dot(shoulder_rel, w[0]) * w[0],
                                         forward)),
        'tip_off_roll': tip_off_roll,
        'zero_angles': tuple(planar_angle(proj @ v) for v in
                             (o[2] - o[1], o[3] - o[2], tip - o[3])),
        'roll': model.dof == 5,
    }
    family = PlanarFamily(FAMILY_NAME, parameters, o, w, zero, max(drifts))
    miss = check_against_fk(model, family)
    return miss or family


def check_against_fk(model: ArmModel, family: PlanarFamily) -> str:
    """'' when the closed form finds random configurations again from their FK, else why."""
    engine = PlanarEngine(model, family)
    rng = np.random.default_rng(5)
    q = model.random_configurations(CHECK_CONFIGURATIONS, rng)
    frames = model.fk_batch(q)
    pitch = engine.approach_pitch(q)
    raw, ok, _ = engine.solve_raw(frames[:, :3, 3], pitch, q)
    worst = 0.0
    for index in range(len(q)):
        good = raw[index][ok[index]]
        if not len(good):
            return ('the yaw + three-pitch closed form finds no solution of a reachable pose '
                    f'(recognised within {ANGLE_TOLERANCE:g} rad)')
        reached = model.fk_batch(good)
        miss = max(float(np.abs(reached[:, :3, 3] - frames[index, :3, 3]).max()),
                   float(np.abs(engine.approach_pitch(good) - pitch[index]).max()))
        step = np.abs(np.remainder(good - q[index] + math.pi, TWO_PI) - math.pi).max(axis=1)
        worst = max(worst, miss, float(step.min()))
    if worst > CHECK_TOLERANCE:
        return (f'the yaw + three-pitch closed form misses FK by {worst:.3g} on random '
                f'configurations (pitch axes {family.drift:.3g} rad from parallel, within '
                f'the recognition tolerance; the check needs {CHECK_TOLERANCE:g})')
    return ''


# ---------------------------------------------------------------------- the engine
def _rotations_about(axis: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Rodrigues rotations (M, 3, 3) about one unit axis."""
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]],
                  [-axis[1], axis[0], 0.0]])
    sin, cos = np.sin(angles)[:, None, None], np.cos(angles)[:, None, None]
    return np.eye(3) + sin * k + (1.0 - cos) * (k @ k)


def _rotate(axis: np.ndarray, angles: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Vectors v (M, 3) (or one (3,)) turned about the unit ``axis`` by angles (M,): the
    families' Rodrigues turn without np.cross, whose call costs more than the arithmetic
    at the row counts of a request."""
    c, s = np.cos(angles)[:, None], np.sin(angles)[:, None]
    x, y, z = axis
    if v.ndim == 1:
        a, b, d = v
        k = np.array([y * d - z * b, z * a - x * d, x * b - y * a])
        return v * c + k * s + (1.0 - c) * (float(v @ axis) * axis)
    a, b, d = v[:, 0], v[:, 1], v[:, 2]
    k = np.stack([y * d - z * b, z * a - x * d, x * b - y * a], axis=1)
    return v * c + k * s + (1.0 - c) * ((v @ axis)[:, None] * axis)


def _dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum('ij,ij->i', a, b)


class PlanarEngine:
    """The vectorised closed form: four raw solutions per (target, approach pitch)."""

    def __init__(self, model: ArmModel, family: PlanarFamily) -> None:
        self.model = model
        self.family = family
        o, w = family.origins, family.axes
        self.o, self.w = o, w
        self.dof = len(w)
        n = w[1]
        self.n = n
        self.signs = np.array([1.0 if np.dot(w[i], n) > 0.0 else -1.0 for i in range(4)])
        self.k1 = float(np.dot(w[0], n))
        self.w1xn = np.cross(w[0], n)
        self.tip0 = family.zero[:3, 3]
        self.tool0 = family.zero[:3, 2]
        self.up = w[0] if np.dot(w[0], UP) > 0.0 else -w[0]
        forward = np.cross(n, w[0])
        if np.dot(self.tip0 - o[0], forward) < 0.0:
            forward = -forward
        self.forward = _unit(forward - np.dot(forward, w[0]) * w[0])
        self.side = np.cross(w[0], self.forward)
        proj = np.eye(3) - np.outer(n, n)
        self.link_a = proj @ (o[2] - o[1])
        self.link_b = proj @ (o[3] - o[2])
        self.tri = (float(self.link_a @ self.link_b),
                    float(self.link_a @ np.cross(w[2], self.link_b)),
                    float(self.link_a @ self.link_a + self.link_b @ self.link_b))

    def tip_and_tool(self, roll: np.ndarray | None, count: int
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Tip point and tool axis (count, 3) at pitches and yaw 0 and the given roll."""
        if self.dof == 4 or roll is None:
            return (np.broadcast_to(self.tip0, (count, 3)),
                    np.broadcast_to(self.tool0, (count, 3)))
        w5, o5 = self.w[4], self.o[4]
        return (_rotate(w5, roll, self.tip0 - o5) + o5, _rotate(w5, roll, self.tool0))

    def _yaw(self, v: np.ndarray, lateral: np.ndarray, seed_q1: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """q1 (M, 2) front first, solvable (M,), on the yaw axis (M,), too near (M,).

        The pitch joints keep every point's component along their axis, so after the yaw
        the target's component along the turned pitch axis must equal the tip's lateral
        offset: a·cos q1 + b·sin q1 = rhs, exact for any angle between yaw and pitch.
        """
        along = v @ self.w[0]
        a = v @ self.n - self.k1 * along
        b = v @ self.w1xn
        rhs = lateral - self.k1 * along
        centre, half, solvable, _ = _cosine_equation(a, b, rhs)
        on_axis = (np.hypot(a, b) < SINGULAR) & (np.abs(rhs) < SINGULAR)
        q1 = np.stack([centre + half, centre - half], axis=1)
        vf, vg = v @ self.forward, v @ self.side
        score = np.cos(q1) * vf[:, None] + np.sin(q1) * vg[:, None]
        swap = score[:, 1] > score[:, 0]
        q1 = np.where(swap[:, None], q1[:, ::-1], q1)
        # On the yaw axis any yaw does: the seed's, and half a turn from it.
        q1 = np.where(on_axis[:, None], np.stack([seed_q1, seed_q1 + math.pi], axis=1), q1)
        return q1, solvable | on_axis, on_axis, ~solvable & ~on_axis

    def solve_raw(self, positions: np.ndarray, pitches: np.ndarray, seeds: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Four solutions per row, unwrapped, in BRANCHES order.

        Args:
            positions: (N, 3) tip positions, m.
            pitches: (N,) approach pitches, rad.
            seeds: (N, n) or (n,) joints, rad: the roll (kept) and the yaw on the axis.

        Returns:
            (q (N, 4, n), reachable (N, 4), flags (N, 4)). Out-of-reach rows hold finite
            angles with reachable False, never NaN. ``last_too_near`` (N, 4) tells a target
            inside the inner hole from one beyond the reach.
        """
        p = np.asarray(positions, dtype=float).reshape(-1, 3)
        count = len(p)
        phi = np.broadcast_to(np.asarray(pitches, dtype=float), (count,))
        seeds = np.broadcast_to(np.asarray(seeds, dtype=float), (count, self.dof))
        roll = seeds[:, 4] if self.dof == 5 else None
        tip, tool = self.tip_and_tool(roll, count)
        o1, w1, n = self.o[0], self.w[0], self.n
        v = p - o1
        lateral = (tip - o1) @ n
        q1, ok1, on_axis, near1 = self._yaw(v, lateral, seeds[:, 0])
        # The outward horizontal of the arm plane: across the turned pitch axis, toward the
        # target (the front arm's forward when the target is on the plane's foot).
        front_forward = _rotate(w1, q1[:, 0], self.forward)
        # Rows (target, front/back): M = 2N.
        q1 = q1.reshape(-1)
        n1 = _rotate(w1, q1, n)
        h = _cross(np.broadcast_to(UP, n1.shape), n1)
        h /= np.maximum(np.linalg.norm(h, axis=1), 1e-300)[:, None]
        vv = np.repeat(v, 2, axis=0)
        toward = _dots(h, vv)
        ff = np.repeat(front_forward, 2, axis=0)
        sense = np.where(np.abs(toward) > 1e-9, toward, _dots(h, ff))
        h *= np.where(sense < 0.0, -1.0, 1.0)[:, None]
        phi2 = np.repeat(phi, 2)
        m = np.sin(phi2)[:, None] * h - np.cos(phi2)[:, None] * UP
        g = np.cos(phi2)[:, None] * h + np.sin(phi2)[:, None] * UP
        m = _rotate(w1, -q1, m)                  # into the yaw-undone frame
        g = _rotate(w1, -q1, g)
        t0 = np.repeat(tool, 2, axis=0)
        tn = t0 @ n
        nxt = _cross(np.broadcast_to(n, t0.shape), t0)
        # θ, the total pitch about n: the turned tool axis across m, and along g's side.
        big_a = _dots(t0, m) - tn * (m @ n)
        big_b = _dots(nxt, m)
        centre, half, _, _ = _cosine_equation(big_a, big_b, -tn * (m @ n))
        theta = np.stack([centre + half, centre - half], axis=1)
        ga = _dots(t0, g) - tn * (g @ n)
        gb = _dots(nxt, g)
        score = np.cos(theta) * ga[:, None] + np.sin(theta) * gb[:, None]
        theta = np.where(score[:, 0] >= score[:, 1], theta[:, 0], theta[:, 1])
        # The wrist point (on axis 4) carried by axes 2 and 3, in the yaw-undone frame.
        x = _rotate(w1, -q1, vv) + o1
        wrist = x - _rotate(n, theta, np.repeat(tip, 2, axis=0) - self.o[3])
        q2, q3, ok3, near3, edge = self._triangle(wrist)
        s = self.signs
        q4 = s[3] * (theta[:, None] - s[1] * q2 - s[2] * q3)
        # Rows (target, front/back, up/down): 4N, BRANCHES order.
        columns = [np.repeat(q1, 2), q2.reshape(-1), q3.reshape(-1), q4.reshape(-1)]
        if self.dof == 5:
            columns.append(np.repeat(seeds[:, 4], 4))
        q = np.stack(columns, axis=1).reshape(count, 4, self.dof)
        ok = (np.repeat(ok1, 4) & np.repeat(ok3, 2)).reshape(count, 4)
        flags = (np.repeat(np.where(on_axis, SHOULDER_SINGULAR, 0), 4) |
                 np.repeat(np.where(edge, STRETCHED, 0), 2)).reshape(count, 4)
        self.last_too_near = (np.repeat(near1, 4) |
                              (~np.repeat(near1, 4) & np.repeat(near3, 2))).reshape(count, 4)
        return np.nan_to_num(q), ok, flags

    def solve_pose(self, position: Sequence[float], rotation: np.ndarray,
                   seed: Sequence[float], free_below: float = SINGULAR
                   ) -> tuple[np.ndarray, ...]:
        """Four solutions of one full pose (BRANCHES order), exact where it is reachable.

        The point where the last pitch link carries the roll axis (the wrist axis without
        a roll) follows from the pose: c = p − M·(tip0 − o) with M = R·R0ᵀ. The yaw comes
        from the orientation (the roll axis M·w5 must be across the turned pitch axis;
        without a roll the pitch axis is M·n), then the lateral equation of c must hold:
        what it misses is how far the orientation's arm plane lies from the target.

        Args:
            position: tip position, m. rotation: 3×3 tip rotation. seed: n joints, rad.
            free_below: a roll axis this close (rad) to the yaw axis leaves the yaw to the
                position (a tool pointing straight down: the orientation's yaw would be
                decided by the URDF's rounding, not by the goal).

        Returns:
            (q (4, n), solvable (4,), flags (4,), lateral miss (4,) m, tilt (4,) rad): tilt,
            without a roll, how far the goal's pitch axis leans from one the yaw reaches.
        """
        p = np.asarray(position, dtype=float)
        m = np.asarray(rotation, dtype=float).reshape(3, 3) @ self.family.zero[:3, :3].T
        w1, o1, n = self.w[0], self.o[0], self.n
        carried = self.o[4] if self.dof == 5 else self.o[3]
        c = p - m @ (self.tip0 - carried)
        v = c - o1
        lateral = float((carried - o1) @ n)
        flags = np.zeros(2, int)
        tilt = np.zeros(2)
        if self.dof == 5:
            a_w = m @ self.w[4]
            along = float(a_w @ w1)
            a, b = float(a_w @ n) - self.k1 * along, float(a_w @ self.w1xn)
            rhs = float(self.w[4] @ n) - self.k1 * along
            if math.hypot(a, b) < max(free_below, SINGULAR):
                # The roll axis along the yaw axis: they turn about one line, and the
                # position decides the yaw.
                q1, _, _, _ = self._yaw(v[None], np.array([lateral]), np.array([seed[0]]))
                q1 = q1[0]
                flags[:] = ROLL_ALONG_YAW
            else:
                centre, half, _, _ = _cosine_equation(a, b, np.array(rhs))
                q1 = np.array([centre + half, centre - half]).reshape(2)
        else:
            target_axis = m @ n
            q1_one, _ = _angle_between(w1, n[None], target_axis[None])
            q1 = np.array([q1_one[0], q1_one[0] + math.pi])
            tilt[0] = abs(math.asin(max(-1.0, min(1.0, float(target_axis @ w1)))) -
                          math.asin(max(-1.0, min(1.0, float(n @ w1)))))
            # Half a turn more reverses the pitch axis: never this orientation.
            tilt[1] = math.pi
        vf, vg = float(v @ self.forward), float(v @ self.side)
        if math.cos(q1[1]) * vf + math.sin(q1[1]) * vg > math.cos(q1[0]) * vf + \
                math.sin(q1[0]) * vg:
            q1, flags, tilt = q1[::-1].copy(), flags[::-1].copy(), tilt[::-1].copy()
        n1 = _rotate(w1, q1, n)
        miss = np.abs(n1 @ v - lateral)
        undone = _rotations_about(w1, -q1) @ m                     # Rn·R5 (or Rn)
        if self.dof == 5:
            axis = np.einsum('kij,j->ki', _rotations_about(w1, -q1), m @ self.w[4])
            theta, _ = _angle_between(n, np.broadcast_to(self.w[4], (2, 3)), axis)
            r5 = _rotations_about(n, -theta) @ undone
            perp = np.cross(self.w[4], n)
            perp /= np.linalg.norm(perp)
            u = r5 @ perp
            roll = np.arctan2(_cross(np.broadcast_to(perp, u.shape), u) @ self.w[4], u @ perp)
        else:
            perp = np.cross(n, w1)
            perp /= np.linalg.norm(perp)
            u = undone @ perp
            theta = np.arctan2(_cross(np.broadcast_to(perp, u.shape), u) @ n, u @ perp)
        x = _rotate(w1, -q1, np.broadcast_to(v, (2, 3))) + o1
        wrist = x - _rotate(n, theta, np.broadcast_to(carried - self.o[3], (2, 3)))
        q2, q3, ok3, _, edge = self._triangle(wrist)
        s = self.signs
        q4 = s[3] * (theta[:, None] - s[1] * q2 - s[2] * q3)
        columns = [np.repeat(q1, 2), q2.reshape(-1), q3.reshape(-1), q4.reshape(-1)]
        if self.dof == 5:
            columns.append(np.repeat(roll, 2))
        q = np.nan_to_num(np.stack(columns, axis=1))
        out_flags = np.repeat(flags, 2) | np.repeat(np.where(edge, STRETCHED, 0), 2)
        return q, np.repeat(ok3, 2), out_flags, np.repeat(miss, 2), np.repeat(tilt, 2)

    def _triangle(self, wrist: np.ndarray) -> tuple[np.ndarray, ...]:
        """Axes 2 and 3 carry axis 4 to ``wrist`` (M, 3): q2, q3 (M, 2), elbow up first;
        solvable, too near, at the edge (M,)."""
        n, o2 = self.n, self.o[1]
        y = wrist - o2
        y = y - np.outer(y @ n, n)
        reach_sq = _dots(y, y)
        a3, b3, squares = self.tri
        centre, half, solvable, edge = _cosine_equation(a3, b3, 0.5 * (reach_sq - squares))
        q3 = np.stack([centre + half, centre - half], axis=1)
        q2 = np.empty_like(q3)
        score = np.empty_like(q3)
        perp = _cross(np.broadcast_to(n, y.shape), y)
        perp *= np.where(perp @ self.up < 0.0, -1.0, 1.0)[:, None]
        for k in range(2):
            reach = self.link_a + _rotate(self.w[2], q3[:, k], self.link_b)
            q2[:, k], _ = _angle_between(self.w[1], reach, y)
            score[:, k] = _dots(_rotate(self.w[1], q2[:, k], self.link_a), perp)
        swap = score[:, 1] > score[:, 0]
        q2 = np.where(swap[:, None], q2[:, ::-1], q2)
        q3 = np.where(swap[:, None], q3[:, ::-1], q3)
        return q2, q3, solvable, reach_sq < squares, edge

    def approach_pitch(self, q: np.ndarray) -> np.ndarray:
        """The tool's approach pitch (rad) of configurations q (N, n), by FK: the angle of
        the tool z axis from the arm plane's horizontal pointing toward the tip."""
        frames = self.model.fk_batch(np.atleast_2d(q))
        tool, tip = frames[:, :3, 2], frames[:, :3, 3]
        q1 = np.atleast_2d(q)[:, 0]
        n1 = _rotate(self.w[0], q1, self.n)
        h = _cross(np.broadcast_to(UP, n1.shape), n1)
        h /= np.linalg.norm(h, axis=1)[:, None]
        toward = _dots(h, tip - self.o[0])
        # On the plane's foot (the tip above the yaw axis) the arm's own forward decides.
        own = _dots(h, _rotate(self.w[0], q1, self.forward))
        sense = np.where(np.abs(toward) > 1e-9, toward, own)
        h *= np.where(sense < 0.0, -1.0, 1.0)[:, None]
        return np.arctan2(tool @ UP, _dots(tool, h))


# ---------------------------------------------------------------------- one target
class ScalarPlanarEngine:
    """PlanarEngine's closed form for one target in plain floats (same labels and order):
    one request makes about a hundred small operations, each dearer as a numpy call."""

    def __init__(self, engine: PlanarEngine) -> None:
        def t(v: np.ndarray) -> Vec:
            return tuple(float(x) for x in np.ravel(v))
        e = engine
        self.dof = e.dof
        self.w = tuple(t(a) for a in e.w)
        self.o = tuple(t(a) for a in e.o)
        self.n, self.w1xn, self.k1 = t(e.n), t(e.w1xn), e.k1
        self.s = t(e.signs)
        self.tip0, self.tool0 = t(e.tip0), t(e.tool0)
        self.up, self.forward, self.side = t(e.up), t(e.forward), t(e.side)
        self.link_a, self.link_b, self.tri = t(e.link_a), t(e.link_b), e.tri

    def solve(self, p: Sequence[float], phi: float, seed: Sequence[float]
              ) -> tuple[list[tuple[tuple[float, ...], bool, int]], bool]:
        """([(q, reachable, flags)] × 4 in BRANCHES order, every branch too near).

        Args:
            p: tip position, m. phi: approach pitch, rad. seed: n joints, rad.
        """
        w1, o1, n = self.w[0], self.o[0], self.n
        if self.dof == 5:
            w5, o5 = self.w[4], self.o[4]
            rel = _turn(w5, seed[4], _sub(self.tip0, o5))
            tip = (rel[0] + o5[0], rel[1] + o5[1], rel[2] + o5[2])
            tool = _turn(w5, seed[4], self.tool0)
        else:
            tip, tool = self.tip0, self.tool0
        v = _sub(p, o1)
        along = _dot(v, w1)
        a = _dot(v, n) - self.k1 * along
        b = _dot(v, self.w1xn)
        rhs = _dot(_sub(tip, o1), n) - self.k1 * along
        centre, half, solvable, _ = _cosine_one(a, b, rhs)
        on_axis = math.hypot(a, b) < SINGULAR and abs(rhs) < SINGULAR
        q1s = [centre + half, centre - half]
        vf, vg = _dot(v, self.forward), _dot(v, self.side)
        if math.cos(q1s[1]) * vf + math.sin(q1s[1]) * vg > \
                math.cos(q1s[0]) * vf + math.sin(q1s[0]) * vg:
            q1s.reverse()
        if on_axis:
            q1s = [seed[0], seed[0] + math.pi]
        ok1 = solvable or on_axis
        flag1 = SHOULDER_SINGULAR if on_axis else 0
        front_forward = _turn(w1, q1s[0], self.forward)
        sin_phi, cos_phi = math.sin(phi), math.cos(phi)
        tn = _dot(tool, n)
        nxt = _vcross(n, tool)
        offset = _sub(tip, self.o[3])
        s = self.s
        out: list = []
        near_all = True
        for q1 in q1s:
            n1 = _turn(w1, q1, n)
            norm = math.hypot(n1[0], n1[1])
            h = (-n1[1] / norm, n1[0] / norm, 0.0)
            toward = _dot(h, v)
            if (toward if abs(toward) > 1e-9 else _dot(h, front_forward)) < 0.0:
                h = (-h[0], -h[1], 0.0)
            m = _turn(w1, -q1, (sin_phi * h[0], sin_phi * h[1], -cos_phi))
            g = _turn(w1, -q1, (cos_phi * h[0], cos_phi * h[1], sin_phi))
            mn, gn = _dot(m, n), _dot(g, n)
            centre, half, _, _ = _cosine_one(_dot(tool, m) - tn * mn, _dot(nxt, m), -tn * mn)
            ga, gb = _dot(tool, g) - tn * gn, _dot(nxt, g)
            theta = centre + half
            if math.cos(centre - half) * ga + math.sin(centre - half) * gb > \
                    math.cos(theta) * ga + math.sin(theta) * gb:
                theta = centre - half
            x = _turn(w1, -q1, v)
            carried = _turn(n, theta, offset)
            wrist = (x[0] + o1[0] - carried[0], x[1] + o1[1] - carried[1],
                     x[2] + o1[2] - carried[2])
            pairs, ok3, near, flag3 = self._triangle(wrist)
            # Too near: the target inside the lateral offset, or every triangle folded.
            near_all = near_all and (near or not ok1)
            for q2, q3 in pairs:
                q4 = s[3] * (theta - s[1] * q2 - s[2] * q3)
                q = (q1, q2, q3, q4, seed[4]) if self.dof == 5 else (q1, q2, q3, q4)
                out.append((q, ok1 and ok3, flag1 | flag3))
        return out, near_all

    # The shoulder-elbow triangle is the UR/OPW engines' own (same attributes, same order).
    _triangle = ScalarEngine._triangle


def _sub(a: Sequence[float], b: Sequence[float]) -> Vec:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


# ---------------------------------------------------------------------- the solver
def flag_words(flags: int) -> str:
    """The singularities named by a solution's flag bits ('' for none)."""
    return '; '.join(words for bit, words in PLANAR_FLAG_WORDS.items() if flags & bit)


class TipOfChain:
    """``forward(*q)``: the tip position (m) at joints q (rad), by FK.

    The one piece of ``analytic.YawPitchGeometry`` that callers of ``solve_batch`` read
    (path_ik measures its batch rows with it), for this family's 4 or 5 joints.
    """

    def __init__(self, model: ArmModel) -> None:
        self.model = model

    def forward(self, *q: float) -> tuple[float, float, float]:
        tip = self.model.fk(np.array(q))[:3, 3]
        return float(tip[0]), float(tip[1]), float(tip[2])


class PlanarFamilySolver(ClosedFormBase):
    """Every closed-form solution of a yaw + three-pitch arm, labelled by analytic.BRANCHES.

    ``elbow_up`` / ``elbow_down`` face the target, ``flipped_*`` turn the base to reach over
    it; "up" is the elbow above the line from the shoulder to the wrist. Joints whose
    range spans more than a full turn give every whole-turn copy inside the limits with the
    same label. A roll joint keeps the seed's value (FULL_POSE solves it). The tip may sit
    anywhere on the last link, off the roll axis too (SO-101: 7.9 mm): with the roll held
    it is a fixed point, whose offset along the pitch axes enters the yaw.

    Goals: POSITION with ``approach_pitch`` (rad) given: closed form; TOOL_DOWN: the pitch
    -pi/2; POSITION alone: the free pitch swept (module docstring); FULL_POSE: the roll
    (and everything else) from the pose when the orientation and position agree within
    the request's tolerances, else SOLVER_NOT_APPLICABLE with how far they disagree.
    """

    name = 'analytic'
    labelled = True

    def __init__(self, model: ArmModel, workspace: Workspace, family: PlanarFamily,
                 home: Sequence[float] | None = None) -> None:
        """Prepare the engine of ``family`` (from ``recognise_planar``) for ``model``.

        Args:
            model: the arm. workspace: the tip reach pre-check.
            family: the recognised family of ``model``.
            home: default seed (rad); the zero pose clamped into the limits when None.
        """
        super().__init__(model, workspace)
        self.family = family
        self.engine = PlanarEngine(model, family)
        self.scalar = ScalarPlanarEngine(self.engine)
        self.ranges = JointRanges(model.lower, model.upper)
        self.gate = PositionGate(workspace)
        if home is None:
            home = model.clamp(np.zeros(model.dof))
        self.home = tuple(float(v) for v in home)
        self._dls: Solver | None = None
        self.geometry = TipOfChain(model)

    # ------------------------------------------------------------------ batches
    def solve_pitches(self, positions: np.ndarray, pitches: np.ndarray | float,
                      seeds: np.ndarray | Sequence[float] | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every branch of N (position, approach pitch) goals in one call, inside the limits.

        Args:
            positions: (N, 3) tip positions, m. pitches: (N,) or one approach pitch, rad.
            seeds: (N, n) or (n,) reference joints, rad; home when None.

        Returns:
            (q (N, 4, n) rad in BRANCHES order, valid (N, 4), flags (N, 4)): valid means
            reachable and inside the limits; a multi-turn joint holds the copy nearest the
            seed; invalid rows hold finite unwrapped angles.
        """
        seeds = np.asarray(self.home if seeds is None else seeds, dtype=float)
        raw, ok, flags = self.engine.solve_raw(positions, pitches, seeds)
        return (*self._wrap(raw, ok, seeds), flags)

    def _wrap(self, raw: np.ndarray, ok: np.ndarray, seeds: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
        count, branches, dof = raw.shape
        q = raw.copy()
        valid = ok.copy()
        for j in range(dof):
            q[:, :, j], inside = wrap_into_array(raw[:, :, j], self.ranges.lower[j],
                                                 self.ranges.upper[j])
            valid &= inside
        if self.ranges.multi_turn:
            reference = np.repeat(np.broadcast_to(seeds, (count, dof)), branches, axis=0)
            flat = q.reshape(-1, dof)
            for j in self.ranges.multi_turn:
                room = np.floor((self.ranges.upper[j] - flat[:, j]) / TWO_PI)
                turns = np.clip(np.round((reference[:, j] - flat[:, j]) / TWO_PI), 0.0, room)
                flat[:, j] += turns * TWO_PI
            q = flat.reshape(count, branches, dof)
        return q, valid

    def sweep(self, positions: np.ndarray, seeds: np.ndarray | Sequence[float] | None = None,
              branch: str = '') -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """POSITION goals: for each target and branch, the free pitch nearest the seed.

        A grid of SWEEP_STEPS pitches, then REFINE_ROUNDS zooms around the best point,
        minimising the largest joint move from the
        seed among solutions inside the limits.

        Args:
            positions: (N, 3) m. seeds: (N, n) or (n,) rad; home when None.
            branch: a label of BRANCHES to sweep only it, '' for all four.

        Returns:
            (q (N, B, n), valid (N, B), pitch (N, B)) with B = 4 (or 1 for a named branch).
        """
        points = np.asarray(positions, dtype=float).reshape(-1, 3)
        count = len(points)
        dof = self.model.dof
        seeds = np.broadcast_to(np.asarray(self.home if seeds is None else seeds,
                                           dtype=float), (count, dof))
        wanted = list(range(4)) if branch in NEAREST else [BRANCHES.index(branch)]
        # Chunks of targets bound the memory (~1 kB per engine row).
        per_chunk = max(1, CHUNK_ROWS // max(SWEEP_STEPS, len(wanted) * REFINE_POINTS))
        if count > per_chunk:
            parts = [self.sweep(points[i:i + per_chunk], seeds[i:i + per_chunk], branch)
                     for i in range(0, count, per_chunk)]
            return tuple(np.concatenate(arrays) for arrays in zip(*parts, strict=True))
        grid = -math.pi + TWO_PI * np.arange(SWEEP_STEPS) / SWEEP_STEPS
        steps = self._steps(np.repeat(points, SWEEP_STEPS, axis=0), np.tile(grid, count),
                            np.repeat(seeds, SWEEP_STEPS, axis=0), wanted)
        best_pitch = grid[np.argmin(steps.reshape(count, SWEEP_STEPS, len(wanted)), axis=1)]
        # Zoom: REFINE_POINTS pitches across the best one's neighbourhood, every (target,
        # branch) at once; the centre is among them, so a round never makes it worse, and
        # the kinks of the largest-joint-move measure need no derivative.
        branches = len(wanted)
        offsets = np.linspace(-1.0, 1.0, REFINE_POINTS)
        flat_points = np.repeat(points, branches * REFINE_POINTS, axis=0)
        flat_seeds = np.repeat(seeds, branches * REFINE_POINTS, axis=0)
        column = np.tile(np.repeat(np.arange(branches), REFINE_POINTS), count)
        rows = np.arange(len(column))
        pitch = best_pitch
        width = TWO_PI / SWEEP_STEPS
        for _ in range(REFINE_ROUNDS):
            candidates = pitch[:, :, None] + width * offsets           # (N, B, K)
            steps = self._steps(flat_points, candidates.reshape(-1), flat_seeds, wanted)
            costs = steps[rows, column].reshape(count, branches, REFINE_POINTS)
            pick = np.argmin(costs, axis=2)
            pitch = np.take_along_axis(candidates, pick[:, :, None], axis=2)[:, :, 0]
            width *= 2.0 / (REFINE_POINTS - 1)
        flat_points = np.repeat(points, branches, axis=0)
        flat_seeds = np.repeat(seeds, branches, axis=0)
        column = np.tile(np.arange(branches), count)
        q, valid, _ = self.solve_pitches(flat_points, pitch.reshape(-1), flat_seeds)
        pick = np.arange(len(column))
        q = q[pick, np.array(wanted)[column]].reshape(count, len(wanted), dof)
        valid = valid[pick, np.array(wanted)[column]].reshape(count, len(wanted))
        return q, valid, pitch

    def _steps(self, points: np.ndarray, pitches: np.ndarray, seeds: np.ndarray,
               wanted: Sequence[int]) -> np.ndarray:
        """Largest joint move from the seed (M, B) of the wanted branches; inf if invalid."""
        q, valid, _ = self.solve_pitches(points, pitches, seeds)
        q, valid = q[:, wanted], valid[:, wanted]
        steps = np.abs(q - seeds[:, None, :]).max(axis=2)
        steps[~valid] = np.inf
        return steps

    def solve_batch(self, targets: np.ndarray, branch: str = 'elbow_up',
                    seed: Sequence[float] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """POSITION goals in one call, as ``AnalyticSolver.solve_batch`` (path_ik uses it).

        Returns:
            (q (N, n) rad, codes (N,) ErrorCode values); rows that are not OK hold NaN.

        Raises:
            ValueError: targets not (N, 3), or an unknown branch.
        """
        if branch not in NEAREST and branch not in BRANCHES:
            raise ValueError(f'unknown branch "{branch}"; valid: nearest, '
                             + ', '.join(BRANCHES))
        points = np.asarray(targets, dtype=float)
        if points.ndim != 2 or points.shape[1] != 3:
            raise ValueError(f'targets must have shape (N, 3), got {points.shape}')
        gate = self.gate
        codes = AnalyticSolver._precheck_batch(np.nan_to_num(points), *gate.shoulder,
                                               gate.min_z, gate.max_r, gate.min_r)
        codes[~np.isfinite(points).all(axis=1)] = ErrorCode.INVALID_INPUT
        reference = np.asarray(self.home if seed is None else seed, dtype=float)
        q, valid, _ = self.sweep(np.nan_to_num(points), reference, branch)
        steps = np.abs(q - reference).max(axis=2)
        steps[~valid] = np.inf
        pick = np.argmin(steps, axis=1)
        rows = np.arange(len(points))
        chosen = q[rows, pick]
        found = np.isfinite(steps[rows, pick])
        pending = codes == ErrorCode.OK
        codes[pending & ~found] = ErrorCode.OUT_OF_REACH
        chosen[codes != ErrorCode.OK] = np.nan
        return chosen, codes

    # ------------------------------------------------------------------ one request
    def solve(self, position: object, orientation: object = None,
              goal: GoalType = GoalType.POSITION, seed: object = None,
              options: SolveOptions = _DEFAULT_OPTIONS, *,
              approach_pitch: float | None = None) -> IKResult:
        """Solve one goal; never raises.

        Args:
            position: tip position (m, base frame), 3 values.
            orientation: FULL_POSE only: quaternion (x, y, z, w) or 3×3 rotation matrix.
            goal: POSITION (with or without ``approach_pitch``), TOOL_DOWN or FULL_POSE.
            seed: reference configuration (rad; the roll is kept); home when None.
            options: ``branch`` ('' / 'nearest' or a label of BRANCHES), ``return_all``.
            approach_pitch: the tool's approach pitch (rad, see the module docstring) of a
                POSITION goal; None sweeps it.

        Returns:
            IKResult; JOINT_LIMITS names the solution nearest to the limits and how far.
        """
        start = perf_counter()
        failure = self._options_failure(start, options, BRANCHES)
        if failure is not None:
            return failure
        branch = options.branch
        rotation = None
        if goal == GoalType.FULL_POSE:
            if approach_pitch is not None:
                return self._failure(start, ErrorCode.INVALID_INPUT,
                                     'a FULL_POSE goal sets the approach pitch itself')
            if orientation is None:
                return self._failure(start, ErrorCode.INVALID_INPUT,
                                     'a FULL_POSE goal needs a target orientation')
            rotation, reason = parse_orientation(orientation)
            if rotation is None:
                return self._failure(start, ErrorCode.INVALID_INPUT, reason)
        elif goal not in (GoalType.POSITION, GoalType.TOOL_DOWN):
            return self._failure(start, ErrorCode.INVALID_INPUT, f'unknown goal type {goal!r}')
        if approach_pitch is not None:
            if goal == GoalType.TOOL_DOWN:
                return self._failure(start, ErrorCode.INVALID_INPUT,
                                     'TOOL_DOWN sets the approach pitch (-pi/2) itself; give '
                                     'approach_pitch with a POSITION goal')
            if not (isinstance(approach_pitch, (int, float)) and math.isfinite(approach_pitch)):
                return self._failure(start, ErrorCode.INVALID_INPUT,
                                     f'approach_pitch must be a finite angle, got '
                                     f'{approach_pitch!r}')
        target, failure = self._target(start, position)
        if failure is not None:
            return failure
        dof = self.model.dof
        reference, failure = self._reference(start, seed, dof)
        if failure is not None:
            return failure
        pitch = -0.5 * math.pi if goal == GoalType.TOOL_DOWN else approach_pitch
        if rotation is not None:
            raw, ok, flags, miss, tilt = self.engine.solve_pose(
                target, np.array(rotation).reshape(3, 3), reference,
                options.orientation_tolerance)
            reachable = (miss <= options.tolerance) & (tilt <= options.orientation_tolerance)
            if not reachable.any():
                return self._failure(start, ErrorCode.SOLVER_NOT_APPLICABLE,
                                     self._pose_unreachable(miss, tilt, options))
            ok = ok & reachable
            if not ok.any():
                return self._failure(start, ErrorCode.OUT_OF_REACH,
                                     'the target is out of reach with this orientation')
            pitches = np.full(4, math.nan)
            flags = flags.tolist()
        elif pitch is None:
            q, valid, pitches = self.sweep(np.array([target]), np.array(reference))
            raw, ok = q[0], valid[0]
            pitches = pitches[0]
            flags = np.zeros(4, int)
            near = np.zeros(4, bool)
        else:
            rows, near_all = self.scalar.solve(target, pitch, reference)
            raw = np.array([q for q, _, _ in rows])
            ok = np.array([good for _, good, _ in rows])
            flags = [flag for _, _, flag in rows]
            near = np.full(4, near_all)
            pitches = np.full(4, pitch)
        found, outside = [], []
        names = self.model.joint_names
        lower, upper = self.ranges.lower, self.ranges.upper
        for label, q, good, flag, at in zip(BRANCHES, raw.tolist(), ok, flags, pitches,
                                            strict=True):
            if not good:
                continue
            choices = [_turns(angle, lower[j], upper[j]) for j, angle in enumerate(q)]
            if all(choices):
                found.append((label, choices, int(flag), float(at)))
                continue
            worst, joint = max((_past_limits(angle, lower[j], upper[j]), j)
                               for j, angle in enumerate(q))
            outside.append((label, worst, f'{names[joint]} would need '
                            f'{math.degrees(math.remainder(q[joint], TWO_PI)):.1f}°, '
                            f'{math.degrees(worst):.1f}° outside its limits '
                            f'[{math.degrees(lower[joint]):.1f}°, '
                            f'{math.degrees(upper[joint]):.1f}°]'))
        if not ok.any():
            if pitch is None:
                # The sweep keeps only solutions inside the limits.
                failure = self._failure(start, ErrorCode.JOINT_LIMITS if self._reachable(
                    target, reference) else ErrorCode.OUT_OF_REACH, self._sweep_failure(
                    target, reference))
                return self._position_by_dls(start, target, reference, options, failure)
            if near.all():
                return self._failure(start, ErrorCode.INSIDE_INNER_HOLE,
                                     self._too_near(target, reference, pitch))
            return self._failure(start, ErrorCode.OUT_OF_REACH, (
                f'the target is out of reach at the approach pitch {math.degrees(pitch):.1f}°'))
        return self._choose(start, target, goal, reference, found, outside, branch,
                            options.return_all, rotation)

    def _position_by_dls(self, start: float, target: Sequence[float],
                         reference: Sequence[float], options: SolveOptions,
                         failure: IKResult) -> IKResult:
        """A position no pitch reaches with the seed's roll: DLS from the seed, roll free.

        The tip off the roll axis (SO-101: 7.9 mm) moves with the roll, so a target the
        held roll misses may be reached by turning it, as the families fall back for a
        position the seed's orientation misses. Without a roll the sweep has said it all.
        """
        if self.model.dof != 5:
            return failure
        if self._dls is None:
            from arm_kinematics.ik.solvers.dls import DLSSolver
            self._dls = DLSSolver(self.model, self.workspace)
        result = self._dls.solve(target, None, GoalType.POSITION, reference, options)
        if not result.success:
            return failure
        result.reason = (f"{failure.reason} (the seed's roll); damped least squares from the "
                         f'seed, roll free: {result.reason}')
        result.solve_time = perf_counter() - start
        return result

    def _pose_unreachable(self, miss: np.ndarray, tilt: np.ndarray,
                          options: SolveOptions) -> str:
        """Why no solution of a full pose exists: the orientation and position disagree."""
        use = ('a yaw + three-pitch arm reaches a full pose only where its orientation and '
               'position agree: use TOOL_DOWN, or POSITION with an approach pitch')
        lean = float(tilt.min())
        if lean > options.orientation_tolerance:
            return (f'the orientation leans the pitch axis {lean:.3g} rad from any the yaw '
                    f'reaches (tolerance {options.orientation_tolerance:g} rad); {use}')
        return (f'the orientation puts the arm plane {float(miss.min()):.3g} m from the '
                f'target (tolerance {options.tolerance:g} m); {use}')

    def _too_near(self, target: Sequence[float], reference: Sequence[float],
                  pitch: float) -> str:
        """Why a target is too near: inside the arm plane's lateral offset, or folded."""
        e = self.engine
        tip, _ = e.tip_and_tool(np.array(reference[4:5]) if e.dof == 5 else None, 1)
        lateral = abs(float((tip[0] - e.o[0]) @ e.n))
        v = np.asarray(target) - e.o[0]
        across = float(np.linalg.norm(v - np.dot(v, e.w[0]) * e.w[0]))
        if across < lateral:
            return (f'the target is {across:.4f} m from the yaw axis, nearer than the arm '
                    f"plane's lateral offset of {lateral:.4f} m")
        return (f'the target is too near the shoulder for the approach pitch '
                f'{math.degrees(pitch):.1f}°')

    def _reachable(self, target: Sequence[float], reference: Sequence[float]) -> bool:
        """True when some pitch on the sweep grid reaches ``target`` ignoring the limits."""
        grid = -math.pi + TWO_PI * np.arange(SWEEP_STEPS) / SWEEP_STEPS
        _, ok, _ = self.engine.solve_raw(np.repeat([target], SWEEP_STEPS, axis=0), grid,
                                         np.array(reference))
        return bool(ok.any())

    def _sweep_failure(self, target: Sequence[float], reference: Sequence[float]) -> str:
        if not self._reachable(target, reference):
            return (f'no approach pitch on a {360.0 / SWEEP_STEPS:g}° grid reaches the target '
                    'with this roll')
        return (f'every approach pitch on a {360.0 / SWEEP_STEPS:g}° grid reaches the target '
                'only past a joint limit')

    def _choose(self, start: float, target: Sequence[float], goal: int,
                reference: Sequence[float], found: list, outside: list, branch: str,
                return_all: bool, rotation: Sequence[float] | None = None) -> IKResult:
        nearest = branch in NEAREST
        best, best_step = None, math.inf
        for label, choices, flags, _ in found:
            if nearest or label == branch:
                q = tuple(min(copies, key=lambda a, r=r: abs(a - r))
                          for copies, r in zip(choices, reference, strict=True))
                step = max(abs(a - r) for a, r in zip(q, reference, strict=True))
                if step < best_step:
                    best, best_step = (label, q, flags), step
        if best is None:
            return self._none_within_limits(start, branch, outside)
        label, q, flags = best
        reason = f'solved in closed form ({FAMILY_NAME} family)'
        if flags:
            reason += f'; {flag_words(flags)}'
        solutions = []
        if return_all:
            for name, choices, _, _ in found:
                solutions += [Solution(name, np.array(copy))
                              for copy in itertools.product(*choices)]
        return solved(self.model, start, target, goal, rotation, label, q, best_step, reason,
                      solutions)


class PlanarAnalyticSolver(Solver):
    """The ``analytic`` solver: yaw + two pitch (``AnalyticSolver``, unchanged) or yaw +
    three pitch with an optional roll (``PlanarFamilySolver``), by recognition.

    Attributes of the solver it dispatches to are reachable on this one (``solve_batch``,
    ``geometry``, ``family``...).
    """

    name = 'analytic'
    labelled = True

    def __init__(self, model: ArmModel, workspace: Workspace,
                 home: Sequence[float] | None = None) -> None:
        super().__init__(model, workspace)
        self._not_applicable = self.applicability(model)
        if not AnalyticSolver.applicability(model) or model.dof == 3:
            self._delegate: Solver = AnalyticSolver(model, workspace, home)
        elif not self._not_applicable:
            self._delegate = PlanarFamilySolver(model, workspace, planar_family(model), home)
        else:
            self._delegate = AnalyticSolver(model, workspace, home)

    @classmethod
    def applicability(cls, model: ArmModel) -> str:
        """'' for yaw + two pitch or yaw + three pitch (+ roll), else why neither."""
        two = AnalyticSolver.applicability(model)
        if not two or model.dof == 3:
            return two
        family = planar_family(model)
        if isinstance(family, PlanarFamily):
            return ''
        return f'not yaw + two pitch ({two}); not yaw + three pitch: {family}'

    @classmethod
    def family_description(cls, model: ArmModel) -> str:
        """The recognised family in words ('' for yaw + two pitch and for none)."""
        if model.dof == 3:
            return ''
        family = planar_family(model)
        return family.describe() if isinstance(family, PlanarFamily) else ''

    def __getattr__(self, name: str) -> object:
        delegate = self.__dict__.get('_delegate')
        if delegate is None:
            raise AttributeError(name)
        return getattr(delegate, name)

    def solve(self, position: object, orientation: object = None,
              goal: GoalType = GoalType.POSITION, seed: object = None,
              options: SolveOptions = _DEFAULT_OPTIONS, *,
              approach_pitch: float | None = None) -> IKResult:
        """As the recognised family's solver (``approach_pitch``: the three-pitch family)."""
        if self._not_applicable:
            return IKResult(ErrorCode.SOLVER_NOT_APPLICABLE, self._not_applicable)
        if isinstance(self._delegate, PlanarFamilySolver):
            return self._delegate.solve(position, orientation, goal, seed, options,
                                        approach_pitch=approach_pitch)
        if approach_pitch is not None:
            return IKResult(ErrorCode.SOLVER_NOT_APPLICABLE,
                            'approach_pitch needs a yaw + three-pitch arm; '
                            f'{self.model.name or "this arm"} has {self.model.dof} joints')
        return self._delegate.solve(position, orientation, goal, seed, options)


_FAMILIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def planar_family(model: ArmModel) -> PlanarFamily | str:
    """``recognise_planar`` cached per model (it runs the FK check)."""
    cached = _FAMILIES.get(model)
    if cached is None:
        cached = _FAMILIES[model] = recognise_planar(model)
    return cached
