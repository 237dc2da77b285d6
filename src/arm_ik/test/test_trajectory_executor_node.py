"""trajectory_executor in its own process, over DDS: the laws' shapes as a subscriber sees them,
validation failures at the action client, preempt and cancel, the watchdog, the emergency
stop, and both controller outputs checked by a subscriber standing in for the controller.

The executors are started once per module (each test first moves to a known pose).
"""

from __future__ import annotations

import math
import time

from action_msgs.msg import GoalStatus
import numpy as np
import pytest

from arm_kinematics.motion.laws import min_jerk
from arm_testing.motion_harness import max_step_ratio, MotionClient, stamp_of, wait_until
from arm_testing.ros_harness import config_file, DomainClaim

SIX = ('base_yaw', 'shoulder_pitch', 'elbow_pitch', 'wrist_roll', 'wrist_pitch', 'tool_roll')
SIX_HOME = np.array([0.0, 0.35, 0.9, 0.0, 0.6, 0.0])
# The controller's joint order differs from the chain order on purpose.
SIX_CONTROLLER = ('tool_roll', 'base_yaw', 'wrist_pitch', 'shoulder_pitch', 'wrist_roll',
                  'elbow_pitch')
POINTER = ('base_yaw', 'shoulder_pitch', 'elbow_pitch')
POINTER_HOME = np.array([0.0, 0.5235987755982988, -1.0471975511965976])
SUCCEEDED, CANCELED, ABORTED = (GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_CANCELED,
                                GoalStatus.STATUS_ABORTED)
RUNNING, FOLLOWING, HOLDING, ESTOP = 1, 2, 3, 4          # ExecutorStatus states


@pytest.fixture(scope='module')
def domain():
    claim = DomainClaim()
    yield claim
    claim.release()


@pytest.fixture(scope='module')
def group(domain):
    from arm_bringup.process_group import ProcessGroup
    processes = ProcessGroup(env=domain.environment())
    yield processes
    processes.close()


def _executor(domain, group, urdf_of, arm: str, joints: tuple[str, ...], params: dict,
              **client_options):
    """A trajectory_executor for ``arm`` under /<arm> (its URDF and configuration plus
    ``params``) and a client of it once its action server is up: (client, process)."""
    process = group.start_node('arm_ik', 'trajectory_executor', namespace=f'/{arm}', params={
        'robot_description': urdf_of(arm), 'arm': arm, 'arm_config': config_file(arm),
        **params})
    client = MotionClient(domain.domain_id, f'/{arm}', joints, params['output'],
                          **client_options)
    try:
        client.wait_for_server(40.0)
        yield client, process
    finally:
        client.close()


@pytest.fixture(scope='module')
def six(domain, group, urdf_of):
    yield from _executor(domain, group, urdf_of, 'six_axis', SIX, {
        'output': 'forward_position', 'controller_joints': list(SIX_CONTROLLER),
        'speed_scale': 1.0, 'watchdog_timeout': 0.3, 'publish_rate': 100.0},
        controller_joints=SIX_CONTROLLER)


@pytest.fixture(scope='module')
def pointer(domain, group, urdf_of):
    yield from _executor(domain, group, urdf_of, 'pointer3', POINTER, {
        'output': 'joint_trajectory', 'speed_scale': 1.0, 'follow_target': False})


@pytest.fixture
def arm6(six):
    """The six-axis client, at its home pose, alive before and after the test."""
    client, process = six
    client.move_joints(SIX_HOME, duration=0.6)
    yield client
    assert process.alive(), process.output()[-3000:]


def _moving(stamps, positions, start, goal):
    """Messages of the move (from the last one at ``start`` to the first one at ``goal``)."""
    away = np.flatnonzero(np.abs(positions - start).max(axis=1) > 1e-12)
    there = np.flatnonzero(np.abs(positions - goal).max(axis=1) < 1e-9)
    first = max(int(away[0]) - 1, 0)
    last = int(there[there > first][0])
    return stamps[first:last + 1], positions[first:last + 1]


# ---------------------------------------------------------------------------- laws
def test_min_jerk_shape_seen_by_a_subscriber(arm6):
    goal = SIX_HOME + np.array([0.4, -0.3, 0.3, 0.5, -0.4, 0.6])
    outcome = arm6.move(arm6.goal(joints=goal, law='min_jerk', duration=2.0))
    assert outcome.status == SUCCEEDED and outcome.code == 0, outcome.message
    stamps, positions = _moving(*arm6.positions(outcome.sent), SIX_HOME, goal)
    delta = goal - SIX_HOME
    fraction = (positions - SIX_HOME) @ delta / (delta @ delta)
    # A straight joint line ...
    off_line = positions - SIX_HOME - fraction[:, None] * delta
    assert np.abs(off_line).max() < 1e-9
    # ... with the min-jerk profile: find the start from the half-way crossing (symmetric).
    half = np.interp(0.5, fraction, stamps)
    start = half - 1.0
    expected = min_jerk((stamps - start) / 2.0)[0]
    assert np.abs(fraction - expected).max() < 0.01
    assert stamps[-1] - stamps[0] == pytest.approx(2.0, abs=0.05)
    # Velocity and acceleration vanish at both ends.
    messages = arm6.stamped_since(outcome.sent)
    speeds = np.array([np.abs(m.velocity).max() for m in messages])
    assert speeds.max() == pytest.approx(1.875 * np.abs(delta).max() / 2.0, rel=0.02)
    assert speeds[0] == 0.0 and speeds[-1] == 0.0
    rate = np.diff(fraction) / np.diff(stamps)
    assert rate[0] < 0.05 * rate.max() and rate[-1] < 0.05 * rate.max()


def test_exponential_closes_the_same_fraction_every_tick(arm6):
    goal = SIX_HOME + np.array([0.15, -0.1, 0.12, 0.0, 0.1, -0.15])
    outcome = arm6.move(arm6.goal(joints=goal, law='exponential'))
    assert outcome.code == 0, outcome.message
    assert 'exponential (k = 3 1/s)' in outcome.message
    stamps, positions = arm6.positions(outcome.sent)
    gaps = np.abs(goal - positions).max(axis=1)
    keep = (gaps > 0.01) & (gaps < 0.149)         # moving, well before the settle tolerance
    index = np.flatnonzero(keep[:-1] & keep[1:])
    assert len(index) > 50
    ratios = gaps[index + 1] / gaps[index]
    expected = np.exp(-3.0 * (stamps[index + 1] - stamps[index]))
    assert np.abs(ratios / expected - 1.0).max() < 0.005
    # Every joint closes the same fraction: a straight joint line.
    direction = (positions[index] - goal) / np.linalg.norm(positions[index] - goal, axis=1,
                                                           keepdims=True)
    assert np.allclose(direction, (SIX_HOME - goal) / np.linalg.norm(SIX_HOME - goal),
                       atol=1e-6)


def test_speed_cap_never_exceeds_the_joint_speeds(arm6, load_arm):
    model = load_arm('six_axis')
    target = (1.1, -0.5, 0.9)
    outcome = arm6.move(arm6.goal(position=target, law='speed_cap'))
    assert outcome.code == 0, outcome.message
    stamps, positions = arm6.positions(outcome.sent)
    assert max_step_ratio(stamps, positions, model.velocity_limits) <= 1.0 + 0.02
    assert np.linalg.norm(model.fk(positions[-1])[:3, 3] - target) <= 1e-3 + 1e-9
    assert outcome.result.final_error <= 1e-3 + 1e-9


@pytest.mark.parametrize('law', ['min_jerk_cartesian', 'linear_cartesian'])
def test_cartesian_lines_are_straight(arm6, load_arm, law):
    model = load_arm('six_axis')
    start = model.fk(SIX_HOME)[:3, 3]
    target = np.array([1.0, 0.6, 0.6])
    outcome = arm6.move(arm6.goal(position=target, law=law, duration=2.0))
    assert outcome.code == 0, outcome.message
    result = outcome.result
    assert (result.path_fraction, result.path_stop_code, result.path_stop_waypoint) == \
        (1.0, 0, 1)
    stamps, positions = arm6.positions(outcome.sent)
    tips = model.fk_batch(positions)[:, :3, 3]
    direction = (target - start) / np.linalg.norm(target - start)
    offsets = np.linalg.norm(np.cross(tips - start, direction), axis=1)
    assert offsets.max() < 1e-3
    assert np.linalg.norm(tips[-1] - target) < 5e-4             # IK tolerance 1e-4 m per sample
    along = (tips - start) @ direction
    moving = np.flatnonzero((along > 0.02) & (along < np.linalg.norm(target - start) - 0.02))
    speeds = np.diff(along[moving]) / np.diff(stamps[moving])
    if law == 'linear_cartesian':
        # α = t/T: a constant tool speed between the ends.
        assert np.abs(speeds / np.median(speeds) - 1.0).max() < 0.05
    else:
        assert speeds.max() > 1.5 * np.linalg.norm(target - start) / 2.0   # peaks at 1.875 L/T


def test_a_cartesian_line_that_stops_says_how_far_and_why(arm6, load_arm):
    # Toward full stretch: the goal itself is reachable, the line turns singular just short
    # of it (condition number above the executor's 50 on the last few millimetres).
    model = load_arm('six_axis')
    shoulder = model.shoulder_position()
    direction = model.fk(SIX_HOME)[:3, 3] - shoulder
    target = shoulder + direction / np.linalg.norm(direction) * 2.319
    outcome = arm6.move(arm6.goal(position=target, law='linear_cartesian'))
    assert outcome.code == 11, outcome.message                    # CARTESIAN_PATH_FAILED
    result = outcome.result
    assert result.path_stop_code == 2 and 'SINGULARITY at' in result.message   # SINGULARITY
    assert 0.9 < result.path_fraction < 1.0 and result.path_stop_waypoint == 0
    # Nothing moved: a line that cannot be followed is not started.
    assert len(result.executed_path.points) == 0


# ---------------------------------------------------------------------------- validation
@pytest.mark.parametrize('goal, code, words', [
    ({'position': (math.nan, 0.0, 1.0)}, 2, 'target.pose.position.x is nan'),
    ({'position': (1.0, math.inf, 1.0)}, 2, 'position.y is inf'),
    ({'position': (1.0, 0.6, 0.6), 'law': 'Min_Jerk'}, 2, 'unknown motion_law'),
    ({'joints': [0.0, 0.35, 2.9, 0.0, 0.6, 0.0]}, 3, 'elbow_pitch'),
    ({'joints': [0.0, 1.9, 1.5, 0.0, 0.5, 0.0]}, 4, 'below the floor'),
    ({'position': (4.0, 0.0, 1.0)}, 1, 'OUT_OF_REACH'),
])
def test_validation_failures_reach_the_client(arm6, goal, code, words):
    before = arm6.pose()
    outcome = arm6.move(arm6.goal(**goal))
    assert outcome.accepted and outcome.status == ABORTED
    assert outcome.code == code and words in outcome.message, outcome.message
    if code == 1:
        assert outcome.result.ik_error_code.val == 1          # OUT_OF_REACH
    arm6.assert_silent(outcome.sent, hold=0)
    assert np.array_equal(arm6.pose(), before)


def test_far_start_and_nan_trajectories_are_refused(arm6):
    start = SIX_HOME + [0.3, 0.0, 0.0, 0.0, 0.0, 0.0]
    reply = arm6.execute(SIX, [(0.0, start, []), (2.0, start + 0.1, [])])
    assert reply.error_code.val == 5 and 'starts 0.3000 rad away' in reply.message
    bad = SIX_HOME.copy()
    bad[3] = math.nan
    reply = arm6.execute(SIX, [(0.0, SIX_HOME, []), (2.0, bad, [])])
    assert reply.error_code.val == 3 and 'wrist_roll at point 1 is nan' in reply.message
    arm6.assert_silent(time.time(), hold=0)


# ---------------------------------------------------------------------------- preempt, cancel
def test_a_new_goal_preempts_without_a_jump(arm6, load_arm):
    model = load_arm('six_axis')
    first = SIX_HOME + np.array([1.0, -0.5, 0.6, 0.0, 0.0, 0.0])
    handle, feedback, sent = arm6.send(arm6.goal(joints=first, duration=3.0))
    time.sleep(1.2)
    second = arm6.move(arm6.goal(joints=SIX_HOME, duration=2.0))
    old = arm6.outcome(handle, feedback, sent)
    assert old.status == ABORTED and old.code == 7 and 'preempted' in old.message
    assert second.status == SUCCEEDED and second.code == 0, second.message
    stamps, positions = arm6.positions(sent)
    assert max_step_ratio(stamps, positions, model.velocity_limits) <= 1.05
    # The new goal started where the old one was held.
    held = np.array(old.result.executed_path.points[-1].positions)
    assert np.abs(np.array(second.result.executed_path.points[0].positions) - held).max() < \
        0.02
    assert feedback and 0.0 < feedback[-1][1].progress < 1.0


def test_cancel_holds_without_a_jump(arm6, load_arm):
    model = load_arm('six_axis')
    goal = SIX_HOME + np.array([-1.0, 0.4, -0.5, 0.8, 0.0, 0.0])
    handle, feedback, sent = arm6.send(arm6.goal(joints=goal, duration=3.0))
    time.sleep(1.0)
    arm6.cancel(handle)
    canceled_at = time.time()
    outcome = arm6.outcome(handle, feedback, sent)
    assert outcome.status == CANCELED and outcome.code == 6, outcome.message
    stamps, positions = arm6.positions(sent)
    assert max_step_ratio(stamps, positions, model.velocity_limits) <= 1.05
    held = positions[-1]
    assert 0.05 < np.abs(held - SIX_HOME).max() and np.abs(held - goal).max() > 0.05
    arm6.assert_silent(canceled_at + 0.1, hold=0)
    assert outcome.result.executed_path.points[-1].positions == pytest.approx(held.tolist())


# ---------------------------------------------------------------------------- watchdog
def test_watchdog_stops_a_stale_live_target(arm6, load_arm):
    model = load_arm('six_axis')
    centre = model.fk(SIX_HOME)[:3, 3]
    started = time.time()
    for k in range(20):                  # 1 s of targets at 20 Hz on a small circle
        angle = 0.3 * k
        arm6.publish_target(centre + 0.15 * np.array([0.0, math.sin(angle), math.cos(angle)]))
        time.sleep(0.05)
    assert any(s.state == FOLLOWING for s in arm6.status.since(started))
    stopped = time.time()
    status = arm6.wait_state(HOLDING, timeout=2.0)
    assert status.last_error.val == 9 and 'stale' in status.message
    # The watchdog's 0.3 s after the last target, plus what a loaded machine adds to its
    # delivery: a watchdog seconds late fails here.
    assert stamp_of(status) - stopped < 0.3 + 0.7, stamp_of(status) - stopped
    # Held from the stale stop on. Timed from the HOLDING status's stamp (the executor's tick),
    # not from this process's clock after its last target: on a loaded machine that target
    # can reach the executor late, and the watchdog's 0.3 s starts from its arrival.
    held = stamp_of(status) + 0.02                           # two control periods
    wait_until(lambda: len(arm6.positions(held)[0]) > 20, 10.0, 'joint states after the hold')
    _, positions = arm6.positions(held)
    assert np.all(positions == positions[-1])
    # Targets again, far away: no lurch, the arm starts from where it held.
    resumed = time.time()
    arm6.stream_target(centre + np.array([-0.3, 0.4, -0.3]), 20, 0.05)
    stamps, positions = arm6.positions(resumed)
    assert max_step_ratio(stamps, positions, model.velocity_limits) <= 1.05
    assert np.abs(positions[0] - positions[-1]).max() > 0.05      # it did follow
    arm6.wait_state(HOLDING, timeout=2.0)


# ---------------------------------------------------------------------------- e-stop
def test_emergency_stop_holds_and_refuses_goals_until_reset(arm6):
    goal = SIX_HOME + np.array([0.8, -0.4, 0.4, 0.0, 0.0, 0.0])
    stop = arm6.emergency_stop_held(during=arm6.goal(joints=goal, duration=3.0))
    with stop as (pressed, outcome):
        assert outcome.status == ABORTED and outcome.code == 8
        arm6.wait_state(ESTOP)
        time.sleep(max(0.0, pressed + 0.5 - time.time()))
        # Held within one control period (10 ms) plus delivery.
        after = arm6.stamped_since(pressed + 0.03)
        assert len(after) > 10
        assert all(m.position == after[-1].position for m in after), \
            [(round(stamp_of(m) - pressed, 4), m.position[1]) for m in after][:30]
        refused = arm6.move(arm6.goal(joints=SIX_HOME, duration=1.0))
        assert refused.status == ABORTED and refused.code == 8 and '~/reset' in refused.message
        reply = arm6.reset()
        assert not reply.success and 'still pressed' in reply.message
    assert arm6.move(arm6.goal(joints=SIX_HOME, duration=1.0)).code == 0


# ---------------------------------------------------------------------------- outputs
def test_forward_position_commands_in_the_controller_order(arm6):
    goal = SIX_HOME + np.array([0.3, 0.2, -0.2, 0.4, 0.3, -0.5])
    outcome = arm6.move(arm6.goal(joints=goal, duration=1.0))
    assert outcome.code == 0
    commands = arm6.commands.since(outcome.sent)
    assert len(commands) >= 90                      # 1 s at 100 Hz
    order = [SIX_CONTROLLER.index(name) for name in SIX]
    commanded = np.array([np.array(c.data)[order] for c in commands])
    _, states = arm6.positions(outcome.sent)
    # Every command is a published joint state, in the controller's joint order.
    for row in commanded:
        assert np.abs(states - row).max(axis=1).min() == 0.0
    assert commanded[-1].tolist() == pytest.approx(goal.tolist())
    arm6.assert_silent(time.time(), hold=0)      # nothing once the move is done


BAD_CONTROLLER_JOINTS = [
    (['tool_roll', 'base_yaw', 'base_yaw', 'shoulder_pitch', 'wrist_roll', 'elbow_pitch'],
     "controller_joints repeats joint name(s) 'base_yaw'"),
    (['tool_roll', 'base_yaw', 'wrist_pitch', 'shoulder_pitch', 'wrist_roll', 'gripper'],
     "controller_joints joint names: unknown 'gripper'; missing elbow_pitch (the arm's "
     'joints: base_yaw, shoulder_pitch'),
    (['base_yaw'], 'controller_joints joint names: missing shoulder_pitch'),
]


@pytest.fixture(scope='module')
def controller_joints_refusals(group, urdf_of):
    """Each bad controller_joints' executor started at once (a start-up is most of such a
    test's time); (exit status, output) of each."""
    started = [group.start_node('arm_ik', 'trajectory_executor',
                                namespace=f'/bad_controller{index}',
                                params={'robot_description': urdf_of('six_axis'),
                                        'arm': 'six_axis',
                                        'arm_config': config_file('six_axis'),
                                        'output': 'forward_position',
                                        'controller_joints': joints})
               for index, (joints, _) in enumerate(BAD_CONTROLLER_JOINTS)]
    ends = []
    for process in started:
        status = process.wait_for_exit(60.0)
        ends.append((status, process.output() if status is not None else process.abort()))
    return ends


@pytest.mark.parametrize('index', range(len(BAD_CONTROLLER_JOINTS)))
def test_controller_joints_must_name_each_joint_once(controller_joints_refusals, index):
    status, output = controller_joints_refusals[index]
    words = BAD_CONTROLLER_JOINTS[index][1]
    assert status == 1, output
    assert '[FATAL]' in output and words in output, output
    assert "Name each of the arm's joints once" in output, output
    assert 'Traceback' not in output, output


def test_joint_trajectory_output_for_a_trajectory_controller(pointer):
    client, process = pointer
    client.move_joints(POINTER_HOME, duration=0.5)
    goal = POINTER_HOME + np.array([0.6, 0.3, -0.4])
    outcome = client.move(client.goal(joints=goal, law='min_jerk', duration=1.5))
    assert outcome.code == 0, outcome.message
    trajectories = client.commands.since(outcome.sent)
    assert len(trajectories) == 1               # the whole move, once
    message = trajectories[0]
    assert list(message.joint_names) == list(POINTER)
    times = np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9
                      for p in message.points])
    assert times[0] > 0.0 and np.all(np.diff(times) > 0.0)
    assert times[-1] == pytest.approx(1.5)
    positions = np.array([p.positions for p in message.points])
    velocities = np.array([p.velocities for p in message.points])
    assert positions.shape == velocities.shape == (len(times), 3)
    assert positions[-1].tolist() == pytest.approx(goal.tolist())
    assert not velocities[-1].any()
    s = min_jerk(times / 1.5)[0]
    assert np.allclose(positions, POINTER_HOME + s[:, None] * (goal - POINTER_HOME), atol=1e-9)
    assert process.alive()


def test_live_target_ignored_while_disabled_and_planned_path_markers(pointer):
    client, _ = pointer
    client.move_joints(POINTER_HOME, duration=0.5)
    wait_until(lambda: client.paths.last() is not None, 5.0, 'planned_path markers')
    markers = client.paths.last().markers
    assert markers[0].action == 3                               # DELETEALL first
    spaces = {m.ns for m in markers[1:]}
    assert {'tip_path', 'ghosts', 'target'} <= spaces
    ghosts = [m for m in markers if m.ns == 'ghosts']
    assert len(ghosts) >= 2 and all(len(m.points) == 4 for m in ghosts)   # 3 joints + tip
    # The same plan as data on `plan`, the markers drawn from it.
    wait_until(lambda: client.plans.last() is not None, 5.0, 'plan (PlannedPath)')
    plan = client.plans.last()
    assert plan.feasible and plan.has_target and len(plan.trajectory.points) >= 2
    assert len(plan.ghost_sizes) == len(ghosts) and sum(plan.ghost_sizes) == 4 * len(ghosts)
    tip_path = next(m for m in markers if m.ns == 'tip_path')
    assert [(p.x, p.y, p.z) for p in plan.tip_path] == [(p.x, p.y, p.z) for p in tip_path.points]
    before = client.pose()
    client.publish_target((1.2, 0.3, 0.9))
    client.assert_silent(time.time(), hold=0)
    assert np.array_equal(client.pose(), before)


# ---------------------------------------------------------------------------- parameters
@pytest.mark.parametrize('name, value', [
    ('publish_rate', 0.0), ('publish_rate', -5.0), ('publish_rate', math.nan),
    ('publish_rate', math.inf), ('publish_rate', 'fast'), ('speed_scale', 0.0),
    ('speed_scale', 1.5), ('watchdog_timeout', 0.0), ('exponential_gain', -1.0),
    ('motion_law', 'jump'), ('follow_law', 'min_jerk'), ('min_duration', 100.0),
    ('output', 'joint_trajectory'), ('follow_solver', 'analytic'), ('follow_solver', 'fast'),
])
def test_bad_parameter_updates_are_rejected_with_a_reason(six, name, value):
    client, process = six
    result = client.set_parameters(**{name: value})[0]
    assert not result.successful and result.reason
    assert process.alive()


def test_follow_solver_is_chosen_at_run_time(arm6, load_arm):
    """The live target is solved by follow_solver; the arm still reaches the target."""
    model = load_arm('six_axis')
    target = model.fk(SIX_HOME + np.array([0.3, -0.2, 0.2, 0.0, 0.1, 0.0]))[:3, 3]
    try:
        assert arm6.set_parameters(follow_solver='ccd')[0].successful
        arm6.stream_target(target, 60, 0.05)                # 3 s of one target at 20 Hz
        arm6.wait_state(HOLDING, timeout=2.0)
        reached = model.fk(arm6.pose())[:3, 3]
        assert np.linalg.norm(reached - target) < 0.01
    finally:
        assert arm6.set_parameters(follow_solver='')[0].successful


def test_publish_rate_changes_at_run_time(six):
    client, _ = six
    try:
        assert client.set_parameters(publish_rate=50.0)[0].successful
        time.sleep(0.3)
        since = time.time()
        time.sleep(1.0)
        stamps, _ = client.positions(since)
        assert np.median(np.diff(stamps)) == pytest.approx(0.02, abs=0.002)
    finally:
        assert client.set_parameters(publish_rate=100.0)[0].successful


def test_obstacle_contacts_reach_feedback_and_result(pointer):
    client, _ = pointer
    client.move_joints(POINTER_HOME, duration=0.5)
    # Into pointer3's obstacle ball (centre 1.3, -0.35, 1.205 m): contacts are reported at
    # 60 Hz of motion, not refused (avoid_obstacle is false).
    outcome = client.move(client.goal(position=(1.3, -0.35, 1.205), law='min_jerk',
                                      duration=2.0))
    assert outcome.code == 0, outcome.message
    times = list(outcome.result.contact_times)
    assert len(times) > 10 and len(outcome.result.contact_points) == len(times)
    assert np.allclose(np.diff(times), 1.0 / 60.0)
    last = outcome.result.contact_points[-1]
    assert [last.x, last.y, last.z] == pytest.approx([1.3, -0.35, 1.205], abs=1e-3)
    counts = [f.contacts_so_far for _, f in outcome.feedback]
    assert counts == sorted(counts) and counts[-1] > 0 and counts[0] < len(times)
    client.move_joints(POINTER_HOME, duration=1.5)


# ---------------------------------------------------------------------------- new lengths
def test_the_scenes_ball_reaches_planning(pointer):
    """The arm is one value: the ball is the scene's ``obstacle`` (the safety monitor
    publishes it, resized by its obstacle_radius or through ~/scene/apply), and the executor's
    next plan checks the ball the scene has. A move ending beside pointer3's ball (0.2 m to
    its side, 0.25 m above its centre) touches it with the YAML's 0.25 m radius (+ 0.075 m
    rod) and not with 0.05 m (checked offline with the planner: 56 contact samples against 0),
    nor once the ball is moved away."""
    from arm_ik.nodes.common import LATCHED_QOS
    from arm_ik.nodes.scene_messages import scene_message
    from arm_interfaces.msg import Scene as SceneMsg
    from arm_kinematics.arm import ArmConfig, load_arm
    from arm_kinematics.description.bundled import expand_xacro
    from arm_kinematics.scene.objects import Scene
    from arm_kinematics.scene.scene_rules import obstacle_spec, SceneRules
    client, _ = pointer
    above = (1.3, -0.15, 1.455)
    arm = load_arm(expand_xacro('pointer3'), ArmConfig.from_file(config_file('pointer3')))
    scene = Scene(arm.model.base_link)
    SceneRules(arm.safety).seed(scene)
    center = arm.safety.obstacle_center.tolist()

    def contacts_of_the_move() -> int:
        client.move_joints(POINTER_HOME, duration=0.5)
        outcome = client.move(client.goal(position=above, law='min_jerk', duration=1.0))
        assert outcome.code == 0, outcome.message
        return len(outcome.result.contact_times)

    publisher = client.node.create_publisher(SceneMsg, '/pointer3/scene', LATCHED_QOS)

    def publish(ball: dict) -> None:
        scene.put(ball)
        publisher.publish(scene_message(scene, client.node.get_clock().now().to_msg()))
        time.sleep(0.5)      # latched: a late match still gets it; the next plan uses it
    try:
        assert contacts_of_the_move() > 0
        publish(obstacle_spec(center, 0.05))
        assert contacts_of_the_move() == 0
        publish(obstacle_spec(center, 0.25))
        assert contacts_of_the_move() > 0
        publish(obstacle_spec([-1.5, 1.5, 3.0], 0.25))
        assert contacts_of_the_move() == 0
    finally:
        publish(obstacle_spec(center, 0.25))
        client.node.destroy_publisher(publisher)
        client.move_joints(POINTER_HOME, duration=1.0)


def test_robot_description_is_replaced_at_rest_and_refused_while_moving(domain, group,
                                                                         urdf_of):
    from arm_kinematics.description.bundled import expand_xacro, load_arm_config
    from arm_kinematics.model.arm_model import ArmModel
    lengths = load_arm_config('six_axis')['kinematics']
    longer_urdf = expand_xacro('six_axis', {'L2': repr(lengths['L2'] * 1.4),
                                            'L3': repr(lengths['L3'] * 1.4)})
    longer = ArmModel.from_urdf(longer_urdf, 'base_link', 'tool0')
    # 2.57 m from the shoulder: beyond the shipped arm's 2.32 m, within the longer one's.
    target = longer.fk(SIX_HOME + np.array([0.0, 0.0, -0.5, 0.0, 0.0, 0.0]))[:3, 3]
    group.start_node('arm_ik', 'trajectory_executor', namespace='/six_lengths', params={
        'robot_description': urdf_of('six_axis'), 'arm': 'six_axis',
        'arm_config': config_file('six_axis'), 'speed_scale': 1.0})
    client = MotionClient(domain.domain_id, '/six_lengths', SIX)
    try:
        client.wait_for_server(40.0)
        assert client.move(client.goal(position=target, duration=1.0)).code == 1   # IK_FAILED
        assert client.set_parameters(robot_description=longer_urdf)[0].successful
        outcome = client.move(client.goal(position=target, duration=1.0))
        assert outcome.code == 0, outcome.message
        assert longer.fk(client.pose())[:3, 3] == pytest.approx(target, abs=2e-3)
        # Not while the arm moves, nor another arm, nor something that is not a URDF.
        handle, feedback, sent = client.send(client.goal(joints=SIX_HOME, duration=2.0))
        wait_until(lambda: any(s.state == 1 for s in client.status.since(sent)), 10.0,
                   'the move to start')
        moving = client.set_parameters(robot_description=urdf_of('six_axis'))[0]
        assert not moving.successful and 'moving' in moving.reason
        assert client.outcome(handle, feedback, sent).code == 0
        for bad in (urdf_of('pointer3'), '<robot name="broken">'):
            refused = client.set_parameters(robot_description=bad)[0]
            assert not refused.successful and refused.reason
        # Still the longer arm: the far target is still reachable.
        assert client.move(client.goal(position=target, duration=1.0)).code == 0
        assert client.set_parameters(robot_description=urdf_of('six_axis'))[0].successful
        assert client.move(client.goal(position=target, duration=1.0)).code == 1
    finally:
        client.close()
