"""The gripper as a control_msgs GripperCommand server judges it, ROS-free (RELIABILITY 45).

The rules are ros2_controllers' gripper_action_controller's (gripper_action_controller_impl.hpp,
``check_for_success``), so clients written for it (pymoveit2's GripperInterface, MoveIt's
gripper controller handle) read the same results:

* a goal is a position (rad for a revolute gripper joint, m for a prismatic one) and a
  ``max_effort`` (N·m or N); a new goal preempts the active one;
* within ``goal_tolerance`` of the position: succeeded, ``reached_goal`` true;
* else, when the gripper has not moved faster than ``stall_velocity_threshold`` for
  ``stall_timeout``: aborted, ``stalled`` true, ``reached_goal`` false (an object between the
  jaws); the servo keeps its goal at the torque limit, so the object stays gripped.

And the bridge's own: a hold of the arm (``ServoSafety.hold``: a teleop hold, an operator's
``~/hold``) ends the active goal too, aborted with the hold's reason, the gripper held where
it is (the hold's measured position, never the goal's); a cancel holds it where it is; a goal
ends aborted with the safety rules' words when a command is refused (torque off, a fault).

What the servo does with ``max_effort``: its torque limit register (Feetech Torque_Limit at 48,
0..1000 of the maximum; Dynamixel Goal_Current at 102, a fraction of Current_Limit at 38, in
LeRobot's current-based position mode for the Koch gripper) is set to ``max_effort`` over
``full_effort`` (the joint's effort at 100 % torque), never above ``torque_cap`` (0.5 by
default: LeRobot's SO-100/SO-101 gripper runs at Max_Torque_Limit 500, "to avoid burnout");
``max_effort`` 0 means the cap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import math

from arm_servos.bridge import BridgeCore
from arm_servos.calibration import JointCalibration

# Where each protocol keeps the torque limit a goal sets, and how the fraction is written.
FEETECH_TORQUE_LIMIT = 48        # 2 bytes, 0..1000 (0.1 % of the maximum torque), RAM
DYNAMIXEL_GOAL_CURRENT = 102     # 2 bytes, in Current_Limit's units
DYNAMIXEL_CURRENT_LIMIT = 38     # 2 bytes, EEPROM


@dataclass(frozen=True)
class GripperSettings:
    """The controller's parameters (gripper_action_controller's names and meanings).

    Attributes:
        goal_tolerance: rad (m) from the goal that counts as reached.
        stall_velocity_threshold: rad/s (m/s) below which the gripper is not moving (above
            ros2_controllers' 0.001: a servo's speed reading has a tick's resolution).
        stall_timeout: s without motion before a goal ends stalled.
        full_effort: N·m (N) at 100 % of the servo's torque (default: the URDF's effort).
        torque_cap: the highest torque limit a goal may set, fraction of the maximum.
    """

    goal_tolerance: float = 0.02
    stall_velocity_threshold: float = 0.01
    stall_timeout: float = 0.5
    full_effort: float = 1.0
    torque_cap: float = 0.5

    def __post_init__(self) -> None:
        for name in ('goal_tolerance', 'stall_velocity_threshold', 'stall_timeout',
                     'full_effort'):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f'{name} must be a finite number > 0, got {value!r}')
        if not 0 < self.torque_cap <= 1:
            raise ValueError(f'torque_cap must be in (0, 1], got {self.torque_cap!r}')


@dataclass(frozen=True)
class GripperResult:
    """control_msgs/GripperCommand's result (and feedback) with the outcome in words."""

    succeeded: bool
    position: float
    effort: float
    stalled: bool
    reached_goal: bool
    message: str


class GripperGoal:
    """One accepted goal, checked every cycle against the measured gripper."""

    def __init__(self, settings: GripperSettings, joint: JointCalibration, position: float,
                 max_effort: float, now: float, holds: int = 0) -> None:
        self.settings = settings
        self.joint = joint
        self.position = position
        self.torque = torque_fraction(settings, max_effort)
        self.last_movement = now
        self.holds = holds      # ServoSafety.holds when accepted: a later hold ends the goal

    def check(self, now: float, position: float | None, velocity: float,
              load: float) -> GripperResult | None:
        """The goal's end this cycle, or None while it runs (``load``: signed fraction of the
        servo's maximum torque, as the bus reads it)."""
        if position is None:
            return None
        effort = abs(load) * self.settings.full_effort
        error = self.position - position
        if abs(error) < self.settings.goal_tolerance:
            return GripperResult(True, position, effort, False, True,
                                 f'{self.joint.name} reached {self.position:.4f}')
        if abs(velocity) > self.settings.stall_velocity_threshold:
            self.last_movement = now
        elif now - self.last_movement > self.settings.stall_timeout:
            return GripperResult(
                False, position, effort, True, False,
                f'{self.joint.name} stalled at {position:.4f}, {abs(error):.4f} from '
                f'{self.position:.4f} (an object between the jaws?), holding it at '
                f'{100 * self.torque:.0f} % torque')
        return None


def start(core: BridgeCore, settings: GripperSettings, joint_name: str, position: float,
          max_effort: float, now: float) -> GripperGoal | str:
    """Accept a goal on the arm of ``core`` (the caller holds the bus lock): its torque limit
    written to the servo, then its position commanded; the refusal in words otherwise."""
    joint = core.calibration.joint(joint_name)
    reason = goal_reason(joint, position, max_effort)
    if reason:
        return reason
    if core.safety.mode != 'enabled':
        return f'not enabled: the arm is {core.safety.mode}'
    goal = GripperGoal(settings, joint, position, max_effort, now, core.safety.holds)
    bus = core.bus
    reason = write_torque_limit(core.calibration.protocol, joint.servo_id, goal.torque,
                                bus.read_register, bus.write_register)
    return reason or goal


def drive(core: BridgeCore, goal: GripperGoal, now: float) -> GripperResult | None:
    """One cycle of a running goal (the caller holds the bus lock): its position commanded
    again (a goal is a stream, so the command timeout never holds the gripper short), then
    checked against the measured gripper. A hold since the goal was accepted ends it, aborted
    with the hold's reason, and nothing is commanded: the gripper stays where the hold put it.
    A command the rules refuse (torque off, a fault) ends the goal with their words."""
    safety = core.safety
    if safety.holds != goal.holds:
        return _ended(core, goal, f'{safety.hold_reason}: holding {goal.joint.name} at '
                      f'{_where(safety.measured.get(goal.joint.name))}, not going on to '
                      f'{goal.position:.4f}')
    outcome = safety.command({goal.joint.name: goal.position}, now,
                             from_trajectory=safety.trajectory_active)
    state = core.states.get(goal.joint.servo_id)
    position = safety.measured.get(goal.joint.name)
    if not outcome.ok:
        return GripperResult(False, position if position is not None else math.nan,
                             0.0, False, False, outcome.message)
    if state is None:
        return None
    return goal.check(now, position, goal.joint.velocity_to_radians(state.velocity),
                      state.load)


def cancel(core: BridgeCore, goal: GripperGoal, now: float) -> GripperResult:
    """A cancelled goal (the caller holds the bus lock): the gripper commanded to its
    measured position, so it stops where it is (cut to the calibrated range: a reading past
    it, which a project calibration does not clip, would be refused as a command, and the
    gripper would go on to the cancelled goal)."""
    safety = core.safety
    joint = goal.joint
    measured = safety.measured.get(joint.name)
    if measured is not None:
        measured = min(max(measured, joint.lower), joint.upper)
    words = f'canceled: holding {joint.name} at {_where(measured)}'
    if measured is not None:
        outcome = safety.command({joint.name: measured}, now,
                                 from_trajectory=safety.trajectory_active)
        if not outcome.ok:
            words = f'canceled; not held: {outcome.message}'
    return _ended(core, goal, words)


def _where(position: float | None) -> str:
    return 'its measured position' if position is None else f'{position:.4f}'


def _ended(core: BridgeCore, goal: GripperGoal, message: str) -> GripperResult:
    """A goal ended by the bridge (aborted or canceled): where the gripper is, in words."""
    position = core.safety.measured.get(goal.joint.name)
    state = core.states.get(goal.joint.servo_id)
    effort = abs(state.load) * goal.settings.full_effort if state is not None else 0.0
    return GripperResult(False, position if position is not None else math.nan, effort,
                         False, False, message)


def torque_fraction(settings: GripperSettings, max_effort: float) -> float:
    """The torque limit for a goal's ``max_effort`` (0 or less: the cap)."""
    if not max_effort > 0:
        return settings.torque_cap
    return min(settings.torque_cap, max_effort / settings.full_effort)


def goal_reason(joint: JointCalibration, position: float, max_effort: float) -> str:
    """'' when a goal can be accepted, else why not (naming the joint)."""
    if not math.isfinite(position):
        return f'{joint.name}: position {position} is not a finite number'
    if not math.isfinite(max_effort):
        return f'{joint.name}: max_effort {max_effort} is not a finite number'
    if not joint.lower <= position <= joint.upper:
        return (f'{joint.name}: {position:.4f} is outside the calibrated range '
                f'[{joint.lower:.4f}, {joint.upper:.4f}]')
    return ''


def write_torque_limit(protocol: str, servo_id: int, fraction: float,
                       read: Callable[[int, int, int], int | None],
                       write: Callable[[int, int, int, int], bool]) -> str:
    """Set a servo's running torque limit (``read``/``write``: the bus's read_register and
    write_register); '' on success, else why not."""
    if protocol == 'feetech':
        value = round(1000 * fraction)
        address = FEETECH_TORQUE_LIMIT
    else:
        limit = read(servo_id, DYNAMIXEL_CURRENT_LIMIT, 2)
        if limit is None:
            return f'servo {servo_id} did not answer a read of its Current_Limit'
        value = round(limit * fraction)
        address = DYNAMIXEL_GOAL_CURRENT
    if not write(servo_id, address, 2, value):
        return (f'servo {servo_id} did not acknowledge its torque limit, or refused it ({value} '
                f'at {address})')
    return ''
