"""A MultiThreadedExecutor that hands each callback to its pool exactly once.

rclpy's MultiThreadedExecutor (Jazzy 7.1, Kilted 9.1) submits a ready callback to its thread
pool and goes straight back to waiting; while that callback sits in the pool's queue, the
wait loop yields it again as an "in-progress task", submits it again, and does not block
(ros2/rclpy#1452, fixed upstream by ros2/rclpy#1547, not in these releases). Under the GIL
the spinning thread starves the pool: measured here with one 100 Hz subscription, the stock
executor delivered 5 messages/s at 100 % CPU on Jazzy (33/s at 70 % on Kilted), and the
trajectory executor stalled its control thread for seconds with a 100 Hz feedback topic.

Here the spinning thread waits until a pool thread has picked the callback up before it
looks for more work: every message is handled, at a few percent CPU.
"""

from __future__ import annotations

from collections.abc import Callable
import threading

from rclpy.executors import (
    ConditionReachedException,
    ExternalShutdownException,
    MultiThreadedExecutor,
    ShutdownException,
    TimeoutException,
    TimeoutObject,
)

HANDOFF_POLL = 0.1   # s; how often a wait for a free pool thread looks at shutdown


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
