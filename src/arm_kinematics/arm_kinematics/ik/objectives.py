"""What makes one IK solution better than another when a goal has several.

A redundant arm (7 joints for a full pose, 6 for a position) reaches a goal along a whole
family of configurations, and a six-joint arm has up to eight for a full pose. The
objective of a request says which one it wants:

* ``first``: the first the solver finds (the fastest answer; closed forms: the branch
  nearest the seed by its largest joint move).
* ``closest``: the least joint displacement from the seed, |q − seed| (radians,
  continuous joints the short way round): what moving an arm wants (TRAC-IK's Distance mode).
* ``manipulability``: the largest Yoshikawa manipulability √det(J Jᵀ) of the position
  rows (m³/rad³, the ``manipulability`` of every answer): farthest from a singularity
  (TRAC-IK's Manipulation modes).
* ``centred``: the joints farthest from their limits: the largest smallest margin, each
  joint's distance to its nearer limit as a fraction of half its range (1 = every joint
  mid-range, 0 = one at a limit; continuous joints do not count, a UR's ±2π ones do).

Numeric solvers gather several solutions and keep the best (``DLSSolver``); closed forms
choose among their branches (``IKDispatcher``).
"""

from __future__ import annotations

from collections.abc import Sequence
import math

import numpy as np

from arm_kinematics.ik import metrics
from arm_kinematics.ik.solvers.base import OBJECTIVE_NAMES
from arm_kinematics.model.arm_model import ArmModel, FULL_TURN

FIRST, CLOSEST, MANIPULABILITY, CENTRED = OBJECTIVE_NAMES
OBJECTIVES = OBJECTIVE_NAMES


def unknown_objective_reason(name: object) -> str:
    """'' for a known objective, else why not (the valid names)."""
    if name in OBJECTIVES:
        return ''
    return f'unknown objective {name!r}; valid: {", ".join(OBJECTIVES)}'


def _endless(model: ArmModel) -> np.ndarray:
    """(n,) True for continuous joints (no limits; a ±2π UR joint has them)."""
    return np.array([joint.kind == 'continuous' for joint in model.joints])


def displacement(model: ArmModel, q: Sequence[float], seed: Sequence[float]) -> float:
    """|q − seed| (rad; m for slides), continuous joints the short way round."""
    step = np.asarray(q, dtype=float) - np.asarray(seed, dtype=float)
    step = np.where(_endless(model), np.remainder(step + math.pi, FULL_TURN) - math.pi, step)
    return float(np.linalg.norm(step))


def centring(model: ArmModel, q: Sequence[float]) -> float:
    """The smallest margin to a limit as a fraction of half the range (1 when no joint
    has limits: continuous joints do not count)."""
    limited = ~_endless(model)
    if not limited.any():
        return 1.0
    q = np.asarray(q, dtype=float)[limited]
    lower, upper = model.lower[limited], model.upper[limited]
    half = 0.5 * (upper - lower)
    return float(np.min(np.minimum(q - lower, upper - q) / half))


def manipulability(model: ArmModel, q: Sequence[float]) -> float:
    """Yoshikawa manipulability of the position rows, as IK answers report it."""
    jacobian = model.jacobian(np.asarray(q, dtype=float))
    return metrics.dexterity(tuple(jacobian[:3].tolist()))[0]


def value(objective: str, model: ArmModel, q: Sequence[float],
          seed: Sequence[float]) -> float:
    """The measure of ``objective`` at ``q`` (``first`` has none: 0)."""
    if objective == CLOSEST:
        return displacement(model, q, seed)
    if objective == MANIPULABILITY:
        return manipulability(model, q)
    if objective == CENTRED:
        return centring(model, q)
    return 0.0


def best(objective: str, model: ArmModel, candidates: Sequence[Sequence[float]],
         seed: Sequence[float]) -> int:
    """Index of the best of ``candidates`` for ``objective`` (the first on ties; the first
    for ``first``)."""
    if objective == FIRST or len(candidates) < 2:
        return 0
    values = [value(objective, model, q, seed) for q in candidates]
    if objective == CLOSEST:
        return int(np.argmin(values))
    return int(np.argmax(values))
