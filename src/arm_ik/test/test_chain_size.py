"""A description of absurd size (issue 39): a 3000-joint chain once held ik_server for more
than two minutes at start-up (a reach-bound loop and the URDF cycle check were quadratic in
the joints) and its start-up log printed every joint name in one line. Now a chain past
``MAX_CHAIN_JOINTS`` is refused in one line naming the limit, and the log of a long chain
that is served names the first few joints, then a count.
"""

from __future__ import annotations

import re
import time

from arm_kinematics.common.log_line import BRIEF_NAMES
from arm_kinematics.model.chain import MAX_CHAIN_JOINTS

# Discovery off: these nodes talk to nobody (see test_params_descriptions_viewers, case 24).
NO_DISCOVERY = {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'OFF'}
# A line names at most the first BRIEF_NAMES joints and counts the rest; a few more names
# may appear in a sentence of its own (a warning about one joint).
MOST_NAMES_IN_A_LINE = BRIEF_NAMES + 2


def chain_urdf(joints: int) -> str:
    """A serial chain of ``joints`` revolute joints 1 cm apart, axes alternating z and y."""
    parts = ['<robot name="long">', '<link name="base"/>']
    for i in range(joints):
        parent = 'base' if i == 0 else f'l{i - 1}'
        axis = '0 1 0' if i % 2 else '0 0 1'
        parts.append(f'<link name="l{i}"/><joint name="j{i}" type="revolute">'
                     f'<parent link="{parent}"/><child link="l{i}"/>'
                     f'<origin xyz="0 0 0.01"/><axis xyz="{axis}"/>'
                     '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>')
    parts.append('</robot>')
    return '\n'.join(parts)


def assert_short_lines(output: str) -> None:
    """No log line grows with the chain: each names only a few of its joints."""
    for line in output.splitlines():
        names = set(re.findall(r'\bj\d+\b', line))
        assert len(names) <= MOST_NAMES_IN_A_LINE, f'{len(names)} joint names in: {line[:500]}'


def _start(processes, executable: str, joints: int, namespace: str):
    return processes.start_node('arm_ik', executable, namespace=namespace,
                                params={'robot_description': chain_urdf(joints)},
                                extra_env=NO_DISCOVERY)


def test_an_absurd_chain_is_refused_at_once_in_one_line(processes):
    # Started or refused within seconds (the bound holds on a loaded machine: the old code
    # took minutes of CPU; the refusal itself is a linear read of the URDF).
    process = _start(processes, 'ik_server', 3000, '/absurd')
    status = process.wait_for_exit(60.0)
    output = process.output() if status is not None else process.abort()
    assert status == 1, f'exit {status}\n{output[-3000:]}'
    fatal = [line for line in output.splitlines() if '[FATAL]' in line]
    assert len(fatal) == 1, output[-3000:]
    assert '3000 moving joints' in fatal[0] and 'MAX_CHAIN_JOINTS' in fatal[0] and \
        f'at most {MAX_CHAIN_JOINTS}' in fatal[0], fatal[0]
    assert 'Traceback' not in output
    assert_short_lines(output)


def test_a_long_chain_is_served_with_short_log_lines(processes):
    joints = min(150, MAX_CHAIN_JOINTS)
    started = [_start(processes, name, joints, f'/long_{name}')
               for name in ('ik_server', 'arm_info')]
    deadline = time.monotonic() + 120.0
    ready = {'ik_server': 'solvers ', 'arm_info': 'reach '}
    for name, process in zip(ready, started, strict=True):
        while ready[name] not in process.output() and time.monotonic() < deadline:
            assert process.alive(), process.output()[-3000:]
            time.sleep(0.1)
        output = process.output()
        assert ready[name] in output, f'{name} did not start:\n{output[-3000:]}'
        assert f'and {joints - BRIEF_NAMES} more' in output, output[-3000:]
        assert_short_lines(output)
