"""Reachability maps (kinematics.reachability) and the arm_reachability command."""

from __future__ import annotations

import math
import struct
import time
import zlib

import numpy as np
import pytest

from arm_ik.reachability_command import main, plain_png, write_picture
from arm_kinematics.analysis.reachability import (
    reach_grid,
    Reachability,
    ReachabilityError,
    ReachabilityMap,
    tool_orientations,
    urdf_hash,
    VoxelCode,
)
from arm_kinematics.arm import ArmConfig, load_arm
from arm_kinematics.description import bundled as description
from arm_kinematics.ik import metrics
from arm_kinematics.ik.request import IKDispatcher, IKRequest
from arm_kinematics.ik.result import ErrorCode, GoalType
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_testing.real_arms import REAL_ARMS


def bundled(name: str, **changes: object):
    config = description.load_arm_config(name)
    if changes:
        data = config.as_mapping()
        for key, value in changes.items():
            section, _, item = key.partition('__')
            if value is None:
                data[section].pop(item, None)
            else:
                data[section][item] = value
        config = ArmConfig.from_mapping(data, f'{name} (changed in the test)')
    return load_arm(description.expand_xacro(name), config, label=name)


@pytest.fixture(scope='module')
def desk_map():
    """manipulator3d (L1 0.6, L2 0.5, elbow ±150°: a hole of 0.30 m; targets z >= 0)."""
    return Reachability(bundled('manipulator3d')).sample(0.1)


def radii(reach: ReachabilityMap) -> tuple[np.ndarray, np.ndarray]:
    centres = reach.centres()
    return np.linalg.norm(centres, axis=-1), centres[..., 2]


def test_the_shell_above_the_desk_is_reachable_and_nothing_else(desk_map) -> None:
    r, z = radii(desk_map)
    np.testing.assert_array_equal(desk_map.reachable, desk_map.code == VoxelCode.REACHABLE)
    inside = (r >= 0.4) & (r <= 1.0) & (z >= 0.05)
    assert inside.sum() > 1000
    assert desk_map.reachable[inside].all()
    assert np.all(desk_map.share[inside] == 1.0)
    assert np.all(np.isfinite(desk_map.manipulability[inside]))
    assert np.all(desk_map.manipulability[inside] > 0.0)
    beyond, below, hole = r > 1.1, z < 0.0, r < 0.2
    for region in (beyond, below, hole):
        assert region.any() and not desk_map.reachable[region].any()
        assert np.all(np.isnan(desk_map.manipulability[region]))
    assert np.all(desk_map.code[beyond] == VoxelCode.OUTSIDE_REACH)
    # The reach rules' hole is |L1 − L2| = 0.1 m; the elbow limit makes it 0.30 m: between
    # the two the solver says no.
    rule_hole = (r > 0.12) & (r < 0.25) & (z > 0.0)
    assert rule_hole.any() and np.all(desk_map.code[rule_hole] == VoxelCode.NO_SOLUTION)


def test_a_voxel_holds_the_best_manipulability_of_its_solutions(desk_map) -> None:
    arm = bundled('manipulator3d')
    dispatcher = IKDispatcher(arm.model, arm.workspace, 'analytic')
    centres = desk_map.centres()
    checked = 0
    for index in zip(*np.nonzero(desk_map.reachable)):
        if checked == 25:
            break
        if (sum(index) * 7) % 13:          # a spread of voxels, not the first 25
            continue
        answer = dispatcher.solve(IKRequest(position=centres[index].tolist(),
                                            return_all=True), SolveOptions(), arm.home)
        assert answer.result.code == ErrorCode.OK
        values = [metrics.manipulability(arm.model.jacobian(s.q)[:3])
                  for s in answer.result.solutions if arm.model.within_limits(s.q)]
        assert desk_map.manipulability[index] == pytest.approx(max(values), rel=1e-5)
        checked += 1
    assert checked == 25


def test_unsafe_solutions_do_not_count() -> None:
    """pointer3's obstacle ball: IK reaches its inside, every pose touches it."""
    arm = bundled('pointer3')
    reach = Reachability(arm).sample(0.15)
    centre = np.array(arm.safety_config.obstacle.center)
    near = np.linalg.norm(reach.centres() - centre, axis=-1) < 0.2
    assert near.sum() >= 8
    assert not reach.reachable[near].any()
    assert np.all(reach.code[near] == VoxelCode.OBSTACLE)
    plain = IKDispatcher(arm.model, arm.workspace, 'analytic')
    for point in reach.centres()[near]:
        answer = plain.solve(IKRequest(position=point.tolist()), SolveOptions(), arm.home)
        assert answer.result.code == ErrorCode.OK


def test_below_the_floor_is_unreachable() -> None:
    """manipulator3d on a floor 0.2 m below its shoulder, targets below the shoulder allowed."""
    arm = bundled('manipulator3d', ik__min_height_above_shoulder=None,
                  safety__floor_enabled=True, safety__floor_below_shoulder=0.2)
    reach = Reachability(arm).sample(0.1)
    r, z = radii(reach)
    assert not reach.reachable[z < -0.2].any()
    assert np.all(reach.code[(z < -0.2) & (r <= 1.1)] == VoxelCode.FLOOR)
    # Just above the floor, beside the shoulder: the elbow bends down to reach it.
    low = (z > -0.15) & (z < 0.0) & (r > 0.45) & (r < 0.9)
    assert low.any() and reach.reachable[low].all()


def test_save_and_load_round_trip(desk_map, tmp_path) -> None:
    path = desk_map.save(tmp_path / 'desk.npz')
    again = ReachabilityMap.load(path)
    assert again.shape == desk_map.shape and again.resolution == desk_map.resolution
    np.testing.assert_allclose(again.origin, desk_map.origin)
    np.testing.assert_array_equal(again.code, desk_map.code)
    np.testing.assert_array_equal(again.share, desk_map.share)
    np.testing.assert_allclose(again.manipulability, desk_map.manipulability, rtol=1e-6,
                               equal_nan=True)
    np.testing.assert_allclose(again.condition, desk_map.condition, rtol=1e-6,
                               equal_nan=True)
    assert (again.arm, again.goal, again.solver, again.base_frame, again.tip_frame) == \
        ('manipulator3d', 'position', 'analytic', 'base_link', 'tool0')
    assert again.urdf_sha256 == urdf_hash(bundled('manipulator3d').model.urdf)
    assert again.index_of(again.centres()[3, 4, 5]) == (3, 4, 5)
    assert again.index_of([100.0, 0.0, 0.0]) is None
    (tmp_path / 'junk.npz').write_text('not a map')
    with pytest.raises(ReachabilityError, match='not a reachability map'):
        ReachabilityMap.load(tmp_path / 'junk.npz')
    with pytest.raises(ReachabilityError):
        ReachabilityMap.load(tmp_path / 'absent.npz')


@pytest.mark.parametrize('resolution', [0.0, -0.1, math.nan, math.inf, 'fine', True])
def test_bad_resolutions_are_refused(resolution) -> None:
    with pytest.raises(ReachabilityError, match='resolution'):
        reach_grid(bundled('manipulator3d'), resolution)


def test_too_many_voxels_are_refused_with_a_resolution_that_fits() -> None:
    arm = bundled('manipulator3d')
    with pytest.raises(ReachabilityError, match=r'exceed the limit of 1000; use a resolution '
                       r'of at least 0\.22 m'):
        reach_grid(arm, 0.01, max_voxels=1000)
    origin, shape = reach_grid(arm, 0.22, max_voxels=1000)
    assert np.prod(shape) <= 1000


def test_tool_orientations_spread_the_tool_axis() -> None:
    from arm_kinematics.common.transforms import quaternion_to_matrix
    axes = np.array([quaternion_to_matrix(*q)[:, 2] for q in
                     tool_orientations(GoalType.FULL_POSE, 8)])
    np.testing.assert_allclose(np.linalg.norm(axes, axis=1), 1.0)
    assert abs(axes.mean(axis=0)).max() < 0.1        # evenly spread, no side favoured
    down = quaternion_to_matrix(*tool_orientations(GoalType.TOOL_DOWN)[0])
    np.testing.assert_allclose(down[:, 2], [0.0, 0.0, -1.0], atol=1e-12)
    with pytest.raises(ReachabilityError, match='orientations'):
        tool_orientations(GoalType.FULL_POSE, 0)


def test_batch_jacobian_and_dexterity_equal_the_single_ones() -> None:
    model = bundled('six_axis').model
    q = model.random_configurations(40, np.random.default_rng(3))
    q[0] = 0.0          # the stretched, singular pose
    rows = model.position_jacobian_batch(q)
    values, conditions = metrics.dexterity_batch(rows)
    for i in range(len(q)):
        jacobian = model.jacobian(q[i])[:3]
        np.testing.assert_allclose(rows[i], jacobian, atol=1e-12)
        assert values[i] == pytest.approx(metrics.manipulability(jacobian), rel=1e-7, abs=1e-12)
        expected = metrics.condition_number(jacobian)
        assert conditions[i] == pytest.approx(expected, rel=1e-6) or \
            (math.isinf(expected) and math.isinf(conditions[i]))
    assert math.isinf(conditions[0])


def test_full_pose_shares_on_the_ur5() -> None:
    ur5 = REAL_ARMS['ur5']
    arm = load_arm(ur5.urdf(), None, ur5.base, ur5.tip)
    reach = Reachability(arm).sample(0.3, 'full_pose', orientations=4)
    assert reach.solver == 'closed_form' and reach.orientations == 4
    np.testing.assert_array_equal(reach.reachable, reach.code == VoxelCode.REACHABLE)
    shares = set(np.unique(reach.share).tolist())
    assert shares <= {0.0, 0.25, 0.5, 0.75, 1.0} and 1.0 in shares and \
        shares & {0.25, 0.5, 0.75}
    with pytest.raises(ReachabilityError, match='full_pose|FULL_POSE|not'):
        Reachability(bundled('pointer3')).sample(0.3, 'full_pose')


# ---------------------------------------------------------------------- the command
def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b'\x89PNG\r\n\x1a\n' and data[12:16] == b'IHDR'
    width, height = struct.unpack('>II', data[16:24])
    return width, height


def test_the_command_maps_a_bundled_arm(tmp_path, capsys) -> None:
    output = tmp_path / 'desk.npz'
    started = time.perf_counter()
    code = main(['--arm', 'manipulator3d', '--resolution', '0.15', '--output', str(output)])
    assert code == 0 and time.perf_counter() - started < 10.0
    text = capsys.readouterr().out
    assert 'reachable' in text and 'manipulability' in text and 'us per solved voxel' in text
    reach = ReachabilityMap.load(output)
    assert reach.arm == 'manipulator3d' and reach.reachable.any()
    assert png_size((tmp_path / 'desk.png').read_bytes())[0] > 100


def test_the_command_maps_the_ur5(tmp_path, capsys) -> None:
    ur5 = REAL_ARMS['ur5']
    output = tmp_path / 'ur5.npz'
    started = time.perf_counter()
    code = main(['--urdf', str(ur5.path), '--base', ur5.base, '--tip', ur5.tip,
                 '--resolution', '0.25', '--output', str(output)])
    elapsed = time.perf_counter() - started
    assert code == 0, capsys.readouterr().err
    assert elapsed < 20.0
    reach = ReachabilityMap.load(output)
    assert reach.urdf_sha256 == urdf_hash(ur5.urdf())
    # The UR5 reaches about 0.95 m from its shoulder; its reach bound says 1.24 m.
    r = np.linalg.norm(reach.centres() - [0.0, 0.0, 0.089159], axis=-1)
    assert reach.reachable[(r > 0.3) & (r < 0.8)].mean() > 0.9
    assert not reach.reachable[r > 1.0].any()


def test_the_plain_picture_needs_no_matplotlib(desk_map, tmp_path) -> None:
    data = plain_png(desk_map)
    width, height = png_size(data)
    length = struct.unpack('>I', data[33:37])[0]
    assert data[37:41] == b'IDAT'
    raw = zlib.decompress(data[41:41 + length])
    assert len(raw) == height * (1 + 3 * width)
    path = write_picture(desk_map, tmp_path / 'plain.png', use_matplotlib=False)
    assert path.read_bytes() == data


@pytest.mark.parametrize('arguments, message', [
    (['--urdf', '/no/such/arm.urdf'], 'no such file'),
    (['--arm', 'manipulator3d', '--resolution', 'nan'], 'resolution'),
    (['--arm', 'manipulator3d', '--resolution', '-0.1'], 'resolution'),
    (['--arm', 'manipulator3d', '--resolution', 'fine'], 'resolution'),
    (['--arm', 'manipulator3d', '--resolution', '0.001'], 'exceed the limit'),
    (['--arm', 'no_such_arm'], 'invalid choice'),
    (['--arm', 'pointer3', '--goal', 'full_pose'], 'full_pose'),
    (['--arm', 'pointer3', '--solver', 'nope'], 'nope'),
    (['--arm', 'pointer3', '--arm-config', '/no/such.yaml'], 'cannot be read'),
    ([], 'required'),
])
def test_bad_input_exits_2(arguments, message, tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as raised:
        code = main([*arguments, '--output', str(tmp_path / 'x.npz')])
        raise SystemExit(code)
    assert raised.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / 'x.npz').exists()


def test_workspace_admits_what_check_position_admits() -> None:
    for name in ('pointer3', 'manipulator3d', 'ccd5'):
        workspace = bundled(name).workspace
        points = np.random.default_rng(5).uniform(-2.5, 2.5, (400, 3))
        points[:50] = workspace.shoulder + [0.0, 0.0, workspace.max_reach]   # on the shell
        expected = [workspace.check_position(p)[1] is None for p in points]
        np.testing.assert_array_equal(workspace.admits(points), expected)
