"""move_group executing through a controller: CONTROLLER=stand_in of make move_group, the
trajectory goes as a FollowJointTrajectory goal to controller_stand_in (a stand-in for
joint_trajectory_controller) and the measured state is the controller's. One stack for the
module (the bundled six_axis arm)."""

from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip('moveit_msgs')

from moveit_msgs.action import MoveGroup  # noqa: E402
from moveit_msgs.msg import Constraints, JointConstraint, MoveItErrorCodes  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from arm_testing.move_group import wait  # noqa: E402

JOINTS = ['base_yaw', 'shoulder_pitch', 'elbow_pitch', 'wrist_roll', 'wrist_pitch',
          'tool_roll']
MEASURED = 'joint_state_broadcaster/joint_states'


@pytest.fixture(scope='module')
def stack():
    from arm_bringup.pipeline import ArmSource, expand_description
    from arm_testing.move_group import move_group_stack
    with move_group_stack(ArmSource('six_axis'), expand_description('six_axis'),
                          controller='stand_in') as (client, group):
        yield client, group


def test_move_action_runs_through_the_controller(stack):
    client, _ = stack
    measured = []
    client.node.create_subscription(
        JointState, MEASURED,
        lambda m: measured.append([m.position[list(m.name).index(n)] for n in JOINTS]), 10)
    deadline = time.monotonic() + 60.0
    while not measured and time.monotonic() < deadline:
        time.sleep(0.05)
    assert measured, f'no {MEASURED}'
    start = np.array(measured[-1])
    target = start + np.array([0.3, 0.0, 0.0, 0.0, 0.0, 0.0])
    goal = MoveGroup.Goal()
    goal.request.group_name = 'arm'
    constraints = Constraints()
    constraints.joint_constraints = [JointConstraint(joint_name=n, position=float(v),
                                                     tolerance_above=1e-3,
                                                     tolerance_below=1e-3, weight=1.0)
                                     for n, v in zip(JOINTS, target)]
    goal.request.goal_constraints = [constraints]
    action = client.action(MoveGroup, 'move_action')
    # The executor may not have heard the controller yet on a loaded machine: until it has,
    # the goal is refused ROBOT_STATE_STALE (no fresh measured state) and nothing moves.
    deadline = time.monotonic() + 60.0
    while True:
        handle = wait(action.send_goal_async(goal))
        code = wait(handle.get_result_async(), 90.0).result.error_code
        if code.val != MoveItErrorCodes.ROBOT_STATE_STALE or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert code.val == MoveItErrorCodes.SUCCESS, code.message
    # The controller's measured state arrives a little later (two processes away).
    deadline = time.monotonic() + 15.0
    while not np.allclose(measured[-1], target, atol=1e-2) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert np.allclose(measured[-1], target, atol=1e-2)
