"""A test client of trajectory_executor over DDS: recorders, goals, services, a fake arm.

The client node spins in a background thread, so a test waits on plain conditions. Event
times are wall-clock (time.time()), the clock of the executor's header stamps: on a loaded
machine this process may handle messages late, so checks select joint states by their
stamps, not by when they were handled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
import math
import threading
import time
from typing import Any

import numpy as np

EXECUTOR = 'trajectory_executor'


@dataclass
class Recorder:
    """Messages of one topic with their arrival times."""

    items: list[tuple[float, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, message: Any) -> None:
        with self.lock:
            self.items.append((time.time(), message))

    def since(self, moment: float) -> list[Any]:
        with self.lock:
            return [m for t, m in self.items if t >= moment]

    def timed_since(self, moment: float) -> list[tuple[float, Any]]:
        with self.lock:
            return [(t, m) for t, m in self.items if t >= moment]

    def last(self) -> Any:
        with self.lock:
            return self.items[-1][1] if self.items else None

    def last_arrival(self) -> float:
        """When the newest message arrived (wall-clock s; 0.0 before any)."""
        with self.lock:
            return self.items[-1][0] if self.items else 0.0

    def __len__(self) -> int:
        with self.lock:
            return len(self.items)


def stamp_of(message: Any) -> float:
    return message.header.stamp.sec + message.header.stamp.nanosec * 1e-9


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError(f'timed out after {timeout:.1f} s waiting for {what}')


@dataclass
class GoalOutcome:
    """What a finished goal returned."""

    status: int
    result: Any
    feedback: list[Any]
    sent: float
    accepted: bool = True

    @property
    def code(self) -> int:
        return self.result.error_code.val

    @property
    def message(self) -> str:
        return self.result.message


class MotionClient:
    """One test node talking to one trajectory_executor (namespace ``namespace``)."""

    def __init__(self, domain_id: int, namespace: str, joint_names: Sequence[str],
                 controller: str = 'none', controller_topic: str = '',
                 controller_joints: Sequence[str] | None = None,
                 fake_arm: np.ndarray | None = None,
                 measured_topic: str = 'measured_joint_states') -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Bool, Float64MultiArray
        from std_srvs.srv import Trigger
        from trajectory_msgs.msg import JointTrajectory
        from visualization_msgs.msg import MarkerArray

        from arm_ik.middleware import LockedActionClient
        from arm_ik.nodes.common import LATCHED_QOS
        from arm_interfaces.action import MoveToTarget
        from arm_interfaces.msg import ExecutorStatus
        from arm_interfaces.srv import ExecuteTrajectory

        self.namespace = namespace
        self.names = tuple(joint_names)
        self.controller_joints = tuple(controller_joints or joint_names)
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node(f'motion_test_{namespace.strip("/")}',
                                      context=self.context)
        self.states = Recorder()
        self.commands = Recorder()
        self.status = Recorder()
        self.paths = Recorder()
        self.plans = Recorder()
        node = self.node
        node.create_subscription(JointState, f'{namespace}/joint_states', self.states.add, 100)
        node.create_subscription(ExecutorStatus, f'{namespace}/{EXECUTOR}/status',
                                 self.status.add, LATCHED_QOS)
        node.create_subscription(MarkerArray, f'{namespace}/planned_path', self.paths.add,
                                 LATCHED_QOS)
        from arm_interfaces.msg import PlannedPath
        node.create_subscription(PlannedPath, f'{namespace}/plan', self.plans.add, LATCHED_QOS)
        if controller == 'forward_position':
            topic = controller_topic or 'forward_position_controller/commands'
            node.create_subscription(Float64MultiArray, f'{namespace}/{topic}',
                                     self._on_command, 100)
        elif controller == 'joint_trajectory':
            topic = controller_topic or 'joint_trajectory_controller/joint_trajectory'
            node.create_subscription(JointTrajectory, f'{namespace}/{topic}', self.commands.add,
                                     100)
        self.action = LockedActionClient(node, MoveToTarget,
                                         f'{namespace}/{EXECUTOR}/move_to_target')
        self.reset_client = node.create_client(Trigger, f'{namespace}/{EXECUTOR}/reset')
        self.execute_client = node.create_client(ExecuteTrajectory,
                                                 f'{namespace}/{EXECUTOR}/execute_trajectory')
        from geometry_msgs.msg import PointStamped
        from rclpy.qos import qos_profile_sensor_data
        self.target_publisher = node.create_publisher(PointStamped, f'{namespace}/target',
                                                      qos_profile_sensor_data)
        self.estop_publisher = node.create_publisher(Bool, f'{namespace}/emergency_stop',
                                                     LATCHED_QOS)
        # A stand-in for the real arm: measured state = the last forward_position command.
        self.arm_pose = None if fake_arm is None else np.asarray(fake_arm, dtype=float).copy()
        self.arm_paused = False
        self.measured_at = 0.0           # when the fake arm last published, wall-clock s
        if fake_arm is not None:
            self.measured_publisher = node.create_publisher(
                JointState, f'{namespace}/{measured_topic}', 10)
            node.create_timer(0.01, self._publish_measured)
        # One thread: rclpy's ActionClient *_async calls race the response when another
        # thread processes it (ros2/rclpy#1123), so they run on this thread too (_in_spin).
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(node)
        self._closing = False
        self._thread = threading.Thread(target=self._spin, daemon=True, name='spin')
        self._thread.start()

    # ------------------------------------------------------------------ plumbing
    def close(self) -> None:
        import rclpy
        # The spin thread leaves first, then the executor shuts down: an executor shut down
        # under a spin raises in it (rclpy drops its guard condition; seen in a loaded suite:
        # "Exception in thread (spin)", AttributeError: 'NoneType' object has no attribute
        # 'handle'), and so does a node destroyed under it.
        self._closing = True
        self._thread.join(timeout=10.0)
        self.executor.shutdown(timeout_sec=2.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)

    def _spin(self) -> None:
        while not self._closing and self.context.ok():
            self.executor.spin_once(timeout_sec=0.05)

    def _on_command(self, message: Any) -> None:
        self.commands.add(message)
        if self.arm_pose is not None:
            values = dict(zip(self.controller_joints, message.data))
            self.arm_pose = np.array([values[name] for name in self.names])

    def _publish_measured(self) -> None:
        from sensor_msgs.msg import JointState
        if self.arm_paused or self.arm_pose is None:
            return
        state = JointState(name=list(self.names), position=self.arm_pose.tolist())
        state.header.stamp = self.node.get_clock().now().to_msg()
        self.measured_publisher.publish(state)
        self.measured_at = time.time()

    def wait_for_server(self, timeout: float = 30.0, process: Any = None) -> None:
        """Wait for the action server and prove its reply paths; ``process`` (the server's,
        from a ProcessGroup): fail at once if it dies, and show its output if it is late.

        A reply the server sends before it has matched this client's response reader is
        lost: the request arrives, the answer never does, and a first goal would wait for
        ever. A goal without joint names moves nothing (the executor aborts it with
        INVALID_GOAL, case 14), so it is sent, and its result asked for, until both
        answers arrive.
        """
        deadline = time.monotonic() + timeout

        def ready() -> bool:
            if process is not None and not process.alive():
                raise AssertionError(f'{process.name} died:\n{process.output()[-3000:]}')
            return self.action.server_is_ready()
        try:
            wait_until(ready, timeout, 'the move_to_target action')
        except AssertionError as error:
            if process is None or not process.alive():
                raise
            raise AssertionError(f'{error}; {process.name} so far:\n'
                                 f'{process.output()[-3000:]}') from None
        probe = self.goal(joints=[0.0] * len(self.names), names=[])
        handle = self._until_answered(lambda: self.action.send_goal_async(probe), deadline,
                                      'a goal reply')
        self._until_answered(handle.get_result_async, deadline, 'a result reply')

    def _until_answered(self, call: Callable[[], Any], deadline: float, what: str) -> Any:
        """``call()`` (a request) on the spinning thread, made again every 2 s without an
        answer; the answer."""
        while True:
            future = self._in_spin(call)
            attempt_end = min(deadline, time.monotonic() + 2.0)
            while not future.done() and time.monotonic() < attempt_end:
                time.sleep(0.01)
            if future.done():
                return future.result()
            if time.monotonic() >= deadline:
                raise AssertionError(f'no {what} from the move_to_target action')

    def _result(self, future: Any, timeout: float) -> Any:
        wait_until(future.done, timeout, 'a reply')
        return future.result()

    def _in_spin(self, call: Callable[[], Any]) -> Any:
        """Run ``call`` on the spinning thread and return what it returns."""
        task = self.executor.create_task(call)
        return self._result(task, 10.0)

    # ------------------------------------------------------------------ state
    def stamped_since(self, since: float) -> list[Any]:
        """joint_states stamped at or after ``since`` (wall-clock s), in arrival order."""
        return [m for m in self.states.since(since - 5.0) if stamp_of(m) >= since]

    def positions(self, since: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """(stamps (N,), positions (N, n) in chain order) of joint_states stamped since
        ``since`` (wall-clock s)."""
        messages = self.stamped_since(since)
        if not messages:
            return np.zeros(0), np.zeros((0, len(self.names)))
        order = [list(messages[0].name).index(name) for name in self.names]
        return (np.array([stamp_of(m) for m in messages]),
                np.array([[m.position[i] for i in order] for m in messages]))

    def pose(self) -> np.ndarray:
        """The commanded pose now: from the first joint state stamped after this call (one
        handled earlier may be an old one this process was late to handle)."""
        now = time.time()
        wait_until(lambda: len(self.positions(now)[0]) > 0, 20.0, 'a current joint state')
        return self.positions(now)[1][0]

    def state(self) -> Any:
        return self.status.last()

    def wait_state(self, state: int, timeout: float = 10.0) -> Any:
        wait_until(lambda: self.state() is not None and self.state().state == state, timeout,
                   f'executor state {state}')
        return self.state()

    # ------------------------------------------------------------------ goals
    def goal(self, position: Sequence[float] | None = None, joints: Sequence[float] | None = None,
             names: Sequence[str] | None = None, law: str = '', duration: float = 0.0,
             speed_scale: float = 0.0, goal_type: int = 0,
             orientation: Sequence[float] = (0.0, 0.0, 0.0, 1.0), frame: str = '',
             solver: str = '') -> Any:
        from arm_interfaces.action import MoveToTarget
        goal = MoveToTarget.Goal()
        if position is not None:
            pose = goal.target.pose
            pose.position.x, pose.position.y, pose.position.z = (float(v) for v in position)
            (pose.orientation.x, pose.orientation.y, pose.orientation.z,
             pose.orientation.w) = (float(v) for v in orientation)
        goal.target.header.frame_id = frame
        if joints is not None:
            goal.joint_target.name = list(names if names is not None else self.names)
            goal.joint_target.position = [float(v) for v in joints]
        goal.goal_type = goal_type
        goal.motion_law = law
        goal.duration = float(duration)
        goal.speed_scale = float(speed_scale)
        goal.solver = solver
        return goal

    def send(self, goal: Any) -> tuple[Any, list[Any], float]:
        """Send a goal; (goal handle, feedback list, send time)."""
        feedback: list[Any] = []
        sent = time.time()
        future = self._in_spin(lambda: self.action.send_goal_async(
            goal, feedback_callback=lambda m: feedback.append((time.time(), m.feedback))))
        handle = self._result(future, 20.0)
        return handle, feedback, sent

    def send_measured(self, goal: Any, timeout: float = 30.0) -> tuple[Any, list[Any], float]:
        """Send a goal to an executor that starts from a measured joint state (case 19, 20).

        The executor may be ready for goals before its feedback subscription has matched the
        fake arm's publisher; it then aborts with NO_JOINT_STATE "none received yet" and
        moves nothing. Such a goal is sent again until it starts (status MOVING) or fails
        for another reason.
        """
        deadline = time.monotonic() + timeout
        while True:
            handle, feedback, sent = self.send(goal)
            assert handle.accepted, 'the executor rejected the goal'
            result = self._in_spin(handle.get_result_async)
            wait_until(lambda result=result, sent=sent: result.done() or any(
                s.state == 1 for s in self.status.since(sent)), 20.0, 'the goal to start')
            if not result.done() or result.result().result.error_code.val != 10 or \
                    'none received yet' not in result.result().result.message:
                return handle, feedback, sent
            assert time.monotonic() < deadline, 'no measured joint state reached the executor'
            time.sleep(0.2)

    def outcome(self, handle: Any, feedback: list[Any], sent: float,
                timeout: float = 60.0) -> GoalOutcome:
        response = self._result(self._in_spin(handle.get_result_async), timeout)
        # The result and the last joint_states travel on different topics: give the state
        # a few periods to arrive, so tests reading positions see the end of the move.
        time.sleep(0.05)
        return GoalOutcome(response.status, response.result, feedback, sent, handle.accepted)

    def move(self, goal: Any, timeout: float = 60.0) -> GoalOutcome:
        handle, feedback, sent = self.send(goal)
        return self.outcome(handle, feedback, sent, timeout)

    def cancel(self, handle: Any) -> Any:
        return self._result(self._in_spin(handle.cancel_goal_async), 10.0)

    def move_joints(self, joints: Sequence[float], duration: float = 1.0,
                    law: str = 'min_jerk') -> GoalOutcome:
        outcome = self.move(self.goal(joints=joints, law=law, duration=duration))
        assert outcome.code == 0, outcome.message
        return outcome

    # ------------------------------------------------------------------ services, topics
    def reset(self) -> Any:
        from std_srvs.srv import Trigger
        wait_until(self.reset_client.service_is_ready, 10.0, 'the reset service')
        return self._result(self.reset_client.call_async(Trigger.Request()), 10.0)

    def execute(self, names: Sequence[str], points: Sequence[tuple[float, Sequence[float],
                                                                   Sequence[float]]]) -> Any:
        """Call ~/execute_trajectory with (time s, positions, velocities) points."""
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

        from arm_interfaces.srv import ExecuteTrajectory
        message = JointTrajectory(joint_names=list(names))
        for seconds, positions, velocities in points:
            point = JointTrajectoryPoint(positions=[float(v) for v in positions],
                                         velocities=[float(v) for v in velocities])
            whole = math.floor(seconds)
            point.time_from_start.sec = int(whole)
            point.time_from_start.nanosec = int(round((seconds - whole) * 1e9))
            message.points.append(point)
        wait_until(self.execute_client.service_is_ready, 10.0, 'execute_trajectory')
        return self._result(self.execute_client.call_async(
            ExecuteTrajectory.Request(trajectory=message)), 30.0)

    def set_parameters(self, **values: Any) -> list[Any]:
        """Set executor parameters; the SetParametersResult of each."""
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter
        client = self.node.create_client(SetParameters,
                                         f'{self.namespace}/{EXECUTOR}/set_parameters')
        try:
            wait_until(client.service_is_ready, 10.0, 'set_parameters')
            request = SetParameters.Request(parameters=[
                Parameter(name, value=value).to_parameter_msg()
                for name, value in values.items()])
            return list(self._result(client.call_async(request), 10.0).results)
        finally:
            self.node.destroy_client(client)

    def publish_target(self, point: Sequence[float], frame: str = '') -> None:
        from geometry_msgs.msg import PointStamped
        message = PointStamped()
        message.header.frame_id = frame
        message.header.stamp = self.node.get_clock().now().to_msg()
        message.point.x, message.point.y, message.point.z = (float(v) for v in point)
        self.target_publisher.publish(message)

    def stream_target(self, point: Sequence[float], count: int, period: float) -> None:
        """Publish one live target ``count`` times, ``period`` s apart (a steady stream)."""
        for _ in range(count):
            self.publish_target(point)
            time.sleep(period)

    def emergency_stop(self, pressed: bool) -> None:
        from std_msgs.msg import Bool
        self.estop_publisher.publish(Bool(data=pressed))

    @contextmanager
    def emergency_stop_held(self, during: Any = None, after: float = 1.0
                            ) -> Iterator[tuple[float, GoalOutcome | None]]:
        """Press the e-stop, ``after`` s into the goal ``during`` when one is given; yields
        (wall-clock s it was pressed, that goal's outcome or None). On the way out, also after
        a failure, it is released and the executor reset (which must succeed), so the next
        test finds the arm usable."""
        handle = feedback = sent = None
        if during is not None:
            handle, feedback, sent = self.send(during)
            time.sleep(after)
        pressed = time.time()
        self.emergency_stop(True)
        try:
            yield pressed, (None if handle is None else self.outcome(handle, feedback, sent))
        finally:
            self.emergency_stop(False)
            time.sleep(0.2)             # the release reaches the executor before the reset
            reply = self.reset()
            assert reply.success, reply.message

    # ------------------------------------------------------------------ checks
    def assert_silent(self, since: float, seconds: float = 0.5, hold: int = 1) -> None:
        """RELIABILITY's "nothing published" after the event at ``since`` (wall-clock s): for
        ``seconds`` no controller command beyond ``hold`` hold commands, and joint_states
        repeating one pose exactly (after the hold, which lands within a control period).

        Commands carry no stamp; a forward_position command is dated by the joint state of
        the same tick (same positions), so a command published before the event but handled
        late by this process is not counted.
        """
        end = since + seconds
        wait_until(lambda: any(stamp_of(m) >= end for m in self.states.since(end - 5.0)),
                   seconds + 20.0, 'joint_states past the silent window')
        states = [m for m in self.states.since(since - 5.0) if stamp_of(m) < end]
        after = [m for m in states if stamp_of(m) >= since]
        assert after, 'joint_states stopped altogether'
        settle = 1 if hold else 0
        assert all(m.position == after[-1].position for m in after[settle:]), \
            'joint_states moved after the event'
        late = []
        for arrived, command in self.commands.timed_since(since - 5.0):
            stamps = self._command_stamps(command, states)
            # Undated (a JointTrajectory): counted when it arrived after the event.
            if (min(stamps) >= since) if stamps else arrived >= since:
                late.append(f'{"dated" if stamps else "undated"}, arrived '
                            f'{arrived - since:+.3f} s, {list(getattr(command, "data", []))}')
        assert len(late) <= hold, \
            f'{len(late)} controller commands after the event (held pose ' \
            f'{list(after[-1].position)}; {len(states)} states in the window):\n' + \
            '\n'.join(late[:5] + (['...'] if len(late) > 8 else []) + late[5:][-3:])

    def _command_stamps(self, command: Any, states: list[Any]) -> list[float]:
        if not hasattr(command, 'data'):
            return []
        values = dict(zip(self.controller_joints, command.data))
        if set(values) != set(self.names):
            return []
        row = [values[name] for name in self.names]
        order = None
        stamps = []
        for state in states:
            if order is None:
                order = [list(state.name).index(name) for name in self.names]
            if [state.position[i] for i in order] == row:
                stamps.append(stamp_of(state))
        return stamps


def max_step_ratio(stamps: np.ndarray, positions: np.ndarray, limits: np.ndarray) -> float:
    """Largest |Δq_i| / (limit_i · Δt) between consecutive joint_states (1: at the limit)."""
    if len(stamps) < 2:
        return 0.0
    dt = np.diff(stamps)
    keep = dt > 1e-4
    steps = np.abs(np.diff(positions, axis=0))[keep] / (limits * dt[keep, None])
    return float(steps.max()) if steps.size else 0.0
