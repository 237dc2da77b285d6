"""The arm configuration's ``controller`` section: how a FollowJointTrajectory controller is
driven and set up for this arm.

    controller:
      action: joint_trajectory_controller/follow_joint_trajectory   # relative action name
      path_tolerance: 0.2            # rad, |desired - actual| while moving
      goal_tolerance: 0.01           # rad, at the end
      goal_time_tolerance: 0.5       # s after the end to get within goal_tolerance
      stopped_velocity_tolerance: 0.01   # rad/s at the end
      action_monitor_rate: 20.0      # Hz, the controller's feedback
      update_rate: 100               # Hz, controller_manager
      server_wait: 2.0               # s the executor waits for the action server
      cancel_wait: 1.0               # s the executor waits for a cancel to be acknowledged

Every key is optional; ``ControllerConfig.from_mapping`` validates and fills the defaults.
``state_publish_rate`` (older files) is still accepted and does nothing:
joint_trajectory_controller on Jazzy and Kilted has no such parameter (removed in
ros2_controllers #520; it publishes its state every update) and ignores undeclared ones, so
the controllers YAML no longer carries it. ``ignored_keys`` names it for ``arm_config`` to
say so; the controller stand-in has a ``state_publish_rate`` node parameter of its own (its
joint_states rate), not read from here.
The executor sends the tolerances with every goal (the controller's own defaults then do not
matter); ``arm_config`` writes them into the controllers YAML as the defaults too.
``arm_kinematics.control.settings`` turns this section into goal tolerances and waits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from arm_kinematics.common.checks import is_finite_number

DEFAULT_ACTION = 'joint_trajectory_controller/follow_joint_trajectory'
# Keys older files may hold that nothing reads any more, with the reason: accepted and
# dropped, so a file that loaded still loads (arm_config prints the reason).
IGNORED_KEYS = {
    'state_publish_rate': 'joint_trajectory_controller on Jazzy and Kilted has no such '
                          'parameter (removed in ros2_controllers #520; it publishes its state '
                          'every update)',
}


def _number(default: float, positive: bool = False) -> Any:
    """A float key: a finite number >= 0 (> 0 when ``positive``), which from_mapping checks."""
    return field(default=default, metadata={'positive': positive})


@dataclass(frozen=True)
class ControllerConfig:
    """The ``controller`` section, validated (units in the module docstring)."""

    action: str = DEFAULT_ACTION
    path_tolerance: float = _number(0.2)
    goal_tolerance: float = _number(0.01)
    goal_time_tolerance: float = _number(0.5)
    stopped_velocity_tolerance: float = _number(0.01)
    action_monitor_rate: float = _number(20.0, positive=True)
    update_rate: int = 100
    server_wait: float = _number(2.0, positive=True)
    cancel_wait: float = _number(1.0, positive=True)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None, where: str = 'controller'
                     ) -> ControllerConfig:
        """Validate a ``controller`` section; ValueError names the key and the value."""
        data = dict(data or {})
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known - set(IGNORED_KEYS))
        if unknown:
            raise ValueError(f'{where}: unknown key(s) {", ".join(unknown)}; valid: '
                             f'{", ".join(sorted(known))}')
        for key in IGNORED_KEYS:
            data.pop(key, None)
        values = asdict(cls())
        values.update(data)
        action = values['action']
        if not isinstance(action, str) or not action.strip() or action.startswith('~') \
                or ' ' in action:
            raise ValueError(f'{where}.action must be an action name (relative, e.g. '
                             f'{DEFAULT_ACTION}), got {action!r}')
        for spec in fields(cls):
            if 'positive' not in spec.metadata:
                continue
            key, positive = spec.name, spec.metadata['positive']
            value = values[key]
            if not is_finite_number(value) or value < 0.0 or (positive and value == 0.0):
                bound = '> 0' if positive else '>= 0'
                raise ValueError(f'{where}.{key} must be a finite number {bound}, got {value!r}')
            values[key] = float(value)
        rate = values['update_rate']
        if isinstance(rate, bool) or not isinstance(rate, int) or not 1 <= rate <= 10000:
            raise ValueError(f'{where}.update_rate must be an integer in [1, 10000] Hz, got '
                             f'{rate!r}')
        return cls(**values)

    def to_mapping(self) -> dict[str, Any]:
        return asdict(self)


def ignored_keys(data: Mapping[str, Any] | None, where: str = 'controller') -> list[str]:
    """One line per key of a ``controller`` section that is accepted but does nothing, with
    why and what to do (for ``arm_config`` to print)."""
    return [f'{where}.{key} is ignored: {reason}; delete it'
            for key, reason in IGNORED_KEYS.items() if key in (data or {})]
