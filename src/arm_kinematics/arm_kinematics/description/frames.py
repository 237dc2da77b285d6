"""Default frames of a URDF: the chain's base and tip when nobody names them."""

from __future__ import annotations

from xml.etree import ElementTree

from arm_kinematics.model.arm_model import DescriptionError


def default_frames(urdf: str) -> tuple[str, str]:
    """(base, tip) of a URDF when neither parameter nor configuration names them.

    The base is the tree's root link; the tip is ``tool0`` when the tree has it (REP-199's
    tool flange), else the one leaf link at the end of the most movable joints from the root.

    Raises:
        DescriptionError: the XML does not parse or has no single root link.
    """
    try:
        root = ElementTree.fromstring(urdf)
    except ElementTree.ParseError as error:
        raise DescriptionError(f'robot_description is not valid XML: {error}') from None
    links = [link.get('name') for link in root.findall('link')]
    children: dict[str, list[tuple[str, bool]]] = {}
    has_parent = set()
    for joint in root.findall('joint'):
        parent, child = joint.find('parent'), joint.find('child')
        if parent is None or child is None:
            continue
        moving = joint.get('type', 'fixed') != 'fixed'
        children.setdefault(parent.get('link'), []).append((child.get('link'), moving))
        has_parent.add(child.get('link'))
    roots = [link for link in links if link not in has_parent]
    if len(roots) != 1:
        raise DescriptionError(f'the description has {len(roots)} root links '
                               f'({", ".join(map(str, roots)) or "none"}); expected one')
    base = roots[0]
    if 'tool0' in links:
        return base, 'tool0'
    best: tuple[int, int, str] = (-1, -1, base)
    stack = [(base, 0, 0)]
    seen = set()
    while stack:
        link, moving, depth = stack.pop()
        if link in seen:
            continue
        seen.add(link)
        best = max(best, (moving, depth, link), key=lambda entry: entry[:2])
        for child, is_moving in children.get(link, ()):
            stack.append((child, moving + int(is_moving), depth + 1))
    if best[0] <= 0:
        raise DescriptionError(f'no movable joint below the root link "{base}": name the '
                               'chain with base_frame and tip_frame')
    return base, best[2]


def child_links(urdf: str) -> dict[str, str]:
    """{joint name: child link name} of a URDF ({} when it does not parse)."""
    try:
        root = ElementTree.fromstring(urdf)
    except ElementTree.ParseError:
        return {}
    return {joint.get('name'): joint.find('child').get('link')
            for joint in root.findall('joint') if joint.find('child') is not None}

