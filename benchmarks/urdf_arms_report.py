"""The printed forms of bench_urdf_arms' records: the table, the misses explained, the
objectives' mean measures, docs/benchmarks.md's markdown, and the versions of what ran."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata
import sys

import numpy as np


def format_table(records: Sequence[dict]) -> str:
    """Plain-text table of the records."""
    header = (f'{"arm":<14}{"dof":>3} {"mode":<10}{"solver":<12}{"n":>5}{"rate %":>8}'
              f'{"rej":>4}{"median ms":>11}{"p95 ms":>9}{"mean ms":>9}{"cpu p95":>9}'
              f'{"med ×trac":>11}{"p95 ×trac":>11}')
    lines = [header, '-' * len(header)]
    for record in records:
        start = (f'{record["arm"]:<14}{record["dof"]:>3} {record["mode"]:<10}'
                 f'{record["solver"] + ("*" if "note" in record else ""):<12}')
        if 'status' in record:
            lines.append(start + record['status'][:60])
            continue
        ratios = ''
        if 'median_ratio_vs_trac_ik' in record:
            ratios = (f'{record["median_ratio_vs_trac_ik"]:>11.2f}'
                      f'{record["p95_ratio_vs_trac_ik"]:>11.2f}')
        rejected = record['claimed'] - round(record['solve_rate'] * record['n'])
        lines.append(start + f'{record["n"]:>5}{100 * record["solve_rate"]:>8.1f}{rejected:>4}'
                     f'{record["median_s"] * 1e3:>11.3f}{record["p95_s"] * 1e3:>9.3f}'
                     f'{record["mean_s"] * 1e3:>9.3f}'
                     f'{record.get("cpu_p95_s", float("nan")) * 1e3:>9.3f}' + ratios)
    return '\n'.join(lines)


def format_failures(records: Sequence[dict]) -> str:
    """One line per row of ours that missed targets: why."""
    lines = []
    for record in records:
        failures = record.get('failures')
        if not failures or not failures['count']:
            continue
        codes = ', '.join(f'{code} {n}' for code, n in sorted(failures['codes'].items()))
        line = (f'{record["arm"]} {record["mode"]} {record["solver"]}: {failures["count"]} '
                f'missed ({codes})')
        if failures['refused_by_reach_check']:
            line += (f'; {failures["refused_by_reach_check"]} refused by the reach pre-check '
                     '(reachable targets)')
        if failures['iterations_median'] is not None:
            restarts = failures['restarts_median']
            line += (f'; of the others: best residual median '
                     f'{failures["best_position_error_m_median"]:.2g} m / '
                     f'{failures["best_orientation_error_rad_median"]:.2g} rad, best iterate '
                     f'against a limit {failures["best_at_a_limit"]}, restarts median '
                     f'{"?" if restarts is None else f"{restarts:g}"}, iterations median '
                     f'{failures["iterations_median"]:g}')
        if 'cpu_ms_median' in failures:
            line += (f'; wall {failures["wall_ms_median"]:.2f} ms / CPU '
                     f'{failures["cpu_ms_median"]:.2f} ms median')
        lines.append(line + f'; solved by TRAC-IK {failures["solved_by_trac_ik"]}')
    return '\n'.join(lines)


def format_measures(records: Sequence[dict]) -> str:
    """Per arm and goal, each default row's mean measures over its solved targets: every
    objective should win its own column against `first` (the default row)."""
    lines = [f'{"arm":<8}{"mode":<11}{"objective":<24}{"displacement rad":>18}'
             f'{"manipulability":>16}{"centring":>10}']
    for record in records:
        measures = record.get('measures')
        if measures:
            lines.append(f'{record["arm"]:<8}{record["mode"]:<11}{record["solver"]:<24}'
                         f'{measures["closest"]:>18.4f}{measures["manipulability"]:>16.5f}'
                         f'{measures["centred"]:>10.4f}')
    return 'Mean measures of the default answers (seed: the middle of the ranges):\n' + \
        '\n'.join(lines)


ARM_TITLES = {'ur5': 'UR5', 'panda': 'Panda', 'so101': 'SO-101', 'xarm7': 'xArm7',
              'z1': 'Z1', 'kinova': 'Kinova j2s6s200', 'tiago': 'TIAGo torso + arm',
              'baxter': 'Baxter left arm'}


def format_markdown(records: Sequence[dict]) -> str:
    """docs/benchmarks.md's table: per arm and goal, ours (default) against both peers."""
    rows = {}
    for record in records:
        if 'status' not in record:
            rows[record['arm'], record['mode'], record['solver']] = record

    def cell(arm: str, mode: str, solver: str) -> str:
        record = rows.get((arm, mode, solver))
        if record is None:
            return 'n/a'
        return (f'{100 * record["solve_rate"]:.1f} % / {record["median_s"] * 1e3:.3f} / '
                f'{record["p95_s"] * 1e3:.2f}')

    lines = ['| arm (joints) | goal | ours (default) rate / median / p95 ms | TRAC-IK | '
             'rtb `ik_LM` | ours ÷ TRAC-IK median |', '| --- | --- | --- | --- | --- | --- |']
    for arm, mode, solver in rows:
        if solver != 'default':
            continue
        record = rows[arm, mode, solver]
        ratio = record.get('median_ratio_vs_trac_ik')
        trac = cell(arm, mode, 'trac_ik') if mode == 'full_pose' else \
            (cell(arm, mode, 'trac_ik') + ' *')
        lines.append(f'| {ARM_TITLES.get(arm, arm)} ({record["dof"]}) | '
                     f'{mode.replace("_", " ")} | {cell(arm, mode, "default")} | {trac} | '
                     f'{cell(arm, mode, "rtb_ik_LM")} | '
                     f'{"n/a" if ratio is None else f"{ratio:.2f}"} |')
    return '\n'.join(lines)


def versions() -> dict[str, str]:
    """Versions of Python, numpy and the peers."""
    out = {'python': sys.version.split()[0], 'numpy': np.__version__}
    for package in ('pytracik', 'roboticstoolbox-python', 'example-robot-data'):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = 'not installed'
    return out
