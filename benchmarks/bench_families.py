"""Benchmark of the closed-form families (solvers.families) against their compiled peers.

Arms: the UR5 of example-robot-data (UR family), the two OPW examples of arm_description
(irb2400_like, kr6_r700_like) and ROS-Industrial's ABB IRB 6640 (an OPW arm with a side
offset b = 11 mm; its URDF is the test data in src/arm_kinematics/test/urdf). Poses are FK
of random configurations inside the joint limits (fixed seed), so every pose is reachable.

Rows per arm (times are wall-clock, microseconds per pose; medians of per-call times):

* ours_all: ``ClosedFormSolver.solve`` with ``return_all`` (FULL_POSE, the pose's own
  configuration + 0.1 rad as the seed): every labelled solution inside the limits, the
  whole-turn copies included, and the one nearest the seed.
* ours_nearest: the same without ``return_all``: the solution nearest the seed, as a
  request that names no branch gets it (all 8 branches are still solved).
* ours_8: ``FamilySolver.solve_all``: the all-solutions call of one pose, as the peers
  answer it: the 8 branches inside the limits, each as the whole-turn copy nearest the seed
  (an (8, 6) array and a validity mask), what ``ik_client --all`` lists.
* ours_raw: the one-pose closed form alone (``ScalarEngine.solve``: the 8 branches,
  unwrapped, no limits), the peers' task.
* ours_batch: ``FamilySolver.solve_poses`` on 10,000 poses in one call (every branch
  inside the limits), per pose (best of 3 calls), and its throughput in poses/s.
* peer: ur-analytic-ik (C++, ``ur5.inverse_kinematics``, its base frame turned by π
  about z from base_link) or py-opw-kinematics (Rust, ``Robot.inverse`` with the OPW
  parameters, offsets and signs our recognition extracted), one pose per call; and
  py-opw-kinematics' ``batch_inverse`` on the 10,000 poses (it returns one solution per
  pose, ranked against the previous one), per pose.
* rtb_ik_LM: roboticstoolbox's C++ ``ik_LM`` for one numeric answer on the same arm
  (as bench_urdf_arms: tol ½ (1e-5)², q0 the middle of the ranges).

Agreement: a pose agrees when every peer solution is one of our 8 branches and every one
of ours is one of the peer's, joint by joint modulo 2π, within AGREE rad (and, reported
beside it, within LOOSE rad: ur-analytic-ik's UR5 constants differ from the URDF's FK by
about 1e-11 m, ``peer_fk_vs_urdf_max``, which moves its angles by up to a few 1e-9 rad).

The solvers take turns pose by pose, so load from other work on the machine falls on all
of them alike; compare ratios from one run, not absolute times across days.

Results print as a table and merge into ``bench_results.json`` under ``ik_families``.

Run: ``python benchmarks/bench_families.py [--quick] [--poses N]``.
"""

from __future__ import annotations

import argparse
import datetime
import gc
from importlib import metadata
import math
from pathlib import Path
import statistics
import sys
import time
from xml.etree import ElementTree

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_urdf_arms import ArmSpec, load_urdf, RTB_TOL, RtbLm  # noqa: E402
from results_file import merge_section  # noqa: E402

from arm_kinematics.description.bundled import description_dir, expand_xacro_file  # noqa: E402
from arm_kinematics.ik.closed_form.dispatch import ClosedFormSolver  # noqa: E402
from arm_kinematics.ik.result import GoalType  # noqa: E402
from arm_kinematics.ik.solvers.base import SolveOptions, workspace_from_model  # noqa: E402
from arm_kinematics.model.arm_model import ArmModel  # noqa: E402

SEED = 2026
DEFAULT_POSES = 300
QUICK_POSES = 40
BATCH = 10_000
BATCH_RUNS = 3
AGREE = 1e-9                    # rad, largest joint gap of two matching solutions
LOOSE = 1e-8                    # rad, the same allowing for a peer's rounded constants
ALL = SolveOptions(return_all=True)
ARMS = (ArmSpec('ur5', 'base_link', 'tool0', 'ur_description/urdf/ur5_robot.urdf'),
        ArmSpec('irb2400_like', 'base_link', 'tool0', ''),
        ArmSpec('kr6_r700_like', 'base_link', 'tool0', ''),
        ArmSpec('irb6640', 'base_link', 'tool0', ''))
# Arms whose URDF the repository holds (test data), by label.
REPO_URDFS = {'irb6640': HERE.parent / 'src/arm_kinematics/test/urdf/irb6640.urdf'}
UR_BASE = np.diag([-1.0, -1.0, 1.0, 1.0])   # ur-analytic-ik's "base" from base_link


def _urdf(arm: ArmSpec) -> str:
    if arm.label in REPO_URDFS:
        return REPO_URDFS[arm.label].read_text(encoding='utf-8')
    if arm.urdf:
        return load_urdf(arm)
    return expand_xacro_file(description_dir() / 'urdf' / f'{arm.label}.urdf.xacro')


def _without_meshes(urdf: str) -> str:
    """``urdf`` without its links' visual and collision elements (the same joints)."""
    root = ElementTree.fromstring(urdf)
    for link in root.findall('link'):
        for element in link.findall('visual') + link.findall('collision'):
            link.remove(element)
    return ElementTree.tostring(root, encoding='unicode')


def _gap(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(np.remainder(a - b + math.pi, 2.0 * math.pi) - math.pi).max())


def _agree(ours: np.ndarray, theirs: np.ndarray) -> tuple[bool, float]:
    """(sets equal within AGREE, the largest nearest-match gap), rad."""
    if not len(ours) or not len(theirs):
        return len(ours) == len(theirs), 0.0
    worst = max(max(min(_gap(q, p) for p in theirs) for q in ours),
                max(min(_gap(p, q) for q in ours) for p in theirs))
    return worst <= AGREE and len(ours) == len(theirs), worst


class Peer:
    """The compiled closed form of the arm's family, one pose per call and batched."""

    def __init__(self, family_name: str, parameters: dict) -> None:
        self.name = ''
        self.batch = None
        if family_name == 'ur':
            import ur_analytic_ik
            self.name = f'ur-analytic-ik {metadata.version("ur-analytic-ik")}'
            ur5 = ur_analytic_ik.ur5

            def single(pose: np.ndarray) -> np.ndarray:
                return np.array(ur5.inverse_kinematics(np.ascontiguousarray(UR_BASE @ pose)))

            def forward(q: np.ndarray) -> np.ndarray:
                return UR_BASE @ np.asarray(ur5.forward_kinematics(*q))
            self.single = single
            self.forward = forward
            return
        import py_opw_kinematics as opw
        from scipy.spatial.transform import RigidTransform
        p = parameters
        robot = opw.Robot(opw.KinematicModel(
            a1=p['a1'], a2=p['a2'], b=p['b'], c1=p['c1'], c2=p['c2'], c3=p['c3'], c4=p['c4'],
            offsets=tuple(-v for v in p['offsets']),   # theirs: θ = sign·q − offset
            flip_axes=tuple(bool(s < 0) for s in p['sign_corrections'])), degrees=False)
        self.name = f'py-opw-kinematics {metadata.version("py-opw-kinematics")}'
        to_flange = np.linalg.inv(p['base'])
        from_flange = np.linalg.inv(p['tool'])

        def single(pose: np.ndarray) -> np.ndarray:
            return np.array(robot.inverse(RigidTransform.from_matrix(
                to_flange @ pose @ from_flange)))

        def batch(poses: np.ndarray) -> np.ndarray:
            return robot.batch_inverse(RigidTransform.from_matrix(
                to_flange @ poses @ from_flange))
        def forward(q: np.ndarray) -> np.ndarray:
            return p['base'] @ robot.forward(tuple(q)).as_matrix() @ p['tool']
        self.single = single
        self.batch = batch
        self.forward = forward

    def fk_gap(self, model: ArmModel, q: np.ndarray) -> float:
        """Largest 4×4 entry difference of the peer's FK from the URDF's on ``q``."""
        return max(float(np.abs(self.forward(row) - model.fk(row)).max()) for row in q[:50])


def _median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


def bench_arm(arm: ArmSpec, count: int, log) -> dict:
    urdf = _urdf(arm)
    model = ArmModel.from_urdf(urdf, arm.base, arm.tip)
    solver = ClosedFormSolver(model, workspace_from_model(model))
    family = solver.family
    scalar = solver.scalar
    log(f'  {arm.label}: {family.describe()}')
    peer = None
    try:
        peer = Peer(family.name, family.parameters)
    except ImportError as error:
        log(f'  {arm.label}: no peer ({error})')
    rtb = None
    try:
        # rtb resolves package:// meshes while parsing; a test-data URDF's packages are not
        # installed, and ik_LM needs the joints only.
        rtb = RtbLm(model, _without_meshes(urdf) if arm.label in REPO_URDFS else urdf, arm)
    except ImportError as error:
        log(f'  {arm.label}: no roboticstoolbox ({error})')
    rng = np.random.default_rng(SEED)
    q = model.random_configurations(count, rng)
    poses = model.fk_batch(q)
    seeds = np.clip(q + 0.1, model.lower, model.upper)
    times: dict[str, list[float]] = {'ours_all': [], 'ours_nearest': [], 'ours_8': [],
                                     'ours_raw': [], 'peer': [], 'rtb': []}
    reached = own_found = agreed = loose = rtb_ok = 0
    solutions = []
    worst_gap = 0.0
    for index in range(count):
        pose, seed = poses[index], seeds[index]
        position, rotation = pose[:3, 3].copy(), pose[:3, :3].copy()
        turns = list(times)
        turns = turns[index % 6:] + turns[:index % 6]   # the order rotates
        for turn in turns:
            if turn == 'ours_all':
                start = time.perf_counter()
                result = solver.solve(position, rotation, GoalType.FULL_POSE, seed, ALL)
                times[turn].append(time.perf_counter() - start)
                reached += result.success
                solutions.append(len(result.solutions))
                own_found += bool(result.success and any(
                    np.abs(s.q - q[index]).max() < 1e-9 for s in result.solutions))
            elif turn == 'ours_nearest':
                start = time.perf_counter()
                solver.solve(position, rotation, GoalType.FULL_POSE, seed)
                times[turn].append(time.perf_counter() - start)
            elif turn == 'ours_8':
                flat, reference = rotation.reshape(-1).tolist(), tuple(seed.tolist())
                start = time.perf_counter()
                solver.solve_all(position.tolist(), flat, reference)
                times[turn].append(time.perf_counter() - start)
            elif turn == 'ours_raw':
                flat, reference = tuple(rotation.reshape(-1).tolist()), tuple(seed.tolist())
                start = time.perf_counter()
                raw, _ = scalar.solve(tuple(position.tolist()), flat, reference)
                times[turn].append(time.perf_counter() - start)
                ours = np.array([q for q, good, _ in raw if good])
            elif turn == 'peer' and peer is not None:
                start = time.perf_counter()
                theirs = peer.single(pose)
                times[turn].append(time.perf_counter() - start)
            elif turn == 'rtb' and rtb is not None:
                start = time.perf_counter()
                answer = rtb.ets.ik_LM(pose, q0=rtb.seed, tol=RTB_TOL)
                times[turn].append(time.perf_counter() - start)
                rtb_ok += bool(answer.success)
        if peer is not None:
            theirs = theirs[np.all(np.isfinite(theirs), axis=1)] if len(theirs) else theirs
            same, gap = _agree(ours, theirs)
            agreed += same
            loose += same or (gap <= LOOSE and len(ours) == len(theirs))
            worst_gap = max(worst_gap, gap)
    # Vectorised: BATCH poses in one call.
    q_batch = model.random_configurations(BATCH, rng)
    batch_poses = model.fk_batch(q_batch)
    batch_seeds = np.clip(q_batch + 0.1, model.lower, model.upper)
    gc.collect()
    # Best of BATCH_RUNS, ours and the peer's in turn: one call is long enough for a burst
    # of other work on a shared machine to land in it.
    ours_batch = peer_batch = math.inf
    for _ in range(BATCH_RUNS):
        start = time.perf_counter()
        _, valid, _ = solver.solve_poses(batch_poses[:, :3, 3], batch_poses[:, :3, :3],
                                         batch_seeds)
        ours_batch = min(ours_batch, time.perf_counter() - start)
        if peer is not None and peer.batch is not None:
            start = time.perf_counter()
            peer.batch(batch_poses)
            peer_batch = min(peer_batch, time.perf_counter() - start)
    if not math.isfinite(peer_batch):
        peer_batch = None
    record = {
        'arm': arm.label, 'family': family.name, 'poses': count,
        'parameters': {k: v for k, v in family.parameters.items()
                       if isinstance(v, float)},
        'reachable_fraction': reached / count,
        'own_configuration_found_fraction': own_found / count,
        'solutions_per_pose_mean': float(np.mean(solutions)),
        'ours_all_us': _median_us(times['ours_all']),
        'ours_nearest_us': _median_us(times['ours_nearest']),
        'ours_solve_all_us': _median_us(times['ours_8']),
        'ours_raw_us': _median_us(times['ours_raw']),
        'ours_batch_us_per_pose': ours_batch / BATCH * 1e6,
        'ours_batch_poses_per_s': BATCH / ours_batch,
        'ours_batch_branches_valid_mean': float(valid.sum(axis=1).mean()),
        'batch_poses': BATCH,
    }
    if peer is not None:
        record.update({'peer': peer.name, 'peer_us': _median_us(times['peer']),
                       'peer_fk_vs_urdf_max': peer.fk_gap(model, q),
                       'agreement_fraction': agreed / count,
                       f'agreement_fraction_{LOOSE:g}_rad': loose / count,
                       'agreement_worst_gap_rad': worst_gap,
                       'ratio_ours_all_to_peer': record['ours_all_us'] /
                       _median_us(times['peer']),
                       'ratio_ours_solve_all_to_peer': record['ours_solve_all_us'] /
                       _median_us(times['peer']),
                       'ratio_ours_batch_to_peer_single': record['ours_batch_us_per_pose'] /
                       _median_us(times['peer'])})
        if peer_batch is not None:
            record['peer_batch_us_per_pose'] = peer_batch / BATCH * 1e6
            record['peer_batch_note'] = 'batch_inverse returns one solution per pose'
    if rtb is not None:
        record.update({'rtb_ik_LM_us': _median_us(times['rtb']),
                       'rtb_ik_LM_success_fraction': rtb_ok / count,
                       'ratio_ours_all_to_rtb_ik_LM': record['ours_all_us'] /
                       _median_us(times['rtb']),
                       'ratio_ours_nearest_to_rtb_ik_LM': record['ours_nearest_us'] /
                       _median_us(times['rtb']),
                       'ratio_ours_raw_to_rtb_ik_LM': record['ours_raw_us'] /
                       _median_us(times['rtb'])})
    return record


def format_table(records: list[dict]) -> str:
    header = (f'{"arm":<14} {"family":<6} {"reach":>6} {"agree":>6} {"ours_all":>9} '
              f'{"nearest":>8} {"ours_8":>7} {"ours_raw":>9} {"peer":>8} {"rtb_LM":>8} '
              f'{"batch":>8} {"peer_b":>8} '
              f'{"×peer":>6} {"8×peer":>6} {"×rtb":>6} {"b×peer":>7}')
    lines = [header, '-' * len(header)]
    for r in records:
        def cell(key: str, width: int, digits: int = 1, r: dict = r) -> str:
            value = r.get(key)
            return f'{value:>{width}.{digits}f}' if isinstance(value, float) else \
                f'{"-":>{width}}'
        lines.append(
            f'{r["arm"]:<14} {r["family"]:<6} {100 * r["reachable_fraction"]:>5.0f}% '
            f'{100 * r.get("agreement_fraction", math.nan):>5.0f}% {cell("ours_all_us", 9)} '
            f'{cell("ours_nearest_us", 8)} {cell("ours_solve_all_us", 7)} '
            f'{cell("ours_raw_us", 9)} {cell("peer_us", 8)} '
            f'{cell("rtb_ik_LM_us", 8)} '
            f'{cell("ours_batch_us_per_pose", 8, 2)} {cell("peer_batch_us_per_pose", 8, 2)} '
            f'{cell("ratio_ours_all_to_peer", 6)} {cell("ratio_ours_solve_all_to_peer", 6, 2)} '
            f'{cell("ratio_ours_all_to_rtb_ik_LM", 6, 2)} '
            f'{cell("ratio_ours_batch_to_peer_single", 7, 2)}')
    return '\n'.join(lines)


def versions() -> dict[str, str]:
    out = {'python': sys.version.split()[0], 'numpy': np.__version__}
    for package in ('ur-analytic-ik', 'py-opw-kinematics', 'roboticstoolbox-python',
                    'example-robot-data'):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = 'not installed'
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help=f'{QUICK_POSES} poses per arm')
    parser.add_argument('-n', '--poses', type=int, default=None,
                        help=f'single-call poses per arm (default {DEFAULT_POSES})')
    parser.add_argument('--output', type=Path, default=HERE.parent / 'bench_results.json')
    args = parser.parse_args(argv)
    count = args.poses or (QUICK_POSES if args.quick else DEFAULT_POSES)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    started = time.perf_counter()
    records = []
    for arm in ARMS:
        try:
            records.append(bench_arm(arm, count, log))
        except FileNotFoundError as error:
            log(f'  {arm.label}: skipped: {error}')
    print(f'Closed-form families: {count} FK-made poses per arm (seed {SEED}), µs per pose '
          f'(median); batch = {BATCH} poses in one call. agree = solution sets equal to the '
          f"peer's within {AGREE:g} rad; ×peer, 8×peer, ×rtb = ours_all / peer, ours_8 / peer, "
          'ours_all / rtb ik_LM; '
          "b×peer = our batch per pose / the peer's single call.")
    print(format_table(records))
    merge_section(args.output, 'ik_families', {
        'generated': datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds'),
        'poses_per_arm': count, 'batch_poses': BATCH, 'seed': SEED, 'agree_rad': AGREE,
        'versions': versions(), 'records': records,
        'wall_time_s': time.perf_counter() - started,
    })
    print(f'wrote {args.output} (key "ik_families")')
    return 0


if __name__ == '__main__':
    sys.exit(main())
