"""Every URDF of example-robot-data with defaults only, as a new user would try them.

Each file either loads (frames, solver, everything from the URDF alone) and solves targets
made by FK of in-limit configurations — position, and the full pose for six joints or more —
with the answer's tip checked by yourdfpy, a separately written URDF library; or it is
refused in one line that this test expects by name. A target made by FK is never answered
OUT_OF_REACH or INSIDE_INNER_HOLE (RELIABILITY case 24a). The table of the
collection in docs/own_arm.md is these expectations.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from arm_kinematics.arm import load_arm
from arm_kinematics.common.transforms import matrix_to_quaternion
from arm_kinematics.description.passive_joints import PassiveJoints
from arm_kinematics.ik.request import IKRequest
from arm_kinematics.ik.result import ErrorCode, GoalType
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_kinematics.model.arm_model import DescriptionError
from arm_testing.real_arms import robot_urdf_files, robots_dir

# The files refused with defaults, and the words of the one line that says why.
REFUSED = {
    'alex_description/urdf/alex_psyonic_hands.urdf':
        'joint "Left_index_q2" mimics unknown joint "index_q1"',
    'hector_description/robots/quadrotor_base.urdf':
        'no movable joint below the root link "base_link"',
    'iris_description/robots/iris_simple.urdf':
        'no movable joint below the root link "iris__base_link"',
    'iris_description/robots/iris.urdf':
        'no joint between "iris__base_link" and "iris__rotor_0" moves the tip',
    'ur_description/urdf/ur3.urdf': 'the description has no links',
}
TARGETS = 3
POSITION_TOLERANCE = 1e-4     # m, the solvers' default
ORIENTATION_TOLERANCE = 1e-3  # rad


FILES = robot_urdf_files()


def test_the_collection_is_the_one_the_readme_describes():
    if not FILES:
        pytest.skip('example-robot-data is not installed')
    assert len(FILES) == 69
    assert set(REFUSED) <= set(FILES)


def _yourdfpy(urdf: str):
    import yourdfpy
    return yourdfpy.URDF.load(io.BytesIO(urdf.encode('utf-8')), load_meshes=False,
                              build_collision_scene_graph=False)


def _pose(robot, values: dict[str, float], base: str, tip: str) -> np.ndarray:
    """The tip pose by yourdfpy (its own FK, mimic joints following their leader)."""
    robot.update_cfg({name: value for name, value in values.items()
                      if name in robot.actuated_joint_names})
    return robot.get_transform(tip, base)


def _rotation_error(a: np.ndarray, b: np.ndarray) -> float:
    cos = (np.trace(a[:3, :3].T @ b[:3, :3]) - 1.0) / 2.0
    return float(np.arccos(np.clip(cos, -1.0, 1.0)))


@pytest.mark.parametrize('relative', FILES)
def test_every_urdf_loads_and_solves_or_is_refused_in_one_line(relative):
    path = robots_dir() / relative
    urdf = path.read_text(encoding='utf-8')
    if relative in REFUSED:
        with pytest.raises(DescriptionError) as raised:
            load_arm(urdf)
        message = str(raised.value)
        assert REFUSED[relative] in message and '\n' not in message, message
        return
    arm = load_arm(urdf)
    model = arm.model
    passive = PassiveJoints.of(model)
    dispatcher = arm.dispatcher()
    robot = _yourdfpy(urdf)
    rng = np.random.default_rng(Path(relative).stem.__len__())
    goals = [GoalType.POSITION] + ([GoalType.FULL_POSE] if model.dof >= 6 else [])
    for q in model.random_configurations(TARGETS, rng):
        pose = model.fk(q)
        for goal in goals:
            request = IKRequest(position=pose[:3, 3].tolist(),
                                orientation=list(matrix_to_quaternion(pose[:3, :3])),
                                goal=int(goal))
            answer = dispatcher.solve(request, SolveOptions(timeout=2.0), arm.home)
            result = answer.result
            assert result.code not in (ErrorCode.OUT_OF_REACH, ErrorCode.INSIDE_INNER_HOLE), \
                f'{relative}: FK-made target refused: {result.reason}'
            assert result.success, f'{relative} {goal.name}: {result.reason}'
            assert model.within_limits(result.q)
            values = dict(zip(model.joint_names, result.q))
            values.update(zip(passive.names, passive.positions(result.q)))
            reached = _pose(robot, values, model.base_link, model.tip_link)
            assert np.linalg.norm(reached[:3, 3] - pose[:3, 3]) < POSITION_TOLERANCE * 1.01
            if goal == GoalType.FULL_POSE:
                assert _rotation_error(reached, pose) < ORIENTATION_TOLERANCE * 1.01


def test_the_own_arm_chapter_table_is_these_refusals():
    chapter = Path(__file__).resolve().parents[3] / 'docs' / 'own_arm.md'
    readme = chapter.read_text(encoding='utf-8')
    section = readme.split('<!-- robot-data:begin -->')[1].split('<!-- robot-data:end -->')[0]
    files = {line.split('`')[1] for line in section.strip().splitlines()[2:]}
    assert files == set(REFUSED)
    loaded = 69 - len(REFUSED)
    assert '(69 files)' in readme and f'{loaded}\nload and solve; {len(REFUSED)} are refused' \
        in readme
