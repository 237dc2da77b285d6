"""moveit_msgs as this workspace sees it matches moveit/moveit_msgs on the wire.

In the pip route moveit_msgs, and the octomap_msgs and object_recognition_msgs messages it carries,
come from without_ros/ (subsets built only there); with a ROS 2 install they are the real
packages. Either way every type a move_group client uses must be upstream's, field for field:

- arm_testing.moveit_msgs_upstream holds each definition as upstream writes it (moveit/moveit_msgs
  tag 2.6.0, OctoMap/octomap_msgs and wg-perception/object_recognition_msgs 2.0.0) and its
  RIHS01 type hash, and says where they come from. rosidl's own parser reads the definitions;
  the built classes must have the same fields in the same order, the same types, constants and
  default values, and the type hashes rosidl wrote into share/<package>/<msg|srv|action>/ must
  be upstream's (a hash covers field names and types down to builtin_interfaces, not
  constants, comments or default values: hence both checks).
"""

from __future__ import annotations

import array
import importlib
import json
import os
from pathlib import Path
import textwrap

import pytest

from arm_testing.moveit_msgs_upstream import UPSTREAM, UPSTREAM_HASHES

pytest.importorskip('moveit_msgs.msg')
parser = pytest.importorskip('rosidl_adapter.parser')

PACKAGES = ('moveit_msgs', 'octomap_msgs', 'object_recognition_msgs')

# rosidl's names for the .msg primitive types, as get_fields_and_field_types() writes them.
PYTHON_NAMES = {'bool': 'boolean', 'byte': 'octet', 'char': 'uint8', 'float32': 'float',
                'float64': 'double'}


def python_type(type_: parser.Type) -> str:
    """A parsed .msg field type as the generated class names it."""
    if type_.is_primitive_type():
        name = PYTHON_NAMES.get(type_.type, type_.type)
        if type_.string_upper_bound:
            name = f'{name}<{type_.string_upper_bound}>'
    else:
        name = f'{type_.pkg_name}/{type_.type}'
    if not type_.is_array:
        return name
    if type_.array_size is None:
        return f'sequence<{name}>'
    if type_.is_upper_bound:
        return f'sequence<{name}, {type_.array_size}>'
    return f'{name}[{type_.array_size}]'


def upstream_parts(key: str) -> list[tuple[str, parser.MessageSpecification]]:
    """(attribute of the built class or '', parsed message) for each message a type holds."""
    package, kind, name = key.split('/')
    text = textwrap.dedent(UPSTREAM[key]).strip('\n')
    if kind == 'msg':
        return [('', parser.parse_message_string(package, name, text))]
    if kind == 'srv':
        spec = parser.parse_service_string(package, name, text)
        return [('Request', spec.request), ('Response', spec.response)]
    spec = parser.parse_action_string(package, name, text)
    return [('Goal', spec.goal), ('Result', spec.result), ('Feedback', spec.feedback)]


def built_class(key: str, part: str = '') -> type:
    package, kind, name = key.split('/')
    built = getattr(importlib.import_module(f'{package}.{kind}'), name)
    return getattr(built, part) if part else built


def plain(value: object) -> object:
    """A generated class's value as the parser writes it: a byte as its number, arrays as lists."""
    if isinstance(value, bytes) and len(value) == 1:
        return value[0]
    if isinstance(value, (list, array.array)):
        return [plain(item) for item in value]
    return value


def constants_of(message_type: type) -> dict[str, object]:
    """The constants a generated message class declares (its metaclass keeps them)."""
    declared = type(message_type).__prepare__(message_type.__name__, ())
    return {name: plain(value) for name, value in declared.items() if name.isupper()}


def zero_of(field: parser.Field) -> object:
    """The value a field without a default value starts with in the generated class."""
    if field.type.is_array and field.type.is_dynamic_array():
        return []
    if field.type.type in ('string', 'wstring'):
        return ''
    if field.type.type == 'bool':
        return False
    return 0


def share_of(package: str) -> Path:
    from ament_index_python.packages import get_package_share_directory
    return Path(get_package_share_directory(package))


def built_hash(key: str) -> str:
    package, kind, name = key.split('/')
    description = json.loads((share_of(package) / kind / f'{name}.json').read_text())
    return next(entry['hash_string'] for entry in description['type_hashes']
                if entry['type_name'] == key)


def is_subset(package: str) -> bool:
    """True when the package is this project's pip-route subset, not the real package."""
    return 'The subset of' in (share_of(package) / 'package.xml').read_text()


@pytest.mark.parametrize('key', sorted(UPSTREAM))
def test_fields_constants_and_defaults_are_upstream(key):
    for part, spec in upstream_parts(key):
        built = built_class(key, part)
        where = f'{key} {part}'.strip()
        assert list(built.get_fields_and_field_types().items()) == [
            (field.name, python_type(field.type)) for field in spec.fields], where
        assert constants_of(built) == {
            constant.name: constant.value for constant in spec.constants}, where
        instance = built()
        for field in spec.fields:
            if field.type.is_primitive_type() and not field.type.is_fixed_size_array():
                expected = zero_of(field) if field.default_value is None else field.default_value
                assert plain(getattr(instance, field.name)) == expected, f'{where}.{field.name}'


@pytest.mark.parametrize('key', sorted(UPSTREAM))
def test_type_hash_is_upstream(key):
    assert built_hash(key) == UPSTREAM_HASHES[key]


def test_every_hash_is_checked():
    assert sorted(UPSTREAM_HASHES) == sorted(UPSTREAM)


@pytest.mark.parametrize('package', PACKAGES)
def test_subset_serves_these_types_and_no_others(package):
    """The subset holds exactly the types above; a real install holds them and more."""
    share = share_of(package)
    served = {f'{package}/{path.parent.name}/{path.stem}'
              for kind in ('msg', 'srv', 'action') for path in (share / kind).glob('*.json')}
    expected = {key for key in UPSTREAM if key.startswith(f'{package}/')}
    if is_subset(package):
        assert served == expected
    else:
        assert served >= expected


@pytest.mark.parametrize('package', PACKAGES)
def test_subset_never_shadows_a_ros_install(package):
    """With a ROS 2 install sourced, these packages are the install's, not this workspace's."""
    workspace = Path(__file__).resolve().parents[3]
    inside = share_of(package).resolve().is_relative_to(workspace)
    if os.environ.get('ROS_DISTRO'):
        assert not inside and not is_subset(package)
    else:
        assert inside and is_subset(package)


def test_pymoveit2_imports_against_these_types():
    """pymoveit2 imports moveit_msgs, control_msgs and shape_msgs types at module level."""
    pytest.importorskip('pymoveit2')
    from pymoveit2 import GripperInterface, MoveIt2, MoveIt2Servo  # noqa: F401
