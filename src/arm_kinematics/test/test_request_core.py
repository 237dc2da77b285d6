"""The request pipeline without ROS: vector checks, option overrides, the floor rules on the
closed-form path (judging the chosen solution first), and the metrics it reports."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from arm_kinematics.common.transforms import matrix_to_quaternion, quaternion_to_matrix
from arm_kinematics.description.bundled import load_arm_config
from arm_kinematics.description.safety_config import safety_config_of
from arm_kinematics.ik.floor_rules import apply_floor_rules
from arm_kinematics.ik.request import (
    AVOID_DEFAULT,
    AVOID_OFF,
    AVOID_ON,
    IKDispatcher,
    IKRequest,
    resolve_options,
)
from arm_kinematics.ik.result import check_vector, ErrorCode, fast_vector, GoalType
from arm_kinematics.ik.solvers.base import SolveOptions, workspace_of_arm
from arm_kinematics.scene.geometry import SafetyGeometry


@pytest.mark.parametrize('value, expected', [
    ([1.0, 2.0, 3.0], (1.0, 2.0, 3.0)),
    ((1, 2, 3), (1.0, 2.0, 3.0)),
    (np.array([1.0, -2.0, 3.5]), (1.0, -2.0, 3.5)),
    ([1e308, -1e308, 0.0], (1e308, -1e308, 0.0)),    # the sum overflows; each is finite
])
def test_fast_vector_accepts_finite_vectors(value, expected):
    assert fast_vector(value, 3) == expected
    assert all(type(v) is float for v in fast_vector(value, 3))


@pytest.mark.parametrize('value', [
    [1.0, math.nan, 3.0], [math.inf, 0.0, 0.0], [1.0, 2.0], [1.0, 2.0, 3.0, 4.0],
    np.array([1, 2, 3]), np.array([[1.0, 2.0, 3.0]]), 'abc', None, ['a', 'b', 'c'],
])
def test_fast_vector_leaves_everything_else_to_check_vector(value):
    # None means "take the precise path": check_vector then names what is wrong, or
    # accepts what fast_vector does not handle (an integer array).
    assert fast_vector(value, 3) is None
    vector, reason = check_vector(value, 3, 'target')
    assert (vector is None) == bool(reason)


def test_request_without_overrides_runs_with_the_defaults_object():
    # The closed forms validate an options object once; most requests override nothing
    # and must hand the node's defaults on as they are.
    defaults = SolveOptions(timeout=0.5)
    options, reason = resolve_options(IKRequest(position=(1.0, 0.0, 0.5)), defaults)
    assert options is defaults and reason == ''
    options, reason = resolve_options(IKRequest(position=(1.0, 0.0, 0.5), damping=0.2),
                                      defaults)
    assert options.damping == 0.2 and options.timeout == 0.5 and reason == ''
    options, reason = resolve_options(IKRequest(position=(1.0, 0.0, 0.5), damping=math.nan),
                                      defaults)
    assert options is None and 'damping' in reason


class CountingSolver:
    """Wraps a solver and counts its solves (and whether each asked for every solution)."""

    def __init__(self, solver):
        self.solver = solver
        self.labelled = solver.labelled
        self.calls: list[bool] = []

    def solve(self, position, orientation=None, goal=0, seed=None, options=SolveOptions()):
        self.calls.append(options.return_all)
        return self.solver.solve(position, orientation, goal, seed, options)


def _dispatcher(load_arm, arm: str, solver: str = 'analytic') -> IKDispatcher:
    model = load_arm(arm)
    config = load_arm_config(arm)
    geometry = SafetyGeometry(model, safety_config_of(config, arm))
    return IKDispatcher(model, workspace_of_arm(model, config), solver, geometry)


def _targets(model, count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    tips = np.array([model.fk(q)[:3, 3] for q in model.random_configurations(count, rng)])
    # Half of them pushed down, so that many chosen solutions go through the floor.
    tips[::2, 2] -= rng.uniform(0.0, 0.8, size=len(tips[::2]))
    return tips


@pytest.mark.parametrize('return_all', [False, True])
def test_closed_form_answers_equal_the_rules_applied_to_every_solution(load_arm, return_all):
    # The dispatcher judges the chosen solution first and solves for every solution only
    # when it is blocked; its answers must be those of the rules applied to all of them.
    outcomes = set()
    cases = (('pointer3', 'analytic', GoalType.POSITION, ('', 'elbow_up', 'elbow_down'), 200),
             ('six_axis', 'closed_form', GoalType.POSITION, ('',), 60),
             ('six_axis', 'closed_form', GoalType.FULL_POSE, ('',), 40))
    for arm, name, goal, branches, count in cases:
        dispatcher = _dispatcher(load_arm, arm, name)
        solver = dispatcher.solvers[name]
        counting = CountingSolver(solver)
        dispatcher.solvers[name] = counting
        model = dispatcher.model
        seed = np.zeros(model.dof)
        rng = np.random.default_rng(4)
        poses = [model.fk(q) for q in model.random_configurations(count, rng)]
        for branch in branches:
            options = SolveOptions(branch=branch, return_all=return_all)
            for k, pose in enumerate(poses):
                target = pose[:3, 3].copy()
                if k % 2 == 0:      # half pushed down: many chosen solutions are blocked
                    target[2] -= rng.uniform(0.0, 0.8)
                quaternion = matrix_to_quaternion(pose[:3, :3])
                orientation = quaternion_to_matrix(*quaternion) \
                    if goal == GoalType.FULL_POSE else None
                counting.calls.clear()
                answer = dispatcher.solve(
                    IKRequest(position=target.tolist(), orientation=tuple(quaternion),
                              goal=goal, branch=branch, return_all=return_all),
                    SolveOptions(branch=''), seed.copy(), name)
                every = solver.solve(target, orientation, goal, seed,
                                     options.with_changes(return_all=True))
                expected, choice = apply_floor_rules(dispatcher.safety, every, target,
                                                     return_all)
                result = answer.result
                assert (result.code, result.branch, result.reason) == \
                    (expected.code, expected.branch, expected.reason)
                if expected.q is not None:
                    np.testing.assert_allclose(result.q, expected.q, rtol=0.0, atol=1e-12)
                    assert result.position_error == pytest.approx(expected.position_error,
                                                                  abs=1e-12)
                assert [s.label for s in result.solutions] == \
                    [s.label for s in expected.solutions]
                switched = choice is not None and choice.switched
                assert answer.branch_switched == switched
                # One solve when the chosen solution is clear, the solver failed, or it
                # already returned every solution; a second one only when it is blocked.
                assert counting.calls == ([False, True] if switched and not return_all
                                          else [return_all])
                outcomes.add((result.code, switched))
    # The targets reach every path: clear, switched, partial, and refused by the solver.
    assert {(ErrorCode.OK, False), (ErrorCode.OK, True),
            (ErrorCode.PARTIAL_SOLUTION, True)} <= outcomes
    assert any(code not in (ErrorCode.OK, ErrorCode.PARTIAL_SOLUTION)
               for code, _ in outcomes)


def test_alternatives_are_returned_only_when_asked(load_arm):
    dispatcher = _dispatcher(load_arm, 'pointer3')
    request = IKRequest(position=(1.2, 0.3, 0.6), return_all=True)
    answer = dispatcher.solve(request, SolveOptions(), np.zeros(3), 'analytic')
    assert answer.result.success and len(answer.result.solutions) >= 2
    assert answer.result.branch in {s.label for s in answer.result.solutions}


def test_a_numeric_solver_refuses_a_branch_label_in_the_closed_forms_words(load_arm):
    # six_axis: the same label through closed_form (a branch it has), dls and ccd (none).
    dispatcher = _dispatcher(load_arm, 'six_axis', 'dls')
    model = load_arm('six_axis')
    pose = model.fk(np.array([0.2, 0.3, 0.4, 0.1, 0.5, 0.2]))
    full = dict(position=tuple(pose[:3, 3]), goal=int(GoalType.FULL_POSE),
                orientation=tuple(matrix_to_quaternion(pose[:3, :3])))
    seed = np.zeros(6)
    for branch in ('', 'nearest', ' nearest '):
        answer = dispatcher.solve(IKRequest(**full, branch=branch), SolveOptions(), seed, 'dls')
        assert answer.result.success, (branch, answer.result.reason)
    for solver in ('dls', 'ccd'):
        request = IKRequest(**(full if solver == 'dls' else {'position': full['position']}),
                            branch='elbow_up')
        answer = dispatcher.solve(request, SolveOptions(), seed, solver)
        assert answer.result.code == ErrorCode.INVALID_INPUT
        assert answer.result.reason == (f'unknown branch "elbow_up"; valid: nearest (the '
                                        f'{solver} solver has no branches)')
    closed = dispatcher.solve(IKRequest(**full, branch='sideways'), SolveOptions(), seed,
                              'closed_form')
    assert closed.result.code == ErrorCode.INVALID_INPUT
    assert closed.result.reason.startswith('unknown branch "sideways"; valid: nearest, ')


def _central_difference_jacobian(model, q: np.ndarray, step: float = 1e-6) -> np.ndarray:
    """d(tip)/dq (3, n) by central differences through the batched 4×4 FK (not the kernel)."""
    offsets = np.vstack([np.eye(model.dof), -np.eye(model.dof)]) * step
    tips = model.frames_batch(q[None, :] + offsets)[:, -1, :3, 3]
    return ((tips[:model.dof] - tips[model.dof:]) / (2.0 * step)).T


@pytest.mark.parametrize('arm, solver', [('pointer3', 'analytic'), ('six_axis', 'dls'),
                                         ('ccd5', 'ccd'), ('six_axis', 'closed_form')])
def test_reported_metrics_equal_the_singular_values(load_arm, arm, solver):
    # measure() takes the kernel's Jacobian in plain floats and dexterity's closed form;
    # the reference is numpy's SVD of the model's Jacobian: w = Π σ, condition σmax/σmin.
    model = load_arm(arm)
    config = load_arm_config(arm)
    dispatcher = IKDispatcher(model, workspace_of_arm(model, config), solver)
    checked = 0
    for target in _targets(model, 40, 9)[1::2]:
        answer = dispatcher.solve(IKRequest(position=target.tolist()), SolveOptions(),
                                  np.zeros(model.dof), solver)
        if answer.result.q is None:
            continue
        sigma = np.linalg.svd(_central_difference_jacobian(model, answer.result.q),
                              compute_uv=False)
        assert answer.manipulability == pytest.approx(float(np.prod(sigma)), rel=1e-6,
                                                      abs=1e-9)
        assert answer.condition_number == pytest.approx(sigma[0] / sigma[-1], rel=1e-6)
        shoulder = dispatcher.workspace.shoulder
        assert answer.reach_fraction == pytest.approx(
            float(np.linalg.norm(target - shoulder)) / dispatcher.workspace.max_reach,
            rel=1e-12)
        checked += 1
    assert checked >= 10


# A numeric answer through the floor (FLOOR_COLLISION): the reason names only a remedy that
# works, and each case below tries that remedy (or the one it rules out) to prove it.
SIX_FULL_POSE_BELOW = [0.49, -1.66, -0.3, -0.69, 0.87, -2.59]   # rad; forearm below the floor


def _pose_request(model, q: list[float], solver: str) -> IKRequest:
    tip = model.fk(np.array(q))
    return IKRequest(position=tip[:3, 3].tolist(), orientation=matrix_to_quaternion(tip[:3, :3]),
                     goal=GoalType.FULL_POSE, solver=solver)


def test_floor_collision_below_the_tool_radius_says_raise_the_target(load_arm):
    dispatcher = _dispatcher(load_arm, 'six_axis', 'dls')
    zero = np.zeros(6)
    for target, where in (([1.0, 0.2, -0.3], '0.300 m below the floor'),
                          ([1.0, 0.2, 0.01], 'only 0.010 m above the floor')):
        result = dispatcher.solve(IKRequest(position=target), SolveOptions(), zero).result
        assert result.code == ErrorCode.FLOOR_COLLISION, result.reason
        assert where in result.reason and 'tool_link, which ends at the tip, has a radius ' \
            'of 0.035 m; raise the target to z >= 0.035 m' in result.reason, result.reason
        # The remedies it used to name cannot help: the closed form stops short of the target.
        assert 'closed' not in result.reason and 'seed' not in result.reason.split('; ')[-1]
        closed = dispatcher.solve(IKRequest(position=target, solver='closed_form'),
                                  SolveOptions(), zero).result
        assert closed.code == ErrorCode.PARTIAL_SOLUTION, closed.reason
    # The one it names does: just above that height the same solver reaches the point.
    raised = dispatcher.solve(IKRequest(position=[1.0, 0.2, 0.05]), SolveOptions(), zero)
    assert raised.result.code == ErrorCode.OK, raised.result.reason


def test_floor_collision_names_the_closed_form_only_when_it_reaches_above_the_floor(load_arm):
    dispatcher = _dispatcher(load_arm, 'six_axis', 'dls')
    zero = np.zeros(6)
    target = [-0.52, -1.66, 0.13]
    result = dispatcher.solve(IKRequest(position=target, solver='ccd'), SolveOptions(),
                              zero).result
    assert result.code == ErrorCode.FLOOR_COLLISION, result.reason
    assert re.match(r'the ccd solutions found from \d+ seeds put forearm_link', result.reason)
    assert 'the closed_form solver reaches this target above the floor (branch ' \
        'back_up_noflip)' in result.reason, result.reason
    closed = dispatcher.solve(IKRequest(position=target, solver='closed_form',
                                        branch='back_up_noflip'), SolveOptions(), zero).result
    assert closed.code == ErrorCode.OK and closed.branch == 'back_up_noflip', closed.reason
    assert dispatcher.safety.floor_clearance(closed.q)[0] >= 0.0
    # Its joints as the seed: the numeric solver then finds a pose above the floor too.
    seeded = dispatcher.solve(IKRequest(position=target, solver='ccd',
                                        seed_names=list(dispatcher.model.joint_names),
                                        seed_positions=closed.q.tolist()),
                              SolveOptions(), zero).result
    assert seeded.code == ErrorCode.OK, seeded.reason


def test_floor_collision_of_a_pose_no_solution_clears_says_move_the_target(load_arm):
    # Six joints and a full pose: the closed form's 8 solutions are every pose there is,
    # so neither it nor another seed can help.
    dispatcher = _dispatcher(load_arm, 'six_axis', 'dls')
    model = dispatcher.model
    result = dispatcher.solve(_pose_request(model, SIX_FULL_POSE_BELOW, 'dls'), SolveOptions(),
                              np.zeros(6)).result
    assert result.code == ErrorCode.FLOOR_COLLISION, result.reason
    assert result.reason.endswith('; all 8 closed_form solutions go below the floor too: move '
                                  'the target (closed_form answers the closest pose above the '
                                  'floor instead, as PARTIAL_SOLUTION)'), result.reason
    closed = dispatcher.solve(_pose_request(model, SIX_FULL_POSE_BELOW, 'closed_form'),
                              SolveOptions(), np.zeros(6)).result
    assert closed.code == ErrorCode.PARTIAL_SOLUTION, closed.reason


def test_floor_collision_without_a_closed_form_suggests_only_a_seed(load_arm):
    # ccd5 has no closed-form solver; a point 10 cm above its base plate is reached only by
    # folding the forearm back, and the poses its seeds find put the forearm through the floor.
    dispatcher = _dispatcher(load_arm, 'ccd5', 'dls')
    result = dispatcher.solve(IKRequest(position=[0.01, 0.01, 0.1]), SolveOptions(),
                              np.zeros(5)).result
    assert result.code == ErrorCode.FLOOR_COLLISION, result.reason
    assert result.reason.endswith('below the floor; a seed near a pose above the floor may '
                                  'still find one'), result.reason
    assert 'closed' not in result.reason


# ---------------------------------------------------------------------- avoid_collisions
UR5_Q = np.array([0.3, -1.2, 1.4, -1.0, -1.5, 0.2])


@pytest.fixture(scope='module')
def ur5_dispatcher():
    """A UR5 dispatcher with its URDF meshes and a ball where the elbow of the solution
    nearest UR5_Q is (other branches bend the elbow elsewhere)."""
    from arm_kinematics.arm import load_arm
    from arm_kinematics.scene.objects import Scene
    from arm_testing.real_arms import mesh_root, REAL_ARMS
    spec = REAL_ARMS['ur5']
    arm = load_arm(spec.urdf(), None, spec.base, spec.tip)
    dispatcher = arm.dispatcher(search_paths=[mesh_root()])
    checker = dispatcher.collision_checker()
    assert not checker.warnings
    elbow = checker.link_poses(UR5_Q)['forearm_link'][:3, 3]
    scene = Scene(arm.model.base_link)
    scene.add({'id': 'post', 'type': 'sphere', 'radius': 0.06, 'pose': {'xyz': elbow.tolist()}})
    dispatcher.scene = scene
    return arm, dispatcher


def _ur5_request(arm, solver: str, avoid: int) -> IKRequest:
    pose = arm.model.fk(UR5_Q)
    return IKRequest(position=pose[:3, 3], orientation=matrix_to_quaternion(pose[:3, :3]),
                     goal=GoalType.FULL_POSE, solver=solver, avoid_collisions=avoid,
                     seed_names=arm.model.joint_names,
                     seed_positions=list(UR5_Q + 0.05))


@pytest.mark.parametrize('solver', ['closed_form', 'dls'])
def test_avoid_collisions_rejects_a_colliding_solution_and_finds_a_clear_one(ur5_dispatcher,
                                                                             solver):
    arm, dispatcher = ur5_dispatcher
    checker = dispatcher.collision_checker()
    off = dispatcher.solve(_ur5_request(arm, solver, AVOID_OFF), SolveOptions(), arm.home)
    assert off.result.success and checker.check(off.result.q).scene_collision
    # AVOID_DEFAULT is the config's ik.avoid_collisions: absent, so off.
    default = dispatcher.solve(_ur5_request(arm, solver, AVOID_DEFAULT), SolveOptions(),
                               arm.home)
    np.testing.assert_allclose(default.result.q, off.result.q)
    on = dispatcher.solve(_ur5_request(arm, solver, AVOID_ON), SolveOptions(), arm.home)
    assert on.result.success, on.result.reason
    assert checker.is_free(on.result.q)
    pose, target = arm.model.fk(on.result.q), arm.model.fk(UR5_Q)
    np.testing.assert_allclose(pose[:3, 3], target[:3, 3], atol=1e-4)
    assert 'the first solution collided (forearm_link–post' in on.result.reason


def test_avoid_collisions_says_collision_with_the_closest_pair_when_none_is_clear(
        ur5_dispatcher):
    arm, dispatcher = ur5_dispatcher
    from arm_kinematics.scene.objects import Scene
    caged = Scene(arm.model.base_link)
    caged.add_all([*dispatcher.scene.as_list(),
                   {'id': 'cage', 'type': 'sphere', 'radius': 0.08,
                    'pose': {'xyz': arm.model.fk(UR5_Q)[:3, 3].tolist()}}])
    kept, dispatcher.scene = dispatcher.scene, caged
    try:
        for solver in ('closed_form', 'dls'):
            answer = dispatcher.solve(_ur5_request(arm, solver, AVOID_ON), SolveOptions(),
                                      arm.home)
            assert answer.result.code == ErrorCode.COLLISION
            assert 'closest pair forearm_link–post at -86' in answer.result.reason
            assert 'cage' in answer.result.reason and solver in answer.result.reason
    finally:
        dispatcher.scene = kept


def test_avoid_collisions_is_validated_and_needs_a_checker(load_arm):
    dispatcher = _dispatcher(load_arm, 'pointer3')
    target = (1.0, 0.2, 0.9)
    bad = dispatcher.solve(IKRequest(position=target, avoid_collisions=3), SolveOptions(),
                           np.zeros(3))
    assert bad.result.code == ErrorCode.INVALID_INPUT and 'avoid_collisions 3' in \
        bad.result.reason
    none = dispatcher.solve(IKRequest(position=target, avoid_collisions=AVOID_ON),
                            SolveOptions(), np.zeros(3))
    assert none.result.code == ErrorCode.INVALID_INPUT and 'no collision checker' in \
        none.result.reason


def test_the_config_default_turns_avoidance_on(ur5_dispatcher):
    from arm_kinematics.arm import ArmConfig
    from arm_kinematics.arm import load_arm as load
    from arm_testing.real_arms import REAL_ARMS
    arm, dispatcher = ur5_dispatcher
    spec = REAL_ARMS['ur5']
    on_by_default = load(spec.urdf(), ArmConfig.from_mapping({'ik': {'avoid_collisions': True}}),
                         spec.base, spec.tip).dispatcher()
    on_by_default.scene = dispatcher.scene
    answer = on_by_default.solve(_ur5_request(arm, 'closed_form', AVOID_DEFAULT),
                                 SolveOptions(), arm.home)
    assert answer.result.success and 'the first solution collided' in answer.result.reason
