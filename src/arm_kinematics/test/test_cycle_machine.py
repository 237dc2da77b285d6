"""target_input's decisions (kinematics.tasks.cycle.CycleRunner), without ROS: events in,
effects out, on the shipped sequences and the arms' own IK."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from arm_kinematics.description.bundled import load_arm_config
from arm_kinematics.ik.request import IKDispatcher
from arm_kinematics.ik.result import ErrorCode
from arm_kinematics.ik.solvers.base import workspace_from_model
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.tasks.cycle import (
    AskConsole,
    CycleRunner,
    CycleSettings,
    DropGoal,
    GoalOutcome,
    Log,
    MoveBall,
    Report,
    ReportState,
    SendGoal,
)
from arm_kinematics.tasks.pick_place import (
    check_reachable,
    joint_vector,
    MachineState,
    PickPlaceMachine,
)
from arm_kinematics.tasks.sequences import load_sequence, with_points

CONFIG = Path(__file__).resolve().parents[2] / 'arm_bringup' / 'config'
HOME = {'manipulator3d': [0.0, 0.7853981633974483, -1.5707963267948966]}
ACTION = '/arm/trajectory_executor/move_to_target'


class Rig:
    """A CycleRunner with the arm's IK as its reach check and a hand on the clock."""

    def __init__(self, arm: str, load_arm, settings: CycleSettings | None = None,
                 points: dict | None = None, sequence: bool = True) -> None:
        self.model = load_arm(arm)
        config = load_arm_config(arm)
        minimum = (config.get('ik') or {}).get('min_height_above_shoulder')
        workspace = workspace_from_model(self.model, None if minimum is None else float(minimum))
        self.dispatcher = IKDispatcher(self.model, workspace, config['ik']['default_solver'])
        self.settings = settings or CycleSettings(cycles=1)
        loaded = load_sequence(CONFIG / f'{arm}_pick_place.yaml')
        self.home = joint_vector(loaded, self.model, 'home')    # the IK seed
        machine = None
        if sequence:
            machine = PickPlaceMachine(with_points(loaded, points or {}), self.model,
                                       self.settings.cycles, self.settings.grasp_tolerance)
        self.ready = True
        self.now, self.stamp = 0.0, 100.0
        self.runner = CycleRunner(self.model, machine, self.settings, self.check,
                                  lambda: self.ready, ACTION)
        self.effects: list = []

    def check(self, points):
        return check_reachable(self.dispatcher, points, self.home)

    def record(self, effects: list) -> list:
        self.effects += effects
        return effects

    def later(self, seconds: float) -> None:
        self.now += seconds
        self.stamp += seconds

    def of(self, kind: type) -> list:
        return [e for e in self.effects if isinstance(e, kind)]

    def reports(self, state: ReportState) -> list[Report]:
        return [r for r in self.of(Report) if r.state == state]

    def final_q(self, goal: SendGoal) -> np.ndarray:
        """Where the arm ends for ``goal``: its joints, or an IK solution of its point."""
        if goal.goal.joints is not None:
            return np.array(goal.goal.joints)
        verdict, = self.check({'p': np.array(goal.goal.position)})
        return verdict.q

    def succeed(self, goal: SendGoal, final: bool = True) -> list:
        """The executor accepts ``goal``, runs it and answers SUCCESS."""
        self.record(self.runner.goal_accepted(goal.token, self.now))
        self.later(0.5)
        outcome = GoalOutcome(True, 4, 0, '', 0, 1e-4, self.final_q(goal) if final else None)
        return self.record(self.runner.goal_result(goal.token, outcome, self.now, self.stamp))

    def run(self, limit: int = 100) -> None:
        """Answer every goal with success and let waits pass until nothing is left to do."""
        answered = set()
        for _ in range(limit):
            pending = [g for g in self.of(SendGoal) if g.token not in answered]
            if pending:
                answered.add(pending[0].token)
                self.succeed(pending[0])
            else:
                self.later(0.25)
                if not self.record(self.runner.tick(self.now, self.stamp)) \
                        and self.runner.machine.state != MachineState.RUNNING \
                        and not self.runner.pending_start:
                    return
        raise AssertionError('the cycle did not end')

    def started(self) -> SendGoal:
        """Start-up, then the first tick with the server up: the cycle's first goal."""
        self.record(self.runner.start(self.now))
        self.record(self.runner.tick(self.now, self.stamp))
        return self.of(SendGoal)[-1]


def test_a_full_cycle_sends_each_move_and_carries_the_ball(load_arm):
    rig = Rig('manipulator3d', load_arm)
    first = rig.started()
    assert first.goal.joints == pytest.approx(HOME['manipulator3d'])
    assert first.goal.frame_id == rig.model.base_link and first.source == 'sequence'
    rig.run()
    assert [g.target_name for g in rig.of(SendGoal)] == ['home', 'start', 'goal', 'home']
    assert [g.goal.settings.motion_law for g in rig.of(SendGoal)] == \
        ['min_jerk', 'linear_cartesian', 'linear_cartesian', 'min_jerk']
    done = [(r.phase, r.step_kind) for r in rig.reports(ReportState.SUCCEEDED)]
    assert done == [('HOME', 'move'), ('START', 'move'), ('PICK', 'attach'), ('GOAL', 'move'),
                    ('PLACE', 'detach'), ('HOME', 'move'), ('WAIT', 'wait')]
    assert all(r.cycle == 1 and r.sequence == 'manipulator3d_pick_place'
               for r in rig.reports(ReportState.SUCCEEDED))
    finished, = rig.reports(ReportState.FINISHED)
    assert finished.message == 'manipulator3d_pick_place: 1 cycle(s) finished'
    balls = rig.of(MoveBall)
    changes = [b.ball.attached for i, b in enumerate(balls)
               if i == 0 or b.ball.attached != balls[i - 1].ball.attached]
    assert changes == [False, True, False]
    attach = next(b for b in balls if b.ball.attached)
    assert attach.phase == 'PICK'
    assert attach.ball.position == pytest.approx([0.60, -0.30, 0.10], abs=1e-6)
    assert balls[-1].ball.position == pytest.approx([0.45, 0.45, 0.15], abs=1e-6)
    assert not rig.reports(ReportState.FAILED) and rig.runner.active is None


def test_a_rejected_goal_fails_the_cycle_and_nothing_more_is_sent(load_arm):
    rig = Rig('manipulator3d', load_arm)
    rig.succeed(rig.started())                               # HOME
    start = rig.of(SendGoal)[-1]
    effects = rig.record(rig.runner.goal_rejected(start.token, rig.now, rig.stamp))
    failure, = [e for e in effects if isinstance(e, Report)]
    assert failure.state == ReportState.FAILED and failure.phase == 'START'
    assert failure.code == MotionCode.INVALID_GOAL
    assert failure.message == 'INVALID_GOAL: the executor rejected the goal'
    assert failure.target == pytest.approx((0.60, -0.30, 0.10))
    assert rig.runner.machine.state == MachineState.FAILED
    assert any(isinstance(e, MoveBall) for e in effects)     # the ball as it was left
    rig.later(5.0)
    assert rig.runner.tick(rig.now, rig.stamp) == []
    assert len(rig.of(SendGoal)) == 2


def test_a_result_that_never_comes_times_out_and_is_canceled(load_arm):
    rig = Rig('manipulator3d', load_arm, CycleSettings(cycles=1, result_timeout=1.5))
    home = rig.started()
    rig.record(rig.runner.goal_accepted(home.token, rig.now))
    duration = home.duration                                 # 2 s, from the file
    rig.later(duration + 1.4)
    assert rig.runner.tick(rig.now, rig.stamp) == []         # not overdue yet
    rig.later(0.2)
    effects = rig.record(rig.runner.tick(rig.now, rig.stamp))
    assert effects[0] == DropGoal(home.token, cancel=True)
    failure, = [e for e in effects if isinstance(e, Report)]
    assert failure.state == ReportState.FAILED and failure.code == MotionCode.INTERNAL_ERROR
    assert "no result from the executor within 1.5 s beyond the move's duration" in \
        failure.message
    assert rig.runner.machine.state == MachineState.FAILED
    # A result arriving after all changes nothing.
    late = GoalOutcome(True, 4, 0, final=rig.final_q(home))
    assert rig.runner.goal_result(home.token, late, rig.now, rig.stamp) == []


def test_an_unaccepted_goal_never_times_out_here(load_arm):
    """Before accept/reject the middleware's resend rules; the result deadline waits."""
    rig = Rig('manipulator3d', load_arm, CycleSettings(cycles=1, result_timeout=0.5))
    rig.started()
    rig.later(60.0)
    assert rig.runner.tick(rig.now, rig.stamp) == []


def test_stop_mid_cycle_cancels_the_move_and_ignores_its_result(load_arm):
    rig = Rig('manipulator3d', load_arm)
    rig.succeed(rig.started())
    start = rig.of(SendGoal)[-1]
    rig.record(rig.runner.goal_accepted(start.token, rig.now))
    stopped, message, effects = rig.runner.stop_cycle(rig.now)
    rig.record(effects)
    assert (stopped, message) == (True, 'cycle stopped')
    report, drop = effects
    assert report.state == ReportState.STOPPED
    assert report.message == ('manipulator3d_pick_place: cycle 1 stopped: ~/stop_cycle was '
                              'called')
    assert drop == DropGoal(start.token, cancel=True)
    outcome = GoalOutcome(True, 4, 0, final=rig.final_q(start))
    assert rig.runner.goal_result(start.token, outcome, rig.now, rig.stamp) == []
    assert rig.runner.stop_cycle(rig.now)[:2] == (False, 'no cycle was running')
    rig.later(5.0)
    assert rig.runner.tick(rig.now, rig.stamp) == []


@pytest.mark.parametrize('cycles', [1, 2, 3])
def test_cycles_n_ends_after_n_cycles_with_a_fresh_ball_each(cycles, load_arm):
    rig = Rig('ccd5', load_arm, CycleSettings(cycles=cycles))
    rig.started()
    rig.run()
    assert [g.target_name for g in rig.of(SendGoal)] == ['pick', 'lift', 'place', 'home'] * cycles
    moves = [r.cycle for r in rig.reports(ReportState.SUCCEEDED) if r.step_kind == 'move']
    assert moves == [1 + k // 4 for k in range(4 * cycles)]
    finished, = rig.reports(ReportState.FINISHED)
    assert finished.message == f'ccd5_pick_place: {cycles} cycle(s) finished'
    starts = [e.text for e in rig.of(Log) if e.text.endswith('starts')]
    assert starts == [f'ccd5_pick_place: cycle {k} starts' for k in range(1, cycles + 1)]
    assert rig.runner.machine.state == MachineState.DONE


def test_a_click_takes_over_the_running_cycle(load_arm):
    rig = Rig('manipulator3d', load_arm)
    home = rig.started()
    effects = rig.record(rig.runner.target('clicked_point', 'base_link', [0.3, 0.3, 0.4],
                                           rig.now))
    stopped, drop, send, sent = effects
    assert stopped.state == ReportState.STOPPED and 'clicked_point took over' in stopped.message
    assert drop == DropGoal(home.token, cancel=False)     # the executor preempts it
    assert send.source == 'clicked_point' and send.goal.joints is None
    assert send.goal.position == (0.3, 0.3, 0.4) and send.goal.frame_id == 'base_link'
    assert sent.state == ReportState.STARTED and sent.sequence == '' and sent.cycle == 0
    # The superseded goal's answers are ignored; the click's result is reported.
    assert rig.runner.goal_result(home.token, GoalOutcome(True, 4, 0), rig.now,
                                  rig.stamp) == []
    effects = rig.succeed(send)
    reached, = effects
    assert reached.state == ReportState.SUCCEEDED and reached.source == 'clicked_point'
    assert reached.message.startswith('target [0.300, 0.300, 0.400] m reached, error 0.10 mm')


def test_non_finite_targets_are_refused_and_the_cycle_goes_on(load_arm):
    rig = Rig('manipulator3d', load_arm)
    rig.started()
    refused, = rig.runner.target('clicked_point', 'base_link', [0.3, np.nan, 0.4], rig.now)
    assert refused.state == ReportState.REFUSED and refused.code == MotionCode.INVALID_GOAL
    assert refused.ik_code == ErrorCode.INVALID_INPUT
    assert refused.message == ('clicked_point has a non-finite coordinate [0.3, nan, 0.4]; '
                               'no goal sent')
    assert refused.target == (0.3, 0.0, 0.4)
    refused, = rig.runner.target('goal_pose', 'base_link', [0.3, 0.2, 0.4], rig.now,
                                 (0.0, 0.0, np.inf, 1.0))
    assert 'goal_pose has a non-finite position or orientation' in refused.message
    assert rig.runner.machine.state == MachineState.RUNNING


def test_goal_pose_carries_its_orientation_and_type(load_arm):
    rig = Rig('manipulator3d', load_arm, CycleSettings(goal_pose_type='full_pose'),
              sequence=False)
    effects = rig.runner.target('goal_pose', 'world', [0.4, -0.1, 0.2], rig.now,
                                (0.0, 0.0, 0.0, 1.0))
    send = next(e for e in effects if isinstance(e, SendGoal))
    assert send.goal.goal_type == 'full_pose' and send.goal.orientation == (0, 0, 0, 1.0)


def test_no_server_refuses_a_target_and_holds_the_autostart(load_arm):
    rig = Rig('manipulator3d', load_arm)
    rig.ready = False
    rig.record(rig.runner.start(rig.now))
    rig.later(11.0)
    assert [e.text for e in rig.runner.tick(rig.now, rig.stamp)] == \
        [f'waiting for the action server {ACTION}']
    refused, = [e for e in rig.runner.target('clicked_point', 'base_link', [0.3, 0.3, 0.4],
                                             rig.now) if isinstance(e, Report)]
    assert refused.state == ReportState.REFUSED and ACTION in refused.message
    assert not rig.of(SendGoal)
    # The click took over: the autostart is off until ~/run_cycle.
    rig.ready = True
    assert rig.runner.tick(rig.now, rig.stamp) == []
    started, message, _ = rig.runner.run_cycle(rig.now)
    assert started and message == 'manipulator3d_pick_place started'


def test_an_unreachable_start_is_refused_before_any_goal(load_arm):
    rig = Rig('manipulator3d', load_arm, points={'start': [1.5, 0.0, 0.2]})
    rig.record(rig.runner.start(rig.now))
    rig.record(rig.runner.tick(rig.now, rig.stamp))
    refused, = rig.reports(ReportState.REFUSED)
    assert refused.step_kind == 'check' and refused.target_name == 'start'
    assert refused.code == MotionCode.IK_FAILED and refused.ik_code == ErrorCode.OUT_OF_REACH
    assert 'maximum reach 1.100 m' in refused.message
    assert not rig.of(SendGoal)
    started, message, _ = rig.runner.run_cycle(rig.now)
    assert not started and 'START [1.500, 0.000, 0.200] m is unreachable' in message
    assert 'GOAL' in rig.runner.refusals({'goal': np.array([1.5, 0.0, 0.3])})
    # A reachable START: checked again, and the autostart goes.
    sequence = with_points(rig.runner.machine.sequence, {'start': [0.5, -0.2, 0.15]})
    rig.record(rig.runner.use_sequence(sequence, rig.now))
    rig.record(rig.runner.tick(rig.now, rig.stamp))
    assert [g.target_name for g in rig.of(SendGoal)] == ['home']


def test_without_a_final_state_attach_waits_for_a_later_joint_state(load_arm):
    rig = Rig('manipulator3d', load_arm, CycleSettings(cycles=1, current_pose_timeout=1.0))
    rig.succeed(rig.started())                        # HOME
    start = rig.of(SendGoal)[-1]
    q = rig.final_q(start)
    effects = rig.succeed(start, final=False)         # no final state in the result
    assert not any(isinstance(e, Report) and e.phase == 'PICK' for e in effects)
    names = rig.model.joint_names
    # A state stamped before the result shows where the arm was: ignored.
    assert rig.runner.joint_state(names, rig.home, rig.stamp - 0.1, rig.now) == []
    effects = rig.record(rig.runner.joint_state(names, q, rig.stamp + 0.01, rig.now))
    attach = next(e for e in effects if isinstance(e, Report) and e.step_kind == 'attach')
    assert attach.state == ReportState.SUCCEEDED and 'stands in' not in attach.message


def test_a_wait_without_a_current_pose_goes_on_with_the_target_and_says_so(load_arm):
    rig = Rig('manipulator3d', load_arm, CycleSettings(cycles=1, current_pose_timeout=0.5))
    rig.succeed(rig.started())
    rig.succeed(rig.of(SendGoal)[-1], final=False)    # START, no final state
    rig.later(0.3)
    assert not rig.record(rig.runner.tick(rig.now, rig.stamp))
    rig.later(0.3)
    effects = rig.record(rig.runner.tick(rig.now, rig.stamp))
    attach = next(e for e in effects if isinstance(e, Report) and e.step_kind == 'attach')
    assert "no joint state stamped after the last move's result came within 0.5 s" in \
        attach.message and 'the target of the last move stands in' in attach.message


def test_interactive_asks_the_console_first(load_arm):
    rig = Rig('manipulator3d', load_arm, CycleSettings(cycles=1, interactive=True))
    ask, = [e for e in rig.runner.start(rig.now) if isinstance(e, AskConsole)]
    assert ask.names == ('start', 'goal')
    assert rig.runner.run_cycle(rig.now)[:2] == (False,
                                                 'waiting for START/GOAL on the console')
    rig.runner.console_answered()
    logs = [e.text for e in rig.runner.prepare(rig.now) if isinstance(e, Log)]
    assert logs == ['manipulator3d_pick_place: every point is reachable']
    assert rig.runner.pending_start


def test_a_model_change_is_refused_while_running(load_arm):
    rig = Rig('manipulator3d', load_arm)
    assert rig.runner.busy() == ''
    rig.started()
    assert 'stop the cycle (~/stop_cycle)' in rig.runner.busy()


def test_report_lines_and_levels():
    report = Report(ReportState.FAILED, 'sequence', 'boom', sequence='s', cycle=2, phase='GOAL')
    assert (report.level, report.line) == ('error', '[sequence s cycle 2 GOAL] FAILED: boom')
    assert Report(ReportState.STOPPED, 'sequence', 'x').level == 'warn'
    assert Report(ReportState.STARTED, 'clicked_point', 'x').line == \
        '[clicked_point] STARTED: x'


@pytest.mark.parametrize('code, words', [(MotionCode.UNSAFE_PATH, 'UNSAFE_PATH: the path hits'),
                                         (99, '99: the path hits')])
def test_a_failed_move_stops_the_cycle_with_its_code(code, words, load_arm):
    rig = Rig('manipulator3d', load_arm)
    home = rig.started()
    rig.record(rig.runner.goal_accepted(home.token, rig.now))
    outcome = GoalOutcome(False, 6, int(code), 'the path hits the obstacle', 0, 0.2,
                          np.array(HOME['manipulator3d']))
    failure, = [e for e in rig.runner.goal_result(home.token, outcome, rig.now, rig.stamp)
                if isinstance(e, Report)]
    assert failure.state == ReportState.FAILED and failure.code == int(code)
    assert failure.message.startswith(words) and failure.final_error == pytest.approx(0.2)
    assert rig.runner.machine.state == MachineState.FAILED
    assert rig.runner.pose.positions == pytest.approx(HOME['manipulator3d'])
