"""IK solvers by name: analytic (yaw + two-pitch arms, and yaw + three-pitch arms with an
optional tool roll: ik.closed_form.dispatch), closed_form (the six-joint families
of ik.closed_form: spherical wrist, UR, OPW), ccd (any chain) and dls (any chain)."""

from __future__ import annotations

import importlib

from arm_kinematics.ik.solvers.base import Solver

# name → (module, class); imported on first use so a node loads only what it serves.
SOLVERS = {
    'analytic': ('arm_kinematics.ik.closed_form.dispatch', 'PlanarAnalyticSolver'),
    'closed_form': ('arm_kinematics.ik.closed_form.dispatch', 'ClosedFormSolver'),
    'ccd': ('arm_kinematics.ik.solvers.ccd', 'CCDSolver'),
    'dls': ('arm_kinematics.ik.solvers.dls', 'DLSSolver'),
}


def unknown_solver_reason(name: str) -> str:
    """'' for a registered solver name, else why not: the valid names, and the one meant
    when ``name`` differs from it only in case, surrounding spaces or '-' for '_'.

    One text for every place that refuses a name (the IK services, the ik_client command,
    solver_class), so a user sees the same words whichever refused it.
    """
    if name in SOLVERS:
        return ''
    reason = f'unknown solver "{name}"; valid names (exact, lower case): {", ".join(SOLVERS)}'
    folded = name.strip().lower().replace('-', '_')
    meant = next((valid for valid in SOLVERS if valid == folded), None)
    return reason + (f'; did you mean "{meant}"?' if meant else '')


def solver_class(name: str) -> type[Solver]:
    """Solver class registered as ``name`` (exact, lower case).

    Raises:
        KeyError: unknown name; the message lists the valid names.
    """
    if name not in SOLVERS:
        raise KeyError(unknown_solver_reason(name))
    module, attribute = SOLVERS[name]
    return getattr(importlib.import_module(module), attribute)
