"""safety_monitor started in its own process, talked to over DDS.

The test node publishes joint_states itself: the monitor is an independent witness and must
report what it sees whoever publishes it.
"""

from __future__ import annotations

import math
from pathlib import Path
import shutil
import time

from builtin_interfaces.msg import Duration
import numpy as np
import pytest
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParameters
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import MarkerArray

from arm_interfaces.msg import SafetyStatus
from arm_interfaces.srv import CheckPath, GetJointMap, PlanDetour
from arm_kinematics.description.bundled import load_safety_config
from arm_kinematics.motion.planning.grid import PlanCode
from arm_kinematics.scene.geometry import SafetyGeometry, Verdict
from arm_testing.ros_harness import call_service, config_file, wait_for

DEG = math.pi / 180.0
NAMES = ('base_yaw', 'shoulder_pitch', 'elbow_pitch')
FOLDED = [0.0, 40.0 * DEG, -156.0 * DEG]
LEVEL = [0.0, 0.0, 0.0]
HANGING = [0.0, 0.0, -90.0 * DEG]          # forearm straight down: 0.635 m below the floor
CENTRE = np.array([1.3, -0.35, 0.8])       # the ball seen from the shoulder
BEARING = math.atan2(CENTRE[1], CENTRE[0])
ELEVATION = math.atan2(CENTRE[2], math.hypot(CENTRE[0], CENTRE[1]))
REPLY = 15.0


def aimed_off(distance: float) -> list[float]:
    """A straight arm at the ball's elevation whose axis passes ``distance`` m from the ball
    centre (yaw turned away from its bearing: cos θ = cos²e cos Δψ + sin²e)."""
    theta = math.asin(distance / float(np.linalg.norm(CENTRE)))
    cos_e2, sin_e2 = math.cos(ELEVATION) ** 2, math.sin(ELEVATION) ** 2
    return [BEARING + math.acos((math.cos(theta) - sin_e2) / cos_e2), ELEVATION, 0.0]


class Monitor:
    """One safety_monitor process and the test node's publisher, subscriptions, clients."""

    def __init__(self, processes, ros_node, urdf_of, extra_env=None, params=None) -> None:
        self.node, self.spin = ros_node
        self.process = processes.start_node(
            'arm_ik', 'safety_monitor', namespace='/pointer3',
            params={'robot_description': urdf_of('pointer3'), 'arm': 'pointer3',
                    'arm_config': config_file('pointer3'),
                    **(params or {})}, extra_env=extra_env)
        self.statuses: list[SafetyStatus] = []
        self.markers: list[MarkerArray] = []
        self.node.create_subscription(SafetyStatus, '/pointer3/safety_status',
                                      self.statuses.append, 50)
        self.node.create_subscription(MarkerArray, '/pointer3/safety_markers',
                                      self.markers.append, 50)
        self.publisher = self.node.create_publisher(JointState, '/pointer3/joint_states', 10)
        self._heard = False     # the monitor has read one of our joint_states

    def client(self, kind, name: str):
        client = self.node.create_client(kind, f'/pointer3/safety_monitor/{name}')
        wait_for(client.service_is_ready, 20.0, self.spin, f'{name} service')
        return client

    def call(self, client, request):
        return call_service(client, request, self.spin, REPLY)

    def publish(self, q, names=NAMES, count: int = 1, period: float = 0.05) -> None:
        wait_for(lambda: self.publisher.get_subscription_count() > 0, 20.0, self.spin,
                 'the monitor subscribing to joint_states')
        if not self._heard:
            # Our publisher matches the monitor's subscription before that subscription
            # has matched our publisher, and the monitor reads joint_states best-effort:
            # the first samples can be dropped and are never resent. Repeat the first pose
            # until the monitor has read one (any status but "no joint_states received").
            def heard() -> bool:
                self._send(q, names, period)
                return any('no joint_states received' not in s.message for s in self.statuses)
            wait_for(heard, 20.0, self.spin, 'the monitor reading joint_states')
            self._heard = True
        for _ in range(count):
            self._send(q, names, period)

    def _send(self, q, names, period: float) -> None:
        message = JointState(name=list(names), position=[float(v) for v in q])
        message.header.stamp = self.node.get_clock().now().to_msg()
        self.publisher.publish(message)
        end = time.monotonic() + period
        while time.monotonic() < end:
            self.spin(0.01)

    def mark(self) -> int:
        """Index of the next status to arrive (to wait only for later ones)."""
        return len(self.statuses)

    def wait_for_status(self, condition, what: str, timeout: float = 10.0,
                        start: int = 0) -> SafetyStatus:
        def found() -> bool:
            return any(condition(s) for s in self.statuses[start:])
        try:
            wait_for(found, timeout, self.spin, what)
        except AssertionError as error:
            seen = [(s.verdict, s.message) for s in self.statuses[start:]][-5:]
            raise AssertionError(f'{error}; last statuses {seen}; monitor alive: '
                                 f'{self.process.alive()}; its output:\n'
                                 f'{self.process.output()[-3000:]}') from None
        return next(s for s in self.statuses[start:] if condition(s))

    def set_parameter(self, name: str, value) -> object:
        client = self.client(SetParameters, 'set_parameters')
        if isinstance(value, str):
            parameter = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=value)
        else:
            parameter = ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                                       double_value=float(value))
        reply = self.call(client, SetParameters.Request(
            parameters=[ParameterMsg(name=name, value=parameter)]))
        return reply.results[0]


def trajectory(points, times) -> JointTrajectory:
    path = JointTrajectory(joint_names=list(NAMES))
    for q, t in zip(points, times):
        whole = int(t)
        path.points.append(JointTrajectoryPoint(
            positions=[float(v) for v in q],
            time_from_start=Duration(sec=whole, nanosec=int(round((t - whole) * 1e9)))))
    return path


@pytest.fixture
def monitor(processes, ros_node, urdf_of):
    return Monitor(processes, ros_node, urdf_of)


def test_verdict_constants_match_the_message():
    assert {name: getattr(SafetyStatus, name) for name in
            ('SAFE', 'FLOOR_VIOLATION', 'OBSTACLE_CONTACT', 'STALE', 'INVALID_INPUT')} == \
        {verdict.name: int(verdict) for verdict in Verdict}
    assert {name: getattr(PlanDetour.Response, name) for name in PlanCode.__members__} == \
        {code.name: int(code) for code in PlanCode}


def test_bad_trajectory_on_joint_states_is_reported(monitor):
    """A trajectory through the floor, published by someone else, is witnessed; then the
    stream stops and the monitor reports STALE."""
    before = monitor.wait_for_status(lambda s: s.verdict == SafetyStatus.STALE,
                                     'STALE before any joint_states', timeout=20.0)
    assert 'no joint_states' in before.message
    # Names jumbled: the monitor reorders them.
    jumbled = (NAMES[2], NAMES[0], NAMES[1])
    mark = monitor.mark()
    path = np.linspace(LEVEL, HANGING, 12)
    for q in path:
        monitor.publish([q[2], q[0], q[1]], names=jumbled)
    violation = monitor.wait_for_status(lambda s: s.verdict == SafetyStatus.FLOOR_VIOLATION,
                                        'FLOOR_VIOLATION status', start=mark)
    assert list(violation.link_names) == ['upper_arm_link', 'forearm_link']
    assert violation.floor_violation[1] and not violation.floor_violation[0]
    assert violation.min_floor_clearance < 0.0
    assert 'forearm_link' in violation.message and 'below the floor' in violation.message
    assert list(violation.joint_state.name) == list(NAMES)
    last = monitor.wait_for_status(
        lambda s: s.verdict == SafetyStatus.FLOOR_VIOLATION
        and abs(s.floor_clearance[1] - (0.405 - 0.85 - 0.19)) < 1e-6, 'the last, worst pose',
        start=mark)
    assert last.joint_state.position == pytest.approx(HANGING)
    # Back to a safe pose: SAFE again, at the joint-state rate.
    count = mark = monitor.mark()
    monitor.publish(LEVEL, count=10)
    safe = monitor.wait_for_status(lambda s: s.verdict == SafetyStatus.SAFE, 'SAFE status',
                                   start=mark)
    assert safe.min_floor_clearance == pytest.approx(0.155)
    wait_for(lambda: len(monitor.statuses) - count >= 8, 5.0, monitor.spin,
             'one status per joint_states message')
    # Markers: floor, obstacle, capsules and contacts, all with lifetimes.
    wait_for(lambda: monitor.markers, 5.0, monitor.spin, 'safety markers')
    spaces = {m.ns for array in monitor.markers for m in array.markers}
    assert {'floor', 'obstacle', 'link_capsules', 'contacts'} <= spaces
    assert all(m.lifetime.sec or m.lifetime.nanosec
               for array in monitor.markers for m in array.markers)
    # Malformed messages are flagged and ignored; the node keeps going.
    mark = monitor.mark()
    monitor.publish([math.nan, 0.0, 0.0])
    bad = monitor.wait_for_status(lambda s: s.verdict == SafetyStatus.INVALID_INPUT,
                                  'INVALID_INPUT status', start=mark)
    assert 'non-finite position of base_yaw' in bad.message and bad.malformed_count >= 1
    monitor.publish([0.0, 0.0], names=NAMES[:2])
    monitor.wait_for_status(lambda s: 'missing joints elbow_pitch' in s.message,
                            'missing joint flagged', start=mark)
    # joint_states without names are not guessed to be in chain order (as every subscriber
    # of joint_states reads them).
    monitor.publish([0.0, 0.0, 0.0], names=())
    monitor.wait_for_status(lambda s: s.verdict == SafetyStatus.INVALID_INPUT
                            and '0 names but 3 positions' in s.message,
                            'unnamed joint_states flagged', start=mark)
    # The stream stops: STALE within a few periods (50 ms each, plus the 0.1 s floor).
    stopped, mark = time.monotonic(), monitor.mark()
    stale = monitor.wait_for_status(lambda s: s.verdict == SafetyStatus.STALE, 'STALE status',
                                    start=mark)
    assert time.monotonic() - stopped < 2.0
    assert 'no valid joint_states for' in stale.message
    assert monitor.process.alive(), monitor.process.output()


def test_obstacle_radius_changed_at_run_time_changes_the_verdict(monitor):
    near = aimed_off(0.40)          # clear at 0.25 + 0.075, touching at 0.40 + 0.075
    mark = monitor.mark()
    monitor.publish(near, count=3)
    safe = monitor.wait_for_status(lambda s: s.verdict == SafetyStatus.SAFE, 'SAFE near ball',
                                   start=mark)
    assert safe.min_obstacle_distance == pytest.approx(0.40, abs=1e-6)
    assert safe.contact_distance == pytest.approx(0.325)
    result = monitor.set_parameter('obstacle_radius', 0.4)
    assert result.successful, result.reason
    mark = monitor.mark()
    monitor.publish(near, count=3)
    touching = monitor.wait_for_status(lambda s: s.verdict == SafetyStatus.OBSTACLE_CONTACT,
                                       'OBSTACLE_CONTACT after the radius change', start=mark)
    assert touching.obstacle_radius == pytest.approx(0.4)
    assert touching.obstacle_contact[1] and len(touching.contact_points) >= 1
    wait_for(lambda: any(m.ns == 'obstacle' and m.color.r > 0.5 and m.color.g < 0.5
                         for array in monitor.markers for m in array.markers),
             5.0, monitor.spin, 'a red obstacle marker')


@pytest.mark.parametrize('name, value, words', [
    ('obstacle_radius', -0.1, 'must be > 0'),
    ('obstacle_radius', 0.0, 'must be > 0'),
    ('obstacle_radius', math.nan, 'must be finite'),
    ('obstacle_radius', math.inf, 'must be finite'),
    ('grid_resolution_deg', 50.0, 'out of range'),   # the descriptor's range, rclpy's words
    ('stale_periods', -3.0, 'must be > 0'),
])
def test_bad_parameters_are_rejected_with_a_reason(monitor, name, value, words):
    result = monitor.set_parameter(name, value)
    assert not result.successful and name in result.reason and words in result.reason
    client = monitor.client(GetParameters, 'get_parameters')
    reply = monitor.call(client, GetParameters.Request(names=['obstacle_radius']))
    assert reply.values[0].double_value == pytest.approx(0.25)       # old value kept


def test_wrong_parameter_type_is_rejected(monitor):
    result = monitor.set_parameter('obstacle_radius', 'big')
    assert not result.successful and result.reason


def test_check_path_finds_the_first_violation_and_its_time(monitor):
    client = monitor.client(CheckPath, 'check_path')
    # The forearm sweeps down from level to hanging in 2 s: the first sample below the
    # floor is when the wrist capsule touches it, 0.405 - 0.85 sin(b) - 0.19 = 0.
    request = CheckPath.Request(path=trajectory([LEVEL, HANGING], [0.0, 2.0]))
    reply = monitor.call(client, request)
    expected = math.asin((0.405 - 0.19) / 0.85) / (90.0 * DEG) * 2.0
    assert reply.error_code == CheckPath.Response.CHECKED and not reply.safe
    assert reply.first_violation_verdict == SafetyStatus.FLOOR_VIOLATION
    assert 0.0 <= reply.first_violation_time - expected <= 1.0 / 60.0 + 1e-6
    assert list(reply.first_violation_links) == ['forearm_link']
    assert reply.min_floor_clearance == pytest.approx(0.405 - 0.85 - 0.19)
    # Contact on the way, not at the end: reported with times and tips.
    sweep = [[BEARING - 45 * DEG, ELEVATION, 0.0], [BEARING + 45 * DEG, ELEVATION, 0.0]]
    request = CheckPath.Request(path=trajectory(sweep, [1.0, 3.0]), sample_rate=60.0,
                                obstacle_is_violation=True, return_samples=True)
    reply = monitor.call(client, request)
    assert reply.first_violation_verdict == SafetyStatus.OBSTACLE_CONTACT
    assert 1.0 < reply.first_violation_time < 2.0 < reply.contact_times[-1] < 3.0
    assert len(reply.contact_times) == len(reply.contact_tips) > 10
    assert len(reply.sample_times) == len(reply.sample_verdicts) == reply.sample_count
    assert reply.sample_verdicts[-1] == SafetyStatus.SAFE
    # Contact alone is reported but not a violation unless asked.
    request.obstacle_is_violation = False
    assert monitor.call(client, request).safe
    # Bad requests: clear errors, node alive.
    for path, words in ((trajectory([LEVEL, HANGING], [1.0, 1.0]), 'increase strictly'),
                        (trajectory([LEVEL, [math.nan, 0, 0]], [0.0, 1.0]), 'not finite'),
                        (JointTrajectory(joint_names=['base_yaw', 'knee', 'elbow_pitch'],
                                         points=trajectory([LEVEL], [0.0]).points),
                         "unknown 'knee'"),
                        (JointTrajectory(joint_names=list(NAMES)), 'no points')):
        reply = monitor.call(client, CheckPath.Request(path=path))
        assert reply.error_code == CheckPath.Response.INVALID_INPUT and words in reply.message
    reply = monitor.call(client, CheckPath.Request(path=trajectory([LEVEL], [0.0])))
    assert reply.error_code == CheckPath.Response.CHECKED and reply.safe


def test_plan_detour_returns_a_clear_path_or_a_clear_error(monitor, load_arm):
    client = monitor.client(PlanDetour, 'plan_detour')
    goal = JointState(name=list(NAMES), position=LEVEL)
    reply = monitor.call(client, PlanDetour.Request(goal=goal))
    assert reply.error_code == PlanDetour.Response.NO_JOINT_STATE      # no start, no state
    start = JointState(name=list(NAMES), position=FOLDED)
    reply = monitor.call(client, PlanDetour.Request(start=start, goal=goal))
    assert reply.error_code == PlanDetour.Response.OK and reply.detoured, reply.message
    points = np.array([p.positions for p in reply.path.points])
    times = [p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in reply.path.points]
    assert list(reply.path.joint_names) == list(NAMES)
    assert points[0] == pytest.approx(FOLDED) and points[-1] == pytest.approx(LEVEL)
    assert np.all(np.diff(times) > 0.0)
    geometry = SafetyGeometry(load_arm('pointer3'), load_safety_config('pointer3'))
    fraction = np.linspace(0.0, 1.0, 3000)[:, None]
    samples = np.vstack([a + fraction * (b - a) for a, b in zip(points, points[1:])])
    assert not geometry.unsafe(samples, obstacle=False).any()
    # The start from joint_states, a goal through the floor: a clear error, no path.
    monitor.publish(FOLDED, count=3)
    reply = monitor.call(client, PlanDetour.Request(
        goal=JointState(name=list(NAMES), position=HANGING)))
    assert reply.error_code == PlanDetour.Response.GOAL_UNSAFE and not reply.path.points
    reply = monitor.call(client, PlanDetour.Request(goal=goal, resolution=0.001))
    assert reply.error_code == PlanDetour.Response.INVALID_INPUT and 'resolution' in reply.message
    reply = monitor.call(client, PlanDetour.Request(goal=JointState(position=[0.0, 0.0])))
    assert reply.error_code == PlanDetour.Response.INVALID_INPUT
    # The joint map at the current yaw, with the floor cells marked.
    client = monitor.client(GetJointMap, 'joint_map')
    reply = monitor.call(client, GetJointMap.Request(use_current_state=True))
    assert reply.error_code == GetJointMap.Response.OK, reply.message
    grid = reply.map
    assert len(grid.cells) == grid.row_count * grid.column_count
    assert list(grid.axis_joint_names) == ['shoulder_pitch', 'elbow_pitch']
    row = int(round((0.0 - grid.row_min) / grid.row_step))
    column = int(round((-90.0 * DEG - grid.column_min) / grid.column_step))
    assert grid.cells[row * grid.column_count + column] & grid.CELL_FLOOR
    assert monitor.process.alive(), monitor.process.output()


def test_robot_description_replaced_at_run_time(monitor, urdf_of, load_arm):
    """A shorter forearm at run time: the hanging pose, through the floor with the 0.85 m
    forearm, clears it with 0.15 m; another arm or a broken URDF is refused and changes
    nothing."""
    mark = monitor.mark()
    monitor.publish(HANGING, count=3)
    monitor.wait_for_status(lambda s: s.verdict == SafetyStatus.FLOOR_VIOLATION,
                            'FLOOR_VIOLATION hanging', start=mark)
    shorter = urdf_of('pointer3', l2='0.15')
    result = monitor.set_parameter('robot_description', shorter)
    assert result.successful, result.reason
    clearance = 0.405 - 0.15 - 0.19             # floor to the hanging wrist capsule's bottom
    tip = load_arm('pointer3', l2='0.15').fk(np.array(HANGING))[:3, 3]
    mark = monitor.mark()
    monitor.publish(HANGING, count=3)
    safe = monitor.wait_for_status(lambda s: s.verdict == SafetyStatus.SAFE,
                                   'SAFE hanging with the short forearm', start=mark)
    assert safe.floor_clearance[1] == pytest.approx(clearance)
    assert (safe.tip.x, safe.tip.y, safe.tip.z) == pytest.approx(tuple(tip))
    client = monitor.client(CheckPath, 'check_path')
    request = CheckPath.Request(path=trajectory([LEVEL, HANGING], [0.0, 2.0]))
    reply = monitor.call(client, request)
    assert reply.error_code == CheckPath.Response.CHECKED and reply.safe, reply.message
    assert reply.min_floor_clearance == pytest.approx(clearance)
    # Refused with the reason: another arm (other joints), broken XML. The short arm stays.
    for description, words in ((urdf_of('six_axis'), 'only lengths may change'),
                               ('not a urdf', 'robot_description is not usable')):
        result = monitor.set_parameter('robot_description', description)
        assert not result.successful and words in result.reason, result.reason
    reply = monitor.call(client, request)
    assert reply.safe and reply.min_floor_clearance == pytest.approx(clearance)
    parameters = monitor.client(GetParameters, 'get_parameters')
    reply = monitor.call(parameters, GetParameters.Request(names=['robot_description']))
    assert reply.values[0].string_value == shorter
    assert monitor.process.alive(), monitor.process.output()


def test_refuses_to_start_with_a_broken_safety_section(processes, ros_node, urdf_of,
                                                       tmp_path):
    source = Path(__file__).resolve().parents[2] / 'arm_description'
    copy = tmp_path / 'arm_description'
    shutil.copytree(source / 'config', copy / 'config')
    config = copy / 'config' / 'pointer3.yaml'
    config.write_text(config.read_text().replace('radius: 0.19}', 'radius: -0.19}'))
    process = processes.start_node(
        'arm_ik', 'safety_monitor', params={'robot_description': urdf_of('pointer3'),
                                            'arm': 'pointer3', 'arm_config': str(config)})
    assert process.wait_for_exit(20.0) == 1
    assert 'links[1].radius is -0.19 (must be > 0)' in process.output()


def test_refuses_to_start_with_a_parameter_out_of_its_range(processes, ros_node, urdf_of):
    """The range is the descriptor's (rclpy refuses the value before the node's own check):
    the node still stops with the reason, not a traceback."""
    params = {'robot_description': urdf_of('pointer3'), 'arm': 'pointer3',
              'arm_config': config_file('pointer3'), 'grid_resolution_deg': 50.0}
    process = processes.start_node('arm_ik', 'safety_monitor', params=params)
    assert process.wait_for_exit(20.0) == 1
    output = process.output()
    assert 'parameter grid_resolution_deg' in output and 'out of range' in output, output
    assert 'Traceback' not in output, output
