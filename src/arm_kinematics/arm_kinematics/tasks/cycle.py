"""What target_input does with targets and scripted cycles: the decisions, without ROS.

``CycleRunner`` owns the ``PickPlaceMachine``, the one goal in flight, the wait for a current
pose (``CurrentPose``) and the ball's publishing. A node feeds it events (a target, a goal
accepted, rejected, failed or with its result, feedback, a joint state, the tick, run/stop
requests, new settings, points or model) and carries out the effects each call returns, in
order: ``SendGoal``, ``DropGoal``, ``Report``, ``MoveBall``, ``Log``, ``AskConsole`` (plain
values, in kinematics.tasks.cycle_effects).

Its rules:
- a target with a non-finite coordinate is refused, no goal sent; any target stops the
  running cycle first (it takes over);
- one goal in flight: a newer one supersedes it (the executor preempts the old one);
- an accepted goal without a result ``result_timeout`` s past its duration fails (and is
  canceled); sending and re-asking are the middleware's (``arm_ik.middleware.GoalCourier``);
- the points are checked (``check``) before a cycle starts; autostart waits for the server;
- attach, detach and the step after a move are decided on a pose known to be current.

Not thread-safe: call it from one thread (a node's executor). Units: m, rad, s; ``now`` is a
monotonic clock, ``stamp`` the ROS clock (the joint states' stamps).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
import math

import numpy as np

from arm_kinematics.common.joint_state import positions_by_name
from arm_kinematics.ik.result import ErrorCode
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.tasks.current_pose import CurrentPose, PoseState
from arm_kinematics.tasks.cycle_effects import (
    AskConsole,
    CycleSettings,
    DropGoal,
    Effect,
    GoalOutcome,
    GoalRequest,
    Log,
    MoveBall,
    Report,
    ReportState,
    SendGoal,
)
from arm_kinematics.tasks.pick_place import (
    Ball,
    MachineState,
    PickPlaceMachine,
    Reachability,
    sequence_points,
)
from arm_kinematics.tasks.sequences import Step, StepKind, TaskSequence

__all__ = ['AskConsole', 'CycleRunner', 'CycleSettings', 'DropGoal', 'Effect', 'GoalOutcome',
           'GoalRequest', 'Log', 'MoveBall', 'POINT_PARAMETERS', 'Report', 'ReportState',
           'SendGoal']

POINT_PARAMETERS = ('start', 'goal')   # the points a node may override (parameters, console)
WAITING_LOG_PERIOD = 10.0   # s between "waiting for the action server" lines


def _fmt(values: Sequence[float]) -> str:
    return '[' + ', '.join(f'{float(v):.3f}' for v in values) + ']'


def _code_name(code: int) -> str:
    try:
        return MotionCode(code).name
    except ValueError:
        return str(code)


@dataclass
class ActiveGoal:
    """The goal in flight; ``deadline`` (monotonic s) is when its result is overdue, set
    once it is accepted."""

    token: int
    source: str
    step: Step | None
    target: np.ndarray
    target_name: str
    duration: float
    accepted: bool = False
    deadline: float = math.inf


# ---------------------------------------------------------------------- the runner
class CycleRunner:
    """Targets and scripted cycles: events in, effects out (see the module docstring)."""

    def __init__(self, model: ArmModel, machine: PickPlaceMachine | None,
                 settings: CycleSettings,
                 check: Callable[[Mapping[str, np.ndarray]], list[Reachability]],
                 server_ready: Callable[[], bool], action_path: str = '') -> None:
        """Args:
            model: the arm (FK of joint states, joint goals).
            machine: the sequence's machine; None without a sequence.
            settings: the run-time settings.
            check: name -> point (m) to their Reachability (the arm's IK and floor rules).
            server_ready: True when the executor's action server is up.
            action_path: the action's resolved name, for messages.
        """
        self.model = model
        self.machine = machine
        self.settings = settings
        self._check = check
        self._server_ready = server_ready
        self.action_path = action_path
        self.pose = CurrentPose(settings.current_pose_timeout)
        self.active: ActiveGoal | None = None
        self.pending_start = False
        self.refused: list[Reachability] = []
        self.console = 'off'        # off | asking | answered
        self._token = 0
        self._wait_until: float | None = None
        self._decision: tuple[Step, float, str] | None = None
        self._joint_tip: np.ndarray | None = None
        self._ball_dirty = False
        self._ball_sent_at = 0.0
        self._waiting_logged_at = 0.0
        self._now = 0.0
        self._stamp = 0.0
        self._out: list[Effect] = []

    # ------------------------------------------------------------------ plumbing
    def _begin(self, now: float, stamp: float | None = None) -> None:
        self._now = float(now)
        if stamp is not None:
            self._stamp = float(stamp)
        self._out = []

    def _take(self) -> list[Effect]:
        out, self._out = self._out, []
        return out

    @property
    def running(self) -> bool:
        return self.machine is not None and self.machine.state == MachineState.RUNNING

    def busy(self) -> str:
        """Why the arm's model may not change now ('' when it may)."""
        if self.running:
            return (f'{self.machine.sequence.name} is running: stop the cycle (~/stop_cycle) '
                    "before changing the arm's model")
        return ''

    def refusals(self, points: Mapping[str, np.ndarray]) -> str:
        """'' when every point is reachable, else the reasons."""
        return '; '.join(r.reason for r in self._check(points) if not r.ok)

    # ------------------------------------------------------------------ start-up, updates
    def start(self, now: float) -> list[Effect]:
        """At start-up: the ball at the pick point, the points checked (or the console)."""
        self._begin(now)
        if self.machine is not None:
            self._publish_ball()
            self._prepare()
        return self._take()

    def prepare(self, now: float) -> list[Effect]:
        """Check every point again and arm the autostart (after the console's answer)."""
        self._begin(now)
        self._prepare()
        return self._take()

    def console_answered(self) -> None:
        """The console's answer came (the node applies it as parameters, then ``prepare``)."""
        self.console = 'answered'

    def use_settings(self, settings: CycleSettings) -> None:
        self.settings = settings
        if self.machine is not None:
            self.machine.cycles = settings.cycles
            self.machine.grasp_tolerance = settings.grasp_tolerance

    def use_sequence(self, sequence: TaskSequence, now: float) -> list[Effect]:
        """New START/GOAL: from the next cycle on while running, else now (checked again).

        Raises:
            SequenceError: it does not fit the cycle or the arm.
        """
        self._begin(now)
        self.machine.replace_sequence(sequence)
        self._log('info', f'{sequence.name}: ' + ', '.join(
            f'{n.upper()} {_fmt(sequence.point(n))} m' for n in POINT_PARAMETERS
            if n in sequence.points) + (' from the next cycle on' if self.running else ''))
        if self.refused and not self.running:
            self._prepare()
        return self._take()

    def use_model(self, model: ArmModel, machine: PickPlaceMachine | None,
                  now: float) -> list[Effect]:
        """A new arm model (not while running, see ``busy``) with the sequence's new machine."""
        self._begin(now)
        self.model = model
        self._joint_tip = None          # FK of the old links; the next joint state sets it
        if machine is not None:
            # A fresh machine, its ball at the pick point of the new model, and the points
            # checked again before a cycle may start.
            self.machine = machine
            self._publish_ball()
            if self.refused or self.pending_start:
                self.pending_start = False
                self._prepare()
        return self._take()

    # ------------------------------------------------------------------ inputs
    def target(self, source: str, frame_id: str, point: Sequence[float], now: float,
               orientation: Sequence[float] | None = None) -> list[Effect]:
        """A clicked point (``orientation`` None) or a goal pose: it takes over."""
        self._begin(now)
        point = np.asarray(point, dtype=float)
        if orientation is None:
            ok = bool(np.all(np.isfinite(point)))
            what = f'a non-finite coordinate {point.tolist()}'
            request = GoalRequest(frame_id, _xyz(point), self.settings.clicks)
        else:
            quaternion = np.asarray(orientation, dtype=float)
            ok = bool(np.all(np.isfinite(point)) and np.all(np.isfinite(quaternion)))
            what = (f'a non-finite position or orientation {point.tolist()} '
                    f'{quaternion.tolist()}')
            request = GoalRequest(frame_id, _xyz(point), self.settings.clicks,
                                  self.settings.goal_pose_type,
                                  tuple(float(v) for v in quaternion))
        if not ok:
            self._report(ReportState.REFUSED, source, None, f'{source} has {what}; no goal sent',
                         target=np.where(np.isfinite(point), point, 0.0),
                         code=MotionCode.INVALID_GOAL, ik_code=int(ErrorCode.INVALID_INPUT))
            return self._take()
        self._stop_cycle(f'{source} took over')
        self._send(request, source, None, point, '', self.settings.clicks.duration)
        return self._take()

    def joint_state(self, names: Sequence[str], positions: Sequence[float], stamp: float,
                    now: float) -> list[Effect]:
        """A joint state stamped ``stamp``: the ball follows, a waiting decision may go on."""
        self._begin(now)
        q, _ = positions_by_name(self.model.joint_names, names, positions)
        if q is None:           # an unusable state keeps the last good tip
            return self._take()
        if not self.pose.measured(q, stamp):
            return self._take()  # stamped before the last move's result: where the arm was
        self._joint_tip = self.model.fk(q)[:3, 3].copy()
        self._follow(self._joint_tip)
        self._take_decision()
        return self._take()

    def feedback(self, token: int, tip: Sequence[float]) -> list[Effect]:
        """Where the move is now, for the carried ball only (no decision is taken on it: the
        last feedback may be from before the move's end)."""
        self._out = []
        tip = np.asarray(tip, dtype=float)
        if self._current(token) is not None and np.all(np.isfinite(tip)) \
                and self._joint_tip is None:
            self._follow(tip)
        return self._take()

    # ------------------------------------------------------------------ goal events
    def goal_accepted(self, token: int, now: float) -> list[Effect]:
        self._begin(now)
        active = self._current(token)
        if active is not None:
            active.accepted = True
            active.deadline = now + active.duration + self.settings.result_timeout
        return self._take()

    def goal_rejected(self, token: int, now: float, stamp: float,
                      reason: str = 'the executor rejected the goal') -> list[Effect]:
        """The executor rejected goal ``token``; ``reason``: the client's words for it (with
        the executor's own, arm_ik.goal_refusals, when it published them)."""
        return self.goal_failed(token, reason, MotionCode.INVALID_GOAL, now, stamp)

    def goal_failed(self, token: int, reason: str, code: int, now: float,
                    stamp: float) -> list[Effect]:
        """No answer, no result, or a transport error: the goal failed with ``code``."""
        self._begin(now, stamp)
        active = self._current(token)
        if active is not None:
            self._goal_failed(active, reason, code)
        return self._take()

    def goal_result(self, token: int, outcome: GoalOutcome, now: float,
                    stamp: float) -> list[Effect]:
        """The goal's result, taken at ROS time ``stamp``."""
        self._begin(now, stamp)
        active = self._current(token)
        if active is None:
            return self._take()     # superseded: the executor preempts it on the newer goal
        self.active = None
        # From here on only the result's final state or a joint state stamped after this
        # instant says where the arm is; what joint states delivered so far may be older.
        self.pose.move_ended(stamp, outcome.final)
        if not outcome.succeeded or outcome.code != MotionCode.SUCCESS:
            self._goal_failed(active, outcome.message or f'goal ended with status '
                              f'{outcome.status}', outcome.code, outcome.ik_code,
                              outcome.final_error, pose_known=True)
            return self._take()
        message = (f'{active.target_name or "target"} {_fmt(active.target)} m reached, error '
                   f'{outcome.final_error * 1e3:.2f} mm' + (f': {outcome.message}'
                                                           if outcome.message else ''))
        if active.step is not None:
            if self.machine.current is active.step:
                self._when_current(active.step, float(outcome.final_error), message)
            return self._take()
        self._report(ReportState.SUCCEEDED, active.source, None, message, target=active.target,
                     final_error=float(outcome.final_error))
        return self._take()

    # ------------------------------------------------------------------ services, time
    def run_cycle(self, now: float) -> tuple[bool, str, list[Effect]]:
        """~/run_cycle: (started, message, effects)."""
        self._begin(now)
        if self.machine is None:
            return False, 'no sequence_file was given', self._take()
        if self.running:
            return False, 'the cycle is already running', self._take()
        if self.console == 'asking':
            return False, 'waiting for START/GOAL on the console', self._take()
        reasons = self.refusals(sequence_points(self.machine.sequence))
        if reasons:
            return False, reasons, self._take()
        if not self._server_ready():
            return False, f'the action server {self.action_path} is not up', self._take()
        self.refused = []
        self._start_cycle()
        return True, f'{self.machine.sequence.name} started', self._take()

    def stop_cycle(self, now: float) -> tuple[bool, str, list[Effect]]:
        """~/stop_cycle: (stopped, message, effects); the executor holds the pose reached."""
        self._begin(now)
        active = self.active
        stopped = self._stop_cycle('~/stop_cycle was called')
        if active is not None and active.step is not None:
            self.active = None
            self._out.append(DropGoal(active.token, cancel=True))
        return stopped, 'cycle stopped' if stopped else 'no cycle was running', self._take()

    def tick(self, now: float, stamp: float) -> list[Effect]:
        """Housekeeping: waits, the autostart, an overdue result, the carried ball."""
        self._begin(now, stamp)
        self._take_decision()
        if self.pending_start:
            if self._server_ready():
                self.pending_start = False
                self._start_cycle()
            elif now - self._waiting_logged_at > WAITING_LOG_PERIOD:
                self._waiting_logged_at = now
                self._log('info', f'waiting for the action server {self.action_path}')
        if self._wait_until is not None and now >= self._wait_until:
            self._wait_until = None
            if self.running:
                self._finish_step(None, 0.0, '')
        active = self.active
        if active is not None and active.accepted and now > active.deadline:
            self._out.append(DropGoal(active.token, cancel=True))
            self._goal_failed(active, 'no result from the executor within '
                              f"{self.settings.result_timeout:g} s beyond the move's duration",
                              MotionCode.INTERNAL_ERROR)
        rate = self.settings.ball_rate
        if self._ball_dirty and (rate <= 0.0 or now - self._ball_sent_at >= 1.0 / rate):
            self._publish_ball()
        return self._take()

    # ------------------------------------------------------------------ the cycle
    def _prepare(self) -> None:
        """Ask the console (interactive), or check every point and arm the autostart."""
        if self.settings.interactive and self.console == 'off':
            self.console = 'asking'
            sequence = self.machine.sequence
            names = tuple(n for n in POINT_PARAMETERS if n in sequence.points)
            self._out.append(AskConsole(names, {n: sequence.point(n) for n in names}))
            return
        if self.console == 'asking':
            return
        sequence = self.machine.sequence
        source = 'console' if self.console == 'answered' else 'sequence'
        self.refused = [r for r in self._check(sequence_points(sequence)) if not r.ok]
        if self.refused:
            for refusal in self.refused:
                self._report(ReportState.REFUSED, source, None, refusal.reason, kind='check',
                             target=refusal.position, target_name=refusal.name,
                             code=MotionCode.IK_FAILED, ik_code=int(refusal.code))
            self._log('error', f'{sequence.name}: cycle refused, no goal sent: ' +
                      '; '.join(r.reason for r in self.refused))
            return
        self._log('info', f'{sequence.name}: every point is reachable')
        self.pending_start = bool(self.settings.autostart)

    def _start_cycle(self) -> None:
        step = self.machine.start()
        self._publish_ball()
        self._log('info', f'{self.machine.sequence.name}: cycle {self.machine.cycle} starts')
        self._run_step(step)

    def _run_step(self, step: Step) -> None:
        if step.kind == StepKind.MOVE:
            self._send_step(step)
        elif step.kind == StepKind.WAIT:
            self._report(ReportState.STARTED, 'sequence', step, step.label)
            self._wait_until = self._now + step.seconds
        else:
            self._when_current(step, 0.0, '')

    def _finish_step(self, tip: np.ndarray | None, final_error: float, message: str,
                     note: str = '') -> None:
        """Complete the current step with the tool at ``tip`` (None: the machine's stand-in,
        the target of the last move); ``note`` says why no current tip was known."""
        machine = self.machine
        step = machine.current
        cycle = machine.cycle      # completing a cycle's last step starts the next
        reason = machine.complete(tip)
        stand_in = f' ({note}: the target of the last move stands in)' if note else ''
        if reason:
            self._report(ReportState.FAILED, 'sequence', step,
                         f'{reason}{stand_in}; cycle stopped', cycle=cycle)
            self._publish_ball()
            return
        if step.kind in (StepKind.ATTACH, StepKind.DETACH):
            message = f'{step.label} at {_fmt(machine.ball.position)} m'
            # Labelled with the step's state (PICK, PLACE): the machine has moved on already.
            self._publish_ball(phase=step.phase)
        self._report(ReportState.SUCCEEDED, 'sequence', step, (message or step.label) + stand_in,
                     final_error=final_error, cycle=cycle)
        if machine.state == MachineState.RUNNING:
            if machine.index == 0:
                self._publish_ball()   # a new cycle: a fresh ball at the pick point
                self._log('info', f'{machine.sequence.name}: cycle {machine.cycle} starts')
            self._run_step(machine.current)
        elif machine.state == MachineState.DONE:
            self._report(ReportState.FINISHED, 'sequence', None,
                         f'{machine.sequence.name}: {machine.cycle} cycle(s) finished')

    def _stop_cycle(self, reason: str) -> bool:
        """Stop a running or pending cycle; True when there was one."""
        pending, self.pending_start = self.pending_start, False
        if not self.running:
            return pending
        self.machine.stop(reason)
        self._wait_until = None
        self._decision = None
        self._report(ReportState.STOPPED, 'sequence', None,
                     f'{self.machine.sequence.name}: cycle {self.machine.cycle} stopped: {reason}')
        return True

    # ------------------------------------------------------------------ the current pose
    def _when_current(self, step: Step, final_error: float, message: str) -> None:
        """Finish ``step`` on a tip known to be current: now when one is, else from a joint
        state or the tick once one comes, or with the stand-in once the wait ends."""
        self._decision = (step, final_error, message)
        self._take_decision()

    def _take_decision(self) -> None:
        if self._decision is None:
            return
        step, final_error, message = self._decision
        if self.machine is None or self.machine.current is not step:
            self._decision = None       # the cycle stopped or moved on meanwhile
            return
        self.pose.wait = self.settings.current_pose_timeout
        state = self.pose.state(self._now)
        if state == PoseState.WAITING:
            return
        self._decision = None
        q = self.pose.positions
        tip = None if q is None else self.model.fk(q)[:3, 3].copy()
        self._finish_step(tip, final_error, message,
                          '' if state == PoseState.CURRENT else self.pose.timeout_reason())

    def _follow(self, tip: np.ndarray) -> None:
        if self.machine is not None and self.machine.follow(tip):
            self._ball_dirty = True

    # ------------------------------------------------------------------ goals
    def _send_step(self, step: Step) -> None:
        sequence = self.machine.sequence
        target = self.machine.target_of(step)
        settings = step.settings
        if not settings.solver and self.settings.clicks.solver:
            settings = replace(settings, solver=self.settings.clicks.solver)
        joints = None
        if not sequence.is_point(step.target):
            by_name = sequence.joints(step.target)
            joints = tuple(float(by_name[n]) for n in self.model.joint_names)
        request = GoalRequest(self.model.base_link, _xyz(target), settings, joints=joints)
        self._send(request, 'sequence', step, target, step.target, settings.duration)

    def _send(self, request: GoalRequest, source: str, step: Step | None, target: np.ndarray,
              target_name: str, duration: float) -> None:
        if not self._server_ready():
            reason = (f"the executor's action server {self.action_path} is not "
                      'available; no goal sent')
            if step is not None:
                self.machine.fail(reason)
            self._report(ReportState.REFUSED, source, step, reason, target=target,
                         target_name=target_name, code=MotionCode.INVALID_GOAL)
            return
        if self.active is not None:     # superseded: the executor preempts it
            self._out.append(DropGoal(self.active.token, cancel=False))
        self._token += 1
        self.active = ActiveGoal(self._token, source, step, np.asarray(target, dtype=float),
                                 target_name, float(duration))
        self._out.append(SendGoal(self._token, request, float(duration), source, target_name))
        self._report(ReportState.STARTED, source, step,
                     f'goal sent: {target_name or "target"} {_fmt(target)} m',
                     target=target, target_name=target_name)

    def _current(self, token: int) -> ActiveGoal | None:
        active = self.active
        return active if active is not None and active.token == token else None

    def _goal_failed(self, active: ActiveGoal, reason: str, code: int, ik_code: int = 0,
                     final_error: float = 0.0, pose_known: bool = False) -> None:
        """Report a goal that failed; ``pose_known``: its result already told ``pose``
        where the arm ended (else the arm may have moved anywhere)."""
        self.active = None
        if not pose_known:
            self.pose.move_ended(self._stamp)
        text = f'{_code_name(code)}: {reason}'
        if active.step is not None and self.machine.current is active.step:
            self.machine.fail(text)
            self._publish_ball()
        self._report(ReportState.FAILED, active.source, active.step, text,
                     target=active.target, target_name=active.target_name, code=code,
                     ik_code=ik_code, final_error=final_error)

    # ------------------------------------------------------------------ outputs
    def _log(self, level: str, text: str) -> None:
        self._out.append(Log(level, text))

    def _publish_ball(self, phase: str | None = None) -> None:
        machine = self.machine
        if machine is None:
            return
        self._ball_dirty = False
        self._ball_sent_at = self._now
        ball = machine.ball
        self._out.append(MoveBall(Ball(ball.radius, ball.position.copy(), ball.attached),
                                  machine.sequence.name, machine.cycle,
                                  machine.phase if phase is None else phase))

    def _report(self, state: ReportState, source: str, step: Step | None, message: str, *,
                kind: str = '', target: Sequence[float] | None = None, target_name: str = '',
                code: int = 0, ik_code: int = 0, final_error: float = 0.0,
                cycle: int | None = None) -> None:
        """One report; ``cycle`` is the sequence's cycle the step belongs to (default: the
        current one)."""
        machine = self.machine
        in_sequence = source in ('sequence', 'console') and machine is not None
        fields = {}
        if step is not None:
            fields = {'step': step.index, 'phase': step.phase, 'step_kind': step.kind.value}
            if step.kind == StepKind.MOVE and target is None:
                target = machine.target_of(step)
        fields['step_kind'] = kind or fields.get('step_kind') or 'target'
        self._out.append(Report(
            state, source, message,
            sequence=machine.sequence.name if in_sequence else '',
            cycle=(machine.cycle if cycle is None else cycle) if in_sequence else 0,
            target_name=target_name or (step.target if step is not None else ''),
            target=None if target is None else _xyz(target), code=int(code),
            ik_code=int(ik_code),
            final_error=float(final_error) if math.isfinite(final_error) else math.inf,
            **fields))


def _xyz(values: Sequence[float]) -> tuple[float, float, float]:
    x, y, z = (float(v) for v in np.asarray(values, dtype=float).reshape(-1)[:3])
    return x, y, z
