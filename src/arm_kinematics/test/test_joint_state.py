"""Reading the arm's joints out of a joint state (every subscriber of joint_states)."""

from __future__ import annotations

import math

import pytest

from arm_kinematics.common.joint_state import joint_order, positions_by_name

NAMES = ('a', 'b', 'c')


@pytest.mark.parametrize('names, positions, reason', [
    (['a', 'b', 'c'], [0.0, math.nan, 0.0], 'non-finite position of b'),
    (['a', 'b', 'c'], [math.inf, 0.0, -math.inf], 'non-finite position of a, c'),
    (['a', 'b', 'c'], [0.0, 0.0], '3 names but 2 positions'),
    (['a', 'b'], [0.0, 0.0], "missing joints c (the arm's joints: a, b, c)"),
    (['a', 'b', 'c', 'a'], [0.0, 0.0, 0.0, 1.0], 'joint a appears twice'),
    ([], [], "missing joints a, b, c (the arm's joints: a, b, c)"),
    (['a', 'b', 'c'], [0.0, 'x', 0.0], "positions are not numbers (could not convert string "
                                       "to float: 'x')"),
])
def test_bad_joint_states_are_refused_with_the_reason(names, positions, reason):
    q, why = positions_by_name(NAMES, names, positions)
    assert q is None and why == reason


def test_joint_states_in_any_order_with_other_joints():
    # Another device's joints may repeat or be NaN: they are not read.
    q, why = positions_by_name(NAMES, ['gripper', 'c', 'a', 'b', 'gripper'],
                               [math.nan, 3.0, 1.0, 2.0, 5.0])
    assert why == '' and q.tolist() == [1.0, 2.0, 3.0]
    q, why = positions_by_name(NAMES, ('c', 'b', 'a'), (3, 2, 1))    # tuples, integers
    assert why == '' and q.tolist() == [1.0, 2.0, 3.0] and q.dtype == float


@pytest.mark.parametrize('names, reason', [
    (['a', 'b', 'a'], "seed repeats joint name(s) 'a'"),
    (['', 'b', 'c', ''], "seed repeats joint name(s) ''"),
    (['a', 'b', 'x'], "seed joint names: unknown 'x'; missing c (the arm's joints: a, b, c)"),
    (['a', 'b'], "seed joint names: missing c (the arm's joints: a, b, c)"),
    (['a', 'b', 'c', 'gripper'], "seed joint names: unknown 'gripper' (the arm's joints: "
                                 "a, b, c)"),
])
def test_commands_must_name_exactly_the_arms_joints(names, reason):
    assert joint_order(NAMES, names, 'seed') == (None, reason)


def test_command_names_in_any_order_give_the_chain_order():
    assert joint_order(NAMES, ['c', 'a', 'b'], 'goal') == ([1, 2, 0], '')
