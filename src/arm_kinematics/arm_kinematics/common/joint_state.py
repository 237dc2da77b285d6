"""The arm's joint positions out of a joint state: the one reading every subscriber shares.

A ``sensor_msgs/JointState`` on ``joint_states`` may list its joints in any order and carry
other devices' joints (a gripper, a second arm); a reader takes the arm's own joints, each of
which must appear once with a finite number (``positions_by_name``). Commands and requests
(an IK seed, a motion goal, a path to check) must name exactly the arm's joints
(``joint_order``); each words its own case of no names at all.
"""

from __future__ import annotations

from collections.abc import Sequence
import math

import numpy as np


def positions_by_name(joint_names: Sequence[str], names: Sequence[str],
                      positions: Sequence[float]) -> tuple[np.ndarray | None, str]:
    """The positions of ``joint_names`` (chain order, rad or m) from a joint state.

    Args:
        joint_names: the arm's joints, in chain order.
        names, positions: the joint state's names and positions (any order, other joints
            allowed).

    Returns:
        (q, '') when usable, else (None, the reason in words): sizes differ, one of the
        arm's joints is missing or appears twice, or its position is not a finite number.
    """
    names, positions = list(names), list(positions)
    if len(names) != len(positions):
        return None, f'{len(names)} names but {len(positions)} positions'
    index: dict[str, int] = {}
    for k, name in enumerate(names):
        if name in index and name in joint_names:
            return None, f'joint {name} appears twice'
        index[name] = k
    missing = [name for name in joint_names if name not in index]
    if missing:
        return None, (f'missing joints {", ".join(missing)} (the arm\'s joints: '
                      f'{", ".join(joint_names)})')
    try:
        q = np.array([float(positions[index[name]]) for name in joint_names])
    except (TypeError, ValueError) as error:
        return None, f'positions are not numbers ({error})'
    bad = [name for name, value in zip(joint_names, q.tolist()) if not math.isfinite(value)]
    if bad:
        return None, f'non-finite position of {", ".join(bad)}'
    return q, ''


def joint_order(joint_names: Sequence[str], names: Sequence[str], what: str
                ) -> tuple[list[int] | None, str]:
    """Where each of the arm's joints is in ``names``, for commands and requests that must
    name exactly the arm's joints (in any order): an IK seed, a motion goal, a checked path.

    Args:
        joint_names: the arm's joints, in chain order.
        names: the names as received (non-empty; each caller words its own empty case).
        what: the field, for the reason.

    Returns:
        (indices into ``names`` in chain order, '') or (None, the reason: names repeated,
        unknown or missing, with the arm's joints listed).
    """
    names = list(names)
    if len(set(names)) != len(names):
        repeated = sorted({name for name in names if names.count(name) > 1})
        return None, f'{what} repeats joint name(s) {", ".join(map(repr, repeated))}'
    unknown = [name for name in names if name not in joint_names]
    missing = [name for name in joint_names if name not in names]
    if unknown or missing:
        parts = ([f'unknown {", ".join(map(repr, unknown))}'] if unknown else []) + \
            ([f'missing {", ".join(missing)}'] if missing else [])
        return None, (f'{what} joint names: {"; ".join(parts)} (the arm\'s joints: '
                      f'{", ".join(joint_names)})')
    return [names.index(name) for name in joint_names], ''
