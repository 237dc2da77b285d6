"""The ros2_control files of an arm, written from its chain: the ``<ros2_control>`` xacro
block, a top-level xacro that adds it to the arm's URDF, and the controllers YAML.

The block declares one position command interface (with the URDF's limits) and position and
velocity state interfaces per chain joint, starting at the home pose, on
mock_components/GenericSystem unless the ``plugin`` argument names the real hardware's
plugin. Its joint names are the URDF's as they are (no prefix argument: a prefixed arm is a
URDF whose joints carry the prefix, and the block and YAML are written from those names).

The YAML sets up joint_state_broadcaster (on joint_state_broadcaster/joint_states, so the
executor's own joint_states stay apart; ``extra_joints``: the URDF's movable joints outside
the chain, which it publishes at 0 so robot_state_publisher has every link) and
joint_trajectory_controller with the chain's joints and the ``controller`` section's
tolerances and rate, keyed ``/**/<node>`` so it matches the nodes in any namespace. It holds
only parameters that joint_trajectory_controller declares on Jazzy (4.x) and Kilted (5.x):
undeclared ones are ignored without a word.

A URDF that already has a ``<ros2_control>`` block (a vendor description: the xArm7's
uf_robot_hardware/UFRobotSystemHardware, TIAGo Pro's robot_control/RobotControl) is refused:
a second block claiming the same joints stops controller_manager from loading
(``refuse_existing_blocks``).

Plain text in, plain text out; no ROS import. Units: rad (m for prismatic joints), s, Hz.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math
import re
from xml.sax.saxutils import quoteattr

import yaml

from arm_kinematics.common.urdf_tree import parse_robot_xml
from arm_kinematics.description.controller_config import ControllerConfig, DEFAULT_ACTION
from arm_kinematics.description.passive_joints import PassiveJoints
from arm_kinematics.model.arm_model import ArmModel

MOCK_PLUGIN = 'mock_components/GenericSystem'
MACRO = 'arm_ros2_control'
# joint_trajectory_controller serves its action as <its node name>/follow_joint_trajectory.
ACTION_SUFFIX = 'follow_joint_trajectory'
# A ROS name segment (a node name or a namespace part).
_NAME_SEGMENT = re.compile(r'[A-Za-z_][A-Za-z0-9_]*\Z')


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


@dataclass(frozen=True)
class ExistingBlock:
    """A ``<ros2_control>`` block a URDF already has: its name, hardware plugin, joints."""

    name: str
    plugin: str
    joints: tuple[str, ...]


def controller_name(action: str, in_arm_namespace: bool = False) -> str:
    """The controller that serves ``action`` (the segment before ``follow_joint_trajectory``).

    ``in_arm_namespace``: the controller runs in the executor's own namespace (as
    controllers.launch.py starts it), so the action must be exactly
    ``<controller>/follow_joint_trajectory``.

    Raises:
        ValueError: the action has another form; the message says which form works.
    """
    segments = action.removeprefix('/').split('/')
    if len(segments) < 2 or segments[-1] != ACTION_SUFFIX or \
            not all(_NAME_SEGMENT.match(s) for s in segments[:-1]):
        raise ValueError(f'controller.action {action!r} is no joint_trajectory_controller '
                         f'action: it serves <controller>/{ACTION_SUFFIX} (<controller> its '
                         f'node name, e.g. {DEFAULT_ACTION})')
    name = segments[-2]
    if in_arm_namespace and (len(segments) != 2 or action.startswith('/')):
        raise ValueError(f'controller.action {action!r}: controllers.launch.py starts the '
                         "controllers in the arm's namespace, where the executor reaches this "
                         f'one at {name}/{ACTION_SUFFIX}: set controller.action to that, or '
                         'start controller_manager yourself in the namespace of the action')
    return name


def existing_ros2_control(urdf: str) -> list[ExistingBlock]:
    """The ``<ros2_control>`` blocks of URDF text, in file order.

    Raises:
        DescriptionError: not XML, or not a ``<robot>``.
    """
    return [ExistingBlock(element.get('name', ''),
                          (element.findtext('hardware/plugin') or '').strip(),
                          tuple(j.get('name', '') for j in element.findall('joint')))
            for element in parse_robot_xml(urdf).iter('ros2_control')]


def refuse_existing_blocks(urdf: str, source: str) -> None:
    """Refuse a URDF that already has ``<ros2_control>`` blocks, in one line naming them.

    Raises:
        ValueError: the URDF has at least one block.
    """
    blocks = existing_ros2_control(urdf)
    if not blocks:
        return
    named = ', '.join(f"'{b.name}' (plugin {b.plugin or '(none)'}, {len(b.joints)} joints)"
                      for b in blocks)
    raise ValueError(f'{source} already has {len(blocks)} <ros2_control> block(s): {named}; '
                     "arm_config's block beside it would claim the same joints and "
                     'controller_manager would not load. '
                     "Remove the block(s) from the URDF to use arm_config's (mock hardware or "
                     "--hardware-plugin), or start the vendor's own ros2_control bringup and "
                     f'set controller.action to its <controller>/{ACTION_SUFFIX}')


def broadcaster_extra_joints(model: ArmModel) -> dict[str, float]:
    """{joint: where it rests} for joint_state_broadcaster's ``extra_joints``: the movable
    joints of the model's URDF that the block does not hold (outside the chain, or locked),
    mimic joints left out (robot_state_publisher computes those from their leader)."""
    passive = PassiveJoints.of(model)
    return {name: passive.rest[name] for name in passive.names if name not in passive.mimics}


def _number(value: float) -> str:
    return repr(float(value))


def ros2_control_xacro(joints: Sequence[ControlledJoint], source: str = '') -> str:
    """The xacro file defining macro ``arm_ros2_control`` (args: name, plugin).

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
        '  The joints are named as in the URDF it was written from (no prefix argument).',
        '  Use it from a top-level xacro:',
        '    <xacro:include filename="this file"/>',
        '    <xacro:arm_ros2_control name="my_arm"/>',
        '-->',
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro">',
        f'  <xacro:macro name="{MACRO}" params="name plugin:=\'{MOCK_PLUGIN}\'">',
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
        # xacro would evaluate ${...} and $(...) in a name: $$ keeps them literal.
        literal = re.sub(r'\$(?=[{(])', '$$', joint.name)
        lines.append(f'      <joint name={quoteattr(literal)}>')
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


def controllers_yaml(joints: Sequence[str], config: ControllerConfig, source: str = '',
                     extra_joints: Mapping[str, float] | None = None) -> str:
    """The controllers YAML: controller_manager, joint_state_broadcaster (``extra_joints``:
    {joint: rest position} of broadcaster_extra_joints, published at 0) and
    joint_trajectory_controller with ``joints`` and ``config``'s tolerances and rate.

    Raises:
        ValueError: ``config.action`` is not
            ``[<namespace>/]<controller>/follow_joint_trajectory``.
    """
    controller = controller_name(config.action)
    extra = dict(extra_joints or {})
    constraints: dict = {'stopped_velocity_tolerance': config.stopped_velocity_tolerance,
                         'goal_time': config.goal_time_tolerance}
    for joint in joints:
        constraints[joint] = {'trajectory': config.path_tolerance, 'goal': config.goal_tolerance}
    broadcaster: dict = {'use_local_topics': True}
    if extra:
        # An empty list has no type for the ROS parameter YAML reader: leave the key out.
        broadcaster['extra_joints'] = list(extra)
    data: Mapping = {
        '/**/controller_manager': {'ros__parameters': {
            'update_rate': config.update_rate,
            'joint_state_broadcaster': {
                'type': 'joint_state_broadcaster/JointStateBroadcaster'},
            controller: {
                'type': 'joint_trajectory_controller/JointTrajectoryController'}}},
        '/**/joint_state_broadcaster': {'ros__parameters': broadcaster},
        f'/**/{controller}': {'ros__parameters': {
            'joints': list(joints),
            'command_interfaces': ['position'],
            'state_interfaces': ['position', 'velocity'],
            'action_monitor_rate': config.action_monitor_rate,
            'allow_partial_joints_goal': False,
            'interpolation_method': 'splines',
            'constraints': constraints}},
    }
    origin = f' from {source}' if source else ''
    header = (f'# ros2_control controllers written by arm_config{origin}.\n'
              '# joint_state_broadcaster publishes the measured state on\n'
              '# joint_state_broadcaster/joint_states (use_local_topics): give that topic to the\n'
              '# executor as feedback_topic. The executor drives the joint_trajectory_controller\n'
              f'# named {controller} through its action\n'
              f'#   {config.action}\n'
              '# and sends these tolerances with every goal. Units: rad, rad/s, s, Hz.\n')
    # Where the controller must run for the executor's name to reach it ('' : beside it).
    namespace = config.action.rsplit('/', 2)[0] if config.action.count('/') >= 2 else ''
    namespace = namespace or ('/' if config.action.startswith('/') else '')
    if namespace:
        header += (f"# Start controller_manager in {namespace} (below the executor's namespace "
                   'when\n# relative) for the executor to reach it; /** matches any namespace.\n')
    if extra:
        header += ('# extra_joints: the movable joints outside the chain (no state interface),\n'
                   '# published at 0 so robot_state_publisher has every link.\n')
    elsewhere = [f'{name} ({rest:g})' for name, rest in extra.items() if rest != 0.0]
    if elsewhere:
        header += (f'# Not at 0 in the arm model (0 is outside their limits or they are locked): '
                   f'{", ".join(elsewhere)}.\n')
    return header + yaml.safe_dump(data, sort_keys=False, default_flow_style=None)


def controlled_joints(chain: Sequence, home: Sequence[float]) -> list[ControlledJoint]:
    """The block's joints from a chain's joints (objects with name, kind, lower, upper, as
    ArmModel.joints) and the home pose: a continuous joint gets no position limits."""
    if len(chain) != len(home):
        raise ValueError(f'home has {len(home)} values for {len(chain)} joints')
    return [ControlledJoint(j.name, None if j.kind == 'continuous' else float(j.lower),
                            None if j.kind == 'continuous' else float(j.upper), float(h))
            for j, h in zip(chain, home)]
