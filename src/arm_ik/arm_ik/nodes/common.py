"""Plumbing every arm_ik node shares: the model from robot_description, QoS, the main loop."""

from __future__ import annotations

from collections.abc import Callable
import os
import signal
import sys
import threading
import time
from typing import Any

from rcl_interfaces.msg import (
    SetParametersResult,
)
import rclpy
from rclpy.callback_groups import CallbackGroup
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from arm_ik.batched_subscription import BatchedSubscription
from arm_ik.middleware import destroy_with_actions, HandoffExecutor
from arm_ik.nodes.parameters import Param, ParameterError, ParameterTable
from arm_kinematics.arm import Arm, ArmConfig, ArmConfigError, build_arm, load_config_chain
from arm_kinematics.common.log_line import brief_names
from arm_kinematics.description.chain_rules import load_chain
from arm_kinematics.model.arm_model import ArmModel, DEFAULT_JOINT_SPEED, DescriptionError
from arm_kinematics.scene.geometry import SafetyGeometry

# Latched: late joiners (RViz, viewers, clients) still get the last message.
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)

# joint_states come at the controller's rate (100 Hz from the executor, up to 500 Hz from a
# ros2_control broadcaster); nodes take them off the wire on a thread of their own and see
# them in batches (arm_ik.batched_subscription says why). A node that draws or seeds from
# them waits this long at most; safety_monitor, which judges each, waits SAFETY_BATCH_PERIOD.
STATE_BATCH_PERIOD = 0.05   # s
SAFETY_BATCH_PERIOD = 0.02  # s


def subscribe_joint_states(node: Node, callback: Callable[[JointState], None],
                           period: float = STATE_BATCH_PERIOD,
                           callback_group: CallbackGroup | None = None) -> BatchedSubscription:
    """``callback`` for every message of the node's relative ``joint_states`` (sensor-data
    QoS), on the node's executor, batched at most every ``period`` s."""
    return BatchedSubscription(node, JointState, 'joint_states', callback,
                               qos_profile_sensor_data, period, callback_group)


class StartupError(RuntimeError):
    """The node cannot start with the description or parameters it was given."""


def declare_parameters(node: Node, table: ParameterTable,
                       defaults: dict[str, Any] | None = None, prefix: str = '') -> dict[str, Any]:
    """Declare ``table`` on ``node`` (``defaults`` as ParameterTable.declare); a value it
    refuses stops start-up: StartupError with ``prefix`` and the reason."""
    try:
        return table.declare(node, defaults)
    except ParameterError as error:
        raise StartupError(f'{prefix}{error}') from None


def constant_names(message_type: type) -> dict[int, str]:
    """{value: name} of a message's integer constants (for logs and readouts)."""
    return {value: name for name, value in vars(message_type).items()
            if name.isupper() and isinstance(value, int)}


def safety_geometry_of(model: ArmModel, config: ArmConfig, arm: str) -> SafetyGeometry:
    """Capsules, floor and obstacle of ``model`` (safety off when the config has none).

    Raises:
        StartupError: the safety section is invalid or does not fit ``model``.
    """
    return arm_of(model, config, arm).safety


def arm_of(model: ArmModel, config: ArmConfig, label: str = '') -> Arm:
    """The arm value of ``model`` with ``config`` (``build_arm``), errors as StartupError."""
    try:
        return build_arm(model, config, label)
    except (ArmConfigError, ValueError) as error:
        raise StartupError(str(error)) from None


def declare_mesh_search_paths(node: Node) -> list[str]:
    """Declare ``mesh_search_paths`` (read-only) and return its folders.

    One ':'-separated string, not a string array: an empty array parameter has no type rclpy
    can infer, and a launch file passes one string as easily.
    """
    try:
        value = MESH_SEARCH_PATHS.declare(node)['mesh_search_paths']
    except ParameterError as error:
        raise StartupError(str(error)) from None
    return [path for path in value.split(os.pathsep) if path.strip()]


MESH_SEARCH_PATHS = ParameterTable(Param(
    'mesh_search_paths', '',
    "folders where package:// and relative mesh files are looked for, separated by ':' "
    "(before the configuration's collision.search_paths and AMENT_PREFIX_PATH)",
    read_only=True))


def _arm_model_parameters(reloadable: bool) -> ParameterTable:
    """The parameters every node's arm comes from (robot_description reloadable or not)."""
    return ParameterTable(
        Param('robot_description', '',
              'URDF of the arm (xacro output, as robot_state_publisher takes it); empty: '
              'wait for the latched robot_description topic'
              + ('; may be replaced at run time by one with the same joints (new link '
                 'lengths): the node rebuilds its model' if reloadable else ''),
              read_only=not reloadable),
        Param('arm', '', "label of the arm in logs and reports; empty: the configuration's "
                         '"arm", else the URDF robot name', read_only=True),
        Param('arm_config', '', 'path of the arm configuration YAML (home, IK, safety, '
                                'motion defaults); empty: defaults derived from the URDF',
              read_only=True),
        Param('base_frame', '', "root frame of the chain; empty: the configuration's, else "
                                'the URDF root link', read_only=True),
        Param('tip_frame', '', "tool frame the solvers place; empty: the configuration's, "
                               'else the tool frame of the URDF (tool0, flange, ee_link, '
                               '*_hand, ...; logged at start-up with the other candidates)',
              read_only=True),
        Param('robot_description_timeout', DESCRIPTION_WAIT,
              's to wait at start-up for the latched robot_description topic when the '
              'parameter is empty (0: do not wait)', read_only=True, low=0.0, high=3600.0))


def declare_arm_model(node: Node, reloadable: bool = False
                      ) -> tuple[str, ArmModel, ArmConfig]:
    """Declare robot_description / arm / arm_config / frame parameters; build the model.

    The configuration comes from the file named by ``arm_config`` (the bundled arms' files
    are in arm_description/config); with none, from defaults derived from the URDF (see
    kinematics.arm). ``arm`` is only a label: default the configuration's, else the URDF's
    robot name.

    Returns:
        (arm label, model, configuration).

    Raises:
        StartupError: empty or broken description, a chain the core's rules refuse
            (description.chain_rules.load_chain, the same words), missing frames, an
            unreadable or invalid configuration.
    """
    try:
        values = _arm_model_parameters(reloadable).declare(node)
    except ParameterError as error:
        raise StartupError(str(error)) from None
    description, label = values['robot_description'], values['arm']
    config_path, wait = values['arm_config'], values['robot_description_timeout']
    base_frame, tip_frame = values['base_frame'], values['tip_frame']
    try:
        config = ArmConfig.from_file(config_path) if config_path.strip() else ArmConfig()
    except ArmConfigError as error:
        raise StartupError(str(error)) from None
    if not description.strip():
        description = wait_for_description(node, wait)
    if not isinstance(description, str) or not description.strip():
        raise StartupError('robot_description is empty')
    try:
        loaded = load_config_chain(description, config, base_frame, tip_frame)
    except DescriptionError as error:
        raise StartupError(f'robot_description is not usable: {error}') from None
    model = loaded.model
    base_frame, tip_frame = model.base_link, model.tip_link
    arm = arm_of(model, config, label)
    label = arm.label     # the given one, the config's, or the robot name made a ROS name
    lines = loaded.report()
    node.get_logger().info(f'{label}: {lines[0]}')
    for note in lines[1:]:
        node.get_logger().warning(f'{label}: {note}')
    node.get_logger().info(
        f'{label}: {model.dof} joints {base_frame} -> {tip_frame} '
        f'({brief_names(model.joint_names)}); configuration: {config.source}; '
        f'default solver {arm.default_solver} ({arm.solver_reason}); '
        f'safety {"on" if config.safety_enabled else "off (no floor, no obstacle)"}')
    return label, model, config


SPIN_WAKE = 0.5          # s; the main loop looks at the context at least this often
DESCRIPTION_WAIT = 30.0   # s a node waits for the robot_description topic at start-up


def wait_for_description(node: Node, timeout: float = DESCRIPTION_WAIT) -> str:
    """The URDF from the latched ``robot_description`` topic (robot_state_publisher's).

    Raises:
        StartupError: nothing arrived within ``timeout``.
    """
    received: list[str] = []
    subscription = node.create_subscription(
        String, 'robot_description', lambda message: received.append(message.data),
        LATCHED_QOS)
    topic = node.resolve_topic_name('robot_description')
    node.get_logger().info(f'robot_description parameter empty: waiting for topic {topic}')
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    deadline = time.monotonic() + timeout
    try:
        while not received and time.monotonic() < deadline and node.context.ok():
            executor.spin_once(timeout_sec=0.1)
    finally:
        executor.remove_node(node)
        executor.shutdown()
        node.destroy_subscription(subscription)
    if not received or not received[-1].strip():
        raise StartupError(f'robot_description is empty: the parameter is empty and nothing '
                           f'arrived on {topic} within {timeout:g} s (start '
                           'robot_state_publisher, or pass -p robot_description:=...)')
    return received[-1]


def model_from_description(description: str, base_frame: str, tip_frame: str,
                           like: ArmModel | None = None) -> tuple[ArmModel | None, str]:
    """(model, '') from a URDF, or (None, the reason it is not usable).

    With ``like``, the new model must be the same robot with the same joints in the same
    order (a run-time replacement may change lengths, not the arm).
    """
    if not isinstance(description, str) or not description.strip():
        return None, 'robot_description is empty'
    try:
        model = load_chain(description, base_frame, tip_frame,
                           like.default_speed if like is not None else
                           DEFAULT_JOINT_SPEED).model
    except DescriptionError as error:
        return None, f'robot_description is not usable: {error}'
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
        # robot_state_publisher republishes the latched topic when its own parameter
        # changes: a new description there goes through the same checks as the parameter.
        node.create_subscription(String, 'robot_description', self._on_topic, LATCHED_QOS)

    def _on_topic(self, message: String) -> None:
        if message.data == self.model.urdf or not message.data.strip():
            return
        [result] = self._node.set_parameters([Parameter('robot_description',
                                                        value=message.data)])
        if not result.successful:
            self._node.get_logger().error(f'robot_description on the topic refused: '
                                          f'{result.reason}')

    def _validate(self, parameters: list[Parameter]) -> SetParametersResult:
        update = [p for p in parameters if p.name == 'robot_description']
        if not update:
            return SetParametersResult(successful=True)
        reason = self._busy() if self._busy is not None else ''
        if reason:
            return SetParametersResult(successful=False, reason=reason)
        description = update[-1].value
        model, reason = model_from_description(
            description, self.model.base_link, self.model.tip_link, like=self.model)
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




class _CtrlC:
    """Python's part of SIGINT: a KeyboardInterrupt before the node spins (a long start-up
    stops at once), nothing while it spins. rclpy's own handler, which runs first, shuts the
    context down and the spin loop ends by itself; a KeyboardInterrupt raised between two
    bytecodes of a spinning executor could land in rclpy's Future.__init__ and leave a
    half-made Task whose __del__ printed a traceback at exit (seen in test_ctrl_c)."""

    def __init__(self) -> None:
        self.spinning = False

    def __call__(self, signum: int, frame: Any) -> None:
        if not self.spinning:
            raise KeyboardInterrupt


def run(node_factory: Callable[[], Node], args: list[str] | None = None,
        threads: int = 1) -> int:
    """Init rclpy, build the node, spin until Ctrl-C or SIGTERM; return the exit status.

    ``threads`` > 1 spins a HandoffExecutor with that many threads (arm_ik.middleware says
    why not rclpy's MultiThreadedExecutor), for nodes whose slow callbacks must not hold up
    the others; 1 a SingleThreadedExecutor. A node that cannot start logs why and exits with
    status 1 instead of a traceback.
    """
    ctrl_c = _CtrlC()
    previous = None
    if threading.current_thread() is threading.main_thread():
        # Before rclpy.init: rclpy's handler calls the one it finds installed.
        previous = signal.signal(signal.SIGINT, ctrl_c)
    rclpy.init(args=args)
    node = None
    try:
        node = node_factory()
        executor = HandoffExecutor(num_threads=threads) if threads > 1 else \
            SingleThreadedExecutor()
        executor.add_node(node)
        ctrl_c.spinning = True
        # Not executor.spin(): its wait has no timeout, and under load a node was seen
        # to sleep on in it after Ctrl-C or SIGTERM had shut the context down (1 in 3
        # stops of an ik_server that had served a request). Waking every SPIN_WAKE
        # seconds to look at the context makes one signal always enough.
        while node.context.ok():
            executor.spin_once(timeout_sec=SPIN_WAKE)
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
            destroy_with_actions(node)
        rclpy.try_shutdown()
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return 0
