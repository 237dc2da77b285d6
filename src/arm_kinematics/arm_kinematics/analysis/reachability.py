"""Reachability at a glance: which voxels of an arm's workspace it reaches, how well. No ROS.

A cubic grid of ``resolution`` (m) covers the arm's reach bound (the sphere of its reach
rules, ``Workspace.shoulder`` ± ``max_reach``, not clipped: the floor and the reach limits
show as unreachable voxels). Every voxel centre is a target of the batch solver
(``PathIK.batch``) for one goal type:

- ``position`` (the default, as in SolveIK): the tip at the centre, any orientation;
- ``tool_down``: the tool Z axis along −Z of the base as well;
- ``full_pose``: ``orientations`` tool orientations per voxel, tool Z along directions
  spread evenly over the sphere (a Fibonacci lattice; the roll about the tool axis is the
  minimal rotation from the base's +Z, since a 6-DOF arm's last joint usually turns it
  freely); the voxel's ``share`` is the fraction of those orientations reached.

What counts as reached: an IK answer with code OK whose pose is inside the joint limits
and safe by the arm's safety rules (``SafetyGeometry.check``: floor and obstacle where the
arm enables them) — an unsafe solution does not count. Two ways, by solver:

- a closed form that lists every branch (``Solver.labelled``) on a goal with finitely many
  poses (joints ≤ the goal's constraints): every branch is solved (the analytic solver one
  vectorised batch per branch) without the floor rules, and each solution is checked here;
  a voxel is reached when any solution is safe, and its manipulability is the best of the
  safe ones;
- any other solver (numeric, or a redundant arm): the solver's one answer from the home
  pose as seed, through the arm's dispatcher (its floor rules retry other seeds), then the
  same safety check. A numeric solver that misses a reachable voxel from that seed reports
  it unreachable: the map is a lower bound there.

Targets the reach rules refuse (``Workspace.admits``: beyond the reach, inside the hole,
below the minimum height) and tips lower than the floor plus the radius of the capsule
ending at the tip (no pose is safe there) are marked without a solve. Self-collision and
the scene are not checked (``ik.avoid_collisions`` is not applied): the map is about the
chain, its limits and its safety rules.

Manipulability and condition number are those SolveIK reports (position rows,
``metrics.dexterity``), in m³/rad³ and dimensionless. The result, a ``ReachabilityMap``,
saves to and loads from a ``.npz`` (grid, arrays, arm label, URDF hash).
"""

from __future__ import annotations

from dataclasses import dataclass
import enum
import hashlib
import math
from pathlib import Path
import time

import numpy as np

from arm_kinematics.arm import Arm
from arm_kinematics.common.checks import positive_reason
from arm_kinematics.common.transforms import matrix_to_quaternion
from arm_kinematics.ik import metrics
from arm_kinematics.ik.closed_form.yaw_two_pitch import BRANCHES as ANALYTIC_BRANCHES
from arm_kinematics.ik.request import GOAL_CONSTRAINTS, IKDispatcher, IKRequest
from arm_kinematics.ik.result import ErrorCode, GoalType
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_kinematics.motion.batch_ik import MAX_BATCH
from arm_kinematics.motion.path_ik import PathIK
from arm_kinematics.scene.geometry import Verdict

DEFAULT_RESOLUTION = 0.1          # m, voxel edge
DEFAULT_MAX_VOXELS = 200_000      # voxels of one map at most (a request over it is refused)
DEFAULT_ORIENTATIONS = 8          # tool orientations per voxel for full_pose goals
# Random restarts a numeric solver gets per voxel (SolveOptions' 200 suit one request; a
# map asks thousands, and an unreachable voxel pays for every restart: UR5, 35 ms with 200
# against 1.3 ms with 5, the same voxels reached in a sample of 31).
DEFAULT_RESTARTS = 8
MAX_ORIENTATIONS = 64
GOALS = {'position': GoalType.POSITION, 'tool_down': GoalType.TOOL_DOWN,
         'full_pose': GoalType.FULL_POSE}
# Targets per PathIK.batch call (its limit is MAX_BATCH).
_CHUNK = min(MAX_BATCH, 5000)
# A listed solution counts when FK puts the tip this close to the target (m): closed forms
# are exact to rounding; this only guards against a solver listing an approximate one.
_TIP_TOLERANCE = 1e-4
FORMAT_VERSION = 1


class VoxelCode(enum.IntEnum):
    """Why a voxel is (not) reachable; for full_pose the voxel's best outcome."""

    REACHABLE = 0
    OUTSIDE_REACH = 1       # refused by the reach rules (beyond, inside the hole, too low)
    NO_SOLUTION = 2         # the solver found no pose inside the joint limits
    FLOOR = 3               # every pose found puts a link below the floor
    OBSTACLE = 4            # every pose found touches the obstacle


# The outcome a voxel keeps when its orientations end differently: the one closest to
# reachable (a pose was found but is unsafe, over none found, over refused outright).
_OUTCOME_RANK = {VoxelCode.REACHABLE: 0, VoxelCode.OBSTACLE: 1, VoxelCode.FLOOR: 2,
                 VoxelCode.NO_SOLUTION: 3, VoxelCode.OUTSIDE_REACH: 4}
_REACH_RULES = (ErrorCode.OUT_OF_REACH, ErrorCode.INSIDE_INNER_HOLE,
                ErrorCode.BELOW_MIN_HEIGHT)


class ReachabilityError(ValueError):
    """A reachability request that cannot be run (the message says why)."""


@dataclass
class ReachabilityMap:
    """A voxel map of an arm's workspace.

    Attributes:
        origin: (3,) centre of voxel (0, 0, 0) in the base frame, m.
        resolution: voxel edge, m.
        share: (nx, ny, nz) fraction of the voxel's orientations reached, 0..1 (position and
            tool_down: 0 or 1).
        manipulability: (nx, ny, nz) best manipulability of a safe solution, m³/rad³ (NaN
            where unreachable).
        condition: (nx, ny, nz) condition number of that solution (NaN where unreachable).
        code: (nx, ny, nz) VoxelCode values.
        arm: the arm's label.  base_frame, tip_frame: the chain.
        urdf_sha256: hash of the URDF text the map was made from.
        goal: 'position', 'tool_down' or 'full_pose'.  orientations: per voxel.
        solver: the solver used.  elapsed: s the sampling took.
        solved: voxels the solver was asked about (the rest were refused by the rules).
    """

    origin: np.ndarray
    resolution: float
    share: np.ndarray
    manipulability: np.ndarray
    condition: np.ndarray
    code: np.ndarray
    arm: str = ''
    base_frame: str = ''
    tip_frame: str = ''
    urdf_sha256: str = ''
    goal: str = 'position'
    orientations: int = 1
    solver: str = ''
    elapsed: float = 0.0
    solved: int = 0

    @property
    def shape(self) -> tuple[int, int, int]:
        return tuple(int(v) for v in self.code.shape)       # type: ignore[return-value]

    @property
    def size(self) -> int:
        return int(self.code.size)

    @property
    def reachable(self) -> np.ndarray:
        """(nx, ny, nz) bool: at least one orientation reached safely."""
        return self.share > 0.0

    def centres(self) -> np.ndarray:
        """(nx, ny, nz, 3) voxel centres in the base frame, m."""
        return grid_centres(self.origin, self.resolution, self.shape)

    def index_of(self, point: object) -> tuple[int, int, int] | None:
        """Index of the voxel holding ``point`` (m), None outside the grid."""
        index = np.rint((np.asarray(point, dtype=float) - self.origin) / self.resolution)
        if not np.all(np.isfinite(index)) or np.any(index < 0) or \
                np.any(index >= np.array(self.shape)):
            return None
        return tuple(int(v) for v in index)     # type: ignore[return-value]

    def quartiles(self) -> np.ndarray:
        """Min, 25 %, median, 75 %, max manipulability of the reachable voxels (NaN: none)."""
        values = self.manipulability[self.reachable]
        if values.size == 0:
            return np.full(5, math.nan)
        return np.percentile(values, [0, 25, 50, 75, 100])

    def counts(self) -> dict[VoxelCode, int]:
        return {code: int(np.count_nonzero(self.code == code)) for code in VoxelCode}

    # ------------------------------------------------------------------ files
    def save(self, path: str | Path) -> Path:
        """Write the map as a compressed .npz (``load`` reads it back); returns the path.

        Raises:
            OSError: the file cannot be written.
        """
        path = Path(path)
        with path.open('wb') as stream:
            np.savez_compressed(
                stream, format_version=np.int64(FORMAT_VERSION), origin=self.origin,
                resolution=np.float64(self.resolution), shape=np.array(self.shape),
                share=self.share.astype(np.float32),
                manipulability=self.manipulability.astype(np.float32),
                condition=self.condition.astype(np.float32), code=self.code.astype(np.uint8),
                arm=np.str_(self.arm), base_frame=np.str_(self.base_frame),
                tip_frame=np.str_(self.tip_frame), urdf_sha256=np.str_(self.urdf_sha256),
                goal=np.str_(self.goal), orientations=np.int64(self.orientations),
                solver=np.str_(self.solver), elapsed=np.float64(self.elapsed),
                solved=np.int64(self.solved))
        return path

    @classmethod
    def load(cls, path: str | Path) -> ReachabilityMap:
        """Read a map written by ``save``.

        Raises:
            ReachabilityError: not such a file (missing, not an .npz, a key missing).
        """
        try:
            with np.load(Path(path), allow_pickle=False) as data:
                version = int(data['format_version'])
                if version != FORMAT_VERSION:
                    raise ReachabilityError(f'{path}: reachability format {version}, this '
                                            f'version reads {FORMAT_VERSION}')
                shape = tuple(int(v) for v in data['shape'])
                arrays = {name: np.asarray(data[name]).reshape(shape)
                          for name in ('share', 'manipulability', 'condition', 'code')}
                return cls(np.asarray(data['origin'], dtype=float),
                           float(data['resolution']), arrays['share'].astype(float),
                           arrays['manipulability'].astype(float),
                           arrays['condition'].astype(float), arrays['code'].astype(np.uint8),
                           str(data['arm']), str(data['base_frame']), str(data['tip_frame']),
                           str(data['urdf_sha256']), str(data['goal']),
                           int(data['orientations']), str(data['solver']),
                           float(data['elapsed']), int(data['solved']))
        except (OSError, KeyError, ValueError) as error:
            if isinstance(error, ReachabilityError):
                raise
            raise ReachabilityError(f'{path}: not a reachability map: {error}') from None


def urdf_hash(urdf: str) -> str:
    """SHA-256 of the URDF text (hex), to tell which description a map was made from."""
    return hashlib.sha256(urdf.encode('utf-8')).hexdigest()


def grid_centres(origin: np.ndarray, resolution: float, shape: tuple[int, ...]) -> np.ndarray:
    """(nx, ny, nz, 3) centres of a grid whose voxel (0, 0, 0) is centred at ``origin``."""
    axes = [origin[k] + resolution * np.arange(shape[k]) for k in range(3)]
    return np.stack(np.meshgrid(*axes, indexing='ij'), axis=-1)


def reach_grid(arm: Arm, resolution: float, max_voxels: int = DEFAULT_MAX_VOXELS
               ) -> tuple[np.ndarray, tuple[int, int, int]]:
    """(origin, shape) of the grid over the arm's reach sphere at ``resolution`` m.

    Raises:
        ReachabilityError: a resolution that is not a finite number > 0, or more voxels
            than ``max_voxels`` (the message gives the coarsest resolution that fits).
    """
    reason = positive_reason(resolution, 'resolution')
    if reason:
        raise ReachabilityError(reason)
    if isinstance(max_voxels, bool) or not isinstance(max_voxels, (int, np.integer)) or \
            max_voxels < 1:
        raise ReachabilityError(f'max_voxels must be an integer >= 1, got {max_voxels!r}')
    workspace = arm.workspace
    radius = float(workspace.max_reach)
    if not math.isfinite(radius) or radius <= 0.0:
        raise ReachabilityError(f'{arm.label}: the reach bound is {radius!r} m')
    count = max(1, math.ceil(2.0 * radius / resolution - 1e-9))
    voxels = count ** 3
    if voxels > max_voxels:
        side = round(max_voxels ** (1.0 / 3.0))       # the integer cube root, exactly
        side -= side ** 3 > max_voxels
        fits = 2.0 * radius / max(side, 1)
        raise ReachabilityError(f'{count}³ = {voxels} voxels at {resolution:g} m over the '
                                f'reach of {arm.label} ({radius:.3f} m) exceed the limit of '
                                f'{max_voxels}; use a resolution of at least {fits:.3g} m '
                                'or raise the limit')
    origin = np.asarray(workspace.shoulder, dtype=float) - 0.5 * (count - 1) * resolution
    return origin, (count, count, count)


def tool_orientations(goal: GoalType, count: int = DEFAULT_ORIENTATIONS) -> np.ndarray:
    """(k, 4) quaternions (x, y, z, w) of the tool orientations sampled per voxel.

    POSITION: one (unused); TOOL_DOWN: one (tool Z along −Z); FULL_POSE: ``count`` tool Z
    directions on a Fibonacci lattice, each the minimal rotation from +Z.

    Raises:
        ReachabilityError: ``count`` outside 1..MAX_ORIENTATIONS for FULL_POSE.
    """
    if goal != GoalType.FULL_POSE:
        return np.array([[1.0, 0.0, 0.0, 0.0] if goal == GoalType.TOOL_DOWN else
                         [0.0, 0.0, 0.0, 1.0]])
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or \
            not 1 <= count <= MAX_ORIENTATIONS:
        raise ReachabilityError(f'orientations must be an integer in 1..{MAX_ORIENTATIONS}, '
                                f'got {count!r}')
    golden = math.pi * (3.0 - math.sqrt(5.0))
    quaternions = []
    for i in range(count):
        z = 1.0 - 2.0 * (i + 0.5) / count
        ring = math.sqrt(max(0.0, 1.0 - z * z))
        direction = np.array([ring * math.cos(golden * i), ring * math.sin(golden * i), z])
        quaternions.append(matrix_to_quaternion(_rotation_from_z(direction)))
    return np.array(quaternions, dtype=float)


def _rotation_from_z(direction: np.ndarray) -> np.ndarray:
    """The minimal rotation taking +Z to the unit ``direction`` (Rodrigues)."""
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(z, direction)
    sine, cosine = float(np.linalg.norm(axis)), float(direction @ z)
    if sine < 1e-12:
        return np.eye(3) if cosine > 0.0 else np.diag([1.0, -1.0, -1.0])
    k = axis / sine
    skew = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + sine * skew + (1.0 - cosine) * skew @ skew


def _rule_codes(arm: Arm, points: np.ndarray) -> np.ndarray:
    """VoxelCode per point that no solve can change (REACHABLE: ask the solver)."""
    safety = arm.safety
    codes = np.full(len(points), VoxelCode.REACHABLE, dtype=np.uint8)
    outside = ~arm.workspace.admits(points)
    codes[outside] = VoxelCode.OUTSIDE_REACH
    if safety.floor_enabled:
        # The capsule that ends at the tip reaches its radius below the tip in every pose.
        radii = [c.radius for c in safety.capsules if c.end == arm.model.dof]
        if radii:
            low = points[:, 2] < safety.floor_z + max(radii)
            codes[low & ~outside] = VoxelCode.FLOOR
    return codes


class Reachability:
    """Samples the workspace of one arm (see the module docstring).

    Args:
        arm: the arm value (``load_arm`` / ``build_arm``).
        solver: '' for the arm's default solver, else a solver name.
        options: solver options of every request (default: SolveOptions with
            DEFAULT_RESTARTS restarts).

    Raises:
        ReachabilityError: the solver does not apply to the arm.
    """

    def __init__(self, arm: Arm, solver: str = '', options: SolveOptions | None = None) -> None:
        self.arm = arm
        self.dispatcher = arm.dispatcher()
        name = solver or arm.default_solver
        reason = self.dispatcher.solver_reason(name)
        if reason:
            raise ReachabilityError(f'solver "{name}" cannot serve {arm.label}: {reason}')
        self.solver = name
        self.options = options or SolveOptions(restarts=DEFAULT_RESTARTS)
        self.safety = arm.safety if (arm.safety.floor_enabled or
                                     arm.safety.obstacle_enabled) else None
        # Every branch is solved without the floor rules (checked here instead); built once.
        self._plain: IKDispatcher | None = None

    def every_branch(self, goal: GoalType) -> bool:
        """True when every solution of a goal is listed (closed form, finitely many poses)."""
        return self.dispatcher.solvers[self.solver].labelled and \
            self.arm.model.dof <= GOAL_CONSTRAINTS[goal]

    def sample(self, resolution: float = DEFAULT_RESOLUTION, goal: str = 'position',
               orientations: int = DEFAULT_ORIENTATIONS,
               max_voxels: int = DEFAULT_MAX_VOXELS) -> ReachabilityMap:
        """The map at ``resolution`` m for ``goal`` (a key of GOALS).

        Raises:
            ReachabilityError: bad resolution, goal or orientation count; too many voxels;
                a goal the solver cannot serve on this arm.
        """
        if goal not in GOALS:
            raise ReachabilityError(f'goal "{goal}" is not one of {", ".join(GOALS)}')
        goal_type = GOALS[goal]
        origin, shape = reach_grid(self.arm, resolution, max_voxels)
        turns = tool_orientations(goal_type, orientations)
        self._check_goal(goal_type, turns[0])
        started = time.perf_counter()
        points = grid_centres(origin, resolution, shape).reshape(-1, 3)
        rules = _rule_codes(self.arm, points)
        asked = np.flatnonzero(rules == VoxelCode.REACHABLE)
        count = len(points)
        share = np.zeros(count)
        best = np.full(count, math.nan)
        condition = np.full(count, math.nan)
        outcome = rules.copy()
        # Worse than any outcome: the first orientation's outcome always replaces it.
        rank = np.full(count, len(_OUTCOME_RANK))
        for start in range(0, len(asked), max(1, _CHUNK // len(turns))):
            rows = asked[start:start + max(1, _CHUNK // len(turns))]
            for quaternion in turns:
                codes, manip, cond = self._solve(points[rows], quaternion, goal_type)
                reached = codes == VoxelCode.REACHABLE
                share[rows] += reached
                better = reached & ~(best[rows] >= manip)      # NaN best: any reach wins
                best[rows[better]] = manip[better]
                condition[rows[better]] = cond[better]
                ranks = np.array([_OUTCOME_RANK[VoxelCode(c)] for c in codes])
                closer = ranks < rank[rows]
                rank[rows[closer]] = ranks[closer]
                outcome[rows[closer]] = codes[closer]
        share /= len(turns)
        outcome[share > 0.0] = VoxelCode.REACHABLE
        model = self.arm.model
        return ReachabilityMap(
            origin, float(resolution), share.reshape(shape), best.reshape(shape),
            condition.reshape(shape), outcome.reshape(shape), self.arm.label, model.base_link,
            model.tip_link, urdf_hash(model.urdf), goal, len(turns), self.solver,
            time.perf_counter() - started, int(len(asked)))

    def _check_goal(self, goal: GoalType, quaternion: np.ndarray) -> None:
        """Refuse a goal the solver cannot serve here (every voxel would say so)."""
        tip = self.arm.model.fk(self.arm.home)[:3, 3]
        answer = self.dispatcher.solve(
            IKRequest(position=tip.tolist(), orientation=quaternion.tolist(), goal=goal,
                      solver=self.solver), self.options, self.arm.home)
        if answer.result.code in (ErrorCode.SOLVER_NOT_APPLICABLE, ErrorCode.INVALID_INPUT,
                                  ErrorCode.UNKNOWN_SOLVER):
            raise ReachabilityError(f'goal {goal.name.lower()} with solver "{self.solver}" on '
                                    f'{self.arm.label}: {answer.result.reason}')

    def _solve(self, points: np.ndarray, quaternion: np.ndarray, goal: GoalType
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(VoxelCode, best manipulability, its condition number) per point, one orientation."""
        model = self.arm.model
        every = self.every_branch(goal)
        if every:
            # All branches without the floor rules: each solution is checked below.
            if self._plain is None:
                self._plain = IKDispatcher(model, self.arm.workspace, self.solver)
            dispatcher = self._plain
            labels = ANALYTIC_BRANCHES if self.solver == 'analytic' else ('',)
        else:
            dispatcher, labels = self.dispatcher, ('',)
        batch = PathIK(dispatcher, self.arm.safety)
        quaternion = quaternion.tolist()
        owners, candidates = [], []
        codes = np.full(len(points), VoxelCode.NO_SOLUTION, dtype=np.uint8)
        outcome_rank = np.full(len(points), _OUTCOME_RANK[VoxelCode.NO_SOLUTION])
        for label in labels:
            requests = [IKRequest(position=p, orientation=quaternion, goal=goal,
                                  solver=self.solver, branch=label,
                                  return_all=every and self.solver != 'analytic')
                        for p in points.tolist()]
            for row, answer in enumerate(batch.batch(requests, self.options, self.arm.home)):
                result = answer.result
                if result.code == ErrorCode.OK and result.q is not None:
                    found = [s.q for s in result.solutions] or [result.q]
                    owners.extend([row] * len(found))
                    candidates.extend(found)
                    continue
                code = VoxelCode.OUTSIDE_REACH if result.code in _REACH_RULES else \
                    VoxelCode.FLOOR if result.code == ErrorCode.FLOOR_COLLISION else \
                    VoxelCode.NO_SOLUTION
                if _OUTCOME_RANK[code] < outcome_rank[row]:
                    outcome_rank[row], codes[row] = _OUTCOME_RANK[code], code
        manip = np.full(len(points), math.nan)
        cond = np.full(len(points), math.nan)
        if not candidates:
            return codes, manip, cond
        owner = np.array(owners)
        q = _distinct(np.array(candidates, dtype=float), owner, model)
        q, owner = q[0], q[1]
        verdict = self._verdicts(q, owner, points)
        for code in (VoxelCode.NO_SOLUTION, VoxelCode.FLOOR, VoxelCode.OBSTACLE):
            hit = owner[verdict == code]
            closer = _OUTCOME_RANK[code] < outcome_rank[hit]
            codes[hit[closer]] = code
            outcome_rank[hit[closer]] = _OUTCOME_RANK[code]
        safe = verdict == VoxelCode.REACHABLE
        if safe.any():
            values, conditions = metrics.dexterity_batch(model.position_jacobian_batch(q[safe]))
            rows = owner[safe]
            order = np.lexsort((-values, rows))       # per point, best manipulability first
            rows, first = np.unique(rows[order], return_index=True)
            manip[rows] = values[order][first]
            cond[rows] = conditions[order][first]
            codes[rows] = VoxelCode.REACHABLE
        return codes, manip, cond

    def _verdicts(self, q: np.ndarray, owner: np.ndarray, points: np.ndarray) -> np.ndarray:
        """VoxelCode of every candidate pose: limits, tip on the target, floor, obstacle."""
        model = self.arm.model
        verdict = np.full(len(q), VoxelCode.REACHABLE, dtype=np.uint8)
        inside = np.all((q >= model.lower - 1e-9) & (q <= model.upper + 1e-9), axis=1)
        tips = model.fk_batch(q)[:, :3, 3]
        on_target = np.linalg.norm(tips - points[owner], axis=1) <= \
            max(_TIP_TOLERANCE, 10.0 * self.options.tolerance)
        verdict[~(inside & on_target)] = VoxelCode.NO_SOLUTION
        if self.safety is not None:
            checks = self.safety.check(q)
            ok = verdict == VoxelCode.REACHABLE
            verdict[ok & (checks.verdict == Verdict.FLOOR_VIOLATION)] = VoxelCode.FLOOR
            verdict[ok & (checks.verdict == Verdict.OBSTACLE_CONTACT)] = VoxelCode.OBSTACLE
        return verdict


def _distinct(q: np.ndarray, owner: np.ndarray, model: object) -> tuple[np.ndarray, np.ndarray]:
    """The candidates with whole-turn copies dropped (same safety and Jacobian), per owner."""
    keys = q.copy()
    wraps = [j for j, joint in enumerate(model.joints) if joint.wraps]
    if wraps:
        keys[:, wraps] = np.mod(keys[:, wraps], 2.0 * math.pi)
        # 2π - ε and 0 are one angle.
        keys[:, wraps] = np.where(keys[:, wraps] > 2.0 * math.pi - 1e-7, 0.0, keys[:, wraps])
    _, first = np.unique(np.column_stack([owner, np.round(keys, 7)]), axis=0,
                         return_index=True)
    first.sort()
    return q[first], owner[first]


def summary_lines(reach: ReachabilityMap) -> list[str]:
    """The map in a few readable lines (the command prints them)."""
    counts = reach.counts()
    size, reached = reach.size, counts[VoxelCode.REACHABLE]
    nx, ny, nz = reach.shape
    lines = [
        f'arm {reach.arm} ({reach.base_frame} -> {reach.tip_frame}), solver {reach.solver}, '
        f'goal {reach.goal}' + (f' ({reach.orientations} tool orientations per voxel)'
                                if reach.goal == 'full_pose' else ''),
        f'grid {nx} x {ny} x {nz} = {size} voxels of {reach.resolution:g} m, first centre '
        f'({reach.origin[0]:.3f}, {reach.origin[1]:.3f}, {reach.origin[2]:.3f}) m',
        f'solved {reach.solved} voxels in {reach.elapsed:.2f} s '
        f'({1e6 * reach.elapsed / max(reach.solved, 1):.0f} us per solved voxel; '
        f'{size - reach.solved} refused by the reach rules or the floor without a solve)',
        f'reachable {reached} voxels: {100.0 * reached / size:.1f} % of the grid, '
        f'{100.0 * reached / max(reach.solved, 1):.1f} % of those solved',
        'unreachable: ' + ', '.join(f'{code.name.lower()} {counts[code]}'
                                    for code in VoxelCode if code != VoxelCode.REACHABLE),
    ]
    if reach.goal == 'full_pose' and reached:
        lines.append(f'orientation share of reachable voxels: mean '
                     f'{float(reach.share[reach.reachable].mean()):.2f}, all orientations in '
                     f'{int(np.count_nonzero(reach.share >= 1.0))} voxels')
    quartiles = reach.quartiles()
    if reached:
        lines.append('manipulability (m^3/rad^3) min / q1 / median / q3 / max: ' +
                     ' / '.join(f'{v:.4g}' for v in quartiles))
        conditions = reach.condition[reach.reachable]
        lines.append(f'condition number median {float(np.median(conditions)):.3g}, above 100 '
                     f'in {100.0 * float(np.mean(conditions > 100.0)):.1f} % of reachable voxels')
    return lines
