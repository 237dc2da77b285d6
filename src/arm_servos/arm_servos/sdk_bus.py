"""What the Feetech and Dynamixel drivers share: the SDKs' PortHandler, GroupSyncRead and
GroupSyncWrite driven the same way, retries within the cycle, counters, a vanished adapter.

The two SDKs are near twins (scservo_sdk is a fork of dynamixel_sdk), so one class drives both;
each vendor module gives the SDK module, the control-table addresses and the decoding.

Where the SDKs fall short, and the small workarounds here:

* ``GroupSyncRead.rxPacket`` (both SDKs) waits for the replies by expected id and stops at the
  first one missing, so one lost reply makes every later servo look lost too, and it throws
  away each status packet's error byte (overload, overheat, voltage). We send the sync read
  with ``GroupSyncRead.txPacket`` and take the replies with the SDK's own packet reader
  (``rxPacket``), filing each by the id it carries, error byte kept.
* The SDKs' reply timeout assumes a 16 ms USB latency timer (34 ms per lost reply), which
  would eat a whole cycle; we set the timeout from the bytes expected plus a margin
  (``reply_timeout``; raise it for an adapter whose latency timer is not 1 ms).
* The SDKs wait for a reply by polling a non-blocking port in a busy loop (a whole CPU core
  per bus); we sleep in ``select()`` until the first byte of a reply is there.
* The SDKs' reader asks the port for a packet's header, then for the rest: two pyserial reads
  per reply (each a select() and a read()), all on the bus cycle's critical path. Their reader
  gets :class:`_Replies` instead, which serves it from one read of every byte waiting; and a
  packet goes out in one write() (pyserial's write adds a select() after it).
* ``scservo_sdk``'s ``PortHandler.clearPort`` calls ``flush()``, which drains output and keeps
  stale input: a late reply from the previous cycle would be read as this cycle's. We discard
  input before each instruction on both protocols.
* A serial error in the middle of a packet leaves ``port.is_using`` set and every later call
  answers "port busy"; we clear it whatever happened.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
import functools
import os
import select
import termios
import time
from types import ModuleType
from typing import Any

import serial

from arm_servos.bus import BusStats, BusUnavailableError, ServoBus, ServoState

# pyserial reports a vanished adapter as SerialException (an OSError subclass), a bare OSError
# (EIO) from the file descriptor, or termios.error from flushing its buffers.
PORT_ERRORS = (serial.SerialException, OSError, termios.error)
# s added to the wire time of a sync read's replies: the servos' return delay and the USB
# adapter's latency (FTDI adapters: set the latency timer to 1 ms, see docs/servos.md).
REPLY_MARGIN = 0.003
# What the SDKs' single-servo exchanges (ping, register reads and writes) raise on a short or
# garbled reply (they index the packet before checking its length): a corrupt reply, retried,
# never a bridge that dies at start-up.
GARBLED = (IndexError, ValueError)


class SdkServoBus(ServoBus):
    """One bus of one protocol through its vendor SDK (see the module docstring)."""

    # Filled by each vendor subclass.
    sdk: ModuleType
    protocol = ''
    read_address = 0          # first control-table address of the sync read
    read_length = 0           # bytes read per servo
    goal_address = 0
    goal_length = 0
    torque_address = 0
    instruction_overhead = 0  # bytes of a sync instruction without its parameters
    status_overhead = 0       # bytes of a status packet without its parameters
    id_offset = 0             # index of the id in a status packet
    error_offset = 0          # index of the error byte in a status packet
    data_offset = 0           # index of the first parameter byte in a status packet

    def __init__(self, port: str, ids: Sequence[int], baudrate: int = 1_000_000,
                 retries: int = 2, reply_timeout: float | None = None,
                 cycle_budget: float = 0.008, reopen_interval: float = 0.5) -> None:
        """Args:
            port: serial device path (``/dev/ttyACM0``, or the simulated bus's link).
            ids: servo ids on the bus, one per joint.
            baudrate: bits per second (1 Mbaud is the factory rate of the STS3215 and the
                rate used with X-series arms).
            retries: extra sync reads of the servos that did not answer, within the cycle.
            reply_timeout: seconds to wait for the replies of one sync read; default: their
                bytes on the wire plus REPLY_MARGIN.
            cycle_budget: seconds after which no retry is started in this cycle.
            reopen_interval: seconds between attempts to reopen a vanished port.
        """
        if not ids:
            raise ValueError('a servo bus needs at least one servo id')
        if len(set(ids)) != len(ids):
            raise ValueError(f'servo ids repeat: {list(ids)}')
        bad = [i for i in ids if not 0 <= int(i) <= 252]
        if bad:
            raise ValueError(f'servo ids must be 0..252, got {bad}')
        if retries < 0:
            raise ValueError(f'retries must be >= 0, got {retries}')
        self.port_name = port
        self.ids = tuple(int(i) for i in ids)
        self.baudrate = int(baudrate)
        self.retries = int(retries)
        self.cycle_budget = float(cycle_budget)
        self.reopen_interval = float(reopen_interval)
        self.stats = BusStats()
        self._reply_timeout = reply_timeout
        # s the slowest servo waits before its reply (Return_Delay_Time), once read on
        # connect (eeprom.adopt_return_delays): the default reply timeout waits that per reply.
        self.return_delay = 0.0
        self._port: Any = None
        self._replies = _Replies(None)
        self._packets: Any = self.packet_handler()
        self._reads: dict[tuple[int, ...], Any] = {}   # (address, *ids) → its GroupSyncRead
        self._goal_write: Any = None
        self._last_open_attempt = -1e9
        self.between_attempts: Callable[[], None] | None = None   # see ServoBus

    # ------------------------------------------------------------------ vendor hooks
    def packet_handler(self) -> Any:
        raise NotImplementedError

    def decode(self, servo_id: int, data: Sequence[int], error: int) -> ServoState:
        raise NotImplementedError

    def goal_bytes(self, ticks: int) -> list[int]:
        raise NotImplementedError

    def goal_ticks(self, data: Sequence[int]) -> int:
        """The goal register's bytes as ticks (the inverse of :meth:`goal_bytes`)."""
        raise NotImplementedError

    def parameter_count(self, packet: Sequence[int]) -> int:
        """How many parameter bytes a status packet carries, from its length field."""
        raise NotImplementedError

    def hardware_errors(self, servo_id: int, error: int) -> int:
        """The error bits to report for a status error byte (Dynamixel reads a register)."""
        return error

    def refused_instruction(self, error: int) -> int:
        """The status error that says the instruction was not carried out, 0 when it was
        (a Feetech status carries alarms only)."""
        return 0

    def receive(self) -> tuple[list[int], int]:
        """One status packet through the SDK's reader: (packet, COMM_* result)."""
        return self._packets.rxPacket(self._replies)

    # ------------------------------------------------------------------ port
    @property
    def is_open(self) -> bool:
        return self._port is not None

    def open(self) -> None:
        self._last_open_attempt = time.monotonic()
        port = self.sdk.PortHandler(self.port_name)
        try:
            opened = port.setBaudRate(self.baudrate)
        except PORT_ERRORS as exc:
            raise self._unavailable(f'cannot open {self.port_name}: {_reason(exc)}') from None
        if not opened:
            raise self._unavailable(f'cannot open {self.port_name}: baud rate {self.baudrate} '
                                    f'is not one the {self.protocol} SDK supports')
        # We discard input before each instruction ourselves; the SDKs' clearPort, called
        # before each of their packets, would drain output (scservo_sdk: a wait for the last
        # packet's USB transfer, on the cycle's critical path) or discard input twice.
        port.clearPort = _keep
        port.writePort = functools.partial(_write_packet, port.ser)
        if self._reply_timeout is not None:
            # A reply_timeout given (an adapter whose latency timer is above 1 ms, or simulated
            # servos sharing a busy computer's CPU) holds for the SDK's own single-servo
            # exchanges too (ping, register reads and writes), which otherwise wait the
            # packet's bytes plus a 16 ms latency timer twice.
            port.setPacketTimeout = functools.partial(_packet_timeout_at_least, port,
                                                      self._reply_timeout * 1000.0)
        self._port = port
        self._replies = _Replies(port)
        self._reads.clear()
        self._goal_write = None

    def close(self) -> None:
        port, self._port = self._port, None
        if port is not None and port.ser is not None:
            try:
                port.closePort()
            except PORT_ERRORS:
                pass

    def _unavailable(self, message: str) -> BusUnavailableError:
        self.stats.note(message)
        return BusUnavailableError(message)

    def _ensure_open(self) -> None:
        if self._port is not None:
            return
        if time.monotonic() - self._last_open_attempt < self.reopen_interval:
            raise BusUnavailableError(self.stats.last_error or f'{self.port_name} is not open')
        self.stats.reopen_attempts += 1
        self.open()

    def _port_lost(self, exc: BaseException) -> BusUnavailableError:
        self.close()
        self._last_open_attempt = time.monotonic()
        return self._unavailable(f'serial adapter on {self.port_name} lost: {_reason(exc)}')

    def _wait_readable(self, deadline: float) -> None:
        # The SDKs poll a non-blocking port in a busy loop until a reply or the timeout;
        # sleeping in select() until the first byte is there spares a CPU core per bus.
        remaining = deadline - time.monotonic()
        if remaining > 0 and not self._replies.buffer:
            select.select([self._port.ser.fileno()], [], [], remaining)

    def _discard_input(self) -> None:
        self._port.ser.reset_input_buffer()
        self._replies.buffer.clear()

    # ------------------------------------------------------------------ sizes and time
    def status_bytes(self) -> int:
        return self.status_overhead + self.read_length

    def read_bytes_per_cycle(self) -> int:
        n = len(self.ids)
        sync_read = self.instruction_overhead + n
        sync_write = self.instruction_overhead + n * (1 + self.goal_length)
        return sync_read + n * self.status_bytes() + sync_write

    def reply_timeout(self, count: int) -> float:
        if self._reply_timeout is not None:
            return self._reply_timeout
        return count * (self.status_bytes() * 10.0 / self.baudrate + self.return_delay) \
            + REPLY_MARGIN

    # ------------------------------------------------------------------ operations
    def ping(self, ids: Iterable[int] | None = None) -> dict[int, int | None]:
        self._ensure_open()
        models: dict[int, int | None] = {}
        for servo_id in (self.ids if ids is None else ids):
            models[servo_id] = None
            for _ in range(self.retries + 1):
                try:
                    self._discard_input()
                    model, result, _ = self._packets.ping(self._port, servo_id)
                except PORT_ERRORS as exc:
                    raise self._port_lost(exc) from None
                except GARBLED:
                    model, result = None, self.sdk.COMM_RX_CORRUPT
                finally:
                    self._release()
                self.stats.sent += 2   # ping, then a read of the model number
                if result == self.sdk.COMM_SUCCESS:
                    self.stats.received += 2
                    models[servo_id] = model
                    break
                self._count_failure(servo_id, result)
        return models

    def read_register(self, servo_id: int, address: int, size: int) -> int | None:
        """One register of one servo, raw and unsigned (little-endian), retried; None when the
        servo does not answer (EEPROM checks on connect, not the bus cycle)."""
        self._ensure_open()
        for _ in range(self.retries + 1):
            try:
                self._discard_input()
                data, result, _ = self._packets.readTxRx(self._port, servo_id, address, size)
            except PORT_ERRORS as exc:
                raise self._port_lost(exc) from None
            except GARBLED:
                data, result = [], self.sdk.COMM_RX_CORRUPT
            finally:
                self._release()
            self.stats.sent += 1
            if result == self.sdk.COMM_SUCCESS and len(data) >= size:
                self.stats.received += 1
                return int.from_bytes(bytes(data[:size]), 'little')
            self._count_failure(servo_id, result)
        return None

    def write_register(self, servo_id: int, address: int, size: int, value: int) -> bool:
        """Write one register of one servo (raw, little-endian) and wait for its status,
        retried; False when the servo did not acknowledge it, or refused it (its status
        says so: noted in ``stats``, not retried)."""
        self._ensure_open()
        data = list((value & ((1 << 8 * size) - 1)).to_bytes(size, 'little'))
        for _ in range(self.retries + 1):
            try:
                self._discard_input()
                result, error = self._packets.writeTxRx(self._port, servo_id, address, size,
                                                        data)
            except PORT_ERRORS as exc:
                raise self._port_lost(exc) from None
            except GARBLED:
                result, error = self.sdk.COMM_RX_CORRUPT, 0
            finally:
                self._release()
            self.stats.sent += 1
            if result == self.sdk.COMM_SUCCESS:
                self.stats.received += 1
                refused = self.refused_instruction(error)
                if refused:
                    self.stats.note(f'servo {servo_id} refused a write at {address} '
                                    f'(status error {refused})')
                    return False
                return True
            self._count_failure(servo_id, result)
        return False

    def read(self) -> dict[int, ServoState | None]:
        self._ensure_open()
        start = time.monotonic()
        states: dict[int, ServoState | None] = {}
        pending = list(self.ids)
        for attempt in range(self.retries + 1):
            if attempt:
                if time.monotonic() - start > self.cycle_budget:
                    break
                if self.between_attempts is not None:
                    # The bus is idle here: the owner writes what is waiting (a command, an
                    # e-stop), so it never waits behind a whole retried read.
                    self.between_attempts()
                    if self._port is None:     # that write lost the adapter
                        raise BusUnavailableError(self.stats.last_error or
                                                  f'{self.port_name} is not open')
                self.stats.retries += 1
            for servo_id, (data, error) in self._sync_read(tuple(pending)).items():
                bits = self.hardware_errors(servo_id, error) if error else 0
                states[servo_id] = self.decode(servo_id, data, bits)
                pending.remove(servo_id)
            if not pending:
                break
        for servo_id in pending:
            states[servo_id] = None
        return states

    def read_goals(self, ids: Sequence[int] | None = None) -> dict[int, int | None]:
        ids = tuple(self.ids if ids is None else ids)
        self._ensure_open()
        replies = self._sync_read(ids, self.goal_address, self.goal_length)
        return {i: self.goal_ticks(replies[i][0]) if i in replies else None for i in ids}

    def _sync_read(self, ids: tuple[int, ...], address: int | None = None,
                   length: int | None = None) -> dict[int, tuple[list[int], int]]:
        address = self.read_address if address is None else address
        length = self.read_length if length is None else length
        group = self._reads.get((address, *ids))
        if group is None:
            group = self.sdk.GroupSyncRead(self._port, self._packets, address, length)
            for servo_id in ids:
                group.addParam(servo_id)
            self._reads[(address, *ids)] = group
        replies: dict[int, tuple[list[int], int]] = {}
        try:
            self._discard_input()
            result = group.txPacket()
            self.stats.sent += 1
            if result != self.sdk.COMM_SUCCESS:
                self.stats.note(f'sync read not sent: {self._packets.getTxRxResult(result)}')
                return replies
            timeout = self.reply_timeout(len(ids))
            self._port.setPacketTimeoutMillis(timeout * 1000.0)
            deadline = time.monotonic() + timeout
            waiting = set(ids)
            corrupt: set[int] = set()
            # The servos of a sync read answer one after the other in the order of its ids;
            # once a later one has answered (even corrupt), an earlier silent one will not
            # (a half-duplex bus has no room for it): no wait for the timeout, it is retried.
            order = {servo_id: index for index, servo_id in enumerate(ids)}
            latest = -1
            while waiting:
                self._wait_readable(deadline)
                packet, result = self.receive()
                servo_id = packet[self.id_offset] if len(packet) > self.id_offset else None
                if result == self.sdk.COMM_SUCCESS:
                    if servo_id in waiting and self.parameter_count(packet) != length:
                        # A late answer to an earlier request (a slow servo's): not this one.
                        self.stats.note(f'servo {servo_id}: late reply to an earlier request '
                                        'ignored')
                    elif servo_id in waiting:
                        waiting.discard(servo_id)
                        corrupt.discard(servo_id)
                        self.stats.received += 1
                        data = list(packet[self.data_offset:self.data_offset + length])
                        replies[servo_id] = (data, packet[self.error_offset])
                        latest = max(latest, order[servo_id])
                    if _all_passed(waiting, corrupt, order, latest):
                        break
                    continue
                if result != self.sdk.COMM_RX_CORRUPT:
                    break
                self.stats.checksum_errors += 1
                who = f'servo {servo_id}' if servo_id in waiting else 'a servo'
                self.stats.note(f'{who}: corrupt reply (checksum or length)')
                if servo_id in waiting:
                    corrupt.add(servo_id)
                    latest = max(latest, order[servo_id])
                if self._port.isPacketTimeout() or _all_passed(waiting, corrupt, order, latest):
                    break
        except PORT_ERRORS as exc:
            raise self._port_lost(exc) from None
        finally:
            self._release()
        for servo_id in sorted(waiting - corrupt):
            self._count_failure(servo_id, self.sdk.COMM_RX_TIMEOUT)
        return replies

    def _count_failure(self, servo_id: int, result: int) -> None:
        if result == self.sdk.COMM_RX_CORRUPT:
            self.stats.checksum_errors += 1
            self.stats.note(f'servo {servo_id}: corrupt reply')
        else:
            self.stats.lost += 1
            self.stats.per_servo_lost[servo_id] = self.stats.per_servo_lost.get(servo_id, 0) + 1
            self.stats.note(f'servo {servo_id}: no reply '
                            f'({_words(self._packets.getTxRxResult(result))})')

    def _release(self) -> None:
        if self._port is not None:
            self._port.is_using = False

    def write_goals(self, goals: Mapping[int, int]) -> None:
        unknown = sorted(set(goals) - set(self.ids))
        if unknown:
            raise ValueError(f'goal for servo ids not on this bus: {unknown}')
        self._ensure_open()
        if self._goal_write is None:
            self._goal_write = self.sdk.GroupSyncWrite(self._port, self._packets,
                                                       self.goal_address, self.goal_length)
        group = self._goal_write
        for servo_id, ticks in goals.items():
            data = self.goal_bytes(int(ticks))
            if not group.changeParam(servo_id, data):
                group.addParam(servo_id, data)
        for servo_id in [i for i in group.data_dict if i not in goals]:
            group.removeParam(servo_id)
        self._send(group, 'goal positions')

    def set_torque(self, enabled: bool, ids: Sequence[int] | None = None) -> None:
        self._ensure_open()
        group = self.sdk.GroupSyncWrite(self._port, self._packets, self.torque_address, 1)
        for servo_id in (self.ids if ids is None else ids):
            group.addParam(servo_id, [1 if enabled else 0])
        self._send(group, 'torque on' if enabled else 'torque off')

    def _send(self, group: Any, what: str) -> None:
        try:
            result = group.txPacket()
        except PORT_ERRORS as exc:
            raise self._port_lost(exc) from None
        finally:
            self._release()
        self.stats.sent += 1
        if result != self.sdk.COMM_SUCCESS:
            message = f'{what} not sent: {self._packets.getTxRxResult(result)}'
            self.stats.note(message)
            raise BusUnavailableError(message)


def _keep() -> None:
    """PortHandler.clearPort, replaced (see :meth:`SdkServoBus.open`)."""


class _Replies:
    """The port as the SDK's packet reader sees it during a sync read: ``readPort`` served
    from a buffer that one read fills with every byte waiting (the SDK asks for each reply's
    header and then its rest: two pyserial reads, each a select() and a read())."""

    def __init__(self, port: Any) -> None:
        self.port = port
        self.buffer = bytearray()

    def readPort(self, length: int) -> bytes:   # noqa: N802 - the SDKs' name
        if len(self.buffer) < length:
            fd = self.port.ser.fileno()
            chunk = _read_waiting(fd)
            if not chunk and select.select([fd], [], [], 0)[0]:
                chunk = _read_waiting(fd)    # came in meanwhile, or the adapter is gone:
                if not chunk:                # readable yet empty (pyserial's words for it)
                    raise serial.SerialException('device reports readiness to read but '
                                                 'returned no data (device disconnected or '
                                                 'multiple access on port?)')
            self.buffer += chunk
        data = bytes(self.buffer[:length])
        del self.buffer[:length]
        return data

    def isPacketTimeout(self) -> bool:   # noqa: N802 - the SDKs' name
        return self.port.isPacketTimeout()


def _write_packet(ser: serial.Serial, packet: Sequence[int]) -> int:
    """PortHandler.writePort in one write() when the port takes the whole packet (its output
    queue is empty between two packets); pyserial's write only for a rest."""
    data = bytes(packet)
    try:
        written = os.write(ser.fileno(), data)
    except BlockingIOError:
        written = 0
    if written < len(data):
        written += ser.write(data[written:])
    return written


def _read_waiting(fd: int) -> bytes:
    """The bytes waiting on a non-blocking serial port, b'' when there are none."""
    try:
        return os.read(fd, 4096)     # nothing waiting: b'' (VMIN 0, as pyserial sets it)
    except BlockingIOError:          # or this (VMIN 1)
        return b''


def _all_passed(waiting: set[int], corrupt: set[int], order: Mapping[int, int],
                latest: int) -> bool:
    """Whether every servo still awaited has had its turn: its reply came corrupt, or a servo
    after it in the sync read's order has answered."""
    return all(i in corrupt or order[i] < latest for i in waiting)


def _packet_timeout_at_least(port: Any, floor_ms: float, packet_length: int) -> None:
    """PortHandler.setPacketTimeout, then at least ``floor_ms``."""
    type(port).setPacketTimeout(port, packet_length)
    port.packet_timeout = max(port.packet_timeout, floor_ms)


def _words(sdk_message: str) -> str:
    # The SDKs say '[TxRxResult] There is no status packet!'.
    return sdk_message.replace('[TxRxResult] ', '').rstrip('!').lower()


def _reason(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
