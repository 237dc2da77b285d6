"""lab_viewer started in its own process beside the pipeline, talked to over DDS and HTTP.

What a browser user does is driven through the node's ``~/set_controls`` service (on with
``control_service``): it assigns the panel input's value, which runs the very callback a
browser change runs, so "the panel" here is the real panel minus the websocket. The browser
itself is a headless Chromium with no network beyond loopback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
import math
from pathlib import Path
import re
import time
import urllib.request

import numpy as np
import pytest
from rcl_interfaces.srv import GetParameters, SetParameters
from rclpy.parameter import Parameter, parameter_value_to_python
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

from arm_testing.ros_harness import (
    call_service,
    claimed_domain,
    interrupt,
    node_on_domain,
    process_group,
    StartedAhead,
    wait_for,
)

pytest.importorskip('viser', reason='viser is not installed (requirements/dev.txt)')

from arm_ik.lab.browser import BrowserError, capture, find_chromium, pixel_spread  # noqa: E402
from arm_testing.ros_harness import config_file

ARM = 'six_axis'
NAMESPACE = f'/{ARM}'
PIPELINE = ('arm_info', 'ik_server', 'trajectory_executor', 'safety_monitor')
URL_LINE = re.compile(r'browser lab at (http://127\.0\.0\.1:(\d+))')
CHROMIUM_MISSING = ('chromium is not installed: `make test` installs it when run as root '
                    '(tools/ensure_chromium.sh), else apt-get install chromium')
REPLY = 20.0
START_TIMEOUT = 60.0     # a bound only (a loaded machine, a rig starting beside)


def start_lab(processes, urdf_of, ns: str, **params):
    """lab_viewer in ``ns`` on any free port (its URL: ``lab_url``)."""
    return processes.start_node(
        'arm_ik', 'lab_viewer', namespace=ns,
        params={'robot_description': urdf_of(ARM), 'arm': ARM,
                'arm_config': config_file(ARM), 'port': 0, **params})


def lab_url(process) -> str:
    """The lab's URL, once its page answers (its start-up line)."""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        found = URL_LINE.search(process.output())
        if found:
            return found.group(1)
        if not process.alive() or time.monotonic() > deadline:
            pytest.fail(f'lab_viewer did not start:\n{process.output()}')
        time.sleep(0.2)


def start_pipeline(processes, urdf_of, ns: str) -> list:
    return [processes.start_node('arm_ik', executable, namespace=ns,
                                 params={'robot_description': urdf_of(ARM), 'arm': ARM,
                                         'arm_config': config_file(ARM)})
            for executable in PIPELINE]


def listening_addresses(port: int) -> list[str]:
    """Local addresses of every TCP socket listening on ``port`` (from /proc/net/tcp*)."""
    addresses = []
    for table, width in (('/proc/net/tcp', 8), ('/proc/net/tcp6', 32)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state = fields[1], fields[3]
            address, port_hex = local.split(':')
            if state == '0A' and int(port_hex, 16) == port and len(address) == width:
                addresses.append(address)
    return addresses


class Panel:
    """The test's side of ~/set_controls and of the pipeline's parameter services."""

    def __init__(self, node, spin, ns: str) -> None:
        self.node, self.spin, self.ns = node, spin, ns
        self.client = self.node.create_client(SetParameters, f'{ns}/lab_viewer/set_controls')
        wait_for(self.client.service_is_ready, REPLY, self.spin, 'lab_viewer/set_controls')
        # An empty request (answered with no results), sent again until answered: a reply to
        # a client made a moment ago can be lost while the lab has not yet found its reply
        # reader (arm_ik.middleware.call_until_answered), and set() sends each control once
        # (plan_and_go is not a request to send twice).
        call_service(self.client, SetParameters.Request(), self.spin, REPLY)

    def set(self, key: str, value) -> tuple[bool, str]:
        request = SetParameters.Request(parameters=[Parameter(key, value=value)
                                                    .to_parameter_msg()])
        future = self.client.call_async(request)
        wait_for(future.done, REPLY, self.spin, f'set_controls {key}')
        result = future.result().results[0]
        return result.successful, result.reason

    def parameter(self, node_name: str, name: str):
        client = self.node.create_client(GetParameters,
                                         f'{self.ns}/{node_name}/get_parameters')
        wait_for(client.service_is_ready, REPLY, self.spin, f'{node_name}/get_parameters')
        reply = call_service(client, GetParameters.Request(names=[name]), self.spin, REPLY)
        self.node.destroy_client(client)
        return parameter_value_to_python(reply.values[0])

    def set_directly(self, node_name: str, name: str, value) -> None:
        client = self.node.create_client(SetParameters,
                                         f'{self.ns}/{node_name}/set_parameters')
        wait_for(client.service_is_ready, REPLY, self.spin, f'{node_name}/set_parameters')
        result = call_service(client, SetParameters.Request(
            parameters=[Parameter(name, value=value).to_parameter_msg()]), self.spin,
            REPLY).results[0]
        assert result.successful, result.reason
        self.node.destroy_client(client)


# ---------------------------------------------------------- one lab (and pipeline) per test
# A start-up (Python, rclpy, the arm model, numba in the pipeline's nodes, viser, discovery) is
# most of such a test's time, and the tests below do not depend on each other: each one's
# lab_viewer, with a pipeline of its own where it needs one (the panel tests change the nodes'
# parameters and lengths, and move the arm), runs in a namespace of its own (/<rig>/six_axis)
# on one domain, started while the test before it runs (StartedAhead: not all at once, an idle
# lab and pipeline spend about half a core), and stopped when its test ends. Only the rigs of
# the selected tests start.
# rig -> (with the pipeline, lab_viewer's parameters)
RIGS: dict[str, tuple[bool, dict]] = {
    'page': (False, {}),
    'browser': (True, {}),
    'panel': (True, {'control_service': True}),
    'plan': (True, {'control_service': True}),
    'lengths': (True, {'control_service': True}),
    'joints': (False, {}),
}
# The order of the tests: the bad parameter sets' labs (``refusals``) start with the first rig.
ORDER = ['page', 'refusals', 'browser', 'panel', 'plan', 'lengths', 'joints']


def uses_rig(name: str):
    """Marks a test as using RIGS[name] (or ``refusals``)."""
    def mark(test):
        test.lab_rig = name
        return test
    return mark


@dataclass
class Rig:
    """One test's lab_viewer (``lab``), the pipeline beside it, and the module's test node."""

    ns: str
    lab: object
    pipeline: list
    node: object
    spin: Callable[..., None]

    def url(self) -> str:
        return lab_url(self.lab)

    def panel(self) -> Panel:
        try:
            return Panel(self.node, self.spin, self.ns)
        except AssertionError as error:
            raise AssertionError(f'{error}; lab_viewer alive: {self.lab.alive()}, its '
                                 f'output:\n{self.lab.output()[-3000:]}') from None


def _rig_of(item) -> str | None:
    return getattr(getattr(item, 'function', None), 'lab_rig', None)


def _selected_rigs(request) -> list[str]:
    selected = {_rig_of(item) for item in request.session.items
                if item.module is request.module and _rig_of(item) is not None}
    if find_chromium() is None:
        selected.discard('browser')      # its test skips
    return [name for name in ORDER if name in selected]


@pytest.fixture(scope='module')
def rigs(request, urdf_of) -> Iterator[StartedAhead]:
    """The selected tests' rigs on one domain, each started while the test before it runs
    (``refusals``: the bad parameter sets' labs)."""
    with claimed_domain() as claim, process_group(claim) as group, \
            node_on_domain(claim) as (node, spin):
        def start(name: str) -> Rig | list:
            if name == 'refusals':
                return start_refusals(group, urdf_of)
            ns = f'/{name}/{ARM}'
            with_pipeline, params = RIGS[name]
            pipeline = start_pipeline(group, urdf_of, ns) if with_pipeline else []
            return Rig(ns, start_lab(group, urdf_of, ns, **params), pipeline, node, spin)
        yield StartedAhead(_selected_rigs(request), start)


@pytest.fixture
def rig(request, rigs) -> Iterator[Rig]:
    """The test's rig (``uses_rig``) once its lab serves its page (as each test's own
    start-up waited for before), stopped after the test."""
    name = _rig_of(request.node)
    if name in rigs.taken:      # a rerun (make test's TEST_RERUNS): its first run stopped it
        this = rigs.take_again(name, _wait_stopped)
    else:
        this = rigs.take(name)
    lab_url(this.lab)
    yield this
    for process in [this.lab, *this.pipeline]:
        interrupt(process)


def _wait_stopped(stopped: Rig | list) -> None:
    for process in [stopped.lab, *stopped.pipeline] if isinstance(stopped, Rig) else stopped:
        interrupt(process)
        process.wait_for_exit(30.0)


@uses_rig('page')
def test_serves_its_page_on_loopback_only(rig):
    process, url = rig.lab, rig.url()
    with urllib.request.urlopen(url, timeout=10.0) as response:
        assert response.status == 200
        assert b'<html' in response.read(4096).lower()
    port = int(URL_LINE.search(process.output()).group(2))
    addresses = listening_addresses(port)
    # 0100007F is 127.0.0.1 (little-endian hex); nothing on 0.0.0.0, :: or another address.
    assert addresses == ['0100007F'], f'listening on {addresses}'
    assert process.alive(), process.output()


BAD_PARAMETERS = [
    ({'host': 'example.com'}, 'not an IP address or localhost'),
    ({'host': '203.0.113.7'}, 'cannot listen on host 203.0.113.7'),
    ({'port': 70000}, 'bad parameter'),
    ({'render_rate': 20}, 'bad parameter'),
]


def start_refusals(group, urdf_of) -> list:
    """Every bad parameter set's lab_viewer at once (discovery off: they talk to nobody)."""
    return [group.start_node('arm_ik', 'lab_viewer', namespace=f'/refusals{index}/{ARM}',
                             params={'robot_description': urdf_of(ARM), 'arm': ARM,
                                     'arm_config': config_file(ARM), **params},
                             extra_env={'ROS_AUTOMATIC_DISCOVERY_RANGE': 'OFF'})
            for index, (params, _) in enumerate(BAD_PARAMETERS)]


@pytest.fixture(scope='module')
def refusals(rigs) -> list[tuple[int | None, str]]:
    """(exit status, output) of each bad parameter set's lab_viewer, started with the first
    rig: a start-up is most of such a test's time."""
    return [(process.wait_for_exit(START_TIMEOUT), process.output())
            for process in rigs.take('refusals')]


@uses_rig('refusals')
@pytest.mark.parametrize('index', range(len(BAD_PARAMETERS)))
def test_refuses_to_start_with_bad_parameters(index, refusals):
    status, output = refusals[index]
    assert status == 1, output
    assert BAD_PARAMETERS[index][1] in output


@pytest.mark.skipif(find_chromium() is None, reason=CHROMIUM_MISSING)
@uses_rig('browser')
def test_headless_chromium_draws_the_lab(rig, tmp_path):
    process, url = rig.lab, rig.url()
    # Real time over DevTools (see arm_ik.lab.browser): the panel came over the websocket.
    shot = tmp_path / 'lab.png'
    try:
        text = capture(url, shot, ready_text='Readouts', settle=6.0, timeout=90.0)
    except BrowserError as error:
        pytest.fail(f'{error}\n{process.output()[-3000:]}')
    assert f'arm lab: {ARM}' in text and 'Plan and go' in text
    assert pixel_spread(shot) > 5.0, 'the screenshot is blank'
    # The 3D view between the side panels (420 px left, 400 px right) is drawn too.
    assert pixel_spread(shot, (440, 150, 860, 750)) > 1.0, 'the 3D view is blank'
    assert process.alive(), process.output()


@uses_rig('panel')
def test_panel_changes_reach_the_nodes_and_refusals_come_back(rig):
    process, panel = rig.lab, rig.panel()
    # Accepted changes, once each node serves its parameters (they start at their pace).
    for key, value, node_name, parameter in (
            ('damping', 0.2, 'ik_server', 'damping'),
            ('motor_speed', 0.8, 'trajectory_executor', 'speed_scale'),
            ('obstacle_radius', 0.3, 'safety_monitor', 'obstacle_radius')):
        wait_for(lambda key=key, value=value: panel.set(key, value)[0], 60.0, panel.spin,
                 f'{node_name} accepting {parameter} from the panel')
        assert panel.parameter(node_name, parameter) == pytest.approx(value)

    accepted, reason = panel.set('damping', 0.0)
    assert not accepted
    assert 'ik_server refused damping' in reason and 'damping is 0.0 (must be > 0)' in reason
    assert panel.parameter('ik_server', 'damping') == pytest.approx(0.2)

    accepted, reason = panel.set('obstacle_radius', -0.1)
    assert not accepted and 'safety_monitor refused' in reason and 'must be > 0' in reason
    accepted, reason = panel.set('solver', 'analytic')
    assert not accepted and 'needs 3 joints' in reason, reason
    accepted, reason = panel.set('damping', math.nan)
    assert not accepted and 'finite' in reason
    accepted, reason = panel.set('no_such_control', 1.0)
    assert not accepted and 'no control' in reason

    # Solver and a streaming law also drive live follow, on the executor.
    assert panel.set('solver', 'ccd')[0]
    assert panel.parameter('ik_server', 'default_solver') == 'ccd'
    assert panel.parameter('trajectory_executor', 'follow_solver') == 'ccd'
    assert panel.set('motion_law', 'speed_cap')[0]
    assert panel.parameter('trajectory_executor', 'follow_law') == 'speed_cap'
    assert panel.set('motion_law', 'min_jerk')[0]                  # planned moves only
    assert panel.parameter('trajectory_executor', 'follow_law') == 'speed_cap'

    # A change made elsewhere (ros2 param set) shows in the panel.
    panel.set_directly('ik_server', 'damping', 0.3)
    wait_for(lambda: 'already' in panel.set('damping', 0.3)[1], REPLY, panel.spin,
             'the panel showing the damping set elsewhere')
    assert process.alive(), process.output()


@uses_rig('plan')
def test_plan_and_go_and_live_follow_move_the_arm(rig):
    process, panel = rig.lab, rig.panel()
    states: list[JointState] = []
    panel.node.create_subscription(JointState, f'{rig.ns}/joint_states', states.append,
                                   qos_profile_sensor_data)
    from arm_kinematics.description.bundled import load_model
    model = load_model(ARM)

    def near(target: list[float], tolerance: float) -> bool:
        if not states:
            return False
        q = dict(zip(states[-1].name, states[-1].position))
        tip = model.fk(np.array([q[name] for name in model.joint_names]))[:3, 3]
        return float(np.linalg.norm(tip - target)) < tolerance

    # Live follow off: the gizmo moves alone; "Plan and go" sends one goal.
    target = [1.2, 0.4, 0.9]
    assert panel.set('target', target)[0]
    wait_for(lambda: panel.set('plan_and_go', True)[0], 60.0, panel.spin,
             'the move action to become available')
    wait_for(lambda: near(target, 2e-3), 30.0, panel.spin, 'the arm at the planned target')

    # Live follow on: the target streams and the arm chases it.
    accepted, reason = panel.set('live_follow', True)
    assert accepted, reason
    accepted, reason = panel.set('plan_and_go', True)
    assert not accepted and 'live follow is on' in reason
    followed = [1.0, -0.3, 1.1]
    assert panel.set('target', followed)[0]
    wait_for(lambda: near(followed, 5e-3), 30.0, panel.spin, 'the arm following the target')
    assert panel.set('live_follow', False)[0]
    assert process.alive(), process.output()


@uses_rig('lengths')
def test_link_lengths_reach_every_node_or_none(rig):
    process, panel = rig.lab, rig.panel()
    # A zero length is refused by the lab before any node is asked.
    assert panel.set('length_L2', 0.0)[0]
    accepted, reason = panel.set('apply_lengths', True)
    assert not accepted and 'L2' in reason, reason
    assert panel.set('length_L2', 1.1)[0]
    # Applying again is harmless (the same URDF): until every node of this pipeline has
    # started and been found by the lab (arm_info is optional to it, and skipped while it is
    # not found yet; target_input and markers do not run here).

    answers = []

    def applied_everywhere() -> bool:
        accepted, reason = panel.set('apply_lengths', True)
        answers.append(reason)
        return accepted and 'arm_info: not running' not in reason

    try:
        wait_for(applied_everywhere, 60.0, panel.spin, 'every node taking the new lengths')
    except AssertionError as error:
        raise AssertionError(f'{error}; the last answers: {answers[-3:]}; lab output:\n'
                             f'{process.output()[-3000:]}') from None
    from arm_kinematics.description.bundled import expand_xacro
    longer = expand_xacro(ARM, {'L2': repr(1.1)})
    for node_name in ('trajectory_executor', 'ik_server', 'safety_monitor', 'arm_info'):
        assert panel.parameter(node_name, 'robot_description') == longer, node_name
    # The lab redraws the arm and its reach on its next render tick.
    wait_for(lambda: 'drawn with the new link lengths' in process.output(), REPLY, panel.spin,
             'the lab redrawing the arm')
    assert 'Traceback' not in process.output()
    assert process.alive(), process.output()


@uses_rig('joints')
def test_bad_joint_states_never_reach_the_viewer(rig):
    process, node, spin = rig.lab, rig.node, rig.spin
    shown: list[JointState] = []
    node.create_subscription(JointState, f'{rig.ns}/lab_viewer/shown_joint_states',
                             shown.append, 10)
    publisher = node.create_publisher(JointState, f'{rig.ns}/joint_states', 10)
    names = ['base_yaw', 'shoulder_pitch', 'elbow_pitch', 'wrist_roll', 'wrist_pitch',
             'tool_roll']
    good = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]

    def publish(names_, positions, repeat: int = 5) -> None:
        for _ in range(repeat):
            publisher.publish(JointState(name=names_, position=positions))
            spin(0.02)

    wait_for(lambda: publisher.get_subscription_count() > 0, REPLY, spin, 'the lab subscribing')
    wait_for(lambda: (publish(names, good, 1), bool(shown))[1], REPLY, spin, 'a shown pose')
    before = len(shown)
    publish(names, [math.nan] + good[1:])
    publish(names, good[:5] + [math.inf])
    publish(names, good[:5])                                   # one position short
    publish(names[:5], good[:5])                                # a joint missing
    publish(names + ['base_yaw'], good + [0.0])                 # a joint twice
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        spin(0.05)
    second = [0.6, 0.5, 0.4, 0.3, 0.2, 0.1]
    wait_for(lambda: (publish(list(reversed(names)), list(reversed(second)), 1),
                      any(list(m.position) == pytest.approx(second) for m in shown))[1],
             REPLY, spin, 'the next good pose shown (names in any order)')
    for message in shown:
        assert all(math.isfinite(v) for v in message.position), message
        assert list(message.name) == names
    assert all(list(m.position) in (pytest.approx(good), pytest.approx(second))
               for m in shown[before:]), 'a bad message changed the shown pose'
    assert process.alive(), process.output()


@contextmanager
def lab_in_this_process(ros_node, urdf_of):
    """A LabViewer in the test's own process (its scene can be read back) and a spin of both
    nodes; no process of its own."""
    from rclpy.executors import SingleThreadedExecutor

    from arm_ik.nodes.lab_viewer import LabViewer
    node, spin = ros_node
    lab = LabViewer(context=node.context, namespace=NAMESPACE, parameter_overrides=[
        Parameter('robot_description', value=urdf_of(ARM)), Parameter('arm', value=ARM),
        Parameter('arm_config', value=config_file(ARM)), Parameter('port', value=0)])
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(lab)

    def spin_both() -> None:
        spin(0.01)
        executor.spin_once(timeout_sec=0.02)
    try:
        yield lab, spin_both
    finally:
        executor.remove_node(lab)
        lab.destroy_node()
        executor.shutdown()


def test_the_plan_is_drawn_from_planned_path(ros_node, urdf_of):
    """What trajectory_executor latches on ``plan`` (arm_interfaces/PlannedPath): the lab
    draws its tip path and its ghosts (a NaN one dropped); the next plan replaces them. The
    lab runs in this process here, so the test can read back what its scene holds."""
    from geometry_msgs.msg import Point

    from arm_ik.nodes.common import LATCHED_QOS
    from arm_interfaces.msg import PlannedPath
    node, _ = ros_node
    with lab_in_this_process(ros_node, urdf_of) as (lab, spin_both):
        publisher = node.create_publisher(PlannedPath, f'{NAMESPACE}/plan', LATCHED_QOS)
        plan = PlannedPath(feasible=True, law='min_jerk', has_target=True,
                           target=Point(x=1.2, y=0.4, z=0.9))
        plan.tip_path = [Point(x=1.0 + 0.01 * k, y=0.4, z=0.9) for k in range(30)]
        for k in range(2):
            plan.ghost_points += [Point(x=0.0, y=0.0, z=0.1 * j + 0.1 * k) for j in range(7)]
        plan.ghost_points += [Point(x=math.nan), Point(x=math.inf)]
        plan.ghost_sizes = [7, 7, 2]
        publisher.publish(plan)
        wait_for(lambda: lab.scene._path is not None and lab.scene._ghosts is not None,
                 REPLY, spin_both, 'the plan drawn')
        path = np.asarray(lab.scene._path.points)
        assert path.shape == (29, 2, 3)                       # one segment per tip pair
        assert path[0, 0] == pytest.approx([1.0, 0.4, 0.9])
        assert path[-1, 1] == pytest.approx([1.29, 0.4, 0.9])
        assert np.asarray(lab.scene._ghosts.points).shape == (12, 2, 3)  # 2 ghosts × 6
        # A Cartesian line that failed: its part is drawn, the old ghosts go.
        failed = PlannedPath(feasible=False, law='linear', has_failure_point=True,
                             failure_point=Point(x=1.0, y=0.3, z=1.05))
        failed.tip_path = [Point(x=1.0, y=0.1 * k, z=1.0) for k in range(4)]
        publisher.publish(failed)
        wait_for(lambda: lab.scene._ghosts is None, REPLY, spin_both, 'the ghosts removed')
        assert np.asarray(lab.scene._path.points).shape == (3, 2, 3)


def test_the_scene_and_the_collision_witness_are_drawn(ros_node, urdf_of, capfd):
    """What safety_monitor latches on ``scene``: every object drawn, moved in place, removed;
    a bad object (NaN pose, unknown type) left out with a warning, the others drawn; the
    collision fields of ``safety_status``: the object in contact red, the links in contact
    labelled, the pairs in the readout; a scene change once a pose has come asks for a new
    joint map. The lab runs in this process (its scene is read back); the test publishes what
    the monitor would."""
    from geometry_msgs.msg import Pose

    from arm_ik.lab.colours import SCENE_OBJECT, TOUCHING
    from arm_ik.lab.panel import Outcome
    from arm_ik.nodes.common import LATCHED_QOS
    from arm_interfaces.msg import SafetyStatus, Scene, SceneObject
    node, _ = ros_node

    def pose(x: float, y: float = 0.0, z: float = 0.5) -> Pose:
        p = Pose()
        p.position.x, p.position.y, p.position.z = x, y, z
        return p

    crate = SceneObject(id='crate', type='box', size=[0.2, 0.3, 0.4], pose=pose(1.0))
    ball = SceneObject(id='ball', type='sphere', size=[0.1], pose=pose(0.0, 1.0))
    part = SceneObject(id='part', type='mesh', mesh_file='package://nowhere/part.stl',
                       mesh_bounds=[0.0, 0.0, 0.0, 0.1, 0.2, 0.3], pose=pose(0.5))
    bad_pose = SceneObject(id='nan', type='sphere', size=[0.1], pose=pose(math.nan))
    bad_type = SceneObject(id='cone', type='cone', size=[0.1], pose=pose(0.0))
    with lab_in_this_process(ros_node, urdf_of) as (lab, spin_both):
        scenes = node.create_publisher(Scene, f'{NAMESPACE}/scene', LATCHED_QOS)
        statuses = node.create_publisher(SafetyStatus, f'{NAMESPACE}/safety_status', 10)
        handles = lab.scene.objects.handles
        maps: list[str] = []          # the joint-map requests (no safety_monitor runs here)
        lab._refresh_joint_map = lambda: (maps.append('map'), Outcome(True, 'map'))[1]
        scenes.publish(Scene(version=1, objects=[crate, ball, part, bad_pose, bad_type]))
        wait_for(lambda: set(handles) == {'crate', 'ball', 'part'}, REPLY, spin_both,
                 'the scene drawn without its bad objects')
        assert tuple(handles['crate'].dimensions) == pytest.approx((0.2, 0.3, 0.4))
        assert handles['part'].wireframe                      # its file is not here
        logged = capfd.readouterr().err
        for words in ('"nan": pose.xyz must be finite', '"cone": type must be one of',
                      'part.stl not found here'):
            assert words in logged, logged
        drawn_crate = handles['crate']
        # The crate moves (the same node), the ball goes.
        scenes.publish(Scene(version=2, objects=[
            SceneObject(id='crate', type='box', size=[0.2, 0.3, 0.4], pose=pose(0.8)), part]))
        wait_for(lambda: set(handles) == {'crate', 'part'}, REPLY, spin_both, 'the ball gone')
        assert handles['crate'] is drawn_crate
        assert tuple(drawn_crate.position) == pytest.approx((0.8, 0.0, 0.5))
        # The monitor reports the forearm on the crate and the tool on the upper arm.
        status = SafetyStatus(verdict=SafetyStatus.SAFE, collision_checked=True,
                              self_collision=True, scene_contact=True,
                              contact_pairs=['forearm_link|crate', 'upper_arm_link|tool_link'],
                              closest_pair='forearm_link|crate', closest_distance=-0.001)
        statuses.publish(status)
        joint_states = node.create_publisher(JointState, f'{NAMESPACE}/joint_states', 10)
        names = ['base_yaw', 'shoulder_pitch', 'elbow_pitch', 'wrist_roll', 'wrist_pitch',
                 'tool_roll']
        wait_for(lambda: (joint_states.publish(JointState(name=names, position=[0.0] * 6)),
                          set(lab.scene.objects.labels))[1] ==
                 {'forearm_link', 'upper_arm_link', 'tool_link'}, REPLY, spin_both,
                 'the links in contact labelled')
        assert tuple(handles['crate'].color) == TOUCHING
        assert tuple(handles['part'].color) == SCENE_OBJECT
        assert lab.state.texts['collision'] == ('**self-collision upper_arm_link–tool_link; '
                                                'scene contact forearm_link–crate**')
        statuses.publish(SafetyStatus(verdict=SafetyStatus.SAFE, collision_checked=True,
                                      closest_pair='forearm_link|crate',
                                      closest_distance=0.05))
        wait_for(lambda: tuple(handles['crate'].color) == SCENE_OBJECT and
                 not lab.scene.objects.labels, REPLY, spin_both, 'the contact cleared')
        # Removing every object clears the view, and the joint map is asked for again.
        # The first map, at the first pose (on a work thread); none for the scenes before.
        wait_for(lambda: bool(maps), REPLY, spin_both, 'the first joint map asked for')
        assert maps == ['map']
        scenes.publish(Scene(version=3))
        wait_for(lambda: not handles and len(maps) == 2, REPLY, spin_both,
                 'the scene cleared and a new joint map asked for')
        # The arm's ball (a rule object) is the lab's obstacle, drawn where the scene has it
        # (not as an object) and hidden once it is removed.
        scenes.publish(Scene(version=4, objects=[SceneObject(
            id='obstacle', type='sphere', size=[0.2], rule='obstacle', pose=pose(0.3, 0.2, 0.9))]))
        wait_for(lambda: lab.scene._obstacle is not None and
                 tuple(lab.scene._obstacle.position) == pytest.approx((0.3, 0.2, 0.9)), REPLY,
                 spin_both, 'the ball drawn where the scene has it')
        assert lab.scene._obstacle.radius == pytest.approx(0.2) and not handles
        scenes.publish(Scene(version=5))
        wait_for(lambda: not lab.scene._obstacle.visible, REPLY, spin_both, 'the ball hidden')
