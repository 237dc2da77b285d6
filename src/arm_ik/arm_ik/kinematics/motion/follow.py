"""What a live target does to the executor: ignored, fed to the running follow, or a start.

The node's ``target`` subscription calls ``LiveFollow.target`` with the point and its frame
and logs what comes back. The target's IK runs here, in the executor's process, on the
subscription's thread: TODO-MEASURE. A follow law's own step (exponential, or speed-cap CCD) runs in the
control tick itself (``MotionRunner``).
"""

from __future__ import annotations

from dataclasses import dataclass
import enum

import numpy as np

from arm_ik.kinematics.model import ArmModel
from arm_ik.kinematics.motion import laws
from arm_ik.kinematics.motion.errors import MotionCode
from arm_ik.kinematics.motion.executor import ExecutorCore
from arm_ik.kinematics.motion.runner import Mode, Owner
from arm_ik.kinematics.request import IKRequest


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

    def __init__(self, core: ExecutorCore, model: ArmModel, base_frame: str) -> None:
        self.core = core
        self.model = model
        self.base_frame = base_frame
        self._law: laws.ExponentialFollow | laws.SpeedCapFollow | None = None

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
            law.goal = self.goal_of(point)
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

    def goal_of(self, point: np.ndarray) -> np.ndarray | None:
        """IK of a live target, seeded with the commanded pose; None (stay) when there is no
        answer or the answer is not safe."""
        planner = self.core.planner
        seed = self.core.runner.pose()
        if seed is None:
            seed = self.core.initial
        answer = planner.dispatcher.solve(
            IKRequest(position=tuple(point), seed_names=self.core.names,
                      seed_positions=tuple(seed), solver=self.core.settings.follow_solver),
            planner.ik_options, seed)
        if not answer.result.success or answer.result.q is None:
            return None
        goal = np.asarray(answer.result.q, dtype=float)
        if planner.safety is not None and planner.safety.check_pose(goal):
            return None
        return goal

