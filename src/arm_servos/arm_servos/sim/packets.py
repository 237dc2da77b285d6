"""The servo side of both packet protocols, written from the vendors' manuals (not from the
SDKs, which only implement the host side): parse instruction packets out of a byte stream,
build status packets.

Feetech STS/SCS: ``FF FF ID LEN INST P… CHK``, LEN = parameters + 2, CHK = ~(ID + LEN + INST +
ΣP) & 0xFF; status ``FF FF ID LEN ERR P… CHK``.
Dynamixel Protocol 2.0: ``FF FF FD 00 ID LEN_L LEN_H INST P… CRC_L CRC_H``, LEN = parameters + 3,
CRC-16 (polynomial 0x8005, initial 0) over everything before it; any ``FF FF FD`` inside
INST/P is followed by a stuffed ``FD``; status ``… 0x55 ERR P… CRC``.
"""

from __future__ import annotations

from dataclasses import dataclass

PING, READ, WRITE, SYNC_READ, SYNC_WRITE = 0x01, 0x02, 0x03, 0x82, 0x83
BROADCAST = 0xFE
DXL_STATUS = 0x55


@dataclass(frozen=True)
class Instruction:
    servo_id: int
    instruction: int
    params: bytes
    size: int         # bytes on the wire


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else crc << 1
        table.append(crc & 0xFFFF)
    return table


_CRC_TABLE = _crc_table()


def crc16(data: bytes) -> int:
    """Dynamixel Protocol 2.0 CRC-16 (CRC-16/BUYPASS: poly 0x8005, init 0, not reflected)."""
    crc = 0
    for byte in data:
        crc = ((crc << 8) ^ _CRC_TABLE[((crc >> 8) ^ byte) & 0xFF]) & 0xFFFF
    return crc


def feetech_checksum(body: bytes) -> int:
    return ~sum(body) & 0xFF


class FeetechCodec:
    """Feetech STS/SCS packets."""

    name = 'feetech'

    def parse(self, buffer: bytearray) -> tuple[Instruction | None, int, bool]:
        """(instruction or None, bytes consumed, checksum_bad) from the front of ``buffer``;
        (None, 0, False) while a packet is still incomplete."""
        start = buffer.find(b'\xff\xff')
        if start < 0:
            keep = 1 if buffer.endswith(b'\xff') else 0
            return None, len(buffer) - keep, False
        if len(buffer) < start + 4:
            return None, start, False
        length = buffer[start + 3]
        if buffer[start + 2] == 0xFF or length < 2:
            return None, start + 1, False
        end = start + 4 + length
        if len(buffer) < end:
            return None, start, False
        packet = bytes(buffer[start:end])
        if feetech_checksum(packet[2:-1]) != packet[-1]:
            return None, end, True
        return Instruction(packet[2], packet[4], packet[5:-1], len(packet)), end, False

    def status(self, servo_id: int, error: int, params: bytes = b'') -> bytes:
        body = bytes([servo_id, len(params) + 2, error & 0xFF]) + params
        return b'\xff\xff' + body + bytes([feetech_checksum(body)])

    @staticmethod
    def read_request(params: bytes) -> tuple[int, int]:
        return params[0], params[1]

    @staticmethod
    def write_request(params: bytes) -> tuple[int, bytes]:
        return params[0], params[1:]

    @staticmethod
    def sync_header(params: bytes) -> tuple[int, int, bytes]:
        return params[0], params[1], params[2:]

    def ping_reply(self, servo_id: int, error: int, model: int) -> bytes:
        # Feetech answers a ping with an empty status; the SDK reads the model number after.
        return self.status(servo_id, error)


def stuff(payload: bytes) -> bytes:
    """Protocol 2.0 byte stuffing: FF FF FD → FF FF FD FD inside INST/ERR/parameters."""
    out = bytearray()
    for byte in payload:
        out.append(byte)
        if byte == 0xFD and out[-3:-1] == b'\xff\xff' and len(out) >= 3:
            out.append(0xFD)
    return bytes(out)


def unstuff(payload: bytes) -> bytes:
    out = bytearray()
    index = 0
    while index < len(payload):
        out.append(payload[index])
        if (payload[index] == 0xFD and out[-3:] == b'\xff\xff\xfd'
                and index + 1 < len(payload) and payload[index + 1] == 0xFD):
            index += 1   # drop the stuffed FD
        index += 1
    return bytes(out)


class DynamixelCodec:
    """Dynamixel Protocol 2.0 packets."""

    name = 'dynamixel'
    header = b'\xff\xff\xfd\x00'

    def parse(self, buffer: bytearray) -> tuple[Instruction | None, int, bool]:
        start = buffer.find(self.header)
        if start < 0:
            return None, max(0, len(buffer) - 3), False
        if len(buffer) < start + 7:
            return None, start, False
        length = buffer[start + 5] | buffer[start + 6] << 8
        if length < 3:
            return None, start + 1, False
        end = start + 7 + length
        if len(buffer) < end:
            return None, start, False
        packet = bytes(buffer[start:end])
        if crc16(packet[:-2]) != (packet[-2] | packet[-1] << 8):
            return None, end, True
        payload = unstuff(packet[7:-2])
        return Instruction(packet[4], payload[0], payload[1:], len(packet)), end, False

    def status(self, servo_id: int, error: int, params: bytes = b'') -> bytes:
        payload = stuff(bytes([DXL_STATUS, error & 0xFF]) + params)
        length = len(payload) + 2
        head = self.header + bytes([servo_id, length & 0xFF, length >> 8])
        crc = crc16(head + payload)
        return head + payload + bytes([crc & 0xFF, crc >> 8])

    @staticmethod
    def read_request(params: bytes) -> tuple[int, int]:
        return params[0] | params[1] << 8, params[2] | params[3] << 8

    @staticmethod
    def write_request(params: bytes) -> tuple[int, bytes]:
        return params[0] | params[1] << 8, params[2:]

    @staticmethod
    def sync_header(params: bytes) -> tuple[int, int, bytes]:
        return params[0] | params[1] << 8, params[2] | params[3] << 8, params[4:]

    def ping_reply(self, servo_id: int, error: int, model: int) -> bytes:
        return self.status(servo_id, error, bytes([model & 0xFF, model >> 8, 52]))


CODECS = {'feetech': FeetechCodec, 'dynamixel': DynamixelCodec}
