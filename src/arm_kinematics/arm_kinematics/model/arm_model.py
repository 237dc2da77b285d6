"""Serial-chain arm model built from a URDF, with forward kinematics and Jacobians.

The URDF expanded from ``arm_description`` is the only source of the geometry:
link offsets, joint axes and limits are read from it, never restated here.
"""

from __future__ import annotations

from functools import cached_property
import math

import numpy as np

from arm_kinematics.common.urdf_tree import DescriptionError
from arm_kinematics.model.chain import (  # noqa: F401 - FULL_TURN, Joint: re-exported
    build_chain,
    DEFAULT_JOINT_SPEED,
    FULL_TURN,
    Joint,
    Motion,
)
from arm_kinematics.model.kernel import ChainKernel

# Up to this many poses, joint_points evaluates each with the kernel (faster than the
# batch path's broadcasting below about a dozen poses).
SMALL_BATCH = 8


class ArmModel:
    """A serial chain from ``base_link`` to a tip link, ready for FK and Jacobians.

    Attributes:
        name: robot name from the URDF.
        base_link, tip_link: frame names the chain runs between.
        joints: movable joints, base to tip.
        joint_names: their names (tuple).
        lower, upper: position limits, radians (m for prismatic joints), arrays of length n.
        prismatic: (n,) bool, the joints that slide along their axis.
        velocity_limits: rad/s, from the URDF ``<limit velocity>``.
        tip_offset: fixed transform from the last joint's rotated frame to the tip.
    """

    def __init__(self, name: str, base_link: str, tip_link: str,
                 joints: list[Joint], tip_offset: np.ndarray,
                 motions: list[Motion] | None = None) -> None:
        if not joints:
            raise DescriptionError(f'no movable joint between "{base_link}" and "{tip_link}"')
        self.name = name
        self.base_link = base_link
        self.tip_link = tip_link
        self.joints = tuple(joints)
        self.joint_names = tuple(j.name for j in joints)
        self.dof = len(joints)
        # Every moving joint of the chain in order; mimic joints follow their leader.
        self.motions = tuple(motions) if motions is not None else \
            tuple(Motion(joint, index) for index, joint in enumerate(joints))
        self.followers = tuple(m.joint.name for m in self.motions if m.follower)
        # Frames of every moving joint (a mimic joint's too): what collision shapes hang on.
        self.frame_count = len(self.motions)
        self.lower = np.array([j.lower for j in joints])
        self.upper = np.array([j.upper for j in joints])
        self.velocity_limits = np.array([j.velocity for j in joints])
        self.wraps = np.array([j.wraps for j in joints])
        self.prismatic = np.array([j.prismatic for j in joints])
        self.tip_offset = tip_offset
        self.urdf = ''      # the URDF text the model was built from ('' when built by hand)
        # What loading assumed or set aside, one line each (URDF leniency, locked joints).
        self.notes: tuple[str, ...] = ()
        # Speed limit given to joints whose URDF has none (a reloaded URDF gets the same).
        self.default_speed = DEFAULT_JOINT_SPEED
        # Rodrigues terms per motion as 4×4 (R = I + sin q·K + (1 − cos q)·K²), built once
        # for frames() and frames_batch(): building them per call costs as much as the
        # products. A prismatic joint moves by q·slide (a translation along its axis).
        count = len(self.motions)
        skew = np.zeros((count, 4, 4))
        slide = np.zeros((count, 4, 4))
        for index, motion in enumerate(self.motions):
            joint = motion.joint
            x, y, z = joint.axis
            if joint.prismatic:
                slide[index, :3, 3] = joint.axis
            else:
                skew[index, :3, :3] = [[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]]
        self._skew = skew
        self._skew_sq = skew @ skew
        self._slide = slide
        self._sources = np.array([m.source for m in self.motions], dtype=int)
        self._multipliers = np.array([m.multiplier for m in self.motions])
        self._offsets = np.array([m.offset for m in self.motions])
        # Position in self.motions of each variable (its frame is the one frames() returns).
        self._variable_at = [i for i, m in enumerate(self.motions) if not m.follower]

    # ------------------------------------------------------------------ parsing
    @classmethod
    def from_urdf(cls, urdf_xml: str, base_link: str = 'base_link',
                  tip_link: str = 'tool0', default_speed: float = DEFAULT_JOINT_SPEED
                  ) -> ArmModel:
        """Build the chain ``base_link`` → ``tip_link`` from URDF text.

        Read as urdfdom reads it (see common.urdf_tree): missing lower/upper are 0, a
        missing or zero velocity is ``default_speed``, a locked joint (lower == upper) is
        fixed at its value, a mimic joint follows its leader; ``notes`` lists each.

        Raises:
            DescriptionError: in one line naming the joint or link and the attribute.
        """
        name, joints, motions, tip_offset, notes = build_chain(urdf_xml, base_link, tip_link,
                                                               default_speed)
        model = cls(name, base_link, tip_link, joints, tip_offset, motions)
        model.urdf = urdf_xml
        model.notes = notes
        model.default_speed = default_speed
        return model

    # ------------------------------------------------------------------ kinematics
    def within_limits(self, q: np.ndarray, tolerance: float = 1e-9) -> bool:
        """True when every joint of ``q`` lies inside its limits (± tolerance, radians)."""
        q = np.asarray(q, dtype=float)
        return bool(np.all(q >= self.lower - tolerance) and np.all(q <= self.upper + tolerance))

    def clamp(self, q: np.ndarray) -> np.ndarray:
        """``q`` clamped into the joint limits."""
        return np.clip(q, self.lower, self.upper)

    def random_configurations(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """``count`` configurations drawn uniformly inside the limits, shape (count, n)."""
        return rng.uniform(self.lower, self.upper, size=(count, self.dof))

    def frames_batch(self, q: np.ndarray) -> np.ndarray:
        """World frames of every joint (after its rotation) and of the tip.

        Args:
            q: joint positions, shape (N, n), radians.

        Returns:
            Array (N, n + 1, 4, 4): entry i < n is joint i's frame after rotating by
            q_i (its origin lies on the joint axis); entry n is the tip frame.
        """
        q = np.atleast_2d(np.asarray(q, dtype=float))
        count = q.shape[0]
        if count == 1:
            return self._frames_one(q[0])[None]
        frames = np.empty((count, self.dof + 1, 4, 4))
        identity = np.eye(4)
        current = np.broadcast_to(identity, (count, 4, 4))
        # Every motion's position: a variable's own q, a mimic's from its leader's.
        values = q[:, self._sources] * self._multipliers + self._offsets
        sin = np.sin(values)[:, :, None, None]
        one_minus_cos = (1.0 - np.cos(values))[:, :, None, None]
        variable = 0
        for index, motion in enumerate(self.motions):
            if motion.joint.prismatic:
                moved = identity + values[:, index, None, None] * self._slide[index]
            else:
                moved = (identity + sin[:, index] * self._skew[index]
                         + one_minus_cos[:, index] * self._skew_sq[index])
            current = current @ motion.joint.offset @ moved
            if not motion.follower:
                frames[:, variable] = current
                variable += 1
        frames[:, self.dof] = current @ self.tip_offset
        return frames

    def _frames_one(self, q: np.ndarray, every: bool = False) -> np.ndarray:
        """Frames of the variables (or of ``every`` moving joint) and the tip, one pose."""
        frames = np.empty(((self.frame_count if every else self.dof) + 1, 4, 4))
        current = np.eye(4)
        identity = np.eye(4)
        variable = 0
        for index, motion in enumerate(self.motions):
            value = motion.multiplier * float(q[motion.source]) + motion.offset
            if motion.joint.prismatic:
                moved = identity + value * self._slide[index]
            else:
                moved = (identity + math.sin(value) * self._skew[index]
                         + (1.0 - math.cos(value)) * self._skew_sq[index])
            current = current @ motion.joint.offset @ moved
            if every or not motion.follower:
                frames[variable] = current
                variable += 1
        frames[variable] = current @ self.tip_offset
        return frames

    def motion_frames(self, q: np.ndarray) -> np.ndarray:
        """World frames of every moving joint, a mimic joint's too, and of the tip for one
        configuration, (frame_count + 1, 4, 4): the frames collision shapes hang on (the
        same as ``frames`` when the chain has no mimic joint)."""
        return self._frames_one(np.asarray(q, dtype=float).reshape(self.dof), every=True)

    def fk_batch(self, q: np.ndarray) -> np.ndarray:
        """Tip transforms for N configurations, shape (N, 4, 4)."""
        return self.frames_batch(q)[:, -1]

    def frames(self, q: np.ndarray) -> np.ndarray:
        """World frames of every joint and the tip for one configuration, (n + 1, 4, 4)."""
        return self._frames_one(np.asarray(q, dtype=float).reshape(self.dof))

    @cached_property
    def kernel(self) -> ChainKernel:
        """This chain's FK and Jacobian through the compiled walk (``model.kernel``), built
        on first use: about a microsecond per pose where the 4×4 products above take tens."""
        return ChainKernel(self)

    def __getstate__(self) -> dict:
        # A model sent to a planning process leaves its kernel behind (the copy builds its
        # own on first use, from the cached compiled code): a smaller message.
        state = dict(self.__dict__)
        state.pop('kernel', None)
        return state

    def _one_pose(self, q: np.ndarray) -> np.ndarray:
        """One configuration as a contiguous vector of n floats (ValueError when it does not
        have n values)."""
        return np.ascontiguousarray(q, dtype=float).reshape(self.dof)

    def fk(self, q: np.ndarray) -> np.ndarray:
        """Tip transform in the base frame for one configuration (4×4)."""
        return self.kernel.fk(self._one_pose(q))

    def joint_origins_and_axes(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """World origins (n, 3) and unit axes (n, 3) of every joint, and the tip position (3,).

        The plain-numpy walk, not the compiled kernel: this serves start-up (the chain
        rules, the reach bounds, the safety geometry, the solvers' recognition, at q = 0),
        and a node that never solves then never imports numba (model/kernel.py)."""
        frames = self._frames_one(self._one_pose(q))
        axes = np.array([frame[:3, :3] @ joint.axis for frame, joint in
                         zip(frames[:-1], self.joints)]).reshape(self.dof, 3)
        return frames[:-1, :3, 3].copy(), axes, frames[-1, :3, 3].copy()

    def joint_points(self, q: np.ndarray) -> np.ndarray:
        """World origins of every joint and the tip position for N configurations, m.

        Args:
            q: joint positions, shape (N, n) or (n,), radians.

        Returns:
            Array (N, n + 1, 3): entries i < n are joint origins (on the joint axes), entry
            n is the tip. A few poses go through the kernel, many through the batch path.
        """
        q = np.atleast_2d(np.asarray(q, dtype=float))
        if len(q) > SMALL_BATCH:
            return self.frames_batch(q)[:, :, :3, 3]
        points = np.empty((len(q), self.dof + 1, 3))
        for row, values in enumerate(q.tolist()):
            frames, tip = self.kernel.joint_frames(values)
            for index, frame in enumerate(frames):
                points[row, index] = frame[:3]
            points[row, self.dof] = tip
        return points

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """Geometric Jacobian (6, n) of the tip: rows vx vy vz wx wy wz.

        For revolute joint i with world axis a_i and origin o_i the linear column is
        a_i × (p − o_i) and the angular column is a_i; for a prismatic joint the linear
        column is a_i and the angular one zero (written out by the kernel).
        """
        return self.kernel.jacobian(self._one_pose(q))

    def position_jacobian_batch(self, q: np.ndarray) -> np.ndarray:
        """Linear-velocity rows of the tip Jacobian for N configurations, (N, 3, n) m/rad.

        The same columns as ``jacobian`` (a_i × (p − o_i), or a_i for a slide), from one
        ``frames_batch``: for many poses at once (a workspace sampled voxel by voxel).
        """
        if self.followers:
            # A mimic joint adds to its leader's column: the kernel writes that sum out.
            return np.array([self.jacobian(row)[:3]
                             for row in np.atleast_2d(np.asarray(q, dtype=float))])
        frames = self.frames_batch(q)
        tip = frames[:, self.dof, :3, 3]
        columns = np.empty((len(frames), 3, self.dof))
        for index, joint in enumerate(self.joints):
            axis = frames[:, index, :3, :3] @ joint.axis
            if joint.prismatic:
                columns[:, :, index] = axis
            else:
                columns[:, :, index] = np.cross(axis, tip - frames[:, index, :3, 3])
        return columns

    def stretched_pose(self) -> np.ndarray:
        """q = 0 with every slide at the end of its range farther from 0: the pose where a
        link that only a slide lengthens has its length (at 0 the carriage may sit on the
        next frame). Turning joints keep their hops whatever q is."""
        q = np.zeros(self.dof)
        for index, joint in enumerate(self.joints):
            if joint.prismatic:
                q[index] = max(joint.lower, joint.upper, key=abs)
        return self.clamp(q)

    def segment_bounds(self) -> list[float]:
        """Upper bound of the distance between consecutive moving-joint origins, base origin
        first, then of the tip from the last one, m: whatever q is (a turning joint keeps its
        offset's length; a slide adds at most its travel; a mimic joint its own range).
        The reach bounds and the safety geometry's motion bounds are sums of these."""
        bounds = []
        for motion in self.motions:
            joint = motion.joint
            translation = joint.offset[:3, 3]
            if joint.prismatic:
                axis = joint.offset[:3, :3] @ joint.axis
                ends = (self.lower[motion.source], self.upper[motion.source])
                travel = [motion.multiplier * end + motion.offset for end in ends]
                bounds.append(max(float(np.linalg.norm(translation + axis * value))
                                  for value in travel))
            else:
                bounds.append(float(np.linalg.norm(translation)))
        bounds.append(float(np.linalg.norm(self.tip_offset[:3, 3])))
        return bounds

    def shoulder_position(self) -> np.ndarray:
        """World position of the first joint whose axis is not vertical at q = 0 (the shoulder).

        Falls back to the first joint when every axis is vertical.
        """
        origins, axes, _ = self.joint_origins_and_axes(np.zeros(self.dof))
        for origin, axis in zip(origins, axes):
            if abs(axis[2]) < 0.99:
                return origin
        return origins[0]

    def max_reach(self) -> float:
        """Upper bound of the tip's distance from the shoulder: the sum of the link lengths
        from the shoulder joint on, plus the travel of every prismatic joint, metres."""
        frames = self.frames(np.zeros(self.dof))
        points = [self.shoulder_position()]
        start = False
        for frame in frames:
            if not start and np.allclose(frame[:3, 3], points[0]):
                start = True
                continue
            if start:
                points.append(frame[:3, 3])
        travel = sum(max(abs(j.lower), abs(j.upper)) for j in self.joints if j.prismatic)
        return float(sum(np.linalg.norm(b - a) for a, b in zip(points, points[1:]))) + travel
