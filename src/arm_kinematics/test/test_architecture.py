"""The core's shape, kept by tests: layers import downwards only, no module imports in a
circle, no ROS anywhere in it, no generated code run with exec (docs/ARCHITECTURE.md).

Imports are read from the source (an AST walk), so an import inside a function or under
``if TYPE_CHECKING:`` counts like any other: each is a dependency a reader has to follow.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2]
CORE = SRC / 'arm_kinematics' / 'arm_kinematics'
# Lowest first: a module may import its own layer and the layers before it, never after.
LAYERS = ('common', 'model', 'description', 'scene', 'ik', 'arm', 'motion', 'control',
          'tasks', 'visual', 'analysis', 'moveit', 'front')
# Nothing of ROS, nor of the packages built on the core, may be imported by it.
FORBIDDEN = ('rclpy', 'arm_ik', 'arm_interfaces', 'arm_bringup', 'arm_testing', 'launch',
             'std_msgs', 'sensor_msgs', 'geometry_msgs', 'trajectory_msgs',
             'visualization_msgs', 'builtin_interfaces', 'action_msgs', 'control_msgs')


def _package_modules() -> dict[str, Path]:
    """Every module under src/<package>/<package>/, by its dotted name."""
    modules = {}
    for package in sorted(p for p in SRC.iterdir() if (p / p.name).is_dir()):
        for path in sorted((package / package.name).rglob('*.py')):
            parts = list(path.relative_to(package).with_suffix('').parts)
            if parts[-1] == '__init__':
                parts.pop()
            modules['.'.join(parts)] = path
    return modules


MODULES = _package_modules()
CORE_MODULES = sorted(name for name in MODULES if name.startswith('arm_kinematics'))


def _imports(name: str, path: Path) -> set[str]:
    """Dotted names ``name`` imports (relative imports resolved), functions included."""
    package = name if path.name == '__init__.py' else name.rpartition('.')[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                anchor = package.split('.')[:len(package.split('.')) - node.level + 1]
                base = '.'.join(anchor + ([node.module] if node.module else []))
            # `from package import module` depends on that module, not on the package.
            for alias in node.names:
                candidate = f'{base}.{alias.name}'
                found.add(candidate if candidate in MODULES else base)
    return found


def _graph() -> dict[str, set[str]]:
    graph = {}
    for name, path in MODULES.items():
        deps = set()
        for imported in _imports(name, path):
            # The module itself, else its nearest package that is ours.
            parts = imported.split('.')
            while parts and '.'.join(parts) not in MODULES:
                parts.pop()
            if parts and '.'.join(parts) != name:
                deps.add('.'.join(parts))
        graph[name] = deps
    return graph


def _layer(name: str) -> int:
    parts = name.split('.')
    return LAYERS.index(parts[1]) if len(parts) > 1 else len(LAYERS)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_core_module_sits_in_a_layer():
    stray = [name for name in CORE_MODULES
             if name.count('.') >= 1 and name.split('.')[1] not in LAYERS]
    assert not stray, f'modules outside the layers of docs/ARCHITECTURE.md: {stray}'


def test_no_import_circles_anywhere_in_src():
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_circle():
    assert _cycles({'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}) == [['a', 'b', 'c']]


def test_core_layers_import_downwards_only():
    graph = _graph()
    upward = [f'{name} ({LAYERS[_layer(name)]}) imports {dep} ({LAYERS[_layer(dep)]})'
              for name in CORE_MODULES for dep in sorted(graph[name])
              if dep.startswith('arm_kinematics.') and _layer(dep) > _layer(name)]
    assert not upward, '\n'.join(upward)


@pytest.mark.parametrize('name', CORE_MODULES)
def test_core_imports_nothing_of_ros(name):
    imported = _imports(name, MODULES[name])
    assert not [i for i in imported if i.split('.')[0] in FORBIDDEN]


@pytest.mark.parametrize('name', CORE_MODULES)
def test_no_generated_code_is_executed(name):
    calls = [node.func.id for node in ast.walk(ast.parse(MODULES[name].read_text()))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
             and node.func.id in ('exec', 'eval', 'compile')]
    assert not calls


# The names a config may give (common.names) are exactly the ones the registries hold.
def test_the_configs_objectives_are_the_solvers_objectives():
    from arm_kinematics.common.names import OBJECTIVE_NAMES
    from arm_kinematics.ik.objectives import OBJECTIVES
    assert OBJECTIVE_NAMES == OBJECTIVES


def test_the_configs_solver_names_are_the_registered_solvers():
    from arm_kinematics.common.names import SOLVER_NAMES
    from arm_kinematics.ik.solvers import SOLVERS
    assert sorted(SOLVER_NAMES) == sorted(SOLVERS)


def test_the_configs_path_planners_are_the_registered_planners():
    from arm_kinematics.common.names import PATH_PLANNERS
    from arm_kinematics.motion.planning.registry import PLANNERS
    assert sorted(PATH_PLANNERS) == sorted(PLANNERS)


# About 600 lines: a module a reader can hold in mind (docs/ARCHITECTURE.md).
MAX_MODULE_LINES = 650


@pytest.mark.parametrize('name', sorted(MODULES))
def test_no_module_is_over_about_600_lines(name):
    lines = len(MODULES[name].read_text(encoding='utf-8').splitlines())
    assert lines <= MAX_MODULE_LINES, f'{name}: {lines} lines'
