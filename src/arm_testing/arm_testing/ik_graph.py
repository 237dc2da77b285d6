"""A ROS graph of real ik_server processes that a whole test module shares.

Starting an ik_server takes about a second, so the IK integration tests start each server
once per module (a module-scoped fixture owning an ``IKGraph``) instead of once per test.
The graph has its own ROS domain, its own process group and one test node with a
single-threaded executor spun by the test thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
import functools
import math
from pathlib import Path
import sys
import time
from typing import Any

import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rcl_interfaces.srv import GetParameters, SetParameters
import rclpy
from rclpy.client import Client
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter, parameter_value_to_python
from rclpy.task import Future

from arm_bringup.process_group import NodeProcess, ProcessGroup
from arm_ik.client import SERVICE_QOS
from arm_interfaces.msg import IKErrorCode, IKStatus
from arm_interfaces.srv import SolveIK
from arm_kinematics.description.bundled import expand_xacro, load_arm_config, load_model
from arm_kinematics.description.safety_config import safety_config_of
from arm_kinematics.ik.result import ErrorCode
from arm_kinematics.ik.solvers.base import Workspace, workspace_from_model
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.scene.geometry import SafetyGeometry
from arm_testing.ros_harness import call_service, config_file, DomainClaim

ARMS = ('pointer3', 'manipulator3d', 'ccd5', 'six_axis')
# Solvers that apply to each arm (the others answer SOLVER_NOT_APPLICABLE).
APPLICABLE = {
    'pointer3': ('analytic', 'ccd', 'dls'),
    'manipulator3d': ('analytic', 'ccd', 'dls'),
    'ccd5': ('ccd', 'dls'),
    'six_axis': ('closed_form', 'ccd', 'dls'),
}
VALID_CODES = frozenset(value for name, value in vars(IKErrorCode).items()
                        if name.isupper() and isinstance(value, int))
# Every round trip of these tests is a few milliseconds; a reply this late is a hang.
REPLY_TIMEOUT = 10.0


@functools.cache
def urdf(arm: str) -> str:
    return expand_xacro(arm)


@functools.cache
def model(arm: str) -> ArmModel:
    return load_model(arm)


@functools.cache
def workspace(arm: str) -> Workspace:
    """The reach rules the server applies (min height from arm_description's YAML)."""
    minimum = (load_arm_config(arm).get('ik') or {}).get('min_height_above_shoulder')
    return workspace_from_model(model(arm), None if minimum is None else float(minimum))


def fk_position(arm: str, positions: Iterable[float]) -> np.ndarray:
    return model(arm).fk(np.asarray(list(positions), dtype=float))[:3, 3]


@functools.cache
def safety(arm: str) -> SafetyGeometry:
    return SafetyGeometry(model(arm), safety_config_of(load_arm_config(arm), arm))


def fk_targets(arm: str, count: int, seed: int = 2024, margin: float = 0.02) -> list[np.ndarray]:
    """``count`` configurations inside the limits whose tip passes the arm's reach rules with
    ``margin`` metres to spare (so no target sits on a boundary by accident), and that stay
    ``margin`` above the floor where the arm has one (so the target is safely reachable)."""
    rng = np.random.default_rng(seed)
    rules = workspace(arm)
    floor = safety(arm)
    found = []
    while len(found) < count:
        q = model(arm).random_configurations(1, rng)[0]
        if floor.floor_enabled and floor.check(q).min_floor_clearance[0] < margin:
            continue
        relative = fk_position(arm, q) - rules.shoulder
        distance = float(np.linalg.norm(relative))
        if rules.min_height_above_shoulder is not None and \
                relative[2] < rules.min_height_above_shoulder + margin:
            continue
        if not rules.min_reach + margin < distance < rules.max_reach - margin:
            continue
        found.append(q)
    return found


def service(namespace: str, solver: str | None) -> str:
    """``/<namespace>/ik_server/ik/<solver>``, or ``.../solve_ik`` for solver None."""
    base = f'/{namespace.strip("/")}/ik_server'
    return f'{base}/solve_ik' if solver is None else f'{base}/ik/{solver}'


def rss_kb(process: NodeProcess) -> int:
    """Resident set size of a process, kB (VmRSS of /proc/<pid>/status)."""
    with open(f'/proc/{process.popen.pid}/status', encoding='ascii') as status:
        for line in status:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    raise RuntimeError(f'no VmRSS for pid {process.popen.pid}')


class IKGraph:
    """ik_server processes on a private domain plus one test node to talk to them."""

    def __init__(self) -> None:
        self.claim = DomainClaim()
        self.processes = ProcessGroup(env=self.claim.environment())
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=self.claim.domain_id)
        self.node = rclpy.create_node('ik_test_client', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.servers: dict[str, NodeProcess] = {}
        self._clients: dict[str, Client] = {}

    # ------------------------------------------------------------------ processes
    def start(self, namespace: str, arm: str | None = None, params: dict[str, Any] | None = None,
              extra_env: dict[str, str] | None = None,
              faulty_solver: str = '') -> NodeProcess:
        """Start an ik_server for ``arm`` (default: the namespace) in ``/namespace``; returns
        at once (see ``wait_ready``). With ``faulty_solver``, the test-only server of
        faulty_ik_server.py whose solver of that name raises."""
        arm = arm or namespace
        all_params = {'robot_description': urdf(arm), 'arm': arm, 'arm_config': config_file(arm)}
        all_params.update(params or {})
        program = None
        if faulty_solver:
            all_params['faulty_solver'] = faulty_solver
            program = [sys.executable, str(Path(__file__).with_name('faulty_ik_server.py'))]
        process = self.processes.start_node('arm_ik', 'ik_server', namespace=f'/{namespace}',
                                            params=all_params, extra_env=extra_env,
                                            program=program)
        self.servers[namespace] = process
        return process

    def wait_ready(self, *namespaces: str, timeout: float = 30.0) -> None:
        """Wait until each server answers a request (discovery done both ways)."""
        for namespace in namespaces or tuple(self.servers):
            process = self.servers[namespace]
            client = self._create_client(service(namespace, None))
            deadline = time.monotonic() + timeout
            while not client.wait_for_service(timeout_sec=0.2):
                assert process.alive(), f'ik_server {namespace} exited:\n{process.output()}'
                assert time.monotonic() < deadline, \
                    f'ik_server {namespace} not ready after {timeout} s:\n{process.output()}'
            # The first request also proves the reply path (matched response reader);
            # call_service resends it while a reply is lost before that match.
            try:
                call_service(client, SolveIK.Request(), lambda: self.spin(0.05),
                             max(0.1, deadline - time.monotonic()), attempt=2.0)
            except AssertionError as error:
                raise AssertionError(f'no first reply of {namespace}: {error}\n'
                                     f'{process.output()}') from None

    def ensure(self, namespace: str, arm: str | None = None, **kwargs: Any) -> NodeProcess:
        """The server of ``namespace``, started (and waited for) on first use."""
        if namespace not in self.servers:
            self.start(namespace, arm, **kwargs)
            self.wait_ready(namespace)
        return self.servers[namespace]

    def assert_alive(self, namespace: str) -> None:
        process = self.servers[namespace]
        assert process.alive(), f'ik_server {namespace} died:\n{process.output()[-4000:]}'

    # ------------------------------------------------------------------ calls
    def _create_client(self, name: str) -> Client:
        if name not in self._clients:
            # The product's QoS: a deep response reader, so bursts lose no replies.
            self._clients[name] = self.node.create_client(SolveIK, name,
                                                          qos_profile=SERVICE_QOS)
        return self._clients[name]

    def client(self, namespace: str, solver: str | None) -> Client:
        """The client of a server's service, once that service is discovered."""
        name = service(namespace, solver)
        client = self._create_client(name)
        assert client.wait_for_service(timeout_sec=REPLY_TIMEOUT), name
        return client

    def call_async(self, namespace: str, solver: str | None,
                   request: SolveIK.Request) -> Future:
        return self.client(namespace, solver).call_async(request)

    def call(self, namespace: str, solver: str | None, request: SolveIK.Request,
             timeout: float = REPLY_TIMEOUT) -> SolveIK.Response:
        """One request, answered within ``timeout`` seconds (else the test fails)."""
        future = self.call_async(namespace, solver, request)
        self.wait(future, timeout, f'reply of {service(namespace, solver)}')
        return future.result()

    def timed_call(self, namespace: str, solver: str | None, request: SolveIK.Request,
                   timeout: float = REPLY_TIMEOUT) -> tuple[SolveIK.Response, float]:
        """(response, round-trip seconds)."""
        started = time.perf_counter()
        response = self.call(namespace, solver, request, timeout)
        return response, time.perf_counter() - started

    def wait(self, future: Future, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not future.done():
            assert time.monotonic() < deadline, f'no {what} within {timeout} s'
            self.executor.spin_once(timeout_sec=0.05)

    def wait_all(self, futures: list[Future], timeout: float) -> None:
        """Spin until every future is done; fails naming how many are still pending."""
        deadline = time.monotonic() + timeout
        while not all(f.done() for f in futures):
            pending = sum(not f.done() for f in futures)
            assert time.monotonic() < deadline, \
                f'{pending} of {len(futures)} requests unanswered after {timeout} s'
            self.executor.spin_once(timeout_sec=0.05)

    def wait_until(self, condition: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, f'no {what} within {timeout} s'
            self.executor.spin_once(timeout_sec=0.02)

    def spin(self, timeout: float = 0.05) -> None:
        self.executor.spin_once(timeout_sec=timeout)

    # ------------------------------------------------------------------ parameters
    def _parameter_call(self, namespace: str, kind: type, request: Any) -> Any:
        name = f'/{namespace}/ik_server/{"set" if kind is SetParameters else "get"}_parameters'
        if name not in self._clients:
            self._clients[name] = self.node.create_client(kind, name)
            assert self._clients[name].wait_for_service(timeout_sec=REPLY_TIMEOUT), name
        future = self._clients[name].call_async(request)
        self.wait(future, REPLY_TIMEOUT, name)
        return future.result()

    def set_parameters(self, namespace: str, **values: Any) -> list[SetParametersResult]:
        """Set parameters one by one (as ``ros2 param set``); one result per value."""
        request = SetParameters.Request(parameters=[
            Parameter(name, value=value).to_parameter_msg() for name, value in values.items()])
        return list(self._parameter_call(namespace, SetParameters, request).results)

    def get_parameters(self, namespace: str, *names: str) -> dict[str, Any]:
        response = self._parameter_call(namespace, GetParameters,
                                        GetParameters.Request(names=list(names)))
        return {name: parameter_value_to_python(value)
                for name, value in zip(names, response.values, strict=True)}

    @contextmanager
    def parameters(self, namespace: str, **values: Any) -> Iterator[None]:
        """Set parameters for the duration of a block, then restore the old values."""
        old = self.get_parameters(namespace, *values)
        results = self.set_parameters(namespace, **values)
        assert all(r.successful for r in results), [r.reason for r in results]
        try:
            yield
        finally:
            restored = self.set_parameters(namespace, **old)
            assert all(r.successful for r in restored), [r.reason for r in restored]

    # ------------------------------------------------------------------ status
    def status_spy(self, namespace: str) -> list[IKStatus]:
        """Every IKStatus the server of ``namespace`` publishes from now on."""
        received: list[IKStatus] = []
        self.node.create_subscription(IKStatus, f'/{namespace}/ik_status', received.append, 100)
        return received

    # ------------------------------------------------------------------ teardown
    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        self.processes.close()
        self.claim.release()

    def __enter__(self) -> IKGraph:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def assert_refusal(response: SolveIK.Response, code: ErrorCode, *fragments: str) -> None:
    """A typed failure ``code`` whose message holds every fragment, with no joints to
    command (no positions, no names) and no NaN anywhere."""
    assert ErrorCode(response.error_code.val) == code, \
        f'{ErrorCode(response.error_code.val).name}: {response.message}'
    for fragment in fragments:
        assert fragment in response.message, f'{fragment!r} not in {response.message!r}'
    assert not response.solution.position and not response.solution.name, \
        'joints offered with a refusal'
    assert no_nan_in(response)


def no_nan_in(response: SolveIK.Response) -> bool:
    """True when no number of the response is NaN (inf is allowed where documented)."""
    numbers = [response.position_error, response.orientation_error, response.max_joint_step,
               response.manipulability, response.condition_number, response.reach_fraction,
               response.solve_time, response.achieved_position.x, response.achieved_position.y,
               response.achieved_position.z, *response.solution.position]
    for alternative in response.alternatives:
        numbers.extend(alternative.positions)
    return not any(math.isnan(v) for v in numbers)


@contextmanager
def ik_servers(*arms: str, params: dict[str, Any] | None = None) -> Iterator[IKGraph]:
    """An IKGraph with one ik_server per bundled arm in /<arm> (``params`` besides the arm's
    own), every one answering, for a module fixture; all stopped when the block ends."""
    with IKGraph() as graph:
        for arm in arms:
            graph.start(arm, params=params)
        graph.wait_ready()
        yield graph
