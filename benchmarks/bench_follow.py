"""Benchmark of the live target's safety checks (kinematics.motion.follow, .follow_guard).

A live target stream as the executor sees it: 30 targets a second on a 10 cm circle around
the tool at a clear start pose, each solved from the pose the arm has reached (the previous
answer). Arms: six_axis (its floor rules and URDF collision shapes, no scene), the UR5 and
the Panda of example-robot-data (URDF meshes, no floor) with a box beside the circle.

1. per target, in the planning process's place: the IK solve the target always had, and
   what this change adds to it, ``MotionPlanner.check_move`` on its answer (the goal pose,
   then the straight joint way there densely: floor 2 cm, collisions 1 cm), ms; the added
   share of the solve;
2. per control tick (100 Hz, ``MotionRunner.tick``) while following: the bare follow law
   against the same law behind ``GuardedFollow`` (each step checked, 1 cm), same targets and
   poses, both laws (exponential towards the checked answer, speed cap towards the point),
   µs; ratio guarded / bare.

Times are wall time (``perf_counter``) of each call, p50 / p99 over the stream, best of 3
runs for the tick rows. Results merge into ``bench_results.json`` under ``follow``.

Run from a built workspace: ``python benchmarks/bench_follow.py [--quick]``.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
from pathlib import Path
import sys
import time
from typing import Any

import numpy as np
from results_file import merge_section

REPO = Path(__file__).resolve().parents[1]
RATE = 30.0            # targets per second
PERIOD = 0.01          # s, the control tick
RADIUS = 0.10          # m, the circle the target goes round
LAP = 4.0              # s per lap
BOX = {'id': 'box', 'type': 'box', 'size': [0.2, 0.2, 0.4], 'pose': {'xyz': [0.37, 0.54, 0.4]}}
PANDA_BOX = {'id': 'box', 'type': 'box', 'size': [0.2, 0.2, 0.2],
             'pose': {'xyz': [0.3, 0.35, 0.3]}}


def arms() -> list[tuple[str, Any, np.ndarray]]:
    """(label, planner spec, start pose) of each arm."""
    from arm_kinematics.arm import load_arm
    from arm_kinematics.description.bundled import expand_xacro, load_arm_config
    from arm_kinematics.motion import worker
    from arm_kinematics.motion.safety_check import SceneData
    from arm_testing.real_arms import REAL_ARMS, robots_dir

    config = load_arm_config('six_axis')
    cases = [('six_axis', worker.PlannerSpec(expand_xacro('six_axis'), 'six_axis', config),
              None)]
    mesh_root = str(robots_dir().parent.parent)
    for label, box, start in (('ur5', BOX, [0.0, -1.2, 1.2, -1.57, -1.57, 0.0]),
                              ('panda', PANDA_BOX, [0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8])):
        real = REAL_ARMS[label]
        arm = load_arm(real.urdf(), None, real.base, real.tip)
        cases.append((f'{label} + box', worker.PlannerSpec(
            real.urdf(), label, arm.config, real.base, real.tip,
            mesh_search_paths=(mesh_root,), scene=SceneData(real.base, (box,), 1)),
            np.array(start)))
    return cases


def stream(model: Any, start: np.ndarray, seconds: float) -> np.ndarray:
    """(K, 3) targets at RATE on the circle in the y-z plane through the start's tool."""
    centre = model.fk(start)[:3, 3]
    t = np.arange(int(seconds * RATE)) / RATE
    angle = 2.0 * math.pi * t / LAP
    return centre + RADIUS * np.stack([np.zeros_like(t), np.sin(angle),
                                       np.cos(angle) - 1.0], axis=1)


def percentiles(values: list[float], scale: float) -> dict[str, float]:
    array = np.asarray(values) * scale
    return {'p50': float(np.percentile(array, 50)), 'p99': float(np.percentile(array, 99)),
            'max': float(array.max())}


def per_target(planner: Any, start: np.ndarray, targets: np.ndarray) -> dict[str, Any]:
    """IK and check_move times of each target, seeded with the previous answer."""
    from arm_kinematics.ik.request import IKRequest
    solve, check, refused = [], [], 0
    seed = start.copy()
    names = tuple(planner.model.joint_names)
    for point in targets:
        began = time.perf_counter()
        answer = planner.dispatcher.solve(
            IKRequest(position=tuple(float(v) for v in point), seed_names=names,
                      seed_positions=tuple(float(v) for v in seed)), planner.ik_options, seed)
        solved = time.perf_counter()
        if not answer.result.success:
            continue
        goal = np.asarray(answer.result.q, dtype=float)
        reason = planner.check_move(seed, goal)
        check.append(time.perf_counter() - solved)
        solve.append(solved - began)
        if reason:
            refused += 1
        else:
            seed = goal
    ik, added = percentiles(solve, 1e3), percentiles(check, 1e3)
    return {'targets': len(targets), 'solved': len(solve), 'refused': refused,
            'ik_ms': ik, 'check_ms': added,
            'added_share_p50': added['p50'] / ik['p50'] if ik['p50'] > 0 else math.nan}


def tick_times(planner: Any, follow_law: str, start: np.ndarray, targets: np.ndarray,
               guarded: bool) -> list[float]:
    """runner.tick durations (s) of a follow fed ``targets``; the goals come checked from
    ``target_goal`` at once (as if the planning process answered within the tick)."""
    from arm_kinematics.motion import laws
    from arm_kinematics.motion.follow import target_goal
    from arm_kinematics.motion.follow_guard import GuardedFollow, StepGuard
    from arm_kinematics.motion.runner import MotionRunner, Owner

    model = planner.model
    limits = model.velocity_limits * 0.5
    if follow_law == laws.SPEED_CAP:
        law = laws.SpeedCapFollow(laws.SpeedCap(planner.dispatcher.solvers['ccd'], limits, 3))
    else:
        law = laws.ExponentialFollow(laws.ExponentialSmoothing(3.0, limits, model.lower,
                                                               model.upper))
    steps = law
    if guarded:
        guard = StepGuard(planner.collision, planner.collision.scene)
        steps = GuardedFollow(law, guard, lambda _: None)
    runner = MotionRunner(model.joint_names, start)
    runner.follow(steps, Owner('bench'), 0.0, math.inf)
    durations = []
    per_target_ticks = int(round(1.0 / (RATE * PERIOD)))
    for k in range(len(targets) * per_target_ticks):
        now = k * PERIOD
        if k % per_target_ticks == 0:
            point = targets[k // per_target_ticks]
            if follow_law == laws.SPEED_CAP:
                law.target = point
            else:
                law.goal = target_goal(planner, point, runner.pose(), '').q
        began = time.perf_counter()
        runner.tick(now)
        durations.append(time.perf_counter() - began)
    return durations


def per_tick(planner: Any, start: np.ndarray, targets: np.ndarray,
             repeats: int) -> dict[str, Any]:
    from arm_kinematics.motion import laws
    rows = {}
    for follow_law in (laws.EXPONENTIAL, laws.SPEED_CAP):
        if follow_law == laws.SPEED_CAP and 'ccd' not in planner.dispatcher.solvers:
            continue
        best: dict[bool, dict[str, float]] = {}
        for _ in range(repeats):
            for guarded in (False, True):    # alternated: both meet the same machine
                figures = percentiles(tick_times(planner, follow_law, start, targets, guarded),
                                      1e6)
                if guarded not in best or figures['p50'] < best[guarded]['p50']:
                    best[guarded] = figures
        rows[follow_law] = {'bare_us': best[False], 'guarded_us': best[True],
                            'ratio_p50': best[True]['p50'] / best[False]['p50'],
                            'added_p50_us': best[True]['p50'] - best[False]['p50'],
                            'added_p99_us': best[True]['p99'] - best[False]['p99']}
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='2 s streams, 1 repeat')
    parser.add_argument('--output', type=Path, default=REPO / 'bench_results.json')
    args = parser.parse_args(argv)
    from arm_kinematics.description.bundled import home_from_config
    from arm_kinematics.motion import worker

    seconds, repeats = (2.0, 1) if args.quick else (8.0, 3)
    results = {}
    for label, spec, start in arms():
        planner = worker.build_planner(spec)
        planner.collision.warm()
        if start is None:          # six_axis: its home, well above the floor
            start = np.asarray(home_from_config(planner.model, spec.config), dtype=float)
        targets = stream(planner.model, start, seconds)
        print(f'{label}: {len(targets)} targets ...', flush=True)
        results[label] = {'per_target': per_target(planner, start, targets),
                          'per_tick': per_tick(planner, start, targets, repeats)}
    print()
    print(f'{"arm":14s} {"solved":>6s} {"refused":>7s} | {"IK p50":>7s} {"IK p99":>7s} | '
          f'{"check p50":>9s} {"check p99":>9s} (ms) | {"share":>5s}')
    for label, row in results.items():
        target = row['per_target']
        print(f'{label:14s} {target["solved"]:6d} {target["refused"]:7d} | '
              f'{target["ik_ms"]["p50"]:7.3f} {target["ik_ms"]["p99"]:7.3f} | '
              f'{target["check_ms"]["p50"]:9.3f} {target["check_ms"]["p99"]:9.3f}      | '
              f'{target["added_share_p50"]:5.2f}')
    print()
    print(f'{"arm":14s} {"law":12s} | {"bare p50":>8s} {"bare p99":>8s} | {"guard p50":>9s} '
          f'{"guard p99":>9s} (µs per tick) | {"ratio":>5s}')
    for label, row in results.items():
        for law, tick in row['per_tick'].items():
            print(f'{label:14s} {law:12s} | {tick["bare_us"]["p50"]:8.1f} '
                  f'{tick["bare_us"]["p99"]:8.1f} | {tick["guarded_us"]["p50"]:9.1f} '
                  f'{tick["guarded_us"]["p99"]:9.1f}              | {tick["ratio_p50"]:5.2f}')
    merge_section(args.output, 'follow', {
        'generated': datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds'),
        'cpus': os.cpu_count(), 'loadavg_1min': os.getloadavg()[0],
        'stream': {'rate_hz': RATE, 'radius_m': RADIUS, 'lap_s': LAP, 'seconds': seconds},
        'note': 'per target: IK solve and MotionPlanner.check_move on its answer, ms; per '
                'tick: MotionRunner.tick with the bare follow law and with GuardedFollow, '
                'µs, best of the repeats',
        'arms': results})
    print(f'\nmerged into {args.output} under follow')
    return 0


if __name__ == '__main__':
    sys.exit(main())
