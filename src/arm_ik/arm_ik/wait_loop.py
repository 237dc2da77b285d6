"""The wait loop of arm_ik's own threads (middleware.ServiceLoop, BatchedSubscription): rcl
subscriptions and services that no executor waits on, waited on together with a guard
condition that wakes the loop to stop.

rclpy has no public wait set; this builds the one its own executors build (the same on Jazzy
and Kilted), once for the loop's life, and keeps every handle entered while the loop runs:
rclpy defers destroying an entity whose handle is in use, so nothing is freed under a wait.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from typing import Any

from rclpy.context import Context
from rclpy.guard_condition import GuardCondition
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy


def wait_until_stopped(context: Context, wake: GuardCondition, stopped: Callable[[], bool],
                       timeout: Callable[[], float], ready: Callable[[Any], None],
                       subscriptions: Sequence[Any] = (), services: Sequence[Any] = ()) -> None:
    """Wait on ``subscriptions``, ``services`` (rcl handles) and ``wake`` until ``stopped()``.

    Args:
        context: the entities' context.
        wake: triggered to end a wait at once (by whoever sets ``stopped``).
        stopped: looked at before and after each wait.
        timeout: s, the next wait's longest (looked at before each wait).
        ready: called with the wait set after each wait that did not stop the loop; it asks
            ``wait_set.get_ready_entities('subscription' | 'service')`` what is ready.
        subscriptions, services: rcl handles (``Subscription.handle``, ``Service.handle``).

    Raises:
        whatever rcl raises for a wait or a take (a context shutting down: rcl refuses);
        InvalidHandle: a handle was destroyed before the loop entered it.
    """
    with ExitStack() as handles:
        wake_handle = wake.handle
        for handle in (*subscriptions, *services, wake_handle, context.handle):
            handles.enter_context(handle)
        wait_set = _rclpy.WaitSet(len(subscriptions), 1, 0, 0, len(services), 0, context.handle)
        while not stopped():
            wait_set.clear_entities()
            for handle in subscriptions:
                wait_set.add_subscription(handle)
            for handle in services:
                wait_set.add_service(handle)
            wait_set.add_guard_condition(wake_handle)
            wait_set.wait(max(0, int(timeout() * 1e9)))
            if stopped():
                break
            ready(wait_set)
