"""target_input in its own process, talked to over DDS.

A small MoveToTarget server in the test process stands in for the trajectory executor, so
these tests depend on target_input alone. The end-to-end tests at the bottom run the real
``trajectory_executor`` and skip only when that executable is not installed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
import math
import os
from pathlib import Path
import signal
import subprocess
import threading
import time

from geometry_msgs.msg import PointStamped, PoseStamped
import numpy as np
import pytest
from rcl_interfaces.msg import Log, ParameterType, ParameterValue
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.srv import SetParameters
from rclpy.action import ActionServer, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import Marker
import yaml

from arm_bringup.process_group import executable_path
from arm_ik.goal_refusals import refusal_message, REFUSAL_QOS, refusal_topic
from arm_interfaces.action import MoveToTarget
from arm_interfaces.msg import BallState, IKErrorCode, MotionErrorCode, TargetStatus
from arm_kinematics.description.bundled import load_model
from arm_kinematics.model.arm_model import ArmModel
from arm_testing.ros_harness import (
    call_service,
    claimed_domain,
    config_file,
    process_group,
    wait_for,
)

CONFIG = Path(__file__).resolve().parents[2] / 'arm_bringup' / 'config'
# Deep and durable on the test side, so a burst of reports between two spins is all kept.
RECORD_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)
# Bounds only: the module's target_input processes start at once (the `started` fixture).
START_TIMEOUT = 60.0


def _executor_installed() -> bool:
    try:
        executable_path('arm_ik', 'trajectory_executor')
        return True
    except (FileNotFoundError, LookupError):
        return False


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
        home = yaml.safe_load((CONFIG / f'{arm}_pick_place.yaml').read_text(encoding='utf-8'))
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
            point = np.array(_goal_point(goal))
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


def _wait(condition: Callable[[], object], timeout: float, spin, what: str, process) -> None:
    """wait_for, with the node's log in the failure message."""
    try:
        wait_for(condition, timeout, spin, what)
    except AssertionError as error:
        raise AssertionError(f'{error}\n--- {process.name} ---\n{process.output()}') from None


def _params(arm: str, urdf_of, **extra) -> dict:
    return {'robot_description': urdf_of(arm), 'arm': arm, 'arm_config': config_file(arm), **extra}


def _start_target_input(processes, arm: str, urdf_of, **extra):
    """target_input for the bundled ``arm`` in /<arm> with these parameters besides its own."""
    return processes.start_node('arm_ik', 'target_input', namespace=f'/{arm}',
                                params=_params(arm, urdf_of, **extra))


def _distinct(goals: list[MoveToTarget.Goal]) -> list[MoveToTarget.Goal]:
    """Goals with consecutive repeats dropped (a goal without an answer is sent again)."""
    return [g for i, g in enumerate(goals) if i == 0 or g != goals[i - 1]]


def _goal_point(goal: MoveToTarget.Goal) -> list[float]:
    position = goal.target.pose.position
    return [position.x, position.y, position.z]


def _send_until_goal(node, spin, fake: FakeExecutor, recorder: Recorder, publish) -> None:
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


# ------------------------------------------------------- one target_input per case, at once
# A start-up (Python, rclpy, numba, the arm model, discovery) is most of such a test's time,
# and the tests below do not depend on each other: each one's target_input runs in a namespace
# of its own (/<case>/<arm>), all started at once on one domain with every fake executor and
# recorder made first, on one test node spun by a thread of its own (so every fake answers
# at once whichever test runs, as each did while its own test waited: a fake that is not
# spun while its node sends goals is a lost goal). Only the cases of the selected tests
# start. The tests that need a process of their own (the lagging joint_states, the console,
# the real executor) still start theirs.
SEQUENCE = 'manipulator3d_pick_place.yaml'
REJECTION_WORDS = ('goal 0a1b2c3d refused: EMERGENCY_STOPPED: emergency stop active: goals '
                   'are refused until ~/reset')
TAKE_OVER_START = [0.6, -0.3, 0.1]
DESCRIPTION_GOAL = [0.45, 0.45, 0.15]


def _fails_at_goal(goal: MoveToTarget.Goal) -> tuple[int, str]:
    if _goal_point(goal) == pytest.approx([0.45, 0.45, 0.15]):
        return MotionErrorCode.UNSAFE_PATH, 'the path hits the obstacle'
    return MotionErrorCode.SUCCESS, ''


def _no_fake_options(_load_arm) -> dict:
    return {}


# case -> (arm, target_input's parameters, the FakeExecutor's options given load_arm)
CASES: dict[str, tuple[str, dict, Callable[..., dict]]] = {
    'clicks': ('manipulator3d', {'motion_law': 'linear_cartesian', 'duration': 1.5,
                                 'goal_pose_type': 'full_pose'}, _no_fake_options),
    'failed_target': ('ccd5', {}, lambda _: {'answer': lambda goal: (
        MotionErrorCode.IK_FAILED, 'target 1.6 m from the shoulder')}),
    'rejected_goal': ('ccd5', {}, lambda _: {'reject': lambda goal: REJECTION_WORDS}),
    'unreachable_start': ('manipulator3d', {'sequence_file': SEQUENCE, 'start': [1.5, 0.0, 0.2],
                                            'cycles': 1}, _no_fake_options),
    'scripted_manipulator3d': ('manipulator3d', {'cycles': 1, 'sequence_file': SEQUENCE},
                               _no_fake_options),
    'scripted_ccd5': ('ccd5', {'cycles': 2, 'sequence_file': 'ccd5_pick_place.yaml'},
                      _no_fake_options),
    'failed_move': ('manipulator3d', {'sequence_file': SEQUENCE},
                    lambda _: {'answer': _fails_at_goal}),
    # START stays in flight until the test clicks, however late its turn comes.
    'take_over': ('manipulator3d', {'sequence_file': SEQUENCE, 'result_timeout': 600.0},
                  lambda _: {'hold': lambda goal: _is_point(goal, TAKE_OVER_START)}),
    'no_result': ('manipulator3d', {'result_timeout': 1.0, 'sequence_file': SEQUENCE},
                  lambda _: {'hold': lambda goal: True}),
    'cycle_services': ('ccd5', {'autostart': False, 'sequence_file': 'ccd5_pick_place.yaml'},
                       lambda _: {'hold': lambda goal: _is_point(goal, [0.6, -0.3, 0.6])}),
    'new_description': ('manipulator3d', {'sequence_file': SEQUENCE, 'start': [1.5, 0.0, 0.2],
                                          'cycles': 1},
                        lambda load_arm: {'hold': lambda goal: _is_point(goal, DESCRIPTION_GOAL),
                                          'model': load_arm('manipulator3d', L1='0.9',
                                                            L2='0.8')}),
    'unanswered': ('manipulator3d', {'cycles': 1, 'response_timeout': 1.0,
                                     'sequence_file': SEQUENCE},
                   lambda _: {'unanswered': 1}),
}


def uses_case(case: str):
    """Marks a test as using CASES[case] ('{arm}' is filled from the test's parameters)."""
    def mark(test):
        test.target_input_case = case
        return test
    return mark


@dataclass
class Started:
    """One case's target_input, its fake executor and recorder, and the test node."""

    ns: str
    process: object
    fake: FakeExecutor
    recorder: Recorder
    node: object
    spin: Callable[..., None]
    stop: Callable[[], object]


def _case_of(item) -> str | None:
    case = getattr(getattr(item, 'function', None), 'target_input_case', None)
    if case is None:
        return None
    callspec = getattr(item, 'callspec', None)
    return case.format(**(callspec.params if callspec else {}))


def _selected_cases(request) -> list[str]:
    return sorted({_case_of(item) for item in request.session.items
                   if item.module is request.module and _case_of(item) is not None})


def _interrupt(process) -> None:
    """Ctrl-C to a grouped target_input, without waiting: the group reaps it at its end."""
    if process.alive():
        try:
            os.killpg(process.popen.pid, signal.SIGINT)
        except ProcessLookupError:
            pass


@contextmanager
def _node_spun_in_a_thread(claim) -> Iterator[tuple]:
    """(node, spin) on ``claim``'s domain, its executor spinning in a thread of its own;
    ``spin`` only lets time pass (the tests' waits call it between their checks)."""
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


@pytest.fixture(scope='module')
def started(request, urdf_of, load_arm):
    """Every selected case's target_input, started at once; case -> Started."""
    with claimed_domain() as claim, process_group(claim) as group, \
            _node_spun_in_a_thread(claim) as (node, spin):
        cases = {}
        for case in _selected_cases(request):
            arm, params, options = CASES[case]
            ns = f'/{case}/{arm}'
            fake = FakeExecutor(node, arm, ns=ns, **options(load_arm))
            cases[case] = (ns, fake, Recorder(node, ns))
        processes = {case: group.start_node('arm_ik', 'target_input', namespace=ns,
                                            params=_params(CASES[case][0], urdf_of,
                                                           **CASES[case][1]))
                     for case, (ns, _, _) in cases.items()}
        yield {case: Started(ns, processes[case], fake, recorder, node, spin,
                             partial(_interrupt, processes[case]))
               for case, (ns, fake, recorder) in cases.items()}


@pytest.fixture
def case(request, started) -> Iterator[Started]:
    """The test's case (``uses_case``); its target_input is stopped after the test (an idle
    node still spends CPU on its timers while the other tests run)."""
    this = started[_case_of(request.node)]
    yield this
    this.stop()


@uses_case('clicks')
def test_clicked_point_and_goal_pose_become_goals(case):
    node, spin, fake, recorder, process = (case.node, case.spin, case.fake, case.recorder,
                                           case.process)
    clicks = node.create_publisher(PointStamped, f'{case.ns}/clicked_point', 10)
    poses = node.create_publisher(PoseStamped, f'{case.ns}/goal_pose', 10)

    click = PointStamped()
    click.header.frame_id = 'base_link'
    click.point.x, click.point.y, click.point.z = 0.5, 0.2, 0.3
    _send_until_goal(node, spin, fake, recorder, lambda: clicks.publish(click))
    goal = fake.goals[-1]
    assert _goal_point(goal) == pytest.approx([0.5, 0.2, 0.3])
    assert goal.target.header.frame_id == 'base_link'
    assert goal.goal_type == MoveToTarget.Goal.GOAL_POSITION
    assert goal.motion_law == 'linear_cartesian' and goal.duration == pytest.approx(1.5)
    assert not goal.joint_target.name
    wait_for(lambda: recorder.with_state(TargetStatus.SUCCEEDED, 'clicked_point'), 10.0, spin,
             'the clicked target reported as reached')
    reached = recorder.with_state(TargetStatus.SUCCEEDED, 'clicked_point')[-1]
    assert reached.target.x == pytest.approx(0.5) and 'reached' in reached.message

    pose = PoseStamped()
    pose.header.frame_id = 'base_link'
    pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = 0.4, -0.1, 0.2
    pose.pose.orientation.w = 1.0
    count = len(fake.goals)
    poses.publish(pose)
    wait_for(lambda: len(fake.goals) > count, 10.0, spin, 'the goal_pose goal')
    goal = fake.goals[-1]
    assert _goal_point(goal) == pytest.approx([0.4, -0.1, 0.2])
    assert goal.goal_type == MoveToTarget.Goal.GOAL_FULL_POSE
    assert goal.target.pose.orientation.w == pytest.approx(1.0)
    wait_for(lambda: recorder.with_state(TargetStatus.SUCCEEDED, 'goal_pose'), 10.0, spin,
             'the goal pose reported as reached')

    # A NaN click is refused here, never forwarded.
    count = len(fake.goals)
    click.point.y = math.nan
    clicks.publish(click)
    wait_for(lambda: [s for s in recorder.with_state(TargetStatus.REFUSED, 'clicked_point')
                      if 'non-finite' in s.message], 10.0, spin, 'the NaN click refused')
    refused = [s for s in recorder.with_state(TargetStatus.REFUSED) if 'non-finite' in s.message]
    assert refused[-1].error_code.val == MotionErrorCode.INVALID_GOAL
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        spin()
    assert len(fake.goals) == count
    assert process.alive(), process.output()


@uses_case('failed_target')
def test_a_failed_target_is_reported_with_its_code(case):
    node, spin, fake, recorder = case.node, case.spin, case.fake, case.recorder
    clicks = node.create_publisher(PointStamped, f'{case.ns}/clicked_point', 10)
    click = PointStamped()
    click.point.x, click.point.z = 1.6, 0.2
    _send_until_goal(node, spin, fake, recorder, lambda: clicks.publish(click))
    wait_for(lambda: recorder.with_state(TargetStatus.FAILED), 10.0, spin, 'the failure report')
    failure = recorder.with_state(TargetStatus.FAILED)[-1]
    assert failure.error_code.val == MotionErrorCode.IK_FAILED
    assert failure.ik_error_code.val == IKErrorCode.OUT_OF_REACH
    assert 'IK_FAILED: target 1.6 m from the shoulder' in failure.message


@uses_case('rejected_goal')
def test_a_rejected_goal_is_reported_with_the_executors_words(case):
    """The action protocol carries no reason for a rejection: target_input reports the
    executor's own words from its latched goal_rejections (issue 39), not just "rejected"."""
    node, spin, fake, recorder = case.node, case.spin, case.fake, case.recorder
    words = REJECTION_WORDS
    clicks = node.create_publisher(PointStamped, f'{case.ns}/clicked_point', 10)
    click = PointStamped()
    click.point.x, click.point.z = 1.6, 0.2
    deadline = time.monotonic() + START_TIMEOUT
    while not recorder.with_state(TargetStatus.FAILED) and time.monotonic() < deadline:
        if fake.requests == 0:      # until target_input has found the server
            clicks.publish(click)
        end = time.monotonic() + 0.5
        while time.monotonic() < end and not recorder.with_state(TargetStatus.FAILED):
            spin()
    failures = recorder.with_state(TargetStatus.FAILED)
    assert failures, f'no failure reported ({fake.requests} goal requests)'
    assert f'the executor rejected the goal: {words}' in failures[-1].message


def _set(node, spin, ns: str, name: str, value: ParameterValue):
    client = node.create_client(SetParameters, f'{ns}/target_input/set_parameters')
    wait_for(client.service_is_ready, START_TIMEOUT, spin, 'set_parameters service')
    return call_service(client, SetParameters.Request(
        parameters=[ParameterMsg(name=name, value=value)]), spin, 10.0).results[0]


def _set_parameter(node, spin, ns: str, name: str, values: list[float]):
    return _set(node, spin, ns, name, ParameterValue(
        type=ParameterType.PARAMETER_DOUBLE_ARRAY, double_array_value=values))


@uses_case('unreachable_start')
def test_unreachable_start_is_refused_and_no_goal_is_sent(case):
    node, spin, fake, recorder, process = (case.node, case.spin, case.fake, case.recorder,
                                           case.process)
    wait_for(lambda: recorder.with_state(TargetStatus.REFUSED), START_TIMEOUT, spin,
             'START refused')
    refusal = recorder.with_state(TargetStatus.REFUSED)[0]
    assert refusal.target_name == 'start' and refusal.step_kind == 'check'
    assert refusal.ik_error_code.val == IKErrorCode.OUT_OF_REACH
    assert refusal.error_code.val == MotionErrorCode.IK_FAILED
    assert 'START [1.500, 0.000, 0.200] m is unreachable' in refusal.message
    assert 'maximum reach 1.100 m' in refusal.message
    wait_for(lambda: 'cycle refused, no goal sent' in process.output(), 5.0, spin,
             'the refusal in the log')
    deadline = time.monotonic() + 3.0   # the fake server is up: still nothing may arrive
    while time.monotonic() < deadline:
        spin()
    assert fake.goals == []

    # Updates are checked the same way: an unreachable GOAL is rejected with the reason...
    rejected = _set_parameter(node, spin, case.ns, 'goal', [0.3, 0.0, -0.2])
    assert not rejected.successful
    assert 'GOAL [0.300, 0.000, -0.200] m is unreachable' in rejected.reason
    assert 'needs at least 0.000 m' in rejected.reason
    rejected = _set_parameter(node, spin, case.ns, 'start', [0.5, math.nan, 0.2])
    assert not rejected.successful and 'finite' in rejected.reason
    assert fake.goals == []
    # ...and a reachable START lets the refused cycle start.
    accepted = _set_parameter(node, spin, case.ns, 'start', [0.5, -0.2, 0.15])
    assert accepted.successful, accepted.reason
    wait_for(lambda: len(fake.goals) >= 2, START_TIMEOUT, spin, 'the cycle after the update')
    assert _goal_point(fake.goals[1]) == pytest.approx([0.5, -0.2, 0.15])
    assert process.alive(), process.output()


@pytest.mark.parametrize('arm, cycles, targets', [
    ('manipulator3d', 1, ['home', 'start', 'goal', 'home']),
    ('ccd5', 2, ['pick', 'lift', 'place', 'home'] * 2),
])
@uses_case('scripted_{arm}')
def test_scripted_cycle_against_a_fake_executor(arm, cycles, targets, case, load_arm):
    spin, fake, recorder, process = case.spin, case.fake, case.recorder, case.process
    _wait(lambda: recorder.with_state(TargetStatus.FINISHED), 60.0, spin,
          f'{cycles} cycle(s) of {arm}_pick_place', process)
    assert process.alive(), process.output()
    model = load_arm(arm)
    names = [s.target_name for s in recorder.with_state(TargetStatus.STARTED)
             if s.step_kind == 'move']
    assert names == targets
    # Every step is reported with the cycle it belongs to, its last (home) included.
    per_cycle = len(targets) // cycles
    moves_done = [s.cycle for s in recorder.with_state(TargetStatus.SUCCEEDED)
                  if s.step_kind == 'move']
    assert moves_done == [1 + k // per_cycle for k in range(len(targets))]
    goals = _distinct(fake.goals)
    assert len(goals) == len(targets)
    for goal, name in zip(goals, targets):
        if name == 'home':
            assert tuple(goal.joint_target.name) == model.joint_names
        else:
            assert not goal.joint_target.name
    assert recorder.attached_changes() == [False] + [True, False] * cycles
    attached = [b for b in recorder.balls if b.attached]
    assert attached[0].phase == 'PICK' and attached[0].radius > 0.0
    first = next(i for i, b in enumerate(recorder.balls) if b.attached)
    assert next(b for b in recorder.balls[first:] if not b.attached).phase == 'PLACE'
    done = [s for s in recorder.status if s.step_kind in ('attach', 'detach')]
    assert [(s.phase, s.step_kind) for s in done] == [('PICK', 'attach'),
                                                      ('PLACE', 'detach')] * cycles
    assert all(s.state == TargetStatus.SUCCEEDED for s in done)
    wait_for(lambda: recorder.markers, 5.0, spin, 'the ball marker')
    marker = recorder.markers[-1]
    assert (marker.ns, marker.type, marker.action) == ('ball', Marker.SPHERE, Marker.ADD)
    assert marker.scale.x == pytest.approx(2.0 * recorder.balls[-1].radius)
    assert marker.pose.position == recorder.balls[-1].position
    carried = [m for m in recorder.markers if m.color.r > 0.9]   # orange while carried
    assert carried and marker.color.g > marker.color.r             # green once put down


@uses_case('failed_move')
def test_a_failed_move_stops_the_cycle(case):
    spin, fake, recorder = case.spin, case.fake, case.recorder
    wait_for(lambda: recorder.with_state(TargetStatus.FAILED), START_TIMEOUT, spin,
             'the GOAL move reported as failed')
    failure = recorder.with_state(TargetStatus.FAILED)[0]
    assert failure.phase == 'GOAL' and failure.target_name == 'goal'
    assert failure.error_code.val == MotionErrorCode.UNSAFE_PATH
    assert 'UNSAFE_PATH: the path hits the obstacle' in failure.message
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        spin()
    assert len(_distinct(fake.goals)) == 3  # home, start, goal: nothing after the failure
    assert recorder.balls[-1].attached     # still carried where the arm stopped


def _is_point(goal: MoveToTarget.Goal, point: list[float]) -> bool:
    return not goal.joint_target.name and _goal_point(goal) == pytest.approx(point)


class LaggingArm:
    """The arm behind a FakeExecutor whose joint_states lag its results (issue 20).

    Its stream (``publish``, called between spins) shows the pose each move started from,
    stamped when the move's result went out: late copies of what was sampled before the
    result, while the states of the move's end are dropped. ``final(name, k, q)`` is what the
    result of the k-th goal for target ``name`` (at ``q``) carries as its final state (the
    executed path's last point; None: no final state); ``resume(name, k)``, when not None, is
    the pose the stream shows from ``RESUME_DELAY`` s after that result on, stamped as sent.
    """

    PERIOD = 0.05         # s between joint states
    RESUME_DELAY = 0.3    # s

    def __init__(self, node, arm: str, names: tuple[str, ...], home: list[float],
                 points: dict[str, tuple[list[float], list[float]]]) -> None:
        """``points``: target name -> (tool position m, joint pose rad) of Cartesian goals."""
        self.node, self.names, self.points = node, names, points
        self.publisher = node.create_publisher(JointState, f'/{arm}/joint_states', 10)
        self.at = list(home)                    # where the arm is
        self.q, self.stamp = list(home), None   # what the stream shows; None: stamp as sent
        self.count: dict[str, int] = {}
        self.final: Callable[[str, int, list[float]], list[float] | None] = \
            lambda name, k, q: q
        self.resume: Callable[[str, int], list[float] | None] = lambda name, k: None
        self.hold_goal: Callable[[str, int], bool] = lambda name, k: False
        self._resume_at: tuple[float, list[float]] | None = None
        self._sent_at = 0.0
        self._goal: tuple[str, int, list[float]] = ('', 0, list(home))

    def hold(self, goal: MoveToTarget.Goal) -> bool:
        """Every executed goal passes here first: count it by target."""
        if goal.joint_target.name:
            name, q = 'home', list(goal.joint_target.position)
        else:
            name = next(n for n, (point, _) in self.points.items() if _is_point(goal, point))
            q = self.points[name][1]
        self.count[name] = self.count.get(name, 0) + 1
        self._goal = (name, self.count[name], q)
        return self.hold_goal(name, self.count[name])

    def path(self, goal: MoveToTarget.Goal) -> JointTrajectory | None:
        """The result is about to go out: the stream shows the move's start, stamped now."""
        name, k, q = self._goal
        self.q, self.stamp = self.at, self.node.get_clock().now().to_msg()
        final = self.final(name, k, q)
        resumed = self.resume(name, k)
        self.at = resumed or final or q
        self._resume_at = None if resumed is None else (
            time.monotonic() + self.RESUME_DELAY, resumed)
        if final is None:
            return None
        return JointTrajectory(joint_names=list(self.names),
                               points=[JointTrajectoryPoint(positions=final)])

    def publish(self) -> None:
        now = time.monotonic()
        if now - self._sent_at < self.PERIOD:
            return
        self._sent_at = now
        if self._resume_at is not None and now >= self._resume_at[0]:
            self.q, self.stamp, self._resume_at = self._resume_at[1], None, None
        state = JointState(name=list(self.names), position=[float(v) for v in self.q])
        state.header.stamp = self.stamp or self.node.get_clock().now().to_msg()
        self.publisher.publish(state)


def test_the_cycle_decides_on_the_moves_end_when_joint_states_lag(processes, ros_node,
                                                                  urdf_of, load_arm):
    """Issue 20, forced: every result is taken while joint_states still show the move's start.
    Cycle 1: results carry their final state, the target's states are dropped: attach at the
    START result's end. Cycle 2: START's result carries none and the states resume 0.3 s
    later: attach waits for them; GOAL's carries none and nothing comes within the (then
    shortened) wait: the move's target stands in, and the status says so."""
    node, spin = ros_node
    model = load_arm('manipulator3d')
    home = [0.0, 0.7853981633974483, -1.5707963267948966]
    start_q, goal_q = [-0.46, 0.94, -1.82], [0.79, 1.05, -1.88]
    start, goal = (model.fk(q)[:3, 3].tolist() for q in (start_q, goal_q))
    ended = [start_q[0] + 0.006, start_q[1] + 0.006, start_q[2]]     # 5.7 mm from START
    resumed = [start_q[0] - 0.006, start_q[1] - 0.006, start_q[2]]   # 5.7 mm the other way
    arm = LaggingArm(node, 'manipulator3d', model.joint_names, home,
                     {'start': (start, start_q), 'goal': (goal, goal_q)})
    arm.final = lambda name, k, q: (ended if (name, k) == ('start', 1) else
                                    None if (name, k) in (('start', 2), ('goal', 2)) else q)
    arm.resume = lambda name, k: resumed if (name, k) == ('start', 2) else None
    arm.hold_goal = lambda name, k: (name, k) == ('goal', 2)
    fake = FakeExecutor(node, 'manipulator3d', hold=arm.hold, path=arm.path)
    recorder = Recorder(node, '/manipulator3d')
    process = _start_target_input(processes, 'manipulator3d', urdf_of, cycles=2, autostart=False,
                                  response_timeout=60.0, current_pose_timeout=30.0, start=start,
                                  goal=goal, sequence_file='manipulator3d_pick_place.yaml')

    def spin_arm() -> None:
        arm.publish()
        spin(0.01)
    # The node hears the stream before the cycle starts, so its last joint state at PICK is
    # the stale one (without any, a stand-in would hide the race).
    _wait(lambda: arm.publisher.get_subscription_count() > 0, START_TIMEOUT, spin_arm,
          'target_input subscribed to joint_states', process)
    _wait(lambda: _trigger(node, spin_arm, '/manipulator3d/target_input/run_cycle').success,
          START_TIMEOUT, spin_arm, 'the cycle started', process)
    _wait(lambda: fake.held or recorder.with_state(TargetStatus.FAILED), 60.0, spin_arm,
          "cycle 2's GOAL move", process)
    assert not recorder.with_state(TargetStatus.FAILED), \
        recorder.with_state(TargetStatus.FAILED)[0].message
    shortened = _set(node, spin_arm, '/manipulator3d', 'current_pose_timeout',
                     ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=0.5))
    assert shortened.successful, shortened.reason
    fake.release()
    _wait(lambda: recorder.with_state(TargetStatus.FINISHED) or
          recorder.with_state(TargetStatus.FAILED), 60.0, spin_arm, 'the cycles finished',
          process)
    failed = recorder.with_state(TargetStatus.FAILED)
    assert not failed, f'{failed[0].phase}: {failed[0].message}\n{process.output()}'

    def attached_at(cycle: int) -> list[float]:
        ball = next(b for b in recorder.balls if b.attached and b.cycle == cycle)
        return [ball.position.x, ball.position.y, ball.position.z]
    assert attached_at(1) == pytest.approx(model.fk(ended)[:3, 3].tolist(), abs=1e-9)
    assert attached_at(2) == pytest.approx(model.fk(resumed)[:3, 3].tolist(), abs=1e-9)
    stand_in = "no joint state stamped after the last move's result came within 0.5 s"
    noted = [(s.cycle, s.phase, s.step_kind) for s in recorder.with_state(TargetStatus.SUCCEEDED)
             if stand_in in s.message and 'the target of the last move stands in' in s.message]
    assert noted == [(2, 'GOAL', 'move'), (2, 'PLACE', 'detach')]
    placed = recorder.balls[-1]
    assert not placed.attached
    assert [placed.position.x, placed.position.y, placed.position.z] == pytest.approx(goal)
    assert process.alive(), process.output()


@uses_case('take_over')
def test_a_click_takes_over_the_running_cycle(case):
    node, spin, fake, recorder = case.node, case.spin, case.fake, case.recorder
    wait_for(lambda: len(fake.held) == 1, START_TIMEOUT, spin, 'the START move in flight')
    clicks = node.create_publisher(PointStamped, f'{case.ns}/clicked_point', 10)
    click = PointStamped()
    click.point.x, click.point.y, click.point.z = 0.3, 0.3, 0.4
    clicks.publish(click)
    wait_for(lambda: len(fake.goals) == 3, 10.0, spin, 'the clicked goal')
    assert _is_point(fake.goals[2], [0.3, 0.3, 0.4])
    wait_for(lambda: recorder.with_state(TargetStatus.STOPPED), 10.0, spin, 'the cycle stopped')
    assert 'clicked_point took over' in recorder.with_state(TargetStatus.STOPPED)[0].message
    # The executor ends the replaced goal (here: it succeeds late); the cycle stays stopped.
    fake.release()
    wait_for(lambda: recorder.with_state(TargetStatus.SUCCEEDED, 'clicked_point'), 10.0, spin,
             'the click reached')
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        spin()
    assert len(fake.goals) == 3
    assert all(s.target_name != 'start'
               for s in recorder.with_state(TargetStatus.SUCCEEDED, 'sequence'))


@uses_case('no_result')
def test_a_move_without_result_times_out(case):
    spin, fake, recorder = case.spin, case.fake, case.recorder
    wait_for(lambda: recorder.with_state(TargetStatus.FAILED), START_TIMEOUT, spin,
             'the timeout report')
    failure = recorder.with_state(TargetStatus.FAILED)[0]
    assert failure.phase == 'HOME' and 'no result from the executor within 1 s' in failure.message
    assert fake.goals and all(g == fake.goals[0] for g in fake.goals)   # HOME, maybe resent
    fake.release()


def _trigger(node, spin, name: str) -> Trigger.Response:
    client = node.create_client(Trigger, name)
    wait_for(client.service_is_ready, START_TIMEOUT, spin, name)
    future = client.call_async(Trigger.Request())
    wait_for(future.done, 10.0, spin, f'{name} reply')
    return future.result()


@uses_case('cycle_services')
def test_cycle_services_and_parameter_checks(case):
    node, spin, fake, recorder = case.node, case.spin, case.fake, case.recorder
    text = ParameterType.PARAMETER_STRING
    for name, value, words in [
            ('motion_law', ParameterValue(type=text, string_value='teleport'), 'is not one of'),
            ('solver', ParameterValue(type=text, string_value='fabrik'), 'unknown solver'),
            ('solver', ParameterValue(type=text, string_value='analytic'), 'needs 3 joints'),
            ('goal_pose_type', ParameterValue(type=text, string_value='pose'), 'not one of'),
            ('grasp_tolerance', ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                                               double_value=math.nan), 'out of range'),
            ('grasp_tolerance', ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                                               double_value=0.0), 'must be > 0'),
            ('start', ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY,
                                     double_array_value=[0.5, 0.0, 0.3]), "no point 'start'")]:
        result = _set(node, spin, case.ns, name, value)
        assert not result.successful and words in result.reason, (name, result.reason)
    deadline = time.monotonic() + 1.0       # autostart off: nothing is sent by itself
    while time.monotonic() < deadline:
        spin()
    assert fake.goals == []

    started = _trigger(node, spin, f'{case.ns}/target_input/run_cycle')
    assert started.success, started.message
    wait_for(lambda: fake.held, 10.0, spin, 'the LIFT move in flight')
    assert not _trigger(node, spin, f'{case.ns}/target_input/run_cycle').success   # running
    stopped = _trigger(node, spin, f'{case.ns}/target_input/stop_cycle')
    assert stopped.success and stopped.message == 'cycle stopped'
    wait_for(lambda: recorder.with_state(TargetStatus.STOPPED), 10.0, spin, 'STOPPED report')
    assert '~/stop_cycle was called' in recorder.with_state(TargetStatus.STOPPED)[0].message
    assert recorder.balls[-1].attached     # the ball stays in the gripper where it stopped
    fake.release()
    assert len(_distinct(fake.goals)) == 2


@uses_case('new_description')
def test_robot_description_replaced_at_run_time(case, urdf_of, load_arm):
    """Longer links: the START the desk arm cannot reach becomes reachable, the refused cycle
    is checked again and runs, HOME aimed at the new links' FK. Another arm, a broken URDF
    and any model while a cycle runs are refused with the reason, and change nothing."""
    node, spin, fake, recorder, process = (case.node, case.spin, case.fake, case.recorder,
                                           case.process)
    _wait(lambda: recorder.with_state(TargetStatus.REFUSED), START_TIMEOUT, spin,
          'START refused', process)
    assert 'maximum reach 1.100 m' in recorder.with_state(TargetStatus.REFUSED)[0].message

    def set_description(urdf: str):
        return _set(node, spin, case.ns, 'robot_description',
                    ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=urdf))
    for description, words in ((urdf_of('pointer3'), 'only lengths may change'),
                               ('<robot', 'robot_description is not usable')):
        result = set_description(description)
        assert not result.successful and words in result.reason, result.reason
    rejected = _set_parameter(node, spin, case.ns, 'goal', [1.5, 0.0, 0.3])
    assert not rejected.successful and 'maximum reach 1.100 m' in rejected.reason
    assert fake.goals == []

    result = set_description(urdf_of('manipulator3d', L1='0.9', L2='0.8'))
    assert result.successful, result.reason
    _wait(lambda: fake.held, START_TIMEOUT, spin, 'the cycle up to GOAL', process)
    goals = _distinct(fake.goals)
    home = [0.0, 0.7853981633974483, -1.5707963267948966]
    tip = load_arm('manipulator3d', L1='0.9', L2='0.8').fk(home)[:3, 3]
    assert list(goals[0].joint_target.position) == pytest.approx(home)
    assert _goal_point(goals[0]) == pytest.approx(tip.tolist())      # HOME: the new FK
    assert _goal_point(goals[1]) == pytest.approx([1.5, 0.0, 0.2])   # START
    # While the cycle runs: no new model; the reach check is the longer arm's.
    result = set_description(urdf_of('manipulator3d'))
    assert not result.successful and 'stop the cycle' in result.reason, result.reason
    rejected = _set_parameter(node, spin, case.ns, 'goal', [1.9, 0.0, 0.2])
    assert not rejected.successful and 'maximum reach 1.700 m' in rejected.reason
    fake.release()
    _wait(lambda: recorder.with_state(TargetStatus.FINISHED), START_TIMEOUT, spin,
          'the cycle finished', process)
    # Finished: the desk arm's own lengths are taken back, and its reach with them.
    result = set_description(urdf_of('manipulator3d'))
    assert result.successful, result.reason
    rejected = _set_parameter(node, spin, case.ns, 'goal', [1.5, 0.0, 0.3])
    assert not rejected.successful and 'maximum reach 1.100 m' in rejected.reason
    assert process.alive(), process.output()


@uses_case('unanswered')
def test_an_unanswered_goal_is_sent_again(case):
    spin, fake, recorder, process = case.spin, case.fake, case.recorder, case.process
    wait_for(lambda: recorder.with_state(TargetStatus.FINISHED), 40.0, spin,
             'the cycle after the lost first goal')
    assert fake.requests >= 5       # HOME twice, then START, GOAL, HOME
    assert 'no answer to the goal for home within 1 s; sending it again' in process.output()
    assert [s.target_name for s in recorder.with_state(TargetStatus.SUCCEEDED)
            if s.step_kind == 'move'] == ['home', 'start', 'goal', 'home']
    fake.release()


BAD_SEQUENCES = [
    ('manipulator3d', 'steps: [{jump: home}]', "unknown key 'jump'"),
    ('manipulator3d', 'points: {a: [0.5, .nan, 0.2]}\nsteps: [{move: a}]',
     'points.a[1]: must be finite'),
    ('ccd5', None, 'written for arm "manipulator3d", this node serves "ccd5"'),
    ('manipulator3d', 'absent', "sequence file 'absent.yaml' not found"),
]


@pytest.fixture(scope='module')
def sequence_refusals(urdf_of, tmp_path_factory):
    """Every bad sequence file's target_input started at once (discovery off: they talk to
    nobody, see test_params_descriptions_viewers' case 24); (exit status, output) of each.
    A start-up is most of such a test's time: together they take about one's."""
    folder = tmp_path_factory.mktemp('sequences')
    with claimed_domain() as claim, process_group(claim) as group:
        started = []
        for index, (arm, text, _) in enumerate(BAD_SEQUENCES):
            if text is None:
                name = str(CONFIG / 'manipulator3d_pick_place.yaml')
            elif text == 'absent':
                name = 'absent.yaml'
            else:
                name = str(folder / f'bad{index}.yaml')
                Path(name).write_text(text, encoding='utf-8')
            started.append(group.start_node(
                'arm_ik', 'target_input', namespace=f'/{arm}',
                params=_params(arm, urdf_of, sequence_file=name),
                extra_env={'ROS_AUTOMATIC_DISCOVERY_RANGE': 'OFF'}))
        yield [(process.wait_for_exit(START_TIMEOUT), process.output()) for process in started]


@pytest.mark.parametrize('index', range(len(BAD_SEQUENCES)))
def test_bad_sequence_file_refuses_to_start(index, sequence_refusals):
    status, output = sequence_refusals[index]
    assert status == 1, output
    assert BAD_SEQUENCES[index][2] in output


def test_interactive_console_asks_until_reachable(ros_domain, ros_node, urdf_of, tmp_path):
    node, spin = ros_node
    fake = FakeExecutor(node, 'manipulator3d')
    recorder = Recorder(node, '/manipulator3d')
    params = tmp_path / 'params.yaml'
    params.write_text(yaml.safe_dump({'/**': {'ros__parameters': _params(
        'manipulator3d', urdf_of, sequence_file='manipulator3d_pick_place.yaml',
        interactive=True, cycles=1)}}), encoding='utf-8')
    log = tmp_path / 'console.log'
    env = ros_domain.environment()
    env['PYTHONUNBUFFERED'] = '1'
    with open(log, 'wb') as output:
        # Started here, not by ProcessGroup, because it needs a stdin to type into.
        process = subprocess.Popen(
            [executable_path('arm_ik', 'target_input'), '--ros-args', '-r',
             '__ns:=/manipulator3d', '--params-file', str(params)],
            stdin=subprocess.PIPE, stdout=output, stderr=subprocess.STDOUT, env=env,
            start_new_session=True)
    try:
        # START: out of reach, then not a point, then reachable; GOAL: Enter keeps the file's.
        process.stdin.write(b'1.5 0 0.2\n0.5 0.2\n0.5, -0.2, 0.15\n\n')
        process.stdin.flush()
        wait_for(lambda: recorder.with_state(TargetStatus.FINISHED), 40.0, spin,
                 'the cycle with the typed START')
        text = log.read_text(encoding='utf-8', errors='replace')
        assert 'START [1.500, 0.000, 0.200] m is unreachable' in text
        assert 'not a point: expected 3 numbers' in text
        assert 'START [0.500, -0.200, 0.150] m is reachable' in text
        assert _goal_point(fake.goals[1]) == pytest.approx([0.5, -0.2, 0.15])
        assert _goal_point(fake.goals[2]) == pytest.approx([0.45, 0.45, 0.15])
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=5.0)


# ---------------------------------------------------------------- with the real executor
@pytest.mark.skipif(not _executor_installed(),
                    reason='trajectory_executor is not installed (build the workspace with it)')
@pytest.mark.parametrize('arm', ['ccd5', 'manipulator3d'])
def test_pick_and_place_end_to_end(arm, processes, ros_node, urdf_of):
    node, spin = ros_node
    recorder = Recorder(node, f'/{arm}')
    common = _params(arm, urdf_of)
    executor = processes.start_node('arm_ik', 'trajectory_executor', namespace=f'/{arm}',
                                    params=common)
    target_input = processes.start_node('arm_ik', 'target_input', namespace=f'/{arm}',
                                        params={**common, 'cycles': 1, 'autostart': False,
                                                'sequence_file': f'{arm}_pick_place.yaml'})
    # Started by hand once this test hears the ball, so it sees every ball state.
    wait_for(lambda: recorder.balls, START_TIMEOUT, spin, 'the ball at the pick point')
    deadline = time.monotonic() + START_TIMEOUT
    while not _trigger(node, spin, f'/{arm}/target_input/run_cycle').success:
        assert time.monotonic() < deadline, executor.output()
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            spin()
    deadline = time.monotonic() + 120.0
    while time.monotonic() < deadline and not (recorder.with_state(TargetStatus.FINISHED) or
                                               recorder.with_state(TargetStatus.FAILED)):
        spin()
    failed = recorder.with_state(TargetStatus.FAILED)
    assert not failed, f'{failed[0].phase}: {failed[0].message}\n{executor.output()}'
    assert recorder.with_state(TargetStatus.FINISHED), target_input.output()
    assert recorder.attached_changes() == [False, True, False]
    done = [(s.phase, s.step_kind) for s in recorder.status
            if s.step_kind in ('attach', 'detach') and s.state == TargetStatus.SUCCEEDED]
    assert done == [('PICK', 'attach'), ('PLACE', 'detach')]
    moves = [s for s in recorder.with_state(TargetStatus.SUCCEEDED) if s.step_kind == 'move']
    assert len(moves) == 4 and all(s.final_error < 0.01 for s in moves)
    placed = recorder.balls[-1]
    assert not placed.attached
    place = {'ccd5': [0.35, 0.55, 0.30], 'manipulator3d': [0.45, 0.45, 0.15]}[arm]
    assert [placed.position.x, placed.position.y, placed.position.z] == pytest.approx(
        place, abs=0.02)
    assert executor.alive() and target_input.alive()
