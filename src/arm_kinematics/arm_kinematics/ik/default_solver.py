"""The default solver of an arm: a closed form where one fits the chain, else the numeric one."""

from __future__ import annotations

from arm_kinematics.ik.solvers import solver_class
from arm_kinematics.model.arm_model import ArmModel

# Solvers tried in this order when the configuration names none: the closed forms answer
# in microseconds with every branch; DLS serves any chain.
SOLVER_PREFERENCE = ('analytic', 'closed_form', 'dls')


def choose_solver(model: ArmModel) -> tuple[str, str]:
    """(solver, reason) for ``model`` when the configuration names none."""
    reasons = []
    also = ''
    for name in SOLVER_PREFERENCE:
        reason = solver_class(name).reason_for(model)
        if not reason and name == 'analytic' and _yaw_three_pitch(model):
            # Its position-only goals sweep the free pitch (about 6 ms a request against
            # DLS's 0.1 ms): the default goal stays with dls; `analytic` serves by name.
            family = solver_class(name).family_description(model)
            also = f'; analytic serves it by name ({family}: position + approach pitch in ' \
                'closed form, position alone by a sweep of the pitch)'
            reasons.append('analytic: yaw + three pitch, kept for goals that name it')
            continue
        if not reason:
            if name == 'dls':
                return name, ('no closed form fits this chain for the default position goal ('
                              + '; '.join(reasons) + '): damped least squares' + also)
            # A solver serving several families names the one it recognised.
            describe = getattr(solver_class(name), 'family_description', None)
            family = describe(model) if describe is not None else ''
            return name, f'the chain fits the {name} closed form' + \
                (f' ({family})' if family else '')
        reasons.append(f'{name}: {reason}')
    return 'dls', '; '.join(reasons)


def _yaw_three_pitch(model: ArmModel) -> bool:
    """True when ``analytic`` serves ``model`` as yaw + three pitch, not yaw + two pitch."""
    from arm_kinematics.ik.closed_form.yaw_two_pitch import AnalyticSolver
    return bool(AnalyticSolver.applicability(model))

