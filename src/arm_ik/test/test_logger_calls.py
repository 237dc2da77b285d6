"""rclpy loggers are called with ``warning``, never ``warn``, anywhere in the project.

On Kilted (rclpy 9.1) ``RcutilsLogger.warn`` is a ``typing_extensions.deprecated`` wrapper.
rclpy keys a logging call's filters (throttle, once, skip_first) by the first frame outside
rclpy, which is then the wrapper's own frame for every ``warn`` call of the process: the
first call's filters bind them all, and a later call with other filters raises ValueError
("Requested logging filters cannot be changed between calls"). The trajectory executor died
that way on its first emergency stop after any unthrottled warning (issue 28). ``warning``
exists on Jazzy and Kilted alike.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FOLDERS = ('src', 'benchmarks', 'tools')
SKIPPED = ('build', 'install', 'log')     # colcon's output folders, and build-kilted etc.


def _warn_calls(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding='utf-8'))
    return [f'{path.relative_to(ROOT)}:{node.lineno}' for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == 'warn'
            and not (isinstance(node.func.value, ast.Name) and node.func.value.id == 'warnings')]


def test_no_logger_warn_calls():
    paths = [path for folder in FOLDERS for path in sorted((ROOT / folder).rglob('*.py'))
             if not any(part in SKIPPED or part.startswith(('build-', 'install-', 'log-', '.'))
                        for part in path.relative_to(ROOT).parts)]
    assert paths
    found = [where for path in paths for where in _warn_calls(path)]
    assert not found, "use .warning( (see this module's docstring): " + ', '.join(found)
