"""Ctrl-C on a running pipeline: every node exits with status 0 and prints no error.

A terminal's Ctrl-C (and a launch's SIGINT) reaches every node at once while goals are in
flight, the control loop ticks and the planning process works. Found under the real launch:
the executor's tick and goal threads published into the shut-down context, a take racing the
shutdown raised out of spin, ik_server's closed-form thread could abort the process at exit
("terminate called without an active exception") and the planning pool's exit hook wrote to
a closed pipe. Each showed in a few runs out of ten, so this test catches them often, not
always. One hang is not ours: a node can hang inside rclpy's destroy_node (in
rcl_node_fini, in the middleware) while all nodes leave at once, seen on Kilted and, once,
on Jazzy (arm_info, 2026-12-05); that case is reported as an expected failure with its name,
every other problem fails.
"""

from __future__ import annotations

import os
import re
import signal
import time

import pytest

from arm_testing.bringup_harness import installed

# Goals in flight (ccd5's scripted cycle, planning in a process of its own) and the 6-joint
# arm whose executor ticks at 100 Hz.
ARMS = (('ccd5', True), ('six_axis', False))
START_TIMEOUT = 90.0       # s for every node to log its first line (a loaded machine: a
                           # Ctrl-C at a fixed 8 s once found arm_info still importing)
RUN_BEFORE_CTRL_C = 8.0    # s after that: every node up and the cycle moving
EXIT_TIMEOUT = 30.0        # s (a loaded machine's exit took more than 15 s once)
PROBLEMS = re.compile(r'\[ERROR\]|Traceback|terminate called|Fatal Python error')

pytestmark = pytest.mark.skipif(not installed('arm_bringup'),
                                reason='the workspace is not built and sourced')


@pytest.mark.parametrize('arm, cycle', ARMS)
def test_every_node_stops_cleanly_on_ctrl_c(processes, tmp_path, arm, cycle):
    from arm_bringup.pipeline import expand_description, LaunchOptions, pipeline_nodes
    launches = pipeline_nodes(arm, expand_description(arm), LaunchOptions(cycle=cycle))
    nodes = [processes.start_node('arm_ik', node.executable, namespace=node.namespace,
                                  params_files=node.write_params(tmp_path))
             for node in launches]
    deadline = time.monotonic() + START_TIMEOUT
    loggers = [f'[{node.namespace.strip("/")}.{node.executable}]' for node in launches]
    while time.monotonic() < deadline and not all(
            logger in process.output() or not process.alive()
            for logger, process in zip(loggers, nodes)):
        time.sleep(0.2)
    time.sleep(RUN_BEFORE_CTRL_C)
    running = [node.name for node in nodes if not node.alive()]
    assert not running, f'died before Ctrl-C: {running}'
    for node in nodes:                     # as the terminal does: all at once
        os.killpg(node.popen.pid, signal.SIGINT)
    deadline = time.monotonic() + EXIT_TIMEOUT
    for node in nodes:
        node.wait_for_exit(max(0.0, deadline - time.monotonic()))
    failures, middleware_hangs = [], []
    for node in nodes:
        hung = node.alive()
        output = node.abort() if hung else node.output()   # a hung node shows its stacks
        if hung and _hung_in_node_destruction(output):
            middleware_hangs.append(node.name)
            continue
        found = PROBLEMS.search(output)
        if hung or node.popen.returncode != 0 or found:
            failures.append(f'{node.name}: exit {node.popen.returncode}, hung {hung}\n'
                            f'{output[max(0, found.start() - 300) if found else -3000:][:3000]}')
    assert not failures, '\n\n'.join(failures)
    if middleware_hangs:
        pytest.xfail(f'{", ".join(middleware_hangs)} hung inside rclpy destroy_node '
                     '(rcl_node_fini, in the middleware) while every node left at once: seen '
                     'on Kilted (Fast DDS 3.2.3) and once on Jazzy (2.14), see docs/tests.md')


def _hung_in_node_destruction(output: str) -> bool:
    """The aborted node's main thread was inside rclpy's Node.destroy_node (the innermost
    Python frame of faulthandler's 'Current thread' stack)."""
    current = output.split('Current thread', 1)
    if len(current) < 2:
        return False
    frames = [line for line in current[1].splitlines()[1:] if line.strip().startswith('File')]
    return bool(frames) and 'rclpy/node.py' in frames[0] and 'destroy_node' in frames[0]
