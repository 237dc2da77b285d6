"""Deprecated: the ROS-free core moved to its own package, ``arm_kinematics``.

Every module that lived here keeps its old name for one release: importing
``arm_ik.kinematics.<module>`` gives the module at its new place (the same module object,
so classes and isinstance checks agree) and a DeprecationWarning that names the new path.
The old packages ``collision`` and ``safety`` are kept as modules with the names they
exported. The table is in arm_ik's CHANGELOG.rst; docs/ARCHITECTURE.md says where
everything is now.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings

# old module (under arm_ik.kinematics) -> its new place
MOVED = {
    'arm': 'arm_kinematics.arm',
    'chain_checks': 'arm_kinematics.description.chain_rules',
    'checks': 'arm_kinematics.common.checks',
    'collision.allowed': 'arm_kinematics.scene.allowed',
    'collision.backend': 'arm_kinematics.scene.backend',
    'collision.checker': 'arm_kinematics.scene.checker',
    'collision.config': 'arm_kinematics.description.collision_config',
    'collision.links': 'arm_kinematics.scene.links',
    'collision.planner': 'arm_kinematics.motion.planning.sampling',
    'collision.scene': 'arm_kinematics.scene.objects',
    'collision.shapes': 'arm_kinematics.scene.shapes',
    'config_writer': 'arm_kinematics.analysis.config_writer',
    'description': 'arm_kinematics.description.bundled',
    'experiments': 'arm_kinematics.analysis.experiments',
    'joint_state': 'arm_kinematics.common.joint_state',
    'kernel': 'arm_kinematics.model.kernel',
    'marker_scene': 'arm_kinematics.visual.marker_scene',
    'metrics': 'arm_kinematics.ik.metrics',
    'model': 'arm_kinematics.model.arm_model',
    'motion.cartesian': 'arm_kinematics.motion.cartesian',
    'motion.commands': 'arm_kinematics.motion.commands',
    'motion.errors': 'arm_kinematics.motion.errors',
    'motion.executor': 'arm_kinematics.motion.executor',
    'motion.follow': 'arm_kinematics.motion.follow',
    'motion.follow_guard': 'arm_kinematics.motion.follow_guard',
    'motion.laws': 'arm_kinematics.motion.laws',
    'motion.planner': 'arm_kinematics.motion.planner',
    'motion.planning_pool': 'arm_kinematics.motion.planning_pool',
    'motion.runner': 'arm_kinematics.motion.runner',
    'motion.safety_check': 'arm_kinematics.motion.safety_check',
    'motion.trajectory': 'arm_kinematics.motion.trajectory',
    'motion.validation': 'arm_kinematics.motion.validation',
    'motion.worker': 'arm_kinematics.motion.worker',
    'passive_joints': 'arm_kinematics.description.passive_joints',
    'path_ik': 'arm_kinematics.motion.path_ik',
    'reachability': 'arm_kinematics.analysis.reachability',
    'request': 'arm_kinematics.ik.request',
    'result': 'arm_kinematics.ik.result',
    'safety.config': 'arm_kinematics.description.safety_config',
    'safety.geometry': 'arm_kinematics.scene.geometry',
    'safety.monitor': 'arm_kinematics.scene.monitor',
    'safety.paths': 'arm_kinematics.motion.safety_paths',
    'safety.planning': 'arm_kinematics.motion.detour_planner',
    'safety.rules': 'arm_kinematics.ik.floor_rules',
    'safety.scene_rules': 'arm_kinematics.scene.scene_rules',
    'solvers.analytic': 'arm_kinematics.ik.closed_form.analytic',
    'solvers.base': 'arm_kinematics.ik.solvers.base',
    'solvers.ccd': 'arm_kinematics.ik.solvers.ccd',
    'solvers.closed_form': 'arm_kinematics.ik.closed_form.spherical_wrist',
    'solvers.dls': 'arm_kinematics.ik.solvers.dls',
    'solvers.families': 'arm_kinematics.ik.closed_form.families',
    'solvers.planar': 'arm_kinematics.ik.closed_form.planar',
    'staleness': 'arm_kinematics.common.staleness',
    'tasks.console': 'arm_kinematics.tasks.console',
    'tasks.current_pose': 'arm_kinematics.tasks.current_pose',
    'tasks.cycle': 'arm_kinematics.tasks.cycle',
    'tasks.cycle_effects': 'arm_kinematics.tasks.cycle_effects',
    'tasks.pick_place': 'arm_kinematics.tasks.pick_place',
    'tasks.sequences': 'arm_kinematics.tasks.sequences',
    'transforms': 'arm_kinematics.common.transforms',
    'visual': 'arm_kinematics.visual.arm_visual',
    'motion': 'arm_kinematics.motion',
    'solvers': 'arm_kinematics.ik.solvers',
    'tasks': 'arm_kinematics.tasks',
}

# The old packages that re-exported names from several modules: name -> new module.
_REEXPORTS = {
    'collision': {
        'compute_allowed_pairs': 'arm_kinematics.scene.allowed',
        'CollisionChecker': 'arm_kinematics.scene.checker',
        'CollisionReport': 'arm_kinematics.scene.collision_report',
        'Contact': 'arm_kinematics.scene.collision_report',
        'PathCheck': 'arm_kinematics.scene.collision_report',
        'CollisionConfig': 'arm_kinematics.description.collision_config',
        'CollisionConfigError': 'arm_kinematics.description.collision_config',
        'NO_PATH': 'arm_kinematics.motion.planning.sampling',
        'plan_joint_path': 'arm_kinematics.motion.planning.sampling',
        'PlanResult': 'arm_kinematics.motion.planning.sampling',
        'SUCCESS': 'arm_kinematics.motion.planning.sampling',
        'Scene': 'arm_kinematics.scene.objects',
        'SceneError': 'arm_kinematics.scene.objects',
        'SceneObject': 'arm_kinematics.scene.objects',
        'ShapeError': 'arm_kinematics.scene.shapes',
    },
    'safety': {
        'load_safety_config': 'arm_kinematics.description.bundled',
        'SafetyConfig': 'arm_kinematics.description.safety_config',
        'SafetyConfigError': 'arm_kinematics.description.safety_config',
        'PoseCheck': 'arm_kinematics.scene.geometry',
        'PoseChecks': 'arm_kinematics.scene.geometry',
        'SafetyGeometry': 'arm_kinematics.scene.geometry',
        'Verdict': 'arm_kinematics.scene.geometry',
    },
}


def _warn(old: str, new: str) -> None:
    warnings.warn(f'{old} is deprecated and will be removed: import {new} instead',
                  DeprecationWarning, stacklevel=4)


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module (or the re-exports) at its new place."""

    def __init__(self, relative: str) -> None:
        self.relative = relative

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if self.relative in _REEXPORTS:
            module = types.ModuleType(spec.name, f'Deprecated: see {__name__}.')
            module.__path__ = []   # its old submodules are found by the finder below
            for name, source in _REEXPORTS[self.relative].items():
                setattr(module, name, getattr(importlib.import_module(source), name))
            module.__all__ = sorted(_REEXPORTS[self.relative])
            _warn(spec.name, 'arm_kinematics (see docs/ARCHITECTURE.md)')
            return module
        new = MOVED[self.relative]
        _warn(spec.name, new)
        return importlib.import_module(new)

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the module was loaded at its new place."""


class _OldNames(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        prefix = __name__ + '.'
        if not fullname.startswith(prefix):
            return None
        relative = fullname[len(prefix):]
        if relative not in MOVED and relative not in _REEXPORTS:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(relative))


if not any(isinstance(finder, _OldNames) for finder in sys.meta_path):
    sys.meta_path.insert(0, _OldNames())
