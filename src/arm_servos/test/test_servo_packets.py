"""The simulated servos' side of both protocols against the vendors' SDKs (no pty needed):
what the SDK sends parses, what the simulation answers is accepted by the SDK's reader."""

from __future__ import annotations

import dynamixel_sdk
import pytest
import scservo_sdk

from arm_servos.sim.packets import (
    crc16,
    DynamixelCodec,
    FeetechCodec,
    PING,
    READ,
    stuff,
    SYNC_READ,
    unstuff,
    WRITE,
)


class WirePort:
    """Enough of a PortHandler for the SDKs' packet code: records writes, replays reads."""

    def __init__(self, incoming: bytes = b'') -> None:
        self.is_using = False
        self.written = bytearray()
        self.incoming = bytearray(incoming)

    def clearPort(self) -> None:  # noqa: N802 (the SDK's name)
        pass

    def writePort(self, packet) -> int:  # noqa: N802
        self.written.extend(bytes(packet))
        return len(packet)

    def readPort(self, length: int) -> bytes:  # noqa: N802
        chunk, self.incoming = bytes(self.incoming[:length]), self.incoming[length:]
        return chunk

    def setPacketTimeout(self, *_: object) -> None:  # noqa: N802
        pass

    def isPacketTimeout(self) -> bool:  # noqa: N802
        return not self.incoming


def test_dynamixel_crc_matches_the_emanual_ping_example():
    # e-Manual Protocol 2.0, "Ping" example: FF FF FD 00 01 03 00 01 19 4E.
    assert crc16(bytes.fromhex('fffffd0001030001')) == 0x4E19


def test_dynamixel_crc_matches_the_sdk_on_random_bytes():
    handler = dynamixel_sdk.PacketHandler(2.0)
    data = bytes(range(7, 250, 3))
    assert crc16(data) == handler.updateCRC(0, list(data), len(data))


def test_stuffing_round_trip_and_only_after_ff_ff_fd():
    payload = bytes([0x03, 0xFF, 0xFF, 0xFD, 0x10, 0xFD, 0xFF, 0xFD])
    stuffed = stuff(payload)
    assert stuffed == bytes([0x03, 0xFF, 0xFF, 0xFD, 0xFD, 0x10, 0xFD, 0xFF, 0xFD])
    assert unstuff(stuffed) == payload


def test_a_stuffed_instruction_is_unstuffed_by_the_simulation():
    payload = bytes([WRITE, 116, 0, 0xFF, 0xFF, 0xFD, 0x00])
    body = stuff(payload)
    head = DynamixelCodec.header + bytes([3, len(body) + 2, 0])
    crc = crc16(head + body)
    packet = head + body + bytes([crc & 0xFF, crc >> 8])
    assert packet.count(b'\xff\xff\xfd\xfd') == 1
    instruction, used, bad = DynamixelCodec().parse(bytearray(packet))
    assert not bad and used == len(packet)
    assert (instruction.servo_id, instruction.instruction) == (3, WRITE)
    assert instruction.params == payload[1:]


def test_the_bridge_goal_bytes_never_need_stuffing():
    # dynamixel-sdk 4.1.0's txPacket drops addStuffing's result when the packet grows, so an
    # instruction whose data holds FF FF FD goes out unstuffed. Goal positions 0..4095 as
    # four little-endian bytes (high byte <= 0x0F, then zeros) can never hold that sequence.
    from arm_servos.dynamixel import DynamixelBus
    bus = DynamixelBus.__new__(DynamixelBus)
    for ticks in range(0, 4096):
        data = bytes([1] + bus.goal_bytes(ticks) + [2] + bus.goal_bytes(4095 - ticks))
        assert b'\xff\xff\xfd' not in data


def test_a_stuffed_status_from_the_simulation_reads_back_through_the_sdk():
    data = bytes([0xFF, 0xFF, 0xFD, 0x07])
    port = WirePort(DynamixelCodec().status(5, 0, data))
    read, result, error = dynamixel_sdk.PacketHandler(2.0).readRx(port, 5, 4)
    assert result == dynamixel_sdk.COMM_SUCCESS and error == 0
    assert bytes(read) == data


@pytest.mark.parametrize('codec, sdk, handler', [
    (FeetechCodec(), scservo_sdk, scservo_sdk.PacketHandler(0)),
    (DynamixelCodec(), dynamixel_sdk, dynamixel_sdk.PacketHandler(2.0)),
])
def test_sync_read_and_ping_instructions_of_the_sdks_parse(codec, sdk, handler):
    port = WirePort()
    group = sdk.GroupSyncRead(port, handler, 56, 8)
    for servo_id in (1, 2, 6):
        group.addParam(servo_id)
    group.txPacket()
    port.is_using = False
    instruction, _, bad = codec.parse(bytearray(port.written))
    assert not bad and instruction.instruction == SYNC_READ
    assert codec.sync_header(instruction.params) == (56, 8, bytes([1, 2, 6]))
    port.written.clear()
    handler.readTx(port, 4, 56, 2)
    instruction, _, _ = codec.parse(bytearray(port.written))
    assert instruction.instruction == READ and codec.read_request(instruction.params) == (56, 2)
    port.written.clear()
    port.is_using = False
    port.incoming.extend(codec.ping_reply(9, 0, 777))
    handler.txRxPacket(port, _ping_packet(handler, 9))
    assert codec.parse(bytearray(port.written))[0].instruction == PING


def _ping_packet(handler, servo_id: int) -> list[int]:
    if handler.getProtocolVersion() == 2.0:
        return [0, 0, 0, 0, servo_id, 3, 0, PING, 0, 0]
    return [0, 0, servo_id, 2, PING, 0]


def test_a_corrupt_instruction_is_skipped_and_counted_as_bad():
    good = FeetechCodec().status(1, 0, b'\x01\x02')
    broken = bytearray(good)
    broken[-1] ^= 0xFF
    instruction, used, bad = FeetechCodec().parse(bytearray(broken))
    assert instruction is None and bad and used == len(broken)


def test_feetech_status_with_error_bits_reads_through_the_sdk():
    port = WirePort(FeetechCodec().status(3, 32, b'\x10\x20'))
    data, result, error = scservo_sdk.PacketHandler(0).readRx(port, 3, 2)
    assert result == scservo_sdk.COMM_SUCCESS and error == 32 and data == [0x10, 0x20]
