"""The launch-free runner behind ``make demo``: every node in its own process, a scripted cycle.

It starts the pipeline's nodes for one arm (as ``arm.launch.py`` does in a ROS install),
runs a scripted cycle against them over DDS, prints what each step did, and stops every
process cleanly on Ctrl-C or after ``--cycles`` cycles (0: until Ctrl-C).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
import math
import os
import sys
import time

import rclpy
from rclpy.node import Node

from arm_ik.kinematics.description import ARMS, expand_xacro
from arm_ik.process_group import ProcessGroup

DEFAULT_ARM = 'pointer3'


@dataclass
class Summary:
    """What the run did, printed at the end."""

    cycles: int = 0
    steps_ok: int = 0
    steps_failed: int = 0
    notes: list[str] = field(default_factory=list)

    def record(self, ok: bool, text: str) -> None:
        if ok:
            self.steps_ok += 1
        else:
            self.steps_failed += 1
        print(f'  [{"ok" if ok else "FAILED"}] {text}', flush=True)


class DemoClient(Node):
    """The scripted user of the pipeline: subscribes and calls like any other client."""

    def __init__(self, arm: str) -> None:
        super().__init__('demo_client')
        from arm_ik.client import IKClient
        from arm_ik.nodes.common import LATCHED_QOS
        from arm_interfaces.msg import ArmInfo
        self.arm = arm
        self.info: ArmInfo | None = None
        self.create_subscription(ArmInfo, f'/{arm}/arm_info', self._on_info, LATCHED_QOS)
        self.ik = IKClient(self, arm)

    def _on_info(self, message) -> None:
        self.info = message

    def wait(self, condition, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            rclpy.spin_once(self, timeout_sec=0.05)
        return condition()


def start_pipeline(group: ProcessGroup, arm: str) -> None:
    """Start the arm's nodes, each in its own process, in the arm's namespace."""
    description = expand_xacro(arm)
    common = {'robot_description': description, 'arm': arm}
    group.start_node('arm_ik', 'arm_info', namespace=f'/{arm}', params=common)
    group.start_node('arm_ik', 'ik_server', namespace=f'/{arm}', params=common)


def scripted_targets(info) -> list[tuple[str, list[float]]]:
    """Targets placed relative to the arm's own reach, so the script fits every arm."""
    shoulder = [info.shoulder.x, info.shoulder.y, info.shoulder.z]
    reach = info.max_reach

    def at(fraction: float, azimuth_deg: float, elevation_deg: float) -> list[float]:
        azimuth, elevation = math.radians(azimuth_deg), math.radians(elevation_deg)
        return [shoulder[0] + fraction * reach * math.cos(elevation) * math.cos(azimuth),
                shoulder[1] + fraction * reach * math.cos(elevation) * math.sin(azimuth),
                shoulder[2] + fraction * reach * math.sin(elevation)]
    targets = [('in front, 60 % reach', at(0.6, 20.0, 30.0)),
               ('to the side, 85 % reach', at(0.85, 100.0, 15.0)),
               ('unreachable, 120 % reach', at(1.2, 0.0, 20.0))]
    if info.min_reach > 0.0:
        targets.append(('inside the hole', at(0.5 * info.min_reach / reach, 0.0, 60.0)))
    return targets


def run_cycle(client: DemoClient, summary: Summary) -> None:
    """One scripted cycle against the running nodes."""
    ok = client.wait(lambda: client.info is not None, 20.0)
    if not ok:
        summary.record(False, 'no ArmInfo from arm_info within 20 s')
        return
    info = client.info
    summary.record(True, f'arm_info: {info.arm} with joints {", ".join(info.joint_names)}, '
                         f'reach {info.min_reach:.3f}..{info.max_reach:.3f} m')
    if not client.ik.wait_for_service(20.0):
        summary.record(False, 'ik_server did not come up within 20 s')
        return
    for label, target in scripted_targets(info):
        expected_ok = 'unreachable' not in label and 'hole' not in label
        try:
            reply = client.ik.solve(target, wait=10.0)
        except TimeoutError as error:
            summary.record(False, f'{label}: {error}')
            continue
        where = ', '.join(f'{v:+.3f}' for v in target)
        if reply.success:
            joints = ', '.join(f'{math.degrees(v):+.1f}' for v in reply.positions)
            text = (f'{label} [{where}] m: {reply.solver} {reply.branch or ""} -> [{joints}] deg, '
                    f'error {reply.position_error * 1e3:.3f} mm, {reply.solve_time * 1e3:.2f} ms')
        else:
            text = f'{label} [{where}] m: {reply.code.name}: {reply.message}'
        summary.record(reply.success == expected_ok, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--arm', default=DEFAULT_ARM, choices=ARMS)
    parser.add_argument('--cycles', type=int, default=0,
                        help='stop after this many scripted cycles (0: run until Ctrl-C)')
    args = parser.parse_args(argv)
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')

    summary = Summary()
    print(f'demo: arm {args.arm}, ROS_DOMAIN_ID={os.environ.get("ROS_DOMAIN_ID", "0")}',
          flush=True)
    with ProcessGroup() as group:
        start_pipeline(group, args.arm)
        print(f'demo: started {", ".join(p.name for p in group.processes)} '
              f'(logs in {group.log_dir})', flush=True)
        rclpy.init()
        client = DemoClient(args.arm)
        try:
            while args.cycles <= 0 or summary.cycles < args.cycles:
                print(f'cycle {summary.cycles + 1}:', flush=True)
                run_cycle(client, summary)
                summary.cycles += 1
                dead = [p.name for p in group.processes if not p.alive()]
                if dead:
                    summary.record(False, f'node process(es) died: {", ".join(dead)}')
                    break
                if args.cycles <= 0:
                    client.wait(lambda: False, 2.0)
        except KeyboardInterrupt:
            print('demo: interrupted', flush=True)
        finally:
            client.destroy_node()
            rclpy.try_shutdown()
    print(f'summary: {summary.cycles} cycle(s), {summary.steps_ok} step(s) ok, '
          f'{summary.steps_failed} failed; all node processes stopped', flush=True)
    return 0 if summary.steps_failed == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
