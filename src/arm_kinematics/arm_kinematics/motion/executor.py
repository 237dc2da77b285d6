"""The trajectory executor's decisions, without ROS: settings, start pose, feedback, owners.

``ExecutorCore`` wraps the ``MotionRunner`` (the commanded pose and its one owner) with the
rules the node applies around it, each a method that acts on the runner or returns what to
do: which pose a new command starts from, when the measured state is stale, who owns the
arm (a new command preempts the old one), how a goal was interrupted, and what a live
target does (``follow.LiveFollow``). The node converts messages to these calls and back.

What the node (``arm_ik.nodes.trajectory_executor``) does by these rules and ``follow``'s:
- One goal at a time: a new goal preempts (the running one ends PREEMPTED, the arm holds,
  the new one plans from there). Every goal is accepted; an invalid one is aborted at once
  with its code and message. Cancel holds the current pose without a jump and ends CANCELED.
- Every move (and the live target's IK answer with the way to it) is planned and checked in
  the planning process (``kinematics.motion.planning_pool``) before its first point is sent:
  nothing of a failed plan is published; a follow step is checked again in the tick (a refused
  target or step: the arm stays, a warning names the contact). The tick runs on a ControlThread
  (SCHED_FIFO ``realtime_priority``) or, ``control_loop: timer``, an rclpy timer; wall clock.
- Holding publishes nothing on the controller outputs except one hold point when a motion
  is stopped; ``joint_states`` repeats the held pose at the fixed rate.
- With ``publish_on_start: false`` nothing is published until a command, which starts from
  the measured state (``feedback_topic``) or ``initial_positions``. No plan survives a restart.
- Feedback older than ``feedback_stale_periods`` of its own period: hold, STALE_FEEDBACK,
  resume only on a new command. Live target older than ``watchdog_timeout``: hold; later
  targets are followed from there at the law's speed limits.
- Emergency stop: held within one control period; goals and targets refused until ~/reset,
  which succeeds only once the last emergency_stop message was false.

Units: rad, s (monotonic clock), m.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
import threading
import time
from typing import Any

import numpy as np

from arm_kinematics.common.staleness import StreamAge, StreamWatch
from arm_kinematics.motion import laws
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.motion.planner import (
    MotionPlanner,
    MotionSettings,
    MoveGoal,
    PathOutcome,
    Plan,
    PlanFailure,
)
from arm_kinematics.motion.runner import Mode, MotionRunner, Owner
from arm_kinematics.motion.trajectory import Trajectory
from arm_kinematics.motion.validation import ValidationSettings

CANCELED_MESSAGE = 'canceled by the client; the arm holds where it was'
POLL_PERIOD = 0.02          # s, how often a goal thread looks for cancel/preempt/the end
Begin = Callable[[Trajectory, Owner], tuple[MotionCode, str]]


@dataclass(frozen=True)
class GoalEnd:
    """How a MoveToTarget goal ended: its code and message, the plan it ran (if any), the IK
    code and path outcome of a failed plan."""

    code: MotionCode
    message: str
    plan: Plan | None = None
    ik_code: int = 0
    path: PathOutcome | None = None

    @property
    def refused(self) -> bool:
        """The goal was refused: it ended without a plan to run, and not by its client (a
        cancel or a newer goal). MoveToTarget carries no reason for a rejection, so the node
        also publishes these words where a client looks for them (``goal_refusal_words``)."""
        return self.plan is None and self.code not in (
            MotionCode.SUCCESS, MotionCode.CANCELED, MotionCode.PREEMPTED)


def goal_refusal_words(goal_name: str, code: MotionCode, message: str) -> str:
    """One line for a refused goal: 'goal 1a2b3c4d refused: EMERGENCY_STOPPED: ...'."""
    return f'{goal_name} refused: {code.name}: {message}'


@dataclass(frozen=True)
class ExecutorSettings:
    """One immutable snapshot of the run-time parameters (swapped whole on a change)."""

    motion: MotionSettings
    publish_rate: float = 100.0
    watchdog_timeout: float = 0.5
    follow_law: str = laws.EXPONENTIAL
    feedback_stale_periods: float = 3.0
    feedback_rate: float = 10.0
    follow_solver: str = ''           # '' = the arm's default solver

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> ExecutorSettings:
        """The snapshot of the executor's parameter values (by parameter name)."""
        motion = MotionSettings(
            period=1.0 / values['publish_rate'], default_law=values['motion_law'],
            speed_scale=values['speed_scale'], exponential_gain=values['exponential_gain'],
            speed_cap_iterations=values['speed_cap_iterations'],
            settle_tolerance=values['settle_tolerance'],
            position_tolerance=values['position_tolerance'],
            max_condition=values['max_condition_number'],
            max_joint_step=values['max_joint_jump'], min_duration=values['min_duration'],
            max_duration=values['max_duration'], detour=values['detour'],
            validation=ValidationSettings(start_tolerance=values['start_tolerance']))
        return cls(motion, values['publish_rate'], values['watchdog_timeout'],
                   values['follow_law'], values['feedback_stale_periods'],
                   values['feedback_rate'], values['follow_solver'])


def settings_reason(values: Mapping[str, Any], solver_reason: Callable[[str], str]) -> str:
    """The cross-field rules of the executor's parameters (each value's own range is its
    spec's): '' when the set is usable, else why not.

    Args:
        solver_reason: '' when a solver name is one of the arm's, else why not.
    """
    if values['min_duration'] > values['max_duration']:
        return (f'min_duration must be in [0, max_duration], got {values["min_duration"]} '
                f'(max_duration {values["max_duration"]})')
    if values['follow_solver']:
        reason = solver_reason(values['follow_solver'])
        if reason:
            return f'follow_solver: {reason}'
    return ''


class Feedback:
    """The real arm's measured joint state and whether it is fresh (thread-safe).

    Stale after ``stale_periods`` of the stream's own period (``StreamWatch``: the mean
    interval), never counted shorter than one control period, since staleness is only
    looked at once per tick.
    """

    def __init__(self, topic: str, stale_periods: float, control_period: float) -> None:
        self.topic = topic
        self._watch = StreamWatch(stale_periods, min_period=control_period, default_period=0.0)
        self._lock = threading.Lock()
        self._q: np.ndarray | None = None

    def set_limits(self, stale_periods: float, control_period: float) -> None:
        self._watch.stale_periods = stale_periods
        self._watch.min_period = control_period

    def arrived(self, q: np.ndarray, now: float) -> None:
        with self._lock:
            self._q = np.asarray(q, dtype=float).copy()
            self._watch.arrived(now)

    def latest(self, now: float) -> tuple[np.ndarray | None, StreamAge]:
        """(the last measured pose or None, its age against the stale limit)."""
        with self._lock:
            return (None if self._q is None else self._q.copy()), self._watch.age(now)


@dataclass(frozen=True)
class GoalReport:
    """What a goal's result says besides its code: how far it went and where it ended.

    Attributes:
        path: how far path IK followed a Cartesian line (the plan's or the failed plan's).
        final_error: tool distance from the target at the last commanded pose, m (None
            without a plan).
        contact_times, contact_points: obstacle contacts of the plan up to where it ended.
    """

    path: PathOutcome
    final_error: float | None = None
    contact_times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    contact_points: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))


def goal_report(owner: Owner, pose: np.ndarray | None, plan: Plan | None,
                failed_path: PathOutcome | None, tip_of: Callable[[np.ndarray], np.ndarray]
                ) -> GoalReport:
    """The report of ``owner``'s goal. ``pose``: the arm's pose now, used only when nothing
    was commanded for this goal (another goal may be moving the arm now)."""
    path = plan.path if plan is not None else (failed_path or PathOutcome())
    last = owner.record[-1][1] if owner.record else pose
    if plan is None or last is None:
        return GoalReport(path)
    end = owner.record[-1][0] if owner.record else 0.0
    keep = plan.contact_times <= end + 1e-9
    return GoalReport(path, float(np.linalg.norm(tip_of(last) - plan.target)),
                      plan.contact_times[keep], plan.contact_points[keep])


@dataclass(frozen=True)
class Progress:
    """A running goal's feedback: fraction of its trajectory played, the commanded pose and
    its tool position (m), obstacle contacts of the plan so far."""

    fraction: float
    pose: np.ndarray
    tip: np.ndarray
    contacts: int


def progress_of(runner: MotionRunner, owner: Owner, plan: Plan, now: float,
                tip_of: Callable[[np.ndarray], np.ndarray]) -> Progress | None:
    """``owner``'s progress at ``now``; None while nothing is commanded (WAITING)."""
    pose = runner.pose()
    if pose is None:
        return None
    elapsed, duration = runner.progress(owner, now)
    return Progress(float(elapsed / duration) if duration > 0.0 else 1.0, pose, tip_of(pose),
                    int(np.count_nonzero(plan.contact_times <= elapsed + 1e-9)))


def from_current_pose(trajectory: Trajectory, start: np.ndarray) -> Trajectory:
    """A client trajectory whose first point is later than t = 0 moves from ``start`` to it
    in that time, like a joint_trajectory_controller (the start check bounds that step)."""
    if trajectory.times[0] <= 0.0:
        return trajectory
    zeros = np.zeros((1, len(trajectory.joint_names)))
    return Trajectory(trajectory.joint_names, np.concatenate([[0.0], trajectory.times]),
                      np.vstack([np.asarray(start, dtype=float)[None, :], trajectory.positions]),
                      np.vstack([zeros, trajectory.velocities]), trajectory.interpolation)


class WallClock:
    """The system time of a monotonic instant, so a joint state's stamp is exactly the
    instant its pose was sampled at. The offset is re-read once a second (system time may
    be adjusted), keeping a reading only when nothing came between its two monotonic reads."""

    READ_WINDOW = 50e-6      # s; a longer gap between the monotonic reads is discarded

    def __init__(self) -> None:
        self._offset = time.time() - time.monotonic()
        self._due = 0.0

    def nanoseconds(self, now: float) -> int:
        if now >= self._due:
            before = time.monotonic()
            wall = time.time()
            after = time.monotonic()
            if after - before < self.READ_WINDOW:
                self._offset = wall - (before + after) / 2.0
                self._due = now + 1.0
        return int(round((now + self._offset) * 1e9))


class ExecutorCore:
    """The runner, its owner bookkeeping and the start-pose and feedback rules.

    Args:
        joint_names: chain order.
        initial: the start pose without feedback (rad).
        planner: the planner in this process (its safety check guards the live follow).
        settings: the run-time settings (replace ``settings`` whole to change them).
        publish_on_start: hold ``initial`` at once (without feedback), or adopt the measured
            state as it arrives (with feedback); else publish nothing until a command.
        feedback: the measured state, None without a feedback topic.
    """

    def __init__(self, joint_names: tuple[str, ...], initial: np.ndarray,
                 planner: MotionPlanner, settings: ExecutorSettings,
                 publish_on_start: bool = True, feedback: Feedback | None = None) -> None:
        self.names = tuple(joint_names)
        self.initial = np.asarray(initial, dtype=float).copy()
        self.settings = settings
        self.publish_on_start = publish_on_start
        self.feedback = feedback
        self.planner = planner
        start = self.initial if publish_on_start and feedback is None else None
        self.runner = MotionRunner(self.names, start, _pose_check(planner))
        self._lock = threading.Lock()
        self._active: Owner | None = None
        self._owners: dict[Hashable, Owner] = {}
        self.estop_pressed = False

    def use_settings(self, settings: ExecutorSettings) -> bool:
        """New run-time parameters, swapped in whole (the feedback's staleness limits too);
        True when the publish rate changed (the node's timer follows)."""
        old_rate, self.settings = self.settings.publish_rate, settings
        if self.feedback is not None:
            self.feedback.set_limits(settings.feedback_stale_periods, settings.motion.period)
        return settings.publish_rate != old_rate

    def set_planner(self, planner: MotionPlanner) -> None:
        """A rebuilt planner (new obstacle radius or link lengths): its safety check from now."""
        self.planner = planner
        self.runner.set_pose_check(_pose_check(planner))

    # ------------------------------------------------------------------ start pose
    def start_pose(self, now: float) -> tuple[np.ndarray | None, MotionCode, str]:
        """The pose a new command starts from, or why there is none."""
        # A runner still WAITING adopts this pose only when a motion actually starts, so a
        # refused command leaves it silent.
        commanded = self.runner.pose()
        if self.feedback is None:
            return (self.initial.copy() if commanded is None else commanded,
                    MotionCode.SUCCESS, '')
        measured, age = self.feedback.latest(now)
        if measured is None or age.stale:
            what = 'none received yet' if measured is None else f'the last is {age.age:.2f} s old'
            return None, MotionCode.NO_JOINT_STATE, (
                f'no fresh measured joint state on {self.feedback.topic} ({what})')
        if commanded is None:
            return measured, MotionCode.SUCCESS, ''
        gap = np.abs(commanded - measured)
        joint = int(np.argmax(gap))
        tolerance = self.settings.motion.validation.start_tolerance
        if gap[joint] > tolerance:
            return None, MotionCode.START_MISMATCH, (
                f'the commanded pose is {gap[joint]:.4f} rad from the measured joint state on '
                f'{self.names[joint]} (tolerance {tolerance:g} rad)')
        return commanded, MotionCode.SUCCESS, ''

    # ------------------------------------------------------------------ feedback
    def measured(self, q: np.ndarray, now: float) -> None:
        """A measured joint state arrived; before the first command it is the pose held."""
        self.feedback.arrived(q, now)
        if self.publish_on_start and self.runner.mode == Mode.WAITING:
            self.runner.set_pose(q)

    def check_feedback(self, now: float) -> None:
        """Once per tick: hold (STALE_FEEDBACK) when the measured state went stale; back to
        HOLDING (not moving: only a new command moves) when it resumes."""
        if self.feedback is None:
            return
        measured, age = self.feedback.latest(now)
        if measured is None:
            return
        mode = self.runner.mode
        if age.stale and mode in (Mode.MOVING, Mode.FOLLOWING, Mode.IDLE, Mode.HOLDING):
            self.runner.stop(now, MotionCode.NO_JOINT_STATE,
                             f'measured joint state on {self.feedback.topic} is stale '
                             f'({age.age:.3f} s old, more than {age.limit:.3f} s): holding '
                             'until a new command', mode=Mode.STALE_FEEDBACK)
        elif not age.stale and mode == Mode.STALE_FEEDBACK:
            self.runner.stop(now, MotionCode.SUCCESS, 'measured joint state resumed: holding '
                             'until a new command', mode=Mode.HOLDING)

    def feedback_age(self, now: float) -> float:
        """Age of the measured state for the status (s), -1 without one."""
        if self.feedback is None:
            return -1.0
        _, age = self.feedback.latest(now)
        return -1.0 if age.age == float('inf') else float(age.age)

    # ------------------------------------------------------------------ owners
    def register(self, key: Hashable, name: str) -> Owner:
        """The owner of a goal (``key``: its id), findable by ``cancel`` while it runs."""
        owner = Owner(name)
        self._owners[key] = owner
        return owner

    def unregister(self, key: Hashable, owner: Owner) -> None:
        self._owners.pop(key, None)
        self.release(owner)

    def take_over(self, owner: Owner) -> None:
        """Make ``owner`` the active command: the previous one ends PREEMPTED, the arm holds."""
        with self._lock:
            previous, self._active = self._active, owner
        if previous is not None:
            previous.finish(MotionCode.PREEMPTED, f'preempted by {owner.name}')
        if self.runner.mode in (Mode.MOVING, Mode.FOLLOWING):
            self.runner.stop(time.monotonic(), MotionCode.PREEMPTED,
                             f'preempted by {owner.name}')

    def release(self, owner: Owner) -> None:
        with self._lock:
            if self._active is owner:
                self._active = None

    def goal_active(self) -> bool:
        """A goal owns the arm (it may still be planning)."""
        with self._lock:
            return self._active is not None

    def busy_reason(self) -> str:
        """'' when the arm model may be replaced now, else why not."""
        if self.goal_active() or self.runner.mode in (Mode.MOVING, Mode.FOLLOWING):
            return 'the arm is moving: stop it (or let the move end) before changing its model'
        return ''

    def cancel(self, key: Hashable, now: float) -> None:
        """The client cancels goal ``key``: hold at once (not at the goal's next look)."""
        owner = self._owners.get(key)
        if owner is not None and not owner.done.is_set():
            self.runner.stop(now, MotionCode.CANCELED, CANCELED_MESSAGE, owner)
            owner.finish(MotionCode.CANCELED, CANCELED_MESSAGE)     # when still planning

    def stop(self, now: float, message: str) -> bool:
        """A client's stop of whatever moves (~/stop: move_group's "stop" event, a cancelled
        ExecuteTrajectory): hold without a jump; a goal still planning ends CANCELED and
        never starts. True when something was moving or planning."""
        with self._lock:
            active = self._active
        planning = active is not None and not active.done.is_set()
        if planning:
            active.finish(MotionCode.CANCELED, message)
        if self.runner.mode in (Mode.MOVING, Mode.FOLLOWING):
            self.runner.stop(now, MotionCode.CANCELED, message)
            return True
        return planning

    @staticmethod
    def interrupted(owner: Owner, cancel_requested: bool) -> bool:
        """True when ``owner``'s goal has ended (stopped, preempted, canceled) before its
        plan ran; ``cancel_requested``: the client asked to cancel."""
        if cancel_requested and owner.outcome is None:
            owner.finish(MotionCode.CANCELED, CANCELED_MESSAGE)
        return owner.done.is_set()

    @staticmethod
    def interruption(owner: Owner) -> tuple[MotionCode, str]:
        """How ``owner``'s goal ended."""
        if owner.outcome is None:
            return MotionCode.INTERNAL_ERROR, 'the motion ended without an outcome'
        return owner.outcome, owner.message

    # ------------------------------------------------------------------ commands
    def run_goal(self, owner: Owner, goal: MoveGoal, cancel_requested: Callable[[], bool],
                 plan: Callable[[MoveGoal, np.ndarray, MotionSettings], Future], begin: Begin,
                 planned: Callable[[Plan | PlanFailure], None],
                 feedback: Callable[[Progress], None]) -> GoalEnd:
        """Run one goal to its end on the calling (goal) thread: take the arm over, plan from
        the start pose, publish the plan (``planned``), ``begin`` it and wait, giving
        ``feedback`` at the feedback rate; a cancel, preemption or emergency stop ends it.

        Args:
            plan: submits the planning (returns a Future of Plan or PlanFailure).
            begin: hands a checked trajectory to the runner and the controller.
        """
        if self.runner.mode == Mode.EMERGENCY_STOP:
            return GoalEnd(MotionCode.EMERGENCY_STOPPED,
                           'emergency stop active: goals are refused until ~/reset')
        self.take_over(owner)
        settings = self.settings
        start, code, reason = self.start_pose(time.monotonic())
        if start is None:
            return GoalEnd(code, reason)
        future = plan(goal, start, settings.motion)
        while not future.done():
            if self.interrupted(owner, cancel_requested()):
                return GoalEnd(*self.interruption(owner))
            time.sleep(POLL_PERIOD)
        try:
            outcome = future.result()
        except BrokenProcessPool:
            return GoalEnd(MotionCode.INTERNAL_ERROR, 'the planning process died; try again')
        if self.interrupted(owner, cancel_requested()):
            return GoalEnd(*self.interruption(owner))
        if isinstance(outcome, PlanFailure):
            planned(outcome)
            return GoalEnd(outcome.error.code, outcome.error.message,
                           ik_code=int(outcome.error.ik_code or 0), path=outcome.path)
        if outcome.preview is not None:
            planned(outcome)
        code, reason = begin(outcome.trajectory, owner)
        if code != MotionCode.SUCCESS:
            return GoalEnd(code, reason, outcome)
        feedback_period, next_feedback = 1.0 / settings.feedback_rate, 0.0
        while not owner.done.is_set():
            now = time.monotonic()
            if cancel_requested():
                self.runner.stop(now, MotionCode.CANCELED, CANCELED_MESSAGE, owner)
                break
            if now >= next_feedback:
                next_feedback = now + feedback_period
                progress = progress_of(self.runner, owner, outcome, now, self.tip_of)
                if progress is not None:
                    feedback(progress)
            owner.done.wait(POLL_PERIOD)
        code, message = self.interruption(owner)
        return GoalEnd(code, f'{outcome.message}; done' if code == MotionCode.SUCCESS
                       else message, outcome)

    def client_trajectory(self, trajectory: Trajectory,
                          validate: Callable[[Trajectory, np.ndarray, MotionSettings], Any],
                          begin: Begin) -> tuple[MotionCode, str]:
        """~/execute_trajectory: check a client's trajectory from the start pose
        (``validate`` returns a Validation) and start it; nobody waits for its end."""
        if self.runner.mode == Mode.EMERGENCY_STOP:
            return MotionCode.EMERGENCY_STOPPED, 'emergency stop active: call ~/reset first'
        start, code, reason = self.start_pose(time.monotonic())
        if start is None:
            return code, reason
        validation = validate(trajectory, start, self.settings.motion)
        if validation.error is not None:
            return validation.error.code, validation.error.message
        trajectory = from_current_pose(trajectory, start)
        owner = Owner('execute_trajectory')
        self.take_over(owner)
        self.release(owner)             # nobody waits for it: a goal may preempt it at once
        code, reason = begin(replace(trajectory, law='client trajectory'), owner)
        if code != MotionCode.SUCCESS:
            return code, reason
        return MotionCode.SUCCESS, (f'accepted: {len(trajectory)} points, '
                                    f'{trajectory.duration:.2f} s')

    def tip_of(self, q: np.ndarray) -> np.ndarray:
        """Tool position of ``q`` (m) on the current model."""
        return self.planner.model.fk(q)[:3, 3]

    # ------------------------------------------------------------------ emergency stop
    def emergency_stop(self, pressed: bool, now: float) -> bool:
        """An emergency_stop message; True when it stopped the arm (pressed)."""
        self.estop_pressed = pressed
        if not pressed:
            return False
        self.runner.emergency_stop(now, 'emergency stop: held; goals refused until ~/reset')
        with self._lock:
            if self._active is not None:   # still planning: it must not start
                self._active.finish(MotionCode.EMERGENCY_STOPPED, 'emergency stop')
        return True

    def reset(self) -> tuple[bool, str]:
        """~/reset: (success, message)."""
        if self.estop_pressed:
            return False, ('the emergency stop is still pressed (the last emergency_stop '
                           'message was true): release it first')
        if self.runner.reset('emergency stop reset: holding; goals accepted again'):
            return True, 'reset: holding where the arm stopped; goals accepted again'
        return False, 'no emergency stop to reset'


def _pose_check(planner: MotionPlanner) -> Callable[[np.ndarray], str] | None:
    return planner.safety.check_pose if planner.safety is not None else None
