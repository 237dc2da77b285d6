"""The arm as one value: a URDF plus a plain ``ArmConfig``, built once and shared.

Every node (and the executor's planning process) builds its arm objects through
``build_arm``: the model, the reach rules, the home pose, the safety geometry and the IK
dispatcher with its one safety policy. Nothing here looks an arm up by its name; the four
bundled arms are configuration files like any user's (``arm_description/config``).

An arm without a configuration file gets defaults derived from the URDF alone
(``ArmConfig.defaults``):

- safety off: no floor, no obstacle (capsules along the links are still drawn and reported);
- home: all joints at zero, clamped into the limits;
- reach: from the chain (the sum of the joint-to-joint distances);
- solver: chosen from the structure (``choose_solver``);
- motion law: min_jerk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import copy
from dataclasses import dataclass, field
import math
import os
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import numpy as np
import yaml

from arm_ik.kinematics.model import ArmModel, DescriptionError
from arm_ik.kinematics.request import IKDispatcher
from arm_ik.kinematics.safety.config import (
    DEFAULT_ROD_RADIUS,
    parse_safety_config,
    SafetyConfig,
    SafetyConfigError,
)
from arm_ik.kinematics.safety.geometry import SafetyGeometry, SAME_POINT
from arm_ik.kinematics.solvers import solver_class, SOLVERS
from arm_ik.kinematics.solvers.base import Workspace, workspace_from_model

# Capsule radius of a link whose collision geometry says nothing usable, m.
DEFAULT_LINK_RADIUS = 0.04
DEFAULT_MOTION_LAW = 'min_jerk'
# Solvers tried in this order when the configuration names none: the closed forms answer
# in microseconds with every branch; DLS serves any chain.
SOLVER_PREFERENCE = ('analytic', 'closed_form', 'dls')

_TOP_KEYS = {
    'arm': 'label of the arm (namespace, logs); default: the URDF robot name',
    'frames': 'base and tip frame of the chain: {base: ..., tip: ...}',
    'kinematics': 'xacro arguments of the description (lengths, m)',
    'joint_limits': 'joint limits read by the xacro (the URDF is what the solvers use)',
    'home_pose': 'home pose, rad (or m): {joint: value} or a list in chain order',
    'masses': 'link masses read by the xacro, kg',
    'visual': 'visual sizes read by the xacro, m',
    'ik': 'IK defaults: default_solver, min_height_above_shoulder, damping, tolerance, '
          'max_iterations',
    'safety': 'floor, capsules and obstacle; absent: safety off',
    'motion': 'motion defaults: default_law, path_planner (grid | sampling)',
    'lab': 'browser lab: xacro (path of the arm xacro, relative to this file), '
           'length_arguments, experiments',
    'collision': 'collision geometry: padding, search_paths, fallback_shapes, allowed_pairs '
                 '(kinematics.collision.CollisionConfig)',
    'info': 'what the arm_config command found (family, solver reason): not read',
}
_IK_KEYS = {'default_solver', 'min_height_above_shoulder', 'damping', 'tolerance',
            'max_iterations', 'avoid_collisions'}
_MOTION_KEYS = {'default_law', 'path_planner'}
# motion.path_planner: how a blocked joint move is planned round (kinematics.motion.planner).
PATH_PLANNERS = ('grid', 'sampling')
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
        ik = data.get('ik') or {}
        solver = ik.get('default_solver')
        if solver is not None and solver not in SOLVERS:
            raise ArmConfigError(f'{source}: ik.default_solver is {solver!r}; valid names: '
                                 f'{", ".join(SOLVERS)}')
        for key in ('min_height_above_shoulder', 'damping', 'tolerance'):
            if key in ik:
                _finite(ik[key], f'{source}: ik.{key}')
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
        if 'avoid_collisions' in ik and not isinstance(ik['avoid_collisions'], bool):
            raise ArmConfigError(f'{source}: ik.avoid_collisions must be true or false, got '
                                 f'{ik["avoid_collisions"]!r}')
        if data.get('collision') is not None:
            from arm_ik.kinematics.collision.config import CollisionConfig, CollisionConfigError
            try:
                CollisionConfig.from_mapping(data['collision'], f'{source}: collision')
            except CollisionConfigError as error:
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
            text = path.read_text(encoding='utf-8')
        except OSError as error:
            raise ArmConfigError(f'arm_config {path}: cannot be read: {error.strerror}') \
                from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise ArmConfigError(f'arm_config {path}: not valid YAML: {error}') from None
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
    def default_law(self) -> str:
        return str(self.section('motion').get('default_law', DEFAULT_MOTION_LAW))

    @property
    def path_planner(self) -> str:
        """``motion.path_planner`` ('' when absent: the arm's default, see
        kinematics.motion.safety_check.default_path_planner)."""
        return str(self.section('motion').get('path_planner') or '')

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
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value):
        raise ArmConfigError(f'{where} must be a finite number, got {value!r}')
    return float(value)


# ---------------------------------------------------------------------- frames
def default_frames(urdf: str) -> tuple[str, str]:
    """(base, tip) of a URDF when neither parameter nor configuration names them.

    The base is the tree's root link; the tip is ``tool0`` when the tree has it (REP-199's
    tool flange), else the one leaf link at the end of the most movable joints from the root.

    Raises:
        DescriptionError: the XML does not parse or has no single root link.
    """
    try:
        root = ElementTree.fromstring(urdf)
    except ElementTree.ParseError as error:
        raise DescriptionError(f'robot_description is not valid XML: {error}') from None
    links = [link.get('name') for link in root.findall('link')]
    children: dict[str, list[tuple[str, bool]]] = {}
    has_parent = set()
    for joint in root.findall('joint'):
        parent, child = joint.find('parent'), joint.find('child')
        if parent is None or child is None:
            continue
        moving = joint.get('type', 'fixed') != 'fixed'
        children.setdefault(parent.get('link'), []).append((child.get('link'), moving))
        has_parent.add(child.get('link'))
    roots = [link for link in links if link not in has_parent]
    if len(roots) != 1:
        raise DescriptionError(f'the description has {len(roots)} root links '
                               f'({", ".join(map(str, roots)) or "none"}); expected one')
    base = roots[0]
    if 'tool0' in links:
        return base, 'tool0'
    best: tuple[int, int, str] = (-1, -1, base)
    stack = [(base, 0, 0)]
    seen = set()
    while stack:
        link, moving, depth = stack.pop()
        if link in seen:
            continue
        seen.add(link)
        best = max(best, (moving, depth, link), key=lambda entry: entry[:2])
        for child, is_moving in children.get(link, ()):
            stack.append((child, moving + int(is_moving), depth + 1))
    if best[0] <= 0:
        raise DescriptionError(f'no movable joint below the root link "{base}": name the '
                               'chain with base_frame and tip_frame')
    return base, best[2]


def child_links(urdf: str) -> dict[str, str]:
    """{joint name: child link name} of a URDF ({} when it does not parse)."""
    try:
        root = ElementTree.fromstring(urdf)
    except ElementTree.ParseError:
        return {}
    return {joint.get('name'): joint.find('child').get('link')
            for joint in root.findall('joint') if joint.find('child') is not None}


# ---------------------------------------------------------------------- structure
def choose_solver(model: ArmModel) -> tuple[str, str]:
    """(solver, reason) for ``model`` when the configuration names none."""
    reasons = []
    also = ''
    for name in SOLVER_PREFERENCE:
        reason = solver_class(name).reason_for(model)
        if not reason and name == 'analytic' and _yaw_three_pitch(model):
            # Its position-only goals sweep the free pitch (about 6 ms a request against
            # DLS's 0.1 ms): the default goal stays with dls; `analytic` serves by name.
            family = solver_class(name).family_description(model)
            also = f'; analytic serves it by name ({family}: position + approach pitch in ' \
                'closed form, position alone by a sweep of the pitch)'
            reasons.append('analytic: yaw + three pitch, kept for goals that name it')
            continue
        if not reason:
            if name == 'dls':
                return name, ('no closed form fits this chain for the default position goal ('
                              + '; '.join(reasons) + '): damped least squares' + also)
            # A solver serving several families names the one it recognised.
            describe = getattr(solver_class(name), 'family_description', None)
            family = describe(model) if describe is not None else ''
            return name, f'the chain fits the {name} closed form' + \
                (f' ({family})' if family else '')
        reasons.append(f'{name}: {reason}')
    return 'dls', '; '.join(reasons)


def _yaw_three_pitch(model: ArmModel) -> bool:
    """True when ``analytic`` serves ``model`` as yaw + three pitch, not yaw + two pitch."""
    from arm_ik.kinematics.solvers.analytic import AnalyticSolver
    return bool(AnalyticSolver.applicability(model))


def default_safety_section(model: ArmModel,
                           radii: Mapping[str, float] | None = None) -> dict[str, Any]:
    """A safety section with the floor and the obstacle off and a capsule along each link.

    Args:
        radii: capsule radius per joint name (m); DEFAULT_LINK_RADIUS where absent.
    """
    origins, _, tip = model.joint_origins_and_axes(np.zeros(model.dof))
    points = [*origins, tip]
    child = child_links(model.urdf) if model.urdf else {}
    links = []
    for index, name in enumerate(model.joint_names):
        if all(np.linalg.norm(points[later] - points[index]) <= SAME_POINT
               for later in range(index + 1, len(points))):
            continue
        radius = float((radii or {}).get(name, DEFAULT_LINK_RADIUS))
        links.append({'name': child.get(name, f'{name}_link'), 'joint': name,
                      'radius': radius})
    if not links:
        links.append({'name': 'chain', 'joint': model.joint_names[0],
                      'radius': DEFAULT_LINK_RADIUS})
    return {'floor_enabled': False, 'floor_below_shoulder': 0.0, 'links': links,
            'obstacle': {'enabled': False, 'center': [0.0, 0.0, 0.0], 'radius': 0.1,
                         'rod_radius': DEFAULT_ROD_RADIUS}}


# ---------------------------------------------------------------------- the value
@dataclass(frozen=True)
class Arm:
    """Everything the nodes derive from one URDF and one ArmConfig.

    Attributes:
        label: the arm's name (namespace label, logs).
        model: the chain base → tip.
        config: the configuration it was built with.
        workspace: reach rules.
        home: home pose (rad, or m for prismatic joints).
        safety_config: the validated safety section (the off one when the config has none).
        safety: capsules, floor and obstacle of ``model``.
        default_solver: solver of requests that name none.
        solver_reason: why that solver (configured, or chosen from the structure).
    """

    label: str
    model: ArmModel
    config: ArmConfig
    workspace: Workspace
    home: np.ndarray
    safety_config: SafetyConfig
    safety: SafetyGeometry
    default_solver: str
    solver_reason: str
    # Allowed pairs computed for this arm, per mesh search path set (one computation costs
    # 1-2 s with meshes; every later checker of the same arm reuses it).
    _allowed_pairs: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def safety_enabled(self) -> bool:
        return self.config.safety_enabled

    @property
    def avoid_collisions(self) -> bool:
        """Default of SolveIK's avoid_collisions (``ik.avoid_collisions``; absent: off)."""
        return bool(self.config.section('ik').get('avoid_collisions', False))

    def collision_checker(self, scene: Any = None, search_paths: Sequence[str | Path] = (),
                          urdf_path: str | Path | None = None) -> Any:
        """A new CollisionChecker of this arm: its URDF's collision shapes, the config's
        ``collision`` section, home = ``home``.

        A new checker per call because a checker serves one thread; the allowed pairs are the
        config's when it lists them, else computed once per arm and search paths and reused,
        so a second checker (another thread, a reload) does not pay for them again. The
        collision package is imported here only: arms that never ask do not load it.

        Args:
            scene: the kinematics.collision.Scene to check against (None: a new empty one).
            search_paths: mesh folders before the config's and the default ones.
            urdf_path: the URDF's file, when known (its folders are searched for meshes).

        Raises:
            ArmConfigError: the collision section does not fit the URDF (the reason).
        """
        from dataclasses import replace

        from arm_ik.kinematics.collision import (
            CollisionChecker,
            CollisionConfig,
            CollisionConfigError,
            ShapeError,
        )
        key = (tuple(str(p) for p in search_paths), str(urdf_path or ''))
        try:
            config = CollisionConfig.from_mapping(self.config.get('collision'))
            if config.allowed_pairs is None and key in self._allowed_pairs:
                config = replace(config, allowed_pairs=self._allowed_pairs[key])
            checker = CollisionChecker(self.model, self.model.urdf, config, self.home,
                                       search_paths, urdf_path, scene)
        except (CollisionConfigError, ShapeError, DescriptionError, ValueError) as error:
            raise ArmConfigError(f'collision configuration of "{self.label}": {error}') \
                from None
        self._allowed_pairs.setdefault(key, tuple(tuple(p) for p in checker.allowed))
        return checker

    def dispatcher(self, default_solver: str | None = None,
                   search_paths: Sequence[str | Path] = ()) -> IKDispatcher:
        """A new IK dispatcher with the arm's one safety policy (the floor rules when on) and
        its collision checker, built only when a request first avoids collisions.

        Args:
            search_paths: mesh folders of that checker (see collision_checker).

        Raises:
            ValueError: ``default_solver`` does not apply to this arm.
        """
        paths = tuple(search_paths)
        return IKDispatcher(self.model, self.workspace, default_solver or self.default_solver,
                            self.safety, lambda: self.collision_checker(search_paths=paths),
                            self.avoid_collisions)

    def with_safety(self, geometry: SafetyGeometry) -> Arm:
        """The same arm judged by ``geometry`` (its ball moved or resized by the scene)."""
        if geometry is self.safety:
            return self
        return _replace(self, safety_config=geometry.config, safety=geometry)


def _replace(arm: Arm, **changes: Any) -> Arm:
    from dataclasses import replace
    return replace(arm, **changes)


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


def build_arm(model: ArmModel, config: ArmConfig, label: str = '') -> Arm:
    """The arm value of ``model`` with ``config``.

    Raises:
        ArmConfigError: the configuration does not fit the model (a capsule on an unknown
            joint, a solver that does not apply, a home pose of the wrong size).
    """
    label = label or config.label or model.name
    workspace = workspace_from_model(model, _optional(config.section('ik').get(
        'min_height_above_shoulder')))
    home = home_of(model, config)
    section = config.data.get('safety')
    if section is None:
        section = default_safety_section(model)
    try:
        safety_config = parse_safety_config(section, label)
        safety = SafetyGeometry(model, safety_config)
    except (SafetyConfigError, ValueError) as error:
        raise ArmConfigError(f'safety configuration of "{label}": {error}') from None
    solver = config.default_solver
    if solver is None:
        solver, reason = choose_solver(model)
    else:
        reason = f'configured in {config.source}'
    arm = Arm(label, model, config, workspace, home, safety_config, safety, solver, reason)
    try:
        arm.dispatcher()
    except ValueError as error:
        raise ArmConfigError(f'{label}: {error}') from None
    return arm


def _optional(value: object) -> float | None:
    return None if value is None else float(value)


def load_arm(urdf: str, config: ArmConfig | None = None, base_frame: str = '',
             tip_frame: str = '', label: str = '') -> Arm:
    """Parse ``urdf`` and build the arm (frames: argument, else configuration, else
    ``default_frames``).

    Raises:
        DescriptionError: the URDF is unusable. ArmConfigError: the config does not fit.
    """
    config = config if config is not None else ArmConfig()
    base = base_frame or config.base_frame
    tip = tip_frame or config.tip_frame
    if not base or not tip:
        default_base, default_tip = default_frames(urdf)
        base, tip = base or default_base, tip or default_tip
    return build_arm(ArmModel.from_urdf(urdf, base, tip), config, label)
