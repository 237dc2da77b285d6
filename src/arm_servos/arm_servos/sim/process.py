"""Run the simulated bus in its own process (as a user does with ``servo_sim``) and talk to it
from a test or a benchmark: fault commands go to its standard input, answers come back on its
standard output.

A separate process matters: in a thread of the bridge's process the simulated servos would
wait for the bridge's GIL and answer late, which a real bus never does.
"""

from __future__ import annotations

from collections.abc import Sequence
import os
from pathlib import Path
import subprocess
import sys
import time


class SimProcess:
    """``servo_sim`` as a child process; use as a context manager."""

    def __init__(self, link: str | Path, protocol: str = 'feetech',
                 ids: Sequence[int] = (1, 2, 3, 4, 5, 6), position: str = '2048',
                 goal: str = '', baud: int = 1_000_000, tau: float = 0.05,
                 start_timeout: float = 10.0, per_reply: bool = False,
                 extra: Sequence[str] = ()) -> None:
        """``extra``: more servo_sim arguments (``--homing``, ``--lerobot FILE``...)."""
        self.link = Path(link)
        command = [sys.executable, '-m', 'arm_servos.sim.server', '--protocol', protocol,
                   '--ids', ','.join(str(i) for i in ids), '--link', str(self.link),
                   '--position', position, '--baud', str(baud), '--tau', str(tau)]
        if goal:
            command += ['--goal', goal]
        if per_reply:
            command.append('--per-reply')
        command += list(extra)
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, bufsize=1, start_new_session=True)
        self.banner = self.process.stdout.readline().strip()
        deadline = time.monotonic() + start_timeout
        while not self.link.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f'servo_sim did not start: {self.banner!r}')
            time.sleep(0.01)

    def command(self, line: str) -> str:
        """Send one fault command and return the simulator's answer."""
        self.process.stdin.write(line.strip() + '\n')
        self.process.stdin.flush()
        return self.process.stdout.readline().strip()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()

    def __enter__(self) -> SimProcess:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
