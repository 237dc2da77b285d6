"""A chain of absurd size is refused in one line naming the limit; one at the limit loads,
and the work that grows with it at start-up (reading the tree, the reach bounds) is linear
or vectorised (issue 39: a 3000-joint chain once took minutes)."""

from __future__ import annotations

import pytest

from arm_kinematics.arm import ArmConfig, build_arm, load_config_chain
from arm_kinematics.common.log_line import brief_names
from arm_kinematics.ik.reach_bounds import reach_spheres
from arm_kinematics.model.arm_model import DescriptionError
from arm_kinematics.model.chain import MAX_CHAIN_JOINTS


def chain_urdf(joints: int) -> str:
    """A serial chain of ``joints`` revolute joints 1 cm apart, axes alternating z and y."""
    parts = ['<robot name="long">', '<link name="base"/>']
    for i in range(joints):
        parent = 'base' if i == 0 else f'l{i - 1}'
        axis = '0 1 0' if i % 2 else '0 0 1'
        parts.append(f'<link name="l{i}"/><joint name="j{i}" type="revolute">'
                     f'<parent link="{parent}"/><child link="l{i}"/>'
                     f'<origin xyz="0 0 0.01"/><axis xyz="{axis}"/>'
                     '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>')
    parts.append('</robot>')
    return '\n'.join(parts)


def test_a_chain_past_the_limit_is_refused_in_one_line():
    with pytest.raises(DescriptionError) as error:
        load_config_chain(chain_urdf(3000), ArmConfig(), '', '')
    words = str(error.value)
    assert '\n' not in words
    assert '3000 moving joints (j0, j1, j2, j3, j4, j5 and 2994 more)' in words
    assert f'at most {MAX_CHAIN_JOINTS} are served' in words and 'MAX_CHAIN_JOINTS' in words


def test_a_chain_at_the_limit_is_served():
    model = load_config_chain(chain_urdf(MAX_CHAIN_JOINTS), ArmConfig(), '', '').model
    assert model.dof == MAX_CHAIN_JOINTS
    arm = build_arm(model, ArmConfig(), '')
    # Joints 0 and 1 lie on the first (z) axis: their spheres are proven, the smallest the
    # second joint's, 1 cm shorter than the chain (joint 2 is off joint 1's y axis).
    assert arm.workspace.max_reach == pytest.approx(0.01 * (MAX_CHAIN_JOINTS - 2))
    assert [why for _, _, why in reach_spheres(model)] == [
        'from the base origin', 'from joint 0 (fixed)', 'from joint 1 (fixed)']


def test_brief_names_counts_the_rest():
    assert brief_names(['a', 'b']) == 'a, b'
    assert brief_names([f'j{i}' for i in range(9)], first=3) == 'j0, j1, j2 and 6 more'
