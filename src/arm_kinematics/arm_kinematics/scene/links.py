"""The robot's collision bodies: each link of the chain (and every link hanging off it) with
its URDF ``<collision>`` shapes, attached to one frame of ``ArmModel.frames``.

``ArmModel`` folds fixed joints into the next movable joint, so a link's pose is not one of its
frames: it is that frame times a constant offset, found here by walking the URDF joint tree
(fixed joints, and joints outside the chain such as a gripper's fingers held at their zero
position clamped into the limits).

Units: metres, radians.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import logging
from pathlib import Path
from xml.etree import ElementTree

import numpy as np

from arm_kinematics.common.transforms import make_transform
from arm_kinematics.common.urdf_tree import (
    JointSpec,
    MOVING_TYPES,
    parse_robot_xml,
    read_tree,
    RobotTree,
)
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.model.chain import motion_matrix, rest_position
from arm_kinematics.scene.shapes import (
    box_shape,
    capsule_shape,
    cylinder_shape,
    link_shapes,
    Shape,
    ShapeError,
    sphere_shape,
)

LOG = logging.getLogger('arm_ik.collision')
# Radius of the fallback capsule of a link whose mesh is missing and whose config gives no
# fallback shape, m (the same as arm.DEFAULT_LINK_RADIUS, the capsule of the safety section).
FALLBACK_RADIUS = 0.04


@dataclass(frozen=True, eq=False)
class Body:
    """One link with collision shapes.

    Attributes:
        name: the URDF link name.
        frame: index into the extended frames (0: the base, i + 1: joint i's frame).
        offset: 4×4 link pose in that frame (fixed joints folded in).
        shapes: its shapes, posed in the link frame.
    """

    name: str
    frame: int
    offset: np.ndarray
    shapes: tuple[Shape, ...]


@dataclass(frozen=True)
class RobotBodies:
    """Every collision body of a chain and the URDF tree around it.

    Attributes:
        bodies: links with at least one shape, base to tip.
        parent: {link: parent link} over the URDF tree.
        links: every link attached to the chain, with or without shapes.
        warnings: what was replaced or missing (also logged).
    """

    bodies: tuple[Body, ...]
    parent: dict[str, str]
    links: tuple[str, ...]
    warnings: tuple[str, ...]

    def adjacent_pairs(self) -> set[frozenset[str]]:
        """Pairs of bodies joined by one joint, links without shapes looked through (the
        hand of a Panda is adjacent to link 7 across the shapeless link 8)."""
        with_shapes = {body.name for body in self.bodies}
        pairs = set()
        for body in self.bodies:
            link = self.parent.get(body.name)
            while link is not None and link not in with_shapes:
                link = self.parent.get(link)
            if link is not None:
                pairs.add(frozenset((body.name, link)))
        return pairs


def _joint_motion(tree: RobotTree, joint: JointSpec) -> np.ndarray:
    """Pose of a joint no one commands: where it rests (0 clamped into its limits), a mimic
    joint where its leader's rest puts it."""
    if joint.kind not in MOVING_TYPES:
        return np.eye(4)
    leader, multiplier, offset = tree.leader_of(joint.name)
    value = multiplier * rest_position(tree.joints[leader]) + offset
    return motion_matrix(joint, value)


def fallback_shape(spec: Mapping, where: str) -> Shape:
    """A shape from a config mapping {type: box|sphere|cylinder, size|radius|length, xyz}.

    Raises:
        ShapeError: an unknown type or a bad size.
    """
    if not isinstance(spec, Mapping):
        raise ShapeError(f'{where}: must be a mapping, got {spec!r}')
    kind = spec.get('type')
    origin = make_transform(np.eye(3), np.asarray(spec.get('xyz', (0.0, 0.0, 0.0)), float))
    if kind == 'box':
        return box_shape(spec.get('size'), origin)
    if kind == 'sphere':
        return sphere_shape(spec.get('radius'), origin)
    if kind == 'cylinder':
        return cylinder_shape(spec.get('radius'), spec.get('length'), origin)
    raise ShapeError(f'{where}: type must be box, sphere or cylinder, got {kind!r}')


def _capsule_to(point: np.ndarray, note: str) -> Shape:
    """A FALLBACK_RADIUS capsule from the link origin to ``point`` (link frame)."""
    length = float(np.linalg.norm(point))
    if length < 1e-9:
        return capsule_shape(FALLBACK_RADIUS, 0.0, None, note)
    z = point / length
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    rotation = np.column_stack([x, np.cross(z, x), z])
    return capsule_shape(FALLBACK_RADIUS, length, make_transform(rotation, point / 2), note)


@dataclass(frozen=True)
class LinkTree:
    """Where every link of a URDF hangs on ``ArmModel``'s frames.

    Attributes:
        attach: {link: (extended frame index, 4×4 link pose in that frame)} of every link of
            the chain and hanging off it, base to tip (index 0: the base, i + 1: joint i).
        parent: {link: parent link} over the URDF tree.
        elements: {link: its URDF element}.
    """

    attach: dict[str, tuple[int, np.ndarray]]
    parent: dict[str, str]
    elements: dict[str, ElementTree.Element]

    def link_poses(self, model: ArmModel, q: np.ndarray) -> dict[str, np.ndarray]:
        """{link: 4×4 pose in the base frame} of every attached link at ``q`` (rad)."""
        frames = model.motion_frames(q)
        extended = [np.eye(4), *frames[:model.frame_count]]
        return {link: extended[index] @ offset for link, (index, offset) in self.attach.items()}


def link_tree(model: ArmModel, urdf: str) -> LinkTree:
    """Walk the URDF: each link's frame and offset (fixed and locked joints folded in, joints
    outside the chain where they rest: 0 clamped into the limits, a mimic joint where its
    leader puts it).

    Raises:
        DescriptionError: the URDF does not read or does not hold the model's chain.
    """
    tree = read_tree(urdf)
    root = parse_robot_xml(urdf)
    link_elements = {link.get('name'): link for link in root.findall('link')}
    parent = {joint.child: joint.parent for joint in tree.joints.values()}
    children = tree.children()
    chain = tree.chain(model.base_link, model.tip_link)
    moving = {*model.joint_names, *model.followers}
    # (frame index, offset) of every chain link: a moving joint (a variable or a mimic
    # joint) starts a new frame of ``model.motion_frames``.
    attach: dict[str, tuple[int, np.ndarray]] = {model.base_link: (0, np.eye(4))}
    frame, offset = 0, np.eye(4)
    chain_joints = set()
    for joint in chain:
        chain_joints.add(joint.name)
        if joint.name in moving:
            frame, offset = frame + 1, np.eye(4)
        else:
            offset = offset @ joint.origin @ _joint_motion(tree, joint)
        attach[joint.child] = (frame, offset)
    # Links hanging off the chain through joints that are not part of it.
    stack = list(attach)
    while stack:
        link = stack.pop()
        for joint in children.get(link, ()):
            if joint.name in chain_joints or joint.child in attach:
                continue
            index, pose = attach[link]
            attach[joint.child] = (index, pose @ joint.origin @ _joint_motion(tree, joint))
            stack.append(joint.child)
    return LinkTree(attach, parent, link_elements)


def robot_bodies(model: ArmModel, urdf: str, search_paths: Sequence[str | Path] = (),
                 fallbacks: Mapping[str, Mapping] | None = None) -> RobotBodies:
    """The collision bodies of ``model``'s chain and of every link hanging off it.

    Args:
        model: the chain (its frames pose the bodies).
        urdf: the URDF text ``model`` was built from.
        search_paths: folders where package:// and relative mesh files are looked for.
        fallbacks: {link: shape mapping} used where a link's mesh cannot be loaded; without
            one, a FALLBACK_RADIUS capsule from the link origin to the next joint.

    Raises:
        DescriptionError: the URDF does not parse or does not hold the model's chain.
        ShapeError: a fallback mapping is malformed.
    """
    tree = link_tree(model, urdf)
    attach, parent, link_elements = tree.attach, tree.parent, tree.elements
    fallbacks = fallbacks or {}
    warnings: list[str] = []
    bodies = []
    order = {name: position for position, name in enumerate(attach)}
    for name in sorted(attach, key=lambda n: (attach[n][0], order[n])):
        element = link_elements.get(name)
        if element is None:
            continue
        index, pose = attach[name]
        if name in fallbacks:
            fallback = fallback_shape(fallbacks[name], f'collision.fallback_shapes.{name}')
        else:
            fallback = _capsule_to(_next_joint(model, index, pose),
                                   f'{FALLBACK_RADIUS} m capsule to the next joint')
        shapes = link_shapes(element, search_paths, fallback, warnings)
        if shapes:
            bodies.append(Body(name, index, pose, tuple(shapes)))
    for warning in warnings:
        LOG.warning('collision geometry: %s', warning)
    return RobotBodies(tuple(bodies), parent, tuple(attach), tuple(warnings))


def _next_joint(model: ArmModel, index: int, pose: np.ndarray) -> np.ndarray:
    """The next movable joint's origin (or the tip) in the frame of a link at ``pose`` of
    extended frame ``index``."""
    step = model.motions[index].joint.offset if index < model.frame_count else model.tip_offset
    return (np.linalg.inv(pose) @ step[:, 3])[:3]
