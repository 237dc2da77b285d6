"""The small interface between the bridge and one serial bus of servos.

Everything above this module speaks servo ids, raw ticks and plain units; everything below it
(``feetech``, ``dynamixel``) speaks one vendor's packets through that vendor's SDK. Like
ros2_control's ``SystemInterface`` the contract is tiny: open, read every servo in one sync
read, write every goal in one sync write, torque on/off, close.

Bus faults never escape as tracebacks: a lost or corrupt reply is retried within the cycle and
counted in :class:`BusStats`; a servo that stays silent comes back as ``None`` in
:meth:`ServoBus.read`; an adapter that vanished raises :class:`BusUnavailableError` with the
port and the reason, and the next call tries to reopen it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
import time


class BusError(RuntimeError):
    """A bus operation failed in a way the caller must handle (message says what and where)."""


class BusUnavailableError(BusError):
    """The serial port cannot be opened or vanished (adapter unplugged, wrong path, busy)."""


@dataclass(frozen=True)
class ServoState:
    """One servo's answer to one sync read, in vendor-neutral units.

    Attributes:
        servo_id: bus id.
        position: raw encoder ticks as the servo reports them.
        velocity: ticks per second.
        load: signed fraction of the servo's maximum torque (−1 … 1).
        voltage: supply voltage, V.
        temperature: °C.
        error_bits: the protocol's raw error bits (status packet or hardware error register).
        errors: the same bits in words, e.g. ``('overload',)``.
    """

    servo_id: int
    position: int
    velocity: float
    load: float
    voltage: float
    temperature: float
    error_bits: int = 0
    errors: tuple[str, ...] = ()


@dataclass
class BusStats:
    """Counters of one bus since it was created (never reset by reopening the port)."""

    sent: int = 0             # instruction packets written
    received: int = 0         # status packets accepted
    lost: int = 0             # expected replies that never came (timeouts)
    checksum_errors: int = 0  # replies with a bad checksum/CRC or cut short
    retries: int = 0          # extra sync reads issued within a cycle
    reopen_attempts: int = 0
    last_error: str = ''
    last_error_time: float = 0.0
    per_servo_lost: dict[int, int] = field(default_factory=dict)

    def note(self, message: str) -> None:
        self.last_error = message
        self.last_error_time = time.monotonic()

    def as_dict(self) -> dict[str, object]:
        return {'sent': self.sent, 'received': self.received, 'lost': self.lost,
                'checksum_errors': self.checksum_errors, 'retries': self.retries,
                'reopen_attempts': self.reopen_attempts, 'last_error': self.last_error}


class ServoBus(ABC):
    """One serial bus with a fixed set of servo ids (the arm's joints)."""

    protocol: str = ''
    ids: tuple[int, ...]
    stats: BusStats
    # Called by read() between a sync read and its retry, when the bus is idle: the bridge
    # writes a command or an e-stop that came meanwhile there (None: nothing to call).
    between_attempts: Callable[[], None] | None = None

    @abstractmethod
    def open(self) -> None:
        """Open the port; :class:`BusUnavailableError` with the reason when it cannot."""

    @abstractmethod
    def close(self) -> None:
        """Close the port (safe to call twice or on a port that vanished)."""

    @property
    @abstractmethod
    def is_open(self) -> bool:
        """True while the port is open."""

    @abstractmethod
    def ping(self, ids: Iterable[int] | None = None) -> dict[int, int | None]:
        """Model number of each id, ``None`` for an id that does not answer."""

    @abstractmethod
    def read(self) -> dict[int, ServoState | None]:
        """One sync read of every servo (retried within the cycle); ``None`` = silent servo."""

    @abstractmethod
    def write_goals(self, goals: Mapping[int, int]) -> None:
        """One sync write of goal positions, raw ticks per id (no reply on either protocol)."""

    @abstractmethod
    def read_goals(self, ids: Sequence[int] | None = None) -> dict[int, int | None]:
        """One sync read of the goal-position register, raw ticks per id (``None``: no
        reply): a goal write has no reply, so torque-on confirms it this way first."""

    @abstractmethod
    def set_torque(self, enabled: bool, ids: Sequence[int] | None = None) -> None:
        """One sync write of the torque-enable register of ``ids`` (all when None)."""

    def read_bytes_per_cycle(self) -> int:
        """Bytes on the wire for one sync read of every servo plus one sync write of goals
        (the theoretical bus limit is baud / 10 / this)."""
        raise NotImplementedError


def words(bits: int, table: Mapping[int, str]) -> tuple[str, ...]:
    """The names of the set bits of ``bits`` from ``table`` (bit value → word); unknown bits
    are named by their value so nothing is hidden."""
    named = tuple(word for bit, word in table.items() if bits & bit)
    unknown = bits & ~sum(table)
    return named + ((f'unknown error bits 0x{unknown:02x}',) if unknown else ())


def signed(value: int, sign_bit: int) -> int:
    """Feetech's sign-and-magnitude encoding (bit ``sign_bit`` is the sign)."""
    magnitude = value & ((1 << sign_bit) - 1)
    return -magnitude if value & (1 << sign_bit) else magnitude


def twos_complement(value: int, bits: int) -> int:
    """Dynamixel's two's complement registers."""
    return value - (1 << bits) if value & (1 << (bits - 1)) else value
