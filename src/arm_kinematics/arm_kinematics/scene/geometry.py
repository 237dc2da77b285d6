"""Link capsules, the floor plane and the obstacle ball: pose checks vectorised over N poses.

Every link listed in the arm's ``safety.links`` is a segment between two joint origins (or a
joint origin and the tip) taken from ``ArmModel.frames_batch``, so the URDF stays the only
source of the geometry. Two shapes are checked around the same segment:

- the floor: a capsule of the link's configured radius must stay above a horizontal plane
  ``floor_below_shoulder`` below the shoulder pivot. A segment's lowest point is one of its
  endpoints, so the lowest capsule point is ``min(z_a, z_b) - radius``;
- the obstacle: the link is a rod of ``rod_radius`` (0.075 m); it touches the ball when the
  distance from the ball centre to the segment is below ``ball radius + rod radius``.

Units: metres and radians; positions in the arm's base frame (REP-103, z up).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import enum
import math

import numpy as np

from arm_kinematics.description.safety_config import SafetyConfig, SafetyConfigError, SAME_POINT
from arm_kinematics.model.arm_model import ArmModel

# Joint origins closer than this (m) at q = 0 are the same point (e.g. a wrist roll and pitch).


class Verdict(enum.IntEnum):
    """Overall verdict of a pose; the values match arm_interfaces/SafetyStatus."""

    SAFE = 0
    FLOOR_VIOLATION = 1      # some capsule reaches below the floor (wins over contact)
    OBSTACLE_CONTACT = 2     # some rod is closer to the ball centre than radius + rod radius
    STALE = 3                # no recent joint state: nothing was judged (used by the monitor)
    INVALID_INPUT = 4        # the pose was not finite or had the wrong size


@dataclass(frozen=True, slots=True)
class Capsule:
    """A checked link: the segment between two entries of ``frames_batch`` and a radius.

    Attributes:
        name: link label from the configuration.
        start: index of the joint whose origin starts the segment.
        end: index of the frame that ends it (a later joint, or ``dof`` for the tip).
        radius: capsule radius for the floor check, m.
    """

    name: str
    start: int
    end: int
    radius: float


@dataclass(frozen=True, slots=True)
class LinkChecks:
    """The per-link results every safety check has, of one pose (L,) or of N poses (N, L).

    Attributes (L links):
        link_names: the checked links, base to tip.
        floor_clearance: height of each capsule's lowest point above the floor, m
            (negative: that far below; +inf when the floor check is disabled).
        obstacle_distance: distance from the ball centre to each link's axis, m
            (+inf when the obstacle check is disabled).
        closest_points: (..., L, 3) point of each link's axis nearest the ball centre, m.
        floor_violation: capsule below the floor.
        obstacle_contact: rod touching the ball.
    """

    link_names: tuple[str, ...]
    floor_clearance: np.ndarray
    obstacle_distance: np.ndarray
    closest_points: np.ndarray
    floor_violation: np.ndarray
    obstacle_contact: np.ndarray


@dataclass(frozen=True, slots=True)
class PoseCheck(LinkChecks):
    """Safety of one pose, per link ((L,) arrays, see LinkChecks) and overall.

    Attributes:
        verdict: overall Verdict.
        min_floor_clearance: smallest floor clearance, m.
        min_obstacle_distance: smallest obstacle distance, m.
        contact_distance: ball radius + rod radius in use, m.
        tip: tip position, m.
        message: the verdict in words.
    """

    verdict: Verdict
    min_floor_clearance: float
    min_obstacle_distance: float
    contact_distance: float
    tip: np.ndarray
    message: str

    @property
    def safe(self) -> bool:
        return self.verdict == Verdict.SAFE


@dataclass(frozen=True, slots=True)
class PoseChecks(LinkChecks):
    """Safety of N poses (a sampled path) as arrays; ``pose(i)`` gives one PoseCheck.

    Attributes (N poses, L links): the per-link results as (N, L) arrays (see LinkChecks),
        verdict: (N,) int Verdict values.  tips: (N, 3) m.
    """

    verdict: np.ndarray
    tips: np.ndarray
    contact_distance: float

    def __len__(self) -> int:
        return len(self.verdict)

    @property
    def min_floor_clearance(self) -> np.ndarray:
        """(N,) smallest floor clearance per pose, m."""
        return self.floor_clearance.min(axis=1)

    @property
    def min_obstacle_distance(self) -> np.ndarray:
        """(N,) smallest obstacle distance per pose, m."""
        return self.obstacle_distance.min(axis=1)

    def pose(self, index: int) -> PoseCheck:
        """The check of pose ``index`` as a PoseCheck with its message."""
        verdict = Verdict(int(self.verdict[index]))
        floor = self.floor_clearance[index]
        distance = self.obstacle_distance[index]
        return PoseCheck(
            self.link_names, floor.copy(), distance.copy(), self.closest_points[index].copy(),
            self.floor_violation[index].copy(), self.obstacle_contact[index].copy(), verdict,
            float(floor.min()), float(distance.min()), self.contact_distance,
            self.tips[index].copy(),
            describe_pose(self.link_names, floor, distance, self.floor_violation[index],
                          self.obstacle_contact[index], verdict, self.contact_distance))


def describe_pose(link_names: tuple[str, ...], floor: np.ndarray, distance: np.ndarray,
                  below: np.ndarray, contact: np.ndarray, verdict: Verdict,
                  contact_distance: float) -> str:
    """One sentence for a verdict, naming the links at fault and by how much (m)."""
    if verdict == Verdict.INVALID_INPUT:
        return 'joint positions are not finite; nothing was checked'
    parts = [f'{name} {-floor[i]:.3f} m below the floor'
             for i, name in enumerate(link_names) if below[i]]
    parts += [f'{name} touches the obstacle ({distance[i]:.3f} m from its centre, contact '
              f'below {contact_distance:.3f} m)' for i, name in enumerate(link_names)
              if contact[i]]
    if parts:
        return '; '.join(parts)
    words = []
    if np.isfinite(floor).any():
        words.append(f'{float(floor.min()):.3f} m above the floor')
    if np.isfinite(distance).any():
        words.append(f'{float(distance.min()):.3f} m from the obstacle centre')
    return 'clear' + (': ' + ', '.join(words) if words else '')


def segment_point_distance(start: np.ndarray, end: np.ndarray,
                           point: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distance from ``point`` to segments [start, end] and the nearest segment points.

    Args:
        start, end: (..., 3) segment endpoints, m.
        point: (3,) the point, m.

    Returns:
        (distance (...), nearest (..., 3)), m. A zero-length segment is its start point.
    """
    along = end - start
    to_point = point - start
    length_sq = np.einsum('...k,...k->...', along, along)
    # A zero-length segment would divide 0/0; its nearest point is its start (t = 0).
    t = np.einsum('...k,...k->...', to_point, along) / np.where(length_sq > 0.0, length_sq, 1.0)
    t = np.clip(t, 0.0, 1.0)
    nearest = start + t[..., None] * along
    offset = point - nearest
    return np.sqrt(np.einsum('...k,...k->...', offset, offset)), nearest


def _resolve_joint(model: ArmModel, joint: str, link: str) -> int:
    if joint in model.joint_names:
        return model.joint_names.index(joint)
    # A prefixed description (left_shoulder_pitch) still matches the YAML's plain name.
    matches = [i for i, name in enumerate(model.joint_names) if name.endswith(joint)]
    if len(matches) == 1:
        return matches[0]
    raise SafetyConfigError(f'safety link "{link}" starts at joint "{joint}", which is not '
                            f'one of the arm\'s joints ({", ".join(model.joint_names)})')


def capsules_of(model: ArmModel, config: SafetyConfig) -> tuple[Capsule, ...]:
    """Capsules of the configured links, each from its joint to the next distinct origin.

    Distances between consecutive frames are fixed by the chain, so "distinct" is decided
    once at q = 0.

    Raises:
        SafetyConfigError: a link names an unknown joint, or a joint with nothing after it.
    """
    points = model.frames(np.zeros(model.dof))[:, :3, 3]
    capsules = []
    for link in config.links:
        start = _resolve_joint(model, link.joint, link.name)
        end = next((k for k in range(start + 1, model.dof + 1)
                    if np.linalg.norm(points[k] - points[start]) > SAME_POINT), None)
        if end is None:
            raise SafetyConfigError(f'safety link "{link.name}": joint "{link.joint}" has no '
                                    'distinct joint origin or tip after it (zero length)')
        capsules.append(Capsule(link.name, start, end, link.radius))
    return tuple(capsules)


class SafetyGeometry:
    """Checks poses of one arm against its floor and obstacle; immutable once built.

    Attributes:
        model: the arm.
        config: its safety configuration.
        capsules: checked links, in configuration order.
        link_names: their names.
        shoulder: shoulder pivot, m (``ArmModel.shoulder_position``).
        floor_z: height of the floor plane in the base frame, m.
        joint_reach: (n,) upper bound of how far any capsule point can be from joint i's
            origin when joint i moves it, m; ``max_point_motion`` uses it.
    """

    def __init__(self, model: ArmModel, config: SafetyConfig) -> None:
        self.model = model
        self.config = config
        self.capsules = capsules_of(model, config)
        self.link_names = tuple(c.name for c in self.capsules)
        self.radii = np.array([c.radius for c in self.capsules])
        self._start = np.array([c.start for c in self.capsules])
        self._end = np.array([c.end for c in self.capsules])
        # (start point index, end point index, radius) of each capsule, for the plain-float
        # check of one pose (pose_floor_clearance).
        self._floor_terms = tuple((c.start, c.end, c.radius) for c in self.capsules)
        self.shoulder = model.shoulder_position().copy()
        self.floor_z = float(self.shoulder[2] - config.floor_below_shoulder)
        obstacle = config.obstacle
        self.obstacle_center = np.array(obstacle.center, dtype=float)
        self.contact_distance = obstacle.contact_distance
        points = model.frames(np.zeros(model.dof))[:, :3, 3]
        steps = np.linalg.norm(np.diff(points, axis=0), axis=1)        # (n,) chain hops
        # Distance along the chain bounds the straight distance (triangle inequality); the
        # capsule radius is added so surface points are covered too.
        surface = max(float(self.radii.max()), obstacle.rod_radius)
        self.joint_reach = np.cumsum(steps[::-1])[::-1] + surface
        if model.followers:
            # Between joints a mimic joint changes the hop lengths, and a joint's motion turns
            # its followers too (times their multiplier): bound with every motion it drives.
            bounds = model.segment_bounds()
            reach = np.zeros(model.dof)
            for index, motion in enumerate(model.motions):
                reach[motion.source] += abs(motion.multiplier) * sum(bounds[index + 1:])
            self.joint_reach = reach + surface

    @property
    def floor_enabled(self) -> bool:
        return self.config.floor_enabled

    @property
    def obstacle_enabled(self) -> bool:
        return self.config.obstacle.enabled

    def with_obstacle_radius(self, radius: float) -> SafetyGeometry:
        """A new geometry with another obstacle radius (m); this one is unchanged.

        Raises:
            SafetyConfigError: the radius is not a finite number > 0.
        """
        return SafetyGeometry(self.model, self.config.with_obstacle_radius(radius))

    def with_obstacle(self, center: object, radius: float, enabled: bool = True
                      ) -> SafetyGeometry:
        """A new geometry whose ball is at ``center`` (m) with ``radius`` (m), on or off.

        Raises:
            SafetyConfigError: bad centre or radius (``SafetyConfig.with_obstacle``).
        """
        return SafetyGeometry(self.model, self.config.with_obstacle(center, radius, enabled))

    # ------------------------------------------------------------------ checks
    def _joint_array(self, q: object) -> np.ndarray:
        array = np.asarray(q, dtype=float)
        array = array.reshape(1, -1) if array.ndim == 1 else array
        if array.ndim != 2 or array.shape[1] != self.model.dof:
            raise ValueError(f'joint positions must have shape (N, {self.model.dof}), '
                             f'got {np.shape(q)}')
        return array

    def link_segments(self, q: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Capsule endpoints and tips of N poses.

        Args:
            q: (N, n) or (n,) joint positions, rad.

        Returns:
            (start (N, L, 3), end (N, L, 3), tip (N, 3)), m.
        """
        points = self.model.joint_points(self._joint_array(q))
        return points[:, self._start], points[:, self._end], points[:, -1]

    def check(self, q: object) -> PoseChecks:
        """Check N poses at once (a sampled path).

        Args:
            q: (N, n) or (n,) joint positions, rad. Rows with NaN or inf get the verdict
                INVALID_INPUT (they are never judged safe).

        Returns:
            PoseChecks with per-link and per-pose arrays.

        Raises:
            ValueError: the array does not have n columns.
        """
        array = self._joint_array(q)
        finite = np.isfinite(array).all(axis=1)
        if not finite.all():
            array = np.where(finite[:, None], array, 0.0)
        start, end, tips = self.link_segments(array)
        count, links = start.shape[0], len(self.capsules)
        if self.config.floor_enabled:
            floor = np.minimum(start[..., 2], end[..., 2]) - self.radii - self.floor_z
            below = floor < 0.0
        else:
            floor = np.full((count, links), math.inf)
            below = np.zeros((count, links), dtype=bool)
        if self.config.obstacle.enabled:
            distance, nearest = segment_point_distance(start, end, self.obstacle_center)
            contact = distance < self.contact_distance
        else:
            distance = np.full((count, links), math.inf)
            nearest = np.zeros((count, links, 3))
            contact = np.zeros((count, links), dtype=bool)
        verdict = np.where(below.any(axis=1), int(Verdict.FLOOR_VIOLATION),
                           np.where(contact.any(axis=1), int(Verdict.OBSTACLE_CONTACT),
                                    int(Verdict.SAFE)))
        if not finite.all():
            verdict[~finite] = Verdict.INVALID_INPUT
            floor[~finite] = math.nan
            distance[~finite] = math.nan
            tips[~finite] = math.nan
        return PoseChecks(self.link_names, floor, distance, nearest, below, contact, verdict,
                          tips, self.contact_distance)

    def check_pose(self, q: object) -> PoseCheck:
        """Check one pose (n joint positions, rad)."""
        return self.check(np.asarray(q, dtype=float).reshape(1, -1)).pose(0)

    def floor_clearance(self, q: object) -> np.ndarray:
        """(N,) lowest capsule point above the floor for N poses, m (+inf: floor disabled)."""
        if not self.config.floor_enabled:
            return np.full(len(self._joint_array(q)), math.inf)
        return self.floor_clearance_and_tips(q)[0]

    def floor_clearance_and_tips(self, q: object) -> tuple[np.ndarray, np.ndarray]:
        """(N,) lowest capsule point above the floor (m, +inf: floor disabled) and (N, 3)
        tip positions (m) of N finite poses: what the floor rules need, without the
        obstacle distances of ``check``."""
        start, end, tips = self.link_segments(q)
        if not self.config.floor_enabled:
            return np.full(len(tips), math.inf), tips
        clearance = (np.minimum(start[..., 2], end[..., 2]) - self.radii
                     - self.floor_z).min(axis=1)
        return clearance, tips

    def pose_floor_clearance(self, q: Sequence[float]
                             ) -> tuple[float, tuple[float, float, float]]:
        """``floor_clearance_and_tips`` of one finite pose (n floats, rad) in plain floats:
        (lowest capsule point above the floor, m, +inf with the floor disabled; tip, m).

        The floor rules judge a closed-form answer with this on every IK request, where the
        numpy path's per-call overhead would cost more than the arithmetic.
        """
        frames, tip = self.model.kernel.joint_frames(list(q))
        if not self.config.floor_enabled:
            return math.inf, tip
        heights = [frame[2] for frame in frames]
        heights.append(tip[2])
        lowest = math.inf
        for start, end, radius in self._floor_terms:
            low = heights[start] if heights[start] < heights[end] else heights[end]
            low -= radius
            if low < lowest:
                lowest = low
        return lowest - self.floor_z, tip

    def clearance(self, q: object, obstacle: bool = True) -> np.ndarray:
        """(N,) how far each pose is from a violation, m: the smaller of the lowest capsule
        point above the floor and, when ``obstacle`` is set, the rods' distance beyond the
        contact distance. Negative: a violation; -inf for non-finite rows; +inf when nothing
        is checked."""
        array = self._joint_array(q)
        finite = np.isfinite(array).all(axis=1)
        start, end, _ = self.link_segments(np.where(finite[:, None], array, 0.0))
        result = np.full(len(array), math.inf)
        if self.config.floor_enabled:
            result = (np.minimum(start[..., 2], end[..., 2]) - self.radii
                      - self.floor_z).min(axis=1)
        if obstacle and self.config.obstacle.enabled:
            distance, _ = segment_point_distance(start, end, self.obstacle_center)
            result = np.minimum(result, distance.min(axis=1) - self.contact_distance)
        result[~finite] = -math.inf
        return result

    def unsafe(self, q: object, obstacle: bool = True, margin: float = 0.0) -> np.ndarray:
        """(N,) True where a pose is closer than ``margin`` (m) to violating the floor, or to
        touching the obstacle when ``obstacle`` is set; non-finite rows are unsafe."""
        return self.clearance(q, obstacle) < margin

    def max_point_motion(self, q_from: np.ndarray, q_to: np.ndarray) -> np.ndarray:
        """Upper bound of how far any capsule point moves between poses, m.

        Args:
            q_from, q_to: (..., n) joint positions, rad.

        Returns:
            (...,) bound: sum over joints of |Δq_i| times ``joint_reach[i]``.
        """
        return np.abs(np.asarray(q_to) - np.asarray(q_from)) @ self.joint_reach
