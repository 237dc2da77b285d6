"""Joint tolerances as joint_trajectory_controller reads and checks them.

A goal's JointTolerance value means: > 0 the tolerance, 0 "keep the controller's default",
-1 "erased" (no limit, even where a default exists); anything else is invalid, and the
controller then falls back to its defaults for the whole goal (as JTC's get_segment_tolerances
does). A tolerance of 0 after resolution means "not checked".

Path tolerances hold while the trajectory runs (before its last point); goal tolerances hold
from the last point's time on, and must be met within goal_time_tolerance (0: no deadline,
the controller waits).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
import math

ERASED = -1.0


@dataclass(frozen=True, slots=True)
class JointTolerance:
    """Limits on |actual - desired| of one joint; 0: not checked. rad, rad/s, rad/s²."""

    position: float = 0.0
    velocity: float = 0.0
    acceleration: float = 0.0


@dataclass(frozen=True, slots=True)
class Violation:
    """One joint outside one tolerance."""

    joint: str
    quantity: str       # 'position', 'velocity' or 'acceleration'
    error: float        # desired - actual (JTC's sign)
    tolerance: float

    def __str__(self) -> str:
        unit = {'position': 'rad', 'velocity': 'rad/s', 'acceleration': 'rad/s^2'}[self.quantity]
        return (f"joint '{self.joint}' {self.quantity} error {self.error:+.4f} {unit} "
                f'exceeds the tolerance {self.tolerance:.4f} {unit}')


@dataclass(frozen=True)
class SegmentTolerances:
    """The tolerances of one goal, one entry per controller joint (in controller order).

    Attributes:
        path: checked before the last point.
        goal: checked from the last point on.
        goal_time: s allowed after the last point's time to get within ``goal``; 0: no limit.
    """

    path: Mapping[str, JointTolerance] = field(default_factory=dict)
    goal: Mapping[str, JointTolerance] = field(default_factory=dict)
    goal_time: float = 0.0


def _resolve(default: float, requested: float) -> float:
    """A goal's tolerance value over the default (JTC's resolve_tolerance_source)."""
    if not math.isfinite(requested):
        raise ValueError(f'tolerance {requested} is not finite')
    if requested > 0.0:
        return requested
    if requested == 0.0:
        return default
    if requested == ERASED:
        return 0.0
    raise ValueError(f'tolerance {requested} is negative and not -1 (erase)')


def _override(defaults: Mapping[str, JointTolerance],
              requested: Sequence[tuple[str, JointTolerance]],
              kind: str) -> dict[str, JointTolerance]:
    resolved = dict(defaults)
    for name, tolerance in requested:
        if name not in resolved:
            raise ValueError(f"joint '{name}' in the goal's {kind} is not a controller joint")
        base = resolved[name]
        resolved[name] = JointTolerance(
            _resolve(base.position, tolerance.position),
            _resolve(base.velocity, tolerance.velocity),
            _resolve(base.acceleration, tolerance.acceleration))
    return resolved


def goal_tolerances(defaults: SegmentTolerances,
                    path: Sequence[tuple[str, JointTolerance]] = (),
                    goal: Sequence[tuple[str, JointTolerance]] = (),
                    goal_time: float = 0.0) -> tuple[SegmentTolerances, str]:
    """The tolerances of a goal: its own values over the controller's defaults.

    Returns:
        (tolerances, warning). Like joint_trajectory_controller, an invalid value (an unknown
        joint, a negative value other than -1, a non-finite one) makes the whole goal use the
        defaults; ``warning`` then says why ('' otherwise).
    """
    try:
        resolved_time = _resolve(defaults.goal_time, goal_time)
        return replace(defaults, path=_override(defaults.path, path, 'path_tolerance'),
                       goal=_override(defaults.goal, goal, 'goal_tolerance'),
                       goal_time=resolved_time), ''
    except ValueError as error:
        return defaults, f'{error}; using the default tolerances'


def check(joints: Sequence[str], tolerances: Mapping[str, JointTolerance],
          position_error: Sequence[float], velocity_error: Sequence[float] | None = None,
          acceleration_error: Sequence[float] | None = None) -> list[Violation]:
    """Every joint quantity whose |error| exceeds its tolerance (empty: all within).

    A NaN error is a violation of any checked tolerance: an unknown state is never within.
    """
    violations = []
    for quantity, errors in (('position', position_error), ('velocity', velocity_error),
                             ('acceleration', acceleration_error)):
        if errors is None or len(errors) == 0:
            continue
        for joint, error in zip(joints, errors):
            limit = getattr(tolerances.get(joint, JointTolerance()), quantity)
            if limit > 0.0 and not abs(error) <= limit:
                violations.append(Violation(joint, quantity, float(error), limit))
    return violations


def worst(violations: Sequence[Violation]) -> Violation:
    """The violation furthest beyond its tolerance (relative), to name in a message."""
    return max(violations, key=lambda v: abs(v.error) / v.tolerance if math.isfinite(v.error)
               else math.inf)
