"""The UR family: UR3/5/10 and the e-Series, recognised from the URDF, solved in closed form.

Recognised (``recognise``) when axes 2, 3 and 4 are parallel and perpendicular to axis 1,
axis 5 perpendicular to axis 4, and axis 6 perpendicular to axis 5 and crossing it, within
LINE_TOLERANCE / ANGLE_TOLERANCE, then checked against FK on random configurations. Up to 8
solutions: two yaws put the point where axes 5 and 6 cross at its distance d4 from the
plane of the parallel axes; for each, two wrist bends (q5) turn axis 6 onto the goal's;
q6 follows; the summed pitch θ = q2 + q3 + q4 follows from the orientation; the triangle of
axes 2 and 3 gives two elbows. The DH lengths are extracted for reports and the peers, not
used: the solution works on the world axes at q = 0 (``six_joint``). Units: m, rad.
"""

from __future__ import annotations

import math

import numpy as np

from arm_kinematics.ik.closed_form.common import (
    LINE_TOLERANCE,
    SINGULAR,
    WRIST_SINGULAR,
)
from arm_kinematics.ik.closed_form.family import Family
from arm_kinematics.ik.closed_form.geometry import (
    angle_between,
    cross,
    foot,
    line_gap,
    meeting_point,
    rotate,
    unit,
)
from arm_kinematics.ik.closed_form.six_joint import (
    check_against_fk,
    FamilyEngine,
    frame_and_rules,
    ScalarEngine,
)
from arm_kinematics.model.arm_model import ArmModel

FAMILY_NAME = 'ur'


def recognise_ur(model: ArmModel) -> Family | str:
    """The UR family of ``model`` with its DH lengths, or why it is not one."""
    return frame_and_rules(model, ((1, 2), (1, 3)), ((0, 1), (3, 4), (4, 5)), _ur_from_axes)


def _ur_from_axes(o: np.ndarray, w: np.ndarray, zero: np.ndarray, drifts: list[float]
                   ) -> Family | str:
    """The rest of ``recognise_ur`` once the axes keep the family's angle rules."""
    gap = line_gap(o[4], w[4], o[5], w[5])
    drifts.append(gap)
    if gap > LINE_TOLERANCE:
        return f'axes 5 and 6 do not cross (gap {gap:.3g} m, tolerance {LINE_TOLERANCE:g} m)'
    n = w[1]
    a2 = line_gap(o[1], n, o[2], n)
    a3 = line_gap(o[2], n, o[3], n)
    if min(a2, a3) < LINE_TOLERANCE:
        return f'axes 2, 3 and 4 are not spread apart (a2 {a2:.3g} m, a3 {a3:.3g} m)'
    point, _ = meeting_point([o[4], o[5]], [w[4], w[5]])
    d1 = float(np.dot(foot(o[1], o[0], w[0]) - foot(np.zeros(3), o[0], w[0]), w[0]))
    parameters = {
        'd1': abs(d1), 'a2': a2, 'a3': a3,
        'd4': abs(float(np.dot(point - o[0], n))),
        'd5': line_gap(o[3], w[3], point, w[3]),
        'd6': abs(float(np.dot(zero[:3, 3] - point, w[5]))),
    }
    return Family('ur', parameters, o, w, zero, point, max(drifts), UREngine)


def recognise(model: ArmModel) -> Family | str:
    """The UR family of ``model`` checked against FK, or why it is not one."""
    family = recognise_ur(model)
    if isinstance(family, str):
        return family
    return check_against_fk(model, family) or family


class ScalarUREngine(ScalarEngine):
    """The UR closed form of one pose, compiled (``family_kernel.family_solve``)."""

    ur = True

    def _family_constants(self, engine: UREngine) -> None:
        t = _floats
        self.lever, self.n_perp = t(engine.lever), t(engine.n_perp)
        self.n_x_perp = t(np.cross(engine.n, engine.n_perp))
        # n, n_perp and the lever turned about axis 5 in every branch: their parts along
        # it, across it and w5 × v, so a turn is three products and no trig call of its own.
        w5 = engine.w[4]
        self._about5 = tuple(
            t(np.concatenate([np.dot(w5, v) * w5, v - np.dot(w5, v) * w5, np.cross(w5, v)]))
            for v in (engine.n, engine.n_perp, engine.lever))


class UREngine(FamilyEngine):
    """The vectorised UR closed form: 8 raw solutions per pose, BRANCHES order."""

    point_words = 'where axes 5 and 6 cross'
    scalar = ScalarUREngine

    def __init__(self, model: ArmModel, family: Family) -> None:
        super().__init__(model, family)
        self.lever = family.point - self.carried
        n = self.n
        self.n_perp = unit(np.cross(n, [1.0, 0.0, 0.0]) if abs(n[0]) < 0.9
                           else np.cross(n, [0.0, 1.0, 0.0]))

    def _carried_point(self) -> np.ndarray:
        # The point carried by axes 2 and 3: the solved point's foot on axis 4.
        return foot(self.family.point, self.o[3], self.w[3])

    def _bend_axis(self) -> np.ndarray:
        # n is fixed by the three parallel joints: the bend turns axis 6 away from it.
        return self.n

    def _solve(self, point: np.ndarray, rotations_goal: np.ndarray, seeds: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        w, n = self.w, self.n
        count = len(point)
        q1, ok1, flag1 = self._yaw(point, seeds[:, 0])
        # Rows (pose, shoulder): M = 2N.
        q1 = q1.reshape(-1)
        rot = np.repeat(rotations_goal, 2, axis=0)
        pts = np.repeat(point, 2, axis=0)
        seed = np.repeat(seeds, 2, axis=0)
        n1 = rotate(w[0], q1, n)
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
        target = rotate(w[4], -q5, n)
        q6, across = angle_between(w[5], m, target)
        flip = np.tile([0.0, math.pi], 2 * count)
        free = wrist_singular | (across < SINGULAR)
        q6 = np.where(free, seed[:, 5] + flip, q6)
        # R234 = R1ᵀ·R·R0ᵀ·R6ᵀ·R5ᵀ, a turn θ about n, applied to n_perp and the lever only:
        # turns of two vectors cost less than products of (4N, 3, 3) stacks.
        both = np.concatenate([rotate(w[4], -q5, self.n_perp), rotate(w[4], -q5, self.lever)])
        both = rotate(w[5], -np.tile(q6, 2), both)
        goal = (rotations_goal @ self.r0.T).repeat(4, axis=0)          # R·R0ᵀ per row
        both = rotate(w[0], -np.tile(q1, 2),
                      np.einsum('nij,nj->ni', np.concatenate([goal, goal]), both))
        u, lever = both[:len(q1)], both[len(q1):]
        theta = np.arctan2(cross(self.n_perp, u) @ n, u @ self.n_perp)
        x = self._undo_yaw(q1, pts) - lever
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


def _floats(v: np.ndarray) -> tuple[float, ...]:
    return tuple(float(x) for x in np.ravel(v))
