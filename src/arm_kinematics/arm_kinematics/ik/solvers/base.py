"""What every solver shares: options, the workspace pre-check and the solver interface."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
import math
from time import perf_counter

import numpy as np

from arm_kinematics.common.names import OBJECTIVE_NAMES
from arm_kinematics.ik.reach_bounds import planar_link_lengths, reach_sphere
from arm_kinematics.ik.result import check_vector, ErrorCode, fast_vector, GoalType, IKResult
from arm_kinematics.model.arm_model import ArmModel

# Hard caps so that a request cannot make a solver run unbounded (RELIABILITY cases 7 and 8).
MAX_ITERATIONS_CAP = 100_000
MAX_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class SolveOptions:
    """Per-request solver settings. Units: metres, radians, seconds.

    Attributes:
        max_iterations: iteration limit of numeric solvers (1..MAX_ITERATIONS_CAP).
        tolerance: position tolerance, metres.
        orientation_tolerance: orientation tolerance, radians.
        damping: DLS damping λ (> 0).
        max_step: largest change of any joint per iteration, radians (0 = no cap).
        timeout: wall-clock budget, seconds (> 0, ≤ MAX_TIMEOUT).
        respect_limits: clamp (or wrap) to the URDF joint limits.
        branch: '' or 'nearest' for the solution nearest the seed, or a branch label.
        return_all: also return every alternative solution (closed-form solvers).
        restarts: random restarts allowed when a numeric solver stalls.
        random_seed: seed of the restart generator, so the same request gives the same answer.
        objective: which solution when there are several (``ik.objectives``): first,
            closest, manipulability or centred.
    """

    max_iterations: int = 200
    tolerance: float = 1e-4
    orientation_tolerance: float = 1e-3
    damping: float = 0.05
    max_step: float = 0.0
    timeout: float = 1.0
    respect_limits: bool = True
    branch: str = ''
    return_all: bool = False
    restarts: int = 200
    random_seed: int = 0
    objective: str = 'first'

    def validated(self) -> tuple[SolveOptions | None, str]:
        """Return (options, '') when every value is usable, else (None, reason)."""
        if isinstance(self.max_iterations, bool) or not isinstance(self.max_iterations, int):
            return None, f'max_iterations must be an integer, got {self.max_iterations!r}'
        if not 1 <= self.max_iterations <= MAX_ITERATIONS_CAP:
            return None, (f'max_iterations {self.max_iterations} is outside 1..'
                          f'{MAX_ITERATIONS_CAP}')
        for name in ('tolerance', 'orientation_tolerance', 'damping', 'timeout'):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0.0):
                return None, f'{name} must be a finite number > 0, got {value!r}'
        if not (math.isfinite(self.max_step) and self.max_step >= 0.0):
            return None, f'max_step must be finite and >= 0, got {self.max_step!r}'
        if self.timeout > MAX_TIMEOUT:
            return None, f'timeout {self.timeout} s exceeds the maximum of {MAX_TIMEOUT} s'
        if self.restarts < 0:
            return None, f'restarts must be >= 0, got {self.restarts}'
        if self.objective not in OBJECTIVE_NAMES:
            return None, (f'unknown objective {self.objective!r}; valid: '
                          f'{", ".join(OBJECTIVE_NAMES)}')
        return self, ''

    def with_changes(self, **changes: object) -> SolveOptions:
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class Workspace:
    """Reach rules of an arm, measured from its shoulder.

    Attributes:
        shoulder: shoulder position in the base frame (metres).
        max_reach: outer radius of the reachable shell from the shoulder.
        min_reach: radius of the unreachable hole around the shoulder (0 when none).
        min_height_above_shoulder: lowest allowed target height relative to the shoulder,
            or None when the arm has no such rule.
    """

    shoulder: np.ndarray
    max_reach: float
    min_reach: float = 0.0
    min_height_above_shoulder: float | None = None

    def check_position(self, position: object) -> tuple[np.ndarray | None, IKResult | None]:
        """Validate a target position; return (vector, None) or (None, failure result)."""
        target, reason = check_vector(position, 3, 'target position')
        if target is None:
            return None, IKResult(ErrorCode.INVALID_INPUT, reason)
        relative = target - self.shoulder
        # hypot of pre-scaled values never overflows, even for 1e308 coordinates.
        distance = math.hypot(*relative)
        if self.min_height_above_shoulder is not None and \
                relative[2] < self.min_height_above_shoulder - 1e-12:
            return None, IKResult(
                ErrorCode.BELOW_MIN_HEIGHT,
                f'target is {relative[2]:.3f} m above the shoulder; this arm needs at least '
                f'{self.min_height_above_shoulder:.3f} m')
        if distance > self.max_reach + 1e-12:
            return None, IKResult(
                ErrorCode.OUT_OF_REACH,
                f'target {distance:.3g} m from the shoulder, maximum reach '
                f'{self.max_reach:.3f} m')
        if distance < self.min_reach - 1e-12:
            return None, IKResult(
                ErrorCode.INSIDE_INNER_HOLE,
                f'target {distance:.3f} m from the shoulder is inside the inner hole '
                f'(minimum reach {self.min_reach:.3f} m)')
        return target, None

    def admits(self, points: np.ndarray) -> np.ndarray:
        """(N,) bool: which of N finite positions (N, 3) ``check_position`` lets through —
        the same rules and tolerances, for many points at once (a sampled workspace)."""
        relative = np.asarray(points, dtype=float) - self.shoulder
        distance = np.linalg.norm(relative, axis=1)
        ok = (distance <= self.max_reach + 1e-12) & (distance >= self.min_reach - 1e-12)
        if self.min_height_above_shoulder is not None:
            ok &= relative[:, 2] >= self.min_height_above_shoulder - 1e-12
        return ok


class Solver:
    """Interface of every IK solver: built once per model, then ``solve`` per request."""

    name = ''
    # True for closed forms whose ``return_all`` lists every labelled solution (branch),
    # among which the floor rules may switch.
    labelled = False

    def __init__(self, model: ArmModel, workspace: Workspace) -> None:
        self.model = model
        self.workspace = workspace

    # Solvers written for turning joints refuse chains with a slide (prismatic joint).
    supports_prismatic = False

    @classmethod
    def applicability(cls, model: ArmModel) -> str:
        """'' when the solver can handle ``model``, else the reason it cannot."""
        return ''

    @classmethod
    def reason_for(cls, model: ArmModel) -> str:
        """``applicability`` with the rule every solver shares: '' when it serves ``model``."""
        slides = [j.name for j in model.joints if j.prismatic]
        if slides and not cls.supports_prismatic:
            return f'prismatic joint(s) {", ".join(slides)}: this solver turns joints only'
        return cls.applicability(model)

    def solve(self, position: object, orientation: object = None,
              goal: GoalType = GoalType.POSITION, seed: object = None,
              options: SolveOptions = SolveOptions()) -> IKResult:
        """Solve one request; never raises for bad input (returns INVALID_INPUT)."""
        raise NotImplementedError




def workspace_of_arm(model: ArmModel, config: dict) -> Workspace:
    """Reach rules of ``model`` with the minimum target height of the arm's YAML (``ik:``)."""
    min_height = (config.get('ik') or {}).get('min_height_above_shoulder')
    return workspace_from_model(model, None if min_height is None else float(min_height))


def workspace_from_model(model: ArmModel,
                         min_height_above_shoulder: float | None = None) -> Workspace:
    """Reach rules derived from the URDF, true for any chain (ik.reach_bounds): the smallest
    proven sphere, and the hole only for a two-link arm whose shoulder stays put."""
    lengths = planar_link_lengths(model)
    if lengths is not None:
        l1, l2 = lengths
        origins, _, _ = model.joint_origins_and_axes(np.zeros(3))
        return Workspace(origins[1].copy(), l1 + l2, abs(l1 - l2), min_height_above_shoulder)
    centre, reach = reach_sphere(model)
    return Workspace(centre, reach, 0.0, min_height_above_shoulder)


# A branch request that means "the solution nearest the seed".
NEAREST = ('', 'nearest')


def unknown_branch(branch: str, branches: Sequence[str], solver: str) -> str:
    """'' when ``branch`` means no branch ('' or 'nearest') or is one of ``branches``; else
    why the request is refused, in the same words for every solver (a numeric solver has
    no branches: a label meant for a closed form must not be dropped without a word)."""
    if branch in NEAREST or branch in branches:
        return ''
    if not branches:
        return f'unknown branch "{branch}"; valid: nearest (the {solver} solver has no branches)'
    return f'unknown branch "{branch}"; valid: nearest, ' + ', '.join(branches)


class ClosedFormBase(Solver):
    """What every closed-form solver checks before it solves, in one wording.

    Subclasses set ``self.home`` (the reference without a seed) and call these in the order
    their goals need; each returns the failure to answer with, or None to go on.
    """

    _checked_options: SolveOptions | None = None

    def _failure(self, start: float, code: ErrorCode, reason: str) -> IKResult:
        return IKResult(code, reason, solve_time=perf_counter() - start)

    def _options_failure(self, start: float, options: SolveOptions,
                         branches: tuple[str, ...]) -> IKResult | None:
        """INVALID_INPUT for options that do not validate or a branch not in ``branches``."""
        if options is not self._checked_options:
            checked, reason = options.validated()
            if checked is None:
                return self._failure(start, ErrorCode.INVALID_INPUT, reason)
            self._checked_options = options
        reason = unknown_branch(options.branch, branches, self.name)
        return self._failure(start, ErrorCode.INVALID_INPUT, reason) if reason else None

    def _reference(self, start: float, seed: object, size: int
                   ) -> tuple[tuple[float, ...] | None, IKResult | None]:
        """(the seed as plain floats, or the home pose without one; None) or (None, failure)."""
        if seed is None:
            return self.home, None
        reference = fast_vector(seed, size)
        if reference is None:
            vector, reason = check_vector(seed, size, 'seed')
            if vector is None:
                return None, self._failure(start, ErrorCode.INVALID_INPUT, reason)
            reference = tuple(vector.tolist())
        return reference, None

    def _target(self, start: float, position: object
                ) -> tuple[tuple[float, float, float] | None, IKResult | None]:
        """The position through the workspace gate (``self.gate``): (target, None) or
        (None, the failure, timed)."""
        target, failure = self.gate.check(position)
        if failure is not None:
            failure.solve_time = perf_counter() - start
        return target, failure

    def _none_within_limits(self, start: float, branch: str, outside: list,
                            noun: str = 'target') -> IKResult:
        """The answer when no solution of ``branch`` lies within the joint limits: the
        nearest one past them (``outside``: (label, how far, words) per branch), or
        OUT_OF_REACH when the branch has none at all."""
        nearest = branch in NEAREST
        candidates = outside if nearest else [o for o in outside if o[0] == branch]
        if not candidates:
            return self._failure(start, ErrorCode.OUT_OF_REACH,
                                 f'branch {branch} does not reach this {noun}')
        label, _, words = min(candidates, key=lambda entry: entry[1])
        prefix = 'every solution breaks a joint limit; the nearest, ' if nearest else ''
        return self._failure(start, ErrorCode.JOINT_LIMITS,
                             f'{prefix}{label}: {words} ({len(candidates)} '
                             f'branch{"es" * (len(candidates) != 1)} out of limits)')
