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
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
import enum
import threading

import numpy as np

from arm_ik.kinematics.model import ArmModel
from arm_ik.kinematics.motion import laws
from arm_ik.kinematics.motion.errors import MotionCode
from arm_ik.kinematics.motion.executor import ExecutorCore
from arm_ik.kinematics.motion.planner import MotionPlanner
from arm_ik.kinematics.motion.runner import Mode, Owner
from arm_ik.kinematics.request import IKRequest

Solve = Callable[[np.ndarray, np.ndarray, str], Future]


class Verdict(enum.Enum):
    """What became of one live target."""

    BAD = 'bad'              # not finite or not in the base frame: warn
    DROPPED = 'dropped'      # emergency stop (or one that came meanwhile): silently
    BUSY = 'busy'            # a goal or client trajectory has the arm: the stream waits
    FOLLOWED = 'followed'    # the running follow goes on to it, or a follow started
    REFUSED = 'refused'      # no pose to start from (stale feedback, mismatch): warn


@dataclass(frozen=True)
class TargetOutcome:
    verdict: Verdict
    message: str = ''


class LiveFollow:
    """The live target's rules on top of an ``ExecutorCore`` (see the module docstring)."""

    def __init__(self, core: ExecutorCore, model: ArmModel, base_frame: str,
                 solve: Solve) -> None:
        """Args:
            solve: submits ``target_goal``'s work for (point, seed, solver) where it runs
                (the planning process) and returns its Future.
        """
        self.core = core
        self.model = model
        self.base_frame = base_frame
        self._solve = solve
        self._law: laws.ExponentialFollow | laws.SpeedCapFollow | None = None
        self._lock = threading.Lock()
        self._solving = False
        self._pending: tuple[laws.ExponentialFollow, np.ndarray] | None = None

    def reset(self, model: ArmModel) -> None:
        """A new arm model (new link lengths): the next follow builds a new law."""
        self.model = model
        self._law = None

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
        settings = self.core.settings
        law = self._law if runner.following() else None
        if law is None:
            law = self.new_law()
        if isinstance(law, laws.SpeedCapFollow):
            law.target = point
        else:
            self._aim(law, point)
        if runner.following():
            runner.touch(now)
            return TargetOutcome(Verdict.FOLLOWED)
        start, _, reason = self.core.start_pose(now)
        if start is None:
            return TargetOutcome(Verdict.REFUSED, f'target ignored: {reason}')
        code, reason = runner.follow(law, Owner('live target'), now, settings.watchdog_timeout,
                                     start)
        if code != MotionCode.SUCCESS:
            return TargetOutcome(Verdict.DROPPED, reason)
        self._law = law
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
        future.add_done_callback(lambda done: self._solved(law, done))

    def _solved(self, law: laws.ExponentialFollow, future: Future) -> None:
        try:
            law.goal = future.result()
        except Exception:  # noqa: BLE001 - the planning process died or was replaced: stay
            law.goal = None
        with self._lock:
            pending, self._pending = self._pending, None
            self._solving = pending is not None
        if pending is not None:
            self._submit(*pending)


def target_goal(planner: MotionPlanner, point: np.ndarray, seed: np.ndarray,
                solver: str) -> np.ndarray | None:
    """IK of a live target seeded with ``seed`` (the commanded pose); None (stay) when there
    is no answer or the answer is not safe."""
    answer = planner.dispatcher.solve(
        IKRequest(position=tuple(float(v) for v in point),
                  seed_names=tuple(planner.model.joint_names),
                  seed_positions=tuple(float(v) for v in seed), solver=solver),
        planner.ik_options, seed)
    if not answer.result.success or answer.result.q is None:
        return None
    goal = np.asarray(answer.result.q, dtype=float)
    if planner.safety is not None and planner.safety.check_pose(goal):
        return None
    return goal
