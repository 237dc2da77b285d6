"""What the markers node draws of one arm, as plain values, and the rules its inputs change
it by (no ROS): the pose and when it counts as moved or stale, the target and what became of
it, the planned path, the measured contacts and how long they stay, the last failure.

Each input method returns whether the drawing changed; the node then sends a new scene,
paced to its update rate. Units: m, rad, s (the node's monotonic clock).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import math

import numpy as np

from arm_kinematics.ik.result import ErrorCode
from arm_kinematics.visual.arm_visual import (
    finite_point,
    finite_rows,
    PlanDrawing,
    PoseMetrics,
    ReachShell,
    Readout,
)

# What became of the target (its colour in the scene).
PENDING, REACHED, FAILED = 'pending', 'reached', 'failed'
MAX_CONTACTS = 500          # most contact dots kept (one safety_status can name more)
CONTACT_MERGE = 0.01        # m: a contact this close to a kept one is the same dot
POSE_CHANGE = 1e-5          # rad: a smaller change of every joint is no motion to redraw


@dataclass(frozen=True)
class IKAnswer:
    """The last IK answer (ik_status): solver, branch, error code, position error (m)."""

    solver: str
    branch: str
    code: int
    position_error: float


def code_name(code: int) -> str:
    """The ErrorCode name of ``code`` ('code N' when it is none)."""
    try:
        return ErrorCode(code).name
    except ValueError:
        return f'code {code}'


@dataclass
class MarkerScene:
    """Everything drawn besides the arm model's static shapes; see the module docstring."""

    shell: ReachShell
    q: np.ndarray | None = None
    q_time: float = -math.inf              # when the last valid joint state came, s
    q_stamp: object = None                 # its header stamp, as given
    metrics: PoseMetrics | None = None     # of q, computed when first shown
    ignored_states: int = 0
    target: np.ndarray | None = None
    target_fate: str = PENDING
    plan: PlanDrawing = field(default_factory=PlanDrawing)
    contacts: list[tuple[float, np.ndarray]] = field(default_factory=list)   # (when, where)
    ik: IKAnswer | None = None
    failure: str = ''
    drawn_q: np.ndarray | None = None      # the pose in the last scene sent (None: none)

    # ------------------------------------------------------------------ inputs
    def pose(self, q: np.ndarray, now: float, stamp: object) -> bool:
        """A checked joint state. A holding arm repeats the same pose at its full rate:
        True only when a joint moved more than POSE_CHANGE from the pose drawn."""
        self.q, self.q_time, self.q_stamp, self.metrics = q, now, stamp, None
        return self.drawn_q is None or float(np.max(np.abs(q - self.drawn_q))) > POSE_CHANGE

    def announced_shell(self, centre: object, outer: float, inner: float) -> bool:
        """The reach shell arm_info announces; False (ignored) when it is not finite or
        empty."""
        where = finite_point(centre)
        if where is None or not (math.isfinite(outer) and outer > 0.0) or \
                not (math.isfinite(inner) and 0.0 <= inner < outer):
            return False
        self.shell = ReachShell(where, float(outer), float(inner))
        return True

    def ik_answered(self, answer: IKAnswer, target: object, message: str) -> None:
        """An IK answer: its target turns green (solved), yellow (partly) or red; a failure
        other than BUSY is the readout's last failure."""
        self.ik = answer
        where = finite_point(target)
        if where is not None:
            self.target = where
            self.target_fate = REACHED if answer.code == ErrorCode.OK else \
                PENDING if answer.code == ErrorCode.PARTIAL_SOLUTION else FAILED
        if answer.code not in (ErrorCode.OK, ErrorCode.BUSY):
            self.failure = f'{code_name(answer.code)}: {message}'

    def planned(self, plan: PlanDrawing) -> None:
        """A plan replaces the last one whole; a plan without a target leaves the target."""
        self.plan = plan
        if plan.target is not None:
            self.target, self.target_fate = plan.target, PENDING

    def measured_contacts(self, points: Sequence[Sequence[float]], now: float,
                          memory: float) -> bool:
        """Contacts of a safety_status; with ``memory`` 0 only these are drawn, else each
        new one (not within CONTACT_MERGE of a kept one) joins the kept ones."""
        changed = False
        new = finite_rows(points, MAX_CONTACTS)
        if memory == 0.0:
            changed = bool(self.contacts) or len(points) > 0
            self.contacts = []
        for where in new:
            if any(np.linalg.norm(kept - where) < CONTACT_MERGE for _, kept in self.contacts):
                continue
            self.contacts.append((now, where))
            changed = True
        del self.contacts[:-MAX_CONTACTS]
        return changed

    def expire_contacts(self, now: float, memory: float) -> bool:
        """Contacts older than ``memory`` s go (memory 0: they go with the next status)."""
        if memory <= 0.0:
            return False
        kept = [c for c in self.contacts if now - c[0] <= memory]
        if len(kept) == len(self.contacts):
            return False
        self.contacts = kept
        return True

    def target_report(self, state: str, target: object, what: str, message: str) -> bool:
        """A target_status report (``state``: 'started', 'succeeded', 'failed', 'refused'
        or another, which changes nothing); ``what`` names the step ('' : the target)."""
        where = finite_point(target)
        if state == 'started' and where is not None:
            self.target, self.target_fate = where, PENDING
        elif state == 'succeeded' and where is not None:
            self.target, self.target_fate = where, REACHED
        elif state in ('failed', 'refused'):
            self.failure = f'{what or "target"} {state}: {message}'
            if where is not None:
                self.target, self.target_fate = where, FAILED
        else:
            return False
        return True

    # ------------------------------------------------------------------ outputs
    def fresh(self, now: float, timeout: float) -> bool:
        """Whether the pose is current (joint_states within ``timeout`` s)."""
        return self.q is not None and now - self.q_time <= timeout

    def readout(self, arm: str, metrics: PoseMetrics | None) -> Readout:
        """The readout's values; ``metrics`` None when the pose is stale or unknown."""
        ik = self.ik
        return Readout(
            arm=arm, tip=None if metrics is None else metrics.tip,
            ik_error=None if ik is None else float(ik.position_error),
            manipulability=None if metrics is None else metrics.manipulability,
            condition_number=None if metrics is None else metrics.condition_number,
            reach_fraction=None if metrics is None else metrics.reach_fraction,
            solver='' if ik is None else ik.solver, branch='' if ik is None else ik.branch,
            failure=self.failure)
