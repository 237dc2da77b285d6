"""The path to real servos: the six_axis pipeline driving ros2_control controllers.

With joint_trajectory_controller (the default) this is controllers.launch.py for the bundled
six_axis arm: its xacro and configuration, the generated ros2_control files, the executor on
the follow_joint_trajectory action. forward_position_controller (one position per tick)
keeps the hand-written files of config/controllers.

    ros2 launch arm_bringup controllers_example.launch.py
    ros2 launch arm_bringup controllers_example.launch.py controller:=forward_position_controller

Needs ros2_control (not installed by rosdep for this package: it is optional):
    sudo apt install ros-$ROS_DISTRO-ros2-control ros-$ROS_DISTRO-ros2-controllers

What runs, all in /six_axis:
- arm.launch.py with the description of config/controllers/six_axis_ros2_control.urdf.xacro
  (the arm plus a ros2_control tag on mock_components/GenericSystem), output set for the
  chosen controller, and feedback_topic:=joint_state_broadcaster/joint_states: every node
  reads the measured state from joint_state_broadcaster as its joint_states, the executor
  takes it as feedback and publishes its own commanded state on commanded_joint_states;
- controller_manager (ros2_control_node) with config/controllers/six_axis_controllers.yaml;
- spawners: joint_state_broadcaster, the chosen controller active and the other one loaded
  inactive (both claim the position interfaces; switch with the controller_manager's
  switch_controller service).
For real servos, change only the <hardware> block of six_axis.ros2_control.xacro to the
servo driver's plugin (see its comment).
"""

from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare

from arm_bringup.control_launch import ros2_control_actions

ARM = 'six_axis'
# Controller -> the executor's output that feeds it.
CONTROLLERS = {'joint_trajectory_controller': 'follow_joint_trajectory',
               'forward_position_controller': 'forward_position'}
BOOLEANS = ['true', 'false']


def generate_launch_description() -> LaunchDescription:
    arguments = [
        DeclareLaunchArgument(
            'controller', default_value='joint_trajectory_controller',
            choices=list(CONTROLLERS),
            description='Controller the trajectory executor drives: joint_trajectory_controller '
                        '(whole timed trajectories through its follow_joint_trajectory action, '
                        'by controllers.launch.py) or forward_position_controller (one '
                        'position per control tick).'),
        DeclareLaunchArgument(
            'rviz', default_value='true', choices=BOOLEANS,
            description='Start RViz with the six_axis config.'),
    ]
    return LaunchDescription(arguments + [OpaqueFunction(function=launch_setup)])


def launch_setup(context: LaunchContext) -> list:
    """The pipeline, the controller manager and the spawners for the chosen controller."""
    controller = LaunchConfiguration('controller').perform(context)
    if controller == 'joint_trajectory_controller':
        # One use of the generic launch file: any arm goes the same way.
        return [IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution(
                [FindPackageShare('arm_bringup'), 'launch', 'controllers.launch.py'])),
            launch_arguments={
                'urdf_file': PathJoinSubstitution(
                    [FindPackageShare('arm_description'), 'urdf', 'six_axis.urdf.xacro']),
                'arm_config': PathJoinSubstitution(
                    [FindPackageShare('arm_description'), 'config', 'six_axis.yaml']),
                'rviz': LaunchConfiguration('rviz'),
            }.items())]
    inactive = [name for name in CONTROLLERS if name != controller]
    controllers_file = PathJoinSubstitution([FindPackageShare('arm_bringup'), 'config',
                                             'controllers', 'six_axis_controllers.yaml'])
    return ros2_control_actions(
        ARM, controllers_file, controller,
        {'rviz': LaunchConfiguration('rviz'), 'output': CONTROLLERS[controller],
         'description_package': 'arm_bringup',
         'description_file': 'config/controllers/six_axis_ros2_control.urdf.xacro'},
        inactive)
