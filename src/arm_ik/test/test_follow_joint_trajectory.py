"""trajectory_executor with ``output: follow_joint_trajectory`` against controller_stand_in,
both real processes over DDS (one process group for the module).

The stand-in behaves as joint_trajectory_controller (arm_kinematics.control) and injects
faults on request; a spy reads the controller action's goal status topic (what the controller
did with each goal) and the measured joint_states. Covered: a move reaching its goal with the
controller's feedback forwarded; the server missing, then appearing; each fault reported to
the MoveToTarget client with its own code and words (reject, lag → path tolerance, stop short →
goal tolerance, die → controller lost, cancel never answered); every cancel path (cancel,
preempt, emergency stop, stale joint_states) ending with the controller's goal cancelled and
nothing sent or moved afterwards (RELIABILITY 28-31).
"""

from __future__ import annotations

import time

from action_msgs.msg import GoalStatus
import numpy as np
import pytest

from arm_testing.motion_harness import MotionClient, Recorder, wait_until
from arm_testing.ros_harness import config_file, DomainClaim

NS = '/pointer3'
JOINTS = ('base_yaw', 'shoulder_pitch', 'elbow_pitch')
HOME = [0.0, 0.5235987755982988, -1.0471975511965976]
ACTION = f'{NS}/joint_trajectory_controller/follow_joint_trajectory'
MEASURED = 'joint_state_broadcaster/joint_states'
SUCCESS, CANCELED, PREEMPTED, ESTOP, NO_JOINT_STATE = 0, 6, 7, 8, 10
MISSING, REJECTED, PATH, GOAL, LOST = 14, 15, 16, 17, 19
EXECUTING = GoalStatus.STATUS_EXECUTING
STAND_IN = {'joints': list(JOINTS), 'joint_states_topic': MEASURED,
            'constraints.goal_time': 0.5,
            **{f'constraints.{j}.trajectory': 0.2 for j in JOINTS},
            **{f'constraints.{j}.goal': 0.01 for j in JOINTS}}


class Rig:
    """The executor, the stand-in (restartable) and a client with spies."""

    def __init__(self, domain, group, urdf: str) -> None:
        from action_msgs.msg import GoalStatusArray
        from rclpy.qos import qos_profile_action_status_default
        from sensor_msgs.msg import JointState
        self.group = group
        self.executor = group.start_node('arm_ik', 'trajectory_executor', namespace=NS, params={
            'robot_description': urdf, 'arm': 'pointer3', 'arm_config': config_file('pointer3'),
            'output': 'follow_joint_trajectory', 'feedback_topic': MEASURED,
            'follow_target': False, 'speed_scale': 1.0, 'publish_rate': 100.0,
            # 25 periods (0.5 s) of the stand-in's 50 Hz states: on a loaded 2-core machine
            # the Python stand-in was seen to pause 0.21 s; muting them (the stale test) is
            # still seen within 0.5 s.
            'feedback_stale_periods': 25.0})
        self.controller = None
        # Until the stand-in runs, the client publishes the measured state at home, as a
        # joint_state_broadcaster would with the trajectory controller not loaded.
        self.client = MotionClient(domain.domain_id, NS, JOINTS, fake_arm=np.array(HOME),
                                   measured_topic=MEASURED)
        self.statuses = Recorder()
        self.measured = Recorder()
        node = self.client.node
        node.create_subscription(GoalStatusArray, f'{ACTION}/_action/status', self.statuses.add,
                                 qos_profile_action_status_default)
        node.create_subscription(JointState, f'{NS}/{MEASURED}', self.measured.add, 100)

    def start_controller(self, initial=HOME) -> None:
        started = time.time()
        self.controller = self.group.start_node(
            'arm_ik', 'controller_stand_in', name='joint_trajectory_controller', namespace=NS,
            params={**STAND_IN, 'initial_positions': [float(x) for x in initial]})
        # The stand-in's states carry velocities, the client's do not: hand over once they
        # come, so the measured state never goes stale in between.
        wait_until(lambda: any(m.velocity for m in self.measured.since(started)), 30.0,
                   'the stand-in joint states')
        self.client.arm_paused = True

    def fault(self, fault: str) -> None:
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter
        node = self.client.node
        client = node.create_client(SetParameters, f'{NS}/joint_trajectory_controller/'
                                    'set_parameters')
        try:
            wait_until(client.service_is_ready, 10.0, 'the stand-in parameters')
            future = client.call_async(SetParameters.Request(parameters=[
                Parameter('fault', value=fault).to_parameter_msg()]))
            wait_until(future.done, 10.0, 'set_parameters')
            assert future.result().results[0].successful
        finally:
            node.destroy_client(client)

    def goals(self, since: float) -> dict[bytes, int]:
        """Controller goals seen since ``since`` (wall s): id → latest status."""
        latest: dict[bytes, int] = {}
        for array in self.statuses.since(since):
            for status in array.status_list:
                if status.goal_info.stamp.sec + status.goal_info.stamp.nanosec * 1e-9 >= since:
                    latest[bytes(status.goal_info.goal_id.uuid)] = status.status
        return latest

    def running_goal(self, since: float) -> bytes:
        wait_until(lambda: EXECUTING in self.goals(since).values(), 10.0,
                   'a controller goal executing')
        return next(k for k, v in self.goals(since).items() if v == EXECUTING)

    def measured_pose(self) -> np.ndarray:
        message = self.measured.last()
        return np.array([message.position[list(message.name).index(j)] for j in JOINTS])

    def assert_still(self, since: float, goals_before: int, seconds: float = 0.5) -> None:
        """Nothing more sent to the controller, the measured arm and the executor's commanded
        state both still, for ``seconds`` after a short settle."""
        time.sleep(0.1)
        start = time.time()
        first = self.measured_pose()
        self.client.assert_silent(start, seconds, hold=0)
        assert np.array_equal(self.measured_pose(), first), 'the arm moved after the stop'
        assert len(self.goals(since)) == goals_before, 'a controller goal was sent after'

    def move(self, target, duration: float = 1.0, **kwargs):
        return self.client.goal(joints=target, law='min_jerk', duration=duration, **kwargs)

    def first_move(self, target, timeout: float = 15.0, again=(NO_JOINT_STATE, MISSING)):
        """A move right after a stand-in (re)started: the executor may not have matched its
        joint_states yet (NO_JOINT_STATE) nor discovered its action server (MISSING, after
        the 2 s server wait); nothing is sent either way: try again until it has.

        This process seeing the stand-in's joint states says nothing of the executor's
        discovery: on a loaded machine the executor was seen to find the server more than
        2.4 s after this process did (Jazzy and Kilted alike)."""
        deadline = time.monotonic() + timeout
        while True:
            outcome = self.client.move(self.move(target))
            if outcome.code not in again or time.monotonic() > deadline:
                return outcome
            time.sleep(0.3)


@pytest.fixture(scope='module')
def rig(urdf_of):
    from arm_bringup.process_group import ProcessGroup
    domain = DomainClaim()
    group = ProcessGroup(env=domain.environment())
    rig = Rig(domain, group, urdf_of('pointer3'))
    try:
        rig.client.wait_for_server(40.0)
        yield rig
    finally:
        rig.client.close()
        group.close()
        domain.release()


@pytest.fixture
def controller(rig):
    """The stand-in running without a fault, the arm back at home."""
    if rig.controller is None or not rig.controller.alive():
        rig.start_controller(rig.measured_pose() if len(rig.measured) else HOME)
    rig.fault('none')
    outcome = rig.first_move(HOME)
    assert outcome.code == SUCCESS, outcome.message
    yield rig


def test_server_missing_then_appears(rig):
    """RELIABILITY 28: no server → a clear failure within the bounded wait; the next goal
    works once it is there."""
    # The executor may not have the client's measured state yet (NO_JOINT_STATE): again.
    outcome = rig.first_move([0.3, 0.6, -0.9], again=(NO_JOINT_STATE,))
    assert outcome.code == MISSING, outcome.message
    assert 'no FollowJointTrajectory action server' in outcome.message and ACTION in \
        outcome.message
    assert time.time() - outcome.sent < 2.0 + 3.0       # server_wait 2 s, and a margin
    rig.start_controller()
    outcome = rig.first_move([0.3, 0.6, -0.9])
    assert outcome.code == SUCCESS, outcome.message


def test_move_reaches_goal_with_controller_feedback(controller):
    target = [0.4, 0.7, -0.8]
    since = time.time()
    outcome = controller.client.move(controller.move(target))
    assert outcome.code == SUCCESS, outcome.message
    assert list(controller.goals(since).values()) == [GoalStatus.STATUS_SUCCEEDED]
    np.testing.assert_allclose(controller.measured_pose(), target, atol=0.01)
    forwarded = [f for _, f in outcome.feedback if f.controller_actual.name]
    assert forwarded, 'no controller feedback forwarded'
    assert list(forwarded[-1].controller_actual.name) == list(JOINTS)
    assert len(forwarded[-1].controller_error) == len(JOINTS)


@pytest.mark.parametrize('fault, code, words', [
    ('reject', REJECTED, 'the controller rejected the goal'),
    ('lag', PATH, "Aborted due to path tolerance violation: joint 'base_yaw' position error"),
    ('stop_short', GOAL, 'Aborted due to goal_time_tolerance exceeding by'),
])
def test_fault_reported_with_its_code_and_words(controller, fault, code, words):
    controller.fault(fault)
    outcome = controller.client.move(controller.move([0.8, 0.7, -0.8]))
    assert outcome.code == code, outcome.message
    assert words in outcome.message and ACTION in outcome.message
    # The commanded state follows the measured one: the next move starts without a jump.
    time.sleep(0.1)
    np.testing.assert_allclose(controller.client.pose(), controller.measured_pose(), atol=0.02)


def _cancel_path(rig, trigger, expected_code: int) -> None:
    since = time.time()
    handle, feedback, sent = rig.client.send(rig.move([0.8, 0.8, -0.7], duration=2.0))
    goal_id = rig.running_goal(since)
    time.sleep(0.3)
    trigger(handle)
    outcome = rig.client.outcome(handle, feedback, sent, 20.0)
    assert outcome.code == expected_code, outcome.message
    wait_until(lambda: rig.goals(since)[goal_id] == GoalStatus.STATUS_CANCELED, 5.0,
               'the controller goal cancelled')
    return since, outcome


def test_cancel_cancels_the_controller_goal(controller):
    since, outcome = _cancel_path(controller, controller.client.cancel, CANCELED)
    assert 'the controller goal was cancelled' in outcome.message
    controller.assert_still(since, goals_before=1)


def test_emergency_stop_cancels_the_controller_goal(controller):
    try:
        since, _ = _cancel_path(controller, lambda _: controller.client.emergency_stop(True),
                                ESTOP)
        controller.assert_still(since, goals_before=1)
    finally:
        controller.client.emergency_stop(False)
        time.sleep(0.2)
        assert controller.client.reset().success


def test_stale_joint_states_cancel_the_controller_goal(controller):
    try:
        since, outcome = _cancel_path(controller, lambda _: controller.fault('mute_joint_states'),
                                      NO_JOINT_STATE)
        assert 'stale' in outcome.message
        assert len(controller.goals(since)) == 1
    finally:
        controller.fault('none')


def test_preempt_cancels_the_old_controller_goal(controller):
    since = time.time()
    handle, feedback, sent = controller.client.send(controller.move([0.8, 0.8, -0.7], 2.0))
    first = controller.running_goal(since)
    time.sleep(0.3)
    newer = controller.client.move(controller.move([0.2, 0.6, -0.9], 1.0))
    assert newer.code == SUCCESS, newer.message
    assert controller.client.outcome(handle, feedback, sent).code == PREEMPTED
    assert controller.goals(since)[first] == GoalStatus.STATUS_CANCELED


def test_cancel_never_answered_is_bounded_and_said(controller):
    controller.fault('ignore_cancel')
    started = time.monotonic()
    handle, feedback, sent = controller.client.send(controller.move([0.8, 0.8, -0.7], 2.0))
    controller.running_goal(time.time() - 1.0)
    controller.client.cancel(handle)
    outcome = controller.client.outcome(handle, feedback, sent, 20.0)
    assert outcome.code == CANCELED
    assert 'the controller never acknowledged the cancel' in outcome.message
    assert time.monotonic() - started < 2.0 + 2.0 + 1.5
    # The stand-in still runs that goal to its end; the next test starts from home again.
    time.sleep(2.0)
    controller.client.reset()
    controller.fault('none')


def test_controller_dies_mid_goal(controller):
    """RELIABILITY 31: reported as such within a bounded time, nothing resent; once a
    controller is back (at the arm's pose), the next goal works."""
    controller.fault('die')
    since = time.time()
    outcome = controller.client.move(controller.move([0.8, 0.8, -0.7], 2.0), timeout=20.0)
    assert outcome.code == LOST, outcome.message
    assert 'the controller went away during the goal' in outcome.message
    assert time.time() - since < 2.0 + 3.0
    assert controller.controller.wait_for_exit(5.0) == 3
    assert len(controller.goals(since)) == 1
    controller.start_controller(controller.measured_pose())
    outcome = controller.first_move(HOME)
    assert outcome.code == SUCCESS, outcome.message


BAD_STAND_IN_PARAMETERS = [
    ({'joints': ['a', 'a']}, 'parameter joints must name unique joints'),
    ({'joints': ['a', 'b'], 'initial_positions': [0.1]}, 'initial_positions needs 2 finite'),
    ({'joints': ['a'], 'fault': 'explode'}, 'fault "explode" is not one of'),
    ({'joints': ['a'], 'constraints.a.trajectory': -0.1}, 'constraints.a.trajectory must be'),
]


@pytest.fixture(scope='module')
def stand_in_refusals(rig):
    """Each bad parameter set's stand-in started at once (a start-up is most of such a
    test's time); (exit status, output) of each."""
    started = [rig.group.start_node('arm_ik', 'controller_stand_in', name='bad_controller',
                                    namespace=f'/refused{index}', params=params)
               for index, (params, _) in enumerate(BAD_STAND_IN_PARAMETERS)]
    return [(process.wait_for_exit(30.0), process.output()) for process in started]


@pytest.mark.parametrize('index', range(len(BAD_STAND_IN_PARAMETERS)))
def test_stand_in_refuses_bad_parameters_in_one_line(stand_in_refusals, index):
    status, output = stand_in_refusals[index]
    assert status == 1, output
    words = BAD_STAND_IN_PARAMETERS[index][1]
    assert words in output and 'Traceback' not in output, output


def test_controller_slower_than_real_time_is_not_lost(controller):
    """The stand-in's time at 0.3 of the wall clock (JTC's speed scaling, slow sim time): a
    1 s move takes over 3 s, longer than its length plus goal time plus margin on the wall
    clock; the feedback's trajectory time says the controller is on time: SUCCESS."""
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter
    node = controller.client.node
    client = node.create_client(SetParameters, f'{NS}/joint_trajectory_controller/'
                                'set_parameters')

    def time_scale(value: float) -> None:
        future = client.call_async(SetParameters.Request(parameters=[
            Parameter('time_scale', value=value).to_parameter_msg()]))
        wait_until(future.done, 10.0, 'set_parameters')
        assert future.result().results[0].successful

    try:
        wait_until(client.service_is_ready, 10.0, 'the stand-in parameters')
        time_scale(0.3)
        started = time.monotonic()
        outcome = controller.client.move(controller.move([0.5, 0.7, -0.8], 1.0), timeout=20.0)
        assert outcome.code == SUCCESS, outcome.message
        assert time.monotonic() - started > 1.0 / 0.3 - 0.2      # it did stretch
    finally:
        time_scale(1.0)
        node.destroy_client(client)
