"""Parameters of target_input: the table, the start/goal points, the settings snapshot.

``TABLE`` lists every parameter except start/goal, whose default is the sequence file's
point (declared once the file is read) and whose update is checked for reach. Units: m, s,
Hz. The node swaps a new ``CycleSettings`` in whole after an accepted update, so a goal
being built never sees half of a change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from rclpy.exceptions import ParameterException, ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter

from arm_ik.middleware import SEND_ATTEMPTS
from arm_ik.nodes.common import StartupError
from arm_ik.nodes.parameters import Param, ParameterTable
from arm_ik.nodes.task_messages import GOAL_TYPES
from arm_kinematics.common.checks import check_vector
from arm_kinematics.tasks.current_pose import DEFAULT_WAIT
from arm_kinematics.tasks.cycle import CycleSettings, POINT_PARAMETERS
from arm_kinematics.tasks.sequences import (
    MOTION_LAWS,
    MoveSettings,
    SequenceError,
    TaskSequence,
    with_points,
)

TABLE = ParameterTable(
    Param('action_name', 'trajectory_executor/move_to_target',
          'MoveToTarget action of the trajectory executor (relative: in this namespace)',
          read_only=True),
    Param('sequence_file', '',
          'scripted sequence YAML: a path, or a file name in arm_bringup/config (e.g. '
          'manipulator3d_pick_place.yaml); empty: no scripted cycle', read_only=True),
    Param('cycles', 0, 'cycles of the sequence to run, 0 = until stopped',
          low=0, high=1_000_000),
    Param('autostart', True, "start the cycle as soon as the executor's action server is up "
          '(else call ~/run_cycle)', read_only=True),
    Param('interactive', False, 'ask START and GOAL on the console (stdin) before the cycle, '
          'as the reference program does in a terminal; end of input keeps the parameters',
          read_only=True),
    Param('solver', '', "IK solver of the goals and of the reachability check (empty: the "
          "arm's default)"),
    Param('motion_law', '', "motion law of clicked targets: empty (the executor's default) "
          'or one of the laws', choices=('', *MOTION_LAWS)),
    Param('duration', 0.0, 'duration of a clicked move, s (0: from the velocity limits)',
          low=0.0, high=600.0),
    Param('speed_scale', 0.0, 'fraction of the velocity limits for clicked moves, 0..1 (0: '
          'executor default)', low=0.0, high=1.0),
    Param('goal_pose_type', 'position', 'what a goal_pose asks of the tool',
          choices=tuple(GOAL_TYPES)),
    Param('grasp_tolerance', 0.02, 'largest tip-to-ball distance at which attach succeeds, m',
          low=0.0, high=1.0, low_open=True),
    Param('result_timeout', 30.0, 'time a move may take beyond its own duration before it '
          'counts as failed, s', low=0.0, high=3600.0, low_open=True),
    Param('response_timeout', 3.0, 'time to wait for the executor to accept or reject a goal '
          f'before sending it again ({SEND_ATTEMPTS} attempts in all), s',
          low=0.0, high=60.0, low_open=True),
    Param('ball_rate', 30.0, 'highest rate of ball_state and ball_marker while the ball is '
          'carried, Hz', low=0.0, high=1000.0, low_open=True),
    Param('current_pose_timeout', DEFAULT_WAIT, 'after a move whose result carries no final '
          'state: how long the cycle waits for a joint state stamped after the result before '
          "it attaches, detaches or goes on with the move's target instead (and says so in "
          'target_status), s', low=0.01, high=600.0),
)


def settings_of(values: Mapping[str, Any]) -> CycleSettings:
    """The snapshot of the table's values."""
    return CycleSettings(
        MoveSettings(values['motion_law'], float(values['duration']),
                     float(values['speed_scale']), values['solver']),
        values['goal_pose_type'], int(values['cycles']), float(values['grasp_tolerance']),
        float(values['result_timeout']), float(values['response_timeout']),
        float(values['ball_rate']), float(values['current_pose_timeout']),
        bool(values['autostart']), bool(values['interactive']))


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
            # Not in the table: the default comes from the sequence file, and without one the
            # parameter stays unset (a typed DOUBLE_ARRAY), which the table cannot declare.
            node.declare_parameter(name, default, Param(
                name, default, f'{name.upper()} point of the cycle, m, x y z in the base frame '
                "(unset: the sequence file's value); checked for reach before it is "
                'accepted').descriptor())
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
    vector, reason = check_vector(value, 3, name)
    return vector, (f'{reason}: give 3 finite numbers x, y, z in m' if reason else '')


def sequence_of(node: Node, file_sequence: TaskSequence) -> TaskSequence:
    """The file's sequence with the start/goal parameters applied.

    Raises:
        StartupError: a parameter is set but malformed, or the sequence has no such point.
    """
    overrides = {}
    for name in POINT_PARAMETERS:
        value = point_value(node, name)
        if value is None:
            continue
        vector, reason = point_from_value(name, value)
        if vector is None:
            raise StartupError(reason)
        overrides[name] = vector
    try:
        return with_points(file_sequence, overrides)
    except SequenceError as error:
        raise StartupError(str(error)) from None
