"""The whole URDF tree read once, as urdfdom reads it: every joint checked, every value named.

A description that the URDF specification and urdfdom accept loads (RELIABILITY case 24):
a ``<limit>`` without ``lower``/``upper`` reads 0 (the specification's default), a missing
or zero ``velocity`` is unknown (the configuration's default speed applies), ``effort`` is
optional, ``lower == upper`` makes the joint locked (fixed at that value), attributes with a
namespace prefix the file never declares (Drake's ``drake:``) and blank lines before the XML
declaration are accepted. Two conventions of other tools are read as they mean them: a
revolute ``<limit lower="0" upper="0" effort="0" velocity="0"/>`` (CAD exporters' "not set",
SolidWorks' above all) and a revolute ``lower > upper`` (pybullet's "no limit") make a
continuous joint, each only when every attribute it reads is written in the file (a
``lower="0.5"`` without ``upper`` is not pybullet's "no limit": the default upper of 0 below
it is refused). Each assumption is a warning naming the joint, what was assumed and how to
write the real limits; ``read_tree(text, strict=True)`` refuses both conventions instead
(an arm configuration's ``strict_urdf: true``). What is broken (a
number that is not one, a cycle, a mimic of an unknown joint) raises DescriptionError in one
line naming the joint or link and the attribute.
"""

from __future__ import annotations

from dataclasses import dataclass
import functools
import math
import re
from xml.etree import ElementTree

import numpy as np

from arm_kinematics.common.transforms import make_transform, rpy_to_matrix

# Joint types of the URDF specification; the chain moves the first three.
MOVING_TYPES = ('revolute', 'continuous', 'prismatic')
JOINT_TYPES = (*MOVING_TYPES, 'fixed', 'floating', 'planar')
_PREFIX = re.compile(r'[\s<]([A-Za-z_][\w.-]*):[A-Za-z_][\w.-]*\s*=?')
_DECLARED = re.compile(r'xmlns:([A-Za-z_][\w.-]*)\s*=')


class DescriptionError(ValueError):
    """The robot description cannot be turned into a usable arm model."""


@dataclass(frozen=True)
class Mimic:
    """``position = multiplier * leader + offset`` (rad or m)."""

    leader: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class JointSpec:
    """One ``<joint>`` as read (SI units; ``velocity`` None when the URDF does not give one).

    ``lower``/``upper`` are −inf/inf for a continuous joint; a locked joint has
    ``lower == upper`` and moves nothing.
    """

    name: str
    kind: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    lower: float
    upper: float
    velocity: float | None
    effort: float | None
    mimic: Mimic | None = None

    @property
    def locked(self) -> bool:
        """A revolute or prismatic joint whose limits leave it no travel (lower == upper)."""
        return self.kind in ('revolute', 'prismatic') and self.lower == self.upper

    @property
    def moves(self) -> bool:
        """True for a revolute, continuous or prismatic joint that is not locked."""
        return self.kind in MOVING_TYPES and not self.locked


@dataclass(frozen=True)
class RobotTree:
    """Links and joints of a URDF, checked as a tree.

    Attributes:
        name: the robot's name.
        links: link names in file order.
        joints: {name: JointSpec} in file order.
        warnings: what was assumed, one line each, naming the joint.
    """

    name: str
    links: tuple[str, ...]
    joints: dict[str, JointSpec]
    warnings: tuple[str, ...]

    @property
    def by_child(self) -> dict[str, JointSpec]:
        return {joint.child: joint for joint in self.joints.values()}

    def children(self) -> dict[str, list[JointSpec]]:
        """{link: the joints hanging from it}, in file order."""
        out: dict[str, list[JointSpec]] = {}
        for joint in self.joints.values():
            out.setdefault(joint.parent, []).append(joint)
        return out

    def roots(self) -> list[str]:
        """Links with no parent joint."""
        has_parent = {joint.child for joint in self.joints.values()}
        return [link for link in self.links if link not in has_parent]

    def chain(self, base: str, tip: str) -> list[JointSpec]:
        """The joints from ``base`` down to ``tip``, base first.

        Raises:
            DescriptionError: a frame is not a link, or ``tip`` is not below ``base``.
        """
        for frame in (base, tip):
            if frame not in self.links:
                raise DescriptionError(f'link "{frame}" is not in the description '
                                       f'(links: {", ".join(sorted(self.links))})')
        by_child = self.by_child
        chain = []
        link = tip
        while link != base:
            joint = by_child.get(link)
            if joint is None:
                raise DescriptionError(f'no joint chain from "{base}" to "{tip}" (link '
                                       f'"{link}" has no parent joint; is "{tip}" below '
                                       f'"{base}"?)')
            chain.append(joint)
            link = joint.parent
        chain.reverse()
        return chain

    def leader_of(self, name: str) -> tuple[str, float, float]:
        """(independent joint, multiplier, offset) that drives ``name`` (itself, 1, 0 when it
        mimics nothing); mimics of mimics are composed. The tree has no mimic cycle."""
        multiplier, offset = 1.0, 0.0
        joint = self.joints[name]
        while joint.mimic is not None:
            mimic = joint.mimic
            offset = multiplier * mimic.offset + offset
            multiplier *= mimic.multiplier
            joint = self.joints[mimic.leader]
        return joint.name, multiplier, offset


def parse_robot_xml(text: str) -> ElementTree.Element:
    """The ``<robot>`` element of URDF text, read as leniently as urdfdom (TinyXML) reads it.

    Raises:
        DescriptionError: not XML, or the root is not ``<robot>``.
    """
    if not isinstance(text, str) or not text.strip():
        raise DescriptionError('robot_description is empty')
    text = text.lstrip('\ufeff \t\r\n')
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        if 'unbound prefix' not in str(error):
            raise DescriptionError(f'robot_description is not valid XML: {error}') from None
        try:
            root = ElementTree.fromstring(lenient_text(text))
        except ElementTree.ParseError:
            raise DescriptionError(f'robot_description is not valid XML: {error}') from None
    if root.tag.startswith('{'):
        # A default namespace (xmlns="...") on <robot>: TinyXML, and so urdfdom, reads the
        # plain element names. Only that namespace: a prefixed <xacro:...> stays itself.
        default = root.tag.split('}', 1)[0] + '}'
        for element in root.iter():
            if isinstance(element.tag, str) and element.tag.startswith(default):
                element.tag = element.tag[len(default):]
    if root.tag != 'robot':
        raise DescriptionError(f'root element is <{root.tag}>, expected <robot>')
    unexpanded = _xacro_left(root)
    if unexpanded:
        raise DescriptionError(f'robot_description is xacro, not URDF ({unexpanded}): expand '
                               'it first (xacro arm.urdf.xacro > arm.urdf), or pass the .xacro '
                               'file to a command that expands it (arm_config, make demo URDF=)')
    return root


def _xacro_left(root: ElementTree.Element) -> str:
    """What shows that this text is xacro still to expand ('' when nothing does): a
    ``<xacro:...>`` element or a ``${...}`` / ``$(...)`` substitution in an attribute. (An
    expanded file may keep the ``xmlns:xacro`` declaration; that alone is no sign.)"""
    for element in root.iter():
        tag = element.tag if isinstance(element.tag, str) else ''
        if tag.startswith('{') and 'xacro' in tag.split('}', 1)[0]:
            return f'<xacro:{tag.split("}", 1)[1]}>'
        for name, value in element.attrib.items():
            if '${' in value or '$(' in value:
                return f'<{tag} {name}="{value}">'
    return ''


def lenient_text(text: str) -> str:
    """URDF text a strict XML parser reads as urdfdom reads the original: leading blank lines
    (before the XML declaration) dropped, and every namespace prefix the file uses without
    declaring it (vendor extensions such as ``drake:`` attributes, which urdfdom ignores)
    declared on ``<robot>``. For other readers too (yourdfpy in the lab)."""
    text = text.lstrip('\ufeff \t\r\n')
    declared = set(_DECLARED.findall(text)) | {'xml', 'xmlns'}
    used = {prefix for prefix in _PREFIX.findall(text) if prefix not in declared}
    match = re.search(r'<robot\b', text)
    if not used or match is None:
        return text
    names = ' '.join(f'xmlns:{prefix}="urn:undeclared:{prefix}"' for prefix in sorted(used))
    return f'{text[:match.end()]} {names}{text[match.end():]}'


@functools.lru_cache(maxsize=4)
def read_tree(text: str, strict: bool = False) -> RobotTree:
    """Read and check every link and joint of a URDF (the last few texts are kept: a node
    reads its URDF for the frames, the chain, the passive joints and the collision links;
    the result is shared, not to be changed). ``strict``: refuse the limits other tools'
    conventions would read (module doc) instead of reading them with a warning.

    Raises:
        DescriptionError: in one line naming the joint or link and the attribute.
    """
    root = parse_robot_xml(text)
    links: list[str] = []
    known: set[str] = set()        # the same names as a set: linear in the links
    for link in root.findall('link'):
        name = link.get('name')
        if not name or not name.strip():
            raise DescriptionError('a <link> has no name')
        if name in known:
            raise DescriptionError(f'link "{name}" is declared twice')
        links.append(name)
        known.add(name)
    warnings: list[str] = []
    joints: dict[str, JointSpec] = {}
    children: dict[str, str] = {}
    for element in root.findall('joint'):
        joint = _read_joint(element, known, warnings, strict)
        if joint.name in joints:
            raise DescriptionError(f'joint "{joint.name}" is declared twice')
        if joint.child in children:
            raise DescriptionError(f'link "{joint.child}" has two parents (joints '
                                   f'"{children[joint.child]}" and "{joint.name}"): a URDF '
                                   'is a tree')
        children[joint.child] = joint.name
        joints[joint.name] = joint
    tree = RobotTree(root.get('name', ''), tuple(links), joints, tuple(warnings))
    _check_cycles(tree)
    _check_mimics(tree)
    return tree


def _check_cycles(tree: RobotTree) -> None:
    by_child = tree.by_child
    # Links whose way up ends at a root: a later walk stops there, so the check is linear in
    # the links (a walk from every link to the root took seconds for a 3000-joint chain).
    rooted: set[str] = set()
    for start in by_child:
        link, seen = start, set()
        while link in by_child and link not in rooted:
            if link in seen:
                raise DescriptionError(f'the joints form a cycle through link "{link}" '
                                       f'(joint "{by_child[link].name}")')
            seen.add(link)
            link = by_child[link].parent
        rooted |= seen


def _check_mimics(tree: RobotTree) -> None:
    for joint in tree.joints.values():
        if joint.mimic is None:
            continue
        path = [joint.name]
        current = joint
        while current.mimic is not None:
            leader = tree.joints.get(current.mimic.leader)
            if leader is None:
                raise DescriptionError(f'joint "{current.name}" mimics unknown joint '
                                       f'"{current.mimic.leader}"')
            if leader.kind not in MOVING_TYPES:
                raise DescriptionError(f'joint "{current.name}" mimics joint "{leader.name}", '
                                       f'which is {leader.kind} (a leader must move)')
            if leader.name in path:
                cycle = ' -> '.join([*path[path.index(leader.name):], leader.name])
                raise DescriptionError(f'mimic joints form a cycle: {cycle}')
            path.append(leader.name)
            current = leader


def _read_joint(element: ElementTree.Element, links: set[str],
                warnings: list[str], strict: bool = False) -> JointSpec:
    name = element.get('name')
    if not name or not name.strip():
        raise DescriptionError('a <joint> has no name')
    where = f'joint "{name}"'
    kind = element.get('type')
    if kind not in JOINT_TYPES:
        raise DescriptionError(f'{where}: type="{kind}" is not a URDF joint type '
                               f'({", ".join(JOINT_TYPES)})')
    ends = []
    for tag in ('parent', 'child'):
        end = element.find(tag)
        link = end.get('link') if end is not None else None
        if not link or not link.strip():
            raise DescriptionError(f'{where} lacks <{tag} link="...">')
        if link not in links:
            raise DescriptionError(f'{where}: <{tag} link="{link}"> is not a link of the '
                                   'description')
        ends.append(link)
    origin = read_origin(element.find('origin'), where)
    axis = np.array([1.0, 0.0, 0.0])
    lower, upper, velocity, effort = -math.inf, math.inf, None, None
    mimic = None
    if kind in MOVING_TYPES:
        axis = _read_axis(element.find('axis'), where)
        lower, upper, velocity, effort = _read_limit(element.find('limit'), kind, where,
                                                     warnings, strict)
        if kind == 'revolute' and math.isinf(upper):
            # Read as having no position limit (see _read_limit): a continuous joint.
            kind = 'continuous'
        mimic = _read_mimic(element.find('mimic'), where)
    return JointSpec(name, kind, ends[0], ends[1], origin, axis, lower, upper, velocity,
                     effort, mimic)


def numbers(text: str | None, count: int, what: str) -> list[float]:
    """``count`` finite numbers from a space-separated attribute.

    Raises:
        DescriptionError: ``what`` named, with the text found.
    """
    try:
        values = [float(v) for v in (text or '').split()]
    except ValueError:
        values = []
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise DescriptionError(f'{what}="{text}" is not {count} finite number'
                               f'{"s" * (count > 1)}')
    return values


def read_origin(element: ElementTree.Element | None, where: str) -> np.ndarray:
    """The 4×4 transform of an ``<origin>`` (identity when absent), errors naming ``where``."""
    if element is None:
        return np.eye(4)
    xyz = numbers(element.get('xyz', '0 0 0'), 3, f'{where}: <origin> xyz')
    rpy = numbers(element.get('rpy', '0 0 0'), 3, f'{where}: <origin> rpy')
    return make_transform(rpy_to_matrix(*rpy), np.array(xyz))


def _read_axis(element: ElementTree.Element | None, where: str) -> np.ndarray:
    if element is None:
        return np.array([1.0, 0.0, 0.0])
    text = element.get('xyz', '1 0 0')
    try:
        axis = np.array(numbers(text, 3, '<axis> xyz'))
    except DescriptionError as error:
        raise DescriptionError(f'{where} has a degenerate axis: {error}') from None
    norm = float(np.linalg.norm(axis))
    if norm < 1e-12:
        raise DescriptionError(f'{where} has a degenerate axis: <axis> xyz="{text}" is zero')
    return axis / norm


def _limit_number(element: ElementTree.Element, attribute: str, where: str) -> float | None:
    text = element.get(attribute)
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise DescriptionError(f'{where}: <limit> {attribute}="{text}" is not a number') \
            from None
    if not math.isfinite(value):
        raise DescriptionError(f'{where}: <limit> {attribute}="{text}" is not finite')
    return value


def _read_limit(element: ElementTree.Element | None, kind: str, where: str,
                warnings: list[str], strict: bool = False
                ) -> tuple[float, float, float | None, float | None]:
    if element is None:
        if kind != 'continuous':
            raise DescriptionError(f'{kind} {where} has no <limit> (lower, upper, velocity)')
        return -math.inf, math.inf, None, None
    lower = _limit_number(element, 'lower', where)
    upper = _limit_number(element, 'upper', where)
    velocity = _limit_number(element, 'velocity', where)
    effort = _limit_number(element, 'effort', where)
    if velocity is not None and velocity < 0.0:
        raise DescriptionError(f'{where}: <limit> velocity="{element.get("velocity")}" is '
                               'negative')
    if effort is not None and effort < 0.0:
        raise DescriptionError(f'{where}: <limit> effort="{element.get("effort")}" is '
                               'negative')
    written = velocity
    if not velocity:
        velocity = None
    if kind == 'continuous':
        return -math.inf, math.inf, velocity, effort
    how = ('write the real ones as <limit lower=".." upper=".." velocity=".." effort="..">, '
           'or type="continuous" for a joint that turns without end')
    # SolidWorks' sw_urdf_exporter writes every limit as 0 when the user set none: "not set",
    # not a locked joint (a locked one keeps a velocity or effort of its own). Only when all
    # four are written as 0: a missing attribute is the specification's default, not this.
    if kind == 'revolute' and lower == upper == effort == written == 0.0:
        if strict:
            raise DescriptionError(f'{where}: <limit lower="0" upper="0" effort="0" '
                                   'velocity="0"> (an exporter\'s "not set") is refused '
                                   f'(strict URDF reading): {how}')
        warnings.append(f'{where}: <limit lower="0" upper="0" effort="0" velocity="0"> (an '
                        'exporter\'s "not set") read as a continuous joint: assumed no '
                        "position limit and the default speed (SolidWorks' convention); "
                        f'to state its limits {how}')
        return -math.inf, math.inf, None, None
    missing = [name for name, value in (('lower', lower), ('upper', upper)) if value is None]
    if missing:
        lower = 0.0 if lower is None else lower
        upper = 0.0 if upper is None else upper
        if lower > upper:
            # Not pybullet's "no limit": that needs both written. The default makes an
            # empty range, which no reading of the file can mean.
            raise DescriptionError(
                f'{where}: <limit> has no {" or ".join(missing)}, and the URDF default of 0 '
                f'makes lower {lower:g} above upper {upper:g}: {how}')
        warnings.append(f'{where}: <limit> has no {" or ".join(missing)}; read as 0 (the URDF '
                        f'default), limits [{lower:g}, {upper:g}]; if they are not, {how}')
        return lower, upper, velocity, effort
    assert lower is not None and upper is not None
    if lower > upper:
        if kind == 'prismatic':
            raise DescriptionError(f'{where}: lower limit {lower} is not below upper limit '
                                   f'{upper} (read as "no limit" on a revolute joint, as '
                                   'pybullet does; a prismatic joint needs its travel)')
        if strict:
            raise DescriptionError(f'{where}: lower limit {lower:g} is above upper limit '
                                   f'{upper:g} (pybullet\'s "no limit") and is refused '
                                   f'(strict URDF reading): {how}')
        # pybullet's convention: lower > upper means the joint is not limited.
        warnings.append(f'{where}: lower limit {lower:g} is above upper limit {upper:g}; read '
                        'as "no limit" (pybullet\'s convention): a continuous joint is assumed; '
                        f'to state its limits {how}')
        return -math.inf, math.inf, velocity, effort
    return lower, upper, velocity, effort


def _read_mimic(element: ElementTree.Element | None, where: str) -> Mimic | None:
    if element is None:
        return None
    leader = element.get('joint')
    if not leader:
        raise DescriptionError(f'{where}: <mimic> has no joint attribute')
    values = []
    for attribute, default in (('multiplier', 1.0), ('offset', 0.0)):
        text = element.get(attribute)
        values.append(default if text is None else
                      numbers(text, 1, f'{where}: <mimic> {attribute}')[0])
    return Mimic(leader, values[0], values[1])
