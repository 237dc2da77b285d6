"""Bring up one arm: robot_state_publisher, the arm_ik nodes and RViz.

    ros2 launch arm_bringup arm.launch.py arm:=six_axis
    ros2 launch arm_bringup arm.launch.py arm:=ccd5 rviz:=false solver:=dls motion:=min_jerk
    ros2 launch arm_bringup arm.launch.py --show-args
    ros2 launch arm_bringup arm.launch.py arm:=ur5 urdf_file:=/path/ur5.urdf \
        arm_config:=/path/ur5.yaml base_frame:=base_link tip_frame:=tool0

Every node runs in the arm's namespace (``namespace``, default /<arm>) with the node
parameters arm_bringup/config/<arm>.yaml when that file exists (the bundled examples) and the
arm configuration ``arm_config`` (default: arm_description/config/<arm>.yaml when it exists;
none: defaults derived from the URDF). ``arm`` is a label, not a closed choice: any arm
whose URDF is given works. The description is the xacro (or URDF) output, passed as a string
parameter. TF stays global: tf2_ros
broadcasts on the absolute /tf and /tf_static, and the relative names are remapped there too,
so RViz, tf2_echo and rqt_tf_tree find the tree where they always look. One arm per ROS
domain, then (two arms at once: give each its own ROS_DOMAIN_ID, or their base_link frames
collide). RViz runs in the namespace too, so its relative topics (robot_description, markers)
are the arm's; its Publish Point and 2D Goal Pose tools are remapped into the namespace in
case a config names the global /clicked_point and /goal_pose.

The launch-free runner (arm_bringup/pipeline.py, `make demo`) starts the same nodes with the
same files; test_launch_files.py checks that both name the same nodes.
"""

from pathlib import Path
import shlex

from ament_index_python.packages import get_package_share_directory, PackageNotFoundError
from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import Command, FindExecutable, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

SOLVERS = ['', 'analytic', 'closed_form', 'ccd', 'dls']
MOTION_LAWS = ['', 'exponential', 'speed_cap', 'min_jerk', 'min_jerk_cartesian',
               'linear_cartesian']
OUTPUTS = ['none', 'joint_trajectory', 'forward_position', 'follow_joint_trajectory']
BOOLEANS = ['true', 'false']


def generate_launch_description() -> LaunchDescription:
    arguments = [
        DeclareLaunchArgument(
            'arm', default_value='six_axis',
            description='Label of the arm (namespace, logs). A bundled example (pointer3, '
                        'ccd5, six_axis, manipulator3d) also selects its description, '
                        'configuration, node parameters and RViz config; any other arm needs '
                        'urdf_file (or description_package + description_file).'),
        DeclareLaunchArgument(
            'urdf_file', default_value='',
            description='Path of your URDF or xacro file; overrides description_package and '
                        'description_file.'),
        DeclareLaunchArgument(
            'arm_config', default_value='',
            description='Path of the arm configuration YAML (write one with `ros2 run arm_ik '
                        'arm_config robot.urdf`); empty: arm_description/config/<arm>.yaml '
                        'when it exists, else defaults derived from the URDF (safety off).'),
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
            description='Namespace of every node; empty: /<arm>.'),
        DeclareLaunchArgument(
            'rviz', default_value='true', choices=BOOLEANS,
            description="Start RViz with the arm's config (arm_description/rviz/<arm>.rviz, "
                        'else the generic one with the base frame fixed).'),
        DeclareLaunchArgument(
            'lab', default_value='false', choices=BOOLEANS,
            description='Also start the browser lab (lab_viewer) on http://127.0.0.1:8080 '
                        '(needs pip install viser==1.1.1 yourdfpy==0.0.60).'),
        DeclareLaunchArgument(
            'solver', default_value='', choices=SOLVERS,
            description="IK solver of ~/solve_ik and of target_input's goals; empty: the "
                        "arm's default from the YAML."),
        DeclareLaunchArgument(
            'motion', default_value='', choices=MOTION_LAWS,
            description='Motion law of goals that name none (trajectory_executor); empty: '
                        "the arm's default from the YAML."),
        DeclareLaunchArgument(
            'output', default_value='none', choices=OUTPUTS,
            description='Where the executor sends commands besides joint_states: none, '
                        'joint_trajectory (joint_trajectory_controller/joint_trajectory), '
                        'forward_position (forward_position_controller/commands) or '
                        'follow_joint_trajectory (the action joint_trajectory_controller/'
                        'follow_joint_trajectory, with its results).'),
        DeclareLaunchArgument(
            'feedback_topic', default_value='',
            description='JointState topic of the real arm (not joint_states), e.g. '
                        'joint_state_broadcaster/joint_states of ros2_control. When set, every '
                        'node reads it as its joint_states, and the executor takes it as '
                        'feedback and publishes its commanded state on commanded_joint_states; '
                        'empty: no feedback, joint_states is the commanded state (simulation).'),
        DeclareLaunchArgument(
            'cycle', default_value='false', choices=BOOLEANS,
            description='Start the scripted pick-and-place cycle at once (arms with a '
                        'sequence: ccd5, manipulator3d); else call ~/run_cycle of '
                        'target_input.'),
        DeclareLaunchArgument(
            'cycles', default_value='0',
            description='Cycles of the scripted sequence, 0 = until stopped.'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false', choices=BOOLEANS,
            description='Use /clock for node time stamps (the executor always times its '
                        'moves with the wall clock).'),
        DeclareLaunchArgument(
            'description_package', default_value='arm_description',
            description='Package holding the robot description; override it to use a '
                        'custom description (e.g. one with a ros2_control tag).'),
        DeclareLaunchArgument(
            'description_file', default_value='',
            description='Xacro file inside description_package (relative to its share '
                        'folder); empty: urdf/<arm>.urdf.xacro.'),
    ]
    return LaunchDescription(arguments + [OpaqueFunction(function=launch_setup)])


def launch_setup(context: LaunchContext) -> list:
    """The nodes, built once the arguments are known (the YAML and defaults depend on arm)."""
    arm = LaunchConfiguration('arm').perform(context)
    solver = LaunchConfiguration('solver').perform(context)
    motion = LaunchConfiguration('motion').perform(context)
    feedback_topic = LaunchConfiguration('feedback_topic').perform(context)
    description_package = LaunchConfiguration('description_package').perform(context)
    description_file = LaunchConfiguration('description_file').perform(context)
    urdf_file = LaunchConfiguration('urdf_file').perform(context)
    namespace = LaunchConfiguration('namespace').perform(context).strip('/') or arm
    # Every argument is checked here, before any node is returned: an exception that launch
    # meets later, while it executes the nodes (a failed xacro, an unknown package, a bad
    # number), leaves the nodes it already started running after launch has exited.
    description_path = _description_path(arm, urdf_file, description_package, description_file)
    # xacro expands a plain URDF unchanged, so one command serves both. Quoted: Command
    # splits its command line with shlex, so a path with a space would be two arguments.
    description = {'robot_description': ParameterValue(
        Command([PathJoinSubstitution([FindExecutable(name='xacro')]), ' ',
                 shlex.quote(description_path)]),
        value_type=str)}
    sim_time = {'use_sim_time': ParameterValue(LaunchConfiguration('use_sim_time'),
                                               value_type=bool)}
    own_description = bool(urdf_file or description_file)
    arm_config = LaunchConfiguration('arm_config').perform(context) or \
        ('' if own_description else _share_file('arm_description', 'config', f'{arm}.yaml'))
    if arm_config and not Path(arm_config).is_file():
        raise RuntimeError(f'arm_config:={arm_config}: no such file (write one with '
                           '`ros2 run arm_ik arm_config <your URDF>`)')
    cycles = LaunchConfiguration('cycles').perform(context)
    if not cycles.isdigit():
        raise RuntimeError(f'cycles:={cycles}: expected a whole number, 0 = until stopped')
    if IfCondition(LaunchConfiguration('rviz')).evaluate(context) and not _has_package('rviz2'):
        raise RuntimeError('rviz:=true but rviz2 is not installed: install it, or pass '
                           'rviz:=false')
    node_parameters = _share_file('arm_bringup', 'config', f'{arm}.yaml')
    rviz_config = _share_file('arm_description', 'rviz', f'{arm}.rviz') or \
        _share_file('arm_description', 'rviz', 'generic.rviz')
    chain = {'arm': arm, 'arm_config': arm_config,
             'base_frame': LaunchConfiguration('base_frame').perform(context),
             'tip_frame': LaunchConfiguration('tip_frame').perform(context)}
    rviz_arguments = ['-d', rviz_config]
    if chain['base_frame']:
        rviz_arguments += ['-f', chain['base_frame']]

    # On top of the YAML, as arm_bringup/pipeline.py node_overrides() does for the runner.
    executor = {'output': ParameterValue(LaunchConfiguration('output'), value_type=str)}
    if motion:
        executor['motion_law'] = motion
    # With a real arm, joint_states of every node is the measured state; the executor's own
    # (commanded) output moves aside. A remap renames a node's publishers and subscriptions
    # alike, hence a feedback topic of another name than joint_states.
    if feedback_topic.strip('/') in ('joint_states', f'{namespace}/joint_states'):
        raise ValueError(f"feedback_topic:={feedback_topic} is the executor's own output; "
                         "name the real arm's topic, e.g. "
                         'joint_state_broadcaster/joint_states')
    measured = [('joint_states', feedback_topic)] if feedback_topic else []
    executor_remappings = []
    if feedback_topic:
        executor['feedback_topic'] = feedback_topic
        executor['publish_on_start'] = False
        executor_remappings = [('joint_states', 'commanded_joint_states')]
    ik_server = {'default_solver': solver} if solver else {}
    target_input = {
        'autostart': ParameterValue(LaunchConfiguration('cycle'), value_type=bool),
        'cycles': int(cycles),
        **({'solver': solver} if solver else {}),
    }

    def arm_ik_node(executable: str, overrides: dict | None = None,
                    remappings: list | None = None) -> Node:
        # The YAML first: rclpy applies the parameter-file entries that match a node in the
        # order they first appear across its files, the later ones winning, and launch_ros
        # writes the dicts under the node's full name (/<arm>/<node>); after the YAML's
        # /**/<node> entry, that entry (with the launch arguments) wins.
        files = [node_parameters] if node_parameters else []
        return Node(package='arm_ik', executable=executable, name=executable,
                    namespace=namespace,
                    parameters=[*files, description, chain, sim_time, overrides or {}],
                    remappings=measured if remappings is None else remappings,
                    output='screen', emulate_tty=True)

    return [
        Node(package='robot_state_publisher', executable='robot_state_publisher',
             namespace=namespace, parameters=[description, sim_time],
             remappings=[('tf', '/tf'), ('tf_static', '/tf_static'), *measured],
             output='screen'),
        arm_ik_node('arm_info'),
        arm_ik_node('ik_server', ik_server),
        arm_ik_node('safety_monitor'),
        arm_ik_node('trajectory_executor', executor, executor_remappings),
        arm_ik_node('target_input', target_input),
        arm_ik_node('markers'),
        Node(package='arm_ik', executable='lab_viewer', name='lab_viewer',
             namespace=namespace,
             parameters=[description, chain, sim_time,
                         {'urdf_file': urdf_file} if urdf_file else {}],
             remappings=measured,
             condition=IfCondition(LaunchConfiguration('lab')), output='screen'),
        Node(package='rviz2', executable='rviz2', name='rviz2', namespace=namespace,
             arguments=rviz_arguments, parameters=[sim_time],
             remappings=[('/clicked_point', f'/{namespace}/clicked_point'),
                         ('/goal_pose', f'/{namespace}/goal_pose'),
                         ('tf', '/tf'), ('tf_static', '/tf_static')],
             condition=IfCondition(LaunchConfiguration('rviz')), output='screen'),
    ]


def _share_file(package: str, *parts: str) -> str:
    """Path of a file in a package's share folder, '' when the file is not there."""
    path = Path(get_package_share_directory(package)).joinpath(*parts)
    return str(path) if path.is_file() else ''


def _has_package(package: str) -> bool:
    try:
        get_package_share_directory(package)
    except PackageNotFoundError:
        return False
    return True


def _description_path(arm: str, urdf_file: str, package: str, description_file: str) -> str:
    """The URDF or xacro file to expand; a clear error when there is none."""
    if urdf_file:
        if not Path(urdf_file).is_file():
            raise RuntimeError(f'urdf_file:={urdf_file}: no such file')
        return urdf_file
    try:
        share = Path(get_package_share_directory(package))
    except PackageNotFoundError:
        raise RuntimeError(f'description_package:={package}: no such package') from None
    path = share / (description_file or f'urdf/{arm}.urdf.xacro')
    if path.is_file():
        return str(path)
    if description_file:
        raise RuntimeError(f'description_file:={description_file}: not in {share}')
    bundled = sorted(p.name.split('.')[0] for p in (share / 'urdf').glob('*.urdf.*'))
    raise RuntimeError(f'arm:={arm} has no bundled description ({path} does not exist): '
                       f'give urdf_file:=<your URDF or xacro> (bundled: {", ".join(bundled)})')
