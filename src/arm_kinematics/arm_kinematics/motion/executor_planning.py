"""The trajectory executor's planner as the scene changes, without ROS.

Every move is planned and checked in a ``PlanningPool`` (a planning process, or threads).
A new scene from the safety monitor goes to the pool's planner; a scene that moves, resizes
or removes the arm's ball makes the planner stale instead (the ball's rule lives in the
planner itself), and it is rebuilt with the scene's ball before the next plan. The node
(``arm_ik.nodes.trajectory_executor``) hands scenes and requests over and logs the words.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion import worker
from arm_kinematics.motion.executor import ExecutorCore
from arm_kinematics.motion.planner import MotionPlanner
from arm_kinematics.motion.planning_pool import PlanningPool
from arm_kinematics.motion.safety_check import SceneData
from arm_kinematics.scene.scene_rules import configured_ball, obstacle_in, same_ball

Built = tuple[worker.PlannerSpec, MotionPlanner]


class ExecutorPlanning:
    """The planner of the executor's moves and the pool they are planned in.

    Args:
        spec_of: the planner spec of a model with a scene (the node's settings: the arm's
            configuration, default solver, mesh folders, ``avoid_obstacle``).
        model: the arm model at start-up.
        in_process: plan in threads of this process (else in a planning process).
        log_error: where the words of a scene that cannot be used go.

    Raises:
        ValueError: no planner can be built for ``model`` (at start-up).
    """

    def __init__(self, spec_of: Callable[[ArmModel, SceneData | None], worker.PlannerSpec],
                 model: ArmModel, in_process: bool, log_error: Callable[[str], None]) -> None:
        self._spec_of = spec_of
        self._log_error = log_error
        self.scene: SceneData | None = None
        self._stale = False
        self.spec, self.planner = self.planner_of(model)
        self.pool = PlanningPool(self.spec, self.planner, in_process, log_error)

    def planner_of(self, model: ArmModel) -> Built:
        """The planner (and the spec the planning process builds it from) of ``model``."""
        spec = self._spec_of(model, self.scene)
        return spec, worker.build_planner(spec, model)

    def use_scene(self, scene: Any, core: ExecutorCore) -> None:
        """A new scene (a Scene message or its plain data): the next plan, live target and
        follow step are checked against it, planned with its ball (moved, resized or
        removed) as the arm's ball."""
        self.scene = scene if isinstance(scene, SceneData) else SceneData.of(scene)
        safety = core.planner.safety
        if safety is not None and not same_ball(obstacle_in(scene),
                                                configured_ball(safety.geometry)):
            self._stale = True          # the ball's rule lives in the planner itself
            return
        version = getattr(scene, 'version', '?')

        def report(done: Future) -> None:
            if not done.cancelled() and done.exception() is not None:
                self._log_error(f'scene version {version} not usable for planning: '
                                f'{done.exception()}')
        # Only the planner that plans and validates takes it (the pool's: in process or not);
        # this process's planner never checks a path when planning runs in its own process.
        self.pool.set_scene(self.scene).add_done_callback(report)

    def use_planner(self, built: Built, core: ExecutorCore) -> None:
        """A new description's planner (the same joints): the core and the pool take it."""
        spec, planner = built
        core.set_planner(planner)
        self.pool.restart(spec, planner)

    def submit(self, core: ExecutorCore, name: str, *args: object) -> Future:
        """Plan, validate or solve a live target in the pool, with the scene's ball in use."""
        if self._stale:
            self._stale = False
            try:
                spec, planner = self.planner_of(core.planner.model)
                core.set_planner(planner)
                self.pool.rebuild(spec, planner)
            except ValueError as error:
                self._log_error(f"the scene's ball: {error}; planning goes on with the "
                                'previous one')
        return self.pool.submit(name, *args)
