"""The collision checker's fast paths against an exhaustive check, on thousands of random poses.

``check``, ``is_free``, ``check_path`` and ``all_free`` skip most pairs by their bounds, build
transforms only for the shapes they query and pose shapes with the model's plain-float kernel.
The reference here does none of that: ``ArmModel.frames`` (4×4 NumPy products), one library
transform per shape, and the library's distance on every checked pair. Both must give the same
verdict, the same contacts and the same closest pairs (to the library's tolerance) on every
pose.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.scene import backend
from arm_kinematics.scene.checker import CollisionChecker
from arm_kinematics.scene.collision_report import CollisionReport
from arm_testing.real_arms import REAL_ARMS, TABLE_AND_TWO_BOXES

POSES = 2000
# GJK's tolerance: two runs from poses equal to the last bits may stop a step apart.
DISTANCE_TOLERANCE = 1e-6
# A table under the arm and two boxes in its reach (base frame, m).
SCENE = [dict(item) for item in TABLE_AND_TWO_BOXES]


def exhaustive(checker: CollisionChecker, q: np.ndarray) -> tuple[list, list]:
    """[(distance, (a, b))] of every checked link pair and of every link-object pair at q."""
    model = checker.model
    extended = np.concatenate([np.eye(4)[None], model.frames(q)[:model.dof]])
    poses = [backend.transform(pose) for pose in extended[checker._frame] @ checker._offset]
    pairs = checker._self
    links = [(query.distance(poses[a], poses[b]), names)
             for a, b, query, names in zip(pairs.a_list, pairs.b_list, pairs.queries,
                                           pairs.names)]
    scene, objects = checker._scene_group()
    placed = [backend.transform(item.pose) for item in objects]
    things = [(query.distance(poses[a], placed[b]), names)
              for a, b, query, names in zip(scene.a_list, scene.b_list, scene.queries,
                                            scene.names)]
    return links, things


def assert_same_report(report: CollisionReport, links: list, things: list,
                       padding: float) -> None:
    contacts = {names for distance, names in links + things if distance <= padding}
    assert report.collides == bool(contacts)
    assert {(c.a, c.b) for c in report.contacts} == contacts
    for closest, pairs in ((report.closest_self, links), (report.closest_scene, things)):
        if not pairs:
            assert closest is None
            continue
        best = min(distance for distance, _ in pairs)
        assert closest.distance == pytest.approx(best, abs=DISTANCE_TOLERANCE)
        # The named pair is one at that distance (another may tie within the tolerance).
        assert any(names == (closest.a, closest.b) and
                   abs(distance - closest.distance) <= DISTANCE_TOLERANCE
                   for distance, names in pairs)
    for contact in report.contacts:
        nearest = min(d for d, names in links + things if names == (contact.a, contact.b))
        assert contact.distance == pytest.approx(nearest, abs=DISTANCE_TOLERANCE)


def compare(checker: CollisionChecker, count: int, seed: int) -> float:
    """Every fast answer on ``count`` random poses against the exhaustive one; returns the
    share of colliding poses (so a caller can see both verdicts were exercised)."""
    qs = checker.model.random_configurations(count, np.random.default_rng(seed))
    blocked, self_hits, scene_hits = [], [], []
    for q in qs:
        links, things = exhaustive(checker, q)
        report = checker.check(q)
        assert_same_report(report, links, things, checker.padding)
        assert checker.is_free(q) == (not report.collides)
        blocked.append(report.collides)
        self_hits.append(report.self_collision)
        scene_hits.append(report.scene_collision)
    # The joint map's masks, and a twin's (another thread's checker), pose by pose.
    for judge in (checker, checker.twin()):
        self_mask, scene_mask = judge.blocked_masks(qs)
        assert self_mask.tolist() == self_hits and scene_mask.tolist() == scene_hits
    # check_path over the poses as one path, restarted after each blocked pose: it must stop
    # exactly at the poses found colliding, block after block.
    first = 0
    while first < len(qs):
        path = checker.check_path(qs[first:], None)
        expected = next((i for i in range(first, len(qs)) if blocked[i]), None)
        if expected is None:
            assert path.free and path.samples == len(qs) - first
            break
        assert not path.free and first + path.samples - 1 == expected
        first = expected + 1
    # all_free (midpoints first) over windows of every length up to 40.
    rng = np.random.default_rng(seed)
    for length in range(1, 41):
        for start in rng.integers(0, len(qs) - length, size=5).tolist():
            window = slice(start, start + length)
            assert checker.all_free(qs[window]) == (not any(blocked[window]))
    return float(np.mean(blocked))


def with_scene(checker: CollisionChecker) -> CollisionChecker:
    checker.scene.add_all(SCENE)
    return checker


def real_checker(name: str, **kwargs) -> CollisionChecker:
    arm = REAL_ARMS[name]
    urdf = arm.urdf()
    return with_scene(CollisionChecker(ArmModel.from_urdf(urdf, arm.base, arm.tip), urdf,
                                       urdf_path=arm.path, **kwargs))


@pytest.mark.parametrize('name', ['panda', 'ur5'])
def test_real_arms_fast_paths_agree_with_every_pair(name: str) -> None:
    share = compare(real_checker(name), POSES, 11)
    assert 0.05 < share < 0.99


def test_padding_uses_distances_and_agrees_with_every_pair() -> None:
    # 5 mm: under the 10 mm between the Panda's base and the table top.
    share = compare(real_checker('panda', config={'padding': 0.005}), POSES // 2, 12)
    assert 0.05 < share < 0.99


def test_bundled_arm_fast_paths_agree_with_every_pair(load_arm) -> None:
    """six_axis: cylinders from the bundled description (primitives, no meshes)."""
    model = load_arm('six_axis')
    checker = with_scene(CollisionChecker(model))
    assert checker._shapes and all(s.kind != 'convex' for s in checker._shapes)
    share = compare(checker, POSES, 13)
    assert 0.05 < share < 0.99


def test_a_scene_change_between_checks_is_seen_by_every_path() -> None:
    """The pair list and the bounds are rebuilt with the scene: a box moved onto the arm is
    found by every path, and moved away again is not."""
    checker = real_checker('panda')
    q = checker.home
    tip = checker.model.fk(q)[:3, 3]
    assert checker.is_free(q)
    checker.scene.add({'id': 'ball', 'type': 'sphere', 'radius': 0.05,
                       'pose': {'xyz': tip.tolist()}})
    links, things = exhaustive(checker, q)
    assert_same_report(checker.check(q), links, things, checker.padding)
    assert not checker.is_free(q) and not checker.check_path([q], None).free
    checker.scene.move('ball', {'xyz': (tip + [0.0, 0.0, 0.5]).tolist()})
    assert checker.is_free(q) and checker.check_path([q], None).free
    assert not math.isinf(checker.check(q).closest_scene.distance)
