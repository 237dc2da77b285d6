"""The list of what a URDF may not hold (docs/own_arm.md) is what the code refuses (issue 31,
item 7).

Both ways: each row's words come out of the code for a description with that fault (one
line, no traceback), and each refusal the URDF reading code can raise has its words in the
list (read from the source: the literal text of every ``raise DescriptionError``).
"""

from __future__ import annotations

import ast
from pathlib import Path
import re

import pytest

from arm_kinematics.arm import ArmConfig, load_config_chain
from arm_kinematics.description.chain_rules import load_chain
from arm_kinematics.model.arm_model import DescriptionError

CORE = Path(__file__).resolve().parents[1] / 'arm_kinematics'
CHAPTER = Path(__file__).resolve().parents[3] / 'docs' / 'own_arm.md'
# Where a URDF is read, its chain built and checked, and its default frames chosen.
SOURCES = ('common/urdf_tree.py', 'model/chain.py', 'model/arm_model.py',
           'description/chain_rules.py', 'description/frames.py')

LIMIT = '<limit lower="-1" upper="1" velocity="1"/>'


def urdf(joints: str = '', links: str = '<link name="a"/><link name="b"/>') -> str:
    body = joints or (f'<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
                      f'<origin xyz="0 0 0.2"/><axis xyz="0 0 1"/>{LIMIT}</joint>'
                      '<joint name="k" type="revolute"><parent link="b"/><child link="c"/>'
                      f'<origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>{LIMIT}</joint>')
    return f'<robot name="r">{links}<link name="c"/>{body}</robot>'


def _with(old: str, new: str) -> str:
    text = urdf()
    assert old in text
    return text.replace(old, new, 1)


# One description per row of the chapter's table (and frames where the row needs them).
def _long_chain(joints: int) -> str:
    """A serial chain of ``joints`` revolute joints (past MAX_CHAIN_JOINTS when above 200)."""
    parts = ['<robot name="r"><link name="l0"/>']
    for i in range(1, joints + 1):
        parts.append(f'<link name="l{i}"/><joint name="j{i}" type="revolute"><parent '
                     f'link="l{i - 1}"/><child link="l{i}"/><origin xyz="0 0 0.1"/>'
                     f'<axis xyz="0 {i % 2} {1 - i % 2}"/>{LIMIT}</joint>')
    return ''.join(parts) + '</robot>'


STRICT = 'with `strict_urdf: true`: a revolute all-zero `<limit>` or `lower > upper`'
CASES = {
    'an empty description': [('', '', '')],
    'text that is not XML': [('<robot', '', '')],
    'a root element other than `<robot>`': [('<model/>', '', '')],
    'xacro text not yet expanded (a `<xacro:...>` element, a `${...}` or `$(...)` left)': [
        ('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:arg name="a"/>'
         '<link name="l"/></robot>', '', ''),
        # A default namespace on <robot> (read as plain names) keeps xacro's apart.
        ('<robot name="r" xmlns="http://www.ros.org" xmlns:xacro="http://www.ros.org/wiki/xacro">'
         '<xacro:arg name="a"/><link name="l"/></robot>', '', ''),
        ('<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="revolute">'
         '<parent link="a"/><child link="b"/><origin xyz="0 0 ${h}"/>'
         '<limit lower="-1" upper="1" velocity="1" effort="1"/></joint></robot>', '', '')],
    'no links': [('<robot name="r"/>', '', '')],
    'a link or joint without a name, or declared twice': [
        (urdf(links='<link/>'), '', ''), (urdf(links='<link name="a"/><link name="a"/>'), '', ''),
        (_with('<joint name="k"', '<joint '), '', ''),
        (_with('<joint name="k"', '<joint name="j"'), '', '')],
    'a link with two parents': [(_with('<child link="c"/>', '<child link="b"/>'), '', '')],
    'joints that form a cycle': [(_with('<child link="c"/>', '<child link="a"/>'), 'a', 'b')],
    "a joint type that is not one of the URDF's": [
        (_with('type="revolute"', 'type="hinge"'), '', '')],
    'a joint without `<parent link>` or `<child link>`, or naming a link that is not there': [
        (_with('<parent link="a"/>', ''), '', ''),
        (_with('<child link="c"/>', '<child link="d"/>'), '', '')],
    'a number that is not one (origin, axis, limit, mimic), NaN or inf': [
        (_with('<origin xyz="0 0 0.2"/>', '<origin xyz="0 0 nan"/>'), '', ''),
        (_with('upper="1"', 'upper="two"'), '', ''),
        (_with('upper="1"', 'upper="inf"'), '', '')],
    'a zero or non-numeric axis': [(_with('<axis xyz="0 0 1"/>', '<axis xyz="0 0 0"/>'), '', ''),
                                   (_with('<axis xyz="0 0 1"/>', '<axis xyz="z"/>'), '', '')],
    'a revolute or prismatic joint without `<limit>`': [(_with(LIMIT, ''), '', '')],
    'a negative velocity or effort limit': [
        (_with('velocity="1"', 'velocity="-1"'), '', ''),
        (_with('velocity="1"', 'velocity="1" effort="-2"'), '', '')],
    # A revolute joint's lower > upper reads as "no limit" (pybullet's convention); a
    # prismatic one is refused.
    'lower above upper on a prismatic joint (on a revolute one: no limit, as pybullet reads '
    'it)': [(_with('type="revolute"', 'type="prismatic"')
                           .replace('lower="-1" upper="1"', 'lower="2" upper="-2"', 1), '', '')],
    'a bound left out whose default 0 leaves no range (`lower="0.5"` and no `upper`)': [
        (_with('lower="-1" upper="1"', 'lower="0.5"'), '', ''),
        (_with('lower="-1" upper="1"', 'upper="-0.5"'), '', '')],
    # Refused only with the configuration's strict_urdf (STRICT), read by convention without.
    STRICT: [(_with('lower="-1" upper="1" velocity="1"',
                    'lower="0" upper="0" effort="0" velocity="0"'), '', ''),
             (_with('lower="-1" upper="1"', 'lower="1" upper="-1"'), '', '')],
    'a mimic without a leader, of an unknown or fixed joint, in a cycle, or that cannot stay '
    'inside its limits': [
        (_with(f'{LIMIT}</joint><joint name="k"', f'{LIMIT}<mimic/></joint><joint name="k"'),
         '', ''),
        (_with(f'{LIMIT}</joint><joint name="k"', f'{LIMIT}<mimic joint="x"/></joint>'
               '<joint name="k"'), '', ''),
        (_with(f'{LIMIT}</joint><joint name="k"', f'{LIMIT}<mimic joint="j"/></joint>'
               '<joint name="k"'), '', ''),
        (urdf().replace('</robot>', '<link name="d"/><joint name="f" type="fixed"><parent '
                        'link="c"/><child link="d"/></joint></robot>')
         .replace(f'{LIMIT}</joint><joint name="k"', f'{LIMIT}<mimic joint="f"/></joint>'
                  '<joint name="k"'), '', ''),
        (urdf().replace(f'{LIMIT}</joint></robot>',
                        f'{LIMIT}<mimic joint="j" offset="5"/></joint></robot>'), '', ''),
        (urdf().replace(f'{LIMIT}</joint></robot>',
                        f'{LIMIT}<mimic joint="j" multiplier="0" offset="5"/></joint></robot>'),
         '', '')],
    'a frame that is not a link, a tip not below the base': [
        (urdf(), 'a', 'nowhere'), (urdf(), 'c', 'a'), (urdf(), 'nowhere', '')],
    'not one root link (with no base given)': [
        (urdf(links='<link name="a"/><link name="b"/><link name="e"/>'), '', ''),
        (urdf(links='<link name="a"/><link name="b"/><link name="e"/>'), '', 'c')],
    'no movable joint in the chain or below the root (locked joints named)': [
        (_with('lower="-1" upper="1"', 'lower="0.5" upper="0.5"')
         .replace('lower="-1" upper="1"', 'lower="0" upper="0"'), '', ''),
        (urdf(), 'a', 'a'), (urdf(), 'b', 'b')],
    'a floating or planar joint in the chain': [
        (_with('type="revolute"', 'type="floating"'), 'a', 'c')],
    'two joints at one point turning about one axis': [
        (_with('<axis xyz="0 1 0"/>', '<axis xyz="0 0 1"/>')
         .replace('<origin xyz="0 0 0.3"/>', '<origin xyz="0 0 0"/>'), '', '')],
    'a chain whose every joint turns about an axis through the tip': [(urdf(), 'a', 'b')],
    'a chain of more than 200 moving joints (`MAX_CHAIN_JOINTS`; real arms have up to about '
    '20)': [(_long_chain(201), '', '')],
}


def _readme_rows() -> dict[str, list[str]]:
    text = CHAPTER.read_text(encoding='utf-8')
    section = text.split('<!-- urdf-refusals:begin -->')[1].split('<!-- urdf-refusals:end -->')[0]
    rows = {}
    for line in section.strip().splitlines()[2:]:
        what, says = [cell.strip() for cell in line.strip().strip('|').split(' | ')]
        rows[what] = re.findall(r'`([^`]+)`', says)
    return rows


ROWS = _readme_rows()


def test_the_readme_lists_exactly_these_refusals():
    assert set(ROWS) == set(CASES)


@pytest.mark.parametrize('what', sorted(CASES))
def test_each_readme_row_is_what_the_code_says(what):
    words = ROWS[what]
    for text, base, tip in CASES[what]:
        with pytest.raises(DescriptionError) as raised:
            if what == STRICT:
                load_chain(text, base, tip)         # read by convention, not refused
                load_config_chain(text, ArmConfig.from_mapping({'strict_urdf': True}), base,
                                  tip)
            else:
                load_chain(text, base, tip)
        message = str(raised.value)
        assert '\n' not in message
        assert any(word in message for word in words), (what, message, words)


def _literal_parts(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [part.value for part in node.values if isinstance(part, ast.Constant)]
    if isinstance(node, ast.BinOp):
        return _literal_parts(node.left) + _literal_parts(node.right)
    return []


def test_every_refusal_in_the_code_has_its_words_in_the_readme():
    words = [word for row in ROWS.values() for word in row]
    listed = ' '.join(words)
    missing = []
    for relative in SOURCES:
        tree = ast.parse((CORE / relative).read_text(encoding='utf-8'))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
                    and getattr(node.exc.func, 'id', '') == 'DescriptionError'
                    and node.exc.args):
                continue
            parts = [part.strip(' :;(),"') for part in _literal_parts(node.exc.args[0])]
            parts = [part for part in parts if len(part) >= 8]
            if parts and not any(part in listed or any(word in part for word in words)
                                 for part in parts):
                missing.append(f'{relative}:{node.lineno}: {parts}')
    assert not missing, 'refusals docs/own_arm.md does not list:\n' + '\n'.join(missing)
