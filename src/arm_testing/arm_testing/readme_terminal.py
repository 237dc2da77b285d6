"""Running the documents' ``run`` blocks as a new user would (test_readme.py and the
test_docs_*.py modules): each document in a terminal of its own, in a scratch copy of the
repository root, on a private ROS domain, judged by its status, its error lines and what the
document says it prints.

What a block fails on, what the test supplies (``PRELUDES``, ``NEEDS``) and why the blocks'
``make`` runs with ``-o build``: test_readme.py's docstring. ``SHARES`` says which module runs
which documents' blocks: `make test` runs modules in parallel workers, and the run blocks of
every document in one module took longer than the rest of the suite (docs/tests.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import contextlib
import os
from pathlib import Path
import re
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from arm_testing.readme_snippets import Block, documents, read_blocks

# What the scratch root holds: the built workspace and the files the documents' commands read.
ROOT_ENTRIES = ('.venv', 'install', 'build', 'src', 'requirements', 'tools', 'benchmarks',
                'Makefile', 'ruff.toml', 'README.md', 'docs')
# The README's pip route is written for Jazzy (.venv, install/). Under `make test
# ROS_WHEELS=kilted` the blocks run on the workspace this test runs in: the scratch root's
# .venv, install and build are Kilted's, and the inner make is not told ROS_WHEELS.
SUFFIX = Path(sys.prefix).name.removeprefix('.venv')
DISTRO_ENTRIES = {'.venv': f'.venv{SUFFIX}', 'install': f'install{SUFFIX}',
                  'build': f'build{SUFFIX}'}
# s; the longest blocks (the UR5 demo, the controllers chapter's) take 20-40 s alone and
# 30-60 s beside the suite's parallel workers. A block that hangs costs this much of a worker
# twice (its rerun runs it again), so the bound is 3x the loaded figure, not more.
BLOCK_TIMEOUT = 180.0
LINGER = 10.0           # s a block's background processes get to exit after it ended
LEFT_RUNNING = 'LEFT_RUNNING'
ERROR_LINE = re.compile(r'Traceback \(most recent call last\)|\[FATAL\]|\[ERROR\]|\bError:|'
                        r'^error:|command not found|No such file or directory|'
                        rf'^{LEFT_RUNNING} ', re.MULTILINE)
# What the README says a block prints (the comments beside its commands), keyed by a
# fragment of the block's text.
EXPECT = {
    # docs/moveit.md's pymoveit2 script (the README's shorter one is keyed below).
    "print('pose:'": (r'^home: True', r'^pose: True', r'^line: True', r'^ik: \['),
    'arm_config ur5.yaml --check': (r'ur5\.yaml: valid for ur5',
                                    r'^summary: 1 cycle\(s\), \d+ step\(s\) ok, 0 failed'),
    'ik_client --arm ur5': (r'\bOK\b',),
    # The files, the cycle over the action, and the MCAP with the controller action's
    # feedback and status (the goal and its end: accepted, executing, succeeded).
    'CONTROLLER=stand_in': (
        r'ur5_control/ur5_controllers\.yaml',
        r'^\s+[1-9]\d*\s+/ur5/joint_trajectory_controller/follow_joint_trajectory/_action/'
        r'feedback$',
        r'^\s+[1-9]\d*\s+/ur5/joint_trajectory_controller/follow_joint_trajectory/_action/'
        r'status$',
        r'^summary: 1 cycle\(s\), \d+ step\(s\) ok, 0 failed'),
    'IKClient(node': (r"\{'base_yaw': |OUT_OF_REACH",),
    "decoded_messages('demo.mcap'": (r"^\[\('/ccd5/", r'^\d+\.\d\d s  progress \d\.\d\d$'),
    'CollisionChecker(': (r'^collision: ',),
    # Both servo demos (TELEOP=1's block holds the other's text): every step ok, and each its
    # own count.
    'make demo CYCLES=1 SERVOS=sim': (r'^summary: 1 cycle\(s\), \d+ step\(s\) ok, 0 failed',),
    'SERVOS=sim      # ... summary: 1 cycle(s), 10': (
        r'^summary: 1 cycle\(s\), 10 step\(s\) ok, 0 failed',),
    'SERVOS=sim TELEOP=1': (r'^summary: 1 cycle\(s\), 7 step\(s\) ok, 0 failed',),
    # The README's "From LeRobot": an owner's LeRobot file becomes the project's own.
    # The README's "From MoveIt code": pymoveit2's Cartesian move and named state, executed.
    "print('up 10 cm:'": (r'^up 10 cm: True$', r'^home: True$'),
    '--from-lerobot blue.json': (r'servo_calibrate: wrote blue\.yaml \(6 joints\)',),
    'servo_client --ns /so101 move 0.3': (
        r'servo_calibrate: wrote my_so101\.yaml \(6 joints\)',
        r'^enable: done: torque on, holding the measured position',
        r'^move: done: SUCCESSFUL: Goal successfully reached!',
        r'^OK +servo_bridge: servo 1 \(shoulder_pan\): OK',
        r'^move: refused: PATH_TOLERANCE_VIOLATED: servo 3 \(elbow_flex\) reports overload',
        r'^estop: done: torque off on every servo',
        r'^enable: refused: e-stop is latched: reset it first'),
    # docs/lerobot.md: a LeRobot file drives the arm to LeRobot's angles; a recalibrated servo
    # is refused naming the joint and the field; the project's file written from it.
    'homing 3 1017': (
        r'^enable: done: torque on, holding the measured position',
        r'^move: done: SUCCESSFUL: Goal successfully reached!',
        r'^OK +servo_bridge: servo 1 \(shoulder_pan\): OK \[position \(rad\)=0\.30',
        r'^enable: refused: calibration does not match the servos, torque refused: '
        r'joints\.elbow_flex\.homing_offset: the file says 1081, servo 3 holds 1017',
        r'servo_calibrate: wrote my_so101\.yaml \(6 joints\)'),
    # docs/lerobot.md's gripper from pymoveit2: open reached; closing on an object stalls at
    # the torque limit max_effort set (1 N·m of 2.9), the servo still on and gripping.
    'gripper.close()': (r'^open: True$', r'^close: False$',
                        r'^The gripper stopped at 0\.(49|50|51)\d* without reaching its goal\. '
                        r'It stalled',
                        r'^id 6: .* torque limit 0\.345 load -?0\.345 torque on'),
}
# What a python block needs that it does not create (see the module docstring).
PRELUDES = {
    'IKClient(node': "import rclpy\nrclpy.init()\nnode = rclpy.create_node('readme_user')\n",
    # docs/moveit.md's pymoveit2 script runs against `make move_group ARM=six_axis` in
    # another terminal: its runner, started here, waited for until it says it serves (as
    # its user would), and stopped when the script ends.
    'RobotDescription.from_node(node': (
        'import atexit, os, signal, subprocess, sys\n'
        "_move_group = subprocess.Popen([sys.executable, '-m', 'arm_bringup.move_group', "
        "'--arm', 'six_axis'], start_new_session=True, stdout=subprocess.PIPE, "
        'stderr=subprocess.DEVNULL, text=True)\n'
        "next((_ for _ in _move_group.stdout if ' served in ' in _), None)\n"
        'atexit.register(lambda: (os.killpg(_move_group.pid, signal.SIGINT), '
        '_move_group.wait(30)))\n'),
}
# Bash commands run (in the scratch root) before a block that reads their output.
NEEDS = {
    "decoded_messages('demo.mcap'": 'make demo CYCLES=1 DEMO_ARGS=--no-lab',
}

# Which test module (of arm_bringup's tests) runs the run blocks of which documents; the
# documents no entry names are test_readme.py's. Each share is a few minutes of the suite.
SHARES = {
    'test_docs_servo_chapters': ('docs/servos.md', 'docs/teleoperation.md', 'docs/servo_jog.md'),
    'test_docs_client_chapters': ('docs/lerobot.md', 'docs/moveit.md'),
    'test_docs_pipeline_chapters': ('docs/controllers.md', 'docs/pipeline.md'),
}


def document_blocks(repo: Path) -> list[Block]:
    """Every fenced block of README.md and docs/*.md, in document order."""
    return [block for path in documents(repo)
            for block in read_blocks(path, path.relative_to(repo).as_posix())]


def share_of(module: str, blocks: list[Block]) -> list[Block]:
    """The run blocks ``module`` runs (``SHARES``; test_readme: every other document's)."""
    if module == 'test_readme':
        shared = {doc for docs in SHARES.values() for doc in docs}
        return [block for block in blocks if block.kind == 'run' and block.doc not in shared]
    return [block for block in blocks if block.kind == 'run' and block.doc in SHARES[module]]


def keyed(table: dict[str, object], block: Block) -> list[object]:
    return [value for key, value in table.items() if key in block.text]


def venv_is_stale(repo: Path) -> str:
    """Why the README's ``make`` would rebuild the shared venv, or '' when it would not."""
    plan = subprocess.run(['make', '-n', 'build'], cwd=repo, capture_output=True, text=True,
                          check=False)
    return 'make build would re-run tools/setup_venv.sh (venv older than requirements)' \
        if 'setup_venv.sh' in plan.stdout else ''



class Terminal:
    """One user's terminal for one document: its bash blocks run in order in one scratch root,
    each seeing the variables the earlier ones set; every process a block leaves is stopped
    after it."""

    def __init__(self, root: Path, domain_id: int, blocks: list[Block]) -> None:
        self.root = root
        self.blocks = blocks
        # PYTHONFAULTHANDLER: a block that hangs is sent SIGABRT, and every Python process
        # in it prints where each of its threads was.
        self.env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id),
                        ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', PYTHONUNBUFFERED='1',
                        PYTHONFAULTHANDLER='1')
        for name in ('ROS_LOCALHOST_ONLY', 'MAKEFLAGS', 'MAKELEVEL', 'MFLAGS', 'ROS_WHEELS'):
            self.env.pop(name, None)
        self.outcomes: dict[int, tuple[int | None, str]] = {}
        self.tries: dict[int, int] = {}
        self.linger = LINGER

    def run_shell(self, script: str, timeout: float = BLOCK_TIMEOUT) -> tuple[int | None, str]:
        state = self.root / '.readme_env'
        wrapped = ('set -a\n'
                   'make() { command make -o build -o setup "$@"; }\n'
                   f'{script}\n'
                   f'env -0 > {state}\n')
        code, output = self._run(['bash', '-e', '-c', wrapped], timeout)
        if code == 0 and state.exists():
            pairs = state.read_bytes().decode('utf-8', 'replace').split('\0')
            self.env = dict(pair.split('=', 1) for pair in pairs if '=' in pair)
        return code, output

    def run_python(self, source: str, timeout: float = BLOCK_TIMEOUT) -> tuple[int | None, str]:
        return self._run([str(self.root / '.venv' / 'bin' / 'python'), '-c', source], timeout)

    def _run(self, command: list[str], timeout: float) -> tuple[int | None, str]:
        """Run ``command`` in a process group of its own; a process of the group still
        running ``LINGER`` s after the command ended (a node the block started and meant to
        stop) is reported in the output as ``LEFT_RUNNING``, then stopped."""
        with tempfile.TemporaryFile('w+', encoding='utf-8', errors='replace') as log:
            process = subprocess.Popen(command, cwd=self.root, env=self.env, text=True,
                                       stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                code: int | None = process.wait(timeout=timeout)
                note = ''
            except subprocess.TimeoutExpired:
                code, note = None, (f'\n(timed out after {timeout:.0f} s; its processes '
                                    f'then:\n{self._where(process.pid)})')
            left = self._members(process.pid, self.linger)
            if left and code is not None:
                note += f'\n{LEFT_RUNNING} {self.linger:.0f} s after the block ended: {left}'
            self._stop(process.pid)
            log.seek(0)
            return code, log.read() + note

    @staticmethod
    def _where(group: int) -> str:
        """The processes of a hung block's ``group`` (state, kernel wait, command), listed
        before SIGABRT makes its Python processes print their threads' stacks into the
        block's output."""
        listing = subprocess.run(['ps', '-ww', '-o', 'pid=,stat=,etime=,wchan:24=,args=', '-s',
                                  str(group)], capture_output=True, text=True,
                                 check=False).stdout
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGABRT)
        time.sleep(1.0)        # the stacks' dump, before _stop interrupts the group
        return listing.rstrip()

    @staticmethod
    def _members(group: int, grace: float) -> list[str]:
        """The commands of ``group`` (its session) still running after up to ``grace`` s."""
        deadline = time.monotonic() + grace
        while True:
            listing = subprocess.run(['ps', '-o', 'stat=,args=', '-s', str(group)],
                                     capture_output=True, text=True, check=False).stdout
            alive = [line.split(None, 1)[-1] for line in listing.splitlines()
                     if line.strip() and not line.lstrip().startswith('Z')]
            if not alive or time.monotonic() >= deadline:
                return alive
            time.sleep(0.2)

    @staticmethod
    def _stop(group: int, grace: float = 5.0) -> None:
        """SIGINT what is left of the block's process group (background nodes), then KILL."""
        try:
            os.killpg(group, signal.SIGINT)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            try:
                os.killpg(group, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def block(self, block: Block) -> tuple[int | None, str]:
        """Run ``block`` (and every earlier bash block first, once): (status, output).

        A block that failed runs once more when its test asks again (the suite's rerun), so
        that a rerun is a second run, not the first one's outcome replayed; as an earlier
        block of another one it is not run again."""
        kept = self.outcomes.get(block.line)
        if kept is not None and (kept[0] == 0 or self.tries.get(block.line, 0) >= 2):
            return kept
        if block.lang == 'bash':
            for earlier in self.blocks:
                if earlier.kind == 'run' and earlier.doc == block.doc and \
                        earlier.lang == 'bash' and earlier.line < block.line and \
                        earlier.line not in self.outcomes:
                    self.block(earlier)
        self.tries[block.line] = self.tries.get(block.line, 0) + 1
        output = ''
        for command in keyed(NEEDS, block):
            code, output = self.run_shell(command)
            if code != 0:
                self.outcomes[block.line] = (code, f'(prerequisite {command!r})\n{output}')
                return self.outcomes[block.line]
        if block.lang == 'bash':
            outcome = self.run_shell(block.text)
        else:
            outcome = self.run_python(''.join(keyed(PRELUDES, block)) + block.text)
        self.outcomes[block.line] = outcome
        return outcome


def problems(block: Block, code: int | None, output: str) -> list[str]:
    """Why a block's run fails the README's promise: status, error lines, missing output."""
    found = [] if code == 0 else [f'exit status {code}']
    errors = [line for line in output.splitlines() if ERROR_LINE.search(line)]
    found += [f'error lines {errors}'] if errors else []
    found += [f'no {expected!r} in the output'
              for patterns in keyed(EXPECT, block) for expected in patterns
              if not re.search(expected, output, re.MULTILINE)]
    return found


@contextlib.contextmanager
def terminals(repo: Path, domain_id: int, blocks: list[Block]
              ) -> Iterator[Callable[[str], Terminal]]:
    """The terminal of a document (made when its first block runs): a scratch root of its own
    on ``domain_id``; every scratch root is removed when the block ends."""
    made: dict[str, Terminal] = {}
    with contextlib.ExitStack() as stack:
        def terminal(doc: str) -> Terminal:
            if doc not in made:
                root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix='readme_')))
                for entry in ROOT_ENTRIES:
                    source = repo / DISTRO_ENTRIES.get(entry, entry)
                    if source.exists():
                        (root / entry).symlink_to(source)
                made[doc] = Terminal(root, domain_id, blocks)
            return made[doc]
        yield terminal


def check_block_runs(terminal_of: Callable[[str], Terminal], block: Block, repo: Path) -> None:
    """Run ``block`` in its document's terminal; fail the test with every problem found."""
    if 'make ' in block.text or keyed(NEEDS, block):
        reason = venv_is_stale(repo)
        if reason:
            pytest.skip(f'{block.id}: {reason}; not rebuilding the shared venv from a test')
    code, output = terminal_of(block.doc).block(block)
    found = problems(block, code, output)
    assert not found, '; '.join(found) + \
        f'\n{block.id} ({block.lang}):\n{block.text}\n--- output ---\n{output}'


def share_tests(test_file: str) -> tuple[Callable, Callable]:
    """What a ``test_docs_*_chapters`` module holds: its module fixture (the documents'
    terminals on a ROS domain of its own) and the test of every run block ``SHARES`` gives it,
    for ``terminal_of, test_block_runs_as_written = share_tests(__file__)``."""
    from arm_testing.ros_harness import claimed_domain
    repo = Path(test_file).resolve().parents[3]
    blocks = document_blocks(repo)

    @pytest.fixture(scope='module')
    def terminal_of():
        with claimed_domain() as claim, terminals(repo, claim.domain_id, blocks) as terminal:
            yield terminal

    @pytest.mark.parametrize('block', share_of(Path(test_file).stem, blocks),
                             ids=lambda block: block.id)
    def test_block_runs_as_written(terminal_of, block):
        check_block_runs(terminal_of, block, repo)

    return terminal_of, test_block_runs_as_written
