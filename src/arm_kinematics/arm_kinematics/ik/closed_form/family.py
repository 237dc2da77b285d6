"""The family protocol: how a closed-form family recognises an arm and how it solves it.

A family is one module of this package (``yaw_two_pitch``, ``yaw_three_pitch``,
``spherical_wrist``, ``ur``, ``opw``) that provides:

- ``recognise(model) -> parameters | str``: the family's parameters read from the
  ArmModel's axes and origins at q = 0 (and checked against FK on random configurations),
  or a sentence saying why the arm is not of this family;
- a solver class (a ``ClosedFormBase``, ``FamilySolver`` below) whose ``solve`` answers
  one goal with the solution nearest the seed (or a named branch), and every labelled
  solution with ``SolveOptions(return_all=True)``; the vectorised families also solve
  many goals at once (``solve_poses``, ``solve_pitches``, ``solve_batch``).

``dispatch`` lists the families in the order they are tried and holds the two registered
solvers, ``analytic`` and ``closed_form``, as thin dispatchers over them. A new family is a
new module with these two pieces and a line in ``dispatch.FAMILIES``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from arm_kinematics.ik.result import GoalType, IKResult
from arm_kinematics.ik.solvers.base import SolveOptions, Workspace
from arm_kinematics.model.arm_model import ArmModel


@dataclass(frozen=True, eq=False)
class Family:
    """A recognised six-joint arm family: its name, its parameters and the zero-pose geometry.

    Attributes:
        name: 'spherical_wrist', 'ur', 'opw' or 'yaw_two_pitch'.
        parameters: the family's lengths (m) and angles (rad), for reports and peers.
            ur: d1, a2, a3, d4, d5, d6 (the DH lengths, positive). opw: a1, a2, b, c1, c2,
            c3, c4 (m), offsets and sign_corrections (per joint), plus base (4×4, URDF
            base → OPW base) and tool (4×4, OPW flange → URDF tip), all such that
            fk_urdf(q) = base · fk_opw(sign · q + offset) · tool.
        origins, axes: joint origins (6, 3) and unit axes (6, 3) at q = 0, base frame.
        zero: tip transform at q = 0 (4×4).
        point: the point the position part solves for (UR: where axes 5 and 6 cross;
            OPW: the wrist centre), at q = 0 (m).
        drift: the largest deviation from the ideal geometry found (m or rad).
        engine: the class that solves it (``six_joint.FamilyEngine`` subclass), or None
            for the families whose solver class solves them directly.
    """

    name: str
    parameters: dict = field(default_factory=dict, repr=False)
    origins: np.ndarray | None = field(default=None, repr=False)
    axes: np.ndarray | None = field(default=None, repr=False)
    zero: np.ndarray | None = field(default=None, repr=False)
    point: np.ndarray | None = field(default=None, repr=False)
    drift: float = 0.0
    engine: type | None = field(default=None, repr=False)

    def describe(self) -> str:
        """One line: the family and its lengths (mm)."""
        words = {'ur': 'UR family (three parallel middle axes, offset wrist)',
                 'opw': 'OPW family (ortho-parallel base, spherical wrist)',
                 'spherical_wrist': 'spherical-wrist six-axis (wrist centre on the forearm '
                                    'line)',
                 'yaw_two_pitch': 'yaw + two parallel pitch joints'}[self.name]
        lengths = ', '.join(f'{key} {1000.0 * value:.1f}' for key, value in
                            self.parameters.items() if isinstance(value, float))
        return f'{words}: {lengths} mm' if lengths else words


class FamilySolverProtocol(Protocol):
    """What the dispatchers need of a family's solver."""

    name: str
    labelled: bool

    def solve(self, position: object, orientation: object = None,
              goal: GoalType = GoalType.POSITION, seed: object = None,
              options: SolveOptions = SolveOptions()) -> IKResult:
        """The solution nearest the seed (or of ``options.branch``); every labelled
        solution too with ``options.return_all``. Never raises."""


@dataclass(frozen=True)
class FamilySpec:
    """One family as the dispatchers try it.

    Attributes:
        name: the family's name (``Family.name`` / FAMILY_NAME of its module).
        solver_name: the registered solver that serves it ('analytic' or 'closed_form').
        recognise: model → the family's parameters, or why it does not fit.
        build: (model, workspace, parameters, home) → its solver.
    """

    name: str
    solver_name: str
    recognise: Callable[[ArmModel], object]
    build: Callable[[ArmModel, Workspace, object, Sequence[float] | None],
                    FamilySolverProtocol]
