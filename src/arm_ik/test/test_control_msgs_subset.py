"""control_msgs as this workspace sees it matches ros-controls/control_msgs on the wire.

In the pip route the type comes from without_ros/control_msgs (a subset built only there); with a
ROS 2 install it is the real package. Either way, the fields, their types and the constants must
be those written below, copied from upstream: the `jazzy` branch (5.x) and `master` (6.3 and
later, released to Kilted), whose FollowJointTrajectory feedback adds `index` and
`multi_dof_index`. GripperCommand and JointJog (what pymoveit2 imports) are the same on both.
Two types with the same fields have the same type hash, so a goal from here is served by a real
joint_trajectory_controller; UPSTREAM_HASHES checks that hash itself.

How the hashes were obtained: upstream's control_msgs (the jazzy branch with .venv, master with
.venv-kilted, this project's pinned wheels) was built with colcon in a scratch workspace outside
this repository, its target control_msgs__rosidl_generator_type_description (the step of a full
build that writes share/control_msgs/<msg|action>/<Name>.json), and each RIHS01 hash read from
<Name>.json, the entry whose type_name is the type itself (an action's covers its goal, result,
feedback and service types). Nothing of that build is kept here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import xml.etree.ElementTree as ElementTree

import pytest

control_msgs_action = pytest.importorskip('control_msgs.action')
control_msgs_msg = pytest.importorskip('control_msgs.msg')

FollowJointTrajectory = control_msgs_action.FollowJointTrajectory
GripperCommandAction = control_msgs_action.GripperCommand
GripperCommand = control_msgs_msg.GripperCommand
JointComponentTolerance = control_msgs_msg.JointComponentTolerance
JointJog = control_msgs_msg.JointJog
JointTolerance = control_msgs_msg.JointTolerance

GOAL_FIELDS = {
    'trajectory': 'trajectory_msgs/JointTrajectory',
    'multi_dof_trajectory': 'trajectory_msgs/MultiDOFJointTrajectory',
    'path_tolerance': 'sequence<control_msgs/JointTolerance>',
    'component_path_tolerance': 'sequence<control_msgs/JointComponentTolerance>',
    'goal_tolerance': 'sequence<control_msgs/JointTolerance>',
    'component_goal_tolerance': 'sequence<control_msgs/JointComponentTolerance>',
    'goal_time_tolerance': 'builtin_interfaces/Duration',
}
RESULT_FIELDS = {'error_code': 'int32', 'error_string': 'string'}
RESULT_CONSTANTS = {
    'SUCCESSFUL': 0, 'INVALID_GOAL': -1, 'INVALID_JOINTS': -2, 'OLD_HEADER_TIMESTAMP': -3,
    'PATH_TOLERANCE_VIOLATED': -4, 'GOAL_TOLERANCE_VIOLATED': -5,
}
FEEDBACK_FIELDS_JAZZY = {
    'header': 'std_msgs/Header',
    'joint_names': 'sequence<string>',
    'desired': 'trajectory_msgs/JointTrajectoryPoint',
    'actual': 'trajectory_msgs/JointTrajectoryPoint',
    'error': 'trajectory_msgs/JointTrajectoryPoint',
    'multi_dof_joint_names': 'sequence<string>',
    'multi_dof_desired': 'trajectory_msgs/MultiDOFJointTrajectoryPoint',
    'multi_dof_actual': 'trajectory_msgs/MultiDOFJointTrajectoryPoint',
    'multi_dof_error': 'trajectory_msgs/MultiDOFJointTrajectoryPoint',
}
FEEDBACK_FIELDS_KILTED = {
    'header': 'std_msgs/Header',
    'joint_names': 'sequence<string>',
    'desired': 'trajectory_msgs/JointTrajectoryPoint',
    'actual': 'trajectory_msgs/JointTrajectoryPoint',
    'error': 'trajectory_msgs/JointTrajectoryPoint',
    'index': 'int32',
    'multi_dof_joint_names': 'sequence<string>',
    'multi_dof_desired': 'trajectory_msgs/MultiDOFJointTrajectoryPoint',
    'multi_dof_actual': 'trajectory_msgs/MultiDOFJointTrajectoryPoint',
    'multi_dof_error': 'trajectory_msgs/MultiDOFJointTrajectoryPoint',
    'multi_dof_index': 'int32',
}
JOINT_TOLERANCE_FIELDS = {
    'name': 'string', 'position': 'double', 'velocity': 'double', 'acceleration': 'double'}
COMPONENT_TOLERANCE_FIELDS = {
    'joint_name': 'string', 'component': 'uint16', 'position': 'double', 'velocity': 'double',
    'acceleration': 'double'}
COMPONENT_CONSTANTS = {'X_AXIS': 1, 'Y_AXIS': 2, 'Z_AXIS': 3, 'TRANSLATION': 4, 'ROTATION': 5}
GRIPPER_COMMAND_FIELDS = {'position': 'double', 'max_effort': 'double'}
GRIPPER_GOAL_FIELDS = {'command': 'control_msgs/GripperCommand'}
GRIPPER_RESULT_FIELDS = {
    'position': 'double', 'effort': 'double', 'stalled': 'boolean', 'reached_goal': 'boolean'}
GRIPPER_FEEDBACK_FIELDS = GRIPPER_RESULT_FIELDS
JOINT_JOG_FIELDS = {
    'header': 'std_msgs/Header', 'joint_names': 'sequence<string>',
    'displacements': 'sequence<double>', 'velocities': 'sequence<double>', 'duration': 'double'}

# RIHS01 type hashes of upstream's types (see the module docstring); the same on Jazzy and Kilted
# except FollowJointTrajectory, whose feedback differs.
UPSTREAM_HASHES = {
    'control_msgs/msg/GripperCommand':
        'RIHS01_57eb8f326c9889ca8bb34ead82cc94cc09bf6bc5c3b6c09546dca3a00b589890',
    'control_msgs/msg/JointComponentTolerance':
        'RIHS01_739ea7566931944d33830fa10f1bf5e7a7fbdc3172bce7a7eaac642bd6e3ffa4',
    'control_msgs/msg/JointJog':
        'RIHS01_ba249455a20f70168a1acb7bf43b776b72ff1f7eb5fc4cfea443f749e963c6e7',
    'control_msgs/msg/JointTolerance':
        'RIHS01_c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648',
    'control_msgs/action/GripperCommand':
        'RIHS01_e17c0e644eccf14bea84a0a93e0977182872c2eb7873ca6694900059b46dbc84',
}
UPSTREAM_HASHES_JAZZY = {
    'control_msgs/action/FollowJointTrajectory':
        'RIHS01_738ebcb7a2d7cfa42f9f1001cc99ce3a4383d1cfe508015d9be8485e4b1c66f6',
}
UPSTREAM_HASHES_KILTED = {
    'control_msgs/action/FollowJointTrajectory':
        'RIHS01_ff29901b2693f5deb847e96084a1c2cdb26e70b7c847be21859b70a55fb29cf0',
}


def constants_of(message_type: type) -> dict[str, int]:
    """The constants a generated message class declares (its metaclass keeps them)."""
    declared = type(message_type).__prepare__(message_type.__name__, ())
    return {name: value for name, value in declared.items() if name.isupper()}


def share_of(package: str) -> Path:
    from ament_index_python.packages import get_package_share_directory
    return Path(get_package_share_directory(package))


def version_of(package: str) -> tuple[int, ...]:
    root = ElementTree.parse(share_of(package) / 'package.xml').getroot()
    return tuple(int(part) for part in root.findtext('version').split('.'))


def is_subset() -> bool:
    """True when control_msgs is this project's pip-route subset, not the real package."""
    return 'subset of ros-controls/control_msgs' in (share_of('control_msgs') / 'package.xml'
                                                      ).read_text()


def test_goal_fields_are_upstream():
    assert FollowJointTrajectory.Goal.get_fields_and_field_types() == GOAL_FIELDS
    assert constants_of(FollowJointTrajectory.Goal) == {}


def test_result_fields_and_error_codes_are_upstream():
    assert FollowJointTrajectory.Result.get_fields_and_field_types() == RESULT_FIELDS
    assert constants_of(FollowJointTrajectory.Result) == RESULT_CONSTANTS
    for name, value in RESULT_CONSTANTS.items():
        assert getattr(FollowJointTrajectory.Result, name) == value


def test_feedback_fields_are_one_upstream_layout():
    fields = FollowJointTrajectory.Feedback.get_fields_and_field_types()
    assert fields in (FEEDBACK_FIELDS_JAZZY, FEEDBACK_FIELDS_KILTED)
    if is_subset():
        # The subset picks its layout from rcl_action: 9.x is Jazzy, 10.x and later Kilted on.
        kilted_on = version_of('rcl_action') >= (10,)
    else:
        kilted_on = version_of('control_msgs') >= (6, 3)
    assert fields == (FEEDBACK_FIELDS_KILTED if kilted_on else FEEDBACK_FIELDS_JAZZY)


def test_tolerance_messages_are_upstream():
    assert JointTolerance.get_fields_and_field_types() == JOINT_TOLERANCE_FIELDS
    assert constants_of(JointTolerance) == {}
    assert JointComponentTolerance.get_fields_and_field_types() == COMPONENT_TOLERANCE_FIELDS
    assert constants_of(JointComponentTolerance) == COMPONENT_CONSTANTS


def test_gripper_command_and_joint_jog_are_upstream():
    """The types pymoveit2 imports: no constants, no default values."""
    for built, fields in ((GripperCommand, GRIPPER_COMMAND_FIELDS),
                          (GripperCommandAction.Goal, GRIPPER_GOAL_FIELDS),
                          (GripperCommandAction.Result, GRIPPER_RESULT_FIELDS),
                          (GripperCommandAction.Feedback, GRIPPER_FEEDBACK_FIELDS),
                          (JointJog, JOINT_JOG_FIELDS)):
        assert built.get_fields_and_field_types() == fields
        assert list(built.get_fields_and_field_types()) == list(fields)  # the wire order
        assert constants_of(built) == {}
    command = GripperCommand()
    assert (command.position, command.max_effort) == (0.0, 0.0)
    result = GripperCommandAction.Result()
    assert (result.position, result.effort, result.stalled, result.reached_goal) == (
        0.0, 0.0, False, False)
    jog = JointJog()
    assert (list(jog.displacements), list(jog.velocities), jog.duration) == ([], [], 0.0)


def built_hash(key: str) -> str:
    """The RIHS01 hash rosidl wrote for a type, e.g. key 'control_msgs/msg/JointJog'."""
    _, kind, name = key.split('/')
    description = json.loads((share_of('control_msgs') / kind / f'{name}.json').read_text())
    return next(entry['hash_string'] for entry in description['type_hashes']
                if entry['type_name'] == key)


def test_type_hashes_are_upstream():
    if is_subset():
        kilted_on = version_of('rcl_action') >= (10,)
    else:
        kilted_on = version_of('control_msgs') >= (6, 3)
    expected = {**UPSTREAM_HASHES,
                **(UPSTREAM_HASHES_KILTED if kilted_on else UPSTREAM_HASHES_JAZZY)}
    assert {key: built_hash(key) for key in expected} == expected


def test_subset_never_shadows_a_ros_install():
    """With a ROS 2 install sourced, control_msgs is the install's, not this workspace's."""
    workspace = Path(__file__).resolve().parents[3]
    inside = share_of('control_msgs').resolve().is_relative_to(workspace)
    if os.environ.get('ROS_DISTRO'):
        assert not inside and not is_subset()
    else:
        assert inside and is_subset()
