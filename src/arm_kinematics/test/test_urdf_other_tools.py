"""URDFs as other tools write them load (issue 39, item 3), each with a warning naming the
joint where a convention was read:

- the SolidWorks exporter (sw_urdf_exporter): every revolute joint written
  ``<limit lower="0" upper="0" effort="0" velocity="0"/>`` ("not set"), meshes as
  ``package://<name>/meshes/*.STL``, inertials, its comment header: continuous joints;
- pybullet's convention ``lower > upper`` for "no limit": a continuous joint;
- ``package://`` meshes of description packages installed by pip (example-robot-data under
  ``site-packages/cmeel.prefix``), of prefixes in AMENT_PREFIX_PATH / ROS_PACKAGE_PATH and
  of the ament index: the real collision meshes, not capsules.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
import sys
import types

import numpy as np
import pytest

from arm_kinematics.description.meshes import default_search_paths, pip_prefixes, resolve_mesh
from arm_kinematics.model.arm_model import DescriptionError
from arm_testing.real_arms import REAL_ARMS, robots_dir

# The exporter's header, its first comment line as it writes it (one line).
SW_HEADER = ('<?xml version="1.0" encoding="utf-8"?>\n'
             '<!-- This URDF was automatically created by SolidWorks to URDF Exporter! '
             'Originally created by Stephen Brawner (brawner@gmail.com)\n'
             '     Commit Version: 1.6.0-4-g7f85cfe  Build Version: 1.6.7995.38578\n'
             '     For more information, please see http://wiki.ros.org/sw_urdf_exporter -->\n')
# (link, parent, joint origin xyz, axis, box size of its mesh): a yaw + two pitch arm.
SW_LINKS = (('base_link', None, None, None, (0.2, 0.2, 0.1)),
            ('link1', 'base_link', '0 0 0.1', '0 0 1', (0.08, 0.08, 0.3)),
            ('link2', 'link1', '0 0 0.3', '0 1 0', (0.06, 0.06, 0.4)),
            ('link3', 'link2', '0 0 0.4', '0 1 0', (0.05, 0.05, 0.3)))


def _sw_link(name: str, package: str) -> str:
    """A link as the exporter writes it: inertial, visual and collision, mesh per link."""
    mesh = f'package://{package}/meshes/{name}.STL'
    return f"""  <link
    name="{name}">
    <inertial>
      <origin
        xyz="-0.00011739 1.1102E-16 0.046217"
        rpy="0 0 0" />
      <mass
        value="1.2345" />
      <inertia
        ixx="0.0012"
        ixy="-1.0842E-19"
        ixz="2.3456E-07"
        iyy="0.0013"
        iyz="0"
        izz="0.0011" />
    </inertial>
    <visual>
      <origin
        xyz="0 0 0"
        rpy="0 0 0" />
      <geometry>
        <mesh
          filename="{mesh}" />
      </geometry>
      <material
        name="">
        <color
          rgba="0.79216 0.81961 0.93333 1" />
      </material>
    </visual>
    <collision>
      <origin
        xyz="0 0 0"
        rpy="0 0 0" />
      <geometry>
        <mesh
          filename="{mesh}" />
      </geometry>
    </collision>
  </link>
"""


def _sw_joint(name: str, parent: str, child: str, xyz: str, axis: str) -> str:
    return f"""  <joint
    name="{name}"
    type="revolute">
    <origin
      xyz="{xyz}"
      rpy="0 0 0" />
    <parent
      link="{parent}" />
    <child
      link="{child}" />
    <axis
      xyz="{axis}" />
    <limit
      lower="0"
      upper="0"
      effort="0"
      velocity="0" />
  </joint>
"""


def solidworks_package(root: Path, package: str = 'sw_arm_description') -> Path:
    """A description package as the exporter makes it: urdf/<package>.urdf, meshes/*.STL
    (binary STL boxes here); returns the URDF file."""
    import trimesh
    (root / package / 'urdf').mkdir(parents=True)
    (root / package / 'meshes').mkdir()
    parts = [SW_HEADER, f'<robot\n  name="{package}">\n']
    for index, (link, parent, xyz, axis, size) in enumerate(SW_LINKS):
        box = trimesh.creation.box(extents=size)
        box.apply_translation([0.0, 0.0, size[2] / 2.0])
        box.export(root / package / 'meshes' / f'{link}.STL', file_type='stl')
        parts.append(_sw_link(link, package))
        if parent is not None:
            parts.append(_sw_joint(f'joint{index}', parent, link, xyz, axis))
    parts.append('</robot>')
    path = root / package / 'urdf' / f'{package}.urdf'
    path.write_text(''.join(parts), encoding='utf-8')
    return path


# ---------------------------------------------------------------------- SolidWorks
def test_a_solidworks_export_loads_with_continuous_joints_and_its_meshes(tmp_path):
    from arm_kinematics import Arm
    path = solidworks_package(tmp_path)
    arm = Arm.from_urdf(path)
    model = arm.model
    assert model.joint_names == ('joint1', 'joint2', 'joint3')
    assert all(joint.kind == 'continuous' for joint in model.joints) and model.wraps.all()
    np.testing.assert_allclose(model.upper - model.lower, 2 * math.pi)
    for name in model.joint_names:
        assert any(note.startswith(f'joint "{name}": <limit lower="0" upper="0" effort="0" '
                                   'velocity="0"> (an exporter\'s "not set") read as a '
                                   'continuous joint') for note in arm.notes), arm.notes
    # It solves and moves: a position made by FK is reached.
    pose = arm.fk([0.3, 0.4, -0.6])
    answer = arm.ik(pose.position)
    assert answer.ok and np.linalg.norm(arm.fk(answer.q).position - pose.position) < 1e-4
    # package://sw_arm_description/meshes/*.STL found beside the URDF's package folder.
    checker = arm.checker()
    assert not checker.warnings
    assert {s.kind for b in checker.bodies.bodies for s in b.shapes} == {'convex'}


def test_a_locked_joint_that_keeps_a_speed_stays_locked(tmp_path):
    from arm_kinematics import Arm
    path = solidworks_package(tmp_path)
    text = path.read_text(encoding='utf-8').replace(
        'lower="0"\n      upper="0"\n      effort="0"\n      velocity="0"',
        'lower="0"\n      upper="0"\n      effort="0"\n      velocity="1"', 1)
    arm = Arm.from_urdf(text)
    assert arm.model.joint_names == ('joint2', 'joint3')
    assert any('joint "joint1" is locked (lower == upper = 0)' in n for n in arm.notes)


def test_example_robot_datas_solidworks_pendulum_loads_as_its_continuous_twin():
    from arm_kinematics import Arm
    folder = robots_dir() / 'double_pendulum_description' / 'urdf'
    exported = Arm.from_urdf(folder / 'double_pendulum.urdf')
    assert 'SolidWorks to URDF Exporter' in (folder / 'double_pendulum.urdf').read_text()
    twin = Arm.from_urdf(folder / 'double_pendulum_continuous.urdf')
    assert exported.joint_names == twin.joint_names == ('joint1', 'joint2')
    q = np.array([0.7, -1.1])
    np.testing.assert_allclose(exported.fk(q).matrix, twin.fk(q).matrix, atol=1e-12)
    np.testing.assert_allclose(exported.model.lower, twin.model.lower)
    assert sum('read as a continuous joint' in note for note in exported.notes) == 2


# ---------------------------------------------------------------------- pybullet
PYBULLET_ARM = """<?xml version="1.0"?>
<robot name="bullet_arm">
  <link name="base_link">
    <inertial><mass value="0"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>
    </inertial>
    <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision>
  </link>
  <link name="upper"><inertial><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><origin xyz="0 0 0.2"/><geometry><cylinder radius="0.04" length="0.4"/>
    </geometry></collision></link>
  <link name="fore"><inertial><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="tool0"/>
  <joint name="base_yaw" type="revolute">
    <parent link="base_link"/><child link="upper"/><origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>
    <limit effort="100" lower="1" upper="-1" velocity="2"/>
    <dynamics damping="0.1" friction="0.0"/>
  </joint>
  <joint name="shoulder" type="revolute">
    <parent link="upper"/><child link="fore"/><origin xyz="0 0 0.4"/><axis xyz="0 1 0"/>
    <limit effort="100" lower="-2" upper="2" velocity="2"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="fore"/><child link="tool0"/><origin xyz="0.35 0 0"/><axis xyz="0 1 0"/>
    <limit effort="50" lower="0" upper="-1" velocity="3"/>
  </joint>
</robot>
"""


def test_pybullets_lower_above_upper_reads_as_no_limit_with_a_warning(tmp_path):
    from arm_kinematics import Arm
    path = tmp_path / 'bullet_arm.urdf'
    path.write_text(PYBULLET_ARM, encoding='utf-8')
    arm = Arm.from_urdf(path, 'base_link', 'tool0')
    model = arm.model
    assert [j.kind for j in model.joints] == ['continuous', 'revolute', 'continuous']
    assert model.velocity_limits.tolist() == [2.0, 2.0, 3.0]   # the limit's other values kept
    for name, low, high in (('base_yaw', '1', '-1'), ('elbow', '0', '-1')):
        assert f'joint "{name}": lower limit {low} is above upper limit {high}; read as "no ' \
            'limit" (pybullet\'s convention): a continuous joint' in ' '.join(arm.notes)
    # As yourdfpy reads the file (it does not clamp to limits): the same FK.
    import yourdfpy
    robot = yourdfpy.URDF.load(io.StringIO(PYBULLET_ARM), load_meshes=False,
                               build_collision_scene_graph=False)
    q = [2.5, 0.3, -2.0]
    robot.update_cfg(dict(zip(model.joint_names, q)))
    np.testing.assert_allclose(arm.fk(q).matrix, robot.get_transform('tool0', 'base_link'),
                               atol=1e-12)


def test_a_prismatic_joint_with_lower_above_upper_is_still_refused_in_one_line():
    from arm_kinematics import Arm
    text = PYBULLET_ARM.replace('name="elbow" type="revolute"', 'name="elbow" type="prismatic"')
    with pytest.raises(DescriptionError) as raised:
        Arm.from_urdf(text, 'base_link', 'tool0')
    message = str(raised.value)
    assert message.startswith('joint "elbow": lower limit 0.0 is not below upper limit -1.0')
    assert 'a prismatic joint needs its travel' in message and '\n' not in message


# ---------------------------------------------------------------------- package://
@pytest.mark.parametrize('name', ['ur5', 'panda'])
def test_pip_installed_description_meshes_are_used_not_capsules(name):
    """The URDF as text (no file, no search path): package://example-robot-data/... found
    under site-packages/cmeel.prefix/share/example-robot-data."""
    from arm_kinematics import Arm
    spec = REAL_ARMS[name]
    arm = Arm.from_urdf(spec.urdf(), spec.base, spec.tip)
    checker = arm.checker()
    assert not checker.warnings, checker.warnings
    shapes = [shape for body in checker.bodies.bodies for shape in body.shapes]
    meshes = spec.urdf().count('<collision') - spec.urdf().count('<box')
    assert sum(shape.kind == 'convex' for shape in shapes) >= meshes > 4
    assert not [s for s in shapes if s.kind == 'capsule' or s.note.startswith('fallback')]
    cmeel = robots_dir().parent.parent.parent
    assert cmeel.name == 'cmeel.prefix' and cmeel in pip_prefixes()


def test_package_uris_of_ament_prefixes_ros_package_path_and_the_ament_index(tmp_path,
                                                                           monkeypatch):
    uri = 'package://my_description/meshes/part.STL'
    for variable in ('AMENT_PREFIX_PATH', 'ROS_PACKAGE_PATH'):
        monkeypatch.delenv(variable, raising=False)
    assert resolve_mesh(uri, default_search_paths()) is None
    prefix = tmp_path / 'install'
    mesh = prefix / 'share' / 'my_description' / 'meshes' / 'part.STL'
    mesh.parent.mkdir(parents=True)
    mesh.write_bytes(b'solid part\nendsolid part\n')
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(prefix))
    assert resolve_mesh(uri, default_search_paths()) == mesh
    monkeypatch.delenv('AMENT_PREFIX_PATH')
    monkeypatch.setenv('ROS_PACKAGE_PATH', str(prefix / 'share'))
    assert resolve_mesh(uri, default_search_paths()) == mesh
    monkeypatch.delenv('ROS_PACKAGE_PATH')
    # A ROS install's ament index (ament_index_python), stood in for here: its prefixes.
    index = types.ModuleType('ament_index_python')
    index.get_search_paths = lambda: [str(prefix)]
    monkeypatch.setitem(sys.modules, 'ament_index_python', index)
    assert resolve_mesh(uri, default_search_paths()) == mesh
    # An explicit list of folders is all that is searched.
    assert resolve_mesh(uri, []) is None
