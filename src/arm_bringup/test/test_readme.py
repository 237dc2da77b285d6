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

The terminal, the judgement and the tables (``EXPECT``, ``PRELUDES``, ``NEEDS``) are
``arm_testing.readme_terminal``'s. The run blocks of a few long chapters are checked by the
``test_docs_*.py`` modules beside this one (``SHARES``), so that `make test`'s parallel
workers run them at the same time as this module's.
"""

from __future__ import annotations

import functools
from pathlib import Path
import re
import subprocess
import sys

import pytest

from arm_testing.bringup_harness import installed, read_launch_file
from arm_testing.readme_snippets import anchors, Block, documents, links, NameChecker
from arm_testing.readme_terminal import (
    check_block_runs,
    document_blocks,
    LEFT_RUNNING,
    LINGER,
    problems,
    share_of,
    SHARES,
)
from arm_testing.readme_terminal import terminals as readme_terminals

REPO = Path(__file__).resolve().parents[3]
DOCUMENTS = documents(REPO)
BLOCKS = document_blocks(REPO)
# Chapters the README links that other branches bring (issues 37 and 38); a name leaves this
# list when its file exists.
PENDING_CHAPTERS: set[str] = set()
pytestmark = pytest.mark.skipif(not installed('arm_bringup'),
                                reason='the workspace is not built and sourced')


def by_kind(kind: str) -> list[Block]:
    return [block for block in BLOCKS if block.kind == kind]


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


@pytest.fixture(scope='module')
def terminals(graph):
    """The terminal of a document: a scratch root of its own on the module's domain, where the
    six_axis ik_server answers."""
    with readme_terminals(REPO, graph.claim.domain_id, BLOCKS) as terminal_of:
        yield terminal_of


# ---------------------------------------------------------------------- the blocks
def test_the_documents_have_blocks_of_each_kind():
    # A parser that finds nothing would pass every test below.
    kinds = {kind: len(by_kind(kind)) for kind in ('run', 'ros-only', 'not-run')}
    assert kinds['run'] >= 5 and kinds['ros-only'] >= 5 and kinds['not-run'] >= 1, kinds
    assert {block.lang for block in by_kind('run')} == {'bash', 'python'}
    assert {block.doc for block in BLOCKS} >= {'README.md', 'docs/own_arm.md'}


def test_every_run_block_is_run_by_one_module():
    # SHARES hands documents to other modules (parallel workers); a misspelt module or
    # document would silently run nothing.
    here = Path(__file__).parent
    for module, docs in SHARES.items():
        assert (here / f'{module}.py').exists(), f'SHARES names {module}.py, which is missing'
        for doc in docs:
            assert any(block.doc == doc for block in by_kind('run')), \
                f'{module}: {doc} has no run block'
    shares = ['test_readme', *SHARES]
    runs = [block.id for module in shares for block in share_of(module, BLOCKS)]
    assert sorted(runs) == sorted(block.id for block in by_kind('run'))


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


@pytest.mark.parametrize('block', share_of('test_readme', BLOCKS), ids=lambda block: block.id)
def test_block_runs_as_written(terminals, block):
    check_block_runs(terminals, block, REPO)


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
    # A block that hangs is stopped with where its processes were: ps's listing and, from
    # SIGABRT with PYTHONFAULTHANDLER, its Python threads' stacks.
    code, output = terminal.run_shell(f'{sys.executable} -c "import time; time.sleep(60)"',
                                      timeout=3.0)
    assert code is None and 'timed out after 3 s' in output, output
    assert 'time.sleep(60)' in output and 'File "<string>", line 1 in <module>' in output, output
    # A block that failed runs again when its test asks again (the suite's rerun), so that
    # a rerun is not the first outcome replayed; one that passed runs once.
    second_run_passes = Block('bash', 10**6, 'echo run >> runs.txt\n'
                              'test "$(wc -l < runs.txt)" -ge 2', 'run', '', '(probe)')
    assert [terminal.block(second_run_passes)[0] for _ in range(3)] == [1, 0, 0]
    assert terminal.run_shell('wc -l < runs.txt')[1].strip() == '2'
