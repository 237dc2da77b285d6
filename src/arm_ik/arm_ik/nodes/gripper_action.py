"""The servo bridge's gripper as clients expect it: a control_msgs/GripperCommand action.

A thin adapter around arm_servos.gripper (gripper_action_controller's rules: reached within
goal_tolerance, stalled after stall_timeout without motion; max_effort as the servo's torque
limit under a cap). The bridge makes one with a line: ``GripperAction(node, core, lock,
urdf_efforts)``; it declares its own parameters (``gripper_*``), serves ``gripper_action``
(default ``~/gripper_cmd``, the name gripper_action_controller serves under its node;
pymoveit2's GripperInterface then takes ``gripper_command_action_name='servo_bridge/
gripper_cmd'``, or set ``gripper_action:=gripper_action_controller/gripper_cmd`` for its
default) and drives the active goal from a timer, under the bridge's bus lock.

Policy for goals: a new goal preempts the active one (aborted with reached_goal false; the
controller marks it canceled, which rclpy allows only for a goal whose client asked); a
cancel holds the gripper at its measured position; a hold of the arm (``~/hold``, teleop's
hold) ends the goal aborted with the hold's reason, the gripper held where it is; a goal ends
aborted with the safety rules' words when the arm is not enabled, e-stopped or in a fault.
"""

from __future__ import annotations

from collections.abc import Mapping
import threading
import time

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from rclpy.task import Future

from arm_ik.nodes.common import declare_parameters, StartupError
from arm_ik.nodes.parameters import Param, ParameterTable
from arm_servos.bridge import BridgeCore
from arm_servos.gripper import (
    cancel,
    drive,
    goal_reason,
    GripperGoal,
    GripperResult,
    GripperSettings,
    start,
)

try:     # the control_msgs subset of the pip route gains GripperCommand with issue 37
    from control_msgs.action import GripperCommand
except ImportError:      # pragma: no cover - an older subset: no gripper action
    GripperCommand = None

PARAMETERS = ParameterTable(
    Param('gripper_joint', 'gripper', "the calibrated joint the GripperCommand action drives "
          "('' or a joint not calibrated: no action)", read_only=True),
    Param('gripper_action', '~/gripper_cmd', 'name of the control_msgs/GripperCommand action '
          "(pymoveit2's default is gripper_action_controller/gripper_cmd)", read_only=True),
    Param('gripper_goal_tolerance', 0.02, 'rad (m) from the goal that counts as reached',
          read_only=True, low=0.0, high=1.0, low_open=True),
    Param('gripper_stall_velocity', 0.01, 'rad/s (m/s) below which the gripper is not moving',
          read_only=True, low=0.0, high=10.0, low_open=True),
    Param('gripper_stall_timeout', 0.5, 's without motion before a goal ends stalled',
          read_only=True, low=0.0, high=60.0, low_open=True),
    Param('gripper_full_effort', 0.0, "N·m (N) at 100 % of the servo's torque, what "
          "max_effort is a fraction of (0: the URDF's effort limit)", read_only=True,
          low=0.0, high=1e4),
    Param('gripper_torque_cap', 0.5, "highest torque limit a goal may set, fraction of the "
          "servo's maximum (LeRobot runs the SO-101 gripper at 0.5)", read_only=True,
          low=0.0, high=1.0, low_open=True),
    Param('gripper_monitor_rate', 50.0, 'Hz, the active goal commanded, checked and its '
          'feedback published', read_only=True, low=1.0, high=1000.0),
)


class GripperAction:
    """The GripperCommand server of one bridge (see the module docstring)."""

    def __init__(self, node: Node, core: BridgeCore, lock: threading.Lock,
                 urdf_efforts: Mapping[str, float]) -> None:
        values = declare_parameters(node, PARAMETERS)
        self.node, self.core, self.lock = node, core, lock
        self.joint = values['gripper_joint']
        self.active: tuple[object, GripperGoal, Future] | None = None
        self.futures: dict[int, Future] = {}
        self.server = None
        if not self.joint or self.joint not in core.calibration.names:
            return
        if GripperCommand is None:
            node.get_logger().warning('control_msgs has no GripperCommand action: the gripper '
                                      'is driven through the arm only')
            return
        full_effort = values['gripper_full_effort'] or urdf_efforts.get(self.joint, 0.0)
        try:
            self.settings = GripperSettings(
                goal_tolerance=values['gripper_goal_tolerance'],
                stall_velocity_threshold=values['gripper_stall_velocity'],
                stall_timeout=values['gripper_stall_timeout'],
                full_effort=full_effort, torque_cap=values['gripper_torque_cap'])
        except ValueError as error:
            raise StartupError(f'{self.joint}: {error} (set gripper_full_effort)') from None
        self.server = ActionServer(
            node, GripperCommand, values['gripper_action'], execute_callback=self._execute,
            goal_callback=self._on_goal, handle_accepted_callback=self._on_accepted,
            cancel_callback=lambda _: CancelResponse.ACCEPT)
        node.create_timer(1.0 / values['gripper_monitor_rate'], self._monitor)
        name = values['gripper_action']
        if name.startswith('~/'):
            name = f'{node.get_fully_qualified_name()}/{name[2:]}'
        node.get_logger().info(
            f'{self.joint}: GripperCommand on {name}, {full_effort:g} at full torque, torque '
            f'limit at most {100 * self.settings.torque_cap:.0f} %')

    # ------------------------------------------------------------------ the action
    def _on_goal(self, request) -> GoalResponse:
        command = request.command
        joint = self.core.calibration.joint(self.joint)
        reason = goal_reason(joint, float(command.position), float(command.max_effort))
        mode = self.core.safety.mode
        if not reason and mode != 'enabled':
            reason = f'not enabled: the arm is {mode}'
        if reason:
            self.node.get_logger().error(f'gripper goal rejected: {reason}')
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _on_accepted(self, handle) -> None:
        command = handle.request.command
        future = Future()
        self.futures[id(handle)] = future
        with self.lock:
            if self.active is not None:
                old_handle, _, old_future = self.active
                self.active = None
                # Aborted, not canceled: rclpy cancels only a goal whose client asked.
                self._end(old_handle, old_future, False, self._result(
                    'preempted by a new gripper goal'))
            goal = start(self.core, self.settings, self.joint, float(command.position),
                         float(command.max_effort), time.monotonic())
            if isinstance(goal, str):
                self._end(handle, future, False, self._result(goal))
            else:
                self.active = (handle, goal, future)
        handle.execute()

    async def _execute(self, handle):
        future = self.futures.pop(id(handle), None)
        if future is None:
            handle.abort()
            return GripperCommand.Result()
        return await future

    def _monitor(self) -> None:
        with self.lock:
            if self.active is None:
                return
            handle, goal, future = self.active
            now = time.monotonic()
            if handle.is_cancel_requested:
                self.active = None
                self._end(handle, future, None, cancel(self.core, goal, now))
                return
            result = drive(self.core, goal, now)
            if result is not None:
                self.active = None
                self._end(handle, future, result.succeeded, result)
                return
            feedback = GripperCommand.Feedback()
            position = self.core.safety.measured.get(self.joint)
            state = self.core.states.get(goal.joint.servo_id)
            feedback.position = float(position if position is not None else 0.0)
            feedback.effort = abs(state.load) * self.settings.full_effort if state else 0.0
            handle.publish_feedback(feedback)

    def _result(self, message: str) -> GripperResult:
        position = self.core.safety.measured.get(self.joint)
        state = self.core.states.get(self.core.calibration.joint(self.joint).servo_id)
        return GripperResult(False, float(position if position is not None else 0.0),
                             abs(state.load) * self.settings.full_effort if state else 0.0,
                             False, False, message)

    def _end(self, handle, future: Future, succeeded: bool | None,
             result: GripperResult) -> None:
        """End ``handle``: succeeded, aborted (False) or canceled (None), with its result."""
        if succeeded is None:
            handle.canceled()
        elif succeeded:
            handle.succeed()
        else:
            handle.abort()
        log = self.node.get_logger()
        if succeeded:
            log.info(f'gripper goal: {result.message}')
        else:
            log.warning(f'gripper goal: {result.message}')
        future.set_result(GripperCommand.Result(
            position=float(result.position), effort=float(result.effort),
            stalled=bool(result.stalled), reached_goal=bool(result.reached_goal)))
