"""One bus cycle of the servo bridge, ROS-free: read every servo, apply the safety rules, write.

The ``servo_bridge`` node runs :meth:`BridgeCore.read` and :meth:`BridgeCore.write` in its bus
thread with its trajectory commands in between; the benchmark runs the same two calls. Nothing
here raises on a bus fault: a vanished adapter becomes a safety fault with the bus's words and
the next cycle tries the port again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import math

from arm_servos.bus import BusUnavailableError, ServoBus, ServoState
from arm_servos.calibration import Calibration
from arm_servos.safety import ServoSafety

OK, WARN, ERROR = 0, 1, 2   # diagnostic_msgs/DiagnosticStatus levels


@dataclass(frozen=True)
class JointReading:
    """The arm's state in joint units, calibration order; None where a servo never answered."""

    names: tuple[str, ...]
    positions: tuple[float | None, ...]
    velocities: tuple[float, ...]
    efforts: tuple[float, ...]

    @property
    def complete(self) -> bool:
        return all(p is not None for p in self.positions)


@dataclass(frozen=True)
class Diagnostic:
    """One status line of /diagnostics, ROS-free (level: OK, WARN or ERROR)."""

    name: str
    level: int
    message: str
    hardware_id: str
    values: tuple[tuple[str, str], ...]


class BridgeCore:
    """The bus, the calibration and the safety rules of one arm.

    Args:
        efforts: N·m (N) per joint at full load, the URDF's effort limits: the servos report
            load as a fraction of their maximum, published as that fraction of this.
    """

    def __init__(self, bus: ServoBus, calibration: Calibration, safety: ServoSafety,
                 efforts: Mapping[str, float] | None = None) -> None:
        self.bus = bus
        self.calibration = calibration
        self.safety = safety
        self.efforts = {j.name: float((efforts or {}).get(j.name, 0.0))
                        for j in calibration.joints}
        # The last answer of each servo and how many cycles ago it came: a reply lost in one
        # cycle (retried and counted) does not leave a hole in joint_states; a servo silent
        # for silent_cycles does (and stops the arm).
        self.states: dict[int, ServoState | None] = {j.servo_id: None for j in calibration.joints}
        self.age: dict[int, int] = {j.servo_id: 0 for j in calibration.joints}
        self.last_fault = ''
        self.bus_error = ''

    def read(self, now: float) -> str:
        """Read every servo and apply the rules; returns the fault raised this cycle ('')."""
        try:
            states = self.bus.read()
        except BusUnavailableError as error:
            self.bus_error = str(error)
            for servo_id in self.states:
                self.states[servo_id] = None
            fault = self.safety.bus_lost(str(error))
        else:
            self.bus_error = ''
            for servo_id, state in states.items():
                if state is None:
                    self.age[servo_id] += 1
                    if self.age[servo_id] >= self.safety.config.silent_cycles:
                        self.states[servo_id] = None
                else:
                    self.states[servo_id], self.age[servo_id] = state, 0
            fault = self.safety.observe(states, now)
        if fault:
            self.last_fault = fault
        return fault

    def write(self, now: float) -> None:
        """Write what the rules allow this cycle: a goal before torque on, torque off first.
        Torque goes on only once every goal is read back as written (a goal write has no
        reply: a lost one would leave a stale goal that torque-on drives the arm to)."""
        actions = self.safety.step(now)
        try:
            if actions.torque is False:
                try:
                    self.bus.set_torque(False)
                except BusUnavailableError:
                    # Torque off is never given up: written again each cycle until the bus
                    # takes it (an adapter back after a hiccup, the port reopened).
                    self.safety.torque_off_unwritten()
                    raise
            if actions.goals:
                self.bus.write_goals(actions.goals)
            if actions.torque is True:
                problem = self._confirm_goals(actions.goals or {})
                if problem:
                    self.safety.enable_failed(problem)
                    return
                self.bus.set_torque(True)
        except BusUnavailableError as error:
            self.bus_error = str(error)
            self.safety.bus_lost(str(error))

    def _confirm_goals(self, goals: Mapping[int, int]) -> str:
        """'' once every servo's goal register holds ``goals`` (rewritten up to the bus's
        retries), else which servos did not take theirs, in words."""
        names = {j.servo_id: j.name for j in self.calibration.joints}
        wrong: dict[int, int | None] = {}
        for attempt in range(getattr(self.bus, 'retries', 2) + 1):
            if attempt:
                self.bus.write_goals({i: goals[i] for i in wrong})
            read = self.bus.read_goals(tuple(goals))
            wrong = {i: read.get(i) for i in goals if read.get(i) != goals[i]}
            if not wrong:
                return ''
        return '; '.join(
            f'servo {i} ({names.get(i, "?")}) did not take its goal: '
            + ('no reply to the read-back' if got is None else
               f'{got} ticks read back, {goals[i]} written')
            for i, got in wrong.items()) + '; torque left off'

    def set_torque(self, enabled: bool) -> str:
        """Torque on or off on every servo now, outside the rules (the leader's release);
        '' or the bus's error."""
        try:
            self.bus.set_torque(enabled)
        except BusUnavailableError as error:
            self.bus_error = str(error)
            return str(error)
        return ''

    def cycle(self, now: float) -> str:
        fault = self.read(now)
        self.write(now)
        return fault

    def reading(self) -> JointReading:
        positions, velocities, efforts = [], [], []
        for joint in self.calibration.joints:
            state = self.states.get(joint.servo_id)
            positions.append(joint.to_radians(state.position) if state else None)
            velocities.append(joint.velocity_to_radians(state.velocity) if state else 0.0)
            efforts.append(joint.direction * state.load * self.efforts[joint.name]
                           if state else 0.0)
        return JointReading(self.calibration.names, tuple(positions), tuple(velocities),
                            tuple(efforts))

    def diagnostics(self, prefix: str = 'servo_bridge') -> list[Diagnostic]:
        """One status per servo (voltage, temperature, load, error bits in words) and one for
        the bus (sent, lost, checksum errors, last error)."""
        out = []
        lost_by_servo = self.bus.stats.per_servo_lost
        for joint in self.calibration.joints:
            state = self.states.get(joint.servo_id)
            name = f'{prefix}: servo {joint.servo_id} ({joint.name})'
            hardware = f'{self.calibration.protocol} id {joint.servo_id} ({joint.model})'
            lost = str(lost_by_servo.get(joint.servo_id, 0))
            if state is None:
                out.append(Diagnostic(name, ERROR, 'not answering', hardware,
                                      (('lost replies', lost),)))
                continue
            level = ERROR if state.errors else OK
            message = ', '.join(state.errors) if state.errors else 'OK'
            angle = joint.to_radians(state.position)
            out.append(Diagnostic(name, level, message, hardware, (
                ('position (rad)', f'{angle:.4f}'), ('position (ticks)', str(state.position)),
                ('voltage (V)', f'{state.voltage:.1f}'),
                ('temperature (C)', f'{state.temperature:.0f}'),
                ('load (fraction of max)', f'{state.load:.3f}'),
                ('error bits', f'0x{state.error_bits:02x}'),
                ('errors', message if state.errors else 'none'), ('lost replies', lost))))
        stats = self.bus.stats
        safety = self.safety
        level = ERROR if self.bus_error or safety.mode == 'fault' else \
            WARN if safety.mode == 'estop' else OK
        message = self.bus_error or (f'{safety.mode}: {safety.fault}' if safety.fault
                                     else safety.mode)
        values = tuple((key, str(value)) for key, value in stats.as_dict().items()) + (
            ('mode', safety.mode), ('fault', safety.fault or 'none'),
            ('port', getattr(self.bus, 'port_name', '')))
        out.append(Diagnostic(f'{prefix}: bus', level, message,
                              str(getattr(self.bus, 'port_name', '')), values))
        return out


def theoretical_rate(bytes_per_cycle: int, baudrate: int) -> float:
    """Cycles per second the wire allows: 10 bits per byte (start, 8 data, stop)."""
    return baudrate / (10.0 * bytes_per_cycle) if bytes_per_cycle > 0 else math.inf
