"""The arm configuration: the plain per-arm data a URDF does not say (``ArmConfig``).

One YAML file per arm (``arm_description/config/<arm>.yaml`` for the bundled ones, any path
for yours), validated on load: a bad key or value is refused with the key named. With no
file, ``ArmConfig()`` holds the defaults derived from the URDF alone (see ``arm_kinematics.arm``).
"""

from __future__ import annotations

from collections.abc import Mapping
import copy
from dataclasses import dataclass, field
import os
from pathlib import Path
from typing import Any

import numpy as np

from arm_kinematics.common.checks import is_finite_number, positive_reason
from arm_kinematics.common.names import (
    OBJECTIVE_NAMES,
    PATH_PLANNERS,
    ros_name_reason,
    SOLVER_NAMES,
)
from arm_kinematics.common.yaml_file import read_yaml_file, YamlFileError
from arm_kinematics.description.controller_config import ControllerConfig
from arm_kinematics.description.safety_config import parse_safety_config, SafetyConfigError
from arm_kinematics.model.arm_model import ArmModel, DEFAULT_JOINT_SPEED

DEFAULT_MOTION_LAW = 'min_jerk'

_TOP_KEYS = {
    'arm': 'label of the arm (namespace, logs); default: the URDF robot name',
    'frames': 'base and tip frame of the chain: {base: ..., tip: ...}',
    'kinematics': 'xacro arguments of the description (lengths, m)',
    'joint_limits': 'joint limits read by the xacro (the URDF is what the solvers use)',
    'home_pose': 'home pose, rad (or m): {joint: value} or a list in chain order',
    'masses': 'link masses read by the xacro, kg',
    'visual': 'visual sizes read by the xacro, m',
    'ik': 'IK defaults: default_solver, objective, min_height_above_shoulder, damping, '
          'tolerance, max_iterations',
    'safety': 'floor, capsules and obstacle; absent: safety off',
    'motion': 'motion defaults: default_law, path_planner (grid | sampling), '
              'default_joint_speed (rad/s, m/s for a slide: joints whose URDF gives no '
              'velocity limit)',
    'lab': 'browser lab: xacro (path of the arm xacro, relative to this file), '
           'length_arguments, experiments',
    'collision': 'collision geometry: padding, search_paths, fallback_shapes, allowed_pairs '
                 '(kinematics.collision.CollisionConfig)',
    'controller': 'FollowJointTrajectory controller: action, path/goal tolerances, goal time, '
                  'rates, waits (description.controller_config.ControllerConfig)',
    'info': 'what the arm_config command found (family, solver reason): not read',
    'strict_urdf': "true: refuse URDF limits that other tools' conventions would read "
                   "(SolidWorks' all-zero <limit>, pybullet's lower > upper); default "
                   'false: read them as continuous joints with a warning',
}
_IK_KEYS = {'default_solver', 'min_height_above_shoulder', 'damping', 'tolerance',
            'max_iterations', 'avoid_collisions', 'objective'}
_MOTION_KEYS = {'default_law', 'path_planner', 'default_joint_speed'}
_LAB_KEYS = {'xacro', 'length_arguments', 'experiments'}
_FRAME_KEYS = {'base', 'tip'}
EXPERIMENTS = ('damping_sweep',)


class ArmConfigError(ValueError):
    """An arm configuration that cannot be used; the message names the key."""


@dataclass(frozen=True)
class ArmConfig:
    """Plain per-arm data (no ROS): what the URDF does not say.

    Attributes:
        data: the validated mapping (the YAML file's content, or the defaults).
        source: where it came from (a file path, or 'defaults from the URDF').
    """

    data: Mapping[str, Any] = field(default_factory=dict)
    source: str = 'defaults from the URDF'

    # ------------------------------------------------------------------ loading
    @classmethod
    def from_mapping(cls, data: object, source: str = 'arm configuration') -> ArmConfig:
        """Validate ``data`` (the content of an arm YAML).

        Raises:
            ArmConfigError: not a mapping, an unknown key, or a value of the wrong kind,
                named by its path.
        """
        if data is None:
            data = {}
        _check_keys(data, '', set(_TOP_KEYS), source)
        _check_section(data, 'ik', _IK_KEYS, source)
        _check_section(data, 'motion', _MOTION_KEYS, source)
        _check_section(data, 'lab', _LAB_KEYS, source)
        _check_section(data, 'frames', _FRAME_KEYS, source)
        planner = (data.get('motion') or {}).get('path_planner')
        if planner is not None and planner not in PATH_PLANNERS:
            raise ArmConfigError(f'{source}: motion.path_planner is {planner!r}; valid: '
                                 f'{", ".join(PATH_PLANNERS)}')
        speed = (data.get('motion') or {}).get('default_joint_speed')
        if speed is not None and _finite(speed, f'{source}: motion.default_joint_speed') <= 0:
            raise ArmConfigError(f'{source}: motion.default_joint_speed must be > 0, got '
                                 f'{speed!r}')
        ik = data.get('ik') or {}
        solver = ik.get('default_solver')
        if solver is not None and solver not in SOLVER_NAMES:
            raise ArmConfigError(f'{source}: ik.default_solver is {solver!r}; valid names: '
                                 f'{", ".join(SOLVER_NAMES)}')
        objective = ik.get('objective')
        if objective is not None and objective not in OBJECTIVE_NAMES:
            raise ArmConfigError(f'{source}: ik.objective is {objective!r}; valid: '
                                 f'{", ".join(OBJECTIVE_NAMES)}')
        if 'min_height_above_shoulder' in ik:
            _finite(ik['min_height_above_shoulder'], f'{source}: ik.min_height_above_shoulder')
        for key in ('damping', 'tolerance'):
            # ik_server takes them as its parameters' defaults, which must be > 0.
            reason = positive_reason(ik[key], f'ik.{key}') if key in ik else ''
            if reason:
                raise ArmConfigError(f'{source}: {reason}')
        if 'max_iterations' in ik and (isinstance(ik['max_iterations'], bool) or
                                       not isinstance(ik['max_iterations'], int) or
                                       ik['max_iterations'] < 1):
            raise ArmConfigError(f'{source}: ik.max_iterations must be an integer >= 1, got '
                                 f'{ik["max_iterations"]!r}')
        for key in ('base', 'tip'):
            value = (data.get('frames') or {}).get(key)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ArmConfigError(f'{source}: frames.{key} must be a link name, got '
                                     f'{value!r}')
        label = data.get('arm')
        if label is not None and (not isinstance(label, str) or not label.strip()):
            raise ArmConfigError(f'{source}: arm must be a non-empty name, got {label!r}')
        reason = ros_name_reason(label) if label is not None else ''
        if reason:
            raise ArmConfigError(f'{source}: arm: {reason}')
        home = data.get('home_pose')
        if home is not None:
            values = home.items() if isinstance(home, Mapping) else \
                enumerate(home) if isinstance(home, (list, tuple)) else None
            if values is None:
                raise ArmConfigError(f'{source}: home_pose must be {{joint: value}} or a list, '
                                     f'got {home!r}')
            for key, value in values:
                _finite(value, f'{source}: home_pose.{key}')
        lab = data.get('lab') or {}
        for experiment in lab.get('experiments') or ():
            if experiment not in EXPERIMENTS:
                raise ArmConfigError(f'{source}: lab.experiments has {experiment!r}; known: '
                                     f'{", ".join(EXPERIMENTS)}')
        if data.get('safety') is not None:
            try:
                parse_safety_config(data['safety'], source)
            except SafetyConfigError as error:
                raise ArmConfigError(str(error)) from None
        if 'strict_urdf' in data and not isinstance(data['strict_urdf'], bool):
            raise ArmConfigError(f'{source}: strict_urdf must be true or false, got '
                                 f'{data["strict_urdf"]!r}')
        if 'avoid_collisions' in ik and not isinstance(ik['avoid_collisions'], bool):
            raise ArmConfigError(f'{source}: ik.avoid_collisions must be true or false, got '
                                 f'{ik["avoid_collisions"]!r}')
        if data.get('collision') is not None:
            from arm_kinematics.description.collision_config import (
                CollisionConfig,
                CollisionConfigError,
            )
            try:
                CollisionConfig.from_mapping(data['collision'], f'{source}: collision')
            except CollisionConfigError as error:
                raise ArmConfigError(str(error)) from None
        if data.get('controller') is not None:
            try:
                ControllerConfig.from_mapping(data['controller'], f'{source}: controller')
            except ValueError as error:
                raise ArmConfigError(str(error)) from None
        return cls(copy.deepcopy(dict(data)), source)

    @classmethod
    def from_file(cls, path: str | Path) -> ArmConfig:
        """Read and validate an arm YAML.

        Raises:
            ArmConfigError: the file cannot be read or parsed, or does not validate.
        """
        path = Path(path).expanduser()
        try:
            data = read_yaml_file(path)
        except YamlFileError as error:
            raise ArmConfigError(f'arm_config {path}: {error}') from None
        config = cls.from_mapping(data, str(path))
        # Absolute, not resolved: a symlinked install keeps its own paths (lab.xacro).
        return cls(config.data, os.path.normpath(path.absolute()))

    # ------------------------------------------------------------------ views
    def section(self, name: str) -> dict[str, Any]:
        """A top-level section as a dict ({} when absent)."""
        return dict(self.data.get(name) or {})

    @property
    def label(self) -> str:
        return str(self.data.get('arm') or '')

    @property
    def default_solver(self) -> str | None:
        return self.section('ik').get('default_solver')

    @property
    def safety_enabled(self) -> bool:
        """True when the configuration turns the floor or the obstacle on (no section: off)."""
        section = self.data.get('safety')
        if section is None:
            return False
        return bool(section.get('floor_enabled')) or \
            bool((section.get('obstacle') or {}).get('enabled'))

    @property
    def controller(self) -> ControllerConfig:
        """The ``controller`` section, validated, defaults filled in."""
        return ControllerConfig.from_mapping(self.data.get('controller'))

    @property
    def default_law(self) -> str:
        return str(self.section('motion').get('default_law', DEFAULT_MOTION_LAW))

    @property
    def default_joint_speed(self) -> float:
        """Speed limit of joints whose URDF gives none (``motion.default_joint_speed``;
        absent: DEFAULT_JOINT_SPEED, MoveIt's default)."""
        speed = self.section('motion').get('default_joint_speed')
        return DEFAULT_JOINT_SPEED if speed is None else float(speed)

    @property
    def path_planner(self) -> str:
        """``motion.path_planner`` ('' when absent: the arm's default, see
        kinematics.motion.safety_check.default_path_planner)."""
        return str(self.section('motion').get('path_planner') or '')

    @property
    def strict_urdf(self) -> bool:
        """``strict_urdf``: refuse the URDF limit conventions of other tools instead of
        reading them (``common.urdf_tree``)."""
        return bool(self.data.get('strict_urdf', False))

    @property
    def base_frame(self) -> str | None:
        return self.section('frames').get('base')

    @property
    def tip_frame(self) -> str | None:
        return self.section('frames').get('tip')

    @property
    def experiments(self) -> tuple[str, ...]:
        return tuple(self.section('lab').get('experiments') or ())

    @property
    def length_arguments(self) -> tuple[str, ...]:
        """xacro arguments the lab offers as link lengths (only with a lab xacro)."""
        if self.lab_xacro is None:
            return ()
        return tuple(self.section('lab').get('length_arguments') or ())

    @property
    def lab_xacro(self) -> Path | None:
        """The arm's xacro (for the lab's link-length controls), resolved beside the file."""
        relative = self.section('lab').get('xacro')
        if not relative or self.source.startswith('defaults') or \
                not Path(self.source).exists():
            return None
        return Path(os.path.normpath(Path(self.source).parent / str(relative)))

    def get(self, key: str, default: Any = None) -> Any:
        """A top-level value, as ``dict.get`` (the nodes read sections this way)."""
        return self.data.get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __contains__(self, key: object) -> bool:
        return key in self.data

    def as_mapping(self) -> dict[str, Any]:
        """The configuration as the plain dict the nodes read (a deep copy)."""
        return copy.deepcopy(dict(self.data))


def _check_section(data: Mapping, name: str, keys: set[str], source: str) -> None:
    if data.get(name) is not None:
        _check_keys(data[name], name, keys, source)


def _check_keys(section: object, name: str, keys: set[str], source: str) -> None:
    """``section`` is a mapping of known keys; ``name`` '' for the top level."""
    where = f'{source}: {name}' if name else source
    if not isinstance(section, Mapping):
        raise ArmConfigError(f'{where}{":" if not name else ""} must be a mapping'
                             f'{" of sections" if not name else ""}, got '
                             f'{type(section).__name__}')
    unknown = sorted(str(key) for key in section if key not in keys)
    if unknown:
        raise ArmConfigError(f'{where}{" has" if name else ":"} unknown key(s) '
                             f'{", ".join(unknown)} (known: {", ".join(sorted(keys))})')


def _finite(value: object, where: str) -> float:
    if not is_finite_number(value):
        raise ArmConfigError(f'{where} must be a finite number, got {value!r}')
    return float(value)



def home_of(model: ArmModel, config: ArmConfig) -> np.ndarray:
    """Home pose from the configuration, or zeros clamped into the limits.

    Raises:
        ArmConfigError: the configured home does not fit the model.
    """
    home = config.data.get('home_pose')
    if home is None:
        return model.clamp(np.zeros(model.dof))
    if isinstance(home, Mapping):
        unknown = sorted(set(home) - set(model.joint_names))
        if unknown:
            raise ArmConfigError(f'{config.source}: home_pose names joint(s) '
                                 f'{", ".join(unknown)} that the chain does not have '
                                 f'({", ".join(model.joint_names)})')
        values = [float(home.get(name, 0.0)) for name in model.joint_names]
    else:
        values = [float(v) for v in home]
    if len(values) != model.dof:
        raise ArmConfigError(f'{config.source}: home_pose has {len(values)} values, the '
                             f'chain has {model.dof} joints')
    return np.array(values)

