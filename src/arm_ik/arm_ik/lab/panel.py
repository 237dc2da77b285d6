"""The panel's inputs, built from the control table, with one path for every change.

A change (from the browser, or from ``set`` which does what a browser user does: assign the
input's value, which runs the same callback) goes to ``apply``; when that refuses, the input
goes back to its last accepted value and the reason is shown. Values that come from the
nodes (``show``) move the input without applying anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
import threading
from typing import Any

from arm_ik.lab.controls import Control


@dataclass(frozen=True)
class Outcome:
    """What happened to one change: accepted or not, and the words shown in the panel."""

    ok: bool
    message: str


Apply = Callable[[Control, Any], Outcome]


class ControlPanel:
    """viser inputs of a list of Controls; ``apply`` decides on every change."""

    def __init__(self, gui, controls: Iterable[Control], apply: Apply,
                 report: Callable[[Control, Outcome], None]) -> None:
        self.controls = {control.key: control for control in controls}
        self._apply = apply
        self._report = report
        self._quiet = threading.local()       # set while show() moves an input
        self._lock = threading.Lock()
        self.accepted: dict[str, Any] = {}
        self.last: dict[str, Outcome] = {}
        self.handles: dict[str, Any] = {}
        for control in self.controls.values():
            self.handles[control.key] = self._add(gui, control)
            self.accepted[control.key] = control.initial

    def _add(self, gui, control: Control):
        hint = control.hint or None
        if control.kind == 'dropdown':
            handle = gui.add_dropdown(control.label, control.options,
                                      initial_value=control.initial, hint=hint)
        elif control.kind == 'checkbox':
            handle = gui.add_checkbox(control.label, bool(control.initial), hint=hint)
        elif control.kind == 'slider':
            handle = gui.add_slider(control.label, min=control.minimum, max=control.maximum,
                                    step=control.step, initial_value=control.initial,
                                    hint=hint)
        elif control.kind == 'number':
            handle = gui.add_number(control.label, control.initial, min=control.minimum,
                                    max=control.maximum, step=control.step, hint=hint)
        else:
            raise ValueError(f'control {control.key}: unknown kind "{control.kind}"')
        handle.on_update(lambda _event, key=control.key: self._changed(key))
        return handle

    def _changed(self, key: str) -> None:
        if getattr(self._quiet, 'active', False):
            return
        control = self.controls[key]
        value = self.handles[key].value
        value, reason = control.coerce(value)
        outcome = Outcome(False, reason) if reason else self._apply(control, value)
        with self._lock:
            self.last[key] = outcome
            if outcome.ok:
                self.accepted[key] = value
            previous = self.accepted[key]
        if not outcome.ok:
            self.show(key, previous)          # back to what the node still uses
        self._report(control, outcome)

    def set(self, key: str, value: Any) -> Outcome:
        """Change an input as a browser user would; the outcome of its callback."""
        if key not in self.handles:
            return Outcome(False, f'no control "{key}"; controls: {", ".join(self.handles)}')
        handle = self.handles[key]
        if handle.value == value and type(handle.value) is type(value):
            return Outcome(True, f'{self.controls[key].label} is already {value!r}')
        self.last.pop(key, None)
        try:
            handle.value = value             # runs _changed in this thread, as viser does
        except (TypeError, ValueError) as error:
            return Outcome(False, f'{self.controls[key].label}: {error}')
        return self.last.get(key, Outcome(False, f'{self.controls[key].label}: no answer'))

    def show(self, key: str, value: Any) -> None:
        """Display a value the node reports, without applying it again."""
        if key not in self.handles or value is None:
            return
        self._quiet.active = True
        try:
            self.handles[key].value = value
        finally:
            self._quiet.active = False
        with self._lock:
            self.accepted[key] = value

    def value(self, key: str) -> Any:
        """The last accepted value of an input."""
        with self._lock:
            return self.accepted[key]
