"""A starting ``ArmConfig`` for any arm, derived from its URDF alone (``arm_config`` command).

What the URDF says is written as facts (frames, joints, limits, reach, the solver chosen
from the structure and why); what it cannot say is written as the safe default: the floor
and the obstacle off, home at zero clamped into the limits, min-jerk motion. Capsule radii
come from each link's ``<collision>`` geometry: a cylinder's radius, a sphere's radius, half
the diagonal of a box's two smallest sides, a mesh's bounding box the same way when its
file can be read (``package://`` and ``file://`` resolved through ``search_paths``), else
DEFAULT_LINK_RADIUS with a note saying so. The collision section lists the allowed
self-collision pairs computed for the arm (``Arm.collision_checker``), so that nodes do not
compute them again at start-up; edit the list to override it.
"""

from __future__ import annotations

from collections.abc import Sequence
import math
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import numpy as np

from arm_kinematics.arm import ArmConfig, build_arm
from arm_kinematics.common.urdf_tree import parse_robot_xml
from arm_kinematics.description.arm_config import DEFAULT_MOTION_LAW
from arm_kinematics.description.chain_rules import load_chain
from arm_kinematics.description.frames import child_links
from arm_kinematics.description.meshes import resolve_mesh
from arm_kinematics.description.safety_config import DEFAULT_LINK_RADIUS, default_safety_section
from arm_kinematics.ik.default_solver import choose_solver


def _cross_radius(extents: Sequence[float]) -> float:
    """Radius of a capsule along the longest side of a box with these extents."""
    small = sorted(float(e) for e in extents)[:2]
    return 0.5 * math.hypot(*small)


def link_radius(link: ElementTree.Element | None, search_paths: Sequence[str | Path]
                ) -> tuple[float, str]:
    """(capsule radius, how it was found) from a link's collision geometry."""
    if link is None:
        return DEFAULT_LINK_RADIUS, 'no such link: default'
    radii, notes = [], []
    for geometry in link.findall('collision/geometry'):
        for shape in geometry:
            try:
                if shape.tag == 'cylinder':
                    radii.append(float(shape.get('radius')))
                    notes.append('cylinder')
                elif shape.tag == 'sphere':
                    radii.append(float(shape.get('radius')))
                    notes.append('sphere')
                elif shape.tag == 'box':
                    sides = [float(v) for v in shape.get('size').split()]
                    if len(sides) != 3 or not all(math.isfinite(v) and v > 0 for v in sides):
                        raise ValueError('a box needs three finite sides > 0')
                    radii.append(_cross_radius(sides))
                    notes.append('box')
                elif shape.tag == 'mesh':
                    radius, note = _mesh_radius(shape, search_paths)
                    if radius is not None:
                        radii.append(radius)
                    notes.append(note)
            except (TypeError, ValueError):
                notes.append(f'unreadable <{shape.tag}>')
    radii = [r for r in radii if math.isfinite(r) and r > 0.0]
    if not radii:
        reason = ', '.join(notes) if notes else 'no collision geometry'
        return DEFAULT_LINK_RADIUS, f'{reason}: default {DEFAULT_LINK_RADIUS} m'
    return max(radii), ', '.join(notes)


def _mesh_radius(shape: ElementTree.Element, search_paths: Sequence[str | Path]
                 ) -> tuple[float | None, str]:
    filename = shape.get('filename', '')
    path = resolve_mesh(filename, search_paths)
    if path is None:
        return None, f'mesh {filename} not found'
    try:
        import trimesh
        mesh = trimesh.load(str(path), force='mesh')
        extents = np.asarray(mesh.extents, dtype=float)
    except Exception as error:   # noqa: BLE001 - trimesh raises many kinds for bad files
        return None, f'mesh {path.name} unreadable ({type(error).__name__})'
    scale = np.array([float(v) for v in shape.get('scale', '1 1 1').split()])
    if extents.shape != (3,) or not np.all(np.isfinite(extents)):
        return None, f'mesh {path.name} has no extent'
    return _cross_radius(np.abs(extents * scale)), f'mesh {path.name} bounding box'


def starting_config(urdf: str, base_frame: str = '', tip_frame: str = '',
                    search_paths: Sequence[str | Path] = ()) -> dict[str, Any]:
    """A configuration mapping for ``urdf`` that ``ArmConfig.from_mapping`` accepts.

    Raises:
        DescriptionError: the URDF is unusable for this chain.
    """
    loaded = load_chain(urdf, base_frame, tip_frame)
    model = loaded.model
    base_frame, tip_frame = model.base_link, model.tip_link
    root = parse_robot_xml(urdf)
    links = {link.get('name'): link for link in root.findall('link')}
    children = child_links(urdf)
    radii, notes = {}, {}
    for name in model.joint_names:
        radius, note = link_radius(links.get(children.get(name, '')), search_paths)
        radii[name], notes[name] = round(radius, 4), note
    solver, reason = choose_solver(model)
    arm = build_arm(model, ArmConfig())
    home = arm.home
    # Computed here once (1-2 s with meshes) so that no node has to at start-up.
    checker = arm.collision_checker(search_paths=search_paths)
    info = {
        'robot': model.name,
        'frames': loaded.report()[0],
        'urdf_notes': list(model.notes),
        'joints': [{'name': joint.name, 'lower': round(joint.lower, 6),
                    'upper': round(joint.upper, 6),
                    'velocity': None if math.isinf(joint.velocity) else joint.velocity}
                   for joint in model.joints],
        'solver_reason': reason,
        'reach_m': round(float(arm.workspace.max_reach), 4),
        'capsule_radii_from': {name: notes[name] for name in model.joint_names},
    }
    if checker.warnings:
        info['collision_warnings'] = list(checker.warnings)
    return {
        'arm': model.name,
        'frames': {'base': base_frame, 'tip': tip_frame},
        'home_pose': {name: round(float(v), 6) for name, v in zip(model.joint_names, home)},
        'ik': {'default_solver': solver},
        'motion': {'default_law': DEFAULT_MOTION_LAW},
        'safety': default_safety_section(model, radii),
        'collision': {'allowed_pairs': checker.allowed_pairs()},
        'info': info,
    }
