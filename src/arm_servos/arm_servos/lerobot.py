"""LeRobot calibration files, imported as they are (no second calibration).

LeRobot (github.com/huggingface/lerobot) keeps one JSON per arm,
``~/.cache/huggingface/lerobot/calibration/robots/<robot type>/<id>.json`` for a follower and
``.../calibration/teleoperators/<type>/<id>.json`` for a leader, shaped
``{motor: {id, drive_mode, homing_offset, range_min, range_max}}``. What LeRobot does with it
(src/lerobot/motors/motors_bus.py, feetech/feetech.py, dynamixel/dynamixel.py):

* ``homing_offset`` is written into each servo's EEPROM (Homing_Offset: Feetech address 31,
  sign and magnitude with bit 11 as the sign, Present = Actual - offset; Dynamixel address 20,
  two's complement, Present = Actual + offset), so the positions the servos report are
  already homed: every number below is a reported position.
* ``range_min``/``range_max`` are the travel seen during LeRobot's calibration (reported
  ticks), written raw into Min_Position_Limit/Max_Position_Limit (``write_calibration`` of
  both buses: Feetech addresses 9 and 11, Dynamixel 52 and 48), which the servo's EEPROM is
  checked against (arm_servos.eeprom).
* The DEGREES mode, the one LeRobot's kinematics feeds to the URDF as joint angles
  (src/lerobot/model/kinematics.py, ``np.deg2rad`` of the motor values), is
  ``(reading - (range_min + range_max) / 2) * 360 / (resolution - 1)``: no clipping and no
  drive_mode (on Dynamixel the servo itself applies drive_mode, through its Drive_Mode
  register; LeRobot's Feetech bus applies it only in the RANGE modes).
* The gripper is in RANGE_0_100: ``(clip(reading) - range_min) / (range_max - range_min) *
  100``, ``100 - that`` with drive_mode 1 on a Feetech bus; a reading past the range reads
  as its end (``clip_reading``), as LeRobot's does (RANGE_0_100 and RANGE_M100_100 clip,
  DEGREES does not).

So a body joint here has its zero at the middle of LeRobot's range and 4095 / 2π ticks per
radian (the angle reported equals LeRobot's DEGREES value, in radians), and the gripper maps
LeRobot's 0..100 linearly onto the URDF's gripper limits (0 at the lower limit, 100 at the
upper). Ranges are cut to the URDF limits. The motor names are the URDF's joint names in the
SO-100/SO-101 URDFs (example-robot-data's); another URDF gives a map.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import json
import math
from pathlib import Path

from arm_kinematics.common.yaml_file import read_yaml_file, YamlFileError
from arm_servos.calibration import (
    Calibration,
    CalibrationError,
    JointCalibration,
    urdf_joints,
    UrdfJoint,
)

MOTOR_FIELDS = ('id', 'drive_mode', 'homing_offset', 'range_min', 'range_max')
SO_MOTORS = ('shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex', 'wrist_roll',
             'gripper')
# LeRobot's SO-100/SO-101 and Koch configs use RANGE_0_100 for the gripper alone.
RANGE_0_100_MOTORS = frozenset({'gripper'})
RESOLUTION = 4096              # STS3215 and the X series: LeRobot's MODEL_RESOLUTION
DEGREES_TICKS_PER_RADIAN = (RESOLUTION - 1) / (2 * math.pi)   # LeRobot divides by 4095
FEETECH_HOMING_LIMIT = 2047    # magnitude of an 11-bit sign-and-magnitude register
BAUDRATE = 1_000_000           # LeRobot's default on both buses
SKIP = ('', '-')               # a map value that leaves a motor out

# LeRobot's calibration folder names (robot or teleoperator type) → protocol, servo models.
KOCH_FOLLOWER_MODELS = {'shoulder_pan': 'xl430-w250', 'shoulder_lift': 'xl430-w250'}
ROBOT_TYPES = {
    'so_follower': 'feetech', 'so100_follower': 'feetech', 'so101_follower': 'feetech',
    'so_leader': 'feetech', 'so100_leader': 'feetech', 'so101_leader': 'feetech',
    'koch_follower': 'dynamixel', 'koch_leader': 'dynamixel',
}


def is_lerobot(data: object) -> bool:
    """True when a parsed file is shaped as LeRobot's calibration (motor → its fields; one
    missing or misspelt still counts, so the refusal names it in LeRobot's terms)."""
    return (isinstance(data, Mapping) and bool(data) and 'joints' not in data
            and 'protocol' not in data
            and all(isinstance(v, Mapping) and any(f in v for f in MOTOR_FIELDS[1:])
                    for v in data.values()))


def parse_joint_map(text: str) -> dict[str, str]:
    """``"motor=joint,motor=joint"`` (``motor=-`` leaves a motor out) as a dict."""
    out: dict[str, str] = {}
    for item in (part.strip() for part in text.split(',')):
        if not item:
            continue
        motor, sep, joint = item.partition('=')
        if not sep or not motor.strip():
            raise CalibrationError(f'joint map: expected motor=joint, got {item!r}')
        out[motor.strip()] = joint.strip()
    return out


def detect_protocol(path: str | Path, data: Mapping) -> str:
    """feetech or dynamixel from LeRobot's folder name (``.../so101_follower/x.json``), else
    from the offsets (a Feetech register holds at most ±2047), else feetech."""
    folders = Path(path).parts[:-1]
    for part in reversed(folders):
        if part in ROBOT_TYPES:
            return ROBOT_TYPES[part]
    # A type LeRobot may add (so102_follower, koch_v2_leader): the file's own folder only.
    parent = folders[-1] if folders else ''
    if parent.startswith('koch'):
        return 'dynamixel'
    if parent.startswith('so') and parent.endswith(('_follower', '_leader')):
        return 'feetech'
    offsets = [v.get('homing_offset') for v in data.values() if isinstance(v, Mapping)]
    if any(isinstance(o, int) and abs(o) > FEETECH_HOMING_LIMIT for o in offsets):
        return 'dynamixel'
    return 'feetech'


def from_lerobot(data: object, urdf: Mapping[str, UrdfJoint], chain: Sequence[str],
                 protocol: str = 'feetech', joint_map: Mapping[str, str] | None = None,
                 leader: bool = False) -> Calibration:
    """The project's calibration from a parsed LeRobot file (see the module docstring).

    Args:
        protocol: 'feetech' (SO-100, SO-101) or 'dynamixel' (Koch).
        joint_map: motor name → URDF joint ('' or '-' leaves the motor out); the motors it
            does not name keep their own names.
        leader: Koch leader servo models (xl330-m077) instead of the follower's.
    """
    if protocol not in ('feetech', 'dynamixel'):
        raise CalibrationError(f"protocol: {protocol!r} is not one of ['feetech', 'dynamixel']")
    if not is_lerobot(data):
        raise CalibrationError('expected a LeRobot calibration: {motor: {'
                               + ', '.join(MOTOR_FIELDS) + '}}')
    joint_map = dict(joint_map or {})
    unknown = sorted(set(joint_map) - set(data))
    if unknown:
        raise CalibrationError(f'joint map: {", ".join(unknown)} not a motor of the file '
                               f'(motors: {", ".join(data)})')
    joints = []
    seen: dict[int, str] = {}
    for motor, entry in data.items():
        motor = str(motor)
        joint_name = joint_map.get(motor, motor)
        if joint_name in SKIP:
            continue
        fields = _motor_fields(motor, entry, protocol)
        if joint_name not in urdf:
            raise CalibrationError(
                f'{motor}: motor name is not a movable joint of the URDF (movable joints: '
                f'{", ".join(urdf) or "none"}); map it with a joint map ({motor}=JOINT, or '
                f'{motor}=- to leave it out)')
        if fields['id'] in seen:
            raise CalibrationError(f'{motor}.id: {fields["id"]} repeats the id of '
                                   f'{seen[fields["id"]]}')
        seen[fields['id']] = motor
        model = 'sts3215' if protocol == 'feetech' else \
            'xl330-m077' if leader else KOCH_FOLLOWER_MODELS.get(motor, 'xl330-m288')
        joints.append(_joint(motor, joint_name, fields, urdf[joint_name], protocol, model))
    draft = Calibration(protocol, BAUDRATE, tuple(joints))
    # The same checks as the project's own files (chain complete, ranges inside the encoder).
    return Calibration.from_mapping(draft.as_mapping(), urdf, chain)


def _motor_fields(motor: str, entry: Mapping, protocol: str) -> dict[str, int]:
    unknown = [str(k) for k in entry if k not in MOTOR_FIELDS]
    if unknown:
        raise CalibrationError(f'{motor}.{unknown[0]}: unknown field (expected '
                               f'{", ".join(MOTOR_FIELDS)})')
    fields = {}
    for name in MOTOR_FIELDS:
        if name not in entry:
            raise CalibrationError(f'{motor}.{name}: missing')
        value = entry[name]
        if isinstance(value, bool) or not isinstance(value, int):
            raise CalibrationError(f'{motor}.{name}: expected an integer, got {value!r}')
        fields[name] = value
    if not 0 <= fields['id'] <= 252:
        raise CalibrationError(f'{motor}.id: {fields["id"]} is outside 0..252')
    if fields['drive_mode'] not in (0, 1):
        raise CalibrationError(f'{motor}.drive_mode: must be 0 or 1, got {fields["drive_mode"]}')
    if protocol == 'feetech' and abs(fields['homing_offset']) > FEETECH_HOMING_LIMIT:
        raise CalibrationError(
            f'{motor}.homing_offset: {fields["homing_offset"]} does not fit a Feetech '
            f'Homing_Offset register (±{FEETECH_HOMING_LIMIT}); a Koch (Dynamixel) file? '
            'Say which protocol it is')
    if not fields['range_min'] < fields['range_max']:
        raise CalibrationError(f'{motor}.range_min: {fields["range_min"]} must be below '
                               f'range_max {fields["range_max"]}')
    return fields


def _joint(motor: str, name: str, fields: Mapping[str, int], limit: UrdfJoint, protocol: str,
           model: str) -> JointCalibration:
    low, high = fields['range_min'], fields['range_max']
    # LeRobot's Feetech bus applies drive_mode itself; a Dynamixel servo does, in hardware.
    software_drive = protocol == 'feetech' and fields['drive_mode'] == 1
    homing = fields['homing_offset']
    drive_mode = fields['drive_mode'] if protocol == 'dynamixel' else None
    if motor in RANGE_0_100_MOTORS:
        if not (math.isfinite(limit.lower) and math.isfinite(limit.upper)):
            raise CalibrationError(f'{motor}: the URDF joint {name} has no finite limits to '
                                   "map LeRobot's 0..100 onto")
        ticks_per_radian = (high - low) / (limit.upper - limit.lower)
        direction = -1 if software_drive else 1
        offset = low + limit.upper * ticks_per_radian if software_drive else \
            low - limit.lower * ticks_per_radian
        return JointCalibration(name, fields['id'], model, ticks_per_radian, direction, offset,
                                limit.lower, limit.upper, homing, drive_mode, (low, high),
                                clip_reading=True)
    middle = (low + high) / 2
    lower = max((low - middle) / DEGREES_TICKS_PER_RADIAN, limit.lower)
    upper = min((high - middle) / DEGREES_TICKS_PER_RADIAN, limit.upper)
    if not upper - lower > 0.01:
        raise CalibrationError(
            f"{motor}.range_min: LeRobot's range {low}..{high} is "
            f'[{math.degrees((low - middle) / DEGREES_TICKS_PER_RADIAN):.1f}, '
            f'{math.degrees((high - middle) / DEGREES_TICKS_PER_RADIAN):.1f}] degrees, which '
            f'leaves nothing inside the URDF limits of {name} [{limit.lower:g}, '
            f'{limit.upper:g}] rad')
    return JointCalibration(name, fields['id'], model, DEGREES_TICKS_PER_RADIAN, 1, middle,
                            lower, upper, homing, drive_mode, (low, high))


def load_calibration(path: str | Path, urdf_text: str, chain: Sequence[str],
                     joint_map: Mapping[str, str] | str | None = None,
                     protocol: str = '') -> Calibration:
    """A calibration file of either format, detected from its content: the project's YAML, or
    LeRobot's JSON (``protocol`` '' = from the folder name or the offsets). Errors name the
    file and the field."""
    path = Path(path)
    try:
        data = read_yaml_file(path)   # YAML reads JSON too
    except YamlFileError as exc:
        words = 'cannot read' if exc.unreadable else 'not valid YAML or JSON'
        raise CalibrationError(f'{path}: {words} ({exc.detail})') from None
    if not is_lerobot(data):
        return Calibration.load(path, urdf_text, chain)
    try:
        if isinstance(joint_map, str):
            joint_map = parse_joint_map(joint_map)
        kind = protocol or detect_protocol(path, data)
        leader = any(part.endswith('_leader') for part in path.parts[:-1])
        return from_lerobot(data, urdf_joints(urdf_text), chain, kind, joint_map, leader)
    except CalibrationError as exc:
        raise CalibrationError(f'{path} (LeRobot calibration): {exc}') from None


def lerobot_json(calibration: Mapping[str, Mapping[str, int]]) -> str:
    """A LeRobot calibration as LeRobot writes it (draccus, indent 4), for tests and examples."""
    return json.dumps({motor: {name: int(fields[name]) for name in MOTOR_FIELDS}
                       for motor, fields in calibration.items()}, indent=4)
