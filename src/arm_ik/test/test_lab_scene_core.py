"""The lab's scene objects and collision witness, without ROS: which objects are drawn and how
(lab.scene_objects), what the 3D view holds after adds, moves and removals (lab.object_view,
on a real viser server), the monitor's collision pairs (lab.collision_view) and the joint-map
image's collision cells."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from arm_ik.lab.collision_view import collision_text, collision_view, CollisionView, LinkMarks
from arm_ik.lab.colours import MAP_FLOOR, MAP_SCENE_CONTACT, MAP_SELF_COLLISION
from arm_ik.lab.joint_map_image import (
    CELL_SCENE_CONTACT,
    CELL_SELF_COLLISION,
    grid_from_arrays,
    render,
)
from arm_ik.lab.scene_objects import SceneDrawings
from arm_kinematics.common.transforms import make_transform, rpy_to_matrix

BOX = {'id': 'crate', 'type': 'box', 'size': [0.2, 0.3, 0.4],
       'pose': {'xyz': [0.5, 0.0, 0.2], 'rpy': [0.0, 0.0, 0.5]}}
SPHERE = {'id': 'ball', 'type': 'sphere', 'radius': 0.1, 'pose': {'xyz': [0.1, 0.2, 0.3]}}
CYLINDER = {'id': 'post', 'type': 'cylinder', 'radius': 0.05, 'length': 0.6,
            'pose': {'xyz': [-0.3, 0.0, 0.3]}}


@pytest.fixture
def stl(tmp_path: Path) -> Path:
    trimesh = pytest.importorskip('trimesh')
    path = tmp_path / 'block.stl'
    trimesh.creation.box(extents=(0.2, 0.1, 0.05)).export(path)
    return path


def test_primitives_are_drawn_with_their_sizes_and_poses():
    drawings, warnings = SceneDrawings('base_link').drawings(
        [(BOX, []), (SPHERE, []), (CYLINDER, [])])
    assert warnings == []
    assert [(d.id, d.kind, d.size) for d in drawings] == [
        ('crate', 'box', (0.2, 0.3, 0.4)), ('ball', 'sphere', (0.1,)),
        ('post', 'cylinder', (0.05, 0.6))]
    crate = drawings[0]
    assert crate.position == pytest.approx((0.5, 0.0, 0.2))
    w, x, y, z = crate.wxyz                       # a turn of 0.5 rad about z
    assert (w, x, y, z) == pytest.approx((math.cos(0.25), 0.0, 0.0, math.sin(0.25)))


def test_a_mesh_is_drawn_as_its_scaled_triangles_and_loaded_once(stl: Path):
    spec = {'id': 'part', 'type': 'mesh', 'file': str(stl), 'scale': [2.0, 1.0, 1.0],
            'pose': {'xyz': [0.0, 0.5, 0.1]}}
    scene = SceneDrawings('base_link')
    (part,), warnings = scene.drawings([(spec, [])])
    assert warnings == [] and part.kind == 'mesh' and len(part.faces) == 12
    assert np.ptp(part.vertices, axis=0) == pytest.approx([0.4, 0.1, 0.05], abs=1e-6)
    moved = dict(spec, pose={'xyz': [0.3, 0.5, 0.1]})
    (again,), _ = scene.drawings([(moved, [])])
    assert again.vertices is part.vertices                    # cached: a move loads nothing
    assert again.shape_key == part.shape_key and again.position == pytest.approx((0.3, 0.5, 0.1))


def test_a_mesh_not_found_here_is_its_bounding_box_or_left_out_with_a_warning():
    spec = {'id': 'bin', 'type': 'mesh', 'file': 'package://nowhere/bin.stl',
            'pose': {'xyz': [1.0, 0.0, 0.0], 'rpy': [0.0, 0.0, math.pi / 2]}}
    bounds = [-0.1, -0.2, 0.0, 0.3, 0.2, 0.5]
    (box,), warnings = SceneDrawings('base_link').drawings([(spec, bounds)])
    assert box.kind == 'bounds' and box.size == pytest.approx((0.4, 0.4, 0.5))
    # The box's centre (0.1, 0, 0.25) in the object's frame, turned a quarter about z.
    assert box.position == pytest.approx((1.0, 0.1, 0.25))
    assert len(warnings) == 1 and 'bin.stl not found here' in warnings[0] and \
        'bounding box' in warnings[0]
    drawn, warnings = SceneDrawings('base_link').drawings([(spec, []), (SPHERE, [])])
    assert [d.id for d in drawn] == ['ball']
    assert 'no mesh_bounds' in warnings[0] and 'not drawn' in warnings[0]
    flat = [0.0, 0.0, 0.0, 1.0, 1.0, 0.0]                       # no volume: not a box
    assert SceneDrawings('base_link').drawings([(spec, flat)])[0] == []


def test_a_file_that_is_not_a_mesh_is_drawn_as_its_box(tmp_path: Path):
    bad = tmp_path / 'broken.stl'
    bad.write_text('solid nothing\nendsolid nothing\n')
    spec = {'id': 'odd', 'type': 'mesh', 'file': str(bad)}
    (odd,), warnings = SceneDrawings('base_link').drawings([(spec, [0, 0, 0, 1, 1, 1])])
    assert odd.kind == 'bounds' and 'broken.stl' in warnings[0]


@pytest.mark.parametrize('spec, words', [
    ({**SPHERE, 'pose': {'xyz': [math.nan, 0.0, 0.0]}}, 'finite'),
    ({**SPHERE, 'pose': {'xyz': [0, 0, 0], 'quaternion': [0, 0, 0, 0]}}, 'quaternion is zero'),
    ({'id': 'thing', 'type': 'cone', 'radius': 0.1}, 'type must be one of'),
    ({**BOX, 'size': [0.2, -0.3, 0.4]}, 'finite number > 0'),
    ({**SPHERE, 'frame': 'world'}, 'frame "world" is unknown'),
    ({**SPHERE, 'id': ''}, 'non-empty string id'),
    ({'id': 'm', 'type': 'mesh', 'file': 'x.stl', 'scale': [1.0, math.inf, 1.0]}, 'scale'),
    ('not a mapping', 'must be a mapping'),
])
def test_a_bad_object_is_left_out_with_a_warning_and_the_others_drawn(spec, words):
    drawn, warnings = SceneDrawings('base_link').drawings([(spec, []), (BOX, [])])
    assert [d.id for d in drawn] == ['crate']
    assert len(warnings) == 1 and words in warnings[0] and 'not drawn' in warnings[0]


def test_objects_with_a_rule_are_left_to_the_floor_and_ball_code_and_ids_are_unique():
    floor = {'id': 'floor', 'type': 'box', 'size': [2, 2, 0.01], 'rule': 'floor'}
    drawn, warnings = SceneDrawings('base_link').drawings(
        [(floor, []), (BOX, []), (dict(BOX, size=[1, 1, 1]), [])])
    assert [(d.id, d.size) for d in drawn] == [('crate', (0.2, 0.3, 0.4))]
    assert warnings == ['scene object "crate" is given twice; the second is not drawn']


def test_the_view_adds_moves_redraws_and_removes_objects(viser_server, stl: Path):
    from arm_ik.lab.colours import SCENE_OBJECT, TOUCHING
    from arm_ik.lab.object_view import ObjectView
    view = ObjectView(viser_server.scene)
    scene = SceneDrawings('base_link')
    part = {'id': 'part', 'type': 'mesh', 'file': str(stl)}
    missing = {'id': 'bin', 'type': 'mesh', 'file': 'nowhere.stl'}
    view.show(scene.drawings([(BOX, []), (SPHERE, []), (CYLINDER, []), (part, []),
                              (missing, [0, 0, 0, 0.1, 0.1, 0.1])])[0])
    kinds = {k: type(h).__name__ for k, h in view.handles.items()}
    assert kinds == {'crate': 'BoxHandle', 'ball': 'IcosphereHandle',
                     'post': 'CylinderHandle', 'part': 'MeshHandle', 'bin': 'BoxHandle'}
    assert view.handles['bin'].wireframe and not view.handles['crate'].wireframe
    assert tuple(view.handles['crate'].dimensions) == pytest.approx((0.2, 0.3, 0.4))
    crate, ball = view.handles['crate'], view.handles['ball']
    # The crate moves (same node), the ball grows (drawn anew), the rest are removed.
    moved = dict(BOX, pose={'xyz': [0.0, 0.7, 0.2]})
    view.show(scene.drawings([(moved, []), (dict(SPHERE, radius=0.2), [])])[0])
    assert set(view.handles) == {'crate', 'ball'}
    assert view.handles['crate'] is crate and tuple(crate.position) == pytest.approx(
        (0.0, 0.7, 0.2))
    assert view.handles['ball'] is not ball and view.handles['ball'].radius == 0.2
    # Objects in contact turn red, and back; a link in contact is labelled where it is.
    view.set_collision({'crate'}, [('forearm', '✕ forearm: crate', np.array([0.1, 0.2, 0.3]))])
    assert tuple(view.handles['crate'].color) == TOUCHING
    assert tuple(view.handles['ball'].color) == SCENE_OBJECT
    assert view.labels == {'forearm': '✕ forearm: crate'}
    view.show(scene.drawings([(moved, []), (dict(SPHERE, radius=0.3), [])])[0])
    assert tuple(view.handles['crate'].color) == TOUCHING     # kept while touching
    view.set_collision(set(), [])
    assert tuple(view.handles['crate'].color) == SCENE_OBJECT and view.labels == {}
    view.show([])                                          # an empty scene clears them all
    assert view.handles == {}


def test_the_monitors_pairs_are_split_into_self_and_scene_contact():
    links = {'upper_arm', 'forearm', 'tool'}
    both = collision_view(True, True, True, ['upper_arm|tool', 'forearm|crate', 'garbage'],
                          'upper_arm|tool', -0.002, links)
    assert both.self_pairs == (('upper_arm', 'tool'),)
    assert both.scene_pairs == (('forearm', 'crate'),)
    assert both.objects == {'crate'}
    assert both.links == {'upper_arm': ['tool'], 'tool': ['upper_arm'], 'forearm': ['crate']}
    text = collision_text(both)
    assert 'self-collision upper_arm–tool' in text and 'scene contact forearm–crate' in text
    # One kind reported: every pair is of that kind (an object named like a link too).
    scene_only = collision_view(True, False, True, ['tool|forearm'], '', math.nan, links)
    assert scene_only.scene_pairs == (('tool', 'forearm'),) and not scene_only.self_pairs
    clear = collision_view(True, False, False, [], 'forearm|crate', 0.0123, links)
    assert collision_text(clear) == 'clear: closest forearm–crate at 12.3 mm'
    assert collision_text(collision_view(True, False, False, [], '', math.nan, links)) == \
        'clear (nothing to check)'
    stale = collision_view(False, True, True, ['upper_arm|tool'], '', 0.0, links)
    assert stale == CollisionView() and collision_text(stale) == '-'


def test_link_labels_sit_at_the_links_origins_as_the_checker_poses_them(load_arm):
    from arm_kinematics.scene.checker import CollisionChecker
    model = load_arm('six_axis')
    marks = LinkMarks(model)
    q = np.array([0.3, -0.4, 1.1, 0.2, -0.5, 0.7])
    checker = CollisionChecker(model, samples=20)
    poses = checker.link_poses(q)
    assert set(poses) <= marks.links
    view = collision_view(True, True, False, ['upper_arm_link|tool_link'], '', 0.0,
                          marks.links)
    placed = {link: (text, position) for link, text, position in marks.marks(view, q)}
    assert set(placed) == {'upper_arm_link', 'tool_link'}
    for link, (_, position) in placed.items():
        np.testing.assert_allclose(position, poses[link][:3, 3], atol=1e-12)
    assert placed['tool_link'][0] == '✕ tool_link: upper_arm_link'
    assert marks.marks(view, None) == [] and marks.marks(CollisionView(), q) == []


def test_joint_map_image_colours_collision_cells():
    cells = np.zeros((2, 3), dtype=np.uint8)
    cells[0, 0] = CELL_SELF_COLLISION
    cells[0, 1] = CELL_SCENE_CONTACT
    cells[0, 2] = CELL_SELF_COLLISION | 1                  # and below the floor: half each
    image = render(grid_from_arrays(0.0, 1.0, 2, 0.0, 1.0, 3, bytes(cells.ravel())),
                   cell_pixels=4)
    assert image[6, 1].tolist() == list(MAP_SELF_COLLISION)     # row 0 is drawn at the bottom
    assert image[6, 5].tolist() == list(MAP_SCENE_CONTACT)
    mixed = np.round(0.5 * (np.array(MAP_FLOOR) + np.array(MAP_SELF_COLLISION))).astype(int)
    assert image[6, 9].tolist() == mixed.tolist()


def test_a_pose_matrix_and_its_drawing_agree():
    pose = make_transform(rpy_to_matrix(0.3, -0.2, 1.0), np.array([0.1, 0.2, 0.3]))
    (sphere,), _ = SceneDrawings('base_link').drawings(
        [(dict(SPHERE, pose=pose.tolist()), [])])
    w, x, y, z = sphere.wxyz
    from arm_kinematics.common.transforms import quaternion_to_matrix
    np.testing.assert_allclose(quaternion_to_matrix(x, y, z, w), pose[:3, :3], atol=1e-12)
