"""The UR / OPW closed form of one pose, compiled: every branch in a few microseconds.

``families.ScalarEngine`` prepares the constants of an arm (its axes and origins at q = 0,
link vectors, the triangle and wrist coefficients) and calls :func:`family_solve`. The
steps are those of ``families.FamilyEngine`` (which solves N poses at once in numpy), on
plain floats: a hundred small vector operations, which cost ~0.3 ms as Python arithmetic
and as numpy calls, and a few microseconds compiled (the compiled peer ur-analytic-ik takes
20–60 µs per pose through its bindings on this machine).

Vectors are 3-tuples and rotations row-major 9-tuples of floats. Branch order and labels
are those of ``spherical_wrist.BRANCHES``: index = yaw · 4 + elbow · 2 + wrist.
"""

from __future__ import annotations

import math

import numpy as np

from arm_kinematics.model.kernel import compiled

SINGULAR = 1e-9
STRETCH_SLACK = 1e-9
WRIST_SINGULAR, SHOULDER_SINGULAR, STRETCHED = 1, 2, 4
# Rows of the constants array (see ``constants_array``): 3-vectors, then the packed rest.
VECTORS = ('w1', 'w2', 'w3', 'w4', 'w5', 'w6', 'o1', 'o2', 'o3', 'n', 'point_tool', 'up',
           'forward', 'side', 'w1xn', 'link_a', 'link_b', 'w6_perp', 'r0t_w6', 'lever',
           'n_perp')
ROWS = VECTORS + ('signs 1-3', 'signs 4-6', 'd k1 delta', 'r0t row 1', 'r0t row 2',
                  'r0t row 3', 'q5 coefficients', 'triangle')


def constants_array(values: dict[str, object]) -> np.ndarray:
    """The constants of one arm as a (len(ROWS), 3) array, in the order of ROWS.

    ``values`` holds the 3-vectors named in VECTORS (absent ones are zero: ``lever`` and
    ``n_perp`` exist for the UR family only), ``signs`` (6), ``d``, ``k1``, ``delta``,
    ``r0t`` (3×3), ``q5`` (3) and ``tri`` (3).
    """
    table = np.zeros((len(ROWS), 3))
    for index, name in enumerate(VECTORS):
        table[index] = np.asarray(values.get(name, (0.0, 0.0, 0.0)), dtype=float).ravel()
    rest = len(VECTORS)
    table[rest:rest + 2] = np.asarray(values['signs'], dtype=float).reshape(2, 3)
    table[rest + 2] = (values['d'], values['k1'], values['delta'])
    table[rest + 3:rest + 6] = np.asarray(values['r0t'], dtype=float).reshape(3, 3)
    table[rest + 6] = values['q5']
    table[rest + 7] = values['tri']
    table.setflags(write=False)
    return table


@compiled
def _vec(table, row):
    return (table[row, 0], table[row, 1], table[row, 2])


@compiled
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@compiled
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@compiled
def _turn(w, angle, v):
    """``v`` turned about the unit axis ``w`` by ``angle`` (Rodrigues)."""
    c, s = math.cos(angle), math.sin(angle)
    k = (1.0 - c) * _dot(w, v)
    x = _cross(w, v)
    return (v[0] * c + x[0] * s + w[0] * k, v[1] * c + x[1] * s + w[1] * k,
            v[2] * c + x[2] * s + w[2] * k)


@compiled
def _mat_vec(m, v):
    return (m[0] * v[0] + m[1] * v[1] + m[2] * v[2], m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
            m[6] * v[0] + m[7] * v[1] + m[8] * v[2])


@compiled
def _mat_t_vec(m, v):
    return (m[0] * v[0] + m[3] * v[1] + m[6] * v[2], m[1] * v[0] + m[4] * v[1] + m[7] * v[2],
            m[2] * v[0] + m[5] * v[1] + m[8] * v[2])


@compiled
def _mat_mul(a, b):
    return (a[0] * b[0] + a[1] * b[3] + a[2] * b[6], a[0] * b[1] + a[1] * b[4] + a[2] * b[7],
            a[0] * b[2] + a[1] * b[5] + a[2] * b[8], a[3] * b[0] + a[4] * b[3] + a[5] * b[6],
            a[3] * b[1] + a[4] * b[4] + a[5] * b[7], a[3] * b[2] + a[4] * b[5] + a[5] * b[8],
            a[6] * b[0] + a[7] * b[3] + a[8] * b[6], a[6] * b[1] + a[7] * b[4] + a[8] * b[7],
            a[6] * b[2] + a[7] * b[5] + a[8] * b[8])


@compiled
def _transpose(m):
    return (m[0], m[3], m[6], m[1], m[4], m[7], m[2], m[5], m[8])


@compiled
def _rotation(axis, angle):
    x, y, z = axis
    c, s = math.cos(angle), math.sin(angle)
    v = 1.0 - c
    return (c + x * x * v, x * y * v - z * s, x * z * v + y * s,
            x * y * v + z * s, c + y * y * v, y * z * v - x * s,
            x * z * v - y * s, y * z * v + x * s, c + z * z * v)


@compiled
def _angle_one(w, p, q):
    """(angle turning p onto q about w, length of p across w)."""
    kp, kq = _dot(p, w), _dot(q, w)
    pp = (p[0] - kp * w[0], p[1] - kp * w[1], p[2] - kp * w[2])
    qq = (q[0] - kq * w[0], q[1] - kq * w[1], q[2] - kq * w[2])
    return math.atan2(_dot(_cross(pp, qq), w), _dot(pp, qq)), math.sqrt(_dot(pp, pp))


@compiled
def _cosine_one(a, b, rhs):
    """a·cos x + b·sin x = rhs: (centre, half width, solvable, at the edge)."""
    r = math.hypot(a, b)
    ratio = rhs / max(r, 1e-300)
    half = math.acos(1.0 if ratio > 1.0 else -1.0 if ratio < -1.0 else ratio)
    return math.atan2(b, a), half, abs(ratio) <= 1.0 + STRETCH_SLACK, abs(math.sin(half)) < 1e-7


@compiled
def _triangle(table, x, out):
    """The shoulder-elbow triangle to point ``x``: (q2, q3) elbow up then down in ``out``
    (2, 2); returns (solvable, too near, flags)."""
    n, o2 = _vec(table, 9), _vec(table, 7)
    y = (x[0] - o2[0], x[1] - o2[1], x[2] - o2[2])
    k = _dot(y, n)
    y = (y[0] - k * n[0], y[1] - k * n[1], y[2] - k * n[2])
    reach_sq = _dot(y, y)
    a3, b3, squares = table[28, 0], table[28, 1], table[28, 2]
    centre, half, solvable, edge = _cosine_one(a3, b3, 0.5 * (reach_sq - squares))
    perp = _cross(n, y)
    if _dot(perp, _vec(table, 11)) < 0.0:
        perp = (-perp[0], -perp[1], -perp[2])
    link_a, link_b = _vec(table, 15), _vec(table, 16)
    w2, w3 = _vec(table, 1), _vec(table, 2)
    heights = np.empty(2)
    for k, q3 in enumerate((centre + half, centre - half)):
        b = _turn(w3, q3, link_b)
        reach = (link_a[0] + b[0], link_a[1] + b[1], link_a[2] + b[2])
        q2, _ = _angle_one(w2, reach, y)
        heights[k] = _dot(_turn(w2, q2, link_a), perp)
        out[k, 0], out[k, 1] = q2, q3
    if heights[1] > heights[0]:
        q2, q3 = out[0, 0], out[0, 1]
        out[0, 0], out[0, 1] = out[1, 0], out[1, 1]
        out[1, 0], out[1, 1] = q2, q3
    return solvable, reach_sq < squares, STRETCHED if edge else 0


@compiled
def family_solve(table, ur, position, rotation, seed, q, ok, flags):
    """Every branch of one pose: q (8, 6) rad, ok (8,) reachable, flags (8,); returns
    True when every branch is too near the shoulder.

    Args:
        table: the arm's constants (``constants_array``). ur: True for the UR family,
            False for OPW. position (3,), rotation (9,) row-major, seed (6,) rad.
    """
    p = (position[0], position[1], position[2])
    goal = (rotation[0], rotation[1], rotation[2], rotation[3], rotation[4], rotation[5],
            rotation[6], rotation[7], rotation[8])
    w = [_vec(table, i) for i in range(6)]
    o1 = _vec(table, 6)
    n = _vec(table, 9)
    signs = (table[21, 0], table[21, 1], table[21, 2], table[22, 0], table[22, 1],
             table[22, 2])
    d, k1, delta = table[23, 0], table[23, 1], table[23, 2]
    a5, b5, c5 = table[27, 0], table[27, 1], table[27, 2]
    r0t = (table[24, 0], table[24, 1], table[24, 2], table[25, 0], table[25, 1],
           table[25, 2], table[26, 0], table[26, 1], table[26, 2])
    point = _mat_vec(goal, _vec(table, 10))
    point = (point[0] + p[0], point[1] + p[1], point[2] + p[2])
    # Yaw: the solved point's distance along n from the shoulder plane fixes q1.
    v = (point[0] - o1[0], point[1] - o1[1], point[2] - o1[2])
    along = _dot(v, w[0])
    a = _dot(v, n) - k1 * along
    b = _dot(v, _vec(table, 14))
    centre, half, solvable, _ = _cosine_one(a, b, d - k1 * along)
    flag1 = 0
    if math.hypot(a, b) < SINGULAR:
        # On the axis any yaw does: the seed's, and the seed's + π.
        centre, half, solvable, flag1 = seed[0] + 0.5 * math.pi, 0.5 * math.pi, True, \
            SHOULDER_SINGULAR
    yaws = (centre + half, centre - half)
    forward, side = _vec(table, 12), _vec(table, 13)
    vf, vg = _dot(v, forward), _dot(v, side)
    if math.cos(yaws[1]) * vf + math.sin(yaws[1]) * vg > \
            math.cos(yaws[0]) * vf + math.sin(yaws[0]) * vg:
        yaws = (yaws[1], yaws[0])
    near_all = True
    r5 = math.hypot(a5, b5)
    goal_r0t = _mat_mul(goal, r0t)
    pairs = np.empty((2, 2))
    flip = (0.0, math.pi)
    for i in range(2):
        q1 = yaws[i]
        r1 = _rotation(w[0], q1)
        undone = _turn(w[0], -q1, v)
        if ur:
            n1 = _turn(w[0], q1, n)
            axis6 = _mat_vec(goal, _vec(table, 18))
            ratio = (_dot(n1, axis6) - c5) / r5
            half5 = math.acos(1.0 if ratio > 1.0 else -1.0 if ratio < -1.0 else ratio)
            wrist_singular = abs(math.sin(half5)) < SINGULAR
            m = _mat_t_vec(r0t, _mat_t_vec(goal, n1))
            base = _mat_mul(_transpose(r1), goal_r0t)
            n_perp, lever0 = _vec(table, 20), _vec(table, 19)
            for j in range(2):
                q5 = delta + half5 if j == 0 else delta - half5
                q6, across = _angle_one(w[5], m, _turn(w[4], -q5, n))
                free = wrist_singular or across < SINGULAR
                if free:
                    q6 = seed[5] + flip[j]
                # R234 = base·R6ᵀ·R5ᵀ, applied to two vectors only.
                u = _mat_vec(base, _turn(w[5], -q6, _turn(w[4], -q5, n_perp)))
                theta = math.atan2(_dot(_cross(n_perp, u), n), _dot(u, n_perp))
                lever = _mat_vec(base, _turn(w[5], -q6, _turn(w[4], -q5, lever0)))
                x = (undone[0] + o1[0] - lever[0], undone[1] + o1[1] - lever[1],
                     undone[2] + o1[2] - lever[2])
                ok3, near, flag3 = _triangle(table, x, pairs)
                near_all &= near
                flag = flag1 | flag3 | (WRIST_SINGULAR if free else 0)
                for k in range(2):
                    q2, q3 = pairs[k, 0], pairs[k, 1]
                    row = i * 4 + k * 2 + j
                    q[row, 0], q[row, 1], q[row, 2] = q1, q2, q3
                    q[row, 3] = signs[3] * (theta - signs[1] * q2 - signs[2] * q3)
                    q[row, 4], q[row, 5] = q5, q6
                    ok[row] = solvable and ok3
                    flags[row] = flag
            continue
        x = (undone[0] + o1[0], undone[1] + o1[1], undone[2] + o1[2])
        ok3, near, flag3 = _triangle(table, x, pairs)
        near_all &= near
        w6_perp = _vec(table, 17)
        for k in range(2):
            q2, q3 = pairs[k, 0], pairs[k, 1]
            # Axes 2 and 3 are parallel: R2·R3 is one turn about n.
            r123 = _mat_mul(r1, _rotation(n, signs[1] * q2 + signs[2] * q3))
            r456 = _mat_mul(_transpose(r123), goal_r0t)
            axis6 = _mat_vec(r456, w[5])
            ratio = (_dot(w[3], axis6) - c5) / r5
            half5 = math.acos(1.0 if ratio > 1.0 else -1.0 if ratio < -1.0 else ratio)
            wrist_singular = abs(math.sin(half5)) < SINGULAR
            for j in range(2):
                q5 = delta + half5 if j == 0 else delta - half5
                q4, across = _angle_one(w[3], _turn(w[4], q5, w[5]), axis6)
                free = wrist_singular or across < SINGULAR
                if free:
                    q4 = seed[3] + flip[j]
                # R6 = R5ᵀ·R4ᵀ·R456, applied to one vector across axis 6.
                u = _turn(w[4], -q5, _turn(w[3], -q4, _mat_vec(r456, w6_perp)))
                q6 = math.atan2(_dot(_cross(w6_perp, u), w[5]), _dot(u, w6_perp))
                row = i * 4 + k * 2 + j
                q[row, 0], q[row, 1], q[row, 2] = q1, q2, q3
                q[row, 3], q[row, 4], q[row, 5] = q4, q5, q6
                ok[row] = solvable and ok3
                flags[row] = flag1 | flag3 | (WRIST_SINGULAR if free else 0)
    return near_all


@compiled
def nearest_copies(q, ok, lower, upper, seed, tolerance, out, inside, steps):
    """Each reachable branch of ``q`` (8, 6) as the whole-turn copy nearest ``seed`` inside
    the limits (± ``tolerance``, clamped onto them), joint by joint: ``out`` (8, 6),
    ``inside`` (8,) and the largest joint move from the seed ``steps`` (8,)."""
    turn = 2.0 * math.pi
    for b in range(q.shape[0]):
        inside[b] = False
        steps[b] = math.inf
        if not ok[b]:
            continue
        largest = 0.0
        fits = True
        for j in range(q.shape[1]):
            low, high = lower[j], upper[j]
            shifted = q[b, j] + (tolerance - low)
            first = shifted - turn * math.floor(shifted / turn) + (low - tolerance)
            if first > high + tolerance:
                fits = False
                break
            best = min(max(first, low), high)
            following = first + turn
            while following <= high + tolerance:
                copy = min(following, high)
                if abs(copy - seed[j]) < abs(best - seed[j]):
                    best = copy
                following += turn
            out[b, j] = best
            largest = max(largest, abs(best - seed[j]))
        if fits:
            inside[b] = True
            steps[b] = largest
