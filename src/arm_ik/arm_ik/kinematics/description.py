"""Find and expand the arm descriptions of ``arm_description`` (xacro → URDF → ArmModel).

The package's share folder is found through the ament index; ``ARM_DESCRIPTION_DIR``
overrides it (used to work from a source tree without a build).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from arm_ik.kinematics.model import ArmModel, DescriptionError

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
        raise DescriptionError(f'unknown arm "{arm}"; choose one of: {", ".join(ARMS)}')


def xacro_path(arm: str) -> Path:
    """Top-level xacro file of ``arm``."""
    _check_arm(arm)
    return description_dir() / 'urdf' / f'{arm}.urdf.xacro'


def expand_xacro(arm: str, mappings: dict[str, str] | None = None) -> str:
    """URDF text of ``arm`` with xacro arguments ``mappings`` (as ``xacro`` on the shell)."""
    import xacro
    try:
        document = xacro.process_file(str(xacro_path(arm)), mappings=dict(mappings or {}))
    except xacro.XacroException as error:
        raise DescriptionError(f'{arm}: xacro failed: {error}') from None
    return document.toprettyxml(indent='  ')


def load_arm_config(arm: str) -> dict[str, Any]:
    """The per-arm defaults YAML (``config/<arm>.yaml``) as a dict."""
    _check_arm(arm)
    with open(description_dir() / 'config' / f'{arm}.yaml', encoding='utf-8') as stream:
        return yaml.safe_load(stream) or {}


def load_model(arm: str, mappings: dict[str, str] | None = None) -> ArmModel:
    """ArmModel of ``arm`` (base_link → tool0) from its expanded xacro."""
    return ArmModel.from_urdf(expand_xacro(arm, mappings))


def home_from_config(model: ArmModel, config: dict) -> list[float]:
    """Home pose (rad) from the arm's defaults YAML, or all zeros clamped into the limits."""
    home = config.get('home_pose')
    if isinstance(home, dict):
        return [float(home.get(name, 0.0)) for name in model.joint_names]
    if isinstance(home, (list, tuple)):
        return [float(v) for v in home]
    return model.clamp(np.zeros(model.dof)).tolist()


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
