"""The SRDF as MoveIt reads it: groups (chains, joint lists, links, subgroups), group states
(named targets), end effectors and the pairs whose collisions are disabled.

``read_srdf`` reads the text alone; ``group_joints`` resolves a group to the movable joints of
a URDF tree (``common.urdf_tree``), as MoveIt's JointModelGroup does: a chain's joints base to
tip, a link's parent joint, subgroups recursively; fixed joints dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.etree import ElementTree

from arm_kinematics.common.urdf_tree import RobotTree


class SRDFError(ValueError):
    """The SRDF does not read or does not fit the URDF (one line naming the element)."""


@dataclass(frozen=True)
class GroupSpec:
    """One ``<group>`` as written: its chains (base, tip), joints, links and subgroups."""

    name: str
    chains: tuple[tuple[str, str], ...] = ()
    joints: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    subgroups: tuple[str, ...] = ()


@dataclass(frozen=True)
class EndEffector:
    name: str
    parent_link: str
    group: str
    parent_group: str = ''


@dataclass(frozen=True)
class SRDF:
    """What an SRDF says; empty when the user gave none."""

    name: str = ''
    groups: dict[str, GroupSpec] = field(default_factory=dict)
    # {group: {state: {joint: value}}}
    group_states: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    end_effectors: tuple[EndEffector, ...] = ()
    disabled_collisions: tuple[tuple[str, str, str], ...] = ()
    passive_joints: tuple[str, ...] = ()


def _name(element: ElementTree.Element, attribute: str, where: str) -> str:
    value = (element.get(attribute) or '').strip()
    if not value:
        raise SRDFError(f'SRDF: {where} has no "{attribute}" attribute')
    return value


def read_srdf(text: str) -> SRDF:
    """Parse SRDF ``text``.

    Raises:
        SRDFError: not XML, not a <robot>, or an element without its name attributes.
    """
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        raise SRDFError(f'SRDF: not readable XML: {error}') from None
    if root.tag != 'robot':
        raise SRDFError(f'SRDF: the root element is <{root.tag}>, not <robot>')
    groups: dict[str, GroupSpec] = {}
    for element in root.findall('group'):
        name = _name(element, 'name', '<group>')
        where = f'group "{name}"'
        chains = tuple((_name(c, 'base_link', f'{where} <chain>'),
                        _name(c, 'tip_link', f'{where} <chain>'))
                       for c in element.findall('chain'))
        groups[name] = GroupSpec(
            name, chains,
            tuple(_name(j, 'name', f'{where} <joint>') for j in element.findall('joint')),
            tuple(_name(link, 'name', f'{where} <link>') for link in element.findall('link')),
            tuple(_name(g, 'name', f'{where} <group>') for g in element.findall('group')))
    states: dict[str, dict[str, dict[str, float]]] = {}
    for element in root.findall('group_state'):
        name = _name(element, 'name', '<group_state>')
        group = _name(element, 'group', f'group_state "{name}"')
        values: dict[str, float] = {}
        for joint in element.findall('joint'):
            joint_name = _name(joint, 'name', f'group_state "{name}" <joint>')
            text_value = (joint.get('value') or '').split()
            try:
                values[joint_name] = float(text_value[0])
            except (IndexError, ValueError):
                raise SRDFError(f'SRDF: group_state "{name}" joint "{joint_name}": value '
                                f'{joint.get("value")!r} is not a number') from None
        states.setdefault(group, {})[name] = values
    effectors = tuple(EndEffector(_name(e, 'name', '<end_effector>'),
                                  _name(e, 'parent_link', '<end_effector>'),
                                  _name(e, 'group', '<end_effector>'),
                                  e.get('parent_group', '') or '')
                      for e in root.findall('end_effector'))
    disabled = tuple((_name(d, 'link1', '<disable_collisions>'),
                      _name(d, 'link2', '<disable_collisions>'), d.get('reason', '') or '')
                     for d in root.findall('disable_collisions'))
    passive = tuple(_name(p, 'name', '<passive_joint>') for p in root.findall('passive_joint'))
    return SRDF(root.get('name', '') or '', groups, states, effectors, disabled, passive)


def group_joints(srdf: SRDF, group: str, tree: RobotTree,
                 _seen: frozenset[str] = frozenset()) -> list[str]:
    """The movable joints of ``group`` in ``tree``, in the order MoveIt lists them.

    Raises:
        SRDFError: an unknown group, joint or link, a chain that is not one, a cycle of
            subgroups.
    """
    spec = srdf.groups.get(group)
    if spec is None:
        raise SRDFError(f'SRDF: group "{group}" is not defined')
    if group in _seen:
        raise SRDFError(f'SRDF: group "{group}" contains itself')
    joints: list[str] = []

    def add(name: str) -> None:
        if name not in joints and tree.joints[name].moves:
            joints.append(name)
    by_child = tree.by_child
    for base, tip in spec.chains:
        try:
            chain = tree.chain(base, tip)
        except ValueError as error:
            raise SRDFError(f'SRDF: group "{group}" chain: {error}') from None
        for joint in chain:
            add(joint.name)
    for name in spec.joints:
        if name not in tree.joints:
            raise SRDFError(f'SRDF: group "{group}" names joint "{name}", which is not in '
                            'the URDF')
        add(name)
    for link in spec.links:
        if link not in tree.links:
            raise SRDFError(f'SRDF: group "{group}" names link "{link}", which is not in '
                            'the URDF')
        joint = by_child.get(link)
        if joint is not None:
            add(joint.name)
    for sub in spec.subgroups:
        for name in group_joints(srdf, sub, tree, _seen | {group}):
            add(name)
    return joints
