"""Building a MotionPlanner from plain data, in this process or in a planning process.

IK-heavy planning (a Cartesian line solves IK hundreds of times, a detour searches a grid)
is pure Python: in a thread of the executor's process it would hold the GIL for
milliseconds at a time and delay the publish timer. The executor therefore plans in a
separate process by default (``concurrent.futures.ProcessPoolExecutor`` with one worker,
started with ``spawn`` so no DDS thread is forked). ``PlannerSpec`` is everything that
process needs to build the same planner; ``initialize`` and ``plan`` are its entry points.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import os
import signal
import threading
import time
from typing import TYPE_CHECKING

import numpy as np

from arm_kinematics.arm import ArmConfig, build_arm, load_config_chain
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.planner import (
    MotionPlanner,
    MotionSettings,
    MoveGoal,
    Plan,
    PlanFailure,
)
from arm_kinematics.motion.safety_check import CollisionGuard, SafetyAdapter, SceneData
from arm_kinematics.motion.trajectory import Trajectory
from arm_kinematics.motion.validation import Validation
from arm_kinematics.scene.scene_rules import geometry_in

if TYPE_CHECKING:
    from arm_kinematics.motion.follow import TargetGoal


@dataclass(frozen=True)
class PlannerSpec:
    """Plain data from which a MotionPlanner is built (picklable).

    Attributes:
        urdf: the robot description (URDF text).
        arm: the arm's label.
        config: the arm's configuration (plain data, so the planning process builds the
            same arm value as the node: reach rules, floor rules, home).
        base_frame, tip_frame: the chain.
        default_solver: IK solver of goals that name none.
        ik_options: solver settings.
        use_safety: check paths against the floor (and obstacle) when the configuration
            has a safety section.
        avoid_obstacle: obstacle contact blocks a move (else only reported).
        check_collisions: check every trajectory for self-collision and the scene with the
            URDF's collision shapes, and plan round them (``CollisionGuard``).
        mesh_search_paths: folders where that checker looks for mesh files.
        scene: the scene to check against (plain data; None: empty). The node keeps it here
            too, so a rebuilt planner or a restarted planning process starts with it. Its
            ball (``obstacle``, moved or resized at run time) is the arm's ball.
    """

    urdf: str
    arm: str
    config: ArmConfig = field(default_factory=ArmConfig)
    base_frame: str = 'base_link'
    tip_frame: str = 'tool0'
    default_solver: str = 'dls'
    ik_options: SolveOptions = field(default_factory=SolveOptions)
    use_safety: bool = True
    avoid_obstacle: bool = False
    check_collisions: bool = True
    mesh_search_paths: tuple[str, ...] = ()
    scene: SceneData | None = None


def build_planner(spec: PlannerSpec, model: ArmModel | None = None) -> MotionPlanner:
    """The planner of ``spec`` (``model``: the model of ``spec.urdf`` when the caller already
    built it).

    Raises:
        DescriptionError: the URDF is unusable. ValueError (ArmConfigError): bad solver
            name or safety section.
    """
    if model is None:
        model = load_config_chain(spec.urdf, spec.config, spec.base_frame,
                                  spec.tip_frame).model
    arm = build_arm(model, spec.config, spec.arm)
    if spec.scene is not None:
        arm = arm.with_safety(geometry_in(arm.safety, spec.scene))
    safety = SafetyAdapter(arm.safety, spec.avoid_obstacle) \
        if spec.use_safety and spec.config.get('safety') is not None else None
    collision = None
    if spec.check_collisions:
        paths = tuple(spec.mesh_search_paths)
        collision = CollisionGuard(lambda: arm.collision_checker(search_paths=paths))
    planner = MotionPlanner(model, arm.dispatcher(spec.default_solver), spec.ik_options, safety,
                            collision)
    # The arm's choice of detour planner (motion.path_planner); a plan's settings may still
    # name the other.
    planner.default_path_planner = getattr(spec.config, 'path_planner', '') or \
        planner.default_path_planner
    if spec.scene is not None:
        planner.set_scene(spec.scene)
    return planner


_planner: MotionPlanner | None = None
PARENT_POLL = 0.5    # s between looks at whether the executor process still exists


def initialize(spec: PlannerSpec) -> None:
    """Planning-process initializer: build the planner once."""
    # Ctrl-C reaches the whole process group; the executor shuts this process down itself.
    # The pool starts this process with SIGINT blocked, so one sent during its imports is
    # pending here and is dropped once ignored.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    # A SIGKILLed executor cannot shut this process down, and the pool's pipe does not wake
    # an idle worker: leave when the parent is gone rather than linger as an orphan.
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True,
                     name='parent-watch').start()
    global _planner
    _planner = build_planner(spec)
    if _planner.collision is not None:
        _planner.collision.warm()      # the allowed pairs before the first goal, not in it


def rebuild(spec: PlannerSpec) -> None:
    """Build the planner anew in the running planning process (a run-time setting such as
    the obstacle radius changed): the process and its warm caches stay."""
    global _planner
    _planner = build_planner(spec)


def _exit_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL)
    os._exit(0)


def plan(goal: MoveGoal, start: np.ndarray, settings: MotionSettings) -> Plan | PlanFailure:
    """Plan in the planning process (after ``initialize``)."""
    if _planner is None:
        raise RuntimeError('the planning process was not initialised')
    return _planner.plan(goal, start, settings)


def validate(trajectory: Trajectory, start: np.ndarray,
             settings: MotionSettings) -> Validation:
    """Validate a client trajectory in the planning process (after ``initialize``)."""
    if _planner is None:
        raise RuntimeError('the planning process was not initialised')
    return _planner.validate(trajectory, start, settings)


def set_scene(scene: SceneData | None) -> None:
    """Check against ``scene`` from the next plan on (in the planning process).

    Raises:
        SceneError: an object cannot be built in this process (the previous scene stays).
    """
    if _planner is None:
        raise RuntimeError('the planning process was not initialised')
    _planner.set_scene(scene)


def ready() -> bool:
    """True once the planning process has built its planner (a warm-up call)."""
    return _planner is not None


def solve_target(point: np.ndarray, seed: np.ndarray, solver: str) -> TargetGoal:
    """IK of a live target in the planning process, checked as a move from ``seed``:
    ``follow.target_goal``'s ``TargetGoal``."""
    from arm_kinematics.motion.follow import target_goal
    if _planner is None:
        raise RuntimeError('the planning process was not initialised')
    return target_goal(_planner, point, seed, solver)
