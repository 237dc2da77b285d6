"""arm_info: publishes what the arm is (joint names, limits, home pose, reach), latched.

Parameters: arm, base_frame, tip_frame (read-only), home (rad), robot_description (a new one
with the same joints, e.g. new link lengths, is republished as ArmInfo).
Publishes: ``arm_info`` (arm_interfaces/ArmInfo, transient local).
"""

from __future__ import annotations

import sys

from geometry_msgs.msg import Point
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

from arm_ik.kinematics.arm import Arm
from arm_ik.kinematics.description import check_home
from arm_ik.nodes.common import (
    arm_of,
    declare_arm_model,
    describe,
    DescriptionReload,
    LATCHED_QOS,
    run,
    StartupError,
)
from arm_interfaces.msg import ArmInfo


class ArmInfoNode(Node):
    """Builds the arm model from robot_description and publishes ArmInfo latched."""

    def __init__(self) -> None:
        super().__init__('arm_info')
        self.arm, self.model, self._config = declare_arm_model(self, reloadable=True)
        self._arm = arm_of(self.model, self._config, self.arm)
        self.workspace = self._arm.workspace
        default_home = self._arm.home.tolist()
        home = self.declare_parameter(
            'home', default_home,
            describe('home pose, rad, one value per joint in chain order')).value
        reason = check_home(self.model, list(home))
        if reason:
            raise StartupError(reason)
        self.home = list(home)
        self.publisher = self.create_publisher(ArmInfo, 'arm_info', LATCHED_QOS)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.add_post_set_parameters_callback(self._after_set_parameters)
        self._reload = DescriptionReload(
            self, self.model, lambda model: arm_of(model, self._config, self.arm), self._use)
        self.publish_info()
        self.get_logger().info(
            f'{self.arm}: {self.model.dof} joints {", ".join(self.model.joint_names)}; '
            f'reach {self.workspace.min_reach:.3f}..{self.workspace.max_reach:.3f} m')

    def _on_set_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        for parameter in parameters:
            if parameter.name == 'home':
                try:
                    values = [float(v) for v in parameter.value]
                except (TypeError, ValueError):
                    return SetParametersResult(successful=False,
                                               reason='home must be a list of numbers')
                reason = check_home(self.model, values)
                if reason:
                    return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    def _after_set_parameters(self, parameters: list[Parameter]) -> None:
        if any(parameter.name == 'home' for parameter in parameters):
            self.home = [float(v) for v in self.get_parameter('home').value]
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
