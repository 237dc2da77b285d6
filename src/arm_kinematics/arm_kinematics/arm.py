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

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from arm_kinematics.common.names import ros_name, ros_name_reason
from arm_kinematics.common.urdf_tree import read_tree
from arm_kinematics.description.arm_config import ArmConfig, ArmConfigError, home_of
from arm_kinematics.description.chain_rules import load_chain, LoadedChain
from arm_kinematics.description.frames import default_frames
from arm_kinematics.description.safety_config import (
    default_safety_section,
    parse_safety_config,
    SafetyConfig,
    SafetyConfigError,
)
from arm_kinematics.ik.default_solver import choose_solver
from arm_kinematics.ik.request import default_solver_refusal, IKDispatcher
from arm_kinematics.ik.solvers.base import Workspace, workspace_from_model
from arm_kinematics.model.arm_model import ArmModel, DescriptionError
from arm_kinematics.scene.geometry import SafetyGeometry

# The names a user reaches through the arm value (each lives in its own layer).
__all__ = ['Arm', 'ArmConfig', 'ArmConfigError', 'build_arm', 'choose_solver',
           'default_frames', 'home_of', 'load_arm', 'load_config_chain', 'LoadedChain']


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
            scene: the scene.objects.Scene to check against (None: a new empty one).
            search_paths: mesh folders before the config's and the default ones.
            urdf_path: the URDF's file, when known (its folders are searched for meshes).

        Raises:
            ArmConfigError: the collision section does not fit the URDF (the reason).
        """
        from dataclasses import replace

        from arm_kinematics.description.collision_config import (
            CollisionConfig,
            CollisionConfigError,
        )
        from arm_kinematics.scene.checker import CollisionChecker
        from arm_kinematics.scene.shapes import ShapeError
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



def build_arm(model: ArmModel, config: ArmConfig, label: str = '') -> Arm:
    """The arm value of ``model`` with ``config``.

    Raises:
        ArmConfigError: the configuration does not fit the model (a capsule on an unknown
            joint, a solver that does not apply, a home pose of the wrong size).
    """
    reason = ros_name_reason(label) if label else ''
    if reason:
        raise ArmConfigError(f'arm label: {reason}')
    # The URDF's robot name is free text (exporters write 'ARM.SLDASM'); the label becomes a
    # namespace, so the default is that name made a ROS name.
    label = label or config.label or ros_name(model.name) or 'arm'
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
    # Whether the default solver serves this arm, asked of its class: building the solvers
    # (their compiled warm-ups) would import numba in every node, most of which never solve.
    refusal = default_solver_refusal(model, solver)
    if refusal:
        raise ArmConfigError(f'{label}: {refusal}')
    return arm


def _optional(value: object) -> float | None:
    return None if value is None else float(value)


def load_arm(urdf: str, config: ArmConfig | None = None, base_frame: str = '',
             tip_frame: str = '', label: str = '') -> Arm:
    """Parse ``urdf`` and build the arm (frames: argument, else configuration, else
    ``default_frames``; the chain rules of ``load_chain``).

    Raises:
        DescriptionError: the URDF is unusable. ArmConfigError: the config does not fit.
    """
    config = config if config is not None else ArmConfig()
    return build_arm(load_config_chain(urdf, config, base_frame, tip_frame).model, config,
                     label)


def load_config_chain(urdf: str, config: ArmConfig, base_frame: str = '',
                      tip_frame: str = '', strict: bool | None = None) -> LoadedChain:
    """``load_chain`` with the frames given, else the configuration's, else the defaults,
    and the configuration's speed for joints whose URDF gives none. ``strict`` (None: the
    configuration's ``strict_urdf``) refuses the URDF limit conventions of other tools
    (``common.urdf_tree``) anywhere in the file instead of reading them.

    Raises:
        DescriptionError: the URDF is unusable (one line naming the joint or link).
    """
    if config.strict_urdf if strict is None else strict:
        read_tree(urdf, strict=True)
    return load_chain(urdf, base_frame or config.base_frame or '',
                      tip_frame or config.tip_frame or '', config.default_joint_speed)
