"""Scene messages <-> the core Scene, without a ROS graph: what a node publishes rebuilds the
same scene in another node, and a message the Scene would misread is refused with the reason."""

from __future__ import annotations

import math

from geometry_msgs.msg import Pose
import numpy as np
import pytest
from visualization_msgs.msg import Marker

from arm_ik.nodes import scene_messages
from arm_interfaces.msg import SceneObject
from arm_kinematics.common.transforms import rpy_to_matrix
from arm_kinematics.scene.objects import Scene, SceneError

OBJECTS = [
    {'id': 'table', 'type': 'box', 'size': [1.0, 0.6, 0.02],
     'pose': {'xyz': [0.5, 0.0, -0.01], 'rpy': [0.0, 0.0, 0.3]}},
    {'id': 'ball', 'type': 'sphere', 'radius': 0.1, 'pose': {'xyz': [0.3, 0.2, 0.4]}},
    {'id': 'post', 'type': 'cylinder', 'radius': 0.05, 'length': 0.5,
     'pose': {'xyz': [-0.3, 0.2, 0.25], 'rpy': [0.4, -0.2, 1.0]}},
]


def test_a_published_scene_rebuilds_the_same_scene() -> None:
    scene = Scene('base_link')
    scene.add_all(OBJECTS)
    scene.move('ball', {'xyz': [0.1, 0.1, 0.1]})
    message = scene_messages.scene_message(scene, None)
    assert message.version == scene.version == 2 and message.header.frame_id == 'base_link'
    assert [(o.id, o.type, list(o.size)) for o in message.objects] == [
        ('table', 'box', [1.0, 0.6, 0.02]), ('ball', 'sphere', [0.1]),
        ('post', 'cylinder', [0.05, 0.5])]
    copy = scene_messages.scene_from_message(message, 'base_link')
    assert copy.version == scene.version and copy.ids == scene.ids
    for a, b in zip(scene.objects, copy.objects):
        np.testing.assert_allclose(b.pose, a.pose, atol=1e-12)
        assert b.shape.kind == a.shape.kind
        np.testing.assert_allclose(b.shape.half_extents, a.shape.half_extents, atol=1e-12)
    markers = scene_messages.scene_markers(scene, None).markers
    assert markers[0].action == Marker.DELETEALL
    assert [m.type for m in markers[1:]] == [Marker.CUBE, Marker.SPHERE, Marker.CYLINDER]
    cylinder = markers[3]
    assert (cylinder.scale.x, cylinder.scale.z) == pytest.approx((0.1, 0.5))
    q = cylinder.pose.orientation
    np.testing.assert_allclose(
        scene_messages.pose_spec(cylinder.pose)['quaternion'], [q.x, q.y, q.z, q.w])
    expected = rpy_to_matrix(0.4, -0.2, 1.0)
    rebuilt = Scene('base_link').build({'id': 'x', 'type': 'sphere', 'radius': 1.0,
                                        'pose': scene_messages.pose_spec(cylinder.pose)})
    np.testing.assert_allclose(rebuilt.pose[:3, :3], expected, atol=1e-12)


@pytest.mark.parametrize(('fields', 'reason'), [
    ({'type': 'box', 'size': [0.1, 0.1]}, '3 numbers'),
    ({'type': 'sphere', 'size': []}, 'size [radius]'),
    ({'type': 'cylinder', 'size': [0.1]}, 'size [radius, length]'),
    ({'type': 'mesh', 'size': [0.1], 'mesh_file': 'a.stl'}, 'takes no size'),
])
def test_a_size_of_the_wrong_count_is_refused(fields: dict, reason: str) -> None:
    with pytest.raises(SceneError, match=reason.replace('[', r'\[')):
        scene_messages.spec_from_message(SceneObject(id='o', **fields))


def test_the_message_pose_is_checked_by_the_scene() -> None:
    pose = Pose()
    pose.position.x = math.inf
    spec = scene_messages.spec_from_message(SceneObject(id='o', type='sphere', size=[0.1],
                                                        pose=pose))
    with pytest.raises(SceneError, match='finite'):
        Scene('base_link').build(spec)
    zero = Pose()
    zero.orientation.w = 0.0
    spec = scene_messages.spec_from_message(SceneObject(id='o', type='sphere', size=[0.1],
                                                        pose=zero))
    with pytest.raises(SceneError, match='quaternion is zero'):
        Scene('base_link').build(spec)


def test_a_mesh_carries_its_bounds_and_a_viewer_gets_every_object_it_can_read(tmp_path):
    """object_message measures a mesh's box (mesh_bounds) for viewers without the file;
    object_entries gives a viewer each object's mapping and bounds, and the reason for each
    one whose sizes do not fit its type (the others are still drawn)."""
    trimesh = pytest.importorskip('trimesh')
    path = tmp_path / 'plate.stl'
    trimesh.creation.box(extents=(0.4, 0.2, 0.02)).export(path)
    scene = Scene('base_link')
    scene.add({'id': 'plate', 'type': 'mesh', 'file': str(path), 'scale': [1.0, 2.0, 1.0],
               'pose': {'xyz': [0.5, 0.0, 0.1]}})
    scene.add(OBJECTS[1])
    message = scene_messages.scene_message(scene, None)
    plate, ball = message.objects
    assert list(plate.mesh_bounds) == pytest.approx([-0.2, -0.2, -0.01, 0.2, 0.2, 0.01])
    assert list(ball.mesh_bounds) == []
    message.objects.append(SceneObject(id='flat', type='box', size=[0.1, 0.1]))
    entries, refused = scene_messages.object_entries(message)
    assert [(spec['id'], bounds) for spec, bounds in entries] == [
        ('plate', pytest.approx(list(plate.mesh_bounds))), ('ball', [])]
    assert len(refused) == 1 and 'flat' in refused[0] and '3 numbers' in refused[0]
