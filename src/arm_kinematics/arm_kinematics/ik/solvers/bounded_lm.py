"""The compiled inner loop of the numeric IK solver: bounded Levenberg–Marquardt attempts.

Why compiled: measured with TRAC-IK's protocol (full pose, tolerance 1e-5, 5 ms), the
straight-line Python solver spent about 19 µs per iteration, so a hard target got only
~250 iterations before the clock ran out, and its misses were attempts whose best iterate
sat on a joint limit. Compiled (one FK + Jacobian + step below a microsecond on a 7-joint
arm), an attempt takes tens of microseconds and a 5 ms budget holds hundreds of restarts.

Why bounded: clipping a step at a joint limit throws away the part of the step that
joint was to make, so the attempt stalls against the limit. Here the joints that a step
would carry out of range stop at their limit and the step is solved again for the others,
which take up the error (a bounded Gauss–Newton step); a joint at a limit whose gradient
points outward is held (the active set). Joints whose range is a full turn or more wrap
by whole turns instead.

Damping: μ = λ·|e|² + μ₀ — proportional to the squared error, as in Robotics Toolbox's
ik_LM (Chan–Lawrence): Gauss–Newton near the answer (quadratic convergence), gradient-like
far from it; λ adapts as in Levenberg–Marquardt (×DOWN on a step that lowers |e|, ×UP on
one that does not, which is not taken). An attempt ends on convergence, when λ passes
MAX_LAMBDA, when |e|² has not halved in STALL_WINDOW iterations, or after
``max_iterations``; the caller then restarts from the next seed.
"""

from __future__ import annotations

import math

import numpy as np

from arm_kinematics.model.kernel import chain_walk, compiled, jacobian_from_walk

POSITION, TOOL_DOWN, FULL_POSE = 0, 1, 2      # GoalType values
ROWS = {POSITION: 3, TOOL_DOWN: 5, FULL_POSE: 6}
# Outcome of run_attempts.
CONVERGED, BUDGET_USED, SEEDS_USED = 1, 0, 2
DOWN, UP = 0.3, 10.0
MAX_LAMBDA = 1e8
MIN_DAMPING = 1e-12
STALL_WINDOW = 10
STALL_RATIO = 0.5
FULL_TURN = 2.0 * math.pi
# best: [|e|², position error, orientation error, largest joint move in one step]
BEST_COST, BEST_POSITION, BEST_ORIENTATION, BEST_STEP = 0, 1, 2, 3


@compiled
def rotation_error(pose, target, out):
    """Angle-axis vector (world frame) turning the pose's rotation onto the target's,
    written to ``out`` (3,); returns its angle. Rotations row-major at [3:12]."""
    c = pose
    t = target
    d00 = t[3] * c[3] + t[4] * c[4] + t[5] * c[5]
    d11 = t[6] * c[6] + t[7] * c[7] + t[8] * c[8]
    d22 = t[9] * c[9] + t[10] * c[10] + t[11] * c[11]
    d01 = t[3] * c[6] + t[4] * c[7] + t[5] * c[8]
    d10 = t[6] * c[3] + t[7] * c[4] + t[8] * c[5]
    d02 = t[3] * c[9] + t[4] * c[10] + t[5] * c[11]
    d20 = t[9] * c[3] + t[10] * c[4] + t[11] * c[5]
    d12 = t[6] * c[9] + t[7] * c[10] + t[8] * c[11]
    d21 = t[9] * c[6] + t[10] * c[7] + t[11] * c[8]
    vx, vy, vz = d21 - d12, d02 - d20, d10 - d01
    cosine = (d00 + d11 + d22 - 1.0) * 0.5
    sine = 0.5 * math.sqrt(vx * vx + vy * vy + vz * vz)
    angle = math.atan2(sine, cosine)   # full precision at both ends
    if angle < 1e-9:
        out[0], out[1], out[2] = 0.5 * vx, 0.5 * vy, 0.5 * vz
        return angle
    if math.pi - angle < 1e-6:
        # Near a half turn the skew part vanishes: the axis is in the symmetric part.
        s00, s11, s22 = (d00 + 1.0) * 0.5, (d11 + 1.0) * 0.5, (d22 + 1.0) * 0.5
        s01, s02, s12 = (d01 + d10) * 0.25, (d02 + d20) * 0.25, (d12 + d21) * 0.25
        if s00 >= s11 and s00 >= s22:
            ax, ay, az = s00, s01, s02
        elif s11 >= s22:
            ax, ay, az = s01, s11, s12
        else:
            ax, ay, az = s02, s12, s22
        if ax * vx + ay * vy + az * vz < 0.0:
            ax, ay, az = -ax, -ay, -az
        scale = angle / math.sqrt(ax * ax + ay * ay + az * az)
        out[0], out[1], out[2] = ax * scale, ay * scale, az * scale
        return angle
    scale = angle / (2.0 * sine)
    out[0], out[1], out[2] = vx * scale, vy * scale, vz * scale
    return angle


@compiled
def task(q, chain, goal, target, pose, error, task_jacobian, frames, axes, jacobian, spin):
    """The task error (3, 5 or 6 rows) and its Jacobian at ``q``; returns (position error,
    orientation error). Tool down keeps the two rows that turn the tool Z axis."""
    n = q.shape[0]
    chain_walk(q, chain, frames, axes, pose)
    jacobian_from_walk(frames, axes, chain, pose, jacobian)
    ex, ey, ez = target[0] - pose[0], target[1] - pose[1], target[2] - pose[2]
    error[0], error[1], error[2] = ex, ey, ez
    for j in range(n):
        task_jacobian[0, j] = jacobian[0, j]
        task_jacobian[1, j] = jacobian[1, j]
        task_jacobian[2, j] = jacobian[2, j]
    position = math.sqrt(ex * ex + ey * ey + ez * ez)
    if goal == FULL_POSE:
        angle = rotation_error(pose, target, spin)
        error[3], error[4], error[5] = spin[0], spin[1], spin[2]
        for j in range(n):
            task_jacobian[3, j] = jacobian[3, j]
            task_jacobian[4, j] = jacobian[4, j]
            task_jacobian[5, j] = jacobian[5, j]
        return position, angle
    if goal == TOOL_DOWN:
        zx, zy, zz = pose[5], pose[8], pose[11]
        horizontal = math.hypot(zx, zy)
        angle = math.atan2(horizontal, -zz)
        if horizontal > 1e-12:
            scale = angle / horizontal
            wx, wy = -zy * scale, zx * scale
        elif zz < 0.0:
            wx, wy = 0.0, 0.0
        else:
            wx, wy = math.pi, 0.0    # straight up: any horizontal axis turns it down
        # u ⟂ z from the world axis least aligned with z, v = z × u.
        if abs(zx) < 0.9:
            ux, uy, uz = 0.0, zz, -zy
        else:
            ux, uy, uz = -zz, 0.0, zx
        norm = math.sqrt(ux * ux + uy * uy + uz * uz)
        ux, uy, uz = ux / norm, uy / norm, uz / norm
        vx, vy, vz = zy * uz - zz * uy, zz * ux - zx * uz, zx * uy - zy * ux
        error[3] = wx * ux + wy * uy
        error[4] = wx * vx + wy * vy
        for j in range(n):
            task_jacobian[3, j] = ux * jacobian[3, j] + uy * jacobian[4, j] + uz * jacobian[5, j]
            task_jacobian[4, j] = vx * jacobian[3, j] + vy * jacobian[4, j] + vz * jacobian[5, j]
        return position, angle
    return position, 0.0


@compiled
def damped_step(task_jacobian, error, rows, free, damping, step, normal, work):
    """step = J_fᵀ (J_f J_fᵀ + damping·I)⁻¹ e over the free columns (0 for held joints),
    by Cholesky of the rows × rows normal matrix."""
    n = task_jacobian.shape[1]
    for r in range(rows):
        for c in range(r + 1):
            total = 0.0
            for k in range(n):
                if free[k]:
                    total += task_jacobian[r, k] * task_jacobian[c, k]
            normal[r, c] = total
        normal[r, r] += damping
    for c in range(rows):
        pivot = normal[c, c]
        for k in range(c):
            pivot -= normal[c, k] * normal[c, k]
        # A pivot reaches zero only by rounding (the matrix is ≥ damping·I): flooring it
        # gives a huge step that the descent test rejects.
        pivot = math.sqrt(pivot) if pivot > 1e-300 else 1e-150
        normal[c, c] = pivot
        for r in range(c + 1, rows):
            total = normal[r, c]
            for k in range(c):
                total -= normal[r, k] * normal[c, k]
            normal[r, c] = total / pivot
    for r in range(rows):
        total = error[r]
        for k in range(r):
            total -= normal[r, k] * work[k]
        work[r] = total / normal[r, r]
    for r in range(rows - 1, -1, -1):
        total = work[r]
        for k in range(r + 1, rows):
            total -= normal[k, r] * work[k]
        work[r] = total / normal[r, r]
    for k in range(n):
        total = 0.0
        if free[k]:
            for r in range(rows):
                total += task_jacobian[r, k] * work[r]
        step[k] = total


@compiled
def wrap_into(value, low, high):
    """``value`` moved by the fewest whole turns into [low, high] (a ±2π UR joint keeps
    0.3 as 0.3)."""
    if value < low:
        value += FULL_TURN * math.ceil((low - value) / FULL_TURN)
    elif value > high:
        value -= FULL_TURN * math.ceil((value - high) / FULL_TURN)
    return value


@compiled
def into_range(value, low, high, wraps):
    if wraps:
        return wrap_into(value, low, high)
    return min(max(value, low), high)


@compiled
def bounded_step(q, task_jacobian, error, rows, lower, upper, wraps, damping, max_step,
                 candidate, free, step, residual, normal, work):
    """The next iterate ``candidate`` from ``q``: a damped step in which joints that would
    leave their range stop at the limit and the others take up the error they leave.
    Returns True when ``max_step`` shortened the step."""
    n = q.shape[0]
    for j in range(n):
        free[j] = True
        candidate[j] = q[j]
        if not wraps[j]:
            gradient = 0.0
            for r in range(rows):
                gradient += task_jacobian[r, j] * error[r]
            if (q[j] <= lower[j] and gradient < 0.0) or (q[j] >= upper[j] and gradient > 0.0):
                free[j] = False        # at a limit and pushed outward: held there
    for r in range(rows):
        residual[r] = error[r]
    for _ in range(n):
        damped_step(task_jacobian, residual, rows, free, damping, step, normal, work)
        first, fraction = -1, 1.0
        for j in range(n):
            if free[j] and not wraps[j] and step[j] != 0.0:
                value = q[j] + step[j]
                if value < lower[j]:
                    part = (lower[j] - q[j]) / step[j]
                elif value > upper[j]:
                    part = (upper[j] - q[j]) / step[j]
                else:
                    continue
                if part < fraction:
                    first, fraction = j, part
        if first < 0:
            break
        # The joint that leaves its range first stops at its limit; what it would have
        # contributed stays in the residual for the others.
        limit = lower[first] if q[first] + step[first] < lower[first] else upper[first]
        free[first] = False
        candidate[first] = limit
        for r in range(rows):
            residual[r] -= task_jacobian[r, first] * (limit - q[first])
    # A joint stopped at its limit moves there (candidate − q); the others by their step.
    scale = 1.0
    if max_step > 0.0:
        largest = 0.0
        for j in range(n):
            largest = max(largest, abs(step[j]) if free[j] else abs(candidate[j] - q[j]))
        if largest > max_step:
            scale = max_step / largest       # the whole step, so its direction is kept
    for j in range(n):
        if free[j]:
            candidate[j] = into_range(q[j] + scale * step[j], lower[j], upper[j], wraps[j])
        elif scale < 1.0:
            candidate[j] = q[j] + scale * (candidate[j] - q[j])
    return scale < 1.0


@compiled
def run_attempts(chain, lower, upper, wraps, goal, target, seeds, tolerance,
                 orientation_tolerance, first_limit, max_iterations, budget, lambda0,
                 max_step, best_q, best, resume):
    """Attempts from ``seeds`` in order until one converges, the seeds run out or
    ``budget`` iterations have been spent.

    The first seed may continue an attempt cut short by the budget of the previous call:
    it gets ``first_limit`` iterations, the others ``max_iterations``. ``best_q``/``best``
    keep the lowest-error iterate over calls (see BEST_*); on convergence they hold the
    answer. When the budget cuts an attempt short its iterate is left in ``resume``.

    Returns (outcome, seeds started, iterations, iterations of the last attempt).
    """
    n = lower.shape[0]
    rows = 6 if goal == FULL_POSE else (5 if goal == TOOL_DOWN else 3)
    pose, trial_pose = np.empty(12), np.empty(12)
    error, trial_error, residual = np.empty(6), np.empty(6), np.empty(6)
    task_jacobian, trial_jacobian = np.empty((6, n)), np.empty((6, n))
    m = chain.shape[0] - 1      # moving joints, mimic joints included
    frames, axes, jacobian = np.empty((m, 12)), np.empty((m, 3)), np.empty((6, n))
    spin, work, normal = np.empty(3), np.empty(6), np.empty((6, 6))
    q, candidate, step = np.empty(n), np.empty(n), np.empty(n)
    free = np.empty(n, np.bool_)
    history = np.empty(STALL_WINDOW + 1)
    iterations = 0
    used = 0
    done = 0
    while used < seeds.shape[0]:
        if iterations >= budget:
            return BUDGET_USED, used, iterations, 0
        limit = first_limit if used == 0 else max_iterations
        for j in range(n):
            q[j] = into_range(seeds[used, j], lower[j], upper[j], wraps[j])
        used += 1
        position, angle = task(q, chain, goal, target, pose, error, task_jacobian,
                               frames, axes, jacobian, spin)
        cost = 0.0
        for r in range(rows):
            cost += error[r] * error[r]
        lam = lambda0
        kept = 0
        done = 0
        while True:
            if cost < best[BEST_COST]:
                best[BEST_COST], best[BEST_POSITION], best[BEST_ORIENTATION] = \
                    cost, position, angle
                best_q[:] = q
            if position <= tolerance and angle <= orientation_tolerance:
                return CONVERGED, used, iterations, done
            if done >= limit:
                break
            if iterations >= budget:
                resume[:] = q
                return BUDGET_USED, used, iterations, done
            iterations += 1
            done += 1
            capped = bounded_step(q, task_jacobian, error, rows, lower, upper, wraps,
                                  lam * cost + MIN_DAMPING, max_step, candidate, free, step,
                                  residual, normal, work)
            trial_position, trial_angle = task(candidate, chain, goal, target, trial_pose,
                                               trial_error, trial_jacobian, frames, axes,
                                               jacobian, spin)
            trial_cost = 0.0
            for r in range(rows):
                trial_cost += trial_error[r] * trial_error[r]
            if trial_cost < cost:
                for j in range(n):
                    moved = abs(candidate[j] - q[j])
                    if wraps[j] and moved > math.pi:   # wrapped: the short way round
                        turns = round((candidate[j] - q[j]) / FULL_TURN)
                        moved = abs(candidate[j] - q[j] - FULL_TURN * turns)
                    best[BEST_STEP] = max(best[BEST_STEP], moved)
                q[:] = candidate
                error[:] = trial_error
                task_jacobian[:, :] = trial_jacobian
                position, angle, cost = trial_position, trial_angle, trial_cost
                lam *= DOWN
            else:
                lam = lam * UP if lam > 0.0 else MIN_DAMPING
                if lam > MAX_LAMBDA:
                    break          # no descent left: a local minimum
            # Stalled: |e|² not halved within the window. Capped steps make progress
            # linear by design: not a stall.
            if capped:
                kept = 0
            if kept <= STALL_WINDOW:
                history[kept] = cost
                kept += 1
            else:
                history[:STALL_WINDOW] = history[1:]
                history[STALL_WINDOW] = cost
                if cost > STALL_RATIO * history[0]:
                    break
    return SEEDS_USED, used, iterations, done


@compiled
def pull_toward(chain, lower, upper, wraps, goal, target, q, reference, weights, tolerance,
                orientation_tolerance, steps, gain):
    """Slide a solution ``q`` (changed in place) along the task's null space toward
    ``reference``, then polish it back onto the task; returns True when the result meets
    both tolerances (the caller keeps it only if its objective improved).

    Each step is Δq = z + J⁺(e − J z) with z = −gain · weights · (q − reference): the pull,
    minus the part of it the task would feel, plus the correction of the task error. This is
    what a redundant arm (more joints than task rows) can do that restarts cannot: move
    continuously along its family of solutions.
    """
    n = q.shape[0]
    rows = 6 if goal == FULL_POSE else (5 if goal == TOOL_DOWN else 3)
    pose = np.empty(12)
    error, residual = np.empty(6), np.empty(6)
    task_jacobian = np.empty((6, n))
    m = chain.shape[0] - 1      # moving joints, mimic joints included
    frames, axes, jacobian = np.empty((m, 12)), np.empty((m, 3)), np.empty((6, n))
    spin, work, normal = np.empty(3), np.empty(6), np.empty((6, 6))
    step, pull = np.empty(n), np.empty(n)
    free = np.ones(n, np.bool_)
    for _ in range(steps):
        task(q, chain, goal, target, pose, error, task_jacobian, frames, axes, jacobian,
             spin)
        for j in range(n):
            pull[j] = -gain * weights[j] * (q[j] - reference[j])
        for r in range(rows):
            total = error[r]
            for j in range(n):
                total -= task_jacobian[r, j] * pull[j]
            residual[r] = total
        damped_step(task_jacobian, residual, rows, free, 1e-9, step, normal, work)
        for j in range(n):
            q[j] = into_range(q[j] + pull[j] + step[j], lower[j], upper[j], wraps[j])
    for _ in range(30):      # polish: Gauss–Newton back onto the task
        position, angle = task(q, chain, goal, target, pose, error, task_jacobian, frames,
                               axes, jacobian, spin)
        if position <= tolerance and angle <= orientation_tolerance:
            return True
        cost = 0.0
        for r in range(rows):
            cost += error[r] * error[r]
        damped_step(task_jacobian, error, rows, free, cost + MIN_DAMPING, step, normal, work)
        for j in range(n):
            q[j] = into_range(q[j] + step[j], lower[j], upper[j], wraps[j])
    position, angle = task(q, chain, goal, target, pose, error, task_jacobian, frames, axes,
                           jacobian, spin)
    return position <= tolerance and angle <= orientation_tolerance
