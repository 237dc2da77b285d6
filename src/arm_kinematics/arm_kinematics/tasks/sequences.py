"""Scripted sequences of moves, read from YAML and validated before anything moves.

A sequence file names its targets once and lists the steps that use them. Units: lengths in
m (points of ``tool0`` in the arm's base frame), joint angles in rad, times in s::

    name: manipulator3d_pick_place   # shown in logs and status; default: the file's stem
    arm: manipulator3d               # optional: the arm the targets were chosen for
    cycle: manipulator3d_pick_place  # optional: the state machine the phases must follow
    ball: {radius: 0.04}             # optional: the object attach/detach act on, m
    defaults:                        # optional: settings of every move unless it overrides
      motion_law: min_jerk           # '' (the executor's default) or a MoveToTarget law
      duration: 2.0                  # s (0: from the velocity limits and speed_scale)
      speed_scale: 0.0               # fraction of the velocity limits, 0..1 (0: default)
      solver: ''                     # IK solver ('' : the arm's default)
    poses:                           # named joint targets, rad, by joint name
      home: {base_yaw: 0.0, shoulder_pitch: 0.785, elbow_pitch: -1.571}
    points:                          # named tool targets, m
      start: [0.60, -0.30, 0.10]
    steps:                           # exactly one of move / attach / detach / wait each
      - {phase: HOME, move: home}
      - {phase: START, move: start, motion_law: linear_cartesian, duration: 2.5}
      - {phase: PICK, attach: ball}
      - {phase: WAIT, wait: 1.0}

Every problem is a ``SequenceError`` naming the file and the key (``steps[3].wait``) with the
offending value, so a node refuses to start with a message a person can act on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
import enum
import math
from pathlib import Path
import re
from types import MappingProxyType
from typing import Any

import numpy as np

from arm_kinematics.common.yaml_file import read_yaml_file, YamlFileError

# The motion laws of arm_interfaces/action/MoveToTarget ('' is the executor's default).
MOTION_LAWS = ('exponential', 'speed_cap', 'min_jerk', 'min_jerk_cartesian', 'linear_cartesian')
# Laws that follow the tool position (a straight line, or CCD under a speed cap): the
# executor refuses them for joint targets, so a sequence must give them a point.
POINT_LAWS = ('min_jerk_cartesian', 'linear_cartesian', 'speed_cap')
BALL = 'ball'
MAX_WAIT = 3600.0        # s, longest wait step
MAX_DURATION = 600.0     # s, longest timed move
DEFAULT_BALL_RADIUS = 0.04  # m

_NAME = re.compile(r'^[A-Za-z][A-Za-z0-9_]*$')
_TOP_KEYS = {'name', 'arm', 'cycle', 'ball', 'defaults', 'poses', 'points', 'steps'}
_SETTING_KEYS = {'motion_law', 'duration', 'speed_scale', 'solver'}
_STEP_KINDS = ('move', 'attach', 'detach', 'wait')
_STEP_KEYS = {'phase', 'label', *_STEP_KINDS, *_SETTING_KEYS}


class SequenceError(ValueError):
    """A sequence file is missing, malformed or inconsistent (message names file and key)."""


class StepKind(enum.StrEnum):
    """What one step does."""

    MOVE = 'move'        # send the arm to a named pose or point
    ATTACH = 'attach'    # the tool takes the ball (it follows the tip from now on)
    DETACH = 'detach'    # the tool lets go (the ball stays where it is)
    WAIT = 'wait'        # do nothing for some seconds


@dataclass(frozen=True, slots=True)
class MoveSettings:
    """How one move runs (the MoveToTarget goal fields).

    Attributes:
        motion_law: '' (the executor's default) or one of ``MOTION_LAWS``.
        duration: s, for timed laws (0: from the velocity limits and speed_scale).
        speed_scale: fraction of the URDF velocity limits, 0..1 (0: the executor's default).
        solver: IK solver name ('' : the arm's default).
    """

    motion_law: str = ''
    duration: float = 0.0
    speed_scale: float = 0.0
    solver: str = ''


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a sequence.

    Attributes:
        kind: move, attach, detach or wait.
        phase: state of the cycle this step belongs to (e.g. 'PICK'); '' when not given.
        label: text for logs (default: kind and target).
        target: name of the pose or point of a move ('' otherwise).
        seconds: length of a wait, s.
        settings: motion law, duration, speed scale and solver of a move.
        index: position of the step in the file's list.
    """

    kind: StepKind
    phase: str = ''
    label: str = ''
    target: str = ''
    seconds: float = 0.0
    settings: MoveSettings = field(default_factory=MoveSettings)
    index: int = 0


@dataclass(frozen=True, slots=True)
class TaskSequence:
    """A validated sequence (immutable: overrides make a new one, see ``with_points``).

    Attributes:
        name: sequence name for logs and status.
        arm: arm the targets were chosen for ('' : any).
        cycle: name of the state machine its phases follow ('' : free-form).
        ball_radius: radius of the ball, m.
        poses: name → ((joint, rad), ...) joint targets.
        points: name → (x, y, z) tool targets, m, base frame.
        steps: the steps in order.
        source: where it was read from (for messages).
    """

    name: str
    arm: str
    cycle: str
    ball_radius: float
    poses: Mapping[str, tuple[tuple[str, float], ...]]
    points: Mapping[str, tuple[float, float, float]]
    steps: tuple[Step, ...]
    source: str = ''

    def is_point(self, name: str) -> bool:
        """True when ``name`` is a Cartesian point (False: a joint pose)."""
        return name in self.points

    def point(self, name: str) -> np.ndarray:
        """The point ``name`` as a vector, m."""
        return np.array(self.points[name], dtype=float)

    def joints(self, name: str) -> dict[str, float]:
        """The joint pose ``name`` as {joint: rad}."""
        return dict(self.poses[name])

    def move_targets(self) -> tuple[str, ...]:
        """Names of the targets the moves use, in first-use order, each once."""
        return tuple(dict.fromkeys(s.target for s in self.steps if s.kind == StepKind.MOVE))

    def pick_target(self) -> str:
        """Name of the move before the first attach: where the ball lies at the start."""
        last = ''
        for step in self.steps:
            if step.kind == StepKind.MOVE:
                last = step.target
            elif step.kind == StepKind.ATTACH:
                return last
        return ''


def _where(source: str, key: str) -> str:
    return f'{source}: {key}' if source else key


def _number(value: object, where: str, low: float, high: float) -> float:
    # bool is an int in Python; `duration: true` is a typo, not 1 s.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SequenceError(f'{where}: must be a number, got {value!r}')
    number = float(value)
    if not math.isfinite(number):
        raise SequenceError(f'{where}: must be finite, got {number}')
    if not low <= number <= high:
        raise SequenceError(f'{where}: {number:g} is outside {low:g}..{high:g}')
    return number


def _name(value: object, where: str) -> str:
    if not isinstance(value, str) or not _NAME.match(value):
        raise SequenceError(f'{where}: {value!r} is not a name (a letter, then letters, digits '
                            'or _)')
    return value


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise SequenceError(f'{where}: must be a mapping, got {type(value).__name__}')
    return value


def parse_point(value: object, where: str) -> tuple[float, float, float]:
    """Three finite numbers (x, y, z in m); raises SequenceError naming ``where``."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 3:
        raise SequenceError(f'{where}: must be a list of 3 numbers [x, y, z] in m, '
                            f'got {value!r}')
    x, y, z = (_number(v, f'{where}[{i}]', -math.inf, math.inf) for i, v in enumerate(value))
    return x, y, z


def _settings(data: Mapping[str, Any], where: str, base: MoveSettings) -> MoveSettings:
    changes: dict[str, Any] = {}
    if 'motion_law' in data:
        law = data['motion_law']
        if law is None:
            law = ''
        if not isinstance(law, str) or (law and law not in MOTION_LAWS):
            raise SequenceError(f'{where}.motion_law: unknown law {law!r}; choose one of: '
                                f'{", ".join(MOTION_LAWS)} (or \'\' for the executor\'s default)')
        changes['motion_law'] = law
    if 'duration' in data:
        changes['duration'] = _number(data['duration'], f'{where}.duration', 0.0, MAX_DURATION)
    if 'speed_scale' in data:
        changes['speed_scale'] = _number(data['speed_scale'], f'{where}.speed_scale', 0.0, 1.0)
    if 'solver' in data:
        solver = data['solver'] if data['solver'] is not None else ''
        if not isinstance(solver, str):
            raise SequenceError(f'{where}.solver: must be a solver name, got {solver!r}')
        changes['solver'] = solver
    return replace(base, **changes)


def _poses(value: object, where: str) -> dict[str, tuple[tuple[str, float], ...]]:
    poses = {}
    for name, joints in _mapping(value, where).items():
        key = f'{where}.{_name(name, f"{where} name")}'
        joints = _mapping(joints, key)
        if not joints:
            raise SequenceError(f'{key}: names no joint')
        poses[name] = tuple((str(joint), _number(angle, f'{key}.{joint}', -math.inf, math.inf))
                            for joint, angle in joints.items())
    return poses


def _points(value: object, where: str) -> dict[str, tuple[float, float, float]]:
    return {_name(name, f'{where} name'): parse_point(point, f'{where}.{name}')
            for name, point in _mapping(value, where).items()}


def _step(data: object, index: int, source: str, defaults: MoveSettings,
          targets: Mapping[str, bool]) -> Step:
    where = _where(source, f'steps[{index}]')
    if not isinstance(data, Mapping):
        raise SequenceError(f'{where}: must be a mapping such as {{move: home}}, got {data!r}')
    unknown = sorted(set(map(str, data)) - _STEP_KEYS)
    if unknown:
        raise SequenceError(f'{where}: unknown key {", ".join(map(repr, unknown))}; a step has '
                            f'one of {", ".join(_STEP_KINDS)} and optionally phase, label, '
                            f'{", ".join(sorted(_SETTING_KEYS))}')
    kinds = [kind for kind in _STEP_KINDS if kind in data]
    if len(kinds) != 1:
        raise SequenceError(f'{where}: needs exactly one of {", ".join(_STEP_KINDS)}, '
                            f'found {", ".join(kinds) or "none"}')
    kind = StepKind(kinds[0])
    phase = data.get('phase', '')
    if not isinstance(phase, str):
        raise SequenceError(f'{where}.phase: must be text, got {phase!r}')
    label = str(data.get('label', ''))
    value = data[kind.value]
    if kind != StepKind.MOVE and _SETTING_KEYS & set(data):
        raise SequenceError(f'{where}: {", ".join(sorted(_SETTING_KEYS & set(data)))} only '
                            f'apply to move steps, not to {kind.value}')
    if kind == StepKind.MOVE:
        target = value if isinstance(value, str) else None
        if target not in targets:
            raise SequenceError(f'{where}.move: {value!r} is neither a pose nor a point; '
                                f'defined: {", ".join(targets) or "none"}')
        settings = _settings(data, where, defaults)
        if settings.motion_law in POINT_LAWS and not targets[target]:
            raise SequenceError(f'{where}: {settings.motion_law} follows the tool position and '
                                f'needs a point, but {target!r} is a joint pose (use min_jerk '
                                'or exponential)')
        return Step(kind, phase, label or f'move to {target}', target=target,
                    settings=settings, index=index)
    if kind == StepKind.WAIT:
        seconds = _number(value, f'{where}.wait', 0.0, MAX_WAIT)
        return Step(kind, phase, label or f'wait {seconds:g} s', seconds=seconds, index=index)
    if value != BALL:
        raise SequenceError(f'{where}.{kind.value}: unknown object {value!r}; the only object '
                            f'is {BALL!r}')
    return Step(kind, phase, label or f'{kind.value} the {BALL}', index=index)


def _check_ball_order(steps: Sequence[Step], source: str) -> None:
    attached = False
    moved = False
    for step in steps:
        where = _where(source, f'steps[{step.index}]')
        if step.kind == StepKind.MOVE:
            moved = True
        elif step.kind == StepKind.ATTACH:
            if attached:
                raise SequenceError(f'{where}: attach while the ball is already attached')
            if not moved:
                raise SequenceError(f'{where}: attach before any move; the ball lies where '
                                    'the move before the first attach ends')
            attached = True
        elif step.kind == StepKind.DETACH:
            if not attached:
                raise SequenceError(f'{where}: detach while no ball is attached')
            attached = False
    if attached:
        raise SequenceError(_where(source, 'steps: the sequence ends with the ball attached; '
                                           'detach it so the next cycle can start'))


def parse_sequence(data: object, source: str = '', default_name: str = '') -> TaskSequence:
    """Validate the loaded YAML of a sequence file.

    Args:
        data: the document (a mapping), as ``yaml.safe_load`` returns it.
        source: file name for messages.
        default_name: name when the document has none (the file's stem).

    Raises:
        SequenceError: naming the key and the offending value.
    """
    top = _mapping(data, _where(source, 'document'))
    unknown = sorted(set(map(str, top)) - _TOP_KEYS)
    if unknown:
        raise SequenceError(_where(source, f'unknown key {", ".join(map(repr, unknown))}; '
                                           f'known: {", ".join(sorted(_TOP_KEYS))}'))
    name = top.get('name', default_name) or default_name
    arm = top.get('arm', '') or ''
    cycle = top.get('cycle', '') or ''
    for key, value in (('name', name), ('arm', arm), ('cycle', cycle)):
        if not isinstance(value, str):
            raise SequenceError(_where(source, f'{key}: must be text, got {value!r}'))
    ball = _mapping(top.get('ball') or {}, _where(source, 'ball'))
    if set(ball) - {'radius'}:
        raise SequenceError(_where(source, f'ball: unknown key(s) {sorted(set(ball) - {"radius"})}'
                                           '; known: radius'))
    radius = _number(ball.get('radius', DEFAULT_BALL_RADIUS), _where(source, 'ball.radius'),
                     1e-4, 1.0)
    defaults_data = _mapping(top.get('defaults') or {}, _where(source, 'defaults'))
    if set(defaults_data) - _SETTING_KEYS:
        raise SequenceError(_where(source, f'defaults: unknown key(s) '
                                           f'{sorted(set(defaults_data) - _SETTING_KEYS)}; '
                                           f'known: {", ".join(sorted(_SETTING_KEYS))}'))
    defaults = _settings(defaults_data, _where(source, 'defaults'), MoveSettings())
    poses = _poses(top.get('poses') or {}, _where(source, 'poses'))
    points = _points(top.get('points') or {}, _where(source, 'points'))
    shared = sorted(set(poses) & set(points))
    if shared:
        raise SequenceError(_where(source, f'{", ".join(shared)} named both as a pose and as a '
                                           'point; names must be unique'))
    if 'steps' not in top:
        raise SequenceError(_where(source, 'steps: missing; list the steps of the sequence'))
    steps_data = top['steps']
    if not isinstance(steps_data, list) or not steps_data:
        raise SequenceError(_where(source, f'steps: must be a non-empty list, got '
                                           f'{steps_data!r}'))
    targets = {**{n: False for n in poses}, **{n: True for n in points}}
    steps = tuple(_step(item, index, source, defaults, targets)
                  for index, item in enumerate(steps_data))
    if not any(step.kind == StepKind.MOVE for step in steps):
        raise SequenceError(_where(source, 'steps: no move; a sequence must move the arm'))
    _check_ball_order(steps, source)
    return TaskSequence(name, arm, cycle, radius, MappingProxyType(poses),
                        MappingProxyType(points), steps, source)


def load_sequence(path: str | Path) -> TaskSequence:
    """Read and validate a sequence file.

    Raises:
        SequenceError: the file cannot be read, is not YAML, or breaks a rule.
    """
    path = Path(path)
    try:
        data = read_yaml_file(path)
    except YamlFileError as error:
        raise SequenceError(f'{path}: {error}') from None
    return parse_sequence(data, str(path), path.stem)


def resolve_sequence_path(name: str, search_dirs: Iterable[str | Path] = ()) -> Path:
    """The file ``name`` as given, or found in ``search_dirs`` (with or without '.yaml').

    Raises:
        SequenceError: not found; the message lists where it looked.
    """
    given = Path(name).expanduser()
    if given.is_file():
        return given
    looked = [str(given)]
    if not given.is_absolute():
        for directory in search_dirs:
            for candidate in (Path(directory) / name, Path(directory) / f'{name}.yaml'):
                if candidate.is_file():
                    return candidate
                looked.append(str(candidate))
    raise SequenceError(f'sequence file {name!r} not found (looked at {", ".join(looked)})')


def with_points(sequence: TaskSequence,
                overrides: Mapping[str, Sequence[float]]) -> TaskSequence:
    """A copy of ``sequence`` with some named points replaced (e.g. START and GOAL).

    Raises:
        SequenceError: a name is not a point of the sequence, or a value is not 3 finite
            numbers.
    """
    points = dict(sequence.points)
    for name, value in overrides.items():
        if name not in points:
            raise SequenceError(f'{sequence.name} has no point {name!r} to override; its '
                                f'points: {", ".join(points) or "none"}')
        points[name] = parse_point(list(value), name)
    return replace(sequence, points=MappingProxyType(points))


def parse_point_text(text: str) -> tuple[np.ndarray | None, str]:
    """A point typed on the console: 'x y z', 'x, y, z' or '[x, y, z]' in m.

    Returns:
        (vector, '') or (None, reason).
    """
    cleaned = text.strip().strip('[]()').replace(',', ' ').split()
    if len(cleaned) != 3:
        return None, f'expected 3 numbers x y z in m, got {len(cleaned)} value(s)'
    try:
        values = np.array([float(v) for v in cleaned])
    except ValueError:
        return None, f'{text.strip()!r} is not 3 numbers'
    if not np.all(np.isfinite(values)):
        return None, 'every coordinate must be finite'
    return values, ''
