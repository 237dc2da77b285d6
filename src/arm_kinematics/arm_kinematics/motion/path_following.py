"""Following a sampled tool path in joint space: one sample after the other with the
previous answer as seed (numeric solvers), or dynamic programming over every labelled
solution (closed forms); the joint-jump, deviation, limit, contact and singularity checks
between samples with the step halved where they fail (the timing is motion/path_timing.py,
the condition numbers motion/path_conditions.py, the stops' words motion/path_stops.py).
See motion/path_ik.py for the rules. No ROS.

Units: m, rad (m for prismatic joints), s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import math
import time

import numpy as np

from arm_kinematics.ik.result import ErrorCode, GoalType, IKResult
from arm_kinematics.ik.solvers.base import SolveOptions, Solver
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.path_request import PathCode, PathSettings
from arm_kinematics.motion.path_stops import (
    beyond_reach,
    failure,
    joint_at_limit,
    nearest_limit,
    PathSample,
    PathStop,
    transition,
)
from arm_kinematics.motion.tool_path import ToolPath
from arm_kinematics.motion.whole_turns import whole_turn_copies
from arm_kinematics.scene.geometry import SafetyGeometry, Verdict

# Samples of a closed form's unbroken prefix solved per call (PathRun._unbroken_prefix):
# the first call takes PREFIX_WINDOW, each next one twice as many up to PREFIX_WINDOW_MAX,
# so a path that stops early pays for few unused solves and checks, and a long one for few
# calls (each call's fixed cost is several numpy calls).
PREFIX_WINDOW = 16
PREFIX_WINDOW_MAX = 256


class PathRun:
    """One path being followed: the sample solver, the checks and the subdivision."""

    def __init__(self, model: ArmModel,
                 condition: Callable[[np.ndarray, GoalType, float], np.ndarray],
                 safety: SafetyGeometry | None, solver: Solver, goal: GoalType,
                 options: SolveOptions, settings: PathSettings, path: ToolPath,
                 start: np.ndarray, deadline: float, allow_branch_change: bool) -> None:
        self.model, self.condition, self.safety = model, condition, safety
        self.solver, self.goal, self.options = solver, goal, options
        self.settings, self.path, self.start = settings, path, start
        self.deadline, self.allow_change = deadline, allow_branch_change
        self.labelled = solver.labelled
        self._last_solved: tuple[float, np.ndarray | None, np.ndarray | None] = \
            (math.nan, None, None)
        self.failed_u: float | None = None
        self.refused: dict[str, PathStop] = {}
        model = self.model
        # Joints whose range holds more than one turn have copies q ± 2π inside it.
        self.turns = [j for j in range(model.dof) if model.joints[j].wraps and
                      model.upper[j] - model.lower[j] > 2.0 * math.pi + 1e-9]
        self._turn_joints = np.array(self.turns, dtype=np.int64)
        self._low, self._high = model.lower - 1e-9, model.upper + 1e-9
        # A closed form with an all-branches call (UR, OPW, yaw + two pitch) gives each
        # branch once (its copy nearest the start) for many poses in one call; _copies adds
        # the copies a continuous path can use. Listing every whole-turn copy (256 on a
        # UR5) and dropping them again cost 3–8 single solves per sample. The rotation of a
        # POSITION or TOOL_DOWN goal is the start's (a position-only solver takes none).
        self._solve_poses = getattr(solver, 'solve_all_poses', None) if self.labelled \
            else None
        self._labels: tuple[str, ...] = getattr(solver, 'branch_labels', ()) \
            if self._solve_poses is not None else ()
        self._rotation = None
        goal_rotation = getattr(solver, 'goal_rotation', None)
        if self._solve_poses is not None:
            if goal_rotation is None:
                if goal != GoalType.POSITION:       # a position-only solver
                    self._solve_poses = None
            elif goal != GoalType.FULL_POSE:
                self._rotation, _ = goal_rotation(goal, None, start)
                if self._rotation is None:
                    self._solve_poses = None

    # ------------------------------------------------------------------ one sample
    def _solve(self, u: float, seed: np.ndarray) -> IKResult:
        position, rotation = self.path.pose(u)
        remaining = self.deadline - time.perf_counter()
        # Where solve_all found no branch the answer is a refusal (or, for a position goal,
        # damped least squares): listing every whole-turn copy would only cost time.
        options = self.options.with_changes(timeout=max(min(self.options.timeout, remaining),
                                                        1e-3),
                                            return_all=self.options.return_all and
                                            self._solve_poses is None)
        return self.solver.solve(position, rotation, self.goal, seed, options)

    def _timed_out(self) -> PathStop | None:
        if time.perf_counter() >= self.deadline:
            return PathStop(PathCode.TIMEOUT, f'the path took longer than its timeout of '
                         f'{self.settings.timeout:g} s')
        return None

    def _pose_checks(self, candidates: np.ndarray) -> tuple[np.ndarray, list[PathStop | None]]:
        """(ok mask, stop per candidate) for the limits, contacts and singularity."""
        model, settings = self.model, self.settings
        stops: list[PathStop | None] = [None] * len(candidates)
        inside = ((candidates >= self._low) & (candidates <= self._high)).all(axis=1)
        verdicts = None
        if self.safety is not None:
            checks = self.safety.check(candidates)
            verdicts = checks.verdict
        # The singularity check of every candidate the others pass, in one call.
        judged = inside if verdicts is None else inside & (verdicts == Verdict.SAFE)
        if judged.all():
            conditions = self.condition(candidates, self.goal, settings.max_condition)
            if (conditions <= settings.max_condition).all():
                return judged, stops                    # the usual case: no words to make
        else:
            conditions = np.full(len(candidates), math.nan)
            if judged.any():
                conditions[judged] = self.condition(candidates[judged], self.goal,
                                                    settings.max_condition)
        refused = ~judged | (conditions > settings.max_condition)
        for i in np.flatnonzero(refused).tolist():      # the words only where one is refused
            q = candidates[i]
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
                condition = float(conditions[i])
                if condition > settings.max_condition:
                    stops[i] = PathStop(PathCode.SINGULARITY, f'condition number {condition:.3g} '
                                     f'> {settings.max_condition:g}', condition=condition)
        return ~refused, stops

    def _copies(self, values: np.ndarray, reference: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
        """Every row of ``values`` (S, n) and its whole-turn copies inside the limits that a
        continuous path from a ``reference`` row (P, n) can reach: (copies (K, n), the row
        of ``values`` each comes from (K,)). On every joint of more than one turn, the
        copies within half a turn plus one step of some reference value (a farther copy
        needs a jump to get to, so it can never be a state of a continuous path). Compiled
        (``whole_turn_copies``): in numpy, joint by joint, this cost more than the solve."""
        values = np.ascontiguousarray(values, dtype=float).reshape(len(values), -1)
        if not self.turns:
            return values, np.arange(len(values))
        return whole_turn_copies(values, np.ascontiguousarray(reference, dtype=float),
                                 self._turn_joints, self.model.lower, self.model.upper,
                                 math.pi + self.settings.max_joint_step)

    def _states(self, u: float, reference: np.ndarray, wanted: Sequence[str] = ()
                ) -> tuple[list[tuple[str, np.ndarray]], PathStop | None]:
        """Every allowed labelled solution at ``u`` (closed forms), or why none.

        ``wanted``: the labels that can continue the path (() for any): when some state
        has one, only those are checked (the others could not be chosen; each check costs
        a Jacobian and an SVD); when none has, every state is, so the stop names the
        branches there are.

        ``self.refused`` keeps why each label's solutions were refused (a singular or
        colliding pose), so a branch that vanishes is reported for its own reason.
        """
        self.refused: dict[str, PathStop] = {}
        solutions = []
        if self._solve_poses is not None:
            q, valid = self._solved_at(u)
            solutions = [(self._labels[i], q[i]) for i in np.flatnonzero(valid)]
        if solutions:
            labels = [label for label, _ in solutions]
            rows = list(range(len(solutions)))        # each branch once already
            values = np.array([q for _, q in solutions], dtype=float)
        else:
            result = self._solve(u, self.start)
            if not result.success:
                stop = failure(self.model, result, None)
                stop.lasting = stop.code != PathCode.TIMEOUT
                return [], stop
            solutions = [(s.label, s.q) for s in result.solutions] or \
                [(result.branch, result.q)]
            labels, values, rows = self._distinct(solutions)
        copies, origin = self._copies(values[rows], reference)
        names = [labels[rows[i]] for i in origin.tolist()]
        # A state farther than half a turn (plus a step) from every state before it, on some
        # joint, is never the next sample of a continuous path: left out before the checks.
        gap = np.abs(copies[:, None, :] - reference[None, :, :]).max(axis=2).min(axis=1)
        near = np.flatnonzero(gap <= math.pi + self.settings.max_joint_step)
        chosen = near.tolist() if near.size else list(range(len(copies)))
        if wanted:
            chosen = [i for i in chosen if names[i] in wanted] or chosen
        candidates = copies[chosen]
        ok, stops = self._pose_checks(candidates)
        kept = [(names[i], q) for i, q, good in zip(chosen, candidates, ok, strict=True)
                if good]
        for i, stop in zip(chosen, stops, strict=True):
            if stop is not None:
                self.refused.setdefault(names[i], stop)
        if kept:
            return kept, None
        return [], next(s for s in stops if s is not None)

    def _distinct(self, solutions: list[tuple[str, np.ndarray]]
                  ) -> tuple[list[str], np.ndarray, list[int]]:
        """(labels, values, rows): a solver may list whole-turn copies itself; ``rows``
        keeps one per label (the first), and _copies adds the ones a continuous path can
        use."""
        labels = [label for label, _ in solutions]
        values = np.array([q for _, q in solutions], dtype=float)
        keys = values.copy()
        keys[:, self.turns] = np.mod(keys[:, self.turns], 2.0 * math.pi)
        keys = np.round(keys, 9) + 0.0          # + 0.0: -0.0 and 0.0 are one key
        # The first of each (label, joint values modulo a turn): a dict, as a sample has a
        # handful of solutions and np.unique(axis=0) costs more than the solve.
        first = list({(label, key.tobytes()): i for i, (label, key) in
                      reversed(list(enumerate(zip(labels, keys, strict=True))))}.values())
        return labels, values, sorted(first)

    def _solved_at(self, u: float) -> tuple[np.ndarray, np.ndarray]:
        """The all-branches call at ``u``: (q (B, n) rad, valid (B,)), each branch's copy
        nearest the start. The last one is kept: ``_states`` often follows
        ``_branch_attempt`` at the same sample."""
        if self._last_solved[0] != u:
            position, rotation = self.path.pose(u)
            q, valid = self._solve_poses(position[None], self._rotations(rotation, 1),
                                         self.start)
            self._last_solved = (u, q[0], valid[0])
        return self._last_solved[1], self._last_solved[2]

    def _rotations(self, rotation: np.ndarray | None, count: int) -> np.ndarray | None:
        """(count, 3, 3): ``rotation``, else the goal's fixed one; None for a position-only
        solver."""
        if rotation is None:
            if self._rotation is None:
                return None
            rotation = np.reshape(self._rotation, (3, 3))
        return rotation[None] if count == 1 else np.broadcast_to(rotation, (count, 3, 3))

    def _attempt(self, u: float, previous: PathSample, labels: Sequence[str]
                 ) -> tuple[PathSample | None, PathStop | None]:
        """Solve one sample from ``previous``: the candidate, or why there is none."""
        stop = self._timed_out()
        if stop is not None:
            return None, stop
        if self.labelled:
            decided = self._branch_attempt(u, previous, labels)
            if decided is not None:
                return decided
            states, stop = self._states(u, previous.q.reshape(1, -1), labels)
            if stop is not None:
                return None, stop
            allowed = [(label, q) for label, q in states if not labels or label in labels]
            if not allowed:
                return None, self._vanished(labels, states)
            label, q = min(allowed, key=lambda s: float(np.abs(s[1] - previous.q).sum()))
            return PathSample(u, q, label), None
        result = self._solve(u, previous.q)
        if not result.success or result.q is None:
            return None, failure(self.model, result, previous.q)
        ok, stops = self._pose_checks(np.asarray(result.q, dtype=float).reshape(1, -1))
        if not ok[0]:
            return None, stops[0]
        return PathSample(u, np.asarray(result.q, dtype=float)), None

    def _branch_attempt(self, u: float, previous: PathSample, labels: Sequence[str]
                        ) -> tuple[PathSample | None, PathStop | None] | None:
        """``_attempt``'s answer where it is plain, else None (``_states`` then finds it or
        words why not): one allowed label, solved by the all-branches call, with copies
        within reach of ``previous``; the nearest that passes the pose checks, or the first
        one's refusal when none does. Only that label's copies are made and checked, which
        is all ``_states`` would choose from there."""
        if self._solve_poses is None or len(labels) != 1 or labels[0] not in self._labels:
            return None
        q, valid = self._solved_at(u)
        branch = self._labels.index(labels[0])
        if not valid[branch]:
            return None
        copies, _ = self._copies(q[branch][None], previous.q[None])
        near = np.abs(copies - previous.q).max(axis=1) <= math.pi + self.settings.max_joint_step
        if not near.any():
            return None
        candidates = copies[near]
        ok, stops = self._pose_checks(candidates)
        if not ok.any():
            stop = next(stop for stop in stops if stop is not None)
            stop.lasting = True
            return None, stop
        kept = candidates[ok]
        best = int(np.argmin(np.abs(kept - previous.q).sum(axis=1)))
        return PathSample(u, kept[best], labels[0]), None

    def _vanished(self, labels: Sequence[str], states: list) -> PathStop:
        others = sorted({label for label, _ in states})
        for label in labels:
            if label in self.refused:
                # The branch is there but its pose is refused (singular, in contact...).
                return self.refused[label]
        return PathStop(PathCode.JOINT_LIMIT, f'branch {"/".join(labels)} has no solution inside '
                     f'the limits here (branches {", ".join(others)} have; a branch change is '
                     'not allowed)', ErrorCode.JOINT_LIMITS)

    # ------------------------------------------------------------------ the path
    def warm_up(self) -> bool:
        """Solve and check the first sample once, with no deadline (its result is forgotten,
        but for the same solve cached at u = 0): what a sample calls is compiled (or loaded
        from numba's cache) before the clock counts. False when a refusal cut it short (a
        start pose refused before its condition number), so it did not reach all of it."""
        deadline, self.deadline = self.deadline, math.inf
        start = self.start.reshape(1, -1)
        try:
            ok, _ = self._pose_checks(start)
            self._copies(start, start)
            states, _ = self._states(0.0, start)
        finally:
            self.deadline, self.refused = deadline, {}
        return bool(ok[0]) and bool(states)

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
        """Extend ``samples`` to ``u_target``, halving the step where a check fails.

        The halving tries the far target again after each new sample before it. Where a
        closed form's target is refused for its own sake (``PathStop.lasting``: no solution
        there, or its branch's pose singular or in contact, which no sample before changes)
        that answer is kept for the retries: solving it again was half of the time spent
        localising a stop."""
        targets = [u_target]
        refused: dict[tuple[float, tuple[str, ...]], PathStop] = {}
        while targets:
            current = samples[-1]
            u = targets[-1]
            if guess is not None and u == guess.u:
                candidate, stop = guess, None
            else:
                allowed = tuple(sorted({label for label in (current.label, *labels) if label}))
                stop = refused.get((u, allowed)) if self.labelled else None
                candidate = None
                if stop is None or self._timed_out() is not None:
                    candidate, stop = self._attempt(u, current, allowed)
                    if candidate is None and stop.lasting:
                        refused[(u, allowed)] = stop
            if candidate is not None:
                stop = transition(self.model, self.settings, self.path, current, candidate)
            if stop is None:
                samples.append(candidate)
                targets.pop()
                continue
            if stop.code == PathCode.TIMEOUT or \
                    self.path.size(current.u, u) <= self.settings.min_step:
                self.failed_u = u
                joint = joint_at_limit(self.model, current.q)
                if stop.code == PathCode.JOINT_LIMIT:
                    # The joint the last sample holds at its limit, else the one nearest it.
                    stop.joint = joint or nearest_limit(self.model, current.q)
                elif stop.code in (PathCode.JOINT_JUMP, PathCode.DEVIATION,
                                   PathCode.UNREACHABLE):
                    if joint:
                        stop = PathStop(PathCode.JOINT_LIMIT, f'{joint} is at its limit, and '
                                     f'then: {stop.message}', ErrorCode.JOINT_LIMITS, joint)
                return stop
            targets.append(0.5 * (current.u + u))
        return None

    def _solve_branches(self, first: PathSample) -> tuple[list[PathSample], PathStop | None]:
        """Dynamic programming over every solution of every path sample, then refinement,
        from where the unbroken prefix (``_unbroken_prefix``) ends."""
        max_step = self.settings.max_joint_step
        first.label = self._start_label()
        samples, stop, finished = self._unbroken_prefix(first)
        if finished:
            return samples, stop
        origin = samples[-1]
        base = int(origin.u)
        layers: list[list[tuple[str, np.ndarray]]] = [[(origin.label, origin.q)]]
        costs = [np.zeros(1)]
        parents: list[np.ndarray] = [np.zeros(1, dtype=int)]
        for k in range(base + 1, len(self.path)):
            timeout = self._timed_out()
            reference = np.array([q for _, q in layers[-1]])
            # Without branch changes only the labels alive so far can continue ('' is
            # the start's when no solution matched it: any).
            alive_labels = () if self.allow_change else tuple({label for label, _ in
                                                               layers[-1]})
            if '' in alive_labels:
                alive_labels = ()
            states, stop = (None, timeout) if timeout else \
                self._states(float(k), reference, alive_labels)
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
            largest = motion.max(axis=2)
            if self.allow_change:
                # A change of label only where both branches meet (a continuous step).
                same |= largest <= max_step
            # A state farther from one before it than every halving of the step can cover
            # is no transition: the refinement would refuse it (a whole-turn copy across a
            # joint limit), and searching on from it only cost time.
            linked = same & (largest <= self._reachable_motion(float(k - 1)))
            total[~linked] = np.inf
            parent = np.argmin(total, axis=1)
            cost = total[np.arange(len(states)), parent]
            alive = np.isfinite(cost)
            if not alive.any():
                if same.any():
                    stop = beyond_reach(self.model, self.settings, motion, same)
                else:
                    stop = self._vanished(sorted(set(prev_labels)), states)
                break
            layers.append([s for s, a in zip(states, alive, strict=True) if a])
            costs.append(cost[alive])
            parents.append(parent[alive])
        if stop is not None:
            self.failed_u = float(base + len(layers))
        # Backtrack from the cheapest state of the last layer reached.
        index = int(np.argmin(costs[-1]))
        chosen = []
        for k in range(len(layers) - 1, -1, -1):
            chosen.append((base + k, *layers[k][index]))
            index = int(parents[k][index])
        chosen.reverse()
        for k, label, q in chosen[1:]:
            refine = self._advance(samples, float(k), (label,), PathSample(float(k), q, label))
            if refine is not None:
                return samples, refine
            samples[-1].label = label
        if stop is not None:
            # Localise the stop between the last sample and the refused one.
            stop = self._localise(samples, stop)
        return samples, stop

    def _reachable_motion(self, u: float) -> float:
        """The most any joint can move from sample ``u`` to ``u + 1`` through ``_advance``:
        the step is halved until it is ``min_step`` long, so it holds at most 2^levels
        sub-steps, each at most ``max_joint_step`` (inf past 2^60: no bound worth having)."""
        settings = self.settings
        ratio = self.path.size(u, u + 1.0) / settings.min_step
        if not ratio < 2.0 ** 60:
            return math.inf
        levels = math.ceil(math.log2(ratio)) if ratio > 1.0 else 0
        return (2.0 ** levels) * settings.max_joint_step + 1e-9

    def _unbroken_prefix(self, first: PathSample
                         ) -> tuple[list[PathSample], PathStop | None, bool]:
        """(samples, stop, finished): ``first`` and the samples after it that the search
        would choose without a choice, and whether nothing is left to search.

        The start's branch of a closed form with an all-branches call, solved a window of
        samples per call, each joint of more than one turn unwrapped (the copy nearest the
        sample before): up
        to a sample where that branch is missing, leaves the limits or fails a pose check,
        every layer of the search holds that one state (no branch change is allowed, and a
        step below half a turn less ``max_joint_step`` leaves one copy within reach), so
        the search from where this ends finds the same path. A step too long or off the
        tool path is refined here as the search's refinement does (``_advance``). The
        search spent a layer, a pose check and a refinement per sample on this."""
        path, label, settings = self.path, first.label, self.settings
        samples = [first]
        if self._solve_poses is None or self.allow_change or label not in self._labels:
            return samples, None, False
        branch = self._labels.index(label)
        last = len(path) - 1
        one_copy = math.pi - settings.max_joint_step
        window = PREFIX_WINDOW
        while int(samples[-1].u) < last:
            if self._timed_out():
                return samples, None, False     # the search says so, in its words
            ks = np.arange(int(samples[-1].u) + 1, min(int(samples[-1].u) + window, last) + 1)
            window = min(2 * window, PREFIX_WINDOW_MAX)
            rotations = path.rotations[ks] if path.rotations is not None else \
                self._rotations(None, len(ks))
            q, valid = self._solve_poses(path.positions[ks], rotations, self.start)
            chain = np.vstack([samples[-1].q, q[:, branch, :]])
            if self.turns:
                # Whole turns toward the sample before, as np.unwrap, but by exact multiples
                # of 2π: the copies the search makes (whole_turn_copies: value ± 2πk).
                turns = np.round(np.diff(chain[:, self.turns], axis=0) / (2.0 * math.pi))
                chain[1:, self.turns] -= (2.0 * math.pi) * np.cumsum(turns, axis=0)
            states = chain[1:]
            # The pose checks (limits included: an unwrapped copy may leave them) up to
            # the first sample the branch does not reach.
            good = valid[:, branch]
            reached = int(np.argmin(good)) if not good.all() else len(ks)
            if reached:
                ok, _ = self._pose_checks(states[:reached])
                reached = int(np.argmin(ok)) if not ok.all() else reached
            if not reached:
                return samples, None, False
            steps = np.abs(np.diff(chain[:reached + 1], axis=0)).max(axis=1)
            middles = self.model.kernel.fk_batch(0.5 * (chain[:reached] + states[:reached]))
            plain = (steps <= settings.max_joint_step) & \
                (path.sample_deviations(middles[:, :3], int(ks[0]) - 1) <=
                 settings.max_deviation)
            for i in range(reached):
                sample = PathSample(float(ks[i]), states[i], label)
                if plain[i]:
                    samples.append(sample)
                    continue
                if steps[i] >= one_copy:
                    return samples, None, False
                stop = self._advance(samples, sample.u, (label,), sample)
                if stop is not None:
                    return samples, stop, True
                samples[-1].label = label
            if reached < len(ks):
                return samples, None, False
        return samples, None, True

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
        solutions = []
        if self._solve_poses is not None:
            # Sample 0 of the tool path is the start's tool pose.
            q, valid = self._solved_at(0.0)
            solutions = [(self._labels[i], q[i]) for i in np.flatnonzero(valid)]
        if not solutions:
            result = self.solver.solve(frame[:3, 3], turn, self.goal, self.start,
                                       self.options.with_changes(return_all=True))
            solutions = [(s.label, s.q) for s in result.solutions]
        if not solutions:
            return ''
        copies, origin = self._copies(np.array([q for _, q in solutions]),
                                      self.start.reshape(1, -1))
        for copy, row in zip(copies, origin.tolist(), strict=True):
            if float(np.abs(copy - self.start).max()) <= 1e-6:
                return solutions[row][0]
        return ''
