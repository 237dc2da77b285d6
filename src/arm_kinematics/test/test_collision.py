"""Collision checker of any arm (kinematics.collision): URDF collision shapes posed by FK,
self-collision with computed allowed pairs, a validated scene, paths and the motion bound."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np
import pytest

from arm_kinematics.description.collision_config import CollisionConfigError
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.scene.allowed import compute_allowed_pairs
from arm_kinematics.scene.checker import CollisionChecker
from arm_kinematics.scene.objects import Scene, SceneError
from arm_testing.real_arms import REAL_ARMS

# A two-joint arm with hand-checkable primitives: link1 is a 0.1 × 0.1 × 0.4 m box standing on
# the z axis (its faces at x, y = ±0.05 at q = 0), link2 a 0.05 m sphere 0.5 m up.
TOY_URDF = """<?xml version="1.0"?>
<robot name="toy">
  <link name="base"/>
  <link name="link1">
    <collision><origin xyz="0 0 0.2"/><geometry><box size="0.1 0.1 0.4"/></geometry>
    </collision>
  </link>
  <link name="link2">
    <collision><origin xyz="0 0 0.1"/><geometry><sphere radius="0.05"/></geometry>
    </collision>
  </link>
  <link name="tip"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="link1"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" velocity="1" effort="1"/></joint>
  <joint name="j2" type="revolute"><parent link="link1"/><child link="link2"/>
    <origin xyz="0 0 0.4"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" velocity="1" effort="1"/></joint>
  <joint name="jt" type="fixed"><parent link="link2"/><child link="tip"/>
    <origin xyz="0 0 0.2"/></joint>
</robot>
"""


def toy_checker(**kwargs) -> CollisionChecker:
    model = ArmModel.from_urdf(TOY_URDF, 'base', 'tip')
    return CollisionChecker(model, TOY_URDF, samples=50, **kwargs)


def real_checker(name: str, **kwargs) -> CollisionChecker:
    arm = REAL_ARMS[name]
    urdf = arm.urdf()
    return CollisionChecker(ArmModel.from_urdf(urdf, arm.base, arm.tip), urdf,
                            urdf_path=arm.path, **kwargs)


@pytest.fixture(scope='module')
def panda() -> CollisionChecker:
    return real_checker('panda')


@pytest.fixture(scope='module')
def ur5() -> CollisionChecker:
    return real_checker('ur5')


def box(object_id: str, x: float, size: float = 0.2) -> dict:
    return {'id': object_id, 'type': 'box', 'size': [size, size, size],
            'pose': {'xyz': [x, 0.0, 0.2]}}


# ---------------------------------------------------------------------- hand-computed
@pytest.mark.parametrize('gap', [0.001, -0.001])
def test_box_touching_a_link_by_one_millimetre(gap: float) -> None:
    checker = toy_checker()
    # The scene box's face at x = 0.05 + gap: 1 mm clear of link1's face, or 1 mm into it.
    checker.scene.add(box('crate', 0.05 + 0.1 + gap))
    report = checker.check(np.zeros(2))
    assert report.closest_scene.a == 'link1' and report.closest_scene.b == 'crate'
    assert report.closest_scene.distance == pytest.approx(gap, abs=1e-6)
    assert report.scene_collision is (gap < 0)
    assert checker.is_free(np.zeros(2)) is (gap > 0)


def test_turning_the_link_brings_its_edge_into_the_box() -> None:
    checker = toy_checker()
    checker.scene.add(box('crate', 0.05 + 0.1 + 0.001))
    # Turned by 45° about z, the box's edge reaches 0.05·√2 = 70.7 mm: 19.7 mm into the crate.
    report = checker.check(np.array([math.pi / 4, 0.0]))
    assert report.scene_collision
    assert report.closest_scene.distance == pytest.approx(0.051 - 0.05 * math.sqrt(2),
                                                          abs=1e-6)


def test_sphere_on_the_second_link_follows_its_joint() -> None:
    checker = toy_checker()
    # Bent 90° about y, link2's sphere centre sits at (0.1, 0, 0.4): a ball of 0.05 m at
    # x = 0.1 + 0.05 + 0.05 + 0.002 is 2 mm away; straight up it is far.
    checker.scene.add({'id': 'ball', 'type': 'sphere', 'radius': 0.05,
                       'pose': {'xyz': [0.202, 0.0, 0.4]}})
    bent = checker.check(np.array([0.0, math.pi / 2]))
    assert bent.closest_scene.a == 'link2'
    assert bent.closest_scene.distance == pytest.approx(0.002, abs=1e-6)
    assert not checker.check(np.array([0.0, 0.0])).scene_collision


def test_link_pose_of_the_tip_chain_matches_fk(panda: CollisionChecker) -> None:
    rng = np.random.default_rng(4)
    for q in panda.model.random_configurations(5, rng):
        # panda_hand hangs off link 7 through fixed joints: its pose is FK up to the TCP
        # offset (0.1034 m along the hand's z axis).
        hand = panda.link_poses(q)['panda_hand']
        tcp = panda.model.fk(q)
        assert np.allclose(hand[:3, :3], tcp[:3, :3], atol=1e-9)
        assert np.allclose(hand[:3, 3] + 0.1034 * hand[:3, 2], tcp[:3, 3], atol=1e-9)


# ---------------------------------------------------------------------- self-collision
def test_home_poses_of_panda_and_ur5_are_free(panda: CollisionChecker,
                                              ur5: CollisionChecker) -> None:
    for checker in (panda, ur5):
        assert not checker.warnings, checker.warnings
        report = checker.check(checker.home)
        assert not report.collides, report.message
        assert report.closest_self is not None and report.closest_self.distance > 0.0


def _hull_equations(checker: CollisionChecker, link: str, q: np.ndarray) -> np.ndarray:
    from scipy.spatial import ConvexHull
    body = next(b for b in checker.bodies.bodies if b.name == link)
    points = []
    for shape in body.shapes:
        import trimesh
        mesh = trimesh.load(shape.dimensions['file'], force='mesh')
        local = np.c_[np.asarray(mesh.vertices), np.ones(len(mesh.vertices))]
        points.append((checker.link_poses(q)[link] @ shape.origin @ local.T).T[:, :3])
    return np.vstack(points), ConvexHull(np.vstack(points)).equations


def test_folded_panda_collides_with_itself(panda: CollisionChecker) -> None:
    folded = np.array([0.0, 1.2, 0.0, -3.0, 0.0, 0.5, 0.0])   # elbow shut, wrist on link 1
    report = panda.check(folded)
    assert report.self_collision and report.collides
    pairs = {frozenset((c.a, c.b)) for c in report.contacts}
    assert frozenset(('panda_link1', 'panda_link7')) in pairs
    # Independently of the collision library: vertices of link 7's mesh lie inside the
    # convex hull of link 1's mesh at this pose.
    points7, _ = _hull_equations(panda, 'panda_link7', folded)
    _, planes1 = _hull_equations(panda, 'panda_link1', folded)
    inside = np.all(points7 @ planes1[:, :3].T + planes1[:, 3] < 0.0, axis=1)
    assert inside.any()
    assert not panda.is_free(folded)
    # Elbow open again: the same arm is clear.
    assert panda.is_free(np.array([0.0, 1.2, 0.0, -1.5, 0.0, 0.5, 0.0]))


def test_allowed_pairs_are_computed_and_plain_data(panda: CollisionChecker) -> None:
    pairs = panda.allowed_pairs()
    assert all(isinstance(a, str) and isinstance(b, str) and reason in
               ('adjacent', 'default', 'always', 'never') for a, b, reason in pairs)
    reasons = {frozenset((a, b)): reason for a, b, reason in pairs}
    for index in range(1, 7):
        assert reasons[frozenset((f'panda_link{index}', f'panda_link{index + 1}'))] == \
            'adjacent'
    # The hand is adjacent to link 7 across the shapeless link 8.
    assert reasons[frozenset(('panda_hand', 'panda_link7'))] == 'adjacent'
    # The fold above stays checked.
    assert frozenset(('panda_link1', 'panda_link7')) not in reasons
    checked = {frozenset(p) for p in panda.checked_pairs}
    assert not checked & set(reasons)


def test_allowed_pairs_from_the_config_override_the_computation(panda: CollisionChecker
                                                                ) -> None:
    pairs = panda.allowed_pairs() + [['panda_link1', 'panda_link7', 'user']]
    checker = real_checker('panda', config={'allowed_pairs': pairs})
    assert checker.allowed_pairs() == pairs
    folded = np.array([0.0, 1.2, 0.0, -3.0, 0.0, 0.5, 0.0])
    report = checker.check(folded)
    assert all({c.a, c.b} != {'panda_link1', 'panda_link7'} for c in report.contacts)
    with pytest.raises(ValueError, match='not a link'):
        real_checker('panda', config={'allowed_pairs': [['panda_link1', 'nowhere']]})
    with pytest.raises(CollisionConfigError, match='reason'):
        real_checker('panda', config={'allowed_pairs': [['panda_link1', 'panda_link2', 'x']]})


def test_skip_never_keeps_more_pairs_checked() -> None:
    checker = real_checker('ur5', samples=200)
    everything = compute_allowed_pairs(checker, 200, skip_never=False)
    assert all(reason != 'never' for _, _, reason in everything)
    assert len(everything) <= len(checker.allowed_pairs())


# ---------------------------------------------------------------------- missing meshes
def test_missing_mesh_warns_and_falls_back(caplog: pytest.LogCaptureFixture) -> None:
    urdf = TOY_URDF.replace('<box size="0.1 0.1 0.4"/>',
                            '<mesh filename="package://nowhere/meshes/link1.stl"/>')
    with caplog.at_level(logging.WARNING, logger='arm_ik.collision'):
        checker = toy_checker_from(urdf)
    assert any('nowhere/meshes/link1.stl not found' in w for w in checker.warnings)
    assert any('not found' in record.getMessage() for record in caplog.records)
    body = next(b for b in checker.bodies.bodies if b.name == 'link1')
    assert body.shapes[0].kind == 'capsule' and body.shapes[0].note.startswith('fallback')
    # The fallback still collides: a 0.04 m capsule along the z axis from 0 to 0.4 m.
    checker.scene.add(box('crate', 0.04 + 0.1 - 0.001))
    assert checker.check(np.zeros(2)).scene_collision
    checker.scene.move('crate', {'xyz': [0.04 + 0.1 + 0.001, 0.0, 0.2]})
    assert not checker.check(np.zeros(2)).scene_collision


def test_missing_mesh_uses_the_configured_fallback() -> None:
    urdf = TOY_URDF.replace('<box size="0.1 0.1 0.4"/>',
                            '<mesh filename="file:///no/such/link1.stl"/>')
    config = {'fallback_shapes': {'link1': {'type': 'box', 'size': [0.3, 0.3, 0.4],
                                            'xyz': [0, 0, 0]}}}
    checker = toy_checker_from(urdf, config=config)
    body = next(b for b in checker.bodies.bodies if b.name == 'link1')
    assert body.shapes[0].kind == 'box' and body.shapes[0].dimensions['size'][0] == 0.3
    checker.scene.add(box('crate', 0.15 + 0.1 + 0.001))   # box face at 0.15 (+ 1 mm)
    assert checker.check(np.zeros(2)).closest_scene.distance == pytest.approx(0.001, abs=1e-6)


def toy_checker_from(urdf: str, **kwargs) -> CollisionChecker:
    return CollisionChecker(ArmModel.from_urdf(urdf, 'base', 'tip'), urdf, samples=50,
                            **kwargs)


# ---------------------------------------------------------------------- the scene
BAD_OBJECTS = [
    ({'id': 'a', 'type': 'box', 'size': [0.1, float('nan'), 0.1]}, 'finite'),
    ({'id': 'a', 'type': 'box', 'size': [0.1, float('inf'), 0.1]}, 'finite'),
    ({'id': 'a', 'type': 'box', 'size': [0.1, -0.1, 0.1]}, '> 0'),
    ({'id': 'a', 'type': 'sphere', 'radius': 0.0}, '> 0'),
    ({'id': 'a', 'type': 'cylinder', 'radius': 0.1, 'length': -1}, '> 0'),
    ({'id': 'a', 'type': 'box', 'size': [0.1, 0.1]}, 'three'),
    ({'id': 'a', 'type': 'sphere', 'radius': 0.1, 'pose': {'xyz': [0, float('nan'), 0]}},
     'finite'),
    ({'id': 'a', 'type': 'sphere', 'radius': 0.1, 'frame': 'map'}, 'frame "map" is unknown'),
    ({'id': 'a', 'type': 'cone', 'radius': 0.1}, 'type must be'),
    ({'id': '', 'type': 'sphere', 'radius': 0.1}, 'id'),
    ({'id': 'a', 'type': 'sphere', 'radius': 0.1, 'size': [1, 1, 1]}, 'not used by a sphere'),
    ({'id': 'a', 'type': 'mesh', 'file': 'file:///no/such/mesh.stl'}, 'not found'),
    ({'id': 'a', 'type': 'sphere', 'radius': 0.1, 'pose': {'quaternion': [0, 0, 0, 0]}},
     'zero'),
]


@pytest.mark.parametrize('spec, reason', BAD_OBJECTS)
def test_bad_scene_input_is_refused_and_nothing_is_lost(spec: dict, reason: str) -> None:
    scene = Scene('base')
    scene.add(box('kept', 1.0))
    before, version = scene.as_list(), scene.version
    with pytest.raises(SceneError, match=reason):
        scene.add(spec)
    assert scene.as_list() == before and scene.version == version


def test_a_mesh_that_does_not_load_is_refused(tmp_path: Path) -> None:
    broken = tmp_path / 'broken.stl'
    broken.write_text('solid nothing\nthis is not an stl\n')
    scene = Scene('base', [tmp_path])
    scene.add(box('kept', 1.0))
    before = scene.as_list()
    with pytest.raises(SceneError, match='broken.stl'):
        scene.add({'id': 'part', 'type': 'mesh', 'file': 'broken.stl'})
    assert scene.as_list() == before


def test_move_and_remove_refuse_unknown_ids_and_bad_poses() -> None:
    scene = Scene('base')
    scene.add(box('kept', 1.0))
    before, version = scene.as_list(), scene.version
    with pytest.raises(SceneError, match='no scene object "ghost"'):
        scene.move('ghost', {'xyz': [0, 0, 0]})
    with pytest.raises(SceneError, match='no scene object "ghost"'):
        scene.remove('ghost')
    with pytest.raises(SceneError, match='finite'):
        scene.move('kept', {'xyz': [0, 0, float('inf')]})
    with pytest.raises(SceneError, match='already exists'):
        scene.add(box('kept', 2.0))
    assert scene.as_list() == before and scene.version == version


def test_yaml_scene_loads_all_or_nothing(tmp_path: Path) -> None:
    good = tmp_path / 'scene.yaml'
    good.write_text('frame: base\nobjects:\n'
                    '  - {id: table, type: box, size: [1, 1, 0.02], pose: {xyz: [0, 0, -0.01]}}\n'
                    '  - {id: post, type: cylinder, radius: 0.05, length: 1.0,\n'
                    '     pose: {xyz: [0.5, 0, 0.5], quaternion: [0, 0, 0, 1]}}\n')
    scene = Scene('base')
    assert [item.id for item in scene.load_yaml(good)] == ['table', 'post']
    bad = tmp_path / 'bad.yaml'
    bad.write_text('- {id: ball, type: sphere, radius: 0.1}\n'
                   '- {id: hole, type: sphere, radius: -0.1}\n')
    with pytest.raises(SceneError, match='hole'):
        scene.load_yaml(bad)
    assert scene.ids == ('table', 'post')


def test_scene_changes_reach_the_checker(ur5: CollisionChecker) -> None:
    scene = Scene(ur5.model.base_link)
    checker = real_checker('ur5', scene=scene, config={'allowed_pairs': ur5.allowed_pairs()})
    home = checker.home
    tip = checker.model.fk(home)[:3, 3]
    assert checker.check(home).closest_scene is None
    scene.add({'id': 'ball', 'type': 'sphere', 'radius': 0.05, 'pose': {'xyz': tip.tolist()}})
    assert checker.check(home).scene_collision
    scene.move('ball', {'xyz': (tip + [0.0, 0.0, 0.5]).tolist()})
    report = checker.check(home)
    assert not report.collides and report.closest_scene.b == 'ball'
    scene.remove('ball')
    assert checker.check(home).closest_scene is None


def test_scene_mesh_as_triangles_and_as_hull(ur5: CollisionChecker) -> None:
    arm = REAL_ARMS['ur5']
    mesh = arm.path.parent.parent / 'meshes' / 'ur5' / 'collision' / 'base.stl'
    scene = Scene(ur5.model.base_link)
    checker = real_checker('ur5', scene=scene, config={'allowed_pairs': ur5.allowed_pairs()})
    tip = checker.model.fk(checker.home)[:3, 3]
    for convex in (False, True):
        scene.add({'id': 'part', 'type': 'mesh', 'file': f'file://{mesh}', 'convex': convex,
                   'pose': {'xyz': tip.tolist()}})
        assert checker.check(checker.home).scene_collision
        scene.move('part', {'xyz': (tip + [0.0, 0.0, 0.6]).tolist()})
        assert checker.is_free(checker.home)
        scene.remove('part')


# A carriage (a 0.1 m cube) sliding along x on a 1 m rail, then a 0.3 m arm turning about z.
RAIL_URDF = """<?xml version="1.0"?>
<robot name="rail">
  <link name="base"/>
  <link name="carriage">
    <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>
  </link>
  <link name="arm">
    <collision><origin xyz="0.15 0 0.1"/><geometry><box size="0.3 0.04 0.04"/></geometry>
    </collision>
  </link>
  <link name="tip"/>
  <joint name="slide" type="prismatic"><parent link="base"/><child link="carriage"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="1" velocity="0.3" effort="1"/></joint>
  <joint name="turn" type="revolute"><parent link="carriage"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" velocity="1" effort="1"/></joint>
  <joint name="jt" type="fixed"><parent link="arm"/><child link="tip"/>
    <origin xyz="0.3 0 0.1"/></joint>
</robot>
"""


def test_a_prismatic_joint_slides_its_links_into_the_scene() -> None:
    """The carriage moves along the rail (it does not turn about it): a crate 0.55-0.65 m
    along x is 5 cm from it at 0.45 m of travel and in contact at 0.6 m."""
    model = ArmModel.from_urdf(RAIL_URDF, 'base', 'tip')
    checker = CollisionChecker(model, RAIL_URDF, samples=50)
    checker.scene.add({'id': 'crate', 'type': 'box', 'size': [0.1, 0.1, 0.1],
                       'pose': {'xyz': [0.6, 0.0, 0.0]}})
    report = checker.check([0.45, math.pi])       # the arm turned away from the crate
    assert not report.collides
    assert report.closest_scene.a == 'carriage'
    assert report.closest_scene.distance == pytest.approx(0.05, abs=1e-6)
    assert not checker.is_free([0.6, math.pi]) and checker.check([0.6, math.pi]).collides
    assert not checker.check_path([[0.0, math.pi], [0.6, math.pi]], 0.01).free
    # A slide moves every point by its travel; a turn after it sweeps the 0.3 m arm.
    assert checker.max_link_motion([0.0, 0.0], [0.3, 0.0]) == pytest.approx(0.3)
    assert checker.max_link_motion([0.0, 0.0], [0.0, 0.5]) >= 0.5 * 0.3


# ---------------------------------------------------------------------- paths
def test_max_link_motion_bounds_every_shape_point(panda: CollisionChecker) -> None:
    rng = np.random.default_rng(7)
    for _ in range(5):
        q_a, q_b = panda.model.random_configurations(2, rng)
        bound = panda.max_link_motion(q_a, q_b)
        start = panda.shape_poses(q_a)
        # Points on each shape's bounding sphere along its axes (the farthest of the shape).
        offsets = np.vstack([np.zeros(3), np.eye(3), -np.eye(3)])
        worst = 0.0
        for s in np.linspace(0.0, 1.0, 50):
            poses = panda.shape_poses(q_a + s * (q_b - q_a))
            for index, shape in enumerate(panda._shapes):
                local = shape.centre + shape.radius * offsets
                moved = (poses[index, :3, :3] @ local.T).T + poses[index, :3, 3]
                first = (start[index, :3, :3] @ local.T).T + start[index, :3, 3]
                worst = max(worst, float(np.max(np.linalg.norm(moved - first, axis=1))))
        assert worst <= bound
        assert bound < 20 * worst   # a bound, not a vacuous number


def test_check_path_is_dense_and_finds_the_box(ur5: CollisionChecker) -> None:
    scene = Scene(ur5.model.base_link)
    checker = real_checker('ur5', scene=scene, config={'allowed_pairs': ur5.allowed_pairs()})
    start = np.array([0.0, -1.57, 1.57, -1.57, -1.57, 0.0])
    goal = start + np.array([1.5, 0, 0, 0, 0, 0])
    assert checker.is_free(start) and checker.is_free(goal)
    assert checker.check_path([start, goal], 0.01).free
    middle = checker.link_poses(start + (goal - start) / 2)['wrist_2_link'][:3, 3]
    scene.add({'id': 'block', 'type': 'box', 'size': [0.1, 0.1, 0.1],
               'pose': {'xyz': middle.tolist()}})
    assert checker.is_free(start) and checker.is_free(goal)
    path = checker.check_path([start, goal], 0.01)
    assert not path.free and path.segment == 0 and path.report.scene_collision
    samples, _ = checker.densify([start, goal], 0.01)
    steps = [checker.max_link_motion(a, b) for a, b in zip(samples, samples[1:])]
    assert max(steps) <= 0.01 + 1e-12
    # Without densifying, the two end poses alone say nothing is in the way.
    assert checker.check_path([start, goal], None).free


# ---------------------------------------------------------------------- planning
def test_ur5_plans_round_a_box_that_blocks_the_straight_path(ur5: CollisionChecker) -> None:
    pytest.importorskip('ompl')
    from arm_kinematics.motion.planning.sampling import NO_PATH, plan_joint_path, SUCCESS
    scene = Scene(ur5.model.base_link)
    checker = real_checker('ur5', scene=scene, config={'allowed_pairs': ur5.allowed_pairs()})
    start = np.array([0.0, -1.57, 1.57, -1.57, -1.57, 0.0])
    goal = start + np.array([1.5, 0, 0, 0, 0, 0])
    middle = checker.link_poses(start + (goal - start) / 2)['wrist_2_link'][:3, 3]
    scene.add({'id': 'block', 'type': 'box', 'size': [0.1, 0.1, 0.1],
               'pose': {'xyz': middle.tolist()}})
    assert not checker.check_path([start, goal], 0.01).free
    result = plan_joint_path(checker, start, goal, time_budget=5.0, max_step=0.01, seed=1)
    assert result.status == SUCCESS, result.reason
    assert not result.straight and len(result.path) >= 3
    assert np.allclose(result.path[0], start) and np.allclose(result.path[-1], goal)
    # Every dense sample clear, checked here on its own at half the planner's step.
    samples, _ = checker.densify(result.path, 0.005)
    assert all(not checker.check(q).collides for q in samples)
    assert all(checker.model.within_limits(q) for q in samples)
    # A goal inside the box: NO_PATH with the reason, nothing planned.
    scene.move('block', {'xyz': checker.link_poses(goal)['wrist_2_link'][:3, 3].tolist()})
    refused = plan_joint_path(checker, start, goal, time_budget=1.0)
    assert refused.status == NO_PATH and 'goal is in collision' in refused.reason
    assert refused.path.shape == (0, 6)


def test_a_clear_straight_path_is_returned_as_is(ur5: CollisionChecker) -> None:
    pytest.importorskip('ompl')
    from arm_kinematics.motion.planning.sampling import plan_joint_path, SUCCESS
    start = np.array([0.0, -1.57, 1.57, -1.57, -1.57, 0.0])
    goal = start + np.array([0.5, 0.2, 0, 0, 0, 0])
    result = plan_joint_path(ur5, start, goal)
    assert result.status == SUCCESS and result.straight and len(result.path) == 2


def test_no_path_when_a_wall_cuts_the_only_joint_that_moves_the_link() -> None:
    pytest.importorskip('ompl')
    from arm_kinematics.motion.planning.sampling import NO_PATH, plan_joint_path
    checker = toy_checker()
    # A thin wall on the +x axis from x = 0.06 m: link1's faces (0.05 m) clear it at
    # q1 = 0 and π/2, its corners (0.0707 m) hit it at π/4 on the way: no rotation passes.
    checker.scene.add({'id': 'wall', 'type': 'box', 'size': [0.24, 0.01, 0.4],
                       'pose': {'xyz': [0.18, 0.0, 0.2]}})
    start, goal = np.array([0.0, 0.0]), np.array([math.pi / 2, 0.0])
    assert checker.is_free(start) and checker.is_free(goal)
    assert not checker.is_free(np.array([math.pi / 4, 0.0]))
    result = plan_joint_path(checker, start, goal, time_budget=0.3)
    assert result.status == NO_PATH and 'no collision-free path found' in result.reason


def test_removing_and_adding_objects_between_checks_uses_the_new_shapes() -> None:
    checker = toy_checker()
    checker.scene.add(box('a', 1.0))
    assert not checker.check(np.zeros(2)).collides
    for round_ in range(20):
        # Remove and add in one go (no check in between), then a new scene altogether: the
        # checker must never answer with a freed object's shape.
        checker.scene.remove(checker.scene.ids[0])
        checker.scene.add({'id': f'ball{round_}', 'type': 'sphere', 'radius': 0.06,
                           'pose': {'xyz': [0.1, 0.0, 0.2]}})
        report = checker.check(np.zeros(2))
        assert report.scene_collision and report.closest_scene.b == f'ball{round_}'
        assert report.closest_scene.distance == pytest.approx(0.1 - 0.06 - 0.05, abs=1e-6)
    fresh = Scene('base')
    fresh.add(box('far', 1.0))
    checker.scene = fresh
    assert not checker.check(np.zeros(2)).collides


def test_put_adds_or_replaces_and_a_copy_keeps_its_own_objects() -> None:
    scene = Scene('base')
    first, replaced = scene.put({'id': 'b', 'type': 'box', 'size': [0.1, 0.1, 0.1]})
    assert not replaced and scene.version == 1
    snapshot = scene.copy()
    bigger, replaced = scene.put({'id': 'b', 'type': 'sphere', 'radius': 0.3,
                                  'pose': {'xyz': [1, 0, 0]}})
    assert replaced and scene.get('b') is bigger and scene.version == 2
    assert snapshot.get('b') is first and snapshot.version == 1 and len(snapshot) == 1
    with pytest.raises(SceneError, match='radius'):
        scene.put({'id': 'b', 'type': 'sphere', 'radius': -1.0})
    assert scene.get('b') is bigger and scene.version == 2


def test_blocked_masks_give_the_verdicts_of_check_pose_by_pose(ur5: CollisionChecker) -> None:
    """A joint map's cells: the batched self and scene verdicts equal ``check`` per pose,
    across blocks, with a scene box the arm sweeps through and poses folded onto itself."""
    checker = ur5.twin()
    checker.scene = Scene(checker.model.base_link)
    checker.scene.add({'id': 'crate', 'type': 'box', 'size': [0.3, 0.3, 0.3],
                       'pose': {'xyz': [0.45, 0.1, 0.3]}})
    rng = np.random.default_rng(7)
    qs = checker.model.random_configurations(700, rng)       # two blocks of MASK_BLOCK
    qs[::50, 2] = 3.0                                         # the forearm folded back
    own, scene = checker.blocked_masks(qs)
    reports = [checker.check(q) for q in qs]
    assert own.tolist() == [r.self_collision for r in reports]
    assert scene.tolist() == [r.scene_collision for r in reports]
    assert 0 < own.sum() < len(qs) and 0 < scene.sum() < len(qs)     # both kinds occur


def test_a_twin_checks_in_another_thread_without_touching_the_first(ur5: CollisionChecker
                                                                    ) -> None:
    """The joint map's checker: same shapes and allowed pairs, its own queries and scene,
    so a scene given to the twin changes nothing for the original."""
    twin = ur5.twin()
    assert twin.checked_pairs == ur5.checked_pairs and twin.allowed == ur5.allowed
    assert all(a is not b for a, b in zip(twin._self.queries, ur5._self.queries))
    twin.scene = Scene(ur5.model.base_link)
    home = ur5.model.clamp(np.zeros(ur5.model.dof))
    link = ur5.link_poses(home)[ur5.links[-1]][:3, 3]
    twin.scene.add({'id': 'on_the_tool', 'type': 'sphere', 'radius': 0.05,
                    'pose': {'xyz': link.tolist()}})
    assert twin.check(home).scene_collision
    assert not ur5.check(home).scene_collision and len(ur5.scene) == 0
