"""``servo_calibrate`` as a user runs it, against the simulated bus process."""

from __future__ import annotations

from pathlib import Path
import re
import subprocess
import sys
import time

import pytest
import yaml

from arm_servos.calibration import Calibration
from arm_servos.sim.process import SimProcess
from arm_testing.real_arms import REAL_ARMS

EXAMPLE = Path(__file__).resolve().parents[2] / 'arm_servos' / 'calibration' / 'so101.yaml'
SO101_CHAIN = ('shoulder_pan', 'shoulder_lift', 'elbow_flex', 'wrist_flex', 'wrist_roll')


def _calibrate(*args: str, timeout: float = 60.0) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, '-m', 'arm_ik.servo_calibrate_command', *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope='module')
def sim(tmp_path_factory):
    link = tmp_path_factory.mktemp('calibrate_command') / 'bus'
    with SimProcess(link, 'feetech', position='2048') as process:
        yield process, str(link)


def test_a_scripted_session_writes_a_file_that_loads(sim, tmp_path):
    process, link = sim
    urdf = REAL_ARMS['so101'].path
    output = tmp_path / 'my_so101.yaml'
    run = _calibrate('--urdf', str(urdf), '--port', link, '--template', str(EXAMPLE),
                     '--output', str(output), '--yes', '--sweep-seconds', '3')
    said = []
    while not said or 'through its whole range' not in said[-1]:
        said.append(run.stdout.readline())     # ping, torque off, the zero pose read
        assert said[-1], f'servo_calibrate ended early: {run.stderr.read()}'
    for servo_id in range(1, 7):               # the hand sweeps every joint
        process.command(f'push {servo_id} 1700')
        time.sleep(0.1)
        process.command(f'push {servo_id} 2500')
        time.sleep(0.1)
    out, err = run.communicate(timeout=60)
    out = ''.join(said) + out
    assert run.returncode == 0, err
    assert 'torque off' in out and f'wrote {output}' in out
    calibration = Calibration.load(output, urdf.read_text(), SO101_CHAIN)
    assert calibration.ids == (1, 2, 3, 4, 5, 6)
    assert all(j.offset == 2048 for j in calibration.joints)
    assert calibration.joint('shoulder_pan').lower == pytest.approx(-348 / 651.898647, abs=1e-4)
    assert yaml.safe_load(output.read_text())['protocol'] == 'feetech'


@pytest.mark.parametrize('args, words', [
    (['--ids', '1,2,3', '--tip', 'gripper_frame_link'],
     '--ids: 3 ids for the 5 joints of the chain (shoulder_pan, shoulder_lift, elbow_flex, '
     'wrist_flex, wrist_roll)'),
    (['--template', str(Path(__file__).resolve().parents[2] / 'arm_servos' / 'test' /
                        'broken_calibrations' / 'repeated_id.yaml')],
     'joints.wrist_roll.id: 4 repeats the id of joints.wrist_flex'),
])
def test_bad_input_exits_2_with_the_field_named_and_no_traceback(sim, tmp_path, args, words):
    run = _calibrate('--urdf', str(REAL_ARMS['so101'].path), '--port', sim[1],
                     '--output', str(tmp_path / 'x.yaml'), '--yes', *args)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 2 and words in err and 'Traceback' not in err
    assert not (tmp_path / 'x.yaml').exists()


def test_a_missing_adapter_exits_1_with_the_port_named(tmp_path):
    run = _calibrate('--urdf', str(REAL_ARMS['so101'].path), '--port', '/dev/ttyNOPE0',
                     '--template', str(EXAMPLE), '--output', str(tmp_path / 'x.yaml'), '--yes')
    _, err = run.communicate(timeout=60)
    assert run.returncode == 1 and 'cannot open /dev/ttyNOPE0' in err
    assert 'Traceback' not in err


LEROBOT = Path(__file__).resolve().parents[2] / 'arm_servos' / 'test' / 'lerobot_calibrations'


@pytest.mark.parametrize('name', ['robots/so101_follower/blue_follower.json',
                                  'teleoperators/koch_leader/koch_leader.json'])
def test_from_lerobot_writes_the_projects_file_without_a_bus(tmp_path, name):
    import json

    from arm_servos.lerobot import load_calibration
    urdf = REAL_ARMS['so101'].path
    output = tmp_path / 'my_arm.yaml'
    run = _calibrate('--urdf', str(urdf), '--from-lerobot', str(LEROBOT / name),
                     '--output', str(output))
    out, err = run.communicate(timeout=60)
    assert run.returncode == 0, err
    assert f'wrote {output} (6 joints)' in out
    written = Calibration.load(output, urdf.read_text(), SO101_CHAIN)
    direct = load_calibration(LEROBOT / name, urdf.read_text(), SO101_CHAIN)
    assert written.protocol == direct.protocol and written.names == direct.names
    owners = json.loads((LEROBOT / name).read_text())
    for joint in written.joints:
        assert joint.homing_offset == owners[joint.name]['homing_offset']
        twin = direct.joint(joint.name)
        assert all(abs(joint.to_radians(t) - twin.to_radians(t)) < 1e-9
                   for t in range(0, 4096, 5))
    # A template may be a LeRobot file too (ids, models and directions from it).
    assert 'LeRobot' in output.read_text().splitlines()[0]


def test_from_lerobot_refuses_a_motor_the_urdf_lacks(tmp_path):
    import json
    data = json.loads((LEROBOT / 'robots/so101_follower/blue_follower.json').read_text())
    data['jaw'] = data.pop('gripper')
    source = tmp_path / 'so101_follower' / 'x.json'
    source.parent.mkdir()
    source.write_text(json.dumps(data))
    run = _calibrate('--urdf', str(REAL_ARMS['so101'].path), '--from-lerobot', str(source),
                     '--output', str(tmp_path / 'x.yaml'))
    _, err = run.communicate(timeout=60)
    assert run.returncode == 2 and 'jaw: motor name is not a movable joint' in err
    assert not (tmp_path / 'x.yaml').exists()
    run = _calibrate('--urdf', str(REAL_ARMS['so101'].path), '--from-lerobot', str(source),
                     '--joint-map', 'jaw=gripper', '--output', str(tmp_path / 'x.yaml'))
    _, err = run.communicate(timeout=60)
    assert run.returncode == 0, err


def test_return_delay_writes_every_servo_of_the_template_and_nothing_else(sim, tmp_path):
    """--return-delay 0 writes Return_Delay_Time 0 (EEPROM, torque off) into every servo of
    the template and exits without a calibration; a value outside 0..254, or a servo that does
    not answer (before anything is written), exits 2."""
    from arm_servos.drivers import DRIVERS
    from arm_servos.eeprom import RETURN_DELAY
    _, link = sim
    common = ('--urdf', str(REAL_ARMS['so101'].path), '--port', link, '--template',
              str(EXAMPLE), '--yes')
    run = _calibrate(*common, '--return-delay', '300')
    _, err = run.communicate(timeout=60)
    assert run.returncode == 2 and '--return-delay must be 0..254' in err, err
    run = _calibrate('--urdf', str(REAL_ARMS['so101'].path), '--port', link, '--ids',
                     '1,2,3,4,9', '--tip', 'gripper_frame_link', '--yes', '--return-delay', '0')
    _, err = run.communicate(timeout=60)
    assert run.returncode == 2, err
    assert re.search(r'no answer from (.*, )?wrist_roll \(id 9\): nothing written', err), err
    assert 'Traceback' not in err
    run = _calibrate(*common, '--return-delay', '0')
    out, err = run.communicate(timeout=60)
    assert run.returncode == 0, err
    assert 'Return_Delay_Time 0 (0 us) in servos 1, 2, 3, 4, 5, 6 (torque is off)' in out
    assert not list(tmp_path.iterdir())
    bus = DRIVERS['feetech'](link, (1, 2, 3, 4, 5, 6), reply_timeout=0.2, cycle_budget=1.0)
    bus.open()
    try:
        register = RETURN_DELAY['feetech']
        assert [bus.read_register(i, register.address, 1) for i in range(1, 7)] == [0] * 6
    finally:
        bus.close()
