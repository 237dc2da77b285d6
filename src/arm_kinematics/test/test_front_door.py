"""The core's front door (issue 39, item 2): ``from arm_kinematics import Arm`` and its
methods, each answering with the code and the words; the README's example runs as written.

The UR5 of example-robot-data (URDF meshes, no configuration) is the arm a new user brings;
pointer3 (a bundled xacro with its configuration: a floor) is the configured one.
"""

from __future__ import annotations

import math
from pathlib import Path
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from arm_kinematics.ik.result import ErrorCode
from arm_kinematics.motion.errors import MotionCode
from arm_kinematics.motion.path_request import PathCode
from arm_testing.real_arms import REAL_ARMS, UR5_BLOCKING_BOX

README = Path(__file__).resolve().parents[1] / 'README.md'
START = (0.0, -1.2, 1.2, -1.57, -1.57, 0.0)        # wrist at (0.64, 0.11, 0.49) m
GOAL = (1.6, -1.2, 1.2, -1.57, -1.57, 0.0)         # the base turned: the box is on the way
INSIDE_BOX = (0.95, -1.2, 1.2, -1.57, -1.57, 0.0)


@pytest.fixture(scope='module')
def ur5():
    from arm_kinematics import Arm
    return Arm.from_urdf(REAL_ARMS['ur5'].path)


def _readme_blocks() -> list[str]:
    return re.findall(r'```python\n(.*?)```', README.read_text(encoding='utf-8'), re.DOTALL)


def test_the_readme_examples_run_as_written(tmp_path):
    """Each ```python block of the core's README, in a fresh interpreter, in a folder that
    holds the UR5's URDF under the name the README uses."""
    shutil.copy(REAL_ARMS['ur5'].path, tmp_path / 'ur5_robot.urdf')
    blocks = _readme_blocks()
    assert blocks and blocks[0].startswith('from arm_kinematics import Arm\n')
    assert len([line for line in blocks[0].splitlines() if line.strip()]) <= 11
    outputs = []
    for block in blocks:
        run = subprocess.run([sys.executable, '-c', block], cwd=tmp_path, capture_output=True,
                             text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-3000:]
        assert 'Traceback' not in run.stderr
        outputs.append(run.stdout)
    lines = outputs[0].splitlines()
    assert lines[0].startswith('OK [') and 'clear' in lines[2], lines
    assert lines[-1].startswith('OK SUCCESS min_jerk'), lines


def test_import_arm_kinematics_loads_no_compiled_kernel():
    code = ('import sys, arm_kinematics; heavy = [m for m in ("numba", "coal", "ompl") '
            'if m in sys.modules]; print(heavy); from arm_kinematics import Arm, Pose; '
            'print(Arm.__module__, Pose.__module__)')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         timeout=300, check=True).stdout.splitlines()
    assert out == ['[]', 'arm_kinematics.front.arm arm_kinematics.front.answers']


def test_the_front_door_arm_is_the_core_arm_value(ur5):
    from arm_kinematics import arm as core
    assert isinstance(ur5, core.Arm)
    assert ur5.model.base_link == 'world' and ur5.model.tip_link == 'tool0'
    assert ur5.notes[0].startswith('frames world -> tool0 (tool-frame name tool0')
    assert ur5.joint_names == ur5.model.joint_names and ur5.dof == 6
    moved = ur5.with_safety(ur5.safety)
    assert moved is ur5


def test_fk_is_the_models_pose(ur5):
    pose = ur5.fk(START)
    np.testing.assert_allclose(pose.matrix, ur5.model.fk(np.array(START)), atol=1e-12)
    assert pose.position.shape == (3,) and abs(np.linalg.norm(pose.quaternion) - 1.0) < 1e-12
    with pytest.raises(ValueError, match='q has 3 values, expected 6'):
        ur5.fk([0.0, 0.0, 0.0])


def test_ik_answers_q_code_and_words(ur5):
    pose = ur5.fk(START)
    answer = ur5.ik(pose.position, pose.quaternion, seed=START)
    assert answer.ok and answer.code == ErrorCode.OK and answer.solver == 'closed_form'
    np.testing.assert_allclose(answer.q, START, atol=1e-9)
    assert answer.branch and answer.position_error < 1e-6
    # A Pose as the target, a rotation matrix as the orientation: the same goal.
    for same in (ur5.ik(pose, seed=START), ur5.ik(pose.position, pose.rotation, seed=START)):
        np.testing.assert_allclose(same.q, START, atol=1e-9)
    # Position only, from home: some solution that reaches the point.
    reached = ur5.ik(pose.position)
    assert reached.ok and np.linalg.norm(ur5.fk(reached.q).position - pose.position) < 1e-4
    far = ur5.ik([9.0, 9.0, 9.0])
    assert far.code == ErrorCode.OUT_OF_REACH and far.q is None and 'maximum reach' in far.message
    for bad, words in ((([0.5, 0.1, 'x'],), 'position is not a numeric vector'),
                       (([0.5, 0.1, 0.5], [0, 0, 0, math.nan]), 'orientation (x, y, z, w)[3]'),
                       (([0.5, 0.1, 0.5], np.eye(3) * 2), 'is not a rotation'),
                       (([0.5, 0.1, 0.5], None, [0.0] * 5), 'seed has 5 values')):
        answer = ur5.ik(*bad)
        assert answer.code == ErrorCode.INVALID_INPUT and words in answer.message, answer
    unknown = ur5.ik(pose.position, solver='nope')
    assert unknown.code == ErrorCode.UNKNOWN_SOLVER


def test_ik_all_gives_every_branch_once_each_reaching_the_pose(ur5):
    pose = ur5.fk(START)
    branches = ur5.ik_all(pose, seed=START)
    assert branches.ok and branches.solver == 'closed_form'
    assert len(set(branches.labels)) == len(branches) >= 4
    for solution in branches:
        np.testing.assert_allclose(ur5.fk(solution.q).matrix, pose.matrix, atol=1e-6)
        assert ur5.model.within_limits(solution.q)
    # The branch ik picks from the same seed is among them, as the same copy.
    answer = ur5.ik(pose, seed=START)
    chosen = [s for s in branches if s.label == answer.branch]
    np.testing.assert_allclose(chosen[0].q, answer.q, atol=1e-9)
    # Every whole-turn copy of the ±2π joints, when asked.
    assert len(ur5.ik_all(pose, seed=START, copies=True)) > len(branches)


def test_ik_all_on_an_arm_no_closed_form_fits_says_why():
    from arm_kinematics import Arm
    panda = Arm.from_urdf(REAL_ARMS['panda'].urdf(), 'panda_link0', 'panda_hand_tcp')
    pose = panda.fk(panda.home + 0.2)
    branches = panda.ik_all(pose)
    assert not branches.ok and branches.code == ErrorCode.SOLVER_NOT_APPLICABLE
    assert 'no closed form fits' in branches.message and 'closed_form' in branches.message
    answer = panda.ik(pose, seed=panda.home + 0.2)
    assert answer.ok and answer.solver == panda.default_solver
    assert panda.ik_all(pose, solver='dls').code == ErrorCode.SOLVER_NOT_APPLICABLE


def test_check_limits_collision_and_the_scene(ur5):
    clear = ur5.check(START)
    assert clear.ok and clear.message.startswith('clear: closest') and not clear.collides
    outside = ur5.check((9.0,) + START[1:])
    assert outside.code == ErrorCode.JOINT_LIMITS
    assert outside.out_of_limits == ('shoulder_pan_joint',)
    assert 'joint "shoulder_pan_joint" at 9 is outside [-6.283, 6.283]' in outside.message
    assert ur5.check([0.0] * 3).code == ErrorCode.INVALID_INPUT
    # The URDF's meshes, found through pip's prefix (no file path, no search path given).
    kinds = {shape.kind for body in ur5.checker().bodies.bodies for shape in body.shapes}
    assert 'capsule' not in kinds and not ur5.checker().warnings


def test_plan_goes_round_a_box_in_the_scene_and_path_follows_a_line(ur5):
    straight = ur5.plan(GOAL, start=START)
    assert straight.ok and not straight.detoured, straight.message
    ur5.scene.add(dict(UR5_BLOCKING_BOX))
    try:
        inside = ur5.check(INSIDE_BOX)
        assert inside.code == ErrorCode.COLLISION and 'box' in inside.message
        move = ur5.plan(GOAL, start=START)
        assert move.ok and move.detoured and move.code == MotionCode.SUCCESS, move.message
        trajectory = move.trajectory
        assert trajectory.positions[0] == pytest.approx(START)
        assert trajectory.positions[-1] == pytest.approx(GOAL, abs=1e-9)
        assert np.all(np.diff(trajectory.times) > 0.0)
        assert ur5.checker().check_path(trajectory.positions, 0.01).free
        refused = ur5.plan(INSIDE_BOX, start=START)
        assert refused.code == MotionCode.NO_PATH and refused.trajectory is None
        # IK that keeps clear of the box: the branch nearest the seed is in it, another not.
        target = ur5.fk(INSIDE_BOX)
        plain = ur5.ik(target, seed=INSIDE_BOX)
        assert plain.ok and ur5.check(plain.q).code == ErrorCode.COLLISION
        clear = ur5.ik(target, seed=INSIDE_BOX, avoid_collisions=True)
        assert clear.code in (ErrorCode.OK, ErrorCode.COLLISION), clear
        if clear.ok:
            assert ur5.check(clear.q).ok and 'this one is clear' in clear.message
        else:
            assert 'collide (avoid_collisions)' in clear.message
    finally:
        ur5.scene.remove(UR5_BLOCKING_BOX['id'])
    pose = ur5.fk(START)
    line = ur5.path([pose.position - [0.0, 0.0, 0.1]], start=START)
    assert line.ok and line.fraction == 1.0 and line.code == PathCode.OK, line.message
    tips = ur5.model.fk_batch(line.q)[:, :3, 3]
    assert np.abs(tips[:, :2] - pose.position[:2]).max() < 2e-3
    oriented = ur5.path([(pose.position - [0.0, 0.0, 0.1], pose.quaternion)], start=START)
    assert oriented.ok, oriented.message
    mixed = ur5.path([pose.position, pose], start=START)
    assert mixed.code == PathCode.INVALID_INPUT and 'mix positions and poses' in mixed.message
    for bad in ({'q': GOAL, 'position': pose.position}, {}):
        assert ur5.plan(**bad, start=START).code == MotionCode.INVALID_GOAL
    cartesian = ur5.plan(position=pose.position - [0.0, 0.0, 0.1], start=START)
    assert cartesian.ok and cartesian.goal_q is not None, cartesian.message


def test_a_configured_xacro_arm_checks_its_floor():
    from arm_kinematics import Arm
    from arm_kinematics.description.bundled import config_path, xacro_path
    pointer = Arm.from_urdf(xacro_path('pointer3'), config=config_path('pointer3'))
    assert pointer.safety.floor_enabled and pointer.label == 'pointer3'
    assert pointer.check(pointer.home).ok
    # Poses inside the limits and clear of self-collision, some of them below the floor.
    poses = pointer.model.random_configurations(200, np.random.default_rng(3))
    below = [q for q in poses if pointer.safety.floor_clearance(q[None])[0] < -0.05
             and pointer.checker().is_free(q)]
    assert below
    verdict = pointer.check(below[0])
    assert verdict.code == ErrorCode.FLOOR_COLLISION and verdict.floor_clearance < 0.0
    assert 'below the floor' in verdict.message


def test_a_urdf_that_cannot_be_read_is_one_line(tmp_path):
    from arm_kinematics import Arm
    from arm_kinematics.model.arm_model import DescriptionError
    with pytest.raises(DescriptionError, match='cannot be read'):
        Arm.from_urdf(tmp_path / 'missing.urdf')
    with pytest.raises(DescriptionError, match='robot_description is not valid XML'):
        Arm.from_urdf('<robot name="x"><link')
