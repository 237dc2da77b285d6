"""arm_ik.nodes.common.run and Ctrl-C: a node stops at once in a long start-up, and ends its
spin quietly (rclpy's handler shuts the context down; no KeyboardInterrupt lands in rclpy's
own code). Each case a Python process of its own, on its own ROS domain."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

SCRIPT = '''
import sys, time
from rclpy.node import Node
from rclpy.task import Future
from arm_ik.nodes.common import run

class Busy(Node):
    """Makes rclpy Futures all the time: where a stray KeyboardInterrupt would land."""
    def __init__(self):
        super().__init__('busy')
        self.create_timer(0.001, self.tick)
        print('spinning', flush=True)
    def tick(self):
        for _ in range(500):
            Future()

def slow_start():
    print('starting', flush=True)
    time.sleep(60.0)

status = run(Busy if sys.argv[1] == 'spinning' else slow_start)
print('status', status, flush=True)
'''


@pytest.mark.parametrize('when, ready', [('spinning', 'spinning'), ('starting', 'starting')])
def test_ctrl_c_ends_the_node_quietly(ros_domain, when, ready):
    env = dict(os.environ, ROS_DOMAIN_ID=str(ros_domain.domain_id), PYTHONUNBUFFERED='1')
    process = subprocess.Popen([sys.executable, '-c', SCRIPT, when], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = process.stdout.readline()
        assert ready in line, line + process.stdout.read()
        time.sleep(1.0)
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30.0)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, output
    assert 'status 0' in output, output
    assert 'Traceback' not in output and 'Exception ignored' not in output, output
    assert time.monotonic() - sent < 10.0, 'not stopped at once'
