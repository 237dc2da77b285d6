"""IK solvers by name: analytic (yaw + two-pitch arms), closed_form (spherical-wrist six-axis),
ccd (any chain) and dls (any chain)."""

from __future__ import annotations

import importlib

from arm_ik.kinematics.solvers.base import Solver

# name → (module, class); imported on first use so a node loads only what it serves.
SOLVERS = {
    'analytic': ('arm_ik.kinematics.solvers.analytic', 'AnalyticSolver'),
    'closed_form': ('arm_ik.kinematics.solvers.closed_form', 'SphericalWristSolver'),
    'ccd': ('arm_ik.kinematics.solvers.ccd', 'CCDSolver'),
    'dls': ('arm_ik.kinematics.solvers.dls', 'DLSSolver'),
}


def solver_class(name: str) -> type[Solver]:
    """Solver class registered as ``name`` (exact, lower case).

    Raises:
        KeyError: unknown name; the message lists the valid names.
    """
    if name not in SOLVERS:
        raise KeyError(f'unknown solver "{name}"; valid names (exact, lower case): '
                       f'{", ".join(SOLVERS)}')
    module, attribute = SOLVERS[name]
    return getattr(importlib.import_module(module), attribute)
