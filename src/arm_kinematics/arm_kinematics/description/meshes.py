"""Where a URDF's mesh files are: ``package://``, ``file://`` and plain paths resolved."""

from __future__ import annotations

from collections.abc import Sequence
import os
from pathlib import Path


def resolve_mesh(filename: str, search_paths: Sequence[str | Path]) -> Path | None:
    """The file behind a URDF mesh ``filename`` (package://, file:// or a plain path)."""
    if filename.startswith('file://'):
        path = Path(filename[len('file://'):])
        return path if path.is_file() else None
    if filename.startswith('package://'):
        package, _, rest = filename[len('package://'):].partition('/')
        for root in search_paths:
            root = Path(root)
            for candidate in (root / package / rest, root / 'share' / package / rest,
                              root / rest):
                if candidate.is_file():
                    return candidate
        return None
    path = Path(filename)
    if path.is_absolute():
        return path if path.is_file() else None
    for root in search_paths:
        if (Path(root) / path).is_file():
            return Path(root) / path
    return None


def default_search_paths(urdf_path: str | Path | None = None) -> list[Path]:
    """Where package:// meshes are looked for: the URDF's folder and its ancestors, then
    every prefix of AMENT_PREFIX_PATH and every folder of ROS_PACKAGE_PATH."""
    paths: list[Path] = []
    if urdf_path is not None:
        folder = Path(urdf_path).resolve().parent
        paths += [folder, *folder.parents]
    for variable in ('AMENT_PREFIX_PATH', 'ROS_PACKAGE_PATH'):
        paths += [Path(p) for p in os.environ.get(variable, '').split(os.pathsep) if p]
    return paths
