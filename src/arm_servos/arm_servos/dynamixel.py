"""Dynamixel X-series servos over Protocol 2.0 through ``dynamixel-sdk``.

Control table of the X series (e-Manual), the addresses used here: 64 torque enable,
70 hardware error status, 116 goal position (4 bytes), then one sync read of 126..146:
present load/current (2), velocity (4, 0.229 rpm), position (4), velocity trajectory (4),
position trajectory (4), input voltage (2, 0.1 V), temperature (1, °C).
A status packet only says *that* something is wrong (the alert bit 0x80); which error it is
lives in register 70, read once from that servo when its alert bit is set.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dynamixel_sdk

from arm_servos.bus import ServoState, twos_complement, words
from arm_servos.sdk_bus import PORT_ERRORS, SdkServoBus

TORQUE_ENABLE = 64
HARDWARE_ERROR_STATUS = 70
GOAL_POSITION = 116
PRESENT_LOAD = 126
READ_LENGTH = 21
ALERT = 0x80

# Register 70 bits (X-series e-Manual, "Hardware Error Status").
ERROR_WORDS = {1: 'input voltage', 4: 'overheating', 8: 'motor encoder',
               16: 'electrical shock', 32: 'overload'}
# Velocity unit of the X series: 0.229 rev/min.
TICKS_PER_SECOND_PER_UNIT = 0.229 * 4096 / 60.0

MODELS = {1060: ('xl430-w250', 4096), 1020: ('xm430-w350', 4096), 1200: ('xl330-m288', 4096),
          1190: ('xl330-m077', 4096), 1120: ('xm540-w270', 4096), 1030: ('xm430-w210', 4096)}


class DynamixelBus(SdkServoBus):
    """Dynamixel Protocol 2.0 (FF FF FD 00 header, CRC-16, byte stuffing)."""

    sdk = dynamixel_sdk
    protocol = 'dynamixel'
    read_address = PRESENT_LOAD
    read_length = READ_LENGTH
    goal_address = GOAL_POSITION
    goal_length = 4
    torque_address = TORQUE_ENABLE
    instruction_overhead = 14  # FF FF FD 00 ID LEN LEN INST ADDR ADDR LEN LEN ... CRC CRC
    status_overhead = 11       # FF FF FD 00 ID LEN LEN 0x55 ERROR ... CRC CRC
    id_offset = 4
    error_offset = 8
    data_offset = 9

    def packet_handler(self) -> Any:
        return dynamixel_sdk.PacketHandler(2.0)

    def receive(self) -> tuple[list[int], int]:
        return self._packets.rxPacket(self._replies, False)

    def refused_instruction(self, error: int) -> int:
        # Bits 0-6: the instruction's own error (e.g. 7, access: EEPROM with torque on); bit 7
        # is a hardware alert, with the instruction carried out.
        return error & 0x7F

    def hardware_errors(self, servo_id: int, error: int) -> int:
        if not error & ALERT:
            # Not a hardware error: the instruction itself was refused (e.g. data range).
            return error << 8
        try:
            self._discard_input()     # a late reply must not pass for register 70's
            bits, result, _ = self._packets.read1ByteTxRx(self._port, servo_id,
                                                          HARDWARE_ERROR_STATUS)
        except PORT_ERRORS:
            bits, result = 0, dynamixel_sdk.COMM_RX_FAIL
        finally:
            self._release()
        self.stats.sent += 1
        if result != dynamixel_sdk.COMM_SUCCESS:
            self._count_failure(servo_id, result)
            return ALERT << 8   # alert without its detail: still an error
        self.stats.received += 1
        return bits or ALERT << 8

    def decode(self, servo_id: int, data: Sequence[int], error: int) -> ServoState:
        def word(start: int, size: int) -> int:
            return twos_complement(int.from_bytes(bytes(data[start:start + size]), 'little'),
                                   size * 8)
        return ServoState(
            servo_id=servo_id,
            position=word(6, 4),
            velocity=word(2, 4) * TICKS_PER_SECOND_PER_UNIT,
            load=word(0, 2) / 1000.0,
            voltage=word(18, 2) / 10.0,
            temperature=float(data[20]),
            error_bits=error,
            errors=_error_words(error) if error else ())

    def parameter_count(self, packet: Sequence[int]) -> int:
        # LEN (2 bytes) counts the instruction, the error byte and the CRC too.
        return (packet[5] | packet[6] << 8) - 4

    def goal_ticks(self, data: Sequence[int]) -> int:
        return twos_complement(int.from_bytes(bytes(data[:4]), 'little'), 32)

    def goal_bytes(self, ticks: int) -> list[int]:
        return list((ticks & 0xFFFFFFFF).to_bytes(4, 'little'))


def _error_words(bits: int) -> tuple[str, ...]:
    """Register-70 bits in words; a refused instruction (status error in the high byte)."""
    hardware = words(bits & 0xFF, ERROR_WORDS)
    status = bits >> 8
    if status & ALERT and not bits & 0xFF:
        hardware += ('hardware alert (detail unread)',)
    refused = status & 0x7F
    if refused:
        hardware += (f'instruction refused (status error {refused})',)
    return hardware
