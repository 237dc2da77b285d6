"""What the front door answers: plain values that carry the result, the code and the words.

Every answer has ``ok``, ``code`` (the enum of the layer that made it: ``ErrorCode`` of IK and
checks, ``PathCode`` of path IK, ``MotionCode`` of planning) and ``message`` (what happened,
in words a person can act on); a failure is an answer, never an exception. The layer's own
result stays reachable (``result``) for what the front door does not repeat.

Units: m, rad (m for prismatic joints), s; quaternions are (x, y, z, w).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
import math

import numpy as np

from arm_kinematics.common.transforms import (
    make_transform,
    matrix_to_quaternion,
    quaternion_to_matrix,
)
from arm_kinematics.ik.result import ErrorCode, Solution
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.motion.move_types import Plan, PlanFailure
from arm_kinematics.motion.path_request import PathCode, PathResult
from arm_kinematics.motion.trajectory import Trajectory
from arm_kinematics.scene.collision_report import CollisionReport

__all__ = ['CheckVerdict', 'IKBranches', 'IKSolution', 'MotionPlan', 'PathAnswer', 'Pose',
           'Solution']


@dataclass(frozen=True, eq=False)
class Pose:
    """A tool pose in the base frame.

    Two poses are equal when their arrays are (``np.array_equal``: exact, and q and −q are
    different values though the same rotation); a pose holds arrays, which may change, so it
    is not hashable (not a dict key nor in a set).

    Attributes:
        position: (3,) m.
        quaternion: (4,) unit quaternion x, y, z, w (ROS's order).
    """

    position: np.ndarray
    quaternion: np.ndarray

    def __eq__(self, other: object) -> bool:
        # The dataclass's == compares the arrays as a tuple, which asks numpy for the truth
        # of an element-wise array and raises.
        if not isinstance(other, Pose):
            return NotImplemented
        return bool(np.array_equal(self.position, other.position)
                    and np.array_equal(self.quaternion, other.quaternion))

    __hash__ = None     # type: ignore[assignment]

    @staticmethod
    def of_matrix(matrix: np.ndarray) -> Pose:
        """The pose of a 4×4 homogeneous transform."""
        matrix = np.asarray(matrix, dtype=float)
        return Pose(matrix[:3, 3].copy(), np.array(matrix_to_quaternion(matrix[:3, :3])))

    @property
    def rotation(self) -> np.ndarray:
        """(3, 3) rotation matrix."""
        return quaternion_to_matrix(*self.quaternion)

    @property
    def matrix(self) -> np.ndarray:
        """(4, 4) homogeneous transform."""
        return make_transform(self.rotation, self.position)


@dataclass(frozen=True)
class IKSolution:
    """The answer of ``Arm.ik``.

    Attributes:
        q: joint positions in chain order (``Arm.joint_names``), or None when there are none
            to offer (a PARTIAL_SOLUTION still has the closest pose's).
        code: ``ErrorCode`` (OK, OUT_OF_REACH, JOINT_LIMITS, COLLISION, ...).
        message: what happened, in words ('' when a plain OK needs none).
        branch: the closed form's branch label ('' for numeric solvers).
        solver: the solver that answered.
        position_error: |target − reached|, m (inf when nothing was reached).
        orientation_error: rad (0 for a position goal).
        solve_time: s.
    """

    q: np.ndarray | None
    code: ErrorCode
    message: str
    branch: str = ''
    solver: str = ''
    position_error: float = math.inf
    orientation_error: float = 0.0
    solve_time: float = 0.0

    @property
    def ok(self) -> bool:
        return self.code == ErrorCode.OK


@dataclass(frozen=True)
class IKBranches:
    """The answer of ``Arm.ik_all``: every solution a closed form gives, labelled.

    Iterating gives the solutions (``Solution``: ``label``, ``q``); ``ok`` is True when
    there is at least one.
    """

    solutions: tuple[Solution, ...]
    code: ErrorCode
    message: str
    solver: str = ''

    @property
    def ok(self) -> bool:
        return self.code == ErrorCode.OK and bool(self.solutions)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(s.label for s in self.solutions)

    def __iter__(self) -> Iterator[Solution]:
        return iter(self.solutions)

    def __len__(self) -> int:
        return len(self.solutions)

    def __getitem__(self, index: int) -> Solution:
        return self.solutions[index]


@dataclass(frozen=True)
class PathAnswer:
    """The answer of ``Arm.path``: a tool path followed by path IK, timed.

    Attributes:
        code: ``PathCode`` (OK: followed to the end; else where and why it stopped).
        message: the words.
        trajectory: the timed joint path from the start (to the stop when not ok), or None.
        fraction: share of the tool path's length followed, 0..1.
        result: path IK's whole ``PathResult`` (stop waypoint, branches, condition...).
    """

    code: PathCode
    message: str
    trajectory: Trajectory | None
    fraction: float
    result: PathResult

    @property
    def ok(self) -> bool:
        return self.code == PathCode.OK

    @property
    def q(self) -> np.ndarray:
        """(N, n) joint samples of the trajectory (empty when there is none)."""
        return self.trajectory.positions if self.trajectory is not None else np.zeros((0, 0))


@dataclass(frozen=True)
class MotionPlan:
    """The answer of ``Arm.plan``: a validated, timed move, or why there is none.

    Attributes:
        code: ``MotionCode`` (SUCCESS, IK_FAILED, NO_PATH, UNSAFE_PATH, ...).
        message: what was planned (detours, stretching) or why not.
        trajectory: times, positions and velocities (None when not ok).
        goal_q: the joint goal (the IK answer of a Cartesian goal).
        detoured: a collision-free detour replaced the straight joint move.
        result: the planner's ``Plan`` or ``PlanFailure``.
    """

    code: MotionCode
    message: str
    trajectory: Trajectory | None
    goal_q: np.ndarray | None
    detoured: bool
    result: Plan | PlanFailure

    @property
    def ok(self) -> bool:
        return self.code == MotionCode.SUCCESS

    @staticmethod
    def of(result: Plan | PlanFailure) -> MotionPlan:
        if isinstance(result, PlanFailure):
            return MotionPlan(result.error.code, result.error.message, None, None, False, result)
        return MotionPlan(MotionCode.SUCCESS, result.message, result.trajectory, result.goal_q,
                          result.detoured, result)


@dataclass(frozen=True)
class CheckVerdict:
    """The answer of ``Arm.check``: is this pose inside the limits and free of collision?

    Attributes:
        code: ``ErrorCode``: OK, INVALID_INPUT, JOINT_LIMITS, COLLISION (self or scene) or
            FLOOR_COLLISION (the configuration's floor), the first that applies.
        message: every problem found, or the closest pair when clear.
        out_of_limits: the joints outside their limits.
        collision: the collision checker's report (None for invalid input).
        floor_clearance: lowest capsule clearance above the floor, m (nan: no floor).
    """

    code: ErrorCode
    message: str
    out_of_limits: tuple[str, ...] = ()
    collision: CollisionReport | None = None
    floor_clearance: float = math.nan

    @property
    def ok(self) -> bool:
        return self.code == ErrorCode.OK

    @property
    def collides(self) -> bool:
        return self.collision is not None and self.collision.collides
