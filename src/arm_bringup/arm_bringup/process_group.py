"""Start ROS 2 nodes in their own processes and stop them all cleanly (no rclpy import).

Used by the launch-free demo runner and by the integration tests: each node gets a
parameters file (as ``ros2 launch`` would write it), its own process group, and a log
file; ``stop_all`` sends SIGINT, then SIGKILL to whatever is left, so nothing survives.
"""

from __future__ import annotations

from dataclasses import dataclass
import os
from pathlib import Path
import signal
import subprocess
import tempfile
import time
from typing import Any

import yaml


def executable_path(package: str, executable: str) -> str:
    """Path of a node executable installed in ``lib/<package>`` (as ``ros2 run`` finds it)."""
    from ament_index_python.packages import get_package_prefix
    path = Path(get_package_prefix(package)) / 'lib' / package / executable
    if not path.exists():
        raise FileNotFoundError(f'{package}/{executable} is not installed at {path}')
    return str(path)


@dataclass
class NodeProcess:
    """One running node process and where its output goes."""

    name: str
    popen: subprocess.Popen
    log_path: Path

    def alive(self) -> bool:
        return self.popen.poll() is None

    def output(self) -> str:
        """Everything the process printed so far (stdout and stderr together)."""
        try:
            return self.log_path.read_text(encoding='utf-8', errors='replace')
        except OSError:
            return ''

    def wait_for_exit(self, timeout: float) -> int | None:
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def abort(self) -> str:
        """SIGABRT a hung process; returns its output, which then ends with the Python stack
        of every thread (the group starts nodes with faulthandler on)."""
        if self.alive():
            try:
                os.kill(self.popen.pid, signal.SIGABRT)
            except ProcessLookupError:
                pass
            self.wait_for_exit(5.0)
        return self.output()


class ProcessGroup:
    """A set of node processes sharing one environment (ROS_DOMAIN_ID, discovery range)."""

    def __init__(self, env: dict[str, str] | None = None, log_dir: str | None = None) -> None:
        self.env = dict(os.environ if env is None else env)
        self._tmp = tempfile.TemporaryDirectory(prefix='arm_ik_nodes_') if log_dir is None \
            else None
        self.log_dir = Path(log_dir or self._tmp.name)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.processes: list[NodeProcess] = []

    def write_params(self, name: str, params: dict[str, Any]) -> Path:
        """A ros__parameters YAML for node ``name`` (wildcard key, as launch_ros writes it)."""
        path = self.log_dir / f'{name}.params.yaml'
        path.write_text(yaml.safe_dump({'/**': {'ros__parameters': params}}), encoding='utf-8')
        return path

    def start_node(self, package: str, executable: str, name: str | None = None,
                   namespace: str = '', params: dict[str, Any] | None = None,
                   params_files: list[str] | None = None,
                   remappings: dict[str, str] | None = None,
                   extra_env: dict[str, str] | None = None,
                   program: list[str] | None = None) -> NodeProcess:
        """Start ``package/executable`` with parameters, name, namespace and remappings.

        ``program`` replaces the installed executable (e.g. [python, a test-only node's
        script]); ``executable`` still names the process and its log.
        """
        # Unique per process: two nodes of one name in different namespaces get their own
        # parameters file and log.
        label = '_'.join(part for part in (namespace.strip('/').replace('/', '_'),
                                            name or executable) if part)
        if any(p.name == label for p in self.processes):
            label = f'{label}_{len(self.processes)}'
        command = [*(program or [executable_path(package, executable)]), '--ros-args']
        if name:
            command += ['-r', f'__node:={name}']
        if namespace:
            command += ['-r', f'__ns:={namespace}']
        for source, target in (remappings or {}).items():
            command += ['-r', f'{source}:={target}']
        for params_file in params_files or []:
            command += ['--params-file', str(params_file)]
        if params:
            command += ['--params-file', str(self.write_params(label, params))]
        log_path = self.log_dir / f'{label}.log'
        env = dict(self.env)
        env.update(extra_env or {})
        # Unbuffered, so the log shows what happened right up to a kill; faulthandler, so
        # a hung node shows where it hangs when aborted.
        env['PYTHONUNBUFFERED'] = '1'
        env.setdefault('PYTHONFAULTHANDLER', '1')
        with open(log_path, 'wb') as log:
            popen = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env,
                                     start_new_session=True)
        process = NodeProcess(label, popen, log_path)
        self.processes.append(process)
        return process

    def stop(self, process: NodeProcess, timeout: float = 5.0) -> int | None:
        """SIGINT (as Ctrl-C), then SIGKILL of the whole process group after ``timeout``."""
        if process.alive():
            self._signal(process, signal.SIGINT)
            if process.wait_for_exit(timeout) is None:
                self._signal(process, signal.SIGKILL)
                process.wait_for_exit(timeout)
        else:
            # The node may have left children in its group; they go too.
            self._signal(process, signal.SIGKILL)
        return process.popen.returncode

    def kill(self, process: NodeProcess) -> None:
        """SIGKILL at once, as a crash would."""
        self._signal(process, signal.SIGKILL)
        process.wait_for_exit(5.0)

    def stop_all(self, timeout: float = 5.0) -> None:
        for process in self.processes:
            if process.alive():
                self._signal(process, signal.SIGINT)
        deadline = time.monotonic() + timeout
        for process in self.processes:
            remaining = max(0.0, deadline - time.monotonic())
            if process.wait_for_exit(remaining) is None:
                self._signal(process, signal.SIGKILL)
                process.wait_for_exit(timeout)
        self.processes.clear()

    def close(self) -> None:
        self.stop_all()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> ProcessGroup:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @staticmethod
    def _signal(process: NodeProcess, signum: int) -> None:
        try:
            os.killpg(process.popen.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass
