"""The calibration routine, ROS-free: torque off, the arm in its zero pose, every joint through
its range, a validated :class:`~arm_servos.calibration.Calibration` out.

The routine only reads the servos: it never turns torque on. Prompts and the end of the
sweep are callables, so the command line drives it interactively and tests drive it without
a keyboard.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
import math
import time

from arm_servos.bus import ServoBus
from arm_servos.calibration import (
    Calibration,
    CalibrationError,
    JointCalibration,
    measured_range,
    UrdfJoint,
)


@dataclass(frozen=True)
class ServoPlan:
    """What the routine cannot measure: which servo drives which joint, and which way."""

    name: str
    servo_id: int
    model: str
    direction: int = 1
    ticks_per_radian: float = 4096 / (2 * math.pi)


def plans_from(calibration: Calibration) -> list[ServoPlan]:
    """Ids, models, directions of an existing calibration (e.g. the SO-101 example)."""
    return [ServoPlan(j.name, j.servo_id, j.model, j.direction, j.ticks_per_radian)
            for j in calibration.joints]


def calibrate(bus: ServoBus, plans: Sequence[ServoPlan], protocol: str, baudrate: int,
              urdf: Mapping[str, UrdfJoint], chain: Sequence[str],
              ask: Callable[[str], None], say: Callable[[str], None],
              sweeping: Callable[[], bool], sample_period: float = 0.02) -> Calibration:
    """Run the routine on an open bus; :class:`CalibrationError` names what went wrong.

    Args:
        ask: shows an instruction and returns when the user is ready (Enter).
        say: shows progress.
        sweeping: True while the user is still moving the joints.
    """
    names = {plan.servo_id: plan.name for plan in plans}
    models = bus.ping([plan.servo_id for plan in plans])
    silent = [f'{names[i]} (id {i})' for i, model in models.items() if model is None]
    if silent:
        raise CalibrationError(f'joints: no answer from {", ".join(silent)}; check the '
                               'cable, the power supply and the ids')
    bus.set_torque(False)
    say(f'torque off on servos {sorted(names)}: the arm is free to move by hand')
    ask('Put the arm in its zero pose (every joint at 0 rad as the URDF defines it), then '
        'press Enter')
    zero = _positions(bus, names)
    joints = [JointCalibration(p.name, p.servo_id, p.model, p.ticks_per_radian, p.direction,
                               zero[p.servo_id], -math.inf, math.inf) for p in plans]
    for joint in joints:
        say(f'{joint.name}: zero at tick {joint.offset}')
    ask('Move every joint slowly through its whole range (end stop to end stop), then press '
        'Enter')
    seen: dict[int, list[int]] = {p.servo_id: [] for p in plans}
    while True:
        for servo_id, state in bus.read().items():
            if state is not None:
                seen[servo_id].append(state.position)
        if not sweeping():
            break
        time.sleep(sample_period)
    measured = []
    for joint in joints:
        lower, upper = measured_range(joint, seen[joint.servo_id], urdf[joint.name])
        measured.append(JointCalibration(joint.name, joint.servo_id, joint.model,
                                         joint.ticks_per_radian, joint.direction, joint.offset,
                                         lower, upper))
        say(f'{joint.name}: range [{lower:.3f}, {upper:.3f}] rad')
    draft = Calibration(protocol, baudrate, tuple(measured))
    # The file written is exactly what loading will accept.
    return Calibration.from_mapping(draft.as_mapping(), urdf, chain)


def _positions(bus: ServoBus, names: Mapping[int, str], attempts: int = 5) -> dict[int, int]:
    # Nothing is moving and no cycle is due: a few more tries cost nothing here.
    for _ in range(attempts):
        states = bus.read()
        if all(state is not None for state in states.values()):
            break
    silent = [f'{names[i]} (id {i})' for i, s in states.items() if s is None]
    if silent:
        raise CalibrationError(f'joints: no reading from {", ".join(silent)}')
    return {i: s.position for i, s in states.items() if s is not None}
