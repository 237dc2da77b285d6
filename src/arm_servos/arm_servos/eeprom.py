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

Return_Delay_Time (Feetech 7, Dynamixel X 9, 1 byte, 2 µs a unit) is not the calibration's,
but it sets how fast the bus can go: each servo waits that long before each reply, so six
servos at the factory's 250 (500 µs) add 3 ms to every sync read, more than the 1.2-2.6 ms
its bytes take at 1 Mbaud. LeRobot writes 0 into every servo on each connect
(``FeetechMotorsBus.configure_motors``, Koch's ``configure``), so its arms hold 0; servos set
up otherwise often hold the factory value. The bridge says so on connect
and waits for them (:func:`adopt_return_delays`); it writes no EEPROM of its own accord.
``servo_calibrate --return-delay 0`` writes it once (:func:`write_return_delays`): torque
off (a Dynamixel X refuses an EEPROM write with torque on), and on Feetech the Lock register
(55) cleared around the write and set again (an STS keeps an EEPROM write past power-off only
when unlocked), as LeRobot's ``disable_torque``/``enable_torque`` do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from arm_servos.bridge import theoretical_rate
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


RETURN_DELAY = {'feetech': Register('Return_Delay_Time', 7, 1, _unsigned),
                'dynamixel': Register('Return_Delay_Time', 9, 1, _unsigned)}
RETURN_DELAY_UNIT = 2e-6    # s per unit, both vendors
MAX_RETURN_DELAY = 254      # units: the registers' range (both vendors)
FEETECH_LOCK = 55           # STS Lock: 1 at power-on; 0 lets an EEPROM write be kept
# A servo that waits longer than this before each reply is named in the warning (s).
SLOW_REPLY = 20e-6


class RegisterReader(Protocol):
    """What the check needs of a bus (``SdkServoBus.read_register``)."""

    def read_register(self, servo_id: int, address: int, size: int) -> int | None: ...


class RegisterWriter(RegisterReader, Protocol):
    """What writing a register needs of a bus (``SdkServoBus``)."""

    def ping(self, ids: Iterable[int] | None = None) -> dict[int, int | None]: ...

    def write_register(self, servo_id: int, address: int, size: int, value: int) -> bool: ...

    def set_torque(self, enabled: bool, ids: Sequence[int] | None = None) -> None: ...


class DelayedBus(RegisterReader, Protocol):
    """What adopting the return delays needs of a bus (``SdkServoBus``)."""

    baudrate: int
    return_delay: float

    def read_bytes_per_cycle(self) -> int: ...


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


def return_delays(bus: RegisterReader, calibration: Calibration) -> dict[str, float]:
    """s each joint's servo waits before each reply (its Return_Delay_Time); a servo that
    does not answer the read is left out (the EEPROM check names it)."""
    register = RETURN_DELAY.get(calibration.protocol)
    if register is None:
        return {}
    delays = {}
    for joint in calibration.joints:
        raw = bus.read_register(joint.servo_id, register.address, register.size)
        if raw is not None:
            delays[joint.name] = register.decode(raw) * RETURN_DELAY_UNIT
    return delays


def return_delay_note(delays: Mapping[str, float], wire_time: float) -> str:
    """'' when no servo waits longer than SLOW_REPLY before replying, else a warning in one
    line: which servos wait how long, what that adds to each bus cycle (one reply per servo)
    beside ``wire_time`` (s, the cycle's bytes on the wire), and the remedy."""
    slow: dict[float, list[str]] = {}
    for name, delay in delays.items():
        if delay > SLOW_REPLY + 1e-9:
            slow.setdefault(delay, []).append(name)
    if not slow:
        return ''
    groups = '; '.join(f'{delay * 1e6:.0f} us: {_first_names(names)}'
                       for delay, names in sorted(slow.items(), reverse=True))
    total = sum(delays.values())
    return (f'servos wait before each reply (Return_Delay_Time; {groups}): '
            f'{total * 1e3:.2f} ms of every bus cycle, beside {wire_time * 1e3:.2f} ms of its '
            'bytes. LeRobot writes 0 into each servo on connect; servo_calibrate '
            '--return-delay 0 writes it once (EEPROM) for a cycle that much shorter')


def _first_names(names: list[str], shown: int = 3) -> str:
    if len(names) <= shown:
        return ', '.join(names)
    return f'{", ".join(names[:shown])} and {len(names) - shown} more'


def adopt_return_delays(bus: DelayedBus, calibration: Calibration) -> str:
    """Read the servos' return delays, let the bus's default reply timeout wait the slowest
    one per reply (``SdkServoBus.return_delay``: six servos at the factory's 500 µs answer a
    sync read 3 ms later, about 0.1 ms past its 3 ms margin: 2 of 52 sync reads were lost
    and retried on an idle machine, none with it), and return
    :func:`return_delay_note` ('' when they answer quickly, or when the bus cannot be read:
    the connect checks report that)."""
    try:
        delays = return_delays(bus, calibration)
    except BusError:
        return ''
    bus.return_delay = max(delays.values(), default=0.0)
    return return_delay_note(delays, 1.0 / theoretical_rate(bus.read_bytes_per_cycle(),
                                                            bus.baudrate))


# Pings and reads of a one-off EEPROM write, each round with the bus's own retries: nothing
# moves and no cycle is due, so a reply lost on a loaded machine is asked for again rather
# than taken for a silent servo.
PATIENT_ROUNDS = 3


class SilentServosError(ValueError):
    """Servos that did not answer a ping: nothing was written (the ids or the wiring are
    wrong)."""


def write_return_delays(bus: RegisterWriter, protocol: str, servos: Mapping[str, int],
                        units: int) -> list[str]:
    """Write Return_Delay_Time ``units`` (2 µs each) into every servo of ``servos`` (joint
    name → servo id), then read it back: what went wrong, in words ([] when every servo
    holds ``units`` and, on Feetech, is locked again).

    Every servo must answer a ping first (:class:`SilentServosError` names the silent ones,
    before any write). Torque then goes off on every servo and stays off (the arm must be
    supported): a Dynamixel X refuses an EEPROM write with torque on. On Feetech each
    servo's Lock is cleared for the write and set again after it (a real STS keeps a write
    made while locked only until power-off, so it must be unlocked to last). ``ValueError``
    for ``units`` outside 0..MAX_RETURN_DELAY or an unknown protocol;
    :class:`~arm_servos.bus.BusError` when the port fails."""
    if not 0 <= units <= MAX_RETURN_DELAY:
        raise ValueError(f'return delay {units}: expected 0..{MAX_RETURN_DELAY} units of 2 us')
    if protocol not in RETURN_DELAY:
        raise ValueError(f'protocol {protocol!r}: expected one of {", ".join(RETURN_DELAY)}')
    models = bus.ping(list(servos.values()))
    for _ in range(PATIENT_ROUNDS - 1):
        quiet = [servo for servo in servos.values() if models.get(servo) is None]
        if not quiet:
            break
        models.update(bus.ping(quiet))
    silent = [f'{name} (id {servo})' for name, servo in servos.items()
              if models.get(servo) is None]
    if silent:
        raise SilentServosError(f'no answer from {", ".join(silent)}: nothing written; check '
                                'the cable, the power supply and the ids')
    register = RETURN_DELAY[protocol]
    feetech = protocol == 'feetech'
    bus.set_torque(False)
    problems = []
    for name, servo in servos.items():
        unlocked = not feetech or bus.write_register(servo, FEETECH_LOCK, 1, 0)
        wrote = unlocked and bus.write_register(servo, register.address, register.size, units)
        locked = not feetech or not unlocked or bus.write_register(servo, FEETECH_LOCK, 1, 1)
        held = None
        for _ in range(PATIENT_ROUNDS):
            held = bus.read_register(servo, register.address, register.size)
            if held is not None:
                break
        where = f'{name} (servo {servo})'
        if held != units:
            what = ('did not unlock its EEPROM (Lock)' if not unlocked else
                    'did not take the write' if not wrote else 'acknowledged the write')
            now = 'no answer to a read' if held is None else f'holds {held}'
            problems.append(f'{where} {what}: its {register.name} (address '
                            f'{register.address}) {now}, not {units}')
        elif not locked:
            problems.append(f'{where} holds {units} but did not lock its EEPROM again (Lock '
                            f'at {FEETECH_LOCK}): power it off and on before relying on it')
    return problems
