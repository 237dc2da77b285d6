"""The README and its chapters are a contract: their snippets work as written in the pip route
(issues 19 and 39).

A new user copies a document's blocks into one terminal, top to bottom, so the test does the
same with every ```bash and ```python block of README.md and of each chapter ``docs/*.md``
(kinds and markers: readme_snippets.py), each document in a terminal of its own, so a chapter
that needs a variable or a file of another fails here (chapters are self-contained):

- ``run`` blocks run for real against real nodes, on a private ROS domain with discovery on
  localhost, from a scratch copy of the repository root (symlinks to ``.venv``, ``install``,
  ``build``, ``src`` ... and nothing else, so ``ur5.yaml``, ``demo.mcap`` and the other files
  a block writes land there and vanish with it). Bash blocks run with ``bash -e`` one after
  the other and every variable a block sets reaches the next block of the same document
  (``$UR5`` of the walkthrough in docs/own_arm.md).
  A block fails on a non-zero status, a timeout, a line that looks like an error
  (``ERROR_LINE``) or when it does not print what the README says it prints (``EXPECT``).
- ``ros-only`` blocks: every ``ros2`` command's executable, launch file and arguments,
  service and action names and types, request fields, parameters and topics must exist in
  what the workspace installs (a running six_axis ik_server answers for its own names).
- ``not-run`` blocks: the make targets they name exist (``make -n``).

What the test supplies (``PRELUDES``): the IKClient snippet uses a ``node`` it does not
create, so it runs after ``rclpy.init()`` and ``node = rclpy.create_node(...)``, against the
six_axis ik_server this module starts in ``/six_axis`` with its bundled configuration. The
MCAP snippet reads ``demo.mcap`` "after ``make demo CYCLES=1``", so that command runs first
(with ``DEMO_ARGS=--no-lab``: the lab's fixed port 8080 may be taken by someone else's run).

``make demo`` runs ``make build`` first; ``make test`` has just built the workspace, and a
colcon build started from inside pytest would race other builds of the same ``build/``
folder, so the blocks' make runs with ``-o build`` (the recipe that follows is the README's
command as written). When the venv is stale (``make -n build`` would re-run
``tools/setup_venv.sh``, which deletes ``.venv``), those blocks are skipped with that reason.
"""

from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path
import re
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from arm_testing.bringup_harness import installed, read_launch_file
from arm_testing.readme_snippets import anchors, Block, documents, links, NameChecker, read_blocks

REPO = Path(__file__).resolve().parents[3]
DOCUMENTS = documents(REPO)
BLOCKS = [block for path in DOCUMENTS
          for block in read_blocks(path, path.relative_to(REPO).as_posix())]
# Chapters the README links that other branches bring (issues 37 and 38); a name leaves this
# list when its file exists.
PENDING_CHAPTERS: set[str] = set()
# What the scratch root holds: the built workspace and the files the documents' commands read.
ROOT_ENTRIES = ('.venv', 'install', 'build', 'src', 'requirements', 'tools', 'benchmarks',
                'Makefile', 'ruff.toml', 'README.md', 'docs')
# The README's pip route is written for Jazzy (.venv, install/). Under `make test
# ROS_WHEELS=kilted` the blocks run on the workspace this test runs in: the scratch root's
# .venv, install and build are Kilted's, and the inner make is not told ROS_WHEELS.
SUFFIX = Path(sys.prefix).name.removeprefix('.venv')
DISTRO_ENTRIES = {'.venv': f'.venv{SUFFIX}', 'install': f'install{SUFFIX}',
                  'build': f'build{SUFFIX}'}
BLOCK_TIMEOUT = 150.0   # s; the UR5 demo block takes 20-40 s, a loaded machine 2-3x
LINGER = 10.0           # s a block's background processes get to exit after it ended
LEFT_RUNNING = 'LEFT_RUNNING'
ERROR_LINE = re.compile(r'Traceback \(most recent call last\)|\[FATAL\]|\[ERROR\]|\bError:|'
                        r'^error:|command not found|No such file or directory|'
                        rf'^{LEFT_RUNNING} ', re.MULTILINE)
# What the README says a block prints (the comments beside its commands), keyed by a
# fragment of the block's text.
EXPECT = {
    'RobotDescription.from_node(node': (r'^home: True', r'^pose: True', r'^line: True',
                                        r'^ik: \['),
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
    # another terminal: its runner, started here and stopped when the script ends.
    'RobotDescription.from_node(node': (
        'import atexit, os, signal, subprocess, sys\n'
        "_move_group = subprocess.Popen([sys.executable, '-m', 'arm_bringup.move_group', "
        "'--arm', 'six_axis'], start_new_session=True, stdout=subprocess.DEVNULL, "
        'stderr=subprocess.DEVNULL)\n'
        'atexit.register(lambda: (os.killpg(_move_group.pid, signal.SIGINT), '
        '_move_group.wait(30)))\n'),
}
# Bash commands run (in the scratch root) before a block that reads their output.
NEEDS = {
    "decoded_messages('demo.mcap'": 'make demo CYCLES=1 DEMO_ARGS=--no-lab',
}

pytestmark = pytest.mark.skipif(not installed('arm_bringup'),
                                reason='the workspace is not built and sourced')


def by_kind(kind: str) -> list[Block]:
    return [block for block in BLOCKS if block.kind == kind]


def keyed(table: dict[str, object], block: Block) -> list[object]:
    return [value for key, value in table.items() if key in block.text]


def venv_is_stale() -> str:
    """Why the README's ``make`` would rebuild the shared venv, or '' when it would not."""
    plan = subprocess.run(['make', '-n', 'build'], cwd=REPO, capture_output=True, text=True,
                          check=False)
    return 'make build would re-run tools/setup_venv.sh (venv older than requirements)' \
        if 'setup_venv.sh' in plan.stdout else ''


# ---------------------------------------------------------------------- fixtures
@pytest.fixture(scope='module')
def graph():
    """One ik_server for six_axis in /six_axis on the module's private domain."""
    from arm_testing.ik_graph import ik_servers
    with ik_servers('six_axis') as graph:
        yield graph


@pytest.fixture(scope='module')
def live(graph) -> dict[str, dict]:
    """What the running ik_server offers: every service under its name, its parameters."""
    from rcl_interfaces.srv import ListParameters

    from arm_testing.ros_harness import call_service
    node_name = '/six_axis/ik_server'
    services = {name: types for name, types in graph.node.get_service_names_and_types()
                if name.startswith(node_name + '/')}
    client = graph.node.create_client(ListParameters, f'{node_name}/list_parameters')
    reply = call_service(client, ListParameters.Request(), lambda: graph.spin(0.05), 20.0)
    return {node_name: {'services': services, 'parameters': set(reply.result.names)}}


@pytest.fixture(scope='module')
def checker(live) -> NameChecker:
    from ament_index_python.packages import get_package_prefix
    return NameChecker(get_package_prefix, help_text, read_launch_file, live)


@functools.cache
def help_text(executable: str, words: tuple[str, ...]) -> str:
    """``EXE --help`` in the pip route, plus ``EXE SUB --help`` for a subcommand in words."""
    from arm_bringup.process_group import executable_path
    path = executable_path('arm_ik', executable)

    def run(*args: str) -> str:
        done = subprocess.run([path, *args, '--help'], capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 0, f'{executable} {" ".join(args)} --help:\n{done.stderr}'
        return done.stdout
    text = run()
    choices = re.search(r'\{([\w,-]+)\} \.\.\.', text)     # argparse's subcommands
    for word in words:
        if choices and word in choices.group(1).split(','):
            text += run(word)
    return text


class Terminal:
    """One user's terminal for one document: its bash blocks run in order in one scratch root,
    each seeing the variables the earlier ones set; every process a block leaves is stopped
    after it."""

    def __init__(self, root: Path, domain_id: int) -> None:
        self.root = root
        self.env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id),
                        ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', PYTHONUNBUFFERED='1')
        for name in ('ROS_LOCALHOST_ONLY', 'MAKEFLAGS', 'MAKELEVEL', 'MFLAGS', 'ROS_WHEELS'):
            self.env.pop(name, None)
        self.outcomes: dict[int, tuple[int | None, str]] = {}
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
                code, note = None, f'\n(timed out after {timeout:.0f} s)'
            left = self._members(process.pid, self.linger)
            if left and code is not None:
                note += f'\n{LEFT_RUNNING} {self.linger:.0f} s after the block ended: {left}'
            self._stop(process.pid)
            log.seek(0)
            return code, log.read() + note

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
        """Run ``block`` (and every earlier bash block first, once): (status, output)."""
        if block.line in self.outcomes:
            return self.outcomes[block.line]
        if block.lang == 'bash':
            for earlier in by_kind('run'):
                if earlier.doc == block.doc and earlier.lang == 'bash' and \
                        earlier.line < block.line and earlier.line not in self.outcomes:
                    self.block(earlier)
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


@pytest.fixture(scope='module')
def terminals(graph):
    """The terminal of a document (made when its first block runs): a scratch root of its own
    on the module's domain, where the six_axis ik_server answers."""
    made: dict[str, Terminal] = {}
    with contextlib.ExitStack() as stack:
        def terminal(doc: str) -> Terminal:
            if doc not in made:
                root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix='readme_')))
                for entry in ROOT_ENTRIES:
                    source = REPO / DISTRO_ENTRIES.get(entry, entry)
                    if source.exists():
                        (root / entry).symlink_to(source)
                made[doc] = Terminal(root, graph.claim.domain_id)
            return made[doc]
        yield terminal


# ---------------------------------------------------------------------- the blocks
def test_the_documents_have_blocks_of_each_kind():
    # A parser that finds nothing would pass every test below.
    kinds = {kind: len(by_kind(kind)) for kind in ('run', 'ros-only', 'not-run')}
    assert kinds['run'] >= 5 and kinds['ros-only'] >= 5 and kinds['not-run'] >= 1, kinds
    assert {block.lang for block in by_kind('run')} == {'bash', 'python'}
    assert {block.doc for block in BLOCKS} >= {'README.md', 'docs/own_arm.md'}


def test_every_link_between_the_documents_resolves():
    # A chapter moved or a heading renamed breaks the links to it: files and anchors exist.
    broken = []
    for path in DOCUMENTS:
        for target in links(path):
            name, _, anchor = target.partition('#')
            linked = (path.parent / name).resolve() if name else path
            if not linked.exists():
                if linked.relative_to(REPO).as_posix() not in PENDING_CHAPTERS:
                    broken.append(f'{path.relative_to(REPO)}: {target}: no such file')
            elif anchor and linked.suffix == '.md' and anchor not in anchors(linked):
                broken.append(f'{path.relative_to(REPO)}: {target}: no such heading')
    assert not broken, '\n'.join(broken)
    merged = sorted(name for name in PENDING_CHAPTERS if (REPO / name).exists())
    assert not merged, f'{merged} exist now: take them out of PENDING_CHAPTERS'


def test_every_package_keeps_a_ros_changelog():
    # REP-132 / catkin_generate_changelog: a ^^^ title, then "Forthcoming" (unreleased) and
    # "X.Y.Z (YYYY-MM-DD)" sections underlined with -, none above package.xml's version.
    import io
    import warnings

    from catkin_pkg.changelog import get_changelog_from_path
    from catkin_pkg.package import parse_package
    import docutils.core
    for xml in sorted((REPO / 'src').glob('*/package.xml')):
        package = parse_package(str(xml))
        path = xml.parent / 'CHANGELOG.rst'
        assert path.exists(), f'{path.relative_to(REPO)} is missing'
        text = path.read_text(encoding='utf-8')
        title = f'Changelog for package {package.name}'
        assert text.startswith(f'{"^" * len(title)}\n{title}\n{"^" * len(title)}\n'), path
        complaints = io.StringIO()
        docutils.core.publish_doctree(text, settings_overrides={
            'warning_stream': complaints, 'report_level': 1})
        assert not complaints.getvalue(), f'{path}: {complaints.getvalue()}'
        headings = re.findall(r'^(.+)\n(-+)$', text, re.MULTILINE)
        assert headings, path
        for heading, underline in headings:
            assert len(underline) == len(heading), f'{path}: {heading!r}'
            assert heading == 'Forthcoming' or \
                re.fullmatch(r'\d+\.\d+\.\d+ \(\d{4}-\d\d-\d\d\)', heading), f'{path}: {heading!r}'
        with warnings.catch_warnings():     # catkin_pkg 1.1 calls a deprecated docutils API
            warnings.simplefilter('ignore', DeprecationWarning)
            changelog = get_changelog_from_path(str(path))
        released = [version for version, _, _ in changelog.foreach_version()]
        assert len(released) == sum(heading != 'Forthcoming' for heading, _ in headings)
        assert all(tuple(map(int, version.split('.'))) <=
                   tuple(map(int, package.version.split('.'))) for version in released), path


@pytest.mark.parametrize('block', by_kind('run'), ids=lambda block: block.id)
def test_block_runs_as_written(terminals, block):
    if 'make ' in block.text or keyed(NEEDS, block):
        reason = venv_is_stale()
        if reason:
            pytest.skip(f'{block.id}: {reason}; not rebuilding the shared venv from a test')
    code, output = terminals(block.doc).block(block)
    found = problems(block, code, output)
    assert not found, '; '.join(found) + \
        f'\n{block.id} ({block.lang}):\n{block.text}\n--- output ---\n{output}'


def problems(block: Block, code: int | None, output: str) -> list[str]:
    """Why a block's run fails the README's promise: status, error lines, missing output."""
    found = [] if code == 0 else [f'exit status {code}']
    errors = [line for line in output.splitlines() if ERROR_LINE.search(line)]
    found += [f'error lines {errors}'] if errors else []
    found += [f'no {expected!r} in the output'
              for patterns in keyed(EXPECT, block) for expected in patterns
              if not re.search(expected, output, re.MULTILINE)]
    return found


@pytest.mark.parametrize('block', by_kind('ros-only'), ids=lambda block: block.id)
def test_ros_block_names_exist(checker, block):
    problems = [f'{" ".join(words)}\n    {problem}' for words in block.commands()
                if words[0] == 'ros2' or '$(' in ' '.join(words)
                for problem in checker.check(words)]
    assert not problems, f'{block.id}:\n' + '\n'.join(problems)


@pytest.mark.parametrize('block', by_kind('not-run'), ids=lambda block: block.id)
def test_not_run_block_names_make_targets(block):
    targets = [words[1] for words in block.commands() if words[0] == 'make' and len(words) > 1]
    assert targets, f'{block.id} ({block.reason}) runs no make target: mark it or run it'
    for target in targets:
        done = subprocess.run(['make', '-n', '-o', 'build', '-o', 'setup', target], cwd=REPO,
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, f'{block.id}: make {target}: {done.stderr}'


# ---------------------------------------------------------------------- the checks can fail
def test_the_name_checks_catch_wrong_names(checker):
    wrong = {
        'ros2 run arm_ik no_such_node': 'is not installed',
        'ros2 run arm_ik ik_client --arm six_axis --no-such-option 1': 'not in its --help',
        'ros2 launch arm_bringup arm.launch.py arm:=ccd5 no_such_arg:=1': 'not a declared',
        'ros2 launch arm_bringup no_such.launch.py': 'is not installed',
        'ros2 service call /six_axis/ik_server/ik/DLS arm_interfaces/srv/SolveIK':
            'offers no service',
        'ros2 service call /six_axis/ik_server/ik/dls arm_interfaces/srv/SolveIK '
        '"{target: {pose: {place: {x: 1.0}}}}"': 'no such field',
        'ros2 service call /ccd5/target_input/run_cycles std_srvs/srv/Trigger':
            'creates no service',
        'ros2 service call /ccd5/target_input/run_cycle std_srvs/srv/Trigger2':
            'no such interface',
        'ros2 param set /ccd5/safety_monitor obstacle_size 0.1': 'declares no parameter',
        'ros2 run arm_ik ik_server --ros-args -r __ns:=/six_axis -p solver:=dls':
            'declares no parameter',
        'ros2 topic echo /ccd5/target_state': 'publishes',
        'ros2 bag record -a': 'no name check',
    }
    for command, problem in wrong.items():
        words = next(iter(Block('bash', 0, command, 'ros-only', '').commands()))
        found = checker.check(words)
        assert any(problem in text for text in found), f'{command}: {found}'


def test_a_failing_block_is_caught(terminals):
    terminal = terminals('(probe)')     # a terminal of its own: the documents' stay clean
    # The judgement of test_block_runs_as_written on outcomes that must fail it.
    block = Block('python', 0, 'print(checker.check(arm.home).message)  # CollisionChecker(',
                  'run', '')
    assert problems(block, 0, 'collision: a–b (-1.0 mm)\n') == []
    assert problems(block, 1, 'collision: a–b\n') == ['exit status 1']
    assert problems(block, None, 'collision: a–b\n') == ['exit status None']
    assert problems(block, 0, 'clear\n') == ["no '^collision: ' in the output"]
    for line in ('Traceback (most recent call last):', '[FATAL] [1.0] [x]: y', 'Error: z',
                 'bash: ik_clinet: command not found'):
        assert problems(block, 0, f'collision: a\n{line}\n') == [f'error lines {[line]}']
    # bash -e stops at the first failing command; variables reach the next block of the
    # same document, never another document's (nor do its files); what a block writes stays
    # in the scratch root.
    assert terminal.run_shell('false\necho after')[0] == 1
    assert terminal.run_shell('README_PROBE=$PWD/probe.txt\necho 1 > probe.txt')[0] == 0
    other = terminals('(another probe)')
    code, output = other.run_shell('echo "[$README_PROBE]"; ls probe.txt')
    assert code != 0 and output.startswith('[]'), output
    code, output = terminal.run_shell('cat "$README_PROBE"; rm "$README_PROBE"')
    assert (code, output.strip()) == (0, '1'), output
    assert not (REPO / 'probe.txt').exists()
    # A node a block starts in the background and fails to stop is reported.
    terminal.linger = 1.0
    try:
        code, output = terminal.run_shell('sleep 60 &')
    finally:
        terminal.linger = LINGER
    found = problems(block, code, 'collision: a\n' + output)
    assert code == 0 and len(found) == 1 and LEFT_RUNNING in found[0], found
    assert 'sleep 60' in found[0], found
