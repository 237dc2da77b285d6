"""What the pipeline of one arm is, without launch: its nodes, parameters and description.

``arm.launch.py`` (ROS installs) and the launch-free runner (``make demo``) start the same
nodes with the same files; this module is the runner's half, and ``test_launch_files.py``
checks that both halves name the same nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
import shutil
import subprocess
from typing import Any

import yaml

from arm_kinematics.description.bundled import ARMS

PACKAGE = 'arm_bringup'
NODE_PACKAGE = 'arm_ik'
# Every node of the pipeline, in start order (as arm.launch.py lists them). markers may be
# missing from an install (it is the newest node): the runner then skips it with a note.
NODES = ('arm_info', 'ik_server', 'safety_monitor', 'trajectory_executor', 'target_input',
         'markers')
OPTIONAL_NODES = ('markers',)
# Arms with a scripted pick-and-place cycle (target_input's sequence_file in their YAML).
PICK_PLACE_ARMS = ('ccd5', 'manipulator3d')
OUTPUTS = ('none', 'joint_trajectory', 'forward_position', 'follow_joint_trajectory')


class PipelineError(RuntimeError):
    """The pipeline cannot be started as asked (missing install, file or tool)."""


def share_dir(package: str) -> Path:
    """Installed share folder of ``package`` (through the ament index)."""
    from ament_index_python.packages import get_package_share_directory
    try:
        return Path(get_package_share_directory(package))
    except LookupError:
        raise PipelineError(f'{package} is not installed: build the workspace and source '
                            'install/setup.bash') from None


def config_file(arm: str) -> Path:
    """The arm's node parameters: ``arm_bringup/config/<arm>.yaml`` in the install."""
    check_arm(arm)
    path = share_dir(PACKAGE) / 'config' / f'{arm}.yaml'
    if not path.is_file():
        raise PipelineError(f'{path} is missing: rebuild the workspace')
    return path


def check_arm(arm: str) -> None:
    if arm not in ARMS:
        raise PipelineError(f'unknown arm "{arm}"; choose one of: {", ".join(ARMS)}')


def xacro_file(arm: str, description_package: str = 'arm_description',
               description_file: str = '') -> Path:
    """The description to expand, as arm.launch.py finds it: ``<share>/<file>``, the file
    defaulting to ``urdf/<arm>.urdf.xacro``."""
    check_arm(arm)
    return share_dir(description_package) / (description_file or f'urdf/{arm}.urdf.xacro')


def expand_description(arm: str, description_package: str = 'arm_description',
                       description_file: str = '') -> str:
    """robot_description as launch's ``Command(['xacro ', path])`` makes it: the ``xacro``
    executable's output, not an in-process expansion, so both paths give the same text.

    Raises:
        PipelineError: xacro is not on PATH, or it failed (its message is kept).
    """
    executable = shutil.which('xacro')
    if executable is None:
        raise PipelineError('the xacro executable is not on PATH (pip install xacro, or '
                            'source a ROS install)')
    path = xacro_file(arm, description_package, description_file)
    done = subprocess.run([executable, str(path)], capture_output=True, text=True,
                          timeout=60, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        raise PipelineError(f'xacro {path} failed: {done.stderr.strip() or "no output"}')
    return done.stdout


@dataclass(frozen=True)
class LaunchOptions:
    """The launch arguments of arm.launch.py that change node parameters.

    Attributes:
        solver: IK solver of ik_server's ~/solve_ik and target_input's goals ('' = YAML).
        motion: the executor's default motion law ('' = YAML).
        output: the executor's command output (none | joint_trajectory | forward_position |
            follow_joint_trajectory).
        feedback_topic: the executor's measured joint state topic ('' = none).
        feedback_stale_periods: its periods of silence before stale (0 = the YAML's).
        cycle: target_input starts its scripted cycle at once (autostart).
        cycles: cycles of the scripted sequence, 0 = until stopped.
    """

    solver: str = ''
    motion: str = ''
    output: str = 'none'
    feedback_topic: str = ''
    feedback_stale_periods: float = 0.0
    cycle: bool = False
    cycles: int = 0


@dataclass
class NodeLaunch:
    """One node as the runner starts it: executable, namespace, YAML and overrides."""

    executable: str
    namespace: str
    params_files: list[str]
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def full_name(self) -> str:
        return f'{self.namespace.rstrip("/")}/{self.executable}'

    def write_params(self, directory: str | Path) -> list[str]:
        """Write ``params`` as launch_ros writes a node's dict parameters (keyed by the
        node's full name) and return every parameter file, the YAML first.

        The order matters: of the entries matching a node, rclpy applies the one that
        appeared first first, so the override entry (/<arm>/<node>) must come after the
        YAML's (/**/<node>) to win. ProcessGroup's own ``params`` would go under ``/**``,
        which the YAML already opens, and lose.
        """
        path = Path(directory) / f'{self.full_name.strip("/").replace("/", "_")}.launch.yaml'
        path.write_text(yaml.safe_dump({self.full_name: {'ros__parameters': self.params}}),
                        encoding='utf-8')
        return [*self.params_files, str(path)]


def node_overrides(options: LaunchOptions) -> dict[str, dict[str, Any]]:
    """Per-node parameters the launch arguments set on top of the YAML (as arm.launch.py).

    An empty solver or motion law leaves the YAML's value in place.
    """
    if options.output not in OUTPUTS:
        raise PipelineError(f'output "{options.output}" is not one of {", ".join(OUTPUTS)}')
    overrides: dict[str, dict[str, Any]] = {name: {} for name in NODES}
    if options.solver:
        overrides['ik_server']['default_solver'] = options.solver
        overrides['target_input']['solver'] = options.solver
    if options.motion:
        overrides['trajectory_executor']['motion_law'] = options.motion
    overrides['trajectory_executor']['output'] = options.output
    if options.feedback_topic:
        overrides['trajectory_executor']['feedback_topic'] = options.feedback_topic
    if options.feedback_stale_periods:
        overrides['trajectory_executor']['feedback_stale_periods'] = \
            float(options.feedback_stale_periods)
    overrides['target_input']['autostart'] = options.cycle
    overrides['target_input']['cycles'] = int(options.cycles)
    return overrides


@dataclass(frozen=True)
class ArmSource:
    """Which arm the pipeline runs, as arm.launch.py's arguments name it.

    Attributes:
        label: the arm's label and namespace.
        urdf_file: a URDF or xacro file of the user's own; '' for a bundled example.
        arm_config: the arm configuration file; '' for the bundled example's (or, with a
            urdf_file, none: defaults derived from the URDF).
        base_frame, tip_frame: the chain ('' for the configuration's or the URDF's).
    """

    label: str
    urdf_file: str = ''
    arm_config: str = ''
    base_frame: str = ''
    tip_frame: str = ''

    @property
    def bundled(self) -> bool:
        return not self.urdf_file

    def config_path(self) -> str:
        """The arm_config every node gets ('' for defaults from the URDF)."""
        if self.arm_config or not self.bundled:
            return self.arm_config
        check_arm(self.label)
        return str(share_dir('arm_description') / 'config' / f'{self.label}.yaml')

    def chain_parameters(self) -> dict[str, str]:
        return {'arm': self.label, 'arm_config': self.config_path(),
                'base_frame': self.base_frame, 'tip_frame': self.tip_frame}


def pipeline_nodes(arm: str | ArmSource, description: str,
                   options: LaunchOptions = LaunchOptions()) -> list[NodeLaunch]:
    """Every node of the arm's pipeline with its node YAML (bundled examples), the
    description, the chain parameters and the overrides."""
    source = arm if isinstance(arm, ArmSource) else ArmSource(arm)
    files = [str(config_file(source.label))] if source.bundled else []
    overrides = node_overrides(options)
    chain = source.chain_parameters()
    return [NodeLaunch(name, f'/{source.label}', files,
                       {'robot_description': description, **chain, **overrides[name]})
            for name in NODES]


def expand_file(path: str) -> str:
    """robot_description of a user's URDF or xacro file, through the xacro executable
    (which passes a plain URDF through), as arm.launch.py's urdf_file does.

    Raises:
        PipelineError: no xacro, a missing file, or xacro failed.
    """
    if not Path(path).is_file():
        raise PipelineError(f'URDF file {path} does not exist')
    executable = shutil.which('xacro')
    if executable is None:
        raise PipelineError('the xacro executable is not on PATH (pip install xacro, or '
                            'source a ROS install)')
    done = subprocess.run([executable, str(path)], capture_output=True, text=True,
                          timeout=60, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        raise PipelineError(f'xacro {path} failed: {done.stderr.strip() or "no output"}')
    return done.stdout
