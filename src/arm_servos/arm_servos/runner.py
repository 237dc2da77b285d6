"""The servo bridge's bus thread and its goal, ROS-free: what the node asks what to do.

:class:`BridgeRunner` owns the bus cycle (read every servo, follow the active trajectory goal,
write what the safety rules allow), the one trajectory goal at a time (accepted or rejected
with the reason, preempted, cancelled, aborted by a fault), the torque requests answered once
their write is on the bus, and the command stream. The ``servo_bridge`` node turns messages
into these calls and the answers into messages; the benchmark drives the same object.

Timing: the loop runs at ``rate``; a new command (``~/commands``, or a follower's teleop
target) is written at once, not at the next cycle: by the caller when the bus is idle, else by
the bus thread at its first slot (before its read, between a sync read and its retry, or in
the cycle's own write), so a command waits for one sync read at most, never for a whole
retried one (issue 38.4). An e-stop is latched at once, without waiting for the bus lock (a
bus thread wedged in a bus call cannot delay it); its torque-off goes out at the first of
those chances, and again each cycle until the bus takes it.

In the ``leader`` role (teleoperation) the bus is only read: torque is switched off once each
time the port is (re)opened, as LeRobot does on its leaders, so a hand can move the arm, and
never written otherwise; enable, commands and goals are refused with the reason.

Faults of the bridge itself: an unexpected exception in a bus cycle or in a command's write is
a safety fault (``on_fault``: hold or torque off), logged once through ``on_fault``; the loop
keeps cycling and the node keeps running. :meth:`BridgeRunner.stop` never waits on a bus thread
wedged in I/O for more than ``apply_wait``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
import threading
import time
import traceback
from typing import Any

from arm_kinematics.control.codes import ResultCode
from arm_kinematics.control.goal_rules import Sample, TrajectoryGoal, TrajectoryGoalRules
from arm_kinematics.control.tracker import GoalTracker
from arm_servos.bridge import BridgeCore, Diagnostic, JointReading
from arm_servos.eeprom import eeprom_refusal
from arm_servos.safety import Outcome

PREEMPTED = 'Current goal preempted by new incoming action.'
LEADER_REFUSAL = 'this bridge is a teleoperation leader: it only reads, torque stays off'


@dataclass(frozen=True)
class Finished:
    """How a goal ended: succeeded True, aborted False, cancelled None."""

    handle: Any
    succeeded: bool | None
    code: int
    message: str


@dataclass
class _Command:
    """A ~/commands target waiting for the bus lock; ``answer`` (refusal, warning) is set by
    whichever thread takes it."""

    values: tuple[float, ...]
    answer: tuple[str, str] | None = None


@dataclass(frozen=True)
class Progress:
    """The active goal's feedback: desired sample, measured positions, trajectory time."""

    handle: Any
    desired: Sample
    measured: tuple[float, ...]
    elapsed: float


class BridgeRunner:
    """The bus loop and the goal of one bridge (see the module docstring).

    Args:
        core: the bus, calibration and safety rules.
        rules: FollowJointTrajectory acceptance and tolerances for ``joints``.
        joints: the controller joints, in order (goals and commands use them).
        rate: Hz of the bus cycle.
        clock: the trajectory clock, s (the node's ROS time: goals' stamps are on it).
        apply_wait: s a torque request waits for the bus thread's write before saying so.
        leader: read only (teleoperation leader).
    """

    def __init__(self, core: BridgeCore, rules: TrajectoryGoalRules, joints: Sequence[str],
                 rate: float, clock: Callable[[], float], apply_wait: float,
                 leader: bool = False) -> None:
        self.core = core
        self.rules = rules
        self.joints = tuple(joints)
        self.period = 1.0 / rate
        self.clock = clock
        self.apply_wait = apply_wait
        self.leader = leader
        # False: a command waits for the next cycle's write (the old loop; the benchmark's peer).
        self.write_on_command = True
        self.lock = threading.Lock()
        # Signalled after each bus cycle: a torque request answers once its change is on the
        # bus.
        self.written = threading.Condition(self.lock)
        self.cycles = 0
        self.cycle_times: list[float] = []
        self.on_reading: Callable[[JointReading], None] = lambda _: None
        self.on_fault: Callable[[str], None] = lambda _: None
        # Called by the bus thread when the arm's mode or fault changes ('enabled',
        # 'fault: servo 2 (elbow) reports overload', ...): teleop's view of the follower.
        self.on_status: Callable[[str], None] = lambda _: None
        self._status = ''
        self._last_error = ''
        self._leader_released = False
        self._tracker: GoalTracker | None = None
        self._handle: Any = None
        self._finished: Finished | None = None
        self._desired: Sample | None = None
        self._running = False
        self._thread: threading.Thread | None = None
        # Requests that do not wait for the bus lock: commands queued for its holder, an
        # e-stop latched at once (guarded by this small lock, never held during bus I/O).
        self._commands: deque[_Command] = deque()
        self._requests = threading.Lock()
        self._estop_source: str | None = None
        self._estop_answer = ''
        core.bus.between_attempts = self._between_attempts

    # ------------------------------------------------------------------ the loop
    def start(self) -> None:
        self._running = True
        self._thread = threading.Thread(target=self._loop, name='servo-bus', daemon=True)
        self._thread.start()

    def stop(self, close_bus: bool = True) -> str:
        """End the loop (and close the bus under the lock); never blocks longer than about
        ``apply_wait`` on a bus thread wedged in I/O. Returns '' or what went wrong."""
        self._running = False        # read by the loop without the lock: no wait for it here
        if not self.lock.acquire(timeout=self.apply_wait):
            return ('the bus thread is stuck in a bus call: the port is left open '
                    '(closed when the process ends)')
        try:
            self.written.notify_all()
        finally:
            self.lock.release()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=self.apply_wait)
        if close_bus:
            if not self.lock.acquire(timeout=self.apply_wait):
                return 'the bus thread is stuck in a bus call: the port is left open'
            try:
                self.core.bus.close()     # torque stays as it is: a falling arm is worse
            finally:
                self.lock.release()
        return ''

    def cycle(self, now: float) -> JointReading:
        """One bus cycle (under the lock): read, follow the goal, write; what came meanwhile
        (an e-stop, commands) is written first."""
        self._take_requests(write=True)
        if self.leader and not self._leader_released:
            self._release_leader()
        fault = self.core.read(now)
        self._take_requests(write=False)     # came during the read: this cycle writes them
        if fault:
            policy = self.core.safety.config.on_fault
            self.on_fault(f'arm stopped ({policy}): {fault}')
            self._end(False, ResultCode.PATH_TOLERANCE_VIOLATED,
                      f'{fault}; the arm stopped ({policy})')
        if not self.leader:
            self._follow(now)
            self.core.write(time.monotonic())
        if self.core.bus_error:
            self._leader_released = False    # the port closed: torque off again once reopened
        self.cycles += 1
        self.written.notify_all()
        return self.core.reading()

    def _release_leader(self) -> None:
        """Leader role: torque off once per opened port (a leader last used as a follower, or
        switched on by another program, would fight the hand)."""
        error = self.core.set_torque(False)
        self._leader_released = not error

    def _loop(self) -> None:
        next_cycle = time.monotonic()
        while self._running:
            start = time.monotonic()
            reading = None
            with self.lock:
                try:
                    reading = self.cycle(start)
                except Exception as error:   # noqa: BLE001 - a bug must stop the arm, not the loop
                    self._internal_error('bus cycle', error)
                    self.cycles += 1
                    self.written.notify_all()
                self.cycle_times.append(start)
                del self.cycle_times[:-200]
                status = self._status_text()
            if status != self._status:
                self._status = status
                self.on_status(status)
            if reading is not None:
                self.on_reading(reading)
            next_cycle += self.period
            with self.lock:
                # Until the next cycle, the bus is idle: a command writes meanwhile (command()).
                while self._running and (delay := next_cycle - time.monotonic()) > 0:
                    self.written.wait(delay)
            if next_cycle - time.monotonic() < -self.period:
                next_cycle = time.monotonic()    # late by a whole cycle: do not burst

    def _internal_error(self, where: str, error: Exception) -> str:
        """(Under the lock.) An unexpected exception: a safety fault, the goal aborted,
        logged once per distinct error; returns the fault in words."""
        frame = traceback.extract_tb(error.__traceback__)[-1:] or None
        place = f' at {frame[0].filename.rsplit("/", 1)[-1]}:{frame[0].lineno}' if frame else ''
        reason = f'internal error in the {where}: {type(error).__name__}: {error}{place}'
        self.core.safety.internal_fault(reason)
        self._end(False, ResultCode.PATH_TOLERANCE_VIOLATED, reason)
        if reason != self._last_error:
            self._last_error = reason
            self.on_fault(f'{reason}; the arm stopped ({self.core.safety.config.on_fault})')
        return reason

    def _status_text(self) -> str:
        safety = self.core.safety
        return f'{safety.mode}: {safety.fault}' if safety.fault else safety.mode

    @property
    def status(self) -> str:
        """The arm's mode and fault in words, as ``on_status`` last said it."""
        return self._status

    def _follow(self, now: float) -> None:
        """The active goal's command for this cycle, and its verdict."""
        if self._tracker is None or self._finished is not None:
            return
        safety = self.core.safety
        measured = [safety.measured.get(j) for j in self.joints]
        t = self.clock()
        sample = self._tracker.sample(t)
        outcome = safety.command(dict(zip(self.joints, sample.positions.tolist())), now,
                                 from_trajectory=True)
        if not outcome.ok:
            self._end(False, ResultCode.PATH_TOLERANCE_VIOLATED, outcome.message)
            return
        if any(m is None for m in measured):
            return
        verdict = self._tracker.check(t, measured)
        self._desired = verdict.desired
        if verdict.done:
            self._end(verdict.code == ResultCode.SUCCESSFUL, int(verdict.code), verdict.message)

    def _end(self, succeeded: bool | None, code: int, message: str, hold: bool = True) -> None:
        """Mark the active goal finished; the node sends its result at its next poll."""
        if self._tracker is None or self._finished is not None:
            return
        self._finished = Finished(self._handle, succeeded, int(code), message)
        self.core.safety.end_trajectory(time.monotonic(), hold=hold and succeeded is not True)

    # ------------------------------------------------------------------ goals
    def goal_reason(self, goal: TrajectoryGoal) -> str:
        """'' to accept ``goal``, else why not (JTC's rules, then range and speed)."""
        if self.leader:
            return LEADER_REFUSAL
        with self._locked():
            safety = self.core.safety
            answer = self.rules.accept(goal, self.clock(), active=safety.mode == 'enabled')
            reason = answer.reason
            if answer.accepted:
                reason = safety.trajectory_reason(
                    goal.joint_names, [(p.time_from_start, p.positions) for p in goal.points])
            if reason and safety.mode != 'enabled':
                fault = f': {safety.fault}' if safety.fault else ''
                reason += f' (the arm is {safety.mode}{fault})'
        return reason

    def accept(self, goal: TrajectoryGoal, handle: Any) -> Finished | None:
        """Make ``goal`` the active one; returns how the previous goal ends, if one was
        active (preempted, or the end its last cycle gave it if not sent yet)."""
        with self._locked():
            previous = None
            if self._handle is not None:
                previous = self._finished or Finished(self._handle, False,
                                                      ResultCode.INVALID_GOAL, PREEMPTED)
            safety = self.core.safety
            start = [safety.setpoint.get(j, safety.measured.get(j) or 0.0) for j in self.joints]
            self._tracker = GoalTracker(self.rules, goal, self.clock(), start)
            self._handle = handle
            self._finished = None
            self._desired = None
        return previous

    def poll(self, cancel_requested: Callable[[Any], bool] = lambda _: False
             ) -> Finished | Progress | None:
        """The active goal's end (then it is no longer active) or its progress;
        ``cancel_requested(handle)``: whether its client asked to cancel it."""
        with self._locked():
            if self._handle is None:
                return None
            if self._finished is None and cancel_requested(self._handle):
                self._end(None, ResultCode.SUCCESSFUL, '')
            if self._finished is not None:
                finished = self._finished
                self._tracker, self._handle, self._finished, self._desired = \
                    None, None, None, None
                return finished
            if self._desired is None or self._tracker is None:
                return None
            measured = tuple(self.core.safety.measured.get(j) or 0.0 for j in self.joints)
            return Progress(self._handle, self._desired, measured,
                            self.clock() - self._tracker.trajectory.start_time)

    # ------------------------------------------------------------------ requests
    def _wait_written(self) -> bool:
        """Wait (holding the lock) for the bus thread's next write; False when it wrote
        nothing within apply_wait (a stalled bus thread or a port that blocks)."""
        target = self.cycles + 1
        return self.written.wait_for(lambda: self.cycles >= target, self.apply_wait)

    def enable(self) -> Outcome:
        """Torque on, answered after the bus cycle that wrote it."""
        if self.leader:
            return Outcome(False, f'cannot enable: {LEADER_REFUSAL}')
        with self._locked():
            # The servos' EEPROM against the calibration first (RELIABILITY 43): a servo
            # recalibrated or swapped since the file was written never gets torque.
            refusal = eeprom_refusal(self.core.bus, self.core.calibration)
            if refusal:
                return Outcome(False, refusal)
            outcome = self.core.safety.enable(time.monotonic())
            if not outcome.ok:
                return outcome
            if not self._wait_written():
                self.core.safety.disable()
                return Outcome(False, 'cannot enable: the bus wrote nothing in '
                               f'{self.apply_wait:.2f} s; torque left off')
            safety = self.core.safety
            if safety.mode != 'enabled':
                return Outcome(False, 'cannot enable: '
                               f'{self.core.bus_error or safety.fault or safety.mode}')
        return outcome

    def disable(self) -> Outcome:
        if self.leader:
            return Outcome(True, f'torque off: {LEADER_REFUSAL}')
        with self._locked():
            outcome = self.core.safety.disable()
            self._end(False, ResultCode.PATH_TOLERANCE_VIOLATED, 'torque disabled')
            return Outcome(outcome.ok, outcome.message + self._torque_off_unwritten())

    def estop(self, source: str) -> str:
        """Torque off and latched; the active goal aborts naming ``source``. Latched at once,
        without the bus lock (every request from now on sees it); the torque-off is written
        by the first to hold the lock: this caller, or the bus thread at its next slot (before
        its read, between a sync read and its retry, before its write). Waits up to
        ``apply_wait`` to say how that write went."""
        with self._requests:
            self._estop_source = source
        if not self.lock.acquire(timeout=self.apply_wait):
            return ('torque off on every servo; e-stop latched until reset (the torque-off is '
                    'not written yet: the bus thread is stuck in a bus call; it writes it at '
                    'its first chance, then each cycle until the bus takes it)')
        try:
            self._apply_estop()
            return self._estop_answer
        finally:
            self.lock.release()

    def _apply_estop(self) -> None:
        """(Under the lock.) Apply a latched e-stop not applied yet: the rules latch it, the
        goal aborts, torque off is written now (and by each cycle until the bus takes it)."""
        with self._requests:
            source, self._estop_source = self._estop_source, None
        if source is None:
            return
        outcome = self.core.safety.estop(source)
        self._end(False, ResultCode.PATH_TOLERANCE_VIOLATED,
                  f'{source}: torque off on every servo')
        error = '' if self.leader else self._write_now('e-stop')
        self._estop_answer = outcome.message + (
            f' (the torque-off write failed: {error}; the bus thread writes it again each '
            'cycle until the bus takes it)' if error else '')

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """The bus lock, with a latched e-stop applied first (a request after an e-stop sees
        it even if the e-stop's caller has not had the lock yet)."""
        with self.lock:
            self._apply_estop()
            yield

    def _between_attempts(self) -> None:
        """(The bus thread, under the lock, between a sync read and its retry: the bus is
        idle.) Write what came meanwhile, rather than after the retried read."""
        self._take_requests(write=True)

    def _take_requests(self, write: bool) -> None:
        """(Under the lock.) Apply a latched e-stop, then the queued commands through the
        rules, each answered; with ``write`` (and ``write_on_command``) the accepted ones are
        written now, else the cycle's own write carries them."""
        self._apply_estop()
        if not self._commands:
            return
        taken = []
        while self._commands:
            request = self._commands.popleft()
            request.answer = self._take_command(request.values)
            if not request.answer[0]:
                taken.append(request)
        if taken and write and self.write_on_command:
            try:
                self.core.write(time.monotonic())
            except Exception as error:   # noqa: BLE001 - the node must keep running
                reason = self._internal_error('command write', error)
                for request in taken:
                    request.answer = (reason, '')

    def _take_command(self, values: tuple[float, ...]) -> tuple[str, str]:
        """(Under the lock.) One command through the rules: (refusal, warning)."""
        if self._tracker is not None:
            return 'a trajectory goal is running', ''
        outcome = self.core.safety.command(dict(zip(self.joints, values)), time.monotonic())
        return ('', outcome.message) if outcome.ok else (outcome.message, '')

    def _write_now(self, what: str) -> str:
        """(Under the lock.) Write this cycle's actions now; '' or the failure in words."""
        try:
            self.core.write(time.monotonic())
        except Exception as error:   # noqa: BLE001 - the node must keep running
            return self._internal_error(what, error)
        return self.core.bus_error

    def hold(self, reason: str) -> Outcome:
        """Hold the measured position now (a teleop hold): the command stream, any goal
        and any gripper goal stop (each aborts naming ``reason``); written at once."""
        if self.leader:
            return Outcome(False, LEADER_REFUSAL)
        with self._locked():
            self._end(False, ResultCode.PATH_TOLERANCE_VIOLATED, f'{reason}: holding')
            outcome = self.core.safety.hold(time.monotonic(), reason)
            if outcome.ok:
                error = self._write_now('hold')
                if error:
                    return Outcome(False, f'hold not written: {error}')
        return outcome

    def _torque_off_unwritten(self) -> str:
        if self._wait_written():
            return ''
        return (f' (the bus wrote nothing in {self.apply_wait:.2f} s: torque goes off on its '
                'next cycle)')

    def reset(self) -> Outcome:
        with self._locked():
            return self.core.safety.reset()

    @property
    def estopped(self) -> bool:
        return self._estop_source is not None or self.core.safety.mode == 'estop'

    def command(self, values: Sequence[float]) -> tuple[str, str]:
        """A ~/commands target, one value per controller joint: (refusal, warning) in words,
        each '' when there is none. An accepted command is written at once: queued, then
        taken by the first to hold the bus lock: this thread when the bus is idle (it blocks
        for the write: about 0.3 ms at 1 Mbaud), else the bus thread at its next slot (see
        the module docstring); answered once taken."""
        if self.leader:
            return LEADER_REFUSAL, ''
        if len(values) != len(self.joints):
            return (f'{len(values)} values for the {len(self.joints)} joints '
                    f'{list(self.joints)}', '')
        request = _Command(tuple(float(v) for v in values))
        self._commands.append(request)
        with self.lock:
            if request.answer is None:     # not taken by the bus thread meanwhile
                self._take_requests(write=True)
        return request.answer or ('the command was not taken (internal error)', '')

    def diagnostics(self, prefix: str) -> tuple[list[Diagnostic], float]:
        """The statuses of /diagnostics and the measured bus cycles per second."""
        with self.lock:
            statuses = self.core.diagnostics(prefix)
            starts = list(self.cycle_times)
        rate = (len(starts) - 1) / (starts[-1] - starts[0]) if len(starts) > 2 and \
            starts[-1] > starts[0] else 0.0
        return statuses, rate
