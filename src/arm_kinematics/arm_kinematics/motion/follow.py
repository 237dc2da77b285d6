"""What a live target does to the executor: ignored, fed to the running follow, or a start.

The node's ``target`` subscription calls ``LiveFollow.target`` with the point and its frame
and logs what comes back. The target's IK (``target_goal``) runs where plans run, in the
planning process, one solve at a time (a target arriving meanwhile waits, only the latest):
in the executor's process it holds the GIL against the control tick (a DLS or CCD solve takes
0.1-0.4 ms p50 but 3-5 ms p99). Measured (six_axis, 100 Hz tick, 8 s of a 30 Hz target
stream, 2 shared cores), publish jitter p99 in-process / in the planning process: at load
average ~2, closed_form 0.47 / 0.27 ms, DLS 0.56 / 0.52 ms, CCD 0.21 / 0.47 ms (no target:
0.16-0.21 ms); at load average 5-11, DLS 4.4 / 0.21 ms, CCD 3.3 / 0.69 ms, closed_form
0.22 / 1.65 ms (one 20 ms outlier). The round trip adds ~0.5 ms (p50 0.9 ms against 0.3 ms)
to a target 33 ms apart. A follow law's own step (exponential, or speed-cap CCD) runs in
the control tick itself (``MotionRunner``).

A live target is as safe as a planned move (the planner's rules, no second copy):

- exponential: ``target_goal`` checks the IK answer with ``MotionPlanner.check_move``: the
  goal pose (the floor, the obstacle when avoided, self-collision and the scene) and the
  straight joint segment from the commanded pose (the solve's seed) to it, densely (the
  floor's 2 cm, the collision checker's 1 cm), since the law moves along that segment. A
  refused answer leaves the law without a goal: the arm stays where it is.
- every follow step, of either law, passes ``follow_guard.StepGuard`` in the control tick
  before the runner takes it (the step's segment, self-collision and the scene, 1 cm): a step
  that collides is not taken. This is the speed cap's check (its CCD steps have no goal to
  check ahead, and where they go depends on the tick's own dt), and for exponential it covers
  the tick or two between the solve's seed and the pose the arm heads for the answer from.
- the floor stays the runner's per-tick pose check too (a step through it stops the follow).
- every refusal (no IK answer, the goal or the way there refused, a step not taken) is
  reported to ``report`` as a BLOCKED outcome naming the rule and the pairs or object, the
  first at once and then at most one per 2 s with the count of the others
  (``follow_guard.RefusalThrottle``).

Measured (benchmarks/bench_follow.py, 30 Hz round a 10 cm circle, p50; six_axis, and the UR5
and Panda with a box): ``check_move`` adds 0.13-0.33 ms to a 0.08-0.20 ms solve; the tick's
step check adds 31-61 µs to an exponential tick (22-23 µs bare), 36-100 µs to a speed-cap
tick (53-65 µs bare). Publish jitter p99 with the stream (bench_motion.py, alternated with
the code before the checks, load average 0.3-0.7): exponential 0.58 ms against 0.39 ms
before, speed cap 0.25-0.43 ms against 0.36-0.60 ms.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
import enum
import threading
import time

import numpy as np

from arm_kinematics.ik.request import IKRequest
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion import laws
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.motion.executor import ExecutorCore
from arm_kinematics.motion.follow_guard import GuardedFollow, RefusalThrottle, StepGuard
from arm_kinematics.motion.planner import MotionPlanner
from arm_kinematics.motion.runner import Mode, Owner
from arm_kinematics.motion.safety_check import SceneData

Solve = Callable[[np.ndarray, np.ndarray, str], Future]


class Verdict(enum.Enum):
    """What became of one live target."""

    BAD = 'bad'              # not finite or not in the base frame: warn
    DROPPED = 'dropped'      # emergency stop (or one that came meanwhile): silently
    BUSY = 'busy'            # a goal or client trajectory has the arm: the stream waits
    FOLLOWED = 'followed'    # the running follow goes on to it, or a follow started
    REFUSED = 'refused'      # no pose to start from (stale feedback, mismatch): warn
    BLOCKED = 'blocked'      # (to ``report``, later) its answer or a step refused: warn


@dataclass(frozen=True)
class TargetGoal:
    """The planning process's answer to one live target: the joint goal to head for (rad),
    or None (stay where it is) and why."""

    q: np.ndarray | None
    reason: str = ''


@dataclass(frozen=True)
class TargetOutcome:
    verdict: Verdict
    message: str = ''


class LiveFollow:
    """The live target's rules on top of an ``ExecutorCore`` (see the module docstring)."""

    def __init__(self, core: ExecutorCore, model: ArmModel, base_frame: str, solve: Solve,
                 report: Callable[[TargetOutcome], None] = lambda _: None) -> None:
        """Args:
            solve: submits ``target_goal``'s work for (point, seed, solver) where it runs
                (the planning process) and returns its Future.
            report: told of each target or step refused after ``target`` returned (BLOCKED,
                throttled), from the planning callbacks and from the control tick.
        """
        self.core = core
        self.model = model
        self.base_frame = base_frame
        self._solve = solve
        self._report = report
        self._throttle = RefusalThrottle()
        self._scene = None
        self._steps = StepGuard(core.planner.collision)
        self._law: laws.ExponentialFollow | laws.SpeedCapFollow | None = None
        self._owner: Owner | None = None      # of the follow this object started last
        self._lock = threading.Lock()
        self._solving = False
        self._pending: tuple[laws.ExponentialFollow, np.ndarray] | None = None

    @property
    def steps(self) -> StepGuard:
        """The tick's collision check of follow steps (shared with the servo jog: one
        follower at a time runs in the tick)."""
        return self._steps

    def reset(self, model: ArmModel) -> None:
        """A new arm model (new link lengths): the next follow builds a new law, and its steps
        are checked with the new planner's arm (``core.set_planner`` came first)."""
        self.model = model
        self._law = None
        self._steps = StepGuard(self.core.planner.collision, self._scene)

    def set_scene(self, scene: SceneData | None) -> str:
        """Check the follow's steps against ``scene`` from now on; '' or why it cannot be
        built in this process (the previous scene stays)."""
        try:
            built = None if scene is None else scene.build()
        except Exception as error:  # noqa: BLE001 - SceneError or a mesh library's own
            return f'scene version {scene.version} not usable for the live follow: {error}'
        self._scene = built
        self._steps.set_scene(built)
        return ''

    def target(self, point: np.ndarray, frame: str, now: float) -> TargetOutcome:
        runner = self.core.runner
        frame = frame.lstrip('/')
        point = np.asarray(point, dtype=float)
        if not np.all(np.isfinite(point)) or frame not in ('', self.base_frame):
            return TargetOutcome(Verdict.BAD, f'target ignored: {point.tolist()} in frame '
                                 f'"{frame}" (finite values in the base frame only)')
        mode = runner.mode
        if mode == Mode.EMERGENCY_STOP:
            return TargetOutcome(Verdict.DROPPED)
        if self.core.goal_active() or mode == Mode.MOVING:
            return TargetOutcome(Verdict.BUSY, 'target ignored while a goal runs')
        # Its own follow only: another follower (the servo jog) may own the runner now.
        owner = self._owner
        law = self._law if runner.following() and owner is not None and \
            not owner.done.is_set() else None
        if law is not None:
            self._take(law, point)
            runner.touch(now)
            return TargetOutcome(Verdict.FOLLOWED)
        start, _, reason = self.core.start_pose(now)
        if start is None:
            return TargetOutcome(Verdict.REFUSED, f'target ignored: {reason}')
        # The follow starts without a goal (the arm stays) and its first target is solved
        # from the pose it starts at: the checked segment begins where the arm is.
        law = self.new_law()
        owner = Owner('live target')
        code, reason = runner.follow(GuardedFollow(law, self._steps, self._step_refused),
                                     owner, now,
                                     self.core.settings.watchdog_timeout, start)
        if code != MotionCode.SUCCESS:
            return TargetOutcome(Verdict.DROPPED, reason)
        self._law, self._owner = law, owner
        self._take(law, point)
        return TargetOutcome(Verdict.FOLLOWED)

    def new_law(self) -> laws.ExponentialFollow | laws.SpeedCapFollow:
        """The follow law of the current settings (speed-cap needs the arm's CCD solver)."""
        motion = self.core.settings.motion
        limits = self.model.velocity_limits * motion.speed_scale
        solvers = self.core.planner.dispatcher.solvers
        if self.core.settings.follow_law == laws.SPEED_CAP and 'ccd' in solvers:
            return laws.SpeedCapFollow(laws.SpeedCap(solvers['ccd'], limits,
                                                     motion.speed_cap_iterations))
        return laws.ExponentialFollow(laws.ExponentialSmoothing(
            motion.exponential_gain, limits, self.model.lower, self.model.upper))

    def _take(self, law: laws.ExponentialFollow | laws.SpeedCapFollow,
              point: np.ndarray) -> None:
        """``point`` becomes ``law``'s target: the speed cap steps towards it at once (each
        step checked in the tick), the exponential law once its IK answer is checked."""
        if isinstance(law, laws.SpeedCapFollow):
            law.target = point
        else:
            self._aim(law, point)

    def _aim(self, law: laws.ExponentialFollow, point: np.ndarray) -> None:
        """Solve ``point`` and give ``law`` the answer when it comes; one solve at a time,
        a target arriving meanwhile waits (only the latest) for the next."""
        with self._lock:
            if self._solving:
                self._pending = (law, point)
                return
            self._solving = True
        self._submit(law, point)

    def _submit(self, law: laws.ExponentialFollow, point: np.ndarray) -> None:
        seed = self.core.runner.pose()
        if seed is None:
            seed = self.core.initial
        try:
            future = self._solve(point, seed, self.core.settings.follow_solver)
        except Exception:  # noqa: BLE001 - e.g. the pool shut down: stay, take the next
            law.goal = None
            with self._lock:
                self._solving = False
            return
        future.add_done_callback(lambda done: self._solved(law, point, done))

    def _solved(self, law: laws.ExponentialFollow, point: np.ndarray, future: Future) -> None:
        try:
            answer = future.result()
        except Exception as error:  # noqa: BLE001 - the planning process died or was replaced
            answer = TargetGoal(None, f'the planning process raised {type(error).__name__}: '
                                f'{error}')
        law.goal = answer.q
        if answer.q is None:
            where = ', '.join(f'{v:.3f}' for v in point)
            self._refused(f'live target ({where}) not followed, the arm stays: {answer.reason}')
        with self._lock:
            pending, self._pending = self._pending, None
            self._solving = pending is not None
        if pending is not None:
            self._submit(*pending)

    def _step_refused(self, reason: str) -> None:
        self._refused(f'live target not followed further, the arm stays: the next step '
                      f'collides: {reason}')

    def _refused(self, message: str) -> None:
        held = self._throttle.admit(time.monotonic())
        if held is not None:
            if held:
                message += f' ({held} more refused since the last report)'
            self._report(TargetOutcome(Verdict.BLOCKED, message))


def target_goal(planner: MotionPlanner, point: np.ndarray, seed: np.ndarray,
                solver: str) -> TargetGoal:
    """IK of a live target seeded with ``seed`` (the commanded pose), checked as a move from
    ``seed`` (``MotionPlanner.check_move``); no goal (stay) when there is no answer or the
    answer or the way there is not safe, with why."""
    answer = planner.dispatcher.solve(
        IKRequest(position=tuple(float(v) for v in point),
                  seed_names=tuple(planner.model.joint_names),
                  seed_positions=tuple(float(v) for v in seed), solver=solver),
        planner.ik_options, seed)
    if not answer.result.success or answer.result.q is None:
        return TargetGoal(None, f'no IK answer: {answer.result.reason}')
    goal = np.asarray(answer.result.q, dtype=float)
    reason = planner.check_move(seed, goal)
    return TargetGoal(None, reason) if reason else TargetGoal(goal)
