"""Why a followed path stops, in words: the stop a sample or a step is refused with, and the
checks between two samples that only need the arm and the settings (the joint jump, the
deviation from the path, a jump no halving of the step can cover). Used by
motion/path_following.py. No ROS.

Units: m, rad (m for prismatic joints).
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from arm_kinematics.ik.result import ErrorCode, IKResult
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.path_request import PathCode, PathSettings
from arm_kinematics.motion.tool_path import ToolPath

# Tolerance of "at a joint limit" when naming the joint that stopped a path, rad (or m).
AT_LIMIT = 1e-3


@dataclass
class PathStop:
    """Why one sample or one step is refused."""

    code: PathCode
    message: str
    ik_code: ErrorCode = ErrorCode.OK
    joint: str = ''
    joint_step: float = 0.0
    condition: float = math.nan
    # The sample's own refusal, the same from any sample before it (no solution at all, or
    # the branch's pose refused: its whole-turn copies share it): the halving keeps it.
    lasting: bool = False


@dataclass
class PathSample:
    u: float                 # path parameter: sample index, fractional between samples
    q: np.ndarray
    label: str = ''


def named_joint(model: ArmModel, reason: str) -> str:
    """The first joint of ``model`` a solver's words name, '' for none."""
    return next((name for name in model.joint_names if name in reason), '')


def nearest_limit(model: ArmModel, q: np.ndarray) -> str:
    """The joint of ``q`` nearest one of its limits."""
    margin = np.minimum(q - model.lower, model.upper - q)
    return model.joint_names[int(np.argmin(margin))]


def joint_at_limit(model: ArmModel, q: np.ndarray) -> str:
    """The first joint of ``q`` within AT_LIMIT of a limit, '' for none."""
    at = np.flatnonzero((q <= model.lower + AT_LIMIT) | (q >= model.upper - AT_LIMIT))
    return model.joint_names[int(at[0])] if at.size else ''


def failure(model: ArmModel, result: IKResult, previous: np.ndarray | None) -> PathStop:
    """The stop of a sample whose solve failed; a joint that ``previous`` holds at its limit
    is named as the cause."""
    if result.code == ErrorCode.TIMED_OUT:
        return PathStop(PathCode.TIMEOUT, f'{result.code.name}: {result.reason}', result.code)
    joint = '' if previous is None else joint_at_limit(model, previous)
    if result.code == ErrorCode.JOINT_LIMITS or joint:
        name = joint or named_joint(model, result.reason)
        return PathStop(PathCode.JOINT_LIMIT, f'{name or "a joint"} at its limit '
                        f'({result.code.name}: {result.reason})', result.code, name)
    return PathStop(PathCode.UNREACHABLE, f'{result.code.name}: {result.reason}', result.code)


def transition(model: ArmModel, settings: PathSettings, path: ToolPath, a: PathSample,
               b: PathSample) -> PathStop | None:
    """The jump and deviation checks between two consecutive samples: None where both pass."""
    step = np.abs(b.q - a.q)
    worst = int(step.argmax())
    if step[worst] > settings.max_joint_step:
        return PathStop(PathCode.JOINT_JUMP, f'{model.joint_names[worst]} would move '
                        f'{step[worst]:.4f} between two samples (max_joint_step '
                        f'{settings.max_joint_step:g})', joint=model.joint_names[worst],
                        joint_step=float(step[worst]))
    middle = model.kernel.fk(0.5 * (a.q + b.q))[:3, 3]
    deviation = path.deviation(middle, a.u, b.u)
    if deviation > settings.max_deviation:
        return PathStop(PathCode.DEVIATION, f'the tool would leave the path by '
                        f'{deviation:.4f} m between two samples (max_deviation '
                        f'{settings.max_deviation:g} m)')
    return None


def beyond_reach(model: ArmModel, settings: PathSettings, motion: np.ndarray,
                 same: np.ndarray) -> PathStop:
    """The jump of the nearest allowed pair of states of two layers of the branch search
    (``motion`` (S, P, n), ``same`` (S, P) allowed), none of which any halving of the step
    reaches."""
    largest = np.where(same, motion.max(axis=2), np.inf)
    state, before = np.unravel_index(int(np.argmin(largest)), largest.shape)
    joint = int(np.argmax(motion[state, before]))
    name, step = model.joint_names[joint], float(motion[state, before, joint])
    return PathStop(PathCode.JOINT_JUMP, f'{name} would move {step:.4f} between two '
                    'samples, more than halving the step to min_step allows '
                    f'(max_joint_step {settings.max_joint_step:g})', joint=name,
                    joint_step=step)
