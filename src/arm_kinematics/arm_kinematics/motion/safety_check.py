"""The safety package seen from the motion side: path checks, pose checks, detours, contacts.

The motion core only needs three functions (check a trajectory, check one pose, plan a detour
between two poses); ``SafetyAdapter`` provides them from ``scene.geometry``. Planners take
it as an optional, injectable dependency, so motion works (without the floor) where the
safety configuration is absent.

Policy: the floor is a hard limit (a path through it is UNSAFE_PATH or detoured). Touching
the obstacle is reported as contacts (times and tool points, sampled at 60 Hz, as the
reference system reports them) and blocks the move only with ``avoid_obstacle``.

``CollisionGuard`` adds self-collision and the scene (``scene.checker``) for any arm:
a trajectory touching either is UNSAFE_PATH ("the path collides ..."), and a blocked joint
move is planned round with OMPL (``planning.sampling.plan_joint_path``). ``SceneData`` is
the scene as plain data, what the executor hands its planning process.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion.errors import MotionCode, MotionError

# The planners' names and the arm's default are the planning package's; importable here too.
from arm_kinematics.motion.planning.base import (  # noqa: F401
    default_path_planner,
    GRID,
    PATH_PLANNERS,
    SAMPLING,
)
from arm_kinematics.motion.trajectory import Trajectory
from arm_kinematics.motion.validation import PathReport
from arm_kinematics.scene.objects import SceneData

# SceneData is the scene layer's; the planners here take it as before.
__all__ = ['SceneData']


class SafetyAdapter:
    """Path checks, pose checks and detours of one arm from its ``SafetyGeometry``."""

    def __init__(self, geometry: Any, avoid_obstacle: bool = False) -> None:
        """Args:
            geometry: a ``scene.geometry.SafetyGeometry``.
            avoid_obstacle: obstacle contact is a violation (else only reported).
        """
        from arm_kinematics.motion import safety_paths as paths
        self.geometry = geometry
        self.avoid_obstacle = bool(avoid_obstacle)
        self._paths = paths

    def check_trajectory(self, trajectory: Trajectory) -> PathReport:
        """Check every sample (refined so no link point moves more than 2 cm between checks)
        and collect obstacle contacts at 60 Hz of motion time."""
        times = trajectory.times
        if len(times) == 1:
            times = None
        result = self._paths.check_path(self.geometry, trajectory.positions, times,
                                        obstacle=self.avoid_obstacle)
        contacts = self._paths.sample_contacts(self.geometry, trajectory.positions, times)
        error = None
        if not result.safe:
            error = MotionError(MotionCode.UNSAFE_PATH, f'the path is not safe: {result.message}')
        return PathReport(error, np.asarray(contacts.times, dtype=float),
                          np.asarray(contacts.tips, dtype=float).reshape(-1, 3), result.message)

    def check_path(self, waypoints: np.ndarray) -> str:
        """'' when the straight joint path through ``waypoints`` (K, n; rad) keeps clear of
        the floor (and the obstacle when avoided), refined as ``check_trajectory`` refines
        (no link point moves more than 2 cm between checks), else why not."""
        result = self._paths.check_path(self.geometry, np.asarray(waypoints, dtype=float), None,
                                        rate=0.0, obstacle=self.avoid_obstacle)
        return '' if result.safe else result.message

    def check_pose(self, q: np.ndarray) -> str:
        """'' when pose ``q`` (rad) is clear of the floor (and the obstacle when avoided)."""
        check = self.geometry.check_pose(np.asarray(q, dtype=float))
        if check.safe:
            return ''
        if not self.avoid_obstacle and check.verdict.name == 'OBSTACLE_CONTACT':
            return ''
        return check.message

    def pose_rule(self, start: np.ndarray, goal: np.ndarray,
                  margin: float = 0.002) -> Callable[[np.ndarray], bool]:
        """The floor (and the obstacle when avoided) as a yes/no rule for a sampling planner:
        clear by ``margin`` m (less near the ends when they are closer than that), so a path
        checked pose by pose keeps clear between its checks too."""
        ends = self.geometry.clearance(np.array([start, goal], dtype=float),
                                       self.avoid_obstacle)
        needed = max(0.0, min(margin, float(ends.min())))

        def clear(q: np.ndarray) -> bool:
            return bool(self.geometry.clearance(q[None, :], self.avoid_obstacle)[0] >= needed)
        return clear

    def detour(self, start: np.ndarray, goal: np.ndarray) -> tuple[np.ndarray | None, str]:
        """Joint waypoints (K, n) from ``start`` to ``goal`` clear of the floor, or (None, why)."""
        from arm_kinematics.motion.planning.grid import GridPlanner
        plan = GridPlanner(self.geometry, self.avoid_obstacle).plan(start, goal)
        return (plan.path if plan.success else None), plan.reason


def load_safety(model: ArmModel, arm_config: Mapping[str, Any], arm: str,
                avoid_obstacle: bool = False) -> SafetyAdapter | None:
    """The arm's SafetyAdapter from its YAML's ``safety:`` section.

    Returns:
        None when the safety package is not installed or the YAML has no section.

    Raises:
        ValueError (SafetyConfigError): the section exists but is invalid.
    """
    if arm_config.get('safety') is None:
        return None
    try:
        from arm_kinematics.description.safety_config import safety_config_of
        from arm_kinematics.scene.geometry import SafetyGeometry
    except ImportError:
        return None
    return SafetyAdapter(SafetyGeometry(model, safety_config_of(arm_config, arm)), avoid_obstacle)


# ---------------------------------------------------------------------------- collision
# Largest link motion between two checked poses of a trajectory, m (the collision checker's
# dense check; the floor check keeps its own 2 cm).
COLLISION_STEP = 0.01
# How a collision check's refusal begins (the planner tells it from a floor refusal).
COLLIDES = 'the path collides'
# Planning time of one blocked move with the sampling planner, s.
PLANNING_BUDGET = 2.0


class CollisionGuard:
    """Self-collision and the scene seen from the motion side: every trajectory is checked
    densely (no link point moves more than ``max_step`` between two checked poses) and a
    blocked joint move is planned round with the sampling planner (OMPL RRTConnect).

    One guard serves one thread (its checker reuses the collision library's objects); the
    checker is built on first use (computing the allowed pairs takes up to a second or two
    with meshes), or at once with ``warm``.
    """

    def __init__(self, factory: Callable[[], Any], max_step: float = COLLISION_STEP,
                 time_budget: float = PLANNING_BUDGET, seed: int | None = None) -> None:
        """Args:
            factory: builds the arm's ``scene.checker.CollisionChecker``.
            max_step: largest link motion between checked poses, m.
            time_budget: planning time of one blocked move, s.
            seed: OMPL's seed (first plan of the process only; None: OMPL's own).
        """
        self._factory = factory
        self._checker = None
        self.scene = None
        self.max_step = float(max_step)
        self.time_budget = float(time_budget)
        self.seed = seed

    @property
    def checker(self) -> Any:
        if self._checker is None:
            self._checker = self._factory()
        if self.scene is not None and self._checker.scene is not self.scene:
            self._checker.scene = self.scene
        return self._checker

    def warm(self) -> None:
        """Build the checker now."""
        if self._checker is None:
            self._checker = self._factory()

    def set_scene(self, scene: Any) -> None:
        """Check against ``scene`` (a ``scene.objects.Scene``) from now on."""
        self.scene = scene

    def _what(self) -> str:
        count = len(self.scene) if self.scene is not None else 0
        return f'self-collision and {count} scene object{"s" if count != 1 else ""}'

    def check_trajectory(self, trajectory: Trajectory) -> PathReport:
        """UNSAFE_PATH at the first sample in collision (self or scene), with when and
        which pairs touch; else a clear report."""
        check = self.checker.check_path(trajectory.positions, self.max_step)
        if check.free:
            return PathReport(None, message=f'clear of {self._what()} ({check.samples} poses '
                              f'checked, at most {self.max_step * 1000:g} mm apart)')
        index = check.segment or 0
        when = float(trajectory.times[min(index, len(trajectory.times) - 1)])
        message = f'{COLLIDES} near t = {when:.2f} s: {check.report.message}'
        return PathReport(MotionError(MotionCode.UNSAFE_PATH, message), message=message)

    def check_pose(self, q: np.ndarray) -> str:
        """'' when pose ``q`` (rad) is clear of self-collision and the scene."""
        report = self.checker.check(np.asarray(q, dtype=float))
        return report.message if report.collides else ''

    def check_segment(self, qs: np.ndarray) -> str:
        """'' when the straight joint path through ``qs`` (K, n; rad) is clear of
        self-collision and the scene, checked as densely as a trajectory (``max_step``),
        else the first contact with its pairs."""
        check = self.checker.check_path(qs, self.max_step)
        return '' if check.free else check.report.message

    def check_step(self, q: np.ndarray, new: np.ndarray) -> str:
        """'' when the step from ``q`` (a pose already cleared) to ``new`` (rad) is clear, the
        poses after ``q`` checked as densely as a trajectory, else the first contact. A step
        whose links move less than ``max_step`` is its end pose alone (the yes/no check:
        half the cost of a path check on a control tick's small step)."""
        checker = self.checker
        if checker.max_link_motion(q, new) <= self.max_step:
            return '' if checker.is_free(new) else checker.check(new).message
        samples, _ = checker.densify(np.array([q, new], dtype=float), self.max_step)
        check = checker.check_path(samples[1:], None)
        return '' if check.free else check.report.message

    def twin(self) -> CollisionGuard:
        """A guard of the same arm, spacing and budget with its own checker, for another
        thread (a checker serves one); its scene is set on it separately. Its checker is a
        twin of this guard's (built here if it was not yet): the shapes and allowed pairs
        are shared, so the arm's meshes are loaded and its pairs sampled once.

        Raises:
            whatever this guard's checker factory raises.
        """
        return CollisionGuard(self.checker.twin, self.max_step, self.time_budget, self.seed)

    def plan(self, start: np.ndarray, goal: np.ndarray,
             pose_ok: Callable[[np.ndarray], bool] | None = None) -> Any:
        """A path from ``start`` to ``goal`` clear of self-collision, the scene and (with
        ``pose_ok``) the floor rules: ``planning.sampling.PlanResult``."""
        from arm_kinematics.motion.planning.sampling import plan_joint_path
        return plan_joint_path(self.checker, start, goal, self.time_budget, self.max_step,
                               self.seed, state_check=pose_ok)
