"""Benchmark of the IK core: solve rate and time per solve, against ikpy and rtb's ik_LM.

For every arm × solver × goal type, 1000 targets (``--quick``: 100) are made by forward
kinematics of random configurations inside the joint limits (fixed seed), so every
target is reachable. A solve counts as solved only when FK of the returned joints is
within the tolerance (1e-4 m, 1e-3 rad) and inside the joint limits, whatever the solver
says. Peers get the same targets, the chain built from the same expanded URDF, and the
same check:

* ikpy (``Chain.from_urdf_file``; position, full pose, and tool-down through its 'Z'
  orientation mode), from its default all-zero start;
* roboticstoolbox-python ``Robot.ik_LM`` (its C++ Levenberg–Marquardt, random restarts),
  with ``tol`` set so its residual ½|e|² matches a 1e-4 error and a mask for
  position-only (x, y, z) and tool-down (rotation about the base Z axis left free).

Peers are optional: when one is not installed the table says so and the run goes on.
Our solvers run with default options and no seed (DLS: nearest stored pose, CCD: q = 0).

Results print as a table and merge into ``bench_results.json`` at the repository root
under the top-level key ``ik_core`` (other benchmarks keep their own keys).

Run: ``python benchmarks/bench_ik.py [--quick]`` (from a built workspace, or from the
source tree: the script then finds ``src/arm_ik`` and ``src/arm_description`` itself).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
import datetime
import importlib
import math
import os
from pathlib import Path
import sys
import tempfile
import time
import warnings

import numpy as np

REPO = Path(__file__).resolve().parents[1]
ARMS = ('pointer3', 'ccd5', 'six_axis', 'manipulator3d')
SEED = 2024
TOLERANCE = 1e-4              # m
ORIENTATION_TOLERANCE = 1e-3  # rad
LIMIT_SLACK = 1e-6            # rad: peers' clamping rounds to the limit
OVERSHOOT_TIMEOUT = 0.002     # s, timeout used to measure the overshoot


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

from arm_kinematics.common.transforms import rotation_error  # noqa: E402
from arm_kinematics.description.bundled import expand_xacro  # noqa: E402
from arm_kinematics.ik.result import ErrorCode, GoalType  # noqa: E402
from arm_kinematics.ik.solvers.base import SolveOptions, Solver, workspace_from_model  # noqa: E402,E501
from arm_kinematics.model.arm_model import ArmModel  # noqa: E402

GOAL_NAMES = {GoalType.POSITION: 'position', GoalType.TOOL_DOWN: 'tool_down',
              GoalType.FULL_POSE: 'full_pose'}


# ------------------------------------------------------------------ helpers
def tool_angle(transform: np.ndarray) -> float:
    """Angle between the tool Z axis and −Z of the base, radians."""
    return math.atan2(math.hypot(transform[0, 2], transform[1, 2]), -transform[2, 2])


def reached(model: ArmModel, q: np.ndarray | None, target: np.ndarray,
            goal: GoalType) -> bool:
    """True when ``q`` is finite, inside the limits and FK meets the goal's tolerances."""
    if q is None:
        return False
    q = np.asarray(q, dtype=float)
    if q.shape != (model.dof,) or not np.all(np.isfinite(q)):
        return False
    if np.any(q < model.lower - LIMIT_SLACK) or np.any(q > model.upper + LIMIT_SLACK):
        return False
    transform = model.fk(q)
    if np.linalg.norm(transform[:3, 3] - target[:3, 3]) > TOLERANCE:
        return False
    if goal == GoalType.FULL_POSE:
        angle = np.linalg.norm(rotation_error(transform[:3, :3], target[:3, :3]))
        return bool(angle <= ORIENTATION_TOLERANCE)
    if goal == GoalType.TOOL_DOWN:
        return tool_angle(transform) <= ORIENTATION_TOLERANCE
    return True


def summarise(times: Sequence[float], solved: int) -> dict[str, float]:
    """Solve rate, median and p95 of the per-solve wall times (seconds)."""
    array = np.asarray(times)
    return {'n': int(array.size), 'solve_rate': solved / max(array.size, 1),
            'median_s': float(np.median(array)), 'p95_s': float(np.percentile(array, 95))}


def run_solves(model: ArmModel, targets: np.ndarray, goal: GoalType,
               solve: Callable[[np.ndarray], np.ndarray | None]) -> dict[str, float]:
    """Time ``solve(target_transform) -> q`` on every target and check each answer."""
    times, solved = [], 0
    for target in targets:
        start = time.perf_counter()
        q = solve(target)
        times.append(time.perf_counter() - start)
        solved += reached(model, q, target, goal)
    return summarise(times, solved)


def make_targets(model: ArmModel, goal: GoalType, count: int) -> np.ndarray:
    """FK transforms (count, 4, 4) of random configurations within the limits."""
    rng = np.random.default_rng(SEED)
    if goal == GoalType.TOOL_DOWN:
        from arm_kinematics.analysis.experiments import tool_down_configurations
        return model.fk_batch(tool_down_configurations(model, count, rng))
    return model.fk_batch(model.random_configurations(count, rng))


def optional_solver(name: str, model: ArmModel) -> Solver | None:
    """The solver registered as ``name`` if its module exists and it applies to ``model``."""
    from arm_kinematics.ik.solvers import SOLVERS
    module, attribute = SOLVERS[name]
    try:
        cls = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError):
        return None
    if cls.applicability(model):
        return None
    return cls(model, workspace_from_model(model))


# ------------------------------------------------------------------ peers
class IkpyPeer:
    """ikpy chain from the expanded URDF; position, full pose and tool-down ('Z' mode)."""

    name = 'ikpy'

    def __init__(self, model: ArmModel, urdf_path: str) -> None:
        import ikpy.chain
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            probe = ikpy.chain.Chain.from_urdf_file(urdf_path, base_elements=['base_link'])
            mask = [link.joint_type != 'fixed' for link in probe.links]
            self.chain = ikpy.chain.Chain.from_urdf_file(
                urdf_path, base_elements=['base_link'], active_links_mask=mask)
        self.active = np.flatnonzero(mask)
        names = tuple(self.chain.links[i].name for i in self.active)
        if names != model.joint_names:
            raise RuntimeError(f'ikpy chain joints {names} differ from {model.joint_names}')

    def solve(self, target: np.ndarray, goal: GoalType) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            if goal == GoalType.FULL_POSE:
                full = self.chain.inverse_kinematics(target[:3, 3], target[:3, :3],
                                                     orientation_mode='all')
            elif goal == GoalType.TOOL_DOWN:
                full = self.chain.inverse_kinematics(target[:3, 3], [0.0, 0.0, -1.0],
                                                     orientation_mode='Z')
            else:
                full = self.chain.inverse_kinematics(target[:3, 3])
        return np.asarray(full)[self.active]


class RtbPeer:
    """roboticstoolbox-python Robot from the expanded URDF; its C++ ``ik_LM``."""

    name = 'rtb_ik_LM'
    MASKS = {GoalType.POSITION: np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0]),
             GoalType.TOOL_DOWN: np.array([1.0, 1.0, 1.0, 1.0, 1.0, 0.0]),
             GoalType.FULL_POSE: np.ones(6)}
    # ik_LM stops when ½ eᵀ W e < tol: ½ (1e-4)² for a 1e-4 error.
    TOL = 0.5 * TOLERANCE ** 2
    FLIP = np.diag([1.0, -1.0, -1.0])   # a tool-down orientation (Rx(π))

    def __init__(self, model: ArmModel, urdf_path: str) -> None:
        import roboticstoolbox as rtb
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            self.robot = rtb.Robot.URDF(urdf_path)
        self.end = model.tip_link
        self.start = model.base_link
        if self.robot.n != model.dof:
            raise RuntimeError(f'rtb robot has {self.robot.n} joints, expected {model.dof}')

    def solve(self, target: np.ndarray, goal: GoalType) -> np.ndarray | None:
        pose = target
        if goal == GoalType.TOOL_DOWN:
            pose = target.copy()
            pose[:3, :3] = self.FLIP   # rotation about base Z is masked out
        solution = self.robot.ik_LM(pose, end=self.end, start=self.start, tol=self.TOL,
                                    mask=self.MASKS[goal])
        return np.asarray(solution.q) if solution.success else None


def make_peers(model: ArmModel, urdf_path: str, wanted: Sequence[str]) -> dict[str, object]:
    """Peer objects by name; a string instead of an object says why it is missing."""
    peers: dict[str, object] = {}
    for cls in (IkpyPeer, RtbPeer):
        if cls.name not in wanted:
            continue
        try:
            peers[cls.name] = cls(model, urdf_path)
        except ImportError:
            peers[cls.name] = 'not installed'
        except Exception as error:  # a peer that cannot load this arm must not stop the run
            peers[cls.name] = f'failed to load: {type(error).__name__}: {error}'
    return peers


# ------------------------------------------------------------------ benchmark
def overshoot(solver: Solver, target: np.ndarray, runs: int) -> dict[str, float]:
    """Timeout overshoot (s) of ``solver`` on a target it cannot meet."""
    options = SolveOptions(timeout=OVERSHOOT_TIMEOUT, max_iterations=100_000,
                           restarts=10**9, tolerance=1e-30, orientation_tolerance=1e-30)
    over = []
    for _ in range(runs):
        start = time.perf_counter()
        result = solver.solve(target, options=options)
        over.append(time.perf_counter() - start - OVERSHOOT_TIMEOUT)
        if result.code != ErrorCode.TIMED_OUT:
            raise RuntimeError(f'{solver.name}: expected TIMED_OUT, got {result.code.name}')
    return {'timeout_s': OVERSHOOT_TIMEOUT, 'runs': runs,
            'median_overshoot_s': float(np.median(over)), 'max_overshoot_s': float(max(over))}


def bench_arm(arm: str, count: int, peer_names: Sequence[str],
              log: Callable[[str], None]) -> dict[str, list]:
    """All records of one arm."""
    from arm_kinematics.ik.solvers.ccd import CCDSolver
    from arm_kinematics.ik.solvers.dls import DLSSolver
    urdf = expand_xacro(arm)
    model = ArmModel.from_urdf(urdf)
    workspace = workspace_from_model(model)
    plan: list[tuple[str, Solver, GoalType]] = [
        ('ccd', CCDSolver(model, workspace), GoalType.POSITION),
        ('dls', DLSSolver(model, workspace), GoalType.POSITION),
    ]
    dls = plan[1][1]
    if model.dof >= 6:
        plan += [('dls', dls, GoalType.FULL_POSE), ('dls', dls, GoalType.TOOL_DOWN)]
    analytic = optional_solver('analytic', model)
    if analytic is not None:
        plan.append(('analytic', analytic, GoalType.POSITION))
    closed_form = optional_solver('closed_form', model)
    if closed_form is not None:
        plan.append(('closed_form', closed_form, GoalType.FULL_POSE))
    records, extras = [], []
    with tempfile.TemporaryDirectory() as folder:
        urdf_path = os.path.join(folder, f'{arm}.urdf')
        with open(urdf_path, 'w', encoding='utf-8') as stream:
            stream.write(urdf)
        peers = make_peers(model, urdf_path, peer_names)
        peer_results: dict[GoalType, dict[str, dict]] = {}
        for name, solver, goal in plan:
            targets = make_targets(model, goal, count)
            options = SolveOptions(return_all=name == 'closed_form')
            orientation_needed = goal == GoalType.FULL_POSE

            def solve(target: np.ndarray, solver: Solver = solver, goal: GoalType = goal,
                      options: SolveOptions = options,
                      orientation_needed: bool = orientation_needed) -> np.ndarray | None:
                result = solver.solve(target[:3, 3],
                                      target[:3, :3] if orientation_needed else None,
                                      goal, None, options)
                return result.q if result.success else None

            log(f'  {arm} {name} {GOAL_NAMES[goal]} ...')
            record = {'arm': arm, 'solver': name, 'goal': GOAL_NAMES[goal]}
            record.update(run_solves(model, targets, goal, solve))
            if goal not in peer_results:
                peer_results[goal] = {}
                for peer_name, peer in peers.items():
                    if isinstance(peer, str):
                        peer_results[goal][peer_name] = {'status': peer}
                        continue
                    log(f'  {arm} {peer_name} {GOAL_NAMES[goal]} ...')
                    figures = run_solves(model, targets, goal,
                                         lambda target, peer=peer, goal=goal:
                                         peer.solve(target, goal))
                    peer_results[goal][peer_name] = {'status': 'ok', **figures}
            record['peers'] = {}
            for peer_name, figures in peer_results[goal].items():
                entry = dict(figures)
                if entry.get('status') == 'ok':
                    entry['median_ratio_ours_over_peer'] = record['median_s'] / entry['median_s']
                    entry['p95_ratio_ours_over_peer'] = record['p95_s'] / entry['p95_s']
                record['peers'][peer_name] = entry
            records.append(record)
        if analytic is not None and hasattr(analytic, 'solve_batch'):
            transforms = make_targets(model, GoalType.POSITION, count)
            analytic.solve_batch(transforms[:10, :3, 3])   # warm-up
            start = time.perf_counter()
            q, _ = analytic.solve_batch(transforms[:, :3, 3])
            elapsed = time.perf_counter() - start
            solved = sum(reached(model, row, target, GoalType.POSITION)
                         for row, target in zip(q, transforms, strict=True))
            extras.append({'arm': arm, 'solver': 'analytic', 'mode': 'solve_batch',
                           'n': count, 'targets_per_s': count / elapsed,
                           'solve_rate': solved / count})
    return {'records': records, 'batch': extras, 'workspace_reach': workspace.max_reach}


def bench_overshoot(runs: int) -> list[dict]:
    """Timeout overshoot of ccd and dls on ccd5, straight below the shoulder.

    That point is inside the reach sphere but outside the limited workspace (the shoulder
    stops at ±100°), so only the clock ends the solve.
    """
    from arm_kinematics.ik.solvers.ccd import CCDSolver
    from arm_kinematics.ik.solvers.dls import DLSSolver
    model = ArmModel.from_urdf(expand_xacro('ccd5'))
    workspace = workspace_from_model(model)
    target = workspace.shoulder - [0.0, 0.0, 0.8 * workspace.max_reach]
    out = []
    for solver in (CCDSolver(model, workspace), DLSSolver(model, workspace)):
        out.append({'arm': 'ccd5', 'solver': solver.name, **overshoot(solver, target, runs)})
    return out


def format_table(records: Sequence[dict], peer_names: Sequence[str]) -> str:
    """Plain-text table of the records."""
    header = f'{"arm":<14}{"solver":<12}{"goal":<10}{"n":>5}{"rate":>8}{"median ms":>11}' \
        f'{"p95 ms":>9}'
    for name in peer_names:
        header += f' | {name + " rate":>14}{"median ms":>11}{"ratio":>7}'
    lines = [header, '-' * len(header)]
    for record in records:
        line = (f'{record["arm"]:<14}{record["solver"]:<12}{record["goal"]:<10}{record["n"]:>5}'
                f'{record["solve_rate"]:>8.3f}{record["median_s"] * 1e3:>11.3f}'
                f'{record["p95_s"] * 1e3:>9.3f}')
        for name in peer_names:
            peer = record['peers'].get(name, {'status': 'not run'})
            if peer.get('status') == 'ok':
                line += (f' | {peer["solve_rate"]:>14.3f}{peer["median_s"] * 1e3:>11.3f}'
                         f'{peer["median_ratio_ours_over_peer"]:>7.2f}')
            else:
                line += f' | {peer["status"][:32]:>32}'
        lines.append(line)
    return '\n'.join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='100 targets (smoke run)')
    parser.add_argument('-n', '--targets', type=int, default=None,
                        help='targets per arm × solver × goal (default 1000, --quick 100)')
    parser.add_argument('--arms', nargs='+', default=list(ARMS), choices=ARMS)
    parser.add_argument('--peers', nargs='*', default=['ikpy', 'rtb_ik_LM'],
                        choices=['ikpy', 'rtb_ik_LM'], help='peers to compare (none: no peers)')
    parser.add_argument('--output', type=Path, default=REPO / 'bench_results.json')
    args = parser.parse_args(argv)
    count = args.targets or (100 if args.quick else 1000)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    started = time.perf_counter()
    records, batch = [], []
    for arm in args.arms:
        part = bench_arm(arm, count, args.peers, log)
        records += part['records']
        batch += part['batch']
    overshoots = bench_overshoot(20 if args.quick else 100)
    print(f'IK core benchmark: {count} FK-generated targets per row (seed {SEED}); a solve '
          f'counts when FK is within {TOLERANCE:g} m / {ORIENTATION_TOLERANCE:g} rad and '
          'inside the limits. ratio = our median / peer median.')
    for name in args.peers:
        statuses = {r['peers'].get(name, {}).get('status') for r in records}
        if statuses == {'not installed'}:
            print(f'{name}: not installed')
    print(format_table(records, args.peers))
    for entry in batch:
        print(f'{entry["arm"]} analytic solve_batch: {entry["targets_per_s"]:,.0f} targets/s '
              f'(rate {entry["solve_rate"]:.3f}, n={entry["n"]})')
    for entry in overshoots:
        print(f'{entry["arm"]} {entry["solver"]} timeout {entry["timeout_s"] * 1e3:g} ms: '
              f'overshoot median {entry["median_overshoot_s"] * 1e6:.0f} us, '
              f'max {entry["max_overshoot_s"] * 1e6:.0f} us ({entry["runs"]} runs)')
    versions = {'python': sys.version.split()[0], 'numpy': np.__version__}
    for module in ('ikpy', 'roboticstoolbox'):
        try:
            versions[module] = getattr(importlib.import_module(module), '__version__', '?')
        except ImportError:
            versions[module] = 'not installed'
    merge_section(args.output, 'ik_core', {
        'generated': datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds'),
        'targets_per_row': count, 'seed': SEED, 'tolerance_m': TOLERANCE,
        'orientation_tolerance_rad': ORIENTATION_TOLERANCE, 'versions': versions,
        'records': records, 'analytic_batch': batch, 'timeout_overshoot': overshoots,
        'wall_time_s': time.perf_counter() - started,
    })
    print(f'wrote {args.output} (key "ik_core")')
    return 0


if __name__ == '__main__':
    sys.exit(main())
