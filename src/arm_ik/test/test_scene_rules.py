"""The floor and the ball of an arm's configuration as scene objects (kinematics.safety.
scene_rules): in the scene like any object, judged by their own rules (the capsules), never by
the collision shapes, the floor fixed and the ball moved, resized or removed."""

from __future__ import annotations

import numpy as np
import pytest
from visualization_msgs.msg import Marker

from arm_ik.nodes import scene_messages
from arm_kinematics.arm import ArmConfig, load_arm
from arm_kinematics.description.bundled import expand_xacro
from arm_kinematics.scene.objects import Scene, SceneError
from arm_kinematics.scene.scene_rules import (
    FLOOR_ID,
    geometry_in,
    OBSTACLE_ID,
    obstacle_in,
    resized_ball,
    SceneRules,
)
from arm_testing.ros_harness import config_file

BOX = {'id': 'box', 'type': 'box', 'size': [0.2, 0.2, 0.2], 'pose': {'xyz': [1.0, 0.0, 0.5]}}


@pytest.fixture(scope='module')
def pointer3():
    return load_arm(expand_xacro('pointer3'), ArmConfig.from_file(config_file('pointer3')))


@pytest.fixture()
def seeded(pointer3):
    rules = SceneRules(pointer3.safety)
    scene = Scene(pointer3.model.base_link)
    rules.seed(scene)
    return rules, scene


def touching_pose(arm, rng=np.random.default_rng(7)) -> np.ndarray:
    """A pose whose capsules touch the configuration's ball (found by sampling)."""
    for _ in range(20000):
        q = rng.uniform(arm.model.lower, arm.model.upper)
        check = arm.safety.check_pose(q)
        if check.obstacle_contact.any() and not check.floor_violation.any():
            return q
    raise AssertionError('no pose touching the ball found')


def test_the_floor_and_ball_of_pointer3_are_scene_objects(pointer3, seeded):
    _, scene = seeded
    assert scene.ids == (FLOOR_ID, OBSTACLE_ID)
    floor, ball = scene.get(FLOOR_ID), scene.get(OBSTACLE_ID)
    assert (floor.rule, floor.spec['type'], ball.rule, ball.spec['type']) == \
        ('floor', 'box', 'obstacle', 'sphere')
    geometry = pointer3.safety
    # The box's top face is the floor plane; it spans more than the arm reaches.
    top = floor.pose[2, 3] + floor.spec['size'][2] / 2.0
    assert top == pytest.approx(geometry.floor_z, abs=1e-12)
    assert min(floor.spec['size'][:2]) > 2.0 * (1.8 + 0.1)   # l1 + l2 = 1.8 m
    center, radius = obstacle_in(scene)
    assert center == pytest.approx(geometry.obstacle_center) and \
        radius == geometry.config.obstacle.radius
    # Nothing changes the rules: the same geometry comes back.
    assert geometry_in(geometry, scene) is geometry
    assert geometry_in(geometry, None) is geometry


def test_an_arm_without_floor_or_ball_has_no_rule_objects(load_arm):
    from arm_kinematics.arm import build_arm
    from arm_kinematics.description.bundled import load_arm_config
    six = build_arm(load_arm('six_axis'), load_arm_config('six_axis'), 'six_axis')
    assert not six.safety.obstacle_enabled
    rules = SceneRules(six.safety)
    scene = Scene('base_link')
    rules.seed(scene)
    assert FLOOR_ID in scene.ids if six.safety.floor_enabled else len(scene) == 0
    # "obstacle" is an ordinary id there: a box of that name is just a box.
    spec = rules.admit({**BOX, 'id': OBSTACLE_ID})
    assert 'rule' not in spec
    scene.put(spec)
    assert obstacle_in(scene) is None and scene.get(OBSTACLE_ID) in scene.checked_objects


def test_rule_objects_are_judged_by_the_rules_not_the_shapes(pointer3, seeded):
    _, scene = seeded
    q = touching_pose(pointer3)
    checker = pointer3.collision_checker(scene=scene)
    assert scene.checked_objects == ()
    assert pointer3.safety.check_pose(q).obstacle_contact.any()
    assert not checker.check(q).scene_collision
    # The same sphere as an ordinary object is checked by the shapes.
    ball = dict(scene.get(OBSTACLE_ID).spec)
    ball.pop('rule')
    ball['id'] = 'plain'
    ball['radius'] = 0.6
    scene.add(ball)
    assert checker.check(q).scene_collision
    assert [c.b for c in checker.check(q).contacts] and \
        all(c.b == 'plain' for c in checker.check(q).contacts if c.b in scene)


def test_moving_resizing_and_removing_the_ball_moves_its_rule(pointer3, seeded):
    rules, scene = seeded
    geometry = pointer3.safety
    q = touching_pose(pointer3)
    assert geometry_in(geometry, scene).check_pose(q).obstacle_contact.any()
    away = rules.admit({'id': OBSTACLE_ID, 'type': 'sphere', 'radius': 0.25,
                        'pose': {'xyz': [-1.5, 1.5, 3.0]}})
    assert away['rule'] == 'obstacle'
    scene.put(away)
    moved = geometry_in(geometry, scene)
    assert moved.obstacle_center == pytest.approx([-1.5, 1.5, 3.0])
    assert not moved.check_pose(q).obstacle_contact.any()
    # Back, but tiny: the capsule rule with the new radius.
    scene.put(rules.admit({'id': OBSTACLE_ID, 'type': 'sphere', 'radius': 1e-3,
                           'pose': {'xyz': geometry.obstacle_center.tolist()}}))
    small = geometry_in(geometry, scene)
    assert small.config.obstacle.radius == 1e-3
    assert small.contact_distance == pytest.approx(1e-3 + geometry.config.obstacle.rod_radius)
    scene.remove(OBSTACLE_ID)
    off = geometry_in(geometry, scene)
    assert not off.obstacle_enabled and not off.check_pose(q).obstacle_contact.any()
    assert off.floor_enabled and off.floor_z == geometry.floor_z


def test_the_obstacle_radius_parameter_resizes_the_scene_ball(seeded):
    _, scene = seeded
    spec = resized_ball(scene, 0.4)
    assert spec['radius'] == 0.4 and spec['rule'] == 'obstacle'
    assert spec['pose']['xyz'] == pytest.approx(obstacle_in(scene)[0])
    assert resized_ball(scene, obstacle_in(scene)[1]) is None
    scene.remove(OBSTACLE_ID)
    assert resized_ball(scene, 0.4) is None      # no ball: nothing to resize


@pytest.mark.parametrize('change, words', [
    (lambda r, s: r.admit({**BOX, 'id': FLOOR_ID}), 'cannot be changed'),
    (lambda r, s: r.check_remove(FLOOR_ID), 'cannot be removed'),
    (lambda r, s: r.admit({**BOX, 'id': OBSTACLE_ID}), 'stays a sphere'),
    (lambda r, s: r.admit({**BOX, 'rule': 'obstacle'}), 'kept for the arm'),
    (lambda r, s: s.put({'id': 'b', 'type': 'sphere', 'radius': 0.1, 'rule': 'floor'}),
     'not a rule of a sphere'),
    (lambda r, s: s.put({**BOX, 'rule': 'wall'}), "rule 'wall'"),
])
def test_changes_the_rules_refuse_leave_the_scene_as_it_was(seeded, change, words):
    rules, scene = seeded
    before = (scene.version, scene.as_list())
    with pytest.raises(SceneError, match=words):
        change(rules, scene)
    assert (scene.version, scene.as_list()) == before


def test_rule_objects_cross_the_scene_message_and_stay_out_of_scene_markers(seeded):
    _, scene = seeded
    scene.add(BOX)
    message = scene_messages.scene_message(scene, None)
    assert [(o.id, o.rule) for o in message.objects] == \
        [(FLOOR_ID, 'floor'), (OBSTACLE_ID, 'obstacle'), ('box', '')]
    copy = scene_messages.scene_from_message(message, scene.frame)
    assert [item.rule for item in copy.objects] == ['floor', 'obstacle', '']
    assert obstacle_in(copy)[0] == pytest.approx(obstacle_in(scene)[0])
    markers = scene_messages.scene_markers(scene, None).markers
    # The floor and the ball are drawn by safety_markers, coloured by their own rules.
    assert [(m.type, m.text) for m in markers[1:]] == [(Marker.CUBE, 'box')]
