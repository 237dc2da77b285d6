"""FK and Jacobian of a serial chain, compiled once by numba: the project's one compiled
kernel (no generated source, no exec).

Measured on this project's arms (UR5, Panda, TIAGo's 8-joint arm; see the IK benchmark):
one FK + Jacobian costs about 1 µs from Python here against 3–7 µs for the straight-line
Python it replaces and 1.3–1.7 µs for pinocchio (``pin``) through its Python bindings —
and, unlike pinocchio, the same compiled functions can be called from inside a compiled
solver loop, where one FK + Jacobian costs a fraction of a microsecond. That is what makes
the numeric IK solver fast (:mod:`arm_kinematics.ik.solvers.bounded_lm`).

The chain is data: per joint, the fixed offset from the previous joint's moved frame
(rotation and translation), the unit axis in the joint's frame and whether it slides; then
the tip's fixed offset. One generic walk serves every arm; a different URDF gives different
arrays, never different code.

numba is imported here and nowhere else: every compiled function of the project is
declared with :data:`compiled` from this module. Compiled code is cached on disk (numba's
``cache=True``), so only the first process after an install pays the compilation.

numba is imported on the first call of a compiled function, not when a module declaring one
is imported: importing numba costs about 0.25 s and 100 MB, and the nodes that never solve
(arm_info, markers, servo_bridge, ...) import the modules that declare compiled functions
(through ``arm.py``) without calling one. ``compiled`` therefore returns a stand-in; the
first call of any stand-in compiles them all (from the disk cache) and puts numba's
dispatchers in their place in every ``arm_kinematics`` module that holds one, because a
compiled function calling another resolves it by the name in its module's globals.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import math
import sys
import threading
from typing import Any, Protocol

import numpy as np


class _Deferred:
    """A compiled function before numba is imported: calls go to its dispatcher, made on
    the first call of any of them (``_compile_all``)."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.py_func = function
        self.dispatcher: Any = None
        self.__name__, self.__qualname__ = function.__name__, function.__qualname__
        self.__module__, self.__doc__ = function.__module__, function.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.dispatcher is None:
            _compile_all()
        return self.dispatcher(*args, **kwargs)


_DEFERRED: list[_Deferred] = []
_JIT: Any = None                  # numba.njit(cache=True, nogil=True) once imported
_LOCK = threading.RLock()


def _compile_all() -> None:
    global _JIT
    with _LOCK:
        if _JIT is None:
            import numba
            _JIT = numba.njit(cache=True, nogil=True)
        for deferred in _DEFERRED:
            if deferred.dispatcher is None:
                deferred.dispatcher = _JIT(deferred.py_func)
        # Every module of the package that holds a stand-in (its own functions and those it
        # imported by name) gets the dispatcher in its place.
        for name, module in list(sys.modules.items()):
            if not name.startswith('arm_kinematics') or module is None:
                continue
            for attribute, value in list(vars(module).items()):
                if isinstance(value, _Deferred):
                    setattr(module, attribute, value.dispatcher)


def compiled(function: Callable[..., Any]) -> Any:
    """Every compiled function of the project: no Python objects inside, cached on disk
    (numba's ``njit(cache=True, nogil=True)``), numba imported on first use (see above)."""
    with _LOCK:
        if _JIT is not None:
            return _JIT(function)
        deferred = _Deferred(function)
        _DEFERRED.append(deferred)
        return deferred


def numba_loaded() -> bool:
    """True once a compiled function has been called in this process (numba imported)."""
    return _JIT is not None


class _Model(Protocol):
    """What the kernel reads of a model (the model builds its kernel: no import of it)."""

    name: str
    dof: int
    joints: Sequence[Any]
    motions: Sequence[Any]
    tip_offset: np.ndarray


# Columns of a chain row (see chain_array).
ROTATION, TRANSLATION, AXIS, SLIDE, SOURCE, MULTIPLIER, OFFSET, FOLLOWER, ROW = \
    0, 9, 12, 15, 16, 17, 18, 19, 20


def chain_array(model: _Model) -> np.ndarray:
    """The chain as one read-only (m + 1, ROW) array, the form the compiled functions take.

    Row i < m is moving joint i of the chain (``model.motions``: the variables and the mimic
    joints that follow them): the fixed offset from the previous moved frame (the base for
    the first) as rotation (row-major, columns 0–8) and translation (9–11, metres), the unit
    axis in the joint's frame (12–14), 1.0 for a slide (15), and its position as
    ``multiplier · q[source] + offset`` (16–18), 1.0 for a mimic joint (19). Row m is the
    fixed offset from the last moved frame to the tip (columns 0–11). One array, because
    each argument of a compiled call costs a type check.
    """
    motions = list(model.motions)
    chain = np.zeros((len(motions) + 1, ROW))
    offsets = [motion.joint.offset for motion in motions] + [model.tip_offset]
    for i, offset in enumerate(offsets):
        chain[i, ROTATION:TRANSLATION] = np.asarray(offset, dtype=float)[:3, :3].ravel()
        chain[i, TRANSLATION:AXIS] = np.asarray(offset, dtype=float)[:3, 3]
    for i, motion in enumerate(motions):
        chain[i, AXIS:SLIDE] = motion.joint.axis
        chain[i, SLIDE] = 1.0 if motion.joint.prismatic else 0.0
        chain[i, SOURCE] = motion.source
        chain[i, MULTIPLIER] = motion.multiplier
        chain[i, OFFSET] = motion.offset
        chain[i, FOLLOWER] = 1.0 if motion.follower else 0.0
    chain.setflags(write=False)
    return chain


@compiled
def chain_walk(q, chain, frames, axes, pose):
    """Walk the chain at ``q`` (n variables): every moving joint's frame, its world axis and
    the tip pose.

    Writes ``frames`` (m, 12): moving joint i's frame after its motion as position then
    rotation row-major (a slide's origin is taken after the slide); ``axes`` (m, 3): its
    unit axis in the world; ``pose`` (12,): the tip, position then rotation row-major.
    """
    n = chain.shape[0] - 1
    r00, r01, r02 = 1.0, 0.0, 0.0
    r10, r11, r12 = 0.0, 1.0, 0.0
    r20, r21, r22 = 0.0, 0.0, 1.0
    px, py, pz = 0.0, 0.0, 0.0
    for i in range(n + 1):
        f = chain[i]
        px += r00 * f[9] + r01 * f[10] + r02 * f[11]
        py += r10 * f[9] + r11 * f[10] + r12 * f[11]
        pz += r20 * f[9] + r21 * f[10] + r22 * f[11]
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = (
            r00 * f[0] + r01 * f[3] + r02 * f[6],
            r00 * f[1] + r01 * f[4] + r02 * f[7],
            r00 * f[2] + r01 * f[5] + r02 * f[8],
            r10 * f[0] + r11 * f[3] + r12 * f[6],
            r10 * f[1] + r11 * f[4] + r12 * f[7],
            r10 * f[2] + r11 * f[5] + r12 * f[8],
            r20 * f[0] + r21 * f[3] + r22 * f[6],
            r20 * f[1] + r21 * f[4] + r22 * f[7],
            r20 * f[2] + r21 * f[5] + r22 * f[8])
        if i == n:
            break
        x, y, z = f[12], f[13], f[14]
        wx = r00 * x + r01 * y + r02 * z
        wy = r10 * x + r11 * y + r12 * z
        wz = r20 * x + r21 * y + r22 * z
        axes[i, 0], axes[i, 1], axes[i, 2] = wx, wy, wz
        value = f[17] * q[int(f[16])] + f[18]
        if f[15] != 0.0:
            px += wx * value
            py += wy * value
            pz += wz * value
        else:
            # Rodrigues: M = c·I + s·[k]× + (1 − c)·k kᵀ, then R ← R·M.
            c, s = math.cos(value), math.sin(value)
            v = 1.0 - c
            m00, m01, m02 = c + v * x * x, v * x * y - s * z, v * x * z + s * y
            m10, m11, m12 = v * x * y + s * z, c + v * y * y, v * y * z - s * x
            m20, m21, m22 = v * x * z - s * y, v * y * z + s * x, c + v * z * z
            r00, r01, r02, r10, r11, r12, r20, r21, r22 = (
                r00 * m00 + r01 * m10 + r02 * m20,
                r00 * m01 + r01 * m11 + r02 * m21,
                r00 * m02 + r01 * m12 + r02 * m22,
                r10 * m00 + r11 * m10 + r12 * m20,
                r10 * m01 + r11 * m11 + r12 * m21,
                r10 * m02 + r11 * m12 + r12 * m22,
                r20 * m00 + r21 * m10 + r22 * m20,
                r20 * m01 + r21 * m11 + r22 * m21,
                r20 * m02 + r21 * m12 + r22 * m22)
        row = frames[i]
        row[0], row[1], row[2] = px, py, pz
        row[3], row[4], row[5] = r00, r01, r02
        row[6], row[7], row[8] = r10, r11, r12
        row[9], row[10], row[11] = r20, r21, r22
    pose[0], pose[1], pose[2] = px, py, pz
    pose[3], pose[4], pose[5] = r00, r01, r02
    pose[6], pose[7], pose[8] = r10, r11, r12
    pose[9], pose[10], pose[11] = r20, r21, r22


@compiled
def jacobian_from_walk(frames, axes, chain, pose, jacobian):
    """Geometric Jacobian (6, n) of the tip from a walk: per moving joint, linear rows
    w_i × (p − o_i) (or w_i for a slide) and angular rows w_i (or 0 for a slide), added to
    its variable's column (times the multiplier of a mimic joint)."""
    px, py, pz = pose[0], pose[1], pose[2]
    jacobian[:, :] = 0.0
    for i in range(axes.shape[0]):
        wx, wy, wz = axes[i, 0], axes[i, 1], axes[i, 2]
        j = int(chain[i, 16])
        k = chain[i, 17]
        if chain[i, 15] != 0.0:
            jacobian[0, j] += k * wx
            jacobian[1, j] += k * wy
            jacobian[2, j] += k * wz
            continue
        dx, dy, dz = px - frames[i, 0], py - frames[i, 1], pz - frames[i, 2]
        jacobian[0, j] += k * (wy * dz - wz * dy)
        jacobian[1, j] += k * (wz * dx - wx * dz)
        jacobian[2, j] += k * (wx * dy - wy * dx)
        jacobian[3, j] += k * wx
        jacobian[4, j] += k * wy
        jacobian[5, j] += k * wz


@compiled
def pose_and_jacobian(q, chain, pose, jacobian):
    """Tip pose (12,) and geometric Jacobian (6, n) at ``q``, written in place."""
    m = chain.shape[0] - 1
    frames = np.empty((m, 12))
    axes = np.empty((m, 3))
    chain_walk(q, chain, frames, axes, pose)
    jacobian_from_walk(frames, axes, chain, pose, jacobian)


# ---- one array out per call: what the Python-facing ChainKernel unpacks
@compiled
def _pose_out(q, chain):
    m = chain.shape[0] - 1
    pose = np.empty(12)
    chain_walk(q, chain, np.empty((m, 12)), np.empty((m, 3)), pose)
    return pose


@compiled
def _transform_out(q, chain):
    pose = _pose_out(q, chain)
    transform = np.zeros((4, 4))
    for r in range(3):
        transform[r, 3] = pose[r]
        for c in range(3):
            transform[r, c] = pose[3 + 3 * r + c]
    transform[3, 3] = 1.0
    return transform


@compiled
def _pose_jacobian_out(q, chain):
    n = q.shape[0]
    out = np.empty(12 + 6 * n)
    pose_and_jacobian(q, chain, out[:12], out[12:].reshape((6, n)))
    return out


@compiled
def _frames_out(q, chain):
    """Per variable (a moving joint that is no mimic) its origin and world axis (6 each),
    then the tip position (3)."""
    m = chain.shape[0] - 1
    frames = np.empty((m, 12))
    axes = np.empty((m, 3))
    pose = np.empty(12)
    chain_walk(q, chain, frames, axes, pose)
    n = q.shape[0]
    out = np.empty(6 * n + 3)
    k = 0
    for i in range(m):
        if chain[i, 19] != 0.0:
            continue
        out[6 * k], out[6 * k + 1], out[6 * k + 2] = frames[i, 0], frames[i, 1], frames[i, 2]
        out[6 * k + 3], out[6 * k + 4], out[6 * k + 5] = axes[i, 0], axes[i, 1], axes[i, 2]
        k += 1
    out[6 * n], out[6 * n + 1], out[6 * n + 2] = pose[0], pose[1], pose[2]
    return out


@compiled
def _joint_poses_out(q, chain):
    """Every moving joint's frame (m · 12), mimic joints included."""
    m = chain.shape[0] - 1
    frames = np.empty((m, 12))
    chain_walk(q, chain, frames, np.empty((m, 3)), np.empty(12))
    return frames.ravel()


@compiled
def batch_poses(configurations, chain, poses):
    """Tip poses (N, 12) of N configurations (N, n), written in place."""
    m = chain.shape[0] - 1
    frames = np.empty((m, 12))
    axes = np.empty((m, 3))
    for k in range(configurations.shape[0]):
        chain_walk(configurations[k], chain, frames, axes, poses[k])


def _vector(q: Sequence[float] | np.ndarray, dof: int) -> np.ndarray:
    """``q`` as a contiguous float64 vector of ``dof`` values (ValueError otherwise: the
    compiled walk does not check bounds)."""
    vector = np.ascontiguousarray(q, dtype=np.float64)
    if vector.shape != (dof,):
        raise ValueError(f'expected {dof} joint values, got shape {vector.shape}')
    return vector


class ChainKernel:
    """FK and geometric Jacobian of one model through the compiled walk.

    The functions take joint positions as any sequence of n numbers (radians, metres for a
    slide) and return plain floats:

    * ``pose(q)`` → ``(px, py, pz, r00, r01, r02, r10, ..., r22)``: tip position (metres)
      and rotation matrix, row-major, in the base frame.
    * ``pose_jacobian(q)`` → ``(pose, jacobian)``: the pose as above and the geometric
      Jacobian as a row-major list of 6·n floats (rows vx vy vz wx wy wz).
    * ``joint_frames(q)`` → ``(frames, tip)``: per joint ``(ox, oy, oz, ax, ay, az)``, its
      world origin and unit axis, and the tip position.
    * ``joint_poses(q)`` → 12·m floats: per moving joint, a mimic joint's too (entry i of
      :meth:`ArmModel.motion_frames`, m = ``frame_count``), its frame after its motion as
      position then rotation row-major, joint after joint (the collision checker poses its
      shapes by them).

    Attributes:
        chain: the chain as :func:`chain_array` (what a compiled solver takes).
    """

    def __init__(self, model: _Model) -> None:
        self.model = model
        self.dof = model.dof
        self.chain = chain_array(model)
        # Every compiled function once, with the argument types of later calls: a cold numba
        # cache is compiled here, never inside a timed solve or a control tick.
        q = np.zeros(self.dof)
        for function in (_pose_out, _pose_jacobian_out, _frames_out, _joint_poses_out,
                         _transform_out):
            function(q, self.chain)
        batch_poses(np.zeros((1, self.dof)), self.chain, np.empty((1, 12)))

    def pose(self, q: Sequence[float] | np.ndarray) -> tuple[float, ...]:
        """Tip position and rotation (row-major), 12 floats."""
        return tuple(_pose_out(_vector(q, self.dof), self.chain).tolist())

    def pose_jacobian(self, q: Sequence[float] | np.ndarray
                      ) -> tuple[tuple[float, ...], list[float]]:
        """Tip pose (12 floats) and the Jacobian, row-major (6·n floats)."""
        values = _pose_jacobian_out(_vector(q, self.dof), self.chain).tolist()
        return tuple(values[:12]), values[12:]

    def joint_frames(self, q: Sequence[float] | np.ndarray
                     ) -> tuple[list[tuple[float, ...]], tuple[float, float, float]]:
        """Per joint (origin, unit axis) in the world, and the tip position."""
        values = _frames_out(_vector(q, self.dof), self.chain).tolist()
        return ([tuple(values[i:i + 6]) for i in range(0, 6 * self.dof, 6)],
                tuple(values[6 * self.dof:]))

    def joint_poses(self, q: Sequence[float] | np.ndarray) -> tuple[float, ...]:
        """Every joint's moved frame, position then rotation row-major, 12·n floats."""
        return tuple(_joint_poses_out(_vector(q, self.dof), self.chain).tolist())

    def fk(self, q: Sequence[float] | np.ndarray) -> np.ndarray:
        """Tip transform (4×4, metres)."""
        return _transform_out(_vector(q, self.dof), self.chain)

    def jacobian(self, q: Sequence[float] | np.ndarray) -> np.ndarray:
        """Geometric Jacobian (6, n)."""
        return _pose_jacobian_out(_vector(q, self.dof), self.chain)[12:].reshape(6, self.dof)

    def fk_batch(self, configurations: np.ndarray) -> np.ndarray:
        """Tip poses of N configurations (N, n) as (N, 12): position then rotation."""
        configurations = np.ascontiguousarray(configurations, dtype=np.float64)
        if configurations.ndim != 2 or configurations.shape[1] != self.dof:
            raise ValueError(f'expected (N, {self.dof}) joint values, got shape '
                             f'{configurations.shape}')
        poses = np.empty((len(configurations), 12))
        batch_poses(configurations, self.chain, poses)
        return poses
