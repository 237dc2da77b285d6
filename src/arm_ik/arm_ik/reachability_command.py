"""``arm_reachability``: sample an arm's workspace and say where it reaches, how well.

    ros2 run arm_ik arm_reachability --arm pointer3 --resolution 0.1
    ros2 run arm_ik arm_reachability --urdf ur5.urdf --base base_link --tip tool0 \\
        --resolution 0.1 --output ur5_reach.npz
    ros2 run arm_ik arm_reachability --arm six_axis --goal full_pose --orientations 8

Prints a summary (voxels sampled, share reachable, manipulability quartiles, time taken),
writes the voxel map as a .npz (``kinematics.reachability.ReachabilityMap.load`` reads it
back) and a PNG beside it: the top view (x–y, the best manipulability over z) and the
side view (the x–z slice through the reach centre), unreachable voxels grey. With
matplotlib installed the picture has axes in metres and a colour bar; without it a plain
PNG of the same two views is written with the standard library (zlib), no new dependency.

Exit status 0 on success, 2 on bad input (an unknown arm or file, a resolution that is not
a finite number > 0, too many voxels, a goal the solver cannot serve), 1 when an output
file cannot be written.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
import struct
import sys
import zlib

import numpy as np

from arm_ik.arm_config import read_description
from arm_ik.command_line import EXIT_BAD_INPUT, UsageErrorParser
from arm_kinematics.analysis.reachability import (
    DEFAULT_MAX_VOXELS,
    DEFAULT_ORIENTATIONS,
    DEFAULT_RESOLUTION,
    GOALS,
    Reachability,
    ReachabilityError,
    ReachabilityMap,
    summary_lines,
)
from arm_kinematics.arm import Arm, ArmConfig, ArmConfigError, load_arm
from arm_kinematics.description import bundled as description
from arm_kinematics.model.arm_model import DescriptionError

EXIT_OK, EXIT_WRITE_FAILED = 0, 1
# The plain PNG: pixels per voxel are chosen so a view is about this wide.
_VIEW_PIXELS = 360
_UNREACHABLE_GREY = (225, 225, 225)
# viridis at 0, 0.25, 0.5, 0.75, 1 (matplotlib's table), for the plain PNG.
_VIRIDIS = np.array([[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98],
                     [253, 231, 37]], dtype=float)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = UsageErrorParser(
        prog='arm_reachability', description='Sample the workspace of an arm on a voxel grid: '
        'which voxels it reaches safely, with which manipulability (a .npz map and a PNG '
        'picture).')
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument('--arm', choices=description.ARMS, help='a bundled example arm')
    source.add_argument('--urdf', help='URDF or .xacro file of your arm')
    parser.add_argument('--base', default='', help='root link of the chain (default: the '
                        "configuration's, else the URDF's root link)")
    parser.add_argument('--tip', default='', help='tool link of the chain (default: the '
                        "configuration's, else tool0 or the leaf at the end of the most joints)")
    parser.add_argument('--arm-config', default='', help='arm configuration YAML (default: '
                        "the bundled arm's; with --urdf, defaults from the URDF: safety off)")
    parser.add_argument('--resolution', type=float, default=DEFAULT_RESOLUTION,
                        help=f'voxel edge, m (default {DEFAULT_RESOLUTION:g})')
    parser.add_argument('--max-voxels', type=int, default=DEFAULT_MAX_VOXELS,
                        help=f'refuse grids of more voxels (default {DEFAULT_MAX_VOXELS})')
    parser.add_argument('--goal', choices=tuple(GOALS), default='position',
                        help='goal type of every voxel target (default position)')
    parser.add_argument('--orientations', type=int, default=DEFAULT_ORIENTATIONS,
                        help='tool orientations per voxel for --goal full_pose (default '
                             f'{DEFAULT_ORIENTATIONS})')
    parser.add_argument('--solver', default='', help="solver name (default: the arm's)")
    parser.add_argument('--output', default='', help='the .npz map (default: '
                        '<arm>_reachability.npz); the PNG is written beside it')
    parser.add_argument('--no-picture', action='store_true', help='write no PNG')
    return parser.parse_args(argv)


def load(args: argparse.Namespace) -> Arm:
    """The arm the arguments name.

    Raises:
        DescriptionError, ArmConfigError: unknown file, unusable URDF or configuration.
    """
    if args.arm:
        config = ArmConfig.from_file(args.arm_config) if args.arm_config else \
            description.load_arm_config(args.arm)
        return load_arm(description.expand_xacro(args.arm), config, args.base, args.tip,
                        args.arm)
    if not Path(args.urdf).is_file():
        raise DescriptionError(f'{args.urdf}: no such file')
    config = ArmConfig.from_file(args.arm_config) if args.arm_config else None
    return load_arm(read_description(args.urdf), config, args.base, args.tip)


# ---------------------------------------------------------------------- pictures
def views(reach: ReachabilityMap) -> tuple[np.ndarray, np.ndarray]:
    """(top, side): the best manipulability over z as an (nx, ny) array, and the x–z slice
    through the middle of the grid (the reach centre; of an even count the better of the
    two middle slices) as (nx, nz), so the hole round the shoulder shows; NaN where no
    voxel is reachable."""
    values = np.where(reach.reachable, reach.manipulability, -np.inf)
    middle = reach.shape[1] // 2
    top = values.max(axis=2)
    side = values[:, middle - 1 + reach.shape[1] % 2:middle + 1].max(axis=1)
    return (np.where(np.isfinite(top), top, math.nan),
            np.where(np.isfinite(side), side, math.nan))


def write_picture(reach: ReachabilityMap, path: str | Path,
                  use_matplotlib: bool | None = None) -> Path:
    """Write the two views as a PNG (matplotlib when importable, unless told otherwise).

    Raises:
        OSError: the file cannot be written.
    """
    path = Path(path)
    if use_matplotlib is None:
        try:
            import matplotlib  # noqa: F401
            use_matplotlib = True
        except ImportError:
            use_matplotlib = False
    if use_matplotlib:
        _matplotlib_picture(reach, path)
    else:
        path.write_bytes(plain_png(reach))
    return path


def _matplotlib_picture(reach: ReachabilityMap, path: Path) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    top, side = views(reach)
    low = reach.origin - 0.5 * reach.resolution
    high = low + np.array(reach.shape) * reach.resolution
    figure = Figure(figsize=(11.0, 4.8), layout='constrained')
    FigureCanvasAgg(figure)
    finite = np.concatenate([top[np.isfinite(top)], side[np.isfinite(side)]])
    limits = (0.0, float(finite.max()) if finite.size else 1.0)
    image = None
    for axes_index, (view, (h, v), title) in enumerate((
            (top, (0, 1), 'top view (best over z)'),
            (side, (0, 2), 'side view (slice through the reach centre)'))):
        axes = figure.add_subplot(1, 2, axes_index + 1)
        axes.set_facecolor(tuple(c / 255.0 for c in _UNREACHABLE_GREY))
        image = axes.imshow(view.T, origin='lower', cmap='viridis', vmin=limits[0],
                            vmax=limits[1], extent=(low[h], high[h], low[v], high[v]),
                            interpolation='nearest')
        axes.set_xlabel(f'{"xyz"[h]} (m)')
        axes.set_ylabel(f'{"xyz"[v]} (m)')
        axes.set_title(title)
        axes.set_aspect('equal')
    figure.colorbar(image, ax=figure.axes, label='manipulability (m³/rad³)', shrink=0.9)
    reached = 100.0 * float(np.mean(reach.reachable))
    figure.suptitle(f'{reach.arm}: reachability ({reach.goal}, solver {reach.solver}, '
                    f'{reach.resolution:g} m voxels, {reached:.1f} % of the grid reachable; '
                    'grey: unreachable)')
    figure.savefig(path, dpi=100)


def plain_png(reach: ReachabilityMap) -> bytes:
    """The two views side by side as PNG bytes, standard library only (no axes or text):
    +x to the right, +y (top view) and +z (side view) up, viridis, unreachable grey."""
    top, side = views(reach)
    finite = np.concatenate([top[np.isfinite(top)], side[np.isfinite(side)]])
    scale = float(finite.max()) if finite.size and finite.max() > 0.0 else 1.0
    cell = max(1, _VIEW_PIXELS // max(reach.shape))
    panels = [_colour(view / scale, cell) for view in (top, side)]
    height = max(p.shape[0] for p in panels)
    gap = np.full((height, 2 * cell + 4, 3), 255, dtype=np.uint8)
    padded = [np.vstack([p, np.full((height - p.shape[0], p.shape[1], 3), 255, np.uint8)])
              for p in panels]
    return _png(np.hstack([padded[0], gap, padded[1]]))


def _colour(view: np.ndarray, cell: int) -> np.ndarray:
    """(rows, cols, 3) uint8 image of a (nx, nv) view in 0..1, v up, each voxel cell px."""
    grid = np.flipud(view.T)
    position = np.clip(np.nan_to_num(grid, nan=0.0), 0.0, 1.0) * (len(_VIRIDIS) - 1)
    lower = np.minimum(position.astype(int), len(_VIRIDIS) - 2)
    t = (position - lower)[..., None]
    rgb = (1.0 - t) * _VIRIDIS[lower] + t * _VIRIDIS[lower + 1]
    rgb[np.isnan(grid)] = _UNREACHABLE_GREY
    rgb = np.repeat(np.repeat(np.rint(rgb).astype(np.uint8), cell, axis=0), cell, axis=1)
    return rgb


def _png(rgb: np.ndarray) -> bytes:
    """An 8-bit RGB PNG of ``rgb`` (rows, cols, 3) uint8."""
    rows, cols = rgb.shape[:2]
    raw = b''.join(b'\x00' + rgb[r].tobytes() for r in range(rows))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack('>I', len(data)) + kind + data + \
            struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)

    header = struct.pack('>IIBBBBB', cols, rows, 8, 2, 0, 0, 0)
    return b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header) + \
        chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b'')


# ---------------------------------------------------------------------- the command
def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        arm = load(args)
        reach = Reachability(arm, args.solver).sample(args.resolution, args.goal,
                                                      args.orientations, args.max_voxels)
    except (ReachabilityError, DescriptionError, ArmConfigError) as error:
        print(f'arm_reachability: {error}', file=sys.stderr)
        return EXIT_BAD_INPUT
    output = Path(args.output or f'{arm.label}_reachability.npz')
    if output.suffix != '.npz':
        output = output.with_name(output.name + '.npz')
    for line in summary_lines(reach):
        print(line)
    try:
        written = [reach.save(output)]
        if not args.no_picture:
            written.append(write_picture(reach, output.with_suffix('.png')))
    except OSError as error:
        print(f'arm_reachability: cannot write {error.filename}: {error.strerror}',
              file=sys.stderr)
        return EXIT_WRITE_FAILED
    print('wrote ' + ' and '.join(str(path) for path in written))
    return EXIT_OK


if __name__ == '__main__':
    sys.exit(main())
