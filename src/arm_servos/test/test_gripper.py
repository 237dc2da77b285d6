"""The gripper's GripperCommand rules on the simulated bus (RELIABILITY 45): a free goal is
reached; a grip on an object stalls with stalled true, reached_goal false, the servo's torque
limit set from max_effort and never above the cap, and the servo not overloaded; without the
limit the simulated servo's overload protection trips, so the limit is what spares it. A hold
of the arm (teleop's) ends a running goal, aborted with the hold's reason, the gripper held
where it was."""

from __future__ import annotations

import math
from pathlib import Path
import re
import time

import pytest

from arm_kinematics.control.goal_rules import ControllerSettings, TrajectoryGoalRules
from arm_servos.bridge import BridgeCore
from arm_servos.calibration import Calibration
from arm_servos.drivers import DRIVERS
from arm_servos.gripper import cancel, drive, GripperSettings, start
from arm_servos.runner import BridgeRunner
from arm_servos.safety import SafetyConfig, ServoSafety
from arm_servos.sim.process import SimProcess

SO101_CHAIN = ('shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex', 'wrist_roll')
EXAMPLE = Path(__file__).resolve().parents[1] / 'calibration' / 'so101.yaml'


@pytest.fixture(params=['feetech', 'dynamixel'])
def arm(request, so101_urdf, tmp_path):
    protocol = request.param
    calibration = Calibration.load(EXAMPLE, so101_urdf, SO101_CHAIN)
    calibration = Calibration(protocol, calibration.baudrate, calibration.joints)
    with SimProcess(tmp_path / 'bus', protocol, tau=0.02) as sim:
        bus = DRIVERS[protocol](str(tmp_path / 'bus'), calibration.ids, reply_timeout=0.2,
                                cycle_budget=1.0)
        bus.open()
        safety = ServoSafety(calibration.joints, {j.name: 3.0 for j in calibration.joints},
                             SafetyConfig(silent_cycles=5, approach_velocity=3.0))
        core = BridgeCore(bus, calibration, safety)
        for _ in range(3):
            core.cycle(time.monotonic())
        assert safety.enable(time.monotonic()).ok
        core.cycle(time.monotonic())
        yield sim, core
        bus.set_torque(False)
        bus.close()


def _run(core: BridgeCore, goal, timeout: float = 8.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        core.cycle(time.monotonic())
        result = drive(core, goal, time.monotonic())
        if result is not None:
            return result
        time.sleep(0.01)
    raise AssertionError('the gripper goal never ended')


def _status(sim, servo_id: int) -> dict[str, float]:
    line = re.search(rf'id {servo_id}: [^;]*', sim.command('status')).group(0)
    return {'limit': float(re.search(r'torque limit ([\d.]+)', line).group(1)),
            'load': float(re.search(r'load (-?[\d.]+)', line).group(1))}


def test_a_free_goal_is_reached_and_a_grip_on_an_object_stalls_within_its_torque(arm):
    sim, core = arm
    settings = GripperSettings(full_effort=2.9)     # STS3215: about 2.9 N·m at 7.4 V
    goal = start(core, settings, 'gripper', 1.0, 1.0, time.monotonic())
    assert not isinstance(goal, str), goal
    result = _run(core, goal)
    assert result.succeeded and result.reached_goal and not result.stalled
    assert result.position == pytest.approx(1.0, abs=settings.goal_tolerance)
    assert _status(sim, 6)['limit'] == pytest.approx(1.0 / 2.9, abs=0.002)
    # An object between the jaws at 0.4 rad; the client closes fully with no effort named.
    joint = core.calibration.joint('gripper')
    sim.command(f'block 6 {joint.to_ticks(0.4)}')
    goal = start(core, settings, 'gripper', -0.1, 0.0, time.monotonic())
    result = _run(core, goal)
    assert not result.succeeded and result.stalled and not result.reached_goal
    assert result.position == pytest.approx(0.4, abs=0.01)
    assert 'stalled' in result.message and 'gripper' in result.message
    status = _status(sim, 6)
    assert status['limit'] == pytest.approx(settings.torque_cap, abs=0.002)   # max_effort 0
    assert 0 < abs(status['load']) <= settings.torque_cap + 1e-9
    assert result.effort == pytest.approx(abs(status['load']) * 2.9, abs=0.1)
    # It keeps gripping, and the servo is not overloaded.
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        core.cycle(time.monotonic())
        time.sleep(0.01)
    state = core.states[6]
    assert state is not None and state.errors == () and core.safety.mode == 'enabled'
    assert joint.to_radians(state.position) == pytest.approx(0.4, abs=0.01)


def test_a_goal_above_the_cap_is_cut_and_without_a_limit_the_servo_overloads(arm):
    sim, core = arm
    joint = core.calibration.joint('gripper')
    sim.command(f'block 6 {joint.to_ticks(-0.05)}')
    capped = GripperSettings(full_effort=2.9, torque_cap=0.5)
    goal = start(core, capped, 'gripper', -0.1, 100.0, time.monotonic())
    assert goal.torque == 0.5
    result = _run(core, goal)
    assert result.stalled and _status(sim, 6)['limit'] == pytest.approx(0.5, abs=0.002)
    # The same grip at full torque: the servo's overload protection trips (what the cap
    # prevents) and the arm stops with the servo and the error named.
    full = GripperSettings(full_effort=2.9, torque_cap=1.0)
    goal = start(core, full, 'gripper', -0.1, 2.9, time.monotonic())
    end = time.monotonic() + 3.0
    fault = ''
    while time.monotonic() < end and not fault:
        fault = core.cycle(time.monotonic())
        drive(core, goal, time.monotonic())
        time.sleep(0.01)
    assert 'servo 6 (gripper) reports overload' in fault


def test_a_goal_outside_the_range_or_not_a_number_is_refused(arm):
    _, core = arm
    settings = GripperSettings()
    assert 'outside the calibrated range' in start(core, settings, 'gripper', 3.0, 0.0, 0.0)
    assert 'not a finite number' in start(core, settings, 'gripper', math.nan, 0.0, 0.0)
    core.safety.disable()
    assert start(core, settings, 'gripper', 0.5, 0.0, 0.0) == 'not enabled: the arm is disabled'


def test_a_hold_ends_a_running_goal_and_the_gripper_stays_where_it_was(arm):
    sim, core = arm
    # The bridge's runner, not started: this test cycles the bus itself, as its thread does.
    runner = BridgeRunner(core, TrajectoryGoalRules(ControllerSettings(SO101_CHAIN)),
                          SO101_CHAIN, rate=100.0, clock=time.monotonic, apply_wait=2.0)
    joint = core.calibration.joint('gripper')
    settings = GripperSettings(full_effort=2.9)
    goal = start(core, settings, 'gripper', joint.lower + 0.05, 0.0, time.monotonic())
    assert not isinstance(goal, str), goal
    assert _run(core, goal).succeeded
    goal = start(core, settings, 'gripper', joint.upper - 0.05, 0.0, time.monotonic())
    begin = core.safety.measured['gripper']
    end = time.monotonic() + 5.0
    while core.safety.measured['gripper'] < begin + 0.4:    # on its way (3 rad/s)
        assert time.monotonic() < end, 'the gripper never moved'
        core.cycle(time.monotonic())
        assert drive(core, goal, time.monotonic()) is None
        time.sleep(0.01)
    assert runner.hold('teleop: leader silent for 0.12 s').ok
    held = core.safety.measured['gripper']
    result = drive(core, goal, time.monotonic())
    assert result is not None and not result.succeeded
    assert not result.stalled and not result.reached_goal
    assert result.message.startswith('teleop: leader silent for 0.12 s: holding gripper at ')
    # Nothing drives it on: it stops where the hold found it, far from the goal.
    end = time.monotonic() + 0.6
    while time.monotonic() < end:
        core.cycle(time.monotonic())
        time.sleep(0.01)
    assert core.safety.measured['gripper'] == pytest.approx(held, abs=0.03)
    assert core.safety.measured['gripper'] < goal.position - 0.5
    # A goal accepted after the hold runs as usual.
    goal = start(core, settings, 'gripper', 0.5, 0.0, time.monotonic())
    assert _run(core, goal).succeeded


def test_a_cancel_holds_the_gripper_where_it_is(arm):
    _, core = arm
    joint = core.calibration.joint('gripper')
    settings = GripperSettings(full_effort=2.9)
    goal = start(core, settings, 'gripper', joint.upper - 0.05, 0.0, time.monotonic())
    for _ in range(5):
        core.cycle(time.monotonic())
        assert drive(core, goal, time.monotonic()) is None
        time.sleep(0.01)
    result = cancel(core, goal, time.monotonic())
    assert result.message.startswith('canceled: holding gripper at ')
    assert core.safety.target['gripper'] == result.position


def test_a_cancel_past_the_range_holds_at_its_end_not_at_the_goal(so101_urdf):
    """A project calibration does not clip the gripper's reading: a gripper read past its
    range is held at the range's end on a cancel (a command at the reading itself would be
    refused, and the gripper would go on to the cancelled goal)."""
    from types import SimpleNamespace

    from arm_servos.bus import ServoState
    from arm_servos.gripper import GripperGoal
    calibration = Calibration.load(EXAMPLE, so101_urdf, SO101_CHAIN)
    joint = calibration.joint('gripper')
    safety = ServoSafety(calibration.joints, {j.name: 3.0 for j in calibration.joints})
    ticks = {j.servo_id: j.to_ticks(0.0) for j in calibration.joints}
    ticks[joint.servo_id] = joint.to_ticks(joint.lower) - 30 * joint.direction
    states = {i: ServoState(i, t, 0.0, 0.0, 7.4, 30.0) for i, t in ticks.items()}
    safety.observe(states, 0.0)
    assert safety.measured['gripper'] < joint.lower
    assert safety.enable(0.0).ok
    core = SimpleNamespace(safety=safety, states=states)
    goal = GripperGoal(GripperSettings(), joint, 1.0, 0.0, 0.0, safety.holds)
    assert drive(core, goal, 0.01) is None and safety.target['gripper'] == 1.0
    result = cancel(core, goal, 0.02)
    assert result.message == f'canceled: holding gripper at {joint.lower:.4f}'
    assert safety.target['gripper'] == joint.lower
