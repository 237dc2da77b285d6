"""The objectives of an IK request: each beats `first` on its own measure, over many
targets, on a redundant arm (numeric) and on a six-joint arm's branches (closed form)."""

from __future__ import annotations

import numpy as np
import pytest

from arm_kinematics.arm import load_arm
from arm_kinematics.description.arm_config import ArmConfig, ArmConfigError
from arm_kinematics.ik import objectives
from arm_kinematics.ik.request import IKDispatcher, IKRequest, PreparedRequest
from arm_kinematics.ik.result import ErrorCode, GoalType
from arm_kinematics.ik.solvers.base import SolveOptions, workspace_from_model
from arm_kinematics.model.arm_model import ArmModel
from arm_testing.real_arms import REAL_ARMS

TARGETS = 25
GOALS = {'panda': (GoalType.FULL_POSE, GoalType.POSITION), 'ur5': (GoalType.FULL_POSE,)}
SOLVER = {'panda': 'dls', 'ur5': 'closed_form'}
OTHERS = ('closest', 'manipulability', 'centred')


@pytest.fixture(scope='module')
def arms():
    cache = {}

    def get(label: str) -> tuple[ArmModel, IKDispatcher]:
        if label not in cache:
            spec = REAL_ARMS[label]
            model = ArmModel.from_urdf(spec.urdf(), spec.base, spec.tip)
            cache[label] = model, IKDispatcher(model, workspace_from_model(model),
                                               SOLVER[label])
        return cache[label]
    return get


def _answers(model, dispatcher, goal, objective, transforms, seeds):
    out = []
    options = SolveOptions(objective=objective)
    for transform, seed in zip(transforms, seeds, strict=True):
        prepared = PreparedRequest(dispatcher.default_solver, transform[:3, 3].copy(),
                                   transform[:3, :3] if goal == GoalType.FULL_POSE else None,
                                   goal, seed, options)
        answer = dispatcher.run(prepared)
        assert answer.result.success, answer.result.reason
        out.append(answer)
    return out


@pytest.mark.parametrize('label, goal', [(label, goal) for label, goals in GOALS.items()
                                         for goal in goals])
def test_each_objective_beats_first_on_its_own_measure(arms, label, goal):
    model, dispatcher = arms(label)
    rng = np.random.default_rng(11)
    transforms = model.fk_batch(model.random_configurations(TARGETS, rng))
    seeds = model.random_configurations(TARGETS, rng)
    first = _answers(model, dispatcher, goal, 'first', transforms, seeds)
    for objective in OTHERS:
        chosen = _answers(model, dispatcher, goal, objective, transforms, seeds)
        ours = np.array([a.objective_value for a in chosen])
        theirs = np.array([objectives.value(objective, model, a.result.q, seed)
                           for a, seed in zip(first, seeds, strict=True)])
        # The reported value is the measure at the answer.
        np.testing.assert_allclose(
            ours, [objectives.value(objective, model, a.result.q, seed)
                   for a, seed in zip(chosen, seeds, strict=True)], rtol=1e-9, atol=1e-12)
        better = theirs - ours if objective == 'closest' else ours - theirs
        # The first solution is among the candidates: never worse, better on average.
        assert better.min() >= -1e-9, (objective, better.min())
        assert better.mean() > 0.0, objective
        for answer, seed in zip(chosen, seeds, strict=True):
            assert answer.displacement == pytest.approx(
                objectives.displacement(model, answer.result.q, seed), abs=1e-12)


def test_measures_on_known_poses(arms):
    model, _ = arms('panda')
    middle = 0.5 * (model.lower + model.upper)
    assert objectives.centring(model, middle) == pytest.approx(1.0)
    assert objectives.centring(model, model.lower) == pytest.approx(0.0)
    assert objectives.displacement(model, middle, middle) == 0.0
    step = np.zeros(model.dof)
    step[0], step[1] = 0.3, 0.4
    assert objectives.displacement(model, middle + step, middle) == pytest.approx(0.5)
    assert objectives.manipulability(model, middle) > 0.0
    assert objectives.best('manipulability', model, [model.lower, middle], middle) == 1


def test_bad_objectives_are_refused_with_the_valid_names(arms):
    model, dispatcher = arms('panda')
    options, reason = SolveOptions(objective='fastest').validated()
    assert options is None and 'first, closest, manipulability, centred' in reason
    target = model.fk(0.5 * (model.lower + model.upper))[:3, 3].tolist()
    answer = dispatcher.solve(IKRequest(position=target, objective='nearest'), SolveOptions(),
                              np.zeros(model.dof))
    assert answer.result.code == ErrorCode.INVALID_INPUT
    assert "unknown objective 'nearest'" in answer.result.reason
    spec = REAL_ARMS['panda']
    with pytest.raises(ArmConfigError, match='ik.objective'):
        ArmConfig.from_mapping({'ik': {'objective': 'best'}})
    arm = load_arm(spec.urdf(), ArmConfig.from_mapping({'ik': {'objective': 'closest'}}),
                   spec.base, spec.tip)
    assert arm.config.section('ik')['objective'] == 'closest'
