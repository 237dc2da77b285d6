"""Parameters of target_input: declarations with descriptors, validation, the settings snapshot.

Units: m, s, Hz. The node swaps a new ``Settings`` in whole after an accepted update, so a
goal being built never sees half of a change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import math

import numpy as np
from rcl_interfaces.msg import FloatingPointRange, IntegerRange
from rclpy.exceptions import ParameterException, ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter

from arm_ik.kinematics.tasks.current_pose import DEFAULT_WAIT
from arm_ik.kinematics.tasks.sequences import MOTION_LAWS, MoveSettings, TaskSequence
from arm_ik.nodes.common import describe, StartupError
from arm_ik.nodes.task_messages import GOAL_TYPES

POINT_PARAMETERS = ('start', 'goal')
SEND_ATTEMPTS = 3    # a goal without accept/reject is sent this many times in all
_POSITIVE = ('grasp_tolerance', 'result_timeout', 'response_timeout', 'ball_rate',
             'current_pose_timeout')


@dataclass(frozen=True)
class Settings:
    """Immutable snapshot of the run-time parameters.

    Attributes:
        clicks: motion law, duration (s), speed scale and solver of clicked targets; the
            solver also serves sequence moves that name none and the reachability check.
        goal_pose_type: what a goal_pose asks of the tool (a key of GOAL_TYPES).
        cycles: cycles of the sequence, 0 = until stopped.
        grasp_tolerance: largest tip-to-ball distance at attach, m.
        result_timeout: time a move may take beyond its duration, s.
        response_timeout: time for the executor to accept or reject a goal, s.
        ball_rate: highest publish rate of the carried ball, Hz.
        current_pose_timeout: how long a cycle's decision (attach, detach, the next step)
            waits for a pose known to be current, s (see kinematics.tasks.current_pose).
    """

    clicks: MoveSettings
    goal_pose_type: str
    cycles: int
    grasp_tolerance: float
    result_timeout: float
    response_timeout: float
    ball_rate: float
    current_pose_timeout: float


def _range(low: float, high: float) -> FloatingPointRange:
    return FloatingPointRange(from_value=low, to_value=high, step=0.0)


def declare_parameters(node: Node) -> None:
    """Declare every parameter except start/goal (those depend on the sequence file)."""
    node.declare_parameter('action_name', 'trajectory_executor/move_to_target', describe(
        'MoveToTarget action of the trajectory executor (relative: in this namespace)',
        read_only=True))
    node.declare_parameter('sequence_file', '', describe(
        'scripted sequence YAML: a path, or a file name in arm_bringup/config (e.g. '
        'manipulator3d_pick_place.yaml); empty: no scripted cycle', read_only=True))
    node.declare_parameter('cycles', 0, describe(
        'cycles of the sequence to run, 0 = until stopped',
        integer_range=[IntegerRange(from_value=0, to_value=1_000_000, step=1)]))
    node.declare_parameter('autostart', True, describe(
        "start the cycle as soon as the executor's action server is up (else call "
        '~/run_cycle)', read_only=True))
    node.declare_parameter('interactive', False, describe(
        'ask START and GOAL on the console (stdin) before the cycle, as the reference '
        'program does in a terminal; end of input keeps the parameters', read_only=True))
    node.declare_parameter('solver', '', describe(
        "IK solver of the goals and of the reachability check (empty: the arm's default)"))
    node.declare_parameter('motion_law', '', describe(
        f"motion law of clicked targets: empty (the executor's default) or one of "
        f'{", ".join(MOTION_LAWS)}'))
    node.declare_parameter('duration', 0.0, describe(
        'duration of a clicked move, s (0: from the velocity limits)',
        floating_point_range=[_range(0.0, 600.0)]))
    node.declare_parameter('speed_scale', 0.0, describe(
        'fraction of the velocity limits for clicked moves, 0..1 (0: executor default)',
        floating_point_range=[_range(0.0, 1.0)]))
    node.declare_parameter('goal_pose_type', 'position', describe(
        f'what a goal_pose asks of the tool: {", ".join(GOAL_TYPES)}'))
    node.declare_parameter('grasp_tolerance', 0.02, describe(
        'largest tip-to-ball distance at which attach succeeds, m',
        floating_point_range=[_range(0.0, 1.0)]))
    node.declare_parameter('result_timeout', 30.0, describe(
        'time a move may take beyond its own duration before it counts as failed, s',
        floating_point_range=[_range(0.0, 3600.0)]))
    node.declare_parameter('response_timeout', 3.0, describe(
        f'time to wait for the executor to accept or reject a goal before sending it again '
        f'({SEND_ATTEMPTS} attempts in all), s', floating_point_range=[_range(0.0, 60.0)]))
    node.declare_parameter('ball_rate', 30.0, describe(
        'highest rate of ball_state and ball_marker while the ball is carried, Hz',
        floating_point_range=[_range(0.0, 1000.0)]))
    node.declare_parameter('current_pose_timeout', DEFAULT_WAIT, describe(
        "after a move whose result carries no final state: how long the cycle waits for a "
        'joint state stamped after the result before it attaches, detaches or goes on with '
        "the move's target instead (and says so in target_status), s",
        floating_point_range=[_range(0.01, 600.0)]))


def declare_point_parameters(node: Node, sequence: TaskSequence | None) -> None:
    """Declare start/goal (m); the file's point is the default, so `ros2 param get` shows
    what the cycle uses.

    Raises:
        StartupError: an override of the wrong type (e.g. integers).
    """
    for name in POINT_PARAMETERS:
        default = [float(v) for v in sequence.points[name]] \
            if sequence is not None and name in sequence.points else Parameter.Type.DOUBLE_ARRAY
        try:
            node.declare_parameter(name, default, describe(
                f'{name.upper()} point of the cycle, m, x y z in the base frame (unset: the '
                "sequence file's value); checked for reach before it is accepted"))
        except ParameterException as error:
            raise StartupError(f'parameter {name}: {error} (give 3 numbers with decimal '
                               'points, e.g. [0.6, -0.3, 0.1])') from None


def point_value(node: Node, name: str) -> object:
    """The start/goal parameter's value; None when it was never set (or set empty)."""
    try:
        value = node.get_parameter(name).value
    except ParameterUninitializedException:
        return None
    return None if value is None or len(value) == 0 else value


def point_from_value(name: str, value: object) -> tuple[np.ndarray | None, str]:
    """A start/goal value as a vector (m), or (None, reason)."""
    try:
        vector = np.array([float(v) for v in value], dtype=float)
    except (TypeError, ValueError):
        return None, f'{name} must be 3 numbers x, y, z in m, got {value!r}'
    if vector.shape != (3,) or not np.all(np.isfinite(vector)):
        return None, f'{name} must be 3 finite numbers x, y, z in m, got {list(value)}'
    return vector, ''


def read_settings(node: Node) -> Settings:
    """The current run-time parameters as one snapshot."""
    value = {name: node.get_parameter(name).value for name in (
        'solver', 'motion_law', 'duration', 'speed_scale', 'goal_pose_type', 'cycles',
        *_POSITIVE)}
    return Settings(MoveSettings(value['motion_law'], float(value['duration']),
                                 float(value['speed_scale']), value['solver']),
                    value['goal_pose_type'], int(value['cycles']),
                    float(value['grasp_tolerance']), float(value['result_timeout']),
                    float(value['response_timeout']), float(value['ball_rate']),
                    float(value['current_pose_timeout']))


def setting_reason(name: str, value: object, solver_reason: Callable[[str], str]) -> str:
    """'' when ``value`` is acceptable for parameter ``name``, else why not.

    Args:
        name, value: the update.
        solver_reason: '' for a solver that serves this arm, else why not.
    """
    if name == 'solver':
        return solver_reason(value) if value else ''
    if name == 'motion_law':
        return '' if value in ('', *MOTION_LAWS) else (
            f"unknown motion law {value!r}; choose one of {', '.join(MOTION_LAWS)} or ''")
    if name == 'goal_pose_type':
        return '' if value in GOAL_TYPES else (
            f'goal_pose_type {value!r} is not one of {", ".join(GOAL_TYPES)}')
    if name in _POSITIVE:
        number = float(value)
        return '' if math.isfinite(number) and number > 0.0 else \
            f'{name} must be a finite number > 0, got {value!r}'
    if name in ('duration', 'speed_scale'):
        return '' if math.isfinite(float(value)) else f'{name} must be finite'
    return ''
