"""Middleware workarounds of arm_ik's nodes, in one place, each with its upstream issue and
the measurement that justified it. The nodes call these; none restates one.

HandoffExecutor: a MultiThreadedExecutor that hands each callback to its pool exactly once.
rclpy's MultiThreadedExecutor (Jazzy 7.1, Kilted 9.1) submits a ready callback to its thread
pool and goes straight back to waiting; while that callback sits in the pool's queue, the
wait loop yields it again as an "in-progress task", submits it again, and does not block
(ros2/rclpy#1452, fixed upstream by ros2/rclpy#1547, not in these releases). Under the GIL
the spinning thread starves the pool: measured here with one 100 Hz subscription, the stock
executor delivered 5 messages/s at 100 % CPU on Jazzy (33/s at 70 % on Kilted), and the
trajectory executor stalled its control thread for seconds with a 100 Hz feedback topic.
Here the spinning thread waits until a pool thread has picked the callback up before it
looks for more work: every message is handled, at a few percent CPU.

ServiceLoop: the services of one node, and nothing else, on a thread of its own. Between a
request's arrival and its reply, rclpy's SingleThreadedExecutor walks every entity of its
nodes, wraps the callback in a Task and a coroutine and drives it: an echo service answers
in about 0.23 ms p50 on ServiceLoop and 0.28–0.31 ms on SingleThreadedExecutor
(benchmarks/bench_services.py measures both), while a closed-form solve takes 30–50 µs.
"""

from __future__ import annotations

from collections.abc import Callable
import functools
import os
import queue
import sys
import threading
import time
from typing import Any

from rclpy.action import ActionClient, ActionServer
from rclpy.callback_groups import CallbackGroup
from rclpy.event_handler import EventHandler
from rclpy.executors import (
    ConditionReachedException,
    ExternalShutdownException,
    MultiThreadedExecutor,
    ShutdownException,
    TimeoutException,
    TimeoutObject,
)
from rclpy.guard_condition import GuardCondition
from rclpy.node import Node
from rclpy.service import Service

from arm_ik.wait_loop import wait_until_stopped

HANDOFF_POLL = 0.1   # s; how often a wait for a free pool thread looks at shutdown
SERVICE_LOOP_WAKE = 1.0   # s; how often an idle ServiceLoop looks at its context


class HandoffExecutor(MultiThreadedExecutor):
    """MultiThreadedExecutor whose wait loop resumes only once a pool thread has taken the
    callback it just submitted (see the module docstring for why).

    Its pool threads are all started here: the stock pool starts them one at a time as
    callbacks overlap, so a node's thread count grew under load, at any time of its life
    (RELIABILITY case 27 wants it constant; seen in a loaded suite: 20 -> 21 threads).
    """

    def __init__(self, num_threads: int, **kwargs: Any) -> None:
        super().__init__(num_threads=num_threads, **kwargs)
        # ThreadPoolExecutor starts a thread per submit while none is idle: a task per
        # thread, each held until all have started, leaves every thread started and idle.
        started = threading.Barrier(num_threads)
        waits = [self._executor.submit(started.wait) for _ in range(num_threads)]
        for wait in waits:
            wait.result()

    def _spin_once_impl(self, timeout_sec: float | TimeoutObject | None = None,
                        wait_condition: Callable[[], bool] = lambda: False) -> None:
        try:
            handler, _, _ = self.wait_for_ready_callbacks(timeout_sec, None, wait_condition)
        except (ExternalShutdownException, ShutdownException, TimeoutException,
                ConditionReachedException):
            return
        taken = threading.Event()

        def run() -> None:
            taken.set()
            handler()

        self._executor.submit(run)
        self._futures.append(handler)
        # With every pool thread busy (long goals) this waits for one to free, as the stock
        # executor's callbacks would wait in the queue, but without spinning meanwhile.
        while not taken.wait(HANDOFF_POLL):
            if self._is_shutdown:
                return
        for future in self._futures[:]:
            if future.done():
                self._futures.remove(future)
                future.result()  # raise any exceptions, as the stock executor does


class ServiceLoop:
    """Serves the services ``node`` has when the loop starts, on a thread of its own, until
    :meth:`close`.

    The node must have services only (no subscriptions, timers, clients, guard conditions
    or waitables other than its publishers' QoS event handlers: nothing else would ever
    run) and must not be added to an executor too.
    Per request the loop takes the request, calls the service's callback with a fresh
    response and sends what it returns, as rclpy's executors do. A callback that raises
    is logged and the request gets no reply (rclpy's executors would stop spinning); a
    reply that cannot be sent (the client left) is logged at debug level. Either way the
    loop goes on serving.
    """

    def __init__(self, node: Node, thread_name: str = 'service_loop') -> None:
        counts = {kind: len(list(entities)) for kind, entities in (
            ('subscriptions', node.subscriptions), ('timers', node.timers),
            ('clients', node.clients), ('guard conditions', node.guards),
            # Every node has QoS event handlers for its /rosout and /parameter_events
            # publishers; they only warn of incompatible subscribers, and go unserved here.
            ('waitables', (w for w in node.waitables if not isinstance(w, EventHandler))))}
        others = {kind: count for kind, count in counts.items() if count}
        if others:
            listed = ', '.join(f'{count} {kind}' for kind, count in others.items())
            raise ValueError(f'ServiceLoop serves services only; {node.get_name()} has {listed}')
        self._node = node
        self._services = list(node.services)
        if not self._services:
            raise ValueError(f'ServiceLoop: {node.get_name()} has no service')
        self._context = node.context
        self._stopping = False
        self._wake = GuardCondition(None, None, context=self._context)
        self._wake_destroyed = False
        self._thread = threading.Thread(target=self._serve, name=thread_name, daemon=True)
        self._thread.start()

    def close(self, timeout_sec: float = 2.0) -> bool:
        """Stop serving; True once the thread has left (it finishes a callback in progress).

        The node can be destroyed afterwards; a node destroyed first stays alive until
        the loop lets go of it. Closing again is harmless.
        """
        if not self._stopping:
            self._stopping = True
            self._wake.trigger()
        self._thread.join(timeout=timeout_sec)
        if self._thread.is_alive():
            return False
        if not self._wake_destroyed:
            self._wake.destroy()
            self._wake_destroyed = True
        return True

    def _serve(self) -> None:
        try:
            self._serve_until_stopped()
        except Exception as error:  # noqa: BLE001
            if self._stopping or not self._context.ok():
                return       # rcl refusing a wait on a context that is shutting down
            self._node.get_logger().error(
                f'service loop stopped, its services no longer answer: '
                f'{type(error).__name__}: {error}')
            raise

    def _serve_until_stopped(self) -> None:
        service_handles = [service.handle for service in self._services]

        def answer(wait_set: Any) -> None:
            ready = wait_set.get_ready_entities('service')
            for service, handle in zip(self._services, service_handles):
                if handle.pointer in ready:
                    self._answer(service, handle)

        wait_until_stopped(self._context, self._wake,
                           lambda: self._stopping or not self._context.ok(),
                           lambda: SERVICE_LOOP_WAKE, answer, services=service_handles)

    def _answer(self, service: Service, handle: object) -> None:
        request, header = handle.service_take_request(service.srv_type.Request)
        if header is None:       # woken, but nothing left to take
            return
        logger = self._node.get_logger()
        try:
            response = service.callback(request, service.srv_type.Response())
        except Exception as error:  # noqa: BLE001 - one request's bug must not stop serving
            logger.error(f'{service.srv_name}: callback raised {type(error).__name__}: '
                         f'{error}; request not answered')
            return
        if not isinstance(response, service.srv_type.Response):
            logger.error(f'{service.srv_name}: callback returned {type(response).__name__}, '
                         f'not {service.srv_type.__name__}.Response; request not answered')
            return
        try:
            service.send_response(response, header)
        except Exception as error:  # noqa: BLE001 - e.g. the client left before the reply
            logger.debug(f'{service.srv_name}: reply not sent: {type(error).__name__}: {error}')


# ---------------------------------------------------------------------------------------
# GoalCourier: goal resend and result re-ask for an rclpy ActionClient.
#
# Two answers of an action can be lost on the DDS transport, and rclpy's futures for them
# then never complete (no timeout of their own):
# - the accept/reject of a goal request sent just as the client discovered the server (or
#   to a server that has just gone);
# - the reply to a get_result request sent before the server matched this client's
#   response reader: the server answers once, into nothing. RMW-level: the service waits
#   only a bounded time (100 ms) for the client's response reader to match before it
#   sends anyway (ros2/rmw_fastrtps#390, #467; the "client will not receive response"
#   family, ros2/ros2#1253), and rclpy's future for that response never completes.
# A goal without accept/reject within ``response_timeout`` is sent again (SEND_ATTEMPTS in
# all; test_target_input_node.py::test_an_unanswered_goal_is_sent_again forces a lost first
# request), and an accepted goal's result is asked for again every RESULT_ASK_RETRY s once
# the move's own duration has passed: get_result is idempotent, so asking twice is safe.
# No figure of how often this happens was measured; the test harness's call_service and
# motion_harness.wait_for_server work around the same loss for services and goals.

SEND_ATTEMPTS = 3         # a goal without accept/reject is sent this many times in all
RESULT_ASK_RETRY = 2.0    # s past a move's duration between requests for its result


class LockedActionClient(ActionClient):
    """rclpy's ActionClient with the fix of ros2/rclpy#1123 (rclpy#1308): a request is sent
    and its future stored under one lock, which the handling of the replies takes too.
    Without it, a reply that an executor thread handles between the send and the store is
    dropped ("Ignoring unexpected goal response"), and that goal, cancel or result is never
    answered. The Jazzy wheels' rclpy (7.1) has no lock there; Kilted's (9.1.2) takes one,
    but then stores a second future for the goal outside it and returns that one, which the
    reply never completes. Seen in this project's tests under load on Jazzy: a goal to
    move_group unanswered within 60 s in 3 module runs of 5, none in 5 with the lock. Every
    action client of arm_ik's nodes and tools is this one.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._send_lock = threading.RLock()   # reentrant: a feedback callback may send

    def send_goal_async(self, *args: Any, **kwargs: Any) -> Any:
        with self._send_lock:
            return super().send_goal_async(*args, **kwargs)

    def _cancel_goal_async(self, goal_handle: Any) -> Any:
        with self._send_lock:
            return super()._cancel_goal_async(goal_handle)

    def _get_result_async(self, goal_handle: Any) -> Any:
        with self._send_lock:
            return super()._get_result_async(goal_handle)

    async def execute(self, taken_data: Any) -> None:
        # The replies under the lock (their handling awaits nothing); the feedback outside
        # it, since a user's feedback callback may block or await.
        replies = {key: value for key, value in taken_data.items() if key != 'feedback'}
        if replies:
            with self._send_lock:
                await super().execute(replies)
        if 'feedback' in taken_data:
            await super().execute({'feedback': taken_data['feedback']})


class _Tracked:
    """One goal the courier looks after (``attempt`` tells stale callbacks apart)."""

    def __init__(self, goal: Any, duration: float, label: str, name: str) -> None:
        self.goal, self.duration, self.label, self.name = goal, duration, label, name
        self.attempt = 0
        self.answer_by = 0.0
        self.handle: Any = None
        self.ask_result_at = 0.0


class GoalCourier:
    """Sends goals through ``client`` and delivers each goal's answers once, by token.

    The owner picks the tokens (one per goal; a resend keeps it) and gets, on the
    executor's thread: ``on_accepted(token)``, ``on_rejected(token)``,
    ``on_result(token, wrapped)`` (the get_result response: ``.status`` and ``.result``),
    ``on_failed(token, reason)`` (no answer after every attempt, or a transport error) and
    ``on_feedback(token, feedback)``. After on_rejected, on_result or on_failed the goal is
    forgotten; ``drop`` forgets one earlier (optionally canceling it). Call ``tick`` from a
    timer. Not thread-safe: use it from one executor thread.
    """

    def __init__(self, client: Any, logger: Any, on_accepted: Callable[[int], None],
                 on_rejected: Callable[[int], None], on_result: Callable[[int, Any], None],
                 on_failed: Callable[[int, str], None], on_feedback: Callable[[int, Any], None],
                 response_timeout: float = 3.0, attempts: int = SEND_ATTEMPTS,
                 result_retry: float = RESULT_ASK_RETRY,
                 clock: Callable[[], float] = time.monotonic,
                 server: str = 'the executor') -> None:
        self._client, self._logger, self._clock = client, logger, clock
        self._server = server      # who failed to answer, in on_failed's words
        self._on_accepted, self._on_rejected, self._on_result = on_accepted, on_rejected, \
            on_result
        self._on_failed, self._on_feedback = on_failed, on_feedback
        self.response_timeout = response_timeout   # s; a new value serves the next send
        self.attempts, self.result_retry = attempts, result_retry
        self._goals: dict[int, _Tracked] = {}

    def send(self, token: int, goal: Any, duration: float, label: str = '',
             name: str = 'target') -> None:
        """Send ``goal`` (its move lasts ``duration`` s); ``label`` and ``name`` word the
        resend warning ('[label] no answer to the goal for name ...')."""
        tracked = _Tracked(goal, duration, label, name)
        self._goals[token] = tracked
        self._dispatch(token, tracked)

    def drop(self, token: int, cancel: bool = False) -> None:
        """Forget goal ``token``; ``cancel``: ask the server to cancel it when accepted."""
        tracked = self._goals.pop(token, None)
        if tracked is not None and cancel and tracked.handle is not None:
            tracked.handle.cancel_goal_async()

    def tick(self, now: float | None = None) -> None:
        """Resend unanswered goals, ask again for overdue results."""
        now = self._clock() if now is None else now
        for token, tracked in list(self._goals.items()):
            if tracked.handle is None and now > tracked.answer_by:
                self._unanswered(token, tracked)
            elif tracked.handle is not None and now >= tracked.ask_result_at:
                tracked.ask_result_at = now + self.result_retry
                self._ask_result(token, tracked)

    def _dispatch(self, token: int, tracked: _Tracked) -> None:
        tracked.attempt += 1
        tracked.answer_by = self._clock() + self.response_timeout
        attempt = tracked.attempt
        future = self._client.send_goal_async(
            tracked.goal, feedback_callback=functools.partial(self._feedback, token, attempt))
        future.add_done_callback(functools.partial(self._answered, token, attempt))

    def _unanswered(self, token: int, tracked: _Tracked) -> None:
        if tracked.attempt < self.attempts:
            self._logger.warning(f'{tracked.label} no answer to the goal for {tracked.name} '
                              f'within {self.response_timeout:g} s; sending it again')
            self._dispatch(token, tracked)
            return
        del self._goals[token]
        self._on_failed(token, f'{self._server} did not answer the goal {tracked.attempt} '
                        f'times within {self.response_timeout:g} s each')

    def _live(self, token: int, attempt: int | None = None) -> _Tracked | None:
        tracked = self._goals.get(token)
        if tracked is None or (attempt is not None and tracked.attempt != attempt):
            return None
        return tracked

    def _answered(self, token: int, attempt: int, future: Any) -> None:
        tracked = self._live(token, attempt)
        if tracked is None or tracked.handle is not None:
            return        # dropped, superseded by a resend, or answered already
        try:
            handle = future.result()
        except Exception as error:  # noqa: BLE001 - any transport failure is an outcome
            del self._goals[token]
            self._on_failed(token, f'sending the goal failed: {error}')
            return
        if not handle.accepted:
            del self._goals[token]
            self._on_rejected(token)
            return
        tracked.handle = handle
        tracked.ask_result_at = self._clock() + tracked.duration + self.result_retry
        self._on_accepted(token)
        self._ask_result(token, tracked)

    def _ask_result(self, token: int, tracked: _Tracked) -> None:
        tracked.handle.get_result_async().add_done_callback(
            functools.partial(self._resulted, token, tracked))

    def _resulted(self, token: int, tracked: _Tracked, future: Any) -> None:
        if self._goals.get(token) is not tracked:
            return        # dropped, or a result already delivered
        del self._goals[token]
        try:
            wrapped = future.result()
        except Exception as error:  # noqa: BLE001
            self._on_failed(token, f'no result: {error}')
            return
        self._on_result(token, wrapped)

    def _feedback(self, token: int, attempt: int, message: Any) -> None:
        if self._live(token, attempt) is not None:
            self._on_feedback(token, message.feedback)


# ---------------------------------------------------------------------------- node teardown
def destroy_with_actions(node: Node) -> None:
    """``node.destroy_node()``, and then its action servers and clients.

    rclpy's destroy_node (Jazzy 7.1, Kilted 9.1) destroys a node's publishers, subscriptions,
    services, clients, timers and guard conditions at once "to work around a possible hang"
    (ros2/build_cop#248), but not its action servers and clients: one left alive keeps the
    node, and the process's DDS participant, until the interpreter's exit destroys them in
    whatever order it meets them. They go after the node's own destroy_node, which may still
    end a goal through them."""
    actions = [waitable for waitable in node.waitables
               if isinstance(waitable, (ActionClient, ActionServer))]
    node.destroy_node()
    for action in actions:
        action.destroy()


# ---------------------------------------------------------------------------- service resend
# The reply of a service can be lost the same way (the server answers before it has matched
# this client's response reader; rclpy logs "failed to send response (timeout)" on the
# server's side and the client's future never completes). A caller whose request is
# idempotent sends it again after RESEND_AFTER s without an answer. Seen: the servo demo's
# first ~/enable went unanswered for 60 s in one CI run on a loaded machine.

RESEND_AFTER = 3.0        # s without a reply before an idempotent request is sent again


def call_until_answered(client: Any, request: Any, spin: Callable[[], None], timeout: float,
                        attempt: float = RESEND_AFTER) -> Any | None:
    """The reply to ``request`` (idempotent: it may be sent more than once), spinning with
    ``spin`` (one short wait); None when nothing came within ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        future = client.call_async(request)
        attempt_end = min(deadline, time.monotonic() + attempt)
        while not future.done() and time.monotonic() < attempt_end:
            spin()
        if future.done():
            return future.result()
        client.remove_pending_request(future)
        if time.monotonic() >= deadline:
            return None


# ---------------------------------------------------------------------------- executor hop
# ExecutorHop: calls into an ActionClient from the executor's own thread only. In rclpy 7.1.5
# (Jazzy, this venv) ActionClient.send_goal_async sends the request and only then registers
# the future its response completes, with no lock, so a call from another thread (the lab's
# browser callbacks) can lose the response and leave a future that never completes
# (ros2/rclpy#1123; LockedActionClient above mends it too). lab_viewer posts its goal
# sends here. No figure is measured in this project: the lab has always sent goals this way.


class ExecutorHop:
    """Runs functions on the node's executor: ``post`` from any thread; a guard condition
    wakes the executor. See the section comment above."""

    def __init__(self, node: Node, group: CallbackGroup) -> None:
        self._queue: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._guard = node.create_guard_condition(self._drain, callback_group=group)
        self._logger = node.get_logger()

    def post(self, function: Callable[[], None]) -> None:
        self._queue.put(function)
        self._guard.trigger()

    def _drain(self) -> None:
        while True:
            try:
                function = self._queue.get_nowait()
            except queue.Empty:
                return
            try:
                function()
            except Exception as error:  # noqa: BLE001 - one bad request must not stop the rest
                self._logger.error(f'lab request failed: {type(error).__name__}: {error}')


# ---------------------------------------------------------------------------- hidden helper node
class HiddenServices:
    """Some services of ``server``, under the server's own names, served by a ServiceLoop
    on a hidden helper node (``_<server>_<suffix>``: no parameter services) on a thread of
    their own, until :meth:`close`.

    Why (ik_server's closed-form services, ``~/ik/analytic`` and ``~/ik/closed_form``):
    their answers take 30–50 µs. On the node's multi-threaded executor, whose wait set also
    holds the numeric services, the subscription and the parameter services, the executor's
    own bookkeeping cost more than the solve; a SingleThreadedExecutor of their own still
    took 35–55 µs more per round trip than ServiceLoop (benchmarks/bench_services.py).
    rclpy cannot give one callback group its own executor (rclcpp can: its
    ``add_callback_group``), so they live on a helper node.

    Args:
        server: the node whose services these are (names resolve under its full name).
        suffix: the helper node's name is ``_<server name>_<suffix>``.
        services: (service type, name relative to the server, callback) each.
    """

    def __init__(self, server: Node, suffix: str,
                 services: list[tuple[type, str, Callable]], qos_profile: object,
                 thread_name: str = 'hidden_services') -> None:
        # Global arguments (a __node remap) would give the helper the server's own name.
        self.node = Node(f'_{server.get_name()}_{suffix}', namespace=server.get_namespace(),
                         context=server.context, use_global_arguments=False,
                         start_parameter_services=False)
        base = server.get_fully_qualified_name()
        for kind, name, callback in services:
            self.node.create_service(kind, f'{base}/{name}', callback, qos_profile=qos_profile)
        self._loop = ServiceLoop(self.node, thread_name=thread_name)

    def close(self) -> None:
        # The loop's thread must be out of its wait before the process exits: a thread
        # still inside rcl at interpreter exit can abort it ("terminate called without an
        # active exception").
        self._loop.close()
        self.node.destroy_node()


# ---------------------------------------------------------------------- trajectory_executor
# ControlThread: the control tick on a thread of its own, sleeping to absolute deadlines, at
# SCHED_FIFO priority when the system grants it (as ros2_control's controller_manager).
# An rclpy timer, even alone in its callback group on the HandoffExecutor, is woken by the
# executor's wait loop under the GIL: benchmarks/bench_motion.py (six_axis, 100 Hz,
# back-to-back Cartesian goals, 2 shared cores, load average ~9) measured publish jitter p99
# 2.6 ms on this thread and 12.0 ms on the timer (9.7 ms on the thread without SCHED_FIFO).
#
# Shutdown races (Ctrl-C or a launch's SIGINT shuts the context down before destroy_node
# runs): a tick or a goal's result published then would go into a dead context and raise.
# ``shutting_down`` is the one test for "that error is the shutdown, not a bug".
#
# cancel_settled: rclpy's ActionServer marks a goal CANCELING only after the node's cancel
# callback has returned; a goal thread woken by that callback (the executor holds at once)
# can reach its end first, while ``canceled()`` is still refused (valid only from CANCELING)
# and the goal would end ABORTED instead of CANCELED.

CANCEL_SETTLE_WAIT = 1.0   # s a goal thread waits for rclpy to mark its goal CANCELING
CANCEL_SETTLE_POLL = 0.005  # s


def shutting_down(context: object) -> bool:
    """True once ``context`` (an rclpy Context) is shutting down or gone."""
    return not context.ok()


def cancel_settled(goal_handle: object, timeout: float = CANCEL_SETTLE_WAIT) -> bool:
    """Wait until rclpy has marked ``goal_handle`` (a ServerGoalHandle) CANCELING; True once
    it has, False after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not goal_handle.is_cancel_requested and time.monotonic() < deadline:
        time.sleep(CANCEL_SETTLE_POLL)
    return goal_handle.is_cancel_requested


GIL_SWITCH_INTERVAL = 0.0005   # s, the longest the control tick waits for the GIL


class ControlThread:
    """Calls ``tick`` every ``period()`` s on a daemon thread at absolute deadlines (no
    catch-up burst after a late tick: the schedule moves on) until ``stop`` or the context's
    shutdown. ``priority`` > 0 asks SCHED_FIFO for this thread only; ``logger`` (an rclpy
    logger) hears a refused priority (warning) and a tick that raised (error), throttled."""

    def __init__(self, context: object, period: Callable[[], float], tick: Callable[[], None],
                 priority: int, logger: Any) -> None:
        self._context, self._period, self._tick = context, period, tick
        self._priority, self._logger = priority, logger
        # A thread that runs Python code keeps the GIL for up to the switch interval (5 ms by
        # default) before a waiting thread gets it: the tick waited that long behind a goal
        # thread building its PlannedPath and markers. 0.5 ms bounds the wait.
        sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_INTERVAL))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name='control', daemon=True)
        self._thread.start()

    def _log(self, level: str, text: str) -> None:
        # Throttled: a tick that keeps raising must not flood the log at the control rate.
        log = self._logger.warning if level == 'warn' else self._logger.error
        log(text, throttle_duration_sec=1.0)

    def stop(self, timeout: float = 1.0) -> None:
        self._stop.set()
        self._thread.join(timeout=timeout)

    def _run(self) -> None:
        if self._priority > 0:
            try:
                # pid 0: this thread only; the rest of the process keeps normal priority.
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(self._priority))
            except (OSError, AttributeError) as error:
                self._log('warn', f'realtime_priority {self._priority} not granted ({error}); '
                          'the control loop runs at normal priority')
        deadline = time.monotonic()
        while not self._stop.is_set() and not shutting_down(self._context):
            period = self._period()
            deadline += period
            delay = deadline - time.monotonic()
            if delay > 0.0:
                time.sleep(delay)
            elif delay < -period:
                deadline = time.monotonic()
            try:
                self._tick()
            except Exception as error:  # noqa: BLE001 - the loop must outlive one bad tick
                if shutting_down(self._context):
                    break
                self._log('error', f'control tick raised {type(error).__name__}: {error}')
