"""ik_server's ~/ik/cartesian_path and ~/ik/batch over DDS: one server process (six_axis),
answers compared with the core (kinematics.path_ik) and with ~/solve_ik one by one."""

from __future__ import annotations

import json
import math
import subprocess

from geometry_msgs.msg import Point, Pose
import numpy as np
import pytest

from arm_bringup.process_group import executable_path
from arm_ik.client import SERVICE_QOS
from arm_interfaces.srv import CartesianPath, SolveIK, SolveIKBatch
from arm_kinematics.arm import load_arm
from arm_kinematics.description.bundled import expand_xacro, load_arm_config
from arm_kinematics.ik.result import ErrorCode, GoalType
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_kinematics.motion.path_ik import PathIK
from arm_kinematics.motion.path_request import PathRequest, ToolPose
from arm_testing.ik_graph import ik_servers, IKGraph, service
from arm_testing.ros_harness import call_service

ARM = 'six_axis'
REPLY = 30.0          # s; a path of a hundred samples takes well under a second
DOWN = (1.0, 0.0, 0.0, 0.0)


@pytest.fixture(scope='module')
def graph():
    with ik_servers(ARM) as graph:
        yield graph


@pytest.fixture(scope='module')
def arm():
    return load_arm(expand_xacro(ARM), load_arm_config(ARM))


def _call(graph: IKGraph, kind: type, name: str, request):
    client = graph.node.create_client(kind, name, qos_profile=SERVICE_QOS)
    try:
        assert client.wait_for_service(timeout_sec=REPLY), name
        return call_service(client, request, graph.spin, REPLY)
    finally:
        graph.node.destroy_client(client)


def _pose(position, orientation=DOWN) -> Pose:
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = position
    (pose.orientation.x, pose.orientation.y, pose.orientation.z,
     pose.orientation.w) = orientation
    return pose


def _tool_down_start(arm) -> np.ndarray:
    ik = arm.dispatcher().solvers['closed_form']
    return ik.solve((1.2, 0.0, 1.0), DOWN, GoalType.FULL_POSE, arm.home, SolveOptions()).q


def test_a_line_through_the_floor_stops_as_the_core_says(graph, arm):
    start = _tool_down_start(arm)
    request = CartesianPath.Request()
    request.start.name = list(arm.model.joint_names)
    request.start.position = start.tolist()
    request.waypoints.poses = [_pose((1.2, 0.0, -0.2))]
    request.goal_type = CartesianPath.Request.GOAL_TOOL_DOWN
    request.solver = 'closed_form'     # partial: true by default
    response = _call(graph, CartesianPath, service(ARM, 'cartesian_path'), request)
    assert response.code == CartesianPath.Request.FLOOR_CONTACT, response.message
    core = PathIK(arm.dispatcher(), arm.safety).follow(
        PathRequest(start, [ToolPose((1.2, 0.0, -0.2), DOWN)], GoalType.TOOL_DOWN,
                    solver='closed_form'), SolveOptions())
    assert response.fraction == pytest.approx(core.fraction, abs=1e-9)
    assert response.stop_sample == core.stop_sample and response.stop_waypoint == 0
    assert response.stop_pose.position.z == pytest.approx(core.stop_position[2], abs=1e-9)
    trajectory = response.trajectory
    assert tuple(trajectory.joint_names) == arm.model.joint_names
    q = np.array([point.positions for point in trajectory.points])
    np.testing.assert_allclose(q, core.trajectory.positions, atol=1e-12)
    assert np.abs(np.diff(q, axis=0)).max() <= 0.1
    times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
             for p in trajectory.points]
    assert times[0] == 0.0 and np.all(np.diff(times) > 0.0)
    assert set(response.branches) == {'front_up_noflip'}


def test_a_complete_path_from_the_current_state_and_a_bad_request(graph, arm):
    # No joint_states on this graph: the start is the home pose.
    request = CartesianPath.Request()
    home_tool = arm.model.fk(arm.home)[:3, 3]
    request.waypoints.poses = [_pose(tuple(home_tool + [-0.2, 0.1, -0.1]))]
    request.goal_type = CartesianPath.Request.GOAL_POSITION
    request.timing = 'linear'
    response = _call(graph, CartesianPath, service(ARM, 'cartesian_path'), request)
    assert response.code == CartesianPath.Request.OK, response.message
    assert response.fraction == 1.0 and response.stop_waypoint == 1
    np.testing.assert_allclose(response.trajectory.points[0].positions, arm.home, atol=1e-12)
    assert response.largest_step <= 0.1
    request.start.name = ['nope']
    request.start.position = [0.0]
    response = _call(graph, CartesianPath, service(ARM, 'cartesian_path'), request)
    assert response.code == CartesianPath.Request.INVALID_INPUT
    assert response.ik_error_code.val == ErrorCode.UNKNOWN_JOINT_NAMES
    assert not response.trajectory.points


def test_no_partial_path_when_not_wanted(graph, arm):
    request = CartesianPath.Request()
    request.start.name = list(arm.model.joint_names)
    request.start.position = _tool_down_start(arm).tolist()
    request.waypoints.poses = [_pose((1.2, 0.0, -0.2))]
    request.goal_type = CartesianPath.Request.GOAL_TOOL_DOWN
    request.partial = False
    response = _call(graph, CartesianPath, service(ARM, 'cartesian_path'), request)
    assert response.code == CartesianPath.Request.FLOOR_CONTACT, response.message
    assert not response.trajectory.points and 0.0 < response.fraction < 1.0


def test_a_batch_answers_as_solve_ik_one_by_one(graph, arm):
    rng = np.random.default_rng(3)
    q = arm.model.random_configurations(12, rng)
    frames = arm.model.fk_batch(q)
    positions = frames[:, :3, 3].copy()
    positions[::4] *= 3.0                              # some out of reach
    request = SolveIKBatch.Request()
    request.positions = positions.reshape(-1).tolist()
    request.goal_type = SolveIK.Request.GOAL_POSITION
    request.solver = 'closed_form'
    response = _call(graph, SolveIKBatch, f'/{ARM}/ik_server/ik/batch', request)
    assert response.error_code.val == ErrorCode.OK, response.message
    assert tuple(response.joint_names) == arm.model.joint_names
    solutions = np.array(response.solutions).reshape(len(positions), arm.model.dof)
    for row, target in enumerate(positions):
        single = SolveIK.Request()
        single.target.pose = _pose(tuple(target), (0.0, 0.0, 0.0, 1.0))
        single.goal_type = SolveIK.Request.GOAL_POSITION
        single.solver = 'closed_form'
        one = _call(graph, SolveIK, service(ARM, None), single)
        assert response.codes[row] == one.error_code.val
        assert response.messages[row] == one.message
        assert response.branches[row] == one.branch
        if one.solution.position:
            np.testing.assert_allclose(solutions[row], one.solution.position, atol=1e-12)
        else:
            assert np.all(np.isnan(solutions[row]))
    assert 0 in response.codes and any(code != 0 for code in response.codes)


def test_a_batch_over_the_limit_is_refused_whole(graph):
    request = SolveIKBatch.Request()
    request.positions = [1.0, 0.0, 1.0] * (SolveIKBatch.Request.MAX_TARGETS + 1)
    response = _call(graph, SolveIKBatch, f'/{ARM}/ik_server/ik/batch', request)
    assert response.error_code.val == ErrorCode.INVALID_INPUT
    assert str(SolveIKBatch.Request.MAX_TARGETS) in response.message
    assert not response.codes
    assert math.isfinite(response.solve_time)


def _ik_path(graph: IKGraph, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([executable_path('arm_ik', 'ik_path'), '--arm', ARM, *args],
                          env=graph.claim.environment(), capture_output=True, text=True,
                          timeout=60, check=False)


def test_the_ik_path_command_prints_a_stop_and_a_batch(graph, arm):
    start = _tool_down_start(arm)
    pairs = [f'{name}={value!r}' for name, value in zip(arm.model.joint_names, start.tolist())]
    done = _ik_path(graph, '--goal', 'tool_down', '--solver', 'closed_form', 'line',
                    '--start', *pairs, '--to', '1.2', '0', '-0.2')
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith('FLOOR_CONTACT: followed 80.'), done.stdout
    assert 'tool_link' in done.stdout and 'waypoint 0' in done.stdout
    done = _ik_path(graph, '--json', '--solver', 'closed_form', 'batch', '--target', '1.2',
                    '0', '1.0', '--target', '5', '0', '0')
    assert done.returncode == 1, done.stderr
    reply = json.loads(done.stdout)
    assert reply['codes'] == ['OK', 'OUT_OF_REACH']
    assert reply['solutions'][6:] == [None] * 6


def test_an_arc_over_the_service_and_the_command_follows_the_core(graph, arm):
    start = _tool_down_start(arm)
    request = CartesianPath.Request()
    request.start.name = list(arm.model.joint_names)
    request.start.position = start.tolist()
    request.waypoints.poses = [_pose((0.6, 0.0, 1.0))]
    request.arc_through = [Point(x=0.9, y=0.0, z=0.7)]
    request.goal_type = CartesianPath.Request.GOAL_TOOL_DOWN
    request.solver = 'closed_form'
    response = _call(graph, CartesianPath, service(ARM, 'cartesian_path'), request)
    assert response.code == CartesianPath.Request.OK, response.message
    core = PathIK(arm.dispatcher(), arm.safety).follow(
        PathRequest(start, [ToolPose((0.6, 0.0, 1.0), DOWN)], GoalType.TOOL_DOWN,
                    solver='closed_form', arc_through=[(0.9, 0.0, 0.7)]), SolveOptions())
    q = np.array([point.positions for point in response.trajectory.points])
    np.testing.assert_allclose(q, core.trajectory.positions, atol=1e-12)
    assert response.samples == core.samples
    # Two arc points for one waypoint: refused, the reason said.
    request.arc_through = [Point(x=0.9, y=0.0, z=0.7)] * 2
    response = _call(graph, CartesianPath, service(ARM, 'cartesian_path'), request)
    assert response.code == CartesianPath.Request.INVALID_INPUT
    assert 'arc_through' in response.message
    pairs = [f'{name}={value!r}' for name, value in zip(arm.model.joint_names, start.tolist())]
    done = _ik_path(graph, '--goal', 'tool_down', '--solver', 'closed_form', 'arc',
                    '--start', *pairs, '--through', '0.9', '0', '0.7', '--to', '0.6', '0',
                    '1.0')
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith('OK: followed 100.0 % of the path'), done.stdout
