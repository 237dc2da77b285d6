"""Benchmark of move_group's round trips against the project's own services, side by side.

One six_axis ik_server and one move_group (with its trajectory_executor) run on a private
ROS domain, started by this script; one spin_once client (as arm_ik's IKClient) calls them
in turn on the same targets:

* compute_ik (moveit_msgs/GetPositionIK, full pose, seed = home, avoid_collisions off)
  against ik_server's ~/solve_ik (arm_interfaces/SolveIK, the same pose and seed, full pose,
  the arm's default solver): wall round trip per call, p50 and p99; goal: ratio <= 1.5;
* compute_cartesian_path (a 10 cm straight line of the tool from the FK pose of a random
  configuration, 1 cm steps, avoid_collisions off: like with like) against ik_server's
  ~/ik/cartesian_path on the same lines; goal: ratio <= 1.2. The same with
  avoid_collisions on (move_group checks every sample against the scene) is printed beside.

Calls alternate (one of each per target), so a busy machine slows both alike. Printed
ratios, no assertions. Merges the figures under ``move_group`` of bench_results.json.
Run from a built workspace: ``python benchmarks/bench_move_group.py [--quick]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
import sys
import time

import numpy as np
from results_file import merge_section

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
ARM = 'six_axis'


def percentiles(values: list[float]) -> dict:
    array = np.asarray(values) * 1e3
    return {'p50_ms': float(np.percentile(array, 50)), 'p99_ms': float(np.percentile(array, 99)),
            'calls': len(values)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='fewer calls (smoke run)')
    parser.add_argument('--output', type=Path, default=REPO / 'bench_results.json')
    args = parser.parse_args(argv)
    try:
        import moveit_msgs  # noqa: F401
    except ImportError:
        print('bench_move_group: moveit_msgs is not built; skipped', flush=True)
        return 0
    from geometry_msgs.msg import Pose
    from moveit_msgs.srv import GetCartesianPath, GetPositionIK
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from arm_bringup.move_group import start
    from arm_bringup.pipeline import ArmSource, expand_description
    from arm_bringup.process_group import ProcessGroup
    from arm_interfaces.srv import CartesianPath, SolveIK
    from arm_kinematics.arm import load_arm
    from arm_kinematics.common.transforms import matrix_to_quaternion
    from arm_kinematics.description.bundled import load_arm_config
    from arm_testing.ros_harness import config_file, DomainClaim

    ik_calls = 60 if args.quick else 500
    lines = 10 if args.quick else 60
    description = expand_description(ARM)
    arm = load_arm(description, load_arm_config(ARM))
    names = list(arm.model.joint_names)
    rng = np.random.default_rng(7)
    home = arm.home.copy()
    claim = DomainClaim()
    group = ProcessGroup(env=claim.environment())
    rclpy.init(domain_id=claim.domain_id)
    node = rclpy.create_node('bench_move_group')
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        group.start_node('arm_ik', 'ik_server', name='ik_server', params={
            'robot_description': description, 'arm': ARM, 'arm_config': config_file(ARM)})
        start(group, ArmSource(ARM), description, '')
        clients = {
            'solve_ik': node.create_client(SolveIK, 'ik_server/solve_ik'),
            'compute_ik': node.create_client(GetPositionIK, 'compute_ik'),
            'cartesian_path': node.create_client(CartesianPath, 'ik_server/ik/cartesian_path'),
            'compute_cartesian_path': node.create_client(GetCartesianPath,
                                                         'compute_cartesian_path'),
        }
        for name, client in clients.items():
            if not client.wait_for_service(timeout_sec=120.0):
                print(f'bench_move_group: {name} never came up', file=sys.stderr)
                return 1

        def call(name: str, request) -> tuple[float, object]:
            began = time.perf_counter()
            future = clients[name].call_async(request)
            executor.spin_until_future_complete(future, timeout_sec=30.0)
            return time.perf_counter() - began, future.result()

        def pose_of(q: np.ndarray) -> tuple[np.ndarray, tuple]:
            matrix = arm.model.fk(q)
            return matrix[:3, 3], matrix_to_quaternion(matrix[:3, :3])

        # ---------------------------------------------------------------- IK
        times: dict[str, list[float]] = {'solve_ik': [], 'compute_ik': []}
        failures = {'solve_ik': 0, 'compute_ik': 0}
        for index in range(ik_calls + 10):
            q = arm.model.clamp(home + rng.uniform(-0.4, 0.4, len(home)))
            position, quaternion = pose_of(q)
            ours = SolveIK.Request()
            ours.target.header.frame_id = arm.model.base_link
            p, o = ours.target.pose.position, ours.target.pose.orientation
            p.x, p.y, p.z = (float(v) for v in position)
            o.x, o.y, o.z, o.w = (float(v) for v in quaternion)
            ours.goal_type = SolveIK.Request.GOAL_FULL_POSE
            ours.seed.name, ours.seed.position = names, [float(v) for v in home]
            ours.avoid_collisions = SolveIK.Request.AVOID_OFF
            theirs = GetPositionIK.Request()
            ik = theirs.ik_request
            ik.group_name = 'arm'
            ik.pose_stamped = ours.target
            ik.robot_state.joint_state.name = names
            ik.robot_state.joint_state.position = [float(v) for v in home]
            for name, request in (('solve_ik', ours), ('compute_ik', theirs)):
                elapsed, reply = call(name, request)
                ok = reply is not None and (reply.error_code.val == (0 if name == 'solve_ik'
                                                                     else 1))
                if index >= 10:            # the first calls warm both servers up
                    times[name].append(elapsed)
                    failures[name] += not ok

        # ---------------------------------------------------------------- lines
        line_times: dict[str, list[float]] = {'cartesian_path': [], 'compute_cartesian_path': [],
                                              'compute_cartesian_path_collisions': []}
        fractions: dict[str, list[float]] = {key: [] for key in line_times}
        for index in range(lines + 3):
            q = arm.model.clamp(home + rng.uniform(-0.3, 0.3, len(home)))
            position, quaternion = pose_of(q)
            end = position + rng.normal(size=3) / 1.0
            end = position + 0.1 * (end - position) / np.linalg.norm(end - position)
            waypoint = Pose()
            waypoint.position.x, waypoint.position.y, waypoint.position.z = \
                (float(v) for v in end)
            o = waypoint.orientation
            o.x, o.y, o.z, o.w = (float(v) for v in quaternion)
            ours = CartesianPath.Request()
            ours.start.name, ours.start.position = names, [float(v) for v in q]
            ours.waypoints.header.frame_id = arm.model.base_link
            ours.waypoints.poses = [waypoint]
            ours.goal_type = CartesianPath.Request.GOAL_FULL_POSE
            ours.max_cartesian_step = 0.01
            ours.partial = True
            requests = [('cartesian_path', 'cartesian_path', ours)]
            for key, avoid in (('compute_cartesian_path', False),
                               ('compute_cartesian_path_collisions', True)):
                theirs = GetCartesianPath.Request()
                theirs.header.frame_id = arm.model.base_link
                theirs.group_name = 'arm'
                theirs.start_state.joint_state.name = names
                theirs.start_state.joint_state.position = [float(v) for v in q]
                theirs.waypoints = [waypoint]
                theirs.max_step = 0.01
                theirs.avoid_collisions = avoid
                requests.append((key, 'compute_cartesian_path', theirs))
            for key, name, request in requests:
                elapsed, reply = call(name, request)
                if index >= 3 and reply is not None:
                    line_times[key].append(elapsed)
                    fractions[key].append(float(reply.fraction))
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
        group.close()
        claim.release()

    ik = {name: percentiles(values) for name, values in times.items()}
    paths = {name: percentiles(values) for name, values in line_times.items()}
    ik_ratio = {q: ik['compute_ik'][f'{q}_ms'] / ik['solve_ik'][f'{q}_ms'] for q in ('p50', 'p99')}
    path_ratio = {q: paths['compute_cartesian_path'][f'{q}_ms']
                  / paths['cartesian_path'][f'{q}_ms'] for q in ('p50', 'p99')}
    print(f'compute_ik vs ~/solve_ik ({len(times["solve_ik"])} targets, failures '
          f'{failures["compute_ik"]} / {failures["solve_ik"]}):')
    for name in ('solve_ik', 'compute_ik'):
        print(f'  {name:24s} p50 {ik[name]["p50_ms"]:7.2f} ms   p99 {ik[name]["p99_ms"]:7.2f} ms')
    print(f'  ratio p50 {ik_ratio["p50"]:.2f}x  p99 {ik_ratio["p99"]:.2f}x  (goal <= 1.5x)')
    print(f'compute_cartesian_path vs ~/ik/cartesian_path ({len(line_times["cartesian_path"])} '
          '10 cm lines):')
    for name in line_times:
        print(f'  {name:34s} p50 {paths[name]["p50_ms"]:7.2f} ms   p99 '
              f'{paths[name]["p99_ms"]:7.2f} ms   mean fraction '
              f'{np.mean(fractions[name]):.3f}')
    print(f'  ratio p50 {path_ratio["p50"]:.2f}x  p99 {path_ratio["p99"]:.2f}x  (goal <= 1.2x)')
    merge_section(args.output, 'move_group', {
        'ik': ik, 'ik_ratio': ik_ratio, 'ik_failures': failures, 'paths': paths,
        'path_ratio': path_ratio,
        'path_fractions': {k: float(np.mean(v)) for k, v in fractions.items()}})
    return 0


if __name__ == '__main__':
    sys.exit(main())
