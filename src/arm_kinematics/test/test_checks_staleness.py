"""The shared value checks and the stream staleness estimator (kinematics.checks, .staleness)."""

import math

import pytest

from arm_kinematics.common.checks import number_reason, positive_reason
from arm_kinematics.common.staleness import StreamWatch


@pytest.mark.parametrize('value, kwargs, fragment', [
    (1.0, {}, ''),
    (math.nan, {}, 'must be finite'),
    (math.inf, {}, 'must be finite'),
    ('1', {}, 'must be a number'),
    (True, {}, 'must be a number'),
    (0.0, {'low': 0.0}, ''),
    (0.0, {'low': 0.0, 'low_open': True}, 'must be > 0'),
    (2.0, {'high': 1.0, 'unit': 'm'}, 'must be <= 1 m'),
    (1.0, {'high': 1.0, 'high_open': True}, 'must be < 1'),
])
def test_number_reason(value, kwargs, fragment):
    reason = number_reason(value, 'x', **kwargs)
    assert (fragment in reason) if fragment else reason == ''


def test_positive_reason():
    assert positive_reason(0.1, 'r') == ''
    assert 'must be > 0' in positive_reason(0.0, 'r')
    assert positive_reason(0.0, 'r', allow_zero=True) == ''
    assert 'must be >= 0' in positive_reason(-1.0, 'r', allow_zero=True)


def test_stream_is_stale_before_the_first_message_and_after_its_periods():
    watch = StreamWatch(stale_periods=3.0)
    assert watch.age(0.0).stale
    for k in range(6):
        watch.arrived(0.1 * k)
    assert watch.period() == pytest.approx(0.1)
    assert not watch.age(0.5 + 0.29).stale
    assert watch.age(0.5 + 0.31).stale


def test_bursty_stream_uses_the_mean_interval():
    # Pairs delivered together (DDS bursts): the median interval is ~0, the mean is the
    # true period's half; a median would call this healthy stream stale at once.
    watch = StreamWatch(stale_periods=3.0)
    for k in range(10):
        watch.arrived(0.2 * k)
        watch.arrived(0.2 * k + 1e-4)
    assert watch.period() == pytest.approx(0.1, rel=0.1)
    assert not watch.age(1.8001 + 0.25).stale


def test_floors_and_reset():
    watch = StreamWatch(stale_periods=2.0, min_period=0.05, min_timeout=0.3,
                        default_period=1.0)
    assert watch.age(0.0).limit == pytest.approx(2.0)   # default period before two messages
    watch.arrived(0.0)
    watch.arrived(0.001)
    assert watch.period() == pytest.approx(0.05)
    assert watch.age(0.001).limit == pytest.approx(0.3)
    watch.reset()
    assert watch.last is None and watch.age(5.0).stale
