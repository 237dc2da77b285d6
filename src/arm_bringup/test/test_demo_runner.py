"""The launch-free runner end to end: one cycle on ccd5, every node in its own process.

``python -m arm_bringup.demo --cycles 1 --mcap <tmp>`` on a private ROS domain must end with
status 0 and its summary line, stop every process it started, and leave an MCAP that the
mcap reader opens, with the pipeline's topics in it.
"""

from __future__ import annotations

from pathlib import Path
import re
import subprocess
import sys

import pytest

from arm_testing.bringup_harness import installed
from arm_testing.ros_harness import DomainClaim

RUN_TIMEOUT = 150.0   # s; a ccd5 cycle takes about 25 s here
NS = '/ccd5'
ACTION = f'{NS}/trajectory_executor/move_to_target/_action'
# Topics the issue asks for (markers is checked when its node is installed).
REQUIRED = (f'{NS}/joint_states', f'{NS}/ik_status', f'{NS}/safety_status',
            f'{NS}/safety_markers', f'{NS}/target_status', f'{NS}/ball_state',
            f'{ACTION}/feedback', f'{ACTION}/status', f'{NS}/demo/move_results')

pytestmark = pytest.mark.skipif(not installed('arm_bringup'),
                                reason='the workspace is not built and sourced')


def _markers_installed() -> bool:
    from arm_bringup.process_group import executable_path
    try:
        executable_path('arm_ik', 'markers')
        return True
    except FileNotFoundError:
        return False


@pytest.fixture(scope='module')
def run(tmp_path_factory):
    """Run the demo once for every test of this module: (completed process, MCAP path)."""
    pytest.importorskip('mcap_ros2')
    claim = DomainClaim()
    try:
        path = tmp_path_factory.mktemp('demo') / 'demo.mcap'
        env = claim.environment()
        env['PYTHONUNBUFFERED'] = '1'
        done = subprocess.run([sys.executable, '-m', 'arm_bringup.demo', '--cycles', '1',
                               '--mcap', str(path)], env=env, capture_output=True, text=True,
                              timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL, check=False)
        yield done, path
    finally:
        claim.release()


def test_one_cycle_ends_with_status_0_and_the_summary(run):
    done, _ = run
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    summary = re.search(r'^summary: 1 cycle\(s\), (\d+) step\(s\) ok, 0 failed; all node '
                        r'processes stopped$', done.stdout, re.MULTILINE)
    assert summary, log
    assert int(summary.group(1)) >= 12, log
    # What the issue asks the script to show, in the log.
    assert 'PICK attach' in done.stdout and 'PLACE detach' in done.stdout, log
    assert 'IK_FAILED' in done.stdout, log                   # the unreachable target
    assert 'detour' in done.stdout, log                      # the floor detour


def test_no_process_is_left_behind(run):
    done, path = run
    log_dir = re.search(r'node logs in (\S+)', done.stdout).group(1)
    left = subprocess.run(['pgrep', '-f', log_dir], capture_output=True, text=True,
                          check=False).stdout.split()
    assert not left, f'processes of {log_dir} still running: {left}'


def test_the_mcap_holds_the_pipeline(run):
    from mcap.reader import make_reader
    _, path = run
    counts: dict[str, int] = {}
    with open(path, 'rb') as stream:
        reader = make_reader(stream)
        summary = reader.get_summary()
        assert summary is not None, 'no summary section: the recorder did not finish'
        assert reader.get_header().profile == 'ros2'
        for _, channel, _ in reader.iter_messages():
            counts[channel.topic] = counts.get(channel.topic, 0) + 1
    required = REQUIRED + ((f'{NS}/markers',) if _markers_installed() else ())
    missing = [topic for topic in required if not counts.get(topic)]
    assert not missing, f'not recorded: {missing}; recorded: {counts}'
    # 100 Hz joint states for a run of more than 10 s.
    assert counts[f'{NS}/joint_states'] > 1000, counts


def test_the_mcap_decodes(run):
    """Every message decodes through docs/pipeline.md's route, arm_bringup.report.decoded_messages
    (mcap-ros2-support, and rclpy for the action feedback, whose rosidl type name
    MoveToTarget_FeedbackMessage the library's parser refuses); the run's summary names
    every channel of the file as recorded."""
    from arm_bringup.report import decoded_messages, mcap_counts
    from arm_interfaces.msg import TargetStatus
    done, path = run
    first: dict[str, object] = {}
    results, feedback = [], 0
    for topic, _, value in decoded_messages(path):
        first.setdefault(topic, value)
        if topic == f'{NS}/demo/move_results':
            results.append(value)
        if topic == f'{ACTION}/feedback':
            assert 0.0 <= value.feedback.progress <= 1.0
            feedback += 1
    assert feedback > 0
    joint_states = first[f'{NS}/joint_states']
    assert list(joint_states.name) == ['base_yaw', 'shoulder_pitch', 'elbow_pitch',
                                       'wrist_pitch', 'wrist_tip_pitch']
    assert any(r.state == TargetStatus.SUCCEEDED and 'detour' in r.message for r in results)
    assert any(r.state == TargetStatus.FAILED and r.error_code.val == 1 for r in results)
    counts = mcap_counts(path)
    assert f'{len(counts)} channels' in done.stdout
    for topic, count in counts.items():
        assert re.search(rf'^ +{count}  {re.escape(topic)}$', done.stdout, re.MULTILINE), \
            (topic, done.stdout)


def test_make_demo_runs_without_cycles():
    """`make demo` without CYCLES passes --cycles 0 (until Ctrl-C), which the runner takes."""
    makefile = (Path(__file__).resolve().parents[3] / 'Makefile').read_text()
    assert re.search(r'^CYCLES \?= 0$', makefile, re.MULTILINE)
    assert 'arm_bringup.demo --cycles $(CYCLES)' in makefile


def test_the_demo_runs_on_a_user_urdf():
    """Your own arm through the runner: a UR5 URDF of example-robot-data, no arm_config
    (defaults from the URDF), a cycle derived from its workspace."""
    from arm_testing.real_arms import REAL_ARMS
    ur5 = REAL_ARMS['ur5']
    claim = DomainClaim()
    try:
        env = claim.environment()
        env['PYTHONUNBUFFERED'] = '1'
        done = subprocess.run([sys.executable, '-m', 'arm_bringup.demo', '--cycles', '1',
                               '--urdf', str(ur5.path), '--base', ur5.base, '--tip', ur5.tip,
                               '--no-lab', '--mcap', ''], env=env, capture_output=True,
                              text=True, timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL,
                              check=False)
    finally:
        claim.release()
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    assert 'demo: arm ur5' in done.stdout and 'in /ur5' in done.stdout, log
    assert re.search(r'^summary: 1 cycle\(s\), [4-9] step\(s\) ok, 0 failed; all node '
                     r'processes stopped$', done.stdout, re.MULTILINE), log
    assert 'OUT_OF_REACH' in done.stdout and 'IK_FAILED' in done.stdout, log


def test_the_demo_refuses_an_unknown_bundled_name_at_once():
    done = subprocess.run([sys.executable, '-m', 'arm_bringup.demo', '--arm', 'ur5'],
                          capture_output=True, text=True, timeout=60.0,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert 'not a bundled example' in done.stderr and '--urdf' in done.stderr
