"""The URDF's movable joints outside the solved chain: held, never commanded, still published.

robot_state_publisher computes TF for every movable joint it is given and none other, so a
joint_states that names only the chain leaves a Panda's fingers, a second arm or a camera
pan without a frame in RViz. The executor publishes these passive joints with the chain:
an independent one at its rest value (0 clamped into its limits; nothing ever moves it), a
mimic joint at ``multiplier * leader + offset``, its leader being a chain joint or another
passive one. A mimic joint inside the chain and a locked joint (lower == upper) are passive
too: the model moves the one with its leader and fixes the other. They are never sent to a
controller and no solver moves them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arm_kinematics.common.urdf_tree import MOVING_TYPES, read_tree
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.model.chain import rest_position


@dataclass(frozen=True)
class Mimic:
    """``position = multiplier * leader + offset`` (rad or m)."""

    leader: str
    multiplier: float
    offset: float


@dataclass(frozen=True)
class PassiveJoints:
    """Movable joints of the URDF that the chain does not hold, with their rules.

    Attributes:
        names: their names, in URDF order.
        rest: position of each independent one (rad or m); mimics are computed.
        mimics: the rule of each mimic joint, by name.
        chain: the chain's joint names (the leaders a mimic may follow).
    """

    names: tuple[str, ...]
    rest: dict[str, float]
    mimics: dict[str, Mimic]
    chain: tuple[str, ...]

    @classmethod
    def of(cls, model: ArmModel, urdf: str | None = None) -> PassiveJoints:
        """The passive joints of ``model``'s URDF (none when it was built by hand)."""
        text = model.urdf if urdf is None else urdf
        if not text:
            return cls((), {}, {}, tuple(model.joint_names))
        tree = read_tree(text)
        names, rest, mimics = [], {}, {}
        for joint in tree.joints.values():
            if joint.kind not in MOVING_TYPES or joint.name in model.joint_names:
                continue
            names.append(joint.name)
            if joint.mimic is not None:
                mimics[joint.name] = Mimic(joint.mimic.leader, joint.mimic.multiplier,
                                           joint.mimic.offset)
                continue
            rest[joint.name] = rest_position(joint)
        return cls(tuple(names), rest, mimics, tuple(model.joint_names))

    def positions(self, q: Sequence[float]) -> list[float]:
        """Positions of ``names`` for chain positions ``q`` (chain order)."""
        known = dict(zip(self.chain, (float(v) for v in q)))
        known.update(self.rest)
        out = []
        for name in self.names:
            out.append(self._value(name, known, 0))
        return out

    def velocities(self, v: Sequence[float]) -> list[float]:
        """Velocities of ``names`` for chain velocities ``v`` (a mimic moves with its
        leader; the others stand still)."""
        known = dict(zip(self.chain, (float(x) for x in v)))
        known.update({name: 0.0 for name in self.rest})
        return [self._rate(name, known, 0) for name in self.names]

    def _value(self, name: str, known: dict[str, float], depth: int) -> float:
        if name in known:
            return known[name]
        mimic = self.mimics.get(name)
        if mimic is None or depth > len(self.names):     # unknown leader, or a mimic loop
            return 0.0
        value = mimic.multiplier * self._value(mimic.leader, known, depth + 1) + mimic.offset
        known[name] = value
        return value

    def _rate(self, name: str, known: dict[str, float], depth: int) -> float:
        if name in known:
            return known[name]
        mimic = self.mimics.get(name)
        if mimic is None or depth > len(self.names):
            return 0.0
        return mimic.multiplier * self._rate(mimic.leader, known, depth + 1)
