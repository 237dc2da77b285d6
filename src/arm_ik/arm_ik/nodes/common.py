"""Plumbing every arm_ik node shares: the model from robot_description, QoS, the main loop."""

from __future__ import annotations

from collections.abc import Callable
import sys
from typing import Any

from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
import rclpy
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from arm_ik.kinematics.chain_checks import zero_length_reason
from arm_ik.kinematics.description import ARMS, DescriptionError, load_arm_config
from arm_ik.kinematics.model import ArmModel
from arm_ik.kinematics.safety.config import safety_config_of, SafetyConfigError
from arm_ik.kinematics.safety.geometry import SafetyGeometry

# Latched: late joiners (RViz, viewers, clients) still get the last message.
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)


class StartupError(RuntimeError):
    """The node cannot start with the description or parameters it was given."""


def constant_names(message_type: type) -> dict[int, str]:
    """{value: name} of a message's integer constants (for logs and readouts)."""
    return {value: name for name, value in vars(message_type).items()
            if name.isupper() and isinstance(value, int)}


def safety_geometry_of(model: ArmModel, config: dict, arm: str) -> SafetyGeometry:
    """Capsules, floor and obstacle of ``model`` from the safety section of the arm's YAML.

    Raises:
        StartupError: that section is invalid or does not fit ``model``.
    """
    try:
        return SafetyGeometry(model, safety_config_of(config, arm))
    except (SafetyConfigError, ValueError) as error:
        raise StartupError(f'safety configuration of "{arm}": {error}') from None


def describe(description: str, read_only: bool = False, **constraints: Any) -> ParameterDescriptor:
    """ParameterDescriptor with a description (units included) and optional ranges."""
    return ParameterDescriptor(description=description, read_only=read_only, **constraints)


def declare_arm_model(node: Node, reloadable: bool = False
                      ) -> tuple[str, ArmModel, dict[str, Any]]:
    """Declare robot_description / arm / frame parameters and build the arm model.

    Returns:
        (arm name, model, per-arm defaults from arm_description's YAML; {} when unknown).

    Raises:
        StartupError: empty or broken description, a zero-length link, unknown arm name,
            missing frames.
    """
    description = node.declare_parameter(
        'robot_description', '',
        describe('URDF of the arm (xacro output, as robot_state_publisher takes it)'
                 + ('; may be replaced at run time by one with the same joints (new link '
                    'lengths): the node rebuilds its model' if reloadable else ''),
                 read_only=not reloadable)).value
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
    model, reason = model_from_description(description, base_frame, tip_frame)
    if model is None:
        raise StartupError(reason)
    arm = arm or model.name
    if arm not in ARMS:
        raise StartupError(f'unknown arm "{arm}"; choose one of: {", ".join(ARMS)}')
    try:
        config = load_arm_config(arm)
    except (DescriptionError, OSError) as error:
        raise StartupError(f'defaults of arm "{arm}" cannot be read: {error}') from None
    return arm, model, config


def model_from_description(description: str, base_frame: str, tip_frame: str,
                           like: ArmModel | None = None) -> tuple[ArmModel | None, str]:
    """(model, '') from a URDF, or (None, the reason it is not usable).

    With ``like``, the new model must be the same robot with the same joints in the same
    order (a run-time replacement may change lengths, not the arm).
    """
    if not isinstance(description, str) or not description.strip():
        return None, 'robot_description is empty'
    try:
        model = ArmModel.from_urdf(description, base_frame, tip_frame)
    except DescriptionError as error:
        return None, f'robot_description is not usable: {error}'
    reason = zero_length_reason(model)
    if reason:
        return None, f'robot_description is not usable: {reason}'
    if like is not None and model.name != like.name:
        return None, (f'the new robot_description describes robot "{model.name}"; this node '
                      f'serves "{like.name}" (only lengths may change)')
    if like is not None and model.joint_names != like.joint_names:
        return None, (f'the new robot_description has joints {list(model.joint_names)}; this '
                      f'node serves {list(like.joint_names)} (only lengths may change)')
    return model, ''


class DescriptionReload:
    """robot_description replaceable at run time, as robot_state_publisher allows.

    ``build(model)`` makes everything the node derives from the model (raising ValueError or
    StartupError with the reason when it cannot); ``use(built)`` swaps it in. A new URDF is
    built while the update is validated, so a refused one changes nothing, and swapped in
    once rclpy has accepted the whole update. ``busy()`` (optional) returns why the node
    cannot take a new model now ('' when it can).
    """

    def __init__(self, node: Node, model: ArmModel, build: Callable[[ArmModel], Any],
                 use: Callable[[Any], None], busy: Callable[[], str] | None = None) -> None:
        self._node = node
        self.model = model
        self._build = build
        self._use = use
        self._busy = busy
        self._pending: tuple[str, ArmModel, Any] | None = None
        node.add_on_set_parameters_callback(self._validate)
        node.add_post_set_parameters_callback(self._apply)

    def _validate(self, parameters: list[Parameter]) -> SetParametersResult:
        update = [p for p in parameters if p.name == 'robot_description']
        if not update:
            return SetParametersResult(successful=True)
        reason = self._busy() if self._busy is not None else ''
        if reason:
            return SetParametersResult(successful=False, reason=reason)
        description = update[-1].value
        model, reason = model_from_description(
            description, self._node.get_parameter('base_frame').value,
            self._node.get_parameter('tip_frame').value, like=self.model)
        if model is None:
            return SetParametersResult(successful=False, reason=reason)
        try:
            built = self._build(model)
        except (ValueError, StartupError) as error:
            return SetParametersResult(successful=False,
                                       reason=f'robot_description refused: {error}')
        self._pending = (description, model, built)
        return SetParametersResult(successful=True)

    def _apply(self, parameters: list[Parameter]) -> None:
        update = [p for p in parameters if p.name == 'robot_description']
        if not update or self._pending is None or self._pending[0] != update[-1].value:
            return
        _, model, built = self._pending
        self._pending = None
        self.model = model
        self._use(built)
        self._node.get_logger().info('robot_description replaced: model rebuilt')


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
    except Exception as error:
        if rclpy.ok():
            raise
        # rclpy can raise from a take or a wait racing the shutdown that Ctrl-C (or a
        # launch's SIGINT) started; the node was stopping anyway.
        if node is not None:
            node.get_logger().debug(f'during shutdown: {type(error).__name__}: {error}')
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
