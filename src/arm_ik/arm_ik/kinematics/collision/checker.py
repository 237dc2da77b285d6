"""One collision checker for an arm: self-collision and the scene, FK included.

Every robot shape is posed by ``ArmModel.frames`` times a constant offset (``links``). A pair
is first bounded from below by its shapes' bounding spheres (vectorised over all pairs); the
library's narrow phase then runs only where that bound does not already settle the answer:
for a yes/no check only pairs whose spheres overlap, for the closest pair a branch and bound in
order of the bound (stop when the next bound exceeds the best distance found), which gives the
exact closest pair and every pair in contact.

Units: metres, radians; poses in the base frame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import copy
from dataclasses import dataclass
import math
from pathlib import Path

import numpy as np

from arm_ik.kinematics.collision import backend
from arm_ik.kinematics.collision.config import CollisionConfig
from arm_ik.kinematics.collision.links import robot_bodies, RobotBodies
from arm_ik.kinematics.collision.scene import Scene
from arm_ik.kinematics.config_writer import default_search_paths
from arm_ik.kinematics.model import ArmModel


@dataclass(frozen=True)
class Contact:
    """One checked pair.

    Attributes:
        kind: 'self' (two links) or 'scene' (a link and an object).
        a: link name.
        b: link name (self) or object id (scene).
        distance: m; ≤ padding means contact (negative: penetration depth of solids).
    """

    kind: str
    a: str
    b: str
    distance: float


@dataclass(frozen=True)
class CollisionReport:
    """The collision state of one pose.

    Attributes:
        collides: some non-allowed pair or some link-object pair is in contact.
        self_collision: two links not allowed to touch are in contact.
        scene_collision: a link touches a scene object.
        contacts: every pair in contact (a link pair once, at its smallest distance).
        closest_self: the closest non-allowed link pair (None: no pair is checked).
        closest_scene: the closest link-object pair (None: the scene is empty).
    """

    collides: bool
    self_collision: bool
    scene_collision: bool
    contacts: tuple[Contact, ...]
    closest_self: Contact | None
    closest_scene: Contact | None

    @property
    def closest(self) -> Contact | None:
        """The closest pair of both kinds."""
        pairs = [c for c in (self.closest_self, self.closest_scene) if c is not None]
        return min(pairs, key=lambda c: c.distance) if pairs else None

    @property
    def message(self) -> str:
        """The verdict in words."""
        if self.collides:
            return 'collision: ' + ', '.join(f'{c.a}–{c.b} ({c.distance * 1000:.1f} mm)'
                                             for c in self.contacts)
        closest = self.closest
        if closest is None:
            return 'clear (nothing to check)'
        return f'clear: closest {closest.a}–{closest.b} at {closest.distance * 1000:.1f} mm'


@dataclass(frozen=True)
class PathCheck:
    """The collision state of a joint path checked sample by sample.

    Attributes:
        free: every checked sample is clear.
        samples: how many poses were checked.
        segment: index i of the first blocked segment (waypoints i → i + 1, or 0 for a single
            waypoint); None when free.
        q: the first colliding sample (None when free).
        report: its report (None when free).
    """

    free: bool
    samples: int
    segment: int | None = None
    q: np.ndarray | None = None
    report: CollisionReport | None = None


# Poses of a path checked in one vectorised broad phase (a blocked path stops at the first
# blocked block; 32 poses cost about as much FK as 3 one by one).
PATH_BLOCK = 32
# Poses of a joint map judged per vectorised broad phase (bounded memory: M × pairs × 3).
MASK_BLOCK = 512


class _Pairs:
    """Index pairs (shape a, shape b) with their queries, checked as one group."""

    def __init__(self, a: np.ndarray, b: np.ndarray, queries: list[backend.PairQuery],
                 names: list[tuple[str, str]]) -> None:
        self.a = np.asarray(a, dtype=np.intp)
        self.b = np.asarray(b, dtype=np.intp)
        self.a_list, self.b_list = self.a.tolist(), self.b.tolist()   # fast scalar indexing
        self.queries = queries
        self.names = names
        self.reach = None   # radius sums (self) or link radii (scene), from the checker
        self.rotation = self.box_centre = self.half = None   # scene: the objects' boxes
        # Scene: pairs of a shape no joint moves (on the base) and an object, found clear
        # once per scene; the yes/no checks skip them (their answer cannot change).
        self.static_clear = np.zeros(len(queries), dtype=bool)

    def __len__(self) -> int:
        return len(self.queries)


class CollisionChecker:
    """Self-collision and scene contact of ``model``'s links, from the URDF's collision shapes.

    One checker serves one thread: the library's request and result objects are reused per
    pair, so concurrent calls would overwrite each other (build one per thread or process).

    Args:
        model: the chain.
        urdf: the URDF text (``model.urdf`` when empty).
        config: the ``collision`` section (mapping or CollisionConfig; None: defaults).
        home: home pose for the allowed-pairs computation (rad; zeros clamped when None).
        search_paths: mesh folders, before those of the config and default_search_paths().
        urdf_path: the URDF's file: its folder and their parents are searched too (where
            package:// meshes of a description usually sit).
        scene: the scene to check against (a new empty one in the base frame when None).
        samples: random poses for the allowed-pairs computation (when the config lists none).
        skip_never: allow pairs never in contact in any sample (faster, see allowed_pairs).
        seed: random seed of those poses.

    Raises:
        DescriptionError: the URDF does not hold the chain. CollisionConfigError, ShapeError:
            a malformed config. ValueError: an allowed pair names a link without shapes.
    """

    def __init__(self, model: ArmModel, urdf: str = '',
                 config: CollisionConfig | Mapping | None = None,
                 home: np.ndarray | None = None,
                 search_paths: Sequence[str | Path] = (), urdf_path: str | Path | None = None,
                 scene: Scene | None = None,
                 samples: int = 1000, skip_never: bool = True, seed: int = 0) -> None:
        from arm_ik.kinematics.collision.allowed import compute_allowed_pairs
        self.model = model
        self._init_kinematics()
        self.config = CollisionConfig.from_mapping(config)
        self.padding = self.config.padding
        paths = [*map(Path, search_paths), *map(Path, self.config.search_paths),
                 *default_search_paths(urdf_path)]
        self.search_paths = paths
        self.bodies: RobotBodies = robot_bodies(model, urdf or model.urdf, paths,
                                                self.config.fallback_shapes)
        self.warnings = self.bodies.warnings
        self.scene = scene if scene is not None else Scene(model.base_link, paths)
        shapes = [(body, shape) for body in self.bodies.bodies for shape in body.shapes]
        self._shape_link = [body.name for body, _ in shapes]
        self._shapes = [shape for _, shape in shapes]
        self._frame = np.array([body.frame for body, _ in shapes], dtype=np.intp)
        self._offset = np.array([body.offset @ shape.origin for body, shape in shapes]
                                ).reshape(-1, 4, 4)
        self._centre = np.array([shape.centre for shape in self._shapes]).reshape(-1, 3)
        self._radius = np.array([shape.radius for shape in self._shapes])
        self.home = model.clamp(np.zeros(model.dof)) if home is None else \
            np.asarray(home, dtype=float)
        self._all_pairs = self._self_pairs(set())
        if self.config.allowed_pairs is not None:
            self.allowed = [list(entry) for entry in self.config.allowed_pairs]
            links = {body.name for body in self.bodies.bodies}
            for a, b, _ in self.allowed:
                for link in (a, b):
                    if link not in links:
                        raise ValueError(f'collision.allowed_pairs names "{link}", which is '
                                         'not a link with collision shapes (links: '
                                         f'{", ".join(sorted(links))})')
        else:
            self.allowed = compute_allowed_pairs(self, samples, skip_never=skip_never,
                                                 seed=seed)
        self._self = self._self_pairs({frozenset(entry[:2]) for entry in self.allowed})
        self._scene_key = None
        self._scene_pairs = _Pairs([], [], [], [])
        self._query_cache: dict[tuple[int, object], backend.PairQuery] = {}
        self._motion_radius = self._joint_reach()

    def _init_kinematics(self) -> None:
        axes = [joint.axis for joint in self.model.joints]
        skew = np.zeros((self.model.dof, 4, 4))
        for index, (x, y, z) in enumerate(axes):
            skew[index, :3, :3] = [[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]]
        self._skew, self._skew_sq = skew, skew @ skew
        self._joint_offsets = np.array([joint.offset for joint in self.model.joints])

    # ------------------------------------------------------------------ views
    @property
    def links(self) -> tuple[str, ...]:
        """Links with collision shapes, base to tip."""
        return tuple(body.name for body in self.bodies.bodies)

    @property
    def checked_pairs(self) -> list[tuple[str, str]]:
        """Link pairs the self-collision check looks at."""
        return sorted({tuple(sorted(names)) for names in self._self.names})

    # ------------------------------------------------------------------ setup
    def _self_pairs(self, allowed: set[frozenset[str]]) -> _Pairs:
        a, b, queries, names = [], [], [], []
        for i in range(len(self._shapes)):
            for j in range(i + 1, len(self._shapes)):
                link_a, link_b = self._shape_link[i], self._shape_link[j]
                if link_a == link_b or frozenset((link_a, link_b)) in allowed:
                    continue
                a.append(i)
                b.append(j)
                queries.append(backend.PairQuery(self._shapes[i].geometry,
                                                 self._shapes[j].geometry))
                names.append((link_a, link_b))
        pairs = _Pairs(a, b, queries, names)
        pairs.reach = self._radius[pairs.a] + self._radius[pairs.b]
        return pairs

    def _scene_group(self) -> tuple[_Pairs, list]:
        """Link × object pairs, rebuilt when the scene changed (queries kept per shape)."""
        objects = self.scene.checked_objects
        # The scene object itself, not its id(): a replaced scene may be freed and its id
        # reused by the next one.
        key = (self.scene, self.scene.version)
        if self._scene_key is None or key[0] is not self._scene_key[0] or \
                key[1] != self._scene_key[1]:
            a, b, queries, names = [], [], [], []
            for index, item in enumerate(objects):
                for shape in range(len(self._shapes)):
                    # Keyed by the shape object itself (hashed by identity): an id() could be
                    # reused by a new object's shape once a removed one is freed.
                    cache_key = (shape, item.shape)
                    query = self._query_cache.get(cache_key)
                    if query is None:
                        query = backend.PairQuery(self._shapes[shape].geometry,
                                                  item.shape.geometry)
                        self._query_cache[cache_key] = query
                    a.append(shape)
                    b.append(index)
                    queries.append(query)
                    names.append((self._shape_link[shape], item.id))
            live = {item.shape for item in objects}
            self._query_cache = {k: v for k, v in self._query_cache.items() if k[1] in live}
            pairs = _Pairs(a, b, queries, names)
            if objects:
                # Objects are static: a shape's bounding sphere against the object's box
                # (in the object's frame) bounds the pair far tighter than two spheres when
                # the object is flat or long (a table's sphere would cover the whole arm).
                pairs.reach = self._radius[pairs.a]
                rotation = np.array([item.pose[:3, :3].T for item in objects])
                box_centre = np.array([item.pose[:3, :3] @ item.shape.centre +
                                       item.pose[:3, 3] for item in objects])
                pairs.rotation = rotation[pairs.b]
                pairs.box_centre = box_centre[pairs.b]
                pairs.half = np.array([objects[i].shape.half_extents for i in pairs.b])
                self._object_transforms = [backend.transform(item.pose) for item in objects]
                still = self._frame[pairs.a] == 0
                base = np.eye(4)
                for index in np.flatnonzero(still).tolist():
                    pose = base @ self._offset[pairs.a[index]]
                    pairs.static_clear[index] = not self._touch_posed(
                        queries[index], backend.transform(pose),
                        self._object_transforms[pairs.b[index]])
            self._scene_pairs = pairs
            self._scene_key = key
        return self._scene_pairs, objects

    def _joint_reach(self) -> np.ndarray:
        """Per joint, an upper bound of the distance from its origin to any point of the
        shapes it moves, m (constant joint-to-joint distances plus the shape's extent)."""
        steps = np.array([np.linalg.norm(joint.offset[:3, 3]) for joint in self.model.joints])
        extent = np.linalg.norm(self._offset[:, :3, :3] @ self._centre[:, :, None]
                                + self._offset[:, :3, 3:], axis=(1, 2)) + self._radius
        reach = np.zeros(self.model.dof)
        for joint in range(self.model.dof):
            for frame, size in zip(self._frame, extent):
                # Shapes on extended frame e are moved by joints 0 .. e - 1.
                if frame > joint:
                    reach[joint] = max(reach[joint], steps[joint + 1:frame].sum() + size)
        return reach

    # ------------------------------------------------------------------ posing
    def _extended_frames(self, q: np.ndarray) -> np.ndarray:
        """(n + 1, 4, 4): the base (identity) and every joint frame of ``model.frames``, with
        all joint rotations built in one vectorised step (half the cost of frames())."""
        q = np.asarray(q, dtype=float).reshape(self.model.dof)
        local = self._joint_offsets @ (np.eye(4) + np.sin(q)[:, None, None] * self._skew
                                       + (1.0 - np.cos(q))[:, None, None] * self._skew_sq)
        frames = np.empty((self.model.dof + 1, 4, 4))
        current = frames[0] = np.eye(4)
        for index in range(self.model.dof):
            current = frames[index + 1] = current @ local[index]
        return frames

    def shape_poses(self, q: np.ndarray) -> np.ndarray:
        """World poses (G, 4, 4) of every robot shape at ``q`` (rad)."""
        return self._extended_frames(q)[self._frame] @ self._offset

    def link_poses(self, q: np.ndarray) -> dict[str, np.ndarray]:
        """{link: 4×4 pose in the base frame} of every link with shapes at ``q`` (rad)."""
        frames = self._extended_frames(q)
        return {body.name: frames[body.frame] @ body.offset for body in self.bodies.bodies}

    def _centres(self, poses: np.ndarray) -> np.ndarray:
        return (poses[:, :3, :3] @ self._centre[:, :, None])[:, :, 0] + poses[:, :3, 3]

    # ------------------------------------------------------------------ checks
    def check(self, q: np.ndarray) -> CollisionReport:
        """Self-collision and scene contact of one pose, with the closest pairs.

        Args:
            q: joint positions (n,), rad.
        """
        poses = self.shape_poses(q)
        centres = self._centres(poses)
        transforms: list = [None] * len(poses)

        def robot(index: int):
            if transforms[index] is None:
                transforms[index] = backend.transform(poses[index])
            return transforms[index]

        pairs = self._self
        bound = np.linalg.norm(centres[pairs.a] - centres[pairs.b], axis=1) - pairs.reach \
            if len(pairs) else np.zeros(0)
        self_contacts, closest_self = self._branch(pairs, bound, robot, robot, 'self')
        scene, objects = self._scene_group()
        scene_contacts, closest_scene = [], None
        if len(scene):
            bound = self._scene_bound(scene, centres)
            scene_contacts, closest_scene = self._branch(
                scene, bound, robot, self._object_transforms.__getitem__, 'scene')
        return CollisionReport(bool(self_contacts or scene_contacts), bool(self_contacts),
                               bool(scene_contacts), tuple(self_contacts + scene_contacts),
                               closest_self, closest_scene)

    @staticmethod
    def _scene_bound(pairs: _Pairs, centres: np.ndarray) -> np.ndarray:
        """Lower bounds of the link-object distances, m: from each link shape's bounding
        sphere to the object's box."""
        local = np.einsum('pij,pj->pi', pairs.rotation, centres[pairs.a] - pairs.box_centre)
        outside = np.maximum(np.abs(local) - pairs.half, 0.0)
        return np.sqrt(np.einsum('pi,pi->p', outside, outside)) - pairs.reach

    def _branch(self, pairs: _Pairs, bound: np.ndarray, pose_a, pose_b,
                kind: str) -> tuple[list[Contact], Contact | None]:
        """Exact closest pair and every contact of a group by branch and bound."""
        best = math.inf
        best_index = -1
        contacts: dict[tuple[str, str], float] = {}
        for index in np.argsort(bound).tolist():
            if bound[index] > max(best, self.padding):
                break
            distance = pairs.queries[index].distance(pose_a(pairs.a[index]),
                                                     pose_b(pairs.b[index]))
            if distance < best:
                best, best_index = distance, index
            if distance <= self.padding:
                names = pairs.names[index]
                contacts[names] = min(distance, contacts.get(names, math.inf))
        closest = None
        if best_index >= 0:
            closest = Contact(kind, *pairs.names[best_index], best)
        found = [Contact(kind, a, b, d) for (a, b), d in sorted(contacts.items(),
                                                                key=lambda e: e[1])]
        return found, closest

    def is_free(self, q: np.ndarray) -> bool:
        """True when no non-allowed link pair and no link-object pair is in contact at ``q``
        (the fast yes/no form of ``check``: stops at the first contact)."""
        poses = self.shape_poses(q)
        centres = self._centres(poses)
        pairs = self._self
        # Each shape's transform is built once per pose, the objects' once per scene; the
        # scene's bounds only when the arm is clear of itself.
        transforms: list = [None] * len(poses)
        scene, _ = self._scene_group()
        if len(pairs):
            bound = np.linalg.norm(centres[pairs.a] - centres[pairs.b], axis=1) - pairs.reach
            self_index = np.flatnonzero(bound <= self.padding).tolist()
            if self_index and self._pose_blocked(poses, self_index, (), scene, transforms):
                return False
        if len(scene):
            scene_index = np.flatnonzero((self._scene_bound(scene, centres) <= self.padding)
                                         & ~scene.static_clear).tolist()
            if scene_index and self._pose_blocked(poses, (), scene_index, scene, transforms):
                return False
        return True

    def max_link_motion(self, q_a: np.ndarray, q_b: np.ndarray) -> float:
        """Upper bound of how far any point of any link shape moves on the straight joint
        path from ``q_a`` to ``q_b``, m: Σ |Δq_i| · (distance bound from joint i to the
        farthest shape point it moves)."""
        delta = np.abs(np.asarray(q_b, dtype=float) - np.asarray(q_a, dtype=float))
        return float(delta @ self._motion_radius)

    def densify(self, qs: np.ndarray, max_step: float) -> tuple[np.ndarray, np.ndarray]:
        """Samples of a joint path so that no link point moves more than ``max_step`` m
        between consecutive samples.

        Returns:
            (samples (M, n), segment index of each sample).
        """
        qs = np.atleast_2d(np.asarray(qs, dtype=float))
        if max_step <= 0 or not math.isfinite(max_step):
            raise ValueError(f'max_step must be a finite distance > 0, got {max_step!r}')
        samples, segments = [qs[0]], [0]
        for index in range(len(qs) - 1):
            count = max(1, math.ceil(self.max_link_motion(qs[index], qs[index + 1]) / max_step))
            steps = np.linspace(0.0, 1.0, count + 1)[1:, None]
            samples.extend(qs[index] + steps * (qs[index + 1] - qs[index]))
            segments.extend([index] * count)
        return np.array(samples), np.array(segments)

    def check_path(self, qs: np.ndarray, max_step: float | None = 0.01) -> PathCheck:
        """Check a joint path pose by pose, densified so that no link point moves more than
        ``max_step`` m between checks (None: only the given poses).

        Args:
            qs: waypoints (M, n), rad.
            max_step: largest link motion between checked poses, m.
        """
        qs = np.atleast_2d(np.asarray(qs, dtype=float))
        if max_step is None:
            samples, segments = qs, np.maximum(np.arange(len(qs)) - 1, 0)
        else:
            samples, segments = self.densify(qs, max_step)
        # In blocks: FK and the bounds of a block are one vectorised step, the narrow phase
        # runs pose by pose where a bound is not clear, and a blocked path stops at its first
        # blocked block (the same verdicts as is_free pose by pose).
        for first in range(0, len(samples), PATH_BLOCK):
            index = self._first_blocked(samples[first:first + PATH_BLOCK])
            if index is not None:
                at = first + index
                q = samples[at]
                return PathCheck(False, at + 1, int(segments[at]), q.copy(), self.check(q))
        return PathCheck(True, len(samples))

    def _first_blocked(self, qs: np.ndarray) -> int | None:
        """Index of the first pose of ``qs`` (M, n) that ``is_free`` refuses, or None."""
        poses = self._batch_shape_poses(qs)
        scene, _ = self._scene_group()
        self_near, scene_near = self._near(poses, scene)
        # Only poses with some bound not clear need the narrow phase.
        near = np.zeros(len(qs), dtype=bool)
        for mask in (self_near, scene_near):
            if mask is not None:
                near |= mask.any(axis=1)
        for m in np.flatnonzero(near).tolist():
            self_index = np.flatnonzero(self_near[m]).tolist() if self_near is not None else ()
            scene_index = np.flatnonzero(scene_near[m]).tolist() if scene_near is not None \
                else ()
            if self._pose_blocked(poses[m], self_index, scene_index, scene):
                return m
        return None

    def blocked_masks(self, qs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Which of many poses are in self-collision and which touch the scene (a joint map's
        cells): the broad phase of every pose in one vectorised step per block, the narrow
        phase only on the pairs a bound leaves open, each group stopping at its first contact.

        Args:
            qs: poses (M, n), rad.

        Returns:
            (self-collision (M,) bool, scene contact (M,) bool); the same verdicts as
            ``check(q).self_collision`` and ``.scene_collision`` pose by pose.
        """
        qs = np.asarray(qs, dtype=float).reshape(-1, self.model.dof)
        self_blocked = np.zeros(len(qs), dtype=bool)
        scene_blocked = np.zeros(len(qs), dtype=bool)
        scene, _ = self._scene_group()
        for first in range(0, len(qs), MASK_BLOCK):
            block = qs[first:first + MASK_BLOCK]
            poses = self._batch_shape_poses(block)
            self_near, scene_near = self._near(poses, scene)
            if self_near is not None:
                for m in np.flatnonzero(self_near.any(axis=1)).tolist():
                    self_blocked[first + m] = self._pose_blocked(
                        poses[m], np.flatnonzero(self_near[m]).tolist(), (), scene)
            if scene_near is not None:
                for m in np.flatnonzero(scene_near.any(axis=1)).tolist():
                    scene_blocked[first + m] = self._pose_blocked(
                        poses[m], (), np.flatnonzero(scene_near[m]).tolist(), scene)
        return self_blocked, scene_blocked

    def _near(self, poses: np.ndarray, scene: _Pairs) -> tuple[np.ndarray | None,
                                                               np.ndarray | None]:
        """(M, pairs) masks of the self and scene pairs whose bounds do not clear them at the
        (M, G, 4, 4) shape poses (None: no such pairs)."""
        centres = np.einsum('mgij,gj->mgi', poses[..., :3, :3], self._centre) + \
            poses[..., :3, 3]
        pairs = self._self
        self_near = scene_near = None
        if len(pairs):
            bound = np.linalg.norm(centres[:, pairs.a] - centres[:, pairs.b], axis=2) - \
                pairs.reach
            self_near = bound <= self.padding
        if len(scene):
            local = np.einsum('pij,mpj->mpi', scene.rotation,
                              centres[:, scene.a] - scene.box_centre)
            outside = np.maximum(np.abs(local) - scene.half, 0.0)
            bound = np.sqrt(np.einsum('mpi,mpi->mp', outside, outside)) - scene.reach
            scene_near = (bound <= self.padding) & ~scene.static_clear
        return self_near, scene_near

    def twin(self) -> CollisionChecker:
        """A checker of the same arm for another thread: the shapes, allowed pairs and scene
        are shared (read only), the library's per-pair query objects are its own. Costs
        no mesh loading and no allowed-pairs sampling."""
        other = copy.copy(self)
        other._self = self._self_pairs({frozenset(entry[:2]) for entry in self.allowed})
        other._scene_key = None
        other._scene_pairs = _Pairs([], [], [], [])
        other._query_cache = {}
        return other

    def _pose_blocked(self, poses: np.ndarray, self_index, scene_index, scene: _Pairs,
                      transforms: list | None = None) -> bool:
        """The narrow phase of one pose on the pairs (lists of indices) its bounds left
        open; ``transforms``: the shapes' library transforms built so far (filled in)."""
        if transforms is None:
            transforms = [None] * len(poses)
        pairs = self._self
        for index in self_index:
            a, b = pairs.a_list[index], pairs.b_list[index]
            if transforms[a] is None:
                transforms[a] = backend.transform(poses[a])
            if transforms[b] is None:
                transforms[b] = backend.transform(poses[b])
            if self._touch_posed(pairs.queries[index], transforms[a], transforms[b]):
                return True
        for index in scene_index:
            a = scene.a_list[index]
            if transforms[a] is None:
                transforms[a] = backend.transform(poses[a])
            if self._touch_posed(scene.queries[index], transforms[a],
                                 self._object_transforms[scene.b_list[index]]):
                return True
        return False

    def _touch_posed(self, query: backend.PairQuery, a: object, b: object) -> bool:
        if self.padding > 0.0:
            return query.distance(a, b) <= self.padding
        return query.collide(a, b)

    def _batch_shape_poses(self, qs: np.ndarray) -> np.ndarray:
        """(M, G, 4, 4) world poses of every robot shape at each of ``qs`` (M, n)."""
        qs = np.asarray(qs, dtype=float).reshape(-1, self.model.dof)
        sin, cos = np.sin(qs)[:, :, None, None], np.cos(qs)[:, :, None, None]
        local = self._joint_offsets @ (np.eye(4) + sin * self._skew +
                                       (1.0 - cos) * self._skew_sq)
        frames = np.empty((len(qs), self.model.dof + 1, 4, 4))
        frames[:, 0] = np.eye(4)
        for index in range(self.model.dof):
            frames[:, index + 1] = frames[:, index] @ local[:, index]
        return frames[:, self._frame] @ self._offset

    def allowed_pairs(self) -> list[list[str]]:
        """The allowed pairs in use as plain data: [[link_a, link_b, reason], ...]."""
        return [list(entry) for entry in self.allowed]
