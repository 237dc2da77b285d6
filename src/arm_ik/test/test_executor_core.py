"""The trajectory executor's decisions without ROS (kinematics.motion.executor, .follow,
.planning_pool) and its message conversions (plan -> PlannedPath -> planned_path markers)."""

from __future__ import annotations

from concurrent.futures import Future
import math
import os
import signal
import threading
import time

import numpy as np
import pytest

from arm_kinematics.description.bundled import load_arm_config
from arm_kinematics.motion import laws, worker
from arm_kinematics.motion.errors import MotionCode, MotionError
from arm_kinematics.motion.executor import (
    ExecutorCore,
    ExecutorSettings,
    Feedback,
    from_current_pose,
    goal_report,
    settings_reason,
    WallClock,
)
from arm_kinematics.motion.follow import LiveFollow, target_goal, TargetGoal, Verdict
from arm_kinematics.motion.move_types import MoveGoal, Plan, PlanFailure, preview_of
from arm_kinematics.motion.planning_pool import PlanningPool
from arm_kinematics.motion.runner import Mode, Owner
from arm_kinematics.motion.trajectory import Interpolation, Trajectory

ARM = 'pointer3'
HOME = np.array([0.0, 0.6, -0.6])


def _values(**changes):
    from arm_ik.nodes.executor_parameters import TABLE
    values = {name: param.default for name, param in TABLE.params.items()}
    values.update(changes)
    return values


@pytest.fixture(scope='module')
def spec(urdf_of):
    return worker.PlannerSpec(urdf_of(ARM), ARM, load_arm_config(ARM), default_solver='dls')


@pytest.fixture(scope='module')
def planner(spec):
    return worker.build_planner(spec)


def _core(planner, feedback=None, publish_on_start=True, **changes):
    settings = ExecutorSettings.from_values(_values(**changes))
    return ExecutorCore(tuple(planner.model.joint_names), HOME, planner, settings,
                        publish_on_start, feedback)


def _line(start, end, duration=0.5, names=('a', 'b', 'c')):
    times = np.linspace(0.0, duration, 11)
    positions = np.linspace(start, end, 11)
    return Trajectory(tuple(names), times, positions, np.zeros_like(positions),
                      Interpolation.LINEAR)


# ---------------------------------------------------------------------------- settings
def test_settings_from_the_table_defaults_and_the_cross_field_rules():
    settings = ExecutorSettings.from_values(_values(publish_rate=250.0))
    assert settings.motion.period == pytest.approx(0.004)
    assert settings.motion.validation.start_tolerance == 0.02
    assert settings.motion.validated()[1] == ''
    ok = lambda name: ''   # noqa: E731
    assert settings_reason(_values(), ok) == ''
    assert 'min_duration' in settings_reason(_values(min_duration=100.0), ok)
    assert settings_reason(_values(follow_solver='fast'), lambda n: f'no {n}') == \
        'follow_solver: no fast'


@pytest.mark.parametrize('name, value, refused', [
    ('publish_rate', 1.0, False), ('publish_rate', 0.5, True), ('speed_scale', 0.0, True),
    ('speed_scale', 1.0, False), ('feedback_rate', 0.0, True), ('start_tolerance', 0.0, False),
    ('feedback_stale_periods', 1.0, False), ('motion_law', 'jump', True),
    ('follow_law', laws.MIN_JERK, True), ('speed_cap_iterations', 0, True),
    ('output', 'joint_trajectory', False), ('output', 'servo', True),
    ('max_joint_jump', math.pi, False), ('watchdog_timeout', 0.0, True),
])
def test_the_table_holds_the_ranges(name, value, refused):
    from arm_ik.nodes.executor_parameters import TABLE
    assert bool(TABLE.params[name].reason(value)) == refused
    assert len(TABLE.params) == 30 and 'follow_solver' in TABLE.dynamic
    assert 'output' not in TABLE.dynamic and 'realtime_priority' not in TABLE.dynamic


# ---------------------------------------------------------------------------- start pose
def test_start_pose_without_feedback_is_the_initial_then_the_commanded(planner):
    core = _core(planner)
    start, code, _ = core.start_pose(0.0)
    assert code == MotionCode.SUCCESS and np.array_equal(start, HOME)
    core.runner.set_pose(HOME + 0.1)
    assert np.allclose(core.start_pose(0.0)[0], HOME + 0.1)


def test_start_pose_with_feedback_needs_a_fresh_matching_measurement(planner):
    feedback = Feedback('arm/joint_states', 3.0, 0.01)
    core = _core(planner, feedback, publish_on_start=False)
    start, code, reason = core.start_pose(0.0)
    assert start is None and code == MotionCode.NO_JOINT_STATE and 'none received' in reason
    for k in range(5):
        core.measured(HOME + 0.05, 0.1 * k)
    assert core.runner.mode == Mode.WAITING          # publish_on_start false: stays silent
    start, code, _ = core.start_pose(0.45)
    assert code == MotionCode.SUCCESS and np.allclose(start, HOME + 0.05)
    start, code, reason = core.start_pose(0.4 + 0.31)   # 3 periods of 0.1 s
    assert start is None and code == MotionCode.NO_JOINT_STATE and 's old' in reason
    core.runner.set_pose(HOME)                        # commanded 0.05 rad away
    start, code, reason = core.start_pose(0.45)
    assert start is None and code == MotionCode.START_MISMATCH and 'tolerance' in reason


def test_measured_state_is_adopted_before_the_first_command(planner):
    core = _core(planner, Feedback('js', 3.0, 0.01), publish_on_start=True)
    assert core.runner.mode == Mode.WAITING
    core.measured(HOME, 0.0)
    assert core.runner.mode == Mode.IDLE and np.allclose(core.runner.pose(), HOME)


def test_stale_feedback_holds_and_resumes_to_holding(planner):
    core = _core(planner, Feedback('js', 3.0, 0.01))
    core.check_feedback(0.0)                          # nothing heard yet: nothing to judge
    for k in range(5):
        core.measured(HOME, 0.02 * k)
    core.check_feedback(0.09)
    assert core.runner.mode == Mode.IDLE
    core.check_feedback(0.08 + 0.061)
    mode, code, message, _ = core.runner.status()
    assert mode == Mode.STALE_FEEDBACK and code == MotionCode.NO_JOINT_STATE, message
    assert core.feedback_age(0.2) == pytest.approx(0.12)
    core.measured(HOME, 0.2)
    core.check_feedback(0.2)
    assert core.runner.mode == Mode.HOLDING


def test_feedback_period_is_never_below_the_control_period_and_follows_updates():
    feedback = Feedback('js', 3.0, 0.01)
    for k in range(5):
        feedback.arrived(np.zeros(3), 0.001 * k)
    assert feedback.latest(0.004)[1].limit == pytest.approx(0.03)
    feedback.set_limits(2.0, 0.05)
    assert feedback.latest(0.004)[1].limit == pytest.approx(0.1)


# ---------------------------------------------------------------------------- owners
def test_take_over_preempts_the_previous_owner_and_holds(planner):
    core = _core(planner)
    first, second = Owner('first'), Owner('second')
    core.take_over(first)
    assert core.goal_active() and core.busy_reason()
    line = _line(HOME, HOME + 0.2, names=core.names)
    assert core.runner.start(line, first, time.monotonic())[0] == MotionCode.SUCCESS
    core.take_over(second)
    assert first.outcome == MotionCode.PREEMPTED and 'second' in first.message
    assert core.runner.mode == Mode.HOLDING
    core.release(first)                              # not the active one: nothing changes
    assert core.goal_active()
    core.release(second)
    assert not core.goal_active() and core.busy_reason() == ''


def test_cancel_interrupted_and_interruption(planner):
    core = _core(planner)
    owner = core.register(b'id', 'goal')
    assert not core.interrupted(owner, False)
    assert core.interruption(owner)[0] == MotionCode.INTERNAL_ERROR     # no outcome yet
    core.cancel(b'id', 0.0)
    assert core.interrupted(owner, False)
    assert core.interruption(owner) == (MotionCode.CANCELED, owner.message)
    other = core.register(b'other', 'goal 2')
    assert core.interrupted(other, True) and other.outcome == MotionCode.CANCELED
    core.unregister(b'id', owner)
    core.cancel(b'id', 0.0)                          # gone: harmless


def test_a_client_stop_holds_a_move_and_ends_a_planning_goal(planner):
    core = _core(planner)
    assert core.stop(0.0, 'stop') is False                 # nothing moves: nothing changes
    assert core.runner.mode != Mode.HOLDING
    owner = Owner('goal')
    core.take_over(owner)
    assert core.stop(0.0, 'stopped by a client') is True   # still planning: it never starts
    assert owner.outcome == MotionCode.CANCELED
    moving = Owner('move')
    code, _ = core.runner.start(_line(HOME, HOME + 0.3, duration=2.0, names=core.names),
                                moving, time.monotonic())
    assert code == MotionCode.SUCCESS and core.runner.mode == Mode.MOVING
    assert core.stop(time.monotonic(), 'stopped by a client') is True
    assert core.runner.mode == Mode.HOLDING and moving.outcome == MotionCode.CANCELED


def test_emergency_stop_ends_a_planning_goal_and_reset_needs_release(planner):
    core = _core(planner)
    owner = Owner('goal')
    core.take_over(owner)
    assert core.emergency_stop(True, 0.0)
    assert owner.outcome == MotionCode.EMERGENCY_STOPPED
    assert core.reset()[0] is False and 'still pressed' in core.reset()[1]
    assert core.emergency_stop(False, 0.1) is False
    assert core.reset()[0] is True and core.runner.mode == Mode.HOLDING
    assert core.reset() == (False, 'no emergency stop to reset')


# ---------------------------------------------------------------------------- goals
class _Ticker:
    """Drives the runner's control tick at 100 Hz, as the node's control thread does."""

    def __init__(self, runner):
        self.runner, self.stop = runner, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.wait(0.01):
            self.runner.tick(time.monotonic()).finish()


def _done(value):
    future = Future()
    future.set_result(value)
    return future


def test_run_goal_plans_publishes_runs_and_gives_feedback(planner):
    core = _core(planner)
    ticker = _Ticker(core.runner)
    planned, progress = [], []

    def begin(trajectory, owner):
        return core.runner.start(trajectory, owner, time.monotonic())
    try:
        owner = Owner('goal')
        end = core.run_goal(owner, MoveGoal(joint_names=core.names,
                                            joint_positions=tuple(HOME + 0.2), duration=0.3),
                            lambda: False, lambda *a: _done(planner.plan(*a)), begin,
                            planned.append, progress.append)
    finally:
        ticker.stop.set()
    assert end.code == MotionCode.SUCCESS and end.message.endswith('; done'), end.message
    assert len(planned) == 1 and progress and progress[-1].fraction <= 1.0
    assert np.allclose(core.runner.pose(), HOME + 0.2)
    report = goal_report(owner, core.runner.pose(), end.plan, None, core.tip_of)
    assert report.final_error == pytest.approx(0.0, abs=1e-6)


def test_run_goal_refusals_failures_and_preemption_while_planning(planner):
    core = _core(planner)
    failure = PlanFailure(MotionError(MotionCode.CARTESIAN_PATH_FAILED, 'too far', 7),
                          reached=np.zeros((2, 3)), point=np.ones(3))
    planned = []
    end = core.run_goal(Owner('g'), MoveGoal(), lambda: False, lambda *a: _done(failure),
                        None, planned.append, None)
    assert (end.code, end.ik_code) == (MotionCode.CARTESIAN_PATH_FAILED, 7)
    assert planned == [failure]
    pending = Future()
    owner = Owner('slow')
    thread = threading.Thread(target=lambda: setattr(owner, 'end', core.run_goal(
        owner, MoveGoal(), lambda: False, lambda *a: pending, None, None, None)))
    thread.start()
    time.sleep(0.1)
    core.take_over(Owner('newer'))
    thread.join(2.0)
    assert owner.end.code == MotionCode.PREEMPTED
    core.emergency_stop(True, time.monotonic())
    assert core.run_goal(Owner('g'), MoveGoal(), None, None, None, None, None).code == \
        MotionCode.EMERGENCY_STOPPED


def test_client_trajectory_starts_from_the_current_pose(planner):
    core = _core(planner)
    later = _line(HOME + 0.01, HOME + 0.1, names=core.names)
    later = Trajectory(later.joint_names, later.times + 0.2, later.positions, later.velocities,
                       later.interpolation)
    joined = from_current_pose(later, HOME)
    assert joined.times[0] == 0.0 and np.array_equal(joined.positions[0], HOME)
    assert len(joined) == len(later) + 1
    began = []
    valid = type('V', (), {'error': None})()
    code, message = core.client_trajectory(later, lambda *a: valid,
                                           lambda t, o: began.append((t, o)) or
                                           (MotionCode.SUCCESS, ''))
    assert code == MotionCode.SUCCESS and 'accepted: 12 points' in message
    assert began[0][0].law == 'client trajectory' and not core.goal_active()


# ---------------------------------------------------------------------------- live follow
def test_live_target_decisions(planner):
    core = _core(planner)
    follow = LiveFollow(core, planner.model, planner.model.base_link,
                        lambda *args: _done(target_goal(planner, *args)))
    target = planner.model.fk(HOME + 0.2)[:3, 3]
    assert follow.target(np.array([np.nan, 0, 0]), '', 0.0).verdict == Verdict.BAD
    assert follow.target(target, 'world', 0.0).verdict == Verdict.BAD
    core.take_over(Owner('goal'))
    assert follow.target(target, '', 0.0).verdict == Verdict.BUSY
    core.release(core._active)
    assert follow.target(target, '/' + planner.model.base_link, 0.0).verdict == Verdict.FOLLOWED
    assert core.runner.mode == Mode.FOLLOWING
    assert follow.target(target, '', 0.1).verdict == Verdict.FOLLOWED      # touched
    for k in range(1, 300):
        core.runner.tick(0.01 * k)
        core.runner.touch(0.01 * k)
    assert np.linalg.norm(core.tip_of(core.runner.pose()) - target) < 1e-3
    core.emergency_stop(True, 3.0)
    assert follow.target(target, '', 3.1).verdict == Verdict.DROPPED


# ---------------------------------------------------------------------------- clock, pool
def test_live_targets_are_solved_one_at_a_time_latest_first(planner):
    core = _core(planner)
    futures = []
    follow = LiveFollow(core, planner.model, planner.model.base_link,
                        lambda *args: futures.append((args, Future())) or futures[-1][1])
    targets = [planner.model.fk(HOME + d)[:3, 3] for d in (0.1, 0.2, 0.3, 0.4)]
    for k, target in enumerate(targets):
        assert follow.target(target, '', 0.01 * k).verdict == Verdict.FOLLOWED
    assert len(futures) == 1                   # the others wait; only the latest is kept
    law = core.runner._follow.law          # the law inside its tick guard
    futures[0][1].set_result(TargetGoal(HOME + 0.1))
    assert np.allclose(law.goal, HOME + 0.1) and len(futures) == 2
    assert np.allclose(futures[1][0][0], targets[-1])
    futures[1][1].set_exception(RuntimeError('the planning process died'))
    assert law.goal is None                    # stay, and take the next target
    follow.target(targets[0], '', 0.1)
    assert len(futures) == 3


def test_planning_pool_solves_live_targets_in_the_process(spec, planner):
    pool = PlanningPool(spec, planner, in_process=False)
    try:
        goal = pool.solve_target(planner.model.fk(HOME + 0.1)[:3, 3], HOME, '').result(60).q
        assert np.allclose(planner.model.fk(goal)[:3, 3], planner.model.fk(HOME + 0.1)[:3, 3],
                           atol=1e-4)
    finally:
        pool.close()


def test_wall_clock_stamps_a_monotonic_instant():
    clock = WallClock()
    now = time.monotonic()
    assert abs(clock.nanoseconds(now) * 1e-9 - time.time()) < 0.01
    assert clock.nanoseconds(now + 0.5) - clock.nanoseconds(now) == pytest.approx(5e8, abs=1e5)


def test_thread_pool_plans_with_the_planner(spec, planner):
    pool = PlanningPool(spec, planner, in_process=True)
    try:
        assert pool.kind == 'thread'
        result = pool.submit('validate', _line(HOME, HOME + 0.1, names=planner.model.joint_names),
                             HOME, ExecutorSettings.from_values(_values()).motion).result(30)
        assert result.error is None
    finally:
        pool.close()


def test_a_dead_planning_process_is_replaced(spec, planner):
    errors = []
    pool = PlanningPool(spec, planner, in_process=False, on_error=errors.append)
    try:
        assert pool.submit('ready').result(60) is True
        for process in list(pool._pool._processes.values()):
            os.kill(process.pid, 9)
        time.sleep(0.5)
        assert pool.submit('ready').result(60) is True
        assert errors and 'died' in errors[0]
    finally:
        pool.close()


def test_ctrl_c_during_the_planning_process_start_does_not_kill_it(spec, planner):
    # Ctrl-C reaches the whole process group, the planning process too, also while it still
    # imports (before its initializer can ignore SIGINT).
    errors = []
    pool = PlanningPool(spec, planner, in_process=False, on_error=errors.append)
    try:
        for _ in range(5):
            for process in list(pool._pool._processes.values()):
                os.kill(process.pid, signal.SIGINT)
            time.sleep(0.05)
        assert pool.submit('ready').result(60) is True
        assert not errors
    finally:
        pool.close()


# ---------------------------------------------------------------------------- messages
def test_planned_path_message_and_markers(planner):
    from arm_ik.nodes.marker_messages import planned_path_markers
    from arm_ik.nodes.motion_messages import PLAN_SAMPLES, planned_path_message
    names = planner.model.joint_names
    plan = planner.plan(MoveGoal(joint_names=names,
                                 joint_positions=tuple(HOME + 0.2), duration=0.3),
                        HOME, ExecutorSettings.from_values(_values()).motion)
    path = planned_path_message(plan, 'base_link', names)
    assert path.feasible and path.has_target and not path.has_failure_point
    # At most PLAN_SAMPLES joint samples, evenly spread, the ends included.
    points = path.trajectory.points
    assert len(points) == min(len(plan.trajectory), PLAN_SAMPLES)
    assert list(points[-1].positions) == pytest.approx(plan.trajectory.positions[-1].tolist())
    assert list(points[0].positions) == pytest.approx(plan.trajectory.positions[0].tolist())
    assert sum(path.ghost_sizes) == len(path.ghost_points)
    markers = planned_path_markers(path).markers
    assert markers[0].action == 3 and [m.ns for m in markers[1:]] == \
        ['tip_path'] + ['ghosts'] * len(path.ghost_sizes) + ['target']
    assert all(len(m.points) == 4 for m in markers if m.ns == 'ghosts')
    assert markers[1].scale.x == 0.01 and markers[1].color.g == pytest.approx(0.8)
    failure = PlanFailure(error=None, reached=np.zeros((3, 3)), point=np.ones(3))
    path = planned_path_message(failure, 'base_link', names)
    assert not path.feasible and path.has_failure_point and not path.has_target
    assert [m.ns for m in planned_path_markers(path).markers[1:]] == ['tip_path', 'failure']
    short = planned_path_message(PlanFailure(error=None, reached=np.zeros((1, 3))), 'b', names)
    assert [m.ns for m in planned_path_markers(short).markers] == ['']


def test_planned_path_samples_are_spread_over_the_move(planner):
    """At most PLAN_SAMPLES joint samples (the GIL cost of the message is bounded), evenly
    spread with both ends; the tool path keeps its 300 points."""
    from arm_ik.nodes.motion_messages import PLAN_SAMPLES, planned_path_message
    from arm_kinematics.motion.move_types import preview_rows
    names = planner.model.joint_names
    positions = np.linspace(HOME, HOME + 0.3, 701)
    trajectory = Trajectory(tuple(names), np.linspace(0.0, 7.0, 701), positions,
                            np.zeros_like(positions))
    plan = Plan(trajectory, 'min_jerk', planner.model.fk(positions[-1])[:3, 3], positions[-1],
                None, 'test', preview=preview_of(planner.model, trajectory))
    path = planned_path_message(plan, 'base_link', names)
    assert len(path.trajectory.points) == PLAN_SAMPLES and len(path.tip_path) == 300
    last = path.trajectory.points[-1]
    assert np.allclose(last.positions, positions[-1]) and last.time_from_start.sec == 7
    rows = preview_rows(701, PLAN_SAMPLES)
    assert np.allclose([p.positions for p in path.trajectory.points], positions[rows])
