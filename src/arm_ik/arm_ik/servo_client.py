"""``servo_client``: drive a running servo_bridge from the shell, without the ros2 CLI.

    servo_client --ns /so101 enable
    servo_client --ns /so101 move 0.3 -0.2 0.4 0.1 0.5 --time 2
    servo_client --ns /so101 status
    servo_client --ns /so101 estop
    servo_client --ns /so101 reset_estop
    servo_client --ns /follower --node teleop resume      # teleoperation: follow the leader

``move`` sends one FollowJointTrajectory goal (one point, controller joint order) and prints
the result in words (a rejected goal with the bridge's own reason, from its ~/goal_rejections);
``status`` prints the bridge's /diagnostics once. Exit status 0 when the
bridge did what was asked, 1 when it refused or aborted (its reason printed), 2 on bad input
or when the bridge does not answer.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
import math
import os
import sys
import time
from typing import Any

EXIT_OK, EXIT_REFUSED, EXIT_BAD_INPUT = 0, 1, 2
SERVICES = ('enable', 'disable', 'estop', 'reset_estop')
TELEOP_SERVICES = ('resume', 'hold')     # the teleop node's (--node teleop)
RESULT_NAMES = {0: 'SUCCESSFUL', -1: 'INVALID_GOAL', -2: 'INVALID_JOINTS',
                -3: 'OLD_HEADER_TIMESTAMP', -4: 'PATH_TOLERANCE_VIOLATED',
                -5: 'GOAL_TOLERANCE_VIOLATED'}


class BridgeClient:
    """A client node of one servo_bridge (namespace ``ns``, node name ``servo_bridge``)."""

    def __init__(self, ns: str, node_name: str = 'servo_bridge', timeout: float = 30.0,
                 client_name: str = 'servo_client', domain_id: int | None = None) -> None:
        from control_msgs.action import FollowJointTrajectory
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        from arm_ik.middleware import LockedActionClient
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node(client_name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.prefix = f'{ns.rstrip("/")}/{node_name}'
        self.timeout = timeout
        self._clients: dict[str, object] = {}
        self.action = LockedActionClient(self.node, FollowJointTrajectory,
                                   f'{self.prefix}/follow_joint_trajectory')
        self._refusals = None       # arm_ik.goal_refusals.RefusalWords, before the first goal

    def _spin_until(self, done: Callable[[], bool], what: str, timeout: float | None = None,
                    tick: Callable[[], None] | None = None) -> None:
        deadline = time.monotonic() + (timeout or self.timeout)
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError(self._no_answer(what, timeout or self.timeout))
            self.executor.spin_once(timeout_sec=0.05)
            if tick is not None:
                tick()

    def _no_answer(self, what: str, timeout: float) -> str:
        return (f'no answer from {self.prefix} ({what}) within {timeout:g} s: is servo_bridge '
                'running?')

    def _request(self, kind: type, name: str, request: Any, what: str) -> Any:
        """The reply of ``name``; each of these requests is idempotent, so one whose reply
        was lost (middleware.call_until_answered) is sent again."""
        from arm_ik.middleware import call_until_answered
        client = self._clients.get(name)
        if client is None:
            client = self._clients[name] = self.node.create_client(kind, name)
        started = time.monotonic()
        self._spin_until(client.service_is_ready, what)
        left = self.timeout - (time.monotonic() - started)
        reply = call_until_answered(client, request,
                                    lambda: self.executor.spin_once(timeout_sec=0.05),
                                    max(left, 1.0))
        if reply is None:
            raise TimeoutError(self._no_answer(what, self.timeout))
        return reply

    def call(self, service: str) -> tuple[bool, str]:
        from std_srvs.srv import Trigger
        reply = self._request(Trigger, f'{self.prefix}/{service}', Trigger.Request(), service)
        return reply.success, reply.message

    def move(self, positions: list[float], seconds: float) -> tuple[bool, str]:
        """One goal to ``positions`` (controller joint order) in ``seconds``; (ok, words).

        A goal whose accept/reject never comes is sent again, and its result asked for again
        once the move is overdue (middleware.GoalCourier): a second copy of the same goal
        only replaces the first on the bridge.
        """
        from builtin_interfaces.msg import Duration
        from control_msgs.action import FollowJointTrajectory
        from trajectory_msgs.msg import JointTrajectoryPoint

        from arm_ik.middleware import GoalCourier
        self._spin_until(self.action.server_is_ready, 'follow_joint_trajectory')
        joints = self.joints()
        if len(positions) != len(joints):
            return False, f'{len(positions)} positions for the joints {", ".join(joints)}'
        goal = FollowJointTrajectory.Goal()
        goal.trajectory.joint_names = joints
        goal.trajectory.points = [JointTrajectoryPoint(
            positions=positions, velocities=[0.0] * len(joints),
            time_from_start=Duration(sec=int(seconds), nanosec=int(seconds % 1 * 1e9)))]
        outcome: list[tuple[bool, str]] = []
        self._listen_for_rejections()
        sent = self._refusals.mark()

        def result_words(_: int, wrapped: Any) -> None:
            answer = wrapped.result
            name = RESULT_NAMES.get(answer.error_code, str(answer.error_code))
            outcome.append((answer.error_code == 0, f'{name}: {answer.error_string}'))

        courier = GoalCourier(
            self.action, self.node.get_logger(), on_accepted=lambda _: None,
            on_rejected=lambda _: outcome.append((False, '')),   # words: below, not in a spin
            on_result=result_words,
            on_failed=lambda _, reason: outcome.append((False, reason)),
            on_feedback=lambda *_: None, server=self.prefix)
        courier.send(1, goal, seconds, label='servo_client:', name=str(positions))
        answer_wait = courier.attempts * courier.response_timeout    # every send unanswered
        self._spin_until(lambda: outcome, 'the result', answer_wait + seconds + 30.0,
                         tick=courier.tick)
        ok, words = outcome[0]
        return (ok, words) if ok or words else (False, self._rejection_words(sent))

    def _listen_for_rejections(self) -> None:
        """Subscribe (once, before the first goal) to the bridge's ~/goal_rejections, where it
        publishes the reason of each goal it rejects (arm_ik.goal_refusals)."""
        if self._refusals is None:
            from arm_ik.goal_refusals import RefusalWords
            self._refusals = RefusalWords(self.node, f'{self.prefix}/follow_joint_trajectory',
                                          server='the servo bridge')

    def _rejection_words(self, sent: float, wait: float = 2.0) -> str:
        """The bridge's reason for rejecting the goal sent at ``sent`` (a ``mark()``): the
        first it published after that; after ``wait`` s without one, where it would be."""
        deadline = time.monotonic() + wait
        while not self._refusals.since(sent) and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.05)
        return self._refusals.sentence(sent)

    def joints(self) -> list[str]:
        """The controller joints, from the bridge's joint_states (chain joints only)."""
        from rcl_interfaces.srv import GetParameters
        reply = self._request(GetParameters, f'{self.prefix}/get_parameters',
                              GetParameters.Request(names=['controller_joints']),
                              'get_parameters')
        return list(reply.values[0].string_array_value)

    def status(self) -> list[str]:
        """The bridge's next /diagnostics, one line per status."""
        from diagnostic_msgs.msg import DiagnosticArray
        arrays: list = []
        subscription = self.node.create_subscription(DiagnosticArray, '/diagnostics',
                                                     arrays.append, 10)
        try:
            self._spin_until(lambda: any(s.name.startswith(self.prefix.lstrip('/').split('/')[-1])
                                         for a in arrays for s in a.status), 'diagnostics')
        finally:
            self.node.destroy_subscription(subscription)
        levels = {0: 'OK', 1: 'WARN', 2: 'ERROR', 3: 'STALE'}
        lines = []
        for status in arrays[-1].status:
            values = ', '.join(f'{kv.key}={kv.value}' for kv in status.values)
            level = levels.get(status.level[0] if isinstance(status.level, bytes)
                               else status.level, '?')
            lines.append(f'{level:5s} {status.name}: {status.message} [{values}]')
        return lines

    def close(self) -> None:
        import rclpy

        from arm_ik.middleware import destroy_with_actions
        destroy_with_actions(self.node)
        self.executor.shutdown()
        rclpy.try_shutdown(context=self.context)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='servo_client', description='Drive a running '
                                     'servo_bridge: enable, move, status, estop.')
    parser.add_argument('--ns', default='', help='namespace of the servo_bridge (e.g. /so101)')
    parser.add_argument('--timeout', type=float, default=30.0, help='s to wait for the bridge')
    parser.add_argument('--node', default='servo_bridge', help='node name in the namespace '
                        '(teleop for resume and hold)')
    commands = parser.add_subparsers(dest='command', required=True)
    for service in SERVICES + TELEOP_SERVICES:
        commands.add_parser(service, help=f'call ~/{service}' + (
            ' of the teleop node (with --node teleop)' if service in TELEOP_SERVICES else ''))
    move = commands.add_parser('move', help='one FollowJointTrajectory goal')
    move.add_argument('positions', type=float, nargs='+', help='rad, controller joint order')
    move.add_argument('--time', type=float, default=2.0, help='s to reach them (default 2)')
    commands.add_parser('status', help="print the bridge's /diagnostics once")
    args = parser.parse_args(argv)
    if args.command == 'move' and (not args.time > 0 or
                                   not all(math.isfinite(p) for p in args.positions)):
        print('servo_client: positions must be finite and --time > 0', file=sys.stderr)
        return EXIT_BAD_INPUT
    client = BridgeClient(args.ns, node_name=args.node, timeout=args.timeout)
    try:
        if args.command in SERVICES + TELEOP_SERVICES:
            ok, message = client.call(args.command)
        elif args.command == 'move':
            ok, message = client.move(args.positions, args.time)
        else:
            lines = client.status()
            try:
                print('\n'.join(lines), flush=True)
            except BrokenPipeError:
                # `servo_client status | head -2`: the reader left; that is not a failure
                # (Python's documented way: stdout to devnull so the exit flush is quiet).
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_OK
    except TimeoutError as error:
        print(f'servo_client: {error}', file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        client.close()
    print(f'{args.command}: {"done" if ok else "refused"}: {message}')
    return EXIT_OK if ok else EXIT_REFUSED


if __name__ == '__main__':
    sys.exit(main())
