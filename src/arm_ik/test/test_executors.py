"""HandoffExecutor, ServiceLoop and LockedActionClient (arm_ik.middleware). ServiceLoop: a
server node in this process, served by the loop, called over DDS by the test's own node."""

from __future__ import annotations

import time

import pytest
import rclpy
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

from arm_ik.client import SERVICE_QOS
from arm_ik.middleware import (
    destroy_with_actions,
    HandoffExecutor,
    LockedActionClient,
    SERVICE_LOOP_WAKE,
    ServiceLoop,
)
from arm_interfaces.action import MoveToTarget
from arm_interfaces.srv import SolveIK
from arm_testing.ros_harness import call_service, wait_for

REPLY = 15.0
SILENCE = 1.0     # s a request that must stay unanswered is watched for


class Server:
    """A node whose ~/solve_ik echoes the request's branch into the reply's message; a
    branch of 'raise' makes the callback raise, 'wrong type' makes it return a string."""

    def __init__(self, context: rclpy.Context) -> None:
        self.node = rclpy.create_node('loop_server', context=context,
                                      start_parameter_services=False)
        self.node.create_service(SolveIK, '~/solve_ik', self.answer, qos_profile=SERVICE_QOS)
        self.calls = 0

    def answer(self, request: SolveIK.Request, response: SolveIK.Response):
        self.calls += 1
        if request.branch == 'raise':
            raise RuntimeError('injected fault')
        if request.branch == 'wrong type':
            return 'not a response'
        response.message = f'echo {request.branch}'
        return response


@pytest.fixture
def served(ros_node):
    """(server, loop, client, spin): the loop serves the server's ~/solve_ik."""
    node, spin = ros_node
    server = Server(node.context)
    loop = ServiceLoop(server.node)
    client = node.create_client(SolveIK, '/loop_server/solve_ik', qos_profile=SERVICE_QOS)
    assert client.wait_for_service(timeout_sec=REPLY)
    yield server, loop, client, spin
    assert loop.close()
    server.node.destroy_node()


def _request(branch: str) -> SolveIK.Request:
    request = SolveIK.Request()
    request.branch = branch
    return request


def _unanswered(client, request: SolveIK.Request, spin) -> bool:
    """True when ``request`` gets no reply within SILENCE seconds."""
    future = client.call_async(request)
    deadline = time.monotonic() + SILENCE
    while not future.done() and time.monotonic() < deadline:
        spin()
    if future.done():
        return False
    client.remove_pending_request(future)
    return True


def test_serves_requests_in_order(served):
    server, _, client, spin = served
    # The first call may be resent (a reply sent before matching is lost); later ones not.
    assert call_service(client, _request('first'), spin, REPLY).message == 'echo first'
    for index in range(50):
        future = client.call_async(_request(f'call {index}'))
        wait_for(future.done, REPLY, spin, f'the reply to call {index}')
        assert future.result().message == f'echo call {index}'


def test_a_callback_that_raises_is_logged_and_the_loop_keeps_serving(served, capfd):
    server, _, client, spin = served
    assert call_service(client, _request('before'), spin, REPLY).message == 'echo before'
    # No reply at all: a default SolveIK response would read as SUCCESS.
    assert _unanswered(client, _request('raise'), spin)
    assert _unanswered(client, _request('wrong type'), spin)
    assert call_service(client, _request('after'), spin, REPLY).message == 'echo after'
    log = capfd.readouterr().err
    assert 'callback raised RuntimeError: injected fault; request not answered' in log
    assert 'callback returned str, not SolveIK.Response; request not answered' in log


def test_close_stops_the_loop_at_once_and_serving_ends(served):
    server, loop, client, spin = served
    assert call_service(client, _request('x'), spin, REPLY).message == 'echo x'
    started = time.monotonic()
    assert loop.close()
    # The wake guard ends the wait; the periodic wake-up is not needed for this.
    assert time.monotonic() - started < SERVICE_LOOP_WAKE
    calls = server.calls
    assert _unanswered(client, _request('late'), spin)
    assert server.calls == calls
    assert loop.close()        # closing twice is harmless


def test_the_loop_ends_when_its_context_shuts_down(ros_domain):
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain.domain_id)
    server = Server(context)
    loop = ServiceLoop(server.node)
    rclpy.shutdown(context=context)
    assert loop.close(timeout_sec=SERVICE_LOOP_WAKE + 2.0)


def test_refuses_a_node_with_anything_but_services(ros_domain):
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain.domain_id)
    try:
        node = rclpy.create_node('mixed', context=context, start_parameter_services=False,
                                 parameter_overrides=[
                                     Parameter('start_type_description_service', value=False)])
        with pytest.raises(ValueError, match='no service'):
            ServiceLoop(node)
        node.create_service(SolveIK, '~/solve_ik', lambda request, response: response)
        node.create_subscription(JointState, 'joint_states', lambda message: None,
                                 qos_profile_sensor_data)
        node.create_timer(1.0, lambda: None)
        with pytest.raises(ValueError, match='serves services only; mixed has '
                                             '1 subscriptions, 1 timers'):
            ServiceLoop(node)
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)


def test_the_handoff_executor_starts_every_pool_thread_at_once(ros_domain):
    # A pool that grows as callbacks overlap changes the node's thread count under load
    # (RELIABILITY case 27: the count stays constant).
    import threading
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain.domain_id)
    try:
        before = threading.active_count()
        executor = HandoffExecutor(num_threads=4, context=context)
        assert threading.active_count() == before + 4
        executor.shutdown()
    finally:
        rclpy.shutdown(context=context)


class _SlowSend:
    """An action client handle whose goal request, once sent, takes ``pause`` s to return:
    the window of rclpy#1123, between sending a request and storing its future."""

    def __init__(self, handle, pause: float) -> None:
        import threading
        self._handle, self._pause = handle, pause
        self.sent = threading.Event()
        self.sequence = None

    def send_goal_request(self, request):
        self.sequence = self._handle.send_goal_request(request)
        self.sent.set()
        time.sleep(self._pause)
        return self.sequence

    def __getattr__(self, name):
        return getattr(self._handle, name)


def test_a_goal_reply_handled_while_the_goal_is_being_sent_is_kept(ros_domain):
    # rclpy#1123: the reply is handled by another executor thread before send_goal_async has
    # stored its future. Jazzy's stock ActionClient drops it ("Ignoring unexpected goal
    # response"), Kilted's completes a future it does not return, and the goal is never
    # answered; the locked client handles it after the send.
    import threading
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain.domain_id)
    node = rclpy.create_node('locked_client', context=context, start_parameter_services=False)
    client = LockedActionClient(node, MoveToTarget, 'move_to_target')
    try:
        slow = client._client_handle = _SlowSend(client._client_handle, pause=0.3)
        handled = threading.Event()

        def reply() -> None:
            slow.sent.wait(REPLY)
            response = MoveToTarget.Impl.SendGoalService.Response(accepted=True)
            coroutine = client.execute({'goal': (slow.sequence, response)})
            with pytest.raises(StopIteration):
                coroutine.send(None)
            handled.set()

        replier = threading.Thread(target=reply)
        replier.start()
        future = client.send_goal_async(MoveToTarget.Goal())
        replier.join(REPLY)
        assert handled.is_set()
        assert future.done() and future.result().accepted
    finally:
        client.destroy()
        node.destroy_node()
        rclpy.shutdown(context=context)


def test_destroy_with_actions_destroys_the_action_servers_and_clients_too(ros_domain):
    from rclpy.action import ActionServer
    from rclpy.exceptions import InvalidHandle

    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain.domain_id)
    try:
        nodes = [rclpy.create_node(name, context=context, start_parameter_services=False)
                 for name in ('plain', 'with_actions')]
        clients = [LockedActionClient(node, MoveToTarget, 'move_to_target') for node in nodes]
        servers = [ActionServer(node, MoveToTarget, 'move_to_target', lambda goal: None)
                   for node in nodes]
        # rclpy's destroy_node leaves them (their destroy() removes them from the node's
        # waitables), and with them the node, to the interpreter's exit.
        nodes[0].destroy_node()
        assert {clients[0], servers[0]} <= set(nodes[0].waitables)
        destroy_with_actions(nodes[1])
        assert not set(nodes[1].waitables) & {clients[1], servers[1]}
        with pytest.raises(InvalidHandle):
            clients[1].server_is_ready()
    finally:
        rclpy.shutdown(context=context)
