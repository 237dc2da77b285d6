"""The teleoperation demo's scripted hand moves the simulated leader as a hand could, however
late the demo process runs (a fresh clone's `make test` held the follower for a "jump" of
0.074 rad in 2.5 ms: the hand had followed the wall clock through a 100 ms stall)."""

from __future__ import annotations

from arm_bringup.teleop_demo import hand_angles, hand_script
from arm_servos.teleop import TeleopConfig


def test_each_update_of_the_hand_moves_less_than_the_teleops_jump_margin():
    script = [hand_angles(0.0)] + hand_script(6.0, 0.02)
    largest = max(abs(b - a) for before, after in zip(script, script[1:])
                  for a, b in zip(before, after))
    assert largest < TeleopConfig().jump_margin
    assert len(script) == 301 and script[-1] == hand_angles(6.0)
