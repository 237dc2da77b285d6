"""How move_group executes: through the trajectory_executor node's interfaces.

Why this route: the executor already owns every output of the arm (simulated joint_states,
FollowJointTrajectory to a controller, the servo bridge), the start-state and trajectory
checks, the scene checks and the hold-without-jump rules; move_group stays a planner, as
MoveIt's move_group hands trajectories to controllers. A trajectory goes to
``<executor>/execute_trajectory`` (checked, started at once), its end is read from
``<executor>/status`` (latched, on every change), a stop is ``<executor>/stop``.

Policy for a goal while another executes (RELIABILITY 40), as move_group's
TrajectoryExecutionManager (its execute() stops the running trajectory first): the newer goal
preempts. The running one is stopped (the arm holds where it is, no jump) and ends with
PREEMPTED; the newer one starts from there (a trajectory planned from another start is
refused by the executor's start check, nothing moves). A cancel stops and ends CANCELED;
nothing more is sent for it.
"""

from __future__ import annotations

from collections.abc import Callable
import threading
import time

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from arm_ik.nodes.common import LATCHED_QOS
from arm_interfaces.msg import ExecutorStatus
from arm_interfaces.srv import ExecuteTrajectory
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.moveit import codes
from arm_kinematics.moveit.codes import Answer

EXECUTION_CODES = {
    MotionCode.SUCCESS: codes.SUCCESS,
    MotionCode.TRAJECTORY_INVALID: codes.INVALID_MOTION_PLAN,
    MotionCode.INVALID_GOAL: codes.INVALID_MOTION_PLAN,
    MotionCode.START_MISMATCH: codes.START_STATE_INVALID,
    MotionCode.CANCELED: codes.PREEMPTED,
    MotionCode.PREEMPTED: codes.PREEMPTED,
    MotionCode.EMERGENCY_STOPPED: codes.ABORT,
    MotionCode.NO_JOINT_STATE: codes.ROBOT_STATE_STALE,
    MotionCode.UNSAFE_PATH: codes.MOTION_PLAN_INVALIDATED_BY_ENVIRONMENT_CHANGE,
}
SERVICE_WAIT = 30.0      # s for the executor's service to answer (a loaded machine takes seconds)
END_MARGIN = 10.0        # s beyond the trajectory's duration before it counts as lost
POLL = 0.02
# s beyond the duration after which an executor that never left IDLE ran a trajectory that
# goes nowhere (all points equal): it ended.
QUIET_MARGIN = 5.0


class ExecutionLink:
    """One execution at a time through the trajectory_executor ``executor``."""

    def __init__(self, node: Node, executor: str) -> None:
        self.node = node
        self.executor = executor.rstrip('/')
        group = ReentrantCallbackGroup()
        self._execute = node.create_client(ExecuteTrajectory,
                                           f'{self.executor}/execute_trajectory',
                                           callback_group=group)
        self._stop = node.create_client(Trigger, f'{self.executor}/stop', callback_group=group)
        self._status: ExecutorStatus | None = None
        self._status_count = 0
        node.create_subscription(ExecutorStatus, f'{self.executor}/status', self._on_status,
                                 LATCHED_QOS, callback_group=group)
        self._lock = threading.Lock()
        self._token = 0
        self._done: threading.Event | None = None     # set when the current run has ended

    def _on_status(self, message: ExecutorStatus) -> None:
        self._status = message
        self._status_count += 1

    @property
    def busy(self) -> bool:
        done = self._done
        return done is not None and not done.is_set()

    def _call(self, client, request, what: str):
        if not client.wait_for_service(timeout_sec=2.0):
            return None, f'{what}: {client.srv_name} is not available (is trajectory_executor ' \
                'running in this namespace?)'
        done = threading.Event()
        future = client.call_async(request)
        future.add_done_callback(lambda _: done.set())
        if not done.wait(SERVICE_WAIT):
            client.remove_pending_request(future)
            return None, f'{what}: {client.srv_name} did not answer in {SERVICE_WAIT:g} s'
        return future.result(), ''

    def stop(self, why: str) -> None:
        """Stop whatever moves (trajectory_execution_event "stop", a cancel)."""
        with self._lock:
            self._token += 1
        self._call(self._stop, Trigger.Request(), 'stop')
        self.node.get_logger().info(f'execution stopped: {why}')

    def preempt(self, why: str) -> None:
        """Stop the running execution (its goal ends PREEMPTED) and wait until it has."""
        done = self._done
        if done is None or done.is_set():
            return
        self.stop(why)
        done.wait(3.0)
        time.sleep(0.1)       # joint_states of the held pose reach this node

    def execute(self, trajectory: JointTrajectory, duration: float,
                cancel_requested: Callable[[], bool] = lambda: False) -> Answer:
        """Run ``trajectory`` to its end; the answer in MoveIt's codes (PREEMPTED when a
        newer goal or a stop took over; CANCELED is the caller's to report)."""
        self.preempt('a newer goal')
        done = threading.Event()
        with self._lock:
            self._token += 1
            token = self._token
            self._done = done
        try:
            return self._run(trajectory, duration, token, cancel_requested)
        finally:
            done.set()

    def _run(self, trajectory: JointTrajectory, duration: float, token: int,
             cancel_requested: Callable[[], bool]) -> Answer:
        seen = self._status_count
        request = ExecuteTrajectory.Request()
        request.trajectory = trajectory
        response, reason = self._call(self._execute, request, 'execute_trajectory')
        if response is None:
            return codes.fail(codes.CONTROL_FAILED, reason)
        code = MotionCode(response.error_code.val)
        if code != MotionCode.SUCCESS:
            return codes.fail(EXECUTION_CODES.get(code, codes.CONTROL_FAILED),
                              f'the executor refused the trajectory: {code.name.lower()}: '
                              f'{response.message}')
        deadline = time.monotonic() + duration + END_MARGIN
        quiet_until = time.monotonic() + duration + QUIET_MARGIN
        moving_seen = False
        while True:
            if token != self._token:
                return codes.fail(codes.PREEMPTED, 'preempted: a newer goal or a stop took '
                                  'over; the arm held where it was')
            if cancel_requested():
                self.stop('the client cancelled')
                return codes.fail(codes.PREEMPTED, 'cancelled by the client; the arm holds '
                                  'where it was')
            status = self._status
            if status is not None and self._status_count > seen:
                if status.state == ExecutorStatus.MOVING:
                    moving_seen = True
                elif moving_seen or self._status_count > seen + 1 or \
                        status.state != ExecutorStatus.IDLE:
                    return self._ended(status)
            if not moving_seen and status is not None and \
                    status.state == ExecutorStatus.IDLE and \
                    time.monotonic() > quiet_until:
                # A trajectory that ends where it starts changes no state: nothing to wait for.
                return self._ended(status)
            if time.monotonic() > deadline:
                self.stop('the execution did not end in time')
                return codes.fail(codes.TIMED_OUT, f'the execution did not end within '
                                  f'{duration + END_MARGIN:.1f} s; stopped')
            time.sleep(POLL)

    @staticmethod
    def _ended(status: ExecutorStatus) -> Answer:
        code = MotionCode(status.last_error.val)
        if status.state == ExecutorStatus.IDLE and code == MotionCode.SUCCESS:
            return Answer(codes.SUCCESS, 'executed')
        return codes.fail(EXECUTION_CODES.get(code, codes.CONTROL_FAILED),
                          f'execution ended {code.name.lower()}: {status.message}')
