"""A simulated servo: a control table of registers over a first-order motor.

The motor follows its goal with time constant ``tau`` and a speed cap, inside the servo's
angle-limit registers (a goal past them is clamped, as STS and X-series servos do). Present
position, speed, load, voltage and temperature are written into the control table whenever
the host reads, so every read goes through the same registers a real servo exposes.
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


FEETECH = Layout(model=3, torque=40, goal=42, goal_size=2, position=56, position_size=2,
                 velocity=58, velocity_size=2, velocity_unit=1.0, load=60, voltage=62,
                 voltage_size=1, temperature=63, min_limit=9, max_limit=11, limit_size=2,
                 hardware_error=None, sign_magnitude=True)
DYNAMIXEL = Layout(model=0, torque=64, goal=116, goal_size=4, position=132, position_size=4,
                   velocity=128, velocity_size=4, velocity_unit=0.229 * 4096 / 60.0, load=126,
                   voltage=144, voltage_size=2, temperature=146, min_limit=52, max_limit=48,
                   limit_size=4, hardware_error=70, sign_magnitude=False)
LAYOUTS = {'feetech': FEETECH, 'dynamixel': DYNAMIXEL}
MODEL_NUMBERS = {'feetech': 777, 'dynamixel': 1060}   # STS3215, XL430-W250


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
    position: float = 2048.0     # ticks
    goal: float | None = None    # ticks; None = the position (no stale goal)
    tau: float = 0.05            # s, first-order time constant
    max_speed: float = 4000.0    # ticks/s (STS3215 at 7.4 V: about 0.9 turn/s)
    min_tick: int = 0
    max_tick: int = 4095
    voltage: float = 7.4
    temperature: float = 31.0
    faults: Faults = field(default_factory=Faults)

    def __post_init__(self) -> None:
        self.layout = LAYOUTS[self.protocol]
        self.registers = bytearray(256)
        self.velocity = 0.0
        self._store(self.layout.model, 2, MODEL_NUMBERS[self.protocol])
        self._store(self.layout.min_limit, self.layout.limit_size, self.min_tick)
        self._store(self.layout.max_limit, self.layout.limit_size, self.max_tick)
        # A servo keeps its last goal across power cycles of the host: a stale goal.
        self._store(self.layout.goal, self.layout.goal_size,
                    round(self.position if self.goal is None else self.goal))
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
        goal = min(max(self.goal_ticks(), self.min_tick), self.max_tick)
        step = (goal - self.position) * (1.0 - math.exp(-dt / self.tau))
        cap = self.max_speed * dt
        step = max(-cap, min(cap, step))
        self.position += step
        self.velocity = step / dt

    def read(self, address: int, size: int, now: float) -> bytes:
        self.advance(now)
        layout = self.layout
        self._store(layout.position, layout.position_size, round(self.position))
        self._store(layout.velocity, layout.velocity_size,
                    round(self.velocity / layout.velocity_unit))
        if self.torque_on:
            error = self.goal_ticks() - self.position
            load = max(-1000, min(1000, round(error * 2)))
        else:
            load = 0
        self._store(layout.load, 2, load, sign_bit=10)
        self._store(layout.voltage, layout.voltage_size, round(self.voltage * 10))
        self._store(layout.temperature, 1, round(self.temperature))
        if layout.hardware_error is not None:
            self.registers[layout.hardware_error] = self.faults.error_bits & 0xFF
        return bytes(self.registers[address:address + size])

    def write(self, address: int, data: bytes, now: float) -> None:
        self.advance(now)
        self.registers[address:address + len(data)] = data

    def status_error(self) -> int:
        """The error byte of this servo's status packets."""
        if not self.faults.error_bits:
            return 0
        return 0x80 if self.layout.hardware_error is not None else self.faults.error_bits
