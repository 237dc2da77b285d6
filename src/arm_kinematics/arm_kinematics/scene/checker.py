"""One collision checker for an arm: self-collision and the scene, FK included.

Every robot shape is posed by its joint frame (``ArmModel.kernel.joint_poses``, the frames of
``ArmModel.frames`` in plain floats) times a constant offset (``links``). A pair is first
bounded from below by its shapes' bounding spheres (link pairs) or a link's sphere against an
object's box (scene pairs): every bound of a pose comes from one product of a constant matrix
with the pose's joint frames (the spheres' centres are linear in them) and a few vectorised
steps. The library's narrow phase then runs only where that bound does not already settle the
answer: for a yes/no check only pairs whose bounds are within the padding, for the closest pair
a branch and bound in order of the bound (stop when the next bound exceeds the best distance
found), which gives the exact closest pair and every pair in contact. The library transforms
of a pose are built only for the shapes the narrow phase meets (``backend.ShapePoser``).

Units: metres, radians; poses in the base frame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import copy
import itertools
import math
from pathlib import Path

import numpy as np

from arm_kinematics.description.collision_config import CollisionConfig
from arm_kinematics.description.meshes import default_search_paths
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.scene import backend

# The answers' types are collision_report's; importable from here too.
from arm_kinematics.scene.collision_report import CollisionReport, Contact, PathCheck  # noqa: F401
from arm_kinematics.scene.links import robot_bodies, RobotBodies
from arm_kinematics.scene.objects import Scene
from arm_kinematics.scene.pair_bounds import (
    midpoints_first,
    PairBounds,
    PairGroup,
    UNKNOWN_DISTANCE,
)

# Poses of a path checked in one vectorised broad phase (a blocked path stops at the first
# blocked block, so a block is the most a blocked path poses in vain).
PATH_BLOCK = 32
# Poses of a joint map judged per vectorised broad phase (bounded memory: M × pairs).
MASK_BLOCK = 512
# The rotation-free pose of a frame as a row (position, rotation row-major).
_IDENTITY_ROW = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
class CollisionChecker:
    """Self-collision and scene contact of ``model``'s links, from the URDF's collision shapes.

    One checker serves one thread: the library's request and result objects and the pose's
    transforms are reused, so concurrent calls would overwrite each other (build one per
    thread or process).

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
        from arm_kinematics.scene.allowed import compute_allowed_pairs
        self.model = model
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
        self._centre_rows = self._sphere_centre_rows()
        self._poser = backend.ShapePoser(self._frame, self._offset, model.frame_count)
        self.home = model.clamp(np.zeros(model.dof)) if home is None else \
            np.asarray(home, dtype=float)
        self._all_pairs = self._self_pairs(set())
        self._all_bounds = PairBounds([self._all_pairs])
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
        self._scene_pairs = PairGroup([], [], [], [], 12 * model.frame_count)
        self._bounds = PairBounds([self._self, self._scene_pairs])
        self._object_transforms: list = []
        self._query_cache: dict[tuple[int, object], backend.PairQuery] = {}
        self._motion_radius = self._joint_reach()

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
    def _sphere_centre_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(G, 3, 12 n) and (G, 3): each shape's bounding-sphere centre in the base frame is
        ``rows[g] @ frames.ravel() + constant[g]`` (frames: the joint frames' rows, position
        then rotation row-major; a base shape's centre is the constant alone)."""
        frames = self.model.frame_count
        rows = np.zeros((len(self._shapes), 3, 12 * frames))
        constant = np.zeros((len(self._shapes), 3))
        local = (self._offset[:, :3, :3] @ self._centre[:, :, None])[:, :, 0] + \
            self._offset[:, :3, 3]     # the centre in its frame
        for shape, (frame, point) in enumerate(zip(self._frame.tolist(), local)):
            if frame == 0:
                constant[shape] = point
                continue
            first = 12 * (frame - 1)
            for k in range(3):
                rows[shape, k, first + k] = 1.0
                rows[shape, k, first + 3 + 3 * k:first + 6 + 3 * k] = point
        return rows, constant

    def _self_pairs(self, allowed: set[frozenset[str]]) -> PairGroup:
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
        pairs = PairGroup(a, b, queries, names, 12 * self.model.frame_count)
        rows, constant = self._centre_rows
        pairs.rows = (rows[pairs.a] - rows[pairs.b]).reshape(-1, 12 * self.model.frame_count)
        pairs.offset = (constant[pairs.b] - constant[pairs.a]).ravel()
        pairs.reach = self._radius[pairs.a] + self._radius[pairs.b]
        # Two shapes on one frame keep their distance: found once, in that frame.
        for index, (i, j) in enumerate(zip(a, b)):
            if self._frame[i] == self._frame[j]:
                distance = queries[index].distance(backend.transform(self._offset[i]),
                                                   backend.transform(self._offset[j]))
                pairs.fixed[index] = distance
                pairs.fixed_clear[index] = distance > self.padding
        return pairs

    def _scene_group(self) -> tuple[PairGroup, list]:
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
            pairs = PairGroup(a, b, queries, names, 12 * self.model.frame_count)
            self._object_transforms = [backend.transform(item.pose) for item in objects]
            if objects:
                # Objects are static: a shape's bounding sphere against the object's box
                # (in the object's frame) bounds the pair far tighter than two spheres when
                # the object is flat or long (a table's sphere would cover the whole arm).
                # The sphere's centre in the box frame is R^T (c - box centre), linear in c.
                rotation = np.array([item.pose[:3, :3].T for item in objects])[pairs.b]
                box_centre = np.array([item.pose[:3, :3] @ item.shape.centre +
                                       item.pose[:3, 3] for item in objects])[pairs.b]
                rows, constant = self._centre_rows
                pairs.rows = (rotation @ rows[pairs.a]).reshape(-1, 12 * self.model.frame_count)
                pairs.offset = np.einsum('pij,pj->pi', rotation,
                                         box_centre - constant[pairs.a]).ravel()
                pairs.half = np.array([objects[i].shape.half_extents
                                       for i in pairs.b]).ravel()
                pairs.reach = self._radius[pairs.a]
                # A shape no joint moves (on the base) keeps its distance to an object: found
                # clear once per scene (the yes/no checks skip it), its distance computed
                # when a closest-pair check first needs it.
                for index in np.flatnonzero(self._frame[pairs.a] == 0).tolist():
                    pairs.fixed[index] = UNKNOWN_DISTANCE
                    pairs.fixed_clear[index] = not self._touch_posed(
                        queries[index], self._poser.base_shape(pairs.a_list[index]),
                        self._object_transforms[pairs.b_list[index]])
            self._scene_pairs = pairs
            self._bounds = PairBounds([self._self, pairs])
            self._scene_key = key
        return self._scene_pairs, objects

    def _joint_reach(self) -> np.ndarray:
        """Per joint, an upper bound of how far any point of the shapes it moves travels per
        unit of its motion, m/rad (revolute: the constant joint-to-joint distances plus the
        shape's extent) or m/m (prismatic: 1, every point slides with it). A mimic joint's
        frame moves with its leader: its share, times the multiplier, goes to the leader."""
        motions = self.model.motions
        steps = np.array([np.linalg.norm(motion.joint.offset[:3, 3]) for motion in motions])
        extent = np.linalg.norm(self._offset[:, :3, :3] @ self._centre[:, :, None]
                                + self._offset[:, :3, 3:], axis=(1, 2)) + self._radius
        reach = np.zeros(len(motions))
        for joint in range(len(motions)):
            for frame, size in zip(self._frame, extent):
                # Shapes on extended frame e are moved by joints 0 .. e - 1.
                if frame > joint:
                    if motions[joint].joint.prismatic:
                        reach[joint] = 1.0
                        break
                    # Prismatic joints between lengthen the lever by their travel.
                    travel = sum(max(abs(bound) for bound in self._travel(motions[k]))
                                 for k in range(joint + 1, frame)
                                 if motions[k].joint.prismatic)
                    reach[joint] = max(reach[joint],
                                       steps[joint + 1:frame].sum() + travel + size)
        per_variable = np.zeros(self.model.dof)
        for motion, value in zip(motions, reach):
            per_variable[motion.source] += abs(motion.multiplier) * value
        return per_variable

    def _travel(self, motion) -> tuple[float, float]:
        """The two ends of a moving joint's range (a mimic joint's from its leader's)."""
        ends = (self.model.lower[motion.source], self.model.upper[motion.source])
        return tuple(motion.multiplier * end + motion.offset for end in ends)

    # ------------------------------------------------------------------ posing
    def _joint_frames(self, q: np.ndarray) -> np.ndarray:
        """(n, 12): every joint frame of ``model.frames`` at ``q`` as a row (position, then
        rotation row-major), from the model's plain-float kernel."""
        values = np.asarray(q, dtype=float).reshape(self.model.dof).tolist()
        return np.array(self.model.kernel.joint_poses(values)).reshape(
            self.model.frame_count, 12)

    def _joint_frames_batch(self, qs: np.ndarray) -> np.ndarray:
        """(M, n, 12): ``_joint_frames`` of each of ``qs`` (M, n), the same floats."""
        poses = self.model.kernel.joint_poses
        frames = self.model.frame_count
        qs = np.asarray(qs, dtype=float).reshape(-1, self.model.dof)
        # One flat iterator: building from a list of tuples takes half as long again.
        values = itertools.chain.from_iterable(map(poses, qs.tolist()))
        return np.fromiter(values, float, 12 * frames * len(qs)).reshape(len(qs), frames, 12)

    def _extended_frames(self, q: np.ndarray) -> np.ndarray:
        """(n + 1, 4, 4): the base (identity) and every joint frame of ``model.frames``."""
        rows = np.concatenate([_IDENTITY_ROW[None], self._joint_frames(q)])
        frames = np.zeros((len(rows), 4, 4))
        frames[:, :3, 3] = rows[:, :3]
        frames[:, :3, :3] = rows[:, 3:].reshape(-1, 3, 3)
        frames[:, 3, 3] = 1.0
        return frames

    def shape_poses(self, q: np.ndarray) -> np.ndarray:
        """World poses (G, 4, 4) of every robot shape at ``q`` (rad)."""
        return self._extended_frames(q)[self._frame] @ self._offset

    def link_poses(self, q: np.ndarray) -> dict[str, np.ndarray]:
        """{link: 4×4 pose in the base frame} of every link with shapes at ``q`` (rad)."""
        frames = self._extended_frames(q)
        return {body.name: frames[body.frame] @ body.offset for body in self.bodies.bodies}

    # ------------------------------------------------------------------ checks
    def check(self, q: np.ndarray) -> CollisionReport:
        """Self-collision and scene contact of one pose, with the closest pairs.

        Args:
            q: joint positions (n,), rad.
        """
        frames = self._joint_frames(q)
        scene, _ = self._scene_group()
        bounds = self._bounds.of(frames)
        transforms = self._poser.start(frames)
        split = len(self._self)
        self_contacts, closest_self = self._branch(self._self, bounds[:split], transforms,
                                                   None, 'self')
        scene_contacts, closest_scene = [], None
        if len(scene):
            scene_contacts, closest_scene = self._branch(
                scene, bounds[split:], transforms, self._object_transforms, 'scene')
        return CollisionReport(bool(self_contacts or scene_contacts), bool(self_contacts),
                               bool(scene_contacts), tuple(self_contacts + scene_contacts),
                               closest_self, closest_scene)

    def _branch(self, pairs: PairGroup, bound: np.ndarray, transforms: list,
                objects: list | None, kind: str) -> tuple[list[Contact], Contact | None]:
        """Exact closest pair and every contact of a group by branch and bound; ``objects``:
        the scene objects' transforms (None: pair members are both robot shapes)."""
        if not len(pairs):
            return [], None
        padding = self.padding
        poser = self._poser
        lower_bounds = bound.tolist()
        queries, a_list, b_list, fixed = pairs.queries, pairs.a_list, pairs.b_list, pairs.fixed
        best = math.inf
        best_index = -1
        contacts: dict[tuple[str, str], float] = {}
        for index in bound.argsort().tolist():
            lower = lower_bounds[index]
            if lower > best and lower > padding:
                break
            distance = fixed[index]
            if distance is None or distance is UNKNOWN_DISTANCE:
                a = a_list[index]
                pose_a = transforms[a]
                if pose_a is None:
                    pose_a = poser.shape(a)
                b = b_list[index]
                if objects is None:
                    pose_b = transforms[b]
                    if pose_b is None:
                        pose_b = poser.shape(b)
                else:
                    pose_b = objects[b]
                if distance is None:
                    distance = queries[index].distance(pose_a, pose_b)
                else:
                    distance = fixed[index] = queries[index].distance(pose_a, pose_b)
            if distance < best:
                best, best_index = distance, index
            if distance <= padding:
                names = pairs.names[index]
                contacts[names] = min(distance, contacts.get(names, math.inf))
        closest = None
        if best_index >= 0:
            closest = Contact(kind, *pairs.names[best_index], best)
        if not contacts:
            return [], closest
        found = [Contact(kind, a, b, d) for (a, b), d in sorted(contacts.items(),
                                                                key=lambda e: e[1])]
        return found, closest

    def is_free(self, q: np.ndarray) -> bool:
        """True when no non-allowed link pair and no link-object pair is in contact at ``q``
        (the fast yes/no form of ``check``: stops at the first contact)."""
        frames = self._joint_frames(q)
        self._scene_group()
        bounds = self._bounds.of(frames)
        # ndarray.nonzero: np.flatnonzero's wrapper costs as much again on one pose.
        near = ((bounds <= self.padding) & self._bounds.keep).nonzero()[0]
        return not len(near) or not self._pose_blocked(frames, near.tolist())

    def max_link_motion(self, q_a: np.ndarray, q_b: np.ndarray) -> float:
        """Upper bound of how far any point of any link shape moves on the straight joint
        path from ``q_a`` to ``q_b``, m: Σ |Δq_i| · (distance bound from joint i to the
        farthest shape point it moves; 1 for a prismatic joint)."""
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
        # In blocks: the bounds of a block are one vectorised step, the narrow phase runs
        # pose by pose where a bound is not clear, and a blocked path stops at its first
        # blocked block (the same verdicts as is_free pose by pose: the same frames).
        for first in range(0, len(samples), PATH_BLOCK):
            index = self._first_blocked(samples[first:first + PATH_BLOCK])
            if index is not None:
                at = first + index
                q = samples[at]
                return PathCheck(False, at + 1, int(segments[at]), q.copy(), self.check(q))
        return PathCheck(True, len(samples))

    def all_free(self, qs: np.ndarray) -> bool:
        """True when every pose of ``qs`` (M, n) is free: ``is_free`` of each, as one verdict
        (a planner's motion check). The poses are checked midpoints first (the middle of a
        motion, then of each half, ...): a motion between two free poses is blocked, if at all,
        mostly away from its ends, where a check from its start would look last (the order of
        OMPL's own motion validator). PATH_BLOCK poses of that order at a time share one
        vectorised broad phase (a blocked motion poses no more than that in vain)."""
        qs = np.asarray(qs, dtype=float).reshape(-1, self.model.dof)
        order = midpoints_first(len(qs))
        for first in range(0, len(qs), PATH_BLOCK):
            if self._first_blocked(qs[order[first:first + PATH_BLOCK]]) is not None:
                return False
        return True

    def _first_blocked(self, qs: np.ndarray) -> int | None:
        """Index of the first pose of ``qs`` (M, n) that ``is_free`` refuses, or None."""
        frames = self._joint_frames_batch(qs)
        self._scene_group()
        near = (self._bounds.of(frames) <= self.padding) & self._bounds.keep
        for m in near.any(axis=1).nonzero()[0].tolist():
            if self._pose_blocked(frames[m], near[m].nonzero()[0].tolist()):
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
        self._scene_group()
        split = len(self._self)
        for first in range(0, len(qs), MASK_BLOCK):
            frames = self._joint_frames_batch(qs[first:first + MASK_BLOCK])
            near = (self._bounds.of(frames) <= self.padding) & self._bounds.keep
            for blocked, part, shift in ((self_blocked, near[:, :split], 0),
                                         (scene_blocked, near[:, split:], split)):
                for m in part.any(axis=1).nonzero()[0].tolist():
                    indices = (part[m].nonzero()[0] + shift).tolist()
                    blocked[first + m] = self._pose_blocked(frames[m], indices)
        return self_blocked, scene_blocked

    def twin(self) -> CollisionChecker:
        """A checker of the same arm for another thread: the shapes, allowed pairs and scene
        are shared (read only); the library's per-pair query objects and the pose's
        transforms are its own. Costs no mesh loading and no allowed-pairs sampling."""
        other = copy.copy(self)
        other._poser = backend.ShapePoser(self._frame, self._offset, self.model.frame_count)
        other._self = self._self_pairs({frozenset(entry[:2]) for entry in self.allowed})
        other._scene_key = None
        other._scene_pairs = PairGroup([], [], [], [], 12 * self.model.frame_count)
        other._bounds = PairBounds([other._self, other._scene_pairs])
        other._object_transforms = []
        other._query_cache = {}
        return other

    def _pose_blocked(self, frames: np.ndarray, indices: list[int]) -> bool:
        """The narrow phase of one pose (joint frames (n, 12)) on the pairs its bounds left
        open: ``indices`` into the link pairs followed by the scene pairs, ascending."""
        transforms = self._poser.start(frames)
        poser = self._poser
        pairs, scene = self._self, self._scene_pairs
        split = len(pairs)
        for index in indices:
            if index < split:
                a, b = pairs.a_list[index], pairs.b_list[index]
                pose_a = transforms[a]
                if pose_a is None:
                    pose_a = poser.shape(a)
                pose_b = transforms[b]
                if pose_b is None:
                    pose_b = poser.shape(b)
                query = pairs.queries[index]
            else:
                index -= split
                a = scene.a_list[index]
                pose_a = transforms[a]
                if pose_a is None:
                    pose_a = poser.shape(a)
                pose_b = self._object_transforms[scene.b_list[index]]
                query = scene.queries[index]
            if self._touch_posed(query, pose_a, pose_b):
                return True
        return False

    def _touch_posed(self, query: backend.PairQuery, a: object, b: object) -> bool:
        if self.padding > 0.0:
            return query.distance(a, b) <= self.padding
        return query.collide(a, b)

    def allowed_pairs(self) -> list[list[str]]:
        """The allowed pairs in use as plain data: [[link_a, link_b, reason], ...]."""
        return [list(entry) for entry in self.allowed]
