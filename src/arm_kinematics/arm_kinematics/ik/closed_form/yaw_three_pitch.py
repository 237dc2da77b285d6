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
import math

import numpy as np

from arm_kinematics.ik.closed_form.common import (
    ANGLE_TOLERANCE,
    fk_check,
    LINE_TOLERANCE,
    ROLL_ALONG_YAW,
    SHOULDER_SINGULAR,
    SINGULAR,
    STRETCHED,
)
from arm_kinematics.ik.closed_form.geometry import (
    angle_between,
    cosine_equation,
    cosine_one,
    cross,
    dot,
    dots,
    parallel,
    perpendicular,
    PitchTriangle,
    rotate,
    rotations,
    sub,
    turn,
    unit,
    UP,
    vcross,
    Vec,
)
from arm_kinematics.model.arm_model import ArmModel

FAMILY_NAME = 'yaw_three_pitch'
# Shape conditions the closed form takes exactly (see the module docstring), rad.
SHAPE_TOLERANCE = 1e-3


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
    w = np.array([unit(a) for a in axes])
    zero = model.fk(np.zeros(model.dof))
    tilt = parallel(w[0], UP)
    if tilt > SHAPE_TOLERANCE:
        return (f'axis 1 is {tilt:.3g} rad from vertical (no base yaw; tolerance '
                f'{SHAPE_TOLERANCE:g})')
    drifts = []
    for i in (2, 3):
        drifts.append(parallel(w[1], w[i]))
        if drifts[-1] > ANGLE_TOLERANCE:
            return (f'axes 2 and {i + 1} are not parallel ({drifts[-1]:.3g} rad, tolerance '
                    f'{ANGLE_TOLERANCE:g})')
    off = perpendicular(w[0], w[1])
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
        off = perpendicular(w[4], n)
        if off > SHAPE_TOLERANCE:
            return (f'axis 5 is not a roll in the arm plane ({off:.3g} rad from '
                    f'perpendicular to the pitch axes, tolerance {SHAPE_TOLERANCE:g})')
        along = parallel(tool, w[4])
        if along > SHAPE_TOLERANCE:
            return (f'the tool z axis is {along:.3g} rad off the roll axis (its approach '
                    f'pitch would change with the roll; tolerance {SHAPE_TOLERANCE:g})')
        rel = tip - o[4]
        tip_off_roll = float(np.linalg.norm(rel - np.dot(rel, w[4]) * w[4]))
    else:
        off = perpendicular(tool, n)
        if off > SHAPE_TOLERANCE:
            return (f'the tool z axis is {off:.3g} rad out of the arm plane (no approach '
                    f'pitch; tolerance {SHAPE_TOLERANCE:g})')
        tip_off_roll = 0.0
    forward = unit(np.cross(n, w[0]))
    if np.dot(tip - o[0], forward) < 0.0:
        forward = -forward
    horizontal = unit(forward - np.dot(forward, UP) * UP)

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
    pitches = {}

    def solve(q: np.ndarray, frames: np.ndarray) -> tuple:
        pitches['goal'] = engine.approach_pitch(q)
        return engine.solve_raw(frames[:, :3, 3], pitches['goal'], q)

    def miss(good: np.ndarray, frame: np.ndarray, index: int) -> float:
        reached = model.fk_batch(good)
        return max(float(np.abs(reached[:, :3, 3] - frame[:3, 3]).max()),
                   float(np.abs(engine.approach_pitch(good) - pitches['goal'][index]).max()))

    return fk_check(model, solve, miss, 'yaw + three-pitch', f'{ANGLE_TOLERANCE:g} rad',
                    f'pitch axes {family.drift:.3g} rad from parallel,')


# ---------------------------------------------------------------------- the engine
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
        self.forward = unit(forward - np.dot(forward, w[0]) * w[0])
        self.side = np.cross(w[0], self.forward)
        # The shoulder-elbow triangle: axis 2 → axis 3 → the wrist point on axis 4.
        self.triangle = PitchTriangle(n, o[1], o[2], w[1], w[2], o[3], self.up)

    def tip_and_tool(self, roll: np.ndarray | None, count: int
                     ) -> tuple[np.ndarray, np.ndarray]:
        """Tip point and tool axis (count, 3) at pitches and yaw 0 and the given roll."""
        if self.dof == 4 or roll is None:
            return (np.broadcast_to(self.tip0, (count, 3)),
                    np.broadcast_to(self.tool0, (count, 3)))
        w5, o5 = self.w[4], self.o[4]
        return (rotate(w5, roll, self.tip0 - o5) + o5, rotate(w5, roll, self.tool0))

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
        centre, half, solvable, _ = cosine_equation(a, b, rhs)
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
        front_forward = rotate(w1, q1[:, 0], self.forward)
        # Rows (target, front/back): M = 2N.
        q1 = q1.reshape(-1)
        n1 = rotate(w1, q1, n)
        h = cross(np.broadcast_to(UP, n1.shape), n1)
        h /= np.maximum(np.linalg.norm(h, axis=1), 1e-300)[:, None]
        vv = np.repeat(v, 2, axis=0)
        toward = dots(h, vv)
        ff = np.repeat(front_forward, 2, axis=0)
        sense = np.where(np.abs(toward) > 1e-9, toward, dots(h, ff))
        h *= np.where(sense < 0.0, -1.0, 1.0)[:, None]
        phi2 = np.repeat(phi, 2)
        m = np.sin(phi2)[:, None] * h - np.cos(phi2)[:, None] * UP
        g = np.cos(phi2)[:, None] * h + np.sin(phi2)[:, None] * UP
        m = rotate(w1, -q1, m)                  # into the yaw-undone frame
        g = rotate(w1, -q1, g)
        t0 = np.repeat(tool, 2, axis=0)
        tn = t0 @ n
        nxt = cross(np.broadcast_to(n, t0.shape), t0)
        # θ, the total pitch about n: the turned tool axis across m, and along g's side.
        big_a = dots(t0, m) - tn * (m @ n)
        big_b = dots(nxt, m)
        centre, half, _, _ = cosine_equation(big_a, big_b, -tn * (m @ n))
        theta = np.stack([centre + half, centre - half], axis=1)
        ga = dots(t0, g) - tn * (g @ n)
        gb = dots(nxt, g)
        score = np.cos(theta) * ga[:, None] + np.sin(theta) * gb[:, None]
        theta = np.where(score[:, 0] >= score[:, 1], theta[:, 0], theta[:, 1])
        # The wrist point (on axis 4) carried by axes 2 and 3, in the yaw-undone frame.
        x = rotate(w1, -q1, vv) + o1
        wrist = x - rotate(n, theta, np.repeat(tip, 2, axis=0) - self.o[3])
        q2, q3, ok3, near3, edge = self.triangle.solve(wrist)
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
                centre, half, _, _ = cosine_equation(a, b, np.array(rhs))
                q1 = np.array([centre + half, centre - half]).reshape(2)
        else:
            target_axis = m @ n
            q1_one, _ = angle_between(w1, n[None], target_axis[None])
            q1 = np.array([q1_one[0], q1_one[0] + math.pi])
            tilt[0] = abs(math.asin(max(-1.0, min(1.0, float(target_axis @ w1)))) -
                          math.asin(max(-1.0, min(1.0, float(n @ w1)))))
            # Half a turn more reverses the pitch axis: never this orientation.
            tilt[1] = math.pi
        vf, vg = float(v @ self.forward), float(v @ self.side)
        if math.cos(q1[1]) * vf + math.sin(q1[1]) * vg > math.cos(q1[0]) * vf + \
                math.sin(q1[0]) * vg:
            q1, flags, tilt = q1[::-1].copy(), flags[::-1].copy(), tilt[::-1].copy()
        n1 = rotate(w1, q1, n)
        miss = np.abs(n1 @ v - lateral)
        undone = rotations(w1, -q1) @ m                     # Rn·R5 (or Rn)
        if self.dof == 5:
            axis = np.einsum('kij,j->ki', rotations(w1, -q1), m @ self.w[4])
            theta, _ = angle_between(n, np.broadcast_to(self.w[4], (2, 3)), axis)
            r5 = rotations(n, -theta) @ undone
            perp = np.cross(self.w[4], n)
            perp /= np.linalg.norm(perp)
            u = r5 @ perp
            roll = np.arctan2(cross(np.broadcast_to(perp, u.shape), u) @ self.w[4], u @ perp)
        else:
            perp = np.cross(n, w1)
            perp /= np.linalg.norm(perp)
            u = undone @ perp
            theta = np.arctan2(cross(np.broadcast_to(perp, u.shape), u) @ n, u @ perp)
        x = rotate(w1, -q1, np.broadcast_to(v, (2, 3))) + o1
        wrist = x - rotate(n, theta, np.broadcast_to(carried - self.o[3], (2, 3)))
        q2, q3, ok3, _, edge = self.triangle.solve(wrist)
        s = self.signs
        q4 = s[3] * (theta[:, None] - s[1] * q2 - s[2] * q3)
        columns = [np.repeat(q1, 2), q2.reshape(-1), q3.reshape(-1), q4.reshape(-1)]
        if self.dof == 5:
            columns.append(np.repeat(roll, 2))
        q = np.nan_to_num(np.stack(columns, axis=1))
        out_flags = np.repeat(flags, 2) | np.repeat(np.where(edge, STRETCHED, 0), 2)
        return q, np.repeat(ok3, 2), out_flags, np.repeat(miss, 2), np.repeat(tilt, 2)

    def approach_pitch(self, q: np.ndarray) -> np.ndarray:
        """The tool's approach pitch (rad) of configurations q (N, n), by FK: the angle of
        the tool z axis from the arm plane's horizontal pointing toward the tip."""
        frames = self.model.fk_batch(np.atleast_2d(q))
        tool, tip = frames[:, :3, 2], frames[:, :3, 3]
        q1 = np.atleast_2d(q)[:, 0]
        n1 = rotate(self.w[0], q1, self.n)
        h = cross(np.broadcast_to(UP, n1.shape), n1)
        h /= np.linalg.norm(h, axis=1)[:, None]
        toward = dots(h, tip - self.o[0])
        # On the plane's foot (the tip above the yaw axis) the arm's own forward decides.
        own = dots(h, rotate(self.w[0], q1, self.forward))
        sense = np.where(np.abs(toward) > 1e-9, toward, own)
        h *= np.where(sense < 0.0, -1.0, 1.0)[:, None]
        return np.arctan2(tool @ UP, dots(tool, h))


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
        self.triangle = e.triangle

    def solve(self, p: Sequence[float], phi: float, seed: Sequence[float]
              ) -> tuple[list[tuple[tuple[float, ...], bool, int]], bool]:
        """([(q, reachable, flags)] × 4 in BRANCHES order, every branch too near).

        Args:
            p: tip position, m. phi: approach pitch, rad. seed: n joints, rad.
        """
        w1, o1, n = self.w[0], self.o[0], self.n
        if self.dof == 5:
            w5, o5 = self.w[4], self.o[4]
            rel = turn(w5, seed[4], sub(self.tip0, o5))
            tip = (rel[0] + o5[0], rel[1] + o5[1], rel[2] + o5[2])
            tool = turn(w5, seed[4], self.tool0)
        else:
            tip, tool = self.tip0, self.tool0
        v = sub(p, o1)
        along = dot(v, w1)
        a = dot(v, n) - self.k1 * along
        b = dot(v, self.w1xn)
        rhs = dot(sub(tip, o1), n) - self.k1 * along
        centre, half, solvable, _ = cosine_one(a, b, rhs)
        on_axis = math.hypot(a, b) < SINGULAR and abs(rhs) < SINGULAR
        q1s = [centre + half, centre - half]
        vf, vg = dot(v, self.forward), dot(v, self.side)
        if math.cos(q1s[1]) * vf + math.sin(q1s[1]) * vg > \
                math.cos(q1s[0]) * vf + math.sin(q1s[0]) * vg:
            q1s.reverse()
        if on_axis:
            q1s = [seed[0], seed[0] + math.pi]
        ok1 = solvable or on_axis
        flag1 = SHOULDER_SINGULAR if on_axis else 0
        front_forward = turn(w1, q1s[0], self.forward)
        sin_phi, cos_phi = math.sin(phi), math.cos(phi)
        tn = dot(tool, n)
        nxt = vcross(n, tool)
        offset = sub(tip, self.o[3])
        s = self.s
        out: list = []
        near_all = True
        for q1 in q1s:
            n1 = turn(w1, q1, n)
            norm = math.hypot(n1[0], n1[1])
            h = (-n1[1] / norm, n1[0] / norm, 0.0)
            toward = dot(h, v)
            if (toward if abs(toward) > 1e-9 else dot(h, front_forward)) < 0.0:
                h = (-h[0], -h[1], 0.0)
            m = turn(w1, -q1, (sin_phi * h[0], sin_phi * h[1], -cos_phi))
            g = turn(w1, -q1, (cos_phi * h[0], cos_phi * h[1], sin_phi))
            mn, gn = dot(m, n), dot(g, n)
            centre, half, _, _ = cosine_one(dot(tool, m) - tn * mn, dot(nxt, m), -tn * mn)
            ga, gb = dot(tool, g) - tn * gn, dot(nxt, g)
            theta = centre + half
            if math.cos(centre - half) * ga + math.sin(centre - half) * gb > \
                    math.cos(theta) * ga + math.sin(theta) * gb:
                theta = centre - half
            x = turn(w1, -q1, v)
            carried = turn(n, theta, offset)
            wrist = (x[0] + o1[0] - carried[0], x[1] + o1[1] - carried[1],
                     x[2] + o1[2] - carried[2])
            pairs, ok3, near, edge = self.triangle.solve_one(wrist)
            flag3 = STRETCHED if edge else 0
            # Too near: the target inside the lateral offset, or every triangle folded.
            near_all = near_all and (near or not ok1)
            for q2, q3 in pairs:
                q4 = s[3] * (theta - s[1] * q2 - s[2] * q3)
                q = (q1, q2, q3, q4, seed[4]) if self.dof == 5 else (q1, q2, q3, q4)
                out.append((q, ok1 and ok3, flag1 | flag3))
        return out, near_all
