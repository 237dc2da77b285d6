"""Benchmark of the safety core: the vectorised pose check and the worst detour search.

1. Pose check: a path of N poses (N = 100, 1000, 10000; seeded random waypoints sampled
   with ``sample_path``) checked in one call of ``SafetyGeometry.check`` (floor and
   obstacle, every link); the figure is the wall time per pose (µs), best of 7 runs, per
   arm. The single-pose ``check_pose`` (what the monitor does per joint_states message) is
   timed too. Goal: ≤ 20 µs per pose vectorised.
2. Detour search on the 4° grid (``plan_detour``): for pointer3, seeded random pairs of
   clear poses whose straight joint path is not clear (floor only, and floor + obstacle),
   plus a constructed case with no path at all (a ball walling the shoulder off, so the
   search floods the whole reachable map twice, once per margin); the slowest pair of each
   kind is re-timed 5 times (median and max wall time, and median CPU time, which is what
   the search costs when the machine is shared). The other arms are reported the same
   way for information. Goal: ≤ 200 ms for the worst case.
3. Joint map on the 4° grid at the arm's home (``joint_map``, what safety_monitor's
   ``~/joint_map`` answers): the floor and obstacle cells alone, and with the collision
   checker's self-collision and scene-contact cells (``checker=``, a scene of one box where
   the arm reaches), best of the repeats; the peer of the batched collision cells is
   ``CollisionChecker.check`` called once per cell, timed in the same run.

Results print as a table and merge into ``bench_results.json`` at the repository root under
the top-level key ``safety`` (other keys are kept).

Run: ``python benchmarks/bench_safety.py [--quick]`` (from a built workspace, or from the
source tree).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import replace
import datetime
import math
import os
from pathlib import Path
import statistics
import sys
import time

import numpy as np

REPO = Path(__file__).resolve().parents[1]
ARMS = ('pointer3', 'ccd5', 'six_axis', 'manipulator3d')
SEED = 2024
PATH_SIZES = (100, 1000, 10000)
POSE_GOAL_US = 20.0
DETOUR_GOAL_MS = 200.0
RESOLUTION_DEG = 4.0


def _import_core() -> None:
    """Make ``arm_ik`` importable and its descriptions findable from a source tree."""
    try:
        import arm_kinematics  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(REPO / 'src' / 'arm_kinematics'))
    from arm_kinematics.description.bundled import description_dir
    from arm_kinematics.model.arm_model import DescriptionError
    try:
        description_dir()
    except (DescriptionError, OSError):
        os.environ['ARM_DESCRIPTION_DIR'] = str(REPO / 'src' / 'arm_description')


_import_core()

from results_file import merge_section  # noqa: E402

from arm_kinematics.arm import build_arm  # noqa: E402
from arm_kinematics.description.bundled import (  # noqa: E402
    load_arm_config,
    load_model,
    load_safety_config,  # noqa: E402
)
from arm_kinematics.motion.planning.grid import DetourPlan, plan_detour  # noqa: E402
from arm_kinematics.motion.planning.grid_search import (  # noqa: E402
    default_search_joints,
    grid_axis,
)
from arm_kinematics.motion.planning.joint_map import joint_map  # noqa: E402
from arm_kinematics.motion.safety_paths import check_path, sample_path  # noqa: E402
from arm_kinematics.scene.geometry import SafetyGeometry  # noqa: E402
from arm_kinematics.scene.objects import Scene  # noqa: E402


def geometry_of(arm: str, everything: bool = True) -> SafetyGeometry:
    """The arm's safety geometry; with ``everything`` the floor and obstacle are both on, so
    the pose check does its full work whatever the YAML enables."""
    config = load_safety_config(arm)
    if everything:
        config = replace(config, floor_enabled=True,
                         floor_below_shoulder=max(config.floor_below_shoulder, 0.1),
                         obstacle=replace(config.obstacle, enabled=True))
    return SafetyGeometry(load_model(arm), config)


def best_time(run: Callable[[], object], repeats: int) -> float:
    """Smallest wall time of ``repeats`` runs, s (the least disturbed one)."""
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def bench_pose_check(arm: str, repeats: int) -> dict:
    """Per-pose cost of the vectorised check over paths of several lengths, and of one pose."""
    geometry = geometry_of(arm)
    rng = np.random.default_rng(SEED)
    waypoints = geometry.model.random_configurations(400, rng)
    samples = sample_path(geometry, waypoints).positions
    rows = []
    for size in PATH_SIZES:
        path = samples[:size] if len(samples) >= size else \
            np.resize(samples, (size, samples.shape[1]))
        geometry.check(path)                                   # warm-up
        seconds = best_time(lambda path=path: geometry.check(path), repeats)
        rows.append({'poses': size, 'us_per_pose': seconds / size * 1e6,
                     'ms_per_path': seconds * 1e3})
    single = best_time(lambda: [geometry.check_pose(q) for q in samples[:200]], repeats)
    return {'arm': arm, 'links': len(geometry.link_names), 'vectorised': rows,
            'single_pose_us': single / 200 * 1e6}


def bench_joint_map(arm: str, repeats: int) -> dict:
    """A 4° joint map at home with and without its collision cells, and the peer: every
    cell's pose through ``check`` one by one."""
    model = load_model(arm)
    built = build_arm(model, load_arm_config(arm), arm)
    checker = built.collision_checker(scene=Scene(model.base_link))
    tip = model.fk(built.home)[:3, 3]
    checker.scene.add({'id': 'box', 'type': 'box', 'size': [0.2, 0.2, 0.2],
                       'pose': {'xyz': (0.6 * tip).tolist()}})
    resolution = math.radians(RESOLUTION_DEG)
    joint_map(built.safety, built.home, resolution, checker=checker)     # warm-up
    plain = best_time(lambda: joint_map(built.safety, built.home, resolution), repeats)
    full = best_time(lambda: joint_map(built.safety, built.home, resolution,
                                       checker=checker), repeats)
    i, j = default_search_joints(model)
    grid = np.meshgrid(grid_axis(model.lower[i], model.upper[i], resolution),
                       grid_axis(model.lower[j], model.upper[j], resolution), indexing='ij')
    poses = np.repeat(built.home[None, :], grid[0].size, axis=0)
    poses[:, i], poses[:, j] = grid[0].ravel(), grid[1].ravel()
    one_by_one = best_time(lambda: [checker.check(q) for q in poses], max(1, repeats // 3))
    result = joint_map(built.safety, built.home, resolution, checker=checker)
    return {'arm': arm, 'cells': int(grid[0].size), 'plain_ms': plain * 1e3,
            'with_collision_ms': full * 1e3, 'collision_ms': (full - plain) * 1e3,
            'check_per_cell_ms': one_by_one * 1e3,
            'self_cells': int(result.self_collision.sum()),
            'scene_cells': int(result.scene_contact.sum())}


def _timed_plan(geometry: SafetyGeometry, start: np.ndarray, goal: np.ndarray,
                avoid: bool) -> tuple[float, DetourPlan, float]:
    """(wall s, plan, CPU s) of one plan; CPU time shows the cost on a shared machine."""
    began, cpu = time.perf_counter(), time.process_time()
    plan = plan_detour(geometry, start, goal, math.radians(RESOLUTION_DEG), avoid)
    return time.perf_counter() - began, plan, time.process_time() - cpu


def worst_random_detour(geometry: SafetyGeometry, pairs: int, avoid: bool,
                        rng: np.random.Generator) -> dict:
    """The slowest of ``pairs`` seeded random clear pose pairs whose straight path is not."""
    model = geometry.model
    timed, tried, codes = [], 0, {}
    # Dipping pairs are rare (about 1 in 100 for pointer3): draw in chunks, bounded.
    for _ in range(50):
        if tried == pairs:
            break
        poses = model.random_configurations(4000, rng)
        poses = poses[~geometry.unsafe(poses, avoid)]
        for start, goal in zip(poses[::2], poses[1::2]):
            if tried == pairs:
                break
            if check_path(geometry, np.array([start, goal]), rate=0.0, obstacle=avoid).safe:
                continue
            tried += 1
            seconds, plan, _ = _timed_plan(geometry, start, goal, avoid)
            codes[plan.code.name] = codes.get(plan.code.name, 0) + 1
            timed.append((seconds, start, goal))
    if not timed:
        return {'pairs': 0, 'codes': codes}
    # One timing is noisy: re-time the slowest few and keep the slowest median.
    timed.sort(key=lambda entry: -entry[0])
    worst = max((retime(geometry, start, goal, avoid) for _, start, goal in timed[:3]),
                key=lambda row: row['median_ms'])
    return {'pairs': tried, 'codes': codes, **worst}


def retime(geometry: SafetyGeometry, start: np.ndarray, goal: np.ndarray, avoid: bool,
           repeats: int = 5) -> dict:
    """Median and max of ``repeats`` runs of one plan, with what it found."""
    times, cpu, plan = [], [], None
    for _ in range(repeats):
        seconds, plan, used = _timed_plan(geometry, start, goal, avoid)
        times.append(seconds)
        cpu.append(used)
    return {'median_ms': statistics.median(times) * 1e3, 'max_ms': max(times) * 1e3,
            'median_cpu_ms': statistics.median(cpu) * 1e3,
            'code': plan.code.name, 'expanded': plan.expanded,
            'waypoints': len(plan.waypoints), 'start_deg': np.degrees(start).round(2).tolist(),
            'goal_deg': np.degrees(goal).round(2).tolist()}


def wall_case() -> dict:
    """pointer3 with a small ball 1 m straight above the shoulder (r 0.05 m): it touches the
    upper arm for every shoulder angle in 83°..97° (1.0 |cos a| < 0.125), a thin wall across
    the whole (shoulder, elbow) map. No joint path leads from pointing forward to pointing
    back, so the search floods all of the large front region, at both margins."""
    geometry = geometry_of('pointer3', everything=False)
    config = geometry.config
    wall = SafetyGeometry(geometry.model, replace(config, obstacle=replace(
        config.obstacle, center=(0.0, 0.0, 1.405), radius=0.05)))
    return retime(wall, np.zeros(3), np.array([0.0, math.radians(150.0), 0.0]), True)


def bench_detours(pairs: int) -> list[dict]:
    rng = np.random.default_rng(SEED)
    rows = []
    pointer3 = geometry_of('pointer3', everything=False)
    rows.append({'arm': 'pointer3', 'case': 'random pairs, floor', 'avoid_obstacle': False,
                 **worst_random_detour(pointer3, pairs, False, rng)})
    rows.append({'arm': 'pointer3', 'case': 'random pairs, floor + obstacle',
                 'avoid_obstacle': True, **worst_random_detour(pointer3, pairs, True, rng)})
    rows.append({'arm': 'pointer3', 'case': 'no path (ball walls the shoulder off)',
                 'avoid_obstacle': True, **wall_case()})
    for arm in ('ccd5', 'six_axis'):
        rows.append({'arm': arm, 'case': 'random pairs, floor', 'avoid_obstacle': False,
                     **worst_random_detour(geometry_of(arm, everything=False),
                                           max(pairs // 4, 5), False, rng)})
    return rows


def format_tables(checks: list[dict], detours: list[dict], maps: list[dict]) -> str:
    lines = [f'Pose check (floor + obstacle, every link), µs per pose; goal ≤ {POSE_GOAL_US:g}',
             f'{"arm":<14} {"links":>5} ' + ' '.join(f'{"N=" + str(n):>9}' for n in PATH_SIZES)
             + f' {"1 pose":>9}']
    for row in checks:
        lines.append(f'{row["arm"]:<14} {row["links"]:>5} '
                     + ' '.join(f'{r["us_per_pose"]:>9.2f}' for r in row['vectorised'])
                     + f' {row["single_pose_us"]:>9.1f}')
    lines += ['', f'Detour search on the {RESOLUTION_DEG:g}° grid, worst case, ms; goal ≤ '
              f'{DETOUR_GOAL_MS:g}',
              f'{"arm":<10} {"case":<40} {"pairs":>5} {"median":>8} {"max":>8} '
              f'{"cpu":>8} {"expanded":>8} {"result":>8}']
    for row in detours:
        if 'median_ms' not in row:
            lines.append(f'{row["arm"]:<10} {row["case"]:<40} no dipping pair found')
            continue
        lines.append(f'{row["arm"]:<10} {row["case"]:<40} {row.get("pairs", 1):>5} '
                     f'{row["median_ms"]:>8.1f} {row["max_ms"]:>8.1f} '
                     f'{row["median_cpu_ms"]:>8.1f} {row["expanded"]:>8} '
                     f'{row["code"]:>8}')
    lines += ['', f'Joint map on the {RESOLUTION_DEG:g}° grid at home, ms (collision cells: '
              'a checker and a one-box scene; peer: check() per cell)',
              f'{"arm":<14} {"cells":>6} {"plain":>8} {"+collision":>11} {"check/cell":>11} '
              f'{"ratio":>6} {"self":>5} {"scene":>5}']
    for row in maps:
        lines.append(f'{row["arm"]:<14} {row["cells"]:>6} {row["plain_ms"]:>8.1f} '
                     f'{row["with_collision_ms"]:>11.1f} {row["check_per_cell_ms"]:>11.1f} '
                     f'{row["check_per_cell_ms"] / max(row["collision_ms"], 1e-9):>5.1f}x '
                     f'{row["self_cells"]:>5} {row["scene_cells"]:>5}')
    return '\n'.join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='fewer pairs and repeats')
    parser.add_argument('--pairs', type=int, default=None,
                        help='random dipping pairs per case (default 200, --quick 20)')
    parser.add_argument('--output', type=Path, default=REPO / 'bench_results.json')
    args = parser.parse_args(argv)
    pairs = args.pairs or (20 if args.quick else 200)
    repeats = 3 if args.quick else 7
    checks = [bench_pose_check(arm, repeats) for arm in ARMS]
    detours = bench_detours(pairs)
    maps = [bench_joint_map(arm, repeats) for arm in ARMS]
    print(format_tables(checks, detours, maps))
    worst_pose = max(r['us_per_pose'] for row in checks for r in row['vectorised'])
    pointer3 = [row for row in detours if row['arm'] == 'pointer3' and 'median_ms' in row]
    worst_detour = max(row['median_ms'] for row in pointer3)
    print(f'\nworst vectorised pose check (any N): {worst_pose:.2f} µs per pose '
          f'(goal ≤ {POSE_GOAL_US:g}); worst pointer3 detour search: {worst_detour:.1f} ms '
          f'(goal ≤ {DETOUR_GOAL_MS:g})')
    merge_section(args.output, 'safety', {
        'generated': datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds'),
        'seed': SEED, 'grid_deg': RESOLUTION_DEG, 'pairs_per_case': pairs,
        'versions': {'python': sys.version.split()[0], 'numpy': np.__version__},
        'pose_check_us_per_pose_worst': worst_pose,
        'pose_check_goal_us': POSE_GOAL_US,
        'detour_worst_ms_pointer3': worst_detour,
        'detour_goal_ms': DETOUR_GOAL_MS,
        'pose_check': checks,
        'detours': detours,
        'joint_maps': maps,
    })
    return 0 if worst_pose <= POSE_GOAL_US and worst_detour <= DETOUR_GOAL_MS else 1


if __name__ == '__main__':
    sys.exit(main())
