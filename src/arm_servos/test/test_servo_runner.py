"""The bridge's bus loop and goal (arm_servos.runner.BridgeRunner) on the simulated bus: the
leader role switches torque off once and never writes otherwise; a command, an e-stop and a
hold are written at once, not at the next cycle, and a command that comes during a read goes
out before the read's retry; an e-stop is latched without the bus lock and written at the
first chance; a goal is preempted by the next and cancelled on request; an exception in a
cycle or a command stops the arm, not the loop; stop() does not hang on a wedged bus thread."""

from __future__ import annotations

import math
import threading
import time

import pytest

from arm_kinematics.control.codes import ResultCode
from arm_kinematics.control.goal_rules import (
    ControllerSettings,
    TrajectoryGoal,
    TrajectoryGoalRules,
    TrajectoryPoint,
)
from arm_servos.bridge import BridgeCore
from arm_servos.calibration import Calibration, JointCalibration
from arm_servos.feetech import FeetechBus
from arm_servos.runner import BridgeRunner, Finished, LEADER_REFUSAL, PREEMPTED
from arm_servos.safety import SafetyConfig, ServoSafety
from arm_servos.sim.process import SimProcess

TPR = 4096 / (2 * math.pi)
JOINTS = tuple(JointCalibration(f'joint{i}', i, 'sts3215', TPR, 1, 2048, -1.5, 1.5)
               for i in (1, 2, 3))
NAMES = tuple(j.name for j in JOINTS)


@pytest.fixture
def runner(tmp_path, request):
    leader = getattr(request, 'param', False)
    link = tmp_path / 'bus'
    with SimProcess(link, 'feetech', ids=(1, 2, 3)) as sim:
        bus = FeetechBus(str(link), (1, 2, 3), reply_timeout=0.2, cycle_budget=1.0)
        bus.open()
        if leader:
            bus.set_torque(True)      # left on by an earlier session as a follower
        safety = ServoSafety(JOINTS, {n: 3.0 for n in NAMES},
                             SafetyConfig(silent_cycles=20, approach_velocity=3.0,
                                          command_timeout=30.0))
        core = BridgeCore(bus, Calibration('feetech', 1_000_000, JOINTS), safety)
        # 0.5 Hz: a write seen before the next cycle is the command's own.
        runner = BridgeRunner(core, TrajectoryGoalRules(ControllerSettings(NAMES)), NAMES,
                              rate=0.5, clock=time.monotonic, apply_wait=10.0, leader=leader)
        runner.sim = sim
        runner.start()
        try:
            yield runner
        finally:
            runner.stop()
            bus.close()


@pytest.mark.parametrize('runner', [True], indirect=True)
def test_a_leader_only_reads(runner):
    deadline = time.monotonic() + 10.0
    while not runner.core.reading().complete and time.monotonic() < deadline:
        time.sleep(0.05)
    assert runner.core.reading().complete
    assert not runner.enable().ok and LEADER_REFUSAL in runner.enable().message
    assert runner.command([0.1, 0.1, 0.1])[0] == LEADER_REFUSAL
    assert runner.goal_reason(_goal(0.1)) == LEADER_REFUSAL
    # Torque switched off once (Should 6: a hand must move a leader), nothing else written.
    assert runner.sim.command('writes') == 'goal writes 0, torque writes 2'   # ours, its
    assert 'torque on' not in runner.sim.command('status')


def _goal(target: float, seconds: float = 1.0) -> TrajectoryGoal:
    return TrajectoryGoal(NAMES, (TrajectoryPoint(seconds, (target,) * 3, (0.0,) * 3),),
                          start_time=0.0)


def test_a_command_is_written_at_once_and_goals_preempt_and_cancel(runner):
    assert runner.enable().ok, runner.enable().message
    cycles = runner.cycles
    sent = time.monotonic()
    assert runner.command([0.2, 0.2, 0.2]) == ('', '')
    deadline = time.monotonic() + 10.0
    while runner.sim.command(f'changed 1 {sent:.6f}') == 'none' and \
            time.monotonic() < deadline:
        time.sleep(0.01)
    assert runner.sim.command(f'changed 1 {sent:.6f}') != 'none'
    assert runner.cycles == cycles        # written before the next cycle: the command's own
    assert runner.goal_reason(_goal(0.1)) == ''
    assert runner.accept(_goal(0.1), 'first') is None
    assert runner.command([0.0] * 3)[0] == 'a trajectory goal is running'
    previous = runner.accept(_goal(-0.1), 'second')
    assert previous == Finished('first', False, ResultCode.INVALID_GOAL, PREEMPTED)
    finished = runner.poll(lambda handle: handle == 'second')
    assert finished == Finished('second', None, ResultCode.SUCCESSFUL, '')
    assert runner.poll() is None
    assert 'outside the calibrated range' in runner.goal_reason(_goal(2.0, 5.0))


def _wait_complete(runner) -> None:
    deadline = time.monotonic() + 10.0
    while not runner.core.reading().complete and time.monotonic() < deadline:
        time.sleep(0.05)


def test_an_estop_and_a_hold_are_written_at_once(runner):
    assert runner.enable().ok
    cycles = runner.cycles
    assert runner.command([0.3, 0.3, 0.3]) == ('', '')
    message = runner.estop('e-stop service')
    assert 'latched' in message and 'failed' not in message
    # Should 1: torque off before the next cycle (0.5 Hz: two seconds away).
    assert 'torque on' not in runner.sim.command('status')
    assert runner.cycles == cycles
    assert not runner.hold('teleop hold').ok
    assert runner.reset().ok and runner.enable().ok
    assert runner.command([0.3, 0.3, 0.3]) == ('', '')
    outcome = runner.hold('teleop hold')
    assert outcome.ok, outcome.message
    assert runner.core.safety.target == runner.core.safety.setpoint
    assert 'torque on' in runner.sim.command('status')


class _BoomError(RuntimeError):
    pass


def test_an_exception_in_a_cycle_or_a_command_stops_the_arm_and_the_loop_goes_on(runner):
    faults: list[str] = []
    statuses: list[str] = []
    runner.on_fault = faults.append
    runner.on_status = statuses.append
    _wait_complete(runner)
    assert runner.enable().ok
    bus = runner.core.bus
    real_read, real_write = bus.read, bus.write_goals
    calls = {'read': 0}

    def bad_read():
        calls['read'] += 1
        if calls['read'] == 1:
            raise _BoomError('decoder bug')
        return real_read()
    bus.read = bad_read
    runner.period = 0.02                     # a few cycles in this test
    with runner.lock:
        runner.written.notify_all()
    deadline = time.monotonic() + 10.0
    while calls['read'] < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert runner._thread.is_alive() and calls['read'] >= 3      # still cycling
    assert runner.core.safety.mode == 'fault'
    assert faults and 'internal error in the bus cycle: _BoomError: decoder bug' in faults[0]
    assert len(faults) == 1                                      # logged once
    deadline = time.monotonic() + 10.0
    while not (statuses and statuses[-1].startswith('fault: internal error')) and \
            time.monotonic() < deadline:
        time.sleep(0.02)
    assert statuses[-1].startswith('fault: internal error')
    assert runner.enable().ok, runner.core.safety.fault

    def bad_write(goals):
        raise _BoomError('driver bug')
    bus.write_goals = bad_write
    reason, _ = runner.command([0.1, 0.1, 0.1])               # no exception reaches the node
    assert 'internal error in the command write: _BoomError: driver bug' in reason
    assert runner.core.safety.mode == 'fault'
    bus.write_goals = real_write


def test_stop_does_not_hang_on_a_bus_thread_wedged_in_io(runner):
    _wait_complete(runner)
    wedged, release = threading.Event(), threading.Event()
    real_read = runner.core.bus.read

    def stuck_read():
        wedged.set()
        release.wait(60.0)           # an adapter that never answers
        return real_read()
    runner.core.bus.read = stuck_read
    runner.apply_wait = 0.5
    with runner.lock:
        runner.period = 0.01
        runner.written.notify_all()
    assert wedged.wait(10.0)
    done: list[str] = []
    stopper = threading.Thread(target=lambda: done.append(runner.stop()))
    stopper.start()
    stopper.join(30.0)
    alive = stopper.is_alive()
    release.set()
    assert not alive, 'stop() hung on the wedged bus thread'
    assert 'stuck' in done[0]


def _next_cycle(runner) -> None:
    """Start the next bus cycle now rather than in up to two seconds."""
    with runner.lock:
        runner.written.notify_all()


def test_a_command_is_written_between_a_read_and_its_retry(runner):
    """A command that comes while a sync read is in flight goes out before the retry of a
    lost reply, not after the whole retried read."""
    assert runner.enable().ok, runner.enable().message
    bus = runner.core.bus
    order: list[str] = []
    real_sync, real_write = bus._sync_read, bus.write_goals
    answers: list[tuple[str, str]] = []
    commander = threading.Thread(target=lambda: answers.append(runner.command([0.2] * 3)))
    started = threading.Event()

    def sync_read(ids, *args):
        if not args and ids == (1, 2, 3) and not order:
            runner.sim.command('lose 2 1')       # this read loses servo 2's reply
            commander.start()                    # and a command comes meanwhile
            started.set()
            deadline = time.monotonic() + 10.0
            while not runner._commands and time.monotonic() < deadline:
                time.sleep(0.001)
        order.append(f'read {ids}')
        return real_sync(ids, *args)

    def write_goals(goals):
        order.append('write')
        real_write(goals)
    bus._sync_read, bus.write_goals = sync_read, write_goals
    try:
        _next_cycle(runner)
        assert started.wait(10.0)        # the next cycle (0.5 Hz) if the nudge came early
        commander.join(20.0)
        assert answers == [('', '')]
        assert order[:3] == ['read (1, 2, 3)', 'write', 'read (2,)'], order
    finally:
        bus._sync_read, bus.write_goals = real_sync, real_write


def test_an_estop_is_latched_without_the_bus_lock_and_written_at_the_first_chance(runner):
    assert runner.enable().ok, runner.enable().message
    runner.apply_wait = 0.2
    runner.lock.acquire()             # the bus thread wedged in a bus call, holding the lock
    try:
        said: list[str] = []
        caller = threading.Thread(target=lambda: said.append(runner.estop('e-stop service')),
                                  daemon=True)
        caller.start()
        caller.join(20.0)
        assert said, 'the e-stop waited for the bus lock'
        assert runner.estopped        # latched at once, the lock still held
        assert 'latched' in said[0] and 'not written yet' in said[0]
    finally:
        runner.lock.release()
    # The bus thread, once free, writes it at its first chance, before its read.
    _next_cycle(runner)
    deadline = time.monotonic() + 10.0
    while 'torque on' in runner.sim.command('status') and time.monotonic() < deadline:
        time.sleep(0.01)
    assert 'torque on' not in runner.sim.command('status')
    assert runner.core.safety.mode == 'estop'
    assert runner.command([0.1] * 3)[0].startswith('not enabled: the arm is estop')
    assert not runner.enable().ok


def test_a_command_after_a_latched_estop_is_refused_even_before_it_is_written(runner):
    assert runner.enable().ok, runner.enable().message
    runner.apply_wait = 0.2
    answers: list[tuple[str, str]] = []
    with runner.lock:                 # the bus busy: both wait for the lock
        stopper = threading.Thread(target=runner.estop, args=('emergency_stop topic',),
                                   daemon=True)
        stopper.start()
        stopper.join(20.0)
        assert runner.estopped
        commander = threading.Thread(target=lambda: answers.append(runner.command([0.3] * 3)))
        commander.start()
        deadline = time.monotonic() + 10.0
        while not runner._commands and time.monotonic() < deadline:
            time.sleep(0.001)
    commander.join(20.0)
    assert answers and answers[0][0].startswith('not enabled: the arm is estop')
    assert 'torque on' not in runner.sim.command('status')
