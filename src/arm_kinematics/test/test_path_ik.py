"""Path IK (motion/path_ik.py) on the bundled arms and the UR5, without ROS (batch IK:
test_batch_ik.py)."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from arm_kinematics.arm import Arm, ArmConfig, load_arm
from arm_kinematics.common.transforms import matrix_to_quaternion, quaternion_to_matrix
from arm_kinematics.description.bundled import expand_xacro, load_arm_config
from arm_kinematics.ik import metrics
from arm_kinematics.ik.result import ErrorCode, GoalType
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_kinematics.motion.path_following import PathRun
from arm_kinematics.motion.path_ik import PathIK
from arm_kinematics.motion.path_request import (
    DEFAULT_MAX_DEVIATION,
    DEFAULT_MAX_JOINT_STEP,
    DEFAULT_MIN_STEP,
    PathCode,
    PathRequest,
    PathResult,
    ToolPose,
)
from arm_kinematics.motion.validation import peak_speed_ratio
from arm_testing.real_arms import REAL_ARMS

OPTIONS = SolveOptions()
# DLS reaches its targets to its position tolerance, not exactly (m).
SOLVER_TOLERANCE = 2e-4
DOWN = (1.0, 0.0, 0.0, 0.0)     # quaternion x, y, z, w: tool Z along −Z of the base


def _bundled(name: str) -> Arm:
    return load_arm(expand_xacro(name), load_arm_config(name))


@pytest.fixture(scope='module')
def pointer3() -> Arm:
    return _bundled('pointer3')


@pytest.fixture(scope='module')
def six_axis() -> Arm:
    return _bundled('six_axis')


@pytest.fixture(scope='module')
def ur5() -> Arm:
    arm = REAL_ARMS['ur5']
    return load_arm(arm.urdf(), base_frame=arm.base, tip_frame=arm.tip)


def _path_ik(arm: Arm) -> PathIK:
    return PathIK(arm.dispatcher(), arm.safety)


def _pose(arm: Arm, q: np.ndarray) -> ToolPose:
    frame = arm.model.fk(q)
    return ToolPose(frame[:3, 3].tolist(), matrix_to_quaternion(frame[:3, :3]))


def _assert_continuous(arm: Arm, result: PathResult, line: list[np.ndarray],
                       max_step: float = DEFAULT_MAX_JOINT_STEP,
                       deviation: float = DEFAULT_MAX_DEVIATION) -> None:
    """No step above max_step; the tool stays near the polyline ``line`` between samples."""
    q = result.trajectory.positions
    np.testing.assert_allclose(q[0], result.trajectory.positions[0])
    if len(q) > 1:
        assert np.abs(np.diff(q, axis=0)).max() <= max_step + 1e-12
    points = np.array(line)

    def off_line(p: np.ndarray) -> float:
        best = math.inf
        for a, b in zip(points, points[1:]):
            ab = b - a
            t = min(max(float((p - a) @ ab) / max(float(ab @ ab), 1e-300), 0.0), 1.0)
            best = min(best, float(np.linalg.norm(p - (a + t * ab))))
        return best

    for a, b in zip(q, q[1:]):
        for t in (0.25, 0.5, 0.75):
            tool = arm.model.fk(a + t * (b - a))[:3, 3]
            assert off_line(tool) <= deviation + SOLVER_TOLERANCE, (t, tool)


# ---------------------------------------------------------------------- singularity
@pytest.mark.parametrize('solver', ['closed_form', 'dls'])
def test_a_line_into_the_stretched_arm_stops_where_it_turns_singular(six_axis, solver):
    start = six_axis.home
    pose = _pose(six_axis, start)
    end = (2.6, 0.0, 1.0)
    request = PathRequest(start, [ToolPose(end, pose.orientation)], GoalType.FULL_POSE,
                          solver=solver)
    result = _path_ik(six_axis).follow(request, OPTIONS)
    assert result.code == PathCode.SINGULARITY, result.message
    ik = six_axis.dispatcher()
    last = result.trajectory.positions[-1]
    path_ik = _path_ik(six_axis)
    assert path_ik.condition(last, GoalType.FULL_POSE) <= 100.0
    # The refused point lies at most min_step further on, and it is singular there.
    gap = float(np.linalg.norm(result.failed_position - result.stop_position))
    assert gap <= DEFAULT_MIN_STEP + SOLVER_TOLERANCE
    refused = ik.solvers['closed_form'].solve(result.failed_position, pose.orientation,
                                              GoalType.FULL_POSE, last, OPTIONS)
    assert path_ik.condition(refused.q, GoalType.FULL_POSE) > 100.0
    start_point = np.array(pose.position)
    length = float(np.linalg.norm(np.array(end) - start_point))
    followed = float(np.linalg.norm(result.stop_position - start_point))
    assert result.fraction == pytest.approx(followed / length, abs=SOLVER_TOLERANCE)
    assert result.stop_waypoint == 0
    _assert_continuous(six_axis, result, [start_point, np.array(end)])


# ---------------------------------------------------------------------- branches
def _greedy_steps(arm: Arm, start: np.ndarray, end: np.ndarray, samples: int) -> float:
    """Largest joint step of the greedy baseline: nearest solution of every sample."""
    solver = arm.dispatcher().solvers['analytic']
    a = arm.model.fk(start)[:3, 3]
    q, largest = start, 0.0
    for t in np.linspace(0.0, 1.0, samples + 1)[1:]:
        answer = solver.solve(a + t * (end - a), None, GoalType.POSITION, q, OPTIONS)
        largest = max(largest, float(np.abs(answer.q - q).max()))
        q = answer.q
    return largest


def test_a_line_past_the_yaw_axis_keeps_its_branch_where_the_nearest_solution_flips(pointer3):
    ik = pointer3.dispatcher().solvers['analytic']
    start = ik.solve((0.5, 0.02, 0.9), None, GoalType.POSITION, pointer3.home, OPTIONS).q
    end = np.array([-0.5, 0.02, 0.9])
    result = _path_ik(pointer3).follow(PathRequest(start, [ToolPose(end)]), OPTIONS)
    assert result.code == PathCode.OK, result.message
    assert result.fraction == 1.0 and result.stop_waypoint == 1
    assert set(result.branches) == {'elbow_up'}
    # The yaw sweeps half a turn in a few centimetres: the path was subdivided for it.
    assert result.trajectory.positions[-1][0] == pytest.approx(
        start[0] + math.pi - 2.0 * math.atan2(0.02, 0.5), abs=1e-6)
    _assert_continuous(pointer3, result, [pointer3.model.fk(start)[:3, 3], end])
    # The greedy baseline on the same samples (1 cm) jumps somewhere along this line.
    assert _greedy_steps(pointer3, start, end, result.samples - 1) > DEFAULT_MAX_JOINT_STEP


def test_a_line_over_the_yaw_axis_stops_at_the_singularity_without_a_flip(pointer3):
    ik = pointer3.dispatcher().solvers['analytic']
    start = ik.solve((0.5, 0.0, 0.9), None, GoalType.POSITION, pointer3.home, OPTIONS).q
    for solver in ('analytic', 'dls'):
        request = PathRequest(start, [ToolPose((-0.5, 0.0, 0.9))], solver=solver)
        result = _path_ik(pointer3).follow(request, OPTIONS)
        assert result.code == PathCode.SINGULARITY, result.message
        # On the axis the yaw cannot move the tool: the last sample is just before it.
        assert 0.0 < result.stop_position[0] < 0.02
        assert result.fraction == pytest.approx((0.5 - result.stop_position[0]) / 1.0,
                                                abs=SOLVER_TOLERANCE)
        _assert_continuous(pointer3, result, [np.array([0.5, 0.0, 0.9]),
                                              np.array([-0.5, 0.0, 0.9])])


# ---------------------------------------------------------------------- joint limits
@pytest.mark.parametrize('solver', ['analytic', 'dls'])
def test_a_line_toward_the_shoulder_stops_at_the_elbow_limit(pointer3, solver):
    ik = pointer3.dispatcher().solvers['analytic']
    start = ik.solve((1.0, 0.0, 0.555), None, GoalType.POSITION, pointer3.home, OPTIONS).q
    result = _path_ik(pointer3).follow(
        PathRequest(start, [ToolPose((0.05, 0.0, 0.555))], solver=solver), OPTIONS)
    assert result.code == PathCode.JOINT_LIMIT, result.message
    assert result.joint == 'elbow_pitch'
    elbow = result.trajectory.positions[-1][2]
    limit = pointer3.model.lower[2]
    assert elbow >= limit - 1e-9
    # Folded to the limit, the tool is this far from the shoulder pivot (law of cosines).
    l1, l2 = 0.95, 0.85
    folded = math.sqrt(l1 * l1 + l2 * l2 + 2.0 * l1 * l2 * math.cos(limit))
    x_limit = math.sqrt(folded * folded - 0.15 * 0.15)
    assert result.stop_position[0] == pytest.approx(x_limit, abs=5 * DEFAULT_MIN_STEP)
    assert result.fraction == pytest.approx((1.0 - result.stop_position[0]) / 0.95,
                                            abs=SOLVER_TOLERANCE)


def test_a_ur5_wrist_near_its_two_turn_limit_stops_there_and_never_turns_back(ur5):
    start = np.array([0.3, -1.2, 1.5, -1.9, -1.57, 6.0])
    frame = ur5.model.fk(start)
    turn = np.array([[math.cos(0.6), -math.sin(0.6), 0.0], [math.sin(0.6), math.cos(0.6), 0.0],
                     [0.0, 0.0, 1.0]])
    goal = ToolPose(frame[:3, 3].tolist(), matrix_to_quaternion(frame[:3, :3] @ turn))
    result = _path_ik(ur5).follow(PathRequest(start, [goal], GoalType.FULL_POSE), OPTIONS)
    assert result.code == PathCode.JOINT_LIMIT, result.message
    assert result.joint == 'wrist_3_joint'
    wrist = result.trajectory.positions[:, 5]
    assert np.all(np.diff(wrist) >= -1e-6)          # only ever forward, toward 2π
    assert wrist[-1] == pytest.approx(2.0 * math.pi, abs=1e-3)
    assert result.fraction == pytest.approx((2.0 * math.pi - 6.0) / 0.6, abs=0.01)


@pytest.mark.parametrize('goal', [GoalType.FULL_POSE, GoalType.POSITION])
def test_a_ur5_path_from_each_branch_once_equals_the_one_from_every_copy(ur5, goal,
                                                                         monkeypatch):
    # Each branch once per sample (solve_all) and the copies a path can reach, against
    # every whole-turn copy the solver lists (return_all): the same joint path and stop.
    rng = np.random.default_rng(4)
    lines = [(rng.uniform(-1.0, 1.0, 6), rng.uniform(-1.0, 1.0, 6)) for _ in range(3)]
    requests = [PathRequest(a, [_pose(ur5, b)], goal) for a, b in lines]
    fast = [_path_ik(ur5).follow(request, OPTIONS) for request in requests]
    original = PathRun.__init__

    def every_copy(self, *args, **kwargs) -> None:
        original(self, *args, **kwargs)
        self._solve_poses = None

    monkeypatch.setattr(PathRun, '__init__', every_copy)
    for request, quick in zip(requests, fast):
        slow = _path_ik(ur5).follow(request, OPTIONS)
        assert (quick.code, quick.samples, quick.branches) == \
            (slow.code, slow.samples, slow.branches), (quick.message, slow.message)
        np.testing.assert_allclose(quick.trajectory.positions, slow.trajectory.positions,
                                   rtol=0.0, atol=1e-9)
    assert any(result.code == PathCode.OK for result in fast)


@pytest.mark.parametrize('goal', [GoalType.FULL_POSE, GoalType.POSITION, GoalType.TOOL_DOWN])
def test_a_ur5_path_through_its_unbroken_prefix_equals_the_search_alone(ur5, goal,
                                                                        monkeypatch):
    # The start's branch solved a window at a time and refined in place, against the
    # search over every layer: the same samples, joints, stop and words, on lines that
    # stop for every reason (limits, singularities, jumps) and on two-segment paths with an
    # arc, a coarse max_joint_step (steps refined) and partial results.
    rng = np.random.default_rng(11)
    requests = []
    for index in range(24):
        a, b, c = (rng.uniform(-1.5, 1.5, 6) for _ in range(3))
        if goal == GoalType.TOOL_DOWN:
            # A start with the tool pointing down (else no branch holds the start).
            solver = ur5.dispatcher().solvers['closed_form']
            a = solver.solve(ur5.model.fk(a)[:3, 3], quaternion_to_matrix(*DOWN),
                             GoalType.FULL_POSE, a, OPTIONS).q
            if a is None:
                continue
        waypoints = [_pose(ur5, b)] + ([_pose(ur5, c)] if index % 3 == 0 else [])
        middle = 0.5 * (ur5.model.fk(a)[:3, 3] + ur5.model.fk(b)[:3, 3]) + 0.05
        requests.append(PathRequest(
            a, waypoints, goal, partial=True, max_joint_step=0.05 if index % 2 else 0.1,
            arc_through=[middle.tolist()] + [None] * (len(waypoints) - 1)
            if index % 4 == 1 else []))
    if goal == GoalType.FULL_POSE:
        # A wrist roll of 5 rad in two segments: past start ± π the solver's copy nearest
        # the start is a turn away from the path's.
        start = np.array([0.3, -1.2, 1.5, -1.9, -1.57, 0.0])
        frame = ur5.model.fk(start)
        rolls = [frame[:3, :3] @ np.array([[math.cos(a), -math.sin(a), 0.0],
                                           [math.sin(a), math.cos(a), 0.0], [0.0, 0.0, 1.0]])
                 for a in (2.5, 5.0)]
        requests.append(PathRequest(start, [ToolPose(frame[:3, 3].tolist(),
                                                     matrix_to_quaternion(r)) for r in rolls],
                                    goal))
    runs = []
    original = PathRun._unbroken_prefix

    def counted(self, first):
        out = original(self, first)
        runs.append(int(out[0][-1].u))
        return out

    monkeypatch.setattr(PathRun, '_unbroken_prefix', counted)
    fast = [_path_ik(ur5).follow(request, OPTIONS) for request in requests]
    monkeypatch.setattr(PathRun, '_unbroken_prefix', lambda self, first: ([first], None, False))
    for request, quick in zip(requests, fast, strict=True):
        slow = _path_ik(ur5).follow(request, OPTIONS)
        assert (quick.code, quick.samples, quick.branches, quick.stop_sample, quick.message) \
            == (slow.code, slow.samples, slow.branches, slow.stop_sample, slow.message)
        if slow.trajectory is None:
            assert quick.trajectory is None
        else:
            np.testing.assert_allclose(quick.trajectory.positions, slow.trajectory.positions,
                                       rtol=0.0, atol=1e-9)
    # The prefix did the work on most lines, and the lines stop for several reasons.
    assert len(requests) >= 12
    if goal == GoalType.FULL_POSE:
        # The roll past start ± π stays in the prefix to its end (the wrist unwrapped).
        assert fast[-1].code == PathCode.OK and runs[-1] == fast[-1].samples - 1
    assert sum(reached > 2 for reached in runs) >= len(requests) // 2
    assert len({result.code for result in fast}) >= 3


# ---------------------------------------------------------------------- 2π
@pytest.mark.parametrize('start_wrist', [3.0, -3.0])
def test_a_ur5_roll_across_pi_takes_the_short_way(ur5, start_wrist):
    start = np.array([0.3, -1.2, 1.5, -1.9, -1.57, start_wrist])
    frame = ur5.model.fk(start)
    sign = 1.0 if start_wrist > 0.0 else -1.0
    angle = sign * 0.6
    turn = np.array([[math.cos(angle), -math.sin(angle), 0.0],
                     [math.sin(angle), math.cos(angle), 0.0], [0.0, 0.0, 1.0]])
    goal = ToolPose((frame[:3, 3] + [0.05, 0.05, 0.0]).tolist(),
                    matrix_to_quaternion(frame[:3, :3] @ turn))
    result = _path_ik(ur5).follow(PathRequest(start, [goal], GoalType.FULL_POSE), OPTIONS)
    assert result.code == PathCode.OK, result.message
    wrist = result.trajectory.positions[:, 5]
    # Across ±π and on: the short way, not the copy a turn away (3.6 − 2π = −2.68).
    assert sign * wrist[-1] > math.pi and abs(wrist[-1] - start_wrist) < 1.0
    assert np.all(sign * np.diff(wrist) >= -DEFAULT_MAX_JOINT_STEP)
    _assert_continuous(ur5, result, [frame[:3, 3], np.array(goal.position)])


# ---------------------------------------------------------------------- floor
@pytest.mark.parametrize('solver', ['closed_form', 'dls'])
def test_a_line_down_through_the_floor_stops_at_the_tool_capsule(six_axis, solver):
    ik = six_axis.dispatcher().solvers['closed_form']
    start = ik.solve((1.2, 0.0, 1.0), DOWN, GoalType.FULL_POSE, six_axis.home, OPTIONS).q
    waypoints = [ToolPose((1.2, 0.0, 0.6), DOWN), ToolPose((1.2, 0.0, -0.2), DOWN)]
    for goal in (GoalType.TOOL_DOWN, GoalType.FULL_POSE):
        result = _path_ik(six_axis).follow(PathRequest(start, waypoints, goal, solver=solver),
                                           OPTIONS)
        assert result.code == PathCode.FLOOR_CONTACT, result.message
        assert result.stop_waypoint == 1
        # The tool capsule (radius 0.035 m) is the lowest: it stops just above z = 0.035.
        z = result.stop_position[2]
        assert 0.035 - SOLVER_TOLERANCE <= z <= 0.035 + DEFAULT_MIN_STEP + SOLVER_TOLERANCE
        assert six_axis.safety.check(result.trajectory.positions).verdict.max() == 0
        assert result.fraction == pytest.approx((1.0 - z) / 1.2, abs=SOLVER_TOLERANCE)
        # Sample 0 is the start (z = 1.0), then one every 0.01 m down.
        assert result.stop_sample == math.ceil((1.0 - z) / 0.01)
        assert np.all(np.diff(result.progress) > 0.0)
        assert result.progress[0] == 0.0
        assert result.progress[-1] == pytest.approx(result.fraction, abs=1e-12)
        _assert_continuous(six_axis, result, [np.array([1.2, 0.0, 1.0]),
                                              np.array([1.2, 0.0, -0.2])])


@pytest.mark.parametrize('solver', ['closed_form', 'dls'])
def test_a_line_past_the_obstacle_stops_where_the_wrist_would_touch_it(solver):
    data = load_arm_config('six_axis').as_mapping()
    data['safety']['obstacle']['enabled'] = True      # ball (1.2, 0, 1.2), r 0.2, rod 0.075
    arm = load_arm(expand_xacro('six_axis'), ArmConfig.from_mapping(data))
    ik = arm.dispatcher().solvers['closed_form']
    start = ik.solve((1.2, -0.8, 0.9), DOWN, GoalType.FULL_POSE, arm.home, OPTIONS).q
    result = _path_ik(arm).follow(
        PathRequest(start, [ToolPose((1.2, 0.8, 0.9), DOWN)], GoalType.TOOL_DOWN,
                    solver=solver), OPTIONS)
    assert result.code == PathCode.OBSTACLE_CONTACT, result.message
    # The tool points down, so the wrist rod stands vertical through the ball's height: it
    # touches once it is closer than radius + rod radius = 0.275 m to the centre.
    y = result.stop_position[1]
    assert -0.275 - DEFAULT_MIN_STEP - SOLVER_TOLERANCE <= y <= -0.275 + SOLVER_TOLERANCE
    assert result.fraction == pytest.approx((0.8 + y) / 1.6, abs=SOLVER_TOLERANCE)
    assert arm.safety.check(result.trajectory.positions).verdict.max() == 0


def test_no_partial_path_unless_asked(six_axis):
    ik = six_axis.dispatcher().solvers['closed_form']
    start = ik.solve((1.2, 0.0, 1.0), DOWN, GoalType.FULL_POSE, six_axis.home, OPTIONS).q
    request = PathRequest(start, [ToolPose((1.2, 0.0, -0.2), DOWN)], GoalType.TOOL_DOWN,
                          solver='closed_form', partial=False)
    result = _path_ik(six_axis).follow(request, OPTIONS)
    assert result.code == PathCode.FLOOR_CONTACT and result.trajectory is None
    assert 0.0 < result.fraction < 1.0


# ---------------------------------------------------------------------- arcs
def _off_arc(point: np.ndarray, centre, radius: float, normal) -> float:
    """Distance (m) of ``point`` from the whole circle (centre, radius, plane normal)."""
    d = np.asarray(point) - np.asarray(centre, dtype=float)
    normal = np.asarray(normal, dtype=float) / np.linalg.norm(normal)
    height = float(d @ normal)
    return math.hypot(float(np.linalg.norm(d - height * normal)) - radius, height)


def _assert_on_arc(arm: Arm, q: np.ndarray, centre, radius: float, normal,
                   deviation: float = DEFAULT_MAX_DEVIATION,
                   max_step: float = DEFAULT_MAX_JOINT_STEP) -> None:
    """No step of the joint path ``q`` above max_step; every sample on the circle, the tool
    near it between samples."""
    assert np.abs(np.diff(q, axis=0)).max() <= max_step + 1e-12
    for sample in q:
        assert _off_arc(arm.model.fk(sample)[:3, 3], centre, radius, normal) <= \
            SOLVER_TOLERANCE
    for a, b in zip(q, q[1:]):
        for t in (0.25, 0.5, 0.75):
            tool = arm.model.fk(a + t * (b - a))[:3, 3]
            assert _off_arc(tool, centre, radius, normal) <= deviation + SOLVER_TOLERANCE


@pytest.mark.parametrize('solver', ['closed_form', 'dls'])
@pytest.mark.parametrize('goal', [GoalType.TOOL_DOWN, GoalType.FULL_POSE])
def test_an_arc_through_a_middle_point_is_followed_on_the_circle(six_axis, solver, goal):
    ik = six_axis.dispatcher().solvers['closed_form']
    start = ik.solve((1.2, 0.0, 1.0), DOWN, GoalType.FULL_POSE, six_axis.home, OPTIONS).q
    # Half a circle down and back up in the x-z plane: centre (0.9, 0, 1.0), radius 0.3.
    request = PathRequest(start, [ToolPose((0.6, 0.0, 1.0), DOWN)], goal, solver=solver,
                          arc_through=[(0.9, 0.0, 0.7)])
    result = _path_ik(six_axis).follow(request, OPTIONS)
    assert result.code == PathCode.OK, result.message
    assert result.fraction == 1.0 and result.stop_waypoint == 1
    # Cut along the arc: length 0.3 π at 1 cm.
    assert result.samples == math.ceil(0.3 * math.pi / 0.01) + 1
    tips = np.array([six_axis.model.fk(q)[:3, 3] for q in result.trajectory.positions])
    np.testing.assert_allclose(tips[-1], (0.6, 0.0, 1.0), atol=SOLVER_TOLERANCE)
    # It goes the way round through the middle point (the lowest one), not over the top.
    assert tips[:, 2].min() == pytest.approx(0.7, abs=SOLVER_TOLERANCE)
    assert tips[:, 2].max() <= 1.0 + SOLVER_TOLERANCE
    _assert_on_arc(six_axis, result.trajectory.positions, (0.9, 0.0, 1.0), 0.3,
                   (0.0, 1.0, 0.0))


def test_an_arc_is_checked_against_the_arc_not_its_chords(pointer3):
    # A quarter circle of radius 1 m about the yaw axis, cut into 0.2 m samples: the yaw
    # alone turns the tool along the arc, 5 mm off each chord. Checked against the chord,
    # every step would be split; against the arc, none is.
    ik = pointer3.dispatcher().solvers['analytic']
    start = ik.solve((1.0, 0.0, 0.9), None, GoalType.POSITION, pointer3.home, OPTIONS).q
    half = math.sqrt(0.5)
    for solver in ('analytic', 'dls'):
        request = PathRequest(start, [ToolPose((0.0, 1.0, 0.9))], solver=solver,
                              arc_through=[(half, half, 0.9)], max_cartesian_step=0.2,
                              max_joint_step=0.5)
        result = _path_ik(pointer3).follow(request, OPTIONS)
        assert result.code == PathCode.OK, result.message
        assert result.samples == math.ceil(0.5 * math.pi / 0.2) + 1
        assert len(result.trajectory) == result.samples
        _assert_on_arc(pointer3, result.trajectory.positions, (0.0, 0.0, 0.9), 1.0,
                       (0.0, 0.0, 1.0), max_step=0.5)
        np.testing.assert_allclose(result.trajectory.positions[-1][0] - start[0],
                                   0.5 * math.pi, atol=1e-3)


@pytest.mark.parametrize('solver', ['closed_form', 'dls'])
def test_an_arc_down_through_the_floor_stops_at_the_tool_capsule(six_axis, solver):
    ik = six_axis.dispatcher().solvers['closed_form']
    start = ik.solve((1.2, 0.0, 1.0), DOWN, GoalType.FULL_POSE, six_axis.home, OPTIONS).q
    # A line down to (1.2, 0, 0.6), then a quarter circle about (0.4, 0, 0.6), radius 0.8,
    # down to (0.4, 0, -0.2): it meets z = 0.035 (the tool capsule's radius) on the way.
    radius, centre = 0.8, np.array([0.4, 0.0, 0.6])
    middle = centre + radius * np.array([math.sqrt(0.5), 0.0, -math.sqrt(0.5)])
    request = PathRequest(start, [ToolPose((1.2, 0.0, 0.6), DOWN),
                                  ToolPose((0.4, 0.0, -0.2), DOWN)], GoalType.TOOL_DOWN,
                          solver=solver, arc_through=[None, middle.tolist()])
    result = _path_ik(six_axis).follow(request, OPTIONS)
    assert result.code == PathCode.FLOOR_CONTACT, result.message
    assert result.stop_waypoint == 1
    assert six_axis.safety.check(result.trajectory.positions).verdict.max() == 0
    z = result.stop_position[2]
    assert 0.035 - SOLVER_TOLERANCE <= z <= 0.035 + DEFAULT_MIN_STEP + SOLVER_TOLERANCE
    assert _off_arc(result.stop_position, centre, radius, (0.0, 1.0, 0.0)) <= SOLVER_TOLERANCE
    # 40 samples on the line, then the arc's 126 at equal angles: the stop is the first
    # arc sample past the angle where it stopped.
    count = math.ceil(radius * 0.5 * math.pi / 0.01)
    angle = math.asin((centre[2] - z) / radius)
    assert result.samples == 40 + count + 1
    assert result.stop_sample == 40 + math.floor(angle / (0.5 * math.pi / count)) + 1
    length = 0.4 + radius * 0.5 * math.pi
    assert result.fraction == pytest.approx((0.4 + radius * angle) / length,
                                            abs=SOLVER_TOLERANCE)
    # From the corner at z = 0.6 on, the joint path follows the arc.
    q = result.trajectory.positions
    on_arc = [row for row in q if six_axis.model.fk(row)[2, 3] <= 0.6 + 1e-9]
    assert len(on_arc) > 60
    _assert_on_arc(six_axis, np.array(on_arc), centre, radius, (0.0, 1.0, 0.0))


def test_bad_arcs_are_refused_with_a_reason(six_axis):
    path_ik = _path_ik(six_axis)
    start = six_axis.home
    tip = six_axis.model.fk(start)[:3, 3]
    end = ToolPose((tip + [0.0, 0.0, -0.4]).tolist())
    cases = {
        'on a line': [(tip + [0.0, 0.0, -0.2]).tolist()],
        'coincide': [end.position],
        'finite point': [(math.nan, 0.0, 1.0)],
        'points for': [(1.0, 0.0, 1.0), (1.0, 0.0, 1.0)],
        '3 numbers': [(1.0, 0.0)],
    }
    for words, through in cases.items():
        result = path_ik.follow(PathRequest(start, [end], arc_through=through), OPTIONS)
        assert result.code == PathCode.INVALID_INPUT, (words, result.message)
        assert words in result.message, (words, result.message)
    # NaN in all three: a straight segment.
    result = path_ik.follow(PathRequest(start, [end], arc_through=[(math.nan,) * 3]),
                            OPTIONS)
    straight = path_ik.follow(PathRequest(start, [end]), OPTIONS)
    assert result.code == straight.code and result.samples == straight.samples


# ---------------------------------------------------------------------- timing, input
@pytest.mark.parametrize('timing', ['linear', 'min_jerk'])
def test_the_joint_path_respects_the_velocity_limits(six_axis, timing):
    ik = six_axis.dispatcher().solvers['closed_form']
    start = ik.solve((1.2, 0.0, 1.0), DOWN, GoalType.FULL_POSE, six_axis.home, OPTIONS).q
    request = PathRequest(start, [ToolPose((1.0, 0.4, 0.8), DOWN)], GoalType.FULL_POSE,
                          solver='closed_form', timing=timing, velocity_scale=0.5)
    result = _path_ik(six_axis).follow(request, OPTIONS)
    assert result.code == PathCode.OK, result.message
    trajectory = result.trajectory
    assert np.all(np.diff(trajectory.times) > 0.0)
    ratio = peak_speed_ratio(trajectory, 0.5 * six_axis.model.velocity_limits)
    assert ratio <= 1.0 + 1e-6
    # The linear law runs some joint at its limit on every step; min-jerk peaks at it.
    assert ratio > 0.9
    np.testing.assert_allclose(trajectory.positions[0], start)


def test_invalid_waypoints_and_fields_are_refused_with_the_waypoint(six_axis):
    path_ik = _path_ik(six_axis)
    start = six_axis.home
    result = path_ik.follow(PathRequest(start, [ToolPose((1.0, 0.0, 1.0)),
                                                ToolPose((math.nan, 0.0, 1.0))]), OPTIONS)
    assert result.code == PathCode.INVALID_INPUT and result.stop_waypoint == 1
    assert result.ik_code == ErrorCode.INVALID_INPUT
    result = path_ik.follow(PathRequest(start, [ToolPose((1.0, 0.0, 1.0))],
                                        max_joint_step=-1.0), OPTIONS)
    assert result.code == PathCode.INVALID_INPUT and 'max_joint_step' in result.message
    result = path_ik.follow(PathRequest(start[:3], [ToolPose((1.0, 0.0, 1.0))]), OPTIONS)
    assert result.code == PathCode.INVALID_INPUT and 'start' in result.message
    result = path_ik.follow(PathRequest(start, [ToolPose((1.0, 0.0, 1.0))], solver='nope'),
                            OPTIONS)
    assert result.ik_code == ErrorCode.UNKNOWN_SOLVER


def test_a_small_max_joint_step_is_never_exceeded(pointer3):
    ik = pointer3.dispatcher().solvers['analytic']
    start = ik.solve((1.0, 0.3, 0.9), None, GoalType.POSITION, pointer3.home, OPTIONS).q
    end = np.array([0.3, -0.6, 1.2])
    for solver in ('analytic', 'dls'):
        result = _path_ik(pointer3).follow(
            PathRequest(start, [ToolPose(end)], solver=solver, max_joint_step=0.01,
                        max_deviation=0.0002), OPTIONS)
        assert result.code == PathCode.OK, result.message
        _assert_continuous(pointer3, result, [pointer3.model.fk(start)[:3, 3], end],
                           0.01, 0.0002)


def test_the_condition_number_of_a_position_goal_is_the_metrics_one(pointer3):
    q = np.array([0.2, 0.9, -1.1])
    expected = metrics.condition_number(pointer3.model.jacobian(q)[:3])
    assert _path_ik(pointer3).condition(q, GoalType.POSITION) == pytest.approx(expected)


def test_an_unavoidable_jump_is_reported_with_its_joint_and_never_returned(six_axis):
    # Position goals of the closed form keep the start's tool orientation: near the
    # stretched elbow that orientation forces a fast elbow swing, a jump at any step size.
    start = six_axis.home
    result = _path_ik(six_axis).follow(
        PathRequest(start, [ToolPose((2.6, 0.0, 1.0))], solver='closed_form'), OPTIONS)
    assert result.code == PathCode.JOINT_JUMP, result.message
    assert result.joint in six_axis.model.joint_names
    assert result.joint_step > DEFAULT_MAX_JOINT_STEP
    gap = float(np.linalg.norm(result.failed_position - result.stop_position))
    assert gap <= DEFAULT_MIN_STEP + 1e-9
    assert 0.0 < result.fraction < 1.0
    _assert_continuous(six_axis, result, [six_axis.model.fk(start)[:3, 3],
                                          np.array([2.6, 0.0, 1.0])])


@pytest.mark.parametrize('solver', ['closed_form', 'dls'])
def test_a_path_out_of_time_stops_with_timeout(six_axis, solver):
    result = _path_ik(six_axis).follow(
        PathRequest(six_axis.home, [ToolPose((1.0, 0.3, 1.0))], solver=solver, timeout=1e-9),
        OPTIONS)
    assert result.code == PathCode.TIMEOUT, result.message
    assert result.fraction == 0.0 and len(result.trajectory) == 1


def test_a_first_paths_compile_is_not_counted_by_its_timeout(six_axis, monkeypatch):
    """What a path sample calls is compiled on its first call (2.2-2.8 s with an empty numba cache
    on the six_axis arm; 13 s more for DLS, at its construction), and a core test's first
    5 cm line timed out at 0 % in CI on a busy machine: the timeout counts the path, not the
    compile. The first call of the condition numbers stands in for the compile here (0.6 s,
    beyond the 0.3 s timeout); the line itself takes 2 ms."""
    calls = []
    conditions = PathIK.conditions

    def compiled_on_first_call(self, *args, **kwargs):
        if not calls:
            time.sleep(0.6)
        calls.append(1)
        return conditions(self, *args, **kwargs)

    monkeypatch.setattr(PathIK, 'conditions', compiled_on_first_call)
    follower = _path_ik(six_axis)
    frame = six_axis.model.fk(six_axis.home)
    end = ToolPose((frame[:3, 3] - [0.0, 0.0, 0.05]).tolist(),
                   matrix_to_quaternion(frame[:3, :3]))
    result = follower.follow(PathRequest(six_axis.home, [end], timeout=0.3), OPTIONS)
    assert (result.code, result.fraction) == (PathCode.OK, 1.0), result.message
    assert result.solve_time >= 0.6      # the compile is in the answer's time, not its timeout
