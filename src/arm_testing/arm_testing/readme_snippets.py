"""The README's and the docs/ chapters' fenced snippets, how each one is checked, and the name
checks of ROS commands.

A new user types the commands of README.md and of every chapter ``docs/*.md`` as written
(``documents``), so every ```bash and ```python block is one of three kinds, decided by the
rules below (``classify``) or by an HTML comment on the line just before its fence:

- ``run``: works in the pip route (``.venv`` + ``install/``) and is run by test_readme.py;
- ``ros-only``: needs a ROS install (``ros2 ...``, ``/opt/ros``, ``rosdep``, ``docker``,
  ``apt``); every ``ros2`` command in it is checked against what the workspace installs;
- ``not-run``: cannot run inside a test (``make test`` would run this test again, ``make
  bench`` takes many minutes, ``make demo`` without ``CYCLES=`` never ends); the make targets
  it names must exist.

Markers: ``<!-- readme: run -->``, ``<!-- readme: ros-only -->``, ``<!-- readme: not-run
(reason) -->``. A marker overrides the rules; an unknown marker is an error, so a typo cannot
silently turn a check off.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import re
import shlex

KINDS = ('run', 'ros-only', 'not-run')
MARKER = re.compile(r'^\s*<!--\s*readme:\s*(?P<kind>[\w-]+)\s*(?P<reason>\(.*\))?\s*-->\s*$')
FENCE = re.compile(r'^```(?P<lang>\w*)\s*$')
# A line that needs a ROS install (or a container / system package manager) to run.
ROS_LINE = re.compile(r'^\s*(?:ros2 |source /opt/ros|rosdep |docker |sudo apt |apt(?:-get)? )')
# make targets that cannot run inside a test: recursive (test), long (bench), endless demo.
RECURSIVE_MAKE = re.compile(r'^\s*make (?:test|bench)\b')
ENDLESS_DEMO = re.compile(r'^\s*make demo\b(?!.*\bCYCLES=\d)')


@dataclass(frozen=True)
class Block:
    """One fenced block: its language, its first code line's number (1-based), its text, and
    the document it is in (its path from the repository root)."""

    lang: str
    line: int
    text: str
    kind: str
    reason: str
    doc: str = 'README.md'

    @property
    def id(self) -> str:
        return f'{self.doc}:{self.line}'

    def commands(self) -> list[list[str]]:
        """The block's shell commands as argument lists: continuation lines joined, comments
        dropped, split at ``&&``, ``;`` and ``|``; ``$(...)`` kept as one word."""
        joined = re.sub(r'\\\n\s*', ' ', self.text)
        found = []
        for line in joined.splitlines():
            words: list[str] = []
            for word in _split(line):
                if word in {'&&', ';', '|', '||', '&'}:
                    if words:
                        found.append(words)
                    words = []
                else:
                    words.append(word)
            if words:
                found.append(words)
        return found


def _split(line: str) -> list[str]:
    """shlex splits ``$(ros2 pkg prefix x)`` apart; hide each substitution (nested ones
    included) behind a placeholder, split, and put them back."""
    hidden: list[str] = []
    text = line
    while True:
        match = re.search(r'\$\([^()]*\)', text)
        if match is None:
            break
        hidden.append(match.group(0))
        text = text[:match.start()] + f'\0{len(hidden) - 1}\0' + text[match.end():]
    lexer = shlex.shlex(text, posix=True, punctuation_chars=';&|')
    lexer.whitespace_split = True
    lexer.commenters = '#'

    def restore(word: str) -> str:
        while '\0' in word:
            word = re.sub(r'\0(\d+)\0', lambda m: hidden[int(m.group(1))], word)
        return word
    return [restore(word) for word in lexer]


def classify(lang: str, text: str) -> tuple[str, str]:
    """(kind, reason) of a block without a marker."""
    lines = text.splitlines()
    if lang == 'bash':
        if any(ROS_LINE.match(line) for line in lines):
            return 'ros-only', 'needs a ROS install'
        if any(RECURSIVE_MAKE.match(line) for line in lines):
            return 'not-run', 'make test runs this test; make bench takes minutes'
        if any(ENDLESS_DEMO.match(line) for line in lines):
            return 'not-run', 'make demo without CYCLES= runs until Ctrl-C'
    return 'run', ''


def _indented_block(lines: list[str], index: int) -> list[str]:
    """The lines of a Markdown indented code block starting at ``index`` (after a blank
    line, every line indented by four spaces), else []."""
    if index == 0 or lines[index - 1].strip() or not lines[index].startswith('    '):
        return []
    end = index
    while end < len(lines) and (lines[end].startswith('    ') or not lines[end].strip()):
        end += 1
    while end > index and not lines[end - 1].strip():
        end -= 1
    return lines[index:end]


def documents(repo: Path) -> list[Path]:
    """The documents whose blocks are a contract: README.md, then docs/*.md by name."""
    return [repo / 'README.md', *sorted((repo / 'docs').glob('*.md'))]


def read_blocks(path: Path, doc: str = '') -> list[Block]:
    """Every ```bash and ```python block of ``path``, and every indented code block (read as
    shell: a chapter indents a command inside a sentence); other fences (plain text) are
    read past. ``doc`` names the document in block ids and errors (default: the file name).
    An unclosed fence or an unknown marker raises ValueError."""
    doc = doc or path.name
    lines = path.read_text(encoding='utf-8').splitlines()
    blocks = []
    index = 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if fence is None:
            indented = _indented_block(lines, index)
            if indented:
                text = '\n'.join(line[4:] for line in indented) + '\n'
                blocks.append(Block('bash', index + 1, text, *classify('bash', text), doc))
                index += len(indented)
            else:
                index += 1
            continue
        end = next((i for i in range(index + 1, len(lines)) if lines[i].startswith('```')),
                   None)
        if end is None:
            raise ValueError(f'{doc}:{index + 1}: fence never closed')
        lang = fence.group('lang')
        text = '\n'.join(lines[index + 1:end]) + '\n'
        if lang in ('bash', 'python'):
            marker = MARKER.match(lines[index - 1]) if index else None
            if marker is not None:
                kind = marker.group('kind')
                if kind not in KINDS:
                    raise ValueError(f'{doc}:{index}: unknown marker kind {kind!r}')
                reason = (marker.group('reason') or '()')[1:-1]
            elif index and '<!--' in lines[index - 1] and 'readme' in lines[index - 1]:
                raise ValueError(f'{doc}:{index}: malformed marker {lines[index - 1]!r}')
            else:
                kind, reason = classify(lang, text)
            blocks.append(Block(lang, index + 2, text, kind, reason, doc))
        index = end + 1
    return blocks


# ---------------------------------------------------------------------- name checks
NODES_DIR = Path(__file__).resolve().parents[2] / 'arm_ik' / 'arm_ik' / 'nodes'
SUBSTITUTION = re.compile(r'\$\((?P<command>[^()]*)\)')


def _strings(path: Path) -> set[str]:
    """Every string literal of a module, f-strings as templates with ``{}`` fields."""
    import ast
    tree = ast.parse(path.read_text(encoding='utf-8'))
    found = set()
    pieces = {id(value) for joined in ast.walk(tree) if isinstance(joined, ast.JoinedStr)
              for value in joined.values}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                id(node) not in pieces:
            found.add(node.value)
        elif isinstance(node, ast.JoinedStr):
            found.add(''.join(str(v.value) if isinstance(v, ast.Constant) else '{}'
                              for v in node.values))
    return found


def node_strings(executable: str) -> set[str]:
    """The literals of a node's module and of every ``arm_ik.nodes`` module it imports
    (transitively): where its service, topic and parameter names are written."""
    seen: set[Path] = set()
    todo = [NODES_DIR / f'{executable}.py']
    found: set[str] = set()
    while todo:
        path = todo.pop()
        if path in seen or not path.exists():
            continue
        seen.add(path)
        text = path.read_text(encoding='utf-8')
        found |= _strings(path)
        todo += [NODES_DIR / f'{name}.py'
                 for name in re.findall(r'^from arm_ik\.nodes\.(\w+) import', text, re.M)]
    if not seen:
        raise FileNotFoundError(f'no node source {NODES_DIR / executable}.py')
    return found


def names_in_sources(name: str, literals: set[str]) -> bool:
    """``name`` (a relative name such as ``run_cycle`` or ``ik/dls``) is what one literal
    makes: ``'~/run_cycle'``, ``'run_cycle'``, or a template ``f'~/ik/{name}'``."""
    for literal in literals:
        if not re.sub(r'[{}~/]', '', literal):
            continue          # f'{name}' alone says nothing about which names exist
        pattern = re.escape(literal.removeprefix('~/').lstrip('/')).replace(r'\{\}', '[^/]+')
        if re.fullmatch(pattern, name):
            return True
    return False


def interface_type(name: str):
    """The Python class of ``pkg/srv/Name``, ``pkg/action/Name`` or ``pkg/msg/Name``."""
    import importlib
    package, kind, type_name = name.split('/')
    return getattr(importlib.import_module(f'{package}.{kind}'), type_name)


def fill_fields(message, values: dict, where: str = '') -> list[str]:
    """Set ``values`` (a ros2 CLI YAML request) on ``message``; the names no field has."""
    problems = []
    fields = message.get_fields_and_field_types()
    for key, value in values.items():
        if key not in fields:
            problems.append(f'{where}{key}: no such field (fields: {", ".join(fields)})')
        elif isinstance(value, dict):
            problems += fill_fields(getattr(message, key), value, f'{where}{key}.')
        else:
            try:
                setattr(message, key, float(value) if fields[key] == 'double' else value)
            except (AssertionError, TypeError, ValueError) as error:
                problems.append(f'{where}{key}: {value!r} refused ({error})')
    return problems


class NameChecker:
    """Checks a ``ros2`` command's names against the installed workspace.

    ``prefix(package)`` gives an installed package's prefix (raises when it is not);
    ``help_text(executable, words)`` the ``--help`` of a pip-route executable (and of its
    subcommand); ``live`` maps a fully qualified node name to what a running copy of it
    offers ({'services': {name: [types]}, 'parameters': {names}}); nodes not in ``live`` are
    checked against the literals of their sources.
    """

    def __init__(self, prefix, help_text, read_launch_file, live: dict[str, dict]) -> None:
        self.prefix = prefix
        self.help_text = help_text
        self.read_launch_file = read_launch_file
        self.live = live

    def check(self, words: list[str]) -> list[str]:
        """Problems of one command (empty: every name it uses exists)."""
        if words[:1] != ['ros2']:
            return [problem for word in words for problem in self.substitutions(word)]
        verb = tuple(words[1:3])
        if verb[:1] == ('run',):
            return self.run(words[2], words[3], words[4:])
        if verb[:1] == ('launch',):
            return self.launch(words[2], words[3], words[4:])
        if verb in (('service', 'call'), ('action', 'send_goal')):
            rest = [word for word in words[3:] if not word.startswith('--')]
            return self.call(verb[0], *rest)
        if verb == ('topic', 'echo'):
            # the name: absolute in the README, after options such as --qos-durability X
            return self.topic(next((word for word in words[3:] if word.startswith('/')),
                                   words[-1]))
        if verb in (('param', 'set'), ('param', 'get')):
            return self.parameter(words[3], words[4])
        return [f'no name check for {" ".join(words[:3])!r}: extend readme_snippets.py']

    def substitutions(self, word: str) -> list[str]:
        """``$(ros2 pkg prefix P)`` names an installed package; a path built on it exists;
        ``$(xacro PATH)`` expands an existing file."""
        problems = []
        for match in SUBSTITUTION.finditer(word):
            command = match.group('command').split()
            if command[:3] == ['ros2', 'pkg', 'prefix']:
                try:
                    self.prefix(command[3])
                except (LookupError, KeyError):
                    problems.append(f'package {command[3]} is not installed')
        resolved = word
        while SUBSTITUTION.search(resolved):
            resolved = SUBSTITUTION.sub(self._resolve, resolved)
        for path in re.findall(r'(/[^\s"\'$]*\.(?:ya?ml|xacro|urdf))(?![\w.])', resolved):
            if not path.startswith('$') and not Path(path).exists():
                problems.append(f'{path}: no such file')
        return problems

    def _resolve(self, match: re.Match) -> str:
        command = match.group('command').split()
        if command[:3] == ['ros2', 'pkg', 'prefix']:
            try:
                return self.prefix(command[3])
            except (LookupError, KeyError):
                return '$missing'
        if command[:1] == ['xacro'] and len(command) > 1:
            return command[1] if Path(command[1]).exists() else f'{command[1]}.missing.xacro'
        return '$unknown'

    def run(self, package: str, executable: str, args: list[str]) -> list[str]:
        path = Path(self.prefix(package)) / 'lib' / package / executable
        if not path.exists():
            return [f'{package}/{executable} is not installed ({path})']
        problems = [p for word in args for p in self.substitutions(word)]
        ros_args = args[args.index('--ros-args') + 1:] if '--ros-args' in args else []
        own = args[:len(args) - len(ros_args) - (1 if ros_args else 0)]
        options = [word.split('=')[0] for word in own if word.startswith('--')]
        if options:
            text = self.help_text(executable, tuple(own))
            problems += [f'{executable}: option {option} is not in its --help'
                         for option in options if not re.search(
                             rf'(?<![\w-]){re.escape(option)}(?![\w-])', text)]
        namespace = ''
        for flag, value in zip(ros_args, ros_args[1:]):
            if flag == '-r' and value.startswith('__ns:='):
                namespace = value.split(':=', 1)[1]
        for flag, value in zip(ros_args, ros_args[1:]):
            if flag == '-p':
                name = value.split(':=', 1)[0]
                problems += self.parameter(f'{namespace}/{executable}', name)
        return problems

    def launch(self, package: str, file_name: str, args: list[str]) -> list[str]:
        path = Path(self.prefix(package)) / 'share' / package / 'launch' / file_name
        if not path.exists():
            return [f'{package}/{file_name} is not installed ({path})']
        declared = {argument.name for argument in self.read_launch_file(path).arguments}
        return [f'{file_name}: {word.split(":=")[0]} is not a declared argument '
                f'({", ".join(sorted(declared))})'
                for word in args if ':=' in word and word.split(':=')[0] not in declared]

    def call(self, kind: str, name: str, type_name: str, request: str = '{}') -> list[str]:
        import yaml
        problems = []
        try:
            interface = interface_type(type_name)
        except (ImportError, AttributeError, ValueError) as error:
            return [f'{type_name}: no such interface ({error})']
        message = interface.Request() if kind == 'service' else interface.Goal()
        problems += fill_fields(message, yaml.safe_load(request) or {})
        parts = name.strip('/').split('/')
        for cut in range(len(parts) - 1, 0, -1):
            node = '/' + '/'.join(parts[:cut])
            relative = '/'.join(parts[cut:])
            if node in self.live:
                types = self.live[node]['services'].get(name)
                if types is None:
                    problems.append(f'{node} offers no {kind} {name} (it offers '
                                    f'{", ".join(sorted(self.live[node]["services"]))})')
                elif type_name not in types:
                    problems.append(f'{name} is a {types}, not a {type_name}')
                return problems
            executable = parts[cut - 1]
            if (NODES_DIR / f'{executable}.py').exists():
                if not names_in_sources(relative, node_strings(executable)):
                    problems.append(f'{executable} creates no {kind} {relative!r}')
                return problems
        return problems + [f'{name}: no node of arm_ik in its path']

    def topic(self, name: str) -> list[str]:
        relative = name.rsplit('/', 1)[-1]
        if any(names_in_sources(relative, node_strings(path.stem))
               for path in NODES_DIR.glob('*.py')):
            return []
        return [f'no node of arm_ik publishes {relative!r}']

    def parameter(self, node: str, name: str) -> list[str]:
        if node in self.live:
            declared = self.live[node]['parameters']
            return [] if name in declared else \
                [f'{node} declares no parameter {name} ({", ".join(sorted(declared))})']
        executable = node.rsplit('/', 1)[-1]
        return [] if name in node_strings(executable) else \
            [f'{executable} declares no parameter {name!r}']


# ---------------------------------------------------------------------- links between documents
LINK = re.compile(r'\[[^\]]*\]\((?P<target>[^)\s]+)\)')


def _prose(lines: list[str]) -> list[str]:
    """The lines outside fenced blocks (a ``#`` comment in a block is not a heading)."""
    kept, fenced = [], False
    for line in lines:
        if line.startswith('```'):
            fenced = not fenced
        elif not fenced:
            kept.append(line)
    return kept


def anchors(path: Path) -> set[str]:
    """The anchors GitHub makes of a Markdown file's headings: lower case, punctuation but
    ``-`` and ``_`` dropped, spaces made ``-``."""
    lines = _prose(path.read_text(encoding='utf-8').splitlines())
    return {re.sub(r'[^\w\- ]', '', line.lstrip('#').strip().lower()).replace(' ', '-')
            for line in lines if re.match(r'#{1,6} ', line)}


def links(path: Path) -> list[str]:
    """The relative link targets of a Markdown file (``other.md#anchor``, ``#anchor``,
    ``image.png``); web addresses are left out."""
    text = '\n'.join(_prose(path.read_text(encoding='utf-8').splitlines()))
    return [match.group('target') for match in LINK.finditer(text)
            if not re.match(r'[a-z]+:', match.group('target'))]
