"""servo_bridge's messages from arm_servos' plain values: joint_states and /diagnostics."""

from __future__ import annotations

from collections.abc import Sequence

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from sensor_msgs.msg import JointState

from arm_servos.bridge import Diagnostic, JointReading


def joint_state_message(reading: JointReading, stamp: Time) -> JointState:
    """A complete reading (every servo answered) as sensor_msgs/JointState."""
    message = JointState(name=list(reading.names), position=list(reading.positions),
                         velocity=list(reading.velocities), effort=list(reading.efforts))
    message.header.stamp = stamp
    return message


def diagnostics_message(statuses: Sequence[Diagnostic], bus_rate: float,
                        stamp: Time) -> DiagnosticArray:
    """/diagnostics: one status per servo and the bus's, which also gets the measured bus
    cycles per second."""
    message = DiagnosticArray(status=[DiagnosticStatus(
        level=bytes([s.level]), name=s.name, message=s.message, hardware_id=s.hardware_id,
        values=[KeyValue(key=k, value=v) for k, v in s.values] + (
            [KeyValue(key='bus cycles (Hz)', value=f'{bus_rate:.1f}')]
            if s.name.endswith(': bus') else [])) for s in statuses])
    message.header.stamp = stamp
    return message
