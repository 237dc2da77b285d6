"""Batch IK (``PathIK.batch``, motion/batch_ik.py) on the bundled arms, without ROS: each
answer the one-by-one answer, and the batch's size limit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arm_kinematics.arm import Arm, load_arm
from arm_kinematics.description.bundled import expand_xacro, load_arm_config
from arm_kinematics.ik.request import IKRequest
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_kinematics.motion.batch_ik import BatchTooLargeError, MAX_BATCH
from arm_kinematics.motion.path_ik import PathIK

OPTIONS = SolveOptions()


def _bundled(name: str) -> Arm:
    return load_arm(expand_xacro(name), load_arm_config(name))


@pytest.fixture(scope='module')
def pointer3() -> Arm:
    return _bundled('pointer3')


def _path_ik(arm: Arm) -> PathIK:
    return PathIK(arm.dispatcher(), arm.safety)


def _targets(arm: Arm, count: int, seed: int) -> list[IKRequest]:
    rng = np.random.default_rng(seed)
    q = arm.model.random_configurations(count, rng)
    points = arm.model.fk_batch(q)[:, :3, 3]
    points[::7] *= 3.0                     # some out of reach
    requests = [IKRequest(position=p.tolist()) for p in points]
    requests[3] = IKRequest(position=(math.nan, 0.0, 0.0))
    requests[5] = IKRequest(position=(0.5, 0.0, 0.5), branch='elbow_down')
    return requests


def _same(one, other) -> None:
    assert one.result.code == other.result.code
    assert one.result.reason == other.result.reason
    assert one.result.branch == other.result.branch
    assert one.solver == other.solver
    if one.result.q is None:
        assert other.result.q is None
    else:
        np.testing.assert_allclose(one.result.q, other.result.q, atol=1e-12)
        np.testing.assert_allclose(one.result.tip_position, other.result.tip_position,
                                   atol=1e-12)
        assert one.condition_number == pytest.approx(other.condition_number, rel=1e-9)


@pytest.mark.parametrize('name', ['manipulator3d', 'pointer3', 'six_axis'])
def test_batch_answers_equal_one_by_one_answers(name):
    arm = _bundled(name)
    path_ik = _path_ik(arm)
    requests = _targets(arm, 60, 4)
    batch = path_ik.batch(requests, OPTIONS, arm.home)
    dispatcher = arm.dispatcher()
    single = [dispatcher.solve(request, OPTIONS, arm.home) for request in requests]
    assert len(batch) == len(requests)
    for one, other in zip(batch, single, strict=True):
        _same(one, other)
    assert any(answer.result.success for answer in batch)
    assert any(not answer.result.success for answer in batch)


def test_a_batch_over_the_limit_is_refused(pointer3):
    requests = [IKRequest(position=(1.0, 0.0, 0.9))] * (MAX_BATCH + 1)
    with pytest.raises(BatchTooLargeError, match=str(MAX_BATCH)):
        _path_ik(pointer3).batch(requests, OPTIONS, pointer3.home)
