"""The panel's texts (markdown): readouts, the damping-sweep table, the joint-map caption."""

from __future__ import annotations

from collections.abc import Sequence
import math

import numpy as np

from arm_ik.lab.checks import is_loopback
from arm_ik.lab.drawing import format_number
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.visual.arm_visual import PoseMetrics


def table(rows: Sequence[tuple[str, str]]) -> str:
    """A two-column markdown table without a header line of its own."""
    return '| | |\n|---|---|\n' + '\n'.join(f'| {name} | {value} |' for name, value in rows)


def readout_rows(readout: PoseMetrics, tracked: np.ndarray | None, ik: dict,
                 executor: str, safety: str, failure: str, rejected: int,
                 reject_reason: str, collision: str = '-') -> list[tuple[str, str]]:
    """The readout lines: pose metrics, the last IK answer, node states (the safety
    monitor's collision witness too), the last failure."""
    tip = ', '.join(f'{v:+.3f}' for v in readout.tip)
    tracking = '-' if tracked is None else \
        f'{np.linalg.norm(tracked - readout.tip) * 1000.0:.1f}'
    rows = [('tip (m)', f'({tip})'),
            ('tracking error (mm)', tracking),
            ('IK error (mm)', format_number(ik.get('error', math.nan) * 1000.0, 4)),
            ('manipulability w', format_number(readout.manipulability, 4)),
            ('condition number', format_number(readout.condition_number, 1)),
            ('reach', f'{format_number(readout.reach_fraction * 100.0, 1)} %'),
            ('solver / branch', f'{ik.get("solver") or "-"} / {ik.get("branch") or "-"}'),
            ('iterations', str(ik.get('iterations', '-'))),
            ('executor', executor),
            ('safety', safety),
            ('collision', collision),
            ('last failure', failure or '-')]
    if rejected:
        rows.append(('joint_states ignored', f'{rejected} (last: {reject_reason})'))
    return rows


def damping_sweep_markdown(model: ArmModel) -> tuple[str, int]:
    """Run the reference damping sweep on ``model``: (its table as markdown, rows)."""
    from arm_kinematics.analysis.experiments import damping_sweep, sweep_setup
    q0, target = sweep_setup(model)
    rows = damping_sweep(model)
    lines = [f'Plain DLS from q0 = {np.round(q0, 3).tolist()} rad to '
             f'{np.round(target, 3).tolist()} m (98.5 % of reach):', '',
             '| λ | iterations | final error (m) | max joint step (rad) | converged |',
             '|---|---|---|---|---|']
    lines += [f'| {row.damping:g} | {row.iterations} | {row.final_error:.2e} | '
              f'{row.max_joint_step:.4f} | {"yes" if row.converged else "no"} |'
              for row in rows]
    return '\n'.join(lines), len(rows)


def joint_map_caption(axes: Sequence[str], base: dict[str, float], summary: str) -> str:
    """What the joint-map image shows, with the fixed joints' angles."""
    rows, columns = axes if len(axes) == 2 else ('?', '?')
    fixed = ', '.join(f'{name} {math.degrees(value):.0f}°' for name, value in base.items()
                      if name not in (rows, columns))
    return (f'{rows} (up) × {columns} (right) at {fixed}. Grey-brown: below the floor; '
            'red: touching the obstacle; violet: self-collision; lilac: touching a scene '
            'object; the path runs blue → orange with measured contacts as red dots. '
            f'{summary}')


def joint_map_note(model: ArmModel) -> str:
    """What the joint-map tab says before its first map: which joints it maps and why, or
    why this arm gets none (a bare "no map yet" left users guessing)."""
    from arm_kinematics.motion.planning.grid_search import default_search_joints
    names = list(model.joint_names)
    _, axes, _ = model.joint_origins_and_axes(np.zeros(model.dof))
    horizontal = [name for name, axis in zip(names, axes) if abs(axis[2]) < 1e-6]
    rule = ('The joint map plots the first two joints whose axes are horizontal at the zero '
            'pose (a shoulder and an elbow pitch, as on a yaw + two pitch arm) against each '
            'other, with the floor and the obstacle contacts, self-collision and scene '
            'contact.')
    joints = default_search_joints(model)
    if joints is None:
        found = f'only {horizontal[0]} has' if horizontal else 'none has'
        return (f'**No joint map for this arm.** {rule} Of its joints ({", ".join(names)}) '
                f'{found} a horizontal axis, so there is no such pair.')
    rows, columns = names[joints[0]], names[joints[1]]
    others = [name for name in names if name not in (rows, columns)]
    note = (f'**No map yet:** it is drawn after each move and by *Refresh joint map*. {rule} '
            f'Here: {rows} (up) × {columns} (right)')
    if others:
        note += f', at the current angles of {", ".join(others)}'
    extra = [name for name in horizontal if name not in (rows, columns)]
    if extra:
        verb = 'is a pitch joint' if len(extra) == 1 else 'are pitch joints'
        note += f"; {', '.join(extra)} {verb} too, so the map is one slice of the joint space"
    return note + '.'


def cycle_markdown(running: bool, last: str) -> str:
    """The scripted-cycle folder's text: whether a cycle drives the arm and what to press."""
    if running:
        head = ('**A scripted cycle is moving the arm.** *Pause: take over* stops it; *Plan '
                'and go*, *Home pose* and *Live follow* take over too.')
    else:
        head = '**No scripted cycle is moving the arm**: the panel drives it.'
    return f'{head}\n\n{last}' if last else head


def safety_text(verdict: str, safe: bool, message: str) -> str:
    """The readout's safety line: the verdict, with the monitor's message unless SAFE."""
    return verdict if safe else f'{verdict}: {message}'


def status_text(state: str, message: str) -> str:
    """A node's state with its message, if any (the executor's status)."""
    return state + (f': {message}' if message else '')


def cycle_line(state: str, sequence: str, cycle: int, phase: str, source: str,
               message: str) -> str:
    """The scripted cycle's last report (target_status): state, where, message."""
    where = f'{sequence} cycle {cycle}, {phase}' if sequence else source
    return f'**{state}** ({where}): {message}'


def arm_note(capsules: bool, reason: str) -> str:
    """Said on the page, not only in the log, when the arm is capsules and why."""
    return f'*The arm is drawn as the capsules of its safety geometry:* {reason}.' \
        if capsules else ''


def exposure_note(host: str) -> str:
    """A warning for the log when the page is served beyond this machine ('' when not)."""
    return '' if is_loopback(host) else (f' (host {host} is reachable from other machines: '
                                         'anyone who can open it can move the arm)')
