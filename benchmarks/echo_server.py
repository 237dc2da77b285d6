"""Echo server for the service benchmark: arm_interfaces/SolveIK with an empty handler.

It answers every request with a default response at once, so its round trip is the floor
that rclpy and the RMW set for any SolveIK service. The executor is chosen on the command
line, to show which one lowers that floor:

    python benchmarks/echo_server.py --executor single|multi|handoff|events|loop [--ros-args ...]

``multi`` is rclpy's stock MultiThreadedExecutor; ``handoff`` is arm_ik's HandoffExecutor
(the same thread pool without rclpy's re-submit busy loop), the executor of ik_server's
numeric services; ``loop`` is arm_ik's ServiceLoop, which serves ik_server's closed-form
services (the node's services on a thread of their own, no executor).

The service is ``~/solve_ik`` with the QoS ik_server uses (reliable, depth 1000).
"""

from __future__ import annotations

import argparse
import sys
import time

import rclpy
from rclpy.executors import (
    Executor,
    ExternalShutdownException,
    MultiThreadedExecutor,
    SingleThreadedExecutor,
)
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.task import Future

from arm_interfaces.srv import SolveIK

# The same as arm_ik.client.SERVICE_QOS (kept literal, so the floor does not depend on it).
SERVICE_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
# ik_server's thread count, so 'handoff' is the executor ik_server runs.
MULTI_THREADS = 6


def events_executor_available() -> bool:
    """True when this rclpy ships rclpy.experimental.EventsExecutor (Jazzy 7.1+, Kilted)."""
    try:
        from rclpy.experimental import EventsExecutor  # noqa: F401
    except ImportError:
        return False
    return True


def make_executor(kind: str) -> Executor:
    if kind == 'single':
        return SingleThreadedExecutor()
    if kind == 'multi':
        return MultiThreadedExecutor(num_threads=MULTI_THREADS)
    if kind == 'handoff':
        from arm_ik.middleware import HandoffExecutor
        return HandoffExecutor(num_threads=MULTI_THREADS)
    if kind == 'events':
        from rclpy.experimental import EventsExecutor
        return EventsExecutor()
    raise ValueError(f'unknown executor {kind!r}')


class EchoServer(Node):
    def __init__(self) -> None:
        super().__init__('echo_server')
        self.create_service(SolveIK, '~/solve_ik', self.answer, qos_profile=SERVICE_QOS)

    @staticmethod
    def answer(request: SolveIK.Request, response: SolveIK.Response) -> SolveIK.Response:
        return response


def serve_with_loop(node: Node) -> int:
    """Serve ``node`` with arm_ik's ServiceLoop until Ctrl-C."""
    from arm_ik.middleware import ServiceLoop
    loop = ServiceLoop(node)
    try:
        while rclpy.ok():
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        loop.close()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--executor', choices=('single', 'multi', 'handoff', 'events', 'loop'),
                        default='single')
    args = parser.parse_args(rclpy.utilities.remove_ros_args(argv)[1:])
    rclpy.init(args=argv)
    node = EchoServer()
    if args.executor == 'loop':
        return serve_with_loop(node)
    executor = make_executor(args.executor)
    executor.add_node(node)
    try:
        if args.executor == 'events':
            # EventsExecutor.spin() of these wheels (Jazzy rclpy 7.1.6, Kilted 9.1.2), and its
            # spin_until_future_complete without a timeout, keep a core busy without ever
            # running a callback; with a timeout it works, so it spins in 1 s slices.
            never = Future()
            while rclpy.ok():
                executor.spin_until_future_complete(never, timeout_sec=1.0)
        else:
            executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
