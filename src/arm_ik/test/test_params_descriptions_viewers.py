"""RELIABILITY cases 23-27: parameters, descriptions, viewers and endurance, on real processes.

23  bad parameter updates are rejected with a reason and the old value kept, on every node
    with such parameters; a solve in flight keeps the set of values it started with.
24  a description with a missing joint limit, a zero-length link or a negative xacro argument
    stops every node at startup with a clear message (exit status 1).
25  a viewer started after the nodes published still gets the latched messages; markers of
    a stopped node disappear (lifetimes, DELETEALL, nothing latched by a dead writer).
26  no node of ours listens on a non-loopback TCP port (there is no web server yet: the
    browser lab is another issue), and NaN joint states never reach a viewer.
27  (test_ik_endurance.py, a module of its own: it runs beside these under pytest-xdist).

Each test starts its own nodes: started one set ahead on one domain (as test_lab_viewer_node.py
does), these short tests were not shown faster (36-64 s against 46-54 s without case 27,
load 5-19; docs/tests.md): the next set's start-up takes CPU from the test that runs.
"""

from __future__ import annotations

import ipaddress
import math
import os
from pathlib import Path
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree

import pytest
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterValue
from rcl_interfaces.srv import GetParameters, SetParameters, SetParametersAtomically
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter, parameter_value_to_python
from sensor_msgs.msg import JointState
from visualization_msgs.msg import Marker, MarkerArray

from arm_ik.client import build_request
from arm_ik.nodes.common import LATCHED_QOS
from arm_interfaces.msg import ArmInfo, ArmReadout
from arm_interfaces.srv import SolveIK
from arm_kinematics.description.bundled import DescriptionError, expand_xacro, xacro_path
from arm_kinematics.ik.result import ErrorCode
from arm_testing.ros_harness import call_service, config_file, wait_for

ARM = 'pointer3'
NS = f'/{ARM}'
JOINTS = ['base_yaw', 'shoulder_pitch', 'elbow_pitch']
HOME = [0.0, 0.5235987755982988, -1.0471975511965976]
NODES = ('arm_info', 'ik_server', 'safety_monitor', 'trajectory_executor', 'target_input',
         'markers')
NAN, INF = math.nan, math.inf


def start(processes, urdf: str, executable: str, namespace: str = NS, **params):
    return processes.start_node('arm_ik', executable, namespace=namespace,
                                params={'robot_description': urdf, 'arm': ARM,
                                        'arm_config': config_file(params.get('arm', ARM)),
                                        **params})


def value_message(value: object) -> ParameterValue:
    """A ParameterValue of ``value`` with the type it has in Python (so an int stays an
    int: a wrongly typed update, as ``ros2 param set`` sends it)."""
    return Parameter('x', value=value).to_parameter_msg().value


class ParameterClient:
    """set/get parameters of one node over its services."""

    def __init__(self, node, spin, node_name: str) -> None:
        self.node, self.spin, self.name = node, spin, node_name
        self.set_client = node.create_client(SetParameters, f'{node_name}/set_parameters')
        self.get_client = node.create_client(GetParameters, f'{node_name}/get_parameters')
        wait_for(lambda: self.set_client.service_is_ready() and
                 self.get_client.service_is_ready(), 30.0, spin, f'{node_name} parameters')

    def _call(self, client, request):
        return call_service(client, request, self.spin, 10.0)

    def set(self, name: str, value: ParameterValue):
        request = SetParameters.Request(parameters=[ParameterMsg(name=name, value=value)])
        return self._call(self.set_client, request).results[0]

    def get(self, name: str):
        response = self._call(self.get_client, GetParameters.Request(names=[name]))
        return parameter_value_to_python(response.values[0])


# ---------------------------------------------------------------------------- case 23
# Per node: (parameter, whether 0 is invalid). Every float parameter also gets -1, NaN, inf,
# -inf, a string, a bool and an integer (wrong type); integer ones get -1, a float, a string.
BAD_UPDATES = {
    'ik_server': [('damping', True), ('tolerance', True), ('timeout', True),
                  ('orientation_tolerance', True), ('max_step', False),
                  ('max_iterations', True)],
    'safety_monitor': [('obstacle_radius', True), ('marker_rate', True),
                       ('marker_lifetime', True), ('stale_periods', True),
                       ('contact_sample_rate', True)],
    'trajectory_executor': [('publish_rate', True), ('exponential_gain', True),
                            ('speed_scale', True), ('watchdog_timeout', True),
                            ('feedback_rate', True)],
    'markers': [('update_rate', True), ('republish_rate', True), ('readout_rate', True),
                ('target_size', True), ('contact_size', True), ('text_size', True),
                ('circle_spacing', True)],
}
INTEGER_PARAMETERS = {'max_iterations'}
COLOUR_UPDATES = [[1.0, 0.0, 0.0], [1.0, NAN, 0.0, 1.0], [1.0, 0.0, -0.5, 1.0],
                  [INF, 0.0, 0.0, 1.0]]


def bad_values(name: str, zero_invalid: bool) -> list[object]:
    if name in INTEGER_PARAMETERS:
        return [-1, 0, 2.5, 'ten', True] if zero_invalid else [-1, 2.5, 'ten', True]
    values: list[object] = [-1.0, NAN, INF, -INF, 'fast', True, 3]
    return values + ([0.0] if zero_invalid else [])


def test_case_23_bad_parameter_updates_rejected_old_value_kept(processes, ros_node, urdf_of):
    node, spin = ros_node
    urdf = urdf_of(ARM)
    started = {name: start(processes, urdf, name) for name in BAD_UPDATES}
    for executable, parameters in BAD_UPDATES.items():
        client = ParameterClient(node, spin, f'{NS}/{executable}')
        # robot_description takes new link lengths at run time, never a broken URDF.
        result = client.set('robot_description', value_message('<robot name="x"/>'))
        assert not result.successful and 'robot_description is not usable' in result.reason, \
            result.reason
        for name, zero_invalid in parameters:
            old = client.get(name)
            for value in bad_values(name, zero_invalid):
                result = client.set(name, value_message(value))
                assert not result.successful, f'{executable}: {name} = {value!r} accepted'
                assert result.reason.strip(), f'{executable}: {name} = {value!r}: no reason'
                assert client.get(name) == old, f'{executable}: {name} changed to {value!r}'
        if executable == 'markers':
            old = client.get('floor_colour')
            for value in COLOUR_UPDATES:
                result = client.set('floor_colour', value_message(value))
                assert not result.successful and 'floor_colour' in result.reason, value
            assert client.get('floor_colour') == pytest.approx(old)
    for executable, process in started.items():
        assert process.alive(), f'{executable} died:\n{process.output()[-3000:]}'


def test_case_23_solve_in_flight_sees_one_consistent_set(processes, ros_node, urdf_of):
    """A DLS solve creeping with max_step 1e-7 (so it runs into the node's 1.5 s timeout
    rather than its iteration limit); after 0.5 s, one
    atomic update sets timeout 0.1 s, no step cap and another damping. The solve in flight
    answers with its own set (1.5 s, steps <= 1e-7); the next one uses the new set."""
    node, spin = ros_node
    process = start(processes, urdf_of('six_axis'), 'ik_server', namespace='/six_axis',
                    arm='six_axis', max_step=1e-7, timeout=1.5, max_iterations=100_000)
    base = '/six_axis/ik_server'
    solve = node.create_client(SolveIK, f'{base}/ik/dls')
    atomic = node.create_client(SetParametersAtomically,
                                f'{base}/set_parameters_atomically')
    wait_for(lambda: solve.service_is_ready() and atomic.service_is_ready(), 30.0, spin,
             'ik_server services')
    target = [-1.2, -0.5, 1.5]
    started = time.monotonic()
    in_flight = solve.call_async(build_request(target, tolerance=1e-12))
    time.sleep(0.5)
    update = atomic.call_async(SetParametersAtomically.Request(parameters=[
        ParameterMsg(name='timeout', value=value_message(0.1)),
        ParameterMsg(name='max_step', value=value_message(0.0)),
        ParameterMsg(name='damping', value=value_message(0.2))]))
    wait_for(update.done, 10.0, spin, 'atomic parameter update')
    assert update.result().result.successful, update.result().result.reason
    wait_for(in_flight.done, 10.0, spin, 'the solve in flight')
    elapsed = time.monotonic() - started
    old = in_flight.result()
    assert old.error_code.val == ErrorCode.TIMED_OUT, old.message
    assert 'timed out after 1.5 s' in old.message, old.message      # its own timeout
    assert elapsed >= 1.5
    assert 0.0 < old.max_joint_step <= 1e-7 * (1 + 1e-9), old.max_joint_step  # its own cap
    new = solve.call_async(build_request(target))
    wait_for(new.done, 10.0, spin, 'a solve after the update')
    new = new.result()
    assert new.error_code.val == ErrorCode.OK, new.message
    assert new.max_joint_step > 1e-3          # no cap any more
    assert process.alive(), process.output()


# ---------------------------------------------------------------------------- case 24
def _with_joint(urdf: str, joint: str, change) -> str:
    root = ElementTree.fromstring(urdf)
    (element,) = [j for j in root.findall('joint') if j.get('name') == joint]
    change(element)
    return ElementTree.tostring(root, encoding='unicode')


def _xacro(*arguments: str) -> subprocess.CompletedProcess:
    """The xacro command as a shell or launch's Command(['xacro ', ...]) runs it."""
    executable = shutil.which('xacro')
    command = [executable] if executable else [sys.executable, '-m', 'xacro']
    return subprocess.run([*command, str(xacro_path(ARM)), *arguments], capture_output=True,
                          text=True, timeout=60, check=False)


def test_case_24_bad_descriptions_stop_every_node(processes, urdf_of):
    urdf = urdf_of(ARM)
    no_limit = _with_joint(urdf, 'elbow_pitch',
                           lambda j: j.remove(j.find('limit')))
    # A non-numeric axis (a tool frame on the last joint, once refused here, is accepted).
    bad_axis = _with_joint(urdf, 'elbow_pitch',
                           lambda j: j.find('axis').set('xyz', '0 one 0'))
    zero_upper_arm = _with_joint(urdf, 'elbow_pitch',
                                 lambda j: j.find('origin').set('xyz', '0 0 0'))
    # A negative xacro argument: xacro itself fails loudly and prints no URDF, so the node
    # gets an empty description (what $(xacro ...) or launch's Command would pass on).
    negative = _xacro('l1:=-0.5')
    assert negative.returncode != 0
    assert 'pointer3 l1 (m) must be a finite number > 0, got -0.5' in negative.stderr
    assert negative.stdout.strip() == ''
    with pytest.raises(DescriptionError, match=r'l2 \(m\) must be a finite number > 0'):
        expand_xacro(ARM, {'l2': '-1'})
    cases = {
        'missing_limit': (no_limit, 'revolute joint "elbow_pitch" has no <limit>'),
        'bad_axis': (bad_axis, 'joint "elbow_pitch" has a degenerate axis: <axis> xyz="0 one '
                               '0" is not 3 finite numbers'),
        'zero_upper_arm': (zero_upper_arm, 'from joint "shoulder_pitch" to joint '
                                           '"elbow_pitch" has zero length'),
        'negative_xacro_arg': (negative.stdout, 'robot_description is empty'),
    }
    # These nodes talk to nobody, so discovery is off: 24 participants starting and leaving
    # together on one domain sometimes deadlock Fast DDS 3.2 (Kilted) in a starting node
    # (a peer's endpoints removed while its announcement timer runs; docs/tests.md), which
    # says nothing about how a node treats its description.
    no_discovery = {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'OFF'}
    started = [(case, executable, message,
                processes.start_node('arm_ik', executable, namespace=f'/{case}',
                                     params={'robot_description': description, 'arm': ARM,
                                             'arm_config': config_file(ARM),
                                             'robot_description_timeout': 1.0},
                                     extra_env=no_discovery))
               for case, (description, message) in cases.items() for executable in NODES]
    for case, executable, message, process in started:
        status = process.wait_for_exit(60.0)
        output = process.output() if status is not None else process.abort()
        assert status == 1, f'{executable} with {case}: exit {status}\n{output[-4000:]}'
        assert '[FATAL]' in output and message in output, f'{executable} {case}:\n{output}'
        assert 'Traceback' not in output, f'{executable} {case}:\n{output}'


# ---------------------------------------------------------------------------- case 25
class Viewer:
    """A node of its own Context started late, as RViz would be."""

    def __init__(self, domain_id: int, name: str) -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.info: list[ArmInfo] = []
        self.markers: list[MarkerArray] = []
        self.node.create_subscription(ArmInfo, f'{NS}/arm_info', self.info.append, LATCHED_QOS)
        self.node.create_subscription(MarkerArray, f'{NS}/markers', self.markers.append,
                                      LATCHED_QOS)

    def spin(self, timeout: float = 0.05) -> None:
        self.executor.spin_once(timeout_sec=timeout)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def test_case_25_late_viewer_gets_latched_and_stale_markers_go(processes, ros_node,
                                                               ros_domain, urdf_of):
    node, spin = ros_node
    urdf = urdf_of(ARM)
    start(processes, urdf, 'arm_info')
    markers = start(processes, urdf, 'markers', marker_lifetime=2.0)
    # Wait until both have published (seen by an early subscriber), then start the viewer.
    early: list[MarkerArray] = []
    node.create_subscription(MarkerArray, f'{NS}/markers', early.append, LATCHED_QOS)
    info: list[ArmInfo] = []
    node.create_subscription(ArmInfo, f'{NS}/arm_info', info.append, LATCHED_QOS)
    wait_for(lambda: early and info, 30.0, spin, 'the first arm_info and markers')
    time.sleep(1.0)
    viewer = Viewer(ros_domain.domain_id, 'late_viewer')
    try:
        wait_for(lambda: viewer.info and viewer.markers, 15.0, viewer.spin,
                 'latched arm_info and markers at the late viewer')
        assert viewer.info[0].arm == ARM and viewer.info[0].max_reach > 0.0
        scene = viewer.markers[0]
        assert scene.markers[0].action == Marker.DELETEALL
        # What RViz reads at any time: the description is a parameter of every node.
        client = ParameterClient(viewer.node, viewer.spin, f'{NS}/arm_info')
        assert client.get('robot_description') == urdf
        # Everything that can go stale carries a lifetime: it vanishes from a viewer once
        # the node stops refreshing it.
        readout = [m for m in scene.markers if m.ns == 'readout']
        assert readout and all(m.lifetime.sec + m.lifetime.nanosec > 0 for m in readout)
    finally:
        viewer.close()
    # A stopped node's markers are not latched anywhere: a viewer started now gets none.
    processes.stop(markers)
    time.sleep(0.5)
    viewer = Viewer(ros_domain.domain_id, 'later_viewer')
    try:
        wait_for(lambda: viewer.info, 15.0, viewer.spin, 'arm_info at the later viewer')
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            viewer.spin()
        assert viewer.markers == [], 'markers of a stopped node were still delivered'
    finally:
        viewer.close()


def _installed(package: str) -> bool:
    from ament_index_python.packages import get_package_prefix
    try:
        get_package_prefix(package)
        return True
    except LookupError:
        return False


@pytest.mark.skipif(not _installed('robot_state_publisher'),
                    reason='robot_state_publisher is not on PyPI; runs with a ROS install')
def test_case_25_robot_description_is_latched(processes, ros_node, urdf_of):
    """robot_state_publisher (a ROS install) latches robot_description for a late RViz."""
    from std_msgs.msg import String
    node, spin = ros_node
    urdf = urdf_of(ARM)
    processes.start_node('robot_state_publisher', 'robot_state_publisher', namespace=NS,
                         params={'robot_description': urdf})
    time.sleep(2.0)
    received: list[String] = []
    node.create_subscription(String, f'{NS}/robot_description', received.append, LATCHED_QOS)
    wait_for(lambda: received, 15.0, spin, 'latched robot_description')
    assert received[0].data.strip() == urdf.strip()


# ---------------------------------------------------------------------------- case 26
def _process_group(pgid: int) -> list[int]:
    pids = []
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                if os.getpgid(int(entry)) == pgid:
                    pids.append(int(entry))
            except ProcessLookupError:
                continue
    return pids


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        for fd in os.listdir(f'/proc/{pid}/fd'):
            try:
                target = os.readlink(f'/proc/{pid}/fd/{fd}')
            except OSError:
                continue
            if target.startswith('socket:['):
                inodes.add(target[8:-1])
    except OSError:
        pass
    return inodes


def _listening(pid: int) -> list[tuple[str, int, str]]:
    """(address, port, inode) of the TCP sockets in LISTEN state of the process's network
    namespace, from /proc/<pid>/net/tcp and tcp6 (state 0A)."""
    found = []
    for table, size in (('tcp', 4), ('tcp6', 16)):
        try:
            lines = Path(f'/proc/{pid}/net/{table}').read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] != '0A':
                continue
            address_hex, port_hex = fields[1].split(':')
            raw = bytes.fromhex(address_hex)
            # The kernel prints each 32-bit word in host (little-endian) order.
            raw = b''.join(raw[k:k + 4][::-1] for k in range(0, size, 4))
            address = str(ipaddress.ip_address(raw))
            found.append((address, int(port_hex, 16), fields[9]))
    return found


def _is_loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def test_case_26_no_node_listens_beyond_loopback(processes, urdf_of):
    urdf = urdf_of(ARM)
    started = {name: start(processes, urdf, name) for name in NODES}
    time.sleep(6.0)               # past startup: servers, pools and planning processes up
    checked = 0
    for name, process in started.items():
        assert process.alive(), f'{name} died:\n{process.output()[-3000:]}'
        for pid in _process_group(process.popen.pid):
            own = _socket_inodes(pid)
            for address, port, inode in _listening(pid):
                if inode in own:
                    assert _is_loopback(address), \
                        f'{name} (pid {pid}) listens on {address}:{port}'
            checked += 1
    assert checked >= len(NODES)


def test_case_26_nan_joint_states_never_reach_a_viewer(processes, ros_node, urdf_of):
    node, spin = ros_node
    process = start(processes, urdf_of(ARM), 'markers', show_capsules=True)
    states = node.create_publisher(JointState, f'{NS}/joint_states', 10)
    readouts: list[ArmReadout] = []
    scenes: list[MarkerArray] = []
    node.create_subscription(ArmReadout, f'{NS}/readout', readouts.append, 50)
    node.create_subscription(MarkerArray, f'{NS}/markers', scenes.append, LATCHED_QOS)

    def fed() -> bool:
        states.publish(JointState(name=JOINTS, position=HOME))
        time.sleep(0.02)
        return any(r.has_state for r in readouts)
    wait_for(fed, 20.0, spin, 'a readout of a valid state')
    for bad in ([NAN, 0.0, 0.0], [0.0, INF, 0.0], [0.0, 0.0, -INF]):
        states.publish(JointState(name=JOINTS, position=bad))

    def counted() -> bool:
        # Readouts follow valid states only; the next one reports the ignored count.
        states.publish(JointState(name=JOINTS, position=HOME))
        time.sleep(0.02)
        return any(r.ignored_joint_states >= 3 for r in readouts)
    wait_for(counted, 10.0, spin, 'three ignored joint states')
    count = len(scenes)
    wait_for(lambda: len(scenes) > count, 10.0, spin, 'a marker message after them')
    assert process.alive(), process.output()
    for readout in readouts:
        assert all(math.isfinite(v) for v in readout.joint_positions)
        assert all(math.isfinite(v) for v in (readout.tip.x, readout.tip.y, readout.tip.z))
    for scene in scenes:
        for m in scene.markers:
            numbers = [m.pose.position.x, m.pose.position.y, m.pose.position.z,
                       *(c for p in m.points for c in (p.x, p.y, p.z))]
            assert all(math.isfinite(v) for v in numbers), m.ns
            assert 'nan' not in m.text.lower(), m.text
