"""Scripted sequences and the pick-and-place state machines, without ROS."""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest

from arm_kinematics.description.bundled import load_arm_config, load_safety_config
from arm_kinematics.ik.request import IKDispatcher
from arm_kinematics.ik.result import ErrorCode
from arm_kinematics.ik.solvers.base import workspace_from_model
from arm_kinematics.scene.geometry import SafetyGeometry
from arm_kinematics.tasks.console import ask_points
from arm_kinematics.tasks.current_pose import CurrentPose, DEFAULT_WAIT, PoseState
from arm_kinematics.tasks.pick_place import (
    Ball,
    CCD_PICK_PLACE,
    check_reachable,
    joint_vector,
    MachineState,
    MANIPULATOR3D_PICK_PLACE,
    PickPlaceMachine,
    sequence_points,
)
from arm_kinematics.tasks.sequences import (
    load_sequence,
    MOTION_LAWS,
    parse_point_text,
    parse_sequence,
    POINT_LAWS,
    resolve_sequence_path,
    SequenceError,
    StepKind,
    with_points,
)

CONFIG = Path(__file__).resolve().parents[2] / 'arm_bringup' / 'config'
FILES = {'ccd5': CONFIG / 'ccd5_pick_place.yaml',
         'manipulator3d': CONFIG / 'manipulator3d_pick_place.yaml'}
SPECS = {'ccd5': CCD_PICK_PLACE, 'manipulator3d': MANIPULATOR3D_PICK_PLACE}


def _dispatcher(arm, load_arm) -> IKDispatcher:
    model = load_arm(arm)
    minimum = (load_arm_config(arm).get('ik') or {}).get('min_height_above_shoulder')
    workspace = workspace_from_model(model, None if minimum is None else float(minimum))
    return IKDispatcher(model, workspace, load_arm_config(arm)['ik']['default_solver'])


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / 'sequence.yaml'
    path.write_text(text, encoding='utf-8')
    return path


MINIMAL = """
points: {a: [0.5, 0.0, 0.3], b: [0.4, 0.2, 0.3]}
steps:
  - {move: a}
  - {attach: ball}
  - {move: b}
  - {detach: ball}
"""


# ---------------------------------------------------------------- the shipped files
@pytest.mark.parametrize('arm', ['ccd5', 'manipulator3d'])
def test_shipped_sequences_fit_their_cycles(arm, load_arm):
    sequence = load_sequence(FILES[arm])
    machine = PickPlaceMachine(sequence, load_arm(arm))
    assert sequence.arm == arm
    assert machine.spec == SPECS[arm]
    kinds = [step.kind for step in sequence.steps]
    assert kinds.count(StepKind.ATTACH) == kinds.count(StepKind.DETACH) == 1


@pytest.mark.parametrize('arm', ['ccd5', 'manipulator3d'])
def test_shipped_points_are_reachable_and_clear_of_the_floor(arm, load_arm):
    sequence = load_sequence(FILES[arm])
    model = load_arm(arm)
    geometry = SafetyGeometry(model, load_safety_config(arm))
    verdicts = check_reachable(_dispatcher(arm, load_arm), sequence_points(sequence),
                               joint_vector(sequence, model, 'home'), geometry=geometry)
    assert verdicts and all(v.ok for v in verdicts), [v.reason for v in verdicts]
    for verdict in verdicts:
        assert model.fk(verdict.q)[:3, 3] == pytest.approx(verdict.position, abs=1e-3)
        if geometry.floor_enabled:
            # The file's comment promises 0.1 m of clearance for ccd5.
            assert geometry.check_pose(verdict.q).min_floor_clearance >= 0.1


# ---------------------------------------------------------------- malformed files
@pytest.mark.parametrize('text, message', [
    ('steps: [{jump: a}]\npoints: {a: [0, 0, 1]}', "unknown key 'jump'"),
    ('points: {a: [0.5, .nan, 0.3]}\nsteps: [{move: a}]', 'points.a[1]: must be finite'),
    ('points: {a: [0.5, .inf, 0.3]}\nsteps: [{move: a}]', 'points.a[1]: must be finite'),
    ('points: {a: [0.5, 0.3]}\nsteps: [{move: a}]', 'points.a: must be a list of 3 numbers'),
    ('points: {a: [0.5, 0.0, 0.3]}', 'steps: missing'),
    ('points: {a: [0.5, 0.0, 0.3]}\nsteps: []', 'steps: must be a non-empty list'),
    ('points: {a: [0.5, 0.0, 0.3]}\nsteps: [{move: b}]', "'b' is neither a pose nor a point"),
    ('points: {a: [0.5, 0.0, 0.3]}\nsteps: [{move: a, wait: 1}]', 'exactly one of'),
    ('points: {a: [0.5, 0.0, 0.3]}\nsteps: [{phase: X}]', 'found none'),
    ('points: {a: [0.5, 0.0, 0.3]}\nsteps: [{move: a}, {wait: -1}]', 'wait: -1 is outside'),
    ('points: {a: [0.5, 0.0, 0.3]}\nsteps: [{move: a}, {wait: .nan}]', 'wait: must be finite'),
    ('points: {a: [0.5, 0.0, 0.3]}\nsteps: [{move: a, duration: .nan}]',
     'duration: must be finite'),
    ('points: {a: [0.5, 0.0, 0.3]}\nsteps: [{move: a, duration: true}]',
     'duration: must be a number'),
    ('points: {a: [0.5, 0.0, 0.3]}\nsteps: [{move: a, speed_scale: 2}]', 'speed_scale: 2 is'),
    ('points: {a: [0.5, 0.0, 0.3]}\nsteps: [{move: a, motion_law: teleport}]',
     "unknown law 'teleport'"),
    ('poses: {h: {j: 0.0}}\nsteps: [{move: h, motion_law: linear_cartesian}]',
     'needs a point'),
    ('poses: {h: {j: 0.0}}\ndefaults: {motion_law: speed_cap}\nsteps: [{move: h}]',
     'speed_cap follows the tool position'),
    ('points: {a: [0.5, 0.0, 0.3]}\nsteps: [{move: a}, {wait: 1, duration: 2}]',
     'only apply to move steps'),
    ('points: {a: [0.5, 0.0, 0.3]}\nsteps: [{move: a}, {attach: cup}]', "unknown object 'cup'"),
    ('points: {a: [0.5, 0.0, 0.3]}\nsteps: [{attach: ball}, {move: a}]', 'attach before any'),
    ('points: {a: [0.5, 0.0, 0.3]}\nsteps: [{move: a}, {detach: ball}]', 'detach while no'),
    ('points: {a: [0.5, 0.0, 0.3]}\nsteps: [{move: a}, {attach: ball}, {attach: ball}]',
     'already attached'),
    ('points: {a: [0.5, 0.0, 0.3]}\nsteps: [{move: a}, {attach: ball}]',
     'ends with the ball attached'),
    ('points: {a: [0.5, 0.0, 0.3]}\nsteps: [{wait: 1}]', 'no move'),
    ('poses: {a: {j: 0}}\npoints: {a: [0.5, 0.0, 0.3]}\nsteps: [{move: a}]',
     'both as a pose and as a point'),
    ('points: {2a: [0.5, 0.0, 0.3]}\nsteps: [{move: 2a}]', 'is not a name'),
    ('colour: red\nsteps: [{move: a}]', "unknown key 'colour'"),
    ('points: {a: [0.5, 0.0, 0.3]}\nball: {radius: 0}\nsteps: [{move: a}]', 'ball.radius'),
    ('- just\n- a list', 'document: must be a mapping'),
    ('steps: [{move: a}', 'not valid YAML'),
])
def test_malformed_files_are_refused_with_the_key(text, message, tmp_path):
    path = _write(tmp_path, text)
    with pytest.raises(SequenceError) as error:
        load_sequence(path)
    assert message in str(error.value)
    assert str(path) in str(error.value)


def test_missing_file_names_where_it_looked(tmp_path):
    with pytest.raises(SequenceError, match='not found'):
        resolve_sequence_path('nothing.yaml', [tmp_path])
    (tmp_path / 'mine.yaml').write_text(MINIMAL, encoding='utf-8')
    assert resolve_sequence_path('mine', [tmp_path]) == tmp_path / 'mine.yaml'
    with pytest.raises(SequenceError, match='cannot be read'):
        load_sequence(tmp_path / 'absent.yaml')


@pytest.mark.parametrize('edit, message', [
    (lambda t: t.replace('{phase: LIFT, move: lift}', '{phase: HOME, move: lift}'),
     'do not follow the ccd_pick_place cycle'),
    (lambda t: t.replace('{phase: PICK, attach: ball}', '{phase: LIFT, attach: ball}'),
     'attach belongs in PICK, not in LIFT'),
    (lambda t: t.replace('{phase: PLACE, detach: ball}', '{phase: HOME, detach: ball}'),
     'detach belongs in PLACE, not in HOME'),
    (lambda t: t.replace('phase: LIFT', 'phase: PLACE'),
     'phases PICK -> PLACE -> HOME do not follow'),
    (lambda t: t.replace('cycle: ccd_pick_place', 'cycle: juggling'), "unknown cycle 'juggling'"),
])
def test_steps_out_of_the_state_machine_are_refused(edit, message, tmp_path, load_arm):
    text = edit(FILES['ccd5'].read_text(encoding='utf-8'))
    with pytest.raises(SequenceError, match=message):
        PickPlaceMachine(load_sequence(_write(tmp_path, text)), load_arm('ccd5'))


def test_manipulator3d_cycle_needs_start_and_goal(tmp_path, load_arm):
    text = FILES['manipulator3d'].read_text(encoding='utf-8')
    text = text.replace('  start: [0.60, -0.30, 0.10]', '  begin: [0.60, -0.30, 0.10]')
    text = text.replace('move: start', 'move: begin')
    with pytest.raises(SequenceError, match='needs the point.*start'):
        PickPlaceMachine(load_sequence(_write(tmp_path, text)), load_arm('manipulator3d'))


@pytest.mark.parametrize('pose, message', [
    ('{base_yaw: 0.0, shoulder_pitch: 0.5}', 'missing elbow_pitch'),
    ('{base_yaw: 0.0, shoulder_pitch: 0.5, elbow_pitch: 0.1, wrist: 0}', 'unknown wrist'),
    ('{base_yaw: 0.0, shoulder_pitch: -0.5, elbow_pitch: 0.1}', 'shoulder_pitch = -0.5000 rad'),
])
def test_poses_are_checked_against_the_arm(pose, message, tmp_path, load_arm):
    text = f'poses: {{home: {pose}}}\nsteps: [{{move: home}}]'
    with pytest.raises(SequenceError, match=message):
        PickPlaceMachine(load_sequence(_write(tmp_path, text)), load_arm('manipulator3d'))


# ---------------------------------------------------------------- the state machines
def _run(machine: PickPlaceMachine, tips=None, limit: int = 100) -> list[tuple]:
    """Complete steps (with the target as the tip) until the machine stops or ``limit``."""
    visited = []
    while machine.current is not None and len(visited) < limit:
        step = machine.current
        visited.append((machine.cycle, step.phase, step.kind.value))
        tip = machine.target_of(step) if step.kind == StepKind.MOVE else None
        assert machine.complete(tips(step) if tips else tip) == ''
    return visited


def test_manipulator3d_cycle_visits_its_states_in_order(load_arm):
    machine = PickPlaceMachine(load_sequence(FILES['manipulator3d']), load_arm('manipulator3d'),
                               cycles=2)
    machine.start()
    visited = _run(machine)
    assert machine.state == MachineState.DONE
    phases = [phase for cycle, phase, _ in visited if cycle == 1]
    assert list(dict.fromkeys(zip(phases, phases[1:]))) == list(
        zip(MANIPULATOR3D_PICK_PLACE.phases, MANIPULATOR3D_PICK_PLACE.phases[1:]))
    start, goal = machine.sequence.point('start'), machine.sequence.point('goal')
    assert [(e.cycle, e.phase, e.attached) for e in machine.events] == [
        (1, 'PICK', True), (1, 'PLACE', False), (2, 'PICK', True), (2, 'PLACE', False)]
    assert machine.events[0].position == pytest.approx(start)
    assert machine.events[1].position == pytest.approx(goal)


def test_ccd_cycle_ball_follows_the_tip_and_stays_where_placed(load_arm):
    machine = PickPlaceMachine(load_sequence(FILES['ccd5']), load_arm('ccd5'), cycles=1)
    machine.start()
    pick = machine.sequence.point('pick')
    assert machine.ball.position == pytest.approx(pick) and not machine.ball.attached
    machine.complete(pick + [0.005, 0.0, 0.0])       # PICK: move, 5 mm off
    assert machine.complete() == ''                  # PICK: attach at the last tip
    assert machine.ball.attached
    assert machine.ball.position == pytest.approx(pick + [0.005, 0.0, 0.0])
    for tip in ([0.6, -0.3, 0.4], [0.6, -0.3, 0.5]):  # on the way up, the ball comes along
        assert machine.follow(tip)
        assert machine.ball.position == pytest.approx(tip)
    assert machine.phase == 'LIFT'
    machine.complete(machine.sequence.point('lift'))
    machine.complete(machine.sequence.point('place'))
    machine.complete()                               # PLACE: detach
    place = machine.sequence.point('place')
    assert not machine.ball.attached and machine.ball.position == pytest.approx(place)
    assert not machine.follow([0.0, 0.0, 1.0])       # free: it stays where it was put
    assert machine.ball.position == pytest.approx(place)
    assert machine.phase == 'HOME'
    machine.complete()
    assert machine.state == MachineState.DONE


def test_cycles_zero_repeats_with_a_fresh_ball(load_arm):
    machine = PickPlaceMachine(load_sequence(FILES['ccd5']), load_arm('ccd5'), cycles=0)
    machine.start()
    visited = _run(machine, limit=3 * len(machine.sequence.steps) + 1)
    assert machine.state == MachineState.RUNNING and machine.cycle == 4
    assert {cycle for cycle, _, _ in visited} == {1, 2, 3, 4}
    assert machine.ball.position == pytest.approx(machine.sequence.point('pick'))
    machine.stop('test over')
    assert machine.state == MachineState.STOPPED and machine.current is None


def test_attach_fails_when_the_tip_is_not_at_the_ball(load_arm):
    machine = PickPlaceMachine(load_sequence(FILES['ccd5']), load_arm('ccd5'),
                               grasp_tolerance=0.02)
    machine.start()
    machine.complete(machine.sequence.point('pick') + [0.0, 0.0, 0.1])
    reason = machine.complete()
    assert 'tip is 0.100 m from it' in reason
    assert machine.state == MachineState.FAILED and machine.reason == reason
    assert not machine.ball.attached and machine.current is None


def test_new_points_apply_from_the_next_cycle(load_arm):
    sequence = load_sequence(FILES['manipulator3d'])
    machine = PickPlaceMachine(sequence, load_arm('manipulator3d'), cycles=2)
    machine.start()
    moved = with_points(sequence, {'start': [0.5, 0.2, 0.2]})
    machine.replace_sequence(moved)
    assert machine.sequence.point('start') == pytest.approx([0.6, -0.3, 0.1])
    _run(machine, limit=len(sequence.steps))
    assert machine.cycle == 2
    assert machine.sequence.point('start') == pytest.approx([0.5, 0.2, 0.2])
    assert machine.ball.position == pytest.approx([0.5, 0.2, 0.2])


def test_machine_arguments_are_validated(load_arm):
    sequence = load_sequence(FILES['ccd5'])
    with pytest.raises(ValueError, match='cycles'):
        PickPlaceMachine(sequence, load_arm('ccd5'), cycles=-1)
    with pytest.raises(ValueError, match='grasp_tolerance'):
        PickPlaceMachine(sequence, load_arm('ccd5'), grasp_tolerance=math.nan)
    machine = PickPlaceMachine(sequence, load_arm('ccd5'))
    assert machine.complete() == 'no step is running (state idle)'


def test_ball_attach_needs_a_known_tip():
    ball = Ball(0.03, np.array([0.5, 0.0, 0.1]))
    assert 'not known' in ball.attach([math.nan, 0.0, 0.0], 0.02)
    assert ball.attach([0.51, 0.0, 0.1], 0.02) == ''
    assert ball.attached


# ---------------------------------------------------------------- the current pose
HOME_Q = [0.0, 0.7853981633974483, -1.5707963267948966]   # manipulator3d_pick_place's home
START_Q = [-0.46364762, 0.94289107, -1.82347659]          # its START [0.6, -0.3, 0.1] m


def test_a_results_final_state_beats_joint_states_stamped_before_it():
    pose = CurrentPose()
    assert pose.measured(HOME_Q, 10.0)          # before any move: any joint state counts
    pose.move_ended(12.0, START_Q)
    assert pose.state(0.0) == PoseState.CURRENT
    assert pose.fix.source == 'result' and pose.fix.stamp == 12.0
    # The states sent while the arm was still at home, delivered after the result.
    assert not pose.measured(HOME_Q, 11.99)
    assert pose.positions == pytest.approx(START_Q)
    # A state stamped after the result is newer still (a real arm's measured end).
    later = [v + 0.001 for v in START_Q]
    assert pose.measured(later, 12.01)
    assert pose.fix.source == 'joint_states' and pose.positions == pytest.approx(later)
    assert not pose.measured(START_Q, 12.005)    # after the result, but older than that
    assert pose.positions == pytest.approx(later)
    assert not pose.measured([math.nan, 0.0, 0.0], 13.0)
    pose.positions[0] = 5.0                      # a copy: the fix stays as it was
    assert pose.positions == pytest.approx(later)


def test_without_a_final_state_the_decision_waits_for_a_later_joint_state():
    pose = CurrentPose(wait=0.5)
    pose.move_ended(20.0)
    assert pose.positions is None
    assert pose.state(100.0) == PoseState.WAITING            # the wait starts here
    assert not pose.measured(HOME_Q, 19.9)                   # stamped before: not current
    assert pose.state(100.4) == PoseState.WAITING
    assert pose.measured(START_Q, 20.0)                      # stamped at the result: current
    assert pose.state(100.45) == PoseState.CURRENT
    assert pose.positions == pytest.approx(START_Q)


def test_a_wait_that_ends_without_a_current_pose_says_why():
    pose = CurrentPose(wait=0.5)
    assert pose.state(1.0) == PoseState.WAITING
    assert pose.state(1.5) == PoseState.TIMED_OUT
    assert pose.timeout_reason() == 'no joint state came within 0.5 s'
    pose.move_ended(30.0)             # a result without a final state: a new wait
    pose.wait = 2.0
    assert pose.state(5.0) == PoseState.WAITING
    assert pose.state(6.9) == PoseState.WAITING
    pose.wait = 0.1                   # serves the next wait; this one keeps its deadline
    assert pose.state(7.0) == PoseState.TIMED_OUT
    assert pose.state(50.0) == PoseState.TIMED_OUT            # stays so: no second wait
    assert pose.timeout_reason() == (
        "no joint state stamped after the last move's result came within 2 s, and the result "
        'carried no final state')
    assert not pose.measured(START_Q, 0.0)    # unstamped: cannot show it is after the result
    assert pose.measured(START_Q, 30.5)
    assert pose.state(50.0) == PoseState.CURRENT
    pose.move_ended(31.0, [math.inf, 0.0, 0.0])   # a final state that is not finite: none
    assert pose.positions is None and pose.state(51.0) == PoseState.WAITING


@pytest.mark.parametrize('wait', [0.0, -1.0, math.nan, math.inf])
def test_the_wait_must_be_a_positive_time(wait):
    with pytest.raises(ValueError, match='finite number > 0 s'):
        CurrentPose(wait)
    pose = CurrentPose()
    with pytest.raises(ValueError, match='finite number > 0 s'):
        pose.wait = wait
    assert pose.wait == DEFAULT_WAIT


def test_attach_after_a_move_judges_the_results_end_not_the_last_joint_state(load_arm):
    """Issue 20 without ROS: the START result is taken before the joint states of the move;
    the last one received shows home, 0.350 m from the ball."""
    model = load_arm('manipulator3d')
    sequence = with_points(load_sequence(FILES['manipulator3d']),
                           {'start': model.fk(START_Q)[:3, 3]})
    machine = PickPlaceMachine(sequence, model)
    pose = CurrentPose()
    machine.start()

    def tip() -> np.ndarray:
        return model.fk(pose.positions)[:3, 3]
    pose.measured(HOME_Q, 1.0)
    machine.complete(tip())                            # HOME: already there
    pose.move_ended(3.0, START_Q)                      # START done (its result)
    pose.measured(HOME_Q, 2.5)                         # a late state from home
    machine.complete(tip())
    assert machine.phase == 'PICK'
    stale = model.fk(HOME_Q)[:3, 3]
    assert np.linalg.norm(stale - machine.ball.position) == pytest.approx(0.350, abs=1e-3)
    assert machine.complete(tip()) == ''               # PICK: attach at the move's end
    assert machine.ball.attached
    assert machine.ball.position == pytest.approx(sequence.point('start'))


# ---------------------------------------------------------------- reachability
@pytest.mark.parametrize('point, code, words', [
    ([1.5, 0.0, 0.2], ErrorCode.OUT_OF_REACH, 'maximum reach 1.100 m'),
    ([0.6, -0.3, -0.1], ErrorCode.BELOW_MIN_HEIGHT, 'needs at least 0.000 m'),
    ([0.05, 0.0, 0.05], ErrorCode.INSIDE_INNER_HOLE, 'inside the inner hole'),
    ([math.nan, 0.0, 0.2], ErrorCode.INVALID_INPUT, 'must be finite'),
    ([1e308, 1e308, 0.2], ErrorCode.OUT_OF_REACH, 'maximum reach'),
])
def test_unreachable_start_is_refused_with_the_reason(point, code, words, load_arm):
    verdict, = check_reachable(_dispatcher('manipulator3d', load_arm), {'start': point},
                               [0.0, 0.785, -1.571])
    assert verdict.code == code and not verdict.ok
    assert verdict.reason.startswith('START [') and words in verdict.reason


def test_floor_refuses_a_ccd5_point_whose_solution_dips_below_it(load_arm):
    model = load_arm('ccd5')
    geometry = SafetyGeometry(model, load_safety_config('ccd5'))
    low, fine = check_reachable(_dispatcher('ccd5', load_arm),
                                {'pick': [0.6, 0.0, 0.01], 'place': [1.0, 0.0, 0.1]},
                                [0.0, 0.35, 0.7, 0.7, 0.0], geometry=geometry)
    assert low.code == ErrorCode.FLOOR_COLLISION and 'below the floor' in low.reason
    assert fine.ok, fine.reason


def test_motion_laws_match_the_executor():
    laws = pytest.importorskip('arm_kinematics.motion.laws')
    assert set(MOTION_LAWS) == set(laws.LAWS)
    assert set(laws.CARTESIAN_LAWS) <= set(POINT_LAWS)


# ---------------------------------------------------------------- overrides and input
def test_with_points_overrides_and_validates():
    sequence = parse_sequence(__import__('yaml').safe_load(MINIMAL), 'mem')
    moved = with_points(sequence, {'a': (0.1, 0.2, 0.3)})
    assert moved.point('a') == pytest.approx([0.1, 0.2, 0.3])
    assert sequence.point('a') == pytest.approx([0.5, 0.0, 0.3])   # the original is unchanged
    with pytest.raises(SequenceError, match="no point 'start'"):
        with_points(sequence, {'start': (0.1, 0.2, 0.3)})
    with pytest.raises(SequenceError, match='must be finite'):
        with_points(sequence, {'a': (0.1, math.inf, 0.3)})


@pytest.mark.parametrize('text, expected', [
    ('0.6 -0.3 0.1', [0.6, -0.3, 0.1]),
    ('0.6, -0.3, 0.1\n', [0.6, -0.3, 0.1]),
    ('[0.6, -0.3, 0.1]', [0.6, -0.3, 0.1]),
    ('0.6 -0.3', 'expected 3 numbers'),
    ('a b c', 'is not 3 numbers'),
    ('nan 0 0', 'must be finite'),
])
def test_console_points(text, expected):
    point, reason = parse_point_text(text)
    if isinstance(expected, str):
        assert point is None and expected in reason
    else:
        assert point == pytest.approx(expected) and reason == ''


def test_console_asks_until_reachable_and_keeps_defaults(load_arm):
    dispatcher = _dispatcher('manipulator3d', load_arm)

    def check(name, point):
        return check_reachable(dispatcher, {name: point}, [0.0, 0.785, -1.571])[0]
    defaults = {'start': np.array([0.6, -0.3, 0.1]), 'goal': np.array([0.45, 0.45, 0.15])}
    output = io.StringIO()
    answers = ask_points(['start', 'goal'], defaults, check,
                         io.StringIO('1.5 0 0.2\n0.5 0.2\n0.5, -0.2, 0.15\n\n'), output)
    assert answers['start'] == pytest.approx([0.5, -0.2, 0.15])
    assert answers['goal'] == pytest.approx([0.45, 0.45, 0.15])   # Enter keeps the default
    text = output.getvalue()
    assert 'START [1.500, 0.000, 0.200] m is unreachable' in text
    assert 'maximum reach 1.100 m' in text
    assert 'not a point: expected 3 numbers' in text
    assert text.count('GOAL x y z in m [0.450, 0.450, 0.150]: ') == 1
    ended = ask_points(['start', 'goal'], defaults, check, io.StringIO(''), io.StringIO())
    assert ended['start'] == pytest.approx(defaults['start'])       # end of input
    assert ended['goal'] == pytest.approx(defaults['goal'])
