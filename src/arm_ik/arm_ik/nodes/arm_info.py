"""arm_info: publishes what the arm is (joint names, limits, home pose, reach), latched.

Parameters: arm, base_frame, tip_frame (read-only), home (rad), robot_description (a new one
with the same joints, e.g. new link lengths, is republished as ArmInfo).
Publishes: ``arm_info`` (arm_interfaces/ArmInfo, transient local).
"""

from __future__ import annotations

import sys

from geometry_msgs.msg import Point
from rclpy.node import Node
from sensor_msgs.msg import JointState

from arm_ik.nodes.common import (
    arm_of,
    declare_arm_model,
    declare_parameters,
    DescriptionReload,
    LATCHED_QOS,
    run,
    StartupError,
)
from arm_ik.nodes.parameters import Param, ParameterTable
from arm_interfaces.msg import ArmInfo
from arm_kinematics.arm import Arm
from arm_kinematics.common.log_line import brief_names
from arm_kinematics.description.bundled import check_home

# home's default is the arm's home pose (given to declare: its length is the arm's).
PARAMETERS = ParameterTable(
    Param('home', [], 'home pose, rad, one value per joint in chain order'),
)


class ArmInfoNode(Node):
    """Builds the arm model from robot_description and publishes ArmInfo latched."""

    def __init__(self) -> None:
        super().__init__('arm_info')
        self.arm, self.model, self._config = declare_arm_model(self, reloadable=True)
        self._arm = arm_of(self.model, self._config, self.arm)
        self.workspace = self._arm.workspace
        values = declare_parameters(self, PARAMETERS, {'home': self._arm.home.tolist()})
        reason = self._home_reason(values)
        if reason:
            raise StartupError(reason)
        self.home = [float(v) for v in values['home']]
        self.publisher = self.create_publisher(ArmInfo, 'arm_info', LATCHED_QOS)
        PARAMETERS.watch(self, self._use_home, self._home_reason)
        self._reload = DescriptionReload(
            self, self.model, lambda model: arm_of(model, self._config, self.arm), self._use)
        self.publish_info()
        self.get_logger().info(
            f'{self.arm}: {self.model.dof} joints {brief_names(self.model.joint_names)}; '
            f'reach {self.workspace.min_reach:.3f}..{self.workspace.max_reach:.3f} m')

    def _home_reason(self, values: dict) -> str:
        try:
            home = [float(v) for v in values['home']]
        except (TypeError, ValueError):
            return 'home must be a list of numbers'
        return check_home(self.model, home)

    def _use_home(self, values: dict) -> None:
        self.home = [float(v) for v in values['home']]
        self.publish_info()

    def _use(self, arm: Arm) -> None:
        self._arm, self.model, self.workspace = arm, arm.model, arm.workspace
        self.publish_info()

    def publish_info(self) -> None:
        stamp = self.get_clock().now().to_msg()
        message = ArmInfo()
        message.header.stamp = stamp
        message.header.frame_id = self.model.base_link
        message.arm = self.arm
        message.base_frame = self.model.base_link
        message.tip_frame = self.model.tip_link
        message.joint_names = list(self.model.joint_names)
        message.lower_limits = self.model.lower.tolist()
        message.upper_limits = self.model.upper.tolist()
        message.velocity_limits = self.model.velocity_limits.tolist()
        message.home = JointState(name=list(self.model.joint_names), position=list(self.home))
        message.home.header.stamp = stamp
        shoulder = self.workspace.shoulder
        message.shoulder = Point(x=float(shoulder[0]), y=float(shoulder[1]),
                                 z=float(shoulder[2]))
        message.max_reach = self.workspace.max_reach
        message.min_reach = self.workspace.min_reach
        message.default_solver = self._arm.default_solver
        message.solver_reason = self._arm.solver_reason
        message.safety_enabled = self._arm.safety_enabled
        message.config_source = self._arm.config.source
        self.publisher.publish(message)


def main(args: list[str] | None = None) -> None:
    sys.exit(run(ArmInfoNode, args))


if __name__ == '__main__':
    main()
