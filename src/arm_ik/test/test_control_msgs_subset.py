"""control_msgs as this workspace sees it matches ros-controls/control_msgs on the wire.

In the pip route the type comes from without_ros/control_msgs (a subset built only there); with a
ROS 2 install it is the real package. Either way, the fields, their types and the constants must
be those written below, copied from upstream: the `jazzy` branch (5.x) and `master` (6.3 and
later, released to Kilted), whose FollowJointTrajectory feedback adds `index` and
`multi_dof_index`. Two types with the same fields have the same type hash, so a goal from here is
served by a real joint_trajectory_controller.
"""

from __future__ import annotations

import os
from pathlib import Path
import xml.etree.ElementTree as ElementTree

import pytest

control_msgs_action = pytest.importorskip('control_msgs.action')
from control_msgs.msg import JointComponentTolerance, JointTolerance  # noqa: E402

FollowJointTrajectory = control_msgs_action.FollowJointTrajectory

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


def test_subset_never_shadows_a_ros_install():
    """With a ROS 2 install sourced, control_msgs is the install's, not this workspace's."""
    workspace = Path(__file__).resolve().parents[3]
    inside = share_of('control_msgs').resolve().is_relative_to(workspace)
    if os.environ.get('ROS_DISTRO'):
        assert not inside and not is_subset()
    else:
        assert inside and is_subset()
