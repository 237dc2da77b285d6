"""move_group executing on servos: ``make move_group SERVOS=sim``'s runner (the SO-101 of
example-robot-data on the simulated Feetech bus through servo_bridge, enabled at start); a
move_action goal planned and executed, measured on servo_bridge's joint states."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

pytest.importorskip('moveit_msgs')

from arm_testing.move_group import Client, wait  # noqa: E402
from arm_testing.ros_harness import claimed_domain  # noqa: E402

JOINTS = ['shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex', 'wrist_roll']


def test_move_action_on_the_simulated_servo_bus(tmp_path):
    from moveit_msgs.action import MoveGroup
    from moveit_msgs.msg import Constraints, JointConstraint, MoveItErrorCodes
    from sensor_msgs.msg import JointState

    from arm_testing.real_arms import robots_dir
    robots_dir()       # skips without example-robot-data
    with claimed_domain() as claim:
        runner = subprocess.Popen([sys.executable, '-m', 'arm_bringup.move_group', '--servos',
                                   'sim'], env=claim.environment(), cwd=tmp_path,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  start_new_session=True)
        client = Client(claim.domain_id)
        try:
            measured = []
            client.node.create_subscription(
                JointState, 'servo_bridge/joint_states',
                lambda m: measured.append([m.position[list(m.name).index(n)]
                                           for n in JOINTS]), 10)
            action = client.action(MoveGroup, 'move_action', timeout=120.0)
            deadline = time.monotonic() + 60.0
            while not measured and time.monotonic() < deadline:
                time.sleep(0.05)
            assert measured, 'no servo_bridge/joint_states'
            target = np.array(measured[-1]) + np.array([0.3, 0.0, 0.0, 0.0, 0.0])
            goal = MoveGroup.Goal()
            goal.request.group_name = 'arm'
            constraints = Constraints()
            constraints.joint_constraints = [
                JointConstraint(joint_name=n, position=float(v), tolerance_above=1e-3,
                                tolerance_below=1e-3, weight=1.0) for n, v in zip(JOINTS, target)]
            goal.request.goal_constraints = [constraints]
            deadline = time.monotonic() + 60.0
            while True:
                handle = wait(action.send_goal_async(goal))
                code = wait(handle.get_result_async(), 90.0).result.error_code
                if code.val != MoveItErrorCodes.ROBOT_STATE_STALE or \
                        time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            assert code.val == MoveItErrorCodes.SUCCESS, code.message
            deadline = time.monotonic() + 15.0
            while not np.allclose(measured[-1], target, atol=0.03) and \
                    time.monotonic() < deadline:
                time.sleep(0.05)
            assert np.allclose(measured[-1], target, atol=0.03)
        finally:
            client.close()
            os.killpg(runner.pid, 2)
            try:
                output, _ = runner.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(runner.pid, 9)
                output, _ = runner.communicate(timeout=30)
            # Shown with a failure (pytest prints a failed test's output): the nodes' words.
            print(output[-6000:])
