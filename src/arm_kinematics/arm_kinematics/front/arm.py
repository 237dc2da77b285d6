"""The front door: one arm value with the common work as methods.

``Arm.from_urdf("ur5.urdf")`` reads a URDF (or xacro) file or text, chooses the frames as
every node does when none are named (``description.frames``), and builds the core's arm value
(``arm.build_arm``: model, reach rules, home, safety, default solver); this ``Arm`` *is* that
value (a subclass), so everything that takes an ``arm.Arm`` takes it too. The methods are thin
layers over the modules that do the work, each answering with the code and the words:

- ``fk(q)``: a ``Pose`` (position, quaternion; ``.matrix`` for the 4×4) — ``model.fk``;
- ``ik(position, orientation, seed, objective)``: an ``IKSolution`` — ``IKDispatcher``;
- ``ik_all(...)``: every labelled branch of a closed form — the same, ``return_all``;
- ``path(waypoints, start)``: a tool path followed and timed — ``motion.path_ik.PathIK``;
- ``plan(q | position, start)``: a validated, timed move that goes round collisions —
  ``motion.planner.MotionPlanner`` (the executor's planner: OMPL detours);
- ``check(q)``: limits, self-collision, the scene and the floor — ``scene.checker``.

The solvers, planner and collision checker are built on first use and kept (the collision
checker reads the URDF's meshes once: 1-2 s with meshes); the first use builds them under a
lock, so threads that start together share one ``scene`` and one dispatcher. ``scene`` holds
the objects that ``check``, ``plan`` and ``ik(avoid_collisions=True)`` avoid. One ``Arm``
serves one thread for ``path`` and ``plan`` (the path IK and planner keep state); ``fk``,
``ik`` and ``check`` may be called from any thread (each thread gets its own collision
checker; test_front_door_review runs them from several).

``plan`` and ``path`` need ``start``, the joint positions the robot is at: a move planned
from home on a robot that is elsewhere would jump at its first point.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
import logging
from pathlib import Path
import threading
from typing import Any

import numpy as np

from arm_kinematics import arm as core
from arm_kinematics.common.checks import check_vector
from arm_kinematics.description.arm_config import ArmConfig, ArmConfigError
from arm_kinematics.description.meshes import default_search_paths
from arm_kinematics.front.answers import (
    CheckVerdict,
    IKBranches,
    IKSolution,
    MotionPlan,
    PathAnswer,
    Pose,
)
from arm_kinematics.ik.request import AVOID_OFF, AVOID_ON, IKDispatcher, IKRequest
from arm_kinematics.ik.result import ErrorCode, GoalType, IKResult
from arm_kinematics.ik.solvers.base import SolveOptions
from arm_kinematics.model.arm_model import DescriptionError

LOG = logging.getLogger('arm_kinematics')
_START_REQUIRED = ('start is required: the joint positions the robot is at now (a move '
                   'from home on a robot that is elsewhere jumps at its first point)')
# A URDF given as text starts with its XML; anything else is a file name.
_XML_START = ('<', '\ufeff<')


@dataclass(frozen=True)
class Arm(core.Arm):
    """An arm from its URDF, with FK, IK, paths, plans and checks as methods (module doc).

    Attributes (beyond ``arm.Arm``'s: label, model, config, home, safety, ...):
        notes: what loading chose or assumed, one line each (the frames and why, limits read
            by convention, speeds assumed), as every node logs them at start-up.
        options: the solver settings of every solve (``SolveOptions``).
    """

    _front: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    # Held while a lazy member (scene, dispatcher, path IK, planner) is first built: two
    # threads' first calls must not build two and keep whichever came last.
    _build_lock: Any = field(default_factory=threading.RLock, init=False, repr=False,
                             compare=False)

    # ------------------------------------------------------------------ building
    @classmethod
    def from_urdf(cls, urdf: str | Path, base: str = '', tip: str = '',
                  config: ArmConfig | Mapping | str | Path | None = None, label: str = '',
                  mesh_paths: Sequence[str | Path] = (),
                  options: SolveOptions | None = None, strict: bool | None = None) -> Arm:
        """The arm of a URDF.

        Args:
            urdf: a .urdf or .xacro file, or the URDF text itself.
            base, tip: the chain's frames; empty: the configuration's, else chosen as the
                nodes choose them (the root link; the tool frame a user would pick).
            config: an arm configuration (``ArmConfig``, its mapping or its YAML file);
                None: defaults from the URDF alone (no floor, home at zero).
            label: the arm's name (default: the configuration's, else the robot's).
            mesh_paths: folders where ``package://`` meshes are looked for first (then the
                URDF's folders, AMENT_PREFIX_PATH, ROS_PACKAGE_PATH and pip's prefixes).
            options: solver settings (default ``SolveOptions()``).
            strict: True refuses the URDF limit conventions of other tools (SolidWorks'
                all-zero ``<limit>``, pybullet's lower > upper) instead of reading them as
                continuous joints with a warning; None: the configuration's ``strict_urdf``.

        Raises:
            DescriptionError: the URDF is unreadable or unusable (one line naming the joint,
                link or attribute). ArmConfigError: the configuration does not fit.
        """
        text, path = _read_urdf(urdf)
        config = _read_config(config)
        loaded = core.load_config_chain(text, config, base, tip, strict)
        value = core.build_arm(loaded.model, config, label)
        arm = cls(**{f.name: getattr(value, f.name) for f in fields(core.Arm) if f.init})
        arm._front.update(notes=tuple(loaded.report()), urdf_path=path,
                          mesh_paths=tuple(str(p) for p in mesh_paths),
                          options=options if options is not None else SolveOptions())
        for line in arm.notes[1:]:
            LOG.warning('%s: %s', arm.label, line)
        return arm

    def with_safety(self, geometry: Any) -> Arm:
        """The same arm judged by ``geometry`` (``arm.Arm.with_safety``); what it was loaded
        from and its ``scene`` (the same object: an obstacle added to one is in both) are
        kept, the solvers and checkers are built anew."""
        other = super().with_safety(geometry)
        if other is not self:
            with self._build_lock:
                self.scene      # noqa: B018 (built now so both arms hold this one)
                other._front.update({key: self._front[key] for key in
                                     ('notes', 'urdf_path', 'mesh_paths', 'options', 'scene')
                                     if key in self._front})
        return other

    @property
    def notes(self) -> tuple[str, ...]:
        return self._front.get('notes', ())

    @property
    def options(self) -> SolveOptions:
        return self._front.get('options') or SolveOptions()

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self.model.joint_names

    @property
    def dof(self) -> int:
        return self.model.dof

    @property
    def search_paths(self) -> list[Path]:
        """Where this arm's meshes are looked for, in order."""
        return [*map(Path, self._front.get('mesh_paths', ())),
                *default_search_paths(self._front.get('urdf_path'))]

    @property
    def scene(self) -> Any:
        """The objects around the arm (``scene.objects.Scene``, base frame): ``check``,
        ``plan`` and ``ik(avoid_collisions=True)`` keep clear of them. Add one with
        ``arm.scene.add({'id': 'box', 'type': 'box', 'size': [0.2, 0.2, 0.4],
        'pose': {'xyz': [0.4, 0.3, 0.2]}})``."""
        from arm_kinematics.scene.objects import Scene
        scene = self._front.get('scene')
        if scene is None:
            with self._build_lock:
                if 'scene' not in self._front:
                    self._front['scene'] = Scene(self.model.base_link, self.search_paths)
                scene = self._front['scene']
        return scene

    def checker(self) -> Any:
        """This thread's collision checker of the arm (URDF shapes, the ``scene``)."""
        local = self._front.get('local')
        if local is None:
            with self._build_lock:
                local = self._front.setdefault('local', threading.local())
        checker = getattr(local, 'checker', None)
        if checker is None:
            checker = local.checker = self.collision_checker(
                self.scene, self._front.get('mesh_paths', ()), self._front.get('urdf_path'))
        if checker.scene is not self.scene:
            checker.scene = self.scene
        return checker

    def ik_dispatcher(self) -> IKDispatcher:
        """The arm's IK dispatcher (every solver that applies; its floor rules), built once
        (under the lock: concurrent first calls get one dispatcher bound to one ``scene``)."""
        dispatcher = self._front.get('dispatcher')
        if dispatcher is None:
            with self._build_lock:
                if 'dispatcher' not in self._front:
                    built = IKDispatcher(self.model, self.workspace, self.default_solver,
                                         self.safety, self.checker, self.avoid_collisions)
                    built.scene = self.scene
                    self._front['dispatcher'] = built
                dispatcher = self._front['dispatcher']
        return dispatcher

    # ------------------------------------------------------------------ kinematics
    def fk(self, q: Sequence[float]) -> Pose:
        """The tool pose at joint positions ``q`` (chain order, rad or m).

        Raises:
            ValueError: ``q`` is not ``dof`` finite numbers (the words say which).
        """
        vector, reason = check_vector(q, self.model.dof, 'q')
        if vector is None:
            raise ValueError(reason)
        return Pose.of_matrix(self.model.fk(vector))

    def ik(self, position: Sequence[float] | Pose, orientation: Any = None,
           seed: Sequence[float] | None = None, objective: str = 'closest', solver: str = '',
           avoid_collisions: bool | None = None, options: SolveOptions | None = None
           ) -> IKSolution:
        """Joint positions that put the tool at ``position`` (and ``orientation``).

        Args:
            position: m, base frame; or a ``Pose`` (its orientation then applies too).
            orientation: None (position only), a quaternion (x, y, z, w) or a 3×3 rotation.
            seed: where to start and what "closest" is measured from (default: home; give
                the robot's joint positions now for the solution nearest where it is).
            objective: which solution when there are several: closest (to the seed),
                first, manipulability or centred (``ik.objectives``).
            solver: '' for the arm's default, else a solver name (``ik.solvers``).
            avoid_collisions: refuse solutions in collision (self or ``scene``) and look
                for another branch or seed (None: the configuration's
                ``ik.avoid_collisions``, off by default).
            options: solver settings for this call (default: ``options``).

        Returns:
            IKSolution; never raises for bad input (INVALID_INPUT with the reason).
        """
        request = self._request(position, orientation, seed, solver)
        if isinstance(request, IKSolution):
            return request
        request.objective = objective
        if avoid_collisions is not None:
            request.avoid_collisions = AVOID_ON if avoid_collisions else AVOID_OFF
        answer = self.ik_dispatcher().solve(request, options or self.options, self.home)
        return _solution(answer.result, answer.solver)

    def ik_all(self, position: Sequence[float] | Pose, orientation: Any = None,
               seed: Sequence[float] | None = None, solver: str = '',
               options: SolveOptions | None = None, copies: bool = False) -> IKBranches:
        """Every branch of a closed form for the target, labelled (shoulder front/back,
        elbow up/down, wrist flip, ...; arguments as ``ik``): each branch once, as the
        whole-turn copy nearest the seed (what ``ik`` answers when it picks that branch), or
        with ``copies`` every copy within the limits of joints that turn more than once (a
        UR's ±2π joints give dozens). The closed form is ``solver``, else the arm's default
        when it is one, else the first that fits the arm; an arm no closed form fits gets
        SOLVER_NOT_APPLICABLE with each family's reason."""
        dispatcher = self.ik_dispatcher()
        name = solver or self._closed_form()
        if not name:
            reasons = '; '.join(f'{n}: {why}' for n, why in dispatcher.not_applicable.items()
                                if n not in ('dls', 'ccd'))
            return IKBranches((), ErrorCode.SOLVER_NOT_APPLICABLE,
                              f'no closed form fits {self.model.name} ({reasons})')
        if name in dispatcher.solvers and not dispatcher.solvers[name].labelled:
            return IKBranches((), ErrorCode.SOLVER_NOT_APPLICABLE,
                              f'solver "{name}" is numeric: it gives one solution per seed, '
                              'not labelled branches (use ik)', name)
        request = self._request(position, orientation, seed, name)
        if isinstance(request, IKSolution):
            return IKBranches((), request.code, request.message, name)
        request.return_all = True
        result = dispatcher.solve(request, options or self.options, self.home).result
        solutions = tuple(result.solutions) if result.code == ErrorCode.OK else ()
        if not copies:
            solutions = _nearest_copies(solutions, np.asarray(request.seed_positions))
        message = result.reason or f'{len(solutions)} solutions'
        return IKBranches(solutions, result.code, message, name)

    def _closed_form(self) -> str:
        dispatcher = self.ik_dispatcher()
        if dispatcher.solvers[self.default_solver].labelled:
            return self.default_solver
        return next((n for n, s in dispatcher.solvers.items() if s.labelled), '')

    def _request(self, position: Any, orientation: Any, seed: Any, solver: str
                 ) -> IKRequest | IKSolution:
        """The IKRequest of the front door's arguments, or the INVALID_INPUT answer."""
        if isinstance(position, Pose):
            position, orientation = position.position, position.quaternion
        point, reason = check_vector(position, 3, 'position')
        if point is None:
            return IKSolution(None, ErrorCode.INVALID_INPUT, reason)
        quaternion, reason = _quaternion(orientation)
        if quaternion is None and orientation is not None:
            return IKSolution(None, ErrorCode.INVALID_INPUT, reason)
        start, reason = check_vector(self.home if seed is None else seed, self.model.dof,
                                     'seed')
        if start is None:
            return IKSolution(None, ErrorCode.INVALID_INPUT, reason)
        goal = GoalType.POSITION if quaternion is None else GoalType.FULL_POSE
        return IKRequest(position=tuple(point.tolist()),
                         orientation=quaternion or (0.0, 0.0, 0.0, 1.0), goal=int(goal),
                         solver=solver, seed_names=self.model.joint_names,
                         seed_positions=tuple(start.tolist()))

    # ------------------------------------------------------------------ motion
    def path(self, waypoints: Sequence[Any], start: Sequence[float],
             solver: str = '', max_step: float = 0.0, timing: str = '',
             velocity_scale: float = 0.0, allow_branch_change: bool = False,
             timeout: float = 0.0) -> PathAnswer:
        """Follow a straight tool path from the tool pose at ``start`` through ``waypoints``
        with path IK (no joint jump, no deviation, no singularity), and time it.

        Args:
            waypoints: positions (m), or ``Pose`` / (position, quaternion) pairs for a full
                pose path (all of one kind).
            start: the joint positions the robot is at, where the path starts (required:
                a path from anywhere else would jump at its first point).
            solver: '' for the arm's default. max_step: m between path samples (0: 1 cm).
            timing: 'min_jerk' (default) or 'linear'. velocity_scale: share of the URDF
                velocity limits, (0, 1] (0: 1). allow_branch_change: a closed form may change
                branch where two meet. timeout: s (0: 5).

        Returns:
            PathAnswer; never raises for bad input.
        """
        from arm_kinematics.motion.path_ik import PathIK, PathRequest, ToolPose
        from arm_kinematics.motion.path_request import PathCode, PathResult
        poses, goal, reason = _tool_poses(waypoints, ToolPose)
        if poses is None:
            return PathAnswer(PathCode.INVALID_INPUT, reason, None, 0.0,
                              PathResult(PathCode.INVALID_INPUT, reason))
        if start is None:
            return PathAnswer(PathCode.INVALID_INPUT, _START_REQUIRED, None, 0.0,
                              PathResult(PathCode.INVALID_INPUT, _START_REQUIRED))
        with self._build_lock:
            if 'path_ik' not in self._front:
                # Its first path compiles what it calls outside the path's timeout (PathIK).
                self._front['path_ik'] = PathIK(self.ik_dispatcher(), self.safety)
        request = PathRequest(
            start=start, waypoints=poses, goal=int(goal),
            solver=solver, max_cartesian_step=max_step, timing=timing,
            velocity_scale=velocity_scale, allow_branch_change=allow_branch_change,
            timeout=timeout)
        result = self._front['path_ik'].follow(request, self.options)
        return PathAnswer(result.code, result.message, result.trajectory, result.fraction,
                          result)

    def plan(self, q: Sequence[float] | None = None, *, start: Sequence[float],
             position: Any = None, orientation: Any = None,
             duration: float = 0.0, speed_scale: float = 0.0, law: str = '',
             settings: Any = None) -> MotionPlan:
        """A timed move from ``start`` to joint positions ``q``, or to a tool ``position``
        (and ``orientation``: a quaternion, a 3×3 rotation; or a ``Pose`` as ``position``),
        checked for self-collision, the ``scene`` and the floor, and planned round them
        (OMPL's RRTConnect; the grid for a yaw + two-pitch pointer) when the straight joint
        move is blocked.

        Args:
            start: the joint positions the robot is at (required, keyword: a plan from
                anywhere else would jump at its first point).
            duration: s, a minimum (0: as fast as the limits allow).
            speed_scale: share of the URDF velocity limits, (0, 1] (0: 0.5).
            law: motion law: min_jerk (default), exponential, or for a position target
                linear / cartesian_min_jerk (a straight tool line), speed_cap.
            settings: ``motion.move_types.MotionSettings`` for everything else.

        Returns:
            MotionPlan; never raises for bad input.
        """
        from arm_kinematics.motion.errors import MotionCode, MotionError
        from arm_kinematics.motion.move_types import MotionSettings, MoveGoal, PlanFailure
        if (q is None) == (position is None):
            return MotionPlan.of(PlanFailure(MotionError(
                MotionCode.INVALID_GOAL, 'give joint positions q or a tool position, not '
                'both' if q is not None else 'give joint positions q or a tool position')))
        if q is not None:
            goal_q, reason = check_vector(q, self.model.dof, 'q')
            if goal_q is None:
                return MotionPlan.of(PlanFailure(MotionError(MotionCode.INVALID_GOAL, reason)))
            goal = MoveGoal(joint_names=self.model.joint_names,
                            joint_positions=tuple(goal_q.tolist()), motion_law=law,
                            duration=duration, speed_scale=speed_scale)
        else:
            request = self._request(position, orientation, None, '')
            if isinstance(request, IKSolution):
                return MotionPlan.of(PlanFailure(MotionError(MotionCode.INVALID_GOAL,
                                                             request.message)))
            goal = MoveGoal(position=tuple(request.position),
                            orientation=tuple(request.orientation), goal_type=request.goal,
                            motion_law=law, duration=duration, speed_scale=speed_scale)
        if start is None:
            return MotionPlan.of(PlanFailure(MotionError(MotionCode.INVALID_GOAL,
                                                         _START_REQUIRED)))
        if settings is None:
            settings = MotionSettings(default_law=self.config.default_law)
        return MotionPlan.of(self._planner().plan(goal, start, settings))

    def _planner(self) -> Any:
        """The executor's motion planner on this arm's solvers, safety and checker."""
        with self._build_lock:
            if 'planner' not in self._front:
                self._front['planner'] = self._new_planner()
        planner = self._front['planner']
        planner.collision.set_scene(self.scene)
        return planner

    def _new_planner(self) -> Any:
        from arm_kinematics.motion.planner import MotionPlanner
        from arm_kinematics.motion.safety_check import CollisionGuard, SafetyAdapter
        safety = SafetyAdapter(self.safety) if self.config.get('safety') is not None else None
        guard = CollisionGuard(lambda: self.collision_checker(
            self.scene, self._front.get('mesh_paths', ()), self._front.get('urdf_path')))
        planner = MotionPlanner(self.model, self.ik_dispatcher(), self.options, safety, guard)
        planner.default_path_planner = self.config.path_planner or planner.default_path_planner
        return planner

    # ------------------------------------------------------------------ checks
    def check(self, q: Sequence[float]) -> CheckVerdict:
        """Whether joint positions ``q`` are inside the limits, clear of self-collision and
        of the ``scene`` (URDF collision shapes, meshes included) and, with a configured
        floor, above it. Never raises for bad input (INVALID_INPUT with the reason)."""
        vector, reason = check_vector(q, self.model.dof, 'q')
        if vector is None:
            return CheckVerdict(ErrorCode.INVALID_INPUT, reason)
        model = self.model
        outside = [i for i in range(model.dof)
                   if not model.lower[i] - 1e-9 <= vector[i] <= model.upper[i] + 1e-9]
        problems = [f'joint "{model.joint_names[i]}" at {vector[i]:.4g} is outside '
                    f'[{model.lower[i]:.4g}, {model.upper[i]:.4g}]' for i in outside]
        report = self.checker().check(vector)
        if report.collides:
            problems.append(report.message)
        clearance = float('nan')
        if self.safety.floor_enabled:
            checks = self.safety.check(vector)
            index = int(np.argmin(checks.floor_clearance[0]))
            clearance = float(checks.floor_clearance[0, index])
            if clearance < 0.0:
                problems.append(f'{self.safety.link_names[index]} is {-clearance:.3f} m '
                                'below the floor')
        code = ErrorCode.JOINT_LIMITS if outside else ErrorCode.COLLISION if report.collides \
            else ErrorCode.FLOOR_COLLISION if clearance < 0.0 else ErrorCode.OK
        message = '; '.join(problems) if problems else report.message
        return CheckVerdict(code, message, tuple(model.joint_names[i] for i in outside), report,
                            clearance)


# ---------------------------------------------------------------------- helpers
def _read_urdf(urdf: str | Path) -> tuple[str, str | None]:
    """(URDF text, its file or None) of a file name or the text itself.

    Raises:
        DescriptionError: the file cannot be read, or its xacro fails.
    """
    if isinstance(urdf, str) and urdf.lstrip().startswith(_XML_START):
        return urdf, None
    path = Path(urdf)
    if path.suffix == '.xacro':
        from arm_kinematics.description.bundled import expand_xacro_file
        return expand_xacro_file(path), str(path)
    try:
        return path.read_text(encoding='utf-8'), str(path)
    except OSError as error:
        raise DescriptionError(f'{path}: cannot be read: {error.strerror}') from None
    except UnicodeDecodeError as error:
        raise DescriptionError(f'{path}: is not UTF-8 text (byte {error.start}): a URDF is an '
                               'XML text file') from None


def _read_config(config: ArmConfig | Mapping | str | Path | None) -> ArmConfig:
    if config is None:
        return ArmConfig()
    if isinstance(config, ArmConfig):
        return config
    if isinstance(config, Mapping):
        return ArmConfig.from_mapping(config)
    if isinstance(config, (str, Path)):
        return ArmConfig.from_file(config)
    raise ArmConfigError(f'config must be an ArmConfig, a mapping or a YAML file, got '
                         f'{type(config).__name__}')


def _quaternion(orientation: Any) -> tuple[tuple[float, ...] | None, str]:
    """(x, y, z, w) of a quaternion or a 3×3 rotation; (None, reason) otherwise.

    A quaternion is normalised, as the IK server and the planner do (``ik.request``), unless
    its norm is too small or large to give a direction; a 3×3 matrix must be a proper
    rotation: orthonormal with determinant +1 (a mirror image, det −1, passes R Rᵀ = I but
    no pose has it, and the solvers would answer for some other rotation)."""
    from arm_kinematics.common.transforms import matrix_to_quaternion
    if orientation is None:
        return None, ''
    try:
        values = np.asarray(orientation, dtype=float)
    except (TypeError, ValueError):
        return None, 'orientation is not a quaternion (x, y, z, w) nor a 3×3 rotation'
    if values.shape == (3, 3):
        if not np.isfinite(values).all():
            return None, 'orientation: the 3×3 rotation holds NaN or inf'
        if not np.allclose(values @ values.T, np.eye(3), atol=1e-6):
            return None, 'orientation: the 3×3 matrix is not a rotation (R Rᵀ is not I)'
        if np.linalg.det(values) < 0.0:
            return None, ('orientation: the 3×3 matrix is not a proper rotation (determinant '
                          '−1: a mirror image)')
        return tuple(float(v) for v in matrix_to_quaternion(values)), ''
    vector, reason = check_vector(values, 4, 'orientation (x, y, z, w)')
    if vector is None:
        return None, reason
    norm = float(np.linalg.norm(vector))
    if not 1e-6 < norm < 1e150:
        return None, f'orientation (x, y, z, w) has norm {norm:g}; give a unit quaternion'
    return tuple((vector / norm).tolist()), ''


def _tool_poses(waypoints: Sequence[Any], tool_pose: type
                ) -> tuple[list | None, GoalType, str]:
    """(ToolPoses, goal, '') of the waypoints of ``Arm.path``, or (None, goal, reason)."""
    poses, oriented = [], []
    try:
        items = list(waypoints)
    except TypeError:
        return None, GoalType.POSITION, 'waypoints must be a list of positions or poses'
    for index, item in enumerate(items):
        position, orientation = item, None
        if isinstance(item, Pose):
            position, orientation = item.position, item.quaternion
        elif isinstance(item, tuple) and len(item) == 2 and np.ndim(item[0]) == 1:
            position, orientation = item
        point, reason = check_vector(position, 3, f'waypoint {index} position')
        if point is None:
            return None, GoalType.POSITION, reason
        quaternion, reason = _quaternion(orientation)
        if reason:
            return None, GoalType.POSITION, f'waypoint {index}: {reason}'
        oriented.append(quaternion is not None)
        poses.append(tool_pose(tuple(point.tolist()), quaternion or (0.0, 0.0, 0.0, 1.0)))
    if any(oriented) and not all(oriented):
        return None, GoalType.POSITION, ('waypoints mix positions and poses: give every one '
                                         'an orientation, or none')
    return poses, GoalType.FULL_POSE if any(oriented) else GoalType.POSITION, ''


def _nearest_copies(solutions: tuple, seed: np.ndarray) -> tuple:
    """Per branch label, the solution nearest ``seed`` (largest joint change), in the
    order the labels first come."""
    nearest: dict[str, Any] = {}
    for solution in solutions:
        known = nearest.get(solution.label)
        if known is None or np.abs(solution.q - seed).max() < np.abs(known.q - seed).max():
            nearest[solution.label] = solution
    return tuple(nearest.values())


def _solution(result: IKResult, solver: str) -> IKSolution:
    q = None if result.q is None else np.asarray(result.q, dtype=float)
    return IKSolution(q, result.code, result.reason, result.branch, solver,
                      float(result.position_error), float(result.orientation_error),
                      float(result.solve_time))
