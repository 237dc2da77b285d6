"""A LeRobot calibration file on the simulated bus, whose servos hold its homing offsets and
position limits in EEPROM as LeRobot left them: the arm goes to the angles LeRobot would
report, and a servo holding another offset or other limits (recalibrated, swapped) is refused
before any torque (RELIABILITY 43).
"""

from __future__ import annotations

import math
from pathlib import Path
import re
import time

import pytest
from test_lerobot_calibration import lerobot_normalize, owners_file, SO101_CHAIN

from arm_servos.bridge import BridgeCore
from arm_servos.drivers import DRIVERS
from arm_servos.eeprom import (
    adopt_return_delays,
    check_eeprom,
    eeprom_mismatches,
    RETURN_DELAY,
    return_delays,
    write_return_delays,
)
from arm_servos.lerobot import load_calibration
from arm_servos.safety import SafetyConfig, ServoSafety
from arm_servos.sim.process import SimProcess

FILES = Path(__file__).resolve().parent / 'lerobot_calibrations'
ARMS = [('robots/so101_follower/blue_follower.json', 'feetech'),
        ('teleoperators/koch_leader/koch_leader.json', 'dynamixel')]
# Angles to drive the chain's joints to (rad), inside every file's range.
TARGETS = {'shoulder_pan': 0.4, 'shoulder_lift': -0.6, 'elbow_flex': 0.9, 'wrist_flex': -0.3,
           'wrist_roll': 1.2}


def encoders(sim: SimProcess) -> dict[int, float]:
    """Each servo's encoder (the motor itself, before its homing offset), from the sim."""
    status = sim.command('status')
    return {int(i): float(e) for i, e in re.findall(r'id (\d+): .*? encoder (-?[\d.]+)',
                                                    status)}


def lerobot_reading(protocol: str, encoder: float, homing: int, drive_mode: int) -> float:
    """Present_Position as the vendors define it (LeRobot's ``_get_half_turn_homings``
    docstrings: Feetech Present = Actual - Homing_Offset; Dynamixel Present = Actual +
    Homing_Offset, the reverse drive mode turning Actual around)."""
    if protocol == 'feetech':
        return (encoder - homing) % 4096
    return (-encoder if drive_mode else encoder) + homing


@pytest.mark.parametrize('name,protocol', ARMS)
def test_a_lerobot_file_drives_the_arm_to_the_angles_lerobot_reports(so101_urdf, tmp_path,
                                                                      name, protocol):
    data, path = owners_file(name)
    calibration = load_calibration(path, so101_urdf, SO101_CHAIN)
    link = tmp_path / 'bus'
    with SimProcess(link, protocol, ids=calibration.ids, tau=0.02,
                    extra=['--lerobot', str(path)]) as sim:
        bus = DRIVERS[protocol](str(link), calibration.ids, reply_timeout=0.2,
                                cycle_budget=1.0)
        bus.open()
        assert check_eeprom(bus, calibration) == ''
        safety = ServoSafety(calibration.joints, {j.name: 3.0 for j in calibration.joints},
                             SafetyConfig(silent_cycles=5, approach_velocity=2.0,
                                          command_timeout=5.0))
        core = BridgeCore(bus, calibration, safety)
        # LeRobot's arm starts at mid-range: every body joint at its DEGREES zero.
        for _ in range(5):
            core.cycle(time.monotonic())
        start = dict(zip(core.reading().names, core.reading().positions))
        assert all(abs(start[j]) < 0.002 for j in SO101_CHAIN)
        assert safety.enable(time.monotonic()).ok
        target = {**start, **TARGETS}
        end = time.monotonic() + 6.0
        while time.monotonic() < end:
            assert safety.command(target, time.monotonic()).ok
            core.cycle(time.monotonic())
            reading = dict(zip(core.reading().names, core.reading().positions))
            if all(abs(reading[j] - a) < 0.004 for j, a in TARGETS.items()):
                break
            time.sleep(0.01)
        time.sleep(0.2)
        core.cycle(time.monotonic())
        reading = dict(zip(core.reading().names, core.reading().positions))
        motors = encoders(sim)
        bus.set_torque(False)
        bus.close()
    for joint, angle in TARGETS.items():
        motor = data[joint]
        present = lerobot_reading(protocol, motors[motor['id']], motor['homing_offset'],
                                  motor['drive_mode'])
        degrees = lerobot_normalize(round(present), 'degrees', motor,
                                    apply_drive_mode=protocol == 'feetech')
        # Where LeRobot says the joint is, from the motor's own position: the target, within
        # the controller's tolerance (a tick is 0.088 degrees).
        assert degrees == pytest.approx(math.degrees(angle), abs=0.3), joint
        assert math.degrees(reading[joint]) == pytest.approx(degrees, abs=1e-6), joint


class StaleFirstReply:
    """A bus whose first answer to every register read is a late reply to an earlier request
    (``stale``, same size), after which it answers truly from ``registers``."""

    def __init__(self, registers: dict[tuple[int, int], int], stale: int) -> None:
        self.registers, self.stale = registers, stale
        self.seen: set[tuple[int, int]] = set()

    def read_register(self, servo_id: int, address: int, size: int) -> int | None:
        first = (servo_id, address) not in self.seen
        self.seen.add((servo_id, address))
        return self.stale if first else self.registers[(servo_id, address)]


def test_a_late_reply_taken_for_a_register_read_does_not_refuse_a_matching_file(
        so101_urdf, tmp_path):
    from arm_servos.eeprom import REGISTERS
    _, path = owners_file(ARMS[0][0])
    calibration = load_calibration(path, so101_urdf, SO101_CHAIN)
    truth = {}
    for joint in calibration.joints:
        for check in REGISTERS[calibration.protocol]:
            expected = check.expected(joint)
            if expected is not None:
                truth[(joint.servo_id, check.register.address)] = next(
                    raw for raw in range(1 << 16) if check.register.decode(raw) == expected)
    assert eeprom_mismatches(StaleFirstReply(truth, stale=7), calibration) == []
    # A servo that really holds another value reads the same each time: still refused.
    wrong = dict(truth)
    key = next(iter(truth))
    wrong[key] = truth[key] ^ 1
    words = eeprom_mismatches(StaleFirstReply(wrong, stale=7), calibration)
    assert len(words) == 1 and 'holds' in words[0], words


@pytest.mark.parametrize('name,protocol', ARMS)
def test_a_servo_holding_another_offset_is_refused_naming_joint_and_field(so101_urdf, tmp_path,
                                                                           name, protocol):
    data, path = owners_file(name)
    calibration = load_calibration(path, so101_urdf, SO101_CHAIN)
    link = tmp_path / 'bus'
    with SimProcess(link, protocol, ids=calibration.ids, extra=['--lerobot', str(path)]) as sim:
        bus = DRIVERS[protocol](str(link), calibration.ids, reply_timeout=0.2)
        bus.open()
        assert eeprom_mismatches(bus, calibration) == []
        # The elbow was recalibrated since (LeRobot wrote a new offset into servo 3).
        assert 'homing' in sim.command('homing 3 1017')
        words = check_eeprom(bus, calibration)
        expected = data['elbow_flex']['homing_offset']
        assert f'joints.elbow_flex.homing_offset: the file says {expected}, servo 3 holds ' \
               f'1017 in its Homing_Offset (address {31 if protocol == "feetech" else 20})' \
               in words
        assert words.startswith('calibration does not match the servos, torque refused')
        assert 'torque writes 0' in sim.command('writes')
        bus.close()


def test_a_koch_servo_with_another_drive_mode_is_refused(so101_urdf, tmp_path):
    data, path = owners_file('teleoperators/koch_leader/koch_leader.json')
    calibration = load_calibration(path, so101_urdf, SO101_CHAIN)
    modes = ','.join('0' for _ in data)    # elbow_flex's reverse bit was never written
    homings = ','.join(str(m['homing_offset']) for m in data.values())
    limits = ','.join(f'{m["range_min"]}:{m["range_max"]}' for m in data.values())
    with SimProcess(tmp_path / 'bus', 'dynamixel', ids=calibration.ids,
                    extra=[f'--homing={homings}', f'--drive-mode={modes}',
                           f'--limits={limits}']):
        bus = DRIVERS['dynamixel'](str(tmp_path / 'bus'), calibration.ids, reply_timeout=0.2)
        bus.open()
        assert eeprom_mismatches(bus, calibration) == [
            'joints.elbow_flex.drive_mode: the file says 1, servo 3 holds 0 in its Drive_Mode '
            '(address 10)']
        bus.close()


@pytest.mark.parametrize('name,protocol', ARMS)
def test_a_servo_holding_other_position_limits_is_refused_naming_joint_and_register(
        so101_urdf, tmp_path, name, protocol):
    """LeRobot writes range_min/range_max into Min_Position_Limit/Max_Position_Limit (its
    write_calibration, both buses) and its is_calibrated compares them: a servo holding other
    limits was recalibrated (or swapped) since the file, and clamps its goals elsewhere."""
    data, path = owners_file(name)
    calibration = load_calibration(path, so101_urdf, SO101_CHAIN)
    elbow = data['elbow_flex']
    assert calibration.joint('elbow_flex').position_limits == \
        (elbow['range_min'], elbow['range_max'])
    addresses = {'feetech': (9, 11), 'dynamixel': (52, 48)}[protocol]
    link = tmp_path / 'bus'
    with SimProcess(link, protocol, ids=calibration.ids, extra=['--lerobot', str(path)]) as sim:
        bus = DRIVERS[protocol](str(link), calibration.ids, reply_timeout=0.2)
        bus.open()
        assert eeprom_mismatches(bus, calibration) == []
        # The elbow's travel was recorded again since: other limits in its EEPROM.
        low, high = elbow['range_min'] - 40, elbow['range_max'] + 25
        assert 'limits' in sim.command(f'limits 3 {low} {high}')
        assert eeprom_mismatches(bus, calibration) == [
            f'joints.elbow_flex.position_limits: the file says range_min {elbow["range_min"]}, '
            f'servo 3 holds {low} in its Min_Position_Limit (address {addresses[0]})',
            f'joints.elbow_flex.position_limits: the file says range_max {elbow["range_max"]}, '
            f'servo 3 holds {high} in its Max_Position_Limit (address {addresses[1]})']
        assert check_eeprom(bus, calibration).startswith(
            'calibration does not match the servos, torque refused: joints.elbow_flex.')
        assert 'torque writes 0' in sim.command('writes')
        bus.close()


def test_the_simulated_servo_clamps_goals_to_its_position_limit_registers(tmp_path):
    """What LeRobot relies on once it wrote them: a goal past the limits stops at them (so a
    servo holding other limits than the file's stops its joint elsewhere)."""
    link = tmp_path / 'bus'
    with SimProcess(link, 'feetech', ids=(1,), tau=0.01) as sim:
        bus = DRIVERS['feetech'](str(link), (1,), reply_timeout=0.2)
        bus.open()
        sim.command('limits 1 1900 2300')
        bus.write_goals({1: 2048})
        bus.set_torque(True)
        bus.write_goals({1: 3000})
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            state = bus.read()[1]
            if state is not None and state.position >= 2300:
                break
            time.sleep(0.02)
        time.sleep(0.2)
        assert bus.read()[1].position == 2300
        bus.set_torque(False)
        bus.close()


@pytest.mark.parametrize('name,protocol', ARMS)
def test_servos_at_the_factory_return_delay_are_named_with_what_they_cost(so101_urdf, tmp_path,
                                                                          name, protocol):
    """Each servo waits Return_Delay_Time (2 µs a unit) before each reply: at the factory's
    250, six servos add 3 ms to every sync read, more than its bytes take. LeRobot writes 0
    on connect, so its arms say nothing; the same servos at 250 are named, with the cost, the
    bus's default reply timeout waits for them (its 3 ms margin alone was about 0.1 ms short:
    2 of 52 sync reads lost and retried on an idle machine, none with it), and the simulated
    bus waits that long (a lower bound: a loaded machine only adds to it)."""
    _, path = owners_file(name)
    calibration = load_calibration(path, so101_urdf, SO101_CHAIN)
    for delay in ('', '250'):
        link = tmp_path / f'bus{delay}'
        extra = ['--lerobot', str(path)] + (['--return-delay', delay] if delay else [])
        with SimProcess(link, protocol, ids=calibration.ids, extra=extra):
            bus = DRIVERS[protocol](str(link), calibration.ids, reply_timeout=0.2,
                                    cycle_budget=1.0)
            bus.open()
            delays = return_delays(bus, calibration)
            default = DRIVERS[protocol](str(link), calibration.ids)   # its own reply timeout
            before = default.reply_timeout(len(calibration.ids))
            words = adopt_return_delays(default, calibration)
            waits = default.reply_timeout(len(calibration.ids)) - before
            reads = []
            for _ in range(5):
                began = time.perf_counter()
                assert all(bus.read().values())
                reads.append(time.perf_counter() - began)
            bus.close()
        assert sorted(delays) == sorted(calibration.names)
        if not delay:
            assert set(delays.values()) == {0.0} and words == '' and waits == 0.0
            continue
        assert set(delays.values()) == {500e-6}
        assert waits == pytest.approx(len(calibration.ids) * 500e-6)
        assert words.startswith('servos wait before each reply (Return_Delay_Time; 500 us: '
                                'shoulder_pan, shoulder_lift, elbow_flex and 3 more): '
                                '3.00 ms of every bus cycle, beside ')
        assert 'LeRobot writes 0' in words and len(words) < 300
        assert min(reads) >= 6 * 500e-6


@pytest.mark.parametrize('name,protocol', ARMS)
def test_the_return_delay_is_written_as_each_servo_keeps_an_eeprom_write(so101_urdf, tmp_path,
                                                                         name, protocol):
    """servo_calibrate --return-delay's write, on servos at the factory's 250 with torque on.
    The simulated servos keep EEPROM as real ones do: a Dynamixel X refuses the write while
    its torque is on (status error 7), an STS keeps it only while its Lock is 0 (locked at
    power-on). A plain register write changes nothing on either; the write turns torque off
    and, on Feetech, unlocks and locks again, and every servo then holds 0."""
    _, path = owners_file(name)
    calibration = load_calibration(path, so101_urdf, SO101_CHAIN)
    register = RETURN_DELAY[protocol]
    servos = {joint.name: joint.servo_id for joint in calibration.joints}
    link = tmp_path / 'bus'
    with SimProcess(link, protocol, ids=calibration.ids,
                    extra=['--lerobot', str(path), '--return-delay', '250']):
        bus = DRIVERS[protocol](str(link), calibration.ids, reply_timeout=0.2,
                                cycle_budget=1.0)
        bus.open()
        try:
            bus.set_torque(True)
            first = calibration.ids[0]
            # Dynamixel: refused (torque on); Feetech: acknowledged, not kept (locked).
            acknowledged = bus.write_register(first, register.address, register.size, 0)
            assert acknowledged is (protocol == 'feetech')
            assert bus.read_register(first, register.address, register.size) == 250
            assert write_return_delays(bus, protocol, servos, 0) == []
            assert set(return_delays(bus, calibration).values()) == {0.0}
            with pytest.raises(ValueError, match='expected 0..254'):
                write_return_delays(bus, protocol, servos, 255)
        finally:
            bus.close()
