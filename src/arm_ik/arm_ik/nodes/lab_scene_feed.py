"""lab_viewer's feed of the scene and of what safety_monitor says of the pose: the latched
``scene`` topic (arm_interfaces/Scene, published by safety_monitor on every accepted change)
becomes the drawings of lab.scene_objects; ``safety_status`` gives the readout's safety
line, the obstacle's radius and colour, the contact dots and, from its collision fields, a
lab.collision_view.CollisionView. All go to LabState for the render tick, which alone draws.

A bad object (NaN pose, unknown type, sizes that do not fit) is left out with a warning and
the others are drawn; nothing a message holds stops the lab.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from rclpy.node import Node

from arm_ik.lab import texts
from arm_ik.lab.collision_view import collision_text, collision_view, LinkMarks
from arm_ik.lab.scene_objects import SceneDrawings
from arm_ik.lab.state import LabState
from arm_ik.nodes.common import constant_names, LATCHED_QOS
from arm_ik.nodes.scene_messages import object_entries
from arm_interfaces.msg import SafetyStatus
from arm_interfaces.msg import Scene as SceneMsg
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.scene.objects import SceneError
from arm_kinematics.scene.scene_rules import ball_of

SAFETY_VERDICTS = constant_names(SafetyStatus)


class LabSceneFeed:
    """Subscribes ``node`` to ``scene`` (relative, latched) and reads the collision fields of
    the safety statuses the node hands it; ``changed`` runs after each scene once a pose has
    come (the joint map's scene cells are then out of date)."""

    def __init__(self, node: Node, state: LabState, model: ArmModel,
                 search_paths: Sequence[str | Path], callback_group=None,
                 changed: Callable[[], None] = lambda: None) -> None:
        self._node = node
        self._state = state
        self._changed = changed
        self._drawings = SceneDrawings(model.base_link, search_paths)
        self.marks = LinkMarks(model)
        node.create_subscription(SceneMsg, 'scene', self._on_scene, LATCHED_QOS,
                                 callback_group=callback_group)

    def use_model(self, model: ArmModel) -> None:
        """New link lengths: the link labels follow the new frames."""
        self.marks = LinkMarks(model)

    def _on_scene(self, message: SceneMsg) -> None:
        logger = self._node.get_logger()
        try:
            entries, refused = object_entries(message)
            drawings, warnings = self._drawings.drawings(entries)
        except Exception as error:  # noqa: BLE001 - a viewer outlives any message
            logger.error(f'scene version {message.version} not drawn: '
                         f'{type(error).__name__}: {error}')
            return
        for warning in refused + warnings:
            logger.warning(f'scene version {message.version}: {warning}')
        self._state.update_scene('objects', drawings)
        try:
            # The arm's ball is the scene's "obstacle": drawn where it is, hidden when removed.
            self._state.update_scene('obstacle_place', ball_of(spec for spec, _ in entries))
        except SceneError as error:
            logger.warning(f'scene version {message.version}: the ball not drawn: {error}')
        if self._state.has_pose:
            self._changed()
        logger.info(f'scene version {message.version}: drawing {len(drawings)} of '
                    f'{len(message.objects)} objects '
                    f'({", ".join(d.id for d in drawings) or "none"})')

    def on_safety_status(self, message: SafetyStatus) -> None:
        """One status: the verdict's line, the obstacle, contacts, the collision witness (a
        STALE or refused status clears the witness and leaves the obstacle as it was)."""
        self._state.texts['safety'] = texts.safety_text(
            SAFETY_VERDICTS.get(message.verdict, str(message.verdict)),
            message.verdict == SafetyStatus.SAFE, message.message)
        self._collision(message)
        if message.verdict in (SafetyStatus.STALE, SafetyStatus.INVALID_INPUT):
            return
        touching = message.verdict == SafetyStatus.OBSTACLE_CONTACT or \
            any(message.obstacle_contact)
        # Drawn at the render rate (this comes with every joint_states message).
        self._state.update_scene('obstacle', message.obstacle_radius, touching)
        self._state.set_status_contacts([np.array([p.x, p.y, p.z])
                                         for p in message.contact_points])

    def _collision(self, message: SafetyStatus) -> None:
        view = collision_view(message.collision_checked, message.self_collision,
                              message.scene_contact, list(message.contact_pairs),
                              message.closest_pair, message.closest_distance,
                              self.marks.links)
        self._state.set_collision(view)
        self._state.texts['collision'] = collision_text(view)
