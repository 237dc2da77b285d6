"""What the tests of target_input talk to: a fake trajectory executor, a recorder of its
reports and the calls a user makes (test_target_input_cases.py, test_target_input_node.py).

target_input runs in its own process; these live in the test process, on the test's node, so
the tests depend on target_input alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
import threading
import time

import numpy as np
import pytest
from rcl_interfaces.msg import Log, ParameterType, ParameterValue
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.srv import SetParameters
from rclpy.action import ActionServer, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import Marker
import yaml

from arm_ik.goal_refusals import refusal_message, REFUSAL_QOS, refusal_topic
from arm_interfaces.action import MoveToTarget
from arm_interfaces.msg import BallState, IKErrorCode, MotionErrorCode, TargetStatus
from arm_kinematics.description.bundled import load_model
from arm_kinematics.model.arm_model import ArmModel
from arm_testing.ros_harness import call_service, config_file, DomainClaim, wait_for

# Deep and durable on the test side, so a burst of reports between two spins is all kept.
RECORD_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)
# Bounds only: a module's target_input processes may start at once.
START_TIMEOUT = 60.0


def pick_place_file(arm: str) -> Path:
    """The installed sequence file ``<arm>_pick_place.yaml`` (the one target_input reads)."""
    from ament_index_python.packages import get_package_share_directory
    return Path(get_package_share_directory('arm_bringup')) / 'config' / f'{arm}_pick_place.yaml'


def goal_point(goal: MoveToTarget.Goal) -> list[float]:
    position = goal.target.pose.position
    return [position.x, position.y, position.z]


def is_point(goal: MoveToTarget.Goal, point: list[float]) -> bool:
    """A Cartesian goal at ``point``."""
    return not goal.joint_target.name and goal_point(goal) == pytest.approx(point)


def distinct(goals: list[MoveToTarget.Goal]) -> list[MoveToTarget.Goal]:
    """Goals with consecutive repeats dropped (a goal without an answer is sent again)."""
    return [g for i, g in enumerate(goals) if i == 0 or g != goals[i - 1]]


class FakeExecutor:
    """A MoveToTarget server that records each goal and answers it at once.

    ``answer(goal)`` returns (error code, message); SUCCESS by default. Feedback carries the
    goal's target as the tip, as a real executor's last feedback would. Goals for which
    ``hold(goal)`` is true are parked until ``release()`` (a move that takes a while); the
    first ``unanswered`` goal requests get no accept or reject at all (a lost request).
    ``path(goal)`` is the result's executed path; by default, as a real executor's, it ends
    at the pose reached (``reached``, of ``model``: the arm's own unless given). A goal for
    which ``reject(goal)`` gives words is rejected, the words published first on the latched
    ``goal_rejections`` as the real executor does (arm_ik.goal_refusals).
    """

    def __init__(self, node, arm: str,
                 answer: Callable[[MoveToTarget.Goal], tuple[int, str]] | None = None,
                 hold: Callable[[MoveToTarget.Goal], bool] | None = None,
                 unanswered: int = 0,
                 path: Callable[[MoveToTarget.Goal], JointTrajectory | None] | None = None,
                 model: ArmModel | None = None,
                 reject: Callable[[MoveToTarget.Goal], str] | None = None,
                 ns: str | None = None) -> None:
        ns = ns or f'/{arm}'
        self.goals: list[MoveToTarget.Goal] = []
        self.reject = reject or (lambda goal: '')
        self.node = node
        self.refusals = node.create_publisher(
            Log, refusal_topic(f'{ns}/trajectory_executor/move_to_target'), REFUSAL_QOS)
        self.requests = 0
        self.unanswered = unanswered
        self.answer = answer or (lambda goal: (MotionErrorCode.SUCCESS, ''))
        self.hold = hold or (lambda goal: False)
        self.path = path or self.reached
        self.model = model if model is not None else load_model(arm)
        home = yaml.safe_load(pick_place_file(arm).read_text(encoding='utf-8'))
        self.at = np.array([home['poses']['home'][n] for n in self.model.joint_names])
        self.held: list[Future] = []
        # Reentrant: a parked goal callback must not block the test node's other callbacks.
        self.server = ActionServer(node, MoveToTarget,
                                   f'{ns}/trajectory_executor/move_to_target', self._execute,
                                   goal_callback=self._on_goal,
                                   callback_group=ReentrantCallbackGroup())

    def reached(self, goal: MoveToTarget.Goal) -> JointTrajectory | None:
        """A one-point executed path at the goal: its joint target, or a pose with the tool at
        its point (damped least squares from where the last move ended, the fake's own IK, so
        it leans on nothing under test); None when that finds none (no final state then)."""
        names = list(self.model.joint_names)
        if goal.joint_target.name:
            by_name = dict(zip(goal.joint_target.name, goal.joint_target.position))
            q = np.array([by_name[n] for n in names])
        else:
            q = self.at.copy()
            point = np.array(goal_point(goal))
            for _ in range(200):
                error = point - self.model.fk(q)[:3, 3]
                if np.linalg.norm(error) < 1e-10:
                    break
                jacobian = self.model.jacobian(q)[:3]
                q = q + jacobian.T @ np.linalg.solve(jacobian @ jacobian.T + 1e-3 * np.eye(3),
                                                     error)
            else:
                return None
        self.at = q
        return JointTrajectory(joint_names=names,
                               points=[JointTrajectoryPoint(positions=q.tolist())])

    def release(self) -> None:
        for future in self.held:
            if not future.done():
                future.set_result(None)

    async def _on_goal(self, request) -> GoalResponse:
        self.requests += 1
        if self.requests <= self.unanswered:
            parked = Future()
            self.held.append(parked)
            await parked
            return GoalResponse.REJECT
        words = self.reject(request)
        if words:
            self.refusals.publish(refusal_message(self.node, words))
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    async def _execute(self, handle) -> MoveToTarget.Result:
        goal = handle.request
        self.goals.append(goal)
        if self.hold(goal):
            parked = Future()
            self.held.append(parked)
            await parked
        feedback = MoveToTarget.Feedback(progress=1.0)
        feedback.tip_position = goal.target.pose.position
        handle.publish_feedback(feedback)
        code, message = self.answer(goal)
        result = MoveToTarget.Result(message=message)
        result.error_code.val = code
        executed = self.path(goal)
        if executed is not None:
            result.executed_path = executed
        if code == MotionErrorCode.IK_FAILED:
            result.ik_error_code.val = IKErrorCode.OUT_OF_REACH
        if code == MotionErrorCode.SUCCESS:
            handle.succeed()
        else:
            handle.abort()
        return result


class Recorder:
    """Everything target_input reports: status and ball states (``ns``: its namespace)."""

    def __init__(self, node, ns: str) -> None:
        self.status: list[TargetStatus] = []
        self.balls: list[BallState] = []
        self.markers: list[Marker] = []
        node.create_subscription(Marker, f'{ns}/ball_marker', self.markers.append, RECORD_QOS)
        node.create_subscription(TargetStatus, f'{ns}/target_status', self.status.append,
                                 RECORD_QOS)
        node.create_subscription(BallState, f'{ns}/ball_state', self.balls.append, RECORD_QOS)

    def with_state(self, state: int, source: str | None = None) -> list[TargetStatus]:
        return [s for s in self.status
                if s.state == state and (source is None or s.source == source)]

    def attached_changes(self) -> list[bool]:
        """The ball's attached flag over time, consecutive repeats collapsed."""
        changes: list[bool] = []
        for ball in self.balls:
            if not changes or changes[-1] != ball.attached:
                changes.append(ball.attached)
        return changes


def wait_logged(condition: Callable[[], object], timeout: float, spin, what: str,
                process) -> None:
    """wait_for, with the node's log in the failure message."""
    try:
        wait_for(condition, timeout, spin, what)
    except AssertionError as error:
        raise AssertionError(f'{error}\n--- {process.name} ---\n{process.output()}') from None


def target_input_params(arm: str, urdf_of, **extra) -> dict:
    """The parameters of a node for the bundled ``arm``, with ``extra`` besides."""
    return {'robot_description': urdf_of(arm), 'arm': arm, 'arm_config': config_file(arm), **extra}


def send_until_goal(node, spin, fake: FakeExecutor, publish: Callable[[], None]) -> None:
    """Publish until the node has seen the action server and a goal arrived (discovery of the
    server by target_input's client takes a moment; earlier targets are REFUSED)."""
    deadline = time.monotonic() + START_TIMEOUT
    before = len(fake.goals)
    while time.monotonic() < deadline and len(fake.goals) == before:
        publish()
        end = time.monotonic() + 0.5
        while time.monotonic() < end and len(fake.goals) == before:
            spin()
    assert len(fake.goals) > before, 'no goal reached the fake executor'


def set_parameter(node, spin, ns: str, name: str, value: ParameterValue):
    """target_input's (in ``ns``) answer to setting ``name``: the SetParametersResult."""
    client = node.create_client(SetParameters, f'{ns}/target_input/set_parameters')
    wait_for(client.service_is_ready, START_TIMEOUT, spin, 'set_parameters service')
    return call_service(client, SetParameters.Request(
        parameters=[ParameterMsg(name=name, value=value)]), spin, 10.0).results[0]


def set_point(node, spin, ns: str, name: str, values: list[float]):
    """set_parameter with a point (a double array)."""
    return set_parameter(node, spin, ns, name, ParameterValue(
        type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=values))


def trigger(node, spin, name: str) -> Trigger.Response:
    """Call the Trigger service ``name`` once it is there."""
    client = node.create_client(Trigger, name)
    wait_for(client.service_is_ready, START_TIMEOUT, spin, name)
    future = client.call_async(Trigger.Request())
    wait_for(future.done, 10.0, spin, f'{name} reply')
    return future.result()


@contextmanager
def node_spun_in_a_thread(claim: DomainClaim) -> Iterator[tuple]:
    """(node, spin) on ``claim``'s domain, its executor spinning in a thread of its own;
    ``spin`` only lets time pass (the tests' waits call it between their checks). For fakes
    that must answer whichever test runs (a fake nobody spins loses its node's goals)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=claim.domain_id)
    node = rclpy.create_node('test_client', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()

    def spin(timeout: float = 0.05) -> None:
        time.sleep(min(timeout, 0.02))
    try:
        yield node, spin
    finally:
        executor.shutdown()
        thread.join(5.0)
        node.destroy_node()
        rclpy.try_shutdown(context=context)
