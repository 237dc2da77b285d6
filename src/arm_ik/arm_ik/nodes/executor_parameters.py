"""trajectory_executor's parameters, once: name, default, description (units), range, read-only.

The arm-dependent defaults (``initial_positions``: the YAML home; ``motion_law``: the YAML's
motion.default_law; ``controller_joints``: the chain) are given to ``TABLE.declare``.
Cross-field rules are ``kinematics.motion.executor.settings_reason``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
import math
from typing import Any

import numpy as np

from arm_ik.nodes.parameters import Param, ParameterTable
from arm_kinematics.arm import ArmConfig
from arm_kinematics.common.joint_state import joint_order
from arm_kinematics.description.bundled import check_home, home_from_config
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion import laws

OUTPUTS = ('none', 'joint_trajectory', 'forward_position', 'follow_joint_trajectory')
CONTROL_LOOPS = ('thread', 'timer')
DEFAULT_CONTROLLER_TOPICS = {'joint_trajectory': 'joint_trajectory_controller/joint_trajectory',
                             'forward_position': 'forward_position_controller/commands'}

TABLE = ParameterTable(
    # Fixed for the life of the process.
    Param('output', 'none', 'where commands go besides joint_states', read_only=True,
          choices=OUTPUTS),
    Param('controller_topic', '', 'command topic of the controller; empty: joint_trajectory_'
          'controller/joint_trajectory or forward_position_controller/commands', read_only=True),
    Param('controller_action', '', 'FollowJointTrajectory action of the controller (output '
          "follow_joint_trajectory), relative to the namespace; empty: the arm configuration's "
          'controller.action (default joint_trajectory_controller/follow_joint_trajectory)',
          read_only=True),
    Param('controller_joints', [''], "the controller's joint order (forward_position data, "
          "JointTrajectory names); exactly the arm's joints", read_only=True),
    Param('initial_positions', [0.0], "start pose, rad, chain order (default: the home pose of "
          "the arm's YAML)", read_only=True),
    Param('publish_on_start', True, 'publish the start pose at once; false: publish nothing '
          'until the first command (use on real servos, with feedback_topic)', read_only=True),
    Param('feedback_topic', '', 'JointState topic of the real arm (the truth); empty: no '
          'feedback', read_only=True),
    Param('follow_target', True, 'follow the live target topic with follow_law', read_only=True),
    Param('planning_process', True, 'plan in a separate process (keeps IK work off the control '
          'timer)', read_only=True),
    Param('control_loop', 'thread', 'what runs the control tick: thread (a dedicated thread '
          'sleeping to absolute deadlines, wall clock) or timer (an rclpy timer in its own '
          'callback group)', read_only=True, choices=CONTROL_LOOPS),
    Param('realtime_priority', 50, 'SCHED_FIFO priority of the control thread (control_loop: '
          "thread), 1..98, as ros2_control's controller_manager asks for; refused without "
          'CAP_SYS_NICE or an rtprio limit (then a warning and normal priority); 0: do not ask',
          read_only=True, low=0, high=98),
    Param('avoid_obstacle', False, 'obstacle contact blocks a move (else it is only reported)',
          read_only=True),
    # Changeable at run time (validated; one snapshot swapped whole).
    Param('publish_rate', 100.0, 'joint_states and command rate, Hz', low=1.0, high=1000.0),
    Param('motion_law', laws.MIN_JERK, 'law of goals that name none', choices=laws.LAWS),
    Param('speed_scale', 0.5, 'default fraction of the URDF velocity limits, (0, 1]', low=0.0,
          high=1.0, low_open=True),
    Param('exponential_gain', 3.0, 'k of the exponential law, 1/s (fraction 1 - exp(-k dt) per '
          'tick)', low=0.0, high=100.0, low_open=True),
    Param('speed_cap_iterations', 3, 'CCD iterations per control tick of the speed-cap law',
          low=1, high=1000),
    Param('settle_tolerance', 1e-3, 'exponential law done within this of the goal, rad',
          low=0.0, high=0.1, low_open=True),
    Param('position_tolerance', 1e-3, 'speed-cap law done within this of the target, m',
          low=0.0, high=0.1, low_open=True),
    Param('start_tolerance', 0.02, 'largest distance of a trajectory start from the current '
          'state, rad', low=0.0, high=1.0),
    Param('max_condition_number', 50.0, 'singularity threshold of Cartesian lines (position '
          'Jacobian condition number)', low=1.0, high=1e6),
    Param('max_joint_jump', 0.2, 'largest joint change between two Cartesian samples, rad',
          low=0.0, high=math.pi, low_open=True),
    Param('min_duration', 0.2, 'shortest timed move, s', low=0.0, high=60.0),
    Param('max_duration', 60.0, 'longest move, s', low=0.0, high=600.0, low_open=True),
    Param('detour', True, 'detour a joint path that goes through the floor'),
    Param('watchdog_timeout', 0.5, 'live target stream stale after this long: hold, s', low=0.0,
          high=60.0, low_open=True),
    Param('follow_law', laws.EXPONENTIAL, 'law following the live target',
          choices=laws.STREAMING_LAWS),
    Param('follow_solver', '', "IK solver for the live target (analytic, closed_form, ccd, "
          "dls); '': the arm's default solver"),
    Param('feedback_stale_periods', 3.0, 'measured state stale after this many of its periods: '
          'hold', low=1.0, high=1000.0),
    Param('feedback_rate', 10.0, 'action feedback rate, Hz', low=0.0, high=100.0,
          low_open=True),
)


def arm_defaults(model: ArmModel, config: ArmConfig) -> dict[str, Any]:
    """The defaults that come from the arm: its YAML's motion law and home, its joints."""
    motion = config.get('motion') or {}
    return {'motion_law': motion.get('default_law', laws.MIN_JERK),
            'initial_positions': home_from_config(model, config),
            'controller_joints': list(model.joint_names)}


@dataclass(frozen=True)
class Outputs:
    """The read-only parameters that fix where commands go and where the arm starts."""

    output: str
    controller_topic: str
    controller_action: str
    controller_joints: list[str]
    controller_order: list[int]          # chain index of each controller joint
    initial: np.ndarray                  # rad, chain order
    feedback_topic: str


def outputs_of(values: Mapping[str, Any], model: ArmModel,
               resolve: Callable[[str], str] = lambda name: name,
               default_action: str = 'joint_trajectory_controller/follow_joint_trajectory'
               ) -> Outputs:
    """The fixed outputs of ``values`` (TABLE's) for ``model``.

    Args:
        resolve: a topic name as the node resolves it (``Node.resolve_topic_name``).
        default_action: the action when controller_action is empty (the arm configuration's).

    Raises:
        ValueError: controller_joints not exactly the arm's joints, an initial pose
            outside the limits, or a feedback topic that is the executor's own joint_states
            output (the message says which and how to fix it).
    """
    feedback = values['feedback_topic']
    if feedback and resolve(feedback) == resolve('joint_states'):
        raise ValueError(f'feedback_topic "{feedback}" is this executor\'s own joint_states '
                         "output: name the real arm's topic, or remap the output "
                         '(-r joint_states:=commanded_joint_states)')
    names = tuple(model.joint_names)
    joints = list(values['controller_joints'])
    order, reason = joint_order(names, joints, 'controller_joints')
    if order is None:
        raise ValueError(f"{reason}. Name each of the arm's joints once, in the order the "
                         'controller expects.')
    initial = [float(v) for v in values['initial_positions']]
    reason = check_home(model, initial)
    if reason:
        raise ValueError(f'initial_positions: {reason}')
    output = values['output']
    action = values['controller_action'] or default_action
    if output == 'follow_joint_trajectory' and (not action.strip() or action.startswith('~')
                                                or any(c.isspace() for c in action)):
        raise ValueError(f'controller_action "{action}" is not an action name (e.g. '
                         'joint_trajectory_controller/follow_joint_trajectory)')
    return Outputs(output, values['controller_topic'] or DEFAULT_CONTROLLER_TOPICS.get(output, ''),
                   action, joints, [names.index(name) for name in joints], np.array(initial),
                   feedback)
