"""RELIABILITY.md cases 1-13 (IK requests): each sends the real request to a real ik_server
process over DDS and then proves the server alive with a valid request.

"Nothing published that would move an arm": ik_server publishes no JointState, trajectory
or command; its only output, ``ik_status``, is spied on in the input cases and must never
carry joints for a refused request.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest

from arm_ik.client import build_request
from arm_ik.nodes.ik_server import EXECUTOR_THREADS
from arm_interfaces.srv import SolveIK
from arm_kinematics.ik.result import ErrorCode, GoalType
from arm_kinematics.ik.solvers.base import MAX_ITERATIONS_CAP, MAX_TIMEOUT
from arm_testing.burst import burst_then_stream, requests
from arm_testing.faulty_ik_server import FAULT_MESSAGE
from arm_testing.ik_graph import (
    APPLICABLE,
    ARMS,
    assert_refusal,
    fk_position,
    ik_servers,
    IKGraph,
    model,
    no_nan_in,
    workspace,
)

NAN, INF = math.nan, math.inf
TOLERANCE = 1e-4               # m, the node's default position tolerance
# See test_ik_server_node.CREEP_STEP: a DLS whose steps are capped this small runs until
# its timeout, which makes wall-time bounds observable.
CREEP_STEP = 1e-7
# Wall-time margin over a request's timeout: one round trip plus scheduling on 2 cores
# that other test runs may share (a round trip is a few ms when the machine is idle).
TIMEOUT_MARGIN = 0.5
# Case 13: a reply not here this long after the last request is lost (hung), not slow. On an
# idle machine the slowest of the 1500 comes within 1 s; 2 cores shared by several test runs
# have stretched that to over 5 s.
HANG_WAIT = 60.0
# A valid request per server, used as the "alive" probe.
PROBES = {
    'pointer3': ('analytic', [0.5, 0.2, 0.9]),
    'manipulator3d': ('analytic', [0.4, 0.3, 0.5]),
    'ccd5': ('ccd', [0.4, -0.3, 0.6]),
    'six_axis': ('closed_form', [1.0, 0.2, 0.8]),
}
# (arm, service solver or None for ~/solve_ik, goal): the full-pose goals make the servers
# read the quaternion too.
INPUT_ROUTES = [
    ('pointer3', 'analytic', GoalType.POSITION),
    ('pointer3', None, GoalType.POSITION),
    ('manipulator3d', 'ccd', GoalType.POSITION),
    ('ccd5', 'dls', GoalType.FULL_POSE),
    ('six_axis', 'closed_form', GoalType.FULL_POSE),
    ('six_axis', 'dls', GoalType.FULL_POSE),
    ('six_axis', 'ccd', GoalType.POSITION),
]
FIELDS = ('position.x', 'position.y', 'position.z', 'orientation.x', 'orientation.y',
          'orientation.z', 'orientation.w')


@pytest.fixture(scope='module')
def graph():
    with ik_servers(*ARMS) as graph:
        yield graph


# ---------------------------------------------------------------------- helpers
def request_for(target, **kwargs) -> SolveIK.Request:
    return build_request(np.asarray(target, dtype=float).tolist(), **kwargs)


def assert_alive(graph: IKGraph, namespace: str, arm: str | None = None,
                 solver: str | None = None) -> None:
    """The server process runs and answers a valid request with a verified solution."""
    graph.assert_alive(namespace)
    probe_solver, target = PROBES[arm or namespace]
    solver = solver or probe_solver
    response, elapsed = graph.timed_call(namespace, solver, request_for(target))
    assert_ok(arm or namespace, response, target)
    assert elapsed < 1.0, f'probe took {elapsed:.3f} s'


def assert_ok(arm: str, response: SolveIK.Response, target, tolerance: float = TOLERANCE,
              limits: bool = True) -> np.ndarray:
    assert response.error_code.val == ErrorCode.OK, response.message
    q = np.array(response.solution.position)
    assert tuple(response.solution.name) == model(arm).joint_names
    assert np.linalg.norm(fk_position(arm, q) - np.asarray(target)) <= tolerance
    if limits:
        assert model(arm).within_limits(q)
    return q


def assert_answer_consistent(arm: str, response: SolveIK.Response, target) -> None:
    """Whatever the code: a success is verified by FK, a failure offers no joints."""
    assert no_nan_in(response)
    if response.error_code.val == ErrorCode.OK:
        assert_ok(arm, response, target)
    else:
        assert not response.solution.position


def set_target_field(request: SolveIK.Request, field: str, value: float) -> None:
    part, axis = field.split('.')
    setattr(getattr(request.target.pose, part), axis, value)


def check_statuses_carry_no_joints(graph: IKGraph, statuses: list, count: int) -> None:
    deadline = time.monotonic() + 5.0
    while len(statuses) < count and time.monotonic() < deadline:
        graph.spin()
    for status in statuses:
        assert status.error_code.val != ErrorCode.OK
        assert not status.solution.position and not status.solution.name
        assert all(math.isfinite(v) for v in (status.target.x, status.target.y,
                                              status.target.z))


def _nonfinite_case(graph: IKGraph, values: tuple[float, ...], text: dict[float, str]) -> None:
    statuses = {arm: graph.status_spy(arm) for arm in ARMS}
    graph.spin(0.3)   # let the spies match before the requests
    sent = dict.fromkeys(ARMS, 0)
    for (arm, solver, goal), field, value in itertools.product(INPUT_ROUTES, FIELDS, values):
        request = request_for(PROBES[arm][1], goal=goal)
        set_target_field(request, field, value)
        response = graph.call(arm, solver, request)
        index = 'xyzw'.index(field[-1])
        assert_refusal(response, ErrorCode.INVALID_INPUT,
                       f'target.pose.{field.split(".")[0]}[{index}] is {text[value]}',
                       'must be finite')
        sent[arm] += 1
    for arm in ARMS:
        check_statuses_carry_no_joints(graph, statuses[arm], sent[arm])
        assert_alive(graph, arm)


# ---------------------------------------------------------------------- cases
def test_case_01_nan_in_any_target_component(graph):
    """NaN in any coordinate or quaternion component, whatever the goal type (the
    quaternion is read only for full poses, but a NaN anywhere means a broken caller)."""
    _nonfinite_case(graph, (NAN,), {NAN: 'nan'})


def test_case_02_infinities_in_any_target_component(graph):
    _nonfinite_case(graph, (INF, -INF), {INF: 'inf', -INF: '-inf'})


HUGE = [
    (1e154, 0.0, 1.0), (0.0, 1e154, 1.0), (1e154, 1e154, 1e154),
    (1e308, 0.0, 1.0), (0.5, -1e308, 1.0), (0.5, 0.2, 1e308), (1e308, 1e308, 1e308),
    (-1e308, 1e308, 1e308),
    # Past what hypot can represent: the distance is inf, still not NaN.
    (1.7976931348623157e308,) * 3,
]


def test_case_03_huge_finite_targets_are_out_of_reach(graph):
    for arm in ARMS:
        for solver, target in itertools.product((None, *APPLICABLE[arm]), HUGE):
            response = graph.call(arm, solver, request_for(target))
            assert_refusal(response, ErrorCode.OUT_OF_REACH, 'm from the shoulder',
                           f'maximum reach {workspace(arm).max_reach:.3f} m')
            assert 'nan' not in response.message
            assert response.reach_fraction > 1.0   # inf for the last row, never NaN
        # Below the floor of the arms with a minimum height: that rule answers first.
        if workspace(arm).min_height_above_shoulder is not None:
            response = graph.call(arm, None, request_for((0.5, 0.2, -1e308)))
            assert_refusal(response, ErrorCode.BELOW_MIN_HEIGHT, 'above the shoulder',
                           'at least')
            assert 'nan' not in response.message
        assert_alive(graph, arm)


def test_case_04_inner_hole_and_shoulder_point(graph):
    """manipulator3d's hole (radius |L1 - L2| = 0.1 m around the shoulder at the origin) is
    refused by every solver; CCD and DLS never offer their last iterate.

    pointer3's hole (0.1 m around its shoulder) lies wholly below its minimum target height
    (0.1 m above the shoulder), so its shoulder point and hole are refused by that rule:
    BELOW_MIN_HEIGHT, equally before any solve.
    """
    hole = [(0.0, 0.0, 0.0), (0.05, 0.0, 0.02), (0.0, 0.0999, 0.0), (0.0, 0.0, 0.0999),
            (-0.06, 0.05, 0.03), (1e-12, 0.0, 1e-12)]
    for solver, target in itertools.product((None, *APPLICABLE['manipulator3d']), hole):
        response = graph.call('manipulator3d', solver, request_for(target))
        assert_refusal(response, ErrorCode.INSIDE_INNER_HOLE, 'inside the inner hole',
                       'minimum reach 0.100 m')
        assert response.iterations == 0
    for solver, target in itertools.product((None, *APPLICABLE['pointer3']),
                                            [(0.0, 0.0, 0.405), (0.03, 0.0, 0.455)]):
        response = graph.call('pointer3', solver, request_for(target))
        assert_refusal(response, ErrorCode.BELOW_MIN_HEIGHT, 'at least 0.100 m')
        assert response.iterations == 0
    # Just outside the hole the elbow would pass its limit: no solver calls that a success.
    for solver in APPLICABLE['manipulator3d']:
        target = (0.1005, 0.0, 0.0)
        response = graph.call('manipulator3d', solver, request_for(target))
        assert response.error_code.val in (ErrorCode.JOINT_LIMITS, ErrorCode.NOT_CONVERGED)
        assert_answer_consistent('manipulator3d', response, target)
    assert_alive(graph, 'manipulator3d')
    assert_alive(graph, 'pointer3')


def test_case_05_below_minimum_height_refused_before_solving(graph):
    low = {
        'pointer3': [(0.5, 0.0, 0.405 + 0.0999), (0.5, 0.2, 0.455), (0.5, 0.0, 0.405),
                     (0.5, 0.0, 0.0), (1.0, 0.0, -1.0)],
        'manipulator3d': [(0.5, 0.0, -1e-9), (0.5, 0.2, -0.001), (0.3, 0.0, -0.5)],
    }
    boundary = {'pointer3': (0.5, 0.0, 0.505), 'manipulator3d': (0.8, 0.0, 0.0)}
    for arm, targets in low.items():
        minimum = workspace(arm).min_height_above_shoulder
        for solver, target in itertools.product((None, *APPLICABLE[arm]), targets):
            response = graph.call(arm, solver, request_for(target))
            assert_refusal(response, ErrorCode.BELOW_MIN_HEIGHT, 'above the shoulder',
                           f'this arm needs at least {minimum:.3f} m')
            # Refused before solving: no iteration ran (a wall-time bound flaked under load).
            assert response.iterations == 0
        # On the minimum height itself the target is served.
        for solver in APPLICABLE[arm]:
            assert_ok(arm, graph.call(arm, solver, request_for(boundary[arm])),
                      boundary[arm])
        assert_alive(graph, arm)


def test_case_06_unknown_solver_names(graph):
    """Solver names are exact and lower case; '' on ~/solve_ik means the arm's default."""
    valid = 'valid names (exact, lower case): analytic, closed_form, ccd, dls'
    for name in ('fabrik', 'DLS', 'Dls', 'dls ', ' dls', 'dls\n', 'closed-form', 'ik/dls',
                 'Analytic', 'x' * 1000):
        for arm in ('six_axis', 'pointer3'):
            request = request_for(PROBES[arm][1])
            request.solver = name
            response = graph.call(arm, None, request)
            assert_refusal(response, ErrorCode.UNKNOWN_SOLVER, valid)
            # The per-solver services answer the same typed error.
            response = graph.call(arm, 'dls', request)
            assert_refusal(response, ErrorCode.UNKNOWN_SOLVER, 'this is the dls service',
                           valid)
    # A known name on the wrong arm, or a different known name on a per-solver service.
    request = request_for(PROBES['six_axis'][1])
    request.solver = 'analytic'
    assert_refusal(graph.call('six_axis', None, request), ErrorCode.SOLVER_NOT_APPLICABLE,
                   'does not apply to six_axis')
    assert_refusal(graph.call('six_axis', 'dls', request), ErrorCode.INVALID_INPUT,
                   'this is the dls service', 'call ~/solve_ik')
    request.solver = ''
    assert graph.call('six_axis', None, request).solver == 'dls'
    assert_alive(graph, 'six_axis')
    assert_alive(graph, 'pointer3')


def test_case_07_iteration_limits(graph):
    target = PROBES['six_axis'][1]
    for value in (-1, -(2**31), MAX_ITERATIONS_CAP + 1, 10**9, 2**31 - 1):
        response = graph.call('six_axis', 'dls', request_for(target, max_iterations=value))
        assert_refusal(response, ErrorCode.INVALID_INPUT,
                       f'max_iterations {value} is outside 0..{MAX_ITERATIONS_CAP}',
                       '0: node default')
    # 0 takes the node default.
    assert_ok('six_axis', graph.call('six_axis', 'dls', request_for(target, max_iterations=0)),
              target)
    # The cap itself is accepted, and the timeout still bounds the wall time.
    timeout = 0.3
    with graph.parameters('six_axis', max_step=CREEP_STEP):
        for solver in ('dls', None):
            response, elapsed = graph.timed_call(
                'six_axis', solver, request_for([-1.2, -0.5, 1.5], timeout=timeout,
                                                max_iterations=MAX_ITERATIONS_CAP,
                                                tolerance=1e-15))
            assert_refusal(response, ErrorCode.TIMED_OUT, f'timed out after {timeout:g} s')
            assert timeout <= elapsed <= timeout + TIMEOUT_MARGIN, elapsed
    # CCD with the cap on a target it cannot reach (past a joint limit) ends on its own.
    response, elapsed = graph.timed_call('pointer3', 'ccd', request_for(
        (0.0, 0.0, 0.525), max_iterations=MAX_ITERATIONS_CAP, timeout=1.0))
    assert_refusal(response, ErrorCode.NOT_CONVERGED)
    assert elapsed < 1.0 + TIMEOUT_MARGIN
    assert_alive(graph, 'six_axis')


def test_case_08_timeouts(graph):
    """Duration holds integers (int32 sec, uint32 nanosec), so NaN cannot be sent; its
    malformed counterpart is a nanosec field outside 0..999999999."""
    target = PROBES['six_axis'][1]
    rejected = [
        ((-1, 0), 'timeout is negative (-1 s)'),
        ((-(2**31), 999_999_999), 'timeout is negative'),
        ((0, 1_000_000_000), 'timeout.nanosec 1000000000 is outside 0..999999999'),
        ((0, 2**32 - 1), 'is outside 0..999999999'),
        ((10**9, 0), f'exceeds the maximum of {MAX_TIMEOUT:g} s'),
        ((2**31 - 1, 999_999_999), 'exceeds the maximum'),
        ((60, 1), 'exceeds the maximum'),
    ]
    for (sec, nanosec), fragment in rejected:
        for solver in ('dls', 'ccd', 'closed_form'):
            request = request_for(target)
            request.timeout.sec, request.timeout.nanosec = sec, nanosec
            assert_refusal(graph.call('six_axis', solver, request), ErrorCode.INVALID_INPUT,
                           fragment)
    # Zero takes the node default; exactly the maximum is accepted.
    for sec in (0, 60):
        request = request_for(target)
        request.timeout.sec = sec
        assert_ok('six_axis', graph.call('six_axis', 'dls', request), target)
    # 0.2 s given as nanoseconds only is honoured: the solve stops there.
    with graph.parameters('six_axis', max_step=CREEP_STEP):
        request = request_for([-1.2, -0.5, 1.5], max_iterations=MAX_ITERATIONS_CAP)
        request.timeout.sec, request.timeout.nanosec = 0, 200_000_000
        response, elapsed = graph.timed_call('six_axis', 'dls', request)
    assert_refusal(response, ErrorCode.TIMED_OUT, 'timed out after 0.2 s')
    assert 0.2 <= response.solve_time < 0.2 + 0.1   # measured inside the server
    assert 0.2 <= elapsed < 0.2 + TIMEOUT_MARGIN
    assert_alive(graph, 'six_axis')


def test_case_09_damping(graph):
    """0 in a request means the node default (every solver setting follows that rule); the
    node's own damping can never be 0, negative or NaN (parameter updates refused)."""
    target = PROBES['six_axis'][1]
    for value in (-1.0, -1e-300, NAN, INF, -INF):
        for solver in ('dls', None):
            response = graph.call('six_axis', solver, request_for(target, damping=value))
            assert_refusal(response, ErrorCode.INVALID_INPUT,
                           'damping must be finite and >= 0')
    assert_ok('six_axis', graph.call('six_axis', 'dls', request_for(target, damping=0.0)),
              target)
    for value in (0.0, -0.1, NAN):
        [result] = graph.set_parameters('six_axis', damping=value)
        assert not result.successful and result.reason
    assert graph.get_parameters('six_axis', 'damping')['damping'] > 0.0
    # Full stretch with a tiny valid lambda: each iteration stays within the step cap.
    cap = 0.05
    stretched = {'pointer3': [0.3, 0.5, 0.0], 'six_axis': [0.2, 0.4, 0.0, 0.0, 0.0, 0.0]}
    for arm, q in stretched.items():
        target = fk_position(arm, q)
        assert np.linalg.norm(target - workspace(arm).shoulder) == \
            pytest.approx(workspace(arm).max_reach)
        with graph.parameters(arm, max_step=cap):
            for damping in (1e-6, 1e-3):
                response = graph.call(arm, 'dls', request_for(target, damping=damping,
                                                              max_iterations=2000))
                assert response.max_joint_step <= cap * (1.0 + 1e-9), response.max_joint_step
                assert response.error_code.val in (ErrorCode.OK, ErrorCode.NOT_CONVERGED,
                                                   ErrorCode.TIMED_OUT), response.message
                assert_answer_consistent(arm, response, target)
        assert_alive(graph, arm)


def test_case_10_malformed_seeds(graph):
    names = list(model('pointer3').joint_names)    # base_yaw, shoulder_pitch, elbow_pitch
    joints = "the arm's joints: base_yaw, shoulder_pitch, elbow_pitch"
    cases = [
        ([], [0.1, 0.2, 0.3], ErrorCode.UNKNOWN_JOINT_NAMES,
         ['seed has 3 positions but no joint names', joints]),
        (['', '', ''], [0.1, 0.2, 0.3], ErrorCode.UNKNOWN_JOINT_NAMES,
         ["seed repeats joint name(s) ''"]),
        (['', 'shoulder_pitch', 'elbow_pitch'], [0.1, 0.2, 0.3],
         ErrorCode.UNKNOWN_JOINT_NAMES, ["unknown ''", 'missing base_yaw', joints]),
        (['base_yaw', 'base_yaw', 'elbow_pitch'], [0.1, 0.2, 0.3],
         ErrorCode.UNKNOWN_JOINT_NAMES, ["seed repeats joint name(s) 'base_yaw'"]),
        (['base_yaw', 'shoulder_pitch', 'wrist'], [0.1, 0.2, 0.3],
         ErrorCode.UNKNOWN_JOINT_NAMES, ["unknown 'wrist'", 'missing elbow_pitch', joints]),
        (names[:2], [0.1, 0.2], ErrorCode.UNKNOWN_JOINT_NAMES, ['missing elbow_pitch']),
        (names + ['gripper'], [0.1, 0.2, 0.3, 0.0], ErrorCode.UNKNOWN_JOINT_NAMES,
         ["unknown 'gripper'"]),
        (names, [0.1, 0.2], ErrorCode.INVALID_INPUT, ['seed has 3 names but 2 positions']),
        (names, [], ErrorCode.INVALID_INPUT, ['seed has 3 names but 0 positions']),
        (names, [0.1, 0.2, 0.3, 0.4], ErrorCode.INVALID_INPUT,
         ['seed has 3 names but 4 positions']),
        (names, [0.1, NAN, 0.3], ErrorCode.INVALID_INPUT, ['seed positions[1] is nan']),
        (names, [0.1, 0.2, -INF], ErrorCode.INVALID_INPUT, ['seed positions[2] is -inf']),
    ]
    target = PROBES['pointer3'][1]
    for seed_names, positions, code, fragments in cases:
        for solver in ('analytic', 'dls', None):
            request = request_for(target)
            request.seed.name, request.seed.position = seed_names, positions
            assert_refusal(graph.call('pointer3', solver, request), code, *fragments)
    # A jumbled order of the right names is accepted and reordered.
    seed = [-2.7, 1.4, 2.3]     # near the flipped_elbow_up solution of the probe target
    in_order = request_for(target, seed=dict(zip(names, seed)))
    jumbled = request_for(target, seed=dict(zip(names[::-1], seed[::-1])))
    first = graph.call('pointer3', 'analytic', in_order)
    second = graph.call('pointer3', 'analytic', jumbled)
    assert first.branch == second.branch == 'flipped_elbow_up'
    assert list(first.solution.position) == list(second.solution.position)
    assert_alive(graph, 'pointer3')


def test_case_11_solutions_past_joint_limits(graph):
    # manipulator3d, target low in front: the elbow-down branches need the shoulder below
    # the desk (elevation < 0), the elbow-up ones do not.
    target = (1.0, 0.0, 0.05)
    for branch in ('elbow_down', 'flipped_elbow_down'):
        response = graph.call('manipulator3d', 'analytic', request_for(target, branch=branch))
        assert_refusal(response, ErrorCode.JOINT_LIMITS, branch, 'shoulder_pitch would need',
                       'outside its limits')
    every = graph.call('manipulator3d', 'analytic', request_for(target, return_all=True))
    assert {a.label for a in every.alternatives} == {'elbow_up', 'flipped_elbow_up'}
    # Nearest to a seed right at the refused elbow-down pose: another branch, verified.
    down_like = {'base_yaw': 0.0, 'shoulder_pitch': -0.05, 'elbow_pitch': 0.3}
    for solver in ('analytic', 'ccd', 'dls'):
        response = graph.call('manipulator3d', solver, request_for(target, seed=down_like))
        assert_ok('manipulator3d', response, target)
    # pointer3 0.12 m above the shoulder needs a 175.8° elbow (limit 160°): refused by the
    # closed form, and never reported as solved by the iterative solvers.
    target = (0.0, 0.0, 0.525)
    assert_refusal(graph.call('pointer3', 'analytic', request_for(target)),
                   ErrorCode.JOINT_LIMITS, 'elbow_pitch would need')
    for solver in ('ccd', 'dls'):
        response = graph.call('pointer3', solver, request_for(target))
        assert_refusal(response, ErrorCode.NOT_CONVERGED, 'best position error 0.208 m')
    # With limits switched off by the request the iterative solvers may fold the elbow.
    request = request_for(target)
    request.joint_limits = SolveIK.Request.LIMITS_OFF
    response = graph.call('pointer3', 'dls', request)
    q = assert_ok('pointer3', response, target, limits=False)
    assert abs(q[2]) > math.radians(160.0)
    assert_alive(graph, 'manipulator3d')
    assert_alive(graph, 'pointer3')


@pytest.mark.parametrize('arm, faulty, healthy', [('six_axis', 'dls', 'closed_form'),
                                                  ('pointer3', 'analytic', 'dls')])
def test_case_12_solver_exception_becomes_internal_error(graph, arm, faulty, healthy):
    namespace = f'faulty_{arm}'
    graph.ensure(namespace, arm, faulty_solver=faulty)
    target = PROBES[arm][1]
    # More than the numeric slots: a slot leaked per exception would turn into BUSY.
    for _ in range(EXECUTOR_THREADS + 2):
        for solver in (faulty, None):
            response = graph.call(namespace, solver, request_for(target))
            assert_refusal(response, ErrorCode.INTERNAL_ERROR,
                           f'solver "{faulty}" raised RuntimeError', FAULT_MESSAGE)
    assert_ok(arm, graph.call(namespace, healthy, request_for(target)), target)
    assert_alive(graph, namespace, arm, healthy)


def test_case_13_burst_then_steady_stream(graph):
    """500 requests at once, then 100 requests/s for 10 s against six_axis: every one
    answered (solved, shed with BUSY, or refused as malformed), none hanging, memory
    bounded, and a probe still answered promptly.

    Bounds that hold under load (issue 39: "burst under 0.1 s" and "slowest under 5 s" on
    the wall clock failed in a fresh clone's make test on a busy machine): the burst's CPU
    time in this thread (about 40 ms when idle; other processes holding the cores do not
    count), every answer within HANG_WAIT. The wall-clock figures, under 0.1 s for the burst
    and about a second for the slowest answer when idle, and the share shed BUSY, are
    benchmarks/bench_burst.py's (same load: arm_testing.burst).
    """
    arm = 'six_axis'
    run = burst_then_stream(graph, arm, requests(arm, request_for), hang_wait=HANG_WAIT)
    assert run.burst_cpu < 0.5, f'burst took {run.burst_cpu:.3f} s of CPU ({run.summary()})'
    codes = run.codes()
    for index, _, future, target in run.sent:
        response = future.result()
        code = ErrorCode(response.error_code.val)
        if index % 10 == 9:
            assert code == ErrorCode.INVALID_INPUT, response.message
        else:
            assert code in (ErrorCode.OK, ErrorCode.BUSY), response.message
            assert_answer_consistent(arm, response, target)
    # How many are shed BUSY depends on how busy the machine is (bench_burst.py's figure).
    assert len(run.sent) == 1500 and codes.get('OK', 0) > 0, codes
    latencies = run.latencies()
    assert max(latencies) < HANG_WAIT, f'slowest answer {max(latencies):.2f} s; codes {codes}'
    print(f'\ncase 13: {run.summary()}')      # shown with -s
    assert run.growth_kb < 50_000, f'RSS grew by {run.growth_kb} kB'
    assert_alive(graph, arm)
