"""What the lab knows between callbacks (no ROS): the measured pose, the target, the last IK
answer and failure, contacts and scene changes waiting for the render tick.

The node's callbacks run on several threads (subscriptions, timers, browser events, the
work pool); every method takes the one lock, and the render tick alone touches the scene.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import threading
from typing import Any

import numpy as np

from arm_ik.lab.collision_view import CollisionView


@dataclass(frozen=True)
class RenderInput:
    """What one render tick draws.

    Attributes:
        q: last checked pose, rad (None: no joint_states yet).
        fresh: a pose arrived since the last tick.
        tracked: the target the arm is chasing, m (None: none).
        updates: scene changes by kind ('obstacle_place', 'obstacle', 'ball', 'objects',
            'model') → their arguments.
        contacts: contact points of the last move and of the safety monitor, m.
        collision: the safety monitor's last collision report.
    """

    q: np.ndarray | None
    fresh: bool
    tracked: np.ndarray | None
    updates: dict[str, tuple]
    contacts: list[np.ndarray]
    collision: CollisionView = CollisionView()


class LabState:
    """The lab's shared state; see the module docstring."""

    def __init__(self, target: np.ndarray) -> None:
        self._lock = threading.Lock()
        self._measured: np.ndarray | None = None      # last checked joint_states, rad
        self._new_pose = False
        self._rejected = 0
        self._reject_reason = ''
        self._ik: dict[str, Any] = {}
        self._failure = ''
        self._target = np.asarray(target, dtype=float)
        self._target_wxyz = np.array([1.0, 0.0, 0.0, 0.0])
        self._tracked: np.ndarray | None = None       # target the arm is chasing, m
        self._preview_busy = False
        self._preview_again = False
        self._preview_token = 0
        self._preview_started = 0.0
        self._move_contacts: list[np.ndarray] = []
        self._status_contacts: list[np.ndarray] = []
        self._scene_updates: dict[str, tuple] = {}
        self._collision = CollisionView()
        self._map_pending = True        # the first joint map, once joint_states come
        # Status lines of the readout, written by one subscription each.
        self.texts = {'executor': '-', 'safety': '-', 'collision': '-', 'cycle': ''}
        self.cycle_running = False      # target_input's scripted cycle, from target_status

    # ------------------------------------------------------------------ inputs
    def measured(self, q: np.ndarray) -> bool:
        """A checked pose; True for the first one (the first joint map is due)."""
        with self._lock:
            self._measured, self._new_pose = q, True
            first, self._map_pending = self._map_pending, False
        return first

    @property
    def has_pose(self) -> bool:
        """A checked pose has come (joint maps can be asked for)."""
        with self._lock:
            return self._measured is not None

    def rejected(self, reason: str) -> None:
        """A joint_states message that was not usable."""
        with self._lock:
            self._rejected += 1
            self._reject_reason = reason

    def record_ik(self, solver: str, branch: str, code: int, text: str, error: float,
                  iterations: int) -> None:
        """An IK answer (ik_status or the lab's own preview); a failure is remembered."""
        with self._lock:
            self._ik = {'solver': solver, 'branch': branch, 'code': code, 'error': error,
                        'iterations': iterations}
            if code != 0:
                self._failure = f'IK: {text}'

    def fail(self, message: str) -> None:
        """The readout's last failure."""
        with self._lock:
            self._failure = message

    def update_scene(self, kind: str, *arguments: object) -> None:
        """A scene change for the next render tick (the last one of each kind wins)."""
        with self._lock:
            self._scene_updates[kind] = arguments

    def set_status_contacts(self, points: Sequence[np.ndarray]) -> None:
        with self._lock:
            self._status_contacts = list(points)

    def set_collision(self, view: CollisionView) -> None:
        """The safety monitor's collision report (with every safety_status)."""
        with self._lock:
            self._collision = view

    def set_move_contacts(self, points: Sequence[np.ndarray]) -> None:
        with self._lock:
            self._move_contacts = list(points)

    def cycle_report(self, line: str, from_sequence: bool, running: bool,
                     started_move: np.ndarray | None) -> None:
        """A target_status report: its readout line; whether the scripted cycle runs (the
        sequence's reports say); the target of a move target_input started (its cycle, a
        click), which the live error plot follows too, not only the panel's own moves."""
        self.texts['cycle'] = line
        if from_sequence:
            self.cycle_running = running
        if started_move is not None and np.all(np.isfinite(started_move)):
            self.track(started_move)

    # ------------------------------------------------------------------ the target
    def set_target(self, position: np.ndarray, wxyz: np.ndarray | None) -> None:
        """The gizmo's pose (its orientation only when it is finite)."""
        with self._lock:
            self._target = position
            if wxyz is not None:
                self._target_wxyz = wxyz

    def target(self) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the target position (m) and orientation (w, x, y, z)."""
        with self._lock:
            return self._target.copy(), self._target_wxyz.copy()

    def track(self, target: np.ndarray | None) -> None:
        """The target the live error plot measures against (None: stop)."""
        with self._lock:
            self._tracked = None if target is None else np.asarray(target, dtype=float)

    def stream_target(self) -> np.ndarray:
        """The target to stream now, tracked from now on."""
        with self._lock:
            self._tracked = self._target.copy()
            return self._tracked

    def begin_preview(self, now: float, lost_after: float) -> int | None:
        """A token when an IK preview may start now, else None (and one more runs after the
        current). A preview unanswered for ``lost_after`` s counts as lost (a service reply
        can be: arm_ik.middleware.call_until_answered), so previews never stop for good."""
        with self._lock:
            if self._preview_busy and now - self._preview_started < lost_after:
                self._preview_again = True
                return None
            self._preview_busy, self._preview_again = True, False
            self._preview_started = now
            self._preview_token += 1
            return self._preview_token

    def end_preview(self, token: int) -> bool:
        """Preview ``token`` is done; True when the target moved meanwhile (preview again).
        The late answer of a preview given up as lost changes nothing."""
        with self._lock:
            if token != self._preview_token:
                return False
            self._preview_busy = False
            return self._preview_again

    # ------------------------------------------------------------------ outputs
    def take_render(self) -> RenderInput:
        """What the render tick draws; the pending scene changes are handed over."""
        with self._lock:
            fresh, self._new_pose = self._new_pose, False
            updates, self._scene_updates = self._scene_updates, {}
            return RenderInput(self._measured, fresh, self._tracked, updates,
                               self._move_contacts + self._status_contacts, self._collision)

    def readout(self) -> tuple[dict[str, Any], str, int, str]:
        """(last IK answer, last failure, joint_states rejected, the last reason)."""
        with self._lock:
            return dict(self._ik), self._failure, self._rejected, self._reject_reason
