"""ik_server over DDS: real server processes (one per arm, started once for the module) and
real requests, every answer checked against forward kinematics computed in the test."""

from __future__ import annotations

import json
import math
import subprocess
import time

import numpy as np
import pytest
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState

from arm_bringup.process_group import executable_path
from arm_ik.client import IKClient, IKReply
from arm_interfaces.srv import SolveIK
from arm_kinematics.common.transforms import matrix_to_quaternion
from arm_kinematics.description.bundled import expand_xacro, load_arm_config, load_model
from arm_kinematics.ik.result import ErrorCode, GoalType
from arm_kinematics.ik.solvers.base import workspace_from_model
from arm_kinematics.model.arm_model import ArmModel
from arm_testing.faulty_ik_server import FAULT_MESSAGE
from arm_testing.ik_error_cases import (
    ERROR_CASES,
    POINTER_HOLE_EDGE,
    request_for,
    SIX_FAR,
    with_fields,
)
from arm_testing.ik_graph import (
    APPLICABLE,
    ARMS,
    assert_refusal,
    fk_position,
    fk_targets,
    ik_servers,
    model,
    no_nan_in,
    rss_kb,
    safety,
    urdf,
    workspace,
)

# The node's default tolerances (ik_server parameters tolerance, orientation_tolerance).
TOLERANCE = 1e-4
ORIENTATION_TOLERANCE = 1e-3
EXACT = 1e-9          # m, closed-form solutions
NAN = math.nan
# A DLS iteration moves no joint by more than this when the max_step parameter is set to
# it: a solve far from its seed then runs until its timeout. Used to make a request slow
# on purpose, because DLS reaches FK-generated targets to exactly zero error, so a tiny
# tolerance alone (even 1e-300) does not slow it down.
CREEP_STEP = 1e-7


@pytest.fixture(scope='module')
def graph():
    with ik_servers(*ARMS) as graph:
        yield graph


# ---------------------------------------------------------------------- helpers
def rotation_angle(a: np.ndarray, b: np.ndarray) -> float:
    """Angle (rad) of the rotation between two rotation matrices.

    From the chord ||a − b|| = 2·√2·sin(angle/2): accurate near zero, where acos of the
    trace loses half the digits (1e-8 rad of noise for identical rotations).
    """
    chord = float(np.linalg.norm(a - b))
    return 2.0 * math.asin(min(1.0, chord / (2.0 * math.sqrt(2.0))))


def assert_solution(arm: str, response: SolveIK.Response, target: np.ndarray,
                    tolerance: float = TOLERANCE) -> np.ndarray:
    """A success whose joints, put through FK here, reach ``target``; returns the joints."""
    assert response.error_code.val == ErrorCode.OK, response.message
    arm_model = model(arm)
    assert tuple(response.solution.name) == arm_model.joint_names
    q = np.array(response.solution.position)
    assert q.shape == (arm_model.dof,) and np.all(np.isfinite(q))
    assert arm_model.within_limits(q), f'{q} outside the limits'
    reached = fk_position(arm, q)
    error = float(np.linalg.norm(reached - target))
    assert error <= tolerance, f'FK(solution) is {error:.3g} m from the target'
    achieved = response.achieved_position
    assert [achieved.x, achieved.y, achieved.z] == pytest.approx(reached.tolist(), abs=1e-9)
    assert response.position_error == pytest.approx(error, abs=1e-9)
    rules = workspace(arm)
    assert response.reach_fraction == pytest.approx(
        np.linalg.norm(target - rules.shoulder) / rules.max_reach, rel=1e-9)
    assert response.condition_number >= 1.0 and response.manipulability >= 0.0
    assert response.solve_time > 0.0 and no_nan_in(response)
    return q


# ---------------------------------------------------------------------- solvers and arms
@pytest.mark.parametrize('arm, solver', [(arm, solver) for arm in ARMS
                                         for solver in APPLICABLE[arm]])
def test_every_solver_reaches_fk_generated_targets(graph, arm, solver):
    exact = solver in ('analytic', 'closed_form')
    for q in fk_targets(arm, 6):
        target = fk_position(arm, q)
        response = graph.call(arm, solver, request_for(target))
        assert response.solver == solver
        assert_solution(arm, response, target, EXACT if exact else TOLERANCE)
        if exact:
            assert response.branch and response.iterations == 0
        else:
            assert response.iterations >= 1
    graph.assert_alive(arm)


@pytest.mark.parametrize('arm', ARMS)
def test_solve_ik_uses_the_arms_default_solver(graph, arm):
    default = load_arm_config(arm)['ik']['default_solver']
    target = fk_position(arm, fk_targets(arm, 1, seed=5)[0])
    response = graph.call(arm, None, request_for(target))
    assert response.solver == default
    assert_solution(arm, response, target, EXACT if default == 'analytic' else TOLERANCE)
    # Naming the solver in the request picks it on ~/solve_ik too.
    other = APPLICABLE[arm][-1]
    response = graph.call(arm, None, with_fields(request_for(target), solver=other))
    assert response.solver == other
    assert_solution(arm, response, target)


@pytest.mark.parametrize('arm, solver', [('six_axis', 'closed_form'), ('six_axis', 'dls'),
                                         ('ccd5', 'dls')])
def test_full_pose_goals_reach_position_and_orientation(graph, arm, solver):
    exact = solver == 'closed_form'
    for q in fk_targets(arm, 5, seed=11):
        pose = model(arm).fk(q)
        request = request_for(pose[:3, 3], goal=GoalType.FULL_POSE,
                              orientation=matrix_to_quaternion(pose[:3, :3]))
        response = graph.call(arm, solver, request)
        solution = assert_solution(arm, response, pose[:3, 3], EXACT if exact else TOLERANCE)
        angle = rotation_angle(model(arm).fk(solution)[:3, :3], pose[:3, :3])
        assert angle <= (EXACT if exact else ORIENTATION_TOLERANCE)
        assert response.orientation_error == pytest.approx(angle, abs=1e-6)


@pytest.mark.parametrize('solver', ['closed_form', 'dls'])
def test_tool_down_goals_point_the_tool_down(graph, solver):
    # Constructed rather than FK-generated: positions below a reachable wrist centre.
    for target in ([1.0, 0.2, 0.5], [0.6, -0.7, 0.3], [-0.9, 0.4, 1.1]):
        target = np.array(target)
        response = graph.call('six_axis', solver,
                              request_for(target, goal=GoalType.TOOL_DOWN))
        solution = assert_solution('six_axis', response, target,
                                   EXACT if solver == 'closed_form' else TOLERANCE)
        tool_z = model('six_axis').fk(solution)[:3, 2]
        angle = math.acos(min(1.0, -tool_z[2]))
        assert angle <= ORIENTATION_TOLERANCE + 1e-9


# ---------------------------------------------------------------------- error codes
@pytest.mark.parametrize('case', list(ERROR_CASES))
def test_error_codes_reached_by_real_requests(graph, case):
    namespace, solver, make, code, fragments = ERROR_CASES[case]
    request = make()
    response = graph.call(namespace, solver, request)
    if code == ErrorCode.OK:
        assert response.error_code.val == ErrorCode.OK
        assert all(f in response.message for f in fragments), response.message
    elif code == ErrorCode.PARTIAL_SOLUTION:
        # A real pose, clear of the floor and within the limits, short of the target by the
        # reported shortfall.
        assert response.error_code.val == code, response.message
        assert all(f in response.message for f in fragments), response.message
        q = np.array(response.solution.position)
        assert response.branch == 'closest_above_floor' and model(namespace).within_limits(q)
        assert safety(namespace).check(q).min_floor_clearance[0] >= 0.0
        target = request.target.pose.position
        miss = np.linalg.norm(fk_position(namespace, q) - [target.x, target.y, target.z])
        assert response.shortfall == pytest.approx(miss, abs=1e-6) and miss > 0.0
    else:
        assert_refusal(response, code, *fragments)
    assert response.solver == (solver or 'fabrik')
    graph.assert_alive(namespace)


def test_every_error_code_is_covered():
    """BUSY and INTERNAL_ERROR have tests of their own, COLLISION too (it needs a scene:
    test_scene_node, test_request_core); every other code is in ERROR_CASES."""
    covered = {case[3] for case in ERROR_CASES.values()} | {
        ErrorCode.BUSY, ErrorCode.INTERNAL_ERROR, ErrorCode.COLLISION}
    assert covered == set(ErrorCode)


def test_busy_when_every_numeric_slot_is_taken(graph):
    target = request_for(SIX_FAR, max_iterations=100_000, timeout=1.5)
    with graph.parameters('six_axis', max_step=CREEP_STEP):
        started = time.perf_counter()
        futures = [graph.call_async('six_axis', 'dls', target) for _ in range(8)]
        answered: dict[int, float] = {}
        for index, future in enumerate(futures):
            future.add_done_callback(
                lambda _, i=index: answered.setdefault(i, time.perf_counter() - started))
        graph.wait_all(futures, 10.0)
        # Done callbacks run as executor tasks, a spin after the reply was taken.
        graph.wait_until(lambda: len(answered) == len(futures), 5.0, 'done callbacks')
    codes = [ErrorCode(f.result().error_code.val) for f in futures]
    busy = [i for i, code in enumerate(codes) if code == ErrorCode.BUSY]
    assert busy and codes.count(ErrorCode.TIMED_OUT) <= 4, codes
    assert set(codes) <= {ErrorCode.BUSY, ErrorCode.TIMED_OUT}, codes
    for index in busy:
        assert_refusal(futures[index].result(), ErrorCode.BUSY,
                       '4 numeric solves already running', 'retry later')
    # Shed at once, not after waiting for a slot: every BUSY came back before the first of
    # the 1.5 s solves ended (an order, so a loaded machine does not make it flaky).
    solved = [answered[i] for i in range(len(futures)) if i not in busy]
    assert max(answered[i] for i in busy) < min(solved), answered
    # The slots are free again afterwards.
    assert_solution('six_axis', graph.call('six_axis', 'dls', request_for(SIX_FAR)),
                    np.array(SIX_FAR))


def test_internal_error_when_a_solver_raises(graph):
    graph.ensure('faulty_six_axis', 'six_axis', faulty_solver='dls')
    # More failures than numeric slots: a slot leaked per exception would turn into BUSY.
    for _ in range(6):
        response = graph.call('faulty_six_axis', 'dls', request_for(SIX_FAR))
        assert_refusal(response, ErrorCode.INTERNAL_ERROR, 'solver "dls" raised RuntimeError',
                       FAULT_MESSAGE)
    assert_refusal(graph.call('faulty_six_axis', None, request_for(SIX_FAR)),
                   ErrorCode.INTERNAL_ERROR)
    assert_solution('six_axis', graph.call('faulty_six_axis', 'closed_form',
                                           request_for(SIX_FAR)), np.array(SIX_FAR), EXACT)
    graph.assert_alive('faulty_six_axis')


# ---------------------------------------------------------------------- branches
def _check_branches(graph, arm: str, solver: str, request: SolveIK.Request,
                    labels: tuple[str, ...], target: np.ndarray) -> None:
    request.return_all_solutions = True
    response = graph.call(arm, solver, request)
    chosen = assert_solution(arm, response, target, EXACT)
    alternatives = {a.label: np.array(a.positions) for a in response.alternatives}
    assert len(alternatives) == len(response.alternatives) >= 2
    assert set(alternatives) <= set(labels)
    assert response.branch in alternatives
    assert alternatives[response.branch] == pytest.approx(chosen, abs=1e-12)
    for label, q in alternatives.items():
        assert model(arm).within_limits(q)
        assert np.linalg.norm(fk_position(arm, q) - target) <= EXACT, label
        # Named branch: exactly that alternative.
        request.return_all_solutions = False
        request.branch = label
        named = graph.call(arm, solver, request)
        assert named.branch == label
        assert assert_solution(arm, named, target, EXACT) == pytest.approx(q, abs=1e-12)
        # Nearest to a seed next to that alternative: the same one.
        request.branch = 'nearest'
        request.seed.name = list(model(arm).joint_names)
        request.seed.position = (q + 0.01).tolist()
        nearest = graph.call(arm, solver, request)
        assert nearest.branch == label
        request.seed = JointState()
    for label in set(labels) - set(alternatives):
        # A branch that needs a joint past its limit is refused, never clamped.
        request.branch = label
        assert_refusal(graph.call(arm, solver, request), ErrorCode.JOINT_LIMITS, label,
                       'outside its limits')
    request.branch = 'sideways'
    assert_refusal(graph.call(arm, solver, request), ErrorCode.INVALID_INPUT,
                   'unknown branch "sideways"', 'valid: nearest, ' + ', '.join(labels[:2]))


def test_analytic_branches_and_alternatives(graph):
    from arm_kinematics.ik.closed_form.yaw_two_pitch import BRANCHES
    target = np.array([1.0, 0.2, 1.2])
    _check_branches(graph, 'pointer3', 'analytic', request_for(target), BRANCHES, target)


def test_closed_form_branches_and_alternatives(graph):
    from arm_kinematics.ik.closed_form.spherical_wrist import BRANCHES
    pose = model('six_axis').fk(fk_targets('six_axis', 1, seed=3)[0])
    request = request_for(pose[:3, 3], goal=GoalType.FULL_POSE,
                          orientation=matrix_to_quaternion(pose[:3, :3]))
    _check_branches(graph, 'six_axis', 'closed_form', request, BRANCHES, pose[:3, 3])
    # The numeric route knows no branch: a label is refused in the same words, not dropped.
    request.branch = BRANCHES[0]
    assert_refusal(graph.call('six_axis', 'dls', request), ErrorCode.INVALID_INPUT,
                   f'unknown branch "{BRANCHES[0]}"', 'valid: nearest (the dls solver has no')
    request.branch = 'nearest'
    answer = graph.call('six_axis', 'dls', request)
    assert answer.error_code.val == ErrorCode.OK, answer.message


# ---------------------------------------------------------------------- seed from joint_states
def test_empty_seed_uses_the_last_joint_states(graph):
    # A server of its own: the pose it stores would change other tests' default seed.
    graph.ensure('js_pointer3', 'pointer3')
    publisher = graph.node.create_publisher(JointState, '/js_pointer3/joint_states',
                                            QoSProfile(depth=10))
    names = list(model('pointer3').joint_names)
    target = np.array([1.0, 0.2, 1.2])
    every = graph.call('js_pointer3', 'analytic', request_for(target, return_all=True))
    alternatives = {a.label: list(a.positions) for a in every.alternatives}
    assert every.branch == 'elbow_up'  # nearest the home pose
    for label in ('flipped_elbow_up', 'elbow_down'):
        pose = [v + 0.02 for v in alternatives[label]]
        # Jumbled order and a joint of another device: matched by name.
        state = JointState(name=['gripper'] + names[::-1], position=[0.5] + pose[::-1])

        def answered_branch(state: JointState = state) -> str:
            publisher.publish(state)
            graph.spin(0.02)
            return graph.call('js_pointer3', 'analytic', request_for(target)).branch
        deadline = time.monotonic() + 10.0
        while answered_branch() != label:
            assert time.monotonic() < deadline, f'joint_states never used for {label}'
    # A numeric solver starts there too: a small move lands next to the published pose.
    start = np.array(alternatives['elbow_down']) + 0.02
    goal = start + np.array([0.05, -0.04, 0.03])
    response = graph.call('js_pointer3', 'dls', request_for(fk_position('pointer3', goal)))
    solution = assert_solution('pointer3', response, fk_position('pointer3', goal))
    assert np.max(np.abs(solution - goal)) < 0.05
    # Broken joint_states (NaN, or names and positions of different lengths) are ignored.
    for bad in (JointState(name=names, position=[NAN, 0.0, 0.0]),
                JointState(name=names, position=[0.0, 0.0])):
        for _ in range(5):
            publisher.publish(bad)
            graph.spin(0.02)
        assert graph.call('js_pointer3', 'analytic', request_for(target)).branch == \
            'elbow_down'
    graph.assert_alive('js_pointer3')


# ---------------------------------------------------------------------- determinism
@pytest.mark.parametrize('arm, solver, make', [
    ('pointer3', 'analytic', lambda: request_for([1.0, 0.2, 1.2], return_all=True)),
    ('six_axis', 'closed_form', lambda: request_for(SIX_FAR, return_all=True)),
    ('six_axis', 'dls', lambda: request_for(SIX_FAR)),
    ('six_axis', 'ccd', lambda: request_for(SIX_FAR)),
    ('ccd5', 'dls', lambda: request_for([0.4, -0.3, 0.6], goal=GoalType.TOOL_DOWN)),
    # Random restarts included: the generator is seeded by the random_seed parameter.
    ('pointer3', 'dls', lambda: request_for(POINTER_HOLE_EDGE)),
    ('pointer3', 'ccd', lambda: request_for(POINTER_HOLE_EDGE)),
], ids=['analytic', 'closed_form', 'dls', 'ccd', 'dls_tool_down', 'dls_restarts',
        'ccd_restarts'])
def test_repeated_requests_give_identical_answers(graph, arm, solver, make):
    def essence(response: SolveIK.Response) -> tuple:
        return (response.error_code.val, response.message, response.branch,
                tuple(response.solution.position), response.iterations,
                response.position_error, response.max_joint_step,
                tuple((a.label, tuple(a.positions)) for a in response.alternatives))
    answers = {essence(graph.call(arm, solver, make())) for _ in range(5)}
    assert len(answers) == 1, answers


# ---------------------------------------------------------------------- concurrency
@pytest.mark.parametrize('arm, fast_solver, fast_target', [
    ('pointer3', 'analytic', [1.0, 0.2, 1.2]),
    ('six_axis', 'closed_form', SIX_FAR),
])
def test_a_slow_solve_does_not_block_cheap_ones(graph, arm, fast_solver, fast_target):
    slow_target = [-0.6, -0.5, 1.0] if arm == 'pointer3' else [-1.2, -0.5, 1.5]
    with graph.parameters(arm, max_step=CREEP_STEP):
        started = time.perf_counter()
        slow = graph.call_async(arm, 'dls', request_for(slow_target, tolerance=1e-15,
                                                        max_iterations=100_000, timeout=2.0))
        fast_times = []
        for _ in range(20):
            response, elapsed = graph.timed_call(arm, fast_solver, request_for(fast_target))
            assert_solution(arm, response, np.array(fast_target), EXACT)
            fast_times.append(elapsed)
        assert not slow.done(), 'the slow solve ended before the cheap ones: not concurrent'
        graph.wait(slow, 10.0, 'slow DLS reply')
        slow_elapsed = time.perf_counter() - started
    assert_refusal(slow.result(), ErrorCode.TIMED_OUT, 'timed out after 2 s')
    assert slow_elapsed >= 1.9
    assert max(fast_times) < 0.5, fast_times


# ---------------------------------------------------------------------- parameters
REJECTED_UPDATES = [
    ('damping', -1.0, 'out of range'),
    ('damping', 0.0, 'damping is 0.0 (must be > 0)'),
    ('damping', NAN, 'out of range'),
    ('max_iterations', 0, 'out of range'),
    ('max_iterations', 10**9, 'out of range'),
    ('tolerance', 0.0, 'tolerance is 0.0 (must be > 0)'),
    ('timeout', 0.0, 'timeout is 0.0 (must be > 0)'),
    ('default_solver', 'fabrik', 'unknown solver "fabrik"; valid names'),
    ('default_solver', 'analytic', 'the analytic solver needs 3 joints'),
    ('default_solver', 'DLS', 'unknown solver "DLS"'),
]


def test_invalid_parameter_updates_are_rejected_and_change_nothing(graph):
    names = ('damping', 'max_iterations', 'tolerance', 'timeout', 'default_solver')
    before = graph.get_parameters('six_axis', *names)
    reference = graph.call('six_axis', None, request_for(SIX_FAR))
    for name, value, reason in REJECTED_UPDATES:
        [result] = graph.set_parameters('six_axis', **{name: value})
        assert not result.successful, (name, value)
        assert reason in result.reason, (name, value, result.reason)
    assert graph.get_parameters('six_axis', *names) == before
    after = graph.call('six_axis', None, request_for(SIX_FAR))
    assert after.solver == 'dls'
    assert list(after.solution.position) == list(reference.solution.position)


def test_valid_parameter_updates_take_effect(graph):
    target = np.array(SIX_FAR)
    with graph.parameters('six_axis', default_solver='closed_form'):
        response = graph.call('six_axis', None, request_for(target))
        assert response.solver == 'closed_form' and response.branch
    with graph.parameters('six_axis', max_iterations=1, restarts=0):
        response = graph.call('six_axis', 'dls', request_for(target))
        assert_refusal(response, ErrorCode.NOT_CONVERGED, 'did not converge in 1 iterations')
        assert response.iterations == 1
    home_pose = load_arm_config('six_axis')['home_pose']
    home = np.array([home_pose[name] for name in model('six_axis').joint_names])
    near = fk_position('six_axis', home + 0.1)
    with graph.parameters('six_axis', max_step=0.01):
        response = graph.call('six_axis', 'dls', request_for(near))
        assert response.max_joint_step <= 0.01 + 1e-12
        assert response.error_code.val in (ErrorCode.OK, ErrorCode.NOT_CONVERGED)
    # Joint limits off: the numeric solvers may fold the elbow past its 160° limit...
    with graph.parameters('pointer3', respect_joint_limits=False):
        response = graph.call('pointer3', 'dls', request_for(POINTER_HOLE_EDGE))
        solution = assert_solution_unlimited('pointer3', response, POINTER_HOLE_EDGE)
        assert abs(solution[2]) > math.radians(160.0)
        # ... unless the request asks for them (LIMITS_ON).
        response = graph.call('pointer3', 'dls',
                              with_fields(request_for(POINTER_HOLE_EDGE), joint_limits=1))
        assert_refusal(response, ErrorCode.NOT_CONVERGED)
        # The closed forms always keep to the limits (documented in the solvers).
        assert_refusal(graph.call('pointer3', 'analytic', request_for(POINTER_HOLE_EDGE)),
                       ErrorCode.JOINT_LIMITS)
    assert_refusal(graph.call('pointer3', 'dls', request_for(POINTER_HOLE_EDGE)),
                   ErrorCode.NOT_CONVERGED)


# 2.02 m from pointer3's shoulder: past its 1.8 m reach, inside 2.1 m with l1 1.1, l2 1.0.
POINTER_FAR = [2.0, 0.0, 0.705]


def test_robot_description_replaced_at_run_time(graph):
    """New link lengths at run time: a target only the longer arm reaches is solved and the
    answer is the new model's FK; another arm or a broken URDF is refused, nothing changes."""
    graph.ensure('long_pointer3', 'pointer3')
    target = np.array(POINTER_FAR)
    assert_refusal(graph.call('long_pointer3', 'analytic', request_for(target)),
                   ErrorCode.OUT_OF_REACH, 'maximum reach 1.800 m')
    # The default solver is the parameter's, before and after the new model.
    assert all(r.successful for r in graph.set_parameters('long_pointer3',
                                                          default_solver='dls'))
    longer = expand_xacro('pointer3', {'l1': '1.1', 'l2': '1.0'})
    [result] = graph.set_parameters('long_pointer3', robot_description=longer)
    assert result.successful, result.reason
    new = ArmModel.from_urdf(longer)
    rules = workspace_from_model(new, 0.1)
    assert rules.max_reach == pytest.approx(2.1)
    answers = {}
    for solver in ('analytic', None, 'dls'):
        response = graph.call('long_pointer3', solver, request_for(target))
        assert response.error_code.val == ErrorCode.OK, (solver, response.message)
        assert response.solver == (solver or 'dls')
        q = np.array(response.solution.position)
        assert new.within_limits(q)
        reached = new.fk(q)[:3, 3]
        assert np.linalg.norm(reached - target) <= (EXACT if solver == 'analytic' else TOLERANCE)
        achieved = response.achieved_position
        assert [achieved.x, achieved.y, achieved.z] == pytest.approx(reached.tolist(), abs=1e-9)
        assert response.reach_fraction == pytest.approx(
            np.linalg.norm(target - rules.shoulder) / rules.max_reach, rel=1e-9)
        answers[solver] = list(response.solution.position)
    # The reach check is the new model's: past 2.1 m is refused, in its words.
    assert_refusal(graph.call('long_pointer3', 'analytic', request_for([2.2, 0.0, 0.705])),
                   ErrorCode.OUT_OF_REACH, 'maximum reach 2.100 m')
    # Refused: another arm (other joints), broken XML, nothing; the longer arm stays.
    for description, words in ((urdf('six_axis'), 'only lengths may change'),
                               ('<robot', 'robot_description is not usable'),
                               ('', 'robot_description is empty')):
        [result] = graph.set_parameters('long_pointer3', robot_description=description)
        assert not result.successful and words in result.reason, result.reason
    assert graph.get_parameters('long_pointer3', 'robot_description') == \
        {'robot_description': longer}
    response = graph.call('long_pointer3', 'analytic', request_for(target))
    assert response.error_code.val == ErrorCode.OK, response.message
    assert list(response.solution.position) == answers['analytic']
    graph.assert_alive('long_pointer3')


def test_a_new_description_keeps_the_injected_fault(graph):
    """A rebuilt model's solvers are the server's own: the test server's fault (its
    _derived) applies to them as to the first ones."""
    graph.ensure('faulty_long_six_axis', 'six_axis', faulty_solver='dls')
    [result] = graph.set_parameters('faulty_long_six_axis',
                                    robot_description=expand_xacro('six_axis', {'L2': '1.1'}))
    assert result.successful, result.reason
    assert_refusal(graph.call('faulty_long_six_axis', 'dls', request_for(SIX_FAR)),
                   ErrorCode.INTERNAL_ERROR, FAULT_MESSAGE)
    new = load_model('six_axis', {'L2': '1.1'})
    response = graph.call('faulty_long_six_axis', 'closed_form', request_for(SIX_FAR))
    assert response.error_code.val == ErrorCode.OK, response.message
    assert np.linalg.norm(new.fk(np.array(response.solution.position))[:3, 3] - SIX_FAR) \
        <= EXACT
    graph.assert_alive('faulty_long_six_axis')


def assert_solution_unlimited(arm: str, response: SolveIK.Response, target) -> np.ndarray:
    assert response.error_code.val == ErrorCode.OK, response.message
    q = np.array(response.solution.position)
    assert np.linalg.norm(fk_position(arm, q) - np.asarray(target)) <= TOLERANCE
    return q


# ---------------------------------------------------------------------- status and logs
def test_ik_status_published_for_each_answer(graph):
    statuses = graph.status_spy('pointer3')
    # Matched once a status has come: a status published before the subscription matched is
    # not delivered (seen on a loaded machine with a fixed 0.5 s wait).
    deadline = time.monotonic() + 30.0
    while not statuses and time.monotonic() < deadline:
        graph.call('pointer3', 'analytic', request_for([1.0, 0.2, 1.2]))
        for _ in range(10):
            graph.spin()
    first = len(statuses)
    graph.call('pointer3', 'analytic', request_for([1.0, 0.2, 1.2]))
    graph.call('pointer3', 'analytic', request_for([5.0, 0.0, 1.0]))
    deadline = time.monotonic() + 10.0
    while len(statuses) < first + 2 and time.monotonic() < deadline:
        graph.spin()
    ok, failed = statuses[first:first + 2]
    assert ok.error_code.val == ErrorCode.OK and ok.solver == 'analytic'
    assert ok.branch == 'elbow_up' and len(ok.solution.position) == 3
    assert [ok.target.x, ok.target.y, ok.target.z] == [1.0, 0.2, 1.2]
    assert failed.error_code.val == ErrorCode.OUT_OF_REACH
    assert 'maximum reach 1.800 m' in failed.message and not failed.solution.position


def test_failures_do_not_flood_the_log(graph):
    before = graph.servers['six_axis'].output().count('\n')
    for _ in range(50):
        graph.call('six_axis', 'dls', request_for([9.0, 0.0, 0.0]))
    assert graph.servers['six_axis'].output().count('\n') == before


def test_server_memory_is_modest(graph):
    # A reference figure for the reliability tests: one server stays under 300 MB (about
    # 100 MB of it is numba's LLVM, which the compiled kernel and IK loop need).
    assert rss_kb(graph.servers['six_axis']) < 300_000


# ---------------------------------------------------------------------- client class
def test_ik_client_class(graph):
    target = [1.0, 0.2, 1.2]
    client = IKClient(graph.node, 'pointer3', 'analytic')
    assert client.wait_for_service(5.0)
    reply = client.solve(target, branch='elbow_down')
    assert isinstance(reply, IKReply) and reply.success and reply.branch == 'elbow_down'
    assert np.linalg.norm(fk_position('pointer3', reply.positions) - target) <= EXACT
    # The node stays with its executor (the graph's), which still spins it.
    assert graph.node.executor is graph.executor
    future = client.solve_async([5.0, 0.0, 1.0])
    graph.wait(future, 10.0, 'async IKClient reply')
    assert future.result().code == ErrorCode.OUT_OF_REACH and not future.result().success
    # A node in no executor (and not on the default context) is spun by the client itself.
    import rclpy
    lone = rclpy.create_node('lone_ik_client', context=graph.context)
    try:
        reply = IKClient(lone, 'six_axis').solve(SIX_FAR, wait=10.0)
        assert reply.success and reply.solver == 'dls'
        reply = IKClient(lone, 'six_axis').solve(SIX_FAR, wait=10.0, timeout=0.999_999_999_9)
        assert reply.success
    finally:
        lone.destroy_node()


# ---------------------------------------------------------------------- ik_client executable
def run_ik_client(graph, *args: str, timeout: float = 30.0) -> subprocess.CompletedProcess:
    return subprocess.run([executable_path('arm_ik', 'ik_client'), *args],
                          env=graph.claim.environment(), capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_ik_client_json_has_every_field(graph):
    result = run_ik_client(graph, '--arm', 'six_axis', '--solver', 'dls', '--target', '1.0',
                           '0.2', '0.8', '--json')
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    # Every SolveIK.Response field, under its name or decoded (solution → joint_names and
    # positions, error_code → code name and number).
    decoded = {'solution': ('joint_names', 'positions'), 'error_code': ('code', 'error_code')}
    for field in SolveIK.Response.get_fields_and_field_types():
        for key in decoded.get(field, (field,)):
            assert key in data, f'{key} ({field}) missing from {sorted(data)}'
    assert data['code'] == 'OK' and data['error_code'] == 0 and data['success'] is True
    assert data['joint_names'] == list(model('six_axis').joint_names)
    assert np.linalg.norm(fk_position('six_axis', data['positions']) - SIX_FAR) <= TOLERANCE


def test_ik_client_text_and_exit_codes(graph):
    solved = run_ik_client(graph, '--arm', 'pointer3', '--target', '1.0', '0.2', '1.2',
                           '--branch', 'elbow_down', '--all')
    assert solved.returncode == 0, solved.stdout + solved.stderr
    assert solved.stdout.startswith('OK: solved in closed form')
    assert 'shoulder_pitch' in solved.stdout and 'branch elbow_down' in solved.stdout
    assert 'alternative elbow_up' in solved.stdout
    failed = run_ik_client(graph, '--arm', 'six_axis', '--target', '2.61', '0', '0.4')
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert 'OUT_OF_REACH: target 2.61 m from the shoulder, maximum reach 2.320 m' in \
        failed.stdout
    failed_json = run_ik_client(graph, '--arm', 'six_axis', '--target', '2.61', '0', '0.4',
                                '--json')
    assert failed_json.returncode == 1
    data = json.loads(failed_json.stdout)
    assert data['code'] == 'OUT_OF_REACH' and data['position_error'] is None  # inf → null
    missing = run_ik_client(graph, '--arm', 'no_such_arm', '--target', '1', '0', '1',
                            '--wait', '1')
    assert missing.returncode == 2
    assert 'service /no_such_arm/ik_server/solve_ik not available' in missing.stderr
