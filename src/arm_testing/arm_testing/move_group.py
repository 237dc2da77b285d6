"""Test harness of the move_group node: the node and its trajectory_executor in their own
processes on a ROS domain of their own, and a client node spun on a thread of its own (what
pymoveit2's blocking calls need)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
import threading
import time

from arm_testing.ros_harness import claimed_domain, process_group

SERVICES = ('compute_ik', 'compute_fk', 'compute_cartesian_path', 'plan_kinematic_path',
            'get_planning_scene', 'apply_planning_scene')
START_TIMEOUT = 90.0


class Client:
    """A client node in its own Context, spun by a MultiThreadedExecutor on a thread.

    Every callback of the node is reentrant, and a service client, once made, is kept until
    close: a handler that raises before it releases a mutually exclusive group (rclpy's
    executor leaves the group taken) would otherwise starve every later reply of the node,
    and destroying a client under a spinning executor is what raises there."""

    def __init__(self, domain_id: int, name: str = 'move_group_client') -> None:
        import rclpy
        from rclpy.executors import MultiThreadedExecutor
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = _reentrant_node(name, self.context)
        self.executor = MultiThreadedExecutor(num_threads=4, context=self.context)
        self.executor.add_node(self.node)
        self._clients: dict = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        while self.context.ok() and not self._stop.is_set():
            try:
                self.executor.spin_once(timeout_sec=0.1)
            except Exception:  # noqa: BLE001 - shutdown races end the loop
                if not self.context.ok():
                    return

    def call(self, kind, name: str, request, timeout: float = 60.0):
        """A service reply (the request resent when a reply is lost)."""
        client = self._clients.get((kind, name))
        if client is None:
            client = self._clients[(kind, name)] = self.node.create_client(kind, name)
        if not client.wait_for_service(timeout_sec=timeout):
            raise AssertionError(f'{name} is not available')
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            future = client.call_async(request)
            end = min(deadline, time.monotonic() + 20.0)
            while not future.done() and time.monotonic() < end:
                time.sleep(0.01)
            if future.done():
                return future.result()
            client.remove_pending_request(future)
        raise AssertionError(f'no reply from {name} within {timeout:.0f} s')

    def action(self, kind, name: str, timeout: float = 30.0):
        """The node's action client of ``name`` (arm_ik's LockedActionClient: rclpy#1123's
        fix), made once and kept, like its service clients (each client made adds its
        entities to every wake-up of the node's executor)."""
        from arm_ik.middleware import LockedActionClient
        client = self._clients.get((kind, name))
        if client is None:
            client = self._clients[(kind, name)] = LockedActionClient(self.node, kind, name)
        if not client.wait_for_server(timeout_sec=timeout):
            raise AssertionError(f'action {name} is not available')
        return client

    def close(self) -> None:
        import rclpy
        self._stop.set()
        self._thread.join(timeout=5.0)
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def _reentrant_node(name: str, context):
    from rclpy.callback_groups import ReentrantCallbackGroup
    from rclpy.node import Node

    class ReentrantNode(Node):
        """A node whose default callback group is reentrant."""

        def __init__(self) -> None:
            self._reentrant_group = ReentrantCallbackGroup()
            super().__init__(name, context=context)

        @property
        def default_callback_group(self):
            return self._reentrant_group

    return ReentrantNode()


def wait(future, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while not future.done():
        if time.monotonic() > deadline:
            raise AssertionError(f'no answer within {timeout:.0f} s')
        time.sleep(0.01)
    return future.result()


@contextmanager
def move_group_stack(arm, description: str, srdf: str = '',
                     controller: str = 'none') -> Iterator[tuple]:
    """move_group + trajectory_executor of ``arm`` (an arm_bringup ArmSource) on a domain
    of their own (``controller`` stand_in: executing through controller_stand_in); yields
    (client, processes) once every service answers."""
    from arm_bringup.move_group import start
    with claimed_domain() as claim, process_group(claim) as group:
        start(group, arm, description, srdf, controller=controller)
        client = Client(claim.domain_id)
        try:
            deadline = time.monotonic() + START_TIMEOUT
            names = set()
            while time.monotonic() < deadline:
                names = {name.lstrip('/') for name, _ in client.node.get_service_names_and_types()}
                dead = [p for p in group.processes if not p.alive()]
                if dead:
                    raise AssertionError(f'{dead[0].name} died:\n{dead[0].output()[-3000:]}')
                if all(s in names for s in SERVICES) and \
                        'trajectory_executor/execute_trajectory' in names:
                    break
                time.sleep(0.2)
            else:
                raise AssertionError(f'move_group did not come up: {sorted(names)}\n' +
                                     '\n'.join(p.output()[-2000:] for p in group.processes))
            yield client, group
        finally:
            client.close()
