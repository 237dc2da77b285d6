"""Demo: a UR5 plans round a box it would otherwise hit (trajectory_executor over DDS).

What a user would do, in one process group for the module:

1. start safety_monitor with a scene file holding one box, and trajectory_executor, both for
   the UR5 of example-robot-data (its URDF meshes, no configuration of ours);
2. ask the executor to turn the base by 1.6 rad (a joint goal, min_jerk): the straight joint
   move would sweep the wrist through the box;
3. the executor, which follows the monitor's latched ``scene`` topic, finds the straight move
   blocked, plans a collision-free joint path (OMPL RRTConnect), times it and runs it: every
   dense sample of the executed path (the result's ``executed_path``) is clear of the box by
   the same core checker built here, and the goal is reached;
4. stream a live target behind the box: the exponential follow refuses it (the way there
   crosses the box) and the arm stays; the speed cap stops before the box (each step is
   checked in the control tick); the log says why, once;
5. remove the box at run time (``~/scene/remove``): the move back is straight again.

The shell equivalent of the scene change is in docs/collision.md (``ros2 service call
/ur5/safety_monitor/scene/apply ...``).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import yaml

from arm_kinematics.arm import load_arm
from arm_kinematics.motion.runner import Mode
from arm_testing.motion_harness import MotionClient, wait_until
from arm_testing.real_arms import mesh_root, REAL_ARMS
from arm_testing.real_arms import UR5_BLOCKING_BOX as BOX
from arm_testing.ros_harness import call_service, claimed_domain, process_group, wait_for

START = [0.0, -1.2, 1.2, -1.57, -1.57, 0.0]       # wrist at (0.64, 0.11, 0.49) m
GOAL = [1.6, -1.2, 1.2, -1.57, -1.57, 0.0]        # the base turned by 1.6 rad
DENSE_STEP = 0.005     # m: finer than the executor's own 1 cm check
NAMESPACE = '/ur5'


@pytest.fixture(scope='module')
def demo(tmp_path_factory):
    scene_file = tmp_path_factory.mktemp('scene') / 'scene.yaml'
    scene_file.write_text(yaml.safe_dump({'objects': [BOX]}), encoding='utf-8')
    ur5 = REAL_ARMS['ur5']
    params = {'robot_description': ur5.urdf(), 'base_frame': ur5.base, 'tip_frame': ur5.tip,
              'mesh_search_paths': mesh_root()}
    with claimed_domain() as claim, process_group(claim) as group:
        group.start_node('arm_ik', 'safety_monitor', namespace=NAMESPACE,
                         params={**params, 'scene_file': str(scene_file)})
        executor = group.start_node('arm_ik', 'trajectory_executor', namespace=NAMESPACE,
                                    params={**params, 'speed_scale': 1.0,
                                            'initial_positions': START})
        arm = load_arm(ur5.urdf(), None, ur5.base, ur5.tip)
        client = MotionClient(claim.domain_id, NAMESPACE, arm.model.joint_names)
        try:
            client.wait_for_server(90.0)
            # The executor logs each scene it takes from the monitor's latched topic.
            wait_until(lambda: 'scene version 1: 1 objects (box)' in executor.output(), 60.0,
                       'the executor to receive the scene')
            checker = arm.collision_checker(search_paths=[mesh_root()])
            checker.scene.add(BOX)
            yield {'client': client, 'checker': checker, 'executor': executor,
                   'claim': claim}
        finally:
            client.close()


def executed_positions(outcome) -> np.ndarray:
    return np.array([point.positions for point in outcome.result.executed_path.points])


def test_ur5_plans_round_a_box_it_would_otherwise_hit(demo):
    client, checker = demo['client'], demo['checker']
    straight = checker.check_path([START, GOAL], DENSE_STEP)
    assert not straight.free and straight.report.scene_collision, \
        'the straight joint move must hit the box'

    outcome = client.move(client.goal(joints=GOAL, law='min_jerk'), timeout=120.0)
    assert outcome.code == 0, outcome.message
    assert 'collision-free detour' in outcome.message, outcome.message

    # One point per control tick, from the first tick after the start to the end.
    path = executed_positions(outcome)
    assert len(path) > 10
    assert path[0] == pytest.approx(START, abs=1e-3)
    assert path[-1] == pytest.approx(GOAL, abs=1e-3)
    assert client.pose() == pytest.approx(GOAL, abs=1e-9)     # the goal is reached and held
    dense = checker.check_path(np.vstack([START, path]), DENSE_STEP)
    assert dense.free, f'sample {dense.samples}: {dense.report.message}'
    # It did go round: some sample leaves the straight line's base-only motion.
    assert np.max(np.abs(path[:, 1:] - np.array(START)[1:])) > 0.05


def _stream(client, point, seconds: float) -> float:
    """Publish ``point`` as the live target at 30 Hz for ``seconds``; when it began."""
    began = time.time()
    while time.time() < began + seconds:
        client.publish_target(point)
        time.sleep(1.0 / 30.0)
    return began


def test_a_live_target_behind_the_box_is_not_followed_into_it(demo):
    """From GOAL (where the first move ended) the tool point of START is behind the box: the
    exponential follow refuses its IK answer (the way there crosses the box) and the arm
    stays; the speed cap steps towards it and stops before the box. Either says why, once
    for a stream of targets."""
    client, checker, executor = demo['client'], demo['checker'], demo['executor']
    at = client.pose()
    behind = checker.model.fk(np.array(START))[:3, 3]
    began = _stream(client, behind, 1.0)
    wait_until(lambda: 'the way there collides' in executor.output(), 10.0,
               'the executor to refuse the target')
    refusals = [line for line in executor.output().splitlines() if 'not followed' in line]
    assert len(refusals) == 1 and 'box' in refusals[0], refusals
    _, positions = client.positions(began)
    assert len(positions) > 50 and np.all(positions == at)      # it did not move at all

    client.wait_state(int(Mode.HOLDING), 5.0)     # the watchdog ended that follow
    assert all(r.successful for r in client.set_parameters(follow_law='speed_cap'))
    try:
        began = _stream(client, behind, 1.5)
        wait_until(lambda: 'the next step collides' in executor.output(), 10.0,
                   'the executor to stop the speed cap before the box')
        _, positions = client.positions(began)
        assert np.abs(positions[-1] - at).max() > 0.05            # it went some way
        dense = checker.check_path(np.vstack([at, positions]), DENSE_STEP)
        assert dense.free, f'sample {dense.samples}: {dense.report.message}'
    finally:
        client.set_parameters(follow_law='exponential')
        client.wait_state(int(Mode.HOLDING), 5.0)     # no follow left for the next test


def test_removing_the_box_at_run_time_makes_the_straight_move_clear_again(demo):
    from arm_interfaces.srv import RemoveSceneObject
    client, executor = demo['client'], demo['executor']
    node = client.node
    remove = node.create_client(RemoveSceneObject, f'{NAMESPACE}/safety_monitor/scene/remove')

    def spin(timeout: float = 0.05) -> None:
        time.sleep(timeout)       # the client's own thread spins its node
    wait_for(remove.service_is_ready, 30.0, spin, remove.srv_name)
    reply = call_service(remove, RemoveSceneObject.Request(id='box'), spin, 20.0)
    assert reply.success, reply.message
    wait_until(lambda: 'scene version 2: 0 objects' in executor.output(), 30.0,
               'the executor to receive the empty scene')
    start = client.pose()
    outcome = client.move(client.goal(joints=START, law='min_jerk'), timeout=60.0)
    assert outcome.code == 0, outcome.message
    assert 'detour' not in outcome.message and 'joint space' in outcome.message, \
        outcome.message
    path = executed_positions(outcome)
    assert path[0] == pytest.approx(start, abs=1e-3)
    assert client.pose() == pytest.approx(START, abs=1e-9)
