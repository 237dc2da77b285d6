"""Integration-test plumbing: one ROS domain per test, discovery on localhost only.

Each test claims a free ROS_DOMAIN_ID with a lock file, so concurrent test runs (Jazzy and
Kilted side by side, or two developers) never share a DDS domain. The fixtures at the end
(``ros_domain``, ``processes``, ``ros_node``) are imported by the conftest of arm_ik's and
arm_bringup's tests; the context managers they are made of (``claimed_domain``,
``process_group``, ``node_on_domain``) serve module-scoped fixtures the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
import fcntl
import os
from pathlib import Path
import time
from typing import Generic, TYPE_CHECKING, TypeVar

import pytest

if TYPE_CHECKING:
    from arm_bringup.process_group import ProcessGroup

LOCK_DIR = Path(os.environ.get('ARM_IK_DOMAIN_LOCK_DIR', '/tmp/arm_ik_ros_domains'))
# Fast DDS maps domains up to 232 to ports; stay well inside and away from 0 (the default).
DOMAIN_RANGE = range(101, 200)


class DomainClaim:
    """An exclusive ROS_DOMAIN_ID, held until ``release``.

    Consecutive claims of one process start at different domains, so a test never meets
    the lingering DDS participants of the test before it.
    """

    _claims = 0

    def __init__(self) -> None:
        LOCK_DIR.mkdir(parents=True, exist_ok=True)
        DomainClaim._claims += 1
        start = (os.getpid() + 13 * DomainClaim._claims) % len(DOMAIN_RANGE)
        for offset in range(len(DOMAIN_RANGE)):
            domain = DOMAIN_RANGE[(start + offset) % len(DOMAIN_RANGE)]
            handle = open(LOCK_DIR / f'{domain}.lock', 'w')
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            self.domain_id = domain
            self._handle = handle
            return
        raise RuntimeError(f'no free ROS domain in {DOMAIN_RANGE}')

    def release(self) -> None:
        fcntl.flock(self._handle, fcntl.LOCK_UN)
        self._handle.close()

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env['ROS_DOMAIN_ID'] = str(self.domain_id)
        env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
        env.pop('ROS_LOCALHOST_ONLY', None)
        env.pop('ROS_STATIC_PEERS', None)
        return env


def wait_for(condition: Callable[[], bool], timeout: float, spin: Callable[[], None],
             what: str = 'condition') -> None:
    """Spin until ``condition()`` holds; fail with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        spin()
    raise AssertionError(f'timed out after {timeout:.1f} s waiting for {what}')


def call_service(client, request, spin: Callable[[], None], timeout: float,
                 attempt: float = 3.0):
    """Call a service and return its reply, resending the (idempotent) request when no reply
    comes within ``attempt`` seconds (arm_ik.middleware.call_until_answered says why)."""
    from arm_ik.middleware import call_until_answered
    reply = call_until_answered(client, request, spin, timeout, attempt)
    if reply is None:
        raise AssertionError(f'no reply from {client.srv_name} within {timeout:.1f} s')
    return reply


@contextmanager
def claimed_domain() -> Iterator[DomainClaim]:
    """A ROS domain of its own for the block (a module fixture's), released afterwards."""
    claim = DomainClaim()
    try:
        yield claim
    finally:
        claim.release()


@contextmanager
def process_group(claim: DomainClaim) -> Iterator[ProcessGroup]:
    """A ProcessGroup on ``claim``'s domain; every process is stopped when the block ends."""
    from arm_bringup.process_group import ProcessGroup
    group = ProcessGroup(env=claim.environment())
    try:
        yield group
    finally:
        group.close()


T = TypeVar('T')


class StartedAhead(Generic[T]):
    """The process sets of a module's tests (a namespace each, on one domain), each started
    while the test before it runs: ``take(name)`` starts ``name``'s set if it is not yet
    running and the next one of ``order`` at once, then returns ``name``'s.

    One ahead, not all at once: an idle node spends CPU on its timers (a lab_viewer with its
    pipeline about half a core), so sets that wait for their turn would slow the test that
    runs; one set's start-up overlaps the test before it instead of adding to it.
    """

    def __init__(self, order: list[str], start: Callable[[str], T]) -> None:
        self.order, self.start, self.started = list(order), start, {}
        self.taken: set[str] = set()

    def take(self, name: str) -> T:
        for wanted in (name, *self.order[self.order.index(name) + 1:][:1]):
            if wanted not in self.started:
                self.started[wanted] = self.start(wanted)
        self.taken.add(name)
        return self.started[name]

    def take_again(self, name: str, stop: Callable[[T], None]) -> T:
        """``name``'s set for a test run again (a rerun): the one its first run used and
        stopped is ended with ``stop`` and a new one started."""
        if name in self.taken and name in self.started:
            stop(self.started.pop(name))
        return self.take(name)


def interrupt(process) -> None:
    """Ctrl-C to a grouped node (a ProcessGroup's), without waiting: the group reaps it when
    it closes. A test done with a node of a module's group stops it so (an idle node spends
    CPU on its timers while the other tests run)."""
    import signal
    if process.alive():
        try:
            os.killpg(process.popen.pid, signal.SIGINT)
        except ProcessLookupError:
            pass


@contextmanager
def node_on_domain(claim: DomainClaim, name: str = 'test_client') -> Iterator[tuple]:
    """An rclpy node of the test in its own Context on ``claim``'s domain, with a spin helper.

    Yields (node, spin) where ``spin(timeout=0.05)`` runs the node's callbacks once; the
    node and its Context are shut down when the block ends.
    """
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=claim.domain_id)
    node = rclpy.create_node(name, context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)

    def spin(timeout: float = 0.05) -> None:
        executor.spin_once(timeout_sec=timeout)
    try:
        yield node, spin
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)


@pytest.fixture
def ros_domain() -> Iterator[DomainClaim]:
    """A ROS domain of this test's own (released afterwards)."""
    with claimed_domain() as claim:
        yield claim


@pytest.fixture
def processes(ros_domain: DomainClaim):
    """A ProcessGroup on this test's domain; every process is stopped at teardown."""
    with process_group(ros_domain) as group:
        yield group


@pytest.fixture
def ros_node(ros_domain: DomainClaim):
    """An rclpy node of the test in its own Context on the test's domain, with a spin helper.

    Yields (node, spin) where ``spin(timeout=0.05)`` runs the node's callbacks once.
    """
    with node_on_domain(ros_domain) as (node, spin):
        yield node, spin


def config_file(arm: str) -> str:
    """Path of a bundled example arm's configuration (the nodes' ``arm_config``)."""
    from arm_kinematics.description.bundled import config_path
    return str(config_path(arm))
