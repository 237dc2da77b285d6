"""servo_node: MoveIt Servo's jog interface, served by the trajectory executor.

The jog runs inside the trajectory executor, as one more owner of its ``MotionRunner``
(``arm_kinematics.motion.jog.JogCore`` is the follow law the control tick steps): one writer
of the arm's outputs (simulated joint_states, the controller's JointTrajectory or
forward_position stream, the servo bridge's ``~/commands``), the executor's one-owner rules
(a goal preempts a jog; a jog is refused while a goal runs), emergency stop, floor check and
per-step collision check (the live follow's ``StepGuard``, the safety monitor's scene), at
the executor's ``publish_rate`` (100 Hz by default). The ``servo_node`` console script is the
trajectory executor (node name ``trajectory_executor``, every parameter of it) with this
interface attached; another host (move_group) attaches it the same way (``ServoInterface``).

Served, with the names pymoveit2's MoveIt2Servo and MoveIt's own servo_node use (relative,
so ``/servo_node/...`` when started in the root namespace, ``/<ns>/servo_node/...`` in one):
  servo_node/delta_twist_cmds    geometry_msgs/TwistStamped (reliable, depth 10)
  servo_node/delta_joint_cmds    control_msgs/JointJog (when control_msgs has it)
  servo_node/pause_servo         std_srvs/SetBool (true: decelerate to rest, refuse commands)
  servo_node/switch_command_type moveit_msgs/srv/ServoCommandType (when moveit_msgs is there)
  servo_node/start_servo, servo_node/stop_servo  std_srvs/Trigger (Humble's servo: unpause,
                                 pause)
  servo_node/status              moveit_msgs/ServoStatus (code and words), else std_msgs/Int8
Parameters ``moveit_servo.*`` (PARAMETERS; MoveIt's names where MoveIt has one). A jog starts
from the measured joint state (``feedback_topic``) when the executor has one, else from the
commanded pose; it needs a streaming output (not ``follow_joint_trajectory``).
"""

from __future__ import annotations

from dataclasses import replace
import sys
import time
from typing import Any

from geometry_msgs.msg import TwistStamped
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile
from std_msgs.msg import Int8
from std_srvs.srv import SetBool, Trigger

from arm_ik.nodes.common import declare_parameters, run, StartupError
from arm_ik.nodes.parameters import Param, ParameterTable
from arm_ik.nodes.trajectory_executor import EXECUTOR_THREADS, TrajectoryExecutor
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.motion.follow_guard import GuardedFollow, RefusalThrottle
from arm_kinematics.motion.jog import (
    Answer,
    COMMAND_IN_TYPES,
    JogCore,
    JogSettings,
    JogStatus,
    JointJog,
    Twist,
)
from arm_kinematics.motion.runner import Mode, Owner

try:        # a ROS install's control_msgs, or the pip route's subset once it has JointJog
    from control_msgs.msg import JointJog as JointJogMessage
except ImportError:
    JointJogMessage = None
try:
    from moveit_msgs.msg import ServoStatus
    from moveit_msgs.srv import ServoCommandType
except ImportError:
    ServoStatus = ServoCommandType = None

P = 'moveit_servo.'
PARAMETERS = ParameterTable(
    Param(P + 'incoming_command_timeout', 0.1, 's: a command older than this is out of force '
          'and the arm decelerates to rest', low=0.0, high=10.0, low_open=True),
    Param(P + 'command_in_type', 'unitless', 'unitless: twist and joint values in [-1, 1] '
          'times the scales; speed_units: m/s and rad/s', choices=COMMAND_IN_TYPES),
    Param(P + 'scale.linear', 0.4, 'm/s of a unitless linear 1.0', low=0.0, high=10.0,
          low_open=True),
    Param(P + 'scale.rotational', 0.8, 'rad/s of a unitless angular 1.0', low=0.0, high=20.0,
          low_open=True),
    Param(P + 'scale.joint', 0.5, 'rad/s of a unitless joint 1.0', low=0.0, high=20.0,
          low_open=True),
    Param(P + 'lower_singularity_threshold', 17.0, 'condition number of the tip Jacobian '
          'where a move towards a singularity starts slowing down', low=1.0, high=1e6),
    Param(P + 'hard_stop_singularity_threshold', 30.0, 'condition number where it halts '
          '(above lower_singularity_threshold)', low=1.0, high=1e6),
    Param(P + 'joint_limit_margins', [0.1], 'rad before each limit where a joint halts (it '
          'slows down over one more margin); one value, or one per joint'),
    Param(P + 'halt_all_joints_in_joint_mode', True, 'a joint jog into a limit halts every '
          'joint (false: only that joint)'),
    Param(P + 'planning_frame', '', "the base frame of twists ('' : the chain's base link)",
          read_only=True),
    Param(P + 'ee_frame', '', "the tool frame twists may be given in ('' : the chain's tip "
          'link)', read_only=True),
    Param(P + 'acceleration', 5.0, "rad/s², the largest joint's speed change per second when "
          'a jog starts, changes or stops (not in MoveIt: its smoothing plugin does this)',
          low=0.0, high=1000.0, low_open=True),
    Param(P + 'damping', 0.01, 'λ of the damped least-squares inverse of the Jacobian',
          low=0.0, high=1.0),
    Param(P + 'speed_scale', 1.0, 'fraction of the URDF velocity limits a jog may use',
          low=0.0, high=1.0, low_open=True),
)
STATUS_PERIOD = 0.02        # s between two looks at the status (published when it changes)
STATUS_REPEAT = 1.0         # s: the status is published at least this often


def jog_settings(values: dict[str, Any]) -> JogSettings:
    """JogSettings from PARAMETERS' values."""
    v = {name[len(P):]: value for name, value in values.items()}
    return JogSettings(
        timeout=v['incoming_command_timeout'], command_in_type=v['command_in_type'],
        linear_scale=v['scale.linear'], rotational_scale=v['scale.rotational'],
        joint_scale=v['scale.joint'], lower_singularity=v['lower_singularity_threshold'],
        hard_singularity=v['hard_stop_singularity_threshold'],
        limit_margins=tuple(float(m) for m in v['joint_limit_margins']),
        halt_all_joints_in_joint_mode=v['halt_all_joints_in_joint_mode'],
        planning_frame=v['planning_frame'], ee_frame=v['ee_frame'],
        acceleration=v['acceleration'], damping=v['damping'], speed_scale=v['speed_scale'])


class ServoInterface:
    """MoveIt Servo's topics and services on ``host`` (a TrajectoryExecutor), driving its
    runner with a ``JogCore``; see the module docstring."""

    def __init__(self, host: TrajectoryExecutor) -> None:
        self.host = host
        self.node: Node = host
        self.core = host.core
        values = declare_parameters(host, PARAMETERS, prefix='bad ')
        settings = self._settings_of(values)
        model = host.model
        for frame in (settings.planning_frame, settings.ee_frame):
            if frame and frame not in (model.base_link, model.tip_link):
                raise StartupError(f'bad parameter: frame "{frame}" is not the chain\'s base '
                                   f'"{model.base_link}" nor its tip "{model.tip_link}"')
        try:
            # Without switch_command_type (no moveit_msgs) both kinds are taken, as Humble's.
            self.jog = JogCore(model, settings, any_type=ServoCommandType is None)
        except ValueError as error:
            raise StartupError(f'bad parameter: {error}') from None
        self._streaming = host.link is None
        self._owner: Owner | None = None
        self._throttle = RefusalThrottle()
        self._published: tuple[int, str] | None = None
        self._published_at = 0.0
        group = MutuallyExclusiveCallbackGroup()
        qos = QoSProfile(depth=10)
        host.create_subscription(TwistStamped, 'servo_node/delta_twist_cmds', self._on_twist,
                                 qos, callback_group=group)
        if JointJogMessage is not None:
            host.create_subscription(JointJogMessage, 'servo_node/delta_joint_cmds',
                                     self._on_joint_jog, qos, callback_group=group)
        host.create_service(SetBool, 'servo_node/pause_servo', self._on_pause,
                            callback_group=group)
        if ServoCommandType is not None:
            host.create_service(ServoCommandType, 'servo_node/switch_command_type',
                                self._on_switch, callback_group=group)
        host.create_service(Trigger, 'servo_node/start_servo',
                            lambda _, response: self._trigger(response, False),
                            callback_group=group)
        host.create_service(Trigger, 'servo_node/stop_servo',
                            lambda _, response: self._trigger(response, True),
                            callback_group=group)
        self._status_type = ServoStatus if ServoStatus is not None else Int8
        self.status_publisher = host.create_publisher(self._status_type, 'servo_node/status',
                                                      qos)
        host.create_timer(STATUS_PERIOD, self._publish_status, callback_group=group)
        PARAMETERS.watch(host, self._apply, lambda v: self._settings_reason(v))
        # The longest step follows the executor's publish_rate when that changes.
        host.add_post_set_parameters_callback(
            lambda changed: self._apply(PARAMETERS.values(host))
            if any(p.name == 'publish_rate' for p in changed) else None)
        missing = [what for what, kind in (('delta_joint_cmds (control_msgs has no JointJog)',
                                            JointJogMessage),
                                           ('switch_command_type and ServoStatus (no '
                                            'moveit_msgs)', ServoCommandType)) if kind is None]
        host.get_logger().info(
            f'servo: jogging {model.base_link} → {model.tip_link} on servo_node/* at the '
            f"executor's {self.core.settings.publish_rate:g} Hz"
            + ('' if self._streaming else '; refused: the output follow_joint_trajectory '
               'cannot stream a jog')
            + (f'; not served: {", ".join(missing)}' if missing else ''))

    # ------------------------------------------------------------------ parameters
    def _settings_reason(self, values: dict[str, Any]) -> str:
        try:
            return jog_settings(values).reason(self.jog.model.dof)
        except (KeyError, TypeError, ValueError) as error:
            return str(error)

    def _settings_of(self, values: dict[str, Any]) -> JogSettings:
        """The jog's settings; a late tick covers at most two of the executor's periods."""
        return replace(jog_settings(values), max_dt=2.0 / self.core.settings.publish_rate)

    def _apply(self, values: dict[str, Any]) -> None:
        self.jog.set_settings(self._settings_of(values))

    # ------------------------------------------------------------------ commands
    def _current_jog(self) -> JogCore:
        """The jog of the executor's current model: a robot_description replaced at run time
        (new link lengths; refused while the arm moves) gets a new JogCore at the next command,
        with the pause and command type of the old one."""
        old = self.jog
        if self.host.model is not old.model and not self._jogging():
            jog = JogCore(self.host.model, old.settings, any_type=ServoCommandType is None)
            jog.switch(old.command_type)
            jog.pause(old.paused)
            self.jog = jog
        return self.jog

    def _jogging(self) -> bool:
        owner = self._owner
        return owner is not None and not owner.done.is_set()

    def _on_twist(self, message: TwistStamped) -> None:
        linear, angular = message.twist.linear, message.twist.angular
        now = time.monotonic()
        answer = self._current_jog().twist(Twist((linear.x, linear.y, linear.z),
                                      (angular.x, angular.y, angular.z),
                                      message.header.frame_id), now)
        self._after(answer, now)

    def _on_joint_jog(self, message: Any) -> None:
        now = time.monotonic()
        answer = self._current_jog().joint_jog(JointJog(
            tuple(message.joint_names), tuple(message.velocities),
            tuple(message.displacements), float(message.duration)), now)
        self._after(answer, now)

    def _after(self, answer: Answer, now: float) -> None:
        """An accepted command engages the jog; a refusal is said (throttled)."""
        if answer.ok:
            answer = self._engage(now)
        if not answer.ok:
            held = self._throttle.admit(now)
            if held is not None:
                more = f' ({held} more refused since the last report)' if held else ''
                self.node.get_logger().warning(f'servo: {answer.message}{more}')

    def _engage(self, now: float) -> Answer:
        """The jog owns the runner (already, or from now, starting from the measured state),
        or the command is refused and why."""
        runner = self.core.runner
        with self.host.output_lock:
            mode = runner.mode
            if not self._streaming:
                return self._refused("the executor's output is follow_joint_trajectory, "
                                     'which cannot stream a jog (use joint_trajectory or '
                                     'forward_position)')
            if mode == Mode.EMERGENCY_STOP:
                return self._refused("emergency stop: call the executor's ~/reset first")
            if self.core.goal_active() or mode == Mode.MOVING:
                return self._refused('a goal or trajectory is moving the arm')
            if self._jogging() and mode == Mode.FOLLOWING:
                runner.touch(now)
                return Answer(True)
            # A new jog: from the measured state when there is one (the arm may have been
            # moved since the last command), never from a stale command.
            feedback = self.core.feedback
            if feedback is not None:
                measured, age = feedback.latest(now)
                if measured is not None and not age.stale:
                    runner.set_pose(measured)
            start, _, reason = self.core.start_pose(now)
            if start is None:
                return self._refused(reason)
            self.jog.rest()
            owner = Owner('servo jog')
            code, reason = runner.follow(
                GuardedFollow(self.jog, self.host.follow.steps, self._step_refused), owner,
                now, self.jog.stop_time() + 2.0 / self.core.settings.publish_rate, start)
            if code != MotionCode.SUCCESS:
                return self._refused(reason)
            self._owner = owner
            return Answer(True)

    def _refused(self, reason: str) -> Answer:
        message = f'jog refused: {reason}'
        self.jog.report(JogStatus.INVALID, message)
        return Answer(False, message)

    def _step_refused(self, reason: str) -> None:
        self.jog.report(JogStatus.HALT_FOR_COLLISION, f'halted: the next step collides: {reason}')

    # ------------------------------------------------------------------ services
    def _on_pause(self, request: SetBool.Request, response: SetBool.Response
                  ) -> SetBool.Response:
        answer = self.jog.pause(bool(request.data))
        response.success, response.message = answer.ok, answer.message
        return response

    def _trigger(self, response: Trigger.Response, pause: bool) -> Trigger.Response:
        answer = self.jog.pause(pause)
        response.success, response.message = answer.ok, answer.message
        return response

    def _on_switch(self, request: Any, response: Any) -> Any:
        answer = self.jog.switch(request.command_type)
        response.success = answer.ok
        if not answer.ok:
            self.node.get_logger().warning(f'servo: switch_command_type: {answer.message}')
        return response

    # ------------------------------------------------------------------ status
    def _publish_status(self) -> None:
        code, message = self.jog.status()
        owner = self._owner
        if owner is not None and owner.done.is_set() and owner.outcome == \
                MotionCode.UNSAFE_PATH:
            code, message = JogStatus.HALT_FOR_COLLISION, owner.message
        now = time.monotonic()
        if (int(code), message) == self._published and \
                now - self._published_at < STATUS_REPEAT:
            return
        self._published, self._published_at = (int(code), message), now
        if self._status_type is Int8:
            self.status_publisher.publish(Int8(data=int(code)))
        else:
            self.status_publisher.publish(ServoStatus(code=int(code), message=message))


def main(args: list[str] | None = None) -> None:
    sys.exit(run(lambda: TrajectoryExecutor(attach=ServoInterface), args,
                 threads=EXECUTOR_THREADS))


if __name__ == '__main__':
    main()
