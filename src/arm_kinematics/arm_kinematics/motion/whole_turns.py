"""The whole-turn copies of joint values that a continuous joint path can reach (path IK on
joints whose range holds more than one turn), compiled: in numpy, joint by joint, this cost
more than the closed-form solve it follows. No ROS.

Units: rad.
"""

from __future__ import annotations

import math

import numpy as np

from arm_kinematics.model.kernel import compiled

# Whole-turn offsets of a joint value tried for the copies of a solution, rad.
_TURNS = np.array([-4.0, -2.0, 0.0, 2.0, 4.0]) * math.pi


@compiled
def whole_turn_copies(values, reference, turns, lower, upper, reach):
    """(copies (K, n), source row (K,)): each row of ``values`` (S, n) with, on every joint
    of ``turns``, each value + 2πk (k = -2..2) inside [lower, upper] (± 1e-9) within
    ``reach`` of that joint in some row of ``reference`` (P, n) — or the value itself when
    none is — in every combination, the first joint of ``turns`` varying slowest."""
    count, n = values.shape
    joints = turns.shape[0]
    options = np.empty((count, joints, _TURNS.shape[0]))
    sizes = np.zeros((count, joints), np.int64)
    total = 0
    for s in range(count):
        combinations = 1
        for jj in range(joints):
            j = turns[jj]
            for offset in _TURNS:
                value = values[s, j] + offset
                if value < lower[j] - 1e-9 or value > upper[j] + 1e-9:
                    continue
                for p in range(reference.shape[0]):
                    if abs(reference[p, j] - value) <= reach:
                        options[s, jj, sizes[s, jj]] = value
                        sizes[s, jj] += 1
                        break
            if sizes[s, jj] == 0:
                options[s, jj, 0] = values[s, j]
                sizes[s, jj] = 1
            combinations *= sizes[s, jj]
        total += combinations
    out = np.empty((total, n))
    rows = np.empty(total, np.int64)
    k = 0
    for s in range(count):
        combinations = 1
        for jj in range(joints):
            combinations *= sizes[s, jj]
        for m in range(combinations):
            out[k, :] = values[s, :]
            rest = m
            for jj in range(joints - 1, -1, -1):
                size = sizes[s, jj]
                out[k, turns[jj]] = options[s, jj, rest % size]
                rest //= size
            rows[k] = s
            k += 1
    return out, rows
