"""ROS plumbing of lab_viewer: blocking calls from the browser's threads, and the
parameters of the running nodes (set through their own services, so they validate)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
import queue
import threading
from typing import Any

from rcl_interfaces.srv import GetParameters, SetParameters
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.parameter import Parameter, parameter_value_to_python
from rclpy.task import Future


def wait_future(future: Future, timeout: float) -> bool:
    """Wait (off the executor's threads) until ``future`` is done; False on timeout."""
    if future.done():
        return True
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    return done.wait(timeout) or future.done()


def call(client, request: Any, timeout: float) -> tuple[Any | None, str]:
    """Call a service from a browser thread: (response, '') or (None, why there is none)."""
    if not client.service_is_ready():
        return None, f'service {client.srv_name} is not available (is its node running?)'
    future = client.call_async(request)
    if not wait_future(future, timeout):
        future.cancel()
        return None, f'no answer from {client.srv_name} within {timeout:g} s'
    if future.exception() is not None:
        return None, f'{client.srv_name} failed: {future.exception()}'
    return future.result(), ''


class RemoteParameters:
    """The parameters of one node of the pipeline, through its set/get services."""

    def __init__(self, node: Node, name: str, group: CallbackGroup) -> None:
        self.name = name
        self._set = node.create_client(SetParameters, f'{name}/set_parameters',
                                       callback_group=group)
        self._get = node.create_client(GetParameters, f'{name}/get_parameters',
                                       callback_group=group)

    @property
    def ready(self) -> bool:
        return self._set.service_is_ready()

    def set(self, parameter: str, value: Any, timeout: float) -> tuple[bool, str]:
        """Set one parameter; (accepted, the node's reason or a note)."""
        message = Parameter(parameter, value=value).to_parameter_msg()
        response, reason = call(self._set, SetParameters.Request(parameters=[message]),
                                timeout)
        if response is None:
            return False, reason
        if not response.results:
            return False, f'{self.name} answered without a result'
        result = response.results[0]
        if result.successful:
            return True, f'{self.name}: {parameter} = {value!r}'
        reason = result.reason or 'no reason given'
        return False, f'{self.name} refused {parameter} = {value!r}: {reason}'

    def get(self, names: Sequence[str], timeout: float) -> dict[str, Any]:
        """Current values of ``names`` ({} when the node does not answer)."""
        response, _ = call(self._get, GetParameters.Request(names=list(names)), timeout)
        if response is None or len(response.values) != len(names):
            return {}
        return {name: parameter_value_to_python(value)
                for name, value in zip(names, response.values)}


class ExecutorHop:
    """Runs functions on the node's executor (rclpy's Jazzy action client is not safe to use
    from other threads): ``post`` from any thread; a guard condition wakes the executor."""

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
