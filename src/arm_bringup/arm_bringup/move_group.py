"""The runner behind ``make move_group``: MoveIt's move_group interface for one arm, served
until Ctrl-C.

    python -m arm_bringup.move_group --arm six_axis
    python -m arm_bringup.move_group --urdf ur5.urdf --base base_link --tip tool0
    python -m arm_bringup.move_group --urdf panda.urdf --srdf panda.srdf --base panda_link0 \\
        --tip panda_hand_tcp --controller stand_in

Starts two processes in the namespace ``--namespace`` (default the root, as MoveIt's
move_group, so a pymoveit2 or MoveGroupInterface client started without a namespace finds
it): ``move_group`` (the interface) and ``trajectory_executor`` (it executes: simulated
joint_states by default; ``--controller stand_in`` drives controller_stand_in, a stand-in for
joint_trajectory_controller, through FollowJointTrajectory and takes its joint states as the
measured state). Node logs go to a temporary folder (printed).
"""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path
import signal
import sys
import tempfile
import time

from arm_bringup.demo import (
    MEASURED,
    shield,
    STAND_IN_STALE_PERIODS,
    start_stand_in,
    START_TIMEOUT,
)
from arm_bringup.pipeline import (
    ArmSource,
    expand_description,
    expand_file,
    NODE_PACKAGE,
    PipelineError,
)
from arm_bringup.process_group import ProcessGroup
from arm_kinematics.arm import ArmConfig, ArmConfigError, load_arm
from arm_kinematics.description.bundled import ARMS
from arm_kinematics.model.arm_model import DescriptionError


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--arm', default='', help=f'a bundled arm ({", ".join(ARMS)}), or '
                        "with --urdf your arm's label")
    parser.add_argument('--urdf', default='', help='your arm: a URDF or xacro file')
    parser.add_argument('--srdf', default='', help='its SRDF (groups, named states, disabled '
                        'collisions); without one the chain is one group, "arm"')
    parser.add_argument('--arm-config', default='', help='arm configuration YAML')
    parser.add_argument('--base', default='', help="root link of the arm's chain")
    parser.add_argument('--tip', default='', help="tool link of the arm's chain")
    parser.add_argument('--namespace', default='', help='namespace of every node (default '
                        'the root, as MoveIt)')
    parser.add_argument('--controller', default='none', choices=('none', 'stand_in'),
                        help='stand_in: execute through controller_stand_in '
                        '(FollowJointTrajectory); default: simulated joint_states')
    parser.add_argument('--servos', choices=('', 'sim'), default='',
                        help='sim: the SO-101 of example-robot-data on the simulated servo bus '
                        'through servo_bridge (enabled at start; leave out --arm and --urdf)')
    return parser.parse_args(argv)


def choose(args: argparse.Namespace) -> tuple[ArmSource, str]:
    """(the arm, its robot_description)."""
    if args.servos:
        if args.urdf or args.arm not in ('', 'so101') or args.controller != 'none':
            raise PipelineError('--servos sim drives the SO-101 of example-robot-data: leave '
                                'out --arm, --urdf and --controller')
        from arm_bringup.servo_demo import _so101_urdf
        path = _so101_urdf()
        return ArmSource('so101', str(path), '', 'base_link', 'gripper_frame_link'), \
            expand_file(str(path))
    if not args.urdf:
        if args.arm_config or args.base or args.tip or args.srdf:
            raise PipelineError('--arm-config, --base, --tip and --srdf go with --urdf')
        if args.arm not in ARMS:
            raise PipelineError(f'--arm "{args.arm}" is not a bundled arm ({", ".join(ARMS)});'
                                ' for your own arm pass --urdf')
        return ArmSource(args.arm), expand_description(args.arm)
    description = expand_file(args.urdf)
    try:
        config = ArmConfig.from_file(args.arm_config) if args.arm_config else ArmConfig()
        arm = load_arm(description, config, args.base, args.tip, args.arm)
    except (ArmConfigError, DescriptionError) as error:
        raise PipelineError(str(error)) from None
    return ArmSource(arm.label, str(Path(args.urdf).resolve()),
                     str(Path(args.arm_config).resolve()) if args.arm_config else '',
                     arm.model.base_link, arm.model.tip_link), description


# servo_bridge's measured state, away from the executor's (commanded) joint_states.
BRIDGE_STATES = 'servo_bridge/joint_states'


def start_servo_bridge(group: ProcessGroup, link: str, namespace: str = '') -> None:
    """servo_bridge of the SO-101 on the simulated bus at ``link`` (as make demo SERVOS=sim)."""
    from arm_bringup.servo_demo import _calibration, _so101_urdf
    group.start_node(NODE_PACKAGE, 'servo_bridge', name='servo_bridge', namespace=namespace,
                     params={'urdf_file': str(_so101_urdf()), 'tip_frame': 'gripper_frame_link',
                             'calibration_file': str(_calibration()), 'port': link,
                             'reply_timeout': 0.03, 'silent_cycles': 25},
                     remappings={'joint_states': BRIDGE_STATES})


def enable_servo_bridge(namespace: str = '', timeout: float = 60.0) -> str:
    """Call servo_bridge's ~/enable (torque on, holding the measured pose); its answer."""
    from arm_ik.servo_client import BridgeClient
    client = BridgeClient(namespace or '/', timeout=timeout)
    try:
        ok, message = client.call('enable')
    finally:
        client.close()
    if not ok:
        raise PipelineError(f'servo_bridge ~/enable: {message}')
    return message


def start(group: ProcessGroup, arm: ArmSource, description: str, srdf: str,
          namespace: str = '', controller: str = 'none') -> None:
    """Start move_group and its trajectory_executor, which serves MoveIt Servo's jog interface
    too (and the controller stand-in, or with
    ``controller`` "servo_bridge" the executor's output to a running servo_bridge)."""
    chain = {'robot_description': description, **arm.chain_parameters()}
    if arm.urdf_file:
        # package:// meshes beside the URDF (a description package's share folder above it).
        folder = Path(arm.urdf_file).resolve().parent
        chain['mesh_search_paths'] = os.pathsep.join(str(p) for p in (folder, *folder.parents))
    executor = dict(chain)
    if controller == 'stand_in':
        start_stand_in(group, arm, description, namespace or '/')
        executor.update(output='follow_joint_trajectory', feedback_topic=MEASURED,
                        feedback_stale_periods=STAND_IN_STALE_PERIODS)
    elif controller == 'servo_bridge':
        executor.update(output='follow_joint_trajectory', feedback_topic=BRIDGE_STATES,
                        controller_action='servo_bridge/follow_joint_trajectory',
                        feedback_stale_periods=25.0, publish_on_start=False)
    # servo_node is the trajectory executor with MoveIt Servo's jog topics and services
    # attached (servo_node/delta_twist_cmds, ...), so jogging goes to the same outputs.
    group.start_node(NODE_PACKAGE, 'servo_node', name='trajectory_executor',
                     namespace=namespace, params=executor)
    group.start_node(NODE_PACKAGE, 'move_group', name='move_group', namespace=namespace,
                     params={**chain, **({'robot_description_semantic': srdf} if srdf else {})})


def wait_until_served(namespace: str, timeout: float, group: ProcessGroup) -> list[str]:
    """The actions of move_group (``move_action``, ``execute_trajectory``) that no client can
    see yet after ``timeout`` s, or the processes that ended meanwhile; empty once all are
    served. pymoveit2 gives up on an execution whose server it does not see yet ("Action
    server 'execute_trajectory' is not yet available"), so "served" is said only after."""
    from moveit_msgs.action import ExecuteTrajectory, MoveGroup
    import rclpy
    from rclpy.action import ActionClient
    from rclpy.context import Context
    from rclpy.signals import SignalHandlerOptions

    from arm_ik.middleware import destroy_with_actions
    context = Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node('move_group_ready_probe', context=context,
                             start_parameter_services=False)
    try:
        base = namespace.rstrip('/')
        clients = {name: ActionClient(node, kind, f'{base}/{name}') for name, kind in
                   (('move_action', MoveGroup), ('execute_trajectory', ExecuteTrajectory))}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dead = [f'{p.name} ended' for p in group.processes if not p.alive()]
            waiting = [name for name, client in clients.items() if not client.server_is_ready()]
            if dead or not waiting:
                return dead
            time.sleep(0.1)
        return waiting
    finally:
        destroy_with_actions(node)
        context.try_shutdown()
        context.destroy()


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    try:
        arm, description = choose(args)
        srdf = Path(args.srdf).read_text(encoding='utf-8') if args.srdf else ''
    except (PipelineError, OSError) as error:
        print(f'move_group: {error}', file=sys.stderr, flush=True)
        return 2
    log_dir = tempfile.mkdtemp(prefix='move_group_')
    namespace = args.namespace
    try:
        with contextlib.ExitStack() as stack:
            group = stack.enter_context(ProcessGroup(log_dir=log_dir))
            controller = args.controller
            if args.servos:
                from arm_servos.sim.process import SimProcess
                link = str(Path(log_dir) / 'so101_bus')
                stack.enter_context(SimProcess(link, 'feetech', goal='2600'))
                start_servo_bridge(group, link, namespace)
                print(f'move_group: servo_bridge: {enable_servo_bridge(namespace)}', flush=True)
                controller = 'servo_bridge'
            start(group, arm, description, srdf, namespace, controller)
            missing = wait_until_served(namespace, START_TIMEOUT, group)
            if missing:
                print(f'move_group: not served within {START_TIMEOUT:g} s: '
                      f'{", ".join(missing)} (logs in {log_dir})', file=sys.stderr, flush=True)
                shield()
                return 1
            route = {'stand_in': 'through controller_stand_in',
                     'servo_bridge': 'through servo_bridge on the simulated bus'}.get(
                controller, 'on simulated joint_states')
            print(f'move_group: {arm.label} served in namespace "{namespace or "/"}" '
                  f'(ROS_DOMAIN_ID={os.environ.get("ROS_DOMAIN_ID", "0")}), executing '
                  f'{route}; Ctrl-C stops; node logs in {log_dir}', flush=True)
            while True:
                dead = [p.name for p in group.processes if not p.alive()]
                if dead:
                    print(f'move_group: process(es) ended: {", ".join(dead)} (logs in '
                          f'{log_dir})', file=sys.stderr, flush=True)
                    for process in group.processes:
                        if process.name in dead:
                            print(process.output()[-2000:], file=sys.stderr, flush=True)
                    shield()
                    return 1
                time.sleep(0.5)
    except KeyboardInterrupt:
        shield()
        print('move_group: stopped', flush=True)
    except PipelineError as error:
        print(f'move_group: {error}', file=sys.stderr, flush=True)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
