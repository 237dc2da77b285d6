"""The servos' EEPROM against the calibration, before any torque (RELIABILITY 43).

A LeRobot calibration is only right for the servos it was made on: LeRobot wrote each
``homing_offset`` into that servo's Homing_Offset register, each ``range_min``/``range_max``
into its Min_Position_Limit/Max_Position_Limit registers, and on a Koch arm each
``drive_mode`` into Drive_Mode. A servo that holds another value (the arm was recalibrated
since, or a servo was swapped) reports positions the file does not describe, or clamps its
goals to another travel, and the arm would move to the wrong angles or stop short. So the
bridge reads those registers on connect and before it enables torque, and refuses, naming the
joint, the field, the register, the file's value and the servo's.

Registers (LeRobot's control tables, feetech/tables.py and dynamixel/tables.py; what its
``write_calibration`` writes, raw, in feetech/feetech.py and dynamixel/dynamixel.py, and
what its ``is_calibrated`` compares): Feetech STS Homing_Offset at 31, 2 bytes, sign and
magnitude with bit 11 as the sign; Min_Position_Limit at 9 and Max_Position_Limit at 11, 2
bytes, unsigned. Dynamixel X Homing_Offset at 20, 4 bytes, two's complement; Drive_Mode at 10
(bit 0: reverse); Max_Position_Limit at 48 and Min_Position_Limit at 52, 4 bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from arm_servos.bus import BusError, signed, twos_complement
from arm_servos.calibration import Calibration, JointCalibration


@dataclass(frozen=True)
class Register:
    """One EEPROM register the calibration pins: where it is and how to read it."""

    name: str                       # the vendor's (and LeRobot's) register name
    address: int
    size: int
    decode: Callable[[int], int]


@dataclass(frozen=True)
class Check:
    """One register against one value of a joint's calibration.

    Attributes:
        field: the calibration field (``joints.<joint>.<field>`` in the refusal).
        register: the servo's register that must hold it.
        index: which item of a pair field (position_limits) it is; None for a plain value.
        label: how the refusal names the value (LeRobot's name for a pair's item).
    """

    field: str
    register: Register
    index: int | None = None
    label: str = ''

    def expected(self, joint: JointCalibration) -> int | None:
        value = getattr(joint, self.field)
        if value is None or self.index is None:
            return value
        return value[self.index]


def _unsigned(raw: int) -> int:
    return raw


REGISTERS: dict[str, tuple[Check, ...]] = {
    'feetech': (
        Check('homing_offset', Register('Homing_Offset', 31, 2, lambda raw: signed(raw, 11))),
        Check('position_limits', Register('Min_Position_Limit', 9, 2, _unsigned), 0,
              'range_min '),
        Check('position_limits', Register('Max_Position_Limit', 11, 2, _unsigned), 1,
              'range_max '),
    ),
    'dynamixel': (
        Check('homing_offset',
              Register('Homing_Offset', 20, 4, lambda raw: twos_complement(raw, 32))),
        Check('drive_mode', Register('Drive_Mode', 10, 1, lambda raw: raw & 1)),
        Check('position_limits',
              Register('Min_Position_Limit', 52, 4, lambda raw: twos_complement(raw, 32)), 0,
              'range_min '),
        Check('position_limits',
              Register('Max_Position_Limit', 48, 4, lambda raw: twos_complement(raw, 32)), 1,
              'range_max '),
    ),
}


class RegisterReader(Protocol):
    """What the check needs of a bus (``SdkServoBus.read_register``)."""

    def read_register(self, servo_id: int, address: int, size: int) -> int | None: ...


CONFIRM_READS = 3   # more reads of a register that disagrees with the file, at most


def _settled(bus: RegisterReader, servo_id: int, address: int, size: int, first: int) -> int:
    """The register's value once two reads in a row agree (else the last read).

    A reply that comes after its request timed out is taken for the next request's answer
    when it has the same size: a Feetech or Dynamixel reply names the servo, not the
    register. Seen on a loaded machine: a Present_Position read as Min_Position_Limit, which
    refused a calibration that matched. A real mismatch reads the same every time."""
    last = first
    for _ in range(CONFIRM_READS):
        again = bus.read_register(servo_id, address, size)
        if again is None or again == last:
            return last
        last = again
    return last


def eeprom_mismatches(bus: RegisterReader, calibration: Calibration) -> list[str]:
    """Every field of the calibration the servos do not hold, in words ([] when all match;
    a calibration without homing_offset/drive_mode/position_limits fields pins nothing)."""
    checks = REGISTERS.get(calibration.protocol, ())
    problems = []
    for joint in calibration.joints:
        for check in checks:
            expected = check.expected(joint)
            if expected is None:
                continue
            register = check.register
            raw = bus.read_register(joint.servo_id, register.address, register.size)
            if raw is not None and register.decode(raw) != expected:
                raw = _settled(bus, joint.servo_id, register.address, register.size, raw)
            where = f'joints.{joint.name}.{check.field}'
            if raw is None:
                problems.append(f'{where}: servo {joint.servo_id} did not answer a read of its '
                                f'{register.name} (address {register.address})')
                continue
            held = register.decode(raw)
            if held != expected:
                problems.append(
                    f'{where}: the file says {check.label}{expected}, servo {joint.servo_id} '
                    f'holds {held} in its {register.name} (address {register.address})')
    return problems


def check_eeprom(bus: RegisterReader, calibration: Calibration) -> str:
    """'' when the servos hold what the calibration says, else the refusal in one line."""
    problems = eeprom_mismatches(bus, calibration)
    if not problems:
        return ''
    return ('calibration does not match the servos, torque refused: ' + '; '.join(problems)
            + ' (the arm was recalibrated or a servo swapped since this file was written: '
            'use the calibration file of this arm as it is now)')


def eeprom_refusal(bus: RegisterReader, calibration: Calibration) -> str:
    """:func:`check_eeprom`, with a bus that cannot be read as a refusal too (the bridge asks
    this on connect and before each enable)."""
    try:
        return check_eeprom(bus, calibration)
    except BusError as error:
        return f'cannot check the calibration against the servos, torque refused: {error}'
