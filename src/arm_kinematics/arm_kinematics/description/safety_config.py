"""The ``safety:`` section of an arm's YAML (``arm_description/config/<arm>.yaml``), validated.

A bad section is a configuration error, raised as ``SafetyConfigError`` with the path of the
offending key and its value, so a node refuses to start with a message a person can act on.
Units: metres.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from arm_kinematics.common.checks import number_reason, positive_reason
from arm_kinematics.description.frames import child_links
from arm_kinematics.model.arm_model import ArmModel

# Radius of the rod every link is modelled as for the obstacle check (issue 5), metres.
DEFAULT_ROD_RADIUS = 0.075
# Capsule radius of a link whose collision geometry says nothing usable, m.
DEFAULT_LINK_RADIUS = 0.04
# Two points closer than this are one point (a link of no length), m.
SAME_POINT = 1e-9

_TOP_KEYS = {'floor_enabled', 'floor_below_shoulder', 'links', 'obstacle'}
_LINK_KEYS = {'name', 'joint', 'radius'}
_OBSTACLE_KEYS = {'enabled', 'center', 'radius', 'rod_radius'}


class SafetyConfigError(ValueError):
    """The safety section of an arm's configuration is missing or invalid."""


@dataclass(frozen=True, slots=True)
class LinkSpec:
    """One link checked as a capsule.

    Attributes:
        name: label of the link (the URDF link it covers, e.g. 'upper_arm_link').
        joint: name of the joint whose origin starts the capsule's segment; the segment ends
            at the next joint origin that is not at the same place, or at the tip.
        radius: capsule radius for the floor check, m (> 0).
    """

    name: str
    joint: str
    radius: float


@dataclass(frozen=True, slots=True)
class ObstacleSpec:
    """A ball the arm must not touch.

    Attributes:
        enabled: check contact at all.
        center: ball centre in the base frame, m.
        radius: ball radius, m (> 0); may be changed at run time.
        rod_radius: radius of the rod every link is modelled as, m (> 0).
    """

    enabled: bool
    center: tuple[float, float, float]
    radius: float
    rod_radius: float = DEFAULT_ROD_RADIUS

    @property
    def contact_distance(self) -> float:
        """Centre-to-rod-axis distance below which a link touches the ball, m."""
        return self.radius + self.rod_radius


@dataclass(frozen=True, slots=True)
class SafetyConfig:
    """Floor plane, link capsules and obstacle of one arm.

    Attributes:
        floor_enabled: check the floor at all.
        floor_below_shoulder: distance of the floor plane below the shoulder pivot, m (≥ 0).
        links: the capsules, base to tip.
        obstacle: the ball.
    """

    floor_enabled: bool
    floor_below_shoulder: float
    links: tuple[LinkSpec, ...]
    obstacle: ObstacleSpec

    def with_obstacle_radius(self, radius: float) -> SafetyConfig:
        """A copy with another obstacle radius (m).

        Raises:
            SafetyConfigError: the radius is not a finite number > 0.
        """
        reason = positive_reason(radius, 'obstacle radius', unit='m')
        if reason:
            raise SafetyConfigError(reason)
        return replace(self, obstacle=replace(self.obstacle, radius=float(radius)))

    def with_obstacle(self, center: object, radius: float, enabled: bool = True
                      ) -> SafetyConfig:
        """A copy with the ball moved to ``center`` (m, base frame), of ``radius`` (m), on or
        off (the ball as a scene object: moved, resized or removed at run time).

        Raises:
            SafetyConfigError: a centre that is not three finite numbers, a radius that is
                not a finite number > 0.
        """
        config = self.with_obstacle_radius(radius)
        try:
            values = tuple(center)      # a list, tuple or numpy array
        except TypeError:
            values = ()
        if len(values) != 3:
            raise SafetyConfigError(f'obstacle centre must be [x, y, z] in m, got {center!r}')
        xyz = tuple(_number(v, f'obstacle centre[{i}]') for i, v in enumerate(values))
        return replace(config, obstacle=replace(config.obstacle, center=xyz,
                                                enabled=bool(enabled)))


def _number(value: object, where: str, minimum: float | None = None,
            strict: bool = False) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = float(value)      # shown as a float in the message: 1 m is 1.0
    reason = number_reason(value, where, low=minimum, low_open=strict)
    if reason:
        raise SafetyConfigError(reason)
    return value


def _flag(value: object, where: str) -> bool:
    if not isinstance(value, bool):
        raise SafetyConfigError(f'{where} must be true or false, got {value!r}')
    return value


def _mapping(value: object, where: str, keys: set[str], required: set[str]) -> Mapping:
    if not isinstance(value, Mapping):
        raise SafetyConfigError(f'{where} must be a mapping, got {type(value).__name__}')
    unknown = sorted(set(value) - keys)
    if unknown:
        raise SafetyConfigError(f'{where} has unknown key(s) {", ".join(map(str, unknown))} '
                                f'(known: {", ".join(sorted(keys))})')
    missing = sorted(required - set(value))
    if missing:
        raise SafetyConfigError(f'{where} lacks {", ".join(missing)}')
    return value


def _links(value: object, where: str) -> tuple[LinkSpec, ...]:
    if not isinstance(value, list) or not value:
        raise SafetyConfigError(f'{where} must be a non-empty list of '
                                '{name, joint, radius} entries')
    links = []
    for index, entry in enumerate(value):
        here = f'{where}[{index}]'
        entry = _mapping(entry, here, _LINK_KEYS, _LINK_KEYS)
        for key in ('name', 'joint'):
            if not isinstance(entry[key], str) or not entry[key].strip():
                raise SafetyConfigError(f'{here}.{key} must be a non-empty string, '
                                        f'got {entry[key]!r}')
        links.append(LinkSpec(entry['name'], entry['joint'],
                              _number(entry['radius'], f'{here}.radius', 0.0, strict=True)))
    names = [link.name for link in links]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise SafetyConfigError(f'{where} repeats link name(s) {", ".join(repeated)}')
    return tuple(links)


def _obstacle(value: object, where: str) -> ObstacleSpec:
    value = _mapping(value, where, _OBSTACLE_KEYS, {'enabled', 'center', 'radius'})
    center = value['center']
    if not isinstance(center, (list, tuple)) or len(center) != 3:
        raise SafetyConfigError(f'{where}.center must be [x, y, z] in metres, got {center!r}')
    xyz = tuple(_number(v, f'{where}.center[{i}]') for i, v in enumerate(center))
    return ObstacleSpec(
        enabled=_flag(value['enabled'], f'{where}.enabled'),
        center=(xyz[0], xyz[1], xyz[2]),
        radius=_number(value['radius'], f'{where}.radius', 0.0, strict=True),
        rod_radius=_number(value.get('rod_radius', DEFAULT_ROD_RADIUS), f'{where}.rod_radius',
                           0.0, strict=True))


def parse_safety_config(section: object, arm: str = '') -> SafetyConfig:
    """Validate a ``safety:`` mapping and turn it into a SafetyConfig.

    Args:
        section: the mapping under ``safety:`` (None when the YAML has none).
        arm: arm name, only to word the errors.

    Raises:
        SafetyConfigError: missing section or key, unknown key, a radius that is not a finite
            number > 0, a floor distance < 0, a centre that is not three finite numbers.
    """
    where = f'{arm} safety' if arm else 'safety'
    if section is None:
        raise SafetyConfigError(f'{where}: the arm configuration has no safety section')
    section = _mapping(section, where, _TOP_KEYS, _TOP_KEYS)
    return SafetyConfig(
        floor_enabled=_flag(section['floor_enabled'], f'{where}.floor_enabled'),
        floor_below_shoulder=_number(section['floor_below_shoulder'],
                                     f'{where}.floor_below_shoulder', 0.0),
        links=_links(section['links'], f'{where}.links'),
        obstacle=_obstacle(section['obstacle'], f'{where}.obstacle'))


def safety_config_of(arm_config: Mapping[str, Any], arm: str = '') -> SafetyConfig:
    """The validated safety section of a whole per-arm YAML mapping (``load_arm_config``)."""
    return parse_safety_config(arm_config.get('safety'), arm)


def default_safety_section(model: ArmModel,
                           radii: Mapping[str, float] | None = None) -> dict[str, Any]:
    """A safety section with the floor and the obstacle off and a capsule along each link.

    Args:
        radii: capsule radius per joint name (m); DEFAULT_LINK_RADIUS where absent.
    """
    origins, _, tip = model.joint_origins_and_axes(np.zeros(model.dof))
    points = [*origins, tip]
    child = child_links(model.urdf) if model.urdf else {}
    links = []
    for index, name in enumerate(model.joint_names):
        if all(np.linalg.norm(points[later] - points[index]) <= SAME_POINT
               for later in range(index + 1, len(points))):
            continue
        radius = float((radii or {}).get(name, DEFAULT_LINK_RADIUS))
        links.append({'name': child.get(name, f'{name}_link'), 'joint': name,
                      'radius': radius})
    if not links:
        links.append({'name': 'chain', 'joint': model.joint_names[0],
                      'radius': DEFAULT_LINK_RADIUS})
    return {'floor_enabled': False, 'floor_below_shoulder': 0.0, 'links': links,
            'obstacle': {'enabled': False, 'center': [0.0, 0.0, 0.0], 'radius': 0.1,
                         'rod_radius': DEFAULT_ROD_RADIUS}}

