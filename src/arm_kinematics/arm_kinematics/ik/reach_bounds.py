"""Reach bounds that hold for any chain (RELIABILITY case 24a): a sphere that holds every tip
position, and an inner hole only where one is proven.

Why they hold. Let P_j be the origin of moving joint j's frame after its motion (it lies on
its axis) and P_m the tip. For a turning joint, P_j − P_(j−1) is the joint's fixed offset
turned by the joints before it, so its length never changes; for a slide it is the offset
plus the travel along the axis, no longer than the larger of its two ends; the tip is a fixed
offset from the last frame. So |P_m − P_k| is at most the sum of those lengths after k,
whatever the joints do. P_k stays put when it lies on the axis of every joint before it
(each check at q = 0 holds for all q once the later ones hold: a point on joint i's axis is
not moved by joint i, so its place in joint i−1's frame is fixed) and no joint up to k
slides: a centre. When only the first joint moves P_k, P_k runs round a circle on that axis
and the sphere about the circle's centre grows by its radius. The smallest of these spheres
is the bound; none is smaller than the truth.
"""

from __future__ import annotations

import numpy as np

from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.model.chain import motion_matrix

# Closer than this (m) to an axis counts as on it: vendor URDFs round to about a micrometre,
# and the sphere grows by the distance anyway when the point is taken as off the axis.
ON_AXIS = 1e-9


def _zero_pose_points(model: ArmModel) -> tuple[np.ndarray, np.ndarray]:
    """(origins, world axes) of every moving joint at q = 0 (mimic joints at their value)."""
    origins, axes = [], []
    current = np.eye(4)
    for motion in model.motions:
        current = current @ motion.joint.offset
        value = motion.offset if motion.follower else 0.0
        if value:
            current = current @ motion_matrix(motion.joint, value)
        origins.append(current[:3, 3].copy())
        axes.append(current[:3, :3] @ motion.joint.axis)
    return np.array(origins), np.array(axes)


def _on_axis(point: np.ndarray, origin: np.ndarray, axis: np.ndarray) -> float:
    """Distance of ``point`` from the line through ``origin`` along unit ``axis``."""
    offset = point - origin
    return float(np.linalg.norm(offset - axis * float(np.dot(offset, axis))))


def reach_spheres(model: ArmModel) -> list[tuple[np.ndarray, float, str]]:
    """Every sphere (centre, radius, why) the rules above prove; the base origin's first."""
    origins, axes = _zero_pose_points(model)
    bounds = model.segment_bounds()
    spheres = [(np.zeros(3), float(sum(bounds)), 'from the base origin')]
    slides = [motion.joint.prismatic for motion in model.motions]
    for k in range(len(origins)):
        if slides[k]:
            break
        # The distances of P_k from every earlier axis in one array operation: a loop of
        # scalar calls per pair made this quadratic in Python, minutes for 3000 joints.
        offset = origins[k] - origins[:k]
        along = np.einsum('ij,ij->i', offset, axes[:k])
        off = np.linalg.norm(offset - axes[:k] * along[:, None], axis=1)
        if not (off[1:] <= ON_AXIS).all():
            continue
        rest = float(sum(bounds[k + 1:]))
        if (off <= ON_AXIS).all():
            spheres.append((origins[k].copy(), rest, f'from joint {k} (fixed)'))
        elif k >= 1:
            foot = origins[0] + axes[0] * float(np.dot(origins[k] - origins[0], axes[0]))
            spheres.append((foot, rest + _on_axis(origins[k], origins[0], axes[0]),
                            f"from joint {k}'s circle on the first axis"))
    return spheres


def reach_sphere(model: ArmModel) -> tuple[np.ndarray, float]:
    """(centre, radius) of the smallest proven sphere holding every tip position."""
    centre, radius, _ = min(reach_spheres(model), key=lambda sphere: sphere[1])
    return centre, radius


def planar_link_lengths(model: ArmModel) -> tuple[float, float] | None:
    """(l1, l2) of a yaw + two-pitch arm whose shoulder stays put (it lies on the yaw axis),
    else None: only then is |l1 − l2| a true inner hole round the shoulder (|a + b| ≥
    ||a| − |b|| for the two links a and b, whatever their directions).

    Read from the model's zero-pose frames, so the URDF stays the only source.
    """
    if model.dof != 3 or model.followers or model.prismatic.any():
        return None
    origins, axes, tip = model.joint_origins_and_axes(np.zeros(3))
    vertical = abs(abs(axes[0][2]) - 1.0) < 1e-9
    parallel_pitch = abs(abs(float(np.dot(axes[1], axes[2]))) - 1.0) < 1e-9 and \
        abs(axes[1][2]) < 1e-9
    if not (vertical and parallel_pitch):
        return None
    if _on_axis(origins[1], origins[0], axes[0]) > ON_AXIS:
        return None
    return float(np.linalg.norm(origins[2] - origins[1])), float(np.linalg.norm(tip - origins[2]))
