"""What the demo does on each arm: IK queries and moves, with the outcome each should have.

Positions are tool0 targets in m in base_link; joint targets are rad in chain order. Every
number was checked against the arm's planner (kinematics.motion) with the YAML's settings:
the floor-detour pairs are two safe poses whose straight joint path (min-jerk) takes a link
below the floor, so the executor must replace it by a detour; the moves before them are
plain, so the detour is what the pair shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from arm_bringup.pipeline import PICK_PLACE_ARMS
from arm_kinematics.arm import Arm

DEFAULT_ARM = 'ccd5'   # pick and place and an enabled floor: every part of the script runs


@dataclass(frozen=True)
class IKQuery:
    """A call of ik_server's ~/solve_ik; ``ok``: whether it should solve."""

    label: str
    position: tuple[float, float, float]
    ok: bool = True


@dataclass(frozen=True)
class Move:
    """A MoveToTarget goal of the trajectory executor.

    Attributes:
        label: what the step shows, for the log.
        position: Cartesian target (m), or None for a joint target.
        joints: joint target (rad, chain order), or None.
        home: the joint target is the arm's home pose, as arm_info publishes it (the
            YAML's home_pose), so the script never restates it.
        motion_law: '' for the executor's default.
        expect: MotionErrorCode name the result should carry.
        detour: the plan must be a floor detour.
    """

    label: str
    position: tuple[float, float, float] | None = None
    joints: tuple[float, ...] | None = None
    motion_law: str = ''
    expect: str = 'SUCCESS'
    detour: bool = False
    home: bool = False


@dataclass(frozen=True)
class Scenario:
    """One demo cycle of an arm: pick and place (when it has one), IK queries, moves."""

    arm: str
    queries: tuple[IKQuery, ...]
    moves: tuple[Move, ...]
    note: str = ''

    @property
    def pick_place(self) -> bool:
        return self.arm in PICK_PLACE_ARMS


HOME = Move('home', home=True, motion_law='min_jerk')
Point = tuple[float, float, float]


def reach_steps(law: str, reachable: Sequence[tuple[str, Point]], beyond: tuple[str, Point]
                ) -> tuple[tuple[IKQuery, ...], tuple[Move, ...]]:
    """The steps every scenario starts with: each (label, point) of ``reachable`` solved, then
    moved to with the arm's default law ``law`` (named in the label); and ``beyond``, a point
    past the reach, which IK refuses and whose move ends IK_FAILED (the arm stays)."""
    queries = tuple(IKQuery(label, point) for label, point in reachable)
    moves = tuple(Move(f"{label} ({law}, the arm's law)", position=point)
                  for label, point in reachable)
    return (queries + (IKQuery(*beyond, ok=False),),
            moves + (Move(beyond[0], position=beyond[1], expect='IK_FAILED'),))


def _bundled(arm: str, law: str, reachable: tuple[str, Point], beyond: tuple[str, Point],
             moves: tuple[Move, ...], note: str = '') -> Scenario:
    """A bundled arm's cycle: the reach steps, ``moves``, home."""
    queries, reach_moves = reach_steps(law, (reachable,), beyond)
    return Scenario(arm, queries, reach_moves + moves + (HOME,), note)


NO_PICK_PLACE = 'no pick and place: sequences exist for ccd5 and manipulator3d'
SCENARIOS = {
    'ccd5': _bundled(
        'ccd5', 'speed_cap', ('in front, 0.6 m out', (0.6, 0.3, 0.5)),
        ('beyond the 1.15 m reach', (1.5, 0.0, 0.5)), (
            Move('reach far out and low', joints=(0.0, 1.2, 0.7, -0.3, -0.5),
                 motion_law='min_jerk'),
            Move('tuck the gripper in: the straight joint path dips below the floor',
                 joints=(0.0, 0.5, 1.7, 1.6, 1.4), motion_law='min_jerk', detour=True),
        )),
    'manipulator3d': _bundled(
        'manipulator3d', 'linear_cartesian', ('on the desk, 0.6 m out', (0.5, 0.3, 0.3)),
        ('beyond the 1.1 m reach', (1.5, 0.0, 0.3)), (),
        note='no floor detour: the floor check is off for this arm (z < 0 is refused)'),
    'six_axis': _bundled(
        'six_axis', 'min_jerk', ('in front', (1.0, 0.6, 0.5)),
        ('beyond the reach, 3 m out', (3.0, 0.0, 1.0)), (
            Move('bend back', joints=(0.0, -1.79, 0.17, 1.12, 0.61, -2.37),
                 motion_law='min_jerk'),
            Move('swing over: the straight joint path dips below the floor',
                 joints=(0.0, -0.97, -1.65, -1.39, -1.66, -1.02), motion_law='min_jerk',
                 detour=True),
        ), note=NO_PICK_PLACE),
    # From pointer3's folded pose the straight way home goes through the floor too.
    'pointer3': _bundled(
        'pointer3', 'exponential', ('in front', (1.2, 0.3, 0.9)),
        ('beyond the reach, 3 m out', (3.0, 0.0, 1.0)), (
            Move('point far out', joints=(0.0, 0.3, -0.7), motion_law='min_jerk'),
            Move('fold in: the straight joint path dips below the floor',
                 joints=(0.0, 0.8, -2.7), motion_law='min_jerk', detour=True),
        ), note=NO_PICK_PLACE),
}


def workspace_scenario(arm: Arm, seed: int = 0) -> Scenario:
    """A cycle for any arm, derived from its workspace: targets the arm reaches (FK of
    poses between home and random configurations inside the limits, each checked safe, free
    of collisions and above the base plane), one beyond its reach, and home.

    The targets come from the arm's own FK, so they are reachable whatever the URDF; the
    unreachable one lies a metre past the reach sphere.
    """
    model = arm.model
    rng = np.random.default_rng(seed)
    # The executor refuses a goal whose links touch (its collision checker, with the URDF's
    # meshes where they are found): a target of the demo is one the arm reaches without.
    checker = arm.collision_checker()
    targets = []
    for q in model.random_configurations(200, rng):
        pose = model.clamp(arm.home + 0.5 * (q - arm.home))
        if not arm.safety.check_pose(pose).safe or not checker.is_free(pose):
            continue
        tip = model.fk(pose)[:3, 3]
        # Above the base plane (most arms stand on what their base is fixed to) and away
        # from the home tip, so the move is seen.
        if tip[2] < 0.05 or np.linalg.norm(tip - model.fk(arm.home)[:3, 3]) < 0.05:
            continue
        targets.append(tuple(round(float(v), 4) for v in tip))
        if len(targets) == 2:
            break
    centre, reach = arm.workspace.shoulder, arm.workspace.max_reach
    far = tuple(round(float(v), 4) for v in centre + np.array([reach + 1.0, 0.0, 0.0]))
    queries, moves = reach_steps(
        arm.config.default_law,
        [(f'reachable point {i + 1}, from the FK of a pose in limits', target)
         for i, target in enumerate(targets)],
        (f'a metre beyond the {reach:.2f} m reach', far))
    return Scenario(arm.label, queries, moves + (HOME,),
                    note='your arm: targets derived from its workspace; no pick and place, '
                         'no floor detour' + ('' if arm.safety_enabled else
                                              ' (safety off: no safety section)'))
