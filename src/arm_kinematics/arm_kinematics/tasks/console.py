"""Ask START and GOAL on a console, as the reference Manipulator3D program does in a terminal.

Plain text in and out (no ROS), so a node runs it in a thread on stdin/stdout and a test runs
it on StringIO. Units: m.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TextIO

import numpy as np

from arm_kinematics.tasks.pick_place import Reachability
from arm_kinematics.tasks.sequences import parse_point_text


def _fmt(values: Iterable[float]) -> str:
    return '[' + ', '.join(f'{float(v):.3f}' for v in values) + ']'


def ask_points(names: Iterable[str], defaults: Mapping[str, np.ndarray],
               check: Callable[[str, np.ndarray], Reachability], stdin: TextIO,
               stdout: TextIO) -> dict[str, np.ndarray]:
    """Ask each named point until the answer is reachable.

    An empty line keeps the default; end of input keeps the default of this and every later
    point. An answer that is not 3 numbers, or not reachable, is refused with the reason and
    asked again.

    Args:
        names: the points to ask for, in order (e.g. 'start', 'goal').
        defaults: name → current point, m.
        check: (name, point) → its Reachability (the reason is printed either way).
        stdin, stdout: where to read answers and print prompts.

    Returns:
        name → the chosen point, m.
    """
    answers: dict[str, np.ndarray] = {}
    ended = False
    for name in names:
        default = np.asarray(defaults[name], dtype=float)
        while not ended:
            stdout.write(f'{name.upper()} x y z in m {_fmt(default)}: ')
            stdout.flush()
            line = stdin.readline()
            if not line:
                ended = True
                stdout.write(f'\n(end of input: {name.upper()} stays {_fmt(default)})\n')
                break
            if not line.strip():
                break
            point, reason = parse_point_text(line)
            if point is None:
                stdout.write(f'  not a point: {reason}\n')
                continue
            verdict = check(name, point)
            stdout.write(f'  {verdict.reason}\n')
            if verdict.ok:
                default = point
                break
        stdout.flush()
        answers[name] = default
    return answers
