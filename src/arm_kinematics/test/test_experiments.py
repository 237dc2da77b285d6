"""The damping sweep reproduces the reference experiment's trade-off."""

from __future__ import annotations

import numpy as np
import pytest

from arm_kinematics.analysis import experiments
from arm_kinematics.ik.solvers.base import workspace_from_model


@pytest.fixture(scope='module')
def sweep(load_arm):
    model = load_arm('six_axis')
    return {row.damping: row for row in experiments.damping_sweep(model)}


def test_setup_is_nearly_stretched_and_just_inside_reach(load_arm):
    model = load_arm('six_axis')
    q0, target = experiments.sweep_setup(model)
    workspace = workspace_from_model(model)
    assert np.count_nonzero(q0) == 1 and 0.0 < q0.max() <= 0.1
    assert experiments.elbow_index(model) == model.joint_names.index('elbow_pitch')
    relative = target - workspace.shoulder
    assert np.linalg.norm(relative) == pytest.approx(0.985 * workspace.max_reach)
    assert np.degrees(np.arccos(relative[2] / np.linalg.norm(relative))) == pytest.approx(10.0)
    tip = model.fk(q0)[:3, 3] - workspace.shoulder
    assert np.linalg.norm(tip) > 0.999 * workspace.max_reach   # the start is near-singular


def test_rows_cover_every_lambda(sweep):
    assert sorted(sweep) == sorted(experiments.DEFAULT_LAMBDAS)
    for row in sweep.values():
        assert row.iterations >= 1 and np.isfinite(row.final_error)
        assert row.converged == (row.final_error <= 1e-4)


def test_small_damping_takes_large_steps(sweep):
    assert sweep[0.001].max_joint_step > sweep[0.3].max_joint_step
    # Near the singularity the undamped step is of the order of a radian.
    assert sweep[0.001].max_joint_step > 1.0
    steps = [sweep[damping].max_joint_step for damping in sorted(sweep)]
    assert steps == sorted(steps, reverse=True)


def test_large_damping_converges_slowly_or_leaves_a_residual(sweep):
    large, small = sweep[0.3], sweep[0.001]
    assert large.iterations > small.iterations or large.final_error > small.final_error


def test_large_damping_residual_with_few_iterations(load_arm):
    # With the iteration budget of the small-λ run, λ = 0.3 is still far from the target.
    model = load_arm('six_axis')
    small, large = experiments.damping_sweep(model, (0.001, 0.3), max_iterations=6)
    assert small.converged and not large.converged
    assert large.final_error > 10 * small.final_error


def test_format_and_command_line(load_arm, capsys, monkeypatch):
    rows = experiments.damping_sweep(load_arm('six_axis'), (0.01,))
    text = experiments.format_sweep(rows)
    assert 'lambda' in text and '0.01' in text
    monkeypatch.setattr('arm_kinematics.description.bundled.load_model',
                        lambda arm, mappings=None: load_arm(arm))
    assert experiments.main(['--lambdas', '0.001', '0.3']) == 0
    printed = capsys.readouterr().out
    assert 'max joint step' in printed and len(printed.strip().splitlines()) == 4


def test_tool_down_configurations(load_arm):
    model = load_arm('six_axis')
    configurations = experiments.tool_down_configurations(model, 20, np.random.default_rng(1))
    assert configurations.shape == (20, 6)
    for q in configurations:
        assert model.within_limits(q)
        np.testing.assert_allclose(model.fk(q)[:3, 2], [0.0, 0.0, -1.0], atol=1e-9)
