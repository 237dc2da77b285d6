"""The live target is checked like a planned move (kinematics.motion.follow, .follow_guard).

The UR5 of example-robot-data with a box where its wrist passes when the base turns from
START to GOAL (as in test_motion_collision): a target whose IK answer is inside the box,
whose straight joint way there passes through it, or whose answer folds the arm into itself
is refused with the reason naming the object or the links, and the arm stays; a clear target
is followed. Each follow step is checked again in the control tick: a law heading into the
box (speed cap, or an exponential goal that skipped the planning check) stops before it, and
every commanded pose is clear by an independent checker.
"""

from __future__ import annotations

from concurrent.futures import Future
import time

import numpy as np
import pytest

from arm_kinematics.arm import load_arm
from arm_kinematics.motion import worker
from arm_kinematics.motion.executor import ExecutorCore, ExecutorSettings
from arm_kinematics.motion.follow import LiveFollow, target_goal, TargetGoal, Verdict
from arm_kinematics.motion.follow_guard import RefusalThrottle, REPORT_INTERVAL, StepGuard
from arm_kinematics.motion.runner import Mode
from arm_kinematics.motion.safety_check import CollisionGuard, SceneData
from arm_testing.real_arms import mesh_root, REAL_ARMS, ur5_planner_and_checker
from arm_testing.real_arms import UR5_BLOCKING_BOX as BOX

START = np.array([0.0, -1.2, 1.2, -1.57, -1.57, 0.0])
GOAL = np.array([1.6, -1.2, 1.2, -1.57, -1.57, 0.0])     # the way from START crosses the box
IN_THE_BOX = np.array([0.37, 0.54, 0.45])
FOLDED = np.array([0.0, -1.2, 2.96, -1.57, -1.57, 0.0])  # the forearm on the upper arm
NEAR_FOLDED = np.array([0.0, -1.2, 2.7, -1.57, -1.57, 0.0])
# A post where the speed cap's CCD steps take the tool on the way to (0, 0.7, 0.4).
POST = {'id': 'post', 'type': 'box', 'size': [0.06, 0.06, 0.06],
        'pose': {'xyz': [0.25, 0.15, 0.37]}}
SCENE = SceneData('base_link', (BOX,), 1)
TEST_STEP = 0.005      # m, finer than the executor's own 1 cm


def _values(**changes):
    from arm_ik.nodes.executor_parameters import TABLE
    values = {name: param.default for name, param in TABLE.params.items()}
    values.update(changes)
    return values


def _done(value) -> Future:
    future = Future()
    future.set_result(value)
    return future


@pytest.fixture(scope='module')
def ur5():
    """(planner, an independent checker of the same arm and scene for the assertions)."""
    return ur5_planner_and_checker()


def _follow(planner, start=START, solve=None, **settings):
    """A live follow of ``planner``'s arm at ``start``, targets solved at once; its reports."""
    core = ExecutorCore(tuple(planner.model.joint_names), start, planner,
                        ExecutorSettings.from_values(_values(**settings)))
    reports = []
    solve = solve or (lambda *args: _done(target_goal(planner, *args)))
    follow = LiveFollow(core, planner.model, planner.model.base_link, solve, reports.append)
    assert follow.set_scene(SCENE) == ''
    return core, follow, reports


def _run(core, follow, target, seconds: float = 2.0) -> np.ndarray:
    """Send ``target`` every tick for ``seconds``; the commanded poses."""
    poses = []
    for k in range(int(seconds * 100)):
        assert follow.target(target, '', 0.01 * k).verdict == Verdict.FOLLOWED
        core.runner.tick(0.01 * k)
        poses.append(core.runner.pose())
    return np.array(poses)


def test_a_target_whose_way_there_crosses_the_box_is_refused_and_the_arm_stays(ur5):
    planner, checker = ur5
    # closed_form answers with the branch nearest the seed: GOAL itself, clear of the box.
    core, follow, reports = _follow(planner, follow_solver='closed_form')
    poses = _run(core, follow, planner.model.fk(GOAL)[:3, 3], 0.5)
    assert np.all(poses == START)
    assert reports and all(r.verdict == Verdict.BLOCKED for r in reports)
    message = reports[0].message
    assert 'not followed, the arm stays: the way there collides' in message
    assert 'box' in message and '(-0.128, 0.637, 0.403)' in message, message


def test_a_target_inside_the_box_and_a_folding_answer_are_refused(ur5):
    planner, _ = ur5
    core, follow, reports = _follow(planner)
    assert np.all(_run(core, follow, IN_THE_BOX, 0.3) == START)
    assert 'the goal is in collision' in reports[0].message and 'box' in reports[0].message
    core, follow, reports = _follow(planner, start=NEAR_FOLDED)
    assert np.all(_run(core, follow, planner.model.fk(FOLDED)[:3, 3], 0.3) == NEAR_FOLDED)
    message = reports[0].message
    assert 'the goal is in collision' in message and 'upper_arm_link' in message, message


def test_a_clear_target_is_followed(ur5):
    planner, checker = ur5
    target = planner.model.fk(START + 0.1)[:3, 3]
    core, follow, reports = _follow(planner)
    poses = _run(core, follow, target, 3.0)
    assert reports == []
    assert np.linalg.norm(core.tip_of(poses[-1]) - target) < 1e-3
    assert core.runner.mode == Mode.FOLLOWING
    assert checker.check_path(np.vstack([START, poses]), TEST_STEP).free


@pytest.mark.parametrize('law', ['speed_cap', 'exponential'])
def test_a_step_into_an_object_is_never_commanded(ur5, law):
    """The tick's own check: the speed cap has no goal to check ahead (a post stands in its
    CCD way to the target), and an exponential goal given unchecked, as if the planning
    check were skipped, is followed no further than the box."""
    planner, _ = ur5
    if law == 'speed_cap':
        core, follow, reports = _follow(planner, follow_law='speed_cap', speed_scale=1.0)
        assert follow.set_scene(SceneData('base_link', (POST,), 2)) == ''
        target, thing = np.array([0.0, 0.7, 0.4]), POST
    else:
        core, follow, reports = _follow(planner, solve=lambda *args: _done(TargetGoal(GOAL)),
                                        speed_scale=1.0)
        target, thing = planner.model.fk(GOAL)[:3, 3], BOX
    checker = load_arm(REAL_ARMS['ur5'].urdf(), None, 'base_link', 'tool0').collision_checker(
        search_paths=[mesh_root()])
    checker.scene.add(thing)
    began = time.monotonic()
    poses = _run(core, follow, target, 3.0)
    elapsed = time.monotonic() - began
    assert np.abs(poses[-1] - START).max() > 0.1            # it did head for the target
    assert np.all(poses[-50:] == poses[-1])                  # and stopped
    dense = checker.check_path(np.vstack([START, poses]), TEST_STEP)
    assert dense.free, dense.report.message
    ahead = core.runner._follow.law.step(poses[-1], 0.01)    # the step it did not take
    assert not checker.check_path([poses[-1], ahead], TEST_STEP).free
    message = reports[0].message
    assert reports[0].verdict == Verdict.BLOCKED and 'the next step collides' in message
    assert thing['id'] in message, message
    # Refused at every tick since, reported at most once per REPORT_INTERVAL.
    assert len(reports) <= 1 + int(elapsed / REPORT_INTERVAL)


def test_without_collision_checks_the_live_target_keeps_only_its_old_rules(ur5):
    """An executor whose planner checks no collisions (``check_collisions`` off) checks
    none for the live target either."""
    _, checker = ur5
    spec = REAL_ARMS['ur5']
    arm = load_arm(spec.urdf(), None, spec.base, spec.tip)
    bare = worker.build_planner(worker.PlannerSpec(
        spec.urdf(), 'ur5', arm.config, spec.base, spec.tip, check_collisions=False))
    assert bare.check_move(START, GOAL) == ''
    core, follow, reports = _follow(bare, follow_solver='closed_form', speed_scale=1.0)
    target = bare.model.fk(GOAL)[:3, 3]
    poses = _run(core, follow, target, 3.0)
    assert reports == [] and np.linalg.norm(core.tip_of(poses[-1]) - target) < 1e-3
    assert not checker.check_path(np.vstack([START, poses]), TEST_STEP).free   # unchecked


def test_refusals_are_reported_at_most_once_per_interval_with_a_count():
    throttle = RefusalThrottle(2.0)
    assert throttle.admit(10.0) == 0
    assert throttle.admit(10.5) is None and throttle.admit(11.9) is None
    assert throttle.admit(12.0) == 2
    assert throttle.admit(13.0) is None
    assert throttle.admit(20.0) == 1


def test_a_checker_that_cannot_be_built_refuses_every_step():
    def broken():
        raise ValueError('mesh wrist.stl not found')
    guard = StepGuard(CollisionGuard(broken))
    reason = guard.reason(START, START + 0.01)
    assert 'cannot be built' in reason and 'wrist.stl' in reason
    assert guard.reason(START, START) == ''            # staying is always allowed


def test_a_live_target_takes_the_arm_from_another_follower(ur5):
    """The servo jog (another follow law) owns the runner: a live target starts its own
    follow (the jog ends PREEMPTED), never feeds its old law nobody steps."""
    from arm_kinematics.motion.errors import MotionCode
    from arm_kinematics.motion.jog import JogCore
    from arm_kinematics.motion.runner import Owner
    planner, _ = ur5
    core, follow, _ = _follow(planner)
    target = planner.model.fk(START + 0.1)[:3, 3]
    assert follow.target(target, '', 0.0).verdict == Verdict.FOLLOWED
    core.runner.stop(0.1, MotionCode.PREEMPTED, 'a goal came')
    jog = Owner('servo jog')
    assert core.runner.follow(JogCore(planner.model), jog, 0.2, 1.0)[0] == MotionCode.SUCCESS
    assert follow.target(target, '', 0.3).verdict == Verdict.FOLLOWED
    assert jog.done.is_set() and jog.outcome == MotionCode.PREEMPTED
