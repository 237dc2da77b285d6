"""IKClient: call an arm's IK services from your own node, and the ``ik_client`` command.

Example::

    client = IKClient(node, arm='six_axis', solver='dls')
    reply = client.solve([1.0, 0.2, 0.8])          # blocks; do not call from a callback
    if reply.success:
        print(dict(zip(reply.joint_names, reply.positions)))
    else:
        print(reply.code.name, reply.message)

``solve_async`` returns an rclpy Future whose result is the decoded ``IKReply``: wait on it
as on any rclpy Future (``rclpy.spin_until_future_complete``, ``add_done_callback``, an
executor spun elsewhere). ``solve`` waits in whichever way fits how the node is spun (see
its docstring), and the two can be mixed on one node.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field
import json
import math
import sys
import threading
import time

import rclpy
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.exceptions import InvalidNamespaceException
from rclpy.executors import Executor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter_client import AsyncParameterClient
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from rclpy.validate_namespace import validate_namespace

from arm_ik.middleware import RESEND_AFTER
from arm_interfaces.srv import SolveIK
from arm_kinematics.common.urdf_tree import DescriptionError, read_tree
from arm_kinematics.ik.result import ErrorCode, GoalType
from arm_kinematics.ik.solvers import SOLVERS, unknown_solver_reason
from arm_kinematics.ik.solvers.base import MAX_TIMEOUT

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
    displacement: float = 0.0
    objective_value: float = 0.0

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
            solve_time=response.solve_time, displacement=response.displacement,
            objective_value=response.objective_value)

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
                  tolerance: float = 0.0, objective: str = '') -> SolveIK.Request:
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
    request.objective = objective
    return request


# Methods of rclpy's executors (Jazzy 7.1, Kilted 9.1) inside which a thread is spinning one;
# a frame of one of them whose ``self`` is an executor means that thread is spinning it.
_SPIN_METHODS = frozenset({'spin', 'spin_once', 'spin_until_future_complete',
                           'spin_once_until_future_complete', '_spin_once_impl',
                           'wait_for_ready_callbacks', '_wait_for_ready_callbacks'})
# s; how long ``solve`` waits or spins before it looks again at who spins the node, so a
# spinner that stops (or starts) meanwhile is noticed. A reply ends the wait at once.
_RECHECK = 0.1


def spinning_threads(executor: Executor) -> set[int]:
    """Idents of the threads that are inside one of ``executor``'s spin methods now.

    rclpy has no public way to ask whether an executor is being spun (and by which thread),
    and ``solve`` must know: spinning an executor that another thread spins breaks both
    (rclpy's executors are not reentrant: "generator already executing", or a
    MultiThreadedExecutor's "list.remove(x): x not in list"), and waiting for one that
    nobody spins waits for ever. A thread's stack says it. A thread that calls
    ``spin_once`` in a loop of its own is seen only while inside it (nearly always, but
    not between two calls); ``spin()`` in a thread is always seen. An executor that spins
    in native code (rclpy.experimental's EventsExecutor) leaves no such frame and is not
    seen.
    """
    threads = set()
    for ident, frame in sys._current_frames().items():
        while frame is not None:
            # f_locals is read only for spin-method frames: a handful, never the caller's.
            if (frame.f_code.co_name in _SPIN_METHODS
                    and frame.f_locals.get('self') is executor):
                threads.add(ident)
                break
            frame = frame.f_back
    return threads


class IKClient:
    """Client of one arm's IK service (one solver, or the default ~/solve_ik).

    The service client lives on ``node`` (so spinning the node delivers its replies) in a
    callback group of its own, so that a callback of a multi-threaded executor may call
    ``solve`` while the reply comes in on another thread of the pool.
    """

    def __init__(self, node: Node, arm: str, solver: str | None = None) -> None:
        self.node = node
        self.client = node.create_client(SolveIK, service_name(arm, solver),
                                         qos_profile=SERVICE_QOS,
                                         callback_group=MutuallyExclusiveCallbackGroup())
        # Spins the node during ``solve`` when no executor has it; created on first need.
        self._executor: SingleThreadedExecutor | None = None

    def wait_for_service(self, timeout: float = 10.0) -> bool:
        return self.client.wait_for_service(timeout_sec=timeout)

    def solve_async(self, target: Sequence[float], **kwargs: object) -> Future:
        """Send a request; the returned Future resolves to an IKReply.

        Cancelling the Future withdraws the request (a late reply is dropped, and rclpy's
        client forgets it instead of keeping it pending for ever).
        """
        decoded = Future()
        raw = self.client.call_async(build_request(target, **kwargs))

        def decode(done: Future) -> None:
            if decoded.cancelled():
                return
            if done.cancelled() or done.exception() is not None:
                decoded.set_exception(done.exception() or RuntimeError('request cancelled'))
            else:
                decoded.set_result(IKReply.from_response(done.result()))

        def withdraw(future: Future) -> None:
            if future.cancelled():
                self.client.remove_pending_request(raw)
        decoded.add_done_callback(withdraw)
        raw.add_done_callback(decode)
        return decoded

    def solve(self, target: Sequence[float], wait: float = 30.0, **kwargs: object) -> IKReply:
        """Send a request and wait up to ``wait`` seconds for its reply (sending it again
        when no reply came within middleware.RESEND_AFTER s plus its ``timeout``).

        How it waits depends on who spins ``node``, looked at again every 0.1 s:

        - its executor is spun by another thread (``rclpy.spin`` or ``executor.spin`` in a
          thread, a MultiThreadedExecutor): it waits for that thread to take the reply and
          touches nothing;
        - its executor is spun by nobody at the moment (the caller spins it itself, between
          calls): it spins that executor here, with ``spin_once``;
        - it is in no executor: it adds the node to a private SingleThreadedExecutor (on the
          node's context) for this call only, and releases it afterwards, so that
          ``rclpy.spin_until_future_complete(node, ...)`` or ``executor.add_node(node)``
          later find it free.

        A node counts as in no executor also when ``node.executor`` still names an executor
        that has dropped it: ``rclpy.spin_until_future_complete(node, f)``,
        ``rclpy.spin_once(node)`` and ``rclpy.spin(node)`` (Jazzy 7.1) take the node from
        its executor and, when done, remove it from the global executor without clearing
        ``node.executor`` (so does ``Executor.shutdown``). Trusting that stale reference made
        ``solve`` spin an executor without the node, and time out.

        Raises:
            TimeoutError: no reply within ``wait`` seconds (the request is withdrawn).
            RuntimeError: called from a callback of the only thread spinning the node, whose
                reply could never be taken until that callback returns (use
                ``solve_async``), or the node's context was shut down.
        """
        deadline = time.monotonic() + wait
        # A reply can be lost (middleware.call_until_answered says how); a solve is
        # idempotent, so a request unanswered this long past its own timeout is sent again.
        attempt = RESEND_AFTER + float(kwargs.get('timeout', 0.0) or 0.0)
        while True:
            future = self.solve_async(target, **kwargs)
            try:
                self._wait(future, min(deadline, time.monotonic() + attempt))
            finally:
                if not future.done():
                    future.cancel()         # withdraws the request: a late reply is dropped
            if future.done():
                return future.result()
            if time.monotonic() >= deadline:
                raise TimeoutError(f'no reply from {self.client.srv_name} within {wait} s')

    def _wait(self, future: Future, deadline: float) -> None:
        """Wait for ``future`` until ``deadline`` (time.monotonic) as ``solve`` describes."""
        replied = threading.Event()
        future.add_done_callback(lambda _: replied.set())
        me = threading.get_ident()
        while not replied.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0.0:
                return
            if not self.node.context.ok():
                raise RuntimeError(f'the context of node {self.node.get_name()} was shut '
                                   f'down while waiting for {self.client.srv_name}')
            step = min(remaining, _RECHECK)
            owner = self.node.executor
            if owner is not None and self.node not in owner.get_nodes():
                owner = None                # stale: see the docstring of solve
            if owner is None:
                self._spin_privately(replied, step)
                continue
            spinners = spinning_threads(owner)
            if spinners - {me}:
                replied.wait(step)
            elif spinners:
                raise RuntimeError(
                    f'IKClient.solve was called from a callback of the executor that spins '
                    f'node {self.node.get_name()}, in its only spinning thread: the reply '
                    f'cannot be taken until the callback returns; call solve_async and use '
                    f'add_done_callback (or spin the node with a MultiThreadedExecutor)')
            else:
                owner.spin_once(timeout_sec=step)

    def _spin_privately(self, replied: threading.Event, timeout: float) -> None:
        """Spin the node on the private executor for up to ``timeout`` s, then release it."""
        if self._executor is None:
            self._executor = SingleThreadedExecutor(context=self.node.context)
        executor = self._executor
        executor.add_node(self.node)
        try:
            end = time.monotonic() + timeout
            while not replied.is_set():
                remaining = end - time.monotonic()
                if remaining <= 0.0:
                    break
                executor.spin_once(timeout_sec=remaining)
        finally:
            executor.remove_node(self.node)
            if self.node.executor is executor:
                self.node.executor = None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='ik_client', description="Call an arm's IK service and print the answer.",
        epilog='Exit status: 0 solved, 1 an IK failure (the reply says which, e.g. '
               'UNKNOWN_SOLVER for a mistyped --solver), 2 a usage error or no service.')
    parser.add_argument('--arm', required=True,
                        help='arm namespace the ik_server runs in, e.g. six_axis')
    parser.add_argument('--solver', default=None,
                        help=f'{" | ".join(SOLVERS)} (exact, lower case); leave it out for '
                             "the arm's default solver (~/solve_ik)")
    parser.add_argument('--target', nargs=3, type=float, required=True, metavar=('X', 'Y', 'Z'),
                        help='tool position in base_link, m')
    parser.add_argument('--goal', choices=list(GOALS), default='position')
    parser.add_argument('--orientation', nargs=4, type=float, default=None,
                        metavar=('QX', 'QY', 'QZ', 'QW'),
                        help='tool orientation in base_link (quaternion); required by '
                             '--goal full_pose and read only by it')
    parser.add_argument('--branch', default='', help='branch label or nearest')
    parser.add_argument('--all', action='store_true',
                        help='return every distinct solution')
    parser.add_argument('--objective', default='',
                        help='first, closest, manipulability or centred (default: the '
                             "node's)")
    parser.add_argument('--timeout', type=float, default=0.0,
                        help=f"solve timeout, s, in (0, {MAX_TIMEOUT:g}] (default: the node's)")
    parser.add_argument('--wait', type=float, default=10.0,
                        help='how long to wait for the service and the reply, s')
    parser.add_argument('--json', action='store_true', help='print every field as JSON')
    return parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, with the combinations argparse cannot check refused (status 2).

    A full-pose goal without an orientation would otherwise be solved for the identity
    quaternion, an answer to a question nobody asked; an orientation with another goal
    would be ignored by the server just as silently.
    """
    parser = _parser()
    args = parser.parse_args(rclpy.utilities.remove_ros_args(
        sys.argv[1:] if argv is None else argv))
    if args.goal == 'full_pose' and args.orientation is None:
        parser.error('--goal full_pose needs --orientation QX QY QZ QW (the tool '
                     'orientation in base_link as a quaternion, e.g. 0 1 0 0 for tool Z down)')
    if args.orientation is not None and args.goal != 'full_pose':
        parser.error(f'--orientation is read only with --goal full_pose (the goal is '
                     f'{args.goal}); add --goal full_pose or leave the orientation out')
    # A timeout the request cannot carry is a usage error, not the node's default in disguise.
    if args.timeout != 0.0 and not (1e-9 <= args.timeout <= MAX_TIMEOUT):
        parser.error(f'--timeout {args.timeout:g} is outside 1e-09..{MAX_TIMEOUT:g} s')
    if not (0.0 < args.wait <= 3600.0):
        parser.error(f'--wait {args.wait:g} is outside (0, 3600] s')
    for name, values in (('--target', args.target), ('--orientation', args.orientation or ())):
        if not all(math.isfinite(v) for v in values):
            parser.error(f'{name} {" ".join(f"{v:g}" for v in values)} is not finite')
    args.arm = args.arm.strip('/')
    try:
        validate_namespace(f'/{args.arm}')
    except InvalidNamespaceException as error:
        parser.error(f'--arm {args.arm!r} is not a ROS namespace: {error}')
    return args


GRAPH_SETTLE = 2.0   # s more to look for served namespaces when none is seen at first


def served_arm_namespaces(node: Node) -> list[str]:
    """Namespaces in which the node's graph shows an ik_server serving ~/solve_ik.

    Asked node by node: the graph's plain service list also names services that only have
    clients (this command's own, or another waiting for a namespace nobody serves).
    """
    served = set()
    for name, namespace in node.get_node_names_and_namespaces():
        if name != 'ik_server':
            continue
        expected = f'{namespace.rstrip("/")}/ik_server/solve_ik'
        for service, types in node.get_service_names_and_types_by_node(name, namespace):
            if service == expected and 'arm_interfaces/srv/SolveIK' in types:
                served.add(namespace)
    return sorted(served)


def not_served(node: Node, client: IKClient, arm: str, wait: float) -> str:
    """Why the client's service is not there, in words: what was looked for, and which arm
    namespaces are served instead."""
    service = client.client.srv_name
    lines = [f'ik_client: service {service} not available after {wait:g} s']
    served = served_arm_namespaces(node)
    settle = time.monotonic() + GRAPH_SETTLE
    while not served and time.monotonic() < settle:
        # A loaded machine shows a node before its services (discovery is in the
        # background of the middleware): look again for a moment before saying "none".
        time.sleep(0.1)
        served = served_arm_namespaces(node)
    if client.client.service_is_ready():
        lines.append('ik_client: it appeared just after that (ik_server starting?); run '
                     'again, or give a longer --wait')
    elif f'/{arm}' in served:
        lines.append(f'ik_client: an ik_server serves /{arm}, but not this service (one of '
                     'another version?)')
    elif served:
        lines.append(f'ik_client: no ik_server serves the arm namespace /{arm}; on this '
                     f'ROS graph ik_server serves {", ".join(served)} '
                     f'(e.g. --arm {served[0].lstrip("/")})')
    else:
        lines.append('ik_client: no ik_server is visible on this ROS graph '
                     f'(ROS_DOMAIN_ID {node.context.get_domain_id()}): start one in the '
                     f'namespace /{arm}, on the same domain')
    return '\n'.join(lines)


def sliding_joints(node: Node, arm: str, wait: float) -> set[str]:
    """The prismatic joints of the arm served in ``/arm``, read from its ik_server's
    robot_description parameter (empty when it cannot be read: every joint then prints in
    rad, as the service's fields are documented)."""
    client = AsyncParameterClient(node, f'/{arm}/ik_server')
    if not client.wait_for_services(timeout_sec=min(wait, 2.0)):
        return set()
    future = client.get_parameters(['robot_description'])
    rclpy.spin_until_future_complete(node, future, timeout_sec=min(wait, 2.0))
    if not future.done() or future.result() is None or not future.result().values:
        return set()
    try:
        tree = read_tree(future.result().values[0].string_value)
    except DescriptionError:
        return set()
    return {joint.name for joint in tree.joints.values() if joint.kind == 'prismatic'}


def print_reply(reply: IKReply, as_json: bool, slides: Collection[str] = ()) -> None:
    """The reply as text (joints in rad and deg, the ``slides`` in m and mm) or JSON."""
    if as_json:
        print(reply.to_json())
        return
    print(f'{reply.code.name}: {reply.message}')
    if reply.positions:
        for name, value in zip(reply.joint_names, reply.positions):
            if name in slides:
                print(f'  {name:16s} {value:+.6f} m   ({value * 1e3:+8.3f} mm)')
            else:
                print(f'  {name:16s} {value:+.6f} rad ({math.degrees(value):+8.3f} deg)')
        print(f'  solver {reply.solver} branch {reply.branch or "-"}; error '
              f'{reply.position_error * 1000:.4f} mm; {reply.iterations} iterations; '
              f'w {reply.manipulability:.4f}; cond {reply.condition_number:.2f}; reach '
              f'{reply.reach_fraction * 100:.1f} %; {reply.solve_time * 1e3:.3f} ms; moved '
              f'{reply.displacement:.4f} {"(rad and m)" if slides else "rad"} from the seed')
    for label, positions in reply.alternatives.items():
        print(f'  alternative {label}: ' + ' '.join(f'{v:+.4f}' for v in positions))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.solver is not None:
        reason = unknown_solver_reason(args.solver)
        if reason:
            # No ik_server has a service for this name, so none is waited for: the answer
            # is the one ~/solve_ik gives a request naming it, at once.
            if not args.solver:
                reason += "; leave --solver out for the arm's default solver"
            print_reply(IKReply(ErrorCode.UNKNOWN_SOLVER, reason, solver=args.solver),
                        args.json)
            return 1

    def solve(node: Node) -> int:
        client = IKClient(node, args.arm, args.solver)
        if not client.wait_for_service(args.wait):
            print(not_served(node, client, args.arm, args.wait), file=sys.stderr)
            return 2
        reply = client.solve(args.target, wait=args.wait, goal=GOALS[args.goal],
                             orientation=args.orientation or (0.0, 0.0, 0.0, 1.0),
                             branch=args.branch, return_all=args.all, timeout=args.timeout,
                             objective=args.objective)
        slides = sliding_joints(node, args.arm, args.wait) \
            if reply.positions and not args.json else set()
        print_reply(reply, args.json, slides)
        return 0 if reply.success else 1
    return run_command('ik_client', solve)


def run_command(program: str, command: Callable[[Node], int]) -> int:
    """Run a command-line tool's ``command`` on a node named ``program`` and return its exit
    status: 2 when a service is missing or silent (TimeoutError, printed), 130 on Ctrl-C.
    The node is destroyed and rclpy shut down in every case."""
    rclpy.init()
    node = rclpy.create_node(program)
    try:
        return command(node)
    except TimeoutError as error:
        print(f'{program}: {error}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    sys.exit(main())
