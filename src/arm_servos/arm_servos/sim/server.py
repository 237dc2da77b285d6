"""A simulated servo bus on a pseudo-terminal: the bridge opens its path with the SDK's real
PortHandler (pyserial), exactly as it opens ``/dev/ttyACM0``.

Timing follows the wire: each reply is written when its bytes would have finished arriving at
the configured baud rate (instruction bytes, the servo's return delay, then the replies one
after the other), so a sync read of six servos at 1 Mbaud takes as long as on a real bus.

Faults are injected on command, from the process's standard input (one per line, see
:data:`HELP`) or :meth:`SimBus.command` when the bus runs in a thread of a test::

    lose ID N | corrupt ID N | drop ID N (its next N writes lost) | remove ID | restore ID
    | error ID WORD | slow ID SECONDS
    push ID TICKS (move a joint by hand, torque off) | hand ID:TICKS ... (several at once)
    | vanish | replug | status | writes | changed ID SINCE (when a new goal for ID reached the
    bus after SINCE, a time.monotonic() value: for latency benchmarks)
    homing ID OFFSET (write the servo's Homing_Offset, as a recalibration or a swap does)
    | limits ID MIN MAX (write its Min_Position_Limit and Max_Position_Limit, as LeRobot's
    calibration writes range_min and range_max)
    block ID TICKS (an object the servo closes on, e.g. between the gripper's jaws) | unblock ID

``--lerobot FILE`` sets up the servos of a LeRobot calibration file as LeRobot left them: its
ids, its homing offsets and position limits (range_min, range_max) in EEPROM (and Koch's drive
modes), each joint at the middle of its
range (the URDF zero of arm_servos.lerobot), the protocol from the file unless given.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import contextlib
import ctypes
import heapq
import os
from pathlib import Path
import select
import signal
import sys
import threading
import time
import tty

from arm_servos.sim.packets import (
    BROADCAST,
    CODECS,
    Instruction,
    PING,
    READ,
    SYNC_READ,
    SYNC_WRITE,
    WRITE,
)
from arm_servos.sim.servo import SimServo

HELP = ('commands: lose ID N | corrupt ID N | drop ID N | remove ID | restore ID | '
        'error ID overload|overheating|voltage|clear | slow ID SECONDS | push ID TICKS | '
        'hand ID:TICKS ... | homing ID OFFSET | limits ID MIN MAX | block ID TICKS | '
        'unblock ID | vanish | replug | status | writes | changed ID SINCE')
# Error words → the bits each protocol uses for them (Feetech status byte, Dynamixel reg 70).
ERROR_BITS = {'feetech': {'voltage': 1, 'overheating': 4, 'overload': 32, 'clear': 0},
              'dynamixel': {'voltage': 1, 'overheating': 4, 'overload': 32, 'clear': 0}}


class SimBus:
    """Servos on one pty; ``link`` is a stable path (a symlink to the pty's device)."""

    def __init__(self, protocol: str, servos: Sequence[SimServo], link: str | Path,
                 baudrate: int = 1_000_000, coalesce: bool = True) -> None:
        if protocol not in CODECS:
            raise ValueError(f'unknown protocol {protocol!r}; choose from {sorted(CODECS)}')
        self.protocol = protocol
        self.codec = CODECS[protocol]()
        self.servos = {servo.servo_id: servo for servo in servos}
        self.link = Path(link)
        self.baudrate = baudrate
        # The replies of one sync read written in one go when the last one is due, as a USB
        # adapter hands them over in one transfer, rather than each when due: one wake-up of
        # this process and of the bridge per cycle instead of one per servo (a busy machine
        # delays every wake-up). The bridge's cycle ends at the last reply either way; a
        # slowed servo (``slow``) still answers on its own, late.
        self.coalesce = coalesce
        self._batch: list[tuple[float, bytes]] | None = None
        self.bad_instructions = 0
        self.instructions = 0
        self.goal_writes: list[tuple[float, dict[int, int]]] = []  # (time, goals), for tests
        self.goal_write_count = 0     # goal_writes keeps the last 20000 (a long demo)
        self.torque_writes = 0
        self._lock = threading.Lock()
        self._master = -1
        self._slave = -1
        self._buffer = bytearray()
        self._outbox: list[tuple[float, int, bytes]] = []
        self._sequence = 0
        # When the wire is free again: a half-duplex bus carries one packet at a time, so an
        # instruction written right after another (a sync write, then the next sync read)
        # starts arriving only once the one before has crossed, and after the last reply.
        self._line_free = 0.0
        self._wake_r, self._wake_w = os.pipe()
        self._running = False
        self._thread: threading.Thread | None = None
        self._plug()

    # ------------------------------------------------------------------ pty
    def _plug(self) -> None:
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)     # no echo, no line discipline until pyserial opens it
        device = os.ttyname(self._slave)
        tmp = self.link.with_name(self.link.name + '.tmp')
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        tmp.symlink_to(device)
        tmp.replace(self.link)
        self.device = device

    def _unplug(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.link.unlink()
        for fd in (self._master, self._slave):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = -1
        self._buffer.clear()
        self._outbox.clear()

    # ------------------------------------------------------------------ loop
    def start(self) -> SimBus:
        self._running = True
        self._thread = threading.Thread(target=self.serve, name='servo-sim', daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._running = False
        os.write(self._wake_w, b'x')
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        self._unplug()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def serve(self, control: int | None = None, fifo: Path | None = None) -> None:
        """Run until :meth:`stop`, taking fault commands from ``control`` (a file descriptor,
        e.g. standard input) and from ``fifo`` (a named pipe: ``echo 'error 3 overload' >
        FIFO`` from any shell), answers on standard output."""
        self._running = True
        _tight_timers()
        control_buffer = b''
        # Opened for writing too, so the pipe never reads as closed between two writers.
        fifo_fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK) if fifo is not None else None
        fifo_buffer = b''
        while self._running:
            readers = [self._wake_r] + ([self._master] if self._master >= 0 else [])
            if control is not None:
                readers.append(control)
            if fifo_fd is not None:
                readers.append(fifo_fd)
            timeout = None
            if self._outbox:
                timeout = max(0.0, self._outbox[0][0] - time.monotonic())
            ready, _, _ = select.select(readers, [], [], timeout)
            if self._wake_r in ready:
                os.read(self._wake_r, 64)
            # The bus first: a command typed after a write has arrived sees its effect.
            if self._master >= 0 and self._master in ready:
                try:
                    data = os.read(self._master, 4096)
                except OSError:
                    data = b''
                self._receive(data, time.monotonic())
            if fifo_fd is not None and fifo_fd in ready:
                fifo_buffer += os.read(fifo_fd, 4096)
                while b'\n' in fifo_buffer:
                    line, fifo_buffer = fifo_buffer.split(b'\n', 1)
                    print(self.command(line.decode(errors='replace')), flush=True)
            if control is not None and control in ready:
                chunk = os.read(control, 4096)
                if not chunk:
                    control = None   # input closed (e.g. started in the background): go on
                    continue
                control_buffer += chunk
                while b'\n' in control_buffer:
                    line, control_buffer = control_buffer.split(b'\n', 1)
                    print(self.command(line.decode(errors='replace')), flush=True)
            self._flush_due()

    def _flush_due(self) -> None:
        # Never before its bytes have crossed the wire (select() wakes at the due time or
        # just after it: _tight_timers).
        now = time.monotonic()
        while self._outbox and self._outbox[0][0] <= now:
            _, _, packet = heapq.heappop(self._outbox)
            if self._master >= 0:
                with contextlib.suppress(OSError):
                    os.write(self._master, packet)

    def _receive(self, data: bytes, now: float) -> None:
        self._buffer.extend(data)
        while self._buffer:
            instruction, used, bad = self.codec.parse(self._buffer)
            del self._buffer[:used]
            if bad:
                self.bad_instructions += 1   # a real servo ignores a corrupt instruction
            if instruction is None:
                if used == 0:
                    break
                continue
            self.instructions += 1
            with self._lock:
                self._execute(instruction, now)

    def _byte_time(self, count: int) -> float:
        return count * 10.0 / self.baudrate

    def _execute(self, ins: Instruction, now: float) -> None:
        # The instruction took its bytes' time to arrive, once the wire was free; replies
        # follow one after the other.
        clock = max(now, self._line_free) + self._byte_time(ins.size)
        self._line_free = clock
        codec = self.codec
        if ins.instruction == SYNC_WRITE:
            address, size, body = codec.sync_header(ins.params)
            goals = {}
            for start in range(0, len(body) - size + 1, size + 1):
                servo = self.servos.get(body[start])
                if servo is not None and servo.faults.drop_writes > 0:
                    servo.faults.drop_writes -= 1      # lost on the wire: no reply says so
                    continue
                if servo is not None and not servo.faults.missing:
                    servo.write(address, body[start + 1:start + 1 + size], clock)
                    if address == servo.layout.goal:
                        goals[servo.servo_id] = servo.goal_ticks()
            if any(s.layout.torque == address for s in self.servos.values()):
                self.torque_writes += 1
            if goals:
                self.goal_writes.append((clock, goals))
                self.goal_write_count += 1
                if len(self.goal_writes) > 40000:
                    del self.goal_writes[:20000]
            return
        if ins.instruction == SYNC_READ:
            address, size, ids = codec.sync_header(ins.params)
            self._batch = [] if self.coalesce else None
            for servo_id in ids:
                servo = self.servos.get(servo_id)
                if servo is not None:
                    clock = self._reply(servo, clock, servo.read(address, size, clock))
            self._push_batch()
            return
        servo = self.servos.get(ins.servo_id)
        if servo is None:
            return
        if ins.instruction == PING:
            model = int.from_bytes(servo.registers[servo.layout.model:][:2], 'little')
            self._send(servo, clock, codec.ping_reply(servo.servo_id, servo.status_error(),
                                                      model))
        elif ins.instruction == READ:
            address, size = codec.read_request(ins.params)
            self._reply(servo, clock, servo.read(address, size, clock))
        elif ins.instruction == WRITE:
            address, data = codec.write_request(ins.params)
            refused = servo.write(address, data, clock) if not servo.faults.missing else 0
            if ins.servo_id != BROADCAST:
                self._reply(servo, clock, b'', refused)

    def _reply(self, servo: SimServo, clock: float, params: bytes, refused: int = 0) -> float:
        error = refused or servo.status_error()
        return self._send(servo, clock, self.codec.status(servo.servo_id, error, params))

    def _send(self, servo: SimServo, clock: float, packet: bytes) -> float:
        faults = servo.faults
        if faults.missing:
            return clock
        if faults.lose_replies > 0:
            faults.lose_replies -= 1
            return clock
        if faults.corrupt_replies > 0:
            faults.corrupt_replies -= 1
            packet = packet[:-1] + bytes([packet[-1] ^ 0x5A])
        due = clock + servo.reply_delay() + faults.extra_delay + self._byte_time(len(packet))
        self._line_free = max(self._line_free, due)
        if self._batch is not None:
            if faults.extra_delay > 0:
                self._push_batch()
                self._batch = []
            self._batch.append((due, packet))
            if faults.extra_delay > 0:
                self._push_batch()
                self._batch = []
            return due
        self._sequence += 1
        heapq.heappush(self._outbox, (due, self._sequence, packet))
        return due

    def _push_batch(self) -> None:
        batch, self._batch = self._batch, None
        if batch:
            self._sequence += 1
            heapq.heappush(self._outbox, (batch[-1][0], self._sequence,
                                          b''.join(p for _, p in batch)))

    # ------------------------------------------------------------------ faults
    def command(self, line: str) -> str:
        """Apply one fault command (see :data:`HELP`); returns what was done, in words."""
        words = line.split()
        if not words:
            return ''
        verb, args = words[0].lower(), words[1:]
        try:
            with self._lock:
                return self._apply(verb, args)
        except (ValueError, IndexError, KeyError) as exc:
            return f'error: {exc}; {HELP}'

    def _servo(self, text: str) -> SimServo:
        servo_id = int(text)
        if servo_id not in self.servos:
            raise KeyError(f'no servo {servo_id} on this bus (ids {sorted(self.servos)})')
        return self.servos[servo_id]

    def _apply(self, verb: str, args: list[str]) -> str:
        if verb == 'vanish':
            self._unplug()
            return f'adapter unplugged ({self.link} removed)'
        if verb == 'replug':
            if self._master < 0:
                self._plug()
                os.write(self._wake_w, b'x')
            return f'adapter plugged in: {self.link} -> {self.device}'
        if verb == 'writes':
            return f'goal writes {self.goal_write_count}, torque writes {self.torque_writes}'
        if verb == 'hand':     # a hand moving several joints of a leader arm at once
            moves = [(self._servo(a.split(':')[0]), float(a.split(':')[1])) for a in args]
            for servo, _ in moves:
                if servo.torque_on:
                    raise ValueError(f'servo {servo.servo_id} has torque on and does not move')
            for servo, ticks in moves:
                servo.position = servo.encoder_of(ticks)   # ticks as the host reads them
            return f'hand: {len(moves)} servos moved'
        if verb == 'changed':
            return self._changed(int(args[0]), float(args[1]))
        if verb == 'status':
            return '; '.join(
                f'id {s.servo_id}: pos {s.present():.0f} goal {s.goal_ticks()} '
                f'encoder {s.position:.1f} homing {s.homing_offset()} '
                f'torque limit {s.torque_fraction():.3f} '
                f'load {s.load_per_mille(s.present()) / 1000 if s.torque_on else 0:.3f} '
                f'torque {"on" if s.torque_on else "off"}' for s in self.servos.values())
        servo = self._servo(args[0])
        faults = servo.faults
        if verb == 'lose':
            faults.lose_replies = int(args[1])
        elif verb == 'corrupt':
            faults.corrupt_replies = int(args[1])
        elif verb == 'drop':
            faults.drop_writes = int(args[1])
        elif verb == 'remove':
            faults.missing = True
        elif verb == 'restore':
            faults.missing, faults.extra_delay = False, 0.0
            faults.lose_replies = faults.corrupt_replies = faults.error_bits = 0
            faults.drop_writes = 0
        elif verb == 'error':
            table = ERROR_BITS[self.protocol]
            if args[1] not in table:
                raise ValueError(f'unknown error {args[1]!r}, choose from {sorted(table)}')
            faults.error_bits = table[args[1]]
        elif verb == 'slow':
            faults.extra_delay = float(args[1])
        elif verb == 'push':
            # A hand moving a joint whose torque is off (calibration); a servo holding its
            # goal under torque does not yield.
            if servo.torque_on:
                raise ValueError(f'servo {servo.servo_id} has torque on and does not move')
            servo.position = servo.encoder_of(float(int(args[1])))
        elif verb == 'homing':
            servo.set_homing(int(args[1]))
        elif verb == 'limits':
            servo.set_position_limits(int(args[1]), int(args[2]))
        elif verb == 'block':
            servo.set_block(float(int(args[1])))
        elif verb == 'unblock':
            servo.set_block(None)
        else:
            raise ValueError(f'unknown command {verb!r}')
        return f'servo {servo.servo_id}: {verb} {" ".join(args[1:])}'.rstrip()


    def _changed(self, servo_id: int, since: float) -> str:
        """'TIME TICKS' of the first goal write for ``servo_id`` at or after ``since`` whose
        goal differs from the last one before it ('none' if there is none yet)."""
        before = None
        for clock, goals in self.goal_writes:
            if servo_id not in goals:
                continue
            if clock < since:
                before = goals[servo_id]
            elif goals[servo_id] != before:
                return f'{clock:.6f} {goals[servo_id]}'
        return 'none'


def _tight_timers() -> None:
    """Linux: a sleep of this thread ends within a microsecond or so of its timeout rather
    than up to 50 µs after it (the default timer slack), so a reply goes out when its bytes
    are due, not later (never earlier: _flush_due). Elsewhere a no-op."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(29, 1000, 0, 0, 0)   # PR_SET_TIMERSLACK, ns


def _from_lerobot(args: argparse.Namespace) -> None:
    """Fill ids, homing offsets, drive modes, start positions (and the protocol) from a
    LeRobot calibration file."""
    from arm_kinematics.common.yaml_file import read_yaml_file, YamlFileError
    from arm_servos.lerobot import detect_protocol, is_lerobot
    try:
        data = read_yaml_file(Path(args.lerobot))
    except YamlFileError as exc:
        raise SystemExit(f'servo_sim: --lerobot {args.lerobot}: {exc.detail}') from None
    if not is_lerobot(data):
        raise SystemExit(f'servo_sim: --lerobot {args.lerobot}: not a LeRobot calibration')
    motors = list(data.values())
    args.protocol = args.protocol or detect_protocol(args.lerobot, data)
    args.ids = ','.join(str(m['id']) for m in motors)
    args.homing = ','.join(str(m['homing_offset']) for m in motors)
    args.drive_mode = ','.join(str(m['drive_mode']) for m in motors)
    args.limits = ','.join(f'{m["range_min"]}:{m["range_max"]}' for m in motors)
    if args.return_delay is None:   # not given: LeRobot writes 0 on every connect
        args.return_delay = '0'
    if args.position == '2048':   # not given: mid-range, the zero of every body joint
        args.position = ','.join(str((m['range_min'] + m['range_max']) // 2) for m in motors)


def parse_ticks(text: str, count: int, what: str) -> list[float]:
    values = [float(v) for v in text.split(',')] if text else []
    if len(values) == 1:
        values *= count
    if len(values) != count:
        raise SystemExit(f'servo_sim: {what} needs 1 or {count} values, got {len(values)}')
    return values


def parse_limits(text: str, count: int) -> list[tuple[int, int]]:
    """``MIN:MAX`` pairs, comma separated, one or per servo."""
    pairs = []
    for item in text.split(','):
        low, sep, high = item.partition(':')
        try:
            pairs.append((int(low), int(high)))
        except ValueError:
            raise SystemExit(f'servo_sim: --limits expects MIN:MAX, got {item!r}') from None
        if not sep:
            raise SystemExit(f'servo_sim: --limits expects MIN:MAX, got {item!r}')
    if len(pairs) == 1:
        pairs *= count
    if len(pairs) != count:
        raise SystemExit(f'servo_sim: --limits needs 1 or {count} values, got {len(pairs)}')
    return pairs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog='servo_sim', description='Simulated Feetech or Dynamixel servo bus on a pty. '
        + HELP + ' (typed on standard input).')
    parser.add_argument('--protocol', choices=sorted(CODECS), default='',
                        help="feetech or dynamixel (default: feetech, or the --lerobot file's)")
    parser.add_argument('--ids', default='1,2,3,4,5,6', help='servo ids, comma separated')
    parser.add_argument('--link', default='/tmp/arm_servos_sim',
                        help='path of the symlink to the pty (the bridge opens this)')
    parser.add_argument('--baud', type=int, default=1_000_000)
    parser.add_argument('--position', default='2048', help='start ticks, one or per id')
    parser.add_argument('--goal', default='', help='stale goal ticks left in the servos')
    parser.add_argument('--tau', type=float, default=0.05, help='motor time constant, s')
    parser.add_argument('--per-reply', action='store_true', help='write each reply of a sync '
                        'read when it is due (default: all of them when the last one is)')
    parser.add_argument('--homing', default='0', help="Homing_Offset in the servos' EEPROM, "
                        'one or per id')
    parser.add_argument('--drive-mode', default='0', help='Dynamixel Drive_Mode, one or per id')
    parser.add_argument('--limits', default='0:4095', help='Min_Position_Limit:'
                        'Max_Position_Limit in EEPROM, one or per id')
    parser.add_argument('--return-delay', default=None,
                        help='Return_Delay_Time in 2 us units (the wait before each reply), '
                        'one or per id, 0-254; 250 is the factory setting (default: 10, '
                        'or 0 with --lerobot)')
    parser.add_argument('--lerobot', default='', help='a LeRobot calibration file: its ids, '
                        'homing offsets, position limits and drive modes, every joint at '
                        'mid-range, return delay 0 (as LeRobot leaves the servos)')
    parser.add_argument('--control', default='', help='also take commands from this named '
                        'pipe (created; e.g. echo "error 3 overload" > PATH)')
    args = parser.parse_args(argv)
    if args.lerobot:
        _from_lerobot(args)
    args.protocol = args.protocol or 'feetech'
    ids = [int(v) for v in args.ids.split(',')]
    positions = parse_ticks(args.position, len(ids), '--position')
    goals = parse_ticks(args.goal, len(ids), '--goal') if args.goal else [None] * len(ids)
    homings = [int(v) for v in parse_ticks(args.homing, len(ids), '--homing')]
    drive_modes = [int(v) for v in parse_ticks(args.drive_mode, len(ids), '--drive-mode')]
    limits = parse_limits(args.limits, len(ids))
    delays = parse_ticks(args.return_delay or str(SimServo.return_delay), len(ids),
                         '--return-delay')
    if any(not (0 <= d <= 254 and d == int(d)) for d in delays):
        raise SystemExit(f'servo_sim: --return-delay takes whole 2 us units 0-254, got '
                         f'{args.return_delay}')
    delays = [int(d) for d in delays]
    voltage = 7.4 if args.protocol == 'feetech' else 12.0
    servos = [SimServo(i, args.protocol, position=p, goal=g, tau=args.tau, voltage=voltage,
                       homing=h, drive_mode=d, min_tick=low, max_tick=high, return_delay=r)
              for i, p, g, h, d, (low, high), r in zip(ids, positions, goals, homings,
                                                       drive_modes, limits, delays)]
    bus = SimBus(args.protocol, servos, args.link, args.baud, coalesce=not args.per_reply)
    print(f'servo_sim: {args.protocol} bus, ids {ids}, {args.baud} baud on {bus.link} '
          f'-> {bus.device}', flush=True)
    fifo = Path(args.control) if args.control else None
    if fifo is not None:
        with contextlib.suppress(FileNotFoundError):
            fifo.unlink()
        os.mkfifo(fifo)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        bus.serve(control=sys.stdin.fileno(), fifo=fifo)
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        bus._unplug()
        if fifo is not None:
            with contextlib.suppress(FileNotFoundError):
                fifo.unlink()
    return 0


if __name__ == '__main__':
    sys.exit(main())
