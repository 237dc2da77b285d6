"""The ROS-free marker geometry, colours, readout text and the zero-length link check."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

from arm_ik.nodes.marker_settings import MarkerSettings, PARAMETERS, settings_reason
from arm_kinematics.description.chain_rules import zero_length_reason
from arm_kinematics.ik.solvers.base import workspace_from_model
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.visual.arm_visual import (
    circle_points,
    colour_ramp,
    colour_reason,
    dashed_circle,
    floor_half_size,
    format_readout,
    path_colours,
    PATH_END,
    PATH_START,
    plan_drawing,
    polyline_segments,
    pose_metrics,
    reach_circle_radii,
    reach_shell,
    Readout,
    skeleton_points,
    sphere_wireframe,
    wire_cube_edges,
    z_to_direction,
)

ARMS = ('pointer3', 'ccd5', 'six_axis', 'manipulator3d')


def rotate(quaternion: tuple[float, float, float, float], vector: np.ndarray) -> np.ndarray:
    x, y, z, w = quaternion
    u = np.array([x, y, z])
    return 2.0 * u.dot(vector) * u + (w * w - u.dot(u)) * vector + 2.0 * w * np.cross(u, vector)


# ---------------------------------------------------------------------------- reach shell
@pytest.mark.parametrize('arm, has_hole', [('pointer3', True), ('manipulator3d', True),
                                           ('ccd5', False), ('six_axis', False)])
def test_reach_shell_follows_the_workspace(arm, has_hole, load_arm):
    model = load_arm(arm)
    workspace = workspace_from_model(model)
    shell = reach_shell(workspace)
    assert shell.outer == pytest.approx(workspace.max_reach)
    assert shell.has_hole is has_hole
    # The stretched arm's tip lies on the outer shell for the two-link arms.
    if arm == 'pointer3':
        tip = model.fk(np.zeros(3))[:3, 3]
        assert np.linalg.norm(tip - shell.centre) == pytest.approx(shell.outer)
        assert shell.inner == pytest.approx(0.95 - 0.85)


def test_sphere_wireframe_points_lie_on_the_sphere():
    centre = np.array([0.1, -0.2, 0.4])
    lines = sphere_wireframe(centre, 1.5, meridians=8, parallels=3, segments=32)
    assert len(lines) == 8 + 3
    for line in lines:
        assert np.allclose(np.linalg.norm(line - centre, axis=1), 1.5)
    # Odd parallel counts include the equator.
    assert any(np.allclose(line[:, 2], centre[2]) for line in lines)


# ---------------------------------------------------------------------------- floor
@pytest.mark.parametrize('reach, expected', [(1.8, [0.5, 1.0, 1.5]), (1.1, [0.5, 1.0]),
                                             (1.0, [0.5, 1.0]), (0.4, [])])
def test_reach_circles_every_half_metre(reach, expected):
    assert reach_circle_radii(reach).tolist() == pytest.approx(expected)


@pytest.mark.parametrize('spacing', [0.0, -0.5, math.nan, math.inf])
def test_reach_circles_refuse_bad_spacing(spacing):
    with pytest.raises(ValueError, match='circle spacing'):
        reach_circle_radii(1.0, spacing)


def test_dashed_circle_is_on_the_circle_and_dashed():
    centre = np.array([0.0, 0.0, 0.02])
    segments = dashed_circle(centre, 1.5, dash=0.1, duty=0.5)
    assert segments.shape[0] % 2 == 0 and segments.shape[0] // 2 == round(2 * math.pi * 1.5 / 0.1)
    assert np.allclose(np.linalg.norm(segments[:, :2], axis=1), 1.5)
    assert np.allclose(segments[:, 2], 0.02)
    # Each dash covers half its period: the gaps are as long as the dashes.
    angles = np.unwrap(np.arctan2(segments[:, 1], segments[:, 0]))
    dash = angles[1::2] - angles[0::2]
    gap = np.diff(angles[0::2])
    assert np.allclose(dash[:-1], gap / 2.0)
    assert len(dashed_circle(centre, 0.01)) == 2 * 12            # never fewer than 12


def test_floor_covers_the_reach():
    assert floor_half_size(1.8) == pytest.approx(2.0)
    assert floor_half_size(1.0) == pytest.approx(1.5)
    ring = circle_points([0.0, 0.0, 0.0], 2.0, 16)
    assert np.allclose(ring[0], ring[-1])


# ---------------------------------------------------------------------------- colours
def test_path_runs_blue_to_orange():
    colours = path_colours(5)
    assert np.allclose(colours[0], PATH_START) and np.allclose(colours[-1], PATH_END)
    assert PATH_START[2] > PATH_START[0] and PATH_END[0] > PATH_END[2]      # blue, orange
    blue_share = colours[:, 2] - colours[:, 0]
    assert np.all(np.diff(blue_share) < 0.0)        # steadily from blue towards orange
    assert path_colours(0).shape == (0, 4)
    assert np.allclose(path_colours(1), [PATH_START])
    assert np.allclose(colour_ramp([-1.0, math.nan, 2.0]), [PATH_START, PATH_START, PATH_END])


@pytest.mark.parametrize('value, fragment', [
    ([0.1, 0.2, 0.3], '4 values'), ([0.1, math.nan, 0.3, 1.0], 'g = nan'),
    ([0.1, 0.2, -0.3, 1.0], 'b = -0.3'), ([0.1, 0.2, 0.3, math.inf], 'a = inf'),
    ('red', '4 numbers'), (None, '4 numbers'), ([1.0, 1.0, 1.0, 1.5], 'a = 1.5')])
def test_colour_checks(value, fragment):
    assert fragment in colour_reason(value, 'floor_colour')


def test_colour_accepts_a_valid_rgba():
    assert colour_reason((0.0, 0.5, 1.0, 1.0), 'c') == ''


# ---------------------------------------------------------------------------- shapes
def test_wire_cube_has_twelve_axis_aligned_edges():
    edges = wire_cube_edges([1.0, 2.0, 3.0], 0.2).reshape(12, 2, 3)
    lengths = np.linalg.norm(edges[:, 1] - edges[:, 0], axis=1)
    assert np.allclose(lengths, 0.2)
    assert np.allclose(np.abs(edges - [1.0, 2.0, 3.0]), 0.1)


def test_polyline_segments():
    line = np.array([[0.0, 0, 0], [1.0, 0, 0], [1.0, 1, 0]])
    assert polyline_segments(line).tolist() == [[0, 0, 0], [1, 0, 0], [1, 0, 0], [1, 1, 0]]
    assert polyline_segments(line[:1]).shape == (0, 3)


@pytest.mark.parametrize('direction', [[0, 0, 1], [0, 0, -2], [1, 0, 0], [0.3, -0.4, 0.5],
                                       [1e-9, 0, -1]])
def test_cylinder_orientation_turns_z_onto_the_axis(direction):
    quaternion = z_to_direction(direction)
    assert np.linalg.norm(quaternion) == pytest.approx(1.0)
    d = np.asarray(direction, dtype=float)
    assert np.allclose(rotate(quaternion, np.array([0.0, 0.0, 1.0])), d / np.linalg.norm(d),
                       atol=1e-8)
    assert z_to_direction([0.0, 0.0, 0.0]) == (0.0, 0.0, 0.0, 1.0)
    assert z_to_direction([math.nan, 0.0, 1.0]) == (0.0, 0.0, 0.0, 1.0)


@pytest.mark.parametrize('arm', ARMS)
def test_skeleton_runs_from_base_to_tip(arm, load_arm):
    model = load_arm(arm)
    q = np.clip(np.full(model.dof, 0.3), model.lower, model.upper)
    points = skeleton_points(model, q)
    assert points.shape == (model.dof + 2, 3)
    assert np.allclose(points[0], 0.0)
    assert np.allclose(points[-1], model.fk(q)[:3, 3])


# ---------------------------------------------------------------------------- readout
def test_pose_metrics_match_the_model(load_arm):
    model = load_arm('pointer3')
    workspace = workspace_from_model(model)
    q = np.array([0.2, 0.5, -1.0])
    metrics = pose_metrics(model, workspace, q)
    assert np.allclose(metrics.tip, model.fk(q)[:3, 3])
    # Planar two-link arm: w of the full 3-D position Jacobian is r·l1·l2·|sin q2|, with r the
    # tip's distance from the yaw axis.
    radius = math.hypot(metrics.tip[0], metrics.tip[1])
    assert metrics.manipulability == pytest.approx(radius * 0.95 * 0.85 * abs(math.sin(-1.0)))
    assert 1.0 <= metrics.condition_number < math.inf
    assert 0.0 < metrics.reach_fraction < 1.0
    stretched = pose_metrics(model, workspace, np.zeros(3))
    assert stretched.condition_number == math.inf and stretched.reach_fraction == \
        pytest.approx(1.0)
    with pytest.raises(ValueError, match='finite'):
        pose_metrics(model, workspace, [0.0, math.nan, 0.0])


def test_readout_text():
    text = format_readout(Readout(
        arm='six_axis', tip=np.array([0.8123, -0.1, 1.2]), ik_error=1.25e-5,
        manipulability=0.2134, condition_number=3.456, reach_fraction=0.72, solver='dls',
        branch='elbow_up', failure='OUT_OF_REACH: target 2.5 m from the shoulder'))
    lines = text.split('\n')
    assert lines[0] == 'six_axis  tip x +0.812  y -0.100  z +1.200 m'
    assert lines[1] == 'IK error 0.013 mm   w 0.213   cond 3.5   reach 72 %'
    assert lines[2] == 'solver dls   branch elbow_up'
    assert lines[3] == 'last failure: OUT_OF_REACH: target 2.5 m from the shoulder'


def test_readout_before_anything_is_known_and_with_odd_values():
    lines = format_readout(Readout()).split('\n')
    assert lines == ['tip: no joint state yet', 'IK error -   w -   cond -   reach -',
                     'solver -   branch -', 'last failure: none']
    text = format_readout(Readout(condition_number=math.inf, ik_error=math.nan,
                                  failure='a\nlong ' + 'x' * 200))
    assert 'cond inf' in text and 'IK error -' in text
    failure = text.split('\n')[3]
    assert len(failure) <= 72 and failure.endswith('...') and 'a long' in failure


# ---------------------------------------------------------------------------- planned path
def test_a_plan_keeps_finite_points_and_whole_ghosts():
    tips = [[0.0, 0.0, 1.0], [math.nan, 0.0, 1.0], [0.1, 0.0, 1.0]]
    ghosts = [[0, 0, 0], [0, 0, 0.4], [0.3, 0, 0.8],          # ghost 0: 3 points
              [0, 0, 0], [math.inf, 0, 0],                     # ghost 1: one finite point
              [0, 0, 0], [0, 0.1, 0.4]]                        # ghost 2: 2 points
    plan = plan_drawing(True, 'min_jerk', tips, ghosts, [3, 2, 2], [1.0, 0.5, 0.9],
                        [math.nan, 0.0, 0.0])
    assert plan.tips.tolist() == [[0.0, 0.0, 1.0], [0.1, 0.0, 1.0]]
    assert [len(g) for g in plan.ghosts] == [3, 2]
    assert plan.target.tolist() == [1.0, 0.5, 0.9] and plan.failure_point is None
    # Sizes that do not add up: no ghost is guessed at; no target named: None.
    odd = plan_drawing(False, 'linear', tips, ghosts, [3, 3])
    assert odd.ghosts == () and odd.target is None and not odd.feasible
    assert plan_drawing(True, '', [], [], []).tips.shape == (0, 3)


# ---------------------------------------------------------------------------- marker scene
def test_marker_scene_rules(load_arm):
    from arm_kinematics.ik.result import ErrorCode
    from arm_kinematics.visual.marker_scene import FAILED, IKAnswer, MarkerScene, PENDING, REACHED
    scene = MarkerScene(reach_shell(workspace_from_model(load_arm('pointer3'))))
    # A pose counts as motion only beyond 1e-5 rad of the pose drawn.
    assert scene.pose(np.zeros(3), 1.0, None)
    scene.drawn_q = np.zeros(3)
    assert not scene.pose(np.full(3, 5e-6), 1.1, None) and scene.pose(np.full(3, 1e-4), 1.2, None)
    assert scene.fresh(1.5, 0.5) and not scene.fresh(1.8, 0.5)
    # An announced shell must be finite and not empty.
    assert not scene.announced_shell((0.0, 0.0, math.nan), 1.0, 0.0)
    assert not scene.announced_shell((0.0, 0.0, 0.4), 1.0, 1.0)
    assert scene.announced_shell((0.0, 0.0, 0.4), 1.0, 0.2) and scene.shell.has_hole
    # IK answers colour the target; BUSY is no failure.
    scene.ik_answered(IKAnswer('dls', '', ErrorCode.OK, 1e-5), (1.0, 0.0, 1.0), 'solved')
    assert scene.target_fate == REACHED and scene.failure == ''
    scene.ik_answered(IKAnswer('dls', '', ErrorCode.BUSY, 0.0), (math.nan, 0, 0), 'busy')
    assert scene.target.tolist() == [1.0, 0.0, 1.0] and scene.failure == ''
    scene.ik_answered(IKAnswer('dls', '', ErrorCode.OUT_OF_REACH, math.inf), (3, 0, 1), 'far')
    assert scene.target_fate == FAILED and scene.failure == 'OUT_OF_REACH: far'
    # A plan with a target makes it pending again; target_status reports name the step.
    scene.planned(plan_drawing(True, '', [], [], [], (1.0, 0.2, 1.0)))
    assert scene.target_fate == PENDING and scene.target.tolist() == [1.0, 0.2, 1.0]
    assert scene.target_report('refused', (0.5, 0.0, 0.5), 'pick', 'out of reach')
    assert scene.target_fate == FAILED and scene.failure == 'pick refused: out of reach'
    assert not scene.target_report('', (0.5, 0.0, 0.5), '', '')
    # Contacts merge within 1 cm and stay contact_memory seconds (0: the last status only).
    assert scene.measured_contacts([(1.0, 0.0, 1.0), (1.005, 0.0, 1.0)], 10.0, 5.0)
    assert len(scene.contacts) == 1
    assert not scene.measured_contacts([(1.0, 0.0, 1.0)], 11.0, 5.0)
    assert not scene.expire_contacts(14.0, 5.0) and scene.expire_contacts(15.5, 5.0)
    assert scene.measured_contacts([(0.0, 1.0, 1.0)], 16.0, 0.0)
    assert scene.measured_contacts([], 16.1, 0.0) and scene.contacts == []
    assert not scene.measured_contacts([], 16.2, 0.0)


# ---------------------------------------------------------------------------- settings
DEFAULTS = {name: param.default for name, param in PARAMETERS.params.items()}


def _reason(name: str, value: object) -> str:
    """What the node answers to ``name = value``: its own spec first, then the whole set."""
    return PARAMETERS.params[name].reason(value) or settings_reason({**DEFAULTS, name: value})


def test_marker_settings_defaults_are_valid():
    assert all(param.reason(param.default) == '' for param in PARAMETERS.params.values())
    assert settings_reason(DEFAULTS) == ''
    settings = MarkerSettings.from_values(DEFAULTS)
    assert settings.update_rate == 10.0 and settings.floor_colour == (0.55, 0.55, 0.6, 0.3)


# show_capsules of another type never gets here: rclpy refuses a wrongly typed parameter.
@pytest.mark.parametrize('name, value, fragment', [
    ('update_rate', 0.0, 'must be > 0'), ('update_rate', -1.0, 'must be > 0'),
    ('republish_rate', math.nan, 'must be finite'), ('readout_rate', math.inf, 'finite'),
    ('marker_lifetime', 0.5, 'must exceed the heartbeat period'),
    ('target_size', -0.1, 'must be > 0'), ('text_size', 'big', 'must be a number'),
    ('contact_memory', -1.0, 'must be >= 0'), ('update_rate', 1000.0, 'must be <= 100'),
    ('floor_colour', (1.0, 0.0, 0.0), '4 values'),
    ('path_start_colour', (0.1, 0.2, math.nan, 1.0), 'b = nan')])
def test_marker_settings_reject_bad_values(name, value, fragment):
    reason = _reason(name, value)
    assert fragment in reason and name in reason


def test_marker_settings_accept_zero_contact_memory():
    assert _reason('contact_memory', 0.0) == ''


# ---------------------------------------------------------------------------- case 24
@pytest.mark.parametrize('arm', ARMS)
def test_real_arms_have_no_zero_length_link(arm, load_arm):
    assert zero_length_reason(load_arm(arm)) == ''


@pytest.mark.parametrize('joint, fragment', [
    ('elbow_pitch', 'from joint "shoulder_pitch" to joint "elbow_pitch" has zero length'),
    # A tool frame on the last joint's origin is the usual way vendors add one: accepted.
    ('tool0_joint', '')])
def test_zero_length_links_are_named(joint, fragment, urdf_of):
    root = ElementTree.fromstring(urdf_of('pointer3'))
    (element,) = [j for j in root.findall('joint') if j.get('name') == joint]
    element.find('origin').set('xyz', '0 0 0')
    model = ArmModel.from_urdf(ElementTree.tostring(root, encoding='unicode'))
    reason = zero_length_reason(model)
    assert fragment in reason and bool(reason) == bool(fragment), reason
