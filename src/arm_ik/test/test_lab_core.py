"""The browser lab's ROS-free parts: value checks, the joint-map image, the panel's change
path and the arm view's last guard (viser itself accepts NaN)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arm_ik.lab import checks
from arm_ik.lab.colours import MAP_BOTH, MAP_CONTACT, MAP_FLOOR, MAP_FREE
from arm_ik.lab.controls import arm_controls, branch_labels, Control, length_controls
from arm_ik.lab.drawing import gradient, gradient_segments, PATH_END, PATH_START
from arm_ik.lab.joint_map_image import grid_from_arrays, render
from arm_ik.lab.panel import Outcome

NAMES = ('a', 'b', 'c')


@pytest.mark.parametrize('host, reason, loopback', [
    ('127.0.0.1', '', True), ('localhost', '', True), ('::1', '', True),
    ('0.0.0.0', '', False), ('192.168.1.5', '', False),
    ('example.com', 'not an IP address', False), ('', 'not an IP address', False),
])
def test_hosts(host, reason, loopback):
    assert (reason in checks.host_reason(host)) if reason else checks.host_reason(host) == ''
    assert checks.is_loopback(host) is loopback


def test_the_lab_checks_its_vectors_and_lengths_with_the_core_checks():
    """The gizmo's values and the link lengths go through kinematics.checks (the lab had
    copies of its own)."""
    from arm_kinematics.common.checks import check_vector, positive_reason
    assert check_vector([1, 2, 3], 3, 'target')[0].tolist() == [1.0, 2.0, 3.0]
    assert 'target[1] is nan' in check_vector([1, math.nan, 3], 3, 'target')[1]
    assert 'expected 3' in check_vector([1, 2], 3, 'target')[1]
    assert 'not a numeric vector' in check_vector(['x', 2, 3], 3, 'target')[1]
    assert positive_reason(0.5, 'L2') == ''
    for bad in (0.0, -1.0, math.nan, math.inf, True, 'fast'):
        assert 'L2' in positive_reason(bad, 'L2')


def test_control_coercion():
    number = Control('damping', 'Damping', 'number', 0.05, value_type=float)
    assert number.coerce(1) == (1.0, '')
    assert 'finite' in number.coerce(math.nan)[1]
    assert 'number' in number.coerce('0.1')[1]
    count = Control('n', 'N', 'number', 3, value_type=int)
    assert count.coerce(4.0) == (4, '') and 'whole' in count.coerce(2.5)[1]
    flag = Control('f', 'F', 'checkbox', True, value_type=bool)
    assert flag.coerce(False) == (False, '') and flag.coerce(1)[1]
    choice = Control('s', 'S', 'dropdown', 'x', options=('x', 'y'))
    assert choice.coerce('y') == ('y', '') and 'not one of' in choice.coerce('z')[1]


def test_controls_of_the_arms(load_arm):
    from arm_kinematics.description.bundled import load_arm_config
    six = load_arm('six_axis')
    keys = [c.key for c in arm_controls(six, load_arm_config('six_axis'))]
    assert {'solver', 'damping', 'motion_law', 'obstacle_radius', 'motor_speed',
            'iterations_per_tick', 'joint_limits', 'branch', 'orientation'} <= set(keys)
    assert 'front_up_noflip' in branch_labels(six)
    assert 'elbow_up' in branch_labels(load_arm('pointer3'))
    lengths = length_controls(load_arm_config('pointer3'))
    assert [c.key for c in lengths] == ['length_shoulder_height', 'length_l1', 'length_l2']
    assert lengths[1].initial == pytest.approx(0.95)


def test_gradient_runs_blue_to_orange():
    colours = gradient(5)
    assert colours[0].tolist() == PATH_START.astype(int).tolist()
    assert colours[-1].tolist() == PATH_END.astype(int).tolist()
    segments, segment_colours = gradient_segments([[0, 0, 0], [1, 0, 0], [math.nan, 0, 0],
                                                   [2, 0, 0]])
    assert segments.shape == (2, 2, 3) and segment_colours.shape == (2, 2, 3)


def test_joint_map_image():
    cells = np.zeros((4, 5), dtype=np.uint8)
    cells[0, :] = 1                 # lowest shoulder row: below the floor
    cells[2, 3] = 2                 # one contact cell
    cells[3, 4] = 3                 # floor and contact
    grid = grid_from_arrays(-1.0, 0.5, 4, 0.0, 0.25, 5, bytes(cells.ravel()),
                            path_rows=[-0.5, 0.5], path_columns=[0.25, 0.75],
                            contact_rows=[0.0], contact_columns=[0.5])
    image = render(grid, cell_pixels=10)
    assert image.shape == (40, 50, 3) and image.dtype == np.uint8
    assert image[35, 45].tolist() == list(MAP_FLOOR)          # row 0 is drawn at the bottom
    assert image[15, 35].tolist() == list(MAP_CONTACT)        # row 2, column 3
    assert image[5, 45].tolist() == list(MAP_BOTH)
    assert image[5, 5].tolist() == list(MAP_FREE)
    assert image[15, 25].tolist() == [255, 30, 30]        # the contact at row 2, column 2
    with pytest.raises(ValueError):
        grid_from_arrays(0.0, 0.1, 4, 0.0, 0.1, 5, bytes(19))


def _capsules_of(model):
    from arm_kinematics.description.safety_config import (
        default_safety_section,
        parse_safety_config,
    )
    from arm_kinematics.scene.geometry import SafetyGeometry
    return SafetyGeometry(model, parse_safety_config(default_safety_section(model)))


def test_arm_view_never_shows_non_finite_poses(viser_server, urdf_of, load_arm):
    from arm_ik.lab.urdf_view import ArmView
    model = load_arm('pointer3')
    view = ArmView(viser_server, urdf_of('pointer3'), model.joint_names, _capsules_of(model))
    assert not view.capsules, view.reason          # primitives: drawn from the URDF
    assert view.show([0.1, 0.2, -0.3])
    for bad in ([math.nan, 0.0, 0.0], [0.0, math.inf, 0.0], [0.0, 0.0]):
        assert not view.show(bad)
    assert view.shown.tolist() == [0.1, 0.2, -0.3] and view.refused == 3


def test_meshes_resolve_through_the_urdf_folder_or_the_arm_is_capsules(viser_server):
    """SO-101's package://example-robot-data/... STL meshes: found from the URDF file's
    folder and drawn opaque; with no search path they are not found and the arm is drawn as
    its capsules, posed by FK."""
    from arm_ik.lab.urdf_view import ArmView, load_urdf, MeshError, search_paths
    from arm_kinematics.model.arm_model import ArmModel
    from arm_testing.real_arms import REAL_ARMS
    arm = REAL_ARMS['so101']
    urdf = load_urdf(arm.urdf(), search_paths(str(arm.path)))
    assert len(urdf.scene.geometry) >= 5
    for mesh in urdf.scene.geometry.values():
        assert (mesh.visual.vertex_colors[:, 3] == 255).all()       # never see-through
    with pytest.raises(MeshError, match='not found .*package://example-robot-data'):
        load_urdf(arm.urdf(), [])
    model = ArmModel.from_urdf(arm.urdf(), arm.base, arm.tip)
    geometry = _capsules_of(model)
    view = ArmView(viser_server, arm.urdf(), model.joint_names, geometry, paths=[])
    assert view.capsules and 'not found' in view.reason
    q = model.clamp(np.full(model.dof, 0.4))
    assert view.show(q)
    starts, ends, _ = geometry.link_segments(q)
    cylinders = view.capsule_view._cylinders
    assert len(cylinders) == len(geometry.capsules) > 0
    for cylinder, start, end in zip(cylinders, starts[0], ends[0]):
        assert np.allclose(cylinder.position, 0.5 * (start + end))
        # The cylinder's axis (+Z turned by its quaternion) runs along the link.
        w, x, y, z = cylinder.wxyz
        axis = np.array([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)])
        link = (end - start) / np.linalg.norm(end - start)
        assert np.allclose(axis, link, atol=1e-9)


def test_panel_reverts_a_refused_change(viser_server):
    from arm_ik.lab.panel import ControlPanel
    control = Control('radius', 'Radius', 'number', 0.25, ('safety_monitor', 'r'),
                      value_type=float)
    answers = {0.5: Outcome(True, 'ok'), -1.0: Outcome(False, 'safety_monitor refused: < 0')}
    applied, reported = [], []

    def apply(control_, value):
        applied.append(value)
        return answers[value]
    panel = ControlPanel(viser_server.gui, [control], apply,
                         lambda c, outcome: reported.append(outcome))
    assert panel.set('radius', 0.5) == Outcome(True, 'ok')
    outcome = panel.set('radius', -1.0)
    assert not outcome.ok and 'refused' in outcome.message
    assert panel.handles['radius'].value == 0.5 and panel.value('radius') == 0.5
    assert 'finite' in panel.set('radius', math.nan).message
    panel.show('radius', 0.7)              # a value the node reports: not applied again
    assert applied == [0.5, -1.0] and panel.value('radius') == 0.7
    assert [o.ok for o in reported] == [True, False, False]


def test_panel_texts(load_arm):
    from arm_ik.lab.texts import damping_sweep_markdown, joint_map_caption, readout_rows, table
    from arm_kinematics.ik.solvers.base import workspace_from_model
    from arm_kinematics.visual.arm_visual import pose_metrics
    model = load_arm('six_axis')
    q = np.array([0.1, 0.5, -0.8, 0.0, 0.6, 0.0])
    readout = pose_metrics(model, workspace_from_model(model), q)
    rows = dict(readout_rows(readout, readout.tip + [0.0, 0.0, 0.002], {'error': math.inf},
                             'IDLE', 'SAFE', '', 2, 'non-finite position of a'))
    assert rows['tracking error (mm)'] == '2.0' and rows['IK error (mm)'] == '∞'
    assert rows['joint_states ignored'] == '2 (last: non-finite position of a)'
    assert table([('a', 'b')]).endswith('| a | b |')
    markdown, count = damping_sweep_markdown(model)
    assert count == 5 and markdown.count('\n| ') == 6        # header and five values of λ
    caption = joint_map_caption(['shoulder_pitch', 'elbow_pitch'],
                                {'base_yaw': math.pi / 2, 'shoulder_pitch': 0.0,
                                 'elbow_pitch': 0.0}, '3 x 4 cells')
    assert caption.startswith('shoulder_pitch (up) × elbow_pitch (right) at base_yaw 90°')


def test_an_executed_path_is_plotted_in_the_arms_joint_order(load_arm):
    # LabMoves._plot_move reads the executor's executed path (names in any order, a NaN
    # point skipped) into the joint and manipulability plots.
    from types import SimpleNamespace

    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from arm_ik.nodes.lab_moves import LabMoves
    from arm_kinematics.ik.metrics import manipulability

    model = load_arm('pointer3')
    plots = []
    layout = SimpleNamespace(joint_plot='joints', w_plot='w',
                             plot=lambda plot, times, *series: plots.append((plot, times,
                                                                             series)))
    viewer = SimpleNamespace(names=model.joint_names, model=model, layout=layout)
    path = JointTrajectory(joint_names=list(reversed(model.joint_names)))
    for k, q in enumerate(([0.3, 0.2, 0.1], [math.nan, 0.0, 0.0], [0.6, 0.4, 0.2])):
        path.points.append(JointTrajectoryPoint(
            positions=q, time_from_start=Duration(sec=k, nanosec=0)))
    LabMoves._plot_move(viewer, path)
    (joints, times, series), (w, w_times, (values,)) = plots
    assert (joints, w) == ('joints', 'w') and times.tolist() == [0.0, 2.0]
    assert [s.tolist() for s in series] == [[0.1, 0.2], [0.2, 0.4], [0.3, 0.6]]
    assert values.tolist() == pytest.approx(
        [manipulability(model.jacobian(np.array(q))) for q in ([0.1, 0.2, 0.3],
                                                               [0.2, 0.4, 0.6])])


SCARA = """<robot name="scara">
  <link name="base"/><link name="l1"/><link name="l2"/><link name="tool"/>
  <joint name="yaw_1" type="revolute"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.3"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="yaw_2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="lift" type="prismatic"><parent link="l2"/><child link="tool"/>
    <origin xyz="0.3 0 0"/><axis xyz="0 0 -1"/>
    <limit lower="0" upper="0.2" effort="1" velocity="0.1"/></joint>
</robot>"""


def test_the_joint_map_tab_says_what_it_maps_or_why_there_is_none(load_arm):
    """ccd5 gets a map of shoulder × elbow that is one slice (two more pitch joints); an
    arm without two horizontal axes (a SCARA) is told why it gets none."""
    from arm_ik.lab.texts import joint_map_note
    from arm_kinematics.model.arm_model import ArmModel
    note = joint_map_note(load_arm('ccd5'))
    assert 'shoulder_pitch (up) × elbow_pitch (right)' in note
    assert 'wrist_pitch, wrist_tip_pitch are pitch joints too' in note and 'slice' in note
    assert 'Refresh joint map' in note
    note = joint_map_note(load_arm('pointer3'))
    assert 'at the current angles of base_yaw.' in note and 'slice' not in note
    note = joint_map_note(ArmModel.from_urdf(SCARA, 'base', 'tool'))
    assert note.startswith('**No joint map for this arm.**')
    assert 'first two joints whose axes are horizontal' in note
    assert 'Of its joints (yaw_1, yaw_2, lift) none has a horizontal axis' in note


@pytest.mark.parametrize('key', ['ur5', 'panda'])
def test_collada_meshes_show_or_the_arm_is_capsules_with_the_reason(viser_server, key):
    """UR5 and Panda visuals are .dae files (package://example-robot-data/...): found from
    the URDF's folder, they need pycollada to be read; without it (not a dependency) the arm
    is drawn as capsules and the reason names the missing package."""
    import importlib.util

    from arm_ik.lab.urdf_view import ArmView, search_paths
    from arm_kinematics.model.arm_model import ArmModel
    from arm_testing.real_arms import REAL_ARMS
    arm = REAL_ARMS[key]
    model = ArmModel.from_urdf(arm.urdf(), arm.base, arm.tip)
    view = ArmView(viser_server, arm.urdf(), model.joint_names, _capsules_of(model),
                   paths=search_paths(str(arm.path)))
    if importlib.util.find_spec('collada') is None:
        assert view.capsules and 'pycollada' in view.reason, view.reason
    else:
        assert not view.capsules, view.reason
    assert view.show(model.clamp(np.full(model.dof, 0.3)))


def test_lab_state_hands_each_scene_change_to_one_render_tick():
    from arm_ik.lab.state import LabState
    state = LabState(np.array([1.0, 0.0, 0.5]))
    assert state.measured(np.zeros(3)) is True              # the first pose: map due
    assert state.measured(np.ones(3)) is False
    state.update_scene('ball', (0.0, 0.0, 0.0), 0.03, False)
    state.update_scene('ball', (0.1, 0.0, 0.0), 0.03, True)  # the last one wins
    drawn = state.take_render()
    assert drawn.fresh and drawn.q.tolist() == [1.0, 1.0, 1.0]
    assert drawn.updates == {'ball': ((0.1, 0.0, 0.0), 0.03, True)}
    again = state.take_render()
    assert not again.fresh and again.updates == {}
    # One IK preview at a time; a drag meanwhile asks for one more.
    first = state.begin_preview(10.0, 3.0)
    assert first is not None and state.begin_preview(10.5, 3.0) is None
    assert state.end_preview(first) is True
    second = state.begin_preview(11.0, 3.0)
    assert second is not None and state.end_preview(second) is False
    # A preview whose reply never came is given up after lost_after s: the next drag starts
    # one, and the lost one's late answer changes nothing.
    lost = state.begin_preview(20.0, 3.0)
    assert state.begin_preview(22.0, 3.0) is None
    fresh = state.begin_preview(23.5, 3.0)
    assert fresh is not None and fresh != lost
    assert state.end_preview(lost) is False and state.begin_preview(23.6, 3.0) is None
    assert state.end_preview(fresh) is True
    # target_status: the sequence's reports say whether the cycle runs; a started move is
    # tracked (a NaN target is not).
    state.cycle_report('**STARTED**', True, True, np.array([0.2, 0.0, 0.9]))
    assert state.cycle_running and state.take_render().tracked.tolist() == [0.2, 0.0, 0.9]
    state.cycle_report('**FAILED**', False, False, np.array([math.nan, 0.0, 0.0]))
    assert state.cycle_running and state.take_render().tracked.tolist() == [0.2, 0.0, 0.9]
    state.record_ik('dls', '', 3, 'no solution', math.inf, 50)
    ik, failure, rejected, _ = state.readout()
    assert ik['solver'] == 'dls' and failure == 'IK: no solution' and rejected == 0


def test_error_history_keeps_its_window():
    from arm_ik.lab.drawing import ErrorHistory
    history = ErrorHistory(start=100.0)
    tip = np.zeros(3)
    history.update(100.0, np.array([0.001, 0.0, 0.0]), tip, 10.0)
    assert history.arrays() is None                          # one point: nothing to plot
    history.update(105.0, None, None, 10.0)                 # nothing tracked: no point
    history.update(111.0, np.array([0.0, 0.002, 0.0]), tip, 10.0)
    times, errors = history.arrays() or (None, None)
    assert times is None                                     # the first point left the window
    history.update(112.0, np.array([0.0, 0.0, 0.003]), tip, 10.0)
    times, errors = history.arrays()
    assert times.tolist() == [11.0, 12.0] and errors == pytest.approx([2.0, 3.0])
