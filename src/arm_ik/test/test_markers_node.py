"""The markers node in its own process: namespaces, colours, readout, parameters, staleness."""

from __future__ import annotations

import math
import time

from geometry_msgs.msg import Point
import numpy as np
import pytest
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParameters
from rclpy.parameter import Parameter, parameter_value_to_python
from sensor_msgs.msg import JointState
from visualization_msgs.msg import Marker, MarkerArray

from arm_ik.nodes.common import LATCHED_QOS
from arm_interfaces.msg import ArmReadout, IKErrorCode, IKStatus, PlannedPath, SafetyStatus
from arm_kinematics.visual.arm_visual import PATH_END, PATH_START
from arm_testing.ros_harness import (
    call_service,
    claimed_domain,
    config_file,
    node_on_domain,
    process_group,
    wait_for,
)

Q_HOME = [0.0, 0.5235987755982988, -1.0471975511965976]
JOINTS = ['base_yaw', 'shoulder_pitch', 'elbow_pitch']
STATIC = {'floor', 'reach_circles', 'reach_shell'}
# The module's markers processes, a namespace each, started at once on one domain (a start-up
# is most of a test's time). Tests that only look, or reset what they change, share one:
# 'scene' (the marker scene, then NaN joint states), 'plain' (parameter checks, then a new
# description). name -> (namespace, parameters).
RIGS = {
    'scene': ('/scene/pointer3', {'show_capsules': True, 'marker_lifetime': 2.5}),
    'plain': ('/plain/pointer3', {}),
    'stale': ('/stale/pointer3', {'show_capsules': True, 'contact_memory': 1.0,
                                  'state_timeout': 0.5, 'marker_lifetime': 1.5,
                                  'republish_rate': 2.0}),
    'bad_start': ('/bad_start/pointer3', {'marker_lifetime': 0.5, 'republish_rate': 1.0}),
}


def namespaces(message: MarkerArray) -> set[str]:
    return {m.ns for m in message.markers if m.action == Marker.ADD}


def by_ns(message: MarkerArray, ns: str) -> list[Marker]:
    return [m for m in message.markers if m.ns == ns and m.action == Marker.ADD]


class Graph:
    """The test's publishers and spies around one markers process."""

    def __init__(self, node, spin, ns: str) -> None:
        self.node, self.spin, self.ns = node, spin, ns
        self.markers: list[MarkerArray] = []
        self.readouts: list[ArmReadout] = []
        node.create_subscription(MarkerArray, f'{ns}/markers', self.markers.append, LATCHED_QOS)
        node.create_subscription(ArmReadout, f'{ns}/readout', self.readouts.append, 50)
        self.joints = node.create_publisher(JointState, f'{ns}/joint_states', 10)
        self.ik = node.create_publisher(IKStatus, f'{ns}/ik_status', 10)
        self.safety = node.create_publisher(SafetyStatus, f'{ns}/safety_status', 10)
        self.plan = node.create_publisher(PlannedPath, f'{ns}/plan', LATCHED_QOS)

    def wait_markers(self, condition, what: str, timeout: float = 15.0) -> MarkerArray:
        start = len(self.markers)
        found: list[MarkerArray] = []

        def check() -> bool:
            found[:] = [m for m in self.markers[start:] if condition(m)]
            return bool(found)
        try:
            wait_for(check, timeout, self.spin, what)
        except AssertionError as timed_out:
            last = sorted(namespaces(self.markers[-1])) if len(self.markers) > start else None
            raise AssertionError(f'{timed_out}; {len(self.markers) - start} marker messages '
                                 f'came meanwhile, the last with {last}') from None
        return found[-1]

    def wait_subscribed(self) -> None:
        wait_for(lambda: self.joints.get_subscription_count() > 0 and
                 self.ik.get_subscription_count() > 0, 20.0, self.spin, 'markers subscribing')

    def publish_state(self, positions: list[float]) -> None:
        self.joints.publish(JointState(name=JOINTS, position=positions))

    def publish_ik(self, code: int, target: list[float], error: float = 2e-5,
                   message: str = 'solved') -> None:
        status = IKStatus(solver='analytic', branch='elbow_up', message=message,
                          position_error=error, manipulability=0.3, condition_number=4.0,
                          reach_fraction=0.6)
        status.error_code.val = code
        status.target = Point(x=target[0], y=target[1], z=target[2])
        self.ik.publish(status)


def start_markers(processes, urdf_of, ns: str, **params):
    all_params = {'robot_description': urdf_of('pointer3'), 'arm': 'pointer3',
                  'arm_config': config_file('pointer3')}
    all_params.update(params)
    return processes.start_node('arm_ik', 'markers', namespace=ns, params=all_params)


@pytest.fixture(scope='module')
def rig(urdf_of):
    """(process group, started processes by RIGS name, (test node, spin)) on one domain."""
    with claimed_domain() as claim, process_group(claim) as group, \
            node_on_domain(claim) as client:
        started = {name: start_markers(group, urdf_of, ns, **params)
                   for name, (ns, params) in RIGS.items()}
        yield group, started, client


def planned_path() -> PlannedPath:
    """What trajectory_executor publishes for a plan: tip path, ghosts (one of them NaN),
    target."""
    plan = PlannedPath(feasible=True, law='min_jerk', has_target=True,
                       target=Point(x=1.09, y=0.58, z=1.0))
    plan.header.frame_id = 'base_link'
    plan.tip_path = [Point(x=0.8 + 0.01 * k, y=0.02 * k, z=1.0) for k in range(30)]
    for k in range(3):
        plan.ghost_points += [Point(x=0.0, y=0.0, z=0.0), Point(x=0.0, y=0.0, z=0.405),
                              Point(x=0.5, y=0.1 * k, z=0.9), Point(x=0.9, y=0.2 * k, z=1.0)]
    plan.ghost_points += [Point(x=math.nan), Point(x=math.inf)]
    plan.ghost_sizes = [4, 4, 4, 2]
    return plan


def failed_line() -> PlannedPath:
    """A Cartesian line that could not be followed: the part that could, where it stopped."""
    plan = PlannedPath(feasible=False, law='linear', has_failure_point=True,
                       failure_point=Point(x=1.0, y=0.3, z=1.05))
    plan.tip_path = [Point(x=1.0, y=0.1 * k, z=1.0) for k in range(4)]
    return plan


def _rig(rig, name: str):
    """(process, namespace, node, spin) of the RIGS process ``name``."""
    _, started, (node, spin) = rig
    return started[name], RIGS[name][0], node, spin


def test_markers_appear_with_their_namespaces(rig, load_arm):
    process, ns, node, spin = _rig(rig, 'scene')
    graph = Graph(node, spin, ns)
    # Before anything is known: the static scene, latched, after a DELETEALL.
    first = graph.wait_markers(lambda m: STATIC <= namespaces(m), 'the static scene')
    assert first.markers[0].action == Marker.DELETEALL, process.output()
    assert all(m.header.frame_id == 'base_link' for m in first.markers)
    (hole,) = [m for m in by_ns(first, 'reach_shell') if m.id == 1]
    assert hole.scale.x == pytest.approx(2 * (0.95 - 0.85))           # pointer3's inner hole
    circles = [m.text for m in by_ns(first, 'reach_circles') if m.type == Marker.TEXT_VIEW_FACING]
    assert circles == ['0.5 m', '1 m', '1.5 m']

    graph.wait_subscribed()
    graph.publish_state(Q_HOME)
    graph.publish_ik(IKErrorCode.OK, [1.0, 0.2, 1.1])
    graph.plan.publish(planned_path())
    contact = SafetyStatus(contact_points=[Point(x=1.2, y=-0.3, z=1.1)])
    graph.safety.publish(contact)
    expected = STATIC | {'target', 'tip_path', 'ghosts', 'contacts', 'link_capsules', 'readout'}

    def complete(m: MarkerArray) -> bool:
        graph.publish_state(Q_HOME)            # keep the pose fresh while waiting
        graph.safety.publish(contact)
        return expected <= namespaces(m)
    scene = graph.wait_markers(complete, f'namespaces {sorted(expected)}')
    assert process.alive(), process.output()

    # The planned path: blue at the start, orange at the end, one colour per vertex.
    line = [m for m in by_ns(scene, 'tip_path') if m.type == Marker.LINE_STRIP][0]
    assert len(line.colors) == len(line.points) == 30
    first_colour = (line.colors[0].r, line.colors[0].g, line.colors[0].b, line.colors[0].a)
    last_colour = (line.colors[-1].r, line.colors[-1].g, line.colors[-1].b,
                   line.colors[-1].a)
    assert first_colour == pytest.approx(PATH_START, abs=1e-6)
    assert last_colour == pytest.approx(PATH_END, abs=1e-6)
    # Three finite ghosts kept (skeleton + joints each), the NaN one dropped.
    assert len(by_ns(scene, 'ghosts')) == 6
    # The target: a glowing sphere (core + halo) in a wire cube.
    target = by_ns(scene, 'target')
    assert sorted(m.type for m in target) == sorted([Marker.SPHERE, Marker.SPHERE,
                                                     Marker.LINE_LIST])
    cube = [m for m in target if m.type == Marker.LINE_LIST][0]
    assert len(cube.points) == 24
    (dots,) = by_ns(scene, 'contacts')
    assert (dots.points[0].x, dots.points[0].y, dots.points[0].z) == pytest.approx((1.2, -0.3,
                                                                                    1.1))
    assert len(by_ns(scene, 'link_capsules')) == 4        # 2 links: cylinder + ball ends
    # Everything that changes carries the lifetime; the arm's static geometry does not.
    for m in scene.markers:
        if m.action != Marker.ADD:
            continue
        life = m.lifetime.sec + m.lifetime.nanosec * 1e-9
        assert life == (0.0 if m.ns in STATIC else pytest.approx(2.5)), m.ns

    # The readout: the tip of the published pose, IK numbers and branch.
    (text,) = by_ns(scene, 'readout')
    tip = load_arm('pointer3').fk(np.array(Q_HOME))[:3, 3]
    assert f'x {tip[0]:+.3f}' in text.text and 'IK error 0.020 mm' in text.text
    assert 'solver analytic   branch elbow_up' in text.text
    wait_for(lambda: any(r.has_state and r.has_ik_answer for r in graph.readouts), 10.0, spin,
             'a readout with state and IK answer')
    readout = [r for r in graph.readouts if r.has_state and r.has_ik_answer][-1]
    assert list(readout.joint_positions) == pytest.approx(Q_HOME)
    assert (readout.tip.x, readout.tip.y, readout.tip.z) == pytest.approx(tuple(tip))
    assert readout.manipulability > 0.0 and 1.0 <= readout.condition_number < math.inf
    assert readout.ik_position_error == pytest.approx(2e-5)
    assert readout.has_target and readout.tracking_error >= 0.0

    # A failed solve: the target turns red, the failure is in the readout.
    graph.publish_ik(IKErrorCode.OUT_OF_REACH, [3.0, 0.0, 1.0], math.inf,
                     'target 3.02 m from the shoulder, maximum reach 1.800 m')
    failed = graph.wait_markers(
        lambda m: any('OUT_OF_REACH: target 3.02 m' in r.text for r in by_ns(m, 'readout')),
        'the failure in the readout')
    core = [m for m in by_ns(failed, 'target') if m.id == 0][0]
    assert core.color.r > 0.9 and core.color.g < 0.5

    # A line that failed replaces the plan: its part drawn, a ball where it stopped, no
    # ghosts; the target (the plan names none) stays.
    graph.plan.publish(failed_line())
    stopped = graph.wait_markers(lambda m: 'path_failure' in namespaces(m), 'the failure point')
    (ball,) = by_ns(stopped, 'path_failure')
    assert (ball.pose.position.x, ball.pose.position.y, ball.pose.position.z) == \
        pytest.approx((1.0, 0.3, 1.05))
    line = [m for m in by_ns(stopped, 'tip_path') if m.type == Marker.LINE_STRIP][0]
    assert len(line.points) == 4 and 'ghosts' not in namespaces(stopped)
    assert 'target' in namespaces(stopped)
    assert process.alive(), process.output()


def _set(node, spin, ns: str, name: str, value: ParameterValue):
    client = node.create_client(SetParameters, f'{ns}/markers/set_parameters')
    wait_for(client.service_is_ready, 20.0, spin, 'set_parameters')
    return call_service(client, SetParameters.Request(
        parameters=[ParameterMsg(name=name, value=value)]), spin, 10.0).results[0]


def _get(node, spin, ns: str, name: str):
    client = node.create_client(GetParameters, f'{ns}/markers/get_parameters')
    wait_for(client.service_is_ready, 20.0, spin, 'get_parameters')
    reply = call_service(client, GetParameters.Request(names=[name]), spin, 10.0)
    return parameter_value_to_python(reply.values[0])


def test_bad_parameters_are_rejected(rig):
    process, ns, node, spin = _rig(rig, 'plain')

    def double(value: float) -> ParameterValue:
        return Parameter('x', value=value).to_parameter_msg().value
    for name, value, fragment in (
            ('update_rate', double(math.nan), ''), ('update_rate', double(-1.0), ''),
            ('update_rate', double(0.0), 'update_rate is 0.0 (must be > 0)'),
            ('target_size', double(math.inf), ''),
            ('marker_lifetime', double(0.2), 'must exceed the heartbeat period'),
            ('update_rate', ParameterValue(type=ParameterType.PARAMETER_STRING,
                                           string_value='fast'), 'Wrong parameter type'),
            ('update_rate', ParameterValue(type=ParameterType.PARAMETER_INTEGER,
                                           integer_value=5), 'Wrong parameter type'),
            ('floor_colour', ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY,
                                            double_array_value=[1.0, 0.0, 0.0]), '4 values'),
            ('floor_colour', ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY,
                                            double_array_value=[1.0, math.nan, 0.0, 1.0]),
             'g = nan')):
        result = _set(node, spin, ns, name, value)
        assert not result.successful, (name, value)
        assert result.reason and fragment in result.reason, result.reason
    assert _get(node, spin, ns, 'update_rate') == 10.0
    assert _get(node, spin, ns, 'floor_colour') == pytest.approx([0.55, 0.55, 0.6, 0.3])
    assert _set(node, spin, ns, 'update_rate', double(20.0)).successful
    assert _get(node, spin, ns, 'update_rate') == 20.0
    assert _set(node, spin, ns, 'update_rate', double(10.0)).successful   # shared: reset
    assert process.alive(), process.output()


def _shell(message: MarkerArray) -> tuple[float, ...]:
    """Diameters of the reach shell's spheres (outer, then the hole)."""
    return tuple(m.scale.x for m in sorted(by_ns(message, 'reach_shell'), key=lambda m: m.id))


def test_robot_description_replaced_at_run_time(rig, urdf_of, load_arm):
    """New link lengths: the reach shell, its hole and the floor circles follow at once, the
    readout's tip is the new FK; another arm or a broken URDF is refused, nothing changes."""
    process, ns, node, spin = _rig(rig, 'plain')
    graph = Graph(node, spin, ns)
    first = graph.wait_markers(lambda m: STATIC <= namespaces(m), 'the static scene')
    assert _shell(first) == pytest.approx((2 * 1.8, 2 * 0.1))
    graph.wait_subscribed()
    longer = urdf_of('pointer3', l1='1.2', l2='0.9')
    text = ParameterType.PARAMETER_STRING
    start = len(graph.markers)
    result = _set(node, spin, ns, 'robot_description', ParameterValue(type=text,
                                                                  string_value=longer))
    assert result.successful, result.reason
    wait_for(lambda: any(_shell(m) == pytest.approx((2 * 2.1, 2 * 0.3))
                         for m in graph.markers[start:]), 10.0, spin, 'the new reach shell')
    scene = [m for m in graph.markers[start:] if _shell(m) == pytest.approx((4.2, 0.6))][0]
    assert scene.markers[0].action == Marker.DELETEALL
    circles = [m.text for m in by_ns(scene, 'reach_circles') if m.type == Marker.TEXT_VIEW_FACING]
    assert circles == ['0.5 m', '1 m', '1.5 m', '2 m']
    tip = load_arm('pointer3', l1='1.2', l2='0.9').fk(np.array(Q_HOME))[:3, 3]

    def new_tip() -> bool:
        graph.publish_state(Q_HOME)
        time.sleep(0.02)
        return any(r.has_state and (r.tip.x, r.tip.y, r.tip.z) == pytest.approx(tuple(tip))
                   for r in graph.readouts)
    wait_for(new_tip, 10.0, spin, "the new model's tip in the readout")
    # Refused with the reason: another arm (other joints), broken XML. The new shell stays.
    for description, words in ((urdf_of('six_axis'), 'only lengths may change'),
                               ('<robot name="x"/>', 'robot_description is not usable')):
        result = _set(node, spin, ns, 'robot_description', ParameterValue(type=text,
                                                                      string_value=description))
        assert not result.successful and words in result.reason, result.reason
    assert _get(node, spin, ns, 'robot_description') == longer
    later = graph.wait_markers(lambda m: STATIC <= namespaces(m), 'a heartbeat scene')
    assert _shell(later) == pytest.approx((4.2, 0.6))
    assert process.alive(), process.output()


def test_bad_startup_parameter_stops_the_node(rig):
    process, _, _, _ = _rig(rig, 'bad_start')
    assert process.wait_for_exit(20.0) == 1
    assert 'must exceed the heartbeat period' in process.output()


def test_stale_markers_disappear(rig, urdf_of):
    processes = rig[0]
    process, ns, node, spin = _rig(rig, 'stale')
    graph = Graph(node, spin, ns)
    graph.wait_subscribed()
    graph.publish_ik(IKErrorCode.OK, [1.0, 0.2, 1.1])

    def fed(m: MarkerArray) -> bool:
        graph.publish_state(Q_HOME)
        graph.safety.publish(SafetyStatus(contact_points=[Point(x=1.2, y=-0.3, z=1.1)]))
        return {'contacts', 'link_capsules', 'target'} <= namespaces(m)
    graph.wait_markers(fed, 'contacts and capsules')
    # Joint states and contacts stop: capsules go after state_timeout, dots after
    # contact_memory; every message starts with a DELETEALL so nothing else lingers.
    stopped = time.monotonic()
    later = graph.wait_markers(lambda m: not {'contacts', 'link_capsules'} & namespaces(m),
                               'capsules and contacts gone', timeout=5.0)
    assert time.monotonic() - stopped < 3.0
    assert later.markers[0].action == Marker.DELETEALL
    (text,) = by_ns(later, 'readout')
    assert 'no joint state yet' in text.text           # the stale tip is no longer shown
    assert 'target' in namespaces(later)               # the target is not stale
    # A restart begins with a DELETEALL and shows nothing of the run before. A loaded test
    # process can still be handling the stopped one's last messages (markers carry no
    # stamp): they are taken first, until none has come for 0.5 s.
    processes.stop(process)
    count, quiet_since = len(graph.markers), time.monotonic()
    deadline = quiet_since + 20.0
    while time.monotonic() - quiet_since < 0.5 and time.monotonic() < deadline:
        spin()
        if len(graph.markers) != count:
            count, quiet_since = len(graph.markers), time.monotonic()
    rig[1]['stale'] = start_markers(processes, urdf_of, ns)
    fresh = graph.wait_markers(lambda m: STATIC <= namespaces(m), 'the restarted scene')
    assert fresh.markers[0].action == Marker.DELETEALL
    assert 'target' not in namespaces(fresh)


def test_nan_joint_states_never_reach_the_viewer(rig):
    process, ns, node, spin = _rig(rig, 'scene')
    graph = Graph(node, spin, ns)
    graph.wait_subscribed()

    def fed() -> bool:
        graph.publish_state(Q_HOME)         # until the readout's way back is matched too
        time.sleep(0.02)
        return any(r.has_state for r in graph.readouts)
    wait_for(fed, 10.0, spin, 'a readout')
    for bad in ([0.0, math.nan, 0.0], [math.inf, 0.0, 0.0], [0.0, 0.0]):
        graph.joints.publish(JointState(name=JOINTS[:len(bad)], position=bad))
    time.sleep(0.3)
    graph.publish_state([0.1, 0.4, -0.9])
    wait_for(lambda: any(r.ignored_joint_states == 3 for r in graph.readouts), 10.0, spin,
             'three joint states ignored')
    graph.wait_markers(lambda m: True, 'a later marker message')
    assert process.alive(), process.output()
    for readout in graph.readouts:
        assert all(math.isfinite(v) for v in readout.joint_positions)
        assert math.isfinite(readout.tip.x + readout.tip.y + readout.tip.z)
    for message in graph.markers:
        for m in message.markers:
            values = [m.pose.position.x, m.pose.position.y, m.pose.position.z, m.scale.x]
            values += [c for p in m.points for c in (p.x, p.y, p.z)]
            assert all(math.isfinite(v) for v in values), m.ns
            assert 'nan' not in m.text
