"""Damped least squares (Levenberg–Marquardt) IK for any serial chain.

A numeric solver calls FK and the Jacobian hundreds of times per request: it uses the
model's compiled kernel (:mod:`arm_kinematics.model.kernel`) and an unrolled damped step
compiled here once per task size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import math
import time

import numpy as np

from arm_kinematics.common.transforms import quaternion_to_matrix
from arm_kinematics.ik.result import check_vector, ErrorCode, GoalType, IKResult
from arm_kinematics.ik.solvers.base import SolveOptions, Solver, Workspace
from arm_kinematics.model.arm_model import ArmModel, FULL_TURN

# --------------------------------------------------------------------------------------
# Damped step
# --------------------------------------------------------------------------------------

def _step_source(rows: int, dof: int) -> str:
    """Python source of ``dls_step(jacobian, error, damping_sq)`` for an m×n task.

    Unrolled Δq = Jᵀ (J Jᵀ + λ² I)⁻¹ e by Cholesky, in plain floats: for m, n ≤ 6 this is
    a few hundred multiplications, cheaper in straight-line Python than the call overhead
    of numpy's matmul and ``linalg.solve``. When m > n the equal form
    (Jᵀ J + λ² I)⁻¹ Jᵀ e is used: the smaller system, and better conditioned.
    """
    lines = ['def dls_step(jacobian, error, damping_sq):']
    add = lines.append
    j = [[f'j{r}_{c}' for c in range(dof)] for r in range(rows)]
    add('    ' + ', '.join(name for row in j for name in row) + (',' if rows * dof == 1 else '')
        + ' = jacobian')
    add('    ' + ', '.join(f'e{r}' for r in range(rows)) + (',' if rows == 1 else '')
        + ' = error')
    task_space = rows <= dof
    size = rows if task_space else dof
    for r in range(size):
        for c in range(r + 1):
            if task_space:   # (J Jᵀ)_rc
                terms = ' + '.join(f'{j[r][k]}*{j[c][k]}' for k in range(dof))
            else:            # (Jᵀ J)_rc
                terms = ' + '.join(f'{j[k][r]}*{j[k][c]}' for k in range(rows))
            add(f'    a{r}_{c} = {terms}' + (' + damping_sq' if r == c else ''))
    if task_space:
        rhs = [f'e{r}' for r in range(size)]
    else:
        for c in range(dof):   # Jᵀ e
            add(f'    b{c} = ' + ' + '.join(f'{j[k][c]}*e{k}' for k in range(rows)))
        rhs = [f'b{c}' for c in range(size)]
    # Cholesky A = L Lᵀ. A pivot can only reach zero by rounding (A ≥ λ² I); flooring it
    # gives a huge step that the caller's descent test rejects.
    for c in range(size):
        sums = ''.join(f' - l{c}_{k}*l{c}_{k}' for k in range(c))
        add(f'    d = a{c}_{c}{sums}')
        add(f'    l{c}_{c} = sqrt(d) if d > 1e-300 else 1e-150')
        add(f'    i{c} = 1.0 / l{c}_{c}')
        for r in range(c + 1, size):
            sums = ''.join(f' - l{r}_{k}*l{c}_{k}' for k in range(c))
            add(f'    l{r}_{c} = (a{r}_{c}{sums}) * i{c}')
    for r in range(size):   # forward: L y = rhs
        sums = ''.join(f' - l{r}_{k}*y{k}' for k in range(r))
        add(f'    y{r} = ({rhs[r]}{sums}) * i{r}')
    for r in reversed(range(size)):   # back: Lᵀ x = y
        sums = ''.join(f' - l{k}_{r}*x{k}' for k in range(r + 1, size))
        add(f'    x{r} = (y{r}{sums}) * i{r}')
    if task_space:
        columns = ', '.join(' + '.join(f'{j[r][c]}*x{r}' for r in range(rows))
                            for c in range(dof))
    else:
        columns = ', '.join(f'x{c}' for c in range(dof))
    add(f'    return [{columns}]')
    return '\n'.join(lines) + '\n'


def compile_step(rows: int, dof: int) -> Callable[[Sequence[float], Sequence[float], float],
                                                   list[float]]:
    """A compiled ``dls_step(jacobian, error, damping_sq) -> Δq`` for an m×n task.

    Args:
        rows: task rows m (3 position, 5 tool-down, 6 full pose).
        dof: joints n.

    Returns:
        Function taking the Jacobian as a row-major sequence of m·n floats, the error as m
        floats and λ² (> 0), returning Δq = Jᵀ (J Jᵀ + λ² I)⁻¹ e as a list of n floats.
    """
    namespace: dict[str, object] = {'sqrt': math.sqrt}
    # The source holds only generated names: nothing from outside reaches exec.
    exec(compile(_step_source(rows, dof), f'<dls_step {rows}x{dof}>', 'exec'), namespace)
    return namespace['dls_step']


# --------------------------------------------------------------------------------------
# Helpers shared with the CCD solver and the experiments
# --------------------------------------------------------------------------------------

def damped_least_squares_step(jacobian: np.ndarray, error: np.ndarray,
                              damping: float) -> np.ndarray:
    """The plain DLS step Δq = Jᵀ (J Jᵀ + λ² I)⁻¹ e.

    Args:
        jacobian: task Jacobian (m, n).
        error: task error e (m,), metres / radians.
        damping: λ (> 0), in the units of the Jacobian's singular values (metres).

    Returns:
        Joint step (n,), radians.
    """
    normal = jacobian @ jacobian.T
    normal[np.diag_indices_from(normal)] += damping * damping
    return jacobian.T @ np.linalg.solve(normal, error)


class JointLimiter:
    """Applies the joint limits of a model to a list of floats: clamp, or wrap full turns.

    Joints whose range spans a full turn are wrapped back inside their limits by whole
    turns instead of clamped: a clamp there would stop the solver at an artificial wall.
    Measured on six_axis full-pose goals (1000 FK targets, one attempt, no restarts): 66 %
    solved with wrapping against 61 % with clamping from q = 0, 87 % against 66 % from the
    nearest stored pose; with 20 restarts 100 % against 99.8 %. The default is 200: SO-101
    position goals near its base needed up to 100 (1 in 400 failed with 20); the request
    timeout bounds the time.
    """

    def __init__(self, model: ArmModel, respect_limits: bool = True) -> None:
        self.lower = model.lower.tolist()
        self.upper = model.upper.tolist()
        self.wraps = model.wraps.tolist()
        self.active = respect_limits
        self.indices = range(model.dof)

    def apply(self, q: list[float]) -> list[float]:
        """``q`` inside the limits (new list), or ``q`` itself when limits are ignored."""
        if not self.active:
            return q
        out = []
        for value, low, high, wraps in zip(q, self.lower, self.upper, self.wraps, strict=True):
            if wraps:
                # The fewest full turns that bring the value inside the limits: a joint of
                # ±2π (UR) keeps 0.3 rad as 0.3, not 0.3 − 2π.
                if value < low:
                    value += FULL_TURN * math.ceil((low - value) / FULL_TURN)
                elif value > high:
                    value -= FULL_TURN * math.ceil((value - high) / FULL_TURN)
            elif value < low:
                value = low
            elif value > high:
                value = high
            out.append(value)
        return out

    def random(self, rng: np.random.Generator) -> list[float]:
        """A configuration drawn uniformly inside the limits (restart seeds)."""
        return rng.uniform(self.lower, self.upper).tolist()


def parse_orientation(orientation: object) -> tuple[list[float] | None, str]:
    """Rotation of a target as a row-major list of 9 floats, or (None, reason).

    Accepts a quaternion (x, y, z, w) as in geometry_msgs, normalised here, or a 3×3
    rotation matrix (checked for orthonormality to 1e-6).
    """
    try:
        array = np.asarray(orientation, dtype=float)
    except (TypeError, ValueError):
        return None, 'target orientation is not numeric'
    if array.size == 4:
        vector, reason = check_vector(array, 4, 'target orientation quaternion')
        if vector is None:
            return None, reason
        norm = math.sqrt(float(vector @ vector)) if np.all(np.abs(vector) < 1e150) else math.inf
        if not 1e-6 < norm < 1e150:
            return None, f'target orientation quaternion has norm {norm:.3g} (must be > 0)'
        vector = vector / norm
        return quaternion_to_matrix(*vector).reshape(-1).tolist(), ''
    if array.shape == (3, 3):
        vector, reason = check_vector(array, 9, 'target orientation matrix')
        if vector is None:
            return None, reason
        matrix = vector.reshape(3, 3)
        if np.abs(matrix @ matrix.T - np.eye(3)).max() > 1e-6 or np.linalg.det(matrix) < 0:
            return None, 'target orientation matrix is not a rotation'
        return vector.tolist(), ''
    return None, (f'target orientation has {array.size} values; expected a quaternion '
                  '(x, y, z, w) or a 3x3 rotation matrix')


def rotation_error_fast(current: Sequence[float], target: Sequence[float]
                        ) -> tuple[float, float, float, float]:
    """Angle-axis vector (radians) rotating ``current`` onto ``target`` and its angle.

    Same result as :func:`arm_kinematics.common.transforms.rotation_error`, in plain floats.

    Args:
        current, target: rotation matrices as row-major sequences of 9 floats.

    Returns:
        (ex, ey, ez, angle): world-frame angle-axis vector and its length, radians.
    """
    c00, c01, c02, c10, c11, c12, c20, c21, c22 = current
    t00, t01, t02, t10, t11, t12, t20, t21, t22 = target
    # delta = target · currentᵀ
    d00 = t00 * c00 + t01 * c01 + t02 * c02
    d11 = t10 * c10 + t11 * c11 + t12 * c12
    d22 = t20 * c20 + t21 * c21 + t22 * c22
    d01 = t00 * c10 + t01 * c11 + t02 * c12
    d10 = t10 * c00 + t11 * c01 + t12 * c02
    d02 = t00 * c20 + t01 * c21 + t02 * c22
    d20 = t20 * c00 + t21 * c01 + t22 * c02
    d12 = t10 * c20 + t11 * c21 + t12 * c22
    d21 = t20 * c10 + t21 * c11 + t22 * c12
    vx, vy, vz = d21 - d12, d02 - d20, d10 - d01
    cos_angle = (d00 + d11 + d22 - 1.0) * 0.5
    sin_angle = 0.5 * math.sqrt(vx * vx + vy * vy + vz * vz)
    # atan2 keeps full precision at both small angles and near a half turn.
    angle = math.atan2(sin_angle, cos_angle)
    if angle < 1e-9:
        return 0.5 * vx, 0.5 * vy, 0.5 * vz, angle
    if math.pi - angle < 1e-6:
        # Near a half turn the skew part vanishes; the axis is in the symmetric part.
        diagonal = ((d00 + 1.0) * 0.5, (d11 + 1.0) * 0.5, (d22 + 1.0) * 0.5)
        column = max(range(3), key=diagonal.__getitem__)
        symmetric = ((d00 + 1.0) * 0.5, (d01 + d10) * 0.25, (d02 + d20) * 0.25,
                     (d01 + d10) * 0.25, (d11 + 1.0) * 0.5, (d12 + d21) * 0.25,
                     (d02 + d20) * 0.25, (d12 + d21) * 0.25, (d22 + 1.0) * 0.5)
        ax, ay, az = symmetric[column], symmetric[3 + column], symmetric[6 + column]
        # Pick the sign that agrees with the (small) skew part, so the result is continuous.
        if ax * vx + ay * vy + az * vz < 0.0:
            ax, ay, az = -ax, -ay, -az
        norm = math.sqrt(ax * ax + ay * ay + az * az)
        scale = angle / norm
        return ax * scale, ay * scale, az * scale, angle
    scale = angle / (2.0 * sin_angle)
    return vx * scale, vy * scale, vz * scale, angle


def _tool_down_rows(pose: Sequence[float]) -> tuple[float, float, list[float], list[float]]:
    """Tool-down orientation error in the two directions that can change the tool Z axis.

    Returns:
        (e_u, e_v, u, v): the angle-axis error that turns the tool Z axis onto −Z of the
        base, expressed along two unit vectors u, v perpendicular to the tool Z axis
        (rotation about the tool axis itself leaves the constraint unchanged, so that row
        is left out and the task has 5 rows).
    """
    zx, zy, zz = pose[5], pose[8], pose[11]
    horizontal = math.hypot(zx, zy)
    angle = math.atan2(horizontal, -zz)
    if horizontal > 1e-12:
        scale = angle / horizontal
        ex, ey = -zy * scale, zx * scale
    elif zz < 0.0:
        ex = ey = 0.0   # already pointing down
    else:
        ex, ey = math.pi, 0.0   # pointing straight up: any horizontal axis turns it down
    # u ⟂ z from the world axis least aligned with z, v = z × u.
    if abs(zx) < 0.9:
        ux, uy, uz = 0.0, zz, -zy          # z × X
    else:
        ux, uy, uz = -zz, 0.0, zx          # z × Y ... (y×z sign irrelevant: any basis works)
    norm = math.sqrt(ux * ux + uy * uy + uz * uz)
    ux, uy, uz = ux / norm, uy / norm, uz / norm
    vx, vy, vz = zy * uz - zz * uy, zz * ux - zx * uz, zx * uy - zy * ux
    return ex * ux + ey * uy, ex * vx + ey * vy, [ux, uy, uz], [vx, vy, vz]


def tool_down_angle(pose: Sequence[float]) -> float:
    """Angle (radians) between the tool Z axis of a kernel pose and −Z of the base."""
    return math.atan2(math.hypot(pose[5], pose[8]), -pose[11])


class DLSSolver(Solver):
    """Damped least squares with Levenberg–Marquardt damping control, for any chain.

    Each iteration solves Δq = Jᵀ (J Jᵀ + λ² I)⁻¹ e for the task error e (3 rows for a
    position goal, 5 for tool-down, 6 for a full pose) and tries q + Δq. A step that
    lowers |e| is kept and λ² shrinks towards Gauss–Newton (fast near the answer); a step
    that does not is thrown away and λ² grows (a short, gradient-like step), so the
    solver never walks uphill and stays stable next to singularities. ``options.damping``
    is the starting λ. Joints are clamped to their limits, or wrapped when their range is
    a full turn. When an attempt stalls (λ keeps growing, or |e| stops falling) the solver
    restarts from a random configuration drawn with ``options.random_seed``.
    """

    supports_prismatic = True

    name = 'dls'

    # λ² is divided by this on an accepted step and multiplied on a rejected one.
    DAMPING_DOWN = 0.2
    DAMPING_UP = 10.0
    MIN_DAMPING_SQ = 1e-12
    # An attempt is abandoned when λ² passes this (no descent direction left: a local
    # minimum, usually against a joint limit) ...
    MAX_DAMPING_SQ = 1e4
    # ... or when the error has not fallen by STALL_RATIO within STALL_WINDOW iterations.
    STALL_WINDOW = 10
    STALL_RATIO = 0.5
    SEED_TABLE_SIZE = 512

    def __init__(self, model: ArmModel, workspace: Workspace) -> None:
        super().__init__(model, workspace)
        self.kernel = model.kernel
        self._limiters = {True: JointLimiter(model, True), False: JointLimiter(model, False)}
        self._steps = {rows: compile_step(rows, model.dof) for rows in (3, 5, 6)}
        # Seed table: FK of a fixed set of random configurations. A request without a seed
        # starts from the stored configuration whose tool pose is nearest the target, which
        # halves the median iteration count against starting from q = 0 (a stretched,
        # singular pose for most arms). Fixed generator seed: solves stay deterministic.
        table = model.random_configurations(self.SEED_TABLE_SIZE, np.random.default_rng(0))
        poses = np.array([self.kernel.pose(row) for row in table.tolist()])
        self._table_q = table
        # Weight (metres per unit of rotation-matrix difference) of orientation in the
        # nearest-pose look-up: a tenth of the reach, so position dominates but a flipped
        # wrist still counts.
        weight = 0.1 * max(workspace.max_reach, 1e-3)
        # Nearest by |f − g|² = |f|² − 2 f·g + |g|²: one matrix-vector product per request.
        # Features: position; position + weighted rotation; position + weighted tool Z axis.
        features = {
            GoalType.POSITION: poses[:, :3],
            GoalType.FULL_POSE: np.hstack([poses[:, :3], weight * poses[:, 3:]]),
            GoalType.TOOL_DOWN: np.hstack([poses[:, :3], weight * poses[:, [5, 8, 11]]]),
        }
        self._table = {goal: (2.0 * f, np.square(f).sum(axis=1)) for goal, f in features.items()}
        self._orientation_weight = weight

    # ------------------------------------------------------------------ public API
    def solve(self, position: object, orientation: object = None,
              goal: GoalType = GoalType.POSITION, seed: object = None,
              options: SolveOptions = SolveOptions()) -> IKResult:
        """Solve one IK request.

        Args:
            position: target tip position (3,), metres, base frame.
            orientation: target tool orientation for FULL_POSE: quaternion (x, y, z, w) or
                3×3 rotation matrix; ignored for POSITION and TOOL_DOWN.
            goal: POSITION, TOOL_DOWN (tool Z axis along −Z of the base) or FULL_POSE.
            seed: starting joint positions (n,), radians; None starts from the stored
                configuration (one of SEED_TABLE_SIZE fixed random ones) whose tool pose is
                nearest the target.
            options: see :class:`SolveOptions`; ``max_iterations`` bounds the iterations of
                each attempt (as rtb's ``ilimit``), ``restarts`` the number of random
                restarts (``slimit`` − 1) and ``timeout`` the whole solve.

        Returns:
            IKResult; on failure ``q`` holds the best iterate (never flagged a success).
        """
        start = time.perf_counter()
        result = self._solve(position, orientation, goal, seed, options, start)
        result.solve_time = time.perf_counter() - start
        return result

    # ------------------------------------------------------------------ internals
    def _prepare(self, position: object, orientation: object, goal: object, seed: object,
                 options: SolveOptions) -> tuple[IKResult | None, tuple]:
        checked, reason = options.validated() if isinstance(options, SolveOptions) else \
            (None, 'options must be a SolveOptions')
        if checked is None:
            return IKResult(ErrorCode.INVALID_INPUT, reason), ()
        try:
            goal = GoalType(goal)
        except ValueError:
            return IKResult(ErrorCode.INVALID_INPUT, f'unknown goal type {goal!r}'), ()
        target, failure = self.workspace.check_position(position)
        if failure is not None:
            return failure, ()
        rotation = None
        if goal == GoalType.FULL_POSE:
            if orientation is None:
                return IKResult(ErrorCode.INVALID_INPUT,
                                'a FULL_POSE goal needs a target orientation'), ()
            rotation, reason = parse_orientation(orientation)
            if rotation is None:
                return IKResult(ErrorCode.INVALID_INPUT, reason), ()
        limiter = self._limiters[bool(options.respect_limits)]
        if seed is None:
            start_q = self._nearest_seed(target, rotation, goal)
        else:
            vector, reason = check_vector(seed, self.model.dof, 'seed')
            if vector is None:
                return IKResult(ErrorCode.INVALID_INPUT, reason), ()
            start_q = limiter.apply(vector.tolist())
        return None, (target.tolist(), rotation, goal, start_q, limiter)

    def _nearest_seed(self, target: np.ndarray, rotation: list[float] | None,
                      goal: GoalType) -> list[float]:
        """The stored configuration whose tool pose is nearest the goal (see __init__)."""
        doubled, squares = self._table[goal]
        weight = self._orientation_weight
        if goal == GoalType.FULL_POSE:
            query = np.concatenate([target, np.multiply(rotation, weight)])
        elif goal == GoalType.TOOL_DOWN:
            query = np.concatenate([target, (0.0, 0.0, -weight)])
        else:
            query = target
        return self._table_q[int(np.argmin(squares - doubled @ query))].tolist()

    def _solve(self, position: object, orientation: object, goal: object, seed: object,
               options: SolveOptions, start: float) -> IKResult:
        failure, prepared = self._prepare(position, orientation, goal, seed, options)
        if failure is not None:
            return failure
        target, rotation, goal, q, limiter = prepared
        deadline = start + options.timeout
        n = self.model.dof
        kernel = self.kernel
        tolerance = options.tolerance
        orientation_tolerance = options.orientation_tolerance
        max_step = options.max_step
        full = goal == GoalType.FULL_POSE
        tool_down = goal == GoalType.TOOL_DOWN
        rows = 6 if full else 5 if tool_down else 3
        dls_step = self._steps[rows]
        tx, ty, tz = target
        linear = 3 * n

        def evaluate(q: list[float]) -> tuple:
            # Everything in plain floats: pose, task error, task Jacobian (row-major list).
            pose, jac = kernel.pose_jacobian(q)
            ex, ey, ez = tx - pose[0], ty - pose[1], tz - pose[2]
            pos_err = math.sqrt(ex * ex + ey * ey + ez * ez)
            if full:
                wx, wy, wz, rot_err = rotation_error_fast(pose[3:], rotation)
                error = (ex, ey, ez, wx, wy, wz)
            elif tool_down:
                eu, ev, (ux, uy, uz), (vx, vy, vz) = _tool_down_rows(pose)
                rot_err = math.hypot(eu, ev)
                error = (ex, ey, ez, eu, ev)
                angular = list(zip(jac[linear:linear + n], jac[linear + n:linear + 2 * n],
                                   jac[linear + 2 * n:], strict=True))
                jac = (jac[:linear] + [ux * a + uy * b + uz * c for a, b, c in angular]
                       + [vx * a + vy * b + vz * c for a, b, c in angular])
            else:
                rot_err = 0.0
                error = (ex, ey, ez)
                jac = jac[:linear]
            return pose, error, jac, pos_err, rot_err, pos_err * pos_err + rot_err * rot_err

        rng = None
        attempts = 0
        iterations = 0
        largest_step = 0.0
        best = None   # (cost, q, pose, pos_err, rot_err)
        timed_out = False
        while True:
            pose, error, jac, pos_err, rot_err, cost = evaluate(q)
            if best is None or cost < best[0]:
                best = (cost, q, pose, pos_err, rot_err)
            damping_sq = options.damping * options.damping
            history = [cost]
            attempt_start = iterations
            while True:
                if pos_err <= tolerance and rot_err <= orientation_tolerance:
                    break
                if iterations - attempt_start >= options.max_iterations:
                    break
                if time.perf_counter() >= deadline:
                    timed_out = True
                    break
                step = dls_step(jac, error, damping_sq)
                capped = False
                if max_step > 0.0:
                    # Scale the whole step (not joint by joint) so its direction is kept.
                    biggest = max(max(step), -min(step))
                    if biggest > max_step:
                        scale = max_step / biggest
                        step = [value * scale for value in step]
                        capped = True
                candidate = limiter.apply([a + b for a, b in zip(q, step, strict=True)])
                iterations += 1
                trial = evaluate(candidate)
                if trial[5] < cost:
                    moved = max(abs(a - b) for a, b in zip(candidate, q, strict=True))
                    if moved > math.pi:   # a wrapped joint: the motion is the short way round
                        moved = max(abs(math.remainder(a - b, FULL_TURN))
                                    for a, b in zip(candidate, q, strict=True))
                    largest_step = max(largest_step, moved)
                    q = candidate
                    pose, error, jac, pos_err, rot_err, cost = trial
                    damping_sq = max(damping_sq * self.DAMPING_DOWN, self.MIN_DAMPING_SQ)
                    if cost < best[0]:
                        best = (cost, q, pose, pos_err, rot_err)
                else:
                    damping_sq *= self.DAMPING_UP
                    if damping_sq > self.MAX_DAMPING_SQ:
                        break
                if capped:
                    # Capped steps make progress linear by design: not a stall.
                    history = [cost]
                else:
                    history.append(cost)
                if len(history) > self.STALL_WINDOW and \
                        cost > self.STALL_RATIO * history[-1 - self.STALL_WINDOW]:
                    break
            if pos_err <= tolerance and rot_err <= orientation_tolerance:
                return self._result(ErrorCode.OK, 'converged', q, pose, pos_err, rot_err,
                                    iterations, largest_step)
            if timed_out or attempts >= options.restarts:
                break
            attempts += 1
            if rng is None:
                rng = np.random.default_rng(options.random_seed)
            q = limiter.random(rng)
        _, q, pose, pos_err, rot_err = best
        what = f'position error {pos_err:.3g} m'
        if goal != GoalType.POSITION:
            what += f', orientation error {rot_err:.3g} rad'
        if timed_out:
            code = ErrorCode.TIMED_OUT
            reason = (f'timed out after {options.timeout:.3g} s ({iterations} iterations, '
                      f'{attempts} restarts); best {what}')
        else:
            code = ErrorCode.NOT_CONVERGED
            reason = (f'did not converge in {iterations} iterations and {attempts} restarts; '
                      f'best {what}')
        return self._result(code, reason, q, pose, pos_err, rot_err, iterations, largest_step)

    @staticmethod
    def _result(code: ErrorCode, reason: str, q: list[float], pose: Sequence[float],
                pos_err: float, rot_err: float, iterations: int,
                largest_step: float) -> IKResult:
        return IKResult(code, reason, q=np.array(q), tip_position=np.array(pose[:3]),
                        position_error=pos_err, orientation_error=rot_err,
                        iterations=iterations, max_joint_step=largest_step)
