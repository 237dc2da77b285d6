"""Where a URDF's mesh files are: ``package://``, ``file://`` and plain paths resolved.

``package://<name>/<rest>`` is looked for in every search path as ``<root>/<name>/<rest>``
and ``<root>/share/<name>/<rest>`` (an install prefix, where the ament index puts a package's
share folder), in the order of the paths given (an explicit list is all that is searched);
``<root>/<rest>`` only where the root is that package's own folder: named ``<name>``, or
holding a package.xml whose ``<name>`` is it (a clone under another folder name). Never in
another package's folder: a URDF in robot_a/urdf/ naming ``package://robot_b/meshes/base.stl``
must not get robot_a/meshes/base.stl, a wrong collision shape without a warning.

The default search paths are the URDF's folders, the prefixes of the
ament index (``ament_index_python``'s search paths where it is importable, else
AMENT_PREFIX_PATH), ROS_PACKAGE_PATH, then the prefixes where pip puts description packages:
the environment's own prefix (``data_files`` under ``share/``) and every ``cmeel.prefix`` of
its site-packages (example-robot-data and the other cmeel wheels install ``share/<name>/``
there, with an ament index entry).
"""

from __future__ import annotations

from collections.abc import Sequence
import functools
import os
from pathlib import Path
import re
import site
import sys
import sysconfig


def resolve_mesh(filename: str, search_paths: Sequence[str | Path]) -> Path | None:
    """The file behind a URDF mesh ``filename`` (package://, file:// or a plain path)."""
    if filename.startswith('file://'):
        path = Path(filename[len('file://'):])
        return path if path.is_file() else None
    if filename.startswith('package://'):
        package, _, rest = filename[len('package://'):].partition('/')
        if not package or not rest:
            return None
        for root in map(Path, search_paths):
            for candidate in (root / package / rest, root / 'share' / package / rest):
                if candidate.is_file():
                    return candidate
            if is_package_folder(root, package) and (root / rest).is_file():
                return root / rest
        return None
    path = Path(filename)
    if path.is_absolute():
        return path if path.is_file() else None
    for root in search_paths:
        if (Path(root) / path).is_file():
            return Path(root) / path
    return None


def is_package_folder(folder: Path, package: str) -> bool:
    """Whether ``folder`` is the source or share folder of ROS package ``package``: named
    so, or holding a package.xml that names it."""
    return folder.name == package or _package_xml_name(str(folder)) == package


@functools.lru_cache(maxsize=256)
def _package_xml_name(folder: str) -> str:
    """The ``<name>`` of ``folder``/package.xml ('' when there is none or it has none)."""
    try:
        text = (Path(folder) / 'package.xml').read_text(encoding='utf-8', errors='replace')
    except OSError:
        return ''
    match = re.search(r'<name>\s*([^<\s]+)\s*</name>', text)
    return match.group(1) if match else ''


def ament_prefixes() -> list[Path]:
    """The prefixes the ament index searches: ``ament_index_python.get_search_paths()``
    where it is importable (a ROS install), else AMENT_PREFIX_PATH's."""
    try:
        from ament_index_python import get_search_paths
    except ImportError:
        return [Path(p) for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    try:
        return [Path(p) for p in get_search_paths()]
    except (LookupError, OSError, ValueError):     # AMENT_PREFIX_PATH unset
        return []


def default_search_paths(urdf_path: str | Path | None = None) -> list[Path]:
    """Where package:// meshes are looked for: the URDF's folder and its ancestors, the
    ament index's prefixes (AMENT_PREFIX_PATH), every folder of ROS_PACKAGE_PATH, then the
    prefixes of pip-installed description packages (``pip_prefixes``)."""
    paths: list[Path] = []
    if urdf_path is not None:
        folder = Path(urdf_path).resolve().parent
        paths += [folder, *folder.parents]
    paths += ament_prefixes()
    paths += [Path(p) for p in os.environ.get('ROS_PACKAGE_PATH', '').split(os.pathsep) if p]
    return paths + [p for p in pip_prefixes() if p not in paths]


@functools.lru_cache(maxsize=1)
def pip_prefixes() -> tuple[Path, ...]:
    """Install prefixes of packages pip put in this environment: ``sys.prefix`` (a package's
    ``data_files`` land in its ``share/``) and the ``cmeel.prefix`` folder of each
    site-packages (cmeel wheels such as example-robot-data), those that exist."""
    sites = [sysconfig.get_paths()['purelib'], sysconfig.get_paths()['platlib']]
    try:
        sites += [*site.getsitepackages(), site.getusersitepackages()]
    except AttributeError:      # an embedded or virtualenv-patched site module
        pass
    sites += [p for p in sys.path if p.endswith('site-packages')]
    found: list[Path] = []
    for candidate in [Path(sys.prefix), *(Path(s) / 'cmeel.prefix' for s in sites)]:
        if candidate.is_dir() and candidate not in found:
            found.append(candidate)
    return tuple(found)
