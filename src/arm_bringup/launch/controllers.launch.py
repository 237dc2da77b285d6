"""Any arm on ros2_control: the pipeline driving joint_trajectory_controller through its
FollowJointTrajectory action, with every result said in words.

    ros2 launch arm_bringup controllers.launch.py urdf_file:=$PWD/ur5.urdf \
        arm_config:=$PWD/ur5.yaml

Needs ros2_control (optional for this package, so rosdep does not install it):
    sudo apt install ros-$ROS_DISTRO-ros2-control ros-$ROS_DISTRO-ros2-controllers

What runs, in the arm's namespace (its label):
- arm_config's ros2_control writer (``arm_config --ros2-control``) writes, into a fresh
  temporary folder, the arm's <ros2_control> block (hardware_plugin, position commands with
  the URDF's limits, position and velocity states starting at the home pose), a top-level
  xacro (your URDF plus the block) and the controllers YAML (joint_state_broadcaster with the
  joints outside the chain as extra_joints, joint_trajectory_controller with the chain's
  joints and the controller section's tolerances). It refuses a URDF that has a
  <ros2_control> block already (start the vendor's bringup instead);
- arm.launch.py with that description, ``output:=follow_joint_trajectory`` and
  ``feedback_topic:=joint_state_broadcaster/joint_states`` (the measured state);
- controller_manager (ros2_control_node) with the controllers YAML, and the spawners of
  joint_state_broadcaster and joint_trajectory_controller.
The controllers run in the arm's namespace, so controller.action must be
<controller>/follow_joint_trajectory (default joint_trajectory_controller/...): <controller>
is the name the manager and the spawner give it.
controllers_example.launch.py is this file for the bundled six_axis arm.
"""

from pathlib import Path
import tempfile

from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration

from arm_bringup.control_launch import ros2_control_actions

BOOLEANS = ['true', 'false']


def generate_launch_description() -> LaunchDescription:
    arguments = [
        DeclareLaunchArgument(
            'urdf_file', default_value='',
            description='Path of your URDF or xacro file (required): the arm and its chain.'),
        DeclareLaunchArgument(
            'arm_config', default_value='',
            description='Arm configuration YAML (arm_config writes one): home pose, safety, '
                        'the controller section (action, tolerances, rates); empty: defaults '
                        'from the URDF.'),
        DeclareLaunchArgument(
            'base_frame', default_value='',
            description="Root link of the chain; empty: the configuration's, else the "
                        "URDF's root."),
        DeclareLaunchArgument(
            'tip_frame', default_value='',
            description="Tool link of the chain; empty: the configuration's, else tool0 or "
                        'the deepest leaf.'),
        DeclareLaunchArgument(
            'hardware_plugin', default_value='mock_components/GenericSystem',
            description='ros2_control hardware plugin of the arm: the mock echoes commands as '
                        "states; name your servo driver's SystemInterface for real hardware."),
        DeclareLaunchArgument(
            'rviz', default_value='true', choices=BOOLEANS,
            description='Start RViz with the arm.'),
    ]
    return LaunchDescription(arguments + [OpaqueFunction(function=launch_setup)])


def launch_setup(context: LaunchContext) -> list:
    """Write the ros2_control files, then start the pipeline, the manager and the spawners."""
    from arm_ik.arm_config import read_description, ros2_control_files
    from arm_kinematics.arm import ArmConfig
    from arm_kinematics.control.ros2_control_files import controller_name

    urdf_file = LaunchConfiguration('urdf_file').perform(context)
    arm_config = LaunchConfiguration('arm_config').perform(context)
    if not urdf_file or not Path(urdf_file).is_file():
        raise RuntimeError(f'urdf_file:={urdf_file}: give the path of your URDF or xacro file')
    base = LaunchConfiguration('base_frame').perform(context)
    tip = LaunchConfiguration('tip_frame').perform(context)
    config = ArmConfig.from_file(arm_config) if arm_config else ArmConfig()
    # JTC serves <its node name>/follow_joint_trajectory, in the manager's namespace (the
    # arm's): refused before any file is written when the action has another form.
    controller = controller_name(config.controller.action, in_arm_namespace=True)
    folder = tempfile.mkdtemp(prefix='arm_ros2_control_')
    block, top, controllers = ros2_control_files(
        urdf_file, read_description(urdf_file), arm_config, base, tip, folder,
        LaunchConfiguration('hardware_plugin').perform(context))
    label = block.name.split('.')[0]
    return ros2_control_actions(
        label, str(controllers), controller,
        {'urdf_file': str(top), 'arm_config': arm_config, 'base_frame': base, 'tip_frame': tip,
         'rviz': LaunchConfiguration('rviz'), 'output': 'follow_joint_trajectory'})
