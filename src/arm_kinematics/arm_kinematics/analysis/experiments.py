"""Numeric experiments on the IK core: the damping sweep, and target generators.

``python -m arm_kinematics.analysis.experiments`` prints the damping-sweep table for six_axis
(set ``ARM_DESCRIPTION_DIR`` when running from a source tree without a build).

The sweep reproduces the reference experiment: plain damped least squares, fixed λ, from
an almost stretched arm towards a target just inside full reach. Near that singularity
the undamped pseudo-inverse asks for huge joint steps; damping trades them for a residual
and slower convergence.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
import math
import sys

import numpy as np

from arm_kinematics.ik.solvers.base import workspace_from_model
from arm_kinematics.ik.solvers.dls import (
    damped_least_squares_step,
    JointLimiter,
    tool_down_angle,
)
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.model.kernel import ChainKernel

DEFAULT_LAMBDAS = (0.001, 0.01, 0.05, 0.1, 0.3)


@dataclass(frozen=True)
class SweepRow:
    """One λ of the damping sweep.

    Attributes:
        damping: λ (metres, the unit of the Jacobian's singular values).
        iterations: iterations run (until converged or the limit).
        final_error: tip position error at the end, metres.
        max_joint_step: largest single-joint change in one iteration, radians.
        converged: final_error ≤ tolerance.
    """

    damping: float
    iterations: int
    final_error: float
    max_joint_step: float
    converged: bool


def elbow_index(model: ArmModel) -> int:
    """Index of the elbow: the second joint whose axis is horizontal at q = 0.

    Falls back to the last joint for chains with fewer than two such joints.
    """
    _, axes, _ = model.joint_origins_and_axes(np.zeros(model.dof))
    horizontal = [i for i, axis in enumerate(axes) if abs(axis[2]) < 0.99]
    return horizontal[1] if len(horizontal) > 1 else model.dof - 1


def sweep_setup(model: ArmModel, bend: float = 0.05, reach_fraction: float = 0.985,
                off_vertical_deg: float = 10.0) -> tuple[np.ndarray, np.ndarray]:
    """Start configuration and target of the damping sweep.

    Args:
        model: the arm (meant for six_axis, whose zero pose points straight up).
        bend: elbow angle of the start, radians; every other joint is 0 (nearly stretched).
        reach_fraction: target distance from the shoulder as a fraction of the full reach.
        off_vertical_deg: angle of the target direction from +Z, degrees, tilted towards
            the side the elbow bends to.

    Returns:
        (q0 (n,), target (3,)) in radians and metres.
    """
    q0 = np.zeros(model.dof)
    q0[elbow_index(model)] = bend
    workspace = workspace_from_model(model)
    # Tilt the target towards the side the bent tip already leans to (sign of the offset).
    lean = model.fk(q0)[:3, 3] - workspace.shoulder
    horizontal = np.array([lean[0], lean[1], 0.0])
    norm = np.linalg.norm(horizontal)
    direction = horizontal / norm if norm > 1e-12 else np.array([1.0, 0.0, 0.0])
    tilt = math.radians(off_vertical_deg)
    unit = math.sin(tilt) * direction + np.array([0.0, 0.0, math.cos(tilt)])
    target = workspace.shoulder + reach_fraction * workspace.max_reach * unit
    return q0, target


def plain_dls(model: ArmModel, q0: np.ndarray, target: np.ndarray, damping: float,
              max_iterations: int = 500, tolerance: float = 1e-4,
              kernel: ChainKernel | None = None) -> SweepRow:
    """Fixed-λ damped least squares on the tip position: q ← q + Jᵀ (J Jᵀ + λ² I)⁻¹ e.

    No step cap, no restarts, no adaptive damping and no joint limits: the bare formula,
    so the step sizes it asks for are what the table shows.

    Args:
        model: the arm.
        q0: start configuration (n,), radians.
        target: tip target (3,), metres.
        damping: λ, metres.
        max_iterations: iteration limit.
        tolerance: convergence threshold on the position error, metres.
        kernel: the kernel to use (default: the model's own).

    Returns:
        The SweepRow of this λ.
    """
    kernel = kernel or model.kernel
    q = np.asarray(q0, dtype=float).copy()
    target = np.asarray(target, dtype=float)
    largest = 0.0
    iterations = 0
    pose, jacobian = kernel.pose_jacobian(q.tolist())
    error = target - pose[:3]
    while np.linalg.norm(error) > tolerance and iterations < max_iterations:
        linear = np.reshape(jacobian, (6, model.dof))[:3]
        step = damped_least_squares_step(linear, error, damping)
        largest = max(largest, float(np.abs(step).max()))
        q += step
        iterations += 1
        pose, jacobian = kernel.pose_jacobian(q.tolist())
        error = target - pose[:3]
    final = float(np.linalg.norm(error))
    return SweepRow(damping, iterations, final, largest, final <= tolerance)


def damping_sweep(model: ArmModel, lambdas: Sequence[float] = DEFAULT_LAMBDAS,
                  max_iterations: int = 500, tolerance: float = 1e-4, bend: float = 0.05,
                  reach_fraction: float = 0.985,
                  off_vertical_deg: float = 10.0) -> list[SweepRow]:
    """Plain fixed-λ DLS near the stretched singularity, once per λ.

    From the nearly stretched start of :func:`sweep_setup` (all joints 0, elbow bent by
    ``bend``) towards a target at ``reach_fraction`` of full reach from the shoulder,
    ``off_vertical_deg`` off vertical.

    Returns:
        One SweepRow per λ, in the order given. Small λ shows large joint steps near the
        singularity; large λ a residual error or slow convergence.
    """
    q0, target = sweep_setup(model, bend, reach_fraction, off_vertical_deg)
    kernel = model.kernel
    return [plain_dls(model, q0, target, float(damping), max_iterations, tolerance, kernel)
            for damping in lambdas]


def format_sweep(rows: Sequence[SweepRow]) -> str:
    """The sweep as a plain-text table."""
    lines = [f'{"lambda":>8} {"iterations":>10} {"final error m":>14} '
             f'{"max joint step rad":>19} {"converged":>9}']
    for row in rows:
        lines.append(f'{row.damping:>8.3g} {row.iterations:>10d} {row.final_error:>14.3e} '
                     f'{row.max_joint_step:>19.4f} {str(row.converged):>9}')
    return '\n'.join(lines)


def tool_down_configurations(model: ArmModel, count: int, rng: np.random.Generator,
                             max_iterations: int = 100) -> np.ndarray:
    """Random configurations, inside the limits, whose tool Z axis points along −Z.

    Their FK positions are reachable TOOL_DOWN targets (random configurations almost never
    point the tool down). Each is made by drawing a configuration uniformly within the
    limits and turning only the tool axis down with damped least squares on the two
    orientation rows; the position is left wherever that lands.

    Args:
        model: the arm (needs at least two joints that can tilt the tool).
        count: configurations wanted.
        rng: random generator (fixed seed → same set).
        max_iterations: iteration limit per draw; a draw that does not reach 1e-10 rad is
            discarded and redrawn.

    Returns:
        Array (count, n), radians.

    Raises:
        RuntimeError: fewer than ``count`` draws succeeded in 20·count attempts (the arm
            cannot point its tool down).
    """
    kernel = model.kernel
    limiter = JointLimiter(model)
    found: list[list[float]] = []
    for _ in range(20 * count):
        if len(found) == count:
            break
        q = limiter.random(rng)
        for _ in range(max_iterations):
            pose, jacobian = kernel.pose_jacobian(q)
            angle = tool_down_angle(pose)
            if angle < 1e-10:
                found.append(q)
                break
            zx, zy = pose[5], pose[8]
            horizontal = math.hypot(zx, zy)
            axis = np.array([-zy, zx, 0.0]) / horizontal if horizontal > 1e-12 else \
                np.array([1.0, 0.0, 0.0])
            angular = np.reshape(jacobian, (6, model.dof))[3:]
            step = damped_least_squares_step(angular, angle * axis, 0.01)
            q = limiter.apply((np.asarray(q) + step).tolist())
    if len(found) < count:
        raise RuntimeError(f'{model.name}: only {len(found)} of {count} tool-down '
                           'configurations found')
    return np.array(found)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: print the damping-sweep table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--arm', default='six_axis', help='arm description (default six_axis)')
    parser.add_argument('--lambdas', type=float, nargs='+', default=list(DEFAULT_LAMBDAS),
                        help='damping values λ to try, metres')
    parser.add_argument('--max-iterations', type=int, default=500)
    parser.add_argument('--tolerance', type=float, default=1e-4, help='metres')
    args = parser.parse_args(argv)
    from arm_kinematics.description.bundled import load_model
    model = load_model(args.arm)
    q0, target = sweep_setup(model)
    print(f'{args.arm}: plain DLS (fixed lambda, no step cap, no restarts) from '
          f'q0 = {np.round(q0, 3).tolist()} rad to target {np.round(target, 4).tolist()} m '
          '(98.5 % of reach from the shoulder, 10 deg off vertical)')
    rows = damping_sweep(model, args.lambdas, args.max_iterations, args.tolerance)
    print(format_sweep(rows))
    return 0


if __name__ == '__main__':
    sys.exit(main())
