"""MoveIt's move_group interface for one arm, served by arm_ik's move_group node.

    ros2 launch arm_bringup move_group.launch.py arm:=six_axis
    ros2 launch arm_bringup move_group.launch.py urdf_file:=/path/panda.urdf \
        srdf_file:=/path/panda.srdf base_frame:=panda_link0 tip_frame:=panda_hand_tcp
    ros2 launch arm_bringup move_group.launch.py --show-args

Starts robot_state_publisher, move_group (compute_ik, compute_fk, compute_cartesian_path,
plan_kinematic_path, move_action, execute_trajectory, the planning scene) and the
trajectory_executor it executes through, all in ``namespace`` (default the root, as MoveIt's
move_group, so MoveIt clients started without a namespace find it). With a real arm, pass
output:=follow_joint_trajectory and its feedback_topic. ``make move_group`` starts the same
two arm_ik nodes without launch (arm_bringup/move_group.py).
"""

from pathlib import Path
import shlex

from ament_index_python.packages import get_package_share_directory, PackageNotFoundError
from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import Command, FindExecutable, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

OUTPUTS = ['none', 'joint_trajectory', 'forward_position', 'follow_joint_trajectory']


def generate_launch_description() -> LaunchDescription:
    arguments = [
        DeclareLaunchArgument(
            'arm', default_value='six_axis',
            description='Label of the arm (logs). A bundled example (pointer3, ccd5, '
                        'six_axis, manipulator3d) also selects its description and '
                        'configuration; any other arm needs urdf_file.'),
        DeclareLaunchArgument(
            'urdf_file', default_value='',
            description='Path of your URDF or xacro file (robot_description).'),
        DeclareLaunchArgument(
            'srdf_file', default_value='',
            description='Path of its SRDF (robot_description_semantic: groups, group states, '
                        'end effectors, disabled collisions); empty: the chain is one group, '
                        '"arm".'),
        DeclareLaunchArgument(
            'arm_config', default_value='',
            description='Path of the arm configuration YAML; empty: arm_description/config/'
                        '<arm>.yaml when it exists, else defaults derived from the URDF.'),
        DeclareLaunchArgument(
            'base_frame', default_value='',
            description="Root link of the chain; empty: the configuration's, else the URDF "
                        'root link.'),
        DeclareLaunchArgument(
            'tip_frame', default_value='',
            description="Tool link of the chain; empty: the configuration's, else tool0 or "
                        'the URDF leaf link.'),
        DeclareLaunchArgument(
            'namespace', default_value='',
            description='Namespace of every node; empty: the root, as MoveIt.'),
        DeclareLaunchArgument(
            'output', default_value='none', choices=OUTPUTS,
            description='Where trajectory_executor sends trajectories besides joint_states '
                        '(follow_joint_trajectory: the action joint_trajectory_controller/'
                        'follow_joint_trajectory of a real controller).'),
        DeclareLaunchArgument(
            'feedback_topic', default_value='',
            description='JointState topic of the real arm (e.g. joint_state_broadcaster/'
                        'joint_states); empty: joint_states is the commanded state.'),
    ]
    return LaunchDescription(arguments + [OpaqueFunction(function=launch_setup)])


def launch_setup(context: LaunchContext) -> list:
    arm = LaunchConfiguration('arm').perform(context)
    urdf_file = LaunchConfiguration('urdf_file').perform(context)
    srdf_file = LaunchConfiguration('srdf_file').perform(context)
    namespace = LaunchConfiguration('namespace').perform(context).strip('/')
    feedback_topic = LaunchConfiguration('feedback_topic').perform(context)
    if urdf_file:
        if not Path(urdf_file).is_file():
            raise RuntimeError(f'urdf_file:={urdf_file}: no such file')
        description_path = urdf_file
    else:
        description_path = _share_file('arm_description', 'urdf', f'{arm}.urdf.xacro')
        if not description_path:
            raise RuntimeError(f'arm:={arm} has no bundled description: give urdf_file:=')
    if srdf_file and not Path(srdf_file).is_file():
        raise RuntimeError(f'srdf_file:={srdf_file}: no such file')
    srdf = Path(srdf_file).read_text(encoding='utf-8') if srdf_file else ''
    description = {'robot_description': ParameterValue(
        Command([PathJoinSubstitution([FindExecutable(name='xacro')]), ' ',
                 shlex.quote(description_path)]), value_type=str)}
    arm_config = LaunchConfiguration('arm_config').perform(context) or \
        ('' if urdf_file else _share_file('arm_description', 'config', f'{arm}.yaml'))
    chain = {'arm': arm, 'arm_config': arm_config,
             'base_frame': LaunchConfiguration('base_frame').perform(context),
             'tip_frame': LaunchConfiguration('tip_frame').perform(context)}
    executor = {'output': ParameterValue(LaunchConfiguration('output'), value_type=str)}
    remappings = []
    if feedback_topic:
        executor.update(feedback_topic=feedback_topic, publish_on_start=False)
        remappings = [('joint_states', 'commanded_joint_states')]
    measured = [('joint_states', feedback_topic)] if feedback_topic else []
    return [
        Node(package='robot_state_publisher', executable='robot_state_publisher',
             namespace=namespace, parameters=[description],
             remappings=[('tf', '/tf'), ('tf_static', '/tf_static'), *measured],
             output='screen'),
        # servo_node: the trajectory executor with MoveIt Servo's jog interface attached.
        Node(package='arm_ik', executable='servo_node', name='trajectory_executor',
             namespace=namespace, parameters=[description, chain, executor],
             remappings=remappings, output='screen', emulate_tty=True),
        Node(package='arm_ik', executable='move_group', name='move_group',
             namespace=namespace,
             parameters=[description, chain,
                         {'robot_description_semantic': srdf} if srdf else {}],
             remappings=measured, output='screen', emulate_tty=True),
    ]


def _share_file(package: str, *parts: str) -> str:
    try:
        path = Path(get_package_share_directory(package)).joinpath(*parts)
    except PackageNotFoundError:
        return ''
    return str(path) if path.is_file() else ''
