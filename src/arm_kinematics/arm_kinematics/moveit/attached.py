"""Attached objects as part of the robot: each becomes a link of the URDF, fixed to the link
it is attached to, so the project's collision checker, IK and planner check it like any link
(against the world and the other links) without a new kind of shape. The link it hangs on
and the touch links may touch it (allowed pairs), as MoveIt's touch_links.

The chain (its joints, base and tip) is unchanged: the object's link hangs off it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
import math
import re
from xml.etree import ElementTree

import numpy as np

from arm_kinematics.arm import Arm, build_arm, load_config_chain
from arm_kinematics.moveit.scene_diff import Attached, Mesh, PlanningSceneState

PREFIX = 'attached__'


def link_name(object_id: str) -> str:
    """The URDF link of attached object ``object_id``."""
    return PREFIX + re.sub(r'[^A-Za-z0-9_]', '_', object_id)


def _rpy(rotation: np.ndarray) -> tuple[float, float, float]:
    """URDF roll, pitch, yaw (fixed axes X, Y, Z) of a rotation matrix."""
    pitch = math.asin(max(-1.0, min(1.0, -float(rotation[2, 0]))))
    if abs(math.cos(pitch)) > 1e-9:
        roll = math.atan2(rotation[2, 1], rotation[2, 2])
        yaw = math.atan2(rotation[1, 0], rotation[0, 0])
    else:     # gimbal lock: the roll is folded into the yaw
        roll, yaw = 0.0, math.atan2(-rotation[0, 1], rotation[1, 1])
    return roll, pitch, yaw


def _origin(parent: ElementTree.Element, pose: np.ndarray) -> None:
    ElementTree.SubElement(parent, 'origin', {
        'xyz': ' '.join(repr(float(v)) for v in pose[:3, 3]),
        'rpy': ' '.join(repr(float(v)) for v in _rpy(pose[:3, :3]))})


def attached_urdf(urdf: str, attached: Mapping[str, Attached],
                  state: PlanningSceneState) -> str:
    """``urdf`` with every attached object as a link fixed to its link (shapes in the
    object's frame; inline meshes as the STL files the scene writes)."""
    if not attached:
        return urdf
    root = ElementTree.fromstring(urdf)
    for object_id, item in attached.items():
        name = link_name(object_id)
        link = ElementTree.SubElement(root, 'link', {'name': name})
        for shape in (*item.spec.primitives, *item.spec.meshes):
            collision = ElementTree.SubElement(link, 'collision')
            _origin(collision, shape.pose)
            geometry = ElementTree.SubElement(collision, 'geometry')
            if isinstance(shape, Mesh):
                ElementTree.SubElement(geometry, 'mesh', {
                    'filename': 'file://' + state.mesh_file(shape)})
            elif shape.kind == 'box':
                ElementTree.SubElement(geometry, 'box', {
                    'size': ' '.join(repr(float(d)) for d in shape.dimensions[:3])})
            elif shape.kind == 'sphere':
                ElementTree.SubElement(geometry, 'sphere',
                                       {'radius': repr(float(shape.dimensions[0]))})
            else:
                ElementTree.SubElement(geometry, 'cylinder', {
                    'length': repr(float(shape.dimensions[0])),
                    'radius': repr(float(shape.dimensions[1]))})
        joint = ElementTree.SubElement(root, 'joint', {'name': f'{name}_joint',
                                                       'type': 'fixed'})
        ElementTree.SubElement(joint, 'parent', {'link': item.link})
        ElementTree.SubElement(joint, 'child', {'link': name})
        _origin(joint, item.spec.pose)
    return ElementTree.tostring(root, encoding='unicode')


def arm_with_attached(arm: Arm, attached: Mapping[str, Attached], state: PlanningSceneState,
                      checker: object) -> tuple[Arm, str]:
    """The arm whose checkers see the attached objects, and its URDF.

    ``checker`` is a collision checker of ``arm`` without them: its allowed pairs stay, and
    each object may touch its link and its touch links (those of its links with collision
    shapes). Without attached objects: ``arm`` itself.

    Raises:
        ValueError (DescriptionError, ArmConfigError): the URDF or the pairs do not fit.
    """
    if not attached:
        return arm, arm.model.urdf
    urdf = attached_urdf(arm.model.urdf, attached, state)
    model = load_config_chain(urdf, arm.config, arm.model.base_link, arm.model.tip_link).model
    data = dict(arm.config.data)
    collision = dict(data.get('collision') or {})
    pairs = [list(entry) for entry in checker.allowed]
    links = set(checker.links)
    for object_id, item in attached.items():
        name = link_name(object_id)
        for other in dict.fromkeys((item.link, *item.touch_links)):
            if other in links:
                pairs.append([name, other, 'user'])
        for other_id in attached:          # two objects held together may touch
            if other_id < object_id:
                pairs.append([link_name(other_id), name, 'user'])
    collision['allowed_pairs'] = pairs
    data['collision'] = collision
    return build_arm(model, replace(arm.config, data=data), arm.label), urdf
