"""LeRobot calibration files as owners have them: the angle reported for every raw reading
equals what LeRobot reports, mistakes are refused naming the motor and the field.

The reference below is LeRobot's own normalisation, ported line for line (not rewritten from
memory) from huggingface/lerobot at commit 7427f31801f944f5ec9ce53cda02862ce7d1638b:
src/lerobot/motors/motors_bus.py, ``SerialMotorsBus._normalize``; ``apply_drive_mode`` is
True in src/lerobot/motors/feetech/feetech.py and False in dynamixel/dynamixel.py;
``model_resolution_table`` is 4096 for the sts3215 and the X series (feetech/tables.py,
dynamixel/tables.py); the SO-100/SO-101 and Koch configs put the gripper in RANGE_0_100 and
the other motors in DEGREES when ``use_degrees`` (robots/so_follower/so_follower.py,
robots/koch_follower/koch_follower.py).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from arm_servos.calibration import CalibrationError, urdf_joints
from arm_servos.lerobot import detect_protocol, from_lerobot, load_calibration

SO101_CHAIN = ('shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex', 'wrist_roll')
FILES = Path(__file__).resolve().parent / 'lerobot_calibrations'


def lerobot_normalize(val: int, norm_mode: str, calibration: dict, apply_drive_mode: bool,
                      max_res: int = 4096 - 1) -> float:
    """motors_bus.py ``_normalize`` for one motor (the loop body), at the commit above."""
    min_ = calibration['range_min']
    max_ = calibration['range_max']
    drive_mode = apply_drive_mode and calibration['drive_mode']
    if max_ == min_:
        raise ValueError('min and max are equal')
    bounded_val = min(max_, max(min_, val))
    if norm_mode == 'range_m100_100':
        norm = (((bounded_val - min_) / (max_ - min_)) * 200) - 100
        return -norm if drive_mode else norm
    if norm_mode == 'range_0_100':
        norm = ((bounded_val - min_) / (max_ - min_)) * 100
        return 100 - norm if drive_mode else norm
    if norm_mode == 'degrees':
        mid = (min_ + max_) / 2
        return (val - mid) * 360 / max_res
    raise NotImplementedError


def owners_file(name: str) -> tuple[dict, Path]:
    path = FILES / name
    return json.loads(path.read_text(encoding='utf-8')), path


@pytest.fixture(scope='module')
def limits(so101_urdf):
    return urdf_joints(so101_urdf)


OWNER_FILES = [
    # (file, protocol, apply_drive_mode of LeRobot's bus)
    ('robots/so101_follower/blue_follower.json', 'feetech', True),
    ('teleoperators/so101_leader/blue_leader.json', 'feetech', True),
    ('robots/so100_follower/my_so100.json', 'feetech', True),
    ('robots/koch_follower/koch_follower.json', 'dynamixel', False),
    ('teleoperators/koch_leader/koch_leader.json', 'dynamixel', False),
]


@pytest.mark.parametrize('name,protocol,apply_drive_mode', OWNER_FILES)
def test_every_raw_tick_reads_as_lerobot_degrees(so101_urdf, limits, name, protocol,
                                                 apply_drive_mode):
    """Body joints: the angle equals LeRobot's DEGREES value, for all 4096 raw readings,
    inside the range and past it (DEGREES does not clip); drive_mode 1 and odd offsets
    included. The gripper: LeRobot's 0..100 onto the URDF's limits, inside LeRobot's range."""
    data, path = owners_file(name)
    assert detect_protocol(path, data) == protocol
    calibration = load_calibration(path, so101_urdf, SO101_CHAIN)
    worst = 0.0
    for joint in calibration.joints:
        motor = data[joint.name]
        if joint.name == 'gripper':
            limit = limits['gripper']
            for raw in range(motor['range_min'], motor['range_max'] + 1):
                percent = lerobot_normalize(raw, 'range_0_100', motor, apply_drive_mode)
                expected = limit.lower + percent / 100 * (limit.upper - limit.lower)
                worst = max(worst, abs(joint.to_radians(raw) - expected))
            continue
        for raw in range(4096):
            expected = math.radians(lerobot_normalize(raw, 'degrees', motor, apply_drive_mode))
            worst = max(worst, abs(joint.to_radians(raw) - expected))
    # A tick is 1.5e-3 rad; what is left is floating point.
    assert worst < 1e-9


@pytest.mark.parametrize('name,protocol,apply_drive_mode', OWNER_FILES)
def test_a_gripper_reading_past_its_range_reads_as_its_end_as_lerobot_clips(
        so101_urdf, limits, name, protocol, apply_drive_mode):
    """LeRobot's RANGE_0_100 clips the reading to range_min..range_max before scaling (its
    DEGREES mode does not): all 4096 raw readings of the gripper, past the range included."""
    data, path = owners_file(name)
    joint = load_calibration(path, so101_urdf, SO101_CHAIN).joint('gripper')
    motor, limit = data['gripper'], limits['gripper']
    worst = 0.0
    for raw in range(4096):
        percent = lerobot_normalize(raw, 'range_0_100', motor, apply_drive_mode)
        expected = limit.lower + percent / 100 * (limit.upper - limit.lower)
        worst = max(worst, abs(joint.to_radians(raw) - expected))
    assert worst < 1e-9


@pytest.mark.parametrize('name,protocol,apply_drive_mode', OWNER_FILES)
def test_a_gripper_past_its_range_is_held_at_its_end_never_outside_it(
        so101_urdf, name, protocol, apply_drive_mode):
    """A gripper moved by hand past the range LeRobot recorded: enabling, and a hold, write
    its goal at the range's end (what the servo's Min/Max_Position_Limit clamp it to), never
    past it; a command past the range is refused as the safety rules say."""
    from arm_servos.bus import ServoState
    from arm_servos.safety import ServoSafety
    data, path = owners_file(name)
    calibration = load_calibration(path, so101_urdf, SO101_CHAIN)
    motor = data['gripper']
    joint = calibration.joint('gripper')
    for past, end in ((motor['range_max'] + 60, motor['range_max']),
                      (motor['range_min'] - 60, motor['range_min'])):
        ticks = {m['id']: (m['range_min'] + m['range_max']) // 2 for m in data.values()}
        ticks[motor['id']] = past
        states = {i: ServoState(i, t, 0.0, 0.0, 7.4, 30.0) for i, t in ticks.items()}
        safety = ServoSafety(calibration.joints, {j.name: 3.0 for j in calibration.joints})
        safety.observe(states, 0.0)
        assert joint.lower <= safety.measured['gripper'] <= joint.upper
        assert safety.enable(0.0).ok
        assert safety.step(0.0).goals[motor['id']] == end
        safety.observe(states, 0.1)
        assert safety.hold(0.1, 'teleop hold').ok
        assert safety.step(0.1).goals[motor['id']] == end
        refused = safety.command({'gripper': joint.upper + 0.05}, 0.2)
        assert not refused.ok and 'outside the calibrated range' in refused.message


@pytest.mark.parametrize('name,protocol,apply_drive_mode', OWNER_FILES)
def test_commands_become_the_ticks_lerobot_would_write(so101_urdf, name, protocol,
                                                       apply_drive_mode):
    """The other way: an angle within a tick of LeRobot's ``_unnormalize`` (it truncates
    with int(), the project rounds)."""
    data, path = owners_file(name)
    calibration = load_calibration(path, so101_urdf, SO101_CHAIN)
    for joint in calibration.joints:
        if joint.name == 'gripper':
            continue
        motor = data[joint.name]
        mid = (motor['range_min'] + motor['range_max']) / 2
        for degrees in (-90.0, -33.3, 0.0, 12.5, 45.0):
            if not joint.lower <= math.radians(degrees) <= joint.upper:
                continue
            lerobot_ticks = int((degrees * 4095 / 360) + mid)    # motors_bus._unnormalize
            assert abs(joint.to_ticks(math.radians(degrees)) - lerobot_ticks) <= 1


def test_the_file_names_what_the_servos_must_hold(so101_urdf):
    data, path = owners_file('robots/so101_follower/blue_follower.json')
    calibration = load_calibration(path, so101_urdf, SO101_CHAIN)
    assert calibration.protocol == 'feetech' and calibration.ids == (1, 2, 3, 4, 5, 6)
    assert {j.name: j.homing_offset for j in calibration.joints} == \
        {m: f['homing_offset'] for m, f in data.items()}
    assert all(j.drive_mode is None for j in calibration.joints)   # no Feetech register
    koch = load_calibration(FILES / 'teleoperators/koch_leader/koch_leader.json', so101_urdf,
                            SO101_CHAIN)
    assert koch.protocol == 'dynamixel'
    assert koch.joint('elbow_flex').drive_mode == 1 and koch.joint('wrist_flex').drive_mode == 0
    assert {j.model for j in koch.joints} == {'xl330-m077'}


def test_ranges_are_cut_to_the_urdf_limits(so101_urdf, limits):
    _, path = owners_file('robots/so101_follower/blue_follower.json')
    calibration = load_calibration(path, so101_urdf, SO101_CHAIN)
    roll = calibration.joint('wrist_roll')   # LeRobot's full turn, 0..4095
    assert (roll.lower, roll.upper) == (limits['wrist_roll'].lower, limits['wrist_roll'].upper)
    for joint in calibration.joints:
        assert limits[joint.name].lower <= joint.lower < joint.upper <= limits[joint.name].upper


def test_the_projects_file_written_from_it_reads_the_same(so101_urdf, tmp_path):
    from arm_servos.calibration import Calibration
    _, path = owners_file('robots/so101_follower/blue_follower.json')
    imported = load_calibration(path, so101_urdf, SO101_CHAIN)
    written = tmp_path / 'my_arm.yaml'
    written.write_text(imported.to_yaml('from LeRobot'), encoding='utf-8')
    again = Calibration.load(written, so101_urdf, SO101_CHAIN)
    assert again.names == imported.names
    for a, b in zip(again.joints, imported.joints):
        assert a.homing_offset == b.homing_offset
        assert (a.position_limits, a.clip_reading) == (b.position_limits, b.clip_reading)
        assert all(abs(a.to_radians(t) - b.to_radians(t)) < 1e-9 for t in range(0, 4096, 7))


def test_a_joint_map_renames_and_leaves_out(so101_urdf):
    data, _ = owners_file('robots/so101_follower/blue_follower.json')
    urdf = urdf_joints(so101_urdf)
    renamed = {'jaw' if m == 'gripper' else m: f for m, f in data.items()}
    calibration = from_lerobot(renamed, urdf, SO101_CHAIN, joint_map={'jaw': 'gripper'})
    assert calibration.names[-1] == 'gripper'
    calibration = from_lerobot(data, urdf, SO101_CHAIN, joint_map={'gripper': '-'})
    assert 'gripper' not in calibration.names


REFUSALS = [
    (lambda d: d.update(wrist_yaw=d.pop('wrist_roll')),
     r'wrist_yaw: motor name is not a movable joint of the URDF'),
    (lambda d: d['elbow_flex'].pop('homing_offset'), r'elbow_flex\.homing_offset: missing'),
    (lambda d: d['elbow_flex'].update(homing_ofset=3), r'elbow_flex\.homing_ofset: unknown'),
    (lambda d: d['wrist_flex'].update(id=3), r'wrist_flex\.id: 3 repeats the id of elbow_flex'),
    (lambda d: d['gripper'].update(drive_mode=2), r'gripper\.drive_mode: must be 0 or 1'),
    (lambda d: d['shoulder_lift'].update(homing_offset=5000),
     r'shoulder_lift\.homing_offset: 5000 does not fit a Feetech'),
    (lambda d: d['shoulder_pan'].update(range_min=3000, range_max=1000),
     r'shoulder_pan\.range_min: 3000 must be below range_max 1000'),
    (lambda d: d['shoulder_pan'].update(range_min=1.5), r'shoulder_pan\.range_min: expected an '
     'integer'),
]


@pytest.mark.parametrize('change,words', REFUSALS)
def test_a_broken_lerobot_file_is_refused_naming_the_motor_and_field(so101_urdf, tmp_path,
                                                                      change, words):
    data, _ = owners_file('robots/so101_follower/blue_follower.json')
    change(data)
    path = tmp_path / 'so101_follower' / 'broken.json'
    path.parent.mkdir()
    path.write_text(json.dumps(data, indent=4), encoding='utf-8')
    with pytest.raises(CalibrationError, match=words) as refusal:
        load_calibration(path, so101_urdf, SO101_CHAIN)
    assert str(refusal.value).startswith(f'{path} (LeRobot calibration): ')


def test_an_so100_file_on_the_so100_urdf(so101_urdf):
    """example-robot-data's SO-100 URDF puts its zero at the folded rest pose (shoulder_lift
    0..3.5 rad), not at LeRobot's mid-travel zero: the file still loads, with the joint values
    LeRobot's and what lies outside the URDF's limits cut off; the model's pose is off, which
    is why docs/lerobot.md tells SO-100 owners to use the SO-101 URDF."""
    import sysconfig
    path = Path(sysconfig.get_paths()['purelib']) / 'cmeel.prefix' / 'share' / \
        'example-robot-data' / 'robots' / 'so_arm_description' / 'urdf' / 'so100.urdf'
    urdf = path.read_text(encoding='utf-8')
    _, source = owners_file('robots/so100_follower/my_so100.json')
    calibration = load_calibration(source, urdf, SO101_CHAIN)
    limits = urdf_joints(urdf)
    lift = calibration.joint('shoulder_lift')
    assert lift.lower == limits['shoulder_lift'].lower == 0.0
    assert lift.upper == pytest.approx(math.radians((3192 - 909) / 2 * 360 / 4095))
