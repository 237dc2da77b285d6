"""What a launch file names, read from its syntax tree (launch itself is not importable here).

``read_launch_file`` collects every ``Node(...)`` (package and executable, also when the
executable is the parameter of a local helper such as ``arm_ik_node('ik_server')``), every
``DeclareLaunchArgument(...)`` and every file name written as a literal or an f-string.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

FILE_SUFFIXES = ('.yaml', '.rviz', '.xacro', '.launch.py')


def installed(package: str) -> bool:
    """``package`` is in the ament index (the workspace is built and sourced)."""
    try:
        from ament_index_python.packages import get_package_prefix
        get_package_prefix(package)
        return True
    except (ImportError, LookupError, KeyError):
        return False


@dataclass
class Argument:
    """A DeclareLaunchArgument: name, description, choices (None: open), default."""

    name: str
    description: str | None
    choices: list[str] | None
    default: str | None


@dataclass
class LaunchFile:
    """Everything a launch file names."""

    path: Path
    nodes: list[tuple[str, str]] = field(default_factory=list)    # (package, executable)
    arguments: list[Argument] = field(default_factory=list)
    files: list[str] = field(default_factory=list)                # may hold '{name}' fields
    # PathJoinSubstitution([FindPackageShare('<pkg>'), 'a', f'{arm}.b']) -> (pkg, 'a/{arm}.b')
    share_paths: list[tuple[str, str]] = field(default_factory=list)
    constants: dict[str, object] = field(default_factory=dict)    # module-level literals


def _name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else \
        func.attr if isinstance(func, ast.Attribute) else ''


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _literal(node: ast.expr | None, constants: dict[str, object]) -> object:
    """The value of a literal, a module constant, or list(<constant dict>)."""
    if node is None:
        return None
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.Call) and _name(node) == 'list' and node.args:
        value = _literal(node.args[0], constants)
        return list(value) if value is not None else None
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def _template(node: ast.JoinedStr) -> str:
    """An f-string as a template: f'{arm}.yaml' -> '{arm}.yaml'."""
    parts = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(str(value.value))
        else:
            parts.append('{' + ast.unparse(value.value) + '}')
    return ''.join(parts)


def read_launch_file(path: Path) -> LaunchFile:
    tree = ast.parse(path.read_text(encoding='utf-8'), filename=str(path))
    found = LaunchFile(path)
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and \
                isinstance(statement.targets[0], ast.Name):
            try:
                found.constants[statement.targets[0].id] = ast.literal_eval(statement.value)
            except ValueError:
                pass
    helpers = _node_helpers(tree)
    # The literal pieces of an f-string are read with the f-string, not alone.
    pieces = {id(value) for joined in ast.walk(tree) if isinstance(joined, ast.JoinedStr)
              for value in joined.values}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _name(node)
            if name == 'Node':
                package = _literal(_keyword(node, 'package'), found.constants)
                executable = _literal(_keyword(node, 'executable'), found.constants)
                if isinstance(package, str) and isinstance(executable, str):
                    found.nodes.append((package, executable))
            elif name in helpers:
                package, index, parameter = helpers[name]
                argument = node.args[index] if len(node.args) > index else \
                    _keyword(node, parameter)
                executable = _literal(argument, found.constants)
                if isinstance(executable, str):
                    found.nodes.append((package, executable))
            elif name == 'PathJoinSubstitution':
                resolved = _share_path(node, found.constants)
                if resolved is not None:
                    found.share_paths.append(resolved)
            elif name == 'DeclareLaunchArgument':
                found.arguments.append(Argument(
                    str(_literal(node.args[0] if node.args else _keyword(node, 'name'),
                                 found.constants)),
                    _literal(_keyword(node, 'description'), found.constants),
                    _literal(_keyword(node, 'choices'), found.constants),
                    _literal(_keyword(node, 'default_value'), found.constants)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                node.value.endswith(FILE_SUFFIXES) and ' ' not in node.value and \
                id(node) not in pieces:
            found.files.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            template = _template(node)
            if template.endswith(FILE_SUFFIXES):
                found.files.append(template)
    return found


def _share_path(call: ast.Call, constants: dict[str, object]) -> tuple[str, str] | None:
    """(package, relative path template) of a PathJoinSubstitution that starts with
    FindPackageShare('<literal>') and continues with literals and f-strings, else None."""
    if not call.args or not isinstance(call.args[0], ast.List):
        return None
    first, *rest = call.args[0].elts
    if not (isinstance(first, ast.Call) and _name(first) == 'FindPackageShare' and first.args):
        return None
    package = _literal(first.args[0], constants)
    parts = []
    for element in rest:
        if isinstance(element, ast.JoinedStr):
            parts.append(_template(element))
        else:
            value = _literal(element, constants)
            if not isinstance(value, str):
                return None
            parts.append(value)
    return (package, '/'.join(parts)) if isinstance(package, str) and parts else None


def _node_helpers(tree: ast.Module) -> dict[str, tuple[str, int, str]]:
    """Local functions that build a Node from a parameter: name -> (package, position of the
    executable parameter, its name)."""
    helpers = {}
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        parameters = [a.arg for a in function.args.args]
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and _name(node) == 'Node':
                package = _keyword(node, 'package')
                executable = _keyword(node, 'executable')
                if isinstance(package, ast.Constant) and isinstance(executable, ast.Name) \
                        and executable.id in parameters:
                    helpers[function.name] = (package.value, parameters.index(executable.id),
                                              executable.id)
    return helpers
