"""One IK request from end to end, without ROS: validate, pick the solver, solve, measure.

The ik_server node converts messages to an ``IKRequest`` and the ``IKAnswer`` back; every
rule about what a request may contain lives here, so it is tested without a ROS graph.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
import math
import threading
import time
from typing import Any, NamedTuple

import numpy as np

from arm_kinematics.common.joint_state import joint_order
from arm_kinematics.common.transforms import quaternion_to_matrix
from arm_kinematics.ik import metrics, objectives
from arm_kinematics.ik.closed_form.spherical_wrist import BRANCHES
from arm_kinematics.ik.floor_rules import solve_above_floor
from arm_kinematics.ik.objectives import FIRST, unknown_objective_reason
from arm_kinematics.ik.result import check_vector, ErrorCode, fast_vector, GoalType, IKResult
from arm_kinematics.ik.solvers import solver_class, SOLVERS, unknown_solver_reason
from arm_kinematics.ik.solvers.base import (
    MAX_ITERATIONS_CAP,
    MAX_TIMEOUT,
    NEAREST,
    SolveOptions,
    Solver,
    Workspace,
)
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.scene.geometry import SafetyGeometry

LIMITS_DEFAULT, LIMITS_ON, LIMITS_OFF = 0, 1, 2
AVOID_DEFAULT, AVOID_ON, AVOID_OFF = 0, 1, 2
# Extra seeds a numeric solver gets when its answer collides (avoid_collisions).
COLLISION_RETRIES = 16
_GOAL_TYPES = {int(goal): goal for goal in GoalType}
# Extra seeds a numeric solver gets when its answer goes through the floor.
FLOOR_RETRIES = 8
# Equations each goal type sets (position 3; tool down adds the 2 of the tool axis; a full
# pose all 6): an arm with no more joints than this has finitely many poses for a goal.
GOAL_CONSTRAINTS = {GoalType.POSITION: 3, GoalType.TOOL_DOWN: 5, GoalType.FULL_POSE: 6}
SEED_REMEDY = 'a seed near a pose above the floor may still find one'


@dataclass
class IKRequest:
    """Plain-Python form of arm_interfaces/SolveIK.Request. Zero means 'node default'."""

    position: Sequence[float]
    orientation: Sequence[float] = (0.0, 0.0, 0.0, 1.0)   # quaternion x, y, z, w
    goal: int = GoalType.POSITION
    frame_id: str = ''
    solver: str = ''
    seed_names: Sequence[str] = ()
    seed_positions: Sequence[float] = ()
    branch: str = ''
    return_all: bool = False
    timeout_sec: int = 0
    timeout_nanosec: int = 0
    max_iterations: int = 0
    damping: float = 0.0
    tolerance: float = 0.0
    joint_limits: int = LIMITS_DEFAULT
    avoid_collisions: int = AVOID_DEFAULT
    objective: str = ''     # '' = the node default (ik.objective), else ik.objectives


@dataclass
class IKAnswer:
    """A result plus what the service reports beside it.

    ``branch_switched`` is set when the floor rules replaced the solver's choice, and
    ``shortfall`` (m) is how far a partial answer's tip stays from the target.
    """

    result: IKResult
    solver: str = ''
    branch_switched: bool = False
    shortfall: float = 0.0
    manipulability: float = 0.0
    condition_number: float = math.inf
    reach_fraction: float = 0.0
    target: np.ndarray = field(default_factory=lambda: np.full(3, math.nan))
    # |q − seed| (rad) of the answer, and the value of the request's objective there.
    displacement: float = 0.0
    objective_value: float = 0.0


class PreparedRequest(NamedTuple):
    """A validated request: everything a solver needs, in core types (m, rad, s).

    Immutable; a NamedTuple because one is built per request, at a fraction of a frozen
    dataclass's cost.
    """

    solver: str
    position: np.ndarray
    orientation: np.ndarray | None
    goal: GoalType
    seed: np.ndarray
    options: SolveOptions
    avoid: bool = False     # reject solutions in collision (self or scene) and re-seed


def _fail(code: ErrorCode, reason: str, solver: str = '') -> IKAnswer:
    return IKAnswer(IKResult(code, reason), solver)


def resolve_seed(model: ArmModel, names: Sequence[str], positions: Sequence[float],
                 fallback: np.ndarray) -> tuple[np.ndarray | None, IKResult | None]:
    """Seed in chain order from a JointState-like (names, positions); empty → ``fallback``.

    Names may come in any order (they are reordered) but must be exactly the arm's joints;
    positions without names are refused (UNKNOWN_JOINT_NAMES).
    """
    names, positions = list(names), list(positions)
    if not names and not positions:
        return fallback, None
    if not names:
        # Positions without names cannot be matched to joints (a JointState's order is
        # its names'), so they are refused rather than guessed to be in chain order.
        return None, IKResult(ErrorCode.UNKNOWN_JOINT_NAMES,
                              f'seed has {len(positions)} positions but no joint names; name '
                              f'them (the arm\'s joints: {", ".join(model.joint_names)})')
    order, reason = joint_order(model.joint_names, names, 'seed')
    if order is None:
        return None, IKResult(ErrorCode.UNKNOWN_JOINT_NAMES, reason)
    if len(positions) != len(names):
        return None, IKResult(ErrorCode.INVALID_INPUT,
                              f'seed has {len(names)} names but {len(positions)} positions')
    positions = [positions[i] for i in order]
    seed, reason = check_vector(positions, model.dof, 'seed positions')
    if seed is None:
        return None, IKResult(ErrorCode.INVALID_INPUT, reason)
    return seed, None


def _finite_vector(value: object, size: int, field_name: str
                   ) -> tuple[tuple[float, ...] | None, str]:
    """``check_vector`` with its passing case in plain floats (every request takes it)."""
    floats = fast_vector(value, size)
    if floats is not None:
        return floats, ''
    vector, reason = check_vector(value, size, field_name)
    return (None, reason) if vector is None else (tuple(vector.tolist()), '')


def resolve_options(request: IKRequest, defaults: SolveOptions) -> tuple[SolveOptions | None, str]:
    """The request's overrides applied to the node defaults; (None, reason) when invalid."""
    branch = request.branch.strip()
    objective = getattr(request, 'objective', '') or ''
    if (branch == defaults.branch and bool(request.return_all) == defaults.return_all
            and not (request.timeout_sec or request.timeout_nanosec or request.max_iterations
                     or request.damping or request.tolerance or request.joint_limits
                     or objective)):
        # Nothing overridden (most requests): the defaults as they are.
        return defaults.validated()
    changes: dict[str, object] = {'branch': branch, 'return_all': bool(request.return_all)}
    if objective:
        reason = unknown_objective_reason(objective)
        if reason:
            return None, reason
        changes['objective'] = objective
    if request.timeout_sec < 0:
        return None, f'timeout is negative ({request.timeout_sec} s)'
    if not 0 <= request.timeout_nanosec < 1_000_000_000:
        return None, f'timeout.nanosec {request.timeout_nanosec} is outside 0..999999999'
    timeout = request.timeout_sec + request.timeout_nanosec * 1e-9
    if timeout > 0.0:
        if timeout > MAX_TIMEOUT:
            return None, f'timeout {timeout:g} s exceeds the maximum of {MAX_TIMEOUT:g} s'
        changes['timeout'] = timeout
    if request.max_iterations < 0 or request.max_iterations > MAX_ITERATIONS_CAP:
        return None, (f'max_iterations {request.max_iterations} is outside 0..'
                      f'{MAX_ITERATIONS_CAP} (0: node default)')
    if request.max_iterations:
        changes['max_iterations'] = int(request.max_iterations)
    for name in ('damping', 'tolerance'):
        value = float(getattr(request, name))
        if not math.isfinite(value) or value < 0.0:
            return None, f'{name} must be finite and >= 0 (0: node default), got {value}'
        if value > 0.0:
            changes[name] = value
    if request.joint_limits not in (LIMITS_DEFAULT, LIMITS_ON, LIMITS_OFF):
        return None, f'joint_limits {request.joint_limits} is not one of 0, 1, 2'
    if request.joint_limits != LIMITS_DEFAULT:
        changes['respect_limits'] = request.joint_limits == LIMITS_ON
    return defaults.with_changes(**changes).validated()


def _not_applicable_words(name: str, reason: str) -> str:
    return f'default solver "{name}" does not apply to this arm: {reason}'


def default_solver_refusal(model: ArmModel, name: str) -> str:
    """'' when solver ``name`` applies to ``model``, else the words IKDispatcher raises,
    from the solver's class alone (no solver built, nothing compiled)."""
    if name not in SOLVERS:
        return _not_applicable_words(name, 'unknown name')
    reason = solver_class(name).reason_for(model)
    return _not_applicable_words(name, reason) if reason else ''


class IKDispatcher:
    """Holds one solver instance per applicable name and answers IKRequests."""

    def __init__(self, model: ArmModel, workspace: Workspace, default_solver: str,
                 safety: SafetyGeometry | None = None,
                 collision: Callable[[], Any] | None = None,
                 avoid_collisions: bool = False) -> None:
        """
        Args:
            collision: makes a scene.checker.CollisionChecker of the arm; called at
                most once per thread, on the first request that avoids collisions (a checker
                serves one thread; arms that never ask never build one).
            avoid_collisions: what AVOID_DEFAULT means (the config's ik.avoid_collisions).
        """
        self.model = model
        self._collision_factory = collision
        self._collision_local = threading.local()
        self.avoid_collisions = bool(avoid_collisions)
        # The Scene every checker uses (a node following the scene topic swaps it whole;
        # None: each checker's own empty scene).
        self.scene = None
        self.workspace = workspace
        # With the floor enabled, every answer goes through the floor rules.
        self.safety = safety if safety is not None and safety.floor_enabled else None
        self.solvers: dict[str, Solver] = {}
        self.not_applicable: dict[str, str] = {}
        for name in SOLVERS:
            cls = solver_class(name)
            reason = cls.reason_for(model)
            if reason:
                self.not_applicable[name] = reason
            else:
                self.solvers[name] = cls(model, workspace)
        if default_solver not in self.solvers:
            raise ValueError(_not_applicable_words(
                default_solver, self.not_applicable.get(default_solver, 'unknown name')))
        self.default_solver = default_solver

    @property
    def checks_collisions(self) -> bool:
        """Whether a request may ask for a collision-free answer (a checker was given)."""
        return self._collision_factory is not None

    def collision_checker(self) -> Any:
        """This thread's collision checker, with the dispatcher's scene in use now.

        Raises:
            ValueError: the dispatcher has no collision geometry (no factory).
        """
        if self._collision_factory is None:
            raise ValueError('this dispatcher has no collision checker')
        checker = getattr(self._collision_local, 'checker', None)
        if checker is None:
            checker = self._collision_local.checker = self._collision_factory()
        scene = self.scene
        if scene is not None and checker.scene is not scene:
            checker.scene = scene
        return checker

    def solver_reason(self, name: str) -> str:
        """'' when ``name`` can serve this arm, else why not (unknown or not applicable)."""
        if name in self.solvers:
            return ''
        if name in self.not_applicable:
            return self.not_applicable[name]
        return unknown_solver_reason(name)

    def prepare(self, request: IKRequest, defaults: SolveOptions, fallback_seed: np.ndarray,
                solver_name: str | None = None) -> PreparedRequest | IKAnswer:
        """Validate a request: a PreparedRequest ready to run, or the failure answer.

        Cheap (no solving), so a server can refuse malformed requests before it decides
        whether it has capacity for the solve itself.
        """
        name = solver_name if solver_name is not None else (request.solver or
                                                            self.default_solver)
        if name not in SOLVERS:
            return _fail(ErrorCode.UNKNOWN_SOLVER, self.solver_reason(name), name)
        if name not in self.solvers:
            return _fail(ErrorCode.SOLVER_NOT_APPLICABLE,
                         f'solver "{name}" does not apply to {self.model.name}: '
                         f'{self.not_applicable[name]}', name)
        frame = request.frame_id.lstrip('/')
        if frame not in ('', self.model.base_link):
            return _fail(ErrorCode.UNKNOWN_FRAME,
                         f'target frame "{request.frame_id}" is not the base frame '
                         f'"{self.model.base_link}" (no TF lookup is done)', name)
        try:
            goal = _GOAL_TYPES.get(request.goal)
        except TypeError:       # unhashable: certainly not a goal type
            goal = None
        if goal is None:
            return _fail(ErrorCode.INVALID_INPUT,
                         f'goal_type {request.goal} is not one of 0 (position), 1 (tool down), '
                         '2 (full pose)', name)
        position, reason = _finite_vector(request.position, 3, 'target.pose.position')
        if position is None:
            return _fail(ErrorCode.INVALID_INPUT, reason, name)
        orientation = None
        # Checked for every goal type, though read only for FULL_POSE: a NaN or inf anywhere
        # in the target means a broken caller, and the answer should say so.
        quaternion, reason = _finite_vector(request.orientation, 4, 'target.pose.orientation')
        if quaternion is None:
            return _fail(ErrorCode.INVALID_INPUT, reason, name)
        if goal == GoalType.FULL_POSE:
            norm = math.sqrt(sum(v * v for v in quaternion))
            if not 1e-6 < norm < 1e150:
                return _fail(ErrorCode.INVALID_INPUT,
                             f'target.pose.orientation has norm {norm:g}; give a unit quaternion',
                             name)
            orientation = quaternion_to_matrix(*quaternion)
        seed, failure = resolve_seed(self.model, request.seed_names, request.seed_positions,
                                     fallback_seed)
        if failure is not None:
            return IKAnswer(failure, name)
        options, reason = resolve_options(request, defaults)
        if options is None:
            return _fail(ErrorCode.INVALID_INPUT, reason, name)
        choice = request.avoid_collisions
        if choice not in (AVOID_DEFAULT, AVOID_ON, AVOID_OFF):
            return _fail(ErrorCode.INVALID_INPUT, f'avoid_collisions {choice} is not one of 0 '
                         '(the arm default), 1 (on), 2 (off)', name)
        avoid = self.avoid_collisions if choice == AVOID_DEFAULT else choice == AVOID_ON
        if avoid and self._collision_factory is None:
            return _fail(ErrorCode.INVALID_INPUT, 'avoid_collisions: this server has no '
                         'collision checker for the arm', name)
        return PreparedRequest(name, np.array(position), orientation, goal, seed, options,
                               avoid)

    def run(self, prepared: PreparedRequest) -> IKAnswer:
        """Solve a prepared request; never raises (a solver exception becomes INTERNAL_ERROR)."""
        name = prepared.solver
        started = time.perf_counter()
        try:
            answer = self._solve(name, prepared.position, prepared.orientation, prepared.goal,
                                 prepared.seed, prepared.options)
            if prepared.avoid:
                answer = self._avoid_collisions(answer, prepared, started)
        except Exception as error:  # any solver bug must become an answer, never a dead node
            return _fail(ErrorCode.INTERNAL_ERROR,
                         f'solver "{name}" raised {type(error).__name__}: {error}', name)
        answer.result.solve_time = time.perf_counter() - started
        return self.measure(answer, prepared.seed, prepared.options.objective)

    def solve(self, request: IKRequest, defaults: SolveOptions,
              fallback_seed: np.ndarray, solver_name: str | None = None) -> IKAnswer:
        """Validate and answer one request; never raises."""
        prepared = self.prepare(request, defaults, fallback_seed, solver_name)
        return prepared if isinstance(prepared, IKAnswer) else self.run(prepared)

    def _solve(self, name: str, position: np.ndarray, orientation: np.ndarray | None,
               goal: GoalType, seed: np.ndarray, options: SolveOptions) -> IKAnswer:
        solver = self.solvers[name]
        if solver.labelled and options.objective != FIRST and options.branch in NEAREST:
            options = self._objective_branch(solver, position, orientation, goal, seed,
                                             options)
        if self.safety is None:
            return IKAnswer(solver.solve(position, orientation, goal, seed, options), name,
                            target=position)
        if solver.labelled:
            result, choice = solve_above_floor(solver, self.safety, position, seed, options,
                                               orientation=orientation, goal=goal)
            if choice is None or not choice.switched:
                return IKAnswer(result, name, target=position)
            shortfall = choice.shortfall if choice.code == ErrorCode.PARTIAL_SOLUTION else 0.0
            return IKAnswer(result, name, branch_switched=True, shortfall=shortfall,
                            target=position)
        result = solver.solve(position, orientation, goal, seed, options)
        if not result.success or result.q is None or not self.safety.floor_enabled:
            return IKAnswer(result, name, target=position)
        # Numeric solvers give one answer per seed: one through the floor is retried from
        # other seeds (drawn from clear poses, seeded so the answer stays deterministic).
        deadline = time.perf_counter() + options.timeout
        rng = None
        seeds = 1
        clearance, link = self._floor_clearance(result.q)
        for _ in range(FLOOR_RETRIES):
            if clearance >= 0.0 or time.perf_counter() >= deadline:
                break
            if rng is None:
                rng = np.random.default_rng(options.random_seed)
            seeds += 1
            retry = solver.solve(position, orientation, goal, self._clear_seed(rng),
                                 options.with_changes(
                                     timeout=max(1e-3, deadline - time.perf_counter())))
            if retry.success:
                result = retry
                clearance, link = self._floor_clearance(result.q)
        if clearance < 0.0:
            found = (f'the {name} solutions found from {seeds} seed{"s" * (seeds != 1)} put '
                     f'{link} {-clearance:.3f} m below the floor')
            result = replace(result, code=ErrorCode.FLOOR_COLLISION,
                             reason=found + self._floor_remedy(position, orientation, goal,
                                                               seed, options))
        return IKAnswer(result, name, target=position)

    def _objective_branch(self, solver: Solver, position: np.ndarray,
                          orientation: np.ndarray | None, goal: GoalType, seed: np.ndarray,
                          options: SolveOptions) -> SolveOptions:
        """The options naming the branch best for the objective among every solution of
        a closed form (unchanged when it has none; the floor rules still apply after)."""
        solve_all = getattr(solver, 'solve_all', None)
        rotation = None
        if solve_all is not None and goal != GoalType.FULL_POSE:
            # The rotation the closed form solves for: the one the goal takes from the seed
            # (listing every whole-turn copy instead cost 1–5 ms on a UR5).
            rotation = solver.goal_rotation(goal, None, seed)[0]
        elif solve_all is not None and orientation is not None:
            rotation = np.asarray(orientation, dtype=float)
        if solve_all is not None and rotation is not None:
            # A UR/OPW family: its 8 branches, each as the copy a solve naming it answers.
            q, valid, _ = solve_all(position, rotation, seed)
            rows = np.flatnonzero(valid)
            if not len(rows):
                return options
            index = objectives.best(options.objective, self.model, list(q[rows]), seed)
            return options.with_changes(branch=BRANCHES[int(rows[index])])
        every = solver.solve(position, orientation, goal, seed,
                             options.with_changes(return_all=True))
        if not every.success or not every.solutions:
            return options
        # Per branch the whole-turn copy nearest the seed: what a solve naming it answers.
        nearest: dict[str, np.ndarray] = {}
        for solution in every.solutions:
            known = nearest.get(solution.label)
            if known is None or np.abs(solution.q - seed).max() < np.abs(known - seed).max():
                nearest[solution.label] = solution.q
        labels = list(nearest)
        index = objectives.best(options.objective, self.model, list(nearest.values()), seed)
        chosen = options.with_changes(branch=labels[index])
        # Kept only when the solver's answer for that branch beats its first answer (a
        # family may answer a named branch with another whole-turn copy).
        first = solver.solve(position, orientation, goal, seed, options)
        named = solver.solve(position, orientation, goal, seed, chosen)
        if not (first.success and named.success and first.q is not None
                and named.q is not None):
            return options
        picked = objectives.best(options.objective, self.model, [first.q, named.q], seed)
        return chosen if picked == 1 else options

    def _avoid_collisions(self, answer: IKAnswer, prepared: PreparedRequest,
                          started: float) -> IKAnswer:
        """The answer when its pose is collision-free; else another solution that is: the
        closed forms' other branches (nearest the seed first), a numeric solver's answers
        from new seeds within the request's timeout; else COLLISION naming the closest pair
        of the first answer (floor rules apply to every retry, as to the first)."""
        result = answer.result
        if result.q is None or result.code not in (ErrorCode.OK, ErrorCode.PARTIAL_SOLUTION):
            return answer
        checker = self.collision_checker()
        report = checker.check(result.q)
        if not report.collides:
            return answer
        name, solver, options = prepared.solver, self.solvers[prepared.solver], \
            prepared.options
        args = (prepared.position, prepared.orientation, prepared.goal)
        tried = 1
        if solver.labelled:
            every = solver.solve(*args, prepared.seed, options.with_changes(return_all=True))
            others = sorted((s for s in every.solutions if s.label != result.branch),
                            key=lambda s: float(np.max(np.abs(s.q - prepared.seed))))
            for solution in others:
                tried += 1
                if not checker.is_free(solution.q):
                    continue
                retry = self._solve(name, *args, prepared.seed,
                                    options.with_changes(branch=solution.label))
                if retry.result.code == result.code and retry.result.q is not None and \
                        checker.is_free(retry.result.q):
                    return self._cleared(retry, result, report)
            what = f'all {tried} {name} solutions'
        else:
            deadline = started + options.timeout
            rng = np.random.default_rng(options.random_seed)
            for seed in self.model.random_configurations(COLLISION_RETRIES, rng):
                if time.perf_counter() >= deadline:
                    break
                tried += 1
                retry = self._solve(name, *args, seed, options.with_changes(
                    timeout=max(1e-3, deadline - time.perf_counter())))
                if retry.result.success and checker.is_free(retry.result.q):
                    return self._cleared(retry, result, report)
            what = f'the {name} solutions from {tried} seed{"s" * (tried != 1)}'
        worst = min(report.contacts, key=lambda c: c.distance)
        reason = (f'{what} collide (avoid_collisions); the first: {report.message}; closest '
                  f'pair {worst.a}–{worst.b} at {worst.distance * 1000:.1f} mm')
        return replace(answer, result=replace(result, code=ErrorCode.COLLISION, reason=reason))

    @staticmethod
    def _cleared(retry: IKAnswer, first: IKResult, report: Any) -> IKAnswer:
        worst = min(report.contacts, key=lambda c: c.distance)
        note = (f'the first solution collided ({worst.a}–{worst.b} at '
                f'{worst.distance * 1000:.1f} mm): this one is clear')
        reason = f'{retry.result.reason}; {note}' if retry.result.reason else note
        return replace(retry, result=replace(retry.result, reason=reason))

    def _floor_remedy(self, position: np.ndarray, orientation: np.ndarray | None,
                      goal: GoalType, seed: np.ndarray, options: SolveOptions) -> str:
        """What can still help when a numeric solver's answers go through the floor.

        Only remedies that can work are named (advice to try "a closed-form solver" that
        then answered PARTIAL_SOLUTION sent users round in circles): a target too low for
        the tool's own capsule can only be raised; a closed-form solver is named only when
        one of its solutions is verified clear here; a new seed only while the solutions
        checked do not already cover every pose that reaches the target.
        """
        tip = self.model.dof         # index of the tip among the joint points
        tip_links = [(c.radius, c.name) for c in self.safety.capsules if c.end == tip]
        if tip_links:
            radius, tip_link = max(tip_links)
            height = float(position[2]) - self.safety.floor_z
            if height < radius:
                where = (f'{-height:.3f} m below the floor' if height < 0.0 else
                         f'only {height:.3f} m above the floor')
                return (f', and so does every pose that reaches this target: it is {where} '
                        f'and {tip_link}, which ends at the tip, has a radius of {radius:.3f} m; '
                        f'raise the target to z >= {self.safety.floor_z + radius:.3f} m')
        for other, solver in self.solvers.items():
            if not solver.labelled:
                continue
            answer = solver.solve(position, orientation, goal, seed,
                                  options.with_changes(return_all=True))
            if not answer.success or not answer.solutions:
                continue
            labels = [s.label for s in answer.solutions]
            clear = self.safety.floor_clearance(
                np.array([s.q for s in answer.solutions])) >= 0.0
            if clear.any():
                chosen = answer.branch in labels and clear[labels.index(answer.branch)]
                label = answer.branch if chosen else labels[int(np.argmax(clear))]
                return (f'; the {other} solver reaches this target above the floor (branch '
                        f'{label}), and its joints would do as a seed')
            below = (f'; all {len(labels)} {other} solutions go below the floor too'
                     if len(labels) > 1 else
                     f'; the only {other} solution goes below the floor too')
            if self.model.dof <= GOAL_CONSTRAINTS[goal]:
                # A non-redundant arm has no poses for this goal beyond these: a new seed
                # would find one of them again.
                return (f'{below}: move the target ({other} answers the closest pose above '
                        'the floor instead, as PARTIAL_SOLUTION)')
            return f'{below}; {SEED_REMEDY}'
        return f'; {SEED_REMEDY}'

    def _floor_clearance(self, q: np.ndarray) -> tuple[float, str]:
        """Lowest capsule clearance above the floor (m) of pose ``q`` and its link."""
        checks = self.safety.check(q)
        index = int(np.argmin(checks.floor_clearance[0]))
        return float(checks.floor_clearance[0, index]), self.safety.link_names[index]

    def _clear_seed(self, rng: np.random.Generator) -> np.ndarray:
        """A random pose inside the limits that is above the floor (or the last one drawn)."""
        candidates = self.model.random_configurations(16, rng)
        clear = np.flatnonzero(self.safety.floor_clearance(candidates) >= 0.0)
        return candidates[clear[0]] if clear.size else candidates[0]

    def measure(self, answer: IKAnswer, seed: np.ndarray | None = None,
                objective: str = FIRST) -> IKAnswer:
        """Fill manipulability, condition number and reach fraction for the answer, and,
        given the seed, its displacement from it and the objective's value."""
        q = answer.result.q
        if seed is not None and q is not None and np.shape(q) == np.shape(seed):
            answer.displacement = objectives.displacement(self.model, q, seed)
            answer.objective_value = objectives.value(objective, self.model, q, seed)
        answer.reach_fraction = metrics.reach_fraction(self.workspace, answer.target)
        q = answer.result.q
        values = None if q is None else fast_vector(q, self.model.dof)
        if values is not None:
            # The kernel's Jacobian in plain floats: rows vx, vy, vz first.
            jacobian = self.model.kernel.pose_jacobian(list(values))[1]
            n = self.model.dof
            answer.manipulability, answer.condition_number = metrics.dexterity(
                (jacobian[:n], jacobian[n:2 * n], jacobian[2 * n:3 * n]))
        return answer
