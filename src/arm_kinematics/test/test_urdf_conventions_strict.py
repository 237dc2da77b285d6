"""Other tools' URDF limit conventions (SolidWorks' all-zero ``<limit>``, pybullet's
``lower > upper``) apply only when every attribute they read is written in the file; their
warnings say what was assumed and how to write the real limits; ``strict`` (an arm
configuration's ``strict_urdf``, ``Arm.from_urdf(strict=True)``) refuses them instead.
"""

from __future__ import annotations

import math

import pytest

from arm_kinematics.arm import ArmConfig, ArmConfigError, load_config_chain
from arm_kinematics.common.urdf_tree import read_tree
from arm_kinematics.model.arm_model import DescriptionError

SOLIDWORKS = '<limit lower="0" upper="0" effort="0" velocity="0"/>'
PYBULLET = '<limit lower="1" upper="-1" effort="1" velocity="2"/>'


def urdf(limit: str, kind: str = 'revolute') -> str:
    """A two-joint arm whose second joint ("j2") has ``limit``."""
    return f"""<robot name="conventions">
  <link name="base_link"/><link name="a"/><link name="b"/><link name="tool0"/>
  <joint name="j1" type="revolute"><parent link="base_link"/><child link="a"/>
    <origin xyz="0 0 0.3"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" velocity="1" effort="1"/></joint>
  <joint name="j2" type="{kind}"><parent link="a"/><child link="b"/>
    <origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>{limit}</joint>
  <joint name="tool" type="fixed"><parent link="b"/><child link="tool0"/>
    <origin xyz="0.2 0 0"/></joint>
</robot>"""


def joint2(text: str, strict: bool = False):
    tree = read_tree(text, strict)
    return tree.joints['j2'], tree.warnings


# ---------------------------------------------------------------- only when all is written
def test_a_lower_without_upper_is_not_pybullets_no_limit_but_refused():
    # Before: upper read as the default 0, lower 0.5 > 0 read as "no limit" -> continuous.
    with pytest.raises(DescriptionError) as error:
        joint2(urdf('<limit lower="0.5" velocity="1" effort="1"/>'))
    assert str(error.value).startswith('joint "j2": <limit> has no upper, and the URDF '
                                       'default of 0 makes lower 0.5 above upper 0: write ')
    with pytest.raises(DescriptionError, match='has no lower, and the URDF default'):
        joint2(urdf('<limit upper="-0.5" velocity="1" effort="1"/>'))


def test_a_missing_bound_that_leaves_a_range_reads_the_default_with_its_warning():
    joint, warnings = joint2(urdf('<limit upper="1.5" velocity="1" effort="1"/>'))
    assert (joint.kind, joint.lower, joint.upper) == ('revolute', 0.0, 1.5)
    assert warnings == ('joint "j2": <limit> has no lower; read as 0 (the URDF default), '
                        'limits [0, 1.5]; if they are not, write the real ones as <limit '
                        'lower=".." upper=".." velocity=".." effort="..">, or '
                        'type="continuous" for a joint that turns without end',)


@pytest.mark.parametrize('limit', [
    '<limit lower="0" upper="0" velocity="0"/>',           # effort not written
    '<limit lower="0" upper="0" effort="0"/>',             # velocity not written
    '<limit upper="0" effort="0" velocity="0"/>',          # lower not written
    '<limit effort="0" velocity="0"/>',                    # neither bound written
])
def test_solidworks_not_set_needs_all_four_zeros_written(limit):
    joint, warnings = joint2(urdf(limit))
    assert joint.kind == 'revolute' and joint.lower == joint.upper == 0.0   # locked, as read
    assert not any('not set' in line for line in warnings)


def test_the_conventions_warn_what_was_assumed_and_how_to_state_the_limits():
    joint, warnings = joint2(urdf(SOLIDWORKS))
    assert joint.kind == 'continuous' and math.isinf(joint.upper)
    assert warnings == ('joint "j2": <limit lower="0" upper="0" effort="0" velocity="0"> (an '
                        'exporter\'s "not set") read as a continuous joint: assumed no '
                        "position limit and the default speed (SolidWorks' convention); to "
                        'state its limits write the real ones as <limit lower=".." upper=".." '
                        'velocity=".." effort="..">, or type="continuous" for a joint that '
                        'turns without end',)
    joint, warnings = joint2(urdf(PYBULLET))
    assert joint.kind == 'continuous' and joint.velocity == 2.0
    assert warnings[0].startswith('joint "j2": lower limit 1 is above upper limit -1; read as '
                                  '"no limit" (pybullet\'s convention): a continuous joint is '
                                  'assumed; to state its limits write the real ones as <limit')


# ---------------------------------------------------------------- strict
@pytest.mark.parametrize('limit, words', [
    (SOLIDWORKS, '(an exporter\'s "not set") is refused (strict URDF reading): write the '
                 'real ones'),
    (PYBULLET, 'lower limit 1 is above upper limit -1 (pybullet\'s "no limit") and is '
               'refused (strict URDF reading): write the real ones'),
])
def test_strict_refuses_each_convention_naming_the_joint(limit, words):
    with pytest.raises(DescriptionError) as error:
        joint2(urdf(limit), strict=True)
    assert str(error.value).startswith('joint "j2": ') and words in str(error.value)
    # What the specification reads as written is not refused.
    joint, _ = joint2(urdf('<limit lower="-1" upper="1" velocity="1"/>'), strict=True)
    assert (joint.lower, joint.upper) == (-1.0, 1.0)


def test_an_arm_config_and_from_urdf_turn_the_conventions_off():
    text = urdf(SOLIDWORKS)
    assert load_config_chain(text, ArmConfig()).model.joints[1].kind == 'continuous'
    strict = ArmConfig.from_mapping({'strict_urdf': True})
    assert strict.strict_urdf and not ArmConfig().strict_urdf
    with pytest.raises(DescriptionError, match='strict URDF reading'):
        load_config_chain(text, strict)
    from arm_kinematics import Arm
    with pytest.raises(DescriptionError, match='strict URDF reading'):
        Arm.from_urdf(text, strict=True)
    with pytest.raises(DescriptionError, match='strict URDF reading'):
        Arm.from_urdf(text, config={'strict_urdf': True})
    # The argument wins over the configuration, both ways.
    assert Arm.from_urdf(text, config={'strict_urdf': True}, strict=False).dof == 2
    with pytest.raises(ArmConfigError, match='strict_urdf must be true or false'):
        ArmConfig.from_mapping({'strict_urdf': 'yes'})
