"""The servo bridge's safety rules, ROS-free: what may be written to the bus, and when.

Every bus cycle the bridge feeds the servos' answers to :meth:`ServoSafety.observe`, then
writes what :meth:`ServoSafety.step` returns (torque changes first, then goal ticks). The
rules:

* Torque is only switched on by :meth:`enable` (never at start-up). Enabling sets the goal to
  the measured position before torque goes on, so nothing moves; it is refused, naming the
  servo, while a servo is silent or reports an error, and while an e-stop is latched.
* The setpoint moves toward the commanded target at no more than each joint's velocity limit
  (the URDF's, or a lower configured cap); after enabling, and after every hold (a fault, a
  stopped command stream, a cancelled goal, :meth:`hold`), the first motion starts from the
  measured pose at the slower ``approach_velocity`` until it has caught up: a stream that
  resumes with a target far from where the arm stopped never lurches (RELIABILITY 21).
* A command outside a joint's calibrated range is refused naming the joint and the range,
  unless clipping was asked for (then clipped and the clipped joints are named).
* A command stream that stops (no command within ``command_timeout`` while no trajectory is
  running) holds the last measured position (and re-arms the approach).
* :meth:`estop` switches torque off on every servo in the next cycle and latches until
  :meth:`reset`; no goal is written while torque is off.
* A servo reporting error bits, or silent for ``silent_cycles`` cycles, or the adapter gone,
  stops the whole arm (``on_fault``: ``hold`` the measured position, or ``torque_off``);
  :attr:`fault` says which servo and what, in words, until the next successful enable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math

from arm_servos.bus import ServoState
from arm_servos.calibration import JointCalibration

MODES = ('disabled', 'enabled', 'fault', 'estop')
FAULT_POLICIES = ('hold', 'torque_off')


@dataclass(frozen=True)
class SafetyConfig:
    """Tunable limits of the rules (validated on construction)."""

    velocity_cap: float = math.inf      # rad/s, applied below the URDF limits
    approach_velocity: float = 0.3      # rad/s for the first motion after enable or a fault
    command_timeout: float = 0.5        # s without a command → hold the measured position
    silent_cycles: int = 3              # consecutive cycles without a reply → fault
    on_fault: str = 'hold'              # 'hold' or 'torque_off'
    clip: bool = False                  # clip out-of-range commands instead of refusing

    def __post_init__(self) -> None:
        for name in ('velocity_cap', 'approach_velocity', 'command_timeout'):
            value = getattr(self, name)
            if isinstance(value, bool) or not value > 0 or math.isnan(value):
                raise ValueError(f'{name} must be > 0, got {value!r}')
        if isinstance(self.silent_cycles, bool) or not isinstance(self.silent_cycles, int) or \
                self.silent_cycles < 1:
            raise ValueError(f'silent_cycles must be an integer >= 1, got {self.silent_cycles!r}')
        if self.on_fault not in FAULT_POLICIES:
            raise ValueError(f'on_fault must be one of {FAULT_POLICIES}, got {self.on_fault!r}')


@dataclass(frozen=True)
class Outcome:
    """The answer to a request: accepted or not, and why in words."""

    ok: bool
    message: str = ''


@dataclass(frozen=True)
class BusActions:
    """What to write in this cycle, in this order."""

    torque: bool | None = None           # None: leave torque as it is
    goals: dict[int, int] | None = None  # servo id → goal ticks


class ServoSafety:
    """The rules above for one arm (joints in calibration order)."""

    def __init__(self, joints: Sequence[JointCalibration], velocity_limits: Mapping[str, float],
                 config: SafetyConfig | None = None) -> None:
        self.config = config or SafetyConfig()
        self.joints = tuple(joints)
        self.names = tuple(j.name for j in self.joints)
        self._by_id = {j.servo_id: j for j in self.joints}
        self.max_velocity: dict[str, float] = {}
        for joint in self.joints:
            limit = float(velocity_limits.get(joint.name, 0.0))
            if not limit > 0 or not math.isfinite(limit):
                limit = math.inf   # URDF velocity 0 or absent: the configured cap alone
            self.max_velocity[joint.name] = min(limit, self.config.velocity_cap)
            if math.isinf(self.max_velocity[joint.name]):
                raise ValueError(f'{joint.name}: no velocity limit in the URDF; set a '
                                 'velocity cap')
        self.mode = 'disabled'
        self.fault = ''
        self.measured: dict[str, float | None] = {name: None for name in self.names}
        self.states: dict[int, ServoState | None] = {}
        self.setpoint: dict[str, float] = {}
        self.target: dict[str, float] = {}
        self.trajectory_active = False
        # Counted by hold(), with its reason: a gripper goal started before the last hold
        # ends there (arm_servos.gripper.drive) instead of driving on.
        self.holds = 0
        self.hold_reason = ''
        self._silent = {j.servo_id: 0 for j in self.joints}
        # Each servo's last answer: a cycle lost on a busy bus (fewer than silent_cycles in a
        # row) does not make a servo silent, for enable as for the fault rule.
        self._last_read: dict[int, ServoState] = {}
        self._approaching = False
        self._commanded = False
        self._last_command = -math.inf
        self._last_step: float | None = None
        self._pending_torque: bool | None = None
        self._hold_written = True

    # ------------------------------------------------------------------ feedback
    def observe(self, states: Mapping[int, ServoState | None], now: float) -> str:
        """One cycle's answers; returns the fault this cycle raised ('' if none)."""
        self.states = dict(states)
        problems = []
        for joint in self.joints:
            state = states.get(joint.servo_id)
            if state is None:
                self._silent[joint.servo_id] += 1
                if self._silent[joint.servo_id] >= self.config.silent_cycles:
                    problems.append(f'servo {joint.servo_id} ({joint.name}) not answering '
                                    f'for {self._silent[joint.servo_id]} cycles')
                continue
            self._silent[joint.servo_id] = 0
            self._last_read[joint.servo_id] = state
            self.measured[joint.name] = joint.to_radians(state.position)
            if state.errors:
                problems.append(f'servo {joint.servo_id} ({joint.name}) reports '
                                f'{", ".join(state.errors)}')
        if problems:
            return self._raise_fault('; '.join(problems))
        return ''

    def bus_lost(self, message: str) -> str:
        """The adapter vanished (or cannot be opened): a fault with the bus's words."""
        for servo_id in self._silent:
            self._silent[servo_id] = self.config.silent_cycles
        self.states = {}      # what was read before the adapter went is no reading now
        self._last_read = {}
        return self._raise_fault(f'bus: {message}')

    def _raise_fault(self, reason: str) -> str:
        if self.mode in ('fault', 'estop', 'disabled'):
            if self.mode == 'fault':
                self.fault = reason
            return ''
        self.mode = 'fault'
        self.fault = reason
        self.trajectory_active = False
        if self.config.on_fault == 'torque_off':
            self._pending_torque = False
        else:
            self._hold_measured()
        return reason

    def _hold_measured(self) -> None:
        known = {n: v for n, v in self.measured.items() if v is not None}
        self.setpoint.update(known)
        self.target = dict(self.setpoint)
        self._hold_written = False
        self._rearm_approach()

    def _rearm_approach(self) -> None:
        # The next target may be far from where the arm stopped (a teleop resume, a stream
        # that comes back): its first motion is slow until the setpoint has caught up.
        self._approaching = True
        self._commanded = False

    def hold(self, now: float, reason: str = 'hold') -> Outcome:
        """Hold the measured position now (a teleop hold, an operator): the command stream,
        any trajectory and any gripper goal stop (``reason`` is what ends the gripper goal);
        the next motion starts at ``approach_velocity``."""
        if self.mode != 'enabled':
            fault = f' ({self.fault})' if self.fault else ''
            return Outcome(False, f'not enabled: the arm is {self.mode}{fault}')
        self.holds += 1
        self.hold_reason = reason
        self.trajectory_active = False
        self._last_command = now
        self._hold_measured()
        return Outcome(True, 'holding the measured position')

    def internal_fault(self, reason: str) -> str:
        """An unexpected error in the bridge itself: stopped as a servo fault is."""
        return self._raise_fault(reason)

    # ------------------------------------------------------------------ requests
    def enable(self, now: float) -> Outcome:
        """Torque on with the goal at the measured position (refused with the reason)."""
        if self.mode == 'estop':
            return Outcome(False, 'e-stop is latched: reset it first')
        # Silent: never read, or no answer for silent_cycles cycles in a row; a servo that
        # missed the last cycle or two is held at its last answer (at most silent_cycles - 1
        # periods old), with that answer's error bits.
        silent = [f'servo {j.servo_id} ({j.name})' for j in self.joints
                  if j.servo_id not in self._last_read or
                  self._silent[j.servo_id] >= self.config.silent_cycles]
        if silent:
            return Outcome(False, f'cannot enable: no reading from {", ".join(silent)}')
        errors = [f'servo {j.servo_id} ({j.name}) reports {", ".join(s.errors)}'
                  for j in self.joints if (s := self._last_read[j.servo_id]).errors]
        if errors:
            return Outcome(False, f'cannot enable: {"; ".join(errors)}')
        self.setpoint = {n: v for n, v in self.measured.items() if v is not None}
        self.target = dict(self.setpoint)
        self.mode = 'enabled'
        self.fault = ''
        self.trajectory_active = False
        self._approaching = True
        self._commanded = False
        self._last_command = now
        self._last_step = now
        self._pending_torque = True
        self._hold_written = False
        return Outcome(True, 'torque on, holding the measured position')

    def enable_failed(self, reason: str) -> None:
        """The enable's goal write was not confirmed: torque stays off, ``fault`` says why."""
        self.mode = 'disabled'
        self.fault = reason
        self._pending_torque = None

    def torque_off_unwritten(self) -> None:
        """The bus did not take this cycle's torque-off: asked again next cycle (unless a
        newer request, an enable, replaced it)."""
        if self._pending_torque is None:
            self._pending_torque = False

    def disable(self) -> Outcome:
        if self.mode == 'estop':
            return Outcome(True, 'torque already off (e-stop latched)')
        self.mode = 'disabled'
        self.trajectory_active = False
        self._pending_torque = False
        return Outcome(True, 'torque off')

    def estop(self, reason: str = 'e-stop') -> Outcome:
        self.mode = 'estop'
        self.fault = reason
        self.trajectory_active = False
        self._pending_torque = False
        return Outcome(True, 'torque off on every servo; e-stop latched until reset')

    def reset(self) -> Outcome:
        if self.mode != 'estop':
            return Outcome(True, 'no e-stop latched')
        self.mode = 'disabled'
        self.fault = ''
        return Outcome(True, 'e-stop reset; torque stays off until enabled')

    def check(self, positions: Mapping[str, float], clip: bool | None = None
              ) -> tuple[dict[str, float] | None, str]:
        """(positions within the calibrated ranges, or None; message naming the joints)."""
        clip = self.config.clip if clip is None else clip
        unknown = sorted(set(positions) - set(self.names))
        if unknown:
            return None, f'unknown joints {unknown}; this arm has {list(self.names)}'
        checked, clipped = {}, []
        for joint in self.joints:
            if joint.name not in positions:
                continue
            value = float(positions[joint.name])
            if not math.isfinite(value):
                return None, f'{joint.name}: position {value} is not a finite number'
            if not joint.lower <= value <= joint.upper:
                if not clip:
                    return None, (f'{joint.name}: {value:.4f} rad is outside the calibrated '
                                  f'range [{joint.lower:.4f}, {joint.upper:.4f}]')
                clipped.append(joint.name)
                value = min(max(value, joint.lower), joint.upper)
            checked[joint.name] = value
        return checked, (f'clipped to the calibrated range: {", ".join(clipped)}'
                         if clipped else '')

    def trajectory_reason(self, joint_names: Sequence[str],
                          points: Sequence[tuple[float, Sequence[float]]]) -> str:
        """'' when a trajectory (time from start in s, positions in ``joint_names`` order)
        stays in the calibrated ranges (unless clipping) and under the velocity limits from
        the current setpoint on; else the first problem, naming the joint and the point."""
        by_name = {j.name: j for j in self.joints}
        previous_time = 0.0
        previous = [self.setpoint.get(n, self.measured.get(n)) for n in joint_names]
        for index, (time_from_start, positions) in enumerate(points):
            for name, value, before in zip(joint_names, positions, previous):
                joint = by_name.get(name)
                if joint is None:
                    return f'unknown joint {name}'
                if not self.config.clip and not joint.lower <= value <= joint.upper:
                    return (f'{name}: point {index} at {value:.4f} rad is outside the '
                            f'calibrated range [{joint.lower:.4f}, {joint.upper:.4f}]')
                duration = time_from_start - previous_time
                if before is None or duration <= 0:
                    continue
                speed = abs(value - before) / duration
                if speed > self.max_velocity[name] * (1 + 1e-6):
                    return (f'{name}: {speed:.3f} rad/s to point {index} is above its velocity '
                            f'limit {self.max_velocity[name]:.3f} rad/s')
            previous_time, previous = time_from_start, list(positions)
        return ''

    def command(self, positions: Mapping[str, float], now: float,
                clip: bool | None = None, from_trajectory: bool = False) -> Outcome:
        """A new target (rad per joint; joints left out keep theirs)."""
        if self.mode != 'enabled':
            reason = f' ({self.fault})' if self.fault else ''
            return Outcome(False, f'not enabled: the arm is {self.mode}{reason}')
        checked, message = self.check(positions, clip)
        if checked is None:
            return Outcome(False, message)
        self.target.update(checked)
        self._commanded = True
        self._last_command = now
        self.trajectory_active = from_trajectory
        return Outcome(True, message)

    def end_trajectory(self, now: float, hold: bool = False) -> None:
        """A trajectory finished (or was cancelled: ``hold`` stops at the measured pose)."""
        self.trajectory_active = False
        self._last_command = now
        if hold and self.mode == 'enabled':
            self._hold_measured()

    # ------------------------------------------------------------------ the cycle
    def step(self, now: float) -> BusActions:
        """What to write this cycle."""
        torque, self._pending_torque = self._pending_torque, None
        if self.mode != 'enabled':
            goals = None
            if self.mode == 'fault' and not self._hold_written and \
                    self.config.on_fault == 'hold':
                goals = self._ticks(self.setpoint)
                self._hold_written = True
            self._last_step = now
            return BusActions(torque, goals)
        dt = 0.0 if self._last_step is None else max(0.0, now - self._last_step)
        self._last_step = now
        if not self.trajectory_active and now - self._last_command > self.config.command_timeout \
                and self.target != self.setpoint:
            self._hold_measured()          # the stream stopped: hold where the arm is
        caught_up = True
        for name in self.names:
            if name not in self.setpoint or name not in self.target:
                continue
            limit = self.max_velocity[name]
            if self._approaching:
                limit = min(limit, self.config.approach_velocity)
            error = self.target[name] - self.setpoint[name]
            step = max(-limit * dt, min(limit * dt, error))
            self.setpoint[name] += step
            caught_up = caught_up and abs(error - step) < 1e-9
        if self._approaching and self._commanded and caught_up:
            self._approaching = False   # the first motion is done: full speed from now on
        self._hold_written = True
        return BusActions(torque, self._ticks(self.setpoint))

    def _ticks(self, positions: Mapping[str, float]) -> dict[int, int]:
        return {j.servo_id: j.to_ticks(positions[j.name]) for j in self.joints
                if j.name in positions}

    @property
    def active_errors(self) -> dict[int, tuple[str, ...]]:
        return {i: s.errors for i, s in self.states.items() if s is not None and s.errors}
