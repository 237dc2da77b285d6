"""Calibration as data: per joint the servo id, model, ticks per radian, direction, offset and
range, checked against the URDF before anything moves.

    angle [rad] = direction × (ticks − offset) / ticks_per_radian
    ticks       = offset + direction × angle × ticks_per_radian

``offset`` is the servo's reading with the joint at the URDF's zero (a half tick where the zero
sits between two ticks, as a LeRobot calibration's mid-range does); ``range`` is the measured
travel intersected with the URDF limits (radians). Three optional fields record what the
servo's EEPROM must hold for the file to be right, checked on connect (``arm_servos.eeprom``):
``homing_offset`` (the Homing_Offset register LeRobot writes), ``drive_mode`` (Dynamixel's
Drive_Mode reverse bit) and ``position_limits`` ([Min_Position_Limit, Max_Position_Limit] in
ticks: LeRobot's range_min and range_max, which it writes there). One more optional field,
``clip_reading`` (true for a LeRobot RANGE_0_100 joint, the gripper), makes a reading past the
range read as the range's end, as LeRobot's normalisation clips it. A file is refused, naming
the field, when
a field is missing or unknown, a value is of the wrong kind, ids repeat, a joint is not a
movable joint of the URDF, a joint of the URDF chain is missing, or a range leaves the URDF
limits or the servo's encoder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import yaml

from arm_kinematics.common.checks import is_finite_number
from arm_kinematics.common.yaml_file import read_yaml_file, YamlFileError

PROTOCOLS = ('feetech', 'dynamixel')
JOINT_FIELDS = ('id', 'model', 'ticks_per_radian', 'direction', 'offset', 'range')
OPTIONAL_JOINT_FIELDS = ('homing_offset', 'drive_mode', 'position_limits', 'clip_reading')
TOP_FIELDS = ('protocol', 'baudrate', 'joints')
ENCODER_TICKS = 4096       # STS3215 and X series: 12-bit absolute encoders
LIMIT_TOLERANCE = 1e-6     # rad: URDF limits are often written to 5-6 digits


class CalibrationError(ValueError):
    """A calibration that cannot be used; the message starts with the field at fault."""


@dataclass(frozen=True)
class UrdfJoint:
    """A movable joint of the URDF: limits in rad (m), velocity limit in rad/s."""

    name: str
    lower: float
    upper: float
    velocity: float
    effort: float


def urdf_joints(urdf: str) -> dict[str, UrdfJoint]:
    """Every revolute or prismatic joint of the URDF with its ``<limit>`` (a continuous joint
    gets ±inf, so the measured range alone bounds it)."""
    try:
        root = ElementTree.fromstring(urdf)
    except ElementTree.ParseError as exc:
        raise CalibrationError(f'urdf: not valid XML ({exc})') from None
    joints = {}
    for element in root.iter('joint'):
        kind = element.get('type')
        if kind not in ('revolute', 'prismatic', 'continuous'):
            continue
        limit = element.find('limit')
        attributes = limit.attrib if limit is not None else {}
        lower = -math.inf if kind == 'continuous' else float(attributes.get('lower', 0.0))
        upper = math.inf if kind == 'continuous' else float(attributes.get('upper', 0.0))
        joints[element.get('name', '')] = UrdfJoint(
            element.get('name', ''), lower, upper, float(attributes.get('velocity', 0.0)),
            float(attributes.get('effort', 0.0)))
    return joints


@dataclass(frozen=True)
class JointCalibration:
    """One joint's servo and how its ticks map to the joint angle."""

    name: str
    servo_id: int
    model: str
    ticks_per_radian: float
    direction: int
    offset: float
    lower: float
    upper: float
    homing_offset: int | None = None   # the EEPROM's Homing_Offset this file assumes
    drive_mode: int | None = None      # the EEPROM's Drive_Mode (Dynamixel) this file assumes
    # The EEPROM's (Min_Position_Limit, Max_Position_Limit) this file assumes, ticks.
    position_limits: tuple[int, int] | None = None
    # A reading past the range reads as its end (LeRobot's RANGE_0_100 and RANGE_M100_100
    # modes clip; its DEGREES mode does not): a hold or an enable at the measured position
    # then never writes a goal outside the range.
    clip_reading: bool = False

    def to_radians(self, ticks: float) -> float:
        angle = self.direction * (ticks - self.offset) / self.ticks_per_radian
        if self.clip_reading:
            return min(max(angle, self.lower), self.upper)
        return angle

    def to_ticks(self, angle: float) -> int:
        return round(self.offset + self.direction * angle * self.ticks_per_radian)

    def velocity_to_radians(self, ticks_per_second: float) -> float:
        return self.direction * ticks_per_second / self.ticks_per_radian

    def as_mapping(self) -> dict[str, Any]:
        offset = int(self.offset) if float(self.offset).is_integer() else \
            round(self.offset, 6)
        out = {'id': self.servo_id, 'model': self.model,
               'ticks_per_radian': round(self.ticks_per_radian, 9),
               'direction': self.direction, 'offset': offset,
               'range': [round(self.lower, 6), round(self.upper, 6)]}
        if self.homing_offset is not None:
            out['homing_offset'] = self.homing_offset
        if self.drive_mode is not None:
            out['drive_mode'] = self.drive_mode
        if self.position_limits is not None:
            out['position_limits'] = list(self.position_limits)
        if self.clip_reading:
            out['clip_reading'] = True
        return out


@dataclass(frozen=True)
class Calibration:
    """A whole arm's servos, joints in the order of the file (chain order)."""

    protocol: str
    baudrate: int
    joints: tuple[JointCalibration, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(j.name for j in self.joints)

    @property
    def ids(self) -> tuple[int, ...]:
        return tuple(j.servo_id for j in self.joints)

    def joint(self, name: str) -> JointCalibration:
        for joint in self.joints:
            if joint.name == name:
                return joint
        raise KeyError(name)

    def as_mapping(self) -> dict[str, Any]:
        return {'protocol': self.protocol, 'baudrate': self.baudrate,
                'joints': {j.name: j.as_mapping() for j in self.joints}}

    def to_yaml(self, header: str = '') -> str:
        lines = ''.join(f'# {line}\n' for line in header.splitlines())
        return lines + yaml.safe_dump(self.as_mapping(), sort_keys=False,
                                      default_flow_style=None)

    @classmethod
    def from_mapping(cls, data: object, urdf: Mapping[str, UrdfJoint],
                     chain: Sequence[str]) -> Calibration:
        """Validate ``data`` (a parsed file) against the URDF's joints and its chain."""
        if not isinstance(data, Mapping):
            raise CalibrationError('calibration: expected a mapping with '
                                   f'{", ".join(TOP_FIELDS)}')
        _known_fields(data, TOP_FIELDS, '')
        for name in TOP_FIELDS:
            if name not in data:
                raise CalibrationError(f'{name}: missing')
        protocol = data['protocol']
        if protocol not in PROTOCOLS:
            raise CalibrationError(f'protocol: {protocol!r} is not one of {list(PROTOCOLS)}')
        baudrate = _integer(data['baudrate'], 'baudrate')
        if baudrate <= 0:
            raise CalibrationError(f'baudrate: must be positive, got {baudrate}')
        entries = data['joints']
        if not isinstance(entries, Mapping) or not entries:
            raise CalibrationError('joints: expected a mapping of joint name to servo')
        joints = tuple(_joint(str(name), entry, urdf) for name, entry in entries.items())
        _check_ids(joints)
        missing = [name for name in chain if name not in entries]
        if missing:
            raise CalibrationError(f'joints: missing {", ".join(missing)} of the URDF chain '
                                   f'({", ".join(chain)})')
        return cls(protocol, baudrate, joints)

    @classmethod
    def load(cls, path: str | Path, urdf_text: str, chain: Sequence[str]) -> Calibration:
        """Read and validate a calibration file; :class:`CalibrationError` names the file
        and the field."""
        path = Path(path)
        try:
            data = read_yaml_file(path)
        except YamlFileError as exc:
            words = 'cannot read' if exc.unreadable else 'not valid YAML'
            raise CalibrationError(f'{path}: {words} ({exc.detail})') from None
        try:
            return cls.from_mapping(data, urdf_joints(urdf_text), chain)
        except CalibrationError as exc:
            raise CalibrationError(f'{path}: {exc}') from None


def _known_fields(data: Mapping, fields: Sequence[str], where: str) -> None:
    unknown = [str(k) for k in data if k not in fields]
    if unknown:
        field_path = f'{where}.{unknown[0]}' if where else unknown[0]
        raise CalibrationError(f'{field_path}: unknown field (expected {", ".join(fields)})')


def _integer(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CalibrationError(f'{where}: expected an integer, got {value!r}')
    return value


def _number(value: object, where: str) -> float:
    if not is_finite_number(value):
        raise CalibrationError(f'{where}: expected a finite number, got {value!r}')
    return float(value)


def _joint(name: str, entry: object, urdf: Mapping[str, UrdfJoint]) -> JointCalibration:
    where = f'joints.{name}'
    if name not in urdf:
        raise CalibrationError(f'{where}: not a movable joint of the URDF (movable joints: '
                               f'{", ".join(urdf) or "none"})')
    if not isinstance(entry, Mapping):
        raise CalibrationError(f'{where}: expected a mapping with {", ".join(JOINT_FIELDS)}')
    _known_fields(entry, JOINT_FIELDS + OPTIONAL_JOINT_FIELDS, where)
    for field_name in JOINT_FIELDS:
        if field_name not in entry:
            raise CalibrationError(f'{where}.{field_name}: missing')
    servo_id = _integer(entry['id'], f'{where}.id')
    if not 0 <= servo_id <= 252:
        raise CalibrationError(f'{where}.id: {servo_id} is outside 0..252')
    model = entry['model']
    if not isinstance(model, str) or not model.strip():
        raise CalibrationError(f'{where}.model: expected a model name, got {model!r}')
    ticks_per_radian = _number(entry['ticks_per_radian'], f'{where}.ticks_per_radian')
    if ticks_per_radian <= 0:
        raise CalibrationError(f'{where}.ticks_per_radian: must be positive, '
                               f'got {ticks_per_radian}')
    direction = entry['direction']
    if direction not in (1, -1) or isinstance(direction, bool):
        raise CalibrationError(f'{where}.direction: must be 1 or -1, got {direction!r}')
    # Not bounded by the encoder: a gripper mapped onto its URDF range (arm_servos.lerobot)
    # may put its zero outside the travel; the range's ticks are checked below.
    offset = _number(entry['offset'], f'{where}.offset')
    homing = entry.get('homing_offset')
    if homing is not None:
        homing = _integer(homing, f'{where}.homing_offset')
    drive_mode = entry.get('drive_mode')
    if drive_mode is not None and _integer(drive_mode, f'{where}.drive_mode') not in (0, 1):
        raise CalibrationError(f'{where}.drive_mode: must be 0 or 1, got {drive_mode!r}')
    position_limits = _position_limits(entry.get('position_limits'), f'{where}.position_limits')
    clip_reading = entry.get('clip_reading', False)
    if not isinstance(clip_reading, bool):
        raise CalibrationError(f'{where}.clip_reading: expected true or false, '
                               f'got {clip_reading!r}')
    bounds = entry['range']
    if not isinstance(bounds, Sequence) or isinstance(bounds, str) or len(bounds) != 2:
        raise CalibrationError(f'{where}.range: expected [lower, upper] in rad, got {bounds!r}')
    lower = _number(bounds[0], f'{where}.range')
    upper = _number(bounds[1], f'{where}.range')
    if not lower < upper:
        raise CalibrationError(f'{where}.range: lower {lower} must be below upper {upper}')
    limit = urdf[name]
    if lower < limit.lower - LIMIT_TOLERANCE or upper > limit.upper + LIMIT_TOLERANCE:
        raise CalibrationError(f'{where}.range: [{lower:g}, {upper:g}] rad is outside the '
                               f'URDF limits [{limit.lower:g}, {limit.upper:g}]')
    joint = JointCalibration(name, servo_id, model.strip(), ticks_per_radian, int(direction),
                             offset, max(lower, limit.lower), min(upper, limit.upper),
                             homing, drive_mode, position_limits, clip_reading)
    ends = sorted((joint.to_ticks(joint.lower), joint.to_ticks(joint.upper)))
    if ends[0] < 0 or ends[1] >= ENCODER_TICKS:
        raise CalibrationError(f'{where}.range: reaches ticks {ends[0]}..{ends[1]}, outside '
                               f"the encoder's 0..{ENCODER_TICKS - 1} (check offset and "
                               'ticks_per_radian)')
    return joint


def _position_limits(value: object, where: str) -> tuple[int, int] | None:
    if value is None:
        return None
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != 2:
        raise CalibrationError(f'{where}: expected [min, max] in ticks, got {value!r}')
    low, high = (_integer(v, where) for v in value)
    if not low < high:
        raise CalibrationError(f'{where}: min {low} must be below max {high}')
    return low, high


def _check_ids(joints: Sequence[JointCalibration]) -> None:
    seen: dict[int, str] = {}
    for joint in joints:
        if joint.servo_id in seen:
            raise CalibrationError(f'joints.{joint.name}.id: {joint.servo_id} repeats the id of '
                                   f'joints.{seen[joint.servo_id]}')
        seen[joint.servo_id] = joint.name


def measured_range(joint: JointCalibration, ticks_seen: Sequence[int],
                   limit: UrdfJoint) -> tuple[float, float]:
    """The travel seen during the sweep, in rad, intersected with the URDF limits."""
    if not ticks_seen:
        raise CalibrationError(f'joints.{joint.name}.range: no reading of servo '
                               f'{joint.servo_id} during the sweep')
    angles = sorted(joint.to_radians(t) for t in (min(ticks_seen), max(ticks_seen)))
    lower, upper = max(angles[0], limit.lower), min(angles[1], limit.upper)
    if upper - lower < 0.05:
        raise CalibrationError(
            f'joints.{joint.name}.range: the joint moved {math.degrees(angles[1] - angles[0]):.1f}'
            f'° inside the URDF limits during the sweep; move every joint through its range')
    return lower, upper
