"""Cyclic coordinate descent (CCD) IK for position goals on any serial chain.

One CCD iteration (a *sweep*) walks the joints from the tip to the base and turns each
one by the signed angle, about its own axis, that swings the current tip towards the
target (both measured in the plane normal to the axis). Joint i's rotation moves only the
joints beyond it, so one FK per sweep is enough: the tip is carried along analytically
after every single-joint turn.

For a yaw + pitch chain (a vertical first joint followed by parallel pitch joints, all in
one plane through the yaw axis, e.g. ccd5 and pointer3) the yaw is aligned with the target
first and CCD then solves the planar chain, as the reference system does.
"""

from __future__ import annotations

from collections.abc import Sequence
import math
import time
from typing import NamedTuple

import numpy as np

from arm_kinematics.ik.result import check_vector, ErrorCode, GoalType, IKResult
from arm_kinematics.ik.solvers.base import SolveOptions, Solver, unknown_branch, Workspace
from arm_kinematics.ik.solvers.dls import JointLimiter
from arm_kinematics.model.arm_model import ArmModel, FULL_TURN

_PARALLEL = 1e-9   # tolerance of the yaw + pitch structure test (unit vectors, metres)


class CCDStep(NamedTuple):
    """Outcome of :meth:`CCDSolver.step`.

    Attributes:
        q: joint positions after the step, radians (n,).
        tip_position: tip position reached by ``q``, metres (3,).
        position_error: distance from the tip to the target, metres.
        max_joint_step: largest change of any joint in one sweep, radians.
    """

    q: np.ndarray
    tip_position: np.ndarray
    position_error: float
    max_joint_step: float


class _YawPitch(NamedTuple):
    """Geometry of a yaw + pitch chain at q = 0 (world frame)."""

    origin: tuple[float, float, float]      # a point on the yaw axis
    axis: tuple[float, float, float]        # yaw axis (unit)
    forward: tuple[float, float, float]     # in-plane horizontal direction at yaw = 0


def yaw_pitch_structure(model: ArmModel) -> _YawPitch | None:
    """The yaw + planar-pitch geometry of ``model``, or None when it is not such a chain.

    The chain qualifies when every joint after the first has the same axis (up to sign),
    perpendicular to the first joint's axis, and every joint origin and the tip lie at
    q = 0 in the plane through the first axis normal to that pitch axis.
    """
    if model.dof < 2:
        return None
    origins, axes, tip = model.joint_origins_and_axes(np.zeros(model.dof))
    yaw_axis = axes[0]
    pitch = axes[1]
    if abs(float(yaw_axis @ pitch)) > _PARALLEL:
        return None
    for axis in axes[2:]:
        if abs(abs(float(axis @ pitch)) - 1.0) > _PARALLEL:
            return None
    for point in list(origins[1:]) + [tip]:
        if abs(float(pitch @ (point - origins[0]))) > _PARALLEL:
            return None
    forward = np.cross(pitch, yaw_axis)
    return _YawPitch(tuple(origins[0].tolist()), tuple(yaw_axis.tolist()),
                     tuple((forward / np.linalg.norm(forward)).tolist()))


def _rotate_about(point: tuple[float, float, float], frame: Sequence[float],
                  angle: float) -> tuple[float, float, float]:
    """``point`` turned by ``angle`` (radians) about the axis line of a joint frame."""
    ox, oy, oz, ax, ay, az = frame
    ux, uy, uz = point[0] - ox, point[1] - oy, point[2] - oz
    c, s = math.cos(angle), math.sin(angle)
    along = (ax * ux + ay * uy + az * uz) * (1.0 - c)
    return (ox + ux * c + (ay * uz - az * uy) * s + ax * along,
            oy + uy * c + (az * ux - ax * uz) * s + ay * along,
            oz + uz * c + (ax * uy - ay * ux) * s + az * along)


class CCDSolver(Solver):
    """Cyclic coordinate descent for POSITION goals; built for ccd5, works on any chain.

    Joint limits are clamped (full-turn joints wrapped) after every single-joint turn when
    ``options.respect_limits``. When an attempt stalls, it restarts from a random
    configuration drawn from ``np.random.default_rng(options.random_seed)``, so the same
    request always gives the same answer.
    """

    name = 'ccd'

    # An attempt is abandoned when the error has not fallen by STALL_RATIO within
    # STALL_WINDOW sweeps (CCD converges linearly; a flat stretch means it is stuck).
    STALL_WINDOW = 20
    STALL_RATIO = 0.7
    # Extrapolate along consistent sweeps (see _pattern_move); off gives textbook CCD.
    ACCELERATE = True

    def __init__(self, model: ArmModel, workspace: Workspace) -> None:
        super().__init__(model, workspace)
        self.kernel = model.kernel
        self.yaw_pitch = yaw_pitch_structure(model)
        self._limiters = {True: JointLimiter(model, True), False: JointLimiter(model, False)}
        self._default_seed = JointLimiter(model).apply([0.0] * model.dof)

    # ------------------------------------------------------------------ public API
    def solve(self, position: object, orientation: object = None,
              goal: GoalType = GoalType.POSITION, seed: object = None,
              options: SolveOptions = SolveOptions()) -> IKResult:
        """Solve a POSITION request.

        Args:
            position: target tip position (3,), metres, base frame.
            orientation: ignored (CCD solves position goals only).
            goal: must be GoalType.POSITION; others give SOLVER_NOT_APPLICABLE.
            seed: starting joint positions (n,), radians; None starts from q = 0 (clamped
                into the limits).
            options: see :class:`SolveOptions`. ``max_iterations`` bounds the sweeps of
                each attempt (as rtb's ``ilimit``), ``restarts`` the number of random
                restarts (``slimit`` − 1) and ``timeout`` the whole solve,
                ``max_step`` each joint's turn per sweep (radians, 0 = no cap).

        Returns:
            IKResult; on failure ``q`` holds the best iterate (never flagged a success).
        """
        start = time.perf_counter()
        result = self._solve(position, goal, seed, options, start)
        result.solve_time = time.perf_counter() - start
        return result

    def step(self, q: object, target: object, iterations: int = 1, max_step: float = 0.0,
             respect_limits: bool = True) -> CCDStep:
        """Run ``iterations`` CCD sweeps from ``q`` towards ``target``, without restarts.

        Meant for a motion law that moves the arm a little every control tick: each tick
        calls ``step`` from the current joint state. For yaw + pitch chains the yaw first
        turns towards the target's plane (the nearer of the two alignments).

        Args:
            q: current joint positions (n,), radians.
            target: target tip position (3,), metres, base frame.
            iterations: sweeps to run (≥ 0).
            max_step: largest total change of any joint over this call, radians (a motor
                speed cap times the tick period); 0 = no cap.
            respect_limits: clamp (or wrap) to the URDF joint limits.

        Returns:
            CCDStep with the new joint positions and the remaining error.

        Raises:
            ValueError: ``q`` or ``target`` is not a finite vector of the right size,
                ``iterations`` < 0 or ``max_step`` < 0 (this is an inner-loop API: the
                caller validates requests; bad values here are programming errors).
        """
        vector, reason = check_vector(q, self.model.dof, 'q')
        if vector is None:
            raise ValueError(reason)
        goal, reason = check_vector(target, 3, 'target')
        if goal is None:
            raise ValueError(reason)
        if iterations < 0 or not (max_step >= 0.0 and math.isfinite(max_step)):
            raise ValueError(f'iterations must be >= 0 and max_step finite >= 0, got '
                             f'{iterations}, {max_step}')
        limiter = self._limiters[bool(respect_limits)]
        start_q = vector.tolist()
        current = list(start_q)
        largest = 0.0
        bounds = None
        if max_step > 0.0:
            bounds = [(value - max_step, value + max_step) for value in start_q]
        plane = self._yaw_candidates(goal.tolist()) if self.yaw_pitch is not None else None
        first = 0
        if plane:
            # Turn the yaw towards the nearer alignment, within the speed cap.
            wanted = min(plane, key=lambda angle: abs(math.remainder(angle - current[0],
                                                                     FULL_TURN)))
            change = math.remainder(wanted - current[0], FULL_TURN)
            if bounds is not None:
                change = min(max(change, -max_step), max_step)
            if iterations > 0:
                current[0] += change
                current = self._limit_one(limiter, current, 0)
                largest = abs(change)
            first = 1
        tip = self.kernel.joint_frames(current)[1]
        for _ in range(iterations):
            current, tip, moved = self._sweep(current, goal.tolist(), limiter, first, 0.0,
                                              bounds)
            largest = max(largest, moved)
        error = math.dist(tip, goal.tolist())
        return CCDStep(np.array(current), np.array(tip), error, largest)

    # ------------------------------------------------------------------ internals
    @staticmethod
    def _limit_one(limiter: JointLimiter, q: list[float], index: int) -> list[float]:
        if not limiter.active:
            return q
        value, low, high = q[index], limiter.lower[index], limiter.upper[index]
        if limiter.wraps[index]:
            value = low + math.fmod(value - low, FULL_TURN)
            if value < low:
                value += FULL_TURN
        else:
            value = min(max(value, low), high)
        q[index] = value
        return q

    def _yaw_candidates(self, target: list[float]) -> list[float]:
        """Yaw angles (radians, inside the yaw limits) that put ``target`` in the arm plane.

        Empty when the target is on the yaw axis (any yaw will do) or both alignments are
        outside the limits (then CCD turns the yaw like any other joint).
        """
        (ox, oy, oz), (ax, ay, az), (fx, fy, fz) = self.yaw_pitch
        dx, dy, dz = target[0] - ox, target[1] - oy, target[2] - oz
        along = dx * ax + dy * ay + dz * az
        hx, hy, hz = dx - along * ax, dy - along * ay, dz - along * az
        if math.sqrt(hx * hx + hy * hy + hz * hz) < 1e-9:
            return []
        # Signed angle from `forward` to the horizontal target direction about the yaw axis.
        cross = ax * (fy * hz - fz * hy) + ay * (fz * hx - fx * hz) + az * (fx * hy - fy * hx)
        angle = math.atan2(cross, fx * hx + fy * hy + fz * hz)
        low, high = self.model.lower[0], self.model.upper[0]
        candidates = []
        for base in (angle, angle + math.pi):
            for value in (base, base - FULL_TURN, base + FULL_TURN):
                if low - 1e-12 <= value <= high + 1e-12:
                    candidates.append(min(max(value, low), high))
                    break
        return candidates

    def _sweep(self, q: list[float], target: list[float], limiter: JointLimiter,
               first: int, max_step: float,
               bounds: list[tuple[float, float]] | None = None
               ) -> tuple[list[float], tuple[float, float, float], float]:
        """One CCD sweep, tip → base over joints ``first`` .. n−1.

        Returns:
            (q, tip, largest): new joint positions (same list, updated), the tip position
            they reach, and the largest single-joint turn of the sweep (radians).
        """
        frames, tip = self.kernel.joint_frames(q)
        tx, ty, tz = target
        largest = 0.0
        lower, upper, wraps, active = limiter.lower, limiter.upper, limiter.wraps, limiter.active
        for index in range(len(q) - 1, first - 1, -1):
            frame = frames[index]
            ox, oy, oz, ax, ay, az = frame
            ux, uy, uz = tip[0] - ox, tip[1] - oy, tip[2] - oz
            vx, vy, vz = tx - ox, ty - oy, tz - oz
            ua = ux * ax + uy * ay + uz * az
            va = vx * ax + vy * ay + vz * az
            # In the plane normal to the axis: a·(u'×v') = a·(u×v), u'·v' = u·v − (u·a)(v·a).
            sine = ax * (uy * vz - uz * vy) + ay * (uz * vx - ux * vz) + az * (ux * vy - uy * vx)
            cosine = ux * vx + uy * vy + uz * vz - ua * va
            if abs(sine) < 1e-15 and abs(cosine) < 1e-15:
                continue   # tip or target on the axis: this joint cannot help
            angle = math.atan2(sine, cosine)
            if max_step > 0.0:
                angle = min(max(angle, -max_step), max_step)
            old = q[index]
            value = old + angle
            if bounds is not None:
                value = min(max(value, bounds[index][0]), bounds[index][1])
            if active:
                low = lower[index]
                if wraps[index]:
                    if value < low or value >= low + FULL_TURN:
                        value = low + math.fmod(value - low, FULL_TURN)
                        if value < low:
                            value += FULL_TURN
                elif value < low:
                    value = low
                elif value > upper[index]:
                    value = upper[index]
            turn = value - old
            if turn > math.pi or turn < -math.pi:
                turn = math.remainder(turn, FULL_TURN)   # a wrap: the joint turned the short way
            if turn == 0.0:
                continue
            q[index] = value
            tip = _rotate_about(tip, frame, turn)
            if abs(turn) > largest:
                largest = abs(turn)
        return q, tip, largest

    def _solve(self, position: object, goal: object, seed: object, options: SolveOptions,
               start: float) -> IKResult:
        checked, reason = options.validated() if isinstance(options, SolveOptions) else \
            (None, 'options must be a SolveOptions')
        if checked is None:
            return IKResult(ErrorCode.INVALID_INPUT, reason)
        reason = unknown_branch(options.branch, (), self.name)
        if reason:
            return IKResult(ErrorCode.INVALID_INPUT, reason)
        try:
            goal = GoalType(goal)
        except ValueError:
            return IKResult(ErrorCode.INVALID_INPUT, f'unknown goal type {goal!r}')
        if goal != GoalType.POSITION:
            return IKResult(ErrorCode.SOLVER_NOT_APPLICABLE,
                            f'the ccd solver handles POSITION goals only, not {goal.name}; '
                            'use dls for orientation goals')
        target_vector, failure = self.workspace.check_position(position)
        if failure is not None:
            return failure
        limiter = self._limiters[bool(options.respect_limits)]
        if seed is None:
            q = list(self._default_seed)
        else:
            vector, reason = check_vector(seed, self.model.dof, 'seed')
            if vector is None:
                return IKResult(ErrorCode.INVALID_INPUT, reason)
            q = limiter.apply(vector.tolist())
        target = target_vector.tolist()
        deadline = start + options.timeout
        tolerance = options.tolerance
        candidates = self._yaw_candidates(target) if self.yaw_pitch is not None else []
        first = 1 if candidates else 0
        if candidates:
            # Prefer the alignment that turns the yaw least from the seed.
            candidates.sort(key=lambda angle: abs(math.remainder(angle - q[0], FULL_TURN)))
        rng = None
        attempts = 0
        iterations = 0
        largest = 0.0
        best: tuple[float, list[float], tuple[float, float, float]] | None = None
        timed_out = False
        max_step = options.max_step
        # Pattern moves change joints by more than one sweep would: not with a step cap.
        accelerate = max_step == 0.0 and self.ACCELERATE
        while True:
            yaw_goal = None
            if candidates:
                yaw_goal = candidates[attempts % len(candidates)]
                if max_step == 0.0 or attempts > 0:
                    # A restart jumps anyway; only the first attempt's turn is a real step.
                    if attempts == 0:
                        largest = abs(math.remainder(yaw_goal - q[0], FULL_TURN))
                    q[0] = yaw_goal
                    yaw_goal = None
            tip = self.kernel.joint_frames(q)[1]
            error = math.dist(tip, target)
            history = [error]
            attempt_start = iterations
            previous = None
            while True:
                if best is None or error < best[0]:
                    best = (error, list(q), tip)
                if error <= tolerance:
                    break
                if iterations - attempt_start >= options.max_iterations:
                    break
                if time.perf_counter() >= deadline:
                    timed_out = True
                    break
                before = list(q)
                if yaw_goal is not None:
                    # With a per-step cap the yaw turns towards its alignment gradually.
                    change = math.remainder(yaw_goal - q[0], FULL_TURN)
                    change = min(max(change, -max_step), max_step)
                    q[0] += change
                    q = self._limit_one(limiter, q, 0)
                    if abs(change) < max_step:
                        yaw_goal = None
                q, tip, moved = self._sweep(q, target, limiter, first, max_step)
                iterations += 1
                error = math.dist(tip, target)
                if accelerate and previous is not None:
                    q, tip, error = self._pattern_move(q, before, previous, tip, error,
                                                       target, limiter)
                previous = before
                # Each joint turns once per sweep, so the net change is the joint's step
                # (the short way round for wrapped joints).
                for new, old in zip(q, before, strict=True):
                    turn = abs(math.remainder(new - old, FULL_TURN))
                    if turn > largest:
                        largest = turn
                if max_step > 0.0 and moved >= max_step * (1.0 - 1e-12):
                    history = [error]   # capped turns make progress linear by design
                else:
                    history.append(error)
                if len(history) > self.STALL_WINDOW and \
                        error > self.STALL_RATIO * history[-1 - self.STALL_WINDOW]:
                    break
            if error <= tolerance:
                return self._result(ErrorCode.OK, 'converged', q, tip, error, iterations,
                                    largest)
            if timed_out or attempts >= options.restarts:
                break
            attempts += 1
            if rng is None:
                rng = np.random.default_rng(options.random_seed)
            q = limiter.random(rng)
        error, q, tip = best
        if timed_out:
            code = ErrorCode.TIMED_OUT
            reason = (f'timed out after {options.timeout:.3g} s ({iterations} sweeps, '
                      f'{attempts} restarts); best position error {error:.3g} m')
        else:
            code = ErrorCode.NOT_CONVERGED
            reason = (f'did not converge in {iterations} sweeps and {attempts} restarts; '
                      f'best position error {error:.3g} m')
        return self._result(code, reason, q, tip, error, iterations, largest)

    def _pattern_move(self, q: list[float], before: list[float], previous: list[float],
                      tip: tuple[float, float, float], error: float, target: list[float],
                      limiter: JointLimiter
                      ) -> tuple[list[float], tuple[float, float, float], float]:
        """Hooke–Jeeves pattern move: extrapolate along the sweep when sweeps keep agreeing.

        Near a stretched or folded pose CCD zig-zags: every sweep moves the joints the same
        way by a shrinking amount, so plain CCD converges sublinearly. When the last two
        sweeps point the same way (cosine > 0.9), try q + α·Δ for α = 1, 2, 4, ... and keep
        the best point that lowers the error. Costs a few FK calls, never raises the error.
        """
        delta = [a - b for a, b in zip(q, before, strict=True)]
        last = [a - b for a, b in zip(before, previous, strict=True)]
        dot = sum(a * b for a, b in zip(delta, last, strict=True))
        norms = math.sqrt(sum(a * a for a in delta) * sum(b * b for b in last))
        if norms == 0.0 or dot < 0.9 * norms:
            return q, tip, error
        best_q, best_tip, best_error = q, tip, error
        scale = 1.0
        for _ in range(12):
            trial = limiter.apply([a + scale * b for a, b in zip(q, delta, strict=True)])
            pose = self.kernel.pose(trial)
            trial_error = math.dist(pose[:3], target)
            if trial_error >= best_error:
                break
            best_q, best_tip, best_error = trial, pose[:3], trial_error
            scale *= 2.0
        return best_q, best_tip, best_error

    @staticmethod
    def _result(code: ErrorCode, reason: str, q: list[float], tip: Sequence[float],
                error: float, iterations: int, largest: float) -> IKResult:
        return IKResult(code, reason, q=np.array(q), tip_position=np.array(tip),
                        position_error=error, iterations=iterations, max_joint_step=largest)
