"""The safety monitor's decisions without ROS (kinematics.safety.monitor.SafetyWatch): the
verdict of each message, what is logged when, STALE and its repetition, request bounds."""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np
import pytest

from arm_kinematics.motion.planning.joint_map import joint_map, JointMapError, MapCode
from arm_kinematics.scene.geometry import Verdict
from arm_kinematics.scene.monitor import (
    map_samples_reason,
    MAX_PATH_SAMPLES,
    path_samples_reason,
    SafetyWatch,
    STALE_REPEAT,
)

LEVEL = np.zeros(3)
HANGING = np.array([0.0, 0.0, -math.pi / 2])


@dataclass
class Report:
    """What the watch reads of a collision report."""

    self_collision: bool = False
    scene_collision: bool = False
    message: str = 'no contact'

    @property
    def collides(self) -> bool:
        return self.self_collision or self.scene_collision


@dataclass
class Checker:
    """A collision checker that answers ``report`` for every pose."""

    report: Report
    scene: object = None

    def check(self, q):
        return self.report


@dataclass
class SceneStub:
    version: int = 7


def judge(watch, q, now, geometry, checker=None, scene=None, marker_rate=10.0):
    return watch.judge(np.asarray(q, dtype=float), now, geometry,
                       checker or Checker(Report()), scene or SceneStub(), marker_rate)


def test_verdict_is_logged_on_change_only(geometry):
    watch = SafetyWatch(3.0, 0.1)
    first = judge(watch, LEVEL, 0.0, geometry)
    assert first.check.verdict == Verdict.SAFE and first.scene_version == 7
    assert [(line.level, line.text.split(':')[0]) for line in first.logs] == [('info', 'SAFE')]
    assert judge(watch, LEVEL, 0.05, geometry).logs == ()
    low = judge(watch, HANGING, 0.1, geometry)
    assert low.check.verdict == Verdict.FLOOR_VIOLATION
    assert [line.level for line in low.logs] == ['warning']
    assert 'FLOOR_VIOLATION' in low.logs[0].text
    watch.forget_verdict()            # a new model: logged (and drawn) again at once
    again = judge(watch, HANGING, 0.11, geometry)
    assert len(again.logs) == 1 and again.draw_markers


def test_collision_changes_are_logged_and_the_scene_snapshot_is_used(geometry):
    watch = SafetyWatch(3.0, 0.1)
    checker = Checker(Report())
    scene = SceneStub(3)
    clear = judge(watch, LEVEL, 0.0, geometry, checker, scene)
    assert checker.scene is scene
    assert all('no contact' not in line.text for line in clear.logs)   # nothing to recover
    checker.report = Report(scene_collision=True, message='touches the box')
    scene.version += 1                # a box was added where the arm stands
    touching = judge(watch, LEVEL, 0.05, geometry, checker, scene)
    assert ('warning', 'touches the box') in [(line.level, line.text) for line in touching.logs]
    checker.report = Report(message='clear again')
    scene.version += 1
    cleared = judge(watch, LEVEL, 0.1, geometry, checker, scene)
    assert ('info', 'clear again') in [(line.level, line.text) for line in cleared.logs]


@dataclass
class CountingChecker(Checker):
    calls: int = 0

    def check(self, q):
        self.calls += 1
        return self.report


def test_a_repeated_pose_is_checked_once_until_pose_scene_or_checker_change(geometry):
    # An arm at rest repeats its pose at 100 Hz: the collision check (most of a message's
    # cost) runs again only when something it depends on changed.
    watch = SafetyWatch(3.0, 0.1)
    checker, scene = CountingChecker(Report()), SceneStub(1)
    for k in range(5):
        judged = judge(watch, LEVEL, 0.01 * k, geometry, checker, scene)
    assert checker.calls == 1 and judged.check.verdict == Verdict.SAFE
    assert judge(watch, HANGING, 0.05, geometry, checker, scene).check.verdict == \
        Verdict.FLOOR_VIOLATION and checker.calls == 2          # the pose moved
    judge(watch, HANGING, 0.06, geometry, checker, scene)
    scene.version += 1                                          # the scene changed
    judge(watch, HANGING, 0.07, geometry, checker, scene)
    assert checker.calls == 3
    judge(watch, HANGING, 0.08, geometry, checker, SceneStub(2))   # another snapshot
    assert checker.calls == 4
    other = CountingChecker(Report(self_collision=True, message='elbow touches base'))
    touching = judge(watch, HANGING, 0.09, geometry, other, scene)     # a new checker
    assert other.calls == 1 and touching.report.self_collision


def test_markers_are_throttled_to_the_marker_rate(geometry):
    watch = SafetyWatch(3.0, 0.1)
    drawn = [judge(watch, LEVEL, 0.02 * k, geometry, marker_rate=10.0).draw_markers
             for k in range(11)]
    assert drawn == [True, False, False, False, False, True, False, False, False, False, True]


def test_stale_before_any_message_repeats_without_logging():
    watch = SafetyWatch(3.0, 0.1)
    notice = watch.stale(0.0)
    assert notice.message == 'no joint_states received yet' and notice.logs == ()
    assert watch.stale(0.5) is None
    assert watch.stale(STALE_REPEAT + 0.01).message == 'no joint_states received yet'


def test_stale_after_the_stream_stops_is_logged_once_then_repeated(geometry):
    watch = SafetyWatch(3.0, 0.1)
    for k in range(10):
        judge(watch, LEVEL, 0.05 * k, geometry)
    last = 0.45
    assert watch.stale(last + 0.14) is None           # 3 periods of 50 ms: 0.15 s
    first = watch.stale(last + 0.16)
    assert 'no valid joint_states for 0.16 s' in first.message
    assert 'period 0.050 s' in first.message and 'stale after 0.15 s' in first.message
    assert [line.level for line in first.logs] == ['warning']
    assert watch.stale(last + 0.5) is None
    repeat = watch.stale(last + 0.17 + STALE_REPEAT)
    assert repeat is not None and repeat.logs == ()
    judge(watch, LEVEL, 2.0, geometry)                # live again: the next STALE is logged
    assert watch.stale(2.0 + 1.5).logs


def test_bursty_stream_is_not_stale_too_early(geometry):
    # Pairs delivered together every 0.2 s: the median interval would be 0.1 ms and call the
    # stream stale 0.1 s (the floor) after each pair; the mean (0.1 s) waits 0.3 s.
    watch = SafetyWatch(3.0, 0.1)
    for k in range(10):
        judge(watch, LEVEL, 0.2 * k, geometry)
        judge(watch, LEVEL, 0.2 * k + 1e-4, geometry)
    assert watch.stale(1.8001 + 0.25) is None
    assert watch.stale(1.8001 + 0.35) is not None


def test_min_stale_timeout_and_configure(geometry):
    watch = SafetyWatch(3.0, 0.5)
    for k in range(5):
        judge(watch, LEVEL, 0.01 * k, geometry)
    assert watch.stale(0.04 + 0.45) is None           # 3 x 10 ms, but at least 0.5 s
    watch.configure(3.0, 0.1)
    assert watch.stale(0.04 + 0.45) is not None


def test_malformed_messages_are_counted_and_poses_kept_clipped(geometry):
    watch = SafetyWatch(3.0, 0.1)
    assert watch.last_pose() is None
    assert watch.refuse('non-finite position of base_yaw') == \
        'joint_states ignored: non-finite position of base_yaw'
    assert watch.malformed_count == 1
    upper = geometry.model.upper
    noisy = upper + 5e-4                   # within the slack: read as on the limit
    judge(watch, noisy, 0.0, geometry)
    assert watch.last_pose() == pytest.approx(upper)
    far = upper + 0.1                      # beyond it: kept, the planner refuses it
    judge(watch, far, 0.05, geometry)
    assert watch.last_pose() == pytest.approx(far)


def test_request_bounds(geometry):
    times = np.array([0.0, 10.0])
    waypoints = np.array([LEVEL, HANGING])
    assert path_samples_reason(geometry, waypoints, times, 60.0, 0.01) == ''
    reason = path_samples_reason(geometry, waypoints, np.array([0.0, 1e6]), 60.0, 0.01)
    assert f'the most is {MAX_PATH_SAMPLES}' in reason
    assert map_samples_reason(10.0, 60.0) == ''
    assert 'samples' in map_samples_reason(1e6, 60.0)


def test_joint_map_refusals_carry_codes(geometry):
    with pytest.raises(JointMapError) as refused:
        joint_map(geometry, [0.0, 0.0], math.radians(4.0))
    assert refused.value.code == MapCode.INVALID_INPUT
    with pytest.raises(JointMapError) as refused:
        joint_map(geometry, LEVEL, math.radians(50.0))
    assert refused.value.code == MapCode.INVALID_INPUT


def test_joint_map_of_an_arm_without_two_pitch_joints_is_not_applicable(geometry,
                                                                        monkeypatch):
    # None of the bundled arms lacks them: the search-joint rule is made to find none.
    from arm_kinematics.motion.planning import joint_map as maps
    monkeypatch.setattr(maps, 'default_search_joints', lambda model: None)
    with pytest.raises(JointMapError) as refused:
        joint_map(geometry, LEVEL, math.radians(4.0))
    assert refused.value.code == MapCode.NOT_APPLICABLE
    assert 'no two pitch joints' in str(refused.value)
