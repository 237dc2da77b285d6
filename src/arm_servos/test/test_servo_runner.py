"""The bridge's bus loop and goal (arm_servos.runner.BridgeRunner) on the simulated bus: the
leader role never writes; a command is written at once, not at the next cycle; a goal is
preempted by the next and cancelled on request."""

from __future__ import annotations

import math
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
    assert runner.sim.command('writes') == 'goal writes 0, torque writes 0'


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
