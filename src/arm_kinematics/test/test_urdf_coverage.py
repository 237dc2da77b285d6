"""URDF coverage of the model: prismatic joints, trees, mimic joints, and broken URDFs that
get one clear error naming the element.

The rail arm (test/urdf/rail_arm.urdf) is a yaw + two-pitch arm on a 1 m linear rail, with a
camera off the base and a gripper whose right finger mimics the left one, outside the chain.
"""

from __future__ import annotations

from pathlib import Path
import re

import numpy as np
import pytest

from arm_kinematics.arm import load_arm
from arm_kinematics.ik.request import IKRequest
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_kinematics.model.arm_model import ArmModel, DescriptionError

RAIL = (Path(__file__).parent / 'urdf' / 'rail_arm.urdf').read_text(encoding='utf-8')


@pytest.fixture(scope='module')
def rail():
    return load_arm(RAIL, None, 'world', 'tool0')


def _numeric_jacobian(model: ArmModel, q: np.ndarray, step: float = 1e-7) -> np.ndarray:
    columns = []
    base = model.fk(q)
    for index in range(model.dof):
        moved = q.copy()
        moved[index] += step
        pose = model.fk(moved)
        linear = (pose[:3, 3] - base[:3, 3]) / step
        delta = pose[:3, :3] @ base[:3, :3].T
        angular = np.array([delta[2, 1] - delta[1, 2], delta[0, 2] - delta[2, 0],
                            delta[1, 0] - delta[0, 1]]) / (2.0 * step)
        columns.append(np.concatenate([linear, angular]))
    return np.array(columns).T


def test_a_prismatic_joint_in_the_chain(rail):
    model = rail.model
    assert model.joint_names == ('rail', 'yaw', 'shoulder', 'elbow')
    assert model.prismatic.tolist() == [True, False, False, False]
    assert not model.wraps[0]
    # Along the rail the whole arm translates by q (metres), nothing turns.
    zero, slid = model.fk(np.zeros(4)), model.fk(np.array([0.3, 0.0, 0.0, 0.0]))
    np.testing.assert_allclose(slid[:3, 3] - zero[:3, 3], [0.3, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(slid[:3, :3], zero[:3, :3], atol=1e-12)
    rng = np.random.default_rng(1)
    for q in model.random_configurations(10, rng):
        np.testing.assert_allclose(model.jacobian(q), _numeric_jacobian(model, q), atol=1e-5)
        # The kernel (single poses) and the batch path (many poses) agree.
        np.testing.assert_allclose(model.frames_batch(np.array([q, q]))[0, -1], model.fk(q),
                                   atol=1e-12)
        points = model.joint_points(np.tile(q, (12, 1)))[0]
        origins, _, tip = model.joint_origins_and_axes(q)
        np.testing.assert_allclose(points[:-1], origins, atol=1e-12)
        np.testing.assert_allclose(points[-1], tip, atol=1e-12)


def test_only_dls_serves_a_chain_with_a_slide(rail):
    dispatcher = rail.dispatcher()
    assert rail.default_solver == 'dls'
    for name in ('analytic', 'closed_form', 'ccd'):
        assert 'prismatic joint(s) rail' in dispatcher.solver_reason(name)


def test_dls_uses_the_rail_to_reach_further(rail):
    model = rail.model
    rng = np.random.default_rng(4)
    targets = model.fk_batch(model.random_configurations(20, rng))[:, :3, 3]
    # Out past the arm's own 0.7 m: only reachable by sliding.
    targets = np.vstack([targets, [[1.1, 0.0, 0.4]]])
    tips = model.fk_batch(model.random_configurations(4000, rng))[:, :3, 3]
    assert np.linalg.norm(tips - rail.workspace.shoulder, axis=1).max() <= \
        rail.workspace.max_reach
    dispatcher = rail.dispatcher()
    for target in targets:
        answer = dispatcher.solve(IKRequest(position=target.tolist()),
                                  SolveOptions(timeout=2.0), rail.home)
        assert answer.result.success, (target, answer.result.reason)
        assert model.within_limits(answer.result.q)
        assert np.linalg.norm(model.fk(answer.result.q)[:3, 3] - target) < 1e-4


def test_joints_outside_the_chain_are_left_alone(rail):
    # The camera and the gripper (with its mimic finger) hang off the tree, not the chain.
    assert 'finger_left_joint' not in rail.model.joint_names
    with pytest.raises(DescriptionError, match='no movable joint'):
        ArmModel.from_urdf(RAIL, 'world', 'camera')   # a fixed branch has nothing to move


def test_a_mimic_joint_inside_the_chain_whose_leader_is_outside_is_fixed_and_named():
    # finger_right_joint follows finger_left_joint, which is not in this chain: the finger
    # stays where its leader rests (0), as the executor publishes it.
    model = ArmModel.from_urdf(RAIL, 'world', 'finger_right')
    assert model.joint_names == ('rail', 'yaw', 'shoulder', 'elbow')
    assert any('"finger_right_joint" follows "finger_left_joint", outside the chain' in note
               for note in model.notes), model.notes


def _broken(old: str, new: str) -> str:
    assert old in RAIL
    return RAIL.replace(old, new, 1)


@pytest.mark.parametrize(('urdf', 'words'), [
    (_broken('<child link="turret"/>', '<child link="carriage"/>'), 'link "carriage" has two '
     'parents'),
    (_broken('<axis xyz="0 0 1"/>', '<axis xyz="0 0 0"/>'), 'joint "yaw" has a degenerate '
     'axis'),
    (_broken('<axis xyz="0 0 1"/>', '<axis xyz="0 nan 1"/>'), 'joint "yaw" has a degenerate'),
    (_broken('<origin xyz="0 0 0.2" rpy="0 0 0"/>', '<origin xyz="0 0 inf" rpy="0 0 0"/>'),
     'joint "yaw": <origin> xyz="0 0 inf" is not 3 finite numbers'),
    # (A revolute joint's lower > upper is pybullet's "no limit": test_urdf_other_tools.)
    (_broken('<limit lower="-0.5" upper="0.5" velocity="0.3" effort="100"/>',
             '<limit lower="0.5" upper="-0.5" velocity="0.3" effort="100"/>'),
     'joint "rail": lower limit 0.5 is not below'),
    (_broken('<limit lower="-0.5" upper="0.5" velocity="0.3" effort="100"/>', ''),
     'prismatic joint "rail" has no <limit>'),
    (_broken('type="prismatic">\n    <parent link="world"/>',
             'type="floating">\n    <parent link="world"/>'), 'joint "rail" is floating'),
    (_broken('<mimic joint="finger_left_joint"', '<mimic joint="no_such_joint"'),
     'mimics unknown joint "no_such_joint"'),
    (RAIL, 'is "tool0" below "camera"'),
])
def test_a_broken_urdf_gets_one_clear_error(urdf, words):
    base = 'camera' if words.startswith('is "tool0"') else 'world'
    with pytest.raises(DescriptionError) as raised:
        ArmModel.from_urdf(urdf, base, 'tool0')
    assert words in str(raised.value), str(raised.value)


def test_a_cycle_is_named_not_followed_for_ever():
    cyclic = _broken('<parent link="world"/><child link="carriage"/>',
                     '<parent link="turret"/><child link="carriage"/>')
    with pytest.raises(DescriptionError, match=re.escape('cycle')):
        ArmModel.from_urdf(cyclic, 'world', 'tool0')


def test_passive_joints_ride_along_with_the_chain(rail):
    from arm_kinematics.description.passive_joints import PassiveJoints
    passive = PassiveJoints.of(rail.model)
    assert passive.names == ('finger_left_joint', 'finger_right_joint')
    # The left finger rests at 0 (inside its [0, 0.04] m); the right one mimics it.
    assert passive.positions([0.2, 0.1, 0.3, -0.4]) == [0.0, 0.0]
    shifted = PassiveJoints(passive.names, {'finger_left_joint': 0.03}, passive.mimics,
                            passive.chain)
    assert shifted.positions([0.0] * 4) == [0.03, 0.03]
    assert passive.velocities([0.1, 0.2, 0.3, 0.4]) == [0.0, 0.0]
