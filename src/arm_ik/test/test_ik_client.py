"""IKClient and the ik_client command against a real six_axis ik_server (one per module).

IKClient must work however its node is spun: by the client itself, by rclpy's Future
idioms (``rclpy.spin_until_future_complete``, which used to leave the next ``solve``
spinning an executor that no longer had the node, until it timed out), by an executor in
another thread, or by the caller's own executor. The command must refuse what no server can
answer (a mistyped solver, a full pose without an orientation) at once, and say plainly
which arm namespaces are served when the one asked for is not.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading

import numpy as np
import pytest
import rclpy
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions

from arm_bringup.process_group import executable_path
from arm_ik.client import IKClient
from arm_interfaces.srv import SolveIK
from arm_kinematics.ik.result import ErrorCode
from arm_kinematics.ik.solvers import SOLVERS
from arm_testing.ik_graph import fk_position, ik_servers, REPLY_TIMEOUT
from arm_testing.ros_harness import call_service

TARGET = [1.0, 0.2, 0.8]      # m, the six_axis target of docs/ik_services.md
TOLERANCE = 1e-4              # m, the server's default position tolerance
VALID = f'valid names (exact, lower case): {", ".join(SOLVERS)}'


@pytest.fixture(scope='module')
def graph():
    with ik_servers('six_axis') as graph:
        yield graph


@pytest.fixture(scope='module')
def user_node(graph):
    """A node on rclpy's default context (as a user's script has), on the graph's domain.

    rclpy's module-level helpers (spin_until_future_complete, spin_once) use the global
    executor, which lives on the default context; signal handlers stay pytest's.
    """
    rclpy.init(domain_id=graph.claim.domain_id, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node('ik_client_user')
    client = IKClient(node, 'six_axis', 'dls')
    assert client.wait_for_service(REPLY_TIMEOUT)
    # The first reply can be lost before the server matches this node's response reader
    # (see call_service); resend until one comes, so the tests meet a matched pair.
    call_service(client.client, SolveIK.Request(),
                 lambda: rclpy.spin_once(node, timeout_sec=0.05), 30.0)
    yield node
    node.destroy_node()
    rclpy.shutdown()


def assert_reached(reply, target=TARGET) -> None:
    assert reply.success, f'{reply.code.name}: {reply.message}'
    error = np.linalg.norm(fk_position('six_axis', reply.positions) - target)
    assert error <= TOLERANCE, f'FK of the reply is {error:.3g} m from the target'


# ---------------------------------------------------------------------- IKClient
def test_solve_after_rclpy_spin_until_future_complete(user_node):
    # The sequence, three times over, and each helper of rclpy that borrows the
    # node: none may leave solve() spinning an executor that has dropped the node.
    client = IKClient(user_node, 'six_axis', 'dls')
    for _ in range(3):
        future = client.solve_async(TARGET, branch='nearest', timeout=0.05)
        rclpy.spin_until_future_complete(user_node, future, timeout_sec=REPLY_TIMEOUT)
        assert future.done(), 'no reply through rclpy.spin_until_future_complete'
        assert_reached(future.result())
        assert_reached(client.solve(TARGET, wait=REPLY_TIMEOUT))
        # solve() borrowed the node and gave it back: rclpy's helpers find it free.
        assert user_node.executor is None
    rclpy.spin_once(user_node, timeout_sec=0.0)
    assert_reached(client.solve(TARGET, wait=REPLY_TIMEOUT))


@pytest.mark.parametrize('executor_type', [MultiThreadedExecutor, SingleThreadedExecutor])
def test_solve_and_done_callbacks_while_another_thread_spins(user_node, executor_type):
    client = IKClient(user_node, 'six_axis', 'dls')
    executor = executor_type()
    executor.add_node(user_node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        replied = threading.Event()
        future = client.solve_async(TARGET)
        future.add_done_callback(lambda _: replied.set())
        assert replied.wait(REPLY_TIMEOUT), 'the done callback never ran'
        assert_reached(future.result())
        # solve() from this thread must leave the executor to its own thread (spinning it
        # here too broke a MultiThreadedExecutor: "list.remove(x): x not in list").
        for _ in range(20):
            assert_reached(client.solve(TARGET, wait=REPLY_TIMEOUT))
        assert user_node.executor is executor and spinner.is_alive()
    finally:
        executor.shutdown()
        spinner.join(REPLY_TIMEOUT)
    assert not spinner.is_alive()
    # The executor is gone but node.executor still names it: solve() spins by itself.
    assert_reached(client.solve(TARGET, wait=REPLY_TIMEOUT))


def test_solve_from_a_multithreaded_executors_callback(user_node):
    # The reply comes in on another pool thread: the client has a callback group of its
    # own, so the callback waiting in the node's default group does not block it.
    client = IKClient(user_node, 'six_axis', 'dls')
    executor = MultiThreadedExecutor()
    executor.add_node(user_node)
    outcome: list[object] = []
    done = threading.Event()

    def callback() -> None:
        timer.cancel()
        try:
            outcome.append(client.solve(TARGET, wait=REPLY_TIMEOUT))
        except Exception as error:  # reported by the assertion below
            outcome.append(error)
        done.set()
    timer = user_node.create_timer(0.01, callback)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        assert done.wait(2 * REPLY_TIMEOUT), 'the timer callback did not finish'
    finally:
        executor.shutdown()
        spinner.join(REPLY_TIMEOUT)
        user_node.destroy_timer(timer)
    assert len(outcome) == 1 and not isinstance(outcome[0], Exception), outcome
    assert_reached(outcome[0])


def test_solve_spins_the_callers_own_executor_and_refuses_its_callbacks(graph):
    # graph.node is in a SingleThreadedExecutor that only the test thread spins.
    client = IKClient(graph.node, 'six_axis', 'dls')
    assert_reached(client.solve(TARGET, wait=REPLY_TIMEOUT))
    assert graph.node.executor is graph.executor
    # From a callback of that executor, in its only spinning thread, no reply could ever
    # be taken: solve says so at once instead of timing out.
    errors: list[Exception] = []

    def callback() -> None:
        timer.cancel()
        try:
            client.solve(TARGET, wait=REPLY_TIMEOUT)
        except RuntimeError as error:
            errors.append(error)
    timer = graph.node.create_timer(0.01, callback)
    try:
        graph.wait_until(lambda: timer.is_canceled(), REPLY_TIMEOUT, 'the timer callback')
    finally:
        graph.node.destroy_timer(timer)
    assert len(errors) == 1 and 'solve_async' in str(errors[0]), errors
    assert_reached(client.solve(TARGET, wait=REPLY_TIMEOUT))


def test_solve_timeout_releases_the_node(user_node):
    client = IKClient(user_node, 'no_such_arm', 'dls')
    with pytest.raises(TimeoutError, match='no reply from /no_such_arm/ik_server/ik/dls '
                                           'within 0.3 s'):
        client.solve(TARGET, wait=0.3)
    assert user_node.executor is None
    assert_reached(IKClient(user_node, 'six_axis').solve(TARGET, wait=REPLY_TIMEOUT))


# ---------------------------------------------------------------------- ik_client command
def run_ik_client(graph, *args: str) -> subprocess.CompletedProcess:
    # The timeout only stops a hung command; no test relies on it.
    return subprocess.run([executable_path('arm_ik', 'ik_client'), *args],
                          env=graph.claim.environment(), capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.parametrize('solver, meant', [('DLS', 'dls'), ('foo', None), ('', None),
                                           ('dls ', 'dls'), ('closed-form', 'closed_form')])
def test_mistyped_solver_is_unknown_solver_at_once(graph, solver, meant):
    # --wait 600: were the command to wait for a service of that name, it would hang here.
    result = run_ik_client(graph, '--arm', 'six_axis', '--solver', solver, '--target',
                           *map(str, TARGET), '--wait', '600')
    assert result.returncode == 1, result.stdout + result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith(f'UNKNOWN_SOLVER: unknown solver "{solver}"; {VALID}'), first
    if meant:
        assert first.endswith(f'; did you mean "{meant}"?'), first
    if not solver:
        assert first.endswith("leave --solver out for the arm's default solver"), first
    as_json = run_ik_client(graph, '--arm', 'six_axis', '--solver', solver, '--target',
                            *map(str, TARGET), '--json', '--wait', '600')
    data = json.loads(as_json.stdout)
    assert as_json.returncode == 1
    assert data['code'] == 'UNKNOWN_SOLVER' and data['error_code'] == ErrorCode.UNKNOWN_SOLVER
    assert data['success'] is False and data['solver'] == solver


def test_unserved_arm_namespace_names_the_served_ones(graph):
    result = run_ik_client(graph, '--arm', 'sixaxis', '--solver', 'dls', '--target',
                           *map(str, TARGET), '--wait', '3')
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.splitlines() == [
        'ik_client: service /sixaxis/ik_server/ik/dls not available after 3 s',
        'ik_client: no ik_server serves the arm namespace /sixaxis; on this ROS graph '
        'ik_server serves /six_axis (e.g. --arm six_axis)'], result.stderr


@pytest.mark.parametrize('args, words', [
    (['--goal', 'full_pose'], '--goal full_pose needs --orientation QX QY QZ QW'),
    (['--orientation', '0', '1', '0', '0'], '--orientation is read only with --goal '
                                            'full_pose (the goal is position)'),
    (['--arm', '6axis'], "--arm '6axis' is not a ROS namespace"),
])
def test_usage_errors_exit_2_before_asking(graph, args, words):
    result = run_ik_client(graph, '--arm', 'six_axis', '--solver', 'closed_form', '--target',
                           *map(str, TARGET), *args)
    assert result.returncode == 2 and result.stdout == '', result.stdout + result.stderr
    assert result.stderr.startswith('usage: ik_client') and words in result.stderr, \
        result.stderr


def test_readme_full_pose_call_and_slash_namespace(graph):
    result = run_ik_client(graph, '--arm', '/six_axis', '--solver', 'closed_form', '--goal',
                           'full_pose', '--target', *map(str, TARGET), '--orientation', '0',
                           '1', '0', '0', '--all', '--json')
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert data['code'] == 'OK' and data['solver'] == 'closed_form' and data['alternatives']
    assert np.linalg.norm(fk_position('six_axis', data['positions']) - TARGET) <= 1e-9


def test_floor_collision_advice_names_only_what_helps(graph):
    # Below the floor: raising the target is the only remedy (a closed form stops short).
    low = run_ik_client(graph, '--arm', 'six_axis', '--solver', 'dls', '--target', '1.0',
                        '0.2', '-0.3')
    assert low.returncode == 1, low.stdout + low.stderr
    assert re.match(r'FLOOR_COLLISION: the dls solutions found from \d+ seeds', low.stdout)
    assert low.stdout.rstrip().endswith('raise the target to z >= 0.035 m'), low.stdout
    assert 'closed' not in low.stdout and 'seed near' not in low.stdout
    closed = run_ik_client(graph, '--arm', 'six_axis', '--solver', 'closed_form', '--target',
                           '1.0', '0.2', '-0.3')
    assert closed.returncode == 1 and closed.stdout.startswith('PARTIAL_SOLUTION'), \
        closed.stdout
    raised = run_ik_client(graph, '--arm', 'six_axis', '--solver', 'dls', '--target', '1.0',
                           '0.2', '0.05')
    assert raised.returncode == 0 and raised.stdout.startswith('OK'), raised.stdout


@pytest.mark.parametrize(('options', 'words'), [
    (['--timeout', '-1'], '--timeout -1 is outside'),
    (['--timeout', 'nan'], '--timeout nan is outside'),
    (['--timeout', '1e12'], '--timeout 1e+12 is outside'),
    (['--timeout', '1e-12'], '--timeout 1e-12 is outside'),
    (['--wait', '0'], '--wait 0 is outside'),
    (['--target', 'nan', '0', '0'], '--target nan 0 0 is not finite'),
])
def test_options_no_request_can_carry_are_usage_errors(options, words, capsys):
    # Parsed in this process: no node, no server needed.
    from arm_ik.client import parse_args
    with pytest.raises(SystemExit) as raised:
        parse_args(['--arm', 'six_axis', '--target', '0.3', '0', '0.3', *options])
    assert raised.value.code == 2
    assert words in capsys.readouterr().err


def test_sliding_joints_print_in_metres(capsys):
    from arm_ik.client import IKReply, print_reply
    reply = IKReply(ErrorCode.OK, 'converged', joint_names=['yaw', 'lift'],
                    positions=[0.5, 0.03], position_error=0.0)
    print_reply(reply, False, {'lift'})
    out = capsys.readouterr().out
    assert 'yaw              +0.500000 rad ( +28.648 deg)' in out
    assert 'lift             +0.030000 m   ( +30.000 mm)' in out
    assert '(rad and m) from the seed' in out
