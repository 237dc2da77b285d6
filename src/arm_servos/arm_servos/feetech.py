"""Feetech STS/SCS servos (the SO-100/SO-101's STS3215) through ``feetech-servo-sdk``.

Control table of the STS series (Feetech's SMS_STS memory map), the addresses used here:
40 torque enable, 42 goal position (2 bytes), 56 present position (2), 58 present speed (2),
60 present load (2), 62 present voltage (1, 0.1 V), 63 present temperature (1, °C).
Positions and speeds use sign-and-magnitude with bit 15 as the sign; the load's sign is bit
10 (magnitude in 0.1 % of the maximum torque). Status packets carry the error bits below.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import scservo_sdk

from arm_servos.bus import ServoState, signed, words
from arm_servos.sdk_bus import SdkServoBus

TORQUE_ENABLE = 40
GOAL_POSITION = 42
PRESENT_POSITION = 56
READ_LENGTH = 8   # position, speed, load (2 bytes each), voltage, temperature (1 byte each)

# Status packet error bits (scservo_sdk.protocol_packet_handler.ERRBIT_*).
ERROR_WORDS = {1: 'input voltage', 2: 'angle sensor', 4: 'overheating', 8: 'overcurrent',
               32: 'overload'}

# Model numbers (register 3) of the servos this driver knows, and their ticks per turn.
MODELS = {777: ('sts3215', 4096), 2825: ('sts3250', 4096), 1284: ('scs0009', 1024)}


class FeetechBus(SdkServoBus):
    """Feetech STS/SCS protocol (0xFF 0xFF header, one-byte checksum)."""

    sdk = scservo_sdk
    protocol = 'feetech'
    read_address = PRESENT_POSITION
    read_length = READ_LENGTH
    goal_address = GOAL_POSITION
    goal_length = 2
    torque_address = TORQUE_ENABLE
    instruction_overhead = 8   # FF FF ID LEN INST ADDR DATA_LEN ... CHECKSUM
    status_overhead = 6        # FF FF ID LEN ERROR ... CHECKSUM
    id_offset = 2
    error_offset = 4
    data_offset = 5

    def packet_handler(self) -> Any:
        # 0: little-endian words, the STS series (1 would be the big-endian SCS series).
        return scservo_sdk.PacketHandler(0)

    def decode(self, servo_id: int, data: Sequence[int], error: int) -> ServoState:
        return ServoState(
            servo_id=servo_id,
            position=signed(data[0] | data[1] << 8, 15),
            velocity=float(signed(data[2] | data[3] << 8, 15)),
            load=signed(data[4] | data[5] << 8, 10) / 1000.0,
            voltage=data[6] / 10.0,
            temperature=float(data[7]),
            error_bits=error,
            errors=words(error, ERROR_WORDS) if error else ())

    def parameter_count(self, packet: Sequence[int]) -> int:
        return packet[3] - 2      # LEN counts the error byte and the checksum too

    def goal_ticks(self, data: Sequence[int]) -> int:
        return signed(data[0] | data[1] << 8, 15)

    def goal_bytes(self, ticks: int) -> list[int]:
        raw = scservo_sdk.SCS_TOSCS(ticks, 15)
        return [raw & 0xFF, (raw >> 8) & 0xFF]
