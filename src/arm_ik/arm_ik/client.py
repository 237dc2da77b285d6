"""IKClient: call an arm's IK services from your own node, and the ``ik_client`` command.

Example::

    client = IKClient(node, arm='six_axis', solver='dls')
    reply = client.solve([1.0, 0.2, 0.8])          # blocks; do not call from a callback
    if reply.success:
        print(dict(zip(reply.joint_names, reply.positions)))
    else:
        print(reply.code.name, reply.message)

``solve_async`` returns an rclpy Future whose result is the decoded ``IKReply``; use it from
callbacks (with a reentrant callback group or an async callback) to avoid deadlocks.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
import json
import math
import sys
import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.task import Future

from arm_ik.kinematics.result import ErrorCode, GoalType
from arm_interfaces.srv import SolveIK

GOALS = {'position': GoalType.POSITION, 'tool_down': GoalType.TOOL_DOWN,
         'full_pose': GoalType.FULL_POSE}
# QoS of the SolveIK services on both sides. Deep enough that a burst waits in the readers
# instead of being overwritten: with the default depth of 10, the server lost most of a
# 500-request burst, and a client that sent 500 requests with solve_async got only 10
# replies (the rest were overwritten in its own response reader before it took them).
SERVICE_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)


@dataclass
class IKReply:
    """A SolveIK response with its error code decoded. Units: m, rad, s."""

    code: ErrorCode
    message: str
    solver: str = ''
    branch: str = ''
    branch_switched: bool = False
    shortfall: float = 0.0
    joint_names: list[str] = field(default_factory=list)
    positions: list[float] = field(default_factory=list)
    alternatives: dict[str, list[float]] = field(default_factory=dict)
    achieved_position: list[float] = field(default_factory=list)
    position_error: float = math.inf
    orientation_error: float = 0.0
    iterations: int = 0
    max_joint_step: float = 0.0
    manipulability: float = 0.0
    condition_number: float = math.inf
    reach_fraction: float = 0.0
    solve_time: float = 0.0

    @property
    def success(self) -> bool:
        return self.code == ErrorCode.OK

    @classmethod
    def from_response(cls, response: SolveIK.Response) -> IKReply:
        try:
            code = ErrorCode(response.error_code.val)
        except ValueError:
            code = ErrorCode.INTERNAL_ERROR
        point = response.achieved_position
        return cls(
            code=code, message=response.message, solver=response.solver,
            branch=response.branch, branch_switched=response.branch_switched,
            shortfall=response.shortfall, joint_names=list(response.solution.name),
            positions=list(response.solution.position),
            alternatives={a.label: list(a.positions) for a in response.alternatives},
            achieved_position=[point.x, point.y, point.z],
            position_error=response.position_error,
            orientation_error=response.orientation_error, iterations=response.iterations,
            max_joint_step=response.max_joint_step, manipulability=response.manipulability,
            condition_number=response.condition_number, reach_fraction=response.reach_fraction,
            solve_time=response.solve_time)

    def to_json(self) -> str:
        data = asdict(self)
        data['code'] = self.code.name
        data['error_code'] = int(self.code)
        data['success'] = self.success
        # JSON has no inf or NaN: they are written as null.
        return json.dumps({k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                           for k, v in data.items()}, indent=2)


def service_name(arm: str, solver: str | None) -> str:
    """Fully qualified service of ``solver`` on ``arm`` (None: the default ~/solve_ik)."""
    base = f'/{arm}/ik_server'
    return f'{base}/solve_ik' if not solver else f'{base}/ik/{solver}'


def build_request(target: Sequence[float], goal: GoalType = GoalType.POSITION,
                  orientation: Sequence[float] = (0.0, 0.0, 0.0, 1.0), frame_id: str = '',
                  seed: dict[str, float] | None = None, branch: str = '',
                  return_all: bool = False, timeout: float = 0.0,
                  max_iterations: int = 0, damping: float = 0.0,
                  tolerance: float = 0.0) -> SolveIK.Request:
    """A SolveIK request; zeros leave the node's defaults in place."""
    request = SolveIK.Request()
    request.target.header.frame_id = frame_id
    position = request.target.pose.position
    position.x, position.y, position.z = (float(v) for v in target)
    rotation = request.target.pose.orientation
    rotation.x, rotation.y, rotation.z, rotation.w = (float(v) for v in orientation)
    request.goal_type = int(goal)
    if seed:
        request.seed.name = list(seed)
        request.seed.position = [float(v) for v in seed.values()]
    request.branch = branch
    request.return_all_solutions = return_all
    if timeout > 0.0:
        # From whole nanoseconds, so 0.9999999999 s cannot round to nanosec = 10**9.
        request.timeout.sec, request.timeout.nanosec = divmod(round(timeout * 1e9),
                                                              1_000_000_000)
    request.max_iterations = max_iterations
    request.damping = damping
    request.tolerance = tolerance
    return request


class IKClient:
    """Client of one arm's IK service (one solver, or the default ~/solve_ik)."""

    def __init__(self, node: Node, arm: str, solver: str | None = None) -> None:
        self.node = node
        self.client = node.create_client(SolveIK, service_name(arm, solver),
                                         qos_profile=SERVICE_QOS)
        self._executor: SingleThreadedExecutor | None = None

    def wait_for_service(self, timeout: float = 10.0) -> bool:
        return self.client.wait_for_service(timeout_sec=timeout)

    def solve_async(self, target: Sequence[float], **kwargs: object) -> Future:
        """Send a request; the returned Future resolves to an IKReply."""
        decoded = Future()
        raw = self.client.call_async(build_request(target, **kwargs))

        def decode(done: Future) -> None:
            if done.cancelled() or done.exception() is not None:
                decoded.set_exception(done.exception() or RuntimeError('request cancelled'))
            else:
                decoded.set_result(IKReply.from_response(done.result()))
        raw.add_done_callback(decode)
        return decoded

    def solve(self, target: Sequence[float], wait: float = 30.0, **kwargs: object) -> IKReply:
        """Send a request and spin ``node`` until the reply (or ``wait`` seconds) arrives.

        The node is spun by the executor it was added to, else by a private one on the
        node's own context (``rclpy.spin_until_future_complete`` would take the node from
        its executor and needs the default context).
        """
        future = self.solve_async(target, **kwargs)
        executor = self.node.executor
        if executor is None:
            # Kept for the next call: the node now belongs to it until the caller adds the
            # node to an executor of its own.
            if self._executor is None:
                self._executor = SingleThreadedExecutor(context=self.node.context)
            executor = self._executor
            executor.add_node(self.node)
        # spin_once in a loop rather than spin_until_future_complete: on Jazzy (rclpy 7.1)
        # the latter made a round trip to an empty service take 3 to 9 ms at the median
        # against 0.3 ms for this loop (benchmarks/bench_services.py); on Kilted both ~0.4 ms.
        deadline = time.monotonic() + wait
        while not future.done():
            remaining = deadline - time.monotonic()
            if remaining <= 0.0:
                break
            executor.spin_once(timeout_sec=remaining)
        if not future.done():
            raise TimeoutError(f'no reply from {self.client.srv_name} within {wait} s')
        return future.result()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog='ik_client', description="Call an arm's IK service and print the answer.")
    parser.add_argument('--arm', required=True, help='arm namespace, e.g. six_axis')
    parser.add_argument('--solver', default='',
                        help="analytic | closed_form | ccd | dls (default: the arm's default)")
    parser.add_argument('--target', nargs=3, type=float, required=True, metavar=('X', 'Y', 'Z'),
                        help='tool position in base_link, m')
    parser.add_argument('--goal', choices=list(GOALS), default='position')
    parser.add_argument('--orientation', nargs=4, type=float, default=(0.0, 0.0, 0.0, 1.0),
                        metavar=('QX', 'QY', 'QZ', 'QW'), help='for --goal full_pose')
    parser.add_argument('--branch', default='', help='branch label or nearest')
    parser.add_argument('--all', action='store_true', help='return every solution')
    parser.add_argument('--timeout', type=float, default=0.0, help='solve timeout, s')
    parser.add_argument('--wait', type=float, default=10.0,
                        help='how long to wait for the service and the reply, s')
    parser.add_argument('--json', action='store_true', help='print every field as JSON')
    args = parser.parse_args(rclpy.utilities.remove_ros_args(
        sys.argv[1:] if argv is None else argv))

    rclpy.init()
    node = rclpy.create_node('ik_client')
    try:
        client = IKClient(node, args.arm, args.solver or None)
        if not client.wait_for_service(args.wait):
            print(f'ik_client: service {client.client.srv_name} not available '
                  f'(is ik_server running in namespace /{args.arm}?)', file=sys.stderr)
            return 2
        reply = client.solve(args.target, wait=args.wait, goal=GOALS[args.goal],
                             orientation=args.orientation, branch=args.branch,
                             return_all=args.all, timeout=args.timeout)
    except TimeoutError as error:
        print(f'ik_client: {error}', file=sys.stderr)
        return 2
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    if args.json:
        print(reply.to_json())
    else:
        print(f'{reply.code.name}: {reply.message}')
        if reply.positions:
            for name, value in zip(reply.joint_names, reply.positions):
                print(f'  {name:16s} {value:+.6f} rad ({math.degrees(value):+8.3f} deg)')
            print(f'  solver {reply.solver} branch {reply.branch or "-"}; error '
                  f'{reply.position_error * 1000:.4f} mm; {reply.iterations} iterations; '
                  f'w {reply.manipulability:.4f}; cond {reply.condition_number:.2f}; reach '
                  f'{reply.reach_fraction * 100:.1f} %; {reply.solve_time * 1e3:.3f} ms')
        for label, positions in reply.alternatives.items():
            print(f'  alternative {label}: ' + ' '.join(f'{v:+.4f}' for v in positions))
    return 0 if reply.success else 1


if __name__ == '__main__':
    sys.exit(main())
