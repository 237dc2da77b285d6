"""A URDF with some of its joints changed, for tests of what the code reads from the URDF
(axis signs, limits, origins). Plain ElementTree: no ROS, the core's tests use it."""

from __future__ import annotations

from xml.etree import ElementTree


def edited_urdf(urdf: str, edits: dict[str, dict[str, str]]) -> str:
    """``urdf`` with attributes of joint sub-elements set: {joint: {'tag/attribute': value}},
    e.g. {'elbow_pitch': {'axis/xyz': '0 -1 0', 'limit/lower': '-0.3'}}; a missing
    sub-element is added. Joints not named stay as they are."""
    root = ElementTree.fromstring(urdf)
    for joint in root.findall('joint'):
        for key, value in edits.get(joint.get('name'), {}).items():
            tag, attribute = key.split('/')
            element = joint.find(tag)
            if element is None:
                element = ElementTree.SubElement(joint, tag)
            element.set(attribute, value)
    return ElementTree.tostring(root, encoding='unicode')
