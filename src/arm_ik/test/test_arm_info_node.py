"""arm_info started in its own process, talked to over DDS.

The tests that need a running arm_info share one process group for the module (``nodes``:
one ROS domain, every arm_info started at once in a namespace of its own), and the refusals
start their processes together too: a node's start-up is most of each test's time.
"""

from __future__ import annotations

import math

import pytest
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters

from arm_ik.nodes.common import LATCHED_QOS
from arm_interfaces.msg import ArmInfo
from arm_testing.ros_harness import (
    call_service,
    claimed_domain,
    config_file,
    node_on_domain,
    process_group,
    wait_for,
)

# Namespace -> arm of every arm_info the module's tests talk to (the home test changes its
# node's home, so it has one of its own).
NODES = {'/pointer3': 'pointer3', '/six_axis': 'six_axis', '/home/pointer3': 'pointer3',
         '/manipulator3d': 'manipulator3d'}
BAD_DESCRIPTIONS = [
    ('', 'robot_description is empty'),
    ('<robot name="x"><link name="base_link"/></robot>',
     'no movable joint below the root link "base_link"'),
    ('<robot name="pointer3"><link name="base_link"/><link name="tool0"/>'
     '<joint name="j" type="revolute"><parent link="base_link"/><child link="tool0"/>'
     '<axis xyz="0 0 1"/></joint></robot>', 'has no <limit>'),
    ('not xml', 'not valid XML'),
]


@pytest.fixture(scope='module')
def nodes(urdf_of):
    """(processes by namespace, (test node, spin)) on one domain for the module."""
    with claimed_domain() as claim, process_group(claim) as group, \
            node_on_domain(claim) as client:
        started = {namespace: group.start_node(
            'arm_ik', 'arm_info', namespace=namespace,
            params={'robot_description': urdf_of(arm), 'arm': arm,
                    'arm_config': config_file(arm)}) for namespace, arm in NODES.items()}
        yield started, client


@pytest.fixture(scope='module')
def refusals(urdf_of):
    """Every bad description's arm_info started at once; (exit status, output) of each."""
    with claimed_domain() as claim, process_group(claim) as group:
        # No topic wait: an empty parameter fails after 1 s, not the default 30 s.
        started = [group.start_node('arm_ik', 'arm_info', namespace=f'/bad{index}',
                                    params={'robot_description': description,
                                            'robot_description_timeout': 1.0})
                   for index, (description, _) in enumerate(BAD_DESCRIPTIONS)]
        yield [(process.wait_for_exit(20.0), process.output()) for process in started]


def _receive_info(node, spin, topic: str) -> list[ArmInfo]:
    received: list[ArmInfo] = []
    node.create_subscription(ArmInfo, topic, received.append, LATCHED_QOS)
    wait_for(lambda: received, 20.0, spin, f'ArmInfo on {topic}')
    return received


@pytest.mark.parametrize('arm', ['pointer3', 'six_axis'])
def test_publishes_arm_info_latched(arm, nodes, load_arm):
    started, (node, spin) = nodes
    process = started[f'/{arm}']
    info = _receive_info(node, spin, f'/{arm}/arm_info')[-1]
    model = load_arm(arm)
    assert process.alive(), process.output()
    assert info.arm == arm
    assert tuple(info.joint_names) == model.joint_names
    assert info.base_frame == 'base_link' and info.tip_frame == 'tool0'
    assert list(info.lower_limits) == pytest.approx(model.lower.tolist())
    assert list(info.upper_limits) == pytest.approx(model.upper.tolist())
    assert tuple(info.home.name) == model.joint_names
    assert len(info.home.position) == model.dof
    assert info.max_reach > info.min_reach >= 0.0


def test_home_update_validated(nodes):
    _, (node, spin) = nodes
    received = _receive_info(node, spin, '/home/pointer3/arm_info')
    client = node.create_client(SetParameters, '/home/pointer3/arm_info/set_parameters')
    wait_for(client.service_is_ready, 20.0, spin, 'set_parameters service')

    def set_home(values: list[float]):
        value = ParameterValue(type=ParameterType.PARAMETER_DOUBLE_ARRAY,
                               double_array_value=values)
        reply = call_service(client, SetParameters.Request(
            parameters=[ParameterMsg(name='home', value=value)]), spin, 10.0)
        return reply.results[0]

    rejected = set_home([0.0, math.nan, 0.0])
    assert not rejected.successful and 'finite' in rejected.reason
    rejected = set_home([0.0, 0.0])
    assert not rejected.successful and '3 joints' in rejected.reason
    rejected = set_home([0.0, 10.0, 0.0])
    assert not rejected.successful and 'outside' in rejected.reason
    accepted = set_home([0.1, 0.2, 0.3])
    assert accepted.successful, accepted.reason
    wait_for(lambda: list(received[-1].home.position) == pytest.approx([0.1, 0.2, 0.3]),
             10.0, spin, 'republished ArmInfo with the new home')


def test_new_link_lengths_are_republished_and_another_arm_refused(nodes, urdf_of):
    from arm_kinematics.description.bundled import expand_xacro
    _, (node, spin) = nodes
    received = _receive_info(node, spin, '/manipulator3d/arm_info')
    before = received[-1].max_reach
    client = node.create_client(SetParameters, '/manipulator3d/arm_info/set_parameters')
    wait_for(client.service_is_ready, 20.0, spin, 'set_parameters service')

    def set_description(urdf: str):
        value = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=urdf)
        reply = call_service(client, SetParameters.Request(
            parameters=[ParameterMsg(name='robot_description', value=value)]), spin, 10.0)
        return reply.results[0]

    for bad, reason in ((urdf_of('pointer3'), 'robot "pointer3"'),
                        ('not xml', 'not valid XML')):
        refused = set_description(bad)
        assert not refused.successful and reason in refused.reason
    assert received[-1].max_reach == before
    assert set_description(expand_xacro('manipulator3d', {'L2': '1.5'})).successful
    wait_for(lambda: received[-1].max_reach > before + 0.1, 10.0, spin,
             'ArmInfo with the longer reach')


@pytest.mark.parametrize('index', range(len(BAD_DESCRIPTIONS)))
def test_refuses_to_start_with_a_bad_description(index, refusals):
    status, output = refusals[index]
    assert status == 1, output[-3000:]
    assert BAD_DESCRIPTIONS[index][1] in output


def test_process_group_leaves_nothing_behind(ros_domain, urdf_of):
    """Stopping the group ends every node process, even one that ignores SIGINT."""
    import os
    import signal

    from arm_bringup.process_group import ProcessGroup
    group = ProcessGroup(env=ros_domain.environment())
    node = group.start_node('arm_ik', 'arm_info', namespace='/pointer3',
                            params={'robot_description': urdf_of('pointer3'),
                                    'arm': 'pointer3', 'arm_config': config_file('pointer3')})
    stubborn = group.start_node('arm_ik', 'arm_info', namespace='/stubborn',
                                params={'robot_description': urdf_of('pointer3'),
                                        'arm': 'pointer3', 'arm_config': config_file('pointer3')})
    pids = [node.popen.pid, stubborn.popen.pid]
    # SIGSTOP: the process cannot react to SIGINT, as a hung node would not.
    os.kill(stubborn.popen.pid, signal.SIGSTOP)
    group.stop_all(timeout=2.0)
    group.close()
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        raise AssertionError(f'process {pid} survived stop_all')


def test_an_aborted_hung_node_shows_its_stacks(ros_domain, urdf_of):
    """abort() ends a node that will not exit and leaves where it was in its output."""
    from arm_bringup.process_group import ProcessGroup
    with ProcessGroup(env=ros_domain.environment()) as group:
        node = group.start_node('arm_ik', 'arm_info', namespace='/pointer3',
                                params={'robot_description': urdf_of('pointer3'),
                                        'arm': 'pointer3', 'arm_config': config_file('pointer3')})
        assert node.wait_for_exit(3.0) is None
        output = node.abort()
        assert not node.alive()
        assert 'Fatal Python error: Aborted' in output, output
        assert 'arm_info' in output and 'File "' in output, output
