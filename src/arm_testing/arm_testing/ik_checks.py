"""Checks the core's IK tests share: joint angles compared modulo whole turns, how far the
FK of an answer is from the pose asked for, one solver per bundled arm. No ROS."""

from __future__ import annotations

from collections.abc import Callable
import math
from typing import Any

import numpy as np


def _wrapped_difference(a, b) -> np.ndarray:
    """|a - b| per joint, modulo whole turns (rad, in [0, pi])."""
    return np.abs(np.remainder(np.asarray(a) - np.asarray(b) + math.pi, 2.0 * math.pi)
                  - math.pi)


def angle_gap(a, b) -> float:
    """Largest joint difference modulo whole turns, rad."""
    return float(_wrapped_difference(a, b).max())


def same_angles(a, b, tolerance: float) -> bool:
    """Every joint of ``a`` within ``tolerance`` (rad) of ``b``'s, modulo whole turns."""
    return bool(np.all(_wrapped_difference(a, b) < tolerance))


def largest_pose_error(model: Any, q, pose: np.ndarray) -> float:
    """The largest element of |FK(q) - pose| over the position (m) and the rotation matrix."""
    reached = model.fk(q)
    return max(float(np.abs(reached[:3, 3] - pose[:3, 3]).max()),
               float(np.abs(reached[:3, :3] - pose[:3, :3]).max()))


def assert_same_answer_twice(solve: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """``solve(*args, **kwargs)`` twice gives the same code, iteration count and joints, bit
    for bit."""
    first, second = solve(*args, **kwargs), solve(*args, **kwargs)
    assert first.code == second.code and first.iterations == second.iterations
    assert np.array_equal(first.q, second.q)


def numeric_answers_among(model: Any, numeric: Any, pose: np.ndarray, seeds, options: Any,
                          ours, reach: float) -> int:
    """Solve the full ``pose`` (4×4) with the ``numeric`` solver from every seed; each answer
    whose FK is within ``reach`` of the pose (largest_pose_error) must be one of ``ours``
    (1e-6 rad, modulo whole turns). How many answers reached the pose."""
    from arm_kinematics.ik.result import GoalType
    found = 0
    for seed in seeds:
        answer = numeric.solve(pose[:3, 3], pose[:3, :3], GoalType.FULL_POSE, seed, options)
        if answer.q is not None and largest_pose_error(model, answer.q, pose) < reach:
            found += 1
            assert min(angle_gap(answer.q, mine) for mine in ours) < 1e-6, answer.q
    return found


def solver_per_arm(solver_class: type, load_arm: Callable[[str], Any]) -> Callable[[str], Any]:
    """A function arm name -> ``solver_class`` on that bundled arm with its workspace, each
    built once (``load_arm`` is the fixture of the same name)."""
    from arm_kinematics.ik.solvers.base import workspace_from_model
    cache: dict[str, Any] = {}

    def get(arm: str) -> Any:
        if arm not in cache:
            model = load_arm(arm)
            cache[arm] = solver_class(model, workspace_from_model(model))
        return cache[arm]
    return get
