"""Benchmark of the collision checker (kinematics.collision) on real arms' URDF geometry.

For the Panda and the UR5 of example-robot-data, with their URDF collision meshes (convex
hulls) and with primitives (each mesh replaced by its bounding box), around a scene of a table
and two boxes, on N seeded random poses inside the joint limits:

1. ours: ``CollisionChecker.check`` per pose (FK, self-collision against the computed allowed
   pairs, the scene, the closest pair of each kind and every contact) and ``is_free`` (the
   yes/no form a planner calls);
2. the library's own pair queries for the same pairs plus FK, in the same run: ``model.frames``,
   one transform per shape, and coal's distance (resp. collision) functor on every checked pair;
   ratio = ours / that; and the strictest form of that peer: the queries alone on every pair
   (transforms built before the clock starts) plus the chain's fastest FK (the model's
   plain-float kernel, which the checker uses): ``ratio_check_queries`` (``q ratio``);
3. python-fcl on the same shapes, poses and pairs (distance and collision of every pair), the
   figure the library was chosen on.

4. planning (``plan_joint_path``, OMPL RRTConnect + simplification, 1 cm dense validation) on
   seeded random pairs of clear poses drawn inside ±π per joint (the UR5's shoulder lift in
   [-π, 0], above the table) with a 1 s budget: success rate, median and p95 time (of all
   pairs, and of those whose straight path is blocked), path length over the straight joint
   distance. Whether every pair is solvable is not known (a pose may lie in a part of the free
   space the other cannot reach): a pair unsolved in the budget is tried again with 10 s, and
   the success rate is given over the pairs some attempt solved (the solvable ones).

Ours must agree with the all-pairs answer (the closest distance to 1e-6 m, and the verdict):
the script counts and prints disagreements. Times are the best of 3 runs over all poses in
process CPU time, µs per pose. Results merge into ``bench_results.json`` under ``collision``.

Run: ``python benchmarks/bench_collision.py [--quick]``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
import datetime
from importlib import metadata
from pathlib import Path
import sys
import sysconfig
import time
from xml.etree import ElementTree

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SEED = 2026
DEFAULT_POSES = 1000
QUICK_POSES = 100
DEFAULT_PLANS = 100
QUICK_PLANS = 5
PLAN_BUDGET_S = 1.0
# A pair no plan solved within PLAN_BUDGET_S is tried again with this budget: solved then, it
# is solvable (counted against the success rate); unsolved, it is reported as not shown
# solvable (the planner is probabilistically complete, so this is a bound, not a proof).
RETRY_BUDGET_S = 10.0
REPEATS = 3
ARMS = {
    'panda': ('panda_description/urdf/panda.urdf', 'panda_link0', 'panda_hand_tcp'),
    'ur5': ('ur_description/urdf/ur5_robot.urdf', 'base_link', 'tool0'),
}

try:
    import arm_kinematics  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO / 'src' / 'arm_kinematics'))

from results_file import merge_section  # noqa: E402

from arm_kinematics.description.meshes import default_search_paths, resolve_mesh  # noqa: E402
from arm_kinematics.model.arm_model import ArmModel  # noqa: E402
from arm_kinematics.motion.planning.sampling import path_length, plan_joint_path  # noqa: E402
from arm_kinematics.scene import backend  # noqa: E402
from arm_kinematics.scene.checker import CollisionChecker  # noqa: E402
from arm_kinematics.scene.objects import Scene  # noqa: E402
from arm_kinematics.scene.shapes import convex_hull, parse_origin  # noqa: E402
from arm_testing.real_arms import TABLE_AND_TWO_BOXES  # noqa: E402

# A table under the arm and two boxes in its reach (base frame, m).
SCENE = [dict(item) for item in TABLE_AND_TWO_BOXES]


def robots_dir() -> Path:
    """example-robot-data's robots folder (FileNotFoundError when it is not installed)."""
    folder = (Path(sysconfig.get_paths()['purelib']) / 'cmeel.prefix' / 'share'
              / 'example-robot-data' / 'robots')
    if not folder.is_dir():
        raise FileNotFoundError(f'{folder} not found: install requirements/dev.txt')
    return folder


def primitive_urdf(urdf: str, urdf_path: Path) -> str:
    """``urdf`` with every collision mesh replaced by its bounding box (same pose)."""
    import trimesh
    root = ElementTree.fromstring(urdf)
    paths = default_search_paths(urdf_path)
    for collision in root.iter('collision'):
        geometry = collision.find('geometry')
        mesh = geometry.find('mesh') if geometry is not None else None
        if mesh is None:
            continue
        path = resolve_mesh(mesh.get('filename', ''), paths)
        scale = np.array([float(v) for v in mesh.get('scale', '1 1 1').split()])
        bounds = trimesh.load(str(path), force='mesh').bounds * scale
        origin = parse_origin(collision.find('origin'))
        centre = origin[:3, :3] @ bounds.mean(axis=0) + origin[:3, 3]
        element = collision.find('origin')
        if element is None:
            element = ElementTree.SubElement(collision, 'origin')
        element.set('xyz', ' '.join(f'{v:.9g}' for v in centre))
        geometry.remove(mesh)
        ElementTree.SubElement(geometry, 'box',
                               size=' '.join(f'{v:.9g}' for v in bounds[1] - bounds[0]))
    return ElementTree.tostring(root, encoding='unicode')


class AllPairs:
    """The same pairs as the checker's, every one queried each pose (no bounding-sphere
    culling, no branch and bound): FK, a transform per shape, then the library's calls."""

    def __init__(self, checker: CollisionChecker) -> None:
        self.checker = checker
        self.model = checker.model
        self.self_pairs = checker._self
        self.scene_pairs, self.objects = checker._scene_group()
        self.offsets = checker._offset
        self.frames_of = checker._frame

    def poses(self, q: np.ndarray) -> np.ndarray:
        frames = self.model.frames(q)
        extended = np.concatenate([np.eye(4)[None], frames[:self.model.dof]])
        return extended[self.frames_of] @ self.offsets

    def coal_distance(self, q: np.ndarray) -> float:
        poses = [backend.transform(p) for p in self.poses(q)]
        objects = [backend.transform(o.pose) for o in self.objects]
        best = np.inf
        for a, b, query in zip(self.self_pairs.a, self.self_pairs.b, self.self_pairs.queries):
            best = min(best, query.distance(poses[a], poses[b]))
        for a, b, query in zip(self.scene_pairs.a, self.scene_pairs.b,
                               self.scene_pairs.queries):
            best = min(best, query.distance(poses[a], objects[b]))
        return best

    def posed(self, q: np.ndarray) -> tuple[list, list]:
        """The library transforms of every shape and object at ``q`` (for the queries-only
        figures, built before the clock starts)."""
        return ([backend.transform(p) for p in self.poses(q)],
                [backend.transform(o.pose) for o in self.objects])

    def distances_only(self, posed: tuple[list, list]) -> float:
        poses, objects = posed
        best = np.inf
        for a, b, query in zip(self.self_pairs.a_list, self.self_pairs.b_list,
                               self.self_pairs.queries):
            best = min(best, query.distance(poses[a], poses[b]))
        for a, b, query in zip(self.scene_pairs.a_list, self.scene_pairs.b_list,
                               self.scene_pairs.queries):
            best = min(best, query.distance(poses[a], objects[b]))
        return best

    def collides_only(self, posed: tuple[list, list]) -> bool:
        poses, objects = posed
        hit = False
        for a, b, query in zip(self.self_pairs.a_list, self.self_pairs.b_list,
                               self.self_pairs.queries):
            hit |= query.collide(poses[a], poses[b])
        for a, b, query in zip(self.scene_pairs.a_list, self.scene_pairs.b_list,
                               self.scene_pairs.queries):
            hit |= query.collide(poses[a], objects[b])
        return hit

    def coal_collides(self, q: np.ndarray) -> bool:
        poses = [backend.transform(p) for p in self.poses(q)]
        objects = [backend.transform(o.pose) for o in self.objects]
        hit = False
        for a, b, query in zip(self.self_pairs.a, self.self_pairs.b, self.self_pairs.queries):
            hit |= query.collide(poses[a], poses[b])
        for a, b, query in zip(self.scene_pairs.a, self.scene_pairs.b,
                               self.scene_pairs.queries):
            hit |= query.collide(poses[a], objects[b])
        return hit


class FclPairs(AllPairs):
    """The same shapes, poses and pairs in python-fcl."""

    def __init__(self, checker: CollisionChecker) -> None:
        super().__init__(checker)
        import fcl
        self.fcl = fcl
        self.robot = [fcl.CollisionObject(self._geometry(s)) for s in checker._shapes]
        self.scene = [fcl.CollisionObject(self._geometry(o.shape),
                                          fcl.Transform(o.pose[:3, :3], o.pose[:3, 3]))
                      for o in self.objects]
        self.pairs = ([(self.robot[a], self.robot[b])
                       for a, b in zip(self.self_pairs.a, self.self_pairs.b)] +
                      [(self.robot[a], self.scene[b])
                       for a, b in zip(self.scene_pairs.a, self.scene_pairs.b)])

    def _geometry(self, shape: object) -> object:
        fcl, size = self.fcl, shape.dimensions
        if shape.kind == 'box':
            return fcl.Box(*size['size'])
        if shape.kind == 'sphere':
            return fcl.Sphere(size['radius'])
        if shape.kind == 'cylinder':
            return fcl.Cylinder(size['radius'], size['length'])
        if shape.kind == 'capsule':
            return fcl.Capsule(size['radius'], size['length'])
        import trimesh
        vertices = np.asarray(trimesh.load(size['file'], force='mesh').vertices) * \
            np.asarray(size['scale'])
        vertices, faces = convex_hull(vertices)
        flat = np.hstack([np.full((len(faces), 1), 3), faces]).ravel()
        return fcl.Convex(vertices, len(faces), flat)

    def _pose(self, q: np.ndarray) -> None:
        for item, pose in zip(self.robot, self.poses(q)):
            item.setTransform(self.fcl.Transform(pose[:3, :3], pose[:3, 3]))

    def fcl_distance(self, q: np.ndarray) -> float:
        self._pose(q)
        fcl = self.fcl
        request = fcl.DistanceRequest(enable_signed_distance=True)
        return min(fcl.distance(a, b, request, fcl.DistanceResult()) for a, b in self.pairs)

    def fcl_collides(self, q: np.ndarray) -> bool:
        self._pose(q)
        fcl = self.fcl
        request = fcl.CollisionRequest()
        hit = False
        for a, b in self.pairs:
            hit |= fcl.collide(a, b, request, fcl.CollisionResult()) > 0
        return hit


def per_pose_us(function: Callable[[object], object], qs: Sequence) -> float:
    """Best of REPEATS process CPU times over all poses, µs per pose (CPU time: the machine
    is shared, and wall time then measures the neighbours)."""
    best = np.inf
    for _ in range(REPEATS):
        started = time.process_time()
        for q in qs:
            function(q)
        best = min(best, time.process_time() - started)
    return best / len(qs) * 1e6


def bench(label: str, geometry: str, count: int, with_fcl: bool) -> dict:
    """One arm with one kind of geometry."""
    relative, base, tip = ARMS[label]
    path = robots_dir() / relative
    urdf = path.read_text(encoding='utf-8')
    if geometry == 'primitives':
        urdf = primitive_urdf(urdf, path)
    model = ArmModel.from_urdf(urdf, base, tip)
    started = time.perf_counter()
    checker = CollisionChecker(model, urdf, urdf_path=path)
    allowed_s = time.perf_counter() - started
    scene = Scene(model.base_link)
    scene.add_all(SCENE)
    checker.scene = scene
    qs = model.random_configurations(count, np.random.default_rng(SEED))
    reference = AllPairs(checker)
    reports = [checker.check(q) for q in qs]
    truth = [reference.coal_distance(q) for q in qs]
    closest = [min(c.distance for c in (r.closest_self, r.closest_scene) if c is not None)
               for r in reports]
    padding = checker.padding
    record = {
        'arm': label, 'geometry': geometry, 'poses': count,
        'links': len(checker.links), 'shapes': len(checker._shapes),
        'self_pairs_checked': len(checker._self), 'scene_pairs': len(reference.scene_pairs),
        'allowed_pairs': len(checker.allowed), 'allowed_pairs_s': allowed_s,
        'colliding_poses': sum(r.collides for r in reports),
        'disagreements_distance': int(sum(abs(a - b) > 1e-6 for a, b in zip(closest, truth))),
        'disagreements_verdict': int(sum(r.collides != (t <= padding)
                                         for r, t in zip(reports, truth))) +
        int(sum(checker.is_free(q) != (t > padding) for q, t in zip(qs, truth))),
        'check_us': per_pose_us(checker.check, qs),
        'is_free_us': per_pose_us(checker.is_free, qs),
        'coal_all_pairs_distance_us': per_pose_us(reference.coal_distance, qs),
        'coal_all_pairs_collide_us': per_pose_us(reference.coal_collides, qs),
        'fk_only_us': per_pose_us(reference.poses, qs),
    }
    record['ratio_check'] = record['check_us'] / record['coal_all_pairs_distance_us']
    record['ratio_is_free'] = record['is_free_us'] / record['coal_all_pairs_collide_us']
    # The strictest peer: the library's queries alone on every pair (transforms built before
    # the clock starts) plus the fastest FK of the chain (the model's plain-float kernel, the
    # one the checker uses, joint frames only), in the same run.
    posed = [reference.posed(q) for q in qs]
    record['coal_pairs_distance_only_us'] = per_pose_us(reference.distances_only, posed)
    record['coal_pairs_collide_only_us'] = per_pose_us(reference.collides_only, posed)
    record['fk_kernel_us'] = per_pose_us(lambda q: model.kernel.joint_poses(q.tolist()), qs)
    record['ratio_check_queries'] = record['check_us'] / (
        record['coal_pairs_distance_only_us'] + record['fk_kernel_us'])
    record['ratio_is_free_queries'] = record['is_free_us'] / (
        record['coal_pairs_collide_only_us'] + record['fk_kernel_us'])
    if with_fcl:
        peer = FclPairs(checker)
        fcl_truth = [peer.fcl_distance(q) for q in qs]
        record['fcl_disagreements_distance_1mm'] = int(sum(
            abs(a - b) > 1e-3 for a, b in zip(fcl_truth, truth)))
        record['fcl_all_pairs_distance_us'] = per_pose_us(peer.fcl_distance, qs)
        record['fcl_all_pairs_collide_us'] = per_pose_us(peer.fcl_collides, qs)
    return record


def bench_planning(label: str, count: int) -> dict:
    """Plans between ``count`` seeded pairs of clear poses around the benchmark scene."""
    relative, base, tip = ARMS[label]
    path = robots_dir() / relative
    urdf = path.read_text(encoding='utf-8')
    model = ArmModel.from_urdf(urdf, base, tip)
    checker = CollisionChecker(model, urdf, urdf_path=path)
    checker.scene.add_all(SCENE)
    lower = np.maximum(model.lower, -np.pi)
    upper = np.minimum(model.upper, np.pi)
    if label == 'ur5':
        upper[1] = 0.0
    rng = np.random.default_rng(SEED)
    pairs = []
    while len(pairs) < count:
        start, goal = rng.uniform(lower, upper, size=(2, model.dof))
        if checker.is_free(start) and checker.is_free(goal):
            pairs.append((start, goal))
    times, ratios, detours, straight, reasons, retried = [], [], [], 0, [], 0
    detour_times = []
    for start, goal in pairs:
        result = plan_joint_path(checker, start, goal, PLAN_BUDGET_S, 0.01, seed=SEED)
        times.append(result.planning_time)
        if result.ok:
            straight += result.straight
            ratios.append(path_length(result.path) / path_length(np.array([start, goal])))
            if not result.straight:
                detours.append(ratios[-1])
                detour_times.append(result.planning_time)
        else:
            reasons.append(result.reason[:160])
            retried += plan_joint_path(checker, start, goal, RETRY_BUDGET_S, 0.01).ok
    solvable = len(ratios) + retried
    return {'arm': label, 'pairs': count, 'budget_s': PLAN_BUDGET_S, 'max_step_m': 0.01,
            'solved': len(ratios), 'straight': straight, 'planned': len(detours),
            'solvable': solvable, 'retry_budget_s': RETRY_BUDGET_S,
            'success_of_solvable': len(ratios) / solvable if solvable else None,
            'median_s': float(np.median(times)), 'p95_s': float(np.percentile(times, 95)),
            'median_planned_s': float(np.median(detour_times)) if detour_times else None,
            'p95_planned_s': float(np.percentile(detour_times, 95)) if detour_times else None,
            'length_ratio_median': float(np.median(ratios)) if ratios else None,
            'length_ratio_median_planned': float(np.median(detours)) if detours else None,
            'length_ratio_p95_planned': float(np.percentile(detours, 95)) if detours else None,
            'failures': reasons}


def format_table(records: Sequence[dict]) -> str:
    head = (f'{"arm":6} {"geometry":10} {"pairs":>5} {"check":>8} {"is_free":>8} '
            f'{"coal all":>9} {"ratio":>6} {"coal col":>9} {"ratio":>6} {"fcl all":>9} '
            f'{"fcl col":>9} {"FK":>6} {"q only":>7} {"kFK":>5} {"q ratio":>7} '
            f'{"hit %":>6} {"disagree":>8}')
    lines = [head, '-' * len(head)]
    for r in records:
        lines.append(
            f'{r["arm"]:6} {r["geometry"]:10} {r["self_pairs_checked"] + r["scene_pairs"]:5d} '
            f'{r["check_us"]:8.1f} {r["is_free_us"]:8.1f} '
            f'{r["coal_all_pairs_distance_us"]:9.1f} {r["ratio_check"]:6.2f} '
            f'{r["coal_all_pairs_collide_us"]:9.1f} {r["ratio_is_free"]:6.2f} '
            f'{r.get("fcl_all_pairs_distance_us", float("nan")):9.1f} '
            f'{r.get("fcl_all_pairs_collide_us", float("nan")):9.1f} {r["fk_only_us"]:6.1f} '
            f'{r["coal_pairs_distance_only_us"]:7.1f} {r["fk_kernel_us"]:5.1f} '
            f'{r["ratio_check_queries"]:7.2f} '
            f'{100 * r["colliding_poses"] / r["poses"]:6.1f} '
            f'{r["disagreements_distance"] + r["disagreements_verdict"]:8d}')
    return '\n'.join(lines)


def versions() -> dict[str, str]:
    out = {'python': sys.version.split()[0], 'numpy': np.__version__}
    for package in ('coal', 'python-fcl', 'trimesh', 'scipy', 'example-robot-data'):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = 'not installed'
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help=f'{QUICK_POSES} poses per arm')
    parser.add_argument('-n', '--poses', type=int, default=None)
    parser.add_argument('--plans', type=int, default=None,
                        help=f'planning pairs per arm (default {DEFAULT_PLANS}, --quick '
                             f'{QUICK_PLANS}; 0: none)')
    parser.add_argument('--output', type=Path, default=REPO / 'bench_results.json')
    args = parser.parse_args(argv)
    count = args.poses or (QUICK_POSES if args.quick else DEFAULT_POSES)
    try:
        import fcl  # noqa: F401
        with_fcl = True
    except ImportError:
        print('python-fcl is not installed (requirements/bench.txt): no fcl figures',
              file=sys.stderr)
        with_fcl = False
    started = time.perf_counter()
    records, skipped = [], {}
    for label in ARMS:
        for geometry in ('meshes', 'primitives'):
            try:
                records.append(bench(label, geometry, count, with_fcl))
            except FileNotFoundError as error:
                skipped[label] = str(error)
                break
    print(f'Collision check per pose, µs ({count} random poses, seed {SEED}, best of '
          f'{REPEATS}, CPU time); scene: a table and two boxes. check = ours (self + scene, FK, '
          'closest pairs); coal all / fcl all = FK + the library distance on every '
          'checked pair; col = the yes/no forms; ratio = ours / coal all; q only = the coal '
          'distance queries alone on every pair, kFK = the kernel FK the checker uses, q ratio = '
          'check / (q only + kFK).')
    print(format_table(records))
    plans = args.plans if args.plans is not None else \
        (QUICK_PLANS if args.quick else DEFAULT_PLANS)
    planning = []
    if plans > 0:
        for label in ARMS:
            if label not in skipped:
                planning.append(bench_planning(label, plans))
        print(f'Planning, {plans} pairs per arm, budget {PLAN_BUDGET_S:g} s, dense check 1 cm:')
        for entry in planning:
            ratio = entry['length_ratio_median_planned']
            share = entry['success_of_solvable']
            planned = entry['median_planned_s']
            planned_p95 = entry['p95_planned_s']
            print(f'  {entry["arm"]:6} solved {entry["solved"]}/{entry["pairs"]} (straight '
                  f'{entry["straight"]}, planned {entry["planned"]}); solvable '
                  f'{entry["solvable"]} (a {entry["retry_budget_s"]:g} s retry), success '
                  f'{"-" if share is None else f"{100 * share:.1f} %"} of them; time median '
                  f'{entry["median_s"] * 1e3:.0f} ms, p95 {entry["p95_s"] * 1e3:.0f} ms (planned '
                  f'only: median {"-" if planned is None else f"{planned * 1e3:.0f}"} ms, p95 '
                  f'{"-" if planned is None else f"{planned_p95 * 1e3:.0f}"} ms); '
                  f'planned paths: length / straight median '
                  f'{"-" if ratio is None else f"{ratio:.2f}"}')
    merge_section(args.output, 'collision', {
        'generated': datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds'),
        'poses_per_arm': count, 'seed': SEED, 'repeats': REPEATS, 'scene': SCENE,
        'library': backend.NAME, 'versions': versions(), 'records': records,
        'planning': planning,
        'skipped': skipped, 'wall_time_s': time.perf_counter() - started,
    })
    print(f'wrote {args.output} (key "collision")')
    bad = sum(r['disagreements_distance'] + r['disagreements_verdict'] for r in records)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
