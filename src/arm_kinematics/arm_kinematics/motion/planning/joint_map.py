"""The (shoulder, elbow) joint map of an arm: the grid the detour planner searches, with the
floor, obstacle (and, given a collision checker, self-collision and scene) cells marked and,
when given, a path and the contacts measured along it. For the lab's and RViz's map view.

Units: radians, metres, seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
import enum
from typing import TYPE_CHECKING

import numpy as np

from arm_kinematics.motion.planning.grid import (
    DEFAULT_RESOLUTION,
    limited_joint_vector,
    MAX_RESOLUTION,
    MIN_RESOLUTION,
)
from arm_kinematics.motion.planning.grid_search import default_search_joints, grid_axis
from arm_kinematics.motion.safety_paths import CONTACT_RATE, Contacts, contacts_of, sample_in_time
from arm_kinematics.scene.geometry import SafetyGeometry

if TYPE_CHECKING:      # the collision package (and its library) only when a map asks
    from arm_kinematics.scene.checker import CollisionChecker


class MapCode(enum.IntEnum):
    """Outcome of a joint map request; values match arm_interfaces/GetJointMap."""

    OK = 0
    INVALID_INPUT = 1      # bad shapes, non-finite values, a resolution out of range
    NOT_APPLICABLE = 2     # the arm has no two pitch joints to map
    NO_JOINT_STATE = 3     # the current state was asked for and none has arrived
    INTERNAL_ERROR = 4


class JointMapError(ValueError):
    """A joint map that cannot be made; ``code`` (a MapCode) says which kind of refusal."""

    def __init__(self, code: MapCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class JointMap:
    """The (shoulder, elbow) grid of one arm at fixed other joints, with a path on it.

    The cells are computed at ``base_q``'s yaw. During a real move the base is still
    turning, so the path can cross marked contact cells without touching the obstacle, or
    touch it without crossing them: the contacts measured on the path are the truth, the
    cells a guide. Floor cells do not depend on a vertical base yaw.

    Attributes:
        joint_names: names of the two mapped joints.
        search_joints: their indices.
        base_q: (n,) pose supplying every other joint (rad).
        axis_a, axis_b: (A,), (B,) grid angles of the two joints, rad.
        floor: (A, B) True where a capsule is below the floor.
        contact: (A, B) True where a rod touches the obstacle.
        path: (S, 2) the two joints' angles along the sampled path, rad.
        path_cells: (S, 2) nearest grid indices of those samples.
        path_times: (S,) s.
        contacts: measured contacts along the path.
        contact_angles: (K, 2) the two joints' angles at those contacts, rad.
        self_collision: (A, B) True where two links not allowed to touch are in contact
            (the URDF collision shapes); None when no collision checker judged the cells.
        scene_contact: (A, B) True where a link touches a scene object; None likewise.
        scene_version: version of the checker's scene the cells were judged against.
    """

    joint_names: tuple[str, str]
    search_joints: tuple[int, int]
    base_q: np.ndarray
    axis_a: np.ndarray
    axis_b: np.ndarray
    floor: np.ndarray
    contact: np.ndarray
    path: np.ndarray
    path_cells: np.ndarray
    path_times: np.ndarray
    contacts: Contacts
    contact_angles: np.ndarray
    self_collision: np.ndarray | None = None
    scene_contact: np.ndarray | None = None
    scene_version: int = 0


def joint_map(geometry: SafetyGeometry, base_q: object, resolution: float = DEFAULT_RESOLUTION,
              waypoints: np.ndarray | None = None, times: np.ndarray | None = None,
              rate: float = CONTACT_RATE,
              search_joints: tuple[int, int] | None = None,
              checker: CollisionChecker | None = None) -> JointMap:
    """The (shoulder, elbow) map at ``base_q``'s other joints (the current base yaw), with the
    floor and contact cells marked and, when given, a path and its measured contacts.

    Args:
        geometry: the arm's safety geometry.
        base_q: (n,) rad; supplies the yaw (and wrist joints) of the map.
        resolution: grid step, rad (0.5° to 20°).
        waypoints, times: an optional path (K, n) rad and (K,) s (None: velocity limits).
        rate: path sampling rate, Hz (contacts are measured at these samples).
        search_joints: the two mapped joints (default shoulder, elbow).
        checker: a collision checker of the same arm (scene.checker), with the scene
            to judge against: the cells in self-collision and in scene contact are marked
            too (15-27 ms more for a 4° map of a bundled arm, bench_safety; None: not judged).

    Raises:
        JointMapError: INVALID_INPUT for bad shapes, non-finite values or a resolution out
            of range; NOT_APPLICABLE for an arm without two pitch joints.
    """
    model = geometry.model
    base, reason = limited_joint_vector(base_q, model, 'base pose')
    if base is None:
        raise JointMapError(MapCode.INVALID_INPUT, reason)
    if not MIN_RESOLUTION - 1e-12 <= resolution <= MAX_RESOLUTION + 1e-12:
        raise JointMapError(MapCode.INVALID_INPUT, f'resolution {resolution} rad is outside '
                            f'{MIN_RESOLUTION:.4f}..{MAX_RESOLUTION:.4f} rad')
    joints = search_joints or default_search_joints(model)
    if joints is None:
        raise JointMapError(MapCode.NOT_APPLICABLE, 'this arm has no two pitch joints to map')
    i, j = joints
    axis_a = grid_axis(model.lower[i], model.upper[i], resolution)
    axis_b = grid_axis(model.lower[j], model.upper[j], resolution)
    grid_a, grid_b = np.meshgrid(axis_a, axis_b, indexing='ij')
    poses = np.repeat(base[None, :], grid_a.size, axis=0)
    poses[:, i], poses[:, j] = grid_a.ravel(), grid_b.ravel()
    checks = geometry.check(poses)
    floor = checks.floor_violation.any(axis=1).reshape(grid_a.shape)
    contact = checks.obstacle_contact.any(axis=1).reshape(grid_a.shape)
    collision: dict = {}
    if checker is not None:
        self_cells, scene_cells = checker.blocked_masks(poses)
        collision = {'self_collision': self_cells.reshape(grid_a.shape),
                     'scene_contact': scene_cells.reshape(grid_a.shape),
                     'scene_version': int(checker.scene.version)}
    empty = Contacts(np.zeros(0), np.zeros((0, 3)), np.zeros((0, model.dof)), np.zeros(0), ())
    if waypoints is None:
        return JointMap((model.joint_names[i], model.joint_names[j]), joints, base, axis_a,
                        axis_b, floor, contact, np.zeros((0, 2)), np.zeros((0, 2), dtype=int),
                        np.zeros(0), empty, np.zeros((0, 2)), **collision)
    waypoints = np.atleast_2d(np.asarray(waypoints, dtype=float))
    samples = sample_in_time(model, waypoints, times, rate)
    path_checks = geometry.check(samples.positions)
    path = samples.positions[:, [i, j]]
    cells = np.column_stack([
        np.clip(np.rint((path[:, 0] - axis_a[0]) / (axis_a[1] - axis_a[0])), 0,
                len(axis_a) - 1),
        np.clip(np.rint((path[:, 1] - axis_b[0]) / (axis_b[1] - axis_b[0])), 0,
                len(axis_b) - 1)]).astype(int)
    contacts = contacts_of(path_checks, samples)
    return JointMap((model.joint_names[i], model.joint_names[j]), joints, base, axis_a, axis_b,
                    floor, contact, path, cells, samples.times, contacts,
                    contacts.positions[:, [i, j]] if len(contacts) else np.zeros((0, 2)),
                    **collision)
