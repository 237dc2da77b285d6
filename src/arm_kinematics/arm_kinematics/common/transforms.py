"""Small homogeneous-transform helpers (metres, radians)."""

from __future__ import annotations

import numpy as np


def rpy_to_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Rotation matrix of URDF fixed-axis roll-pitch-yaw: Rz(yaw)·Ry(pitch)·Rx(roll)."""
    cr, sr = np.cos(roll), np.sin(roll)
    cp, sp = np.cos(pitch), np.sin(pitch)
    cy, sy = np.cos(yaw), np.sin(yaw)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def make_transform(rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """4×4 homogeneous transform from a 3×3 rotation and a 3-vector."""
    transform = np.eye(4)
    transform[:3, :3] = rotation
    transform[:3, 3] = translation
    return transform


def rotation_error(current: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Angle-axis vector (radians) that rotates `current` onto `target`, both 3×3, world frame."""
    delta = target @ current.T
    cos_angle = np.clip((np.trace(delta) - 1.0) / 2.0, -1.0, 1.0)
    angle = float(np.arccos(cos_angle))
    vee = np.array([delta[2, 1] - delta[1, 2], delta[0, 2] - delta[2, 0],
                    delta[1, 0] - delta[0, 1]])
    if angle < 1e-9:
        return 0.5 * vee
    if np.pi - angle < 1e-6:
        # Near a half turn the skew part vanishes; take the axis from the symmetric part.
        sym = (delta + np.eye(3)) / 2.0
        column = int(np.argmax(np.diag(sym)))
        axis = sym[:, column] / np.sqrt(max(sym[column, column], 1e-300))
        return angle * axis / np.linalg.norm(axis)
    return angle / (2.0 * np.sin(angle)) * vee


def quaternion_to_matrix(x: float, y: float, z: float, w: float) -> np.ndarray:
    """Rotation matrix of a quaternion (x, y, z, w as in geometry_msgs); normalises it first."""
    norm = np.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def matrix_to_quaternion(rotation: np.ndarray) -> tuple[float, float, float, float]:
    """Quaternion (x, y, z, w) of a rotation matrix, w ≥ 0."""
    m = rotation
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0.0:
        s = 2.0 * np.sqrt(trace + 1.0)
        w, x = 0.25 * s, (m[2, 1] - m[1, 2]) / s
        y, z = (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        w, x = (m[2, 1] - m[1, 2]) / s, 0.25 * s
        y, z = (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        w, x = (m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s
        y, z = 0.25 * s, (m[1, 2] + m[2, 1]) / s
    else:
        s = 2.0 * np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        w, x = (m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s
        y, z = (m[1, 2] + m[2, 1]) / s, 0.25 * s
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    return float(x), float(y), float(z), float(w)
