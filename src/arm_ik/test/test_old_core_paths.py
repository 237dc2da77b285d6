"""The core's old module paths (arm_ik.kinematics.*) keep working for one release, with a
DeprecationWarning naming the new path, and give the very same objects."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

from arm_ik.kinematics import MOVED


def _fresh_import(name: str):
    for key in [k for k in sys.modules if k == name or k.startswith(name + '.')]:
        del sys.modules[key]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        module = importlib.import_module(name)
    return module, [w for w in caught if issubclass(w.category, DeprecationWarning)]


@pytest.mark.parametrize('old', sorted(MOVED))
def test_every_old_module_is_its_new_module(old):
    module, warned = _fresh_import(f'arm_ik.kinematics.{old}')
    assert module is importlib.import_module(MOVED[old])
    assert any(MOVED[old] in str(w.message) for w in warned)


def test_old_packages_keep_their_names():
    collision, warned = _fresh_import('arm_ik.kinematics.collision')
    from arm_kinematics.motion.sampling_planner import plan_joint_path
    from arm_kinematics.scene.checker import CollisionChecker
    assert collision.CollisionChecker is CollisionChecker
    assert collision.plan_joint_path is plan_joint_path
    assert warned
    safety, _ = _fresh_import('arm_ik.kinematics.safety')
    from arm_kinematics.scene.geometry import SafetyGeometry
    assert safety.SafetyGeometry is SafetyGeometry


def test_old_from_imports_work():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        from arm_ik.kinematics.arm import ArmConfig
        from arm_ik.kinematics.collision.checker import CollisionChecker
    from arm_kinematics.arm import ArmConfig as NewConfig
    from arm_kinematics.scene.checker import CollisionChecker as NewChecker
    assert ArmConfig is NewConfig and CollisionChecker is NewChecker


def test_an_unknown_old_name_is_not_found():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module('arm_ik.kinematics.no_such_module')


def test_the_changelog_lists_every_moved_module():
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / 'CHANGELOG.rst'
    lines = path.read_text(encoding='utf-8').splitlines()
    # One line per module, ``old`` → ``new`` (the packages' rows name their parts after it).
    missing = [old for old, new in MOVED.items()
               if not any(f'``arm_ik.kinematics.{old}`` → ``{new}``' in line or
                          f'``arm_ik.kinematics.{old}`` (package) →' in line for line in lines)]
    assert not missing
