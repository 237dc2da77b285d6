"""ROS plumbing of lab_viewer: the clients of the pipeline's nodes, blocking calls from the
browser's threads, and the parameters of the running nodes (set through their own services,
so they validate)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
import threading
import time
from typing import Any

from rcl_interfaces.srv import GetParameters, SetParameters
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.parameter import Parameter, parameter_value_to_python
from rclpy.task import Future
from std_srvs.srv import Trigger

from arm_ik.client import SERVICE_QOS
from arm_ik.lab.controls import EXECUTOR, IK_SERVER, SAFETY
from arm_ik.middleware import LockedActionClient
from arm_interfaces.action import MoveToTarget
from arm_interfaces.srv import GetJointMap, SolveIK

SYNC_PATIENCE = 60.0        # s the lab waits for the nodes to serve their parameters


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


class Pipeline:
    """The lab's clients of the pipeline's nodes, named by the lab's *_node parameters."""

    def __init__(self, node: Node, names: Mapping[str, str], group: CallbackGroup) -> None:
        self._node = node
        ik, executor = names['ik_node'], names['executor_node']
        safety, target = names['safety_node'], names['target_node']

        def remote(name: str) -> RemoteParameters:
            return RemoteParameters(node, name, group)
        self.remotes = {IK_SERVER: remote(ik), EXECUTOR: remote(executor),
                        SAFETY: remote(safety), 'arm_info': remote(names['info_node'])}
        self.ik_client = node.create_client(SolveIK, f'{ik}/solve_ik', qos_profile=SERVICE_QOS,
                                            callback_group=group)
        self.map_client = node.create_client(GetJointMap, f'{safety}/joint_map',
                                             callback_group=group)
        self.cycle_clients = {
            'cycle_start': node.create_client(Trigger, f'{target}/run_cycle',
                                              callback_group=group),
            'cycle_stop': node.create_client(Trigger, f'{target}/stop_cycle',
                                             callback_group=group)}
        self.move_client = LockedActionClient(node, MoveToTarget, f'{executor}/move_to_target',
                                        callback_group=group)
        self._full_names = {key: self.qualified(r.name) for key, r in self.remotes.items()}
        # Every node that holds robot_description, executor first (it refuses while the arm
        # moves, before anything changed); (remote, required): the lab cannot work without
        # the first three; the others are skipped when they do not run (robot_state_publisher
        # and RViz only with a ROS install).
        self.description_holders = [
            (self.remotes[EXECUTOR], True), (self.remotes[IK_SERVER], True),
            (self.remotes[SAFETY], True), (self.remotes['arm_info'], False),
            (remote(target), False), (remote(names['markers_node']), False),
            (remote(names['state_publisher_node']), False)]

    def qualified(self, name: str) -> str:
        """``name`` with the lab's namespace in front, unless it is absolute."""
        namespace = self._node.get_namespace().rstrip('/')
        return name if name.startswith('/') else f'{namespace}/{name}'

    def owner_of(self, full_name: str) -> str | None:
        """The key in ``remotes`` of the node called ``full_name`` (None: not one of them)."""
        return next((key for key, name in self._full_names.items() if name == full_name),
                    None)

    def sync(self, parameter_keys: Mapping[tuple[str, str], str],
             show: Callable[[str, Any], None], timeout: float) -> None:
        """Show the nodes' own values once they answer (they may start after the lab):
        ``show(key, value)`` for each (owner, parameter) → panel key."""
        pending = {IK_SERVER, EXECUTOR, SAFETY}
        deadline = time.monotonic() + SYNC_PATIENCE
        while pending and time.monotonic() < deadline and self._node.context.ok():
            for owner in list(pending):
                remote = self.remotes[owner]
                if not remote.ready:
                    continue
                wanted = {parameter: key for (node, parameter), key in
                          parameter_keys.items() if node == owner}
                values = remote.get(list(wanted), timeout)
                for parameter, value in values.items():
                    show(wanted[parameter], value)
                if values:
                    pending.discard(owner)
            time.sleep(0.5)
