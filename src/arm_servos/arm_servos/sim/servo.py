"""A simulated servo: a control table of registers over a first-order motor.

The motor follows its goal with time constant ``tau`` and a speed cap, inside the servo's
angle-limit registers, Min_Position_Limit and Max_Position_Limit (a goal past them is clamped,
as STS servos and X-series servos in position mode do; LeRobot's calibration writes its
range_min and range_max there, and a write to them changes the clamp). Present
position, speed, load, voltage and temperature are written into the control table whenever
the host reads, so every read goes through the same registers a real servo exposes.

The homing offset is applied as the real servos apply it (what LeRobot's calibration writes):
Feetech STS, Homing_Offset at 31, sign and magnitude with bit 11 as the sign, present =
encoder - offset, wrapped to 0..4095; Dynamixel X, Homing_Offset at 20, two's complement,
present = encoder + offset, with Drive_Mode (10) bit 0 reversing the direction (modelled as
present = -encoder + offset). Goals, limits and loads are in the present position's frame.
Changing the register moves the reading, not the motor: a recalibrated or swapped servo.

The torque is limited as the servos limit it: Feetech Torque_Limit (48, 0..1000 of the
maximum), Dynamixel Goal_Current (102) over Current_Limit (38) in current-based position
mode; the load never exceeds it. An object (``block``) stops the motor at a tick; pushing on
it at 80 % of the maximum torque or more for a second trips the overload protection (the
error bit set, torque off), as the STS3215's Overload_Torque and Protection_Time do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math


@dataclass(frozen=True)
class Layout:
    """Where one protocol keeps what the simulation touches (control-table addresses)."""

    model: int            # model number register (2 bytes)
    torque: int
    goal: int
    goal_size: int
    position: int
    position_size: int
    velocity: int
    velocity_size: int
    velocity_unit: float  # ticks/s per register unit
    load: int
    voltage: int
    voltage_size: int
    temperature: int
    min_limit: int
    max_limit: int
    limit_size: int
    hardware_error: int | None   # Dynamixel's register 70; Feetech reports in the status only
    sign_magnitude: bool         # Feetech: bit 15 (bit 10 for load) is the sign
    homing: int = 0              # Homing_Offset register
    homing_size: int = 2
    drive_mode: int | None = None   # Dynamixel's Drive_Mode (bit 0: reverse)
    torque_limit: int = 48       # Feetech Torque_Limit / Dynamixel Goal_Current (2 bytes)
    current_limit: int | None = None   # Dynamixel Current_Limit (2 bytes)
    return_delay: int = 7        # Return_Delay_Time (1 byte, 2 µs a unit; Dynamixel X: 9)
    # EEPROM is every address below this one (the STS's 0-39, the X series' 0-63). A
    # Dynamixel X refuses an EEPROM write while its torque is on (status error 7, access
    # error); an STS keeps it only while its Lock register is 0 (Feetech: at 55).
    eeprom_end: int = 40
    lock: int | None = 55


FEETECH = Layout(model=3, torque=40, goal=42, goal_size=2, position=56, position_size=2,
                 velocity=58, velocity_size=2, velocity_unit=1.0, load=60, voltage=62,
                 voltage_size=1, temperature=63, min_limit=9, max_limit=11, limit_size=2,
                 hardware_error=None, sign_magnitude=True, homing=31, homing_size=2)
DYNAMIXEL = Layout(model=0, torque=64, goal=116, goal_size=4, position=132, position_size=4,
                   velocity=128, velocity_size=4, velocity_unit=0.229 * 4096 / 60.0, load=126,
                   voltage=144, voltage_size=2, temperature=146, min_limit=52, max_limit=48,
                   limit_size=4, hardware_error=70, sign_magnitude=False, homing=20,
                   homing_size=4, drive_mode=10, torque_limit=102, current_limit=38,
                   return_delay=9, eeprom_end=64, lock=None)
LAYOUTS = {'feetech': FEETECH, 'dynamixel': DYNAMIXEL}
MODEL_NUMBERS = {'feetech': 777, 'dynamixel': 1060}   # STS3215, XL430-W250
FULL_TORQUE = {'feetech': 1000, 'dynamixel': 1750}   # Torque_Limit 100 %; Current_Limit, mA
OVERLOAD_LOAD = 800            # per mille: the STS3215's default Overload_Torque (80 %)
ACCESS_ERROR = 7               # Dynamixel Protocol 2.0 status error: access error
OVERLOAD_TIME = 1.0            # s of pushing at that load before the protection trips


@dataclass
class Faults:
    """What a servo is told to get wrong (set by the bus's fault commands)."""

    lose_replies: int = 0        # the next N replies are not sent
    corrupt_replies: int = 0     # the next N replies carry a wrong checksum/CRC
    missing: bool = False        # never answers (unplugged from the daisy chain)
    error_bits: int = 0          # status error byte (Feetech) / register 70 (Dynamixel)
    extra_delay: float = 0.0     # seconds added before each reply (a slow servo)
    drop_writes: int = 0         # the next N writes addressed to it are lost on the wire


@dataclass
class SimServo:
    """One servo on the simulated bus."""

    servo_id: int
    protocol: str
    position: float = 2048.0     # ticks the host reads at start (kept as the encoder's)
    goal: float | None = None    # ticks; None = the position (no stale goal)
    tau: float = 0.05            # s, first-order time constant
    max_speed: float = 4000.0    # ticks/s (STS3215 at 7.4 V: about 0.9 turn/s)
    min_tick: int = 0
    max_tick: int = 4095
    voltage: float = 7.4
    temperature: float = 31.0
    homing: int = 0              # Homing_Offset in EEPROM (what LeRobot's calibration wrote)
    drive_mode: int = 0          # Dynamixel Drive_Mode (1: reverse); Feetech has none
    # Return_Delay_Time, 2 µs a unit: how long the servo waits before each reply. The factory
    # sets 250 (500 µs); LeRobot's configure_motors writes 0 on every connect. 10 (20 µs)
    # unless told: what the simulated bus waited before it kept the register.
    return_delay: int = 10
    block: float | None = None   # present ticks an object stops the motor at (None: free)
    faults: Faults = field(default_factory=Faults)

    def __post_init__(self) -> None:
        self.layout = LAYOUTS[self.protocol]
        self.registers = bytearray(256)
        self.velocity = 0.0
        self._store(self.layout.model, 2, MODEL_NUMBERS[self.protocol])
        self.set_position_limits(self.min_tick, self.max_tick)
        self.set_homing(self.homing)
        full = FULL_TORQUE[self.protocol]
        self._store(self.layout.torque_limit, 2, full)
        if self.layout.current_limit is not None:
            self._store(self.layout.current_limit, 2, full)
        self._pushing = 0.0      # s spent pushing on the block at overload torque
        self._block_side = 1.0
        self._in_contact = False
        if self.layout.drive_mode is not None:
            self.registers[self.layout.drive_mode] = self.drive_mode & 0xFF
        self.registers[self.layout.return_delay] = self.return_delay & 0xFF
        if self.layout.lock is not None:
            # Locked at power-on: a tool unlocks before it writes EEPROM, as LeRobot's
            # disable_torque and Feetech's own examples (unLockEprom) do.
            self.registers[self.layout.lock] = 1
        # A servo keeps its last goal across power cycles of the host: a stale goal.
        self._store(self.layout.goal, self.layout.goal_size,
                    round(self.position if self.goal is None else self.goal))
        self.position = self.encoder_of(self.position)
        self._time: float | None = None

    # ------------------------------------------------------------------ registers
    def _store(self, address: int, size: int, value: int, sign_bit: int = 15) -> None:
        if self.layout.sign_magnitude and value < 0:
            value = -value | (1 << sign_bit)
        self.registers[address:address + size] = (value & ((1 << 8 * size) - 1)).to_bytes(
            size, 'little')

    def _load_value(self, address: int, size: int) -> int:
        raw = int.from_bytes(self.registers[address:address + size], 'little')
        if self.layout.sign_magnitude:
            return -(raw & 0x7FFF) if raw & 0x8000 and size == 2 else raw
        return raw - (1 << 8 * size) if raw & (1 << (8 * size - 1)) else raw

    def reply_delay(self) -> float:
        """s the servo waits before each reply (its Return_Delay_Time register)."""
        return self.registers[self.layout.return_delay] * 2e-6

    def set_homing(self, value: int) -> None:
        """Write the Homing_Offset register (the motor stays where it is)."""
        self._store(self.layout.homing, self.layout.homing_size, value, sign_bit=11)

    def set_position_limits(self, low: int, high: int) -> None:
        """Write Min_Position_Limit and Max_Position_Limit (present ticks)."""
        self._store(self.layout.min_limit, self.layout.limit_size, low)
        self._store(self.layout.max_limit, self.layout.limit_size, high)

    def position_limits(self) -> tuple[int, int]:
        """(Min_Position_Limit, Max_Position_Limit) as the registers hold them now."""
        size = self.layout.limit_size
        return (self._load_value(self.layout.min_limit, size),
                self._load_value(self.layout.max_limit, size))

    def homing_offset(self) -> int:
        raw = int.from_bytes(self.registers[self.layout.homing:][:self.layout.homing_size],
                             'little')
        if self.layout.sign_magnitude:
            return -(raw & 0x7FF) if raw & 0x800 else raw & 0x7FF
        bits = 8 * self.layout.homing_size
        return raw - (1 << bits) if raw & (1 << (bits - 1)) else raw

    def _reversed(self) -> bool:
        return self.layout.drive_mode is not None and \
            bool(self.registers[self.layout.drive_mode] & 1)

    def present(self, encoder: float | None = None) -> float:
        """The position the host reads for an encoder position (default: the motor's)."""
        encoder = self.position if encoder is None else encoder
        if self.layout.sign_magnitude:
            return (encoder - self.homing_offset()) % 4096
        return (-encoder if self._reversed() else encoder) + self.homing_offset()

    def encoder_of(self, present: float) -> float:
        if self.layout.sign_magnitude:
            return (present + self.homing_offset()) % 4096
        encoder = present - self.homing_offset()
        return -encoder if self._reversed() else encoder

    def set_block(self, ticks: float | None) -> None:
        """An object at ``ticks`` (present position) on the far side of the motor's travel from
        where it is now; None removes it."""
        self.block = ticks
        self._block_side = 1.0 if ticks is None or self.present() >= ticks else -1.0

    def torque_fraction(self) -> float:
        """The torque limit now in force, as a fraction of the servo's maximum."""
        limit = int.from_bytes(self.registers[self.layout.torque_limit:][:2], 'little')
        if self.layout.current_limit is None:
            return min(limit, 1000) / 1000.0
        full = int.from_bytes(self.registers[self.layout.current_limit:][:2], 'little')
        return min(limit, full) / full if full else 0.0

    def load_per_mille(self, present: float) -> int:
        """Per mille of the maximum torque: proportional to the position error, capped by the
        torque limit; against an object, the controller's integral winds up to the limit."""
        cap = round(1000 * self.torque_fraction())
        error = self.goal_ticks() - present
        if self._in_contact and abs(error) > 2:
            return cap if error > 0 else -cap
        return max(-cap, min(cap, round(error * 2)))

    @property
    def torque_on(self) -> bool:
        return bool(self.registers[self.layout.torque])

    def goal_ticks(self) -> int:
        return self._load_value(self.layout.goal, self.layout.goal_size)

    # ------------------------------------------------------------------ motor
    def advance(self, now: float) -> None:
        """Move the motor from the last update to ``now`` (s, monotonic)."""
        if self._time is None:
            self._time = now
        dt = now - self._time
        self._time = now
        if dt <= 0.0:
            return
        if not self.torque_on:
            self.velocity = 0.0
            return
        low, high = self.position_limits()
        goal = min(max(self.goal_ticks(), low), high)
        present = self.present()
        step = (goal - present) * (1.0 - math.exp(-dt / self.tau))
        cap = self.max_speed * dt
        step = max(-cap, min(cap, step))
        self._in_contact = self.block is not None and \
            (present + step - self.block) * self._block_side < 0
        if self._in_contact:
            step = self.block - present         # the jaws close on the object and stop
            if abs(self.load_per_mille(self.block)) >= OVERLOAD_LOAD:
                self._pushing += dt
                if self._pushing >= OVERLOAD_TIME:
                    self.faults.error_bits |= 32          # overload: protection trips
                    self.registers[self.layout.torque] = 0
            else:
                self._pushing = 0.0
        else:
            self._pushing = 0.0
        self.position = self.encoder_of(present + step)
        self.velocity = step / dt

    def read(self, address: int, size: int, now: float) -> bytes:
        self.advance(now)
        layout = self.layout
        present = self.present()
        self._store(layout.position, layout.position_size, round(present))
        self._store(layout.velocity, layout.velocity_size,
                    round(self.velocity / layout.velocity_unit))
        load = self.load_per_mille(present) if self.torque_on else 0
        self._store(layout.load, 2, load, sign_bit=10)
        self._store(layout.voltage, layout.voltage_size, round(self.voltage * 10))
        self._store(layout.temperature, 1, round(self.temperature))
        if layout.hardware_error is not None:
            self.registers[layout.hardware_error] = self.faults.error_bits & 0xFF
        return bytes(self.registers[address:address + size])

    def write(self, address: int, data: bytes, now: float) -> int:
        """Write ``data`` at ``address``: the status error of the reply (0: done). An EEPROM
        write the servo does not keep changes nothing: a Dynamixel with its torque on refuses
        it (ACCESS_ERROR); an STS whose Lock is set acknowledges it, but a real one loses it
        at the next power-off, which is what the simulation keeps of it."""
        self.advance(now)
        layout = self.layout
        if address < layout.eeprom_end:
            if layout.lock is None and self.torque_on:
                return ACCESS_ERROR
            if layout.lock is not None and self.registers[layout.lock]:
                return 0
        self.registers[address:address + len(data)] = data
        return 0

    def status_error(self) -> int:
        """The error byte of this servo's status packets."""
        if not self.faults.error_bits:
            return 0
        return 0x80 if self.layout.hardware_error is not None else self.faults.error_bits
