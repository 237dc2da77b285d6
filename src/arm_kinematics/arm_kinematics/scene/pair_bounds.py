"""The broad phase of the collision checker: shape pairs checked as one group
(``PairGroup``) and the lower bounds of their distances for a pose or a block of poses, one
matrix product each (``PairBounds``); and the bisection order a path's poses are checked in.

Units: metres.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
import functools

import numpy as np

from arm_kinematics.scene import backend

# A pair whose relative pose never changes (on one frame, or a base shape and an object) and
# whose distance is not computed yet.
UNKNOWN_DISTANCE = object()


@functools.lru_cache(maxsize=256)
def midpoints_first(count: int) -> np.ndarray:
    """0 .. count - 1 in bisection order: the middle, then the middles of both halves, ..."""
    order, spans = [], collections.deque([(0, count - 1)])
    while spans:
        low, high = spans.popleft()
        if low > high:
            continue
        middle = (low + high) // 2
        order.append(middle)
        spans.extend(((low, middle - 1), (middle + 1, high)))
    result = np.array(order, dtype=np.intp)
    result.flags.writeable = False
    return result


class PairGroup:
    """Index pairs (shape a, shape b) with their queries, checked as one group.

    Each pair's lower bound is ``|rows · frames − offset|`` beyond the box ``half`` (three rows
    per pair, see ``PairBounds.of``) minus ``reach``: link pairs, the distance of the two bounding
    spheres' centres (half 0) minus the radius sum; scene pairs, the distance from the link
    sphere's centre to the object's box in the box's frame minus the link radius.
    """

    def __init__(self, a: Sequence[int], b: Sequence[int], queries: list[backend.PairQuery],
                 names: list[tuple[str, str]], columns: int) -> None:
        self.a = np.asarray(a, dtype=np.intp)
        self.b = np.asarray(b, dtype=np.intp)
        self.a_list, self.b_list = self.a.tolist(), self.b.tolist()   # fast scalar indexing
        self.queries = queries
        self.names = names
        self.rows = np.zeros((3 * len(queries), columns))
        self.offset = np.zeros(3 * len(queries))
        self.half = np.zeros(3 * len(queries))
        self.reach = np.zeros(len(queries))
        # Pairs whose relative pose never changes: their exact distance (None for a pair that
        # moves, UNKNOWN_DISTANCE until first needed), and which of them are clear: the yes/no
        # checks skip those (their answer cannot change).
        self.fixed: list = [None] * len(queries)
        self.fixed_clear = np.zeros(len(queries), dtype=bool)

    def __len__(self) -> int:
        return len(self.queries)


class PairBounds:
    """The link and scene pairs' bound terms stacked: one product per pose (or block of poses)
    gives every bound, link pairs first."""

    def __init__(self, groups: Sequence[PairGroup]) -> None:
        self.matrix = np.ascontiguousarray(np.concatenate([g.rows for g in groups]).T)
        self.offset = np.concatenate([g.offset for g in groups])
        self.half = np.concatenate([g.half for g in groups])
        self.reach = np.concatenate([g.reach for g in groups])
        self.keep = ~np.concatenate([g.fixed_clear for g in groups])
        self.count = len(self.reach)

    def of(self, frames: np.ndarray) -> np.ndarray:
        """Lower bounds (..., pairs) of the pairs' distances, m, from joint frames
        (..., joints, 12)."""
        values = frames.reshape(*frames.shape[:-2], -1) @ self.matrix
        values -= self.offset
        np.abs(values, out=values)
        values -= self.half
        np.maximum(values, 0.0, out=values)
        values *= values
        squares = np.add.reduce(values.reshape(*values.shape[:-1], self.count, 3), axis=-1)
        np.sqrt(squares, out=squares)
        squares -= self.reach
        return squares
