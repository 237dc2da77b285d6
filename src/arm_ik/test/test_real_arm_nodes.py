"""Real nodes over DDS on arms the package was not written for (example-robot-data URDFs).

One process group for the module: a UR5 with every node that plans or solves (ik_server,
trajectory_executor, safety_monitor, arm_info, lab_viewer), a Panda and an SO-101 with
ik_server and the executor, none given an arm_config: the defaults come from the URDF alone.
One more ik_server gets its URDF from the latched robot_description topic, as nodes started
beside robot_state_publisher do, and the URDF it gets has ': ' and '#' in a comment.
Arms given nothing but their URDF (no frames, no configuration: the defaults a new user
gets): the Panda, Baxter, TALOS and TIAGo with an ik_server each, and the xArm7 (its tool
frame link_eef on joint 7's origin) with every node that solves, moves or reports.
"""

from __future__ import annotations

from pathlib import Path
import re
import time

from geometry_msgs.msg import Point
import numpy as np
import pytest
from std_msgs.msg import String

from arm_interfaces.msg import ArmInfo, IKErrorCode, SafetyStatus
from arm_interfaces.srv import SolveIK
from arm_kinematics.arm import load_arm
from arm_testing.real_arms import REAL_ARMS, RealArm
from arm_testing.ros_harness import (
    call_service,
    claimed_domain,
    node_on_domain,
    process_group,
    wait_for,
)

COMMENTED = '<!-- calibrated: 2026-12-01 # by hand (default: none) -->'


class FileArm(RealArm):
    """An arm of the core's test data (src/arm_kinematics/test/urdf)."""

    @property
    def path(self) -> Path:
        return Path(__file__).resolve().parents[2] / 'arm_kinematics' / 'test' / 'urdf' / \
            self.relative_path


# The three real arms, and a yaw + two-pitch arm on a linear rail (a prismatic joint).
ARMS = {**REAL_ARMS, 'rail': FileArm('rail', 'rail_arm.urdf', 'world', 'tool0')}
# URDFs given with defaults only: (file, the base and tip the defaults pick).
DEFAULTS = {
    'panda_default': ('panda_description/urdf/panda.urdf', 'panda_link0', 'panda_hand'),
    'baxter': ('baxter_description/urdf/baxter.urdf', 'base', 'left_hand_link'),
    'talos': ('talos_data/robots/talos_full_v2.urdf', 'base_link', 'wrist_left_ft_tool_link'),
    'tiago': ('tiago_description/robots/tiago.urdf', 'base_footprint', 'hand_tool_link'),
    'xarm7': ('xarm_description/urdf/xarm7.urdf', 'world', 'link_eef'),
}


@pytest.fixture(scope='module')
def pipeline():
    """(group, node, spin, arms) with every node of the module started once."""
    from arm_ik.nodes.common import LATCHED_QOS
    arms = {name: load_arm(spec.urdf(), None, spec.base, spec.tip)
            for name, spec in ARMS.items()}
    with (claimed_domain() as claim, process_group(claim) as group,
          node_on_domain(claim, 'real_arm_test') as (node, spin)):
        for name, spec in ARMS.items():
            params = {'robot_description': spec.urdf(), 'base_frame': spec.base,
                      'tip_frame': spec.tip}
            group.start_node('arm_ik', 'ik_server', namespace=f'/{name}', params=params)
            group.start_node('arm_ik', 'trajectory_executor', namespace=f'/{name}',
                             params={**params, 'speed_scale': 1.0})
        ur5 = {'robot_description': REAL_ARMS['ur5'].urdf(), 'base_frame': 'base_link',
               'tip_frame': 'tool0'}
        for executable in ('safety_monitor', 'arm_info'):
            group.start_node('arm_ik', executable, namespace='/ur5', params=ur5)
        group.start_node('arm_ik', 'lab_viewer', namespace='/ur5', params={**ur5, 'port': 0})
        # From the topic: no robot_description parameter at all.
        publisher = node.create_publisher(String, '/from_topic/robot_description',
                                          LATCHED_QOS)
        urdf = REAL_ARMS['ur5'].urdf().replace('<robot ', COMMENTED + '\n<robot ', 1)
        publisher.publish(String(data=urdf))
        group.start_node('arm_ik', 'ik_server', namespace='/from_topic',
                         params={'base_frame': 'base_link', 'tip_frame': 'tool0'})
        from arm_testing.real_arms import robots_dir
        for name, (relative, _, _) in DEFAULTS.items():
            urdf = (robots_dir() / relative).read_text(encoding='utf-8')
            arms[name] = load_arm(urdf)
            group.start_node('arm_ik', 'ik_server', namespace=f'/{name}',
                             params={'robot_description': urdf})
        xarm = {'robot_description': arms['xarm7'].model.urdf}
        group.start_node('arm_ik', 'trajectory_executor', namespace='/xarm7',
                         params={**xarm, 'speed_scale': 1.0})
        for executable in ('safety_monitor', 'arm_info'):
            group.start_node('arm_ik', executable, namespace='/xarm7', params=xarm)
        yield group, node, spin, arms


def _solve(pipeline, namespace: str, target, solver: str = '',
           orientation=None) -> SolveIK.Response:
    """SolveIK of a position, or a full pose with ``orientation`` (x, y, z, w)."""
    _, node, spin, _ = pipeline
    client = node.create_client(SolveIK, f'/{namespace}/ik_server/solve_ik')
    try:
        wait_for(client.service_is_ready, 60.0, spin, f'/{namespace}/ik_server/solve_ik')
        request = SolveIK.Request(solver=solver)
        request.target.pose.position = Point(x=float(target[0]), y=float(target[1]),
                                             z=float(target[2]))
        if orientation is not None:
            request.goal_type = SolveIK.Request.GOAL_FULL_POSE
            (request.target.pose.orientation.x, request.target.pose.orientation.y,
             request.target.pose.orientation.z, request.target.pose.orientation.w) = \
                (float(v) for v in orientation)
        return call_service(client, request, spin, 30.0)
    finally:
        node.destroy_client(client)


@pytest.mark.parametrize('name', sorted(ARMS))
def test_ik_server_answers_on_a_real_arm(pipeline, name):
    arms = pipeline[3]
    arm = arms[name]
    target = arm.model.fk(arm.model.clamp(arm.home + 0.3))[:3, 3]
    reply = _solve(pipeline, name, target)
    assert reply.error_code.val == IKErrorCode.OK, reply.message
    assert list(reply.solution.name) == list(arm.model.joint_names)
    reached = arm.model.fk(np.array(reply.solution.position))[:3, 3]
    assert np.linalg.norm(reached - target) < 1e-4
    far = arm.workspace.shoulder + [arm.workspace.max_reach + 1.0, 0.0, 0.0]
    reply = _solve(pipeline, name, far)
    assert reply.error_code.val == IKErrorCode.OUT_OF_REACH, reply.message


def test_ur5_return_all_lists_every_distinct_solution_once(pipeline):
    """ik_client --all on random in-limit UR5 poses: every distinct solution once (the
    whole-turn copy nearest the seed), as many as ur-analytic-ik finds when it is
    installed, else as the closed form's 8 raw branches reach."""
    from arm_kinematics.common.transforms import matrix_to_quaternion
    _, node, spin, arms = pipeline
    model = arms['ur5'].model
    client = node.create_client(SolveIK, '/ur5/ik_server/solve_ik')
    try:
        peer = __import__('ur_analytic_ik')
    except ImportError:
        peer = None
    try:
        wait_for(client.service_is_ready, 60.0, spin, '/ur5/ik_server/solve_ik')
        configurations = model.random_configurations(4, np.random.default_rng(21))
        for q in configurations:
            pose = model.fk(q)
            request = SolveIK.Request(goal_type=SolveIK.Request.GOAL_FULL_POSE,
                                      return_all_solutions=True)
            target = request.target.pose
            target.position = Point(x=float(pose[0, 3]), y=float(pose[1, 3]),
                                    z=float(pose[2, 3]))
            x, y, z, w = matrix_to_quaternion(pose[:3, :3])
            target.orientation.x, target.orientation.y = float(x), float(y)
            target.orientation.z, target.orientation.w = float(z), float(w)
            request.seed.name = list(model.joint_names)
            request.seed.position = np.clip(q + 0.2, model.lower, model.upper).tolist()
            reply = call_service(client, request, spin, 30.0)
            assert reply.error_code.val == IKErrorCode.OK, reply.message
            labels = [a.label for a in reply.alternatives]
            assert len(labels) == len(set(labels)), labels
            listed = {tuple(np.round(np.remainder(np.array(a.positions) + np.pi, 2 * np.pi)
                                     - np.pi, 6)) for a in reply.alternatives}
            if peer is not None:
                flip = np.diag([-1.0, -1.0, 1.0, 1.0])
                theirs = [s for s in peer.ur5.inverse_kinematics(
                    np.ascontiguousarray(flip @ pose)) if np.all(np.isfinite(s))]
                expected = {tuple(np.round(np.remainder(np.array(s) + np.pi, 2 * np.pi)
                                           - np.pi, 6)) for s in theirs}
                assert len(listed) == len(expected)
            assert len(listed) == len(labels) >= 2
    finally:
        node.destroy_client(client)


def _move_home_plus_a_quarter_radian_and_arrive(client, arm) -> np.ndarray:
    """Send the tip to FK(home + 0.25 rad) (or the first of home - 0.25, home ± 0.1 rad
    whose links do not touch: with the URDF's meshes found, the UR5's convex hulls of base
    and upper arm meet at home + 0.25), check the goal succeeds and the published joint
    states reach it within 10 s (1 mm); return the pose that arrived."""
    client.wait_for_server(60.0)
    checker = arm.collision_checker()
    pose = next(q for q in (arm.model.clamp(arm.home + step) for step in (0.25, -0.25, 0.1, -0.1))
                if checker.is_free(q))
    target = arm.model.fk(pose)[:3, 3]
    outcome = client.move(client.goal(position=target.tolist()))
    assert outcome.code == 0, outcome.message
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline:
        pose = client.pose()
        if pose is not None and np.linalg.norm(arm.model.fk(pose)[:3, 3] - target) < 1e-3:
            break
        time.sleep(0.05)
    pose = client.pose()
    assert pose is not None, 'no joint_states'
    assert np.linalg.norm(arm.model.fk(pose)[:3, 3] - target) < 1e-3
    return pose


@pytest.mark.parametrize('name', sorted(ARMS))
def test_executor_moves_a_real_arm(pipeline, name):
    from arm_testing.motion_harness import MotionClient
    group, _, _, arms = pipeline
    arm = arms[name]
    domain = int(group.env['ROS_DOMAIN_ID'])
    client = MotionClient(domain, f'/{name}', arm.model.joint_names)
    try:
        pose = _move_home_plus_a_quarter_radian_and_arrive(client, arm)
        assert arm.model.within_limits(pose)
        # Joints outside the chain (the Panda's fingers, the SO-101's jaw) are published
        # too, held where they rest, so robot_state_publisher has every link.
        from arm_kinematics.description.passive_joints import PassiveJoints
        passive = PassiveJoints.of(arm.model)
        state = client.states.last()
        assert list(state.name) == [*arm.model.joint_names, *passive.names]
        assert list(state.position[arm.model.dof:]) == passive.positions(pose)
    finally:
        client.close()


def test_safety_monitor_and_arm_info_report_on_a_ur5(pipeline):
    _, node, spin, arms = pipeline
    from arm_ik.nodes.common import LATCHED_QOS
    statuses, infos = [], []
    node.create_subscription(SafetyStatus, '/ur5/safety_status', statuses.append, 10)
    node.create_subscription(ArmInfo, '/ur5/arm_info', infos.append, LATCHED_QOS)
    # SAFE once the executor's joint_states flow (a status before them says they are
    # stale, as it should; many nodes start together in this module).
    wait_for(lambda: infos and statuses and statuses[-1].verdict == SafetyStatus.SAFE, 60.0,
             spin, 'a SAFE safety_status and arm_info of the UR5')
    info = infos[-1]
    assert (info.base_frame, info.tip_frame) == ('base_link', 'tool0')
    assert list(info.joint_names) == list(arms['ur5'].model.joint_names)


def test_lab_opens_on_a_ur5(pipeline):
    import urllib.request
    group = pipeline[0]
    lab = next(p for p in group.processes if p.name.endswith('lab_viewer'))
    deadline = time.monotonic() + 60.0
    found = None
    while time.monotonic() < deadline and found is None and lab.alive():
        found = re.search(r'http://127\.0\.0\.1:\d+', lab.output())
        time.sleep(0.2)
    assert found, lab.output()[-2000:]
    with urllib.request.urlopen(found.group(0), timeout=10.0) as page:
        assert page.status == 200


def test_robot_description_from_the_latched_topic(pipeline):
    """No parameter: the node takes robot_state_publisher's topic, comments and all."""
    arm = pipeline[3]['ur5']
    target = arm.model.fk(arm.model.clamp(arm.home + 0.3))[:3, 3]
    reply = _solve(pipeline, 'from_topic', target)
    assert reply.error_code.val == IKErrorCode.OK, reply.message


def test_the_rail_arm_slides_to_a_target_its_arm_cannot_reach(pipeline):
    """1.1 m out is beyond the 0.7 m of the arm itself: the executor drives the prismatic
    joint (metres, within its 0.3 m/s) to get there."""
    from arm_testing.motion_harness import MotionClient
    group, _, _, arms = pipeline
    arm = arms['rail']
    client = MotionClient(int(group.env['ROS_DOMAIN_ID']), '/rail', arm.model.joint_names)
    try:
        client.wait_for_server(60.0)
        target = [1.1, 0.0, 0.4]
        outcome = client.move(client.goal(position=target))
        assert outcome.code == 0, outcome.message
        stamps, positions = client.positions()
        assert len(positions) > 0
        final = client.pose()
        assert final[0] > 0.3, final            # the carriage moved out along the rail
        assert np.linalg.norm(arm.model.fk(final)[:3, 3] - target) < 1e-3
        # Sampled rail speed never above the URDF's 0.3 m/s (with a little timing slack).
        times = stamps
        speeds = np.abs(np.diff(positions[:, 0])) / np.maximum(np.diff(times), 1e-6)
        assert speeds.max() <= 0.3 * 1.1, speeds.max()
    finally:
        client.close()


def test_a_new_description_on_the_topic_rebuilds_the_arm(pipeline):
    """robot_state_publisher republishes the latched topic when its description changes: a
    longer forearm (0.39225 → 0.59225 m) reaches the node that took the topic, and its reach
    rules are the new model's (the reply's reach fraction is measured against them)."""
    _, node, spin, arms = pipeline
    from arm_ik.nodes.common import LATCHED_QOS
    longer = REAL_ARMS['ur5'].urdf().replace('xyz="0.0 0.0 0.39225"', 'xyz="0.0 0.0 0.59225"')
    assert longer != REAL_ARMS['ur5'].urdf()
    new = load_arm(longer, None, 'base_link', 'tool0')
    old = arms['ur5']
    target = old.model.fk(old.model.clamp(old.home + 0.3))[:3, 3]
    distance = float(np.linalg.norm(target - old.workspace.shoulder))
    before = _solve(pipeline, 'from_topic', target)
    assert before.reach_fraction == pytest.approx(distance / old.workspace.max_reach, rel=1e-9)
    publisher = node.create_publisher(String, '/from_topic/robot_description', LATCHED_QOS)
    publisher.publish(String(data=longer))
    expected = distance / new.workspace.max_reach
    deadline = time.monotonic() + 30.0
    reply = before
    while time.monotonic() < deadline:
        reply = _solve(pipeline, 'from_topic', target)
        if reply.reach_fraction == pytest.approx(expected, rel=1e-9):
            break
        time.sleep(0.5)
    assert reply.reach_fraction == pytest.approx(expected, rel=1e-9), reply.message
    assert reply.error_code.val == IKErrorCode.OK, reply.message


@pytest.mark.parametrize('name', sorted(DEFAULTS))
def test_an_arm_given_only_its_urdf_answers_full_pose_requests(pipeline, name):
    """No frames, no configuration: the tool frame the defaults pick (logged with the reason
    and the other candidates), full poses made by FK answered."""
    from arm_kinematics.common.transforms import matrix_to_quaternion
    group, _, _, arms = pipeline
    arm = arms[name]
    _, base, tip = DEFAULTS[name]
    assert (arm.model.base_link, arm.model.tip_link) == (base, tip)
    rng = np.random.default_rng(11)
    for q in arm.model.random_configurations(2, rng):
        pose = arm.model.fk(q)
        reply = _solve(pipeline, name, pose[:3, 3], orientation=matrix_to_quaternion(
            pose[:3, :3]))
        assert reply.error_code.val == IKErrorCode.OK, reply.message
        reached = arm.model.fk(np.array(reply.solution.position))
        assert np.linalg.norm(reached[:3, 3] - pose[:3, 3]) < 1e-4
    server = next(p for p in group.processes if p.name == f'{name}_ik_server')
    assert f'frames {base} -> {tip} (' in server.output(), server.output()[-2000:]


def test_the_xarm7_to_its_link_eef_is_served_by_every_node(pipeline):
    """link_eef sits on joint 7's origin (a zero-length last link): the executor moves there,
    the safety monitor and arm_info report on it."""
    from arm_ik.nodes.common import LATCHED_QOS
    from arm_testing.motion_harness import MotionClient
    group, node, spin, arms = pipeline
    arm = arms['xarm7']
    statuses, infos = [], []
    node.create_subscription(SafetyStatus, '/xarm7/safety_status', statuses.append, 10)
    node.create_subscription(ArmInfo, '/xarm7/arm_info', infos.append, LATCHED_QOS)
    wait_for(lambda: infos and statuses and statuses[-1].verdict == SafetyStatus.SAFE, 60.0,
             spin, 'a SAFE safety_status and arm_info of the xArm7')
    assert (infos[-1].base_frame, infos[-1].tip_frame) == ('world', 'link_eef')
    client = MotionClient(int(group.env['ROS_DOMAIN_ID']), '/xarm7', arm.model.joint_names)
    try:
        _move_home_plus_a_quarter_radian_and_arrive(client, arm)
    finally:
        client.close()
