#!/usr/bin/env python3
"""Take the browser-lab pictures in docs/: one per arm, against the running pipeline.

For each arm: start arm_info, ik_server, trajectory_executor and safety_monitor (each in its
own process, on a ROS domain of its own), then lab_viewer; move the arm to a target through
the panel ("Plan and go"), refresh the joint map (pointer3) or run the damping sweep
(six_axis), and capture the page with headless Chromium (no network beyond loopback), showing
that tool's tab of the left panel (the others: the last move's plots).

Usage (after `make build`):
    source .venv/bin/activate && source install/setup.bash
    python tools/lab_screenshots.py                 # every arm → docs/lab_<arm>.png
    python tools/lab_screenshots.py --arm pointer3 --out /tmp
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import random
import re
import sys
import time

import numpy as np

ARMS = ('pointer3', 'ccd5', 'six_axis', 'manipulator3d')
PIPELINE = ('arm_info', 'ik_server', 'trajectory_executor', 'safety_monitor')
URL_LINE = re.compile(r'browser lab at (http://127\.0\.0\.1:\d+)')
# A target per arm that shows something: pointer3 sweeps the forearm through the obstacle
# (contact dots), the others reach a pose beside their home (m, base frame).
TARGETS = {'pointer3': (1.3, -0.2, 1.5), 'six_axis': (1.2, 0.5, 0.9)}
# The tab of the left panel each picture shows: the arm's tool, else the move's plots.
TABS = {'pointer3': 'Joint map', 'six_axis': 'Damping sweep'}
ROOT = Path(__file__).resolve().parents[1]


def target_of(arm: str) -> list[float]:
    """The arm's picture target: from TARGETS, else FK of its home with the base turned."""
    if arm in TARGETS:
        return list(TARGETS[arm])
    from arm_kinematics.description.bundled import home_from_config, load_arm_config, load_model
    model = load_model(arm)
    q = np.array(home_from_config(model, load_arm_config(arm)))
    q[0] += 0.7
    return [round(float(v), 3) for v in model.fk(model.clamp(q))[:3, 3]]


class Controls:
    """The lab's ~/set_controls, called from this script's own rclpy context."""

    def __init__(self, arm: str, domain: int) -> None:
        from rcl_interfaces.srv import SetParameters
        import rclpy
        self.rclpy = rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node('lab_screenshots', context=self.context)
        self.client = self.node.create_client(SetParameters, f'/{arm}/lab_viewer/set_controls')
        self.executor = rclpy.executors.SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        deadline = time.monotonic() + 60.0
        while not self.client.service_is_ready():
            if time.monotonic() > deadline:
                raise RuntimeError('lab_viewer/set_controls did not come up')
            self.executor.spin_once(timeout_sec=0.1)

    def set(self, key: str, value: object, wait: float = 30.0) -> tuple[bool, str]:
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter
        future = self.client.call_async(SetParameters.Request(
            parameters=[Parameter(key, value=value).to_parameter_msg()]))
        deadline = time.monotonic() + wait
        while not future.done() and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.1)
        if not future.done():
            return False, f'no answer to {key}'
        result = future.result().results[0]
        return result.successful, result.reason

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.rclpy.shutdown(context=self.context)


def picture(arm: str, out: Path, domain: int, size: tuple[int, int], settle: float) -> Path:
    from arm_bringup.process_group import ProcessGroup
    from arm_ik.lab.browser import capture, pixel_spread
    from arm_kinematics.description.bundled import config_path, expand_xacro
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    urdf = expand_xacro(arm)
    params = {'robot_description': urdf, 'arm': arm, 'arm_config': str(config_path(arm))}
    with ProcessGroup(env=env) as group:
        for executable in PIPELINE:
            group.start_node('arm_ik', executable, namespace=f'/{arm}', params=params)
        lab = group.start_node('arm_ik', 'lab_viewer', namespace=f'/{arm}',
                               params={**params, 'port': 0, 'control_service': True})
        deadline = time.monotonic() + 60.0
        while not (found := URL_LINE.search(lab.output())):
            if not lab.alive() or time.monotonic() > deadline:
                raise RuntimeError(f'lab_viewer did not start:\n{lab.output()}')
            time.sleep(0.2)
        url = found.group(1)
        controls = Controls(arm, domain)
        try:
            target = target_of(arm)
            print(f'{arm}: {url}; target {target}', flush=True)
            print('  ', *controls.set('target', target))
            ok, reason = False, ''
            for _ in range(60):            # the action server comes up with the executor
                ok, reason = controls.set('plan_and_go', True)
                if ok:
                    break
                time.sleep(0.5)
            print('  ', ok, reason)
            time.sleep(8.0)                 # the move (a few seconds) and its plots
            if arm == 'pointer3':
                print('  ', *controls.set('refresh_joint_map', True))
            if arm == 'six_axis':
                print('  ', *controls.set('damping_sweep', True))
        finally:
            controls.close()
        png = out / f'lab_{arm}.png'
        tab = TABS.get(arm, 'Last move')

        def show_tab(page) -> None:
            if not page.click_tab(tab):
                raise RuntimeError(f'the lab has no tab {tab!r}')
            time.sleep(3.0)                 # the tab's layout and its plots' sizing
            page.screenshot(png)
        text = capture(url, png, size=size, ready_text='Readouts', settle=settle, timeout=120.0,
                       inspect=show_tab)
        spread = pixel_spread(png)
        if f'arm lab: {arm}' not in text or spread < 5.0:
            raise RuntimeError(f'{png}: the page does not look right (spread {spread:.1f})')
        print(f'  wrote {png} (pixel spread {spread:.1f})', flush=True)
        return png


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--arm', nargs='+', choices=ARMS, default=list(ARMS))
    parser.add_argument('--out', type=Path, default=ROOT / 'docs', help='folder of the PNGs')
    parser.add_argument('--domain', type=int, default=None,
                        help='ROS_DOMAIN_ID (default: a random one in 201..230)')
    parser.add_argument('--size', type=int, nargs=2, default=(1600, 1000),
                        metavar=('WIDTH', 'HEIGHT'))
    parser.add_argument('--settle', type=float, default=20.0,
                        help='seconds the page draws before the capture (software WebGL)')
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    domain = args.domain if args.domain is not None else random.randint(201, 230)
    for arm in args.arm:
        picture(arm, args.out, domain, tuple(args.size), args.settle)
    return 0


if __name__ == '__main__':
    sys.exit(main())
