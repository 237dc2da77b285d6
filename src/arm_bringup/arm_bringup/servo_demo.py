"""``make demo SERVOS=sim``: the SO-101 on the simulated servo bus, end to end.

Starts ``servo_sim`` (six STS3215 servos at 1 Mbaud holding a stale goal) and ``servo_bridge``
(the SO-101 URDF of example-robot-data, the worked calibration example), then runs cycles of
the session docs/servos.md shows: enable (nothing moves), a wave of FollowJointTrajectory goals
measured on joint_states, a goal out of range (refused), an overload in the middle of a move
(aborted in words, /diagnostics), recovery by enable, an e-stop (nothing written after), reset.
Each step prints what happened; the summary line counts them. Exit status 0 when every step
had its expected outcome.
"""

from __future__ import annotations

import os
from pathlib import Path
import tempfile
import threading
import time

from arm_bringup.driver import StepResult
from arm_bringup.process_group import ProcessGroup
from arm_bringup.report import Summary

NS = '/so101'
WAVE = ((0.3, -0.2, 0.4, 0.1, 0.5), (-0.3, 0.2, -0.3, -0.2, -0.5), (0.0, 0.0, 0.0, 0.0, 0.0))
OUT_OF_RANGE = (0.0, 0.0, 1.68, 0.0, 0.0)     # elbow_flex's calibrated range ends at 1.629


def _so101_urdf() -> Path:
    import sysconfig
    path = Path(sysconfig.get_paths()['purelib']) / 'cmeel.prefix' / 'share' / \
        'example-robot-data' / 'robots' / 'so_arm_description' / 'urdf' / 'so101.urdf'
    if not path.is_file():
        raise FileNotFoundError(f'{path}: install example-robot-data (requirements/dev.txt)')
    return path


def _calibration() -> Path:
    from ament_index_python.packages import get_package_share_directory
    return Path(get_package_share_directory('arm_servos')) / 'calibration' / 'so101.yaml'


def run(cycles: int) -> int:
    """Run the servo demo for ``cycles`` cycles (0: until Ctrl-C); exit status."""
    from arm_ik.servo_client import BridgeClient
    from arm_servos.sim.process import SimProcess
    summary = Summary()
    log_dir = tempfile.mkdtemp(prefix='arm_servo_demo_')
    link = Path(log_dir) / 'so101_bus'
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    try:
        urdf, calibration = _so101_urdf(), _calibration()
    except (FileNotFoundError, LookupError) as error:
        print(f'demo: {error}', flush=True)
        return 2
    print(f'demo: SO-101 on a simulated Feetech bus ({link}); node logs in {log_dir}',
          flush=True)
    client = None
    try:
        with SimProcess(link, 'feetech', goal='2600') as sim, \
                ProcessGroup(log_dir=log_dir) as group:
            bridge = group.start_node('arm_ik', 'servo_bridge', namespace=NS, params={
                'urdf_file': str(urdf), 'tip_frame': 'gripper_frame_link',
                'calibration_file': str(calibration), 'port': str(link),
                # The simulated servos share the CPU with everything else here.
                'reply_timeout': 0.03, 'silent_cycles': 25})
            client = BridgeClient(NS, timeout=60.0)
            try:
                while cycles <= 0 or summary.cycles < cycles:
                    print(f'cycle {summary.cycles + 1}:', flush=True)
                    _cycle(client, sim, bridge, summary)
                    summary.cycles += 1
                    if not bridge.alive():
                        summary.record(StepResult(False, f'servo_bridge died:\n'
                                                  f'{bridge.output()[-1500:]}'))
                        break
            except TimeoutError as error:
                state = 'running' if bridge.alive() else 'not running'
                summary.record(StepResult(False, f'{error}\nservo_bridge is {state}; the end '
                                          f'of its log:\n{bridge.output()[-1500:]}'))
            client.close()
            client = None
    except KeyboardInterrupt:
        print('demo: interrupted; every process stopped', flush=True)
    except TimeoutError as error:
        summary.record(StepResult(False, str(error)))
    finally:
        if client is not None:
            client.close()
    print(summary.line(), flush=True)
    return 0 if summary.steps_failed == 0 else 1


def _step(summary: Summary, ok: bool, text: str) -> None:
    summary.record(StepResult(ok, text))


def _cycle(client, sim, bridge, summary: Summary) -> None:
    ok, message = client.call('enable')
    # The bridge answers once its bus cycle has written the enable (a sync write has no reply):
    # give the sim a moment to read it off the wire.
    # Servos off the chain (the gripper) stay off with whatever goal they hold; every servo
    # the bridge turned on must hold its measured position, not the stale goal.
    deadline = time.monotonic() + 2.0
    while True:
        powered = [entry for entry in sim.command('status').split('; ') if 'torque on' in entry]
        if powered or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    held = bool(powered) and not any('goal 2600' in entry for entry in powered)
    _step(summary, ok and held, f'enable: {message} (servos: torque on, no stale goal left)')
    for target in WAVE:
        ok, message = client.move(list(target), 1.5)
        _step(summary, ok, f'move to {list(target)}: {message}')
    ok, message = client.move(list(OUT_OF_RANGE), 2.0)
    _step(summary, not ok, f'move out of range: {message}')
    answer: list = []
    accepted = bridge.output().count('goal accepted')
    mover = threading.Thread(target=lambda: answer.append(
        client_move_fresh(client, [0.3, 0.3, 0.3, 0.3, 0.3], 3.0)))
    mover.start()
    deadline = time.monotonic() + 60.0
    while bridge.output().count('goal accepted') == accepted and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    sim.command('error 3 overload')           # an overloaded elbow in the middle of the move
    mover.join(30.0)
    ok, message = answer[0] if answer else (True, 'no answer')
    _step(summary, not ok and 'servo 3 (elbow_flex) reports overload' in message,
          f'overload mid-move: {message}')
    sim.command('error 3 clear')
    time.sleep(0.3)
    ok, message = client.call('enable')
    _step(summary, ok, f'enable after the fault: {message}')
    ok, message = client.move([0.0] * 5, 2.0)
    _step(summary, ok, f'move home: {message}')
    ok, message = client.call('estop')
    time.sleep(0.2)
    writes = sim.command('writes')
    time.sleep(0.5)
    _step(summary, ok and sim.command('writes') == writes,
          f'estop: {message}; nothing written after')
    ok, message = client.call('reset_estop')
    _step(summary, ok, f'reset: {message}')


def client_move_fresh(client, positions: list[float], seconds: float) -> tuple[bool, str]:
    """A goal from a second client node (the first one is busy spinning in this thread)."""
    from arm_ik.servo_client import BridgeClient
    other = BridgeClient(NS, timeout=client.timeout, client_name='servo_demo_mover')
    try:
        return other.move(positions, seconds)
    finally:
        other.close()
