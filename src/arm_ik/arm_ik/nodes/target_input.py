"""target_input: user targets and scripted pick-and-place cycles, sent as MoveToTarget goals.

Takes targets from RViz's "Publish Point" tool (``clicked_point``, geometry_msgs/PointStamped)
and "2D Goal Pose" tool (``goal_pose``, geometry_msgs/PoseStamped), forwards each as a goal of
the trajectory executor's action and reports the outcome. It does not read the ``target``
topic: the trajectory_executor follows that stream live itself (with its watchdog), while this
node turns discrete targets into goals. Non-finite targets are refused here.

It also runs a scripted sequence from YAML (``sequence_file``), e.g. the CCD arm's pick ->
lift -> place -> home cycle or the Manipulator3D cycle HOME -> START -> PICK -> GOAL -> PLACE
-> HOME -> wait; START and GOAL come from the parameters ``start``/``goal`` or, with
``interactive``, from the console. Every point is checked (reach rules, IK, the floor) before
the cycle starts: an unreachable one is refused with the reason and no goal is sent.
A clicked point or goal pose takes over: the running cycle stops and the click is sent.
Attach, detach and the step after a move are decided on a pose known to be current
(kinematics.tasks.current_pose): the result's final state, or a joint state stamped after the
result; without either the cycle waits up to ``current_pose_timeout`` s, then goes on with
the move's target and says so in the step's status.

Topics (relative, in the arm's namespace; remap RViz's /clicked_point and /goal_pose):
  sub  clicked_point   geometry_msgs/PointStamped
  sub  goal_pose       geometry_msgs/PoseStamped
  sub  joint_states    sensor_msgs/JointState (the tip the carried ball follows; a state
                       stamped before the last move's result is ignored)
  pub  target_status   arm_interfaces/TargetStatus (transient local, depth 20)
  pub  ball_state      arm_interfaces/BallState (latched)
  pub  ball_marker     visualization_msgs/Marker (latched; orange carried, green free)
Action client: ``action_name`` (trajectory_executor/move_to_target).
A new ``robot_description`` with the same joints (e.g. new link lengths) rebuilds the reach
check and the sequence's machine and checks the points again; refused while a cycle runs.
Services: ~/run_cycle, ~/stop_cycle (std_srvs/Trigger).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
import functools
import math
import sys
import threading
import time

from action_msgs.msg import GoalStatus
from geometry_msgs.msg import PointStamped, PoseStamped
import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.action import ActionClient
from rclpy.exceptions import ParameterException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from visualization_msgs.msg import Marker

from arm_ik.kinematics.joint_state import positions_by_name
from arm_ik.kinematics.model import ArmModel
from arm_ik.kinematics.request import IKDispatcher
from arm_ik.kinematics.result import ErrorCode
from arm_ik.kinematics.safety.geometry import SafetyGeometry
from arm_ik.kinematics.solvers.base import Workspace
from arm_ik.kinematics.tasks.console import ask_points
from arm_ik.kinematics.tasks.current_pose import CurrentPose, PoseState
from arm_ik.kinematics.tasks.pick_place import (
    check_reachable,
    CYCLES,
    MachineState,
    PickPlaceMachine,
    Reachability,
    sequence_points,
)
from arm_ik.kinematics.tasks.sequences import (
    load_sequence,
    resolve_sequence_path,
    SequenceError,
    Step,
    StepKind,
    TaskSequence,
    with_points,
)
from arm_ik.nodes import conversions, task_messages
from arm_ik.nodes import target_input_parameters as params
from arm_ik.nodes.common import (
    arm_of,
    constant_names,
    declare_arm_model,
    DescriptionReload,
    LATCHED_QOS,
    run,
    StartupError,
)
from arm_ik.nodes.target_input_parameters import POINT_PARAMETERS
from arm_interfaces.action import MoveToTarget
from arm_interfaces.msg import BallState, MotionErrorCode, TargetStatus

STATUS_QOS = QoSProfile(depth=20, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)
TICK_PERIOD = 0.05   # s, housekeeping: cycle start, waits, result timeouts, ball publishing
RESULT_RETRY = 2.0   # s past a move's duration between requests for its result
_STATE_NAMES = constant_names(TargetStatus)
_MOTION_CODE_NAMES = constant_names(MotionErrorCode)


def _fmt(values) -> str:
    return '[' + ', '.join(f'{float(v):.3f}' for v in values) + ']'


@dataclass
class ActiveGoal:
    """The goal this node has in flight (one at a time, as the executor serves them).

    ``deadline`` (monotonic s) is when the result is overdue; ``answer_by`` when the accept
    or reject is, after which the goal is sent again (``attempts`` so far).
    """

    token: int
    source: str
    step: Step | None
    goal: MoveToTarget.Goal
    target: np.ndarray
    target_name: str
    duration: float
    deadline: float = 0.0
    answer_by: float = 0.0
    attempts: int = 0
    ask_result_at: float = 0.0
    handle: object = None


@dataclass(frozen=True)
class ArmTools:
    """What the node derives from one arm model; swapped in whole on a new description.

    ``machine`` is the current sequence's machine rebuilt for the model (None at start-up,
    where the sequence file is read later, and without a sequence).
    """

    model: ArmModel
    workspace: Workspace
    home: np.ndarray
    dispatcher: IKDispatcher
    geometry: SafetyGeometry
    machine: PickPlaceMachine | None


class TargetInput(Node):
    """Forwards targets as MoveToTarget goals and runs the scripted pick-and-place cycles."""

    def __init__(self) -> None:
        super().__init__('target_input')
        self.arm, self.model, self._config = declare_arm_model(self, reloadable=True)
        # The dispatcher's solvers are used by the executor thread and the console thread.
        self._ik_lock = threading.Lock()
        self.machine: PickPlaceMachine | None = None
        self._use_tools(self._tools(self.model))
        params.declare_parameters(self)
        self.settings = params.read_settings(self)
        self.file_sequence, self.machine = self._load_sequence()
        self.base_frame = self.model.base_link

        self._token = 0
        self._active: ActiveGoal | None = None
        self._wait_until: float | None = None
        self._pending_start = False
        self._refused: list[Reachability] = []
        self._joint_tip: np.ndarray | None = None
        self._ball_dirty = False
        self._ball_sent_at = 0.0
        self._waiting_logged_at = 0.0
        self._console_lock = threading.Lock()
        self._console_answer: dict[str, np.ndarray] | None = None
        self._console = 'off'   # off | asking | answered

        self.status_publisher = self.create_publisher(TargetStatus, 'target_status', STATUS_QOS)
        self.ball_publisher = self.create_publisher(BallState, 'ball_state', LATCHED_QOS)
        self.marker_publisher = self.create_publisher(Marker, 'ball_marker', LATCHED_QOS)
        action_name = self.get_parameter('action_name').value
        self.client = ActionClient(self, MoveToTarget, action_name)
        self.action_path = self.resolve_topic_name(action_name)
        self.create_subscription(PointStamped, 'clicked_point', self._on_clicked_point, 10)
        self.create_subscription(PoseStamped, 'goal_pose', self._on_goal_pose, 10)
        self.create_subscription(JointState, 'joint_states', self._on_joint_states,
                                 qos_profile_sensor_data)
        self.create_service(Trigger, '~/run_cycle', self._on_run_cycle)
        self.create_service(Trigger, '~/stop_cycle', self._on_stop_cycle)
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)
        self.create_timer(TICK_PERIOD, self._tick)

        self.get_logger().info(f'{self.arm}: forwarding clicked_point and goal_pose to '
                               f'{self.action_path}')
        if self.machine is not None:
            self._publish_ball()     # the ball lies at the pick point before any cycle
            self._prepare_cycle()
        self._reload = DescriptionReload(self, self.model, self._tools, self._use_new_model,
                                         busy=self._busy)

    # ------------------------------------------------------------------ the arm model
    def _tools(self, model: ArmModel) -> ArmTools:
        """Reach rules, home pose, IK, floor check (and the sequence's machine) of ``model``.

        Raises:
            StartupError: the arm's IK or safety settings do not fit ``model``.
            ValueError: the sequence or the solver parameter does not fit it.
        """
        arm = arm_of(model, self._config, self.arm)
        workspace, home, geometry = arm.workspace, arm.home, arm.safety
        # The arm's one dispatcher: the same solver and floor rules as ik_server's.
        dispatcher = arm.dispatcher()
        machine = None
        if self.machine is not None:
            solver = self.settings.clicks.solver
            reason = dispatcher.solver_reason(solver) if solver else ''
            if reason:
                raise ValueError(f'solver {solver!r}: {reason}')
            machine = PickPlaceMachine(self.machine.sequence, model, self.machine.cycles,
                                       self.machine.grasp_tolerance)
        return ArmTools(model, workspace, home, dispatcher, geometry, machine)

    def _use_tools(self, tools: ArmTools) -> None:
        with self._ik_lock:      # a console check in flight finishes with the old ones
            self.model, self.workspace, self.home = tools.model, tools.workspace, tools.home
            self.dispatcher, self.geometry = tools.dispatcher, tools.geometry

    def _busy(self) -> str:
        if self.machine is not None and self.machine.state == MachineState.RUNNING:
            return (f'{self.machine.sequence.name} is running: stop the cycle (~/stop_cycle) '
                    "before changing the arm's model")
        return ''

    def _use_new_model(self, tools: ArmTools) -> None:
        self._use_tools(tools)
        self._joint_tip = None          # FK of the old links; the next joint_states sets it
        if tools.machine is None:
            return
        # Not running (see _busy): a fresh machine, its ball at the pick point of the new
        # model, and the points checked again before a cycle may start.
        self.machine = tools.machine
        self._publish_ball()
        if self._refused or self._pending_start:
            self._pending_start = False
            self._prepare_cycle()

    # ------------------------------------------------------------------ parameters
    def _validate_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        points = {}
        for parameter in parameters:
            if parameter.name in POINT_PARAMETERS:
                if self.file_sequence is None or parameter.name not in self.file_sequence.points:
                    return SetParametersResult(successful=False, reason=(
                        f'{parameter.name}: the sequence has no point {parameter.name!r}'))
                vector, reason = params.point_from_value(parameter.name, parameter.value)
                if vector is None:
                    return SetParametersResult(successful=False, reason=reason)
                points[parameter.name] = vector
            else:
                reason = params.setting_reason(parameter.name, parameter.value,
                                               self.dispatcher.solver_reason)
                if reason:
                    return SetParametersResult(successful=False, reason=reason)
        if points:
            refused = [r for r in self._check(points) if not r.ok]
            if refused:
                return SetParametersResult(successful=False,
                                           reason='; '.join(r.reason for r in refused))
        return SetParametersResult(successful=True)

    def _apply_parameters(self, parameters: list[Parameter]) -> None:
        self.settings = params.read_settings(self)
        if self.machine is None:
            return
        self.machine.cycles = self.settings.cycles
        self.machine.grasp_tolerance = self.settings.grasp_tolerance
        if any(p.name in POINT_PARAMETERS for p in parameters):
            sequence = self._sequence_from_parameters()
            self.machine.replace_sequence(sequence)
            self.get_logger().info(
                f'{sequence.name}: ' + ', '.join(f'{n.upper()} {_fmt(sequence.point(n))} m'
                                                 for n in POINT_PARAMETERS
                                                 if n in sequence.points) +
                (' from the next cycle on' if self.machine.state == MachineState.RUNNING
                 else ''))
            if self._refused and self.machine.state != MachineState.RUNNING:
                self._prepare_cycle()

    # ------------------------------------------------------------------ the sequence
    def _load_sequence(self) -> tuple[TaskSequence | None, PickPlaceMachine | None]:
        name = self.get_parameter('sequence_file').value
        sequence = None
        if name:
            try:
                sequence = load_sequence(resolve_sequence_path(name, _config_dirs()))
            except SequenceError as error:
                raise StartupError(str(error)) from None
        params.declare_point_parameters(self, sequence)
        if sequence is None:
            given = [n for n in POINT_PARAMETERS if params.point_value(self, n) is not None]
            if given:
                raise StartupError(f'{", ".join(given)} given without a sequence_file that '
                                   'uses them')
            return None, None
        if sequence.arm and sequence.arm != self.arm:
            raise StartupError(f'{sequence.source}: written for arm "{sequence.arm}", this '
                               f'node serves "{self.arm}"')
        self.file_sequence = sequence
        try:
            machine = PickPlaceMachine(self._sequence_from_parameters(), self.model,
                                       self.settings.cycles, self.settings.grasp_tolerance)
        except (SequenceError, ValueError) as error:
            raise StartupError(str(error)) from None
        spec = CYCLES.get(sequence.cycle)
        self.get_logger().info(
            f'sequence {sequence.name} from {sequence.source}: '
            f'{spec.description if spec else "free-form"}, {len(sequence.steps)} steps, '
            f'cycles {self.settings.cycles or "forever"}')
        return sequence, machine

    def _sequence_from_parameters(self) -> TaskSequence:
        """The file's sequence with the start/goal parameters applied.

        Raises:
            StartupError: a parameter is set but malformed, or the sequence has no such point.
        """
        overrides = {}
        for name in POINT_PARAMETERS:
            value = params.point_value(self, name)
            if value is None:
                continue
            vector, reason = params.point_from_value(name, value)
            if vector is None:
                raise StartupError(reason)
            overrides[name] = vector
        try:
            return with_points(self.file_sequence, overrides)
        except SequenceError as error:
            raise StartupError(str(error)) from None

    def _check(self, points: dict[str, np.ndarray]) -> list[Reachability]:
        with self._ik_lock:
            return check_reachable(self.dispatcher, points, self.home,
                                   geometry=self.geometry, solver=self.settings.clicks.solver)

    def _prepare_cycle(self) -> None:
        """Ask the console (interactive), or check every point and arm the autostart."""
        if self.get_parameter('interactive').value and self._console == 'off':
            self._console = 'asking'
            threading.Thread(target=self._ask_console, name='console', daemon=True).start()
            return
        if self._console == 'asking':
            return
        sequence = self.machine.sequence
        source = 'console' if self._console == 'answered' else 'sequence'
        self._refused = [r for r in self._check(sequence_points(sequence)) if not r.ok]
        if self._refused:
            for refusal in self._refused:
                self._report(TargetStatus.REFUSED, source, None, refusal.reason,
                             kind='check', target=refusal.position, target_name=refusal.name,
                             code=MotionErrorCode.IK_FAILED, ik_code=int(refusal.code))
            self.get_logger().error(f'{sequence.name}: cycle refused, no goal sent: ' +
                                    '; '.join(r.reason for r in self._refused))
            return
        self.get_logger().info(f'{sequence.name}: every point is reachable')
        self._pending_start = bool(self.get_parameter('autostart').value)

    def _ask_console(self) -> None:
        """Console thread: ask START and GOAL until reachable (stdin, stdout)."""
        sequence = self.machine.sequence
        names = [n for n in POINT_PARAMETERS if n in sequence.points]
        answers = ask_points(names, {n: sequence.point(n) for n in names},
                             lambda name, point: self._check({name: point})[0],
                             sys.stdin, sys.stdout)
        with self._console_lock:
            self._console_answer = answers

    def _take_console_answer(self) -> None:
        with self._console_lock:
            answers, self._console_answer = self._console_answer, None
        if answers is None:
            return
        self._console = 'answered'
        try:
            # Through the parameters, so `ros2 param get` shows what the cycle uses.
            results = self.set_parameters([Parameter(n, Parameter.Type.DOUBLE_ARRAY,
                                                     [float(v) for v in p])
                                           for n, p in answers.items()])
        except ParameterException as error:
            self.get_logger().error(f'console answer not applied: {error}')
            return
        for result in results:
            if not result.successful:
                self.get_logger().error(f'console answer refused: {result.reason}')
        self._prepare_cycle()

    def _start_cycle(self) -> None:
        step = self.machine.start()
        self._mark_ball(force=True)
        self.get_logger().info(f'{self.machine.sequence.name}: cycle {self.machine.cycle} '
                               'starts')
        self._run_step(step)

    def _run_step(self, step: Step) -> None:
        if step.kind == StepKind.MOVE:
            self._send_step(step)
        elif step.kind == StepKind.WAIT:
            self._report(TargetStatus.STARTED, 'sequence', step, step.label)
            self._wait_until = time.monotonic() + step.seconds
        else:
            self._when_current(step, lambda tip, note: self._finish_step(tip, 0.0, '', note))

    def _finish_step(self, tip: np.ndarray | None, final_error: float, message: str,
                     note: str = '') -> None:
        """Complete the current step with the tool at ``tip`` (None: the machine's stand-in,
        the target of the last move); ``note`` says why no current tip was known."""
        step = self.machine.current
        cycle = self.machine.cycle      # completing a cycle's last step starts the next
        reason = self.machine.complete(tip)
        stand_in = f' ({note}: the target of the last move stands in)' if note else ''
        if reason:
            self._report(TargetStatus.FAILED, 'sequence', step,
                         f'{reason}{stand_in}; cycle stopped', cycle=cycle)
            self._mark_ball(force=True)
            return
        if step.kind in (StepKind.ATTACH, StepKind.DETACH):
            message = f'{step.label} at {_fmt(self.machine.ball.position)} m'
            # Labelled with the step's state (PICK, PLACE): the machine has moved on already.
            self._mark_ball(force=True, phase=step.phase)
        self._report(TargetStatus.SUCCEEDED, 'sequence', step,
                     (message or step.label) + stand_in, final_error=final_error, cycle=cycle)
        if self.machine.state == MachineState.RUNNING:
            if self.machine.index == 0:
                self._mark_ball(force=True)   # a new cycle: a fresh ball at the pick point
                self.get_logger().info(f'{self.machine.sequence.name}: cycle '
                                       f'{self.machine.cycle} starts')
            self._run_step(self.machine.current)
        elif self.machine.state == MachineState.DONE:
            self._report(TargetStatus.FINISHED, 'sequence', None,
                         f'{self.machine.sequence.name}: {self.machine.cycle} cycle(s) finished')

    def _stop_cycle(self, reason: str) -> bool:
        """Stop a running or pending cycle; True when there was one."""
        was_running = self.machine is not None and self.machine.state == MachineState.RUNNING
        pending = self._pending_start
        self._pending_start = False
        if not was_running:
            return pending
        self.machine.stop(reason)
        self._wait_until = None
        self._decision = None
        self._report(TargetStatus.STOPPED, 'sequence', None,
                     f'{self.machine.sequence.name}: cycle {self.machine.cycle} stopped: {reason}')
        return True

    # ------------------------------------------------------------------ goals
    def _send_step(self, step: Step) -> None:
        sequence = self.machine.sequence
        target = self.machine.target_of(step)
        settings = step.settings
        if not settings.solver and self.settings.clicks.solver:
            settings = replace(settings, solver=self.settings.clicks.solver)
        if sequence.is_point(step.target):
            goal = task_messages.point_goal(self.base_frame, target, settings)
        else:
            joints = sequence.joints(step.target)
            goal = task_messages.joint_goal(self.base_frame, self.model.joint_names,
                                            [joints[n] for n in self.model.joint_names],
                                            target, settings)
        self._send(goal, 'sequence', step, target, step.target, settings.duration)

    def _send(self, goal: MoveToTarget.Goal, source: str, step: Step | None,
              target: np.ndarray, target_name: str, duration: float) -> None:
        if not self.client.server_is_ready():
            reason = (f"the executor's action server {self.action_path} is not "
                      'available; no goal sent')
            if step is not None:
                self.machine.fail(reason)
            self._report(TargetStatus.REFUSED, source, step, reason, target=target,
                         target_name=target_name, code=MotionErrorCode.INVALID_GOAL)
            return
        active = ActiveGoal(0, source, step, goal, np.asarray(target, float), target_name,
                            duration)
        self._dispatch(active)
        self._report(TargetStatus.STARTED, source, step,
                     f'goal sent: {target_name or "target"} {_fmt(target)} m',
                     target=target, target_name=target_name)

    def _dispatch(self, active: ActiveGoal) -> None:
        """Send (or send again) ``active``'s goal under a new token."""
        self._token += 1
        now = time.monotonic()
        active.token = self._token
        active.attempts += 1
        active.answer_by = now + self.settings.response_timeout
        active.deadline = now + active.duration + self.settings.result_timeout
        self._active = active
        future = self.client.send_goal_async(
            active.goal, feedback_callback=functools.partial(self._on_feedback, active.token))
        future.add_done_callback(functools.partial(self._on_goal_response, active.token))

    def _check_unanswered(self, active: ActiveGoal, now: float) -> None:
        """Resend a goal nobody answered: a request sent just as the server was discovered
        (or to a server that has just gone) can be lost, and its future would never end."""
        if active.handle is not None or now <= active.answer_by:
            return
        if active.attempts < params.SEND_ATTEMPTS:
            self.get_logger().warn(
                f'[{active.source}] no answer to the goal for {active.target_name or "target"} '
                f'within {self.settings.response_timeout:g} s; sending it again')
            self._dispatch(active)
            return
        self._goal_failed(active, f'the executor did not answer the goal {active.attempts} '
                          f'times within {self.settings.response_timeout:g} s each',
                          MotionErrorCode.INTERNAL_ERROR)

    def _current(self, token: int) -> ActiveGoal | None:
        active = self._active
        return active if active is not None and active.token == token else None

    def _on_goal_response(self, token: int, future) -> None:
        active = self._current(token)
        if active is None:
            return   # superseded: the executor preempts it on the newer goal
        try:
            handle = future.result()
        except Exception as error:  # noqa: BLE001 - any transport failure is an outcome
            self._goal_failed(active, f'sending the goal failed: {error}',
                              MotionErrorCode.INTERNAL_ERROR)
            return
        if not handle.accepted:
            self._goal_failed(active, 'the executor rejected the goal',
                              MotionErrorCode.INVALID_GOAL)
            return
        active.handle = handle
        active.ask_result_at = time.monotonic() + active.duration + RESULT_RETRY
        handle.get_result_async().add_done_callback(
            functools.partial(self._on_result, token))

    def _check_result(self, active: ActiveGoal, now: float) -> None:
        """Ask again for the result of an accepted goal that is overdue: a result response
        sent before the server matched this client is lost, and asking is idempotent."""
        if active.handle is None or now < active.ask_result_at:
            return
        active.ask_result_at = now + RESULT_RETRY
        active.handle.get_result_async().add_done_callback(
            functools.partial(self._on_result, active.token))

    def _on_feedback(self, token: int, message) -> None:
        active = self._current(token)
        if active is None:
            return
        point = message.feedback.tip_position
        tip = np.array([point.x, point.y, point.z])
        # Where the move is now, for the carried ball only: no decision is taken on it (the
        # last feedback may be from before the move's end).
        if np.all(np.isfinite(tip)) and self._joint_tip is None:
            self._follow(tip)

    def _on_result(self, token: int, future) -> None:
        active = self._current(token)
        if active is None:
            return
        self._active = None
        try:
            wrapped = future.result()
        except Exception as error:  # noqa: BLE001
            self._goal_failed(active, f'no result: {error}', MotionErrorCode.INTERNAL_ERROR)
            return
        result = wrapped.result
        # From here on only the result's final state or a joint state stamped after this
        # instant says where the arm is; what joint_states delivered so far may be older.
        self._pose.move_ended(self._ros_seconds(), task_messages.final_positions(
            self.model.joint_names, result.executed_path))
        code = int(result.error_code.val)
        if wrapped.status != GoalStatus.STATUS_SUCCEEDED or code != MotionErrorCode.SUCCESS:
            self._goal_failed(active, result.message or f'goal ended with status '
                              f'{wrapped.status}', code, int(result.ik_error_code.val),
                              float(result.final_error), pose_known=True)
            return
        message = (f'{active.target_name or "target"} {_fmt(active.target)} m reached, error '
                   f'{result.final_error * 1e3:.2f} mm' + (f': {result.message}'
                                                          if result.message else ''))
        if active.step is not None:
            if self.machine.current is active.step:
                final_error = float(result.final_error)
                self._when_current(active.step, lambda tip, note: self._finish_step(
                    tip, final_error, message, note))
            return
        self._report(TargetStatus.SUCCEEDED, active.source, None, message, target=active.target,
                     final_error=float(result.final_error))

    def _goal_failed(self, active: ActiveGoal, reason: str, code: int, ik_code: int = 0,
                     final_error: float = 0.0, pose_known: bool = False) -> None:
        """Report a goal that failed; ``pose_known``: its result already told
        ``_pose`` where the arm ended (else the arm may have moved anywhere)."""
        self._active = None
        if not pose_known:
            self._pose.move_ended(self._ros_seconds())
        text = f'{_MOTION_CODE_NAMES.get(code, code)}: {reason}'
        if active.step is not None and self.machine.current is active.step:
            self.machine.fail(text)
            self._mark_ball(force=True)
        self._report(TargetStatus.FAILED, active.source, active.step, text,
                     target=active.target, target_name=active.target_name, code=code,
                     ik_code=ik_code, final_error=final_error)

    # ------------------------------------------------------------------ inputs
    def _on_clicked_point(self, message: PointStamped) -> None:
        point = np.array([message.point.x, message.point.y, message.point.z])
        if not np.all(np.isfinite(point)):
            self._refuse_input('clicked_point', point, 'clicked_point has a non-finite '
                               f'coordinate {point.tolist()}')
            return
        self._take_over('clicked_point')
        goal = task_messages.point_goal(message.header.frame_id, point, self.settings.clicks)
        self._send(goal, 'clicked_point', None, point, '', self.settings.clicks.duration)

    def _on_goal_pose(self, message: PoseStamped) -> None:
        pose = message.pose
        point = np.array([pose.position.x, pose.position.y, pose.position.z])
        quaternion = np.array([pose.orientation.x, pose.orientation.y, pose.orientation.z,
                               pose.orientation.w])
        if not (np.all(np.isfinite(point)) and np.all(np.isfinite(quaternion))):
            self._refuse_input('goal_pose', point, 'goal_pose has a non-finite position or '
                               f'orientation {point.tolist()} {quaternion.tolist()}')
            return
        self._take_over('goal_pose')
        goal = task_messages.point_goal(message.header.frame_id, point, self.settings.clicks,
                                        task_messages.GOAL_TYPES[self.settings.goal_pose_type],
                                        quaternion)
        self._send(goal, 'goal_pose', None, point, '', self.settings.clicks.duration)

    def _refuse_input(self, source: str, point: np.ndarray, reason: str) -> None:
        self._report(TargetStatus.REFUSED, source, None, reason + '; no goal sent',
                     target=np.where(np.isfinite(point), point, 0.0),
                     code=MotionErrorCode.INVALID_GOAL, ik_code=int(ErrorCode.INVALID_INPUT))

    def _take_over(self, source: str) -> None:
        self._stop_cycle(f'{source} took over')

    def _on_joint_states(self, message: JointState) -> None:
        q, _ = positions_by_name(self.model.joint_names, message.name, message.position)
        if q is None:           # an unusable state keeps the last good tip
            return
        stamp = message.header.stamp.sec + message.header.stamp.nanosec * 1e-9
        if not self._pose.measured(q, stamp):
            return              # stamped before the last move's result: where the arm was
        self._joint_tip = self.model.fk(q)[:3, 3].copy()
        self._follow(self._joint_tip)
        self._take_decision(time.monotonic())

    # ------------------------------------------------------------------ the current pose
    # Built on first use (and _decision defaults at class level): __init__ is about the
    # arm model and its tools, the cycle's pose rule needs nothing of them.
    _decision: tuple[Step, Callable[[np.ndarray | None, str], None]] | None = None

    @functools.cached_property
    def _pose(self) -> CurrentPose:
        """Which pose counts as current for the cycle's decisions (kinematics.tasks)."""
        return CurrentPose(self.settings.current_pose_timeout)

    def _ros_seconds(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _when_current(self, step: Step,
                      decide: Callable[[np.ndarray | None, str], None]) -> None:
        """Run ``decide(tip, note)`` for ``step`` on a tip known to be current: now when
        one is, else from joint_states or the tick once one comes, or with tip None and the
        reason in ``note`` once the wait ends."""
        self._decision = (step, decide)
        self._take_decision(time.monotonic())

    def _take_decision(self, now: float) -> None:
        if self._decision is None:
            return
        step, decide = self._decision
        if self.machine is None or self.machine.current is not step:
            self._decision = None       # the cycle stopped or moved on meanwhile
            return
        self._pose.wait = self.settings.current_pose_timeout
        state = self._pose.state(now)
        if state == PoseState.WAITING:
            return
        self._decision = None
        q = self._pose.positions
        tip = None if q is None else self.model.fk(q)[:3, 3].copy()
        decide(tip, '' if state == PoseState.CURRENT else self._pose.timeout_reason())

    def _follow(self, tip: np.ndarray) -> None:
        if self.machine is not None and self.machine.follow(tip):
            self._ball_dirty = True

    # ------------------------------------------------------------------ services
    def _on_run_cycle(self, request: Trigger.Request, response: Trigger.Response
                      ) -> Trigger.Response:
        if self.machine is None:
            response.success, response.message = False, 'no sequence_file was given'
        elif self.machine.state == MachineState.RUNNING:
            response.success, response.message = False, 'the cycle is already running'
        elif self._console == 'asking':
            response.success, response.message = False, 'waiting for START/GOAL on the console'
        else:
            sequence = self.machine.sequence
            refused = [r for r in self._check(sequence_points(sequence)) if not r.ok]
            if refused:
                response.success = False
                response.message = '; '.join(r.reason for r in refused)
            elif not self.client.server_is_ready():
                response.success = False
                response.message = f'the action server {self.action_path} is not up'
            else:
                self._refused = []
                self._start_cycle()
                response.success, response.message = True, f'{sequence.name} started'
        return response

    def _on_stop_cycle(self, request: Trigger.Request, response: Trigger.Response
                       ) -> Trigger.Response:
        active = self._active
        stopped = self._stop_cycle('~/stop_cycle was called')
        if active is not None and active.step is not None:
            self._active = None
            if active.handle is not None:
                active.handle.cancel_goal_async()   # the executor holds the pose reached
        response.success = stopped
        response.message = 'cycle stopped' if stopped else 'no cycle was running'
        return response

    # ------------------------------------------------------------------ housekeeping
    def _tick(self) -> None:
        now = time.monotonic()
        self._take_console_answer()
        self._take_decision(now)
        if self._pending_start:
            if self.client.server_is_ready():
                self._pending_start = False
                self._start_cycle()
            elif now - self._waiting_logged_at > 10.0:
                self._waiting_logged_at = now
                self.get_logger().info(f'waiting for the action server '
                                       f'{self.action_path}')
        if self._wait_until is not None and now >= self._wait_until:
            self._wait_until = None
            if self.machine is not None and self.machine.state == MachineState.RUNNING:
                self._finish_step(None, 0.0, '')
        active = self._active
        if active is not None:
            self._check_unanswered(active, now)
        active = self._active
        if active is not None:
            self._check_result(active, now)
        active = self._active
        if active is not None and active.handle is not None and now > active.deadline:
            if active.handle is not None:
                active.handle.cancel_goal_async()
            self._goal_failed(active, 'no result from the executor within '
                              f"{self.settings.result_timeout:g} s beyond the move's duration",
                              MotionErrorCode.INTERNAL_ERROR)
        if self._ball_dirty and (self.settings.ball_rate <= 0.0 or
                                 now - self._ball_sent_at >= 1.0 / self.settings.ball_rate):
            self._publish_ball()

    def _mark_ball(self, force: bool = False, phase: str | None = None) -> None:
        self._ball_dirty = True
        if force:
            self._publish_ball(phase)

    def _publish_ball(self, phase: str | None = None) -> None:
        if self.machine is None:
            return
        self._ball_dirty = False
        self._ball_sent_at = time.monotonic()
        stamp = self.get_clock().now().to_msg()
        self.ball_publisher.publish(task_messages.ball_state(
            self.machine.ball, self.base_frame, stamp, self.machine.sequence.name,
            self.machine.cycle, self.machine.phase if phase is None else phase))
        self.marker_publisher.publish(task_messages.ball_marker(self.machine.ball,
                                                                self.base_frame, stamp))

    def _report(self, state: int, source: str, step: Step | None, message: str, *,
                kind: str = '', target=None, target_name: str = '', code: int = 0,
                ik_code: int = 0, final_error: float = 0.0, cycle: int | None = None
                ) -> None:
        """Publish and log one TargetStatus; ``cycle`` is the sequence's cycle the step
        belongs to (default: the current one)."""
        status = TargetStatus()
        status.header.stamp = self.get_clock().now().to_msg()
        status.header.frame_id = self.base_frame
        status.state = state
        status.source = source
        in_sequence = source in ('sequence', 'console') and self.machine is not None
        status.sequence = self.machine.sequence.name if in_sequence else ''
        status.cycle = (self.machine.cycle if cycle is None else cycle) if in_sequence else 0
        if step is not None:
            status.step = step.index
            status.phase = step.phase
            status.step_kind = step.kind.value
            status.target_name = step.target
            if step.kind == StepKind.MOVE and target is None:
                target = self.machine.target_of(step)
        status.step_kind = kind or status.step_kind or 'target'
        status.target_name = target_name or status.target_name
        if target is not None:
            status.target = conversions.point(target)
        status.error_code.val = int(code)
        status.ik_error_code.val = int(ik_code)
        status.message = message
        status.final_error = float(final_error) if math.isfinite(final_error) else math.inf
        self.status_publisher.publish(status)
        self._log(status)

    def _log(self, status: TargetStatus) -> None:
        """One log line per report, at a level that matches its state."""
        where = status.source
        if status.sequence:
            where += f' {status.sequence}' + (f' cycle {status.cycle}' if status.cycle else '')
        if status.phase:
            where += f' {status.phase}'
        line = f'[{where}] {_STATE_NAMES.get(status.state, status.state)}: {status.message}'
        logger = self.get_logger()
        if status.state in (TargetStatus.FAILED, TargetStatus.REFUSED):
            logger.error(line)
        elif status.state == TargetStatus.STOPPED:
            logger.warn(line)
        else:
            logger.info(line)

    def destroy_node(self) -> None:
        # Nothing stale on screen: the ball marker goes with the node.
        try:
            if self.machine is not None:
                self.marker_publisher.publish(task_messages.ball_marker(
                    None, self.base_frame, self.get_clock().now().to_msg()))
        except Exception:  # noqa: BLE001 - the context may already be shutting down
            pass
        super().destroy_node()


def _config_dirs() -> list[str]:
    """arm_bringup's config folder when installed (where the sequence files live)."""
    try:
        from ament_index_python.packages import get_package_share_directory
        return [f'{get_package_share_directory("arm_bringup")}/config']
    except (ImportError, LookupError, OSError):
        return []


def main(args: list[str] | None = None) -> None:
    sys.exit(run(TargetInput, args))


if __name__ == '__main__':
    main()
