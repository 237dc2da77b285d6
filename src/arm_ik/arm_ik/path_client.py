"""The ``ik_path`` command: call an arm's ``~/ik/cartesian_path`` or ``~/ik/batch`` from the
shell and print the answer readably (or as JSON).

Examples::

    ik_path --arm six_axis line --to 1.2 0 0.2 --goal tool_down --solver closed_form
    ik_path --arm six_axis line --to 1.2 0 0.6 --to 1.0 0.3 0.6 --max-joint-step 0.05
    ik_path --arm six_axis arc --through 0.9 0 0.7 --to 0.6 0 1.0 --goal tool_down
    ik_path --arm pointer3 batch --target 1 0 0.9 --target 0.5 0.5 1.0
    ik_path --arm pointer3 batch --file targets.txt      # one "x y z" per line

Exit status: 0 followed / every target solved, 1 a stop or a failed target (the reply says
which and why), 2 a usage error or no service.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
import sys

from geometry_msgs.msg import Point, Pose
import rclpy

from arm_ik.client import GOALS, run_command, SERVICE_QOS
from arm_ik.middleware import call_until_answered, RESEND_AFTER
from arm_ik.nodes.conversions import duration, seconds_of
from arm_interfaces.srv import CartesianPath, SolveIKBatch
from arm_kinematics.ik.result import ErrorCode
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_kinematics.motion.path_request import DEFAULT_TIMEOUT as DEFAULT_PATH_TIMEOUT
from arm_kinematics.motion.path_request import PathCode


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='ik_path', description="Call an arm's path or batch IK service and print the "
        'answer.', epilog='Exit status: 0 followed / all solved, 1 a stop or a failed '
        'target, 2 a usage error or no service.')
    parser.add_argument('--arm', required=True, help='arm namespace of the ik_server')
    parser.add_argument('--solver', default='', help="solver name; '' the arm's default")
    parser.add_argument('--goal', choices=list(GOALS), default='position')
    parser.add_argument('--wait', type=float, default=10.0,
                        help='how long to wait for the service and the reply, s')
    parser.add_argument('--json', action='store_true', help='print the reply as JSON')
    commands = parser.add_subparsers(dest='command', required=True)
    line = commands.add_parser('line', help='a tool path from the current pose through '
                               'the --to poses (~/ik/cartesian_path)')
    line.add_argument('--to', nargs=3, type=float, action='append', required=True,
                      metavar=('X', 'Y', 'Z'), help='waypoint position, m (repeat for more)')
    arc = commands.add_parser('arc', help='a circular arc from the current pose through '
                              '--through to --to (~/ik/cartesian_path)')
    arc.add_argument('--through', nargs=3, type=float, required=True,
                     metavar=('X', 'Y', 'Z'), help='a point of the arc between its ends, m')
    arc.add_argument('--to', nargs=3, type=float, required=True, metavar=('X', 'Y', 'Z'),
                     help='where the arc ends, m')
    _path_options(line)
    _path_options(arc)
    batch = commands.add_parser('batch', help='many targets in one call (~/ik/batch)')
    batch.add_argument('--target', nargs=3, type=float, action='append', default=[],
                       metavar=('X', 'Y', 'Z'), help='target position, m (repeat)')
    batch.add_argument('--file', type=Path, default=None,
                       help='a text file of targets, "x y z" per line (# comments)')
    return parser


def _path_options(line: argparse.ArgumentParser) -> None:
    """The options a line and an arc share."""
    line.add_argument('--orientation', nargs=4, type=float, default=(0.0, 0.0, 0.0, 1.0),
                      metavar=('QX', 'QY', 'QZ', 'QW'),
                      help='tool orientation of every waypoint (read for full_pose)')
    line.add_argument('--start', nargs='+', default=None, metavar='NAME=VALUE',
                      help='start joint positions (rad); default: the current state')
    line.add_argument('--max-step', type=float, default=0.0, help='m between samples')
    line.add_argument('--max-rotation-step', type=float, default=0.0, help='rad')
    line.add_argument('--max-joint-step', type=float, default=0.0,
                      help='rad per joint between samples (default 0.1)')
    line.add_argument('--max-deviation', type=float, default=0.0, help='m (default 0.001)')
    line.add_argument('--max-condition', type=float, default=0.0, help='default 100')
    line.add_argument('--allow-branch-change', action='store_true')
    line.add_argument('--no-partial', action='store_true',
                      help='return no joint path unless the whole path is followed')
    line.add_argument('--timing', choices=('min_jerk', 'linear'), default='min_jerk')
    line.add_argument('--timeout', type=float, default=0.0, help='s for the whole path')


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = _parser()
    args = parser.parse_args(rclpy.utilities.remove_ros_args(
        sys.argv[1:] if argv is None else argv))
    args.arm = args.arm.strip('/')
    if args.command == 'arc':
        args.to = [args.to]
    if args.command in ('line', 'arc') and args.start is not None:
        try:
            args.start = {name: float(value) for name, value in
                          (item.split('=', 1) for item in args.start)}
        except ValueError:
            parser.error('--start takes NAME=VALUE pairs (rad), e.g. base_yaw=0.2')
    if args.command == 'batch':
        targets = [tuple(t) for t in args.target]
        if args.file is not None:
            try:
                lines = args.file.read_text(encoding='utf-8').splitlines()
            except OSError as error:
                parser.error(f'--file {args.file}: {error.strerror}')
            for number, text in enumerate(lines, 1):
                text = text.split('#', 1)[0].replace(',', ' ').split()
                if not text:
                    continue
                try:
                    values = tuple(float(v) for v in text)
                except ValueError:
                    values = ()
                if len(values) != 3:
                    parser.error(f'--file {args.file}:{number}: expected "x y z"')
                targets.append(values)
        if not targets:
            parser.error('batch needs --target X Y Z or --file')
        args.targets = targets
    return args


def _pose(position, orientation) -> Pose:
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = (float(v) for v in position)
    (pose.orientation.x, pose.orientation.y, pose.orientation.z,
     pose.orientation.w) = (float(v) for v in orientation)
    return pose


def path_request(args: argparse.Namespace) -> CartesianPath.Request:
    request = CartesianPath.Request()
    if args.start:
        request.start.name = list(args.start)
        request.start.position = list(args.start.values())
    request.waypoints.poses = [_pose(p, args.orientation) for p in args.to]
    if args.command == 'arc':
        request.arc_through = [Point(x=float(x), y=float(y), z=float(z))
                               for x, y, z in (args.through,)]
    request.goal_type = int(GOALS[args.goal])
    request.solver = args.solver
    request.max_cartesian_step = args.max_step
    request.max_rotation_step = args.max_rotation_step
    request.max_joint_step = args.max_joint_step
    request.max_deviation = args.max_deviation
    request.max_condition = args.max_condition
    request.allow_branch_change = args.allow_branch_change
    request.partial = not args.no_partial
    request.timing = args.timing
    request.timeout = duration(max(args.timeout, 0.0))
    return request


def batch_request(args: argparse.Namespace) -> SolveIKBatch.Request:
    request = SolveIKBatch.Request()
    request.positions = [float(v) for target in args.targets for v in target]
    request.goal_type = int(GOALS[args.goal])
    request.solver = args.solver
    return request


def _number(value: float) -> float | None:
    """A JSON-safe number: inf and NaN (no solution, singular) become null."""
    return float(value) if math.isfinite(value) else None


def path_summary(response: CartesianPath.Response) -> dict:
    points = response.trajectory.points
    return {
        'code': PathCode(response.code).name, 'message': response.message,
        'fraction': response.fraction, 'stop_sample': response.stop_sample,
        'stop_waypoint': response.stop_waypoint, 'samples': response.samples,
        'stop_position': [response.stop_pose.position.x, response.stop_pose.position.y,
                          response.stop_pose.position.z],
        'joint': response.joint, 'joint_step': response.joint_step,
        'condition_number': _number(response.condition_number), 'solver': response.solver,
        'ik_error_code': ErrorCode(response.ik_error_code.val).name,
        'largest_step': response.largest_step, 'solve_time': response.solve_time,
        'joint_names': list(response.trajectory.joint_names),
        'points': [{'t': seconds_of(p.time_from_start), 'positions': list(p.positions)}
                   for p in points],
        'branches': sorted(set(response.branches) - {''}),
    }


def print_path(response: CartesianPath.Response) -> None:
    summary = path_summary(response)
    points = summary['points']
    print(f'{summary["code"]}: followed {100.0 * response.fraction:.1f} % of the path '
          f'({summary["samples"]} samples)')
    print(f'  {response.message}')
    x, y, z = summary['stop_position']
    print(f'  tool at the end of the joint path: ({x:.4f}, {y:.4f}, {z:.4f}) m')
    if response.code != PathCode.OK:
        print(f'  stopped before sample {response.stop_sample}, waypoint '
              f'{response.stop_waypoint}' + (f'; joint {response.joint}' if response.joint
                                             else '') +
              (f' would move {response.joint_step:.4f}' if response.joint_step else ''))
    if points:
        print(f'  joint path: {len(points)} points over {points[-1]["t"]:.3f} s, largest '
              f'step {response.largest_step:.4f} rad; solver {response.solver}'
              + (f', branch {", ".join(summary["branches"])}' if summary['branches'] else ''))
        print(f'  {"t (s)":>8} ' + ' '.join(f'{name[:12]:>12}'
                                            for name in summary['joint_names']))
        shown = points if len(points) <= 12 else points[:5] + [None] + points[-5:]
        for point in shown:
            if point is None:
                print(f'  {"...":>8}')
                continue
            print(f'  {point["t"]:8.3f} ' + ' '.join(f'{v:+12.5f}' for v in point['positions']))
    else:
        print('  no joint path returned')


def print_batch(response: SolveIKBatch.Response, targets: list) -> None:
    if response.error_code.val != ErrorCode.OK:
        print(f'{ErrorCode(response.error_code.val).name}: {response.message}')
        return
    names = list(response.joint_names)
    dof = len(names)
    print(f'{response.message} in {response.solve_time * 1e3:.2f} ms')
    print(f'  {"#":>4} {"x":>7} {"y":>7} {"z":>7}  {"code":<18} {"branch":<18} '
          + ' '.join(f'{name[:10]:>10}' for name in names))
    for row, code in enumerate(response.codes):
        q = response.solutions[row * dof:(row + 1) * dof]
        x, y, z = targets[row]
        joints = ' '.join(f'{v:+10.4f}' if math.isfinite(v) else f'{"-":>10}' for v in q)
        print(f'  {row:4d} {x:7.3f} {y:7.3f} {z:7.3f}  {ErrorCode(code).name:<18} '
              f'{response.branches[row] or "-":<18} {joints}')
        if code != ErrorCode.OK:
            print(f'       {response.messages[row]}')


def _call(node, kind: type, name: str, request, wait: float, budget: float):
    """The reply of service ``name``; ``budget``: s the server may spend on ``request``."""
    client = node.create_client(kind, name, qos_profile=SERVICE_QOS)
    if not client.wait_for_service(timeout_sec=wait):
        raise TimeoutError(f'service {name} not available after {wait:g} s (is ik_server '
                           'running in that namespace, on this ROS domain?)')
    # Sent again if its reply is lost (middleware.call_until_answered): these requests
    # only compute, and one is sent again only once the server's budget for it is spent.
    reply = call_until_answered(client, request,
                                lambda: rclpy.spin_once(node, timeout_sec=0.05), wait,
                                attempt=RESEND_AFTER + budget)
    if reply is None:
        raise TimeoutError(f'no reply from {name} within {wait:g} s')
    return reply


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_command('ik_path', lambda node: _ask_and_print(node, args))


def _ask_and_print(node, args: argparse.Namespace) -> int:
    """Call the path or batch service of ``args.arm``'s ik_server, print the answer; the exit
    status."""
    base = f'/{args.arm}/ik_server/ik'
    if args.command in ('line', 'arc'):
        request = path_request(args)
        response = _call(node, CartesianPath, f'{base}/cartesian_path', request, args.wait,
                         seconds_of(request.timeout) or DEFAULT_PATH_TIMEOUT)
        if args.json:
            print(json.dumps(path_summary(response), indent=2))
        else:
            print_path(response)
        return 0 if response.code == PathCode.OK else 1
    request = batch_request(args)
    # Each target may take the server's default solver timeout.
    response = _call(node, SolveIKBatch, f'{base}/batch', request, args.wait,
                     len(args.targets) * SolveOptions().timeout)
    if args.json:
        print(json.dumps({'code': ErrorCode(response.error_code.val).name,
                          'message': response.message, 'joint_names': list(
                              response.joint_names), 'codes': [ErrorCode(c).name for c in
                                                               response.codes],
                          'solutions': [_number(v) for v in response.solutions],
                          'branches': list(response.branches),
                          'messages': list(response.messages)}, indent=2))
    else:
        print_batch(response, args.targets)
    ok = response.error_code.val == ErrorCode.OK and all(c == 0 for c in response.codes)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
