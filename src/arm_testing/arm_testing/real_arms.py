"""URDFs of real arms from ``example-robot-data`` (PyPI; a test dependency in dev.txt).

Arms the package was not written for: frames named by their vendors, fixed joints with
rotations, continuous joints, meshes. Tests of "your own arm" use them as a user would.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import sysconfig

import pytest


@dataclass(frozen=True)
class RealArm:
    """A URDF file and the chain a user would name on it."""

    label: str
    relative_path: str
    base: str
    tip: str

    @property
    def path(self) -> Path:
        return robots_dir() / self.relative_path

    def urdf(self) -> str:
        return self.path.read_text(encoding='utf-8')


REAL_ARMS = {
    'ur5': RealArm('ur5', 'ur_description/urdf/ur5_robot.urdf', 'base_link', 'tool0'),
    'panda': RealArm('panda', 'panda_description/urdf/panda.urdf', 'panda_link0',
                     'panda_hand_tcp'),
    'so101': RealArm('so101', 'so_arm_description/urdf/so101.urdf', 'base_link',
                     'gripper_frame_link'),
}


def robots_dir() -> Path:
    """example-robot-data's robots folder; the test is skipped when the package is absent
    (a ROS install without requirements/dev.txt)."""
    folder = Path(sysconfig.get_paths()['purelib']) / 'cmeel.prefix' / 'share' / \
        'example-robot-data' / 'robots'
    if not folder.is_dir():
        pytest.skip('example-robot-data is not installed (pip install --no-deps -r '
                    'requirements/dev.txt)')
    return folder


def robot_urdf_files() -> list[str]:
    """Every URDF of example-robot-data, relative to robots_dir() and sorted (for
    parametrize); empty when the package is absent (then no case runs)."""
    try:
        folder = robots_dir()
    except pytest.skip.Exception:
        return []
    return sorted(str(path.relative_to(folder)) for path in folder.rglob('*.urdf'))


def mesh_root() -> str:
    """Where package://example-robot-data/... resolves (what a user passes as a search path)."""
    return str(robots_dir().parent.parent)


# A box where the UR5's wrist passes when its base turns by 1.6 rad from
# (0, -1.2, 1.2, -1.57, -1.57, 0): the straight joint move goes through it, a planner goes round.
UR5_BLOCKING_BOX = {'id': 'box', 'type': 'box', 'size': [0.2, 0.2, 0.4],
                    'pose': {'xyz': [0.37, 0.54, 0.4]}}


def ur5_planner_and_checker() -> tuple:
    """The UR5 with UR5_BLOCKING_BOX in its scene: (its motion planner as the executor's
    planning worker builds it, an independent collision checker of the same arm and scene
    for the assertions)."""
    from arm_kinematics.arm import load_arm
    from arm_kinematics.motion import worker
    from arm_kinematics.motion.safety_check import SceneData
    spec = REAL_ARMS['ur5']
    arm = load_arm(spec.urdf(), None, spec.base, spec.tip)
    planner = worker.build_planner(worker.PlannerSpec(
        spec.urdf(), 'ur5', arm.config, spec.base, spec.tip, mesh_search_paths=(mesh_root(),),
        scene=SceneData(spec.base, (UR5_BLOCKING_BOX,), 1)))
    checker = arm.collision_checker(search_paths=[mesh_root()])
    checker.scene.add(UR5_BLOCKING_BOX)
    return planner, checker


# A table under the arm and two boxes in its reach, base frame, m: the scene the collision
# benchmark plans round and the exhaustive collision test checks against.
TABLE_AND_TWO_BOXES = (
    {'id': 'table', 'type': 'box', 'size': [1.6, 1.6, 0.04], 'pose': {'xyz': [0, 0, -0.03]}},
    {'id': 'box_left', 'type': 'box', 'size': [0.2, 0.2, 0.4],
     'pose': {'xyz': [0.5, 0.35, 0.2]}},
    {'id': 'box_right', 'type': 'box', 'size': [0.15, 0.3, 0.3],
     'pose': {'xyz': [0.45, -0.4, 0.5], 'rpy': [0.0, 0.0, 0.4]}},
)
