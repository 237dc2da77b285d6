"""Find and expand the bundled example arms of ``arm_description`` (xacro → URDF → ArmModel).

These are file locators for the four examples the package ships (the demo runner, tests,
benchmarks and tools use them); no node looks an arm up by name: nodes get a URDF and an
``arm_config`` file path (see kinematics.arm). The package's share folder is found through
the ament index; ``ARM_DESCRIPTION_DIR`` overrides it (used to work from a source tree
without a build).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from arm_kinematics.description.arm_config import ArmConfig, home_of
from arm_kinematics.description.safety_config import safety_config_of, SafetyConfig
from arm_kinematics.model.arm_model import ArmModel, DescriptionError

# The bundled examples (each is urdf/<arm>.urdf.xacro + config/<arm>.yaml).
ARMS = ('pointer3', 'ccd5', 'six_axis', 'manipulator3d')


def description_dir() -> Path:
    """Share folder of arm_description (holds urdf/, config/, rviz/)."""
    override = os.environ.get('ARM_DESCRIPTION_DIR')
    if override:
        return Path(override)
    try:
        from ament_index_python.packages import get_package_share_directory
        return Path(get_package_share_directory('arm_description'))
    except (ImportError, LookupError, OSError) as error:
        raise DescriptionError('arm_description is not installed: build the workspace and '
                               'source install/setup.bash, or set ARM_DESCRIPTION_DIR') from error


def _check_arm(arm: str) -> None:
    if arm not in ARMS:
        raise DescriptionError(f'"{arm}" is not a bundled example arm ({", ".join(ARMS)}); '
                               'for your own arm pass its URDF and an arm_config file')


def xacro_path(arm: str) -> Path:
    """Top-level xacro file of ``arm``."""
    _check_arm(arm)
    return description_dir() / 'urdf' / f'{arm}.urdf.xacro'


def expand_xacro(arm: str, mappings: dict[str, str] | None = None) -> str:
    """URDF text of bundled ``arm`` with xacro arguments ``mappings`` (as ``xacro`` does)."""
    return expand_xacro_file(xacro_path(arm), mappings)


def expand_xacro_file(path: str | Path, mappings: dict[str, str] | None = None) -> str:
    """URDF text of the xacro file ``path`` with arguments ``mappings``.

    Raises:
        DescriptionError: xacro failed (the message says why).
    """
    import xacro
    try:
        document = xacro.process_file(str(path), mappings=dict(mappings or {}))
    except (xacro.XacroException, OSError) as error:
        raise DescriptionError(f'{Path(path).name}: xacro failed: {error}') from None
    return document.toprettyxml(indent='  ')


def config_path(arm: str) -> Path:
    """The configuration file of a bundled example arm (``config/<arm>.yaml``)."""
    _check_arm(arm)
    return description_dir() / 'config' / f'{arm}.yaml'


def load_arm_config(arm: str) -> ArmConfig:
    """The configuration of a bundled example arm, validated."""
    return ArmConfig.from_file(config_path(arm))


def load_model(arm: str, mappings: dict[str, str] | None = None) -> ArmModel:
    """ArmModel of ``arm`` (base_link → tool0) from its expanded xacro."""
    return ArmModel.from_urdf(expand_xacro(arm, mappings))


def home_from_config(model: ArmModel, config: ArmConfig | dict) -> list[float]:
    """Home pose (rad) of the arm's configuration, or all zeros clamped into the limits
    (``kinematics.arm.home_of``, the rule every node uses)."""
    return home_of(model, config if isinstance(config, ArmConfig) else ArmConfig(config)
                   ).tolist()

def check_home(model: ArmModel, values: list[float]) -> str:
    """'' when ``values`` is a usable home pose, else the reason it is not."""
    if len(values) != model.dof:
        return f'home has {len(values)} values, the arm has {model.dof} joints'
    for name, value, low, high in zip(model.joint_names, values, model.lower, model.upper):
        if not math.isfinite(value):
            return f'home value of {name} is {value} (must be finite)'
        if not low - 1e-9 <= value <= high + 1e-9:
            return f'home value of {name} = {value:.4f} rad is outside [{low:.4f}, {high:.4f}]'
    return ''


def load_safety_config(arm: str) -> SafetyConfig:
    """Read and validate ``config/<arm>.yaml``'s safety section from arm_description.

    Raises:
        SafetyConfigError: the section is invalid.
        DescriptionError: unknown arm or arm_description not found.
    """
    return safety_config_of(load_arm_config(arm).as_mapping(), arm)
