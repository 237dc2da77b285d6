"""What can be checked of the launch files and the node YAML without launch installed.

launch and launch_ros are not on PyPI, so the launch files are read as syntax trees
(bringup_harness.py): every executable they name is installed (ours) or a known ROS
executable, every file they name is in the installed share folders, every argument is
described and ``arm`` has its choices. The YAML is checked for real: each arm's nodes are
started with it (as arm.launch.py and the runner start them) and asked, through their
parameter services, for every key the YAML sets, with the value it sets.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from arm_testing.bringup_harness import installed, read_launch_file
from arm_testing.ros_harness import call_service, wait_for

PACKAGE_DIR = Path(__file__).resolve().parents[1]
LAUNCH_FILES = sorted((PACKAGE_DIR / 'launch').glob('*.launch.py'))
# The launch actions both ros2_control launch files start (an installed module of ours).
CONTROL_LAUNCH = PACKAGE_DIR / 'arm_bringup' / 'control_launch.py'
ARMS = ('pointer3', 'ccd5', 'six_axis', 'manipulator3d')
OUR_PACKAGES = ('arm_ik', 'arm_bringup', 'arm_description')
# ROS executables of other packages that a launch file may start (not installed here).
EXTERNAL_EXECUTABLES = {
    ('robot_state_publisher', 'robot_state_publisher'),
    ('rviz2', 'rviz2'),
    ('controller_manager', 'ros2_control_node'),
    ('controller_manager', 'spawner'),
}
START_TIMEOUT = 30.0

needs_install = pytest.mark.skipif(not installed('arm_bringup'),
                                   reason='the workspace is not built and sourced')


def _prefix(package: str) -> Path:
    from ament_index_python.packages import get_package_prefix
    return Path(get_package_prefix(package))


def _share(package: str) -> Path:
    from ament_index_python.packages import get_package_share_directory
    return Path(get_package_share_directory(package))


def _expand(template: str, choices: dict[str, list[str]]) -> list[str]:
    """Every file a template names: '{arm}.yaml' -> one per choice of the arm argument."""
    names = [template]
    for field_name, values in choices.items():
        if '{' + field_name + '}' in template:
            names = [n.replace('{' + field_name + '}', v) for n in names for v in values]
    return names


def _arm_choices(launch) -> dict[str, list[str]]:
    arm = next((a for a in launch.arguments if a.name == 'arm'), None)
    if arm is not None and arm.choices:
        return {'arm': arm.choices}
    if arm is not None:
        # An open label (arm.launch.py): every bundled example must have its files.
        return {'arm': list(ARMS)}
    # A launch file without an arm argument (controllers_example) uses its constant.
    return {'arm': [launch.constants['ARM']]} if 'ARM' in launch.constants else {}


def test_there_are_launch_files():
    assert {p.name for p in LAUNCH_FILES} >= {'arm.launch.py', 'pick_and_place.launch.py',
                                              'controllers_example.launch.py'}


@needs_install
@pytest.mark.parametrize('path', [*LAUNCH_FILES, CONTROL_LAUNCH], ids=lambda p: p.name)
def test_every_executable_exists(path):
    launch = read_launch_file(path)
    for package, executable in launch.nodes:
        if package in OUR_PACKAGES:
            assert (_prefix(package) / 'lib' / package / executable).is_file(), \
                f'{path.name}: {package}/{executable} is not installed'
        else:
            assert (package, executable) in EXTERNAL_EXECUTABLES, \
                f'{path.name}: {package}/{executable} is neither ours nor a known ROS executable'


@needs_install
@pytest.mark.parametrize('path', [*LAUNCH_FILES, CONTROL_LAUNCH], ids=lambda p: p.name)
def test_every_file_named_is_installed(path):
    launch = read_launch_file(path)
    choices = _arm_choices(launch)
    # controllers.launch.py writes its files at launch time; arm.launch.py, which it
    # includes, is named in control_launch.py (checked here too).
    assert launch.files or path.name == 'controllers.launch.py', f'{path.name} names no file'
    for package, template in launch.share_paths:
        for relative in _expand(template, choices):
            assert (_share(package) / relative).is_file(), \
                f'{path.name}: {package}/{relative} is not installed'
    shares = [_share(p) for p in OUR_PACKAGES]
    for template in launch.files:
        for name in _expand(template, choices):
            found = any((share / name).is_file() if '/' in name else any(share.rglob(name))
                        for share in shares)
            assert found, f'{path.name}: {name} is in no installed share folder of ours'
    if path.name == 'arm.launch.py':
        # The description default is built in Python: the same check for every arm.
        for arm in choices['arm']:
            assert (_share('arm_description') / 'urdf' / f'{arm}.urdf.xacro').is_file()


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_every_argument_is_described(path):
    launch = read_launch_file(path)
    assert launch.arguments, f'{path.name} declares no argument'
    for argument in launch.arguments:
        assert argument.description and len(argument.description) > 15, \
            f'{path.name}: argument {argument.name} has no real description'
        if argument.choices is not None and argument.default is not None:
            assert argument.default in argument.choices, \
                f'{path.name}: default of {argument.name} is not one of its choices'
    arm = [a for a in launch.arguments if a.name == 'arm']
    if arm and arm[0].choices:
        assert set(arm[0].choices) <= set(ARMS)


def test_arm_launch_covers_every_arm_and_the_issue_arguments():
    launch = read_launch_file(PACKAGE_DIR / 'launch' / 'arm.launch.py')
    arguments = {a.name: a for a in launch.arguments}
    # arm is a label, not a closed list: any arm whose URDF is given works.
    assert arguments['arm'].choices is None and arguments['arm'].default == 'six_axis'
    assert {'urdf_file', 'arm_config', 'base_frame', 'tip_frame', 'namespace'} <= \
        set(arguments)
    assert arguments['rviz'].choices == ['true', 'false']
    assert arguments['output'].choices == ['none', 'joint_trajectory', 'forward_position',
                                           'follow_joint_trajectory']
    assert {'solver', 'motion', 'use_sim_time', 'description_package',
            'description_file'} <= set(arguments)
    assert ('robot_state_publisher', 'robot_state_publisher') in launch.nodes
    assert ('rviz2', 'rviz2') in launch.nodes


def test_the_runner_starts_what_arm_launch_starts():
    from arm_bringup.pipeline import NODE_PACKAGE, NODES
    launch = read_launch_file(PACKAGE_DIR / 'launch' / 'arm.launch.py')
    ours = [executable for package, executable in launch.nodes if package == NODE_PACKAGE]
    # lab_viewer is optional on both sides: `lab:=true` in launch, --lab in the runner.
    assert [name for name in ours if name != 'lab_viewer'] == list(NODES)
    assert 'lab_viewer' in ours


def test_pick_and_place_launch_offers_the_two_sequence_arms():
    from arm_bringup.pipeline import PICK_PLACE_ARMS
    launch = read_launch_file(PACKAGE_DIR / 'launch' / 'pick_and_place.launch.py')
    arm = next(a for a in launch.arguments if a.name == 'arm')
    assert arm.choices == list(PICK_PLACE_ARMS) and arm.default == 'ccd5'
    for name in PICK_PLACE_ARMS:
        config = yaml.safe_load((PACKAGE_DIR / 'config' / f'{name}.yaml').read_text())
        sequence = config['/**/target_input']['ros__parameters']['sequence_file']
        assert (PACKAGE_DIR / 'config' / sequence).is_file()


# ---------------------------------------------------------------------------- the YAML
def _sections(arm: str) -> dict[str, dict]:
    """Node name ('/**' for all) -> parameters of config/<arm>.yaml."""
    config = yaml.safe_load((PACKAGE_DIR / 'config' / f'{arm}.yaml').read_text())
    sections = {}
    for key, body in config.items():
        assert set(body) == {'ros__parameters'}, f'{arm}.yaml: {key} has more than parameters'
        sections['/**' if key == '/**' else key.removeprefix('/**/')] = \
            body['ros__parameters']
    return sections


@pytest.mark.parametrize('arm', ARMS)
def test_yaml_is_keyed_by_our_node_names(arm):
    from arm_bringup.pipeline import NODES
    sections = _sections(arm)
    assert sections['/**'] == {'arm': arm}
    assert set(sections) - {'/**'} <= set(NODES), set(sections) - set(NODES)
    assert {'ik_server', 'trajectory_executor', 'safety_monitor', 'target_input'} <= \
        set(sections)


def _call(node, spin, service_type, name: str, request):
    client = node.create_client(service_type, name)
    try:
        wait_for(lambda: client.service_is_ready(), START_TIMEOUT, spin, name)
        return call_service(client, request, spin, 10.0)
    finally:
        node.destroy_client(client)


@needs_install
@pytest.mark.parametrize('arm', ARMS)
def test_every_yaml_parameter_is_declared_by_its_node(arm, processes, ros_node):
    """Start the arm's nodes with the YAML; each must declare every key it is given and hold
    the YAML's value (a key that matched no node, e.g. written without /**/, would fail)."""
    from rcl_interfaces.srv import DescribeParameters, GetParameters, ListParameters
    from rclpy.parameter import parameter_value_to_python

    from arm_bringup.pipeline import expand_description, OPTIONAL_NODES, pipeline_nodes
    from arm_bringup.process_group import executable_path

    node, spin = ros_node
    sections = _sections(arm)
    started = {}
    for launch in pipeline_nodes(arm, expand_description(arm)):
        try:
            executable_path('arm_ik', launch.executable)
        except FileNotFoundError:
            assert launch.executable in OPTIONAL_NODES
            continue
        started[launch.executable] = processes.start_node(
            'arm_ik', launch.executable, name=launch.executable, namespace=launch.namespace,
            params_files=launch.write_params(processes.log_dir))
    for name, process in started.items():
        expected = {**sections['/**'], **sections.get(name, {})}
        base = f'/{arm}/{name}'
        listed = _call(node, spin, ListParameters, f'{base}/list_parameters',
                       ListParameters.Request()).result.names
        missing = sorted(set(expected) - set(listed))
        assert not missing, f'{name} of {arm} does not declare {missing}:\n{process.output()}'
        keys = sorted(expected)
        values = _call(node, spin, GetParameters, f'{base}/get_parameters',
                       GetParameters.Request(names=keys)).values
        got = {key: parameter_value_to_python(value) for key, value in zip(keys, values)}
        assert got == expected, f'{name} of {arm}: {got} != YAML {expected}'
        descriptors = _call(node, spin, DescribeParameters, f'{base}/describe_parameters',
                            DescribeParameters.Request(names=keys)).descriptors
        undescribed = [d.name for d in descriptors if not d.description]
        assert not undescribed, f'{name} of {arm}: no description for {undescribed}'
        assert process.alive(), f'{name} of {arm} exited:\n{process.output()}'


@needs_install
def test_launch_arguments_override_the_yaml(processes, ros_node):
    """solver, motion, output, cycle and cycles win over the YAML's values, through the same
    files the runner (and, by the same rule, arm.launch.py) gives the nodes."""
    from rcl_interfaces.srv import GetParameters
    from rclpy.parameter import parameter_value_to_python

    from arm_bringup.pipeline import expand_description, LaunchOptions, pipeline_nodes
    node, spin = ros_node
    options = LaunchOptions(solver='dls', motion='min_jerk', output='forward_position',
                            cycle=True, cycles=3)
    expected = {'ik_server': {'default_solver': 'dls'},
                'trajectory_executor': {'motion_law': 'min_jerk', 'output': 'forward_position'},
                'target_input': {'solver': 'dls', 'autostart': True, 'cycles': 3}}
    launches = {n.executable: n for n in pipeline_nodes('ccd5', expand_description('ccd5'),
                                                          options)}
    started = {name: processes.start_node(
        'arm_ik', name, name=name, namespace='/ccd5',
        params_files=launches[name].write_params(processes.log_dir)) for name in expected}
    for name, values in expected.items():
        keys = sorted(values)
        reply = _call(node, spin, GetParameters, f'/ccd5/{name}/get_parameters',
                      GetParameters.Request(names=keys))
        got = {k: parameter_value_to_python(v) for k, v in zip(keys, reply.values)}
        assert got == values, f'{name}: {got}:\n{started[name].output()}'


def test_the_runner_drives_a_controller_through_the_action():
    """make demo CONTROLLER=stand_in: the executor's overrides as controllers.launch.py sets
    them (the action route, the measured state of joint_state_broadcaster)."""
    from arm_bringup.pipeline import LaunchOptions, node_overrides
    executor = node_overrides(LaunchOptions(
        output='follow_joint_trajectory', feedback_topic='joint_state_broadcaster/joint_states',
        feedback_stale_periods=25.0))['trajectory_executor']
    assert executor == {'output': 'follow_joint_trajectory',
                        'feedback_topic': 'joint_state_broadcaster/joint_states',
                        'feedback_stale_periods': 25.0}
    launch = read_launch_file(PACKAGE_DIR / 'launch' / 'controllers.launch.py')
    assert {a.name for a in launch.arguments} >= {'urdf_file', 'arm_config', 'hardware_plugin'}
    assert 'ros2_control_actions(' in launch.path.read_text(encoding='utf-8')
    control = read_launch_file(CONTROL_LAUNCH)
    assert ('controller_manager', 'ros2_control_node') in control.nodes
    assert control.constants['MEASURED'] == 'joint_state_broadcaster/joint_states'
