"""MotionRunner, the executor's state machine, without ROS: owners, holds, the watchdog."""

from __future__ import annotations

import numpy as np
import pytest

from arm_kinematics.motion import laws
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.motion.runner import Mode, MotionRunner, Owner

NAMES = ('a', 'b')
START = np.array([0.0, 0.0])
GOAL = np.array([1.0, -0.5])


def _move(duration=1.0):
    return laws.joint_min_jerk(NAMES, START, GOAL, duration, 0.01)


def test_waiting_runner_publishes_nothing_until_given_a_pose():
    runner = MotionRunner(NAMES)
    tick = runner.tick(0.0)
    assert tick.q is None and tick.mode == Mode.WAITING and tick.changed
    runner.set_pose(START)
    tick = runner.tick(0.01)
    assert tick.q.tolist() == START.tolist() and tick.mode == Mode.IDLE
    assert not tick.stream and not tick.hold            # holding: no controller command


def test_a_trajectory_runs_to_its_end_and_finishes_after_the_tick():
    runner = MotionRunner(NAMES, START)
    owner = Owner('goal')
    assert runner.start(_move(), owner, 10.0) == (MotionCode.SUCCESS, '')
    first = runner.tick(10.0)
    assert first.mode == Mode.MOVING and first.stream and not first.hold
    middle = runner.tick(10.5)
    assert middle.q.tolist() == pytest.approx((START + 0.5 * (GOAL - START)).tolist())
    last = runner.tick(11.2)
    assert last.mode == Mode.IDLE and last.q.tolist() == GOAL.tolist()
    assert not owner.done.is_set()                     # not before the last tick is out
    last.finish()
    assert owner.done.is_set() and owner.outcome == MotionCode.SUCCESS
    assert owner.record[-1][1].tolist() == GOAL.tolist()


def test_stop_holds_where_the_motion_is_without_a_jump():
    runner = MotionRunner(NAMES, START)
    owner = Owner('goal')
    runner.start(_move(), owner, 0.0)
    before = runner.tick(0.40).q
    held = runner.stop(0.41, MotionCode.CANCELED, 'canceled', owner)
    assert owner.outcome == MotionCode.CANCELED and owner.done.is_set()
    assert np.abs(held - before).max() < 0.02          # where it was 10 ms later, no jump
    tick = runner.tick(0.42)
    assert tick.hold and tick.q.tolist() == held.tolist() and tick.mode == Mode.HOLDING
    assert not runner.tick(0.43).hold                  # one hold command, then nothing
    assert runner.tick(5.0).q.tolist() == held.tolist()


def test_a_late_stop_never_moves_back_in_time():
    runner = MotionRunner(NAMES, START)
    owner = Owner('goal')
    runner.start(_move(), owner, 0.0)
    published = runner.tick(0.60).q
    held = runner.stop(0.50, MotionCode.CANCELED, 'read its clock before the last tick')
    assert held.tolist() == published.tolist()


def test_a_new_start_preempts_the_owner():
    runner = MotionRunner(NAMES, START)
    first, second = Owner('first'), Owner('second')
    runner.start(_move(), first, 0.0)
    pose = runner.tick(0.3).q
    runner.stop(0.3, MotionCode.PREEMPTED, 'preempted by second')
    back = laws.joint_min_jerk(NAMES, pose, START, 1.0, 0.01)
    assert runner.start(back, second, 0.31)[0] == MotionCode.SUCCESS
    assert first.outcome == MotionCode.PREEMPTED
    far = laws.joint_min_jerk(NAMES, GOAL, START, 1.0, 0.01)
    code, reason = runner.start(far, Owner('third'), 0.32, tolerance=0.02)
    assert code == MotionCode.START_MISMATCH and 'from the commanded pose' in reason
    assert second.outcome is None                      # a refused start changes nothing


def test_emergency_stop_refuses_everything_until_reset():
    runner = MotionRunner(NAMES, START)
    owner = Owner('goal')
    runner.start(_move(), owner, 0.0)
    runner.tick(0.2)
    held = runner.emergency_stop(0.25, 'stop')
    assert owner.outcome == MotionCode.EMERGENCY_STOPPED
    assert runner.tick(0.26).hold and runner.mode == Mode.EMERGENCY_STOP
    assert runner.start(_move(), Owner('next'), 0.3)[0] == MotionCode.EMERGENCY_STOPPED
    assert runner.follow(laws.ExponentialFollow(None), Owner('f'), 0.3, 1.0)[0] == \
        MotionCode.EMERGENCY_STOPPED
    runner.stop(0.3, MotionCode.CANCELED, 'a stop does not end the emergency stop')
    assert runner.mode == Mode.EMERGENCY_STOP
    assert runner.reset() and runner.mode == Mode.HOLDING and not runner.reset()
    assert runner.tick(0.4).q.tolist() == held.tolist()


def _follow(runner, now, watchdog=0.3):
    smoothing = laws.ExponentialSmoothing(3.0, np.array([1.0, 1.0]), np.array([-3.0, -3.0]),
                                          np.array([3.0, 3.0]))
    law = laws.ExponentialFollow(smoothing)
    law.goal = GOAL
    owner = Owner('live target')
    assert runner.follow(law, owner, now, watchdog)[0] == MotionCode.SUCCESS
    return law, owner


def test_follow_moves_each_tick_and_the_watchdog_holds():
    runner = MotionRunner(NAMES, START)
    law, owner = _follow(runner, 0.0)
    previous = START
    for k in range(1, 21):
        runner.touch(k * 0.01)
        tick = runner.tick(k * 0.01)
        assert tick.point and tick.mode == Mode.FOLLOWING
        assert np.abs(tick.q - previous).max() <= 0.01 + 1e-12      # 1 rad/s cap
        previous = tick.q
    tick = runner.tick(0.2 + 0.31)                                    # stream stale
    assert tick.hold and tick.mode == Mode.HOLDING and owner.outcome == MotionCode.WATCHDOG
    assert runner.status()[1] == MotionCode.WATCHDOG
    assert runner.tick(1.0).q.tolist() == tick.q.tolist()


def test_follow_stops_at_an_unsafe_pose():
    runner = MotionRunner(NAMES, START, pose_check=lambda q: 'floor' if q[0] > 0.05 else '')
    _, owner = _follow(runner, 0.0, watchdog=10.0)
    for k in range(1, 200):
        tick = runner.tick(k * 0.01)
        if tick.mode == Mode.HOLDING:
            break
    assert owner.outcome == MotionCode.UNSAFE_PATH and 'floor' in owner.message
    assert tick.q[0] <= 0.05 and tick.hold
