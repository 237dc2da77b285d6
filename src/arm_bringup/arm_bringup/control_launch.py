"""The launch actions of an arm on ros2_control, shared by controllers.launch.py (any arm,
generated files) and controllers_example.launch.py (six_axis, forward_position_controller):
arm.launch.py reading the measured state of joint_state_broadcaster, the controller manager
and the spawners. Only launch files import this module (it needs launch and launch_ros).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

MEASURED = 'joint_state_broadcaster/joint_states'


def ros2_control_actions(namespace: str, controllers_file: object, active: str,
                         arm_arguments: Mapping[str, object],
                         inactive: Sequence[str] = ()) -> list:
    """arm.launch.py as arm ``namespace`` with ``arm_arguments`` (feedback_topic: MEASURED),
    ros2_control_node with the controllers YAML ``controllers_file`` (a path or a
    substitution), and the spawners of joint_state_broadcaster, of ``active`` and of
    ``inactive`` (loaded, not started), all in ``namespace``."""
    manager = f'/{namespace}/controller_manager'
    pipeline = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(
            PathJoinSubstitution([FindPackageShare('arm_bringup'), 'launch', 'arm.launch.py'])),
        launch_arguments={'arm': namespace, 'feedback_topic': MEASURED,
                          **arm_arguments}.items())
    control_node = Node(
        package='controller_manager', executable='ros2_control_node', namespace=namespace,
        parameters=[controllers_file],
        # Since Jazzy the manager reads the URDF from ~/robot_description; the arm's
        # robot_state_publisher publishes it on robot_description in this namespace.
        remappings=[('~/robot_description', 'robot_description')], output='screen')

    def spawner(*arguments: object) -> Node:
        return Node(package='controller_manager', executable='spawner', namespace=namespace,
                    arguments=[*arguments, '--controller-manager', manager], output='screen')

    spawners = [spawner('joint_state_broadcaster'),
                spawner(active, '--param-file', controllers_file)]
    if inactive:
        spawners.append(spawner(*inactive, '--inactive', '--param-file', controllers_file))
    return [pipeline, control_node, *spawners]
