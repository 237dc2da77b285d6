"""servo_node in its own process, over DDS: MoveIt Servo's jog interface (RELIABILITY case 42).

Two servo_nodes on this module's ROS domain: the UR5 of example-robot-data under /ur5
(simulated joint_states) and the bundled six_axis under /six (its measured state on
measured_joint_states, published by this test, as a real arm's would be). The client is
pymoveit2's MoveIt2Servo, unchanged, where it can be imported (it needs control_msgs'
JointJog and moveit_msgs), and raw publishers otherwise and for what it refuses to send (NaN):
a twist moves the tool in its direction, a joint jog moves its joint; pause stops and refuses;
a stream that stops decelerates to rest, never a jump; driving toward a joint limit or a
singularity slows and halts before it; a NaN twist is refused and nothing moves; a stream
that resumes starts from the measured state.
"""

from __future__ import annotations

import math
import threading
import time

from geometry_msgs.msg import TwistStamped
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool

from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.jog import JogCore
from arm_testing.real_arms import REAL_ARMS
from arm_testing.ros_harness import call_service, config_file, DomainClaim

UR5 = ('shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint', 'wrist_1_joint',
       'wrist_2_joint', 'wrist_3_joint')
UR5_START = [0.0, -1.2, 1.2, -1.57, -1.57, 0.0]
SIX = ('base_yaw', 'shoulder_pitch', 'elbow_pitch', 'wrist_roll', 'wrist_pitch', 'tool_roll')
SIX_START = np.array([0.0, 0.35, 0.9, 0.0, 0.6, 0.0])
PERIOD = 0.02            # s between two commands of a stream (50 Hz, as a joystick)
NO_JUMP = 3.2 * 0.02     # rad: the UR5's fastest joint (3.15 rad/s) in one step (at most 2 ticks)


def _have_pymoveit2() -> bool:
    try:
        from moveit_msgs.srv import ServoCommandType  # noqa: F401
        import pymoveit2  # noqa: F401
        return True
    except ImportError:
        return False


needs_pymoveit2 = pytest.mark.skipif(
    not _have_pymoveit2(), reason='pymoveit2 needs control_msgs/JointJog and moveit_msgs '
    '(built in the workspace on the pip route)')


class Client:
    """The test's node, spun in a thread of its own (pymoveit2 waits on futures)."""

    def __init__(self, domain_id: int) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node('servo_test_client', context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.lock = threading.Lock()
        self.states: dict[str, list[tuple[float, np.ndarray]]] = {}
        self.status: dict[str, list] = {}
        self._running = True
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        while self._running and self.context.ok():
            self.executor.spin_once(timeout_sec=0.05)

    def watch(self, namespace: str, names: tuple[str, ...]) -> None:
        self.states[namespace] = []

        def on_state(message: JointState) -> None:
            order = [list(message.name).index(n) for n in names]
            with self.lock:
                self.states[namespace].append(
                    (time.monotonic(), np.array(message.position)[order]))
        self.node.create_subscription(JointState, f'{namespace}/joint_states', on_state, 100)

    def watch_status(self, namespace: str) -> None:
        """servo_node/status codes (moveit_msgs/ServoStatus, else std_msgs/Int8)."""
        try:
            from moveit_msgs.msg import ServoStatus as Kind
        except ImportError:
            from std_msgs.msg import Int8 as Kind
        self.status[namespace] = []

        def on_status(message) -> None:
            code = message.code if hasattr(message, 'code') else message.data
            with self.lock:
                self.status[namespace].append((time.monotonic(), int(code),
                                               getattr(message, 'message', '')))
        self.node.create_subscription(Kind, f'{namespace}/servo_node/status', on_status, 100)

    def codes_since(self, namespace: str, start: float) -> set[int]:
        with self.lock:
            return {code for t, code, _ in self.status[namespace] if t >= start}

    def latest(self, namespace: str) -> np.ndarray | None:
        with self.lock:
            states = self.states[namespace]
            return states[-1][1].copy() if states else None

    def since(self, namespace: str, start: float) -> np.ndarray:
        with self.lock:
            return np.array([q for t, q in self.states[namespace] if t >= start])

    def close(self) -> None:
        import rclpy
        self._running = False
        self._thread.join(timeout=5.0)
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


class MeasuredArm:
    """The six_axis's measured state at 50 Hz: the commanded joint_states echoed, or a pose
    held by the test (the arm pushed by hand)."""

    def __init__(self, client: Client, namespace: str) -> None:
        self.client, self.namespace = client, namespace
        self.override: np.ndarray | None = SIX_START.copy()
        self.publisher = client.node.create_publisher(
            JointState, f'{namespace}/measured_joint_states', 10)
        self._running = True
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while self._running:
            q = self.override if self.override is not None else \
                self.client.latest(self.namespace)
            if q is not None:
                self.publisher.publish(JointState(name=list(SIX), position=[float(v) for v in q]))
            time.sleep(0.02)

    def close(self) -> None:
        self._running = False
        self._thread.join(timeout=2.0)


@pytest.fixture(scope='module')
def servo(urdf_of):
    """Both servo_nodes and the client: (client, {namespace: process}, measured arm)."""
    from arm_bringup.process_group import ProcessGroup
    claim = DomainClaim()
    group = ProcessGroup(env=claim.environment())
    client = measured = None
    try:
        processes = {
            '/ur5': group.start_node('arm_ik', 'servo_node', namespace='/ur5', params={
                'robot_description': REAL_ARMS['ur5'].urdf(), 'base_frame': 'base_link',
                'tip_frame': 'tool0', 'initial_positions': UR5_START, 'follow_target': False,
                'planning_process': False}),
            '/six': group.start_node('arm_ik', 'servo_node', namespace='/six', params={
                'robot_description': urdf_of('six_axis'), 'arm': 'six_axis',
                'arm_config': config_file('six_axis'), 'feedback_topic': 'measured_joint_states',
                'follow_target': False, 'planning_process': False,
                'output': 'forward_position'})}
        client = Client(claim.domain_id)
        client.watch('/ur5', UR5)
        client.watch('/six', SIX)
        client.watch_status('/ur5')
        measured = MeasuredArm(client, '/six')
        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline and (client.latest('/ur5') is None
                                               or client.latest('/six') is None):
            time.sleep(0.1)
        for namespace, process in processes.items():
            assert client.latest(namespace) is not None, process.output()[-3000:]
        measured.override = None
        yield client, processes, measured
    finally:
        if measured is not None:
            measured.close()
        if client is not None:
            client.close()
        group.close()
        claim.release()


@pytest.fixture(scope='module')
def ur5_model():
    return ArmModel.from_urdf(REAL_ARMS['ur5'].urdf(), 'base_link', 'tool0')


@pytest.fixture
def ur5(servo):
    """The client, the UR5 at rest at UR5_START (moved back by joint jogs), alive after."""
    client, processes, _ = servo
    # pymoveit2's MoveIt2Servo pauses the servo when it is destroyed: unpause.
    assert _pause(client, '/ur5', False).success
    _jog_to(client, UR5_START)
    yield client
    assert processes['/ur5'].alive(), processes['/ur5'].output()[-3000:]


def _twist_publisher(client: Client, namespace: str):
    return client.node.create_publisher(TwistStamped, f'{namespace}/servo_node/delta_twist_cmds',
                                        10)


def _twist(frame: str, linear=(0.0, 0.0, 0.0), angular=(0.0, 0.0, 0.0)) -> TwistStamped:
    message = TwistStamped()
    message.header.frame_id = frame
    (message.twist.linear.x, message.twist.linear.y, message.twist.linear.z) = linear
    (message.twist.angular.x, message.twist.angular.y, message.twist.angular.z) = angular
    return message


def _stream(send, seconds: float) -> int:
    """Call ``send`` every PERIOD for ``seconds``; how many calls it accepted."""
    accepted = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        accepted += bool(send())
        time.sleep(PERIOD)
    return accepted


def _at_rest(client: Client, namespace: str, seconds: float = 0.3,
             timeout: float = 10.0) -> np.ndarray:
    """Wait until joint_states have not changed for ``seconds``; the pose."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        start = time.monotonic()
        time.sleep(seconds)
        recent = client.since(namespace, start)
        if len(recent) > 3 and np.all(recent == recent[-1]):
            return recent[-1]
    raise AssertionError(f'{namespace} still moving after {timeout} s')


def _jog_to(client: Client, goal, namespace: str = '/ur5', names=UR5) -> None:
    """Joint-jog the arm back to ``goal`` (speed units through a raw JointJog when there is
    one, else nothing to do: the arm starts there)."""
    try:
        from control_msgs.msg import JointJog
    except ImportError:
        return
    publisher = client.node.create_publisher(JointJog, f'{namespace}/servo_node/delta_joint_cmds',
                                             10)
    _switch(client, namespace, 0)
    deadline = time.monotonic() + 20.0
    while time.monotonic() < deadline:
        error = np.asarray(goal) - client.latest(namespace)
        if np.max(np.abs(error)) < 2e-3:
            break
        publisher.publish(JointJog(joint_names=list(names),
                                   velocities=[float(v) for v in np.clip(error * 10.0, -1, 1)]))
        time.sleep(PERIOD)
    client.node.destroy_publisher(publisher)
    _at_rest(client, namespace)


def _call(client: Client, srv_type, name: str, request):
    """Call the idempotent service ``name``; its client is made once per name and kept, and
    an unanswered call is sent again. A client made just before its call can lose the answer
    on a loaded machine: the server may send it before the client's reply reader is
    discovered (rclpy's wait_for_service sees only the request side)."""
    clients = client.__dict__.setdefault('_servo_service_clients', {})
    if name not in clients:
        clients[name] = client.node.create_client(srv_type, name)
    service = clients[name]
    assert service.wait_for_service(timeout_sec=10.0), f'{name} not found'
    # The client's node spins on a thread of its own: the wait between looks only sleeps.
    return call_service(service, request, lambda: time.sleep(0.01), 30.0, attempt=10.0)


def _switch(client: Client, namespace: str, command_type: int):
    try:
        from moveit_msgs.srv import ServoCommandType
    except ImportError:
        return None
    return _call(client, ServoCommandType, f'{namespace}/servo_node/switch_command_type',
                 ServoCommandType.Request(command_type=command_type))


def _pause(client: Client, namespace: str, pause: bool) -> SetBool.Response:
    return _call(client, SetBool, f'{namespace}/servo_node/pause_servo',
                 SetBool.Request(data=pause))


def _no_jump(poses: np.ndarray, bound: float = NO_JUMP) -> float:
    steps = np.max(np.abs(np.diff(poses, axis=0)), axis=1) if len(poses) > 1 else [0.0]
    assert np.max(steps) <= bound, np.max(steps)
    return float(np.max(steps))


# ---------------------------------------------------------------------------- pymoveit2
@needs_pymoveit2
@pytest.mark.parametrize('frame', ['base_link', 'tool0'])
def test_pymoveit2_twist_moves_the_tool_in_its_direction(ur5, ur5_model, frame):
    from pymoveit2 import MoveIt2Servo
    servo = MoveIt2Servo(ur5.node, frame_id=frame, namespace='/ur5')
    try:
        start = ur5.latest('/ur5')
        assert _stream(lambda: servo(linear=(0.0, 0.0, 0.3)), 1.0) > 10
        end = _at_rest(ur5, '/ur5')
    finally:
        servo.destroy()
    moved = ur5_model.fk(end)[:3, 3] - ur5_model.fk(start)[:3, 3]
    axis = np.array([0.0, 0.0, 1.0]) if frame == 'base_link' else ur5_model.fk(start)[:3, 2]
    assert np.linalg.norm(moved) > 0.02, moved
    assert np.dot(moved, axis) / np.linalg.norm(moved) > 0.97, (moved, axis)


@needs_pymoveit2
def test_pymoveit2_joint_jog_moves_the_joint_then_pause_stops_it(ur5):
    from pymoveit2 import MoveIt2Servo
    servo = MoveIt2Servo(ur5.node, frame_id='base_link', namespace='/ur5')
    try:
        start = ur5.latest('/ur5')
        assert _stream(lambda: servo.servo_jog(('elbow_joint',), (0.5,)), 0.6) > 5
        moved = _at_rest(ur5, '/ur5') - start
        assert moved[2] > 0.05 and np.all(np.delete(moved, 2) == 0.0), moved
        # Paused (pymoveit2's disable): a raw stream moves nothing.
        assert servo.disable(sync=True)
        publisher = _twist_publisher(ur5, '/ur5')
        held = ur5.latest('/ur5')
        _stream(lambda: publisher.publish(_twist('base_link', (0.0, 0.0, 0.5))), 0.5)
        assert np.all(ur5.latest('/ur5') == held)
        assert servo.enable(sync=True)
    finally:
        servo.destroy()


@needs_pymoveit2
def test_the_command_type_switch_answers_as_moveit(ur5):
    assert _switch(ur5, '/ur5', 1).success
    assert not _switch(ur5, '/ur5', 2).success      # pose tracking: not served, in words
    assert not _switch(ur5, '/ur5', 5).success
    assert _switch(ur5, '/ur5', 0).success


# ---------------------------------------------------------------------------- case 42
def test_a_stream_that_stops_decelerates_and_halts_without_a_jump(ur5):
    _switch(ur5, '/ur5', 1)
    publisher = _twist_publisher(ur5, '/ur5')
    start = time.monotonic()
    _stream(lambda: publisher.publish(_twist('base_link', (0.0, 0.5, 0.0))), 0.8)
    stopped = time.monotonic()
    end = _at_rest(ur5, '/ur5')
    poses = ur5.since('/ur5', start)
    assert np.max(np.abs(poses[-1] - poses[0])) > 0.02
    _no_jump(poses)
    # It came to rest within the timeout plus the ramp (0.1 s + at most 3.15/5 s), measured
    # on the stamps of arrival with a generous margin for a loaded machine.
    settled = ur5.since('/ur5', stopped + 1.5)
    assert len(settled) == 0 or np.all(settled == end)


def test_a_jog_into_a_joint_limit_slows_and_halts_a_margin_before_it(servo):
    """On the six_axis (the UR5's elbow folds into its own upper arm before its limit: the
    step check halts it there, HALT_FOR_COLLISION): wrist_pitch towards 2.094 rad."""
    client, processes, _ = servo
    try:
        from control_msgs.msg import JointJog
    except ImportError:
        pytest.skip('control_msgs has no JointJog yet (pip route before msgs)')
    _switch(client, '/six', 0)
    publisher = client.node.create_publisher(JointJog, '/six/servo_node/delta_joint_cmds', 10)
    start = time.monotonic()
    _stream(lambda: publisher.publish(JointJog(joint_names=['wrist_pitch'],
                                               velocities=[1.0])), 4.0)
    end = _at_rest(client, '/six')
    poses = client.since('/six', start)
    upper = 2.0943951023931953
    assert np.max(poses[:, 4]) <= upper - 0.1 + 1e-9
    assert end[4] > upper - 0.1 - 0.01, end
    _no_jump(poses, 2.5 * 0.02)
    # Back out of the margin: allowed.
    _stream(lambda: publisher.publish(JointJog(joint_names=['wrist_pitch'],
                                               velocities=[-1.0])), 0.5)
    assert _at_rest(client, '/six')[4] < end[4] - 0.05
    assert processes['/six'].alive()


def test_a_twist_into_a_singularity_slows_and_halts_before_the_hard_stop(ur5, ur5_model):
    _switch(ur5, '/ur5', 1)
    publisher = _twist_publisher(ur5, '/ur5')
    start = time.monotonic()
    # Straight out along the forearm: the arm stretches (elbow → 0, condition → ∞).
    direction = ur5_model.fk(ur5.latest('/ur5'))[:3, 3] * [1.0, 1.0, 0.0]
    direction = direction / np.linalg.norm(direction)
    _stream(lambda: publisher.publish(_twist('base_link', tuple(direction * 1.0))), 4.0)
    end = _at_rest(ur5, '/ur5')
    poses = ur5.since('/ur5', start)
    jog = JogCore(ur5_model)
    conditions = [jog.condition(q) for q in poses[::5]]
    assert max(conditions) <= 30.0 and jog.condition(end) > 17.0, conditions[-3:]
    assert abs(end[2]) > 0.05            # the elbow stopped short of straight
    _no_jump(poses)
    # Said on servo_node/status as MoveIt says it: decelerating, then halted.
    assert {1, 2} <= ur5.codes_since('/ur5', start), ur5.codes_since('/ur5', start)


def test_a_nan_twist_is_refused_and_nothing_moves(ur5, servo, ur5_model):
    _switch(ur5, '/ur5', 1)
    publisher = _twist_publisher(ur5, '/ur5')
    held = ur5.latest('/ur5')
    start = time.monotonic()
    for bad in ((math.nan, 0.0, 0.0), (0.0, math.inf, 0.0)):
        _stream(lambda bad=bad: publisher.publish(_twist('base_link', bad)), 0.3)
    time.sleep(0.5)
    poses = ur5.since('/ur5', start)
    assert len(poses) > 10 and np.all(poses == held)
    log = servo[1]['/ur5'].output()
    assert 'twist refused: not finite' in log, log[-2000:]
    assert -1 in ur5.codes_since('/ur5', start)          # INVALID
    # Alive: the next good command moves the arm (towards the base: away from the
    # stretched arm's singularity, wherever the tests before left it).
    inward = -ur5_model.fk(held)[:3, 3] * [1.0, 1.0, 0.0]
    inward = tuple(0.3 * inward / np.linalg.norm(inward))
    _stream(lambda: publisher.publish(_twist('base_link', inward)), 0.4)
    assert np.any(_at_rest(ur5, '/ur5') != held)


def test_a_stream_that_resumes_starts_from_the_measured_state(servo):
    """The six_axis halts; its arm is then pushed (the measured state moves by 0.05 rad);
    the next stream starts from where the arm is, not from the last command."""
    client, processes, measured = servo
    _switch(client, '/six', 0)
    try:
        from control_msgs.msg import JointJog
        publisher = client.node.create_publisher(JointJog, '/six/servo_node/delta_joint_cmds',
                                                 10)

        def command():
            publisher.publish(JointJog(joint_names=['base_yaw'], velocities=[0.4]))
    except ImportError:
        _pause(client, '/six', False)
        twist = _twist_publisher(client, '/six')

        def command():
            twist.publish(_twist('', (0.0, 0.0, 0.0), (0.0, 0.0, 0.4)))
    _stream(command, 0.5)
    held = _at_rest(client, '/six')
    pushed = held.copy()
    pushed[0] += 0.05
    measured.override = pushed
    time.sleep(0.3)
    start = time.monotonic()
    _stream(command, 0.5)
    poses = client.since('/six', start)
    measured.override = None
    moving = poses[np.flatnonzero(np.any(poses != held, axis=1))]
    assert len(moving), 'the stream that resumed did not move the arm'
    # The first commanded pose is the pushed one (then the jog goes on from it).
    assert np.max(np.abs(moving[0] - pushed)) < 0.02, (moving[0], pushed, held)
    assert processes['/six'].alive(), processes['/six'].output()[-3000:]


def test_servo_parameters_are_checked_at_run_time(ur5):
    """moveit_servo.* on the executor node: a bad update is refused with the reason and the
    old value kept; a good one is taken."""
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import GetParameters, SetParameters
    node = ur5.node
    setter = node.create_client(SetParameters, '/ur5/trajectory_executor/set_parameters')
    getter = node.create_client(GetParameters, '/ur5/trajectory_executor/get_parameters')
    assert setter.wait_for_service(timeout_sec=10.0) and getter.wait_for_service(timeout_sec=10.0)

    def set_double(name: str, value: float):
        request = SetParameters.Request(parameters=[Parameter(name=name, value=ParameterValue(
            type=ParameterType.PARAMETER_DOUBLE, double_value=value))])
        return setter.call(request, timeout_sec=10.0).results[0]

    refused = set_double('moveit_servo.hard_stop_singularity_threshold', 10.0)
    assert not refused.successful and 'lower_singularity_threshold' in refused.reason
    assert not set_double('moveit_servo.incoming_command_timeout', math.nan).successful
    assert set_double('moveit_servo.scale.linear', 0.2).successful
    values = getter.call(GetParameters.Request(names=[
        'moveit_servo.hard_stop_singularity_threshold', 'moveit_servo.scale.linear']),
        timeout_sec=10.0).values
    assert [v.double_value for v in values] == [30.0, 0.2]
    assert set_double('moveit_servo.scale.linear', 0.4).successful
    node.destroy_client(setter)
    node.destroy_client(getter)
