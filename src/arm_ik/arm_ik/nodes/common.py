"""Plumbing every arm_ik node shares: the model from robot_description, QoS, the main loop."""

from __future__ import annotations

from collections.abc import Callable
import sys
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor
import rclpy
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from arm_ik.kinematics.chain_checks import zero_length_reason
from arm_ik.kinematics.description import ARMS, DescriptionError, load_arm_config
from arm_ik.kinematics.model import ArmModel

# Latched: late joiners (RViz, viewers, clients) still get the last message.
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)


class StartupError(RuntimeError):
    """The node cannot start with the description or parameters it was given."""


def describe(description: str, read_only: bool = False, **constraints: Any) -> ParameterDescriptor:
    """ParameterDescriptor with a description (units included) and optional ranges."""
    return ParameterDescriptor(description=description, read_only=read_only, **constraints)


def declare_arm_model(node: Node) -> tuple[str, ArmModel, dict[str, Any]]:
    """Declare robot_description / arm / frame parameters and build the arm model.

    Returns:
        (arm name, model, per-arm defaults from arm_description's YAML; {} when unknown).

    Raises:
        StartupError: empty or broken description, a zero-length link, unknown arm name,
            missing frames.
    """
    description = node.declare_parameter(
        'robot_description', '',
        describe('URDF of the arm (xacro output, as robot_state_publisher takes it)',
                 read_only=True)).value
    arm = node.declare_parameter(
        'arm', '',
        describe(f'arm name for its defaults in arm_description ({", ".join(ARMS)}); '
                 'empty: the URDF robot name', read_only=True)).value
    base_frame = node.declare_parameter(
        'base_frame', 'base_link', describe('root frame of the chain', read_only=True)).value
    tip_frame = node.declare_parameter(
        'tip_frame', 'tool0', describe('tool frame the solvers place', read_only=True)).value
    if not description.strip():
        raise StartupError('parameter robot_description is empty: pass the xacro output, e.g. '
                           '-p robot_description:="$(xacro six_axis.urdf.xacro)"')
    try:
        model = ArmModel.from_urdf(description, base_frame, tip_frame)
    except DescriptionError as error:
        raise StartupError(f'robot_description is not usable: {error}') from None
    reason = zero_length_reason(model)
    if reason:
        raise StartupError(f'robot_description is not usable: {reason}')
    arm = arm or model.name
    if arm not in ARMS:
        raise StartupError(f'unknown arm "{arm}"; choose one of: {", ".join(ARMS)}')
    try:
        config = load_arm_config(arm)
    except (DescriptionError, OSError) as error:
        raise StartupError(f'defaults of arm "{arm}" cannot be read: {error}') from None
    return arm, model, config


def parameter_value(parameter: Parameter) -> Any:
    """The Python value of an rclpy Parameter (helper for set-parameter callbacks)."""
    return parameter.value


def run(node_factory: Callable[[], Node], args: list[str] | None = None,
        executor_factory: Callable[[], Executor] = SingleThreadedExecutor) -> int:
    """Init rclpy, build the node, spin until Ctrl-C or SIGTERM; return the exit status.

    A node that cannot start logs why and exits with status 1 instead of a traceback.
    """
    rclpy.init(args=args)
    node = None
    try:
        node = node_factory()
        executor = executor_factory()
        executor.add_node(node)
        executor.spin()
    except StartupError as error:
        print(f'[FATAL] {error}', file=sys.stderr, flush=True)
        return 1
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
