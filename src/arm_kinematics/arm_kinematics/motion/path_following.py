"""Following a sampled tool path in joint space: one sample after the other with the
previous answer as seed (numeric solvers), or dynamic programming over every labelled
solution (closed forms); the joint-jump, deviation, limit, contact and singularity checks
between samples with the step halved where they fail; and the timing of the joint path.
See motion/path_ik.py for the rules. No ROS.

Units: m, rad (m for prismatic joints), s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
import math
import time

import numpy as np

from arm_kinematics.ik import metrics
from arm_kinematics.ik.result import ErrorCode, GoalType, IKResult
from arm_kinematics.ik.solvers.base import SolveOptions, Solver
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.laws import min_jerk, MIN_JERK_PEAK_SPEED
from arm_kinematics.motion.path_request import LINEAR_TIMING, PathCode, PathSettings
from arm_kinematics.motion.tool_path import ToolPath
from arm_kinematics.motion.trajectory import Interpolation, Trajectory
from arm_kinematics.scene.geometry import SafetyGeometry, Verdict

# Tolerance of "at a joint limit" when naming the joint that stopped a path, rad (or m).
AT_LIMIT = 1e-3


@dataclass
class PathStop:
    """Why one sample or one step is refused."""

    code: PathCode
    message: str
    ik_code: ErrorCode = ErrorCode.OK
    joint: str = ''
    joint_step: float = 0.0
    condition: float = math.nan


@dataclass
class PathSample:
    u: float                 # path parameter: sample index, fractional between samples
    q: np.ndarray
    label: str = ''


def condition_number(model: ArmModel, reach: float, q: np.ndarray, goal: GoalType) -> float:
    """Condition number of the goal's constraint Jacobian at ``q`` (dimensionless): position
    rows; FULL_POSE adds the rotation rows and TOOL_DOWN the two that tilt the tool axis,
    both times ``reach`` (m) so all rows are m."""
    jacobian = model.jacobian(q)
    if goal == GoalType.POSITION:
        return metrics.condition_number(jacobian[:3])
    angular = jacobian[3:] * reach
    if goal == GoalType.TOOL_DOWN:
        rotation = model.fk(q)[:3, :3]
        # Turning about the tool axis is free for TOOL_DOWN: only the two tilts count.
        angular = rotation[:, :2].T @ angular
    rows = np.vstack([jacobian[:3], angular])
    singular = np.linalg.svd(rows, compute_uv=False)
    if singular[-1] <= singular[0] * 1e-15 or rows.shape[0] > rows.shape[1]:
        return math.inf
    return float(singular[0] / singular[-1])


# Whole-turn offsets of a joint value tried for the copies of a solution, rad.
_TURNS = np.array([-4.0, -2.0, 0.0, 2.0, 4.0]) * math.pi


class PathRun:
    """One path being followed: the sample solver, the checks and the subdivision."""

    def __init__(self, model: ArmModel, condition: Callable[[np.ndarray, GoalType], float],
                 safety: SafetyGeometry | None, solver: Solver, goal: GoalType,
                 options: SolveOptions, settings: PathSettings, path: ToolPath,
                 start: np.ndarray, deadline: float, allow_branch_change: bool) -> None:
        self.model, self.condition, self.safety = model, condition, safety
        self.solver, self.goal, self.options = solver, goal, options
        self.settings, self.path, self.start = settings, path, start
        self.deadline, self.allow_change = deadline, allow_branch_change
        self.labelled = solver.labelled
        self.failed_u: float | None = None
        self.refused: dict[str, PathStop] = {}
        model = self.model
        # Joints whose range holds more than one turn have copies q ± 2π inside it.
        self.turns = [j for j in range(model.dof) if model.joints[j].wraps and
                      model.upper[j] - model.lower[j] > 2.0 * math.pi + 1e-9]

    # ------------------------------------------------------------------ one sample
    def _solve(self, u: float, seed: np.ndarray) -> IKResult:
        position, rotation = self.path.pose(u)
        remaining = self.deadline - time.perf_counter()
        options = self.options.with_changes(timeout=max(min(self.options.timeout, remaining),
                                                        1e-3))
        return self.solver.solve(position, rotation, self.goal, seed, options)

    def _timed_out(self) -> PathStop | None:
        if time.perf_counter() >= self.deadline:
            return PathStop(PathCode.TIMEOUT, f'the path took longer than its timeout of '
                         f'{self.settings.timeout:g} s')
        return None

    def _failure(self, result: IKResult, previous: np.ndarray | None) -> PathStop:
        if result.code == ErrorCode.TIMED_OUT:
            return PathStop(PathCode.TIMEOUT, f'{result.code.name}: {result.reason}', result.code)
        joint = '' if previous is None else self._joint_at_limit(previous)
        if result.code == ErrorCode.JOINT_LIMITS or joint:
            name = joint or self._named_joint(result.reason)
            return PathStop(PathCode.JOINT_LIMIT, f'{name or "a joint"} at its limit '
                         f'({result.code.name}: {result.reason})', result.code, name)
        return PathStop(PathCode.UNREACHABLE, f'{result.code.name}: {result.reason}', result.code)

    def _named_joint(self, reason: str) -> str:
        return next((name for name in self.model.joint_names if name in reason), '')

    def _nearest_limit(self, q: np.ndarray) -> str:
        model = self.model
        margin = np.minimum(q - model.lower, model.upper - q)
        return model.joint_names[int(np.argmin(margin))]

    def _joint_at_limit(self, q: np.ndarray) -> str:
        model = self.model
        at = np.flatnonzero((q <= model.lower + AT_LIMIT) | (q >= model.upper - AT_LIMIT))
        return model.joint_names[int(at[0])] if at.size else ''

    def _pose_checks(self, candidates: np.ndarray) -> tuple[np.ndarray, list[PathStop | None]]:
        """(ok mask, stop per candidate) for the limits, contacts and singularity."""
        model, settings = self.model, self.settings
        stops: list[PathStop | None] = [None] * len(candidates)
        inside = np.all((candidates >= model.lower - 1e-9) & (candidates <= model.upper + 1e-9),
                        axis=1)
        verdicts = None
        if self.safety is not None:
            checks = self.safety.check(candidates)
            verdicts = checks.verdict
        for i, q in enumerate(candidates):
            if not inside[i]:
                j = int(np.argmax(np.maximum(model.lower - q, q - model.upper)))
                stops[i] = PathStop(PathCode.JOINT_LIMIT, f'{model.joint_names[j]} = {q[j]:.4f} '
                                 f'outside [{model.lower[j]:.4f}, {model.upper[j]:.4f}]',
                                 ErrorCode.JOINT_LIMITS, model.joint_names[j])
            elif verdicts is not None and verdicts[i] != Verdict.SAFE:
                pose = checks.pose(i)
                code = PathCode.FLOOR_CONTACT if verdicts[i] == Verdict.FLOOR_VIOLATION \
                    else PathCode.OBSTACLE_CONTACT
                stops[i] = PathStop(code, pose.message, ErrorCode.FLOOR_COLLISION)
            else:
                condition = self.condition(q, self.goal)
                if condition > settings.max_condition:
                    stops[i] = PathStop(PathCode.SINGULARITY, f'condition number {condition:.3g} '
                                     f'> {settings.max_condition:g}', condition=condition)
        return np.array([s is None for s in stops], dtype=bool), stops

    def _copies(self, q: np.ndarray, reference: np.ndarray) -> list[np.ndarray]:
        """``q`` and its whole-turn copies inside the limits that a continuous path from a
        ``reference`` row (P, n) can reach: on every joint of more than one turn, the copies
        within half a turn plus one step of some reference value (a farther copy needs a
        jump to get to, so it can never be a state of a continuous path)."""
        out = [np.asarray(q, dtype=float)]
        model = self.model
        reach = math.pi + self.settings.max_joint_step
        for j in self.turns:
            candidates = q[j] + _TURNS
            keep = (candidates >= model.lower[j] - 1e-9) & \
                (candidates <= model.upper[j] + 1e-9) & \
                (np.abs(reference[:, j][None, :] - candidates[:, None]).min(axis=1) <= reach)
            values = candidates[keep].tolist() or [q[j]]
            more = []
            for base in out:
                for value in values:
                    copy = base.copy()
                    copy[j] = value
                    more.append(copy)
            out = more
        return out

    def _states(self, u: float, reference: np.ndarray
                ) -> tuple[list[tuple[str, np.ndarray]], PathStop | None]:
        """Every allowed labelled solution at ``u`` (closed forms), or why none.

        ``self.refused`` keeps why each label's solutions were refused (a singular or
        colliding pose), so a branch that vanishes is reported for its own reason.
        """
        self.refused: dict[str, PathStop] = {}
        result = self._solve(u, self.start)
        if not result.success:
            return [], self._failure(result, None)
        solutions = [(s.label, s.q) for s in result.solutions] or [(result.branch, result.q)]
        # A solver may list whole-turn copies itself: keep one per label, _copies adds the
        # ones a continuous path can use.
        labels = [label for label, _ in solutions]
        values = np.array([q for _, q in solutions], dtype=float)
        keys = values.copy()
        keys[:, self.turns] = np.mod(keys[:, self.turns], 2.0 * math.pi)
        keys = np.round(keys, 9) + 0.0          # + 0.0: -0.0 and 0.0 are one key
        # The first of each (label, joint values modulo a turn): a dict, as a sample has a
        # handful of solutions and np.unique(axis=0) costs more than the solve.
        first = list({(label, key.tobytes()): i for i, (label, key) in
                      reversed(list(enumerate(zip(labels, keys, strict=True))))}.values())
        states = [(labels[i], copy) for i in sorted(first)
                  for copy in self._copies(values[i], reference)]
        # A state farther than half a turn (plus a step) from every state before it, on some
        # joint, is never the next sample of a continuous path: left out before the checks.
        array = np.array([q for _, q in states])
        gap = np.abs(array[:, None, :] - reference[None, :, :]).max(axis=2).min(axis=1)
        near = gap <= math.pi + self.settings.max_joint_step
        if near.any():
            states = [state for state, keep in zip(states, near, strict=True) if keep]
        ok, stops = self._pose_checks(np.array([q for _, q in states]))
        kept = [state for state, good in zip(states, ok, strict=True) if good]
        for (label, _), stop in zip(states, stops, strict=True):
            if stop is not None:
                self.refused.setdefault(label, stop)
        if kept:
            return kept, None
        return [], next(s for s in stops if s is not None)

    def _attempt(self, u: float, previous: PathSample, labels: Sequence[str]
                 ) -> tuple[PathSample | None, PathStop | None]:
        """Solve one sample from ``previous``: the candidate, or why there is none."""
        stop = self._timed_out()
        if stop is not None:
            return None, stop
        if self.labelled:
            states, stop = self._states(u, previous.q.reshape(1, -1))
            if stop is not None:
                return None, stop
            allowed = [(label, q) for label, q in states if not labels or label in labels]
            if not allowed:
                return None, self._vanished(labels, states)
            label, q = min(allowed, key=lambda s: float(np.abs(s[1] - previous.q).sum()))
            return PathSample(u, q, label), None
        result = self._solve(u, previous.q)
        if not result.success or result.q is None:
            return None, self._failure(result, previous.q)
        ok, stops = self._pose_checks(np.asarray(result.q, dtype=float).reshape(1, -1))
        if not ok[0]:
            return None, stops[0]
        return PathSample(u, np.asarray(result.q, dtype=float)), None

    def _vanished(self, labels: Sequence[str], states: list) -> PathStop:
        others = sorted({label for label, _ in states})
        for label in labels:
            if label in self.refused:
                # The branch is there but its pose is refused (singular, in contact...).
                return self.refused[label]
        return PathStop(PathCode.JOINT_LIMIT, f'branch {"/".join(labels)} has no solution inside '
                     f'the limits here (branches {", ".join(others)} have; a branch change is '
                     'not allowed)', ErrorCode.JOINT_LIMITS)

    def _transition(self, a: PathSample, b: PathSample) -> PathStop | None:
        """The jump and deviation checks between two consecutive samples."""
        model, settings = self.model, self.settings
        step = np.abs(b.q - a.q)
        worst = int(np.argmax(step))
        if step[worst] > settings.max_joint_step:
            return PathStop(PathCode.JOINT_JUMP, f'{model.joint_names[worst]} would move '
                         f'{step[worst]:.4f} between two samples (max_joint_step '
                         f'{settings.max_joint_step:g})', joint=model.joint_names[worst],
                         joint_step=float(step[worst]))
        middle = model.fk(0.5 * (a.q + b.q))[:3, 3]
        deviation = self.path.deviation(middle, a.u, b.u)
        if deviation > settings.max_deviation:
            return PathStop(PathCode.DEVIATION, f'the tool would leave the path by '
                         f'{deviation:.4f} m between two samples (max_deviation '
                         f'{settings.max_deviation:g} m)')
        return None

    # ------------------------------------------------------------------ the path
    def solve(self) -> tuple[list[PathSample], PathStop | None]:
        first = PathSample(0.0, self.start.copy(), '')
        ok, stops = self._pose_checks(self.start.reshape(1, -1))
        if not ok[0]:
            self.failed_u = 0.0
            stop = stops[0]
            stop.message = f'the start pose is refused: {stop.message}'
            return [first], stop
        if self.labelled:
            return self._solve_branches(first)
        samples = [first]
        for k in range(1, len(self.path)):
            stop = self._advance(samples, float(k), ())
            if stop is not None:
                return samples, stop
        return samples, None

    def _advance(self, samples: list[PathSample], u_target: float, labels: Sequence[str],
                 guess: PathSample | None = None) -> PathStop | None:
        """Extend ``samples`` to ``u_target``, halving the step where a check fails."""
        targets = [u_target]
        while targets:
            current = samples[-1]
            u = targets[-1]
            if guess is not None and u == guess.u:
                candidate, stop = guess, None
            else:
                allowed = tuple(sorted({label for label in (current.label, *labels) if label}))
                candidate, stop = self._attempt(u, current, allowed)
            if candidate is not None:
                stop = self._transition(current, candidate)
            if stop is None:
                samples.append(candidate)
                targets.pop()
                continue
            if stop.code == PathCode.TIMEOUT or \
                    self.path.size(current.u, u) <= self.settings.min_step:
                self.failed_u = u
                joint = self._joint_at_limit(current.q)
                if stop.code == PathCode.JOINT_LIMIT:
                    # The joint the last sample holds at its limit, else the one nearest it.
                    stop.joint = joint or self._nearest_limit(current.q)
                elif stop.code in (PathCode.JOINT_JUMP, PathCode.DEVIATION,
                                   PathCode.UNREACHABLE):
                    if joint:
                        stop = PathStop(PathCode.JOINT_LIMIT, f'{joint} is at its limit, and '
                                     f'then: {stop.message}', ErrorCode.JOINT_LIMITS, joint)
                return stop
            targets.append(0.5 * (current.u + u))
        return None

    def _solve_branches(self, first: PathSample) -> tuple[list[PathSample], PathStop | None]:
        """Dynamic programming over every solution of every path sample, then refinement."""
        max_step = self.settings.max_joint_step
        start_label = self._start_label()
        layers: list[list[tuple[str, np.ndarray]]] = [[(start_label, self.start)]]
        costs = [np.zeros(1)]
        parents: list[np.ndarray] = [np.zeros(1, dtype=int)]
        stop: PathStop | None = None
        for k in range(1, len(self.path)):
            timeout = self._timed_out()
            reference = np.array([q for _, q in layers[-1]])
            states, stop = (None, timeout) if timeout else self._states(float(k), reference)
            if stop is not None:
                break
            previous = layers[-1]
            prev_q = np.array([q for _, q in previous])
            prev_labels = [label for label, _ in previous]
            q = np.array([q for _, q in states])
            motion = np.abs(q[:, None, :] - prev_q[None, :, :])          # (S, P, n)
            total = motion.sum(axis=2) + costs[-1][None, :]
            same = np.array([[label == other or not other for other in prev_labels]
                             for label, _ in states])
            if self.allow_change:
                # A change of label only where both branches meet (a continuous step).
                same |= motion.max(axis=2) <= max_step
            total[~same] = np.inf
            parent = np.argmin(total, axis=1)
            cost = total[np.arange(len(states)), parent]
            alive = np.isfinite(cost)
            if not alive.any():
                labels = sorted({label for label in prev_labels})
                stop = self._vanished(labels, states)
                break
            layers.append([s for s, a in zip(states, alive, strict=True) if a])
            costs.append(cost[alive])
            parents.append(parent[alive])
        if stop is not None:
            self.failed_u = float(len(layers))
        # Backtrack from the cheapest state of the last layer reached.
        index = int(np.argmin(costs[-1]))
        chosen = []
        for k in range(len(layers) - 1, -1, -1):
            chosen.append((k, *layers[k][index]))
            index = int(parents[k][index])
        chosen.reverse()
        samples = [first]
        first.label = start_label
        for k, label, q in chosen[1:]:
            refine = self._advance(samples, float(k), (label,), PathSample(float(k), q, label))
            if refine is not None:
                return samples, refine
            samples[-1].label = label
        if stop is not None:
            # Localise the stop between the last sample and the refused one.
            stop = self._localise(samples, stop)
        return samples, stop

    def _localise(self, samples: list[PathSample], stop: PathStop) -> PathStop:
        """The stop found by halving the step from the last sample toward the refused one."""
        u_fail = math.floor(samples[-1].u) + 1.0
        labels = (samples[-1].label,) if samples[-1].label else ()
        probe = self._advance(samples, u_fail, labels)
        if probe is None:
            self.failed_u = u_fail
            return stop
        return probe

    def _start_label(self) -> str:
        """The branch label of the start pose, '' when no solution matches it."""
        frame = self.model.fk(self.start)
        turn = frame[:3, :3] if self.goal == GoalType.FULL_POSE else None
        result = self.solver.solve(frame[:3, 3], turn, self.goal, self.start,
                                   self.options.with_changes(return_all=True))
        for solution in result.solutions:
            for copy in self._copies(solution.q, self.start.reshape(1, -1)):
                if float(np.abs(copy - self.start).max()) <= 1e-6:
                    return solution.label
        return ''


def time_joint_path(model: object, q: np.ndarray, settings: PathSettings,
           u: Sequence[float]) -> Trajectory:
    """Time a joint path: linear (each step at its slowest joint's limit) or min-jerk."""
    names = tuple(model.joint_names)
    if len(q) == 1:
        return Trajectory.hold(names, q[0], settings.timing)
    limits = np.asarray(model.velocity_limits, dtype=float) * settings.velocity_scale
    durations = (np.abs(np.diff(q, axis=0)) / limits).max(axis=1)
    # A step with no joint motion (a pure re-sample) still takes a little time.
    durations = np.maximum(durations, 1e-6)
    linear_times = np.concatenate([[0.0], np.cumsum(durations)])
    if settings.timing == LINEAR_TIMING:
        times = linear_times
    else:
        total = float(linear_times[-1])
        duration = MIN_JERK_PEAK_SPEED * total
        s = linear_times / total
        # Invert s(τ) (monotonic) by bisection, all samples at once.
        low, high = np.zeros_like(s), np.ones_like(s)
        for _ in range(60):
            middle = 0.5 * (low + high)
            below = min_jerk(middle)[0] < s
            low, high = np.where(below, middle, low), np.where(below, high, middle)
        times = 0.5 * (low + high) * duration
        times[0], times[-1] = 0.0, duration
        # Strictly increasing even where two samples round to one time.
        times = np.maximum.accumulate(times + np.arange(len(times)) * 1e-12)
    velocities = np.gradient(q, times, axis=0)
    velocities[[0, -1]] = 0.0
    return Trajectory(names, times, q.copy(), velocities, Interpolation.LINEAR,
                      settings.timing)
