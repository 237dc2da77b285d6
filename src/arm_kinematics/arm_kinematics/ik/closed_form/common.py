"""What the closed-form families share: tolerances, joint limits, goals and answers.

- tolerances and the flag bits a solution carries (singular, stretched);
- joint limits: ``wrap_into`` (one angle by whole turns into its range), ``JointRanges``
  (a chain's ranges prepared for the hot path), ``turns`` (every whole-turn copy);
- the position gate (``PositionGate``), the goal orientation (``parse_orientation``) and
  the tool-down rotation of a seed;
- branch handling: the solution nearest a seed, JOINT_LIMITS words, the OK answer checked
  by FK (``solved``) and the check of a recognised family against FK on random
  configurations (``fk_check``).

The vector maths lives in ``geometry``. Units: metres and radians.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import itertools
import math
from time import perf_counter

import numpy as np

from arm_kinematics.common.transforms import quaternion_to_matrix
from arm_kinematics.ik.closed_form.geometry import Matrix, rotation_angle
from arm_kinematics.ik.result import (
    check_vector,
    ErrorCode,
    fast_vector,
    GoalType,
    IKResult,
    Solution,
)
from arm_kinematics.ik.solvers.base import ClosedFormBase, NEAREST, SolveOptions, Workspace
from arm_kinematics.model.arm_model import ArmModel

TWO_PI = 2.0 * math.pi
PI = math.pi
# Joint-limit slack, the same as ArmModel.within_limits; results are clamped onto the limit.
LIMIT_TOLERANCE = 1e-9
# Geometry checks on the URDF (metres / cosines) of the yaw + pitch and spherical-wrist
# rules: exact up to float noise of the xacro.
GEOMETRY_TOLERANCE = 1e-9
# The families recognised from vendor URDFs: axes that must cross may miss by
# LINE_TOLERANCE (m), axes that must be parallel or perpendicular by ANGLE_TOLERANCE (rad).
# Vendor URDFs round their numbers to about a micrometre (the UR5's 0.10915 m is 0.109150
# to six digits), so a tighter tolerance would refuse real arms; a looser one would accept
# arms whose closed form is visibly wrong.
LINE_TOLERANCE = 1e-6
ANGLE_TOLERANCE = 1e-6
# The closed form must reproduce FK to this (m for positions, rad for rotations) on
# CHECK_CONFIGURATIONS random configurations once an arm is recognised.
CHECK_TOLERANCE = 1e-9
# The six-joint families (UR, OPW) of vendor URDFs: axes within ANGLE_TOLERANCE of the
# rules leave the idealised closed form up to about a micrometre off FK on a metre-long arm
# (a KUKA or ABB URDF rounded to 0.1 µm or 1e-8 rad), so the check accepts that much; the
# solver refines an answer that misses the request's tolerance (``FamilySolver.solve``).
SIX_JOINT_CHECK_TOLERANCE = 1e-6
CHECK_CONFIGURATIONS = 8
# |sin| of a bend below which two axes turn about one line (wrist singular, or the
# point on the yaw axis): the joint that became free is kept from the seed.
SINGULAR = 1e-9
# Largest |RᵀR − I| entry accepted for a rotation-matrix goal (as the dls solver).
ROTATION_TOLERANCE = 1e-6

# Flags of a solution (bits), reported in words by FLAG_WORDS.
WRIST_SINGULAR, SHOULDER_SINGULAR, STRETCHED, ROLL_ALONG_YAW = 1, 2, 4, 8
FLAG_WORDS = {WRIST_SINGULAR: 'wrist singular (two wrist axes on one line; one joint kept '
                              'from the seed)',
              SHOULDER_SINGULAR: 'shoulder singular (the wrist point on the first axis; '
                                 'the first joint kept from the seed)',
              STRETCHED: 'arm stretched or folded (the elbow at its reach boundary)',
              ROLL_ALONG_YAW: 'roll axis along the yaw axis (they turn about one line; the '
                              'yaw from the position)'}


def flag_words(flags: int) -> str:
    """The singularities named by a solution's flag bits ('' for none)."""
    return '; '.join(words for bit, words in FLAG_WORDS.items() if flags & bit)


# ---------------------------------------------------------------------- joint limits
def wrap_into(angle: float, lower: float, upper: float) -> float | None:
    """``angle`` shifted by whole turns into [lower, upper] (rad), or None when impossible.

    Values within LIMIT_TOLERANCE outside the range count as inside and are clamped onto
    it. Matches ``wrap_into_array`` bit for bit (Python ``%`` and ``np.mod`` agree).
    """
    wrapped = (angle + (LIMIT_TOLERANCE - lower)) % TWO_PI + (lower - LIMIT_TOLERANCE)
    if wrapped > upper + LIMIT_TOLERANCE:
        return None
    return lower if wrapped < lower else upper if wrapped > upper else wrapped


def wrap_into_array(angles: np.ndarray, lower: float,
                    upper: float) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised ``wrap_into``: (wrapped and clamped angles, mask of those in range)."""
    wrapped = np.mod(angles + (LIMIT_TOLERANCE - lower), TWO_PI) + (lower - LIMIT_TOLERANCE)
    valid = wrapped <= upper + LIMIT_TOLERANCE
    return np.clip(wrapped, lower, upper), valid


class JointRanges:
    """Joint limits prepared for fast scalar wrapping (the hot path of closed forms)."""

    def __init__(self, lower: Sequence[float], upper: Sequence[float]) -> None:
        self.lower = tuple(float(v) for v in lower)
        self.upper = tuple(float(v) for v in upper)
        # Precomputed once, so every wrap is one add, one modulo and one add; the same
        # expressions as wrap_into, hence the same bits.
        self.shift = tuple(LIMIT_TOLERANCE - v for v in self.lower)
        self.base = tuple(v - LIMIT_TOLERANCE for v in self.lower)
        self.top = tuple(v + LIMIT_TOLERANCE for v in self.upper)
        # Joints whose range exceeds a full turn reach one pose at several angles: wrap()
        # gives the lowest, toward() moves it by whole turns nearest the seed.
        self.multi_turn = tuple(j for j, (lo, hi) in enumerate(zip(self.lower, self.upper,
                                                                   strict=True))
                                if hi - lo > TWO_PI + 2.0 * LIMIT_TOLERANCE)

    def toward(self, q: Sequence[float], reference: Sequence[float]) -> tuple[float, ...]:
        """Wrapped ``q`` with its multi-turn joints moved by whole turns toward ``reference``."""
        out = list(q)
        for j in self.multi_turn:
            room = math.floor((self.upper[j] - out[j]) / TWO_PI)   # turns that still fit
            out[j] += max(0, min(round((reference[j] - out[j]) / TWO_PI), room)) * TWO_PI
        return tuple(out)

    def toward_array(self, q: np.ndarray, reference: Sequence[float]) -> np.ndarray:
        """Vectorised ``toward`` for (N, n) wrapped angles (changed in place, returned)."""
        for j in self.multi_turn:
            room = np.floor((self.upper[j] - q[:, j]) / TWO_PI)
            turns = np.clip(np.round((reference[j] - q[:, j]) / TWO_PI), 0.0, room)
            q[:, j] += turns * TWO_PI
        return q

    def wrap(self, q: Sequence[float]) -> tuple[float, ...] | None:
        """``q`` with every joint wrapped into its range, or None if one cannot be."""
        out = []
        for angle, shift, base, top, lower, upper in zip(q, self.shift, self.base, self.top,
                                                         self.lower, self.upper, strict=True):
            wrapped = (angle + shift) % TWO_PI + base
            if wrapped > top:
                return None
            out.append(lower if wrapped < lower else upper if wrapped > upper else wrapped)
        return tuple(out)

    def reason(self, label: str, q: Sequence[float], names: Sequence[str]) -> str:
        """Words naming the first joint of ``q`` that no whole turn brings into range."""
        for index, angle in enumerate(q):
            if wrap_into(angle, self.lower[index], self.upper[index]) is None:
                return (f'{label}: {names[index]} would need '
                        f'{math.degrees(math.remainder(angle, TWO_PI)):.1f}°, outside its '
                        f'limits [{math.degrees(self.lower[index]):.1f}°, '
                        f'{math.degrees(self.upper[index]):.1f}°]')
        return f'{label}: within limits'



def wrap_one(angle: float, joint: tuple[float, float, float, float, float]) -> float | None:
    """JointRanges.wrap for one joint given its (shift, base, top, lower, upper)."""
    shift, base, top, lower, upper = joint
    angle = (angle + shift) % TWO_PI + base
    if angle > top:
        return None
    return lower if angle < lower else upper if angle > upper else angle


def turns(angle: float, lower: float, upper: float) -> list[float]:
    """Every ``angle`` + 2πk inside [lower, upper] (± LIMIT_TOLERANCE, clamped onto them)."""
    first = (angle + (LIMIT_TOLERANCE - lower)) % TWO_PI + (lower - LIMIT_TOLERANCE)
    out = []
    while first <= upper + LIMIT_TOLERANCE:
        out.append(lower if first < lower else upper if first > upper else first)
        first += TWO_PI
    return out


def past_limits(angle: float, lower: float, upper: float) -> float:
    """How far (rad) the nearest whole-turn copy of ``angle`` lies outside [lower, upper]."""
    wrapped = (angle - lower) % TWO_PI + lower          # in [lower, lower + 2π)
    if wrapped <= upper:
        return 0.0
    return min(wrapped - upper, lower + TWO_PI - wrapped)


def outside_limits(label: str, q: Sequence[float], ranges: JointRanges,
                   names: Sequence[str]) -> tuple[str, float, str]:
    """(label, rad past, words) of a branch no whole turn brings inside the limits: the
    joint farthest out, its angle and its range."""
    lower, upper = ranges.lower, ranges.upper
    worst, joint = max((past_limits(angle, lower[j], upper[j]), j) for j, angle in enumerate(q))
    return (label, worst, f'{names[joint]} would need '
            f'{math.degrees(math.remainder(q[joint], TWO_PI)):.1f}°, '
            f'{math.degrees(worst):.1f}° outside its limits '
            f'[{math.degrees(lower[joint]):.1f}°, {math.degrees(upper[joint]):.1f}°]')


def wrap_rows(raw: np.ndarray, ok: np.ndarray, ranges: JointRanges, seeds: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """Raw solutions (N, B, n) wrapped into the limits: (q, valid). A multi-turn joint
    holds the whole-turn copy nearest the seed (seeds (N, n) or (n,)); rows that do not
    fit keep finite wrapped angles with valid False."""
    # The expressions of wrap_into_array on the whole (N, B, n) table at once.
    lower, upper = np.asarray(ranges.lower), np.asarray(ranges.upper)
    wrapped = np.mod(raw + np.asarray(ranges.shift), TWO_PI) + np.asarray(ranges.base)
    valid = ok & (wrapped <= np.asarray(ranges.top)).all(axis=2)
    q = np.minimum(np.maximum(wrapped, lower), upper)
    if ranges.multi_turn:
        multi = list(ranges.multi_turn)
        reference = np.broadcast_to(seeds, (raw.shape[0], raw.shape[2]))[:, None, multi]
        part = q[:, :, multi]
        room = np.floor((upper[multi] - part) / TWO_PI)
        part += np.clip(np.round((reference - part) / TWO_PI), 0.0, room) * TWO_PI
        q[:, :, multi] = part
    return q, valid



class PositionGate:
    """``Workspace.check_position`` with its passing case in plain math (hot path).

    A target that fails here, or comes in an unusual form, is handed to the workspace,
    which words the failure; both apply the same comparisons to the same floats.
    """

    def __init__(self, workspace: Workspace) -> None:
        """Copy the rules of ``workspace`` into floats with its 1e-12 m slack folded in."""
        self.workspace = workspace
        self.shoulder = tuple(float(v) for v in workspace.shoulder)
        minimum = workspace.min_height_above_shoulder
        self.min_z = -math.inf if minimum is None else minimum - 1e-12
        self.max_r = workspace.max_reach + 1e-12
        self.min_r = workspace.min_reach - 1e-12

    def check(self, position: object) -> tuple[tuple[float, float, float] | None,
                                               IKResult | None]:
        """(target as floats, None) when reachable by the rules, else (None, failure)."""
        target = fast_vector(position, 3)
        if target is not None:
            sx, sy, sz = self.shoulder
            if target[2] - sz >= self.min_z and self.min_r <= math.hypot(
                    target[0] - sx, target[1] - sy, target[2] - sz) <= self.max_r:
                return target, None
        checked, failure = self.workspace.check_position(position)
        if failure is not None:
            return None, failure
        return tuple(checked.tolist()), None


def prepared_limits(model: ArmModel, workspace: Workspace, home: Sequence[float] | None
                    ) -> tuple[JointRanges, PositionGate, tuple[float, ...]]:
    """What every closed-form solver prepares once: the ranges, the position gate and the
    home pose (the zero pose clamped into the limits when ``home`` is None)."""
    if home is None:
        home = model.clamp(np.zeros(model.dof))
    return (JointRanges(model.lower, model.upper), PositionGate(workspace),
            tuple(float(v) for v in home))


# ---------------------------------------------------------------------- orientation

def orthonormal_or_none(m: list[float]) -> Matrix | None:
    """``m`` as a tuple when it is a rotation to rounding (|RRᵀ − I| ≤ 1e-12), else None."""
    m0, m1, m2, m3, m4, m5, m6, m7, m8 = m
    deviation = max(abs(m0 * m0 + m1 * m1 + m2 * m2 - 1.0), abs(m3 * m3 + m4 * m4 + m5 * m5 - 1.0),
                    abs(m6 * m6 + m7 * m7 + m8 * m8 - 1.0), abs(m0 * m3 + m1 * m4 + m2 * m5),
                    abs(m0 * m6 + m1 * m7 + m2 * m8), abs(m3 * m6 + m4 * m7 + m5 * m8))
    determinant = m0 * (m4 * m8 - m5 * m7) - m1 * (m3 * m8 - m5 * m6) + m2 * (m3 * m7 - m4 * m6)
    # NaN fails both comparisons, so non-finite input also returns None.
    if deviation <= 1e-12 and determinant > 0.0:
        return tuple(m)
    return None


def parse_orientation(orientation: object) -> tuple[Matrix | None, str]:
    """Row-major rotation matrix of a goal orientation, or (None, reason); never raises.

    Accepts a quaternion (x, y, z, w) as in geometry_msgs (normalised here) or a 3×3
    rotation matrix (orthonormal to ROTATION_TOLERANCE), the same inputs as the dls solver.
    """
    quaternion = fast_vector(orientation, 4)
    if quaternion is not None:
        x, y, z, w = quaternion
        norm = math.sqrt(x * x + y * y + z * z + w * w)
        if 1e-6 < norm < 1e150:
            x, y, z, w = x / norm, y / norm, z / norm, w / norm
            return ((1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w),
                     2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w),
                     2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y)),
                    '')
    if type(orientation) is np.ndarray and orientation.shape == (3, 3) and \
            orientation.dtype.kind == 'f':
        matrix = orthonormal_or_none(orientation.ravel().tolist())
        if matrix is not None:
            return matrix, ''
    try:
        array = np.asarray(orientation, dtype=float)
    except (TypeError, ValueError):
        return None, 'target orientation is not numeric'
    if array.shape == (4,):
        vector, reason = check_vector(array, 4, 'target orientation quaternion')
        if vector is None:
            return None, reason
        norm = float(np.linalg.norm(vector / max(np.abs(vector).max(), 1e-300))) * \
            float(np.abs(vector).max())
        if not 1e-6 < norm < 1e150:
            return None, f'target orientation quaternion has norm {norm:.3g} (must be > 0)'
        return tuple(quaternion_to_matrix(*(vector / norm)).reshape(-1).tolist()), ''
    if array.shape in ((3, 3), (9,)):
        vector, reason = check_vector(array, 9, 'target orientation matrix')
        if vector is None:
            return None, reason
        matrix = vector.reshape(3, 3)
        if np.abs(matrix @ matrix.T - np.eye(3)).max() > ROTATION_TOLERANCE or \
                np.linalg.det(matrix) < 0.0:
            return None, 'target orientation matrix is not a rotation'
        # Project onto SO(3) so the decomposition is exact for the nearest rotation.
        u, _, vt = np.linalg.svd(matrix)
        return tuple((u @ vt).reshape(-1).tolist()), ''
    return None, (f'target orientation has {array.size} values; expected a quaternion '
                  '(x, y, z, w) or a 3x3 rotation matrix')



def tool_down_rotation(seed_rotation: Sequence[float]) -> Matrix:
    """Tool z along −Z of the base, its heading that of the seed's tool x axis (its y axis
    when x is vertical); ``seed_rotation`` row-major 9 floats."""
    if math.hypot(seed_rotation[0], seed_rotation[3]) > 1e-6:
        heading = math.atan2(seed_rotation[3], seed_rotation[0])
    else:
        heading = math.atan2(seed_rotation[4], seed_rotation[1]) + 0.5 * PI
    ch, sh = math.cos(heading), math.sin(heading)
    # Rz(heading)·Rx(π): x = (ch, sh, 0), y = (sh, −ch, 0), z = (0, 0, −1).
    return (ch, sh, 0.0, sh, -ch, 0.0, 0.0, 0.0, -1.0)


# ---------------------------------------------------------------------- branches
def largest_move(q: Sequence[float], reference: Sequence[float]) -> float:
    """max |q − reference| over the joints (rad): how 'near' a solution is to the seed."""
    step = 0.0
    for angle, ref in zip(q, reference, strict=True):
        move = angle - ref if angle > ref else ref - angle
        if move > step:
            step = move
    return step


def nearest(valid: Sequence[tuple], reference: Sequence[float], branch: str
            ) -> tuple[tuple | None, float]:
    """(the entry of ``valid`` ((label, q, ...) each) nearest ``reference`` by the
    largest joint move among those of ``branch`` (every one for '' / 'nearest'), its move);
    (None, inf) when none is of that branch."""
    every = branch in NEAREST
    best, best_step = None, math.inf
    for entry in valid:
        if every or entry[0] == branch:
            step = largest_move(entry[1], reference)
            if step < best_step or best is None:
                best, best_step = entry, step
    return best, best_step


def nearest_copy(choices: Sequence[Sequence[float]], reference: Sequence[float]
                 ) -> tuple[float, ...]:
    """The whole-turn copy nearest the seed joint by joint (the joints turn independently)."""
    return tuple(copies[0] if len(copies) == 1 else min(copies, key=lambda a, r=r: abs(a - r))
                 for copies, r in zip(choices, reference, strict=True))


def check_batch_arguments(targets: np.ndarray, branch: str, branches: Sequence[str]
                          ) -> np.ndarray:
    """Targets as an (N, 3) float array, or ValueError for a bad shape or branch."""
    if branch not in NEAREST and branch not in branches:
        raise ValueError(f'unknown branch "{branch}"; valid: nearest, ' + ', '.join(branches))
    points = np.asarray(targets, dtype=float)
    if points.ndim != 2 or points.shape[1] != 3:
        raise ValueError(f'targets must have shape (N, 3), got {points.shape}')
    return points


def solved(model: ArmModel, start: float, target: Sequence[float], goal: int,
           rotation: Sequence[float] | None, label: str, q: Sequence[float], step: float,
           reason: str, solutions: list[Solution]) -> IKResult:
    """The OK answer of a labelled closed form: the chosen solution checked by FK (tip
    error, and the tool angle error for FULL_POSE (against ``rotation``) or TOOL_DOWN)."""
    reached = model.fk(np.array(q))
    tip = reached[:3, 3]
    error = float(np.linalg.norm(tip - np.asarray(target)))
    if goal == GoalType.FULL_POSE and rotation is not None:
        angle = rotation_angle(rotation, reached[:3, :3].reshape(-1).tolist())
    elif goal == GoalType.TOOL_DOWN:
        angle = math.atan2(math.hypot(reached[0, 2], reached[1, 2]), -reached[2, 2])
    else:
        angle = 0.0
    return IKResult(ErrorCode.OK, reason, np.array(q), label, tip, error, angle, 0, step,
                    solutions, perf_counter() - start)


def fk_check(model: ArmModel, solve: Callable[[np.ndarray, np.ndarray], tuple],
             miss: Callable[[np.ndarray, np.ndarray, int], float], name: str, within: str,
             drift: str, tolerance: float = CHECK_TOLERANCE) -> str:
    """'' when a recognised closed form finds random configurations again, else why.

    Args:
        model: the arm.
        solve: (q (N, n), frames (N, 4, 4)) → (raw (N, B, n), ok (N, B), ...): the closed
            form of the goals the configurations reach.
        miss: (solutions (K, n), the row's tip frame, row) → how far they miss that
            row's goal (m or rad).
        tolerance: the largest miss accepted (m or rad).
        name: the family in words; within: the recognition tolerance in words; drift: the
            geometry drift in words.
    """
    rng = np.random.default_rng(5)
    q = model.random_configurations(CHECK_CONFIGURATIONS, rng)
    frames = model.fk_batch(q)
    raw, ok = solve(q, frames)[:2]
    worst = 0.0
    for index in range(len(q)):
        good = raw[index][ok[index]]
        if not len(good):
            return (f'the {name} closed form finds no solution of a reachable pose '
                    f'(recognised within {within})')
        # The configuration itself must be among the solutions (up to whole turns).
        step = np.abs(np.remainder(good - q[index] + math.pi, TWO_PI) - math.pi).max(axis=1)
        worst = max(worst, miss(good, frames[index], index), float(step.min()))
    if worst > tolerance:
        return (f'the {name} closed form misses FK by {worst:.3g} on random configurations '
                f'({drift} within the recognition tolerance; the check needs '
                f'{tolerance:g})')
    return ''


def goal_orientation(orientation: object) -> tuple[Matrix | None, str]:
    """The rotation of a FULL_POSE goal (row-major 9 floats), or (None, reason)."""
    if orientation is None:
        return None, 'a FULL_POSE goal needs a target orientation'
    return parse_orientation(orientation)


SIX_JOINT_GOALS = (GoalType.FULL_POSE, GoalType.TOOL_DOWN, GoalType.POSITION)


def checked_request(solver: ClosedFormBase, start: float, options: SolveOptions,
                    branches: Sequence[str], goal: int, position: object, seed: object
                    ) -> tuple[tuple[float, float, float] | None, tuple[float, ...] | None,
                               IKResult | None]:
    """The checks of a six-joint solve in order (options and branch, goal type, target,
    seed): (target, reference, None), or (None, None, the failure to answer with)."""
    failure = solver._options_failure(start, options, branches)
    if failure is None and goal not in SIX_JOINT_GOALS:
        failure = solver._failure(start, ErrorCode.INVALID_INPUT, f'unknown goal type {goal!r}')
    if failure is not None:
        return None, None, failure
    return target_and_seed(solver, start, position, seed)


def target_and_seed(solver: ClosedFormBase, start: float, position: object, seed: object
                    ) -> tuple[tuple[float, float, float] | None, tuple[float, ...] | None,
                               IKResult | None]:
    """(target, reference, None) through the solver's position gate and seed check, or
    (None, None, the failure to answer with)."""
    target, failure = solver._target(start, position)
    if failure is not None:
        return None, None, failure
    reference, failure = solver._reference(start, seed, solver.model.dof)
    if failure is not None:
        return None, None, failure
    return target, reference, None


def distinct_solutions(solutions: Sequence[Solution], reference: Sequence[float]
                       ) -> list[Solution]:
    """One solution per label: the whole-turn copy nearest ``reference`` (largest joint
    move), in the order the labels first appear.

    A closed form's ``return_all`` lists every whole-turn copy inside the limits (a UR5's
    ±2π joints give 32 per branch, 256 in all), which path IK needs; a caller asking for
    the alternatives of one pose wants each distinct solution once, and the copy the arm
    reaches with least motion, not whichever copy came last.
    """
    best: dict[str, tuple[float, Solution]] = {}
    for solution in solutions:
        step = largest_move(solution.q, reference)
        kept = best.get(solution.label)
        if kept is None or step < kept[0]:
            best[solution.label] = (step, solution)
    return [solution for _, solution in best.values()]


def answer_nearest(solver: ClosedFormBase, start: float, target: Sequence[float], goal: int,
                   rotation: Sequence[float] | None, family: str, found: list, outside: list,
                   reference: Sequence[float], branch: str, return_all: bool,
                   noun: str = 'target') -> IKResult:
    """The answer of a labelled family: the solution of ``branch`` (every one for '' /
    'nearest') nearest the seed, checked by FK, with every whole-turn copy of every
    solution when ``return_all``; JOINT_LIMITS (the branch nearest its limits) when none is
    inside them.

    Args:
        found: (label, per-joint whole-turn copies inside the limits, flags, ...) each.
        outside: (label, rad past the limits, words) of the branches past them.
    """
    best, step = nearest([(entry[0], nearest_copy(entry[1], reference), entry[2])
                          for entry in found], reference, branch)
    if best is None:
        return solver._none_within_limits(start, branch, outside, noun)
    label, q, flags = best
    reason = f'solved in closed form ({family} family)'
    if flags:
        reason += f'; {flag_words(flags)}'
    solutions = []
    if return_all:
        labels, rows = [], []
        for entry in found:
            copies = list(itertools.product(*entry[1]))
            labels += [entry[0]] * len(copies)
            rows += copies
        # One array, one row per solution: a UR5 lists 256 copies, and an array each would
        # cost more than the closed form.
        table = np.array(rows)
        solutions = [Solution(name, row) for name, row in zip(labels, table, strict=True)]
    return solved(solver.model, start, target, goal, rotation, label, q, step, reason,
                  solutions)
