"""``arm_config``: write a starting arm configuration from a URDF (or xacro) file.

    ros2 run arm_ik arm_config robot.urdf --base base_link --tip tool0 > my_arm.yaml
    ros2 run arm_ik arm_config my_arm.yaml --check      # validate a configuration file
    ros2 run arm_ik arm_config robot.urdf --node-params my_arm.yaml > my_arm.params.yaml
    ros2 run arm_ik arm_config robot.urdf --arm-config my_arm.yaml --ros2-control control/

``--ros2-control DIR`` writes the arm's ros2_control files into DIR (see
``arm_kinematics.control.ros2_control_files``): <name>.ros2_control.xacro (the block:
mock_components/GenericSystem, position command, position and velocity state, initial values
at home), <name>_ros2_control.urdf.xacro (the URDF plus the block) and <name>_controllers.yaml
(joint_state_broadcaster with the movable joints outside the chain as extra_joints,
joint_trajectory_controller with the chain's joints and the ``controller`` section's
tolerances); <name> is the arm's label. A URDF that already has a <ros2_control> block is
refused (a second block on the same joints stops controller_manager from loading), and so is
a controller.action that is not [<namespace>/]<controller>/follow_joint_trajectory.

``--node-params`` writes a ros__parameters file for every node (robot_description, arm,
arm_config, frames), for ``--ros-args --params-file``: a URDF whose comments hold ': ' or
' #' cannot be passed with ``-p robot_description:=...`` (rcl reads that value as YAML).

The output validates on load (``ArmConfig.from_mapping``); edit it (home pose, floor,
obstacle, capsule radii) and pass it to every node as ``arm_config``. Exit status 0 on
success, 1 when the URDF or the configuration is not usable (the message names the element
or key), 2 on a usage error.
"""

from __future__ import annotations

import argparse
from pathlib import Path
import sys

import yaml

from arm_kinematics.analysis.config_writer import starting_config
from arm_kinematics.arm import ArmConfig, ArmConfigError, load_arm
from arm_kinematics.control.ros2_control_files import (
    broadcaster_extra_joints,
    controlled_joints,
    controllers_yaml,
    MOCK_PLUGIN,
    refuse_existing_blocks,
    ros2_control_xacro,
    top_level_xacro,
)
from arm_kinematics.description.bundled import expand_xacro_file
from arm_kinematics.description.controller_config import ignored_keys
from arm_kinematics.description.meshes import default_search_paths
from arm_kinematics.model.arm_model import DescriptionError

HEADER = """\
# Arm configuration written by `arm_config` from {source}.
# Units: metres, radians (m for prismatic joints). Pass this file to every node as the
# arm_config parameter (launch: arm_config:=<path>). Safety starts OFF: set
# safety.floor_enabled and floor_below_shoulder (m below the shoulder) when your arm stands
# on a floor it can reach; the obstacle ball is off too. collision.allowed_pairs are the link
# pairs the self-collision check skips (adjacent; in contact at home: default; in nearly all
# random poses: always; in none: never), computed once here; edit the list to override it.
# `info` is what was found, not read.
"""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog='arm_config', description='Write a starting arm configuration (YAML) from a '
        'URDF or xacro file, or check a configuration file with --check.')
    parser.add_argument('file', help='URDF or .xacro file (or, with --check, a configuration)')
    parser.add_argument('--base', default='', help='root link of the chain (default: the '
                        "URDF's root link)")
    parser.add_argument('--tip', default='', help='tool link of the chain (default: the '
                        "URDF's tool frame, tool0, flange, *_hand, ..., never a finger; "
                        'printed with the other candidates)')
    parser.add_argument('--mesh-path', action='append', default=[],
                        help='folder to resolve package:// meshes in (repeatable)')
    parser.add_argument('--check', metavar='URDF', nargs='?', const='',
                        help='validate FILE as a configuration (and against URDF if given)')
    parser.add_argument('--node-params', metavar='ARM_CONFIG', nargs='?', const='',
                        help='write a node parameters file (robot_description of FILE, the '
                             'chain and the arm_config path ARM_CONFIG) instead')
    parser.add_argument('--ros2-control', metavar='DIR',
                        help="write the arm's ros2_control xacro block, a top-level xacro and "
                             'the controllers YAML into DIR instead')
    parser.add_argument('--hardware-plugin', default=MOCK_PLUGIN,
                        help='ros2_control hardware plugin of --ros2-control (default '
                             f"{MOCK_PLUGIN}; your servo driver's SystemInterface)")
    parser.add_argument('--arm-config', metavar='ARM_CONFIG', default='',
                        help='arm configuration for --ros2-control (home pose, controller '
                             'section, label, frames)')
    return parser.parse_args(argv)


def read_description(path: str) -> str:
    """URDF text of a .urdf or .xacro file.

    Raises:
        DescriptionError: unreadable file or failed xacro.
    """
    if path.endswith('.xacro'):
        return expand_xacro_file(path)
    try:
        return Path(path).read_text(encoding='utf-8')
    except OSError as error:
        raise DescriptionError(f'{path}: cannot be read: {error.strerror}') from None
    except UnicodeDecodeError as error:
        raise DescriptionError(f'{path}: is not UTF-8 text (byte {error.start}): a URDF is '
                               'an XML text file') from None


def node_parameters(urdf: str, config_path: str, base: str, tip: str) -> str:
    """A ros__parameters YAML for every node of the arm (the ``/**`` wildcard).

    Raises:
        ArmConfigError, DescriptionError: the configuration or the URDF is not usable.
    """
    config = ArmConfig.from_file(config_path) if config_path else ArmConfig()
    arm = load_arm(urdf, config, base, tip)
    parameters = {'robot_description': urdf, 'arm': arm.label,
                  'arm_config': str(Path(config_path).absolute()) if config_path else '',
                  'base_frame': arm.model.base_link, 'tip_frame': arm.model.tip_link}
    return yaml.safe_dump({'/**': {'ros__parameters': parameters}}, sort_keys=False,
                          width=10_000)


def ros2_control_files(description_path: str, urdf: str, config_path: str, base: str,
                       tip: str, folder: str, plugin: str = MOCK_PLUGIN) -> list[Path]:
    """Write the ros2_control files of the arm into ``folder``; their paths. Nothing is
    written when anything is refused.

    Raises:
        ArmConfigError, DescriptionError: the configuration or the URDF is not usable.
        ValueError: the URDF has a <ros2_control> block already, the controller action has
            another form than [<namespace>/]<controller>/follow_joint_trajectory, or the
            plugin is no plugin name.
    """
    config = ArmConfig.from_file(config_path) if config_path else ArmConfig()
    arm = load_arm(urdf, config, base, tip)
    source = Path(description_path).name
    refuse_existing_blocks(urdf, source)
    label = arm.label
    out = Path(folder)
    block = out / f'{label}.ros2_control.xacro'
    top = out / f'{label}_ros2_control.urdf.xacro'
    controllers = out / f'{label}_controllers.yaml'
    texts = {
        block: ros2_control_xacro(
            controlled_joints(arm.model.joints, [float(x) for x in arm.home]), source),
        top: top_level_xacro(arm.model.name, str(Path(description_path).absolute()),
                             str(block.absolute()), label, plugin),
        controllers: controllers_yaml(arm.model.joint_names, config.controller, source,
                                      broadcaster_extra_joints(arm.model)),
    }
    out.mkdir(parents=True, exist_ok=True)
    for path, text in texts.items():
        path.write_text(text, encoding='utf-8')
    return list(texts)


def config_notes(config_path: str) -> list[str]:
    """What the configuration file holds that is accepted but does nothing, one line each."""
    if not config_path:
        return []
    return ignored_keys(ArmConfig.from_file(config_path).get('controller'))


def _is_xml(path: str) -> bool:
    try:
        with open(path, 'rb') as stream:
            return stream.read(4096).lstrip().startswith(b'<')
    except OSError:
        return False        # from_file says why it cannot be read


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.check is not None:
            if _is_xml(args.file):
                # `arm_config robot.urdf --check` reads as "check this URDF".
                raise ArmConfigError(f'{args.file} is a URDF or xacro file, not an arm '
                                     'configuration: check a configuration against it with '
                                     f'arm_config CONFIG.yaml --check {args.file}')
            config = ArmConfig.from_file(args.file)
            for note in ignored_keys(config.get('controller')):
                print(f'arm_config: note: {note}', file=sys.stderr)
            if args.check:
                arm = load_arm(read_description(args.check), config, args.base, args.tip)
                if config.get('collision') is not None:
                    # The allowed pairs must name links of this URDF with collision shapes.
                    arm.collision_checker(search_paths=args.mesh_path, urdf_path=args.check)
                print(f'{args.file}: valid for {arm.model.name} ({arm.model.base_link} -> '
                      f'{arm.model.tip_link}, {arm.model.dof} joints, solver '
                      f'{arm.default_solver})')
            else:
                print(f'{args.file}: valid')
            return 0
        urdf = read_description(args.file)
        if args.ros2_control:
            for note in config_notes(args.arm_config):
                print(f'arm_config: note: {note}', file=sys.stderr)
            for path in ros2_control_files(args.file, urdf, args.arm_config, args.base,
                                           args.tip, args.ros2_control, args.hardware_plugin):
                print(path)
            return 0
        if args.node_params is not None:
            sys.stdout.write(node_parameters(urdf, args.node_params, args.base, args.tip))
            return 0
        search = [*args.mesh_path, *default_search_paths(args.file)]
        data = starting_config(urdf, args.base, args.tip, search)
        ArmConfig.from_mapping(data, 'generated configuration')   # what we write loads
        # The frames chosen for the user (and why, with the other candidates) and what was
        # assumed of the URDF, on stderr: stdout is the YAML.
        info = data['info']
        for line in ([info['frames']] if not info['frames'].endswith('(given)') else []) + \
                info['urdf_notes']:
            print(f'arm_config: {line}', file=sys.stderr)
    except (ArmConfigError, DescriptionError, ValueError, OSError) as error:
        print(f'arm_config: {error}', file=sys.stderr)
        return 1
    sys.stdout.write(HEADER.format(source=Path(args.file).name))
    sys.stdout.write(yaml.safe_dump(data, sort_keys=False, default_flow_style=None,
                                    width=99))
    return 0


if __name__ == '__main__':
    sys.exit(main())
