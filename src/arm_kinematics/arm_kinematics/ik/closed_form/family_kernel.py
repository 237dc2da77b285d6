"""The UR / OPW closed form of one pose, compiled: every branch in a few microseconds.

Why compiled: one pose is about a hundred small vector operations. As Python arithmetic on
floats they cost 40–60 µs (the UR all-solutions call measured 50–60 µs against 14–28 µs
for the compiled peer ur-analytic-ik); as one numba call they cost a few microseconds,
most of it the call itself. The steps are those of the vectorised engines (``ur.UREngine``,
``opw.OPWEngine``), which solve N poses at once in numpy, written out for one pose:
``table_of`` packs an arm's constants into one array (each argument of a compiled call
costs a type check), ``family_solve`` gives the 8 raw branches and ``nearest_inside``
each branch as its whole-turn copy nearest the seed inside the limits.

Vectors are 3-tuples and rotations row-major 9-tuples of floats. Branch order and labels
are those of ``spherical_wrist.BRANCHES``: index = yaw · 4 + elbow · 2 + wrist.
"""

from __future__ import annotations

import math

import numpy as np

from arm_kinematics.model.kernel import compiled

SINGULAR = 1e-9
STRETCH_SLACK = 1e-9
WRIST_SINGULAR, SHOULDER_SINGULAR, STRETCHED = 1, 2, 4    # as closed_form.common
TWO_PI = 2.0 * math.pi

# Offsets into the constants table (see ``table_of``).
W, O1, N, S, R0T, POINT_TOOL, FORWARD, SIDE = 0, 18, 21, 24, 30, 39, 42, 45
D, K1, W1XN, Q5, DELTA, W6_PERP, R0T_W6 = 48, 49, 50, 53, 56, 57, 60
TRI_E, TRI_O2, TRI_SQUARES, TRI_SPREAD, TRI_CENTRE = 63, 69, 72, 73, 74
TRI_UP, TRI_A, TRI_B, TRI_S2, TRI_S3 = 75, 77, 79, 81, 82
LEVER, N_PERP, N_X_PERP, ABOUT5 = 83, 86, 89, 92
TABLE_SIZE = 119


def table_of(scalar: object) -> np.ndarray:
    """The constants of one arm's scalar engine (``six_joint.ScalarEngine``; a UR engine
    also has ``lever``, ``n_perp``, ``n_x_perp`` and ``_about5``) as one read-only array."""
    t = np.zeros(TABLE_SIZE)
    e = scalar
    triangle = e.triangle

    def put(at: int, values: object) -> None:
        flat = np.ravel(np.asarray(values, dtype=float))
        t[at:at + flat.size] = flat

    put(W, e.w)
    put(O1, e.o[0])
    put(N, e.n)
    put(S, e.s)
    put(R0T, e.r0t)
    put(POINT_TOOL, e.point_tool)
    put(FORWARD, e.forward)
    put(SIDE, e.side)
    t[D], t[K1] = e.d, e.k1
    put(W1XN, e.w1xn)
    put(Q5, e.q5)
    t[DELTA] = e.delta
    put(W6_PERP, e.w6_perp)
    put(R0T_W6, e.r0t_w6)
    put(TRI_E, triangle._e)
    put(TRI_O2, triangle._o2)
    t[TRI_SQUARES], t[TRI_SPREAD], t[TRI_CENTRE] = (triangle.tri[2], triangle._spread,
                                                    triangle._centre)
    put(TRI_UP, triangle._up)
    put(TRI_A, triangle._a)
    put(TRI_B, triangle._b)
    t[TRI_S2], t[TRI_S3] = triangle._s2, triangle._s3
    if hasattr(e, 'lever'):
        put(LEVER, e.lever)
        put(N_PERP, e.n_perp)
        put(N_X_PERP, e.n_x_perp)
        put(ABOUT5, e._about5)
    t.setflags(write=False)
    return t


@compiled
def _v(t, at):
    return (t[at], t[at + 1], t[at + 2])


@compiled
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@compiled
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@compiled
def _turn_cs(w, c, s, v):
    """``v`` turned about the unit axis ``w`` by the angle of cosine c and sine s."""
    k = (1.0 - c) * (w[0] * v[0] + w[1] * v[1] + w[2] * v[2])
    x0, x1, x2 = w[1] * v[2] - w[2] * v[1], w[2] * v[0] - w[0] * v[2], w[0] * v[1] - w[1] * v[0]
    return (v[0] * c + x0 * s + w[0] * k, v[1] * c + x1 * s + w[1] * k,
            v[2] * c + x2 * s + w[2] * k)


@compiled
def _turn(w, angle, v):
    return _turn_cs(w, math.cos(angle), math.sin(angle), v)


@compiled
def _rotation_cs(axis, c, s):
    x, y, z = axis
    v = 1.0 - c
    return (c + x * x * v, x * y * v - z * s, x * z * v + y * s,
            x * y * v + z * s, c + y * y * v, y * z * v - x * s,
            x * z * v - y * s, y * z * v + x * s, c + z * z * v)


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
def _angle_one(w, p, q):
    """(angle turning p onto q about w, length of p across w)."""
    kp, kq = _dot(p, w), _dot(q, w)
    pp = (p[0] - kp * w[0], p[1] - kp * w[1], p[2] - kp * w[2])
    qq = (q[0] - kq * w[0], q[1] - kq * w[1], q[2] - kq * w[2])
    return math.atan2(_dot(_cross(pp, qq), w), _dot(pp, qq)), math.sqrt(_dot(pp, pp))


@compiled
def _half_bend(t, value):
    """Half the spread of the two wrist bends for (axis before)·(axis 6) = value, and
    whether the wrist is singular."""
    a5, b5, c5 = t[Q5], t[Q5 + 1], t[Q5 + 2]
    ratio = (value - c5) / math.hypot(a5, b5)
    half = math.acos(1.0 if ratio > 1.0 else -1.0 if ratio < -1.0 else ratio)
    return half, abs(math.sin(half)) < SINGULAR


@compiled
def _turned(t, at, c, s):
    """A fixed vector turned about axis 5 from its precomputed parts (along, across,
    w5 × v at ``at``)."""
    return (t[at] + t[at + 3] * c + t[at + 6] * s, t[at + 1] + t[at + 4] * c + t[at + 7] * s,
            t[at + 2] + t[at + 5] * c + t[at + 8] * s)


@compiled
def _triangle(t, x, pairs):
    """``geometry.PitchTriangle.solve_one``: (q2, q3) elbow up first in ``pairs`` (2, 2);
    returns (solvable, too near, flags)."""
    o2 = _v(t, TRI_O2)
    d0, d1, d2 = x[0] - o2[0], x[1] - o2[1], x[2] - o2[2]
    y1 = d0 * t[TRI_E] + d1 * t[TRI_E + 1] + d2 * t[TRI_E + 2]
    y2 = d0 * t[TRI_E + 3] + d1 * t[TRI_E + 4] + d2 * t[TRI_E + 5]
    reach_sq = y1 * y1 + y2 * y2
    squares = t[TRI_SQUARES]
    ratio = 0.5 * (reach_sq - squares) / t[TRI_SPREAD]
    half = math.acos(1.0 if ratio > 1.0 else -1.0 if ratio < -1.0 else ratio)
    solvable, edge = abs(ratio) <= 1.0 + STRETCH_SLACK, abs(math.sin(half)) < 1e-7
    centre = t[TRI_CENTRE]
    p1, p2 = -y2, y1
    if p1 * t[TRI_UP] + p2 * t[TRI_UP + 1] < 0.0:
        p1, p2 = y2, -y1
    a1, a2, b1, b2 = t[TRI_A], t[TRI_A + 1], t[TRI_B], t[TRI_B + 1]
    s2, s3 = t[TRI_S2], t[TRI_S3]
    first_score = 0.0
    swap = False
    for k in range(2):
        q3 = centre + half if k == 0 else centre - half
        c, s = math.cos(q3), s3 * math.sin(q3)
        r1 = a1 + b1 * c - b2 * s
        r2 = a2 + b1 * s + b2 * c
        along, across = r1 * y1 + r2 * y2, r1 * y2 - r2 * y1
        # The elbow across the line to the point, times |reach|·|y| (the same factor for
        # both elbows): orders them up first.
        score = (a1 * along - a2 * across) * p1 + (a1 * across + a2 * along) * p2
        if k == 0:
            first_score = score
        else:
            swap = score > first_score
        pairs[k, 0], pairs[k, 1] = s2 * math.atan2(across, along), q3
    if swap:
        q2, q3 = pairs[0, 0], pairs[0, 1]
        pairs[0, 0], pairs[0, 1] = pairs[1, 0], pairs[1, 1]
        pairs[1, 0], pairs[1, 1] = q2, q3
    return solvable, reach_sq < squares, STRETCHED if edge else 0


@compiled
def family_solve(t, ur, position, rotation, seed, q, ok, flags):
    """Every branch of one pose: ``q`` (8, 6) rad, ``ok`` (8,) reachable, ``flags`` (8,)
    (WRIST_SINGULAR, ...); returns True when every branch is too near the shoulder.

    Args:
        t: the arm's constants (``table_of``). ur: True for the UR family, False for OPW.
        position (3,), rotation (9,) row-major, seed (6,) rad (free joints at
            singularities take its values).
    """
    goal = (rotation[0], rotation[1], rotation[2], rotation[3], rotation[4], rotation[5],
            rotation[6], rotation[7], rotation[8])
    w0, w3, w4, w5 = _v(t, W), _v(t, W + 9), _v(t, W + 12), _v(t, W + 15)
    o1, n = _v(t, O1), _v(t, N)
    r0t = (t[R0T], t[R0T + 1], t[R0T + 2], t[R0T + 3], t[R0T + 4], t[R0T + 5], t[R0T + 6],
           t[R0T + 7], t[R0T + 8])
    # Yaw: the solved point's distance along n from the shoulder plane fixes q1.
    point = _mat_vec(goal, _v(t, POINT_TOOL))
    v = (point[0] + position[0] - o1[0], point[1] + position[1] - o1[1],
         point[2] + position[2] - o1[2])
    along = _dot(v, w0)
    a = _dot(v, n) - t[K1] * along
    b = _dot(v, _v(t, W1XN))
    r = math.hypot(a, b)
    ratio = (t[D] - t[K1] * along) / max(r, 1e-300)
    half1 = math.acos(1.0 if ratio > 1.0 else -1.0 if ratio < -1.0 else ratio)
    centre, solvable = math.atan2(b, a), abs(ratio) <= 1.0 + STRETCH_SLACK
    flag1 = 0
    if r < SINGULAR:
        # On the axis any yaw does: the seed's, and the seed's + π.
        centre, half1, solvable, flag1 = seed[0] + 0.5 * math.pi, 0.5 * math.pi, True, \
            SHOULDER_SINGULAR
    yaw_a, yaw_b = centre + half1, centre - half1
    vf, vg = _dot(v, _v(t, FORWARD)), _dot(v, _v(t, SIDE))
    if math.cos(yaw_b) * vf + math.sin(yaw_b) * vg > math.cos(yaw_a) * vf + \
            math.sin(yaw_a) * vg:
        yaw_a, yaw_b = yaw_b, yaw_a
    near_all = True
    goal_r0t = _mat_mul(goal, r0t)
    pairs = np.empty((2, 2))
    flip = (0.0, math.pi)
    s1, s2, s3 = t[S + 1], t[S + 2], t[S + 3]
    delta = t[DELTA]
    for i in range(2):
        q1 = yaw_a if i == 0 else yaw_b
        c1, sn1 = math.cos(q1), math.sin(q1)
        undone = _turn_cs(w0, c1, -sn1, v)
        if ur:
            n1 = _turn_cs(w0, c1, sn1, n)
            half, wrist_singular = _half_bend(t, _dot(n1, _mat_vec(goal, _v(t, R0T_W6))))
            m = _mat_t_vec(r0t, _mat_t_vec(goal, n1))
            base = _mat_mul(_rotation_cs(w0, c1, -sn1), goal_r0t)        # R1ᵀ·R·R0ᵀ
            for j in range(2):
                q5 = delta + half if j == 0 else delta - half
                c5, sn5 = math.cos(q5), -math.sin(q5)      # turns by −q5 about axis 5
                n5 = _turned(t, ABOUT5, c5, sn5)
                perp5 = _turned(t, ABOUT5 + 9, c5, sn5)
                lever5 = _turned(t, ABOUT5 + 18, c5, sn5)
                q6, across = _angle_one(w5, m, n5)
                free = wrist_singular or across < SINGULAR
                if free:
                    q6 = seed[5] + flip[j]
                c6, sn6 = math.cos(q6), -math.sin(q6)
                # R234 = base·R6ᵀ·R5ᵀ, applied to two vectors only.
                u = _mat_vec(base, _turn_cs(w5, c6, sn6, perp5))
                theta = math.atan2(_dot(u, _v(t, N_X_PERP)), _dot(u, _v(t, N_PERP)))
                lever = _mat_vec(base, _turn_cs(w5, c6, sn6, lever5))
                x = (undone[0] + o1[0] - lever[0], undone[1] + o1[1] - lever[1],
                     undone[2] + o1[2] - lever[2])
                ok3, near, flag3 = _triangle(t, x, pairs)
                near_all &= near
                flag = flag1 | flag3 | (WRIST_SINGULAR if free else 0)
                for k in range(2):
                    q2, q3 = pairs[k, 0], pairs[k, 1]
                    row = i * 4 + k * 2 + j
                    q[row, 0], q[row, 1], q[row, 2] = q1, q2, q3
                    q[row, 3] = s3 * (theta - s1 * q2 - s2 * q3)
                    q[row, 4], q[row, 5] = q5, q6
                    ok[row] = solvable and ok3
                    flags[row] = flag
            continue
        x = (undone[0] + o1[0], undone[1] + o1[1], undone[2] + o1[2])
        ok3, near, flag3 = _triangle(t, x, pairs)
        near_all &= near
        r1 = _rotation_cs(w0, c1, sn1)
        w6_perp = _v(t, W6_PERP)
        for k in range(2):
            q2, q3 = pairs[k, 0], pairs[k, 1]
            # Axes 2 and 3 are parallel: R2·R3 is one turn about n.
            pitch = s1 * q2 + s2 * q3
            r123 = _mat_mul(r1, _rotation_cs(n, math.cos(pitch), math.sin(pitch)))
            r456 = _mat_mul(_transpose(r123), goal_r0t)
            axis6 = _mat_vec(r456, w5)
            half, wrist_singular = _half_bend(t, _dot(w3, axis6))
            for j in range(2):
                q5 = delta + half if j == 0 else delta - half
                q4, across = _angle_one(w3, _turn(w4, q5, w5), axis6)
                free = wrist_singular or across < SINGULAR
                if free:
                    q4 = seed[3] + flip[j]
                # R6 = R5ᵀ·R4ᵀ·R456, applied to one vector across axis 6.
                u = _turn(w4, -q5, _turn(w3, -q4, _mat_vec(r456, w6_perp)))
                q6 = math.atan2(_dot(_cross(w6_perp, u), w5), _dot(u, w6_perp))
                row = i * 4 + k * 2 + j
                q[row, 0], q[row, 1], q[row, 2] = q1, q2, q3
                q[row, 3], q[row, 4], q[row, 5] = q4, q5, q6
                ok[row] = solvable and ok3
                flags[row] = flag1 | flag3 | (WRIST_SINGULAR if free else 0)
    return near_all


@compiled
def nearest_inside(t, ur, inputs, lower, upper, tolerance, q, valid, flags, steps):
    """Every branch of one pose as the whole-turn copy nearest the seed inside the limits.

    Args:
        t, ur: as ``family_solve``. inputs (18,): position (3), rotation row-major (9),
            seed (6), in one array (one argument to check, not three). lower, upper (6,):
            joint limits, rad; ``tolerance``: how far past them still counts (clamped
            onto them).

    Writes ``q`` (8, 6) (rows that do not fit keep their raw angles), ``valid`` (8,):
    reachable and inside the limits, ``flags`` (8,), ``steps`` (8,): the largest joint move
    from the seed (inf where not valid). Returns True when every branch is too near the
    shoulder (``family_solve``). Per joint the copies are those of ``common.turns`` and the
    nearest is that of ``common.nearest_copy``: what a solve naming the branch answers.
    """
    ok = np.empty(8, np.bool_)
    near_all = family_solve(t, ur, inputs[0:3], inputs[3:12], inputs[12:18], q, ok, flags)
    row = np.empty(6)
    for b in range(8):
        valid[b] = False
        steps[b] = math.inf
        if not ok[b]:
            continue
        largest = 0.0
        fits = True
        for j in range(6):
            low, high, reference = lower[j], upper[j], inputs[12 + j]
            first = (q[b, j] + (tolerance - low)) % TWO_PI + (low - tolerance)
            if first > high + tolerance:
                fits = False
                break
            best = low if first < low else high if first > high else first
            following = first + TWO_PI
            while following <= high + tolerance:
                copy = high if following > high else following
                if abs(copy - reference) < abs(best - reference):
                    best = copy
                following += TWO_PI
            row[j] = best
            largest = max(largest, abs(best - reference))
        if fits:
            q[b, :] = row
            valid[b] = True
            steps[b] = largest
    return near_all


@compiled
def nearest_inside_poses(t, ur, inputs, lower, upper, tolerance, q, valid, flags, steps):
    """``nearest_inside`` of every row of ``inputs`` (K, 18) into the rows of ``q`` (K, 8,
    6), ``valid``, ``flags`` and ``steps`` (K, 8): a path's samples in one call."""
    for k in range(inputs.shape[0]):
        nearest_inside(t, ur, inputs[k], lower, upper, tolerance, q[k], valid[k], flags[k],
                       steps[k])
