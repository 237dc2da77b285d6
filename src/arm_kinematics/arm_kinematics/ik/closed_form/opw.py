"""The OPW family: industrial six-axis arms with an ortho-parallel base and a spherical wrist.

Recognised (``recognise``) when axis 1 is perpendicular to the parallel axes 2 and 3
(offsets a1, a2, b allowed) and the last three axes meet in one point (Brandstötter,
Angerer, Hofbaur 2014, "An analytical solution of the inverse kinematics problem of
industrial serial manipulators with an ortho-parallel basis and a spherical wrist"), then
checked against FK on random configurations. Up to 8 solutions: two yaws and two elbows
place the wrist centre, two wrist bends the orientation. The OPW parameters (a1, a2, b,
c1..c4, offsets, signs, base and tool transforms) are extracted for reports and the peers
(py-opw-kinematics); the solution works on the world axes at q = 0 (``six_joint``).
Units: metres and radians.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
import math

import numpy as np

from arm_kinematics.ik.closed_form import family, geometry, six_joint
from arm_kinematics.ik.closed_form.common import (
    CHECK_CONFIGURATIONS,
    LINE_TOLERANCE,
    SINGULAR,
    SIX_JOINT_CHECK_TOLERANCE,
    TWO_PI,
    WRIST_SINGULAR,
)
from arm_kinematics.ik.closed_form.geometry import (
    angle_between,
    cross,
    rotate,
)
from arm_kinematics.model.arm_model import ArmModel

# Family.name of the arms recognised here (reports, dispatch.FAMILIES).
FAMILY_NAME = 'opw'


def recognise_opw(model: ArmModel) -> family.Family | str:
    """The OPW family of ``model`` with its seven lengths, offsets and signs, or why not."""
    return six_joint.frame_and_rules(model, ((1, 2),), ((0, 1), (1, 3), (3, 4), (4, 5)),
                                     partial(_opw_from_axes, model))


def _opw_from_axes(model: ArmModel, o: np.ndarray, w: np.ndarray, zero: np.ndarray,
                   drifts: list[float]) -> family.Family | str:
    """The rest of ``recognise_opw`` once the axes keep the family's angle rules."""
    centre, gap = geometry.meeting_point(o[3:], w[3:])
    drifts.append(gap)
    if gap > LINE_TOLERANCE:
        return (f'the last three axes do not meet in one point (gap {gap:.3g} m, tolerance '
                f'{LINE_TOLERANCE:g} m): no spherical wrist')
    # Axes 2 and 3 are parallel within ANGLE_TOLERANCE: their distance is measured across
    # axis 2 (two lines a hair from parallel in one plane meet far away, gap 0).
    if geometry.line_gap(o[1], w[1], o[2], w[1]) < LINE_TOLERANCE:
        return 'axes 2 and 3 coincide (no upper arm)'
    parameters = _opw_parameters(model, o, w, zero, centre)
    if isinstance(parameters, str):
        return parameters
    return family.Family('opw', parameters, o, w, zero, centre, max(drifts), OPWEngine)


def _opw_parameters(model: ArmModel, o: np.ndarray, w: np.ndarray, zero: np.ndarray,
                    centre: np.ndarray) -> dict | str:
    """OPW's a1, a2, b, c1..c4, offsets, signs and base/tool transforms (see Family).

    The OPW base frame B has z on axis 1 (along the URDF base z when they agree), y along
    axis 2 and x toward the wrist centre; joint angles map as θ = sign·q + offset.
    """
    up = np.array([0.0, 0.0, 1.0])
    z = w[0] if float(np.dot(w[0], up)) >= 0.0 else -w[0]
    origin = geometry.foot(np.zeros(3), o[0], z)
    # y is axis 2 itself (not the normal of the plane through axis 1 and the wrist
    # centre): the centre's offset along it is OPW's b, which that plane would make 0.
    # Its sign puts the wrist centre on +x at q = 0.
    y = geometry.unit(w[1] - np.dot(w[1], z) * z)
    x = np.cross(y, z)
    if float(np.dot(centre - origin, x)) < 0.0:
        y, x = -y, -x
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
        if miss > SIX_JOINT_CHECK_TOLERANCE:
            return (f'the OPW parameters extracted from the URDF miss FK by {miss:.3g} '
                    f'(the check needs {SIX_JOINT_CHECK_TOLERANCE:g})')
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


def recognise(model: ArmModel) -> family.Family | str:
    """The OPW family of ``model`` checked against FK, or why it is not one."""
    family = recognise_opw(model)
    if isinstance(family, str):
        return family
    return six_joint.check_against_fk(model, family) or family


class ScalarOPWEngine(six_joint.ScalarEngine):
    """The OPW closed form of one pose, compiled (``family_kernel.family_solve``)."""


class OPWEngine(six_joint.FamilyEngine):
    """The vectorised OPW closed form: 8 raw solutions per pose, BRANCHES order."""

    point_words = 'the wrist centre'
    scalar = ScalarOPWEngine

    def _solve(self, centre: np.ndarray, rotations_goal: np.ndarray, seeds: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        w = self.w
        count = len(centre)
        q1, ok1, flag1 = self._yaw(centre, seeds[:, 0])
        q1 = q1.reshape(-1)                                     # rows (pose, shoulder)
        x = self._undo_yaw(q1, np.repeat(centre, 2, axis=0))
        q2, q3, ok3, near, flag3 = self._triangle(x)
        q1 = np.repeat(q1, 2)                                   # rows (pose, sh., elbow)
        q2, q3 = q2.reshape(-1), q3.reshape(-1)
        seed = np.repeat(seeds, 4, axis=0)
        # R456 = R3ᵀ·R2ᵀ·R1ᵀ·R·R0ᵀ applied to axis 6 and a vector across it only (axes 2 and
        # 3 are parallel: R2·R3 is one turn about n): turns of two vectors cost less than
        # products of (4N, 3, 3) stacks.
        goal = rotations_goal @ self.r0.T                          # R·R0ᵀ per pose
        both = np.concatenate([goal @ w[5], goal @ self.w6_perp]).reshape(2, count, 3)
        both = both.repeat(4, axis=1).reshape(-1, 3)
        pitch = self.signs[1] * q2 + self.signs[2] * q3
        both = rotate(self.n, -np.tile(pitch, 2), rotate(w[0], -np.tile(q1, 2), both))
        axis6, across6 = both[:len(q1)], both[len(q1):]
        q5, singular = self._bend(axis6 @ w[3])
        q5 = q5.reshape(-1)                                     # rows (pose, sh., el., wrist)
        singular = np.repeat(singular, 2)
        axis6 = np.repeat(axis6, 2, axis=0)
        across6 = np.repeat(across6, 2, axis=0)
        seed = np.repeat(seed, 2, axis=0)
        q4, across = angle_between(w[3], rotate(w[4], q5, w[5]), axis6)
        free = singular | (across < SINGULAR)
        q4 = np.where(free, seed[:, 3] + np.tile([0.0, math.pi], 4 * count), q4)
        u = rotate(w[4], -q5, rotate(w[3], -q4, across6))
        q6 = np.arctan2(cross(self.w6_perp, u) @ w[5], u @ self.w6_perp)
        q = np.stack([np.repeat(q1, 2), np.repeat(q2, 2), np.repeat(q3, 2), q4, q5, q6],
                     axis=1).reshape(count, 8, 6)
        ok = (np.repeat(ok1, 4) & ok3.repeat(2)).repeat(2).reshape(count, 8)
        flags = (np.repeat(flag1.reshape(-1), 4) | np.repeat(flag3.reshape(-1), 2)
                 | np.where(free, WRIST_SINGULAR, 0))
        self.last_too_near = np.repeat(near, 4).reshape(count, 8)
        return np.nan_to_num(q), ok, flags.reshape(count, 8)
