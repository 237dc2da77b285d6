"""Serial-chain arm model built from a URDF, with forward kinematics and Jacobians.

The URDF expanded from ``arm_description`` is the only source of the geometry:
link offsets, joint axes and limits are read from it, never restated here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
import math
import xml.etree.ElementTree as ElementTree

import numpy as np

from arm_kinematics.common.transforms import make_transform, rpy_to_matrix
from arm_kinematics.model.kernel import ChainKernel

FULL_TURN = 2.0 * math.pi
# Up to this many poses, joint_points evaluates each with the kernel (faster than the
# batch path's broadcasting below about a dozen poses).
SMALL_BATCH = 8


class DescriptionError(ValueError):
    """The robot description cannot be turned into a usable arm model."""


@dataclass(frozen=True)
class Joint:
    """One movable joint of the chain, in the frame of the previous movable joint.

    ``offset`` is the fixed transform from the previous joint's rotated frame (or
    the base link) to this joint's frame, fixed joints in between folded in.
    """

    name: str
    axis: np.ndarray
    offset: np.ndarray
    lower: float
    upper: float
    velocity: float
    effort: float
    kind: str = 'revolute'   # revolute | continuous | prismatic (position in m, not rad)

    @property
    def prismatic(self) -> bool:
        return self.kind == 'prismatic'

    @property
    def wraps(self) -> bool:
        """True when the range spans a full turn, so angles may be wrapped, not clamped."""
        return not self.prismatic and self.upper - self.lower >= FULL_TURN - 1e-9


def _parse_origin(element: ElementTree.Element | None) -> np.ndarray:
    if element is None:
        return np.eye(4)
    try:
        xyz = np.array([float(v) for v in element.get('xyz', '0 0 0').split()])
        rpy = [float(v) for v in element.get('rpy', '0 0 0').split()]
    except ValueError:
        xyz, rpy = np.zeros(0), []
    if xyz.shape != (3,) or len(rpy) != 3 or not np.all(np.isfinite(xyz)) or \
            not all(math.isfinite(v) for v in rpy):
        raise DescriptionError(f'malformed <origin xyz="{element.get("xyz")}" '
                               f'rpy="{element.get("rpy")}"> (three finite numbers each)')
    return make_transform(rpy_to_matrix(*rpy), xyz)


def _float_attribute(element: ElementTree.Element, name: str, joint: str) -> float:
    text = element.get(name)
    if text is None:
        raise DescriptionError(f'joint "{joint}": <limit> has no "{name}" attribute')
    try:
        value = float(text)
    except ValueError:
        raise DescriptionError(f'joint "{joint}": limit {name}={text!r} is not a number') \
            from None
    if not math.isfinite(value):
        raise DescriptionError(f'joint "{joint}": limit {name}={text} is not finite')
    return value


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
                 joints: list[Joint], tip_offset: np.ndarray) -> None:
        if not joints:
            raise DescriptionError(f'no movable joint between "{base_link}" and "{tip_link}"')
        self.name = name
        self.base_link = base_link
        self.tip_link = tip_link
        self.joints = tuple(joints)
        self.joint_names = tuple(j.name for j in joints)
        self.dof = len(joints)
        self.lower = np.array([j.lower for j in joints])
        self.upper = np.array([j.upper for j in joints])
        self.velocity_limits = np.array([j.velocity for j in joints])
        self.wraps = np.array([j.wraps for j in joints])
        self.prismatic = np.array([j.prismatic for j in joints])
        self.tip_offset = tip_offset
        self.urdf = ''      # the URDF text the model was built from ('' when built by hand)
        # Rodrigues terms per joint as 4×4 (R = I + sin q·K + (1 − cos q)·K²), built once for
        # frames() and frames_batch(): building them per call costs as much as the products.
        # A prismatic joint moves by q·slide (a translation along its axis) instead.
        skew = np.zeros((self.dof, 4, 4))
        slide = np.zeros((self.dof, 4, 4))
        for index, joint in enumerate(joints):
            x, y, z = joint.axis
            if joint.prismatic:
                slide[index, :3, 3] = joint.axis
            else:
                skew[index, :3, :3] = [[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]]
        self._skew = skew
        self._skew_sq = skew @ skew
        self._slide = slide

    # ------------------------------------------------------------------ parsing
    @classmethod
    def from_urdf(cls, urdf_xml: str, base_link: str = 'base_link',
                  tip_link: str = 'tool0') -> ArmModel:
        """Build the chain ``base_link`` → ``tip_link`` from URDF text.

        Raises:
            DescriptionError: the XML does not parse, a link is missing, the chain is
                broken, or a revolute joint lacks finite limits (lower < upper,
                velocity > 0).
        """
        try:
            root = ElementTree.fromstring(urdf_xml)
        except ElementTree.ParseError as error:
            raise DescriptionError(f'robot_description is not valid XML: {error}') from None
        if root.tag != 'robot':
            raise DescriptionError(f'root element is <{root.tag}>, expected <robot>')
        links = {link.get('name') for link in root.findall('link')}
        for frame in (base_link, tip_link):
            if frame not in links:
                raise DescriptionError(f'link "{frame}" is not in the description '
                                       f'(links: {", ".join(sorted(links))})')
        by_child = {}
        names = {joint.get('name') for joint in root.findall('joint')}
        for joint in root.findall('joint'):
            child, parent = joint.find('child'), joint.find('parent')
            if child is None or parent is None:
                raise DescriptionError(f'joint "{joint.get("name")}" lacks <parent> or <child>')
            link = child.get('link')
            if link in by_child:
                raise DescriptionError(f'link "{link}" has two parents (joints '
                                       f'"{by_child[link].get("name")}" and '
                                       f'"{joint.get("name")}"): a URDF is a tree')
            by_child[link] = joint
            mimic = joint.find('mimic')
            if mimic is not None and mimic.get('joint') not in names:
                raise DescriptionError(f'joint "{joint.get("name")}" mimics unknown joint '
                                       f'"{mimic.get("joint")}"')
        chain = []
        link = tip_link
        seen = set()
        while link != base_link:
            joint = by_child.get(link)
            if joint is None:
                raise DescriptionError(f'no joint chain from "{base_link}" to "{tip_link}" '
                                       f'(link "{link}" has no parent joint; is "{tip_link}" '
                                       f'below "{base_link}"?)')
            if link in seen:
                raise DescriptionError(f'the joints form a cycle through link "{link}"')
            seen.add(link)
            chain.append(joint)
            link = joint.find('parent').get('link')
        chain.reverse()
        joints: list[Joint] = []
        pending = np.eye(4)
        for element in chain:
            name = element.get('name')
            kind = element.get('type')
            origin = _parse_origin(element.find('origin'))
            if kind == 'fixed':
                pending = pending @ origin
                continue
            if kind not in ('revolute', 'continuous', 'prismatic'):
                raise DescriptionError(f'joint "{name}" is {kind}; only revolute, continuous, '
                                       'prismatic and fixed joints are supported in the chain')
            if element.find('mimic') is not None:
                raise DescriptionError(f'joint "{name}" between "{base_link}" and '
                                       f'"{tip_link}" is a mimic joint: mimic joints inside '
                                       'the chain are not supported yet (outside it they '
                                       'are left alone)')
            axis_element = element.find('axis')
            axis = np.array([float(v) for v in (axis_element.get('xyz') if axis_element
                                                is not None else '1 0 0').split()])
            norm = np.linalg.norm(axis)
            if axis.shape != (3,) or not np.isfinite(norm) or norm < 1e-12:
                raise DescriptionError(f'joint "{name}" has a degenerate axis {axis.tolist()}')
            limit = element.find('limit')
            if kind == 'continuous':
                lower, upper = -math.pi, math.pi
                velocity = _float_attribute(limit, 'velocity', name) if limit is not None \
                    else math.inf
                effort = float(limit.get('effort', 'inf')) if limit is not None else math.inf
            else:
                if limit is None:
                    raise DescriptionError(f'{kind} joint "{name}" has no <limit>')
                lower = _float_attribute(limit, 'lower', name)
                upper = _float_attribute(limit, 'upper', name)
                velocity = _float_attribute(limit, 'velocity', name)
                effort = _float_attribute(limit, 'effort', name)
                if not lower < upper:
                    raise DescriptionError(f'joint "{name}": lower limit {lower} is not below '
                                           f'upper limit {upper}')
            if velocity <= 0.0:
                raise DescriptionError(f'joint "{name}": velocity limit {velocity} must be > 0')
            joints.append(Joint(name, axis / norm, pending @ origin, lower, upper,
                                velocity, effort, kind))
            pending = np.eye(4)
        model = cls(root.get('name', ''), base_link, tip_link, joints, pending)
        model.urdf = urdf_xml
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
        sin = np.sin(q)[:, :, None, None]
        one_minus_cos = (1.0 - np.cos(q))[:, :, None, None]
        for index, joint in enumerate(self.joints):
            if joint.prismatic:
                motion = identity + q[:, index, None, None] * self._slide[index]
            else:
                motion = (identity + sin[:, index] * self._skew[index]
                          + one_minus_cos[:, index] * self._skew_sq[index])
            current = current @ joint.offset @ motion
            frames[:, index] = current
        frames[:, self.dof] = current @ self.tip_offset
        return frames

    def _frames_one(self, q: np.ndarray) -> np.ndarray:
        frames = np.empty((self.dof + 1, 4, 4))
        current = np.eye(4)
        identity = np.eye(4)
        for index, joint in enumerate(self.joints):
            value = float(q[index])
            if joint.prismatic:
                motion = identity + value * self._slide[index]
            else:
                motion = (identity + math.sin(value) * self._skew[index]
                          + (1.0 - math.cos(value)) * self._skew_sq[index])
            current = current @ joint.offset @ motion
            frames[index] = current
        frames[self.dof] = current @ self.tip_offset
        return frames

    def fk_batch(self, q: np.ndarray) -> np.ndarray:
        """Tip transforms for N configurations, shape (N, 4, 4)."""
        return self.frames_batch(q)[:, -1]

    def frames(self, q: np.ndarray) -> np.ndarray:
        """World frames of every joint and the tip for one configuration, (n + 1, 4, 4)."""
        return self._frames_one(np.asarray(q, dtype=float).reshape(self.dof))

    @cached_property
    def kernel(self) -> ChainKernel:
        """This chain's FK and Jacobian compiled into plain-float Python, built on first use:
        a few microseconds per pose where the 4×4 products above take tens."""
        return ChainKernel(self)

    def __getstate__(self) -> dict:
        # The kernel's generated functions do not pickle (a model sent to a planning
        # process); the copy compiles its own on first use.
        state = dict(self.__dict__)
        state.pop('kernel', None)
        return state

    def _one_pose(self, q: np.ndarray) -> list[float]:
        """One configuration as n floats (ValueError when it does not have n values)."""
        return np.asarray(q, dtype=float).reshape(self.dof).tolist()

    def fk(self, q: np.ndarray) -> np.ndarray:
        """Tip transform in the base frame for one configuration (4×4)."""
        return self.kernel.fk(self._one_pose(q))

    def joint_origins_and_axes(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """World origins (n, 3) and unit axes (n, 3) of every joint, and the tip position (3,)."""
        frames, tip = self.kernel.joint_frames(self._one_pose(q))
        frames = np.array(frames)
        return frames[:, :3], frames[:, 3:], np.array(tip)

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
