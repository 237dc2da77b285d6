"""An arm's floor and ball as objects of its scene, judged by their own rules.

The safety section of a bundled arm's YAML gives a floor plane (``floor_below_shoulder``) and
a ball (``obstacle``) checked with capsules along the links. Here they become scene objects
(``floor``, a thin box whose top is the floor plane; ``obstacle``, the ball as a sphere), so
RViz, the lab and every node that follows the ``scene`` topic see them where every other
object is, and the ball is moved, resized or removed through the same service. Their rules
are the seed's, unchanged: the collision shapes never check rule objects
(``Scene.checked_objects``); the capsules do, against the ball where the scene puts it.

``SceneRules`` is the safety monitor's policy for those two ids:
- ``floor`` is fixed: the floor is where the configuration says (a run-time change or removal
  is refused with the reason);
- ``obstacle`` may be moved, resized (it must stay a sphere) or removed (the ball is off) and
  applied again; an object given with that id becomes the ball;
- no other object may carry a ``rule``.
An arm whose configuration has the floor (or the ball) off has no such object, and its id is
an ordinary one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
import copy

import numpy as np

from arm_kinematics.scene.geometry import SafetyGeometry
from arm_kinematics.scene.objects import parse_pose, Scene, SceneData, SceneError, SceneObject

FLOOR_ID = 'floor'
OBSTACLE_ID = 'obstacle'
FLOOR_THICKNESS = 0.01    # m; the box's top face is the floor plane
FLOOR_MARGIN = 0.5        # m beyond the arm's reach on every side


def floor_spec(geometry: SafetyGeometry) -> dict:
    """The floor as a box: top face on the floor plane, centred under the shoulder, wider
    than the arm's reach."""
    reach = float(geometry.joint_reach[0]) + FLOOR_MARGIN
    x, y = (float(v) for v in geometry.shoulder[:2])
    return {'id': FLOOR_ID, 'type': 'box', 'rule': 'floor',
            'size': [2.0 * reach, 2.0 * reach, FLOOR_THICKNESS],
            'pose': {'xyz': [x, y, geometry.floor_z - FLOOR_THICKNESS / 2.0],
                     'rpy': [0.0, 0.0, 0.0]}}


def obstacle_spec(center: object, radius: float) -> dict:
    """The ball as a sphere at ``center`` (m, base frame) of ``radius`` (m)."""
    return {'id': OBSTACLE_ID, 'type': 'sphere', 'rule': 'obstacle', 'radius': float(radius),
            'pose': {'xyz': [float(v) for v in center], 'rpy': [0.0, 0.0, 0.0]}}


def obstacle_in(scene: Scene | SceneData) -> tuple[np.ndarray, float] | None:
    """(centre, radius) of the scene's ball, or None when it has none (removed: the ball is
    off). ``scene``: a Scene or its plain data (``SceneData``)."""
    if scene.objects and isinstance(scene.objects[0], SceneObject):
        ball = next((item for item in scene.objects if item.rule == 'obstacle'), None)
        return None if ball is None else (ball.pose[:3, 3].copy(), float(ball.spec['radius']))
    return ball_of(scene.objects)


def ball_of(specs: Iterable[Mapping]) -> tuple[np.ndarray, float] | None:
    """(centre, radius) of the ball among plain object mappings (None: no ball).

    Raises:
        SceneError: the ball's pose is unusable.
    """
    for spec in specs:
        if spec.get('rule') == 'obstacle':
            return parse_pose(spec.get('pose'))[:3, 3].copy(), float(spec['radius'])
    return None


def same_ball(a: tuple[np.ndarray, float] | None, b: tuple[np.ndarray, float] | None) -> bool:
    """Two ``obstacle_in`` answers are the same ball (or both none)."""
    if a is None or b is None:
        return a is b
    return a[1] == b[1] and np.array_equal(a[0], b[0])


def configured_ball(geometry: SafetyGeometry) -> tuple[np.ndarray, float] | None:
    """The ball of ``geometry`` as ``obstacle_in`` gives it (None: off)."""
    if not geometry.obstacle_enabled:
        return None
    return geometry.obstacle_center.copy(), float(geometry.config.obstacle.radius)


def resized_ball(scene: Scene, radius: float) -> dict | None:
    """The ball's spec with ``radius`` (m) where the scene has it, or None when the scene has
    no ball or it already has that radius (the obstacle_radius parameter)."""
    ball = obstacle_in(scene)
    if ball is None or ball[1] == radius:
        return None
    return obstacle_spec(ball[0], radius)


def geometry_in(geometry: SafetyGeometry, scene: Scene | SceneData | None) -> SafetyGeometry:
    """``geometry`` with its ball where ``scene`` has it: moved, resized, or off when the
    scene has none. An arm whose configuration has the ball off never gets one (the monitor
    gives no object that rule), and no scene yet means the configuration's.

    Raises:
        SafetyConfigError: the scene's ball has a radius or centre the rules refuse (the
            Scene already refuses those).
    """
    if scene is None:
        return geometry
    ball = obstacle_in(scene)
    config = geometry.config.obstacle
    if ball is None:
        return geometry if not config.enabled else \
            geometry.with_obstacle(config.center, config.radius, enabled=False)
    if same_ball(ball, configured_ball(geometry)):
        return geometry
    return geometry.with_obstacle(ball[0], ball[1], enabled=True)


class SceneRules:
    """Which ids of a scene are an arm's floor and ball, and what may be done to them.

    Args:
        geometry: the arm's safety geometry as its configuration gives it.
    """

    def __init__(self, geometry: SafetyGeometry) -> None:
        self._seed: list[dict] = []
        if geometry.floor_enabled:
            self._seed.append(floor_spec(geometry))
        if geometry.obstacle_enabled:
            self._seed.append(obstacle_spec(geometry.config.obstacle.center,
                                            geometry.config.obstacle.radius))
        self.rules = {spec['id']: spec['rule'] for spec in self._seed}

    def seed(self, scene: Scene) -> None:
        """Put the floor and the ball in ``scene`` (before any file's objects)."""
        scene.add_all(copy.deepcopy(self._seed))

    def admit(self, spec: Mapping) -> dict:
        """The spec to put into the scene for a run-time add or replace.

        Raises:
            SceneError: the floor is changed, the ball is given as another type, or another
                object claims a rule.
        """
        object_id = spec.get('id') if isinstance(spec, Mapping) else None
        rule = self.rules.get(object_id) if isinstance(object_id, str) else None
        if rule == 'floor':
            raise SceneError(self._floor_fixed('changed'))
        if rule is None:
            if isinstance(spec, Mapping) and spec.get('rule'):
                raise SceneError(f'scene object "{object_id}": "rule" is kept for the '
                                 f'arm\'s own floor and ball ({", ".join(self.rules) or "none"})')
            return dict(spec)
        if spec.get('type') != 'sphere':
            raise SceneError(f'scene object "{OBSTACLE_ID}" is the arm\'s ball: it stays a '
                             f'sphere (move or resize it, or remove it), got type '
                             f'{spec.get("type")!r}')
        return {**spec, 'rule': rule}

    def check_remove(self, object_id: str) -> None:
        """Raises SceneError when ``object_id`` may not be removed (the floor)."""
        if self.rules.get(object_id) == 'floor':
            raise SceneError(self._floor_fixed('removed'))

    @staticmethod
    def _floor_fixed(what: str) -> str:
        return (f'scene object "{FLOOR_ID}" is the arm\'s floor (safety.floor_below_shoulder '
                f'in its configuration): it cannot be {what} at run time')
