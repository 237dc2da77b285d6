"""target_input in a process of its own per test, talked to over DDS: the cases that cannot
share a start-up with others (test_target_input_cases.py holds those that do).

A small MoveToTarget server in the test process (arm_testing.target_input_rig.FakeExecutor)
stands in for the trajectory executor where it can: joint_states that lag the results, the
interactive console (a stdin to type into). The bad sequence files' nodes start at once and
talk to nobody. The end-to-end tests at the bottom run the real ``trajectory_executor`` and
skip only when that executable is not installed.
"""

from __future__ import annotations

from collections.abc import Callable
import os
from pathlib import Path
import signal
import subprocess
import time

import pytest
from rcl_interfaces.msg import ParameterType, ParameterValue
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
import yaml

from arm_bringup.process_group import executable_path
from arm_interfaces.action import MoveToTarget
from arm_interfaces.msg import TargetStatus
from arm_testing.ros_harness import claimed_domain, process_group, wait_for
from arm_testing.target_input_rig import (
    FakeExecutor,
    goal_point,
    is_point,
    Recorder,
    set_parameter,
    START_TIMEOUT,
    target_input_params,
    trigger,
    wait_logged,
)

CONFIG = Path(__file__).resolve().parents[2] / 'arm_bringup' / 'config'


def _executor_installed() -> bool:
    try:
        executable_path('arm_ik', 'trajectory_executor')
        return True
    except (FileNotFoundError, LookupError):
        return False


def _start_target_input(processes, arm: str, urdf_of, **extra):
    """target_input for the bundled ``arm`` in /<arm> with these parameters besides its own."""
    return processes.start_node('arm_ik', 'target_input', namespace=f'/{arm}',
                                params=target_input_params(arm, urdf_of, **extra))


class LaggingArm:
    """The arm behind a FakeExecutor whose joint_states lag its results (issue 20).

    Its stream (``publish``, called between spins) shows the pose each move started from,
    stamped when the move's result went out: late copies of what was sampled before the
    result, while the states of the move's end are dropped. ``final(name, k, q)`` is what the
    result of the k-th goal for target ``name`` (at ``q``) carries as its final state (the
    executed path's last point; None: no final state); ``resume(name, k)``, when not None, is
    the pose the stream shows from ``RESUME_DELAY`` s after that result on, stamped as sent.
    """

    PERIOD = 0.05         # s between joint states
    RESUME_DELAY = 0.3    # s

    def __init__(self, node, arm: str, names: tuple[str, ...], home: list[float],
                 points: dict[str, tuple[list[float], list[float]]]) -> None:
        """``points``: target name -> (tool position m, joint pose rad) of Cartesian goals."""
        self.node, self.names, self.points = node, names, points
        self.publisher = node.create_publisher(JointState, f'/{arm}/joint_states', 10)
        self.at = list(home)                    # where the arm is
        self.q, self.stamp = list(home), None   # what the stream shows; None: stamp as sent
        self.count: dict[str, int] = {}
        self.final: Callable[[str, int, list[float]], list[float] | None] = \
            lambda name, k, q: q
        self.resume: Callable[[str, int], list[float] | None] = lambda name, k: None
        self.hold_goal: Callable[[str, int], bool] = lambda name, k: False
        self._resume_at: tuple[float, list[float]] | None = None
        self._sent_at = 0.0
        self._goal: tuple[str, int, list[float]] = ('', 0, list(home))

    def hold(self, goal: MoveToTarget.Goal) -> bool:
        """Every executed goal passes here first: count it by target."""
        if goal.joint_target.name:
            name, q = 'home', list(goal.joint_target.position)
        else:
            name = next(n for n, (point, _) in self.points.items() if is_point(goal, point))
            q = self.points[name][1]
        self.count[name] = self.count.get(name, 0) + 1
        self._goal = (name, self.count[name], q)
        return self.hold_goal(name, self.count[name])

    def path(self, goal: MoveToTarget.Goal) -> JointTrajectory | None:
        """The result is about to go out: the stream shows the move's start, stamped now."""
        name, k, q = self._goal
        self.q, self.stamp = self.at, self.node.get_clock().now().to_msg()
        final = self.final(name, k, q)
        resumed = self.resume(name, k)
        self.at = resumed or final or q
        self._resume_at = None if resumed is None else (
            time.monotonic() + self.RESUME_DELAY, resumed)
        if final is None:
            return None
        return JointTrajectory(joint_names=list(self.names),
                               points=[JointTrajectoryPoint(positions=final)])

    def publish(self) -> None:
        now = time.monotonic()
        if now - self._sent_at < self.PERIOD:
            return
        self._sent_at = now
        if self._resume_at is not None and now >= self._resume_at[0]:
            self.q, self.stamp, self._resume_at = self._resume_at[1], None, None
        state = JointState(name=list(self.names), position=[float(v) for v in self.q])
        state.header.stamp = self.stamp or self.node.get_clock().now().to_msg()
        self.publisher.publish(state)


def test_the_cycle_decides_on_the_moves_end_when_joint_states_lag(processes, ros_node,
                                                                  urdf_of, load_arm):
    """Issue 20, forced: every result is taken while joint_states still show the move's start.
    Cycle 1: results carry their final state, the target's states are dropped: attach at the
    START result's end. Cycle 2: START's result carries none and the states resume 0.3 s
    later: attach waits for them; GOAL's carries none and nothing comes within the (then
    shortened) wait: the move's target stands in, and the status says so."""
    node, spin = ros_node
    model = load_arm('manipulator3d')
    home = [0.0, 0.7853981633974483, -1.5707963267948966]
    start_q, goal_q = [-0.46, 0.94, -1.82], [0.79, 1.05, -1.88]
    start, goal = (model.fk(q)[:3, 3].tolist() for q in (start_q, goal_q))
    ended = [start_q[0] + 0.006, start_q[1] + 0.006, start_q[2]]     # 5.7 mm from START
    resumed = [start_q[0] - 0.006, start_q[1] - 0.006, start_q[2]]   # 5.7 mm the other way
    arm = LaggingArm(node, 'manipulator3d', model.joint_names, home,
                     {'start': (start, start_q), 'goal': (goal, goal_q)})
    arm.final = lambda name, k, q: (ended if (name, k) == ('start', 1) else
                                    None if (name, k) in (('start', 2), ('goal', 2)) else q)
    arm.resume = lambda name, k: resumed if (name, k) == ('start', 2) else None
    arm.hold_goal = lambda name, k: (name, k) == ('goal', 2)
    fake = FakeExecutor(node, 'manipulator3d', hold=arm.hold, path=arm.path)
    recorder = Recorder(node, '/manipulator3d')
    process = _start_target_input(processes, 'manipulator3d', urdf_of, cycles=2, autostart=False,
                                  response_timeout=60.0, current_pose_timeout=30.0, start=start,
                                  goal=goal, sequence_file='manipulator3d_pick_place.yaml')

    def spin_arm() -> None:
        arm.publish()
        spin(0.01)
    # The node hears the stream before the cycle starts, so its last joint state at PICK is
    # the stale one (without any, a stand-in would hide the race).
    wait_logged(lambda: arm.publisher.get_subscription_count() > 0, START_TIMEOUT, spin_arm,
          'target_input subscribed to joint_states', process)
    wait_logged(lambda: trigger(node, spin_arm, '/manipulator3d/target_input/run_cycle').success,
          START_TIMEOUT, spin_arm, 'the cycle started', process)
    wait_logged(lambda: fake.held or recorder.with_state(TargetStatus.FAILED), 60.0, spin_arm,
          "cycle 2's GOAL move", process)
    assert not recorder.with_state(TargetStatus.FAILED), \
        recorder.with_state(TargetStatus.FAILED)[0].message
    shortened = set_parameter(node, spin_arm, '/manipulator3d', 'current_pose_timeout',
                     ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=0.5))
    assert shortened.successful, shortened.reason
    fake.release()
    wait_logged(lambda: recorder.with_state(TargetStatus.FINISHED) or
          recorder.with_state(TargetStatus.FAILED), 60.0, spin_arm, 'the cycles finished',
          process)
    failed = recorder.with_state(TargetStatus.FAILED)
    assert not failed, f'{failed[0].phase}: {failed[0].message}\n{process.output()}'

    def attached_at(cycle: int) -> list[float]:
        ball = next(b for b in recorder.balls if b.attached and b.cycle == cycle)
        return [ball.position.x, ball.position.y, ball.position.z]
    assert attached_at(1) == pytest.approx(model.fk(ended)[:3, 3].tolist(), abs=1e-9)
    assert attached_at(2) == pytest.approx(model.fk(resumed)[:3, 3].tolist(), abs=1e-9)
    stand_in = "no joint state stamped after the last move's result came within 0.5 s"
    noted = [(s.cycle, s.phase, s.step_kind) for s in recorder.with_state(TargetStatus.SUCCEEDED)
             if stand_in in s.message and 'the target of the last move stands in' in s.message]
    assert noted == [(2, 'GOAL', 'move'), (2, 'PLACE', 'detach')]
    placed = recorder.balls[-1]
    assert not placed.attached
    assert [placed.position.x, placed.position.y, placed.position.z] == pytest.approx(goal)
    assert process.alive(), process.output()


BAD_SEQUENCES = [
    ('manipulator3d', 'steps: [{jump: home}]', "unknown key 'jump'"),
    ('manipulator3d', 'points: {a: [0.5, .nan, 0.2]}\nsteps: [{move: a}]',
     'points.a[1]: must be finite'),
    ('ccd5', None, 'written for arm "manipulator3d", this node serves "ccd5"'),
    ('manipulator3d', 'absent', "sequence file 'absent.yaml' not found"),
]


@pytest.fixture(scope='module')
def sequence_refusals(urdf_of, tmp_path_factory):
    """Every bad sequence file's target_input started at once (discovery off: they talk to
    nobody, see test_params_descriptions_viewers' case 24); (exit status, output) of each.
    A start-up is most of such a test's time: together they take about one's."""
    folder = tmp_path_factory.mktemp('sequences')
    with claimed_domain() as claim, process_group(claim) as group:
        started = []
        for index, (arm, text, _) in enumerate(BAD_SEQUENCES):
            if text is None:
                name = str(CONFIG / 'manipulator3d_pick_place.yaml')
            elif text == 'absent':
                name = 'absent.yaml'
            else:
                name = str(folder / f'bad{index}.yaml')
                Path(name).write_text(text, encoding='utf-8')
            started.append(group.start_node(
                'arm_ik', 'target_input', namespace=f'/{arm}',
                params=target_input_params(arm, urdf_of, sequence_file=name),
                extra_env={'ROS_AUTOMATIC_DISCOVERY_RANGE': 'OFF'}))
        yield [(process.wait_for_exit(START_TIMEOUT), process.output()) for process in started]


@pytest.mark.parametrize('index', range(len(BAD_SEQUENCES)))
def test_bad_sequence_file_refuses_to_start(index, sequence_refusals):
    status, output = sequence_refusals[index]
    assert status == 1, output
    assert BAD_SEQUENCES[index][2] in output


def test_interactive_console_asks_until_reachable(ros_domain, ros_node, urdf_of, tmp_path):
    node, spin = ros_node
    fake = FakeExecutor(node, 'manipulator3d')
    recorder = Recorder(node, '/manipulator3d')
    params = tmp_path / 'params.yaml'
    params.write_text(yaml.safe_dump({'/**': {'ros__parameters': target_input_params(
        'manipulator3d', urdf_of, sequence_file='manipulator3d_pick_place.yaml',
        interactive=True, cycles=1)}}), encoding='utf-8')
    log = tmp_path / 'console.log'
    env = ros_domain.environment()
    env['PYTHONUNBUFFERED'] = '1'
    with open(log, 'wb') as output:
        # Started here, not by ProcessGroup, because it needs a stdin to type into.
        process = subprocess.Popen(
            [executable_path('arm_ik', 'target_input'), '--ros-args', '-r',
             '__ns:=/manipulator3d', '--params-file', str(params)],
            stdin=subprocess.PIPE, stdout=output, stderr=subprocess.STDOUT, env=env,
            start_new_session=True)
    try:
        # START: out of reach, then not a point, then reachable; GOAL: Enter keeps the file's.
        process.stdin.write(b'1.5 0 0.2\n0.5 0.2\n0.5, -0.2, 0.15\n\n')
        process.stdin.flush()
        wait_for(lambda: recorder.with_state(TargetStatus.FINISHED), 40.0, spin,
                 'the cycle with the typed START')
        text = log.read_text(encoding='utf-8', errors='replace')
        assert 'START [1.500, 0.000, 0.200] m is unreachable' in text
        assert 'not a point: expected 3 numbers' in text
        assert 'START [0.500, -0.200, 0.150] m is reachable' in text
        assert goal_point(fake.goals[1]) == pytest.approx([0.5, -0.2, 0.15])
        assert goal_point(fake.goals[2]) == pytest.approx([0.45, 0.45, 0.15])
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=5.0)


# ---------------------------------------------------------------- with the real executor
@pytest.mark.skipif(not _executor_installed(),
                    reason='trajectory_executor is not installed (build the workspace with it)')
@pytest.mark.parametrize('arm', ['ccd5', 'manipulator3d'])
def test_pick_and_place_end_to_end(arm, processes, ros_node, urdf_of):
    node, spin = ros_node
    recorder = Recorder(node, f'/{arm}')
    common = target_input_params(arm, urdf_of)
    executor = processes.start_node('arm_ik', 'trajectory_executor', namespace=f'/{arm}',
                                    params=common)
    target_input = processes.start_node('arm_ik', 'target_input', namespace=f'/{arm}',
                                        params={**common, 'cycles': 1, 'autostart': False,
                                                'sequence_file': f'{arm}_pick_place.yaml'})
    # Started by hand once this test hears the ball, so it sees every ball state.
    wait_for(lambda: recorder.balls, START_TIMEOUT, spin, 'the ball at the pick point')
    deadline = time.monotonic() + START_TIMEOUT
    while not trigger(node, spin, f'/{arm}/target_input/run_cycle').success:
        assert time.monotonic() < deadline, executor.output()
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            spin()
    deadline = time.monotonic() + 120.0
    while time.monotonic() < deadline and not (recorder.with_state(TargetStatus.FINISHED) or
                                               recorder.with_state(TargetStatus.FAILED)):
        spin()
    failed = recorder.with_state(TargetStatus.FAILED)
    assert not failed, f'{failed[0].phase}: {failed[0].message}\n{executor.output()}'
    assert recorder.with_state(TargetStatus.FINISHED), target_input.output()
    assert recorder.attached_changes() == [False, True, False]
    done = [(s.phase, s.step_kind) for s in recorder.status
            if s.step_kind in ('attach', 'detach') and s.state == TargetStatus.SUCCEEDED]
    assert done == [('PICK', 'attach'), ('PLACE', 'detach')]
    moves = [s for s in recorder.with_state(TargetStatus.SUCCEEDED) if s.step_kind == 'move']
    assert len(moves) == 4 and all(s.final_error < 0.01 for s in moves)
    placed = recorder.balls[-1]
    assert not placed.attached
    place = {'ccd5': [0.35, 0.55, 0.30], 'manipulator3d': [0.45, 0.45, 0.15]}[arm]
    assert [placed.position.x, placed.position.y, placed.position.z] == pytest.approx(
        place, abs=0.02)
    assert executor.alive() and target_input.alive()
