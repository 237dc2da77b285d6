"""Benchmark of our IK on real arms' URDFs against TRAC-IK and roboticstoolbox's ik_LM.

Arms, all from the URDFs of ``example-robot-data`` (none written for this package): UR5
(base_link → tool0), Franka Panda (panda_link0 → panda_hand_tcp), SO-101 (base_link →
gripper_frame_link, 5 joints), UFactory xArm7 (link_base → link_eef), Unitree Z1 (link00 →
link06), Kinova Jaco j2s6s200 (three endless joints), TIAGo's torso lift and arm (8 joints,
the first prismatic) and Baxter's left arm (7 joints). Every solver gets the same URDF text,
the same targets and the same seed.

Protocol (TRAC-IK's published one): targets are FK of random configurations inside the
joint limits (fixed seed, so every target is reachable), solver tolerance 1e-5 on position
and orientation, 5 ms timeout, every solve seeded at the middle of the joint ranges.
Modes: full pose (arms with 6 or more joints) and position only (every arm).

One check decides for every solver: a solve counts when the solver reports a solution,
the joints are finite and inside the URDF limits (endless joints taken modulo 2π), and our
FK of them is within 1.8e-5 m of
the target (TRAC-IK's tolerance is per axis: √3 · 1e-5 = 1.73e-5 m) and, for a full pose,
within 1e-4 rad.

* default: the product's answer — what ik_server returns when a request names no solver:
  the arm's default solver (``Arm.default_solver``: a closed form where one fits, else dls)
  through ``IKDispatcher.run`` with the same options as dls below.
* dls: ``DLSSolver.solve`` called directly (the solver itself, no request validation or
  floor rules), with ``SolveOptions(tolerance=1e-5, orientation_tolerance=1e-5,
  timeout=0.005, restarts=1_000_000)``: random restarts until the clock ends the solve,
  as TRAC-IK does; the other options at their defaults (200 iterations per attempt,
  damping 0.05, random_seed 0). The target orientation is given as a quaternion.
* trac_ik: PyPI ``pytracik`` (KDL + NLopt, C++), Speed mode (its Distance mode always
  runs to the timeout), timeout 5 ms, epsilon 1e-5, joint limits handed over from the
  URDF with ``set_joint_limits`` (it misreads some, the Panda's among them). pytracik
  takes no tolerance bounds, so it cannot leave the orientation free: its position-only
  rows are its full-pose solves of the same targets, checked for position only (a
  stricter task than ours there).
* rtb_ik_LM: roboticstoolbox-python, the ETS from base to tip of ``Robot`` built from the
  URDF text (its FK checked equal to ours on random configurations first), C++ ``ik_LM``
  with ``tol`` = ½ (1e-5)² (it stops at ½ |e|² < tol), ``mask`` (1, 1, 1, 0, 0, 0) for
  position only, ``q0`` the middle of the ranges, its other options at their defaults
  (ilimit 30, slimit 100, joint_limits on). It has no wall-clock timeout; its time is
  what it took. Its URDF reader starts the chain at the joint into the base link (a mount
  offset ours leaves out): that constant transform is measured once and put in front of
  every target.

The solvers take turns target by target (the order rotates), so load from other work on
the machine falls on all of them alike. Times are wall-clock per call, in milliseconds
(and ``cpu p95``, the p95 of each call's CPU time in this process, TRAC-IK's two solver
threads included: its cost without the waits of a loaded machine); ratios are solver /
TRAC-IK on the same targets in the same run. For our solvers the failures are summarised
(error codes, best residuals, joints at a limit, restarts, and the wall and CPU time of the
missed calls: a miss far below its wall time on the CPU was off it) to show why.

Results print as a table and merge into ``bench_results.json`` at the repository root
under the top-level key ``ik_urdf_arms``.

Run: ``python benchmarks/bench_urdf_arms.py [--targets N] [--quick] [--arms ...]
[--markdown]`` (``--markdown``: the table as docs/benchmarks.md prints it).
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
import datetime
import gc
import io
import os
from pathlib import Path
import re
import sys
import sysconfig
import time
import warnings

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SEED = 2024
DEFAULT_TARGETS = 500
QUICK_TARGETS = 50
WARMUP = 10                    # untimed solves per solver before each arm's rows
TOLERANCE = 1e-5               # solver tolerance, m and rad (TRAC-IK's epsilon)
TIMEOUT = 0.005                # s
ACCEPT_POSITION = 1.8e-5       # m
ACCEPT_ORIENTATION = 1e-4      # rad
LIMIT_SLACK = 1e-9             # rad
AT_LIMIT = 1e-6                # rad: a joint this close to a limit is "at" it
MISREAD = 1e-6                 # rad: a TRAC-IK limit further from the URDF's
FK_CHECK = 1e-9                # largest FK difference (any 4×4 entry) allowed for a peer
DLS_RESTARTS = 1_000_000       # restarts until the clock stops the solve
RTB_TOL = 0.5 * TOLERANCE ** 2


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
from urdf_arms_report import (  # noqa: E402
    format_failures,
    format_markdown,
    format_measures,
    format_table,
    versions,
)

from arm_kinematics.arm import load_arm as load_arm_value  # noqa: E402
from arm_kinematics.common.transforms import matrix_to_quaternion, rotation_error  # noqa: E402
from arm_kinematics.description.bundled import expand_xacro  # noqa: E402
from arm_kinematics.ik import objectives  # noqa: E402
from arm_kinematics.ik.request import PreparedRequest  # noqa: E402
from arm_kinematics.ik.result import ErrorCode, GoalType  # noqa: E402
from arm_kinematics.ik.solvers.base import SolveOptions, workspace_from_model  # noqa: E402
from arm_kinematics.ik.solvers.dls import DLSSolver  # noqa: E402
from arm_kinematics.model.arm_model import ArmModel, FULL_TURN  # noqa: E402

DLS_OPTIONS = SolveOptions(tolerance=TOLERANCE, orientation_tolerance=TOLERANCE,
                           timeout=TIMEOUT, restarts=DLS_RESTARTS)
MODES = {'full_pose': GoalType.FULL_POSE, 'position': GoalType.POSITION}
# Our rows, whose misses are explained.
OURS = ('default', 'dls', 'default:closest', 'default:manipulability', 'default:centred')


@dataclass(frozen=True)
class ArmSpec:
    """One arm of the benchmark: its label, chain frames and where its URDF comes from."""

    label: str
    base: str
    tip: str
    urdf: str            # path under example-robot-data's robots folder, or '' (bundled)


ARMS = (
    ArmSpec('ur5', 'base_link', 'tool0', 'ur_description/urdf/ur5_robot.urdf'),
    ArmSpec('panda', 'panda_link0', 'panda_hand_tcp', 'panda_description/urdf/panda.urdf'),
    ArmSpec('so101', 'base_link', 'gripper_frame_link', 'so_arm_description/urdf/so101.urdf'),
    ArmSpec('xarm7', 'link_base', 'link_eef', 'xarm_description/urdf/xarm7.urdf'),
    ArmSpec('z1', 'link00', 'link06', 'z1_description/urdf/z1.urdf'),
    ArmSpec('kinova', 'j2s6s200_link_base', 'j2s6s200_end_effector',
            'kinova_description/robots/kinova.urdf'),
    ArmSpec('tiago', 'torso_fixed_link', 'arm_tool_link', 'tiago_description/robots/tiago.urdf'),
    ArmSpec('baxter', 'left_arm_mount', 'left_wrist', 'baxter_description/urdf/baxter.urdf'),
)
ARM_NAMES = tuple(arm.label for arm in ARMS)


def example_robot_data_share() -> Path:
    """``share/example-robot-data`` of the installed example-robot-data wheel (cmeel)."""
    return (Path(sysconfig.get_paths()['purelib']) / 'cmeel.prefix' / 'share'
            / 'example-robot-data')


def load_urdf(arm: ArmSpec) -> str:
    """URDF text of ``arm`` (FileNotFoundError when example-robot-data is not installed)."""
    if not arm.urdf:
        return expand_xacro(arm.label)
    path = example_robot_data_share() / 'robots' / arm.urdf
    if not path.is_file():
        raise FileNotFoundError(f'{path} not found: install example-robot-data '
                                '(requirements/dev.txt)')
    return path.read_text(encoding='utf-8')


# ------------------------------------------------------------------ the one check
def accepted(model: ArmModel, q: np.ndarray | None, target: np.ndarray,
             full_pose: bool) -> bool:
    """True when ``q`` is finite, inside the limits and our FK meets the target."""
    if q is None:
        return False
    q = np.asarray(q, dtype=float)
    if q.shape != (model.dof,) or not np.all(np.isfinite(q)):
        return False
    # An endless joint (range of a full turn or more) has no limit to break: its angle is
    # taken modulo 2π, as any controller of it would (rtb answers them outside ±π).
    turns = np.where(model.wraps & (q < model.lower), np.ceil((model.lower - q) / FULL_TURN),
                     np.where(model.wraps & (q > model.upper),
                              -np.ceil((q - model.upper) / FULL_TURN), 0.0))
    q = q + FULL_TURN * turns
    if np.any(q < model.lower - LIMIT_SLACK) or np.any(q > model.upper + LIMIT_SLACK):
        return False
    transform = model.fk(q)
    if np.linalg.norm(transform[:3, 3] - target[:3, 3]) > ACCEPT_POSITION:
        return False
    if full_pose:
        angle = np.linalg.norm(rotation_error(transform[:3, :3], target[:3, :3]))
        return bool(angle <= ACCEPT_ORIENTATION)
    return True


def summarise(times: Sequence[float], solved: int, claimed: int,
              cpu: Sequence[float]) -> dict[str, float]:
    """Solve rate and median, p95, mean and max of the per-call wall times (seconds), and
    the p95 of the per-call CPU times of the process (where wall p95 far exceeds it, the
    calls waited off the CPU: a loaded machine).

    ``claimed``: answers the solver reported as solutions (``claimed - solved`` of them
    failed the check).
    """
    array = np.asarray(times)
    return {'n': int(array.size), 'solve_rate': solved / max(array.size, 1),
            'claimed': claimed,
            'median_s': float(np.median(array)), 'p95_s': float(np.percentile(array, 95)),
            'mean_s': float(np.mean(array)), 'max_s': float(np.max(array)),
            'cpu_p95_s': float(np.percentile(cpu, 95)),
            'over_timeout': int(np.sum(array > TIMEOUT))}


# ------------------------------------------------------------------ solvers
class Dls:
    """Our DLS solver, called directly with the protocol's options."""

    name = 'dls'

    def __init__(self, model: ArmModel, urdf: str, arm: ArmSpec) -> None:
        self.solver = DLSSolver(model, workspace_from_model(model))
        self.seed = (0.5 * (model.lower + model.upper)).tolist()
        self.last = None

    def solve(self, position: list[float], quaternion: tuple, transform: np.ndarray,
              goal: GoalType) -> np.ndarray | None:
        result = self.solver.solve(position, quaternion if goal == GoalType.FULL_POSE else None,
                                   goal, self.seed, DLS_OPTIONS)
        self.last = result
        return result.q if result.success else None


class Default:
    """The product's answer: the arm's default solver through the dispatcher (floor rules,
    measures and all), as ik_server runs a request that names no solver."""

    name = 'default'
    full_pose_only = False
    objective = 'first'

    def __init__(self, model: ArmModel, urdf: str, arm: ArmSpec) -> None:
        value = load_arm_value(urdf, None, arm.base, arm.tip)
        self.dispatcher = value.dispatcher()
        self.solver = value.default_solver
        self.reason = value.solver_reason
        self.seed = 0.5 * (model.lower + model.upper)
        self.options = DLS_OPTIONS.with_changes(objective=self.objective)
        self.last = None

    def solve(self, position: list[float], quaternion: tuple, transform: np.ndarray,
              goal: GoalType) -> np.ndarray | None:
        full = goal == GoalType.FULL_POSE
        request = PreparedRequest(self.solver, np.array(position),
                                  transform[:3, :3] if full else None, goal, self.seed,
                                  self.options)
        result = self.dispatcher.run(request).result
        self.last = result
        return result.q if result.success else None


def objective_row(objective: str) -> type:
    """The Default row with another objective (named default:<objective>)."""
    return type(f'Default_{objective}', (Default,),
                {'name': f'default:{objective}', 'objective': objective})


OBJECTIVE_ROWS = {f'default:{o}': objective_row(o)
                  for o in ('closest', 'manipulability', 'centred')}


class TracIk:
    """pytracik's TRAC_IK in Speed mode; always solves the full pose (no bounds argument)."""

    name = 'trac_ik'
    full_pose_only = True

    def __init__(self, model: ArmModel, urdf: str, arm: ArmSpec) -> None:
        import pytracik
        self.module = pytracik
        # KDL prints a warning about a root link with inertia on stderr: harmless here.
        self.solver = pytracik.TRAC_IK(arm.base, arm.tip, urdf, TIMEOUT, TOLERANCE,
                                       pytracik.SolveType.Speed)
        dof = pytracik.get_num_joints(self.solver)
        if dof != model.dof:
            raise RuntimeError(f'TRAC-IK chain has {dof} joints, ours {model.dof}')
        lower = np.array(pytracik.get_joint_lower_bounds(self.solver))
        upper = np.array(pytracik.get_joint_upper_bounds(self.solver))
        # It reads limits in single precision (up to 2e-7 rad outside the URDF's, enough to
        # fail the limit check); a larger difference is a misread.
        wrong = np.flatnonzero((np.abs(lower - model.lower) > MISREAD)
                               | (np.abs(upper - model.upper) > MISREAD))
        self.misread = {model.joint_names[i]: [[float(lower[i]), float(upper[i])],
                                               [float(model.lower[i]), float(model.upper[i])]]
                        for i in wrong}
        pytracik.set_joint_limits(self.solver, model.lower.tolist(), model.upper.tolist())
        check_fk(model, lambda q: pytracik.fk(self.solver, q), 'TRAC-IK')
        self.seed = 0.5 * (model.lower + model.upper)

    def solve(self, position: list[float], quaternion: tuple, transform: np.ndarray,
              goal: GoalType) -> np.ndarray | None:
        x, y, z = position
        qx, qy, qz, qw = quaternion
        answer = self.module.ik(self.solver, self.seed, x, y, z, qx, qy, qz, qw)
        return answer[1:] if answer[0] >= 0 else None


class RtbLm:
    """roboticstoolbox-python: C++ ``ik_LM`` on the base → tip ETS of the URDF's Robot."""

    name = 'rtb_ik_LM'
    full_pose_only = False
    MASKS = {GoalType.POSITION: np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0]),
             GoalType.FULL_POSE: np.ones(6)}

    def __init__(self, model: ArmModel, urdf: str, arm: ArmSpec) -> None:
        import roboticstoolbox as rtb
        from roboticstoolbox.models.URDF.URDFRobot import URDF_file
        from xacrodoc import packages
        # rtb expands package:// mesh paths while parsing: tell it where the package is.
        packages.update_package_cache({'example-robot-data': str(example_robot_data_share())})
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            elinks, name, _ = URDF_file(io.StringIO(urdf))
            robot = rtb.Robot(elinks, name=name)
        ets = robot.ets(start=arm.base, end=arm.tip)
        # Its joints keep their numbers in the whole robot (Baxter's left arm: q10..q16),
        # which its C++ ik_LM does not take: number them 0..n-1 along the chain.
        for index, element in enumerate(element for element in ets if element.isjoint):
            element.jindex = index
        self.ets = rtb.ETS(list(ets))
        if self.ets.n != model.dof:
            raise RuntimeError(f'rtb chain has {self.ets.n} joints, ours {model.dof}')
        # Its chain begins with the joint into the base link: a constant transform in front.
        middle = 0.5 * (model.lower + model.upper)
        self.mount = self.ets.fkine(middle).A @ np.linalg.inv(model.fk(middle))
        unmount = np.linalg.inv(self.mount)
        check_fk(model, lambda q: unmount @ self.ets.fkine(q).A, 'rtb')
        self.seed = 0.5 * (model.lower + model.upper)

    def solve(self, position: list[float], quaternion: tuple, transform: np.ndarray,
              goal: GoalType) -> np.ndarray | None:
        solution = self.ets.ik_LM(self.mount @ transform, q0=self.seed, tol=RTB_TOL,
                                  mask=self.MASKS[goal])
        return np.asarray(solution.q) if solution.success else None


def check_fk(model: ArmModel, fk: Callable[[np.ndarray], np.ndarray], who: str) -> None:
    """Raise when ``fk`` differs from our FK on random configurations inside the limits."""
    rng = np.random.default_rng(SEED + 1)
    worst = max(float(np.abs(np.asarray(fk(q)) - model.fk(q)).max())
                for q in model.random_configurations(20, rng))
    if not worst <= FK_CHECK:
        raise RuntimeError(f'{who} FK differs from ours by {worst:.3g}')


def make_solver(cls: type, model: ArmModel, urdf: str, arm: ArmSpec) -> object:
    """The solver object, or a string saying why it is missing."""
    try:
        return cls(model, urdf, arm)
    except ImportError as error:
        return f'not installed ({error.name})'
    except Exception as error:  # a peer that cannot load this arm must not stop the run
        return f'failed to load: {type(error).__name__}: {error}'


# ------------------------------------------------------------------ failures of our DLS
RESTARTS = re.compile(r'(\d+) restarts')
PRE_CHECKS = (ErrorCode.OUT_OF_REACH, ErrorCode.INSIDE_INNER_HOLE, ErrorCode.BELOW_MIN_HEIGHT)


def dls_failures(model: ArmModel, failures: Sequence[tuple[int, object]],
                 trac_solved: set[int]) -> dict[str, object]:
    """Why our DLS missed: codes, best residuals, joints at a limit, restarts.

    Every target is reachable (FK-made), so a reach-check refusal is the pre-check's error;
    the residuals, limits and restarts are of the misses that iterated.
    """
    if not failures:
        return {'count': 0}
    codes = Counter(ErrorCode(result.code).name for _, result in failures)
    position, orientation, at_limit, restarts, iterations = [], [], 0, [], []
    fixed = ~model.wraps
    refused = 0
    for _, result in failures:
        if result.code in PRE_CHECKS:
            refused += 1      # the workspace pre-check turned it down before any iteration
            continue
        position.append(result.position_error)
        orientation.append(result.orientation_error)
        iterations.append(result.iterations)
        match = RESTARTS.search(result.reason)
        if match:
            restarts.append(int(match.group(1)))
        if result.q is not None:
            q = np.asarray(result.q)
            near = (np.abs(q - model.lower) < AT_LIMIT) | (np.abs(q - model.upper) < AT_LIMIT)
            at_limit += bool(np.any(near & fixed))
    return {
        'count': len(failures), 'codes': dict(codes), 'refused_by_reach_check': refused,
        'best_position_error_m_median': float(np.median(position)) if position else None,
        'best_orientation_error_rad_median':
            float(np.median(orientation)) if orientation else None,
        'best_at_a_limit': at_limit,
        'restarts_median': float(np.median(restarts)) if restarts else None,
        'iterations_median': float(np.median(iterations)) if iterations else None,
        'solved_by_trac_ik': sum(index in trac_solved for index, _ in failures),
        'target_indices': [index for index, _ in failures][:50],
    }


# ------------------------------------------------------------------ one arm
def bench_arm(arm: ArmSpec, count: int, peers: Sequence[str],
              log: Callable[[str], None],
              objective_rows: Sequence[str] = ()) -> dict[str, object]:
    """Every row of one arm: {'records': [...], 'notes': {...}}."""
    urdf = load_urdf(arm)
    model = ArmModel.from_urdf(urdf, arm.base, arm.tip)
    modes = [mode for mode in MODES if mode != 'full_pose' or model.dof >= 6]
    classes = {'default': Default, 'dls': Dls, 'trac_ik': TracIk, 'rtb_ik_LM': RtbLm,
               **OBJECTIVE_ROWS}
    solvers = {name: make_solver(classes[name], model, urdf, arm)
               for name in ('default', 'dls', *peers, *objective_rows)}
    notes: dict[str, object] = {'dof': model.dof, 'joints': list(model.joint_names)}
    if isinstance(solvers['default'], Default):
        notes['default_solver'] = solvers['default'].solver
        notes['default_reason'] = solvers['default'].reason
        log(f'  {arm.label}: default solver {solvers["default"].solver}')
    for name, solver in solvers.items():
        if isinstance(solver, str):
            notes[name] = solver
            log(f'  {arm.label}: {name} {solver}')
    trac = solvers.get('trac_ik')
    if isinstance(trac, TracIk) and trac.misread:
        notes['trac_ik_misread_limits'] = trac.misread
        log(f'  {arm.label}: TRAC-IK misread the limits of {len(trac.misread)} joints; '
            'set from the URDF')
    # Runs: (solver name, mode); TRAC-IK solves once per target, checked in every mode.
    runs = []
    for name, solver in solvers.items():
        if isinstance(solver, str):
            continue
        if getattr(solver, 'full_pose_only', False):
            runs.append((name, 'full_pose'))
        else:
            runs += [(name, mode) for mode in modes]
    rng = np.random.default_rng(SEED)
    configurations = model.random_configurations(count + WARMUP, rng)
    transforms = model.fk_batch(configurations)
    positions = [t[:3, 3].tolist() for t in transforms]
    quaternions = [matrix_to_quaternion(t[:3, :3]) for t in transforms]
    times = {run: [] for run in runs}
    cpu_times = {run: [] for run in runs}
    answers = {run: [] for run in runs}
    ours = {(name, mode): [] for name in OURS for mode in modes}
    log(f'  {arm.label} ({model.dof} joints): {count} targets, '
        f'{", ".join(f"{name}/{mode}" for name, mode in runs)} ...')
    gc.collect()
    for index in range(count + WARMUP):
        turn = index % len(runs)
        for name, mode in runs[turn:] + runs[:turn]:
            solver = solvers[name]
            goal = MODES[mode]
            start, cpu = time.perf_counter(), time.process_time()
            q = solver.solve(positions[index], quaternions[index], transforms[index], goal)
            elapsed = time.perf_counter() - start
            cpu = time.process_time() - cpu
            if index < WARMUP:
                continue
            times[name, mode].append(elapsed)
            cpu_times[name, mode].append(cpu)
            answers[name, mode].append(q)
            if name in OURS:
                ours[name, mode].append(solver.last)
    targets = transforms[WARMUP:]
    records = []
    for mode in modes:
        full = mode == 'full_pose'
        row_runs = [(name, run_mode) for name, run_mode in runs
                    if run_mode == mode or (name == 'trac_ik' and run_mode == 'full_pose')]
        figures, passed = {}, {}
        for run in row_runs:
            ok = [accepted(model, q, target, full)
                  for q, target in zip(answers[run], targets, strict=True)]
            passed[run[0]] = ok
            claimed = sum(q is not None for q in answers[run])
            figures[run[0]] = summarise(times[run], sum(ok), claimed, cpu_times[run])
        reference = figures.get('trac_ik')
        for name, row in figures.items():
            record = {'arm': arm.label, 'dof': model.dof, 'mode': mode, 'solver': name, **row}
            if name == 'trac_ik' and not full:
                record['note'] = ('full-pose solves checked for position only (pytracik '
                                  'takes no tolerance bounds)')
            if reference is not None:
                record['median_ratio_vs_trac_ik'] = row['median_s'] / reference['median_s']
                record['p95_ratio_vs_trac_ik'] = row['p95_s'] / reference['p95_s']
            if name in OURS:
                failed = [(i, result) for i, (result, ok) in
                          enumerate(zip(ours[name, mode], passed[name], strict=True))
                          if not ok]
                trac_solved = {i for i, ok in enumerate(passed.get('trac_ik', ())) if ok}
                record['failures'] = dls_failures(model, failed, trac_solved)
                if failed:
                    # Wall against CPU time of the missed calls: a miss whose CPU time is far
                    # below its wall time spent the budget off the CPU (a loaded machine).
                    missed = [i for i, _ in failed]
                    record['failures']['wall_ms_median'] = 1e3 * float(np.median(
                        [times[name, mode][i] for i in missed]))
                    record['failures']['cpu_ms_median'] = 1e3 * float(np.median(
                        [cpu_times[name, mode][i] for i in missed]))
            if name.startswith('default'):
                solved = [q for q, ok in zip(answers[name, mode], passed[name], strict=True)
                          if ok]
                middle = 0.5 * (model.lower + model.upper)
                record['measures'] = {objective: float(np.mean([
                    objectives.value(objective, model, q, middle) for q in solved]))
                    for objective in ('closest', 'manipulability', 'centred')} if solved else {}
            records.append(record)
    for name, solver in solvers.items():
        if isinstance(solver, str):
            for mode in modes:
                records.append({'arm': arm.label, 'dof': model.dof, 'mode': mode,
                                'solver': name, 'status': solver})
    return {'records': records, 'notes': notes}


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true',
                        help=f'{QUICK_TARGETS} targets per arm (smoke run)')
    parser.add_argument('-n', '--targets', type=int, default=None,
                        help=f'targets per arm (default {DEFAULT_TARGETS}, --quick '
                             f'{QUICK_TARGETS})')
    parser.add_argument('--arms', nargs='+', default=list(ARM_NAMES), choices=ARM_NAMES)
    parser.add_argument('--peers', nargs='*', default=['trac_ik', 'rtb_ik_LM'],
                        choices=['trac_ik', 'rtb_ik_LM'], help='peers to compare')
    parser.add_argument('--output', type=Path, default=REPO / 'bench_results.json')
    parser.add_argument('--objectives', nargs='*', default=list(OBJECTIVE_ROWS),
                        choices=list(OBJECTIVE_ROWS),
                        help='rows of the default answer with another objective')
    parser.add_argument('--markdown', action='store_true',
                        help="also print the table as docs/benchmarks.md's markdown")
    args = parser.parse_args(argv)
    count = args.targets or (QUICK_TARGETS if args.quick else DEFAULT_TARGETS)
    if count < 1:
        parser.error('--targets must be at least 1')

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    started = time.perf_counter()
    records, notes = [], {}
    for spec in ARMS:
        if spec.label not in args.arms:
            continue
        try:
            part = bench_arm(spec, count, args.peers, log, args.objectives)
        except FileNotFoundError as error:
            log(f'  {spec.label}: skipped: {error}')
            notes[spec.label] = {'skipped': str(error)}
            continue
        records += part['records']
        notes[spec.label] = part['notes']
    print(f'IK on URDF arms, TRAC-IK protocol: {count} FK-made targets per arm (seed {SEED}), '
          f'tolerance {TOLERANCE:g}, timeout {TIMEOUT * 1e3:g} ms, seed = middle of the '
          f'ranges. A solve counts when our FK is within {ACCEPT_POSITION:g} m'
          f' (and {ACCEPT_ORIENTATION:g} rad for a full pose) and inside the limits.')
    print(format_table(records))
    print('* trac_ik position rows: its full-pose solves of the same targets, checked for '
          'position only (pytracik takes no tolerance bounds). rej = answers the solver '
          'reported as solutions that failed the check; ×trac = solver / TRAC-IK.')
    failures = format_failures(records)
    if failures:
        print('Ours, the targets missed:')
        print(failures)
    print(format_measures(records))
    if args.markdown:
        print(format_markdown(records))
    for label, note in notes.items():
        if 'trac_ik_misread_limits' in note:
            print(f'{label}: TRAC-IK read wrong limits for '
                  f'{", ".join(note["trac_ik_misread_limits"])}; set from the URDF')
    merge_section(args.output, 'ik_urdf_arms', {
        'generated': datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds'),
        'targets_per_arm': count, 'seed': SEED,
        'protocol': {'tolerance': TOLERANCE, 'timeout_s': TIMEOUT,
                     'seed': 'middle of the joint ranges',
                     'accept_position_m': ACCEPT_POSITION,
                     'accept_orientation_rad': ACCEPT_ORIENTATION,
                     'limit_slack_rad': LIMIT_SLACK},
        'options': {
            'dls': {'tolerance': TOLERANCE, 'orientation_tolerance': TOLERANCE,
                    'timeout': TIMEOUT, 'restarts': DLS_RESTARTS,
                    'max_iterations': DLS_OPTIONS.max_iterations,
                    'damping': DLS_OPTIONS.damping, 'random_seed': DLS_OPTIONS.random_seed},
            'trac_ik': {'solve_type': 'Speed', 'timeout_s': TIMEOUT, 'epsilon': TOLERANCE,
                        'joint_limits': 'set_joint_limits from the URDF'},
            'rtb_ik_LM': {'tol': RTB_TOL, 'ilimit': 30, 'slimit': 100, 'joint_limits': True,
                          'mask_position': [1, 1, 1, 0, 0, 0], 'q0': 'middle of the ranges'},
        },
        'versions': versions(), 'arms': notes, 'records': records,
        'wall_time_s': time.perf_counter() - started,
    })
    print(f'wrote {args.output} (key "ik_urdf_arms")')
    return 0


if __name__ == '__main__':
    sys.exit(main())
