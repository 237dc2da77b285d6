"""FK and Jacobian of one arm model compiled into straight-line Python (plain floats).

The generic :class:`~arm_kinematics.model.arm_model.ArmModel` FK builds 4×4 numpy matrices joint
by joint, tens of microseconds per pose. The solvers and the IK services evaluate single
poses many times per request, so the model compiles, once, a straight-line FK + Jacobian
function in plain Python floats (:class:`ChainKernel`): the joint offsets and axes are read
from the model and written into the code as constants, terms that are zero are dropped, and
rotations about ±X/±Y/±Z mix only two columns. Nothing is hard-coded: a different URDF
gives a different kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import math
from typing import Any, Protocol

import numpy as np


class ArmModel(Protocol):
    """What the kernel reads of a model (the model builds its own kernel, so the kernel
    cannot import it)."""

    name: str
    dof: int
    joints: Sequence[Any]
    motions: Sequence[Any]
    tip_offset: np.ndarray

    def frames(self, q: np.ndarray) -> np.ndarray: ...

Entry = str | float   # a generated variable name or a constant folded at generation time


class _Code:
    """Collects straight-line SSA code; every value is a fresh name or a folded constant."""

    def __init__(self, first_name: int = 0) -> None:
        self.lines: list[str] = []
        self._count = first_name   # names t<first_name + 1>, ... keep two blocks apart

    @property
    def count(self) -> int:
        """Number of the last name given out."""
        return self._count

    def value(self, terms: Sequence[Sequence[Entry]], constant: float = 0.0) -> Entry:
        """Emit ``constant + Σ Π factors`` and return its name (or the constant itself).

        Each term is a product of factors, each a variable name or a float. Products with
        a zero factor vanish and constant products are folded, so a joint offset along one
        axis costs one multiply instead of nine.
        """
        parts = []
        for factors in terms:
            scale = 1.0
            names = []
            for factor in factors:
                if isinstance(factor, str):
                    names.append(factor)
                else:
                    scale *= factor
            if scale == 0.0:
                continue
            if not names:
                constant += scale
                continue
            parts.append((scale, names))
        if not parts:
            return float(constant)
        if len(parts) == 1 and parts[0][0] == 1.0 and len(parts[0][1]) == 1 and constant == 0.0:
            return parts[0][1][0]   # a pure alias: floats are immutable, so no copy is needed
        text = []
        for scale, names in parts:
            product = '*'.join(names)
            if scale == 1.0:
                text.append(product)
            elif scale == -1.0:
                text.append(f'-{product}')
            else:
                text.append(f'{scale!r}*{product}')
        if constant != 0.0:
            text.append(repr(float(constant)))
        return self.assign(' + '.join(text))

    def assign(self, expression: str) -> str:
        self._count += 1
        name = f't{self._count}'
        self.lines.append(f'{name} = {expression}')
        return name


def _literal(entry: Entry) -> str:
    return entry if isinstance(entry, str) else repr(float(entry))


def _kernel_source(model: ArmModel) -> str:
    """Python source of ``pose``, ``pose_jacobian``, ``joint_frames`` and ``joint_poses`` for
    ``model``."""
    code = _Code()
    n = model.dof
    rotation: list[list[Entry]] = [[1.0 if i == j else 0.0 for j in range(3)] for i in range(3)]
    position: list[Entry] = [0.0, 0.0, 0.0]

    origins: list[list[Entry]] = []
    axes: list[list[Entry]] = []
    # Per motion: (variable it adds to, multiplier, prismatic); a mimic joint's column is
    # its leader's, scaled by the multiplier.
    columns: list[tuple[int, float, bool]] = []
    # Each joint's frame after its motion, as model.frames: position then rotation row-major.
    poses: list[Entry] = []
    for motion in model.motions:
        joint = motion.joint
        if motion.follower:
            value = code.value([(f'q{motion.source}', motion.multiplier)], motion.offset)
        else:
            value = f'q{motion.source}'
        columns.append((motion.source, motion.multiplier, joint.prismatic))
        translation = joint.offset[:3, 3]
        position = [code.value([(position[k], 1.0)]
                               + [(rotation[k][j], float(translation[j])) for j in range(3)])
                    for k in range(3)]
        fixed = joint.offset[:3, :3]
        if not np.array_equal(fixed, np.eye(3)):
            rotation = [[code.value([(rotation[k][m], float(fixed[m][j])) for m in range(3)])
                         for j in range(3)] for k in range(3)]
        axis = [float(a) for a in joint.axis]
        world_axis = [code.value([(rotation[k][m], axis[m]) for m in range(3)])
                      for k in range(3)]
        axes.append(world_axis)
        if joint.prismatic:
            # A slide moves the frame along its world axis and turns nothing; its origin is
            # taken after the slide, as frames_batch takes it.
            position = [code.value([(position[k], 1.0), (world_axis[k], value)])
                        for k in range(3)]
            origins.append(list(position))
            poses.extend(position + [rotation[i][j] for i in range(3) for j in range(3)])
            continue
        origins.append(list(position))
        cos_name = code.assign(f'cos({_literal(value)})')
        sin_name = code.assign(f'sin({_literal(value)})')
        unit = [m for m in range(3) if axis[m] != 0.0]
        if len(unit) == 1 and abs(axis[unit[0]]) == 1.0:
            # Rotation about ±e_k mixes only the other two columns (a, b) in cyclic order.
            k = unit[0]
            sign = axis[k]
            a, b = (k + 1) % 3, (k + 2) % 3
            new_a = [code.value([(rotation[r][a], cos_name), (rotation[r][b], sin_name, sign)])
                     for r in range(3)]
            new_b = [code.value([(rotation[r][b], cos_name), (rotation[r][a], sin_name, -sign)])
                     for r in range(3)]
            for r in range(3):
                rotation[r][a] = new_a[r]
                rotation[r][b] = new_b[r]
        else:
            # General axis, Rodrigues: M = I + s·K + (1 − c)·K².
            x, y, z = axis
            skew = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
            skew_sq = skew @ skew
            versine = code.assign(f'1.0 - {cos_name}')
            local = [[code.value([(sin_name, float(skew[i][j])),
                                  (versine, float(skew_sq[i][j]))], 1.0 if i == j else 0.0)
                      for j in range(3)] for i in range(3)]
            rotation = [[code.value([(rotation[r][m], local[m][j]) for m in range(3)])
                         for j in range(3)] for r in range(3)]
        poses.extend(position + [rotation[i][j] for i in range(3) for j in range(3)])
    frame_poses = ', '.join(_literal(e) for e in poses)
    tip = model.tip_offset
    position = [code.value([(position[k], 1.0)]
                           + [(rotation[k][j], float(tip[j, 3])) for j in range(3)])
                for k in range(3)]
    if not np.array_equal(tip[:3, :3], np.eye(3)):
        rotation = [[code.value([(rotation[k][m], float(tip[m][j])) for m in range(3)])
                     for j in range(3)] for k in range(3)]
    body = list(code.lines)
    pose = ', '.join(_literal(e) for e in position + [rotation[i][j] for i in range(3)
                                                       for j in range(3)])

    # Geometric Jacobian columns: linear w_i × (p − o_i), angular w_i; each motion's column
    # adds to its variable's (times the multiplier of a mimic joint).
    jacobian_code = _Code(code.count)
    terms: list[list[list[tuple]]] = [[[] for _ in range(n)] for _ in range(6)]
    for index, (variable, multiplier, prismatic) in enumerate(columns):
        w = axes[index]
        if prismatic:
            column = [w[0], w[1], w[2], 0.0, 0.0, 0.0]
        else:
            d = [jacobian_code.value([(position[k], 1.0), (origins[index][k], -1.0)])
                 for k in range(3)]
            column = [jacobian_code.value([(w[1], d[2]), (w[2], d[1], -1.0)]),
                      jacobian_code.value([(w[2], d[0]), (w[0], d[2], -1.0)]),
                      jacobian_code.value([(w[0], d[1]), (w[1], d[0], -1.0)]), *w]
        for row in range(6):
            terms[row][variable].append((column[row], multiplier))
    rows: list[list[Entry]] = [[jacobian_code.value(terms[row][variable]) for variable in
                                range(n)] for row in range(6)]
    # Origins and axes of the variables only (a mimic joint is not one).
    variables = [i for i, motion in enumerate(model.motions) if not motion.follower]
    origins = [origins[i] for i in variables]
    axes = [axes[i] for i in variables]
    jacobian = ', '.join(_literal(e) for row in rows for e in row)
    frames = ', '.join('(' + ', '.join(_literal(e) for e in origins[i] + axes[i]) + ')'
                       for i in range(n))
    unpack = ', '.join(f'q{i}' for i in range(n)) + (',' if n == 1 else '')
    indent = '    '

    def function(name: str, extra: list[str], result: str) -> list[str]:
        return ([f'def {name}(q):', f'{indent}{unpack} = q']
                + [indent + line for line in body + extra] + [f'{indent}return {result}', ''])

    source = (function('pose', [], f'({pose})')
              + function('pose_jacobian', jacobian_code.lines, f'({pose}), [{jacobian}]')
              + function('joint_frames', [], f'[{frames}], ({_literal(position[0])}, '
                                             f'{_literal(position[1])}, {_literal(position[2])})')
              + function('joint_poses', [], f'({frame_poses},)'))
    return '\n'.join(source)


class ChainKernel:
    """Allocation-light FK and geometric Jacobian of one :class:`ArmModel`.

    All three functions take joint positions as a sequence of Python floats (radians; a
    list is fastest, numpy scalars are slower) and return plain floats:

    * ``pose(q)`` → ``(px, py, pz, r00, r01, r02, r10, ..., r22)``: tip position (metres)
      and rotation matrix, row-major, in the base frame.
    * ``pose_jacobian(q)`` → ``(pose, jacobian)``: the pose as above and the geometric
      Jacobian as a row-major list of 6·n floats (rows vx vy vz wx wy wz).
    * ``joint_frames(q)`` → ``(frames, tip)``: per joint ``(ox, oy, oz, ax, ay, az)``, its
      world origin and unit axis, and the tip position.
    * ``joint_poses(q)`` → 12·m floats: per moving joint, a mimic joint's too (entry i of
      :meth:`ArmModel.motion_frames`, m = ``frame_count``), its frame after its motion as
      position then rotation row-major, ``(px, py, pz, r00, r01, ..., r22)``, joint after
      joint (the collision checker poses its shapes by them).

    Attributes:
        source: the generated Python source (for inspection and debugging).
    """

    def __init__(self, model: ArmModel) -> None:
        self.model = model
        self.dof = model.dof
        self.source = _kernel_source(model)
        namespace: dict[str, object] = {'cos': math.cos, 'sin': math.sin}
        # The source holds only names generated above and float reprs from the model.
        exec(compile(self.source, f'<ChainKernel {model.name}>', 'exec'), namespace)
        self.pose: Callable[[Sequence[float]], tuple[float, ...]] = namespace['pose']
        self.pose_jacobian: Callable[[Sequence[float]], tuple[tuple[float, ...], list[float]]] \
            = namespace['pose_jacobian']
        self.joint_frames: Callable[[Sequence[float]], tuple[list[tuple[float, ...]],
                                                             tuple[float, float, float]]] \
            = namespace['joint_frames']
        self.joint_poses: Callable[[Sequence[float]], tuple[float, ...]] = \
            namespace['joint_poses']

    def fk(self, q: Sequence[float]) -> np.ndarray:
        """Tip transform (4×4, metres) like :meth:`ArmModel.fk`, through the fast kernel."""
        pose = self.pose([float(v) for v in q])
        transform = np.eye(4)
        transform[:3, 3] = pose[:3]
        transform[:3, :3] = np.reshape(pose[3:], (3, 3))
        return transform

    def jacobian(self, q: Sequence[float]) -> np.ndarray:
        """Geometric Jacobian (6, n) like :meth:`ArmModel.jacobian`, through the fast kernel."""
        _, jacobian = self.pose_jacobian([float(v) for v in q])
        return np.reshape(jacobian, (6, self.dof))
