"""Run-time parameters of the markers node: defaults, descriptions, validation (no rclpy).

One immutable ``MarkerSettings`` snapshot is swapped whole on every accepted update, so a
message is always drawn with one consistent set of sizes, colours and rates.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from arm_ik.kinematics.checks import positive_reason
from arm_ik.kinematics.visual import (
    Colour,
    colour_reason,
    PATH_END,
    PATH_START,
    REACH_CIRCLE_SPACING,
)

# (lower, upper) of every number; a rate of 0 would stop the node drawing, so rates, sizes and
# lifetimes must be > 0; contact_memory may be 0 (only the contacts of the last status).
RANGES: dict[str, tuple[float, float]] = {
    'update_rate': (0.0, 100.0),
    'republish_rate': (0.0, 10.0),
    'readout_rate': (0.0, 1000.0),
    'marker_lifetime': (0.0, 60.0),
    'state_timeout': (0.0, 60.0),
    'contact_memory': (0.0, 600.0),
    'target_size': (0.0, 2.0),
    'path_width': (0.0, 0.5),
    'ghost_width': (0.0, 0.5),
    'contact_size': (0.0, 0.5),
    'text_size': (0.0, 1.0),
    'circle_spacing': (0.0, 10.0),
}
ZERO_ALLOWED = frozenset({'contact_memory'})

DESCRIPTIONS: dict[str, str] = {
    'update_rate': 'most marker messages per second while things change, Hz (> 0)',
    'republish_rate': 'marker messages per second when nothing changes (heartbeat), Hz (> 0)',
    'readout_rate': 'most readout messages per second from joint_states, Hz (> 0)',
    'marker_lifetime': 'lifetime of every changing marker, s (> 1 / republish_rate): they '
                       'vanish this long after the node stops',
    'state_timeout': 'joint_states older than this are stale: capsules and tip readout go, s',
    'contact_memory': 'how long a measured contact stays drawn as a red dot, s (0: only the '
                      'contacts of the last safety_status)',
    'target_size': 'side of the wire cube around the target, m',
    'path_width': 'width of the planned tip path line, m',
    'ghost_width': 'width of the ghost arm lines, m',
    'contact_size': 'diameter of a contact dot, m',
    'text_size': 'height of the readout text, m',
    'circle_spacing': 'radius step of the dashed floor circles, m',
    'show_capsules': 'draw the link capsules of the safety check',
    'path_start_colour': 'colour of the tip path start, [r, g, b, a] in [0, 1]',
    'path_end_colour': 'colour of the tip path end, [r, g, b, a] in [0, 1]',
    'shell_colour': 'colour of the outer reach sphere, [r, g, b, a] in [0, 1]',
    'hole_colour': 'colour of the unreachable inner hole, [r, g, b, a] in [0, 1]',
    'floor_colour': 'colour of the floor plane, [r, g, b, a] in [0, 1]',
    'circle_colour': 'colour of the dashed floor circles, [r, g, b, a] in [0, 1]',
    'contact_colour': 'colour of the contact dots, [r, g, b, a] in [0, 1]',
    'text_colour': 'colour of the readout text, [r, g, b, a] in [0, 1]',
}


@dataclass(frozen=True)
class MarkerSettings:
    """Sizes (m), rates (Hz), durations (s) and colours (r, g, b, a) of the markers."""

    update_rate: float = 10.0
    republish_rate: float = 1.0
    readout_rate: float = 50.0
    marker_lifetime: float = 3.0
    state_timeout: float = 1.0
    contact_memory: float = 5.0
    target_size: float = 0.1
    path_width: float = 0.012
    ghost_width: float = 0.02
    contact_size: float = 0.04
    text_size: float = 0.06
    circle_spacing: float = REACH_CIRCLE_SPACING
    show_capsules: bool = False
    path_start_colour: Colour = PATH_START
    path_end_colour: Colour = PATH_END
    shell_colour: Colour = (0.35, 0.65, 1.0, 0.08)
    hole_colour: Colour = (1.0, 0.35, 0.2, 0.3)
    floor_colour: Colour = (0.55, 0.55, 0.6, 0.3)
    circle_colour: Colour = (0.9, 0.9, 0.9, 0.8)
    contact_colour: Colour = (1.0, 0.0, 0.0, 1.0)
    text_colour: Colour = (1.0, 1.0, 1.0, 0.95)

    def validated(self) -> str:
        """'' when every value is usable, else the reason of the first that is not."""
        for name in RANGES:
            value = getattr(self, name)
            reason = positive_reason(value, name, allow_zero=name in ZERO_ALLOWED)
            if reason:
                return reason
            low, high = RANGES[name]
            if not low <= value <= high:
                return f'{name} is {value} (must be at most {high:g})'
        if not isinstance(self.show_capsules, bool):
            return f'show_capsules must be true or false, got {self.show_capsules!r}'
        for item in fields(self):
            if item.name.endswith('_colour'):
                reason = colour_reason(getattr(self, item.name), item.name)
                if reason:
                    return reason
        if self.marker_lifetime * self.republish_rate <= 1.0:
            # A marker must outlive the gap to the next heartbeat, or it blinks.
            return (f'marker_lifetime {self.marker_lifetime:g} s must exceed the heartbeat '
                    f'period 1 / republish_rate = {1.0 / self.republish_rate:g} s')
        return ''

    def with_values(self, values: dict[str, Any]) -> MarkerSettings:
        """A copy with ``values`` (parameter name → value); colours become tuples."""
        changes = {}
        for name, value in values.items():
            if name.endswith('_colour'):
                try:
                    value = tuple(float(v) for v in value)
                except (TypeError, ValueError):
                    pass        # left as is: validated() names it
            changes[name] = value
        return replace(self, **changes)


NAMES = tuple(item.name for item in fields(MarkerSettings))
