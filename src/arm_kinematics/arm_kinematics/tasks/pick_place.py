"""The pick-and-place cycles as state machines, the ball, and the reachability pre-check.

Two cycles are defined (``CYCLES``), each an ordered list of states (phases) that a sequence
file's steps must follow:

- ``ccd_pick_place`` (the CCD arm): PICK (move to the ball, attach) → LIFT → PLACE (move,
  detach) → HOME;
- ``manipulator3d_pick_place``: HOME → START → PICK (attach the ball) → GOAL → PLACE
  (detach) → HOME → WAIT, then repeat; START and GOAL are the points a node may override.

``PickPlaceMachine`` walks a validated sequence step by step for a number of cycles; the
caller performs each step (sends the move, waits) and reports back with ``complete`` or
``fail``. The machine owns the ``Ball``: it lies at the pick point at the start of every
cycle, follows the tip while attached and stays where it was put after a detach.

``check_reachable`` solves IK for a sequence's points before a cycle starts, so an
unreachable START or GOAL is refused with the reason and no goal is ever sent for it.
Units: m, rad, s; positions in the arm's base frame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import enum
import math

import numpy as np

from arm_kinematics.ik.request import IKDispatcher, IKRequest
from arm_kinematics.ik.result import ErrorCode
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.scene.geometry import SafetyGeometry, Verdict
from arm_kinematics.tasks.sequences import SequenceError, Step, StepKind, TaskSequence

DEFAULT_GRASP_TOLERANCE = 0.02  # m, largest tip-to-ball distance at which attach succeeds


@dataclass(frozen=True, slots=True)
class CycleSpec:
    """One pick-and-place state machine.

    Attributes:
        name: the value of a sequence file's ``cycle`` key.
        phases: the states in order (a state may recur, e.g. HOME at both ends).
        attach_phase: the only state in which the ball may be attached.
        detach_phase: the only state in which it may be let go.
        parameters: point names a node exposes as parameters (e.g. start, goal).
        description: one line for documentation and logs.
    """

    name: str
    phases: tuple[str, ...]
    attach_phase: str
    detach_phase: str
    parameters: tuple[str, ...] = ()
    description: str = ''


CCD_PICK_PLACE = CycleSpec(
    'ccd_pick_place', ('PICK', 'LIFT', 'PLACE', 'HOME'), 'PICK', 'PLACE', (),
    'CCD arm: pick -> lift -> place -> home')
MANIPULATOR3D_PICK_PLACE = CycleSpec(
    'manipulator3d_pick_place', ('HOME', 'START', 'PICK', 'GOAL', 'PLACE', 'HOME', 'WAIT'),
    'PICK', 'PLACE', ('start', 'goal'),
    'Manipulator3D: HOME -> START -> PICK -> GOAL -> PLACE -> HOME -> wait -> repeat')
CYCLES: Mapping[str, CycleSpec] = {spec.name: spec for spec in (CCD_PICK_PLACE,
                                                              MANIPULATOR3D_PICK_PLACE)}


def phase_runs(steps: Sequence[Step]) -> tuple[str, ...]:
    """The phases of ``steps`` with consecutive repeats collapsed (the states visited)."""
    runs: list[str] = []
    for step in steps:
        if not runs or runs[-1] != step.phase:
            runs.append(step.phase)
    return tuple(runs)


def check_cycle(sequence: TaskSequence) -> CycleSpec | None:
    """Check that the steps follow the sequence's state machine; None for a free-form one.

    Raises:
        SequenceError: unknown cycle, states out of order, attach or detach in the wrong
            state, or a parameter point missing.
    """
    if not sequence.cycle:
        return None
    spec = CYCLES.get(sequence.cycle)
    if spec is None:
        raise SequenceError(f'{sequence.source or sequence.name}: unknown cycle '
                            f'{sequence.cycle!r}; choose one of: {", ".join(CYCLES)} '
                            '(or leave cycle out for a free-form sequence)')
    visited = phase_runs(sequence.steps)
    if visited != spec.phases:
        raise SequenceError(f'{sequence.source or sequence.name}: the phases '
                            f'{" -> ".join(p or "(none)" for p in visited)} do not follow the '
                            f'{spec.name} cycle {" -> ".join(spec.phases)}')
    for step in sequence.steps:
        for kind, phase in ((StepKind.ATTACH, spec.attach_phase),
                            (StepKind.DETACH, spec.detach_phase)):
            if step.kind == kind and step.phase != phase:
                raise SequenceError(f'{sequence.source or sequence.name}: steps[{step.index}]: '
                                    f'{kind.value} belongs in {phase}, not in {step.phase}')
    missing = [name for name in spec.parameters if name not in sequence.points]
    if missing:
        raise SequenceError(f'{sequence.source or sequence.name}: the {spec.name} cycle needs '
                            f'the point(s) {", ".join(missing)}')
    return spec


def check_against_model(sequence: TaskSequence, model: ArmModel) -> None:
    """Check that every joint pose names exactly the arm's joints, inside their limits.

    Raises:
        SequenceError: naming the pose, the joint and the value.
    """
    where = sequence.source or sequence.name
    for name, pairs in sequence.poses.items():
        joints = dict(pairs)
        unknown = [j for j in joints if j not in model.joint_names]
        missing = [j for j in model.joint_names if j not in joints]
        if unknown or missing:
            parts = ([f'unknown {", ".join(unknown)}'] if unknown else []) + \
                ([f'missing {", ".join(missing)}'] if missing else [])
            raise SequenceError(f'{where}: poses.{name}: {"; ".join(parts)} (the arm\'s '
                                f'joints: {", ".join(model.joint_names)})')
        for joint, low, high in zip(model.joint_names, model.lower, model.upper):
            if not low - 1e-9 <= joints[joint] <= high + 1e-9:
                raise SequenceError(f'{where}: poses.{name}.{joint} = {joints[joint]:.4f} rad is '
                                    f'outside its limits [{low:.4f}, {high:.4f}]')


def joint_vector(sequence: TaskSequence, model: ArmModel, name: str) -> np.ndarray:
    """The joint pose ``name`` in chain order, rad."""
    joints = sequence.joints(name)
    return np.array([joints[j] for j in model.joint_names], dtype=float)


def target_position(sequence: TaskSequence, model: ArmModel, name: str) -> np.ndarray:
    """Tool position of the target ``name`` (a point, or the FK of a joint pose), m."""
    if sequence.is_point(name):
        return sequence.point(name)
    return model.fk(joint_vector(sequence, model, name))[:3, 3].copy()


@dataclass(slots=True)
class Ball:
    """The ball of the cycle.

    Attributes:
        radius: m.
        position: centre, m (the tip while attached).
        attached: True while the tool carries it.
    """

    radius: float
    position: np.ndarray
    attached: bool = False

    def follow(self, tip: Sequence[float]) -> bool:
        """Move with the tip while attached; True when the position changed."""
        if not self.attached:
            return False
        tip = np.asarray(tip, dtype=float)
        if not np.all(np.isfinite(tip)) or np.array_equal(tip, self.position):
            return False
        self.position = tip.copy()
        return True

    def attach(self, tip: Sequence[float], tolerance: float) -> str:
        """Take the ball when the tip is within ``tolerance`` m; '' or why not."""
        tip = np.asarray(tip, dtype=float)
        if not np.all(np.isfinite(tip)):
            return 'cannot attach the ball: the tip position is not known'
        distance = float(np.linalg.norm(tip - self.position))
        if distance > tolerance:
            return (f'cannot attach the ball: the tip is {distance:.3f} m from it '
                    f'(grasp tolerance {tolerance:.3f} m)')
        self.attached = True
        self.position = tip.copy()
        return ''

    def detach(self) -> None:
        """Let go: the ball stays where it is."""
        self.attached = False


@dataclass(frozen=True, slots=True)
class BallEvent:
    """A change of the ball's attached state, in the order it happened."""

    cycle: int
    step: int
    phase: str
    attached: bool
    position: tuple[float, float, float]


class MachineState(enum.StrEnum):
    """Where the machine is."""

    IDLE = 'idle'          # not started
    RUNNING = 'running'    # a step is current
    DONE = 'done'          # every cycle finished
    FAILED = 'failed'      # a step failed; ``reason`` says why
    STOPPED = 'stopped'    # stopped from outside; ``reason`` says why


class PickPlaceMachine:
    """Runs a sequence for a number of cycles, one step at a time, and tracks the ball.

    Not thread-safe: call it from one thread (a node's executor).
    """

    def __init__(self, sequence: TaskSequence, model: ArmModel, cycles: int = 1,
                 grasp_tolerance: float = DEFAULT_GRASP_TOLERANCE) -> None:
        """Validate ``sequence`` for ``model``.

        Args:
            sequence: the steps; its phases must follow its cycle's state machine.
            model: the arm (joint names and limits of the poses, FK of the pick target).
            cycles: how many cycles to run, 0 = until stopped.
            grasp_tolerance: largest tip-to-ball distance for attach, m (> 0).

        Raises:
            SequenceError: the sequence does not fit its cycle or the arm.
            ValueError: cycles < 0 or a grasp tolerance that is not a positive number.
        """
        if isinstance(cycles, bool) or not isinstance(cycles, int) or cycles < 0:
            raise ValueError(f'cycles must be an integer >= 0 (0: forever), got {cycles!r}')
        if not (math.isfinite(grasp_tolerance) and grasp_tolerance > 0.0):
            raise ValueError(f'grasp_tolerance must be > 0 m, got {grasp_tolerance!r}')
        self.model = model
        self.cycles = cycles
        self.grasp_tolerance = grasp_tolerance
        self.spec = self._validated(sequence)
        self.sequence = sequence
        self._next: TaskSequence | None = None
        self.state = MachineState.IDLE
        self.reason = ''
        self.cycle = 0
        self.index = 0
        self.ball = Ball(sequence.ball_radius, self._ball_start(sequence))
        self.events: list[BallEvent] = []
        self._last_target: np.ndarray | None = None

    def _validated(self, sequence: TaskSequence) -> CycleSpec | None:
        spec = check_cycle(sequence)
        check_against_model(sequence, self.model)
        return spec

    def _ball_start(self, sequence: TaskSequence) -> np.ndarray:
        name = sequence.pick_target()
        if not name:
            # A sequence without attach never shows the ball; park it at the first target.
            name = sequence.move_targets()[0]
        return target_position(sequence, self.model, name)

    # ------------------------------------------------------------------ queries
    @property
    def current(self) -> Step | None:
        """The step to perform now; None unless running."""
        if self.state != MachineState.RUNNING:
            return None
        return self.sequence.steps[self.index]

    @property
    def phase(self) -> str:
        """State of the cycle ('' unless running)."""
        step = self.current
        return step.phase if step is not None else ''

    def target_of(self, step: Step) -> np.ndarray:
        """Tool position a move step aims at, m."""
        return target_position(self.sequence, self.model, step.target)

    # ------------------------------------------------------------------ transitions
    def start(self) -> Step:
        """Begin cycle 1 at the first step, with the ball at the pick point."""
        self.state = MachineState.RUNNING
        self.reason = ''
        self.cycle = 1
        self.index = 0
        self._reset_ball()
        return self.sequence.steps[0]

    def replace_sequence(self, sequence: TaskSequence) -> None:
        """Use ``sequence`` (e.g. new START/GOAL) from the next cycle on; before start, now.

        Raises:
            SequenceError: it does not fit the cycle or the arm.
        """
        self._validated(sequence)
        if self.state == MachineState.RUNNING:
            self._next = sequence
        else:
            self.sequence = sequence
            self.ball = Ball(sequence.ball_radius, self._ball_start(sequence))

    def follow(self, tip: Sequence[float]) -> bool:
        """The tip moved (m): the ball follows while attached; True when it moved."""
        return self.ball.follow(tip)

    def complete(self, tip: Sequence[float] | None = None) -> str:
        """The current step is done; ``tip`` is where the tool is now (m), when known.

        Attach checks that the tip is within the grasp tolerance of the ball (without a tip,
        the target of the last move stands in). Returns '' on success, else the reason the
        machine failed.
        """
        step = self.current
        if step is None:
            return f'no step is running (state {self.state.value})'
        if tip is None and step.kind == StepKind.MOVE:
            tip = self.target_of(step)
        elif tip is None:
            tip = self._last_target
        if step.kind == StepKind.MOVE:
            self._last_target = np.asarray(tip, dtype=float).copy()
            self.ball.follow(tip)
        elif step.kind == StepKind.ATTACH:
            reason = self.ball.attach(tip if tip is not None else np.full(3, math.nan),
                                      self.grasp_tolerance)
            if reason:
                self.fail(reason)
                return reason
            self._record(step)
        elif step.kind == StepKind.DETACH:
            if tip is not None:
                self.ball.follow(tip)
            self.ball.detach()
            self._record(step)
        self.index += 1
        if self.index >= len(self.sequence.steps):
            self._end_cycle()
        return ''

    def fail(self, reason: str) -> None:
        """The current step failed: stop here (the ball stays as it is)."""
        self.state = MachineState.FAILED
        self.reason = reason

    def stop(self, reason: str) -> None:
        """Stop from outside (e.g. a user's click took over)."""
        if self.state == MachineState.RUNNING:
            self.state = MachineState.STOPPED
            self.reason = reason

    def _end_cycle(self) -> None:
        if self.cycles and self.cycle >= self.cycles:
            self.state = MachineState.DONE
            return
        self.cycle += 1
        self.index = 0
        if self._next is not None:
            self.sequence, self._next = self._next, None
        self._reset_ball()

    def _reset_ball(self) -> None:
        # A fresh ball lies at the pick point at the start of every cycle, as in the
        # reference programs; the one placed last cycle is not carried back.
        self.ball = Ball(self.sequence.ball_radius, self._ball_start(self.sequence))
        self._last_target = None

    def _record(self, step: Step) -> None:
        x, y, z = (float(v) for v in self.ball.position)
        self.events.append(BallEvent(self.cycle, step.index, step.phase, self.ball.attached,
                                     (x, y, z)))


@dataclass(frozen=True, slots=True)
class Reachability:
    """Whether one named point can be reached, and why not.

    Attributes:
        name: the point's name (e.g. 'start').
        position: the point, m.
        code: ErrorCode.OK or why it is refused.
        reason: the verdict in words, naming the point.
        q: the IK solution, rad (None when refused before or by IK).
    """

    name: str
    position: tuple[float, ...]
    code: ErrorCode
    reason: str
    q: np.ndarray | None = None

    @property
    def ok(self) -> bool:
        return self.code == ErrorCode.OK


def _format(position: Sequence[float]) -> str:
    return '[' + ', '.join(f'{v:.3f}' for v in position) + '] m'


def check_reachable(dispatcher: IKDispatcher, points: Mapping[str, Sequence[float]],
                    seed: Sequence[float], options: SolveOptions = SolveOptions(),
                    geometry: SafetyGeometry | None = None,
                    solver: str = '') -> list[Reachability]:
    """Check each named point against the reach rules, an IK solve and the floor.

    The points are solved in order, each seeded with the previous solution (the arm moves
    from one to the next), the first with ``seed``.

    Args:
        dispatcher: the arm's IK dispatcher (model, workspace, solvers).
        points: name → tool position, m, base frame.
        seed: joint positions to start from, rad (e.g. the home pose).
        options: solver options.
        geometry: the arm's safety geometry; when its floor check is enabled, a solution
            with a link below the floor refuses the point (FLOOR_COLLISION).
        solver: IK solver name ('' : the dispatcher's default).

    Returns:
        One Reachability per point, in order; never raises for a bad point.
    """
    results = []
    q_seed = np.asarray(seed, dtype=float)
    for name, value in points.items():
        label = name.upper()
        position = tuple(float(v) for v in np.asarray(value, dtype=float).reshape(-1))
        target, failure = dispatcher.workspace.check_position(position)
        if failure is not None:
            results.append(Reachability(name, position, failure.code,
                                        f'{label} {_format(position)} is unreachable: '
                                        f'{failure.reason}'))
            continue
        answer = dispatcher.solve(IKRequest(position=target, solver=solver), options, q_seed)
        result = answer.result
        if not result.success or result.q is None:
            results.append(Reachability(name, position, result.code,
                                        f'{label} {_format(position)} is unreachable: '
                                        f'{result.code.name}: {result.reason}'))
            continue
        if geometry is not None and geometry.floor_enabled:
            check = geometry.check_pose(result.q)
            if check.verdict == Verdict.FLOOR_VIOLATION:
                results.append(Reachability(name, position, ErrorCode.FLOOR_COLLISION,
                                            f'{label} {_format(position)} is unreachable: the '
                                            f'IK solution puts {check.message}', result.q))
                continue
        results.append(Reachability(name, position, ErrorCode.OK,
                                    f'{label} {_format(position)} is reachable', result.q))
        q_seed = result.q
    return results


def sequence_points(sequence: TaskSequence) -> dict[str, np.ndarray]:
    """The Cartesian points the sequence's moves use, in first-use order, m."""
    return {name: sequence.point(name) for name in sequence.move_targets()
            if sequence.is_point(name)}
