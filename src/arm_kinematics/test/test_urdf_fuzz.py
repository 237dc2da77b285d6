"""Hostile descriptions never escape as a traceback (RELIABILITY case 24): any attribute of a
real URDF replaced by junk, or an element dropped, gives a model or one DescriptionError line.
"""

from __future__ import annotations

from pathlib import Path
import re

from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
import numpy as np

from arm_kinematics.arm import load_arm
from arm_kinematics.description.chain_rules import load_chain
from arm_kinematics.model.arm_model import DescriptionError

RAIL = (Path(__file__).parent / 'urdf' / 'rail_arm.urdf').read_text(encoding='utf-8')
ATTRIBUTES = [match.span(1) for match in re.finditer(r'="([^"]*)"', RAIL)]
ELEMENTS = [match.span() for match in re.finditer(r'<(origin|axis|limit|mimic|parent|child)'
                                                  r'\b[^>]*/>', RAIL)]
JUNK = st.one_of(st.sampled_from(['', ' ', 'nan', 'inf', '-inf', '1e999', 'x', '0 0',
                                  '0 0 0 0', '1,2,3', '0 0 0', '-1', '1e-300', 'tool0',
                                  'world', 'finger_left_joint', '&amp;', '\u00e9']),
                 st.text(alphabet='0123456789 .-eEnaix', max_size=12))


def _check(urdf: str) -> None:
    try:
        loaded = load_chain(urdf, 'world', 'tool0')
    except DescriptionError as error:
        assert str(error) and '\n' not in str(error), repr(str(error))
        return
    model = loaded.model
    assert np.all(np.isfinite(model.fk(model.clamp(np.zeros(model.dof)))))
    load_arm(urdf, None, 'world', 'tool0')        # the whole arm builds too


@settings(max_examples=120, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ATTRIBUTES), JUNK)
def test_junk_in_any_attribute_is_one_line_or_a_model(span, junk):
    start, end = span
    _check(RAIL[:start] + junk.replace('"', '') + RAIL[end:])


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.sampled_from(ELEMENTS))
def test_a_dropped_element_is_one_line_or_a_model(span):
    start, end = span
    _check(RAIL[:start] + RAIL[end:])
