"""Render each arm at its home pose to a PNG for the docs (matplotlib, no ROS graph).

The arm comes from its xacro through the kinematics core's FK (the same numbers the nodes
use): links as thick lines, joints as dots, the floor grid with the dashed reach circles
every 0.5 m, the reach shell as a wireframe (and the inner hole where the arm has one), the
link capsules' radii as the line width scale and the obstacle ball where it is enabled.

Usage, from a built workspace (``make build``, then ``source install/setup.bash``)::

    python tools/render_arms.py                 # every arm → docs/arm_<arm>.png
    python tools/render_arms.py --arms pointer3 --out /tmp

matplotlib is not a runtime dependency; it is pinned with the benchmark extras:
``.venv/bin/pip install -r requirements/bench.txt`` (or just ``matplotlib==3.11.2``).
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
import sys

import numpy as np

REPO = Path(__file__).resolve().parents[1]
ARMS = ('pointer3', 'ccd5', 'six_axis', 'manipulator3d')
LINK_COLOUR = '#2859bf'          # the URDF's "blue"
TIP_COLOUR = '#f2801a'           # the URDF's "orange"
PEDESTAL_COLOUR = '#8c8c94'      # the URDF's "grey"
JOINT_COLOUR = '#3f3f47'
SHELL_COLOUR = '#5aa5ff'
HOLE_COLOUR = '#ff5a33'
CIRCLE_COLOUR = '#707078'


def _pyplot():
    """matplotlib.pyplot with the file-only Agg backend, or a clear exit when missing."""
    try:
        import matplotlib
    except ImportError:
        sys.exit('render_arms.py needs matplotlib: .venv/bin/pip install matplotlib==3.11.2 '
                 '(pinned in requirements/bench.txt)')
    matplotlib.use('Agg')
    import matplotlib.pyplot as pyplot
    return pyplot


def _above(points: np.ndarray, floor_z: float) -> np.ndarray:
    """Points below the floor become NaN, so matplotlib breaks the line there."""
    points = np.array(points, dtype=float)
    points[points[:, 2] < floor_z - 1e-9] = np.nan
    return points


def render(arm: str, out: Path, dpi: int = 150) -> Path:
    """Draw ``arm`` at its home pose into ``out/arm_<arm>.png``; returns the path."""
    from arm_kinematics.description.bundled import home_from_config, load_arm_config, load_model
    from arm_kinematics.description.safety_config import safety_config_of
    from arm_kinematics.ik.solvers.base import workspace_from_model
    from arm_kinematics.scene.geometry import SafetyGeometry
    from arm_kinematics.visual.arm_visual import (
        dashed_circle,
        floor_half_size,
        reach_circle_radii,
        reach_shell,
        skeleton_points,
        sphere_wireframe,
    )
    pyplot = _pyplot()
    model = load_model(arm)
    config = load_arm_config(arm)
    geometry = SafetyGeometry(model, safety_config_of(config, arm))
    shell = reach_shell(workspace_from_model(model))
    floor_z = geometry.floor_z
    q = np.array(home_from_config(model, config))

    figure = pyplot.figure(figsize=(6.4, 4.6), dpi=dpi)
    axes = figure.add_subplot(projection='3d', computed_zorder=False)
    centre = np.array([shell.centre[0], shell.centre[1], floor_z])
    half = floor_half_size(shell.outer)

    # Floor grid, 0.25 m cells.
    ticks = np.arange(-half, half + 1e-9, 0.25)
    for t in ticks:
        for line in (np.array([[t, -half], [t, half]]), np.array([[-half, t], [half, t]])):
            axes.plot(centre[0] + line[:, 0], centre[1] + line[:, 1], [floor_z] * 2,
                      color='#c8c8cc', linewidth=0.5, zorder=1)
    # Dashed reach circles every 0.5 m, labelled.
    for radius in reach_circle_radii(shell.outer):
        dashes = dashed_circle(centre, radius).reshape(-1, 2, 3)
        for a, b in dashes:
            axes.plot([a[0], b[0]], [a[1], b[1]], [a[2], b[2]], color=CIRCLE_COLOUR,
                      linewidth=0.9, zorder=2)
        angle = -math.pi / 3.0          # labels on the near side, just outside their circle
        axes.text(centre[0] + (radius + 0.04) * math.cos(angle),
                  centre[1] + (radius + 0.04) * math.sin(angle), floor_z, f'{radius:g} m',
                  color=CIRCLE_COLOUR, fontsize=7, zorder=3)
    # Reach shell (and hole) as wireframes above the floor.
    for line in sphere_wireframe(shell.centre, shell.outer, meridians=16, parallels=5):
        line = _above(line, floor_z)
        axes.plot(line[:, 0], line[:, 1], line[:, 2], color=SHELL_COLOUR, linewidth=0.5,
                  alpha=0.45, zorder=2)
    if shell.has_hole:
        for line in sphere_wireframe(shell.centre, shell.inner, meridians=8, parallels=3):
            axes.plot(line[:, 0], line[:, 1], line[:, 2], color=HOLE_COLOUR, linewidth=0.6,
                      alpha=0.8, zorder=4)
    # Obstacle ball where enabled.
    if geometry.obstacle_enabled:
        radius = geometry.config.obstacle.radius
        u, v = np.meshgrid(np.linspace(0, 2 * math.pi, 32), np.linspace(0, math.pi, 16))
        c = geometry.obstacle_center
        axes.plot_surface(c[0] + radius * np.cos(u) * np.sin(v),
                          c[1] + radius * np.sin(u) * np.sin(v), c[2] + radius * np.cos(v),
                          color='#3cc85a', alpha=0.55, linewidth=0, zorder=5)
        axes.text(c[0], c[1], c[2] + radius + 0.05, 'obstacle', color='#1f7a34', fontsize=7,
                  zorder=6)
    # The arm: the pedestal (base to first moving origin off the axis) grey, links blue,
    # the last link orange, joints as dots.
    points = skeleton_points(model, q)
    pedestal = True                 # the column on the base axis, up to the first bend
    for k, (a, b) in enumerate(zip(points[:-1], points[1:])):
        if np.linalg.norm(b - a) < 1e-9:
            continue
        pedestal = pedestal and np.allclose([a[:2], b[:2]], 0.0, atol=1e-9)
        colour = PEDESTAL_COLOUR if pedestal else TIP_COLOUR if k == len(points) - 2 \
            else LINK_COLOUR
        axes.plot(*np.column_stack([a, b]), color=colour, linewidth=8.0,
                  solid_capstyle='round', zorder=10)
    axes.scatter(*points[1:-1].T, s=70.0, color=JOINT_COLOUR,
                 edgecolors='white', linewidths=0.8, depthshade=False, zorder=11)
    axes.scatter(*points[-1], s=80.0, color=TIP_COLOUR, edgecolors='black',
                 linewidths=0.6, depthshade=False, zorder=12)

    # Equal scales on every axis, the floor square and the shell in view.
    low = np.array([centre[0] - half, centre[1] - half, floor_z])
    high = np.array([centre[0] + half, centre[1] + half, shell.centre[2] + shell.outer])
    axes.set_xlim(low[0], high[0])
    axes.set_ylim(low[1], high[1])
    axes.set_zlim(low[2], high[2])
    axes.set_box_aspect(high - low, zoom=1.15)
    axes.set_proj_type('ortho')     # no perspective: lengths read the same everywhere
    axes.view_init(elev=16, azim=-72)
    axes.set_xlabel('x (m)', fontsize=8)
    axes.set_ylabel('y (m)', fontsize=8)
    axes.set_zlabel('z (m)', fontsize=8)
    axes.tick_params(labelsize=7)
    for pane in (axes.xaxis, axes.yaxis, axes.zaxis):
        pane.set_pane_color((1.0, 1.0, 1.0, 0.0))
    hole = f', hole {shell.inner:.2f} m' if shell.has_hole else ''
    figure.suptitle(f'{arm}: {model.dof} joints at the home pose\nreach shell '
                    f'{shell.outer:.2f} m from the shoulder{hole}', fontsize=10, y=0.99)
    # The 3-D box is flat, so its top part is empty: let it run past the figure's top edge.
    figure.subplots_adjust(left=0.0, right=0.95, bottom=0.02, top=1.0)
    path = out / f'arm_{arm}.png'
    figure.savefig(path, dpi=dpi, bbox_inches='tight', pad_inches=0.15)
    pyplot.close(figure)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--arms', nargs='+', choices=ARMS, default=list(ARMS))
    parser.add_argument('--out', type=Path, default=REPO / 'docs')
    parser.add_argument('--dpi', type=int, default=150)
    args = parser.parse_args(argv)
    if not os.environ.get('ARM_DESCRIPTION_DIR'):
        try:
            from ament_index_python.packages import get_package_share_directory
            get_package_share_directory('arm_description')
        except (ImportError, LookupError, OSError):
            # Not built or not sourced: read the xacros in the source tree.
            os.environ['ARM_DESCRIPTION_DIR'] = str(REPO / 'src' / 'arm_description')
    sys.path.insert(0, str(REPO / 'src' / 'arm_kinematics'))
    args.out.mkdir(parents=True, exist_ok=True)
    for arm in args.arms:
        print(render(arm, args.out, args.dpi))
    return 0


if __name__ == '__main__':
    sys.exit(main())
