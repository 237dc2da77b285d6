"""move_group on the bundled six_axis arm from a plain rclpy client with the raw moveit_msgs
types: the services and actions, bad input answered with MoveIt's code and words (the node
lives on, nothing moves), a goal while another executes (the newer preempts, no jump), a
cancel and the "stop" event. One move_group + trajectory_executor for the module."""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest

pytest.importorskip('moveit_msgs')

from builtin_interfaces.msg import Duration  # noqa: E402
from geometry_msgs.msg import Pose  # noqa: E402
from moveit_msgs.action import ExecuteTrajectory, MoveGroup  # noqa: E402
from moveit_msgs.msg import (  # noqa: E402
    Constraints,
    JointConstraint,
    MoveItErrorCodes,
    RobotTrajectory,
)
from moveit_msgs.srv import (  # noqa: E402
    GetCartesianPath,
    GetMotionPlan,
    GetPositionFK,
    GetPositionIK,
)
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from arm_testing.motion_harness import wait_until  # noqa: E402
from arm_testing.move_group import wait  # noqa: E402

JOINTS = ['base_yaw', 'shoulder_pitch', 'elbow_pitch', 'wrist_roll', 'wrist_pitch',
          'tool_roll']
HOME = [0.0, 0.35, 0.9, 0.0, 0.6, 0.0]
GROUP = 'arm'


class Recorder:
    """joint_states as they arrive: (time, positions in JOINTS order)."""

    def __init__(self, node) -> None:
        self.samples: list[tuple[float, np.ndarray]] = []
        self.lock = threading.Lock()
        node.create_subscription(JointState, 'joint_states', self._on, 50)

    def _on(self, message: JointState) -> None:
        try:
            q = np.array([message.position[list(message.name).index(n)] for n in JOINTS])
        except ValueError:
            return
        with self.lock:
            self.samples.append((time.monotonic(), q))

    def settled_at(self, q, timeout: float = 10.0) -> bool:
        """Whether joint_states reach ``q`` (a loaded client reads them late)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if np.allclose(self.latest(), q, atol=1e-2):
                return True
            time.sleep(0.05)
        return False

    def held(self, samples: int = 20, timeout: float = 10.0) -> np.ndarray | None:
        """The pose once the last ``samples`` joint_states to arrive are one pose (the arm
        is held: a moving arm's 100 Hz samples differ), None after ``timeout`` s.

        A loaded client reads joint_states late, so a fixed sleep after a stop may still
        see samples published before the hold."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                last = [q for _, q in self.samples[-samples:]]
            if len(last) == samples and all(np.array_equal(q, last[0]) for q in last):
                return last[0].copy()
            time.sleep(0.05)
        return None

    def latest(self) -> np.ndarray:
        deadline = time.monotonic() + 30.0
        while not self.samples and time.monotonic() < deadline:
            time.sleep(0.05)
        with self.lock:
            return self.samples[-1][1].copy()

    def since(self, start: float) -> np.ndarray:
        with self.lock:
            return np.array([q for t, q in self.samples if t >= start])


@pytest.fixture(scope='module')
def stack():
    from arm_bringup.pipeline import ArmSource, expand_description
    from arm_testing.move_group import move_group_stack
    with move_group_stack(ArmSource('six_axis'), expand_description('six_axis')) as \
            (client, group):
        client.recorder = Recorder(client.node)
        client.publisher = client.node.create_publisher(String, 'trajectory_execution_event',
                                                        1)
        yield client, group


def ik_request(position, orientation=(0.0, 0.0, 0.0, 1.0), group=GROUP, frame='base_link',
               link=''):
    request = GetPositionIK.Request()
    ik = request.ik_request
    ik.group_name = group
    ik.ik_link_name = link
    ik.pose_stamped.header.frame_id = frame
    p, o = ik.pose_stamped.pose.position, ik.pose_stamped.pose.orientation
    p.x, p.y, p.z = position
    o.x, o.y, o.z, o.w = orientation
    ik.timeout = Duration(sec=1)
    return request


def fk(client, q, link='tool0', frame='base_link'):
    request = GetPositionFK.Request()
    request.header.frame_id = frame
    request.fk_link_names = [link]
    request.robot_state.joint_state.name = JOINTS
    request.robot_state.joint_state.position = [float(v) for v in q]
    return client.call(GetPositionFK, 'compute_fk', request)


def joint_goal(q, group=GROUP):
    constraints = Constraints()
    constraints.joint_constraints = [JointConstraint(joint_name=n, position=float(v),
                                                     tolerance_above=1e-3,
                                                     tolerance_below=1e-3, weight=1.0)
                                     for n, v in zip(JOINTS, q)]
    goal = MoveGroup.Goal()
    goal.request.group_name = group
    goal.request.goal_constraints = [constraints]
    goal.request.max_velocity_scaling_factor = 0.5
    goal.request.allowed_planning_time = 10.0
    return goal


def run_goal(client, kind, name, goal, timeout=90.0):
    action = client.action(kind, name)
    handle = wait(action.send_goal_async(goal))
    assert handle.accepted
    return handle, wait(handle.get_result_async(), timeout)


def test_ik_and_fk_round_trip(stack):
    client, _ = stack
    q = np.array(HOME) + 0.1
    reply = fk(client, q)
    assert reply.error_code.val == MoveItErrorCodes.SUCCESS
    pose = reply.pose_stamped[0].pose
    request = ik_request((pose.position.x, pose.position.y, pose.position.z),
                         (pose.orientation.x, pose.orientation.y, pose.orientation.z,
                          pose.orientation.w))
    answer = client.call(GetPositionIK, 'compute_ik', request)
    assert answer.error_code.val == MoveItErrorCodes.SUCCESS, answer.error_code.message
    again = fk(client, answer.solution.joint_state.position)
    got = again.pose_stamped[0].pose.position
    assert math.dist((got.x, got.y, got.z),
                     (pose.position.x, pose.position.y, pose.position.z)) < 1e-3


def _bad_inputs():
    nan = float('nan')
    return [
        ('wrong group', GetPositionIK, 'compute_ik', ik_request((1.0, 0.0, 1.0), group='nope'),
         MoveItErrorCodes.INVALID_GROUP_NAME, 'unknown group'),
        ('unknown link', GetPositionIK, 'compute_ik',
         ik_request((1.0, 0.0, 1.0), link='nope'), MoveItErrorCodes.INVALID_LINK_NAME, 'nope'),
        ('unknown frame', GetPositionIK, 'compute_ik',
         ik_request((1.0, 0.0, 1.0), frame='nope'), MoveItErrorCodes.FRAME_TRANSFORM_FAILURE,
         'nope'),
        ('NaN pose', GetPositionIK, 'compute_ik', ik_request((nan, 0.0, 1.0)),
         MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS, 'finite'),
        ('non-unit quaternion', GetPositionIK, 'compute_ik',
         ik_request((1.0, 0.0, 1.0), (0.0, 0.0, 0.0, 2.0)),
         MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS, 'length'),
    ]


@pytest.mark.parametrize('label, kind, name, request_, code, words', _bad_inputs(),
                         ids=[case[0] for case in _bad_inputs()])
def test_bad_ik_input_is_answered_in_moveit_codes(stack, label, kind, name, request_, code,
                                                  words):
    client, _ = stack
    reply = client.call(kind, name, request_)
    assert reply.error_code.val == code, reply.error_code.message
    assert words in reply.error_code.message


def test_bad_fk_cartesian_and_plan_input(stack):
    client, _ = stack
    assert fk(client, HOME, link='nope').error_code.val == MoveItErrorCodes.INVALID_LINK_NAME
    assert fk(client, HOME, frame='nope').error_code.val == \
        MoveItErrorCodes.FRAME_TRANSFORM_FAILURE
    request = GetCartesianPath.Request()
    request.group_name = GROUP
    request.header.frame_id = 'base_link'
    reply = client.call(GetCartesianPath, 'compute_cartesian_path', request)
    assert reply.error_code.val == MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS
    assert 'waypoints' in reply.error_code.message
    plan = GetMotionPlan.Request()
    plan.motion_plan_request = joint_goal(HOME, group='nope').request
    reply = client.call(GetMotionPlan, 'plan_kinematic_path', plan)
    assert reply.motion_plan_response.error_code.val == MoveItErrorCodes.INVALID_GROUP_NAME


def test_plan_and_cartesian_path_with_raw_types(stack):
    client, _ = stack
    start = client.recorder.latest()
    plan = GetMotionPlan.Request()
    plan.motion_plan_request = joint_goal(start + 0.2).request
    reply = client.call(GetMotionPlan, 'plan_kinematic_path', plan)
    response = reply.motion_plan_response
    assert response.error_code.val == MoveItErrorCodes.SUCCESS, response.error_code.message
    points = response.trajectory.joint_trajectory.points
    assert np.allclose(points[-1].positions, start + 0.2, atol=1e-6)
    pose = fk(client, start).pose_stamped[0].pose
    request = GetCartesianPath.Request()
    request.group_name = GROUP
    request.header.frame_id = 'base_link'
    target = Pose()
    target.position.x, target.position.y = pose.position.x, pose.position.y
    target.position.z = pose.position.z - 0.05
    target.orientation = pose.orientation
    request.waypoints = [target]
    request.max_step = 0.01
    request.avoid_collisions = True
    reply = client.call(GetCartesianPath, 'compute_cartesian_path', request)
    assert reply.error_code.val == MoveItErrorCodes.SUCCESS
    assert reply.fraction == pytest.approx(1.0)


def test_mismatched_trajectory_is_refused_and_nothing_moves(stack):
    client, _ = stack
    before = client.recorder.latest()
    goal = ExecuteTrajectory.Goal()
    goal.trajectory.joint_trajectory = JointTrajectory(
        joint_names=JOINTS[:3], points=[JointTrajectoryPoint(
            positions=[0.0, 0.0, 0.0], time_from_start=Duration(sec=1))])
    _, result = run_goal(client, ExecuteTrajectory, 'execute_trajectory', goal)
    assert result.result.error_code.val == MoveItErrorCodes.INVALID_MOTION_PLAN
    assert 'group moves' in result.result.error_code.message
    empty = ExecuteTrajectory.Goal()
    _, result = run_goal(client, ExecuteTrajectory, 'execute_trajectory', empty)
    assert result.result.error_code.val == MoveItErrorCodes.INVALID_MOTION_PLAN
    nan = ExecuteTrajectory.Goal()
    nan.trajectory.joint_trajectory = JointTrajectory(joint_names=JOINTS, points=[
        JointTrajectoryPoint(positions=[float(v) for v in before],
                             time_from_start=Duration(sec=0)),
        JointTrajectoryPoint(positions=[float('nan')] * 6, time_from_start=Duration(sec=1))])
    _, result = run_goal(client, ExecuteTrajectory, 'execute_trajectory', nan)
    assert result.result.error_code.val == MoveItErrorCodes.INVALID_MOTION_PLAN, \
        result.result.error_code.message
    time.sleep(0.3)
    assert np.allclose(client.recorder.latest(), before, atol=1e-9)


def test_unserved_options_are_refused_in_words(stack):
    client, _ = stack
    goal = joint_goal(HOME)
    goal.planning_options.look_around = True
    _, result = run_goal(client, MoveGroup, 'move_action', goal)
    assert result.result.error_code.val == MoveItErrorCodes.INVALID_GOAL_CONSTRAINTS
    assert 'look_around' in result.result.error_code.message


def slow_trajectory(client, delta=0.6) -> RobotTrajectory:
    """A slow planned turn of the base by ``delta`` from where the arm is held.

    Held, not the latest joint state: a loaded client reads joint_states late, and an arm
    still finishing the move before (or a rerun's arm, still moving when its first try
    failed) gave a first point 0.029 rad from where the executor saw it, which it refused
    (start_mismatch, tolerance 0.02 rad)."""
    start = client.recorder.held()
    assert start is not None, 'the arm is not held still before the trajectory is planned'
    goal = joint_goal(start + np.array([delta, 0, 0, 0, 0, 0]))
    goal.request.max_velocity_scaling_factor = 0.05
    plan = GetMotionPlan.Request()
    plan.motion_plan_request = goal.request
    reply = client.call(GetMotionPlan, 'plan_kinematic_path', plan)
    assert reply.motion_plan_response.error_code.val == MoveItErrorCodes.SUCCESS
    return reply.motion_plan_response.trajectory


def moving(client, trajectory: RobotTrajectory, timeout: float = 30.0) -> None:
    """Return once joint_states show the arm leaving ``trajectory``'s first point.

    A fixed second after the goal was sent is not enough on a loaded machine: a stop event
    that reaches move_group before the execution has begun stops nothing, the trajectory then
    runs to its end, and the next test finds the arm still moving."""
    planned = trajectory.joint_trajectory
    first = dict(zip(planned.joint_names, planned.points[0].positions))
    first = np.array([first[name] for name in JOINTS])
    wait_until(lambda: np.abs(client.recorder.latest() - first).max() >= 1e-4,   # held: 0
               timeout, "the arm leaving the trajectory's first point")


def test_plan_and_execute_with_move_action(stack):
    client, _ = stack
    start = client.recorder.latest()
    _, result = run_goal(client, MoveGroup, 'move_action', joint_goal(start - 0.1))
    assert result.result.error_code.val == MoveItErrorCodes.SUCCESS, \
        result.result.error_code.message
    assert client.recorder.settled_at(start - 0.1)


def test_a_goal_while_another_executes_preempts_without_a_jump(stack):
    client, _ = stack
    began = time.monotonic()
    first = ExecuteTrajectory.Goal()
    first.trajectory = slow_trajectory(client)
    action = client.action(ExecuteTrajectory, 'execute_trajectory')
    handle = wait(action.send_goal_async(first))
    first_result = handle.get_result_async()
    moving(client, first.trajectory)
    start = client.recorder.latest()
    _, second = run_goal(client, MoveGroup, 'move_action', joint_goal(start - 0.1))
    result = wait(first_result)
    assert result.result.error_code.val == MoveItErrorCodes.PREEMPTED, \
        result.result.error_code.message
    assert second.result.error_code.val == MoveItErrorCodes.SUCCESS, \
        second.result.error_code.message
    path = client.recorder.since(began)
    assert np.max(np.abs(np.diff(path, axis=0))) < 0.05     # rad between two samples


def test_cancel_ends_canceled_and_nothing_more_moves(stack):
    client, _ = stack
    goal = ExecuteTrajectory.Goal()
    goal.trajectory = slow_trajectory(client, delta=-0.5)
    action = client.action(ExecuteTrajectory, 'execute_trajectory')
    handle = wait(action.send_goal_async(goal))
    result_future = handle.get_result_async()
    moving(client, goal.trajectory)
    wait(handle.cancel_goal_async())
    result = wait(result_future)
    from action_msgs.msg import GoalStatus
    assert result.status == GoalStatus.STATUS_CANCELED
    assert_held_short_of(client, goal.trajectory)


def test_stop_event_holds_the_arm(stack):
    client, _ = stack
    goal = ExecuteTrajectory.Goal()
    goal.trajectory = slow_trajectory(client, delta=0.5)
    action = client.action(ExecuteTrajectory, 'execute_trajectory')
    handle = wait(action.send_goal_async(goal))
    result_future = handle.get_result_async()
    moving(client, goal.trajectory)
    client.publisher.publish(String(data='stop'))
    result = wait(result_future)
    assert result.result.error_code.val == MoveItErrorCodes.PREEMPTED
    assert_held_short_of(client, goal.trajectory)


def assert_held_short_of(client, trajectory: RobotTrajectory) -> None:
    """The arm stands still well before ``trajectory``'s end, and stays there."""
    held = client.recorder.held()
    assert held is not None, 'the arm did not come to a stand within 10 s'
    planned = trajectory.joint_trajectory
    end = dict(zip(planned.joint_names, planned.points[-1].positions))
    end = np.array([end[name] for name in JOINTS])
    assert np.abs(end - held).max() > 0.2          # stopped mid-way, not at the goal
    time.sleep(1.0)
    assert np.allclose(client.recorder.latest(), held, atol=1e-9)


def test_node_alive_after_everything(stack):
    client, group = stack
    assert all(p.alive() for p in group.processes)
    assert fk(client, HOME).error_code.val == MoveItErrorCodes.SUCCESS


def test_an_attached_object_is_checked_with_the_robot(stack):
    from geometry_msgs.msg import Pose as PoseMessage
    from moveit_msgs.msg import AttachedCollisionObject, CollisionObject, PlanningSceneComponents
    from moveit_msgs.srv import GetPlanningScene
    from shape_msgs.msg import SolidPrimitive
    client, _ = stack
    publish_object = client.node.create_publisher(CollisionObject, 'collision_object', 10)
    publish_attached = client.node.create_publisher(AttachedCollisionObject,
                                                    'attached_collision_object', 10)
    q = client.recorder.latest()
    tool = fk(client, q).pose_stamped[0].pose

    def box(object_id, frame, size, z, operation=CollisionObject.ADD):
        message = CollisionObject(id=object_id, operation=operation)
        message.header.frame_id = frame
        message.primitives = [SolidPrimitive(type=SolidPrimitive.BOX, dimensions=list(size))]
        pose = PoseMessage()
        pose.position.z = z
        pose.orientation.w = 1.0
        message.primitive_poses = [pose]
        message.pose.orientation.w = 1.0
        return message

    def ik_here():
        request = ik_request((tool.position.x, tool.position.y, tool.position.z),
                             (tool.orientation.x, tool.orientation.y, tool.orientation.z,
                              tool.orientation.w))
        request.ik_request.avoid_collisions = True
        request.ik_request.robot_state.joint_state.name = JOINTS
        request.ik_request.robot_state.joint_state.position = [float(v) for v in q]
        return client.call(GetPositionIK, 'compute_ik', request).error_code

    def attached_ids():
        request = GetPlanningScene.Request()
        request.components.components = PlanningSceneComponents.ROBOT_STATE_ATTACHED_OBJECTS
        scene = client.call(GetPlanningScene, 'get_planning_scene', request).scene
        return [a.object.id for a in scene.robot_state.attached_collision_objects]

    # A small box 25 cm beyond the tool, clear of the arm; a held bar would reach into it.
    publish_object.publish(box('wall', 'tool0', (0.05, 0.05, 0.05), 0.25))
    time.sleep(1.0)
    assert ik_here().val == MoveItErrorCodes.SUCCESS
    held = AttachedCollisionObject(link_name='tool0', touch_links=['tool_link'])
    held.object = box('bar', 'tool0', (0.06, 0.06, 0.2), 0.15)
    publish_attached.publish(held)
    deadline = time.monotonic() + 30.0
    while 'bar' not in attached_ids() and time.monotonic() < deadline:
        time.sleep(0.2)
    code = ik_here()
    assert code.val in (MoveItErrorCodes.GOAL_IN_COLLISION, MoveItErrorCodes.NO_IK_SOLUTION), \
        code.message
    detach = AttachedCollisionObject(link_name='tool0')
    detach.object = CollisionObject(id='bar', operation=CollisionObject.REMOVE)
    publish_attached.publish(detach)
    publish_object.publish(CollisionObject(id='bar', operation=CollisionObject.REMOVE))
    publish_object.publish(CollisionObject(id='wall', operation=CollisionObject.REMOVE))
    deadline = time.monotonic() + 30.0
    while ik_here().val != MoveItErrorCodes.SUCCESS and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ik_here().val == MoveItErrorCodes.SUCCESS


def test_a_goal_inside_an_object_is_goal_in_collision_while_the_scene_churns(stack):
    from geometry_msgs.msg import Pose as PoseMessage
    from moveit_msgs.msg import CollisionObject
    from shape_msgs.msg import SolidPrimitive
    client, _ = stack
    publish = client.node.create_publisher(CollisionObject, 'collision_object', 10)
    start = client.recorder.latest()
    goal_q = start + np.array([0.4, 0.0, 0.0, 0.0, 0.0, 0.0])
    tool = fk(client, goal_q).pose_stamped[0].pose

    def box(object_id, x, y, z, operation=CollisionObject.ADD):
        message = CollisionObject(id=object_id, operation=operation)
        message.header.frame_id = 'base_link'
        message.primitives = [SolidPrimitive(type=SolidPrimitive.BOX,
                                             dimensions=[0.1, 0.1, 0.1])]
        pose = PoseMessage()
        pose.position.x, pose.position.y, pose.position.z = x, y, z
        pose.orientation.w = 1.0
        message.primitive_poses = [pose]
        message.pose.orientation.w = 1.0
        return message

    # The goal's tool inside a box; another object added, moved and removed meanwhile.
    publish.publish(box('around_goal', tool.position.x, tool.position.y, tool.position.z))
    stop = threading.Event()

    def churn():
        step = 0
        while not stop.is_set():
            step += 1
            publish.publish(box('churn', -1.0, 0.3 * (step % 5), 0.5,
                                CollisionObject.ADD if step % 3 else CollisionObject.REMOVE))
            time.sleep(0.02)
    churner = threading.Thread(target=churn, daemon=True)
    churner.start()
    try:
        time.sleep(0.5)
        codes = []
        for _ in range(5):
            plan = GetMotionPlan.Request()
            plan.motion_plan_request = joint_goal(goal_q).request
            reply = client.call(GetMotionPlan, 'plan_kinematic_path', plan)
            codes.append(reply.motion_plan_response.error_code)
    finally:
        stop.set()
        churner.join(5.0)
        publish.publish(box('around_goal', 0, 0, 0, CollisionObject.REMOVE))
        publish.publish(box('churn', 0, 0, 0, CollisionObject.REMOVE))
    assert all(c.val == MoveItErrorCodes.GOAL_IN_COLLISION for c in codes), \
        [(c.val, c.message) for c in codes]
    assert 'around_goal' in codes[0].message
