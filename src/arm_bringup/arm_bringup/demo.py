"""The launch-free runner behind ``make demo``: the whole pipeline, a scripted cycle, an MCAP.

    python -m arm_bringup.demo                      # ccd5, until Ctrl-C, records demo.mcap
    python -m arm_bringup.demo --cycles 1 --arm manipulator3d --mcap /tmp/run.mcap
    python -m arm_bringup.demo --cycles 1 --urdf ur5.urdf --base base_link --tip tool0

It starts the nodes arm.launch.py starts (arm_info, ik_server, safety_monitor,
trajectory_executor, target_input, markers), each in its own process in the arm's namespace,
with the same YAML (arm_bringup/config/<arm>.yaml) and the xacro expanded the same way (the
xacro executable). No robot_state_publisher stand-in: nothing here reads TF (the nodes
compute FK from the URDF, markers are drawn in base_link, the MCAP carries joint_states).
An mcap_recorder process records the arm's topics first and stops last.

Each cycle runs the arm's scenario (arm_bringup/scenario.py): the pick-and-place sequence
through target_input (ccd5, manipulator3d), IK queries to ik_server, and MoveToTarget goals
to the executor (a reachable target, an unreachable one, and a move whose straight joint
path dips below the floor and must be detoured), printing what each step did. It stops every
process cleanly after ``--cycles`` cycles (0: until Ctrl-C), then prints what the MCAP holds
and a summary line; exit status 0 when every step had its expected outcome.

With ``--urdf`` (your own arm: a URDF or xacro file, with ``--arm-config`` or defaults from
the URDF) the nodes get no bundled YAML and the cycle is derived from the arm's workspace
(``scenario.workspace_scenario``): reachable targets, one beyond the reach, home.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import re
import signal
import sys
import tempfile
import time

from arm_bringup.driver import DemoDriver, StepResult, TEARDOWN_WAIT
from arm_bringup.pipeline import (
    ArmSource,
    expand_description,
    expand_file,
    LaunchOptions,
    NODE_PACKAGE,
    OPTIONAL_NODES,
    PACKAGE,
    pipeline_nodes,
    PipelineError,
)
from arm_bringup.process_group import executable_path, NodeProcess, ProcessGroup
from arm_bringup.report import print_recording, Summary
from arm_bringup.scenario import DEFAULT_ARM, Scenario, SCENARIOS, workspace_scenario
from arm_kinematics.arm import ArmConfig, ArmConfigError, load_arm
from arm_kinematics.control.ros2_control_files import controller_name
from arm_kinematics.model.arm_model import DescriptionError

START_TIMEOUT = 60.0      # s for every node to come up (the executor spawns a planner)
RECORDER_TIMEOUT = 20.0   # s for the recorder to subscribe to the key topics
LAB_TIMEOUT = 30.0        # s for the browser lab to serve its page
LAB_URL = re.compile(r'http://127\.0\.0\.1:\d+')
# Where controller_stand_in publishes the measured state (as joint_state_broadcaster with
# use_local_topics); the executor takes it as feedback_topic.
MEASURED = 'joint_state_broadcaster/joint_states'
# The stand-in is a Python process beside a dozen others: 50 of its 50 Hz periods (1 s) before
# its joint states count as stale, not ros2_control's 3, or load alone stops moves (25 were
# broken by 0.573 s of silence in a fresh clone's `make test` with three workers).
STAND_IN_STALE_PERIODS = 50.0


def start_nodes(group: ProcessGroup, arm: ArmSource, description: str, log_dir: str,
                controller: str = 'none') -> list[str]:
    """Start the pipeline's nodes; return the names of those started."""
    started = []
    # One cycle per ~/run_cycle call: the runner paces the cycles itself.
    options = LaunchOptions(cycle=False, cycles=1) if controller == 'none' else LaunchOptions(
        output='follow_joint_trajectory', feedback_topic=MEASURED,
        feedback_stale_periods=STAND_IN_STALE_PERIODS, cycle=False, cycles=1)
    for node in pipeline_nodes(arm, description, options):
        try:
            executable_path(NODE_PACKAGE, node.executable)
        except FileNotFoundError as error:
            if node.executable not in OPTIONAL_NODES:
                raise PipelineError(f'{error}: build the workspace (make build)') from None
            print(f'demo: note: {NODE_PACKAGE}/{node.executable} is not installed; running '
                  'without it', flush=True)
            continue
        group.start_node(NODE_PACKAGE, node.executable, name=node.executable,
                         namespace=node.namespace, params_files=node.write_params(log_dir))
        started.append(node.executable)
    return started


def start_stand_in(group: ProcessGroup, arm: ArmSource, description: str,
                   namespace: str = '') -> str:
    """controller_stand_in as the arm's joint_trajectory_controller (and its
    joint_state_broadcaster), set up from the arm: its chain, home and controller section,
    under the controller name of ``controller.action``, in ``namespace`` (default the
    arm's); that name."""
    config = ArmConfig.from_file(arm.config_path()) if arm.config_path() else ArmConfig()
    try:
        model_arm = load_arm(description, config, arm.base_frame, arm.tip_frame, arm.label)
    except (ArmConfigError, DescriptionError) as error:
        raise PipelineError(str(error)) from None
    controller = config.controller
    try:
        name = controller_name(controller.action, in_arm_namespace=True)
    except ValueError as error:
        raise PipelineError(str(error)) from None
    joints = list(model_arm.model.joint_names)
    group.start_node(NODE_PACKAGE, 'controller_stand_in', name=name,
                     namespace=namespace or f'/{arm.label}', params={
                         'joints': joints, 'initial_positions': [float(x) for x in model_arm.home],
                         'joint_states_topic': MEASURED,
                         'update_rate': float(controller.update_rate),
                         'action_monitor_rate': controller.action_monitor_rate,
                         'constraints.goal_time': controller.goal_time_tolerance,
                         'constraints.stopped_velocity_tolerance':
                             controller.stopped_velocity_tolerance,
                         **{f'constraints.{j}.trajectory': controller.path_tolerance
                            for j in joints},
                         **{f'constraints.{j}.goal': controller.goal_tolerance for j in joints}})
    return name


def start_lab(group: ProcessGroup, arm: ArmSource, description: str, port: int) -> None:
    """Start the browser lab beside the pipeline and print its URL once it serves."""
    try:
        executable_path(NODE_PACKAGE, 'lab_viewer')
    except FileNotFoundError:
        print('demo: note: arm_ik/lab_viewer is not installed; running without the browser '
              'lab', flush=True)
        return
    lab = group.start_node(NODE_PACKAGE, 'lab_viewer', name='lab_viewer',
                           namespace=f'/{arm.label}',
                           params={'robot_description': description,
                                   **arm.chain_parameters(), 'port': port,
                                   # Meshes resolve beside the user's URDF file.
                                   **({'urdf_file': arm.urdf_file} if arm.urdf_file else {})})
    deadline = time.monotonic() + LAB_TIMEOUT
    while time.monotonic() < deadline and lab.alive():
        found = LAB_URL.search(lab.output())
        if found:
            print(f'demo: browser lab at {found.group(0)} (open it in a browser)', flush=True)
            return
        time.sleep(0.2)
    print(f'demo: note: the browser lab did not come up within {LAB_TIMEOUT:g} s; the demo '
          f'goes on without it:\n{lab.output()[-800:]}', flush=True)


def recorded_topics(arm: str, scenario: Scenario, nodes: list[str],
                    controller: str = '') -> list[str]:
    """Topics the recorder must have subscribed to before the script starts (``controller``:
    the node name of the controller the executor drives, '' for none)."""
    ns = f'/{arm}'
    action = f'{ns}/trajectory_executor/move_to_target/_action'
    topics = [f'{ns}/joint_states', f'{ns}/ik_status', f'{ns}/safety_status',
              f'{ns}/safety_markers', f'{action}/feedback', f'{action}/status',
              f'{ns}/demo/move_results']
    if controller:
        follow = f'{ns}/{controller}/follow_joint_trajectory/_action'
        topics += [f'{follow}/feedback', f'{follow}/status', f'{ns}/{MEASURED}']
    if scenario.pick_place:
        topics += [f'{ns}/target_status', f'{ns}/ball_state']
    if 'markers' in nodes:
        topics.append(f'{ns}/markers')
    return topics


def wait_recording(driver: DemoDriver, topics: list[str]) -> list[str]:
    """Wait until mcap_recorder subscribes to ``topics``; return those it did not."""
    def missing() -> list[str]:
        try:
            subscribed = {name for name, _ in
                          driver.get_subscriber_names_and_types_by_node('mcap_recorder', '/')}
        except Exception:  # noqa: BLE001 - the recorder is not discovered yet
            subscribed = set()
        return [topic for topic in topics if topic not in subscribed]
    driver.wait_until(lambda: not missing(), RECORDER_TIMEOUT)
    return missing()


def run_cycle(driver: DemoDriver, scenario: Scenario, summary: Summary) -> None:
    """One scripted cycle: pick and place, IK queries, moves."""
    if scenario.pick_place:
        print(f'  pick and place ({scenario.arm}_pick_place.yaml through target_input):',
              flush=True)
        outcome = driver.pick_and_place(summary.record)
        summary.record(outcome)
    print('  IK queries (ik_server ~/solve_ik):', flush=True)
    for query in scenario.queries:
        summary.record(driver.ik_query(query))
    print('  moves (trajectory_executor ~/move_to_target):', flush=True)
    for move in scenario.moves:
        summary.record(driver.move(move))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--arm', default='',
                        help=f'a bundled example ({", ".join(sorted(SCENARIOS))}; default '
                             f'{DEFAULT_ARM}: pick and place and the floor detour), or with '
                             "--urdf your arm's label (default: the URDF robot name)")
    parser.add_argument('--urdf', default='',
                        help='your own arm: a URDF or xacro file (its cycle is derived from '
                             'its workspace)')
    parser.add_argument('--arm-config', default='',
                        help='arm configuration YAML of your arm (ros2 run arm_ik arm_config '
                             'writes one); default: derived from the URDF')
    parser.add_argument('--base', default='', help="root link of your arm's chain")
    parser.add_argument('--tip', default='', help="tool link of your arm's chain")
    parser.add_argument('--cycles', type=int, default=0,
                        help='stop after this many scripted cycles (0: run until Ctrl-C)')
    parser.add_argument('--lab', action=argparse.BooleanOptionalAction, default=True,
                        help='also start the browser lab (lab_viewer) and print its URL '
                             '(default on; --no-lab to skip it)')
    parser.add_argument('--lab-port', type=int, default=8080,
                        help='port of the browser lab on 127.0.0.1 (default 8080)')
    parser.add_argument('--controller', default='none', choices=('none', 'stand_in'),
                        help='stand_in: the executor drives controller_stand_in (a stand-in '
                             'for joint_trajectory_controller) through its '
                             'follow_joint_trajectory action and takes its joint states as '
                             'the measured state (default none: no controller)')
    parser.add_argument('--servos', choices=('', 'sim'), default='',
                        help='sim: the SO-101 on the simulated servo bus through servo_bridge '
                             '(calibrate, enable, move, faults, e-stop; arm_bringup.servo_demo)')
    parser.add_argument('--teleop', action='store_true',
                        help='with --servos sim: leader-follower teleoperation of two SO-101 '
                             'on two simulated buses, both recorded (arm_bringup.teleop_demo)')
    parser.add_argument('--mcap', default='demo.mcap',
                        help="MCAP file to record to (default demo.mcap in the current folder, "
                             "the repository root under make demo; '' records nothing)")
    return parser.parse_args(argv)


def choose_arm(args: argparse.Namespace) -> tuple[ArmSource, str, Scenario]:
    """(the arm, its robot_description, its scenario) from the command line.

    Raises:
        PipelineError: an unknown bundled name, or a URDF / configuration that cannot be
            used (the message names the element or key).
    """
    if not args.urdf:
        if args.arm_config or args.base or args.tip:
            raise PipelineError('--arm-config, --base and --tip go with --urdf (your own arm)')
        arm = args.arm or DEFAULT_ARM
        if arm not in SCENARIOS:
            raise PipelineError(f'"{arm}" is not a bundled example ({", ".join(SCENARIOS)}); '
                                'for your own arm pass --urdf (and --base, --tip)')
        return ArmSource(arm), expand_description(arm), SCENARIOS[arm]
    description = expand_file(args.urdf)
    try:
        config = ArmConfig.from_file(args.arm_config) if args.arm_config else ArmConfig()
        arm = load_arm(description, config, args.base, args.tip, args.arm)
    except (ArmConfigError, DescriptionError) as error:
        raise PipelineError(str(error)) from None
    source = ArmSource(arm.label, str(Path(args.urdf).resolve()),
                       str(Path(args.arm_config).resolve()) if args.arm_config else '',
                       arm.model.base_link, arm.model.tip_link)
    return source, description, workspace_scenario(arm)


def run_pipeline(args: argparse.Namespace, arm: ArmSource, description: str,
                 scenario: Scenario, mcap: Path | None, log_dir: str,
                 summary: Summary) -> None:
    """Start everything, run the cycles, stop everything (the driver, the nodes, then the
    recorder, so the MCAP holds everything up to the end)."""
    label = arm.label
    with ProcessGroup(log_dir=log_dir) as recorder_group:
        if mcap is not None:
            recorder_group.start_node(PACKAGE, 'mcap_recorder', params={
                'output': str(mcap), 'prefixes': [f'/{label}/'], 'topics': ['/rosout']})
        with ProcessGroup(log_dir=log_dir) as nodes:
            controller = ''
            if args.controller == 'stand_in':
                controller = start_stand_in(nodes, arm, description)
            started = start_nodes(nodes, arm, description, log_dir, args.controller)
            print(f'demo: started {", ".join(started)} in /{label}'
                  + (' and mcap_recorder' if mcap else ''), flush=True)
            if args.lab:
                start_lab(nodes, arm, description, args.lab_port)
            driver = DemoDriver.create(label)
            try:
                if not pipeline_up(driver, scenario, nodes.processes + recorder_group.processes,
                                   summary, args.controller != 'none'):
                    return
                if mcap is not None:
                    unrecorded = wait_recording(driver, recorded_topics(
                        label, scenario, started, controller))
                    if unrecorded:
                        print(f'demo: note: not recorded yet: {", ".join(unrecorded)}',
                              flush=True)
                while args.cycles <= 0 or summary.cycles < args.cycles:
                    print(f'cycle {summary.cycles + 1}:', flush=True)
                    run_cycle(driver, scenario, summary)
                    summary.cycles += 1
                    dead = [p.name for p in nodes.processes if not p.alive()]
                    if dead:
                        summary.record(StepResult(False, f'node process(es) died: '
                                                  f'{", ".join(dead)} (logs in {log_dir})'))
                        return
            finally:
                shield()
                summary.torn_down = driver.close()


def pipeline_up(driver: DemoDriver, scenario: Scenario, processes: list[NodeProcess],
                summary: Summary, measured: bool = False) -> bool:
    """Wait for the nodes (and, measured, the executor's measured state); on failure record
    it and print the logs of the dead ones."""
    missing = driver.wait_for_pipeline(scenario.pick_place, START_TIMEOUT, measured)
    dead = [p for p in processes if not p.alive()]
    for process in dead:
        print(f'demo: {process.name} exited:\n{process.output()[-2000:]}', flush=True)
    if missing or dead:
        summary.record(StepResult(False, f'not up within {START_TIMEOUT:g} s: '
                                  + ', '.join(missing + [f'{p.name} exited' for p in dead])),
                       indent='')
        return False
    return True


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def shield() -> None:
    """Ignore Ctrl-C and SIGTERM from here on: a second one must not cut the shutdown short
    (every node runs in a session of its own and would outlive this process)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Ctrl-C and SIGTERM both end the run cleanly, even when started from a shell that
    # ignores SIGINT in background jobs.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    if args.servos:
        if args.urdf or args.arm not in ('', 'so101'):
            print('demo: --servos sim drives the SO-101 (its worked calibration); leave out '
                  '--arm and --urdf, or pass --arm so101', file=sys.stderr, flush=True)
            return 2
        if args.teleop:
            from arm_bringup.teleop_demo import run as run_teleop
            return run_teleop(args.cycles, Path(args.mcap).resolve() if args.mcap else None)
        from arm_bringup.servo_demo import run
        return run(args.cycles)
    if args.teleop:
        print('demo: --teleop runs on the simulated buses: add --servos sim (make demo '
              'SERVOS=sim TELEOP=1)', file=sys.stderr, flush=True)
        return 2
    try:
        arm, description, scenario = choose_arm(args)
    except PipelineError as error:
        print(f'demo: {error}', file=sys.stderr, flush=True)
        return 2
    mcap = Path(args.mcap).resolve() if args.mcap else None
    log_dir = tempfile.mkdtemp(prefix='arm_demo_')
    summary = Summary()
    print(f'demo: arm {arm.label}, ROS_DOMAIN_ID={os.environ.get("ROS_DOMAIN_ID", "0")}, '
          f'{"cycles " + str(args.cycles) if args.cycles > 0 else "until Ctrl-C"}, '
          f'recording to {mcap or "nothing"}; node logs in {log_dir}', flush=True)
    if scenario.note:
        print(f'demo: note: {scenario.note}', flush=True)
    try:
        run_pipeline(args, arm, description, scenario, mcap, log_dir, summary)
    except KeyboardInterrupt:
        shield()
        print('demo: interrupted; every process stopped', flush=True)
    except PipelineError as error:
        print(f'demo: {error}', file=sys.stderr, flush=True)
        return 2
    shield()
    if mcap is not None and mcap.exists():
        print_recording(mcap, f'/{arm.label}')
    status = 0 if summary.steps_failed == 0 else 1
    if not summary.torn_down:
        print(f'demo: note: the middleware did not destroy the demo driver node within '
              f'{TEARDOWN_WAIT:g} s (stacks above); every node process is stopped, so the '
              f'demo ends without waiting for it', flush=True)
    print(summary.line(), flush=True)
    if not summary.torn_down:
        # The interpreter's exit would run the middleware's destructors, and wait on the
        # same stuck teardown; everything is printed and every node process is stopped.
        sys.stderr.flush()
        os._exit(status)
    return status


if __name__ == '__main__':
    sys.exit(main())
