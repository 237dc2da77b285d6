"""The front door's review fixes (issue 39's review): orientations must be proper rotations
(M4), ``package://`` meshes come from the package they name (M5), ``plan``/``path`` need
``start`` (should 8), ``with_safety`` keeps the scene and lazy members are built once under
concurrent first use (should 9, 11), ``Pose`` compares by value (should 12).
"""

from __future__ import annotations

import math
from pathlib import Path
import threading

import numpy as np
import pytest

from arm_kinematics.description.meshes import default_search_paths, resolve_mesh
from arm_kinematics.ik.result import ErrorCode
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.motion.path_request import PathCode
from arm_testing.real_arms import REAL_ARMS, UR5_BLOCKING_BOX

START = (0.0, -1.2, 1.2, -1.57, -1.57, 0.0)
GOAL = (1.6, -1.2, 1.2, -1.57, -1.57, 0.0)


@pytest.fixture(scope='module')
def ur5():
    from arm_kinematics import Arm
    return Arm.from_urdf(REAL_ARMS['ur5'].path)


# ---------------------------------------------------------------------- M4: rotations
@pytest.mark.parametrize('mirror', ['column', 'minus_identity'])
def test_a_mirror_image_is_refused_not_solved_for_another_pose(ur5, mirror):
    pose = ur5.fk(START)
    rotation = pose.rotation.copy()
    if mirror == 'column':
        rotation[:, 1] *= -1.0
    else:
        rotation = -np.eye(3)
    assert np.allclose(rotation @ rotation.T, np.eye(3)) and np.linalg.det(rotation) < 0
    answer = ur5.ik(pose.position, rotation, seed=START)
    assert answer.code == ErrorCode.INVALID_INPUT and answer.q is None
    assert 'not a proper rotation (determinant −1' in answer.message, answer.message
    # Every other entry point that takes a rotation says the same.
    assert ur5.ik_all(pose.position, rotation).code == ErrorCode.INVALID_INPUT
    planned = ur5.plan(position=pose.position, orientation=rotation, start=START)
    assert planned.code == MotionCode.INVALID_GOAL and 'proper rotation' in planned.message
    line = ur5.path([(pose.position, rotation)], start=START)
    assert line.code == PathCode.INVALID_INPUT and 'proper rotation' in line.message


def test_quaternions_are_normalised_or_refused_and_nan_is_refused(ur5):
    pose = ur5.fk(START)
    scaled = ur5.ik(pose.position, pose.quaternion * 3.0, seed=START)
    assert scaled.ok, scaled.message
    np.testing.assert_allclose(ur5.fk(scaled.q).matrix, pose.matrix, atol=1e-6)
    for bad, words in (([0.0, 0.0, 0.0, 0.0], 'has norm 0; give a unit quaternion'),
                       ([0.0, 0.0, 0.0, 1e-9], 'give a unit quaternion'),
                       ([0.0, math.nan, 0.0, 1.0], 'orientation (x, y, z, w)[1]'),
                       (np.full((3, 3), math.nan), 'holds NaN or inf')):
        answer = ur5.ik(pose.position, bad, seed=START)
        assert answer.code == ErrorCode.INVALID_INPUT and words in answer.message, answer
        planned = ur5.plan(position=pose.position, orientation=bad, start=START)
        assert planned.code == MotionCode.INVALID_GOAL and words in planned.message
    # A Pose built by hand goes through the same checks.
    from arm_kinematics.front.answers import Pose
    hand = Pose(pose.position, np.zeros(4))
    assert ur5.ik(hand).code == ErrorCode.INVALID_INPUT


# ---------------------------------------------------------------------- M5: meshes
def _package(folder: Path, name: str, meshes: tuple[str, ...] = ('base.stl',),
             xml: bool = True) -> Path:
    if xml:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / 'package.xml').write_text(f'<package format="3">\n  <name>{name}</name>\n'
                                            '</package>\n', encoding='utf-8')
    for mesh in meshes:
        path = folder / 'meshes' / mesh
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f'solid {name}\nendsolid {name}\n'.encode())
    urdf = folder / 'urdf' / f'{name}.urdf'
    urdf.parent.mkdir(parents=True, exist_ok=True)
    urdf.write_text('<robot name="r"/>', encoding='utf-8')
    return urdf


def test_package_uris_resolve_in_the_package_they_name(tmp_path, monkeypatch):
    for variable in ('AMENT_PREFIX_PATH', 'ROS_PACKAGE_PATH'):
        monkeypatch.delenv(variable, raising=False)
    src = tmp_path / 'ws' / 'src'
    urdf_a = _package(src / 'robot_a', 'robot_a')
    _package(src / 'robot_b', 'robot_b')
    paths = default_search_paths(urdf_a)
    # Before: robot_a/meshes/base.stl (the URDF's package), a wrong shape and no warning.
    assert resolve_mesh('package://robot_b/meshes/base.stl', paths) == \
        src / 'robot_b' / 'meshes' / 'base.stl'
    assert resolve_mesh('package://robot_a/meshes/base.stl', paths) == \
        src / 'robot_a' / 'meshes' / 'base.stl'
    # robot_b nowhere: not found (a capsule with a warning), never robot_a's file.
    assert resolve_mesh('package://robot_c/meshes/base.stl', paths) is None
    # An install prefix's share/<name>/ is found from any root.
    share = tmp_path / 'install' / 'share' / 'robot_c' / 'meshes' / 'base.stl'
    share.parent.mkdir(parents=True)
    share.write_bytes(b'solid c\nendsolid c\n')
    assert resolve_mesh('package://robot_c/meshes/base.stl',
                        [*paths, tmp_path / 'install']) == share


def test_a_package_cloned_under_another_folder_name_is_known_by_its_package_xml(tmp_path):
    urdf = _package(tmp_path / 'ws' / 'src' / 'robot_d-ros2', 'robot_d')
    paths = default_search_paths(urdf)
    assert resolve_mesh('package://robot_d/meshes/base.stl', paths) == \
        tmp_path / 'ws' / 'src' / 'robot_d-ros2' / 'meshes' / 'base.stl'
    # Without a package.xml naming it, that folder is not the package's.
    other = _package(tmp_path / 'elsewhere' / 'checkout', 'robot_e', xml=False)
    assert resolve_mesh('package://robot_e/meshes/base.stl',
                        default_search_paths(other)) is None
    # A folder given explicitly that is the package's own (by its name) is searched as such.
    assert resolve_mesh('package://checkout/meshes/base.stl', [other.parent.parent]) == \
        other.parent.parent / 'meshes' / 'base.stl'


# ---------------------------------------------------------------------- should 8: start
def test_plan_and_path_need_the_start(ur5):
    pose = ur5.fk(START)
    with pytest.raises(TypeError, match="'start'"):
        ur5.plan(GOAL)                                         # type: ignore[call-arg]
    with pytest.raises(TypeError, match="'start'"):
        ur5.path([pose.position])                              # type: ignore[call-arg]
    for answer in (ur5.plan(GOAL, start=None), ur5.path([pose.position], None)):
        assert not answer.ok and 'start is required' in answer.message, answer.message
    assert ur5.plan(GOAL, start=START).ok


# ---------------------------------------------------------------------- should 9, 11
def test_with_safety_keeps_the_scene_and_its_obstacles(ur5):
    ur5.scene.add(dict(UR5_BLOCKING_BOX))
    try:
        other = ur5.with_safety(ur5.safety.with_obstacle((5.0, 5.0, 5.0), 0.1))
        assert other is not ur5 and other.scene is ur5.scene
        assert 'box' in other.check((0.95, -1.2, 1.2, -1.57, -1.57, 0.0)).message
        assert other.ik_dispatcher().scene is ur5.scene
    finally:
        ur5.scene.remove(UR5_BLOCKING_BOX['id'])


def _together(count: int, work) -> list:
    """``work(i)`` in ``count`` threads released at once; their results in order (an error
    is raised here)."""
    barrier, results, errors = threading.Barrier(count), [None] * count, []

    def run(index: int) -> None:
        try:
            barrier.wait()
            results[index] = work(index)
        except BaseException as error:          # noqa: BLE001 (raised below, in the test)
            errors.append(error)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def test_concurrent_first_use_builds_one_scene_and_one_dispatcher():
    from arm_kinematics import Arm
    for _ in range(3):
        arm = Arm.from_urdf(REAL_ARMS['ur5'].path)
        # Half the threads ask for the scene, half for the dispatcher (which binds a scene).
        built = _together(6, lambda i, a=arm: a.ik_dispatcher() if i % 2 else a.scene)
        assert all(scene is arm.scene for scene in built[0::2])
        assert all(dispatcher is arm.ik_dispatcher() for dispatcher in built[1::2])
        assert arm.ik_dispatcher().scene is arm.scene


def test_fk_ik_and_check_from_several_threads_answer_as_from_one(ur5):
    rng = np.random.default_rng(11)
    poses = ur5.model.random_configurations(12, rng)
    expected = [(ur5.fk(q).matrix, ur5.ik(ur5.fk(q), seed=q).q, ur5.check(q).code)
                for q in poses]

    def work(index: int) -> list:
        return [(ur5.fk(q).matrix, ur5.ik(ur5.fk(q), seed=q).q, ur5.check(q).code)
                for q in np.roll(poses, index, axis=0)]
    for index, answers in enumerate(_together(4, work)):
        for (matrix, q, code), (m0, q0, c0) in zip(answers, np.roll(
                np.array(expected, dtype=object), index, axis=0)):
            np.testing.assert_array_equal(matrix, m0)
            assert (q is None and q0 is None) or np.array_equal(q, q0)
            assert code == c0


# ---------------------------------------------------------------------- should 12: Pose
def test_poses_compare_by_value_and_are_not_hashable(ur5):
    pose = ur5.fk(START)
    copy = ur5.fk(START)
    assert pose == copy and not (pose != copy)
    assert pose != ur5.fk(GOAL) and pose != 'pose'
    with pytest.raises(TypeError, match='unhashable'):
        hash(pose)
