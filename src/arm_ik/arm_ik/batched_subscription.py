"""BatchedSubscription: a high-rate topic taken off the wire on a thread of its own and handed
to the node's callback in batches, on the node's own executor.

Why: every wake-up of an rclpy executor walks all of the node's entities (parameter services,
publishers' event handlers, timers, ...) in Python before it runs one callback. Measured here
(Jazzy, idle nodes beside the executor's 100 Hz joint_states): a bare node with one subscription
spends 0.9 ms per message in its SingleThreadedExecutor, markers 2.2 ms, safety_monitor
(HandoffExecutor) about the same, while its callbacks take 0.1-0.3 ms. A ros2_control
joint_state_broadcaster at 500 Hz would keep each such node on most of a core.

Here the subscription is not one of the node's entities: a thread waits on it alone and takes
each message as it arrives (about 0.35 ms per JointState, measured), and the node's executor
is woken through a guard condition at most once per ``period``. Its callback then gets every
message taken since, in arrival order, on the executor's thread as before: nothing the
callback touches needs a lock, nothing is skipped (up to ``max_queue`` messages per batch, the
oldest dropped beyond it, as a KEEP_LAST reader would), and a message waits at most ``period``.
A message after a quiet spell longer than ``period`` is handed on at once.

The subscription is made on the node's own handle, so the node's namespace and remapping rules
name its topic exactly as ``create_subscription`` would. It goes unlisted in the node's entities
(the executor must not wait on it too); ``ros2 topic info`` lists it as the node's.
"""

from __future__ import annotations

import atexit
import collections
from collections.abc import Callable
import threading
import time
from typing import Any
import weakref

from rclpy.callback_groups import CallbackGroup
from rclpy.exceptions import InvalidHandle
from rclpy.guard_condition import GuardCondition
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile
from rclpy.type_support import check_is_valid_msg_type

from arm_ik.wait_loop import wait_until_stopped

IDLE_WAKE = 1.0        # s; how often an idle taking thread wakes (to see its node gone)

# Every taking thread is joined before the interpreter exits: a daemon thread still in rcl's
# wait then is ended inside C++ frames ("terminate called without an active exception", the
# process aborts; seen at Ctrl-C of target_input and markers). A signal shuts the context
# down in C++, so its on_shutdown callbacks never run; atexit handlers do, before daemon
# threads are stopped.
_OPEN: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for subscription in list(_OPEN):
        subscription.close()


def _subscription_handle(node: Node, msg_type: Any, topic: str, qos: QoSProfile) -> Any:
    """rcl subscription on ``node`` (name expanded and remapped by rcl), in no entity list.

    rclpy's binding took a content filter argument from Kilted on; None is no filter."""
    with node.handle:
        try:
            return _rclpy.Subscription(node.handle, msg_type, topic, qos.get_c_qos_profile(),
                                       None)
        except TypeError:
            return _rclpy.Subscription(node.handle, msg_type, topic, qos.get_c_qos_profile())


class BatchedSubscription:
    """Messages of ``topic`` for ``callback(message)``, batched at most every ``period`` s.

    It ends with its node (destroyed: the next batch, or the next quiet wake within
    IDLE_WAKE, finds the node's guard condition gone), with the context, or at :meth:`close`.
    """

    def __init__(self, node: Node, msg_type: Any, topic: str,
                 callback: Callable[[Any], None], qos: QoSProfile, period: float,
                 callback_group: CallbackGroup | None = None, max_queue: int = 100) -> None:
        if not period > 0.0:
            raise ValueError(f'BatchedSubscription period must be > 0 s, got {period}')
        check_is_valid_msg_type(msg_type)
        self.msg_type = msg_type
        self.period = float(period)
        self._callback = callback
        self._context = node.context
        self._logger = node.get_logger()
        self._queue: collections.deque = collections.deque(maxlen=max_queue)
        self._lock = threading.Lock()
        self._handle = _subscription_handle(node, msg_type, topic, qos)
        self.topic_name = self._handle.get_topic_name()
        self._deliver = node.create_guard_condition(self._drain, callback_group)
        self._wake = GuardCondition(None, None, context=self._context)
        self._stopping = False
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=f'take {self.topic_name}')
        self._thread.start()
        _OPEN.add(self)
        self._context.on_shutdown(self.close)

    def close(self, timeout_sec: float = 2.0) -> bool:
        """Stop taking; True once the thread has left. Closing again is harmless."""
        self._stopping = True
        self._poke()
        self._thread.join(timeout=timeout_sec)
        _OPEN.discard(self)
        return not self._thread.is_alive()

    def _poke(self) -> None:
        try:
            self._wake.trigger()
        except InvalidHandle:
            pass             # the thread has left and destroyed it

    # ------------------------------------------------------------------ the node's side
    def _drain(self) -> None:
        with self._lock:
            batch = list(self._queue)
            self._queue.clear()
        for message in batch:
            self._callback(message)

    # ------------------------------------------------------------------ the taking thread
    def _run(self) -> None:
        try:
            self._take_until_stopped()
        except InvalidHandle:
            pass             # the node was destroyed: its guard condition went with it
        except Exception as error:  # noqa: BLE001
            if not (self._stopping or not self._context.ok()):
                # (else rcl refused a wait or take on a context that is shutting down)
                self._logger.error(f'{self.topic_name}: taking stopped, its messages no '
                                   f'longer arrive: {type(error).__name__}: {error}')
                raise
        finally:
            self._stopping = True
            self._handle.destroy_when_not_in_use()
            self._wake.destroy()

    def _take_until_stopped(self) -> None:
        handed_at = -float('inf')      # when the node's callback was last woken
        waiting = False                # messages taken but not yet handed on

        def timeout() -> float:
            return handed_at + self.period - time.monotonic() if waiting else IDLE_WAKE

        def take(wait_set: Any) -> None:
            nonlocal handed_at, waiting
            if self._handle.pointer in wait_set.get_ready_entities('subscription'):
                while (taken := self._handle.take_message(self.msg_type, False)) is not None:
                    with self._lock:
                        self._queue.append(taken[0])
                    waiting = True
            elif not waiting:
                # A quiet wake: a node destroyed while its topic is silent ends the loop
                # here (its guard condition is gone: InvalidHandle), not at process exit.
                with self._deliver.handle:
                    pass
            now = time.monotonic()
            if waiting and now - handed_at >= self.period:
                self._deliver.trigger()
                handed_at, waiting = now, False

        # Not context.ok(): it takes the context's lock, which a shutdown holds while it
        # calls close() and joins this thread. A shutdown stops the loop through close().
        wait_until_stopped(self._context, self._wake, lambda: self._stopping, timeout, take,
                           subscriptions=(self._handle,))
