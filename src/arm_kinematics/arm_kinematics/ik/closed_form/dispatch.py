"""The two registered closed-form solvers, thin dispatchers over the families.

- ``closed_form`` (``ClosedFormSolver``): the six-joint families, tried in order:
  spherical wrist (``spherical_wrist``), UR (``ur``), OPW (``opw``);
- ``analytic`` (``PlanarAnalyticSolver``): yaw + two pitch (``yaw_two_pitch``) or yaw +
  three pitch with an optional tool roll (``yaw_three_pitch``).

``recognise`` names the family of an arm (cached per model) with the reason each other
family does not fit; ``FAMILIES`` is the order they are tried in (the protocol:
``family``). Attributes of the family solver a dispatcher serves with are reachable on it.
"""

from __future__ import annotations

from collections.abc import Sequence
import weakref

from arm_kinematics.ik.closed_form import opw, ur
from arm_kinematics.ik.closed_form.family import Family, FamilySpec
from arm_kinematics.ik.closed_form.six_joint import FamilySolver
from arm_kinematics.ik.closed_form.spherical_wrist import SphericalWristSolver
from arm_kinematics.ik.closed_form.yaw_three_pitch import PlanarFamily, recognise_planar
from arm_kinematics.ik.closed_form.yaw_three_pitch_solver import PlanarFamilySolver
from arm_kinematics.ik.closed_form.yaw_two_pitch import AnalyticSolver
from arm_kinematics.ik.result import ErrorCode, GoalType, IKResult
from arm_kinematics.ik.solvers.base import SolveOptions, Solver, Workspace
from arm_kinematics.model.arm_model import ArmModel

_DEFAULT_OPTIONS = SolveOptions()


def _by_rules(solver: type, name: str):
    """recognise() of a family whose solver class states its own rules (applicability)."""
    def recognise(model: ArmModel) -> Family | str:
        return solver.applicability(model) or Family(name)
    return recognise


def _build_family_solver(model: ArmModel, workspace: Workspace, family: object,
                         home: Sequence[float] | None) -> Solver:
    return FamilySolver(model, workspace, family, home)


# The families in the order recognise() tries them.
FAMILIES = (
    FamilySpec('yaw_two_pitch', 'analytic', _by_rules(AnalyticSolver, 'yaw_two_pitch'),
               lambda model, workspace, _, home: AnalyticSolver(model, workspace, home)),
    FamilySpec('spherical_wrist', 'closed_form',
               _by_rules(SphericalWristSolver, 'spherical_wrist'),
               lambda model, workspace, _, home: SphericalWristSolver(model, workspace, home)),
    FamilySpec(ur.FAMILY_NAME, 'closed_form', ur.recognise, _build_family_solver),
    FamilySpec(opw.FAMILY_NAME, 'closed_form', opw.recognise, _build_family_solver),
)
FAMILY_NAMES = tuple(spec.name for spec in FAMILIES)
SIX_JOINT_FAMILIES = tuple(spec.name for spec in FAMILIES if spec.solver_name == 'closed_form')
_SPECS = {spec.name: spec for spec in FAMILIES}
_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def recognise(model: ArmModel) -> tuple[Family | None, dict[str, str]]:
    """(family, {family name: reason it is not that family}) of ``model``, cached per model.

    Tried in the order of FAMILIES; the first that fits the geometry and passes the FK
    check on random configurations wins. ``family`` is None when none fits.
    """
    cached = _CACHE.get(model)
    if cached is not None:
        return cached
    reasons: dict[str, str] = {}
    found = None
    for spec in FAMILIES:
        family = spec.recognise(model)
        if isinstance(family, str):
            reasons[spec.name] = family
            continue
        found = family
        break
    _CACHE[model] = (found, reasons)
    return found, reasons


class _Dispatcher(Solver):
    """A registered solver that hands each request to the family solver it built
    (``_delegate``, None when no family fits); the family solver's attributes are
    reachable on it."""

    _delegate: Solver | None = None

    def __getattr__(self, name: str) -> object:
        delegate = self.__dict__.get('_delegate')
        if delegate is None:
            raise AttributeError(name)
        return getattr(delegate, name)


class ClosedFormSolver(_Dispatcher):
    """The ``closed_form`` solver: the closed form of the family ``recognise`` finds.

    A spherical-wrist six-axis arm (six_axis) is served by ``SphericalWristSolver``
    unchanged; UR-family and OPW-family arms by ``FamilySolver``. Attributes of the
    solver it dispatches to are reachable on this one.
    """

    name = 'closed_form'
    labelled = True

    def __init__(self, model: ArmModel, workspace: Workspace,
                 home: Sequence[float] | None = None) -> None:
        super().__init__(model, workspace)
        family, _ = recognise(model)
        self._not_applicable = self.applicability(model)
        if self._not_applicable:
            family = None
        self.family = family
        self._delegate: Solver | None = None if family is None else \
            _SPECS[family.name].build(model, workspace, family, home)

    @classmethod
    def applicability(cls, model: ArmModel) -> str:
        """'' when a closed-form family fits ``model``, else why none does."""
        family, reasons = recognise(model)
        if family is not None and family.name in SIX_JOINT_FAMILIES:
            return ''
        if model.dof != 6:
            return SphericalWristSolver.applicability(model)
        return 'no closed-form family fits: ' + '; '.join(
            f'{name}: {reason}' for name, reason in reasons.items()
            if name in SIX_JOINT_FAMILIES)

    @classmethod
    def family_description(cls, model: ArmModel) -> str:
        """The recognised family in words ('' when none)."""
        family, _ = recognise(model)
        return '' if family is None or family.name not in SIX_JOINT_FAMILIES else \
            family.describe()

    def solve(self, position: object, orientation: object = None,
              goal: GoalType = GoalType.POSITION, seed: object = None,
              options: SolveOptions = _DEFAULT_OPTIONS) -> IKResult:
        """As the recognised family's solver; SOLVER_NOT_APPLICABLE when none fits."""
        if self._delegate is None:
            return IKResult(ErrorCode.SOLVER_NOT_APPLICABLE, self._not_applicable)
        return self._delegate.solve(position, orientation, goal, seed, options)

class PlanarAnalyticSolver(_Dispatcher):
    """The ``analytic`` solver: yaw + two pitch (``AnalyticSolver``, unchanged) or yaw +
    three pitch with an optional roll (``PlanarFamilySolver``), by recognition.

    Attributes of the solver it dispatches to are reachable on this one (``solve_batch``,
    ``geometry``, ``family``...).
    """

    name = 'analytic'
    labelled = True

    def __init__(self, model: ArmModel, workspace: Workspace,
                 home: Sequence[float] | None = None) -> None:
        super().__init__(model, workspace)
        self._not_applicable = self.applicability(model)
        if not AnalyticSolver.applicability(model) or model.dof == 3:
            self._delegate: Solver = AnalyticSolver(model, workspace, home)
        elif not self._not_applicable:
            self._delegate = PlanarFamilySolver(model, workspace, planar_family(model), home)
        else:
            self._delegate = AnalyticSolver(model, workspace, home)

    @classmethod
    def applicability(cls, model: ArmModel) -> str:
        """'' for yaw + two pitch or yaw + three pitch (+ roll), else why neither."""
        two = AnalyticSolver.applicability(model)
        if not two or model.dof == 3:
            return two
        family = planar_family(model)
        if isinstance(family, PlanarFamily):
            return ''
        return f'not yaw + two pitch ({two}); not yaw + three pitch: {family}'

    @classmethod
    def family_description(cls, model: ArmModel) -> str:
        """The recognised family in words ('' for yaw + two pitch and for none)."""
        if model.dof == 3:
            return ''
        family = planar_family(model)
        return family.describe() if isinstance(family, PlanarFamily) else ''

    def solve(self, position: object, orientation: object = None,
              goal: GoalType = GoalType.POSITION, seed: object = None,
              options: SolveOptions = _DEFAULT_OPTIONS, *,
              approach_pitch: float | None = None) -> IKResult:
        """As the recognised family's solver (``approach_pitch``: the three-pitch family)."""
        if self._not_applicable:
            return IKResult(ErrorCode.SOLVER_NOT_APPLICABLE, self._not_applicable)
        if isinstance(self._delegate, PlanarFamilySolver):
            return self._delegate.solve(position, orientation, goal, seed, options,
                                        approach_pitch=approach_pitch)
        if approach_pitch is not None:
            return IKResult(ErrorCode.SOLVER_NOT_APPLICABLE,
                            'approach_pitch needs a yaw + three-pitch arm; '
                            f'{self.model.name or "this arm"} has {self.model.dof} joints')
        return self._delegate.solve(position, orientation, goal, seed, options)


_FAMILIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def planar_family(model: ArmModel) -> PlanarFamily | str:
    """``recognise_planar`` cached per model (it runs the FK check)."""
    cached = _FAMILIES.get(model)
    if cached is None:
        cached = _FAMILIES[model] = recognise_planar(model)
    return cached
