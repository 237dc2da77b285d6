"""Link pairs the self-collision check may skip, found from the geometry (as MoveIt's setup
assistant does for an SRDF):

- ``adjacent``: joined by one joint (links without shapes looked through);
- ``default``: in contact at the home pose (their shapes overlap by design);
- ``always``: in contact in at least ``always_fraction`` of the random poses;
- ``never``: in contact in none of them (only with ``skip_never``): skipped for speed. A pair
  that is rarely reachable may then be missed: with ``skip_never=False`` every such pair stays
  checked at the cost of more narrow-phase queries.

The result is plain data, [[link_a, link_b, reason], ...], for the arm configuration's
``collision.allowed_pairs`` (which, when present, is used instead of this computation).
"""

from __future__ import annotations

from typing import Any

import numpy as np

# The checker computes its allowed pairs with these functions as it is built, so they
# take it as an object rather than import its class.
CollisionChecker = Any


def link_contacts(checker: CollisionChecker, q: np.ndarray) -> set[frozenset[str]]:
    """Link pairs (of all pairs of different links) in contact at ``q``."""
    pairs = checker._all_pairs
    frames = checker._joint_frames(q)
    bound = checker._all_bounds.of(frames)
    poser = checker._poser
    transforms = poser.start(frames)
    found = set()
    for index in np.flatnonzero(bound <= 0.0).tolist():
        names = frozenset(pairs.names[index])
        if names in found:
            continue
        a, b = pairs.a_list[index], pairs.b_list[index]
        pose_a = transforms[a] if transforms[a] is not None else poser.shape(a)
        pose_b = transforms[b] if transforms[b] is not None else poser.shape(b)
        if pairs.queries[index].collide(pose_a, pose_b):
            found.add(names)
    return found


def compute_allowed_pairs(checker: CollisionChecker, samples: int = 1000,
                          always_fraction: float = 0.95, skip_never: bool = True,
                          seed: int = 0) -> list[list[str]]:
    """The allowed pairs of ``checker``'s links, [[link_a, link_b, reason], ...], sorted.

    Args:
        checker: supplies the shapes, the home pose and the chain.
        samples: random poses drawn uniformly inside the joint limits.
        always_fraction: share of the samples in contact that makes a pair 'always'.
        skip_never: also list pairs in contact in none of the samples ('never').
        seed: random seed of the samples.
    """
    links = checker.links
    every = {frozenset((a, b)) for i, a in enumerate(links) for b in links[i + 1:]}
    reasons: dict[frozenset[str], str] = {}
    for pair in checker.bodies.adjacent_pairs():
        reasons[pair] = 'adjacent'
    for pair in link_contacts(checker, checker.home):
        reasons.setdefault(pair, 'default')
    counts = dict.fromkeys(every - set(reasons), 0)
    rng = np.random.default_rng(seed)
    qs = checker.model.random_configurations(samples, rng)
    for q in qs:
        for pair in link_contacts(checker, q):
            if pair in counts:
                counts[pair] += 1
    for pair, count in counts.items():
        if samples and count >= always_fraction * samples:
            reasons[pair] = 'always'
        elif skip_never and count == 0:
            reasons[pair] = 'never'
    return sorted([*sorted(pair), reason] for pair, reason in reasons.items())
