"""Parameters of the markers node: one table (names, defaults, ranges, descriptions) and the
immutable ``MarkerSettings`` snapshot it reads into.

The node swaps a new snapshot in whole on every accepted update, so a message is always
drawn with one consistent set of sizes, colours and rates. Rates, sizes and lifetimes must be
> 0 (a rate of 0 would stop the node drawing); contact_memory may be 0 (only the contacts of
the last status).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from arm_ik.nodes.parameters import Param, ParameterTable
from arm_kinematics.visual.arm_visual import (
    Colour,
    colour_reason,
    PATH_END,
    PATH_START,
    REACH_CIRCLE_SPACING,
)


def _positive(name: str, default: float, high: float, description: str) -> Param:
    return Param(name, default, description, low=0.0, high=high, low_open=True)


def _colour(name: str, default: Colour, what: str) -> Param:
    return Param(name, [float(v) for v in default],
                 f'colour of {what}, [r, g, b, a] in [0, 1]')


PARAMETERS = ParameterTable(
    _positive('update_rate', 10.0, 100.0,
              'most marker messages per second while things change, Hz (> 0)'),
    _positive('republish_rate', 1.0, 10.0,
              'marker messages per second when nothing changes (heartbeat), Hz (> 0)'),
    _positive('readout_rate', 50.0, 1000.0,
              'most readout messages per second from joint_states, Hz (> 0)'),
    _positive('marker_lifetime', 3.0, 60.0,
              'lifetime of every changing marker, s (> 1 / republish_rate): they vanish '
              'this long after the node stops'),
    _positive('state_timeout', 1.0, 60.0,
              'joint_states older than this are stale: capsules and tip readout go, s'),
    Param('contact_memory', 5.0,
          'how long a measured contact stays drawn as a red dot, s (0: only the contacts of '
          'the last safety_status)', low=0.0, high=600.0),
    _positive('target_size', 0.1, 2.0, 'side of the wire cube around the target, m'),
    _positive('path_width', 0.012, 0.5, 'width of the planned tip path line, m'),
    _positive('ghost_width', 0.02, 0.5, 'width of the ghost arm lines, m'),
    _positive('contact_size', 0.04, 0.5, 'diameter of a contact dot, m'),
    _positive('text_size', 0.06, 1.0, 'height of the readout text, m'),
    _positive('circle_spacing', REACH_CIRCLE_SPACING, 10.0,
              'radius step of the dashed floor circles, m'),
    Param('show_capsules', False, 'draw the link capsules of the safety check'),
    _colour('path_start_colour', PATH_START, 'the tip path start'),
    _colour('path_end_colour', PATH_END, 'the tip path end'),
    _colour('shell_colour', (0.35, 0.65, 1.0, 0.08), 'the outer reach sphere'),
    _colour('hole_colour', (1.0, 0.35, 0.2, 0.3), 'the unreachable inner hole'),
    _colour('floor_colour', (0.55, 0.55, 0.6, 0.3), 'the floor plane'),
    _colour('circle_colour', (0.9, 0.9, 0.9, 0.8), 'the dashed floor circles'),
    _colour('contact_colour', (1.0, 0.0, 0.0, 1.0), 'the contact dots'),
    _colour('text_colour', (1.0, 1.0, 1.0, 0.95), 'the readout text'),
)


@dataclass(frozen=True)
class MarkerSettings:
    """Sizes (m), rates (Hz), durations (s) and colours (r, g, b, a) of the markers."""

    update_rate: float
    republish_rate: float
    readout_rate: float
    marker_lifetime: float
    state_timeout: float
    contact_memory: float
    target_size: float
    path_width: float
    ghost_width: float
    contact_size: float
    text_size: float
    circle_spacing: float
    show_capsules: bool
    path_start_colour: Colour
    path_end_colour: Colour
    shell_colour: Colour
    hole_colour: Colour
    floor_colour: Colour
    circle_colour: Colour
    contact_colour: Colour
    text_colour: Colour

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> MarkerSettings:
        """The snapshot of the table's values (colours become tuples)."""
        return cls(**{item.name: tuple(float(v) for v in values[item.name])
                      if item.name.endswith('_colour') else values[item.name]
                      for item in fields(cls)})


def settings_reason(values: Mapping[str, Any]) -> str:
    """'' when the whole set of values is usable (each has passed its own spec), else why."""
    for name, value in values.items():
        if name.endswith('_colour'):
            reason = colour_reason(value, name)
            if reason:
                return reason
    lifetime, rate = values['marker_lifetime'], values['republish_rate']
    if lifetime * rate <= 1.0:
        # A marker must outlive the gap to the next heartbeat, or it blinks.
        return (f'marker_lifetime {lifetime:g} s must exceed the heartbeat period '
                f'1 / republish_rate = {1.0 / rate:g} s')
    return ''
