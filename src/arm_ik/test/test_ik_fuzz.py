"""Property-based fuzzing of ik_server over DDS: at least 1,000 malformed or random SolveIK
requests, each answered with a valid IKErrorCode, and the node still alive after them.

Generated timeouts stay small (at most 50 ms, and the node's default timeout, which a
zero timeout selects, is set to 50 ms here), so a huge iteration count cannot make one
example slow and the whole run stays well under a minute.
"""

from __future__ import annotations

import math

from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
import numpy as np
import pytest

from arm_ik.client import build_request
from arm_interfaces.srv import SolveIK
from arm_kinematics.ik.result import ErrorCode
from arm_testing.ik_graph import (
    fk_position,
    ik_servers,
    IKGraph,
    model,
    no_nan_in,
    VALID_CODES,
)

EXAMPLES = 1000
NODE_TIMEOUT = 0.05        # s, the servers' default timeout in this module
MAX_TIMEOUT_NS = 50_000_000
REPLY_BOUND = 5.0          # s, far above the 50 ms solves: a later reply is a hang
ARMS = ('pointer3', 'six_axis')
SOLVER_NAMES = ('analytic', 'closed_form', 'ccd', 'dls')
ROUTES = [(arm, solver) for arm in ARMS for solver in (None, *SOLVER_NAMES)]
JOINT_NAMES = sorted({name for arm in ARMS for name in model(arm).joint_names})
INT32 = (-(2**31), 2**31 - 1)
UINT32_MAX = 2**32 - 1

SPECIAL = [math.nan, math.inf, -math.inf, 1e308, -1e308, 1e154, -1e154, 5e-324, -0.0, 0.0,
           1.7976931348623157e308]
any_float = st.one_of(st.sampled_from(SPECIAL), st.floats(-3.0, 3.0),
                      st.floats(allow_nan=True, allow_infinity=True))
# Mostly plausible targets so that a fair share reaches the solvers, then anything.
coordinate = st.one_of(st.floats(-2.5, 2.5), any_float)
text = st.text(max_size=24)
timeout = st.one_of(
    st.just((0, 0)),                                                    # node default
    st.tuples(st.integers(INT32[0], -1), st.integers(0, 999_999_999)),   # negative
    st.tuples(st.integers(61, INT32[1]), st.integers(0, 999_999_999)),   # over 60 s
    st.tuples(st.integers(0, 1), st.integers(1_000_000_000, UINT32_MAX)),  # bad nanosec
    st.tuples(st.just(0), st.integers(1, MAX_TIMEOUT_NS)),               # real, <= 50 ms
)


# Each request starts valid and has a random set of its fields replaced by wild values
# (none, a few, or all of them): with every field wild at once, almost every request
# would stop at the first check and the solvers would never be reached.
FIELDS = ('position', 'orientation', 'frame_id', 'goal_type', 'solver', 'seed', 'branch',
          'timeout', 'max_iterations', 'damping', 'tolerance', 'joint_limits')


def _plausible(arm: str, route: str | None) -> dict[str, st.SearchStrategy]:
    lower, upper = model(arm).lower, model(arm).upper
    names = list(model(arm).joint_names)
    solvers = ('', route) if route else ('', *SOLVER_NAMES)
    reach = (-1.5, 1.5) if arm == 'pointer3' else (-2.0, 2.0)
    height = (0.55, 2.0) if arm == 'pointer3' else (-0.5, 2.5)
    return {
        'position': st.tuples(st.floats(*reach), st.floats(*reach), st.floats(*height)),
        'orientation': st.sampled_from([(0.0, 0.0, 0.0, 1.0), (1.0, 0.0, 0.0, 0.0),
                                        (0.0, 0.7071067811865476, 0.0, 0.7071067811865476)]),
        'frame_id': st.sampled_from(['', 'base_link']),
        'goal_type': st.integers(0, 2),
        'solver': st.sampled_from(solvers),
        'seed': st.one_of(st.just(([], [])), st.tuples(st.just(names), st.tuples(
            *(st.floats(lo, hi) for lo, hi in zip(lower, upper, strict=True))).map(list))),
        'branch': st.sampled_from(['', 'nearest']),
        'timeout': st.tuples(st.just(0), st.integers(0, MAX_TIMEOUT_NS)),
        'max_iterations': st.integers(0, 1000),
        'damping': st.one_of(st.just(0.0), st.floats(1e-4, 1.0)),
        'tolerance': st.one_of(st.just(0.0), st.floats(1e-6, 1e-2)),
        'joint_limits': st.integers(0, 2),
    }


def _seed_wild(arm: str) -> st.SearchStrategy:
    names = st.one_of(st.just([]), st.just(list(model(arm).joint_names)),
                      st.lists(st.one_of(st.sampled_from(JOINT_NAMES), text), max_size=8))
    return names.flatmap(lambda n: st.tuples(st.just(n), st.lists(
        st.one_of(st.floats(-3.2, 3.2), any_float),
        min_size=len(n) if n else 0, max_size=len(n) if n else 8)) | st.tuples(
            st.just(n), st.lists(any_float, max_size=8)))


def _wild(arm: str) -> dict[str, st.SearchStrategy]:
    return {
        'position': st.tuples(coordinate, coordinate, coordinate),
        'orientation': st.tuples(any_float, any_float, any_float, any_float),
        'frame_id': st.one_of(st.sampled_from(['world', 'tool0', '/base_link', 'base_link ',
                                               'BASE_LINK']), text),
        'goal_type': st.integers(0, 255),
        'solver': st.one_of(st.sampled_from(['DLS', 'fabrik', 'dls ', ' ccd', 'closed-form',
                                             *SOLVER_NAMES]), text),
        'seed': _seed_wild(arm),
        'branch': st.one_of(st.sampled_from(['elbow_up', 'flipped_elbow_down', 'sideways',
                                             'front_up_noflip', 'back_down_flip', 'Nearest']),
                            text),
        'timeout': timeout,
        'max_iterations': st.one_of(st.sampled_from([1, 100_000, 100_001, -1, 10**9]),
                                    st.integers(*INT32)),
        'damping': any_float,
        'tolerance': any_float,
        'joint_limits': st.integers(0, 255),
    }


@st.composite
def requests(draw) -> tuple[str, str | None, SolveIK.Request]:
    arm, route = draw(st.sampled_from(ROUTES))
    wild = draw(st.one_of(st.just(frozenset()), st.sets(st.sampled_from(FIELDS), max_size=3),
                          st.sets(st.sampled_from(FIELDS))))
    plausible, wilder = _plausible(arm, route), _wild(arm)
    value = {name: draw(wilder[name] if name in wild else plausible[name]) for name in FIELDS}
    request = SolveIK.Request()
    position = request.target.pose.position
    position.x, position.y, position.z = value['position']
    orientation = request.target.pose.orientation
    orientation.x, orientation.y, orientation.z, orientation.w = value['orientation']
    request.target.header.frame_id = value['frame_id']
    request.goal_type = value['goal_type']
    request.solver = value['solver']
    request.seed.name, request.seed.position = value['seed']
    request.branch = value['branch']
    request.return_all_solutions = draw(st.booleans())
    request.timeout.sec, request.timeout.nanosec = value['timeout']
    request.max_iterations = value['max_iterations']
    request.damping = value['damping']
    request.tolerance = value['tolerance']
    request.joint_limits = value['joint_limits']
    return arm, route, request


@pytest.fixture(scope='module')
def graph():
    with ik_servers(*ARMS, params={'timeout': NODE_TIMEOUT}) as graph:
        yield graph


def check_answer(arm: str, request: SolveIK.Request, response: SolveIK.Response) -> None:
    assert response.error_code.val in VALID_CODES, response.error_code.val
    assert response.message, 'every answer says what happened'
    assert no_nan_in(response), response
    if response.error_code.val == ErrorCode.PARTIAL_SOLUTION:
        # The closest pose above the floor: a real pose, clear of the floor, short of the target.
        q = np.array(response.solution.position)
        assert np.all(np.isfinite(q)) and model(arm).within_limits(q)
        assert response.shortfall > 0.0
        return
    if response.error_code.val != ErrorCode.OK:
        assert not response.solution.position, response.message
        return
    # A success is checked against FK here, with the tolerance the request asked for.
    q = np.array(response.solution.position)
    assert tuple(response.solution.name) == model(arm).joint_names
    assert np.all(np.isfinite(q))
    pose = request.target.pose.position
    target = np.array([pose.x, pose.y, pose.z])
    tolerance = request.tolerance if request.tolerance > 0.0 else 1e-4
    assert np.linalg.norm(fk_position(arm, q) - target) <= tolerance * (1 + 1e-9) + 1e-12
    if request.joint_limits != SolveIK.Request.LIMITS_OFF:
        assert model(arm).within_limits(q)


def probe(graph: IKGraph, arm: str) -> None:
    """Alive: the process runs and a valid request is solved."""
    graph.assert_alive(arm)
    target = [0.5, 0.2, 0.9] if arm == 'pointer3' else [1.0, 0.2, 0.8]
    response = graph.call(arm, None, build_request(target))
    assert response.error_code.val == ErrorCode.OK, response.message


def test_random_and_malformed_requests_all_answered(graph):
    sent: list[int] = []
    codes: dict[str, int] = {}

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(case=requests())
    def fuzz(case: tuple[str, str | None, SolveIK.Request]) -> None:
        arm, route, request = case
        response = graph.call(arm, route, request, timeout=REPLY_BOUND)
        sent.append(response.error_code.val)
        name = ErrorCode(response.error_code.val).name
        codes[name] = codes.get(name, 0) + 1
        check_answer(arm, request, response)
        graph.assert_alive(arm)
        if len(sent) % 100 == 0:
            probe(graph, arm)

    fuzz()
    assert len(sent) >= EXAMPLES, len(sent)
    # The generator reaches the solvers too, not only the validation.
    assert codes.get('OK', 0) >= 50 and codes.get('INVALID_INPUT', 0) >= 50, codes
    print(f'\nfuzz: {len(sent)} requests, codes {dict(sorted(codes.items()))}')
    for arm in ARMS:
        probe(graph, arm)
