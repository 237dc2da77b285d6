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
from contextlib import ExitStack
import os
import threading
import time

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
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node
from rclpy.service import Service

HANDOFF_POLL = 0.1   # s; how often a wait for a free pool thread looks at shutdown
SERVICE_LOOP_WAKE = 1.0   # s; how often an idle ServiceLoop looks at its context


class HandoffExecutor(MultiThreadedExecutor):
    """MultiThreadedExecutor whose wait loop resumes only once a pool thread has taken the
    callback it just submitted (see the module docstring for why)."""

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
        wake_ns = int(SERVICE_LOOP_WAKE * 1e9)
        with ExitStack() as handles:
            # Entered for as long as the loop runs: rclpy defers destroying an entity
            # whose handle is in use, so nothing is freed under a wait.
            service_handles = [service.handle for service in self._services]
            wake_handle = self._wake.handle
            for handle in (*service_handles, wake_handle, self._context.handle):
                handles.enter_context(handle)
            # rclpy has no public wait set; this is the one its own executors build (the
            # same on Jazzy and Kilted), here built once for the loop's life.
            wait_set = _rclpy.WaitSet(0, 1, 0, 0, len(service_handles), 0,
                                      self._context.handle)
            while not self._stopping and self._context.ok():
                wait_set.clear_entities()
                for handle in service_handles:
                    wait_set.add_service(handle)
                wait_set.add_guard_condition(wake_handle)
                wait_set.wait(wake_ns)
                if self._stopping:
                    break
                ready = wait_set.get_ready_entities('service')
                for service, handle in zip(self._services, service_handles):
                    if handle.pointer in ready:
                        self._answer(service, handle)

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


class ControlThread:
    """Calls ``tick`` every ``period()`` s on a daemon thread at absolute deadlines (no
    catch-up burst after a late tick: the schedule moves on) until ``stop`` or the context's
    shutdown. ``priority`` > 0 asks SCHED_FIFO for this thread only; ``log(level, text)``
    hears a refused priority ('warn') and a tick that raised ('error')."""

    def __init__(self, context: object, period: Callable[[], float], tick: Callable[[], None],
                 priority: int, log: Callable[[str, str], None]) -> None:
        self._context, self._period, self._tick = context, period, tick
        self._priority, self._log = priority, log
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name='control', daemon=True)
        self._thread.start()

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
