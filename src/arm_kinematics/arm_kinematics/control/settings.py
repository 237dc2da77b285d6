"""The arm configuration's ``controller`` section (description.controller_config) as what the
control rules take: a goal's tolerances and the client's bounded waits."""

from __future__ import annotations

from arm_kinematics.control.client_state import Waits
from arm_kinematics.control.tolerances import ERASED, JointTolerance
from arm_kinematics.description.controller_config import ControllerConfig


def path_tolerance_of(config: ControllerConfig) -> JointTolerance:
    """Per-joint path tolerance of a goal; 0 in the configuration: erased (-1) in the goal,
    so the controller's own default does not apply either."""
    return JointTolerance(position=config.path_tolerance or ERASED)


def goal_tolerance_of(config: ControllerConfig) -> JointTolerance:
    """Per-joint goal tolerance (position, and stopped velocity) of a goal; 0: erased."""
    return JointTolerance(position=config.goal_tolerance or ERASED,
                          velocity=config.stopped_velocity_tolerance or ERASED)


# The least silence that means a controller is gone, s: the configured action_monitor_rate
# is ours, not necessarily the controller's (the monitor also learns the intervals it gets).
SILENCE_FLOOR = 2.0


def waits_of(config: ControllerConfig, silence_timeout: float | None = None) -> Waits:
    """The client's bounded waits; feedback silence defaults to five configured monitor
    periods, at least ``SILENCE_FLOOR`` (the monitor raises it to three times the longest
    interval it actually receives)."""
    silence = silence_timeout if silence_timeout is not None else \
        max(SILENCE_FLOOR, 5.0 / config.action_monitor_rate)
    return Waits(server_wait=config.server_wait, response_wait=config.server_wait,
                 silence_timeout=silence, result_margin=1.0, cancel_wait=config.cancel_wait)
