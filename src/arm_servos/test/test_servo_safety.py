"""Every rule of the bridge's safety core (arm_servos.safety), without a bus."""

from __future__ import annotations

import math

import pytest

from arm_servos.bus import ServoState
from arm_servos.calibration import JointCalibration
from arm_servos.safety import SafetyConfig, ServoSafety

TPR = 4096 / (2 * math.pi)
JOINTS = (JointCalibration('shoulder', 1, 'sts3215', TPR, 1, 2048, -1.5, 1.5),
          JointCalibration('elbow', 2, 'sts3215', TPR, -1, 2000, -1.0, 2.0))
VELOCITY = {'shoulder': 2.0, 'elbow': 4.0}


def _states(shoulder: float = 0.0, elbow: float = 0.0, errors: dict | None = None,
            silent: tuple = ()) -> dict[int, ServoState | None]:
    errors = errors or {}
    out: dict[int, ServoState | None] = {}
    for joint, angle in zip(JOINTS, (shoulder, elbow)):
        if joint.servo_id in silent:
            out[joint.servo_id] = None
            continue
        out[joint.servo_id] = ServoState(joint.servo_id, joint.to_ticks(angle), 0.0, 0.0, 7.4,
                                         30.0, 32 if joint.servo_id in errors else 0,
                                         errors.get(joint.servo_id, ()))
    return out


def _enabled(config: SafetyConfig | None = None, shoulder=0.2, elbow=-0.3) -> ServoSafety:
    safety = ServoSafety(JOINTS, VELOCITY, config)
    safety.observe(_states(shoulder, elbow), 0.0)
    assert safety.enable(0.0).ok
    return safety


def _angles(goals: dict[int, int]) -> dict[str, float]:
    return {j.name: j.to_radians(goals[j.servo_id]) for j in JOINTS}


def test_torque_stays_off_and_nothing_is_written_until_enabled():
    safety = ServoSafety(JOINTS, VELOCITY)
    safety.observe(_states(0.4, 0.1), 0.0)
    for t in (0.0, 0.01, 1.0):
        actions = safety.step(t)
        assert actions.torque is None and actions.goals is None
    refused = safety.command({'shoulder': 0.5}, 0.02)
    assert not refused.ok and 'not enabled: the arm is disabled' in refused.message


def test_enable_writes_the_measured_position_as_the_goal_then_torque_on():
    safety = ServoSafety(JOINTS, VELOCITY)
    safety.observe(_states(0.4, -0.25), 0.0)
    outcome = safety.enable(0.0)
    assert outcome.ok and 'measured' in outcome.message
    actions = safety.step(0.01)
    assert actions.torque is True
    assert actions.goals == {1: JOINTS[0].to_ticks(0.4), 2: JOINTS[1].to_ticks(-0.25)}
    assert safety.step(0.5).goals == actions.goals       # nothing moves without a command


def test_enable_is_refused_naming_a_silent_servo_or_one_in_error():
    safety = ServoSafety(JOINTS, VELOCITY)
    refused = safety.enable(0.0)
    assert not refused.ok and 'servo 1 (shoulder)' in refused.message
    safety.observe(_states(silent=(2,)), 0.0)
    assert 'no reading from servo 2 (elbow)' in safety.enable(0.0).message
    safety.observe(_states(errors={2: ('overheating',)}), 0.01)
    refused = safety.enable(0.01)
    assert not refused.ok and 'servo 2 (elbow) reports overheating' in refused.message
    assert safety.step(0.02).torque is None


def test_a_cycle_or_two_lost_on_a_busy_bus_does_not_refuse_enable():
    # Silent means silent_cycles cycles without an answer, for enable as for the fault rule:
    # a servo that missed the last cycle is held at its last answer, with its error bits.
    config = SafetyConfig(silent_cycles=3)
    safety = ServoSafety(JOINTS, VELOCITY, config)
    safety.observe(_states(0.4, -0.25), 0.0)
    safety.observe(_states(silent=(1, 2)), 0.01)
    assert safety.enable(0.01).ok
    assert safety.step(0.02).goals == {1: JOINTS[0].to_ticks(0.4), 2: JOINTS[1].to_ticks(-0.25)}
    quiet = ServoSafety(JOINTS, VELOCITY, config)
    quiet.observe(_states(0.4, -0.25), 0.0)
    for k in range(3):
        quiet.observe(_states(silent=(2,)), 0.01 * (k + 1))
    refused = quiet.enable(0.04)
    assert not refused.ok and 'no reading from servo 2 (elbow)' in refused.message
    hot = ServoSafety(JOINTS, VELOCITY, config)
    hot.observe(_states(errors={2: ('overheating',)}), 0.0)
    hot.observe(_states(silent=(2,)), 0.01)
    refused = hot.enable(0.01)
    assert not refused.ok and 'servo 2 (elbow) reports overheating' in refused.message


def test_the_first_motion_starts_from_the_measured_pose_at_the_approach_velocity():
    safety = _enabled(SafetyConfig(approach_velocity=0.5), shoulder=0.2)
    safety.step(0.0)
    assert safety.command({'shoulder': 1.2}, 0.0, from_trajectory=True).ok
    first = _angles(safety.step(0.1).goals)
    assert first['shoulder'] == pytest.approx(0.2 + 0.05, abs=2e-3)   # 0.5 rad/s × 0.1 s
    t = 0.1
    while _angles(safety.step(t).goals)['shoulder'] < 1.2 - 2e-3 and t < 10:
        t += 0.1
    assert t == pytest.approx(2.0, abs=0.15)       # 1 rad at 0.5 rad/s
    safety.step(t + 0.1)                              # caught up: the first motion is over
    assert safety.command({'shoulder': 0.2}, t + 0.1, from_trajectory=True).ok
    after = _angles(safety.step(t + 0.2).goals)     # now at the URDF limit
    assert after['shoulder'] == pytest.approx(1.2 - 0.2, abs=2e-3)    # 2 rad/s × 0.1 s


def test_a_configured_cap_below_the_urdf_limit_wins():
    safety = ServoSafety(JOINTS, VELOCITY, SafetyConfig(velocity_cap=1.0))
    assert safety.max_velocity == {'shoulder': 1.0, 'elbow': 1.0}
    with pytest.raises(ValueError, match='elbow: no velocity limit'):
        ServoSafety(JOINTS, {'shoulder': 1.0, 'elbow': 0.0})


def test_a_command_outside_the_calibrated_range_is_refused_naming_the_joint():
    safety = _enabled()
    refused = safety.command({'elbow': 2.5}, 0.1)
    assert not refused.ok
    assert refused.message == ('elbow: 2.5000 rad is outside the calibrated range '
                               '[-1.0000, 2.0000]')
    assert safety.target['elbow'] == pytest.approx(-0.3, abs=2e-3)   # the old target kept


def test_clipping_only_when_asked_and_then_said():
    safety = _enabled()
    clipped = safety.command({'elbow': 2.5, 'shoulder': -9.0}, 0.1, clip=True)
    assert clipped.ok and clipped.message.endswith('shoulder, elbow')
    assert safety.target == {'shoulder': -1.5, 'elbow': 2.0}
    assert _enabled(SafetyConfig(clip=True)).command({'elbow': 3.0}, 0.1).ok


@pytest.mark.parametrize('positions, words', [
    ({'elbow': math.nan}, 'elbow: position nan is not a finite number'),
    ({'elbow': math.inf}, 'elbow: position inf'),
    ({'wrist': 0.0}, "unknown joints ['wrist']"),
])
def test_bad_commands_are_refused_with_the_reason(positions, words):
    refused = _enabled().command(positions, 0.1)
    assert not refused.ok and words in refused.message


def test_a_stream_that_stops_holds_the_last_measured_position():
    safety = _enabled(SafetyConfig(command_timeout=0.2, approach_velocity=10.0))
    safety.command({'shoulder': 1.4}, 0.0)
    safety.step(0.05)
    safety.observe(_states(0.6, -0.3), 0.1)      # the arm is on its way
    safety.step(0.1)
    goals = safety.step(0.35).goals              # no command for 0.35 s > 0.2 s
    assert _angles(goals)['shoulder'] == pytest.approx(0.6, abs=2e-3)
    assert safety.target['shoulder'] == pytest.approx(0.6, abs=2e-3)
    assert _angles(safety.step(0.5).goals)['shoulder'] == pytest.approx(0.6, abs=2e-3)


def test_a_running_trajectory_is_not_a_stopped_stream():
    safety = _enabled(SafetyConfig(command_timeout=0.2, approach_velocity=10.0))
    safety.command({'shoulder': 1.0}, 0.0, from_trajectory=True)
    safety.step(0.0)
    assert _angles(safety.step(0.3).goals)['shoulder'] > 0.7


def test_estop_turns_torque_off_next_cycle_and_nothing_is_written_after():
    safety = _enabled()
    safety.step(0.0)
    safety.command({'shoulder': 1.0}, 0.01)
    assert safety.estop('e-stop service').ok
    actions = safety.step(0.02)
    assert actions.torque is False and actions.goals is None
    for t in (0.03, 0.5, 5.0):
        assert safety.step(t) == type(actions)(None, None)
    assert not safety.command({'shoulder': 0.0}, 0.6).ok
    assert 'e-stop is latched' in safety.enable(0.6).message
    assert safety.reset().ok and safety.mode == 'disabled'
    safety.observe(_states(0.3, 0.0), 0.7)
    assert safety.enable(0.7).ok


@pytest.mark.parametrize('policy', ['hold', 'torque_off'])
def test_an_error_bit_stops_the_arm_as_configured_and_names_the_servo(policy):
    safety = _enabled(SafetyConfig(on_fault=policy))
    safety.step(0.0)
    safety.command({'shoulder': 1.0}, 0.0, from_trajectory=True)
    safety.step(0.1)
    reason = safety.observe(_states(0.35, -0.3, errors={1: ('overload',)}), 0.11)
    assert reason == 'servo 1 (shoulder) reports overload'
    assert safety.mode == 'fault' and safety.fault == reason and not safety.trajectory_active
    actions = safety.step(0.12)
    if policy == 'hold':
        assert actions.torque is None
        assert _angles(actions.goals)['shoulder'] == pytest.approx(0.35, abs=2e-3)
    else:
        assert actions.torque is False and actions.goals is None
    assert safety.step(0.13).goals is None                   # written once, then silence
    refused = safety.command({'shoulder': 0.0}, 0.14)
    assert not refused.ok and 'overload' in refused.message


def test_one_missed_reply_is_not_a_fault_but_a_silent_servo_is():
    safety = _enabled(SafetyConfig(silent_cycles=3))
    assert safety.observe(_states(silent=(2,)), 0.01) == ''
    assert safety.observe(_states(), 0.02) == ''
    for t in (0.03, 0.04):
        assert safety.observe(_states(silent=(2,)), t) == ''
    assert safety.observe(_states(silent=(2,)), 0.05) == \
        'servo 2 (elbow) not answering for 3 cycles'
    assert safety.mode == 'fault'


def test_after_the_adapter_comes_back_the_arm_restarts_from_where_it_is():
    safety = _enabled(SafetyConfig(approach_velocity=0.5))
    safety.step(0.0)
    reason = safety.bus_lost('serial adapter on /dev/ttyACM0 lost: EIO')
    assert reason == 'bus: serial adapter on /dev/ttyACM0 lost: EIO'
    assert 'not answering' not in safety.fault
    assert 'cannot enable' in safety.enable(0.5).message      # no reading yet
    safety.observe(_states(-0.4, 0.5), 1.0)                   # it sagged while unpowered
    assert safety.mode == 'fault'                             # no recovery by itself
    assert safety.enable(1.0).ok
    goals = _angles(safety.step(1.01).goals)
    assert goals == pytest.approx({'shoulder': -0.4, 'elbow': 0.5}, abs=2e-3)


@pytest.mark.parametrize('field, value, words', [
    ('approach_velocity', 0.0, 'approach_velocity must be > 0'),
    ('command_timeout', math.nan, 'command_timeout must be > 0'),
    ('velocity_cap', -1.0, 'velocity_cap must be > 0'),
    ('silent_cycles', 0, 'silent_cycles must be an integer >= 1'),
    ('on_fault', 'panic', "on_fault must be one of ('hold', 'torque_off')"),
])
def test_bad_settings_are_refused_with_the_reason(field, value, words):
    with pytest.raises(ValueError, match=words.replace('(', r'\(').replace(')', r'\)')):
        SafetyConfig(**{field: value})


def test_a_trajectory_outside_the_range_or_too_fast_is_refused_naming_joint_and_point():
    safety = _enabled(shoulder=0.0, elbow=0.0)
    assert safety.trajectory_reason(('shoulder', 'elbow'), [(1.0, (0.5, 0.5)),
                                                            (2.0, (1.0, 1.9))]) == ''
    assert safety.trajectory_reason(('elbow', 'shoulder'), [(1.0, (0.5, 0.0)),
                                                            (2.0, (2.4, 0.0))]) == \
        'elbow: point 1 at 2.4000 rad is outside the calibrated range [-1.0000, 2.0000]'
    # shoulder's limit is 2 rad/s: 1 rad in 0.25 s from the setpoint is 4 rad/s.
    assert safety.trajectory_reason(('shoulder', 'elbow'), [(0.25, (1.0, 0.0))]) == \
        'shoulder: 4.000 rad/s to point 0 is above its velocity limit 2.000 rad/s'
    clipping = _enabled(SafetyConfig(clip=True))
    assert clipping.trajectory_reason(('elbow',), [(5.0, (2.4,))]) == ''


def _caught_up(safety: ServoSafety, target: float, t: float) -> float:
    """Command shoulder to ``target`` and step until the setpoint is there; returns the time."""
    assert safety.command({'shoulder': target}, t).ok
    while abs(safety.setpoint['shoulder'] - target) > 1e-9 and t < 20:
        t += 0.05
        assert safety.command({'shoulder': target}, t).ok
        safety.step(t)
    return t


@pytest.mark.parametrize('hold', ['stream stopped on its way', 'hold request', 'cancelled goal'])
def test_after_any_hold_the_next_motion_starts_at_the_approach_velocity(hold):
    # M1: a teleop resume (or a ~/commands stream that comes back) 1.2 rad away from where
    # the arm held must not move at the URDF speed (RELIABILITY 21: no lurch).
    safety = _enabled(SafetyConfig(approach_velocity=0.5, command_timeout=0.2), shoulder=0.0)
    safety.step(0.0)
    t = _caught_up(safety, 0.1, 0.0)          # the first motion is over: full speed now
    if hold == 'stream stopped on its way':
        safety.command({'shoulder': 1.0}, t)
        safety.step(t + 0.05)
        safety.observe(_states(0.15, -0.3), t + 0.05)
        t += 0.5
        safety.step(t)
    elif hold == 'hold request':
        safety.observe(_states(0.1, -0.3), t)
        assert safety.hold(t).ok
    else:
        safety.command({'shoulder': 1.0}, t, from_trajectory=True)
        safety.step(t + 0.05)
        safety.end_trajectory(t + 0.05, hold=True)
        t += 0.05
    start = safety.setpoint['shoulder']
    assert safety.command({'shoulder': start + 1.2}, t + 0.01).ok
    moved = _angles(safety.step(t + 0.11).goals)['shoulder'] - start
    assert moved == pytest.approx(0.5 * 0.11, abs=3e-3)      # not 2 rad/s × 0.11 s


def test_a_stream_that_stopped_at_its_target_keeps_full_speed():
    # Not a hold (nothing to stop): a gripper goal or a step command later is not slowed.
    safety = _enabled(SafetyConfig(approach_velocity=0.5, command_timeout=0.2), shoulder=0.0)
    safety.step(0.0)
    t = _caught_up(safety, 0.1, 0.0) + 0.5
    safety.step(t)
    assert safety.command({'shoulder': 1.0}, t + 0.01).ok
    assert _angles(safety.step(t + 0.11).goals)['shoulder'] == pytest.approx(0.1 + 2.0 * 0.11,
                                                                            abs=3e-3)


def test_a_hold_request_is_refused_unless_enabled():
    safety = ServoSafety(JOINTS, VELOCITY)
    refused = safety.hold(0.0)
    assert not refused.ok and 'not enabled' in refused.message
