"""The bridge's bus cycle (arm_servos.bridge) with the simulated bus: write order, e-stop,
faults, a vanished adapter, diagnostics in words."""

from __future__ import annotations

import math
import time

import pytest

from arm_servos.bridge import BridgeCore, ERROR, OK, theoretical_rate
from arm_servos.calibration import JointCalibration
from arm_servos.feetech import FeetechBus
from arm_servos.safety import SafetyConfig, ServoSafety
from arm_servos.sim.process import SimProcess

TPR = 4096 / (2 * math.pi)
JOINTS = tuple(JointCalibration(f'joint{i}', i, 'sts3215', TPR, 1, 2048, -1.5, 1.5)
               for i in (1, 2, 3))


@pytest.fixture(scope='module')
def sim(tmp_path_factory):
    link = tmp_path_factory.mktemp('bridge_core') / 'bus'
    # The servos hold a stale goal of 3000 ticks (+1.46 rad) from an earlier session.
    with SimProcess(link, 'feetech', ids=(1, 2, 3), position='2048', goal='3000') as process:
        yield process, str(link)


def _core(link: str, **config) -> BridgeCore:
    from arm_servos.calibration import Calibration
    bus = FeetechBus(link, (1, 2, 3), reply_timeout=0.2, cycle_budget=1.0, reopen_interval=0.05)
    bus.open()
    safety = ServoSafety(JOINTS, {j.name: 3.0 for j in JOINTS},
                         SafetyConfig(silent_cycles=2, **config))
    return BridgeCore(bus, Calibration('feetech', 1_000_000, JOINTS), safety,
                      {j.name: 3.0 for j in JOINTS})


def _run(core: BridgeCore, seconds: float, period: float = 0.01, stream=None) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if stream:       # a command stream, one message per cycle
            assert core.safety.command(stream, time.monotonic()).ok
        core.cycle(time.monotonic())
        time.sleep(period)


def _enabled_core(link: str) -> BridgeCore:
    """A core that has read the arm and has torque on: where a fault test starts."""
    core = _core(link)
    _run(core, 0.05)
    core.safety.enable(time.monotonic())
    _run(core, 0.05)
    return core


def test_a_stale_goal_in_the_servos_does_not_move_the_arm_on_enable(sim):
    process, link = sim
    core = _core(link)
    _run(core, 0.1)
    assert core.reading().positions == pytest.approx((0.0, 0.0, 0.0), abs=0.01)
    assert core.safety.enable(time.monotonic()).ok
    _run(core, 0.5)
    assert 'torque on' in process.command('status')
    assert core.reading().positions == pytest.approx((0.0, 0.0, 0.0), abs=0.01)
    _run(core, 2.5, stream={'joint1': 0.5})     # 0.3 rad/s: the first motion's approach
    assert core.reading().positions[0] == pytest.approx(0.5, abs=0.01)
    core.safety.estop()
    core.cycle(time.monotonic())                  # the very next cycle: torque off
    assert 'torque on' not in process.command('status')
    sent = core.bus.stats.sent
    _run(core, 0.2)
    # Only sync reads after the e-stop: one packet per cycle, no goal, no torque write.
    cycles = core.bus.stats.sent - sent
    assert cycles >= 5 and core.bus.stats.received >= 3 * cycles
    core.bus.close()


def test_an_overload_stops_the_arm_and_diagnostics_say_it(sim):
    process, link = sim
    core = _enabled_core(link)
    process.command('error 2 overload')
    fault = ''
    for _ in range(5):
        fault = core.cycle(time.monotonic()) or fault
    assert fault == 'servo 2 (joint2) reports overload'
    diagnostics = {d.name: d for d in core.diagnostics('bridge')}
    servo = diagnostics['bridge: servo 2 (joint2)']
    assert servo.level == ERROR and servo.message == 'overload'
    assert dict(servo.values)['voltage (V)'] == '7.4'
    assert diagnostics['bridge: servo 1 (joint1)'].level == OK
    bus = diagnostics['bridge: bus']
    assert bus.level == ERROR and 'overload' in bus.message
    assert {'sent', 'lost', 'checksum_errors', 'last_error'} <= set(dict(bus.values))
    process.command('error 2 clear')
    core.bus.close()


def test_a_vanished_adapter_is_a_fault_in_words_and_the_arm_restarts_in_place(sim):
    process, link = sim
    core = _enabled_core(link)
    process.command('vanish')
    fault = core.cycle(time.monotonic())
    assert fault.startswith(f'bus: serial adapter on {link} lost')
    assert core.safety.mode == 'fault' and not core.reading().complete
    process.command('replug')
    time.sleep(0.1)
    _run(core, 0.2)
    assert core.reading().complete and core.safety.mode == 'fault'   # no recovery by itself
    assert core.safety.enable(time.monotonic()).ok
    before = core.reading().positions
    _run(core, 0.3)
    assert core.reading().positions == pytest.approx(before, abs=0.01)
    core.safety.disable()
    core.cycle(time.monotonic())
    core.bus.close()


def test_the_wire_limit_follows_the_packet_sizes():
    assert theoretical_rate(124, 1_000_000) == pytest.approx(806.45, abs=0.01)


def test_torque_goes_on_only_after_the_goal_is_read_back_as_written(sim):
    # Should 7: a goal write has no reply. One lost: rewritten before torque on; lost every
    # time: torque stays off, naming the servo (before: torque on drove servo 2 to its stale
    # goal of 3000 ticks, +1.46 rad).
    process, link = sim
    core = _core(link)
    _run(core, 0.05)
    before = core.reading().positions
    process.command('drop 2 1')
    assert core.safety.enable(time.monotonic()).ok
    core.cycle(time.monotonic())
    assert core.safety.mode == 'enabled', core.safety.fault
    servo2 = process.command('status').split('; ')[1]
    assert servo2.startswith('id 2: pos 2048 goal 2048 ') and servo2.endswith('torque on')
    core.safety.disable()
    core.cycle(time.monotonic())
    core.bus.write_goals({2: 3000})      # a stale goal again (torque is off: nothing moves)
    process.command('drop 2 100')
    _run(core, 0.05)
    assert core.safety.enable(time.monotonic()).ok
    core.cycle(time.monotonic())
    assert core.safety.mode == 'disabled'
    assert core.safety.fault.startswith('servo 2 (joint2) did not take its goal: ')
    assert core.safety.fault.endswith('torque left off')
    assert 'torque on' not in process.command('status')
    _run(core, 0.2)
    assert core.reading().positions == pytest.approx(before, abs=0.01)
    process.command('restore 2')
    core.bus.close()


def test_a_torque_off_the_bus_did_not_take_is_written_again_each_cycle(sim):
    from arm_servos.bus import BusUnavailableError
    process, link = sim
    core = _enabled_core(link)
    real = core.bus.set_torque
    refused: list[bool] = []

    def wedged(enabled, ids=None):       # the adapter refuses the next two writes
        if len(refused) < 2:
            refused.append(enabled)
            raise BusUnavailableError('torque off not sent: port busy')
        real(enabled, ids)
    core.bus.set_torque = wedged
    core.safety.estop()
    core.cycle(time.monotonic())
    core.cycle(time.monotonic())
    assert refused == [False, False] and 'torque on' in process.command('status')
    core.cycle(time.monotonic())                  # the bus takes it now
    assert 'torque on' not in process.command('status')
    core.bus.close()
