"""Reading a YAML file (a scene, a sequence, a servo calibration) with the two ways it fails
told apart, so each loader wraps them in its own error type and words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

__all__ = ['read_yaml_file', 'YamlFileError']


class YamlFileError(ValueError):
    """The file cannot be read (``unreadable``) or is not valid YAML; ``detail`` is the
    operating system's or the parser's words. The message is '<cannot be read | not valid
    YAML>: <detail>'."""

    def __init__(self, unreadable: bool, detail: str) -> None:
        self.unreadable = unreadable
        self.detail = detail
        super().__init__(f'{"cannot be read" if unreadable else "not valid YAML"}: {detail}')


def read_yaml_file(path: Path) -> Any:
    """The document in ``path`` (UTF-8); None for an empty file.

    Raises:
        YamlFileError: the file cannot be read or parsed.
    """
    try:
        text = path.read_text(encoding='utf-8')
    except OSError as error:
        raise YamlFileError(True, str(error.strerror or error)) from None
    except UnicodeDecodeError:
        raise YamlFileError(True, 'not UTF-8 text') from None
    if text.lstrip().startswith('<'):
        # The parser's own words point into an XML comment; a URDF given where a YAML
        # file belongs is a common slip.
        raise YamlFileError(False, 'the file is XML (a URDF or xacro file?)')
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise YamlFileError(False, str(error)) from None
