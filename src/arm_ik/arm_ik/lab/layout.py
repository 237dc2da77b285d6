"""The panel's layout: folders, control inputs, buttons, readouts, plots and images.

Only viser calls; what the buttons do is given by the node (``wire_buttons``), and a script
changes inputs and presses buttons by key exactly as a browser user does (``set_control``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from arm_ik.lab.controls import Control
from arm_ik.lab.panel import ControlPanel, Outcome
from arm_kinematics.common.checks import check_vector

# Series colours of the joint plot (cycled).
COLOURS = ('#2659bf', '#f27f19', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#17becf')
BUTTONS = {
    'plan_and_go': ('Plan and go', "send one MoveToTarget goal to the gizmo's pose"),
    'home': ('Home pose', "move to the arm's home pose (arm_info)"),
    'cycle_start': ('Resume scripted cycle', 'target_input ~/run_cycle: the scripted cycle '
                    'starts again from its first step'),
    'cycle_stop': ('Pause: take over', 'target_input ~/stop_cycle: the cycle stops where it '
                   'is, the arm holds its pose and the panel drives it'),
    'refresh_joint_map': ('Refresh joint map', 'safety_monitor ~/joint_map at the current yaw'),
    'damping_sweep': ('Run damping sweep', 'plain fixed-lambda DLS near the stretched '
                      'singularity (arm_kinematics.analysis.experiments)'),
    'apply_lengths': ('Apply link lengths', 'expand the xacro with these lengths and set it '
                      'as robot_description of the running nodes'),
}

# Plot heights in CSS pixels (the whole uPlot element, title and legend included, is about
# 60 px more): fixed, not a width-to-height ratio, so a narrowed panel keeps them readable.
# The Readouts tab (readouts + error plot) and the Last move tab (two plots) each fit a
# 1400 × 900 window without scrolling (test_lab_layout.py measures it in Chromium).
PLOT_HEIGHTS = {'error': 220, 'joints': 260, 'w': 200}
CYCLE_UNKNOWN = 'No scripted cycle reported yet (target_input runs one in `make demo`).'


class LabLayout:
    """Every widget of the panel; ``panels`` hold the inputs that set parameters."""

    def __init__(self, gui, controls: Sequence[Control], lengths: Sequence[Control],
                 apply: Callable[[Control, object], Outcome],
                 report: Callable[[Control, Outcome], None], joint_names: Sequence[str],
                 joint_map: bool, damping_sweep: bool, joint_map_note: str = '') -> None:
        self.gui = gui
        by_key = {control.key: control for control in controls}
        self.control_keys = list(by_key)
        self._outcomes: dict[str, Outcome] = {}

        def group(*keys: str) -> list[Control]:
            return [by_key[key] for key in keys if key in by_key]

        self.panels: list[ControlPanel] = []
        self.buttons = {}
        # Right: the controls. Left: what the arm does, in one panel of tabs (readouts with
        # the live error; the last move's plots; the joint map or the damping sweep). Tabs,
        # not panels docked below each other: viser splits a docked column in equal parts,
        # which left the plots a strip a hundred pixels high at 1400 × 900.
        gui.main_panel.dock_right()
        gui.main_panel.set_width(400)
        # First: a scripted cycle (make demo runs one) moves the arm while the user tries the
        # panel, so pausing it and taking over is the first thing the panel offers.
        with gui.add_folder('Scripted cycle'):
            self.cycle_status = gui.add_markdown(CYCLE_UNKNOWN)
            self._button('cycle_stop', color='red')
            self._button('cycle_start', color='green')
        with gui.add_folder('Target and move'):
            self.panels.append(ControlPanel(gui, group('live_follow'), apply, report))
            self._button('plan_and_go', color='blue')
            self._button('home')
            self.move_status = gui.add_markdown('Drag the gizmo, then *Plan and go*.')
        self.messages = gui.add_markdown('')
        with gui.add_folder('IK'):
            self.panels.append(ControlPanel(
                gui, group('solver', 'branch', 'orientation', 'damping', 'joint_limits'),
                apply, report))
        with gui.add_folder('Motion'):
            self.panels.append(ControlPanel(
                gui, group('motion_law', 'iterations_per_tick', 'motor_speed'), apply, report))
        with gui.add_folder('Safety'):
            self.panels.append(ControlPanel(gui, group('obstacle_radius'), apply, report))
        self.length_panel = None
        if lengths:
            with gui.add_folder('Link lengths', expand_by_default=False):
                self.length_panel = ControlPanel(gui, lengths, _accept_locally, report)
                self._button('apply_lengths')
                self.length_status = gui.add_markdown(
                    'Lengths are xacro arguments of the description the nodes started with.')

        readouts = gui.add_panel()
        readouts.dock_left()
        readouts.set_width(420)
        with readouts.add_tab('Readouts'):
            self.readouts = gui.add_markdown('waiting for joint_states ...')
            self.error_plot = gui.add_uplot(
                (np.zeros(2), np.zeros(2)),
                ({'label': 't (s)'},
                 {'label': 'error (mm)', 'stroke': '#d62728', 'width': 1.5}),
                title='IK tracking error, live (mm)', scales={'x': {'time': False}},
                height=PLOT_HEIGHTS['error'])
            # How the 3D arm is drawn when not from its meshes (the node fills it in).
            self.arm_note = gui.add_markdown('')
        with readouts.add_tab('Last move'):
            self._add_move_plots(joint_names)
        self.joint_map = self.sweep_table = None
        # The six-axis reference experiment first: it is that arm's picture.
        if damping_sweep:
            with readouts.add_tab('Damping sweep'):
                self._button('damping_sweep')
                self.sweep_table = gui.add_markdown(
                    'The reference six-axis experiment: plain fixed-λ DLS near the '
                    'stretched singularity.')
        # Every arm gets the tab, so an arm without a map says why instead of showing none.
        with readouts.add_tab('Joint map'):
            if joint_map:
                self.joint_map = gui.add_image(np.full((8, 8, 3), 240, dtype=np.uint8),
                                               label='shoulder (up) × elbow (right)',
                                               format='png')
            self.joint_map_text = gui.add_markdown(joint_map_note)
            if joint_map:
                self._button('refresh_joint_map')
        self.readouts_panel = readouts

    def _add_move_plots(self, joint_names: Sequence[str]) -> None:
        gui = self.gui
        self.joint_plot = gui.add_uplot(
            (np.zeros(2),) + tuple(np.zeros(2) for _ in joint_names),
            ({'label': 't (s)'},) + tuple(
                {'label': name, 'stroke': COLOURS[k % len(COLOURS)], 'width': 1.5}
                for k, name in enumerate(joint_names)),
            title='Joint angles along the last move (rad)', scales={'x': {'time': False}},
            height=PLOT_HEIGHTS['joints'])
        self.w_plot = gui.add_uplot(
            (np.zeros(2), np.zeros(2)),
            ({'label': 't (s)'}, {'label': 'w', 'stroke': '#2659bf', 'width': 1.5}),
            title='Manipulability w along the last move', scales={'x': {'time': False}},
            height=PLOT_HEIGHTS['w'])

    def _button(self, key: str, color: str | None = None) -> None:
        label, hint = BUTTONS[key]
        self.buttons[key] = self.gui.add_button(label, hint=hint, color=color)

    def panel_of(self, key: str) -> ControlPanel | None:
        """The ControlPanel holding input ``key``, if any."""
        for panel in self.panels + ([self.length_panel] if self.length_panel else []):
            if key in panel.handles:
                return panel
        return None

    def show_outcome(self, outcome: Outcome) -> None:
        """The last change's or button's outcome, under the move buttons."""
        self.messages.content = f'{"✓" if outcome.ok else "✗"} {outcome.message}'

    def wire_buttons(self, actions: Mapping[str, Callable[[], Outcome]],
                     failed: Callable[[Outcome], None]) -> None:
        """Each button runs its action and shows the outcome (an exception is an outcome
        too: a failing button must not stop the lab); refusals also go to ``failed``."""
        def press(key: str) -> None:
            try:
                outcome = actions[key]()
            except Exception as error:  # noqa: BLE001 - see above
                outcome = Outcome(False, f'{key} failed: {type(error).__name__}: {error}')
            self._outcomes[key] = outcome
            self.show_outcome(outcome)
            if not outcome.ok:
                failed(outcome)
        for key, handle in self.buttons.items():
            handle.on_click(lambda _event, key=key: press(key))

    def set_control(self, key: str, value: object,
                    set_target: Callable[[np.ndarray], Outcome]) -> Outcome:
        """What a browser user does with input or button ``key``; the gizmo is 'target'
        ([x, y, z], m, moved by ``set_target``)."""
        if key == 'target':
            position, reason = check_vector(value if isinstance(value, (list, tuple)) else [],
                                            3, 'target')
            return Outcome(False, reason) if position is None else set_target(position)
        if key in self.buttons:
            self._outcomes.pop(key, None)
            self.buttons[key].value = True      # runs its on_click in this thread
            return self._outcomes.get(key, Outcome(False, f'{key}: no outcome'))
        panel = self.panel_of(key)
        if panel is None:
            known = self.control_keys + list(self.buttons) + ['target']
            return Outcome(False, f'no control "{key}"; controls: {", ".join(known)}')
        return panel.set(key, value)

    def show(self, key: str, value: object) -> None:
        """A node's own value of input ``key`` (shown, not applied again)."""
        panel = self.panel_of(key)
        if panel is not None:
            panel.show(key, value)

    def value(self, key: str) -> object:
        panel = self.panel_of(key)
        if panel is None:
            raise KeyError(key)
        return panel.value(key)

    @staticmethod
    def plot(handle, x: np.ndarray, *series: np.ndarray) -> None:
        """New data for a plot; two points at least (uPlot needs them)."""
        if len(x) < 2:
            return
        handle.data = (np.asarray(x, dtype=float),) + tuple(np.asarray(s, dtype=float)
                                                            for s in series)


def _accept_locally(control: Control, value: object) -> Outcome:
    """Link lengths are only read when applied (the button)."""
    return Outcome(True, f'{control.label} = {value} (not applied yet)')
