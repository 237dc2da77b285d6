"""target_input: user targets and scripted pick-and-place cycles, sent as MoveToTarget goals.

Takes targets from RViz's "Publish Point" tool (``clicked_point``, geometry_msgs/PointStamped)
and "2D Goal Pose" tool (``goal_pose``, geometry_msgs/PoseStamped), forwards each as a goal of
the trajectory executor's action and reports the outcome. It does not read the ``target``
topic: the trajectory_executor follows that stream live itself. It also runs a scripted
sequence from YAML (``sequence_file``), e.g. the Manipulator3D cycle HOME -> START -> PICK ->
GOAL -> PLACE -> HOME -> wait; START and GOAL come from the parameters ``start``/``goal`` or,
with ``interactive``, from the console, and are checked for reach before the cycle starts.

The decisions (refusals, take-over by a click, the cycle's steps, timeouts, the ball, the
current pose after a move) are kinematics.tasks.cycle.CycleRunner's; goal resend and result
re-ask are arm_ik.middleware.GoalCourier's. This node converts messages to their calls and
carries out the effects they return.

Topics (relative, in the arm's namespace; remap RViz's /clicked_point and /goal_pose):
  sub  clicked_point   geometry_msgs/PointStamped
  sub  goal_pose       geometry_msgs/PoseStamped
  sub  joint_states    sensor_msgs/JointState (the tip the carried ball follows)
  pub  target_status   arm_interfaces/TargetStatus (transient local, depth 20)
  pub  ball_state      arm_interfaces/BallState (latched)
  pub  ball_marker     visualization_msgs/Marker (latched; orange carried, green free)
Action client: ``action_name`` (trajectory_executor/move_to_target).
A new ``robot_description`` with the same joints rebuilds the reach check and the sequence's
machine and checks the points again; refused while a cycle runs.
Services: ~/run_cycle, ~/stop_cycle (std_srvs/Trigger).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import sys
import threading
import time

from geometry_msgs.msg import PointStamped, PoseStamped
import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.exceptions import ParameterException
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from visualization_msgs.msg import Marker

from arm_ik.goal_refusals import RefusalWords, WORDS_WAIT
from arm_ik.middleware import GoalCourier, LockedActionClient
from arm_ik.nodes import marker_messages, task_messages
from arm_ik.nodes import target_input_parameters as params
from arm_ik.nodes.common import (
    arm_of,
    declare_arm_model,
    DescriptionReload,
    LATCHED_QOS,
    run,
    StartupError,
    subscribe_joint_states,
)
from arm_ik.nodes.parameters import ParameterError
from arm_interfaces.action import MoveToTarget
from arm_interfaces.msg import BallState, TargetStatus
from arm_kinematics.ik.request import IKDispatcher
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.scene.geometry import SafetyGeometry
from arm_kinematics.tasks import cycle as core
from arm_kinematics.tasks.console import ask_points
from arm_kinematics.tasks.cycle import CycleRunner, POINT_PARAMETERS
from arm_kinematics.tasks.pick_place import (
    check_reachable,
    CYCLES,
    PickPlaceMachine,
    Reachability,
)
from arm_kinematics.tasks.sequences import (
    load_sequence,
    resolve_sequence_path,
    SequenceError,
    TaskSequence,
)

TICK_PERIOD = 0.05   # s, housekeeping: cycle start, waits, result timeouts, ball publishing


@dataclass(frozen=True)
class ArmTools:
    """What the node derives from one arm model; swapped in whole on a new description.

    ``machine`` is the current sequence's machine rebuilt for the model (None at start-up,
    where the sequence file is read later, and without a sequence).
    """

    model: ArmModel
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
        self.cycle: CycleRunner | None = None
        self._use_tools(self._tools(self.model))
        try:
            self.settings = params.settings_of(params.TABLE.declare(self))
        except ParameterError as error:
            raise StartupError(str(error)) from None
        self.base_frame = self.model.base_link
        action_name = self.get_parameter('action_name').value
        self.client = LockedActionClient(self, MoveToTarget, action_name)
        self.action_path = self.resolve_topic_name(action_name)
        # A rejection's reason: the executor's words, waited for up to WORDS_WAIT s.
        self.refusals = RefusalWords(self, self.action_path)
        self._sent_at: dict[int, float] = {}
        self._rejected: dict[int, float] = {}
        self.file_sequence, machine = self._load_sequence()
        self.cycle = CycleRunner(self.model, machine, self.settings, self._check,
                                 self.client.server_is_ready, self.action_path)
        self.goals = GoalCourier(
            self.client, self.get_logger(), self._on_accepted, self._on_rejected,
            self._on_result, self._on_goal_failed, self._on_feedback,
            self.settings.response_timeout)
        self._console_lock = threading.Lock()
        self._console_answer: dict[str, np.ndarray] | None = None

        self.status_publisher = self.create_publisher(TargetStatus, 'target_status',
                                                      task_messages.TARGET_STATUS_QOS)
        self.ball_publisher = self.create_publisher(BallState, 'ball_state', LATCHED_QOS)
        self.marker_publisher = self.create_publisher(Marker, 'ball_marker', LATCHED_QOS)
        self.create_subscription(PointStamped, 'clicked_point', self._on_clicked_point, 10)
        self.create_subscription(PoseStamped, 'goal_pose', self._on_goal_pose, 10)
        self.joint_states = subscribe_joint_states(self, self._on_joint_states)
        self.create_service(Trigger, '~/run_cycle', self._on_run_cycle)
        self.create_service(Trigger, '~/stop_cycle', self._on_stop_cycle)
        params.TABLE.watch(self, self._apply_settings, self._settings_reason)
        self.add_on_set_parameters_callback(self._validate_points)
        self.add_post_set_parameters_callback(self._apply_points)
        self.create_timer(TICK_PERIOD, self._tick)

        self.get_logger().info(f'{self.arm}: forwarding clicked_point and goal_pose to '
                               f'{self.action_path}')
        self._do(self.cycle.start(time.monotonic()))
        self._reload = DescriptionReload(self, self.model, self._tools, self._use_new_model,
                                         busy=self.cycle.busy)

    # ------------------------------------------------------------------ effects
    def _do(self, effects: list[core.Effect]) -> None:
        """Carry out what the core decided, in order."""
        for effect in effects:
            if isinstance(effect, core.SendGoal):
                self._sent_at[effect.token] = self.refusals.mark()
                self.goals.send(effect.token, task_messages.goal_of(
                    effect.goal, self.model.joint_names), effect.duration,
                    f'[{effect.source}]', effect.target_name or 'target')
            elif isinstance(effect, core.DropGoal):
                self.goals.drop(effect.token, effect.cancel)
            elif isinstance(effect, core.Report):
                self.status_publisher.publish(task_messages.status_of(
                    effect, self.base_frame, self.get_clock().now().to_msg()))
                self._log(effect.level, effect.line)
            elif isinstance(effect, core.MoveBall):
                stamp = self.get_clock().now().to_msg()
                ball = effect.ball
                self.ball_publisher.publish(task_messages.ball_state(
                    ball, self.base_frame, stamp, effect.sequence, effect.cycle, effect.phase))
                self.marker_publisher.publish(marker_messages.ball_marker(
                    self.base_frame, stamp, ball.position, ball.radius, ball.attached))
            elif isinstance(effect, core.Log):
                self._log(effect.level, effect.text)
            elif isinstance(effect, core.AskConsole):
                threading.Thread(target=self._ask_console, args=(effect,), name='console',
                                 daemon=True).start()

    def _log(self, level: str, text: str) -> None:
        logger = self.get_logger()   # one call site per level: rclpy fixes its severity
        if level == 'error':
            logger.error(text)
        elif level == 'warn':
            logger.warning(text)
        else:
            logger.info(text)

    def _stamp(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    # ------------------------------------------------------------------ the arm model
    def _tools(self, model: ArmModel) -> ArmTools:
        """Reach rules, home pose, IK, floor check (and the sequence's machine) of ``model``.

        Raises:
            StartupError: the arm's IK or safety settings do not fit ``model``.
            ValueError: the sequence or the solver parameter does not fit it.
        """
        arm = arm_of(model, self._config, self.arm)
        # The arm's one dispatcher: the same solver and floor rules as ik_server's.
        dispatcher = arm.dispatcher()
        machine = self.cycle.machine if self.cycle is not None else None
        if machine is not None:
            solver = self.settings.clicks.solver
            reason = dispatcher.solver_reason(solver) if solver else ''
            if reason:
                raise ValueError(f'solver {solver!r}: {reason}')
            machine = PickPlaceMachine(machine.sequence, model, machine.cycles,
                                       machine.grasp_tolerance)
        return ArmTools(model, arm.home, dispatcher, arm.safety, machine)

    def _use_tools(self, tools: ArmTools) -> None:
        with self._ik_lock:      # a console check in flight finishes with the old ones
            self.model, self.home = tools.model, tools.home
            self.dispatcher, self.geometry = tools.dispatcher, tools.geometry

    def _use_new_model(self, tools: ArmTools) -> None:
        self._use_tools(tools)
        self._do(self.cycle.use_model(tools.model, tools.machine, time.monotonic()))

    def _check(self, points: Mapping[str, np.ndarray]) -> list[Reachability]:
        with self._ik_lock:
            return check_reachable(self.dispatcher, points, self.home,
                                   geometry=self.geometry, solver=self.settings.clicks.solver)

    # ------------------------------------------------------------------ parameters
    def _settings_reason(self, values: dict) -> str:
        solver = values['solver']
        return self.dispatcher.solver_reason(solver) if solver else ''

    def _apply_settings(self, values: dict) -> None:
        self.settings = params.settings_of(values)
        self.goals.response_timeout = self.settings.response_timeout
        self.cycle.use_settings(self.settings)

    def _validate_points(self, parameters: list[Parameter]) -> SetParametersResult:
        points = {}
        for parameter in (p for p in parameters if p.name in POINT_PARAMETERS):
            if self.file_sequence is None or parameter.name not in self.file_sequence.points:
                return SetParametersResult(successful=False, reason=(
                    f'{parameter.name}: the sequence has no point {parameter.name!r}'))
            vector, reason = params.point_from_value(parameter.name, parameter.value)
            if vector is None:
                return SetParametersResult(successful=False, reason=reason)
            points[parameter.name] = vector
        reason = self.cycle.refusals(points) if points else ''
        return SetParametersResult(successful=not reason, reason=reason)

    def _apply_points(self, parameters: list[Parameter]) -> None:
        if self.cycle.machine is not None and any(p.name in POINT_PARAMETERS
                                                  for p in parameters):
            self._do(self.cycle.use_sequence(params.sequence_of(self, self.file_sequence),
                                             time.monotonic()))

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
            machine = PickPlaceMachine(params.sequence_of(self, self.file_sequence), self.model,
                                       self.settings.cycles, self.settings.grasp_tolerance)
        except (SequenceError, ValueError) as error:
            raise StartupError(str(error)) from None
        spec = CYCLES.get(sequence.cycle)
        self.get_logger().info(
            f'sequence {sequence.name} from {sequence.source}: '
            f'{spec.description if spec else "free-form"}, {len(sequence.steps)} steps, '
            f'cycles {self.settings.cycles or "forever"}')
        return sequence, machine

    def _ask_console(self, ask: core.AskConsole) -> None:
        """Console thread: ask START and GOAL until reachable (stdin, stdout)."""
        answers = ask_points(ask.names, ask.defaults,
                             lambda name, point: self._check({name: point})[0],
                             sys.stdin, sys.stdout)
        with self._console_lock:
            self._console_answer = answers

    def _take_console_answer(self) -> None:
        with self._console_lock:
            answers, self._console_answer = self._console_answer, None
        if answers is None:
            return
        self.cycle.console_answered()
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
        self._do(self.cycle.prepare(time.monotonic()))

    # ------------------------------------------------------------------ inputs
    def _on_clicked_point(self, message: PointStamped) -> None:
        p = message.point
        self._do(self.cycle.target('clicked_point', message.header.frame_id, (p.x, p.y, p.z),
                                   time.monotonic()))

    def _on_goal_pose(self, message: PoseStamped) -> None:
        p, q = message.pose.position, message.pose.orientation
        self._do(self.cycle.target('goal_pose', message.header.frame_id, (p.x, p.y, p.z),
                                   time.monotonic(), (q.x, q.y, q.z, q.w)))

    def _on_joint_states(self, message: JointState) -> None:
        stamp = message.header.stamp.sec + message.header.stamp.nanosec * 1e-9
        self._do(self.cycle.joint_state(message.name, message.position, stamp,
                                        time.monotonic()))

    # ------------------------------------------------------------------ goal answers
    def _on_accepted(self, token: int) -> None:
        self._do(self.cycle.goal_accepted(token, time.monotonic()))

    def _on_rejected(self, token: int) -> None:
        self._rejected[token] = time.monotonic() + WORDS_WAIT
        self._report_rejections(time.monotonic())

    def _report_rejections(self, now: float) -> None:
        """Each rejection once its words came, or WORDS_WAIT s after it without them."""
        for token, deadline in list(self._rejected.items()):
            sent = self._sent_at.get(token, self.refusals.mark())
            if self.refusals.since(sent) or now >= deadline:
                del self._rejected[token]
                self._sent_at.pop(token, None)
                self._do(self.cycle.goal_rejected(token, now, self._stamp(),
                                                  self.refusals.sentence(sent)))

    def _on_goal_failed(self, token: int, reason: str) -> None:
        self._sent_at.pop(token, None)
        self._do(self.cycle.goal_failed(token, reason, MotionCode.INTERNAL_ERROR,
                                        time.monotonic(), self._stamp()))

    def _on_result(self, token: int, wrapped) -> None:
        self._sent_at.pop(token, None)
        outcome = task_messages.outcome_of(wrapped, self.model.joint_names)
        self._do(self.cycle.goal_result(token, outcome, time.monotonic(), self._stamp()))

    def _on_feedback(self, token: int, feedback: MoveToTarget.Feedback) -> None:
        tip = feedback.tip_position
        self._do(self.cycle.feedback(token, (tip.x, tip.y, tip.z)))

    # ------------------------------------------------------------------ services, timer
    def _on_run_cycle(self, request: Trigger.Request, response: Trigger.Response
                      ) -> Trigger.Response:
        response.success, response.message, effects = self.cycle.run_cycle(time.monotonic())
        self._do(effects)
        return response

    def _on_stop_cycle(self, request: Trigger.Request, response: Trigger.Response
                       ) -> Trigger.Response:
        response.success, response.message, effects = self.cycle.stop_cycle(time.monotonic())
        self._do(effects)
        return response

    def _tick(self) -> None:
        now = time.monotonic()
        self._take_console_answer()
        self._do(self.cycle.tick(now, self._stamp()))
        self.goals.tick(now)
        self._report_rejections(now)

    def destroy_node(self) -> None:
        # Nothing stale on screen: the ball marker goes with the node.
        try:
            if self.cycle is not None and self.cycle.machine is not None:
                self.marker_publisher.publish(marker_messages.ball_marker(
                    self.base_frame, self.get_clock().now().to_msg(), None))
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
