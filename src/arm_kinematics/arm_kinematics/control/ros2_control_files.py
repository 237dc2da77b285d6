"""The ros2_control files of an arm, written from its chain: the ``<ros2_control>`` xacro
block, a top-level xacro that adds it to the arm's URDF, and the controllers YAML.

The block declares one position command interface (with the URDF's limits) and position and
velocity state interfaces per chain joint, starting at the home pose, on
mock_components/GenericSystem unless the ``plugin`` argument names the real hardware's
plugin. The YAML sets up joint_state_broadcaster (on joint_state_broadcaster/joint_states, so
the executor's own joint_states stay apart) and joint_trajectory_controller with the chain's
joints and the ``controller`` section's tolerances and rates, keyed ``/**/<node>`` so it
matches the nodes in any namespace.

Plain text in, plain text out; no ROS import. Units: rad (m for prismatic joints), s, Hz.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math
from xml.sax.saxutils import quoteattr

import yaml

from arm_kinematics.description.controller_config import ControllerConfig

MOCK_PLUGIN = 'mock_components/GenericSystem'
MACRO = 'arm_ros2_control'


@dataclass(frozen=True)
class ControlledJoint:
    """A chain joint as the ros2_control block declares it.

    Attributes:
        name: the URDF joint.
        lower, upper: position limits (rad or m); None for a continuous joint.
        initial: the home position.
    """

    name: str
    lower: float | None
    upper: float | None
    initial: float


def _number(value: float) -> str:
    return repr(float(value))


def ros2_control_xacro(joints: Sequence[ControlledJoint], source: str = '') -> str:
    """The xacro file defining macro ``arm_ros2_control`` (args: name, prefix, plugin).

    Raises:
        ValueError: no joints, a repeated name, or a non-finite limit or home value.
    """
    names = [j.name for j in joints]
    if not names or len(set(names)) != len(names):
        raise ValueError(f'the ros2_control block needs unique joints, got {names}')
    lines = [
        '<?xml version="1.0"?>',
        '<!--',
        f'  ros2_control block written by arm_config{f" from {source}" if source else ""}.',
        '  One position command interface (URDF limits) and position + velocity state',
        '  interfaces per chain joint, starting at the home pose. For real hardware pass',
        "  plugin:='<your driver>/<SystemInterface>' and add its <param>s to <hardware>.",
        '  Use it from a top-level xacro:',
        '    <xacro:include filename="this file"/>',
        '    <xacro:arm_ros2_control name="my_arm"/>',
        '-->',
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro">',
        f'  <xacro:macro name="{MACRO}" params="name prefix:=\'\' '
        f'plugin:=\'{MOCK_PLUGIN}\'">',
        '    <ros2_control name="${name}" type="system">',
        '      <hardware>',
        '        <plugin>${plugin}</plugin>',
        '        <!-- mock_components: the commanded position is the state at once. -->',
        '        <param name="calculate_dynamics">false</param>',
        '      </hardware>',
    ]
    for joint in joints:
        values = [joint.initial] + [v for v in (joint.lower, joint.upper) if v is not None]
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"joint '{joint.name}': limits and home must be finite")
        lines.append(f'      <joint name={quoteattr("${prefix}" + joint.name)}>')
        if joint.lower is None or joint.upper is None:
            lines.append('        <command_interface name="position"/>')
        else:
            lines += ['        <command_interface name="position">',
                      f'          <param name="min">{_number(joint.lower)}</param>',
                      f'          <param name="max">{_number(joint.upper)}</param>',
                      '        </command_interface>']
        lines += ['        <state_interface name="position">',
                  f'          <param name="initial_value">{_number(joint.initial)}</param>',
                  '        </state_interface>',
                  '        <state_interface name="velocity"/>',
                  '      </joint>']
    lines += ['    </ros2_control>', '  </xacro:macro>', '</robot>', '']
    return '\n'.join(lines)


def top_level_xacro(robot_name: str, description_file: str, block_file: str,
                    system_name: str, plugin: str = MOCK_PLUGIN) -> str:
    """A top-level xacro: the arm's URDF (or xacro) plus the ros2_control block on the
    hardware ``plugin``."""
    if not plugin or any(c.isspace() or c in '<>"\'&' for c in plugin):
        raise ValueError(f'hardware plugin {plugin!r} is not a plugin name (e.g. {MOCK_PLUGIN})')
    return '\n'.join([
        '<?xml version="1.0"?>',
        '<!-- The arm with its ros2_control block, written by arm_config. Expand with',
        f'     xacro {block_file.rsplit("/", 1)[0]}/<this file> -->',
        f'<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name={quoteattr(robot_name)}>',
        f'  <xacro:include filename={quoteattr(description_file)}/>',
        f'  <xacro:include filename={quoteattr(block_file)}/>',
        f'  <xacro:{MACRO} name={quoteattr(system_name)} plugin={quoteattr(plugin)}/>',
        '</robot>', ''])


def controllers_yaml(joints: Sequence[str], config: ControllerConfig, source: str = '') -> str:
    """The controllers YAML: controller_manager, joint_state_broadcaster and
    joint_trajectory_controller with ``joints`` and ``config``'s tolerances and rates."""
    controller = config.action.split('/')[0]      # the action is <controller>/follow_...
    constraints: dict = {'stopped_velocity_tolerance': config.stopped_velocity_tolerance,
                         'goal_time': config.goal_time_tolerance}
    for joint in joints:
        constraints[joint] = {'trajectory': config.path_tolerance, 'goal': config.goal_tolerance}
    data: Mapping = {
        '/**/controller_manager': {'ros__parameters': {
            'update_rate': config.update_rate,
            'joint_state_broadcaster': {
                'type': 'joint_state_broadcaster/JointStateBroadcaster'},
            controller: {
                'type': 'joint_trajectory_controller/JointTrajectoryController'}}},
        '/**/joint_state_broadcaster': {'ros__parameters': {
            'use_local_topics': True}},
        f'/**/{controller}': {'ros__parameters': {
            'joints': list(joints),
            'command_interfaces': ['position'],
            'state_interfaces': ['position', 'velocity'],
            'state_publish_rate': config.state_publish_rate,
            'action_monitor_rate': config.action_monitor_rate,
            'allow_partial_joints_goal': False,
            'interpolation_method': 'splines',
            'constraints': constraints}},
    }
    origin = f' from {source}' if source else ''
    header = (f'# ros2_control controllers written by arm_config{origin}.\n'
              '# joint_state_broadcaster publishes the measured state on\n'
              '# joint_state_broadcaster/joint_states (use_local_topics): give that topic to the\n'
              '# executor as feedback_topic. The executor drives joint_trajectory_controller\n'
              f'# through its action ({config.action}) and sends these tolerances with\n'
              '# every goal. Units: rad, rad/s, s, Hz.\n')
    return header + yaml.safe_dump(data, sort_keys=False, default_flow_style=None)


def controlled_joints(chain: Sequence, home: Sequence[float]) -> list[ControlledJoint]:
    """The block's joints from a chain's joints (objects with name, kind, lower, upper, as
    ArmModel.joints) and the home pose: a continuous joint gets no position limits."""
    if len(chain) != len(home):
        raise ValueError(f'home has {len(home)} values for {len(chain)} joints')
    return [ControlledJoint(j.name, None if j.kind == 'continuous' else float(j.lower),
                            None if j.kind == 'continuous' else float(j.upper), float(h))
            for j, h in zip(chain, home)]
