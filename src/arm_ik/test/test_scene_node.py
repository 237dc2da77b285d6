"""The scene service of safety_monitor and its collision witness, over DDS.

One process group for the module: a safety_monitor for a UR5 (URDF meshes, no configuration,
a scene file at start-up) and one for pointer3 with its bundled configuration; a third
monitor is given a bad scene file and must refuse to start with the reason. The expected
contacts come from the same core checker built here (kinematics.collision), so the test checks
that what the node reports is what the core says of the pose it was sent.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from sensor_msgs.msg import JointState
from visualization_msgs.msg import Marker, MarkerArray

from arm_interfaces.msg import IKErrorCode, JointMap, SafetyStatus, SceneObject
from arm_interfaces.msg import Scene as SceneMsg
from arm_interfaces.srv import ApplySceneObject, GetJointMap, RemoveSceneObject, SolveIK
from arm_kinematics.arm import ArmConfig, load_arm
from arm_kinematics.common.transforms import matrix_to_quaternion
from arm_kinematics.description.bundled import expand_xacro
from arm_kinematics.motion.planning.joint_map import joint_map
from arm_kinematics.scene.objects import Scene
from arm_testing.real_arms import mesh_root, REAL_ARMS
from arm_testing.ros_harness import (
    call_service,
    claimed_domain,
    config_file,
    node_on_domain,
    process_group,
    wait_for,
)

REPLY = 20.0
UR5_UP = [0.0, -math.pi / 2, 0.0, 0.0, 0.0, 0.0]       # upper arm and forearm straight up
UR5_FOLDED = [0.0, -1.57, 3.0, 0.0, 0.0, 0.0]          # forearm folded onto the upper arm
WALL = {'id': 'wall', 'type': 'box', 'size': [0.1, 1.0, 1.0], 'pose': {'xyz': [-0.9, 0, 0.5]}}


class Side:
    """The test's view of one monitor: its latched scene, statuses and clients."""

    def __init__(self, node, spin, namespace: str, joints) -> None:
        from arm_ik.nodes.common import LATCHED_QOS
        self.node, self.spin, self.ns, self.joints = node, spin, namespace, list(joints)
        self.statuses: list[SafetyStatus] = []
        self.scenes: list[SceneMsg] = []
        self.markers: list[MarkerArray] = []
        node.create_subscription(SafetyStatus, f'{namespace}/safety_status',
                                 self.statuses.append, 50)
        node.create_subscription(SceneMsg, f'{namespace}/scene', self.scenes.append,
                                 LATCHED_QOS)
        node.create_subscription(MarkerArray, f'{namespace}/scene_markers',
                                 self.markers.append, LATCHED_QOS)
        self.publisher = node.create_publisher(JointState, f'{namespace}/joint_states', 10)
        self.apply = node.create_client(ApplySceneObject,
                                        f'{namespace}/safety_monitor/scene/apply')
        self.remove = node.create_client(RemoveSceneObject,
                                         f'{namespace}/safety_monitor/scene/remove')

    def ready(self) -> None:
        for client in (self.apply, self.remove):
            wait_for(client.service_is_ready, 60.0, self.spin, client.srv_name)

    def put(self, **fields) -> ApplySceneObject.Response:
        pose = fields.pop('xyz', (0.0, 0.0, 0.0))
        item = SceneObject(**fields)
        item.pose.position.x, item.pose.position.y, item.pose.position.z = map(float, pose)
        return call_service(self.apply, ApplySceneObject.Request(object=item), self.spin,
                            REPLY)

    def drop(self, object_id: str) -> RemoveSceneObject.Response:
        return call_service(self.remove, RemoveSceneObject.Request(id=object_id), self.spin,
                            REPLY)

    def latched_scene(self, version: int) -> SceneMsg:
        """The scene of ``version`` as a late joiner sees it (a new subscription)."""
        from arm_ik.nodes.common import LATCHED_QOS
        seen: list[SceneMsg] = []
        subscription = self.node.create_subscription(SceneMsg, f'{self.ns}/scene', seen.append,
                                                     LATCHED_QOS)
        try:
            wait_for(lambda: any(s.version == version for s in seen), 20.0, self.spin,
                     f'latched scene version {version} on {self.ns}')
        finally:
            self.node.destroy_subscription(subscription)
        return next(s for s in seen if s.version == version)

    def status_at(self, q, condition, what: str) -> SafetyStatus:
        """Publish ``q`` until a status judging it meets ``condition``."""
        start = len(self.statuses)

        def found() -> bool:
            self.publisher.publish(JointState(name=self.joints,
                                              position=[float(v) for v in q]))
            for _ in range(4):
                self.spin()
            return any(self._judges(s, q) and condition(s) for s in self.statuses[start:])
        wait_for(found, 30.0, self.spin, what)
        return next(s for s in self.statuses[start:] if self._judges(s, q) and condition(s))

    @staticmethod
    def _judges(status: SafetyStatus, q) -> bool:
        return status.collision_checked and \
            np.allclose(status.joint_state.position, q, atol=1e-12)


@pytest.fixture(scope='module')
def monitors(tmp_path_factory):
    folder = tmp_path_factory.mktemp('scenes')
    good = folder / 'scene.yaml'
    good.write_text('objects:\n  - {id: wall, type: box, size: [0.1, 1.0, 1.0], '
                    'pose: {xyz: [-0.9, 0, 0.5]}}\n', encoding='utf-8')
    bad = folder / 'bad.yaml'
    bad.write_text('objects:\n  - {id: ok, type: sphere, radius: 0.1}\n'
                   '  - {id: flat, type: box, size: [1.0, 0.0, 1.0]}\n', encoding='utf-8')
    ur5 = REAL_ARMS['ur5']
    ur5_params = {'robot_description': ur5.urdf(), 'base_frame': ur5.base,
                  'tip_frame': ur5.tip, 'mesh_search_paths': mesh_root()}
    with (claimed_domain() as claim, process_group(claim) as group,
          node_on_domain(claim, 'scene_test') as (node, spin)):
        group.start_node('arm_ik', 'safety_monitor', namespace='/ur5',
                         params={**ur5_params, 'scene_file': str(good)})
        group.start_node('arm_ik', 'ik_server', namespace='/ur5', params=ur5_params)
        group.start_node('arm_ik', 'safety_monitor', namespace='/pointer3',
                         params={'robot_description': expand_xacro('pointer3'),
                                 'arm': 'pointer3', 'arm_config': config_file('pointer3')})
        refused = group.start_node('arm_ik', 'safety_monitor', namespace='/bad',
                                   params={**ur5_params, 'scene_file': str(bad)})
        yield {'node': node, 'spin': spin, 'refused': refused}


@pytest.fixture(scope='module')
def ur5_arm():
    spec = REAL_ARMS['ur5']
    return load_arm(spec.urdf(), None, spec.base, spec.tip)


def test_a_bad_scene_file_refuses_start_up_with_the_reason(monitors):
    refused = monitors['refused']
    assert refused.wait_for_exit(60.0) == 1
    output = refused.output()
    assert 'scene_file refused' in output and '"flat"' in output and '> 0' in output, output


def test_ur5_scene_service_and_contact_witness(monitors, ur5_arm):
    side = Side(monitors['node'], monitors['spin'], '/ur5', ur5_arm.model.joint_names)
    side.ready()
    # The core's view of the same poses, with the same meshes.
    checker = ur5_arm.collision_checker(search_paths=[mesh_root()])
    assert not checker.warnings
    tip = checker.link_poses(np.array(UR5_UP))['wrist_3_link'][:3, 3]
    checker.scene.add_all([WALL, {'id': 'ball', 'type': 'sphere', 'radius': 0.05,
                                  'pose': {'xyz': tip.tolist()}}])
    expected = checker.check(np.array(UR5_UP))
    assert expected.scene_collision and not expected.self_collision
    assert not checker.check(ur5_arm.home).collides

    # The scene file was loaded at start-up.
    started = side.latched_scene(1)
    assert [(o.id, o.type, list(o.size)) for o in started.objects] == \
        [('wall', 'box', [0.1, 1.0, 1.0])]
    assert started.header.frame_id == 'base_link'
    clear = side.status_at(ur5_arm.home, lambda s: True, 'a status of the home pose')
    assert not clear.scene_contact and not clear.self_collision and clear.scene_version == 1
    assert clear.closest_distance > 0.0 and '|' in clear.closest_pair

    # Add: a ball where the wrist is when the arm points up.
    reply = side.put(id='ball', type='sphere', size=[0.05], xyz=tip)
    assert reply.success and reply.version == 2 and 'added sphere "ball"' in reply.message
    scene = side.latched_scene(2)
    assert [o.id for o in scene.objects] == ['wall', 'ball']
    assert [scene.objects[1].pose.position.x, scene.objects[1].pose.position.y,
            scene.objects[1].pose.position.z] == pytest.approx(tip)
    touching = side.status_at(UR5_UP, lambda s: s.scene_version == 2, 'status of UR5_UP')
    assert touching.scene_contact and not touching.self_collision
    assert sorted(touching.contact_pairs) == sorted(f'{c.a}|{c.b}' for c in expected.contacts)
    assert touching.closest_distance == pytest.approx(expected.closest.distance, abs=1e-9)
    assert touching.verdict == SafetyStatus.SAFE    # the UR5 has no floor/ball rules: unchanged
    wait_for(lambda: any(len(a.markers) == 3 for a in side.markers), 20.0, side.spin,
             'scene markers of two objects')
    markers = next(a for a in reversed(side.markers) if len(a.markers) == 3).markers
    assert markers[0].action == Marker.DELETEALL
    assert [(m.type, m.text) for m in markers[1:]] == [(Marker.CUBE, 'wall'),
                                                       (Marker.SPHERE, 'ball')]
    assert markers[2].scale.x == pytest.approx(0.1)

    # Move it away: the same pose is clear.
    reply = side.put(id='ball', type='sphere', size=[0.05], xyz=(2.0, 0.0, 0.5))
    assert reply.success and reply.version == 3 and 'replaced' in reply.message
    moved = side.status_at(UR5_UP, lambda s: s.scene_version == 3, 'status after the move')
    assert not moved.scene_contact and moved.closest_distance > 0.0

    # Self-collision of a folded arm is witnessed too.
    folded = side.status_at(UR5_FOLDED, lambda s: True, 'status of the folded UR5')
    assert folded.self_collision and checker.check(np.array(UR5_FOLDED)).self_collision
    assert folded.closest_distance < 0.0 and 'upper_arm_link' in folded.collision_message

    # Bad input: refused with the reason, nothing lost, the node keeps serving.
    bad = [
        ({'id': 'nan', 'type': 'sphere', 'size': [0.1], 'xyz': (math.nan, 0.0, 0.0)},
         'finite'),
        ({'id': 'flat', 'type': 'box', 'size': [0.1, 0.0, 0.1]}, '> 0'),
        ({'id': 'neg', 'type': 'sphere', 'size': [-0.1]}, '> 0'),
        ({'id': 'few', 'type': 'box', 'size': [0.1, 0.1]}, '3 numbers'),
        ({'id': 'far', 'type': 'sphere', 'size': [0.1], 'frame_id': 'world'},
         'frame "world" is unknown'),
        ({'id': 'blob', 'type': 'blob', 'size': [0.1]}, 'type must be one of'),
        ({'id': 'gone', 'type': 'mesh', 'mesh_file': 'package://nowhere/none.stl'},
         'not found'),
        ({'id': 'ball', 'type': 'cylinder', 'size': [0.1, -1.0]}, '> 0'),
    ]
    for fields, reason in bad:
        reply = side.put(**fields)
        assert not reply.success and reason in reply.message, (fields, reply.message)
        assert reply.version == 3
    reply = side.drop('nothing')
    assert not reply.success and 'no scene object "nothing"' in reply.message
    assert 'wall, ball' in reply.message and reply.version == 3
    kept = side.latched_scene(3)
    assert [(o.id, o.type) for o in kept.objects] == [('wall', 'box'), ('ball', 'sphere')]
    assert kept.objects[1].pose.position.x == pytest.approx(2.0)

    # A mesh that loads is accepted (a package:// file through mesh_search_paths); removal.
    reply = side.put(id='part', type='mesh', xyz=(0.0, 0.6, 0.2),
                     mesh_file='package://example-robot-data/robots/ur_description/meshes/'
                               'ur5/collision/wrist3.stl')
    assert reply.success and reply.version == 4, reply.message
    assert side.drop('part').success and side.drop('ball').success
    final = side.latched_scene(6)
    assert [o.id for o in final.objects] == ['wall']


def test_pointer3_reports_scene_contact_beside_its_floor_and_ball_verdict(monitors):
    config = ArmConfig.from_file(config_file('pointer3'))
    arm = load_arm(expand_xacro('pointer3'), config)
    side = Side(monitors['node'], monitors['spin'], '/pointer3', arm.model.joint_names)
    side.ready()
    # The floor and the ball of the configuration are the scene's first objects.
    started = side.latched_scene(1)
    assert [(o.id, o.type, o.rule) for o in started.objects] == \
        [('floor', 'box', 'floor'), ('obstacle', 'sphere', 'obstacle')]
    ball = started.objects[1]
    assert list(ball.size) == [arm.safety.config.obstacle.radius]
    assert [ball.pose.position.x, ball.pose.position.y, ball.pose.position.z] == \
        pytest.approx(arm.safety.obstacle_center)
    checker = arm.collision_checker(scene=Scene(arm.model.base_link))
    elbow = checker.link_poses(arm.home)['forearm_link'][:3, 3]
    checker.scene.add({'id': 'post', 'type': 'cylinder', 'radius': 0.03, 'length': 0.2,
                       'pose': {'xyz': elbow.tolist()}})
    expected = checker.check(arm.home)
    assert expected.scene_collision
    home_verdict = arm.safety.check_pose(arm.home).verdict
    reply = side.put(id='post', type='cylinder', size=[0.03, 0.2], xyz=elbow)
    assert reply.success and reply.version == 2, reply.message
    status = side.status_at(arm.home, lambda s: s.scene_version == 2, 'pointer3 at home')
    assert status.scene_contact and 'forearm_link|post' in status.contact_pairs
    assert int(status.verdict) == int(home_verdict)     # the floor/ball verdict is unchanged
    assert status.floor_enabled
    # The joint map at that pose marks the cells in self-collision and touching the post,
    # each as the core's map with the same checker and scene says.
    client = side.node.create_client(GetJointMap, '/pointer3/safety_monitor/joint_map')
    wait_for(client.service_is_ready, REPLY, side.spin, 'pointer3 joint_map')
    reply = call_service(client, GetJointMap.Request(use_current_state=True), side.spin,
                         REPLY)
    assert reply.error_code == GetJointMap.Response.OK, reply.message
    grid = reply.map
    assert grid.collision_checked and grid.scene_version == 2
    expected_map = joint_map(arm.safety, arm.home, math.radians(4.0), checker=checker)
    cells = np.frombuffer(bytes(grid.cells), dtype=np.uint8).reshape(grid.row_count,
                                                                     grid.column_count)
    assert (cells & JointMap.CELL_SELF_COLLISION > 0).tolist() == \
        expected_map.self_collision.tolist()
    assert (cells & JointMap.CELL_SCENE_CONTACT > 0).tolist() == \
        expected_map.scene_contact.tolist()
    assert expected_map.self_collision.any() and expected_map.scene_contact.any()
    assert 'in self-collision' in reply.message and 'touching the scene' in reply.message
    reply = side.drop('post')
    assert reply.success and reply.version == 3
    status = side.status_at(arm.home, lambda s: s.scene_version == 3, 'pointer3, post gone')
    assert not status.scene_contact and int(status.verdict) == int(home_verdict)
    ball_rule_follows_the_scene(side, arm)


def ball_rule_follows_the_scene(side: Side, arm) -> None:
    """The ball is judged by its capsule rule wherever the scene puts it (never by the
    shapes); obstacle_radius and the scene's ball are one value; the floor is fixed."""
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import GetParameters, SetParameters
    rng = np.random.default_rng(3)
    touching = next(q for q in (rng.uniform(arm.model.lower, arm.model.upper)
                                for _ in range(20000))
                    if arm.safety.check_pose(q).obstacle_contact.any())
    status = side.status_at(touching, lambda s: s.scene_version == 3, 'touching the ball')
    assert any(status.obstacle_contact) and not status.scene_contact
    assert int(status.verdict) == int(arm.safety.check_pose(touching).verdict)
    node, spin = side.node, side.spin
    get = node.create_client(GetParameters, f'{side.ns}/safety_monitor/get_parameters')
    put = node.create_client(SetParameters, f'{side.ns}/safety_monitor/set_parameters')

    def radius() -> float:
        reply = call_service(get, GetParameters.Request(names=['obstacle_radius']), spin, REPLY)
        return reply.values[0].double_value

    far = (-1.5, 1.5, 3.0)
    reply = side.put(id='obstacle', type='sphere', size=[0.1], xyz=far)
    assert reply.success and 'replaced sphere "obstacle"' in reply.message, reply.message
    status = side.status_at(touching, lambda s: s.scene_version == 4, 'the ball moved away')
    assert not any(status.obstacle_contact) and status.obstacle_radius == pytest.approx(0.1)
    wait_for(lambda: radius() == pytest.approx(0.1), 10.0, spin, 'obstacle_radius = 0.1')
    # The parameter resizes the scene's ball, in place.
    reply = call_service(put, SetParameters.Request(parameters=[Parameter(
        name='obstacle_radius', value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                                                     double_value=0.3))]), spin, REPLY)
    assert reply.results[0].successful, reply.results[0].reason
    resized = side.latched_scene(5).objects[1]
    assert (resized.id, list(resized.size)) == ('obstacle', [0.3])
    assert resized.pose.position.z == pytest.approx(far[2])
    # The floor is fixed; the ball stays a sphere; no other object takes a rule.
    for fields, words in (({'id': 'floor', 'type': 'box', 'size': [1.0, 1.0, 0.01]},
                           'cannot be changed'),
                          ({'id': 'obstacle', 'type': 'box', 'size': [0.1, 0.1, 0.1]},
                           'stays a sphere'),
                          ({'id': 'fake', 'type': 'sphere', 'size': [0.1], 'rule': 'obstacle'},
                           'kept for the arm')):
        reply = side.put(**fields)
        assert not reply.success and words in reply.message and reply.version == 5
    reply = side.drop('floor')
    assert not reply.success and 'cannot be removed' in reply.message
    # Removed: the ball is off (and obstacle_radius has nothing to resize: no new scene).
    assert side.drop('obstacle').success
    status = side.status_at(touching, lambda s: s.scene_version == 6, 'the ball removed')
    assert not status.obstacle_enabled and status.floor_enabled
    reply = call_service(put, SetParameters.Request(parameters=[Parameter(
        name='obstacle_radius', value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                                                     double_value=0.2))]), spin, REPLY)
    assert reply.results[0].successful
    assert side.status_at(touching, lambda s: True, 'after the radius').scene_version == 6
    # Applied again where the configuration has it: the rule is back.
    config_ball = arm.safety.config.obstacle
    assert side.put(id='obstacle', type='sphere', size=[config_ball.radius],
                    xyz=config_ball.center).success
    status = side.status_at(touching, lambda s: s.scene_version == 7, 'the ball back')
    assert status.obstacle_enabled and any(status.obstacle_contact)


UR5_Q = np.array([0.3, -1.2, 1.4, -1.0, -1.5, 0.2])


def test_ik_server_avoids_the_scene_it_follows(monitors, ur5_arm):
    """Objects added through safety_monitor reach ik_server: avoid_collisions then rejects the
    solution through them and answers a clear one, or COLLISION with the closest pair."""
    node, spin = monitors['node'], monitors['spin']
    side = Side(node, spin, '/ur5', ur5_arm.model.joint_names)
    side.ready()
    client = node.create_client(SolveIK, '/ur5/ik_server/solve_ik')
    wait_for(client.service_is_ready, 60.0, spin, 'ik_server solve_ik')
    pose = ur5_arm.model.fk(UR5_Q)

    def solve(avoid: int) -> SolveIK.Response:
        request = SolveIK.Request(goal_type=SolveIK.Request.GOAL_FULL_POSE,
                                  solver='closed_form', avoid_collisions=avoid)
        p, o = request.target.pose.position, request.target.pose.orientation
        p.x, p.y, p.z = (float(v) for v in pose[:3, 3])
        o.x, o.y, o.z, o.w = matrix_to_quaternion(pose[:3, :3])
        request.seed = JointState(name=list(ur5_arm.model.joint_names),
                                  position=[float(v) + 0.05 for v in UR5_Q])
        return call_service(client, request, spin, REPLY)

    off = solve(SolveIK.Request.AVOID_OFF)
    assert off.error_code.val == IKErrorCode.OK, off.message
    checker = ur5_arm.collision_checker(search_paths=[mesh_root()])
    first = np.array(off.solution.position)
    elbow = checker.link_poses(first)['forearm_link'][:3, 3]
    checker.scene.add_all([WALL, {'id': 'post', 'type': 'sphere', 'radius': 0.06,
                                  'pose': {'xyz': elbow.tolist()}}])
    assert checker.check(first).scene_collision
    assert side.put(id='post', type='sphere', size=[0.06], xyz=elbow).success
    answers: list[SolveIK.Response] = []

    def avoided() -> bool:
        answers.append(solve(SolveIK.Request.AVOID_ON))
        return 'forearm_link–post' in answers[-1].message
    wait_for(avoided, 30.0, spin, 'ik_server avoiding the post')
    on = answers[-1]
    assert on.error_code.val == IKErrorCode.OK, on.message
    assert checker.is_free(np.array(on.solution.position)) and on.branch != off.branch
    # Off is still off, and the default (no ik.avoid_collisions in the config) is off.
    assert list(solve(SolveIK.Request.AVOID_DEFAULT).solution.position) == \
        pytest.approx(list(first))
    assert side.put(id='cage', type='sphere', size=[0.08], xyz=pose[:3, 3]).success

    def refused() -> bool:
        answers.append(solve(SolveIK.Request.AVOID_ON))
        return answers[-1].error_code.val == IKErrorCode.COLLISION
    wait_for(refused, 30.0, spin, 'COLLISION once the target is caged')
    assert 'closest pair' in answers[-1].message and 'cage' in answers[-1].message
    assert side.drop('cage').success and side.drop('post').success
