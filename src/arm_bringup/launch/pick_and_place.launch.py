"""The scripted pick-and-place cycle: arm.launch.py with target_input's cycle started at once.

    ros2 launch arm_bringup pick_and_place.launch.py        # ccd5: pick, lift, place, home
    ros2 launch arm_bringup pick_and_place.launch.py arm:=manipulator3d cycles:=3

The cycle comes from arm_bringup/config/<arm>_pick_place.yaml (target_input's sequence_file in
arm_bringup/config/<arm>.yaml). Every point is checked for reach before the first goal; the
ball is drawn at the tool while carried. Watch it in RViz, or follow the steps with
`ros2 topic echo /<arm>/target_status`. Stop it with `ros2 service call
/<arm>/target_input/stop_cycle std_srvs/srv/Trigger`, start it again with .../run_cycle.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare

# The arms whose YAML names a pick-and-place sequence.
PICK_PLACE_ARMS = ['ccd5', 'manipulator3d']
BOOLEANS = ['true', 'false']


def generate_launch_description() -> LaunchDescription:
    arguments = [
        DeclareLaunchArgument(
            'arm', default_value='ccd5', choices=PICK_PLACE_ARMS,
            description='Arm with a scripted pick-and-place cycle: ccd5 (pick, lift, place, '
                        'home) or manipulator3d (home, start, pick, goal, place, home, wait).'),
        DeclareLaunchArgument(
            'cycles', default_value='0',
            description='Cycles to run, 0 = until stopped.'),
        DeclareLaunchArgument(
            'rviz', default_value='true', choices=BOOLEANS,
            description="Start RViz with the arm's config."),
        DeclareLaunchArgument(
            'output', default_value='none',
            choices=['none', 'joint_trajectory', 'forward_position'],
            description='Where the executor sends commands besides joint_states (see '
                        'arm.launch.py).'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false', choices=BOOLEANS,
            description='Use /clock for node time stamps.'),
    ]
    arm_launch = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(
            PathJoinSubstitution([FindPackageShare('arm_bringup'), 'launch', 'arm.launch.py'])),
        launch_arguments={
            'arm': LaunchConfiguration('arm'),
            'rviz': LaunchConfiguration('rviz'),
            'output': LaunchConfiguration('output'),
            'use_sim_time': LaunchConfiguration('use_sim_time'),
            'cycle': 'true',
            'cycles': LaunchConfiguration('cycles'),
        }.items())
    return LaunchDescription(arguments + [arm_launch])
