"""Default frames of a URDF: the base and tip a user would pick, when neither a parameter nor
the configuration names them.

The base is the tree's root link. The tip is the best tool frame of the tree: a link with a
usual tool-frame name (``tool0``, ``flange``, ``ee_link``, ``*_hand``, ``*_eef``, ``*_tcp``,
``end_effector``, ``*_link_ee``, ...), else the link a gripper's fingers hang from (the
Panda's ``panda_hand``), else the leaf at the end of the most movable joints — never a finger.
A finger is a link below a finger joint: one named like a finger (finger, jaw, thumb,
gripper, ...) or one of a mimic pair hanging from the same link.
The choice, its reason and the other candidates are reported so a user sees how to change it.
"""

from __future__ import annotations

from dataclasses import dataclass
import re

from arm_kinematics.common.urdf_tree import DescriptionError, read_tree, RobotTree

# Tool-frame names, most preferred first (matched on the lower-cased link name).
TOOL_NAMES = (
    ('tool0', r'tool0'),
    ('flange', r'(.*_)?flange(_link)?'),
    ('ee_link', r'(.*_)?ee_link'),
    ('*_hand', r'(.*_)?hand(_link)?'),
    ('*_eef', r'(.*_)?eef(_link)?'),
    ('*_tcp', r'(.*_)?tcp(_link|_frame)?'),
    ('end_effector', r'(.*_)?(end_)?effector(_link)?'),
    ('*_link_ee', r'(.*_)?link_ee'),
    ('*_ee', r'.*_ee'),
    ('*_tool', r'(.*_)?tool(_link|_frame)?'),
    ('*_gripper', r'(.*_)?gripper(_frame)?(_link)?'),
)
_TOOL_PATTERNS = [(label, re.compile(pattern)) for label, pattern in TOOL_NAMES]
# Words of finger joints (split on _ and case changes; gripper joints move the fingers).
FINGER_WORDS = {'finger', 'fingers', 'jaw', 'thumb', 'knuckle', 'claw', 'gripper', 'pinky',
                'phalanx', 'digit', 'fingertip'}
# Finger words only in a hand's joints (``hand_index_flex_1_joint``; ``middle_lumbar_Z`` is
# a spine).
HAND_FINGER_WORDS = {'index', 'middle', 'ring', 'little', 'mrl'}
# A link a user rarely wants as a tip although it hangs at the end of joints.
OTHER_CANDIDATES = 5


@dataclass(frozen=True)
class DefaultFrames:
    """The frames chosen and why.

    Attributes:
        base, tip: the link names.
        reason: one line saying why this tip.
        others: the next best tips, best first (at most OTHER_CANDIDATES).
    """

    base: str
    tip: str
    reason: str
    others: tuple[str, ...]

    def describe(self) -> str:
        """One line for start-up logs and arm_config."""
        others = f'; other candidates: {", ".join(self.others)}' if self.others else ''
        return (f'frames {self.base} -> {self.tip} ({self.reason}; set base_frame/tip_frame '
                f'or frames: {{base, tip}} to change them{others})')


def _words(name: str) -> set[str]:
    spaced = re.sub(r'([a-z])([A-Z])', r'\1_\2', name)
    return {word for word in re.split(r'[^A-Za-z]+', spaced.lower()) if word}


def _tool_rank(link: str) -> tuple[int, str] | None:
    lowered = link.lower()
    for rank, (label, pattern) in enumerate(_TOOL_PATTERNS):
        if pattern.fullmatch(lowered):
            return rank, label
    return None


def choose_frames(tree: RobotTree, base: str = '') -> DefaultFrames:
    """(base, tip, reason, other candidates) of ``tree`` (see the module docstring); the
    tip is looked for below ``base`` when given, else below the root link.

    Raises:
        DescriptionError: not one root link, or no movable joint below the base.
    """
    roots = tree.roots()
    if not tree.links:
        raise DescriptionError('the description has no links')
    if base and base not in tree.links:
        raise DescriptionError(f'link "{base}" is not in the description')
    if not base and len(roots) != 1:
        raise DescriptionError(f'the description has {len(roots)} root links '
                               f'({", ".join(roots[:6]) or "none"}); expected one, or name '
                               'the base (base_frame, frames.base, arm_config --base)')
    given_base = bool(base)
    base = base or roots[0]
    children = tree.children()
    # A gripper's mimic pair hangs from one link (the Panda's fingers from panda_hand); a
    # mimic joint further down the leader's own branch is a linkage of the arm itself.
    paired = set()
    for joint in tree.joints.values():
        leader = tree.joints.get(joint.mimic.leader) if joint.mimic else None
        if leader is not None and leader.parent == joint.parent:
            paired.update((joint.name, leader.name))
    finger_joint: dict[str, bool] = {}

    def finger(joint_name: str) -> bool:
        if joint_name not in finger_joint:
            joint = tree.joints[joint_name]
            words = _words(joint.name)
            named = bool(words & FINGER_WORDS) or ('hand' in words and
                                                   bool(words & HAND_FINGER_WORDS))
            finger_joint[joint_name] = joint.moves and (named or joint_name in paired)
        return finger_joint[joint_name]

    # Walk the tree: (movable joints above, depth, in a finger) per link.
    info: dict[str, tuple[int, int, bool]] = {base: (0, 0, False)}
    hands: set[str] = set()
    stack = [base]
    while stack:
        link = stack.pop()
        moving, depth, in_finger = info[link]
        for joint in children.get(link, ()):
            is_finger = finger(joint.name)
            if is_finger and not in_finger:
                hands.add(link)
            counted = joint.moves and joint.mimic is None and not (in_finger or is_finger)
            info[joint.child] = (moving + int(counted), depth + 1, in_finger or is_finger)
            stack.append(joint.child)
    candidates = {link: value for link, value in info.items()
                  if value[0] > 0 and not value[2]}
    if not candidates:
        # Only finger joints move (a hand on its own): any moved link will do.
        candidates = {link: value for link, value in info.items() if value[0] > 0
                      or (value[2] and link != base)}
        candidates = {link: (max(value[0], 1), value[1], False)
                      for link, value in candidates.items()}
    if not candidates:
        locked = [joint.name for joint in tree.joints.values() if joint.locked]
        why = f' ({", ".join(locked[:6])}: lower == upper, locked)' if locked else ''
        raise DescriptionError(f'no movable joint below the root link "{base}"{why}: name the '
                               'chain with base_frame and tip_frame')
    named = {link: _tool_rank(link) for link in candidates}
    named = {link: rank for link, rank in named.items() if rank is not None}
    if named:
        ranked = sorted(named, key=lambda link: (named[link][0], -candidates[link][0],
                                                 -candidates[link][1], link))
        tip = ranked[0]
        reason = f'tool-frame name {named[tip][1]}'
        others = ranked[1:]
    else:
        hand_links = [link for link in hands if link in candidates]
        pool = hand_links or [link for link in candidates
                              if not any(j.child in candidates for j in children.get(link, ()))]
        ranked = sorted(pool, key=lambda link: (-candidates[link][0], -candidates[link][1],
                                                link))
        tip = ranked[0]
        reason = ('the link the gripper fingers hang from' if hand_links else
                  'the leaf link at the end of the most movable joints')
        others = ranked[1:]
    count = candidates[tip][0]
    reason += f', {count} movable joint{"" if count == 1 else "s"} from the root'
    free = [joint for joint in tree.chain(base, tip) if joint.kind in ('floating', 'planar')]
    if free and not given_base:
        # A floating base (a humanoid's or a mobile robot's world joint): the chain starts
        # on the body it carries, as pinocchio's root joint does.
        base = free[-1].child
        reason += f'; base below the {free[-1].kind} joint "{free[-1].name}"'
    return DefaultFrames(base, tip, reason, tuple(others[:OTHER_CANDIDATES]))


def default_frames(urdf: str) -> tuple[str, str]:
    """(base, tip) of a URDF when neither parameter nor configuration names them
    (``choose_frames``).

    Raises:
        DescriptionError: the URDF does not read, has no single root link, or no movable
            joint below it.
    """
    frames = choose_frames(read_tree(urdf))
    return frames.base, frames.tip


def child_links(urdf: str) -> dict[str, str]:
    """{joint name: child link name} of a URDF ({} when it does not read)."""
    try:
        tree = read_tree(urdf)
    except DescriptionError:
        return {}
    return {joint.name: joint.child for joint in tree.joints.values()}
