"""The jog law (motion/jog.py): MoveIt Servo's commands become safe joint steps.

On the bundled six_axis and the UR5 of example-robot-data: a twist moves the tool in its
direction (base or tool frame), a joint jog moves its joint; a stream that stops decelerates
to rest; driving toward a singularity or a joint limit slows and halts before it, never a
jump; NaN, unknown names and frames, a paused servo or the other command type are refused
with words and move nothing; inside a MotionRunner the jog starts from the pose given and
ends at rest.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arm_kinematics.motion.jog import (
    Answer,
    CommandType,
    JogCore,
    JogSettings,
    JogStatus,
    JointJog,
    SPEED_UNITS,
    Twist,
)
from arm_kinematics.motion.runner import Mode, MotionRunner, Owner

DT = 0.01
SIX_AXIS_START = np.array([0.0, 0.5, 0.8, 0.0, 0.6, 0.0])
UR5_START = np.array([0.0, -1.2, 1.2, -1.57, -1.57, 0.0])


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _jog(model, **settings):
    clock = Clock()
    return JogCore(model, JogSettings(**settings), clock), clock


def _run(core, clock, q, seconds, command=None):
    """Step for ``seconds``, sending ``command`` (a callable taking now) every tick; the
    poses (first row ``q``)."""
    poses = [np.array(q, dtype=float)]
    for _ in range(int(round(seconds / DT))):
        if command is not None:
            command(clock.t)
        clock.t += DT
        poses.append(core.step(poses[-1], DT))
    return np.array(poses)


def _velocities(poses):
    return np.diff(poses, axis=0) / DT


@pytest.fixture(scope='module')
def six_axis(load_arm):
    return load_arm('six_axis')


@pytest.fixture(scope='module')
def ur5():
    from arm_kinematics.arm import load_arm as load
    from arm_testing.real_arms import REAL_ARMS
    spec = REAL_ARMS['ur5']
    return load(spec.urdf(), None, spec.base, spec.tip).model


@pytest.mark.parametrize('arm', ['six_axis', 'ur5'])
@pytest.mark.parametrize('frame', ['', 'tool'])
def test_a_twist_moves_the_tool_in_its_direction(request, arm, frame):
    model = request.getfixturevalue(arm)
    start = SIX_AXIS_START if arm == 'six_axis' else UR5_START
    core, clock = _jog(model)
    assert core.switch(CommandType.TWIST).ok
    frame_id = model.tip_link if frame else ''
    direction = np.array([0.0, 0.6, -0.8]) if not frame else np.array([0.0, 0.0, 1.0])
    poses = _run(core, clock, start, 0.5,
                 lambda now: core.twist(Twist(tuple(direction * 0.2), (0, 0, 0), frame_id), now))
    moved = model.fk(poses[-1])[:3, 3] - model.fk(start)[:3, 3]
    expected = direction if not frame else model.fk(start)[:3, :3] @ direction
    assert np.linalg.norm(moved) > 0.01
    assert np.dot(moved / np.linalg.norm(moved), expected) > 0.98, (moved, expected)
    # The tool's orientation stays (no angular velocity was asked).
    rotation = model.fk(poses[-1])[:3, :3].T @ model.fk(start)[:3, :3]
    assert math.acos(min(1.0, (np.trace(rotation) - 1) / 2)) < 0.02
    assert core.status()[0] in (JogStatus.NO_WARNING,
                                JogStatus.DECELERATE_FOR_APPROACHING_SINGULARITY)


def test_a_joint_jog_moves_its_joint_within_the_velocity_limits(six_axis):
    core, clock = _jog(six_axis)
    poses = _run(core, clock, SIX_AXIS_START, 1.0,
                 lambda now: core.joint_jog(JointJog(('elbow_pitch',), (0.8,)), now))
    moved = poses[-1] - SIX_AXIS_START
    assert moved[2] > 0.3 and np.all(np.delete(moved, 2) == 0.0)
    velocity = _velocities(poses)
    assert np.max(np.abs(velocity[:, 2])) == pytest.approx(0.8 * 0.5)  # unitless × scale.joint
    # speed_units beyond the URDF limit (1.2 rad/s): scaled to it.
    core, clock = _jog(six_axis, command_in_type=SPEED_UNITS)
    poses = _run(core, clock, SIX_AXIS_START, 1.0,
                 lambda now: core.joint_jog(JointJog(('elbow_pitch',), (5.0,)), now))
    assert np.max(np.abs(_velocities(poses)[:, 2])) == pytest.approx(1.2)


def test_displacements_move_over_their_duration(six_axis):
    core, clock = _jog(six_axis, acceleration=1000.0)
    assert core.joint_jog(JointJog(('base_yaw',), (), (0.1,), 0.5), 0.0).ok
    poses = _run(core, clock, SIX_AXIS_START, 1.0)
    assert poses[-1][0] - SIX_AXIS_START[0] == pytest.approx(0.1, abs=0.003)
    assert 'duration' in core.joint_jog(JointJog(('base_yaw',), (), (0.1,), 0.0)).message


def test_a_stream_that_stops_decelerates_to_rest_without_a_jump(six_axis):
    core, clock = _jog(six_axis)
    poses = _run(core, clock, SIX_AXIS_START, 0.5,
                 lambda now: core.joint_jog(JointJog(('base_yaw', 'elbow_pitch'),
                                                     (1.0, -1.0)), now))
    assert core.moving()
    after = _run(core, clock, poses[-1], 0.5)
    velocity = _velocities(np.vstack([poses, after[1:]]))
    change = np.max(np.abs(np.diff(velocity, axis=0)), axis=1)
    assert np.max(change) <= 5.0 * DT + 1e-9            # the acceleration bound, every tick
    assert not core.moving() and np.all(after[-1] == after[-2])
    # The stop came after the timeout (0.1 s), then the ramp, not at once.
    assert np.all(velocity[len(poses) - 1 + 5][[0, 2]] != 0.0)


def test_bad_commands_are_refused_with_words_and_move_nothing(six_axis):
    core, clock = _jog(six_axis)
    nan_jog = core.joint_jog(JointJog(('base_yaw',), (math.nan,)))
    assert not nan_jog.ok and 'not finite' in nan_jog.message
    assert core.status() == (JogStatus.INVALID, nan_jog.message)
    refusals = [
        core.joint_jog(JointJog(('base_yaw',), (math.inf,))),
        core.joint_jog(JointJog(('nope',), (0.1,))),
        core.joint_jog(JointJog(('base_yaw', 'base_yaw'), (0.1, 0.1))),
        core.joint_jog(JointJog(('base_yaw', 'elbow_pitch'), (0.1,))),
        core.joint_jog(JointJog(('base_yaw',), (1.5,))),            # unitless beyond 1
        core.twist(Twist((0.1, 0, 0), (0, 0, 0))),                   # joint-jog mode
    ]
    assert [answer.ok for answer in refusals] == [False] * 6
    assert 'unknown joints' in refusals[1].message and 'twice' in refusals[2].message
    assert 'TWIST' in refusals[5].message
    assert core.switch(CommandType.TWIST).ok
    for twist in (Twist((math.nan, 0, 0), (0, 0, 0)), Twist((0, 0, 0), (0, math.inf, 0)),
                  Twist((0.1, 0, 0), (0, 0, 0), 'camera_link')):
        assert not core.twist(twist).ok
    assert 'camera_link' in core.status()[1]
    assert not core.switch(CommandType.POSE).ok and not core.switch(7).ok
    poses = _run(core, clock, SIX_AXIS_START, 0.3)
    assert np.all(poses == SIX_AXIS_START)


def test_a_nan_after_a_good_stream_keeps_the_old_command_until_it_times_out(six_axis):
    core, clock = _jog(six_axis)
    poses = _run(core, clock, SIX_AXIS_START, 0.3,
                 lambda now: core.joint_jog(JointJog(('base_yaw',), (0.5,)), now))
    after = _run(core, clock, poses[-1], 0.5,
                 lambda now: core.joint_jog(JointJog(('base_yaw',), (math.nan,)), now))
    assert np.all(np.isfinite(after)) and not core.moving()


def test_pause_decelerates_and_refuses_until_unpaused(six_axis):
    core, clock = _jog(six_axis)

    def command(now):
        return core.joint_jog(JointJog(('base_yaw',), (1.0,)), now)
    poses = _run(core, clock, SIX_AXIS_START, 0.3, command)
    assert core.pause(True) == Answer(True, 'Servoing disabled')
    after = _run(core, clock, poses[-1], 0.5, command)
    assert not core.moving() and 'paused' in core.status()[1]
    assert np.max(np.abs(np.diff(_velocities(np.vstack([poses, after[1:]]))[:, 0]))) \
        <= 5.0 * DT + 1e-9
    assert core.pause(False).ok and core.joint_jog(JointJog(('base_yaw',), (1.0,)),
                                                   clock.t).ok


def test_driving_into_a_singularity_slows_and_halts_before_it(six_axis):
    """Straight out along +x from SIX_AXIS_START the arm stretches (condition → ∞)."""
    settings = JogSettings(lower_singularity=15.0, hard_singularity=40.0)
    core = JogCore(six_axis, settings, Clock())
    clock = core._clock
    core.switch(CommandType.TWIST)
    poses = _run(core, clock, SIX_AXIS_START, 4.0,
                 lambda now: core.twist(Twist((1.0, 0, 0), (0, 0, 0)), now))
    conditions = [core.condition(q) for q in poses]
    assert max(conditions) < 40.0 + 0.5
    speeds = np.linalg.norm(_velocities(poses), axis=1)
    assert speeds[-1] < 1e-3 and core.status()[0] == JogStatus.HALT_FOR_SINGULARITY
    # Slowing down, not a jump: tick to tick the speed changes by at most the ramp.
    assert np.max(np.abs(np.diff(speeds))) < 0.1
    # The stream stopping (or arriving late, past the timeout) never lets it coast on.
    after = _run(core, clock, poses[-1], 0.5)
    assert np.all(after == poses[-1])
    late = _run(core, clock, poses[-1], 2.0,
                lambda now: round(now / DT) % 15 == 0
                and core.twist(Twist((1.0, 0, 0), (0, 0, 0)), now))
    assert max(core.condition(q) for q in late) < 40.0 + 0.5
    # Backing out is allowed.
    back = _run(core, clock, late[-1], 0.3,
                lambda now: core.twist(Twist((-1.0, 0, 0), (0, 0, 0)), now))
    assert core.condition(back[-1]) < core.condition(late[-1])
    assert np.max(np.abs(np.diff(_velocities(back), axis=0))) <= 5.0 * DT + 1e-9


@pytest.mark.parametrize('joint_mode_all', [True, False])
def test_driving_into_a_joint_limit_slows_and_halts_a_margin_before_it(six_axis,
                                                                      joint_mode_all):
    core, clock = _jog(six_axis, halt_all_joints_in_joint_mode=joint_mode_all)
    start = SIX_AXIS_START.copy()
    start[4] = 1.7                                   # wrist_pitch, upper limit 2.094
    poses = _run(core, clock, start, 3.0,
                 lambda now: core.joint_jog(JointJog(('wrist_pitch', 'base_yaw'),
                                                     (1.0, 0.2)), now))
    upper = six_axis.upper[4] - 0.1
    assert np.max(poses[:, 4]) <= upper + 1e-12
    assert poses[-1][4] == pytest.approx(upper, abs=0.1 * 0.05 + 1e-6)
    assert core.status()[0] == JogStatus.JOINT_BOUND and 'wrist_pitch' in core.status()[1]
    velocity = _velocities(poses)[:, 4]
    assert np.max(np.abs(np.diff(velocity))) < 0.1
    # base_yaw halts with it (all joints), or goes on alone.
    assert (abs(poses[-1][0] - poses[-2][0]) < 1e-6) == joint_mode_all


def test_a_twist_into_a_joint_limit_halts_every_joint_together(ur5):
    core, clock = _jog(ur5, limit_margins=(0.1,) * 6)
    core.switch(CommandType.TWIST)
    start = UR5_START.copy()
    start[5] = ur5.upper[5] - 0.25
    poses = _run(core, clock, start, 3.0,
                 lambda now: core.twist(Twist((0, 0, 0), (0, 0, 1.0), ur5.tip_link), now))
    assert np.max(poses[:, 5]) <= ur5.upper[5] - 0.1 + 1e-12
    assert np.all(poses[-1] == poses[-2])


def test_settings_are_checked(six_axis):
    assert 'hard_stop' in JogSettings(lower_singularity=30, hard_singularity=20).reason(6)
    assert 'joint_limit_margins' in JogSettings(limit_margins=(0.1, 0.2)).reason(6)
    assert 'timeout' in JogSettings(timeout=math.nan).reason(6)
    with pytest.raises(ValueError, match='command_in_type'):
        JogCore(six_axis, JogSettings(command_in_type='metres'))
    core, _ = _jog(six_axis)
    assert core.set_settings(JogSettings(acceleration=-1.0)) != ''
    assert core.settings.acceleration == 5.0


def test_in_a_motion_runner_the_jog_starts_from_the_given_pose_and_ends_at_rest(six_axis):
    core, clock = _jog(six_axis)
    runner = MotionRunner(six_axis.joint_names, None)
    measured = SIX_AXIS_START + 0.05
    assert runner.follow(core, Owner('servo'), 0.0, core.stop_time() + 0.05, measured)[0] \
        .name == 'SUCCESS'
    poses = []
    for k in range(150):
        clock.t = k * DT
        if k < 50:
            core.joint_jog(JointJog(('base_yaw',), (1.0,)), clock.t)
            runner.touch(clock.t)
        tick = runner.tick(clock.t)
        poses.append(tick.q)
    poses = np.array(poses)
    assert np.all(poses[0] == measured)
    assert np.max(np.abs(np.diff(poses, axis=0))) <= 0.5 * DT + 1e-9
    assert runner.mode == Mode.HOLDING and np.all(poses[-1] == poses[-10])
