"""The demo's scripted user: a node that calls the pipeline as any client would.

Everything runs in the runner's main thread: the blocking step methods spin the node's
executor while they wait. No background spinner on purpose: rclpy's ActionClient (Jazzy)
registers a goal's future only after sending the request, so a response taken by another
thread in between is dropped ("Ignoring unexpected goal response") and the goal never
answers (LockedActionClient, used here too, mends that). Ctrl-C lands in the main thread as
KeyboardInterrupt. Each step returns a
``StepResult`` (ok or not, and a line for the log).

The results of its own MoveToTarget goals are republished on ``demo/move_results``
(arm_interfaces/TargetStatus, source ``demo``) so the MCAP holds them: an action result is a
service response, never on a topic, and the implicit action types cannot be decoded by
mcap-ros2-support (see recorder.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import faulthandler
import math
import sys
import threading
import time

from action_msgs.msg import GoalStatus
from geometry_msgs.msg import Point
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from arm_bringup.scenario import IKQuery, Move
from arm_ik.client import IKClient
from arm_ik.goal_refusals import RefusalWords, WORDS_WAIT
from arm_ik.middleware import (
    call_until_answered,
    destroy_with_actions,
    GoalCourier,
    LockedActionClient,
)
from arm_ik.nodes.common import constant_names, LATCHED_QOS
from arm_interfaces.action import MoveToTarget
from arm_interfaces.msg import ArmInfo, ExecutorStatus, MotionErrorCode, SafetyStatus, TargetStatus

# Deep, reliable and durable: every report of a cycle is kept between two looks.
STATUS_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)
MOTION_CODES = constant_names(MotionErrorCode)
STATE_NAMES = constant_names(TargetStatus)
MOVE_TIMEOUT = 90.0      # s, plan + move; the longest scripted move takes about 12 s
CYCLE_TIMEOUT = 180.0    # s, one pick-and-place cycle
START_GRACE = 15.0       # s for target_input to see the action server
REJECTED = object()      # a goal's end: rejected (its words: self.refusals)
GOAL_ANSWER_WAIT = 5.0   # s for the executor to accept or reject a goal, before a resend
IK_WAIT = 15.0           # s for an IK answer, resends included
ALREADY_RUNNING = 'the cycle is already running'   # target_input's words (tasks/cycle.py)
TEARDOWN_WAIT = 10.0     # s for the node's and its DDS participant's destruction (0.5 s here)


@dataclass
class StepResult:
    """What one step did: ``ok`` when it had the expected outcome; ``text`` for the log."""

    ok: bool
    text: str


def fmt(values) -> str:
    return '[' + ', '.join(f'{float(v):+.3f}' for v in values) + ']'


class DemoDriver(Node):
    """Calls ik_server, the executor's action and target_input's cycle for one arm."""

    def __init__(self, arm: str, **kwargs: object) -> None:
        super().__init__('demo_driver', **kwargs)
        self.arm = arm
        self.info: ArmInfo | None = None
        self.ik = IKClient(self, arm)
        self.action = LockedActionClient(self, MoveToTarget,
                                   f'/{arm}/trajectory_executor/move_to_target')
        self.refusals = RefusalWords(self, f'/{arm}/trajectory_executor/move_to_target')
        self.run_cycle_client = self.create_client(Trigger, f'/{arm}/target_input/run_cycle')
        self.results = self.create_publisher(TargetStatus, f'/{arm}/demo/move_results',
                                             STATUS_QOS)
        self._reports: list[TargetStatus] = []
        self._safety: list[SafetyStatus] = []
        self._watch_safety = False
        self.create_subscription(ArmInfo, f'/{arm}/arm_info', self._on_info, LATCHED_QOS)
        self.create_subscription(TargetStatus, f'/{arm}/target_status', self._on_report,
                                 STATUS_QOS)
        self.create_subscription(SafetyStatus, f'/{arm}/safety_status', self._on_safety, 100)
        self.executor_state: int | None = None
        self.create_subscription(ExecutorStatus, f'/{arm}/trajectory_executor/status',
                                 self._on_executor_status, LATCHED_QOS)
        self._executor = SingleThreadedExecutor(context=self.context)
        self._executor.add_node(self)

    # ------------------------------------------------------------------ life cycle
    @classmethod
    def create(cls, arm: str) -> DemoDriver:
        """Init a context of the driver's own, with Ctrl-C left to Python (KeyboardInterrupt),
        and build the node in it."""
        context = Context()
        rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
        return cls(arm, context=context)

    def close(self, wait: float = TEARDOWN_WAIT) -> bool:
        """Destroy the node and its context, and with it the DDS participant; False (with
        the Python stacks on stderr) when that has not ended within ``wait`` s.

        The teardown runs in a thread of its own so that a middleware stuck in it cannot hold
        the demo once its work is done and reported (a CI run's demo block did not end for
        270 s after the summary). The caller then ends the process without the interpreter's
        exit, whose destructors would wait on the same middleware."""
        def teardown() -> None:
            self._executor.shutdown(timeout_sec=2.0)
            destroy_with_actions(self)
            self.context.try_shutdown()
            self.context.destroy()
        worker = threading.Thread(target=teardown, name='demo teardown', daemon=True)
        worker.start()
        worker.join(wait)
        if worker.is_alive():
            faulthandler.dump_traceback(sys.stderr)
        return not worker.is_alive()

    # ------------------------------------------------------------------ callbacks
    def _on_info(self, message: ArmInfo) -> None:
        self.info = message

    def _on_executor_status(self, message: ExecutorStatus) -> None:
        self.executor_state = message.state

    def _on_report(self, message: TargetStatus) -> None:
        self._reports.append(message)

    def _on_safety(self, message: SafetyStatus) -> None:
        if self._watch_safety:
            self._safety.append(message)

    # ------------------------------------------------------------------ waiting
    def wait_until(self, condition: Callable[[], bool], timeout: float,
                   tick: Callable[[], None] | None = None) -> bool:
        """Spin the node until ``condition()`` holds or ``timeout`` (s) passes, calling
        ``tick`` between two spins."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            self._executor.spin_once(timeout_sec=0.02)
            if tick is not None:
                tick()
        return condition()

    def wait_for_pipeline(self, pick_place: bool, timeout: float, measured: bool = False
                          ) -> list[str]:
        """Wait for arm_info, the IK service, the action server, (pick_place) the cycle
        service and (measured) the executor holding a measured pose (out of WAITING); return
        what did not come up."""
        checks = {'arm_info (ArmInfo)': lambda: self.info is not None,
                  'ik_server (~/solve_ik)': self.ik.client.service_is_ready,
                  'trajectory_executor (~/move_to_target)': self.action.server_is_ready}
        if measured:
            checks['trajectory_executor holding the measured joint state'] = \
                lambda: self.executor_state not in (None, ExecutorStatus.WAITING)
        if pick_place:
            checks['target_input (~/run_cycle)'] = self.run_cycle_client.service_is_ready
        self.wait_until(lambda: all(check() for check in checks.values()), timeout)
        return [name for name, check in checks.items() if not check()]

    # ------------------------------------------------------------------ steps
    def ik_query(self, query: IKQuery) -> StepResult:
        """One ~/solve_ik call; ok when it solves exactly when it should."""
        try:
            # IKClient.solve sends a request whose reply was lost again, and spins this
            # node's executor while it waits (no other thread spins it).
            reply = self.ik.solve(query.position, wait=IK_WAIT)
        except TimeoutError as error:
            return StepResult(False, f'IK {query.label} {fmt(query.position)} m: {error}')
        if reply.success:
            joints = ', '.join(f'{math.degrees(v):+.1f}' for v in reply.positions)
            text = (f'IK {query.label} {fmt(query.position)} m: {reply.solver} -> [{joints}] '
                    f'deg, error {reply.position_error * 1e3:.3f} mm, '
                    f'{reply.solve_time * 1e3:.1f} ms')
        else:
            text = f'IK {query.label} {fmt(query.position)} m: {reply.code.name}: {reply.message}'
        if reply.success != query.ok:
            text += f' (expected {"a solution" if query.ok else "a refusal"})'
        return StepResult(reply.success == query.ok, text)

    def move(self, move: Move) -> StepResult:
        """One MoveToTarget goal; ok when it ends with the expected code (and detour)."""
        goal = self._goal(move)
        feedback = []
        self._safety.clear()
        self._watch_safety = True
        started = time.monotonic()
        # GoalCourier sends a goal again when its accept/reject is lost, and asks again
        # for a result that does not come (middleware.py says why either happens).
        ends: list[object] = []
        courier = GoalCourier(
            self.action, self.get_logger(), on_accepted=lambda _: None,
            on_rejected=lambda _: ends.append(REJECTED),
            on_result=lambda _, wrapped: ends.append(wrapped),
            on_failed=lambda _, reason: ends.append(reason), on_feedback=lambda _, message:
            feedback.append(message), response_timeout=GOAL_ANSWER_WAIT,
            server=f'/{self.arm}/trajectory_executor')
        sent = self.refusals.mark()      # the refusal words are matched by their stamps
        courier.send(1, goal, 0.0, label='demo:', name=move.label)
        try:
            if not self.wait_until(lambda: bool(ends), MOVE_TIMEOUT, tick=courier.tick):
                courier.drop(1, cancel=True)
                return StepResult(False, f'{move.label}: no result within {MOVE_TIMEOUT:g} s')
        finally:
            self._watch_safety = False
        if ends[0] is REJECTED:
            # The executor's words come on a topic of their own (arm_ik.goal_refusals).
            self.wait_until(lambda: bool(self.refusals.since(sent)), WORDS_WAIT)
            return StepResult(False, f'{move.label}: {self.refusals.sentence(sent)}')
        if isinstance(ends[0], str):
            return StepResult(False, f'{move.label}: {ends[0]}')
        wrapped = ends[0]
        elapsed = time.monotonic() - started
        result = wrapped.result
        code = MOTION_CODES.get(result.error_code.val, str(result.error_code.val))
        succeeded = wrapped.status == GoalStatus.STATUS_SUCCEEDED and code == 'SUCCESS'
        self._publish_result(move, goal, result, succeeded)
        detoured = 'detour' in result.message
        ok = code == move.expect and (detoured or not move.detour)
        target = fmt(move.position) + ' m' if move.position is not None else \
            '[' + ', '.join(f'{v:+.2f}' for v in self._joint_target(move)) + '] rad'
        text = f'{move.label} {target}: {code}'
        if succeeded:
            text += (f' in {elapsed:.1f} s, final error {result.final_error * 1e3:.2f} mm, '
                     f'{len(feedback)} feedback')
            clearance = self._lowest_clearance()
            if clearance is not None:
                text += f', lowest link {clearance:+.3f} m above the floor'
        text += f': {result.message}'
        if code != move.expect:
            text += f' (expected {move.expect})'
        elif move.detour and not detoured:
            text += ' (expected a floor detour)'
        return StepResult(ok, text)

    def pick_and_place(self, log: Callable[[StepResult], None]) -> StepResult:
        """Run one cycle of target_input's sequence; ``log`` gets each finished step."""
        self._reports.clear()
        # target_input discovers the executor's action server on its own, maybe a little
        # after this node did: "not up" is retried for a while, any other refusal is final.
        deadline = time.monotonic() + START_GRACE
        while True:
            # Sent again when its reply is lost: the first copy may have started the cycle.
            reply = call_until_answered(self.run_cycle_client, Trigger.Request(),
                                        lambda: self._executor.spin_once(timeout_sec=0.02),
                                        15.0)
            if reply is None:
                return StepResult(False, '~/run_cycle: no answer within 15 s')
            if reply.success or reply.message == ALREADY_RUNNING:
                break
            if 'is not up' not in reply.message or time.monotonic() > deadline:
                return StepResult(False, f'~/run_cycle refused: {reply.message}')
            self.wait_until(lambda: False, 0.2)
        deadline = time.monotonic() + CYCLE_TIMEOUT
        while time.monotonic() < deadline:
            reports, self._reports = self._reports, []
            for report in reports:
                state = STATE_NAMES.get(report.state, str(report.state))
                if report.state in (TargetStatus.SUCCEEDED, TargetStatus.FAILED,
                                    TargetStatus.REFUSED):
                    where = f'{report.phase} {report.step_kind}'.strip()
                    log(StepResult(report.state == TargetStatus.SUCCEEDED,
                                   f'{where}: {report.message}'))
                if report.state == TargetStatus.FINISHED:
                    return StepResult(True, report.message)
                if report.state in (TargetStatus.FAILED, TargetStatus.STOPPED,
                                    TargetStatus.REFUSED):
                    return StepResult(False, f'cycle ended {state}: {report.message}')
            self.wait_until(lambda: False, 0.05)
        return StepResult(False, f'the cycle did not finish within {CYCLE_TIMEOUT:g} s')

    # ------------------------------------------------------------------ helpers
    def _goal(self, move: Move) -> MoveToTarget.Goal:
        goal = MoveToTarget.Goal()
        # The arm's own base frame (panda_link0, world, ...), as arm_info reports it.
        goal.target.header.frame_id = self.info.base_frame if self.info is not None else ''
        goal.target.pose.orientation.w = 1.0
        goal.motion_law = move.motion_law
        if move.position is not None:
            x, y, z = move.position
            goal.target.pose.position = Point(x=float(x), y=float(y), z=float(z))
        else:
            names = list(self.info.joint_names) if self.info is not None else []
            goal.joint_target = JointState(name=names, position=self._joint_target(move))
        return goal

    def _joint_target(self, move: Move) -> list[float]:
        """The move's joints (rad, chain order); the home pose comes from arm_info."""
        if move.home:
            return [float(v) for v in self.info.home.position] if self.info is not None else []
        return [float(v) for v in move.joints]

    def _lowest_clearance(self) -> float | None:
        """Lowest link above the floor seen by safety_monitor during the move (floor on)."""
        values = [s.min_floor_clearance for s in self._safety
                  if s.floor_enabled and s.verdict != SafetyStatus.STALE]
        return min(values) if values else None

    def _publish_result(self, move: Move, goal: MoveToTarget.Goal,
                        result: MoveToTarget.Result, succeeded: bool) -> None:
        status = TargetStatus()
        status.header.stamp = self.get_clock().now().to_msg()
        status.header.frame_id = goal.target.header.frame_id
        status.state = TargetStatus.SUCCEEDED if succeeded else TargetStatus.FAILED
        status.source = 'demo'
        status.step_kind = 'target'
        status.target_name = move.label
        status.target = goal.target.pose.position
        status.error_code = result.error_code
        status.ik_error_code = result.ik_error_code
        status.message = result.message
        status.final_error = result.final_error if math.isfinite(result.final_error) \
            else math.inf
        self.results.publish(status)
