"""ROS 2 message definitions as MCAP ``ros2msg`` schemas, read from the installed interfaces.

An MCAP file stores, per channel, the full text definition of its type: the type's own
``.msg`` text, then every type it uses, each after a line of ``=`` and ``MSG: pkg/Type``
(the format rosbag2 writes and Foxglove, Lichtblick and mcap-ros2-support read).
Definitions come from ``share/<pkg>/msg/*.msg`` and ``share/<pkg>/action/*.action`` of the
install (the ament index); the implicit action types (``X_Goal``, ``X_Result``,
``X_Feedback``, ``X_FeedbackMessage``) are built from the ``.action`` file as rosidl does.
"""

from __future__ import annotations

from functools import cache
import importlib
from pathlib import Path
import re

SEPARATOR = '=' * 80
PRIMITIVES = frozenset((
    'bool', 'byte', 'char', 'float32', 'float64', 'int8', 'uint8', 'int16', 'uint16',
    'int32', 'uint32', 'int64', 'uint64', 'string', 'wstring'))
ACTION_PARTS = ('Goal', 'Result', 'Feedback')


class DefinitionError(LookupError):
    """A type's definition (or one it uses) is not installed."""


def split_type(type_name: str) -> tuple[str, str, str]:
    """'pkg/msg/Type' or 'pkg/Type' -> (pkg, kind, Type); kind is '' when not given."""
    parts = type_name.split('/')
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    if len(parts) == 2:
        return parts[0], '', parts[1]
    raise DefinitionError(f'"{type_name}" is not a ROS type name (pkg/msg/Type)')


@cache
def _share(package: str) -> Path:
    """share/<package> through the ament index, else next to the package's Python module.

    The second way finds the ROS wheels' own interfaces (<venv>/share/<pkg>) when the venv is
    not on AMENT_PREFIX_PATH (only install/setup.bash sourced).
    """
    from ament_index_python.packages import get_package_share_directory
    try:
        return Path(get_package_share_directory(package))
    except LookupError:
        pass
    try:
        module = importlib.import_module(package)
    except ImportError:
        module = None
    for folder in Path(getattr(module, '__file__', None) or '.').resolve().parents:
        candidate = folder / 'share' / package
        if (candidate / 'package.xml').is_file():
            return candidate
    raise DefinitionError(f'interface package {package} is not installed')


@cache
def _action_parts(package: str, action: str) -> dict[str, str] | None:
    """Goal, Result and Feedback text of ``package``'s action ``action``, or None."""
    path = _share(package) / 'action' / f'{action}.action'
    if not path.is_file():
        return None
    sections = re.split(r'^---\s*$', path.read_text(encoding='utf-8'), flags=re.MULTILINE)
    if len(sections) != 3:
        raise DefinitionError(f'{path}: expected goal, result and feedback separated by ---')
    return {part: text.strip('\n') + '\n' for part, text in zip(ACTION_PARTS, sections)}


@cache
def own_text(package: str, name: str) -> str:
    """The definition of one type without its dependencies (comments kept)."""
    path = _share(package) / 'msg' / f'{name}.msg'
    if path.is_file():
        return path.read_text(encoding='utf-8')
    action, _, part = name.rpartition('_')
    if action:
        parts = _action_parts(package, action)
        if parts is not None:
            if part in parts:
                return parts[part]
            if part == 'FeedbackMessage':
                # As rosidl generates it for the action's feedback topic.
                return (f'unique_identifier_msgs/UUID goal_id\n'
                        f'{package}/{action}_Feedback feedback\n')
    raise DefinitionError(f'no definition of {package}/{name} in {_share(package)}')


def field_types(package: str, text: str) -> list[tuple[str, str]]:
    """(pkg, Type) of every non-primitive field of a definition, in order."""
    found = []
    for line in text.splitlines():
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        # Constants (TYPE NAME=value) are always primitive, so they drop out below.
        field_type = line.split()[0]
        base = re.sub(r'\[.*\]$', '', field_type)            # arrays: T[], T[3], T[<=3]
        base = re.sub(r'<=\d+$', '', base)                   # bounded strings
        if base in PRIMITIVES:
            continue
        if base == 'Header':
            found.append(('std_msgs', 'Header'))
            continue
        if '/' in base:
            dependency_package, _, dependency_name = split_type(base)
        else:
            dependency_package, dependency_name = package, base
        found.append((dependency_package, dependency_name))
    return found


def definition(type_name: str) -> str:
    """The full ``ros2msg`` schema text of ``type_name`` (e.g. 'sensor_msgs/msg/JointState').

    Raises:
        DefinitionError: the type or one of its dependencies is not installed.
    """
    package, _, name = split_type(type_name)
    root = own_text(package, name)
    sections: list[str] = []
    seen = {(package, name)}
    pending = field_types(package, root)
    while pending:
        dependency = pending.pop(0)
        if dependency in seen:
            continue
        seen.add(dependency)
        text = own_text(*dependency)
        sections.append(f'{SEPARATOR}\nMSG: {dependency[0]}/{dependency[1]}\n{text}')
        pending.extend(field_types(dependency[0], text))
    return '\n'.join([root.rstrip('\n')] + [s.rstrip('\n') for s in sections]) + '\n'


def message_class(type_name: str) -> type:
    """The Python class of a message type, including the implicit action types
    (``pkg/action/X_FeedbackMessage`` -> ``X.Impl.FeedbackMessage``)."""
    package, kind, name = split_type(type_name)
    module = importlib.import_module(f'{package}.{kind or "msg"}')
    found = getattr(module, name, None)
    if found is not None:
        return found
    action, _, part = name.rpartition('_')
    base = getattr(module, action, None)
    if base is not None:
        if part in ACTION_PARTS:
            return getattr(base, part)
        if part == 'FeedbackMessage':
            return base.Impl.FeedbackMessage
    raise DefinitionError(f'no Python class for {type_name}')
