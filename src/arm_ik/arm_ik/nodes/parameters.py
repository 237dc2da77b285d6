"""The one way an arm_ik node declares, validates and reads its parameters.

Each node lists its parameters once, as a ``ParameterTable`` of ``Param`` specs (name,
default, description with units, range or choices, read-only), in the spirit of
generate_parameter_library's YAML. The table declares them with descriptors, refuses a
bad value with the reason (on declaration and on every run-time update), and reads them
back as one dict the node turns into its immutable settings snapshot.

Run-time parameters are those not read-only. A node that needs a cross-field rule (say,
min_duration below max_duration) gives ``watch`` a ``check`` that sees the whole proposed
set of values; ``apply`` runs after an accepted update, with every current value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    SetParametersResult,
)
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.node import Node
from rclpy.parameter import Parameter

from arm_kinematics.common.checks import number_reason


class ParameterError(ValueError):
    """A declared parameter has a value its spec refuses (the message says why)."""


@dataclass(frozen=True)
class Param:
    """One parameter: its type is its default's (bool, int, float, str or a list of one).

    Bounds are inclusive unless ``low_open``/``high_open``; ``choices`` lists the strings a
    str parameter may take ('' is allowed only when listed).
    """

    name: str
    default: Any
    description: str
    read_only: bool = False
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()

    def reason(self, value: Any) -> str:
        """'' when ``value`` is acceptable, else the reason (naming the parameter)."""
        if self.choices and value not in self.choices:
            return f'{self.name} "{value}" is not one of {", ".join(self.choices)}'
        if isinstance(self.default, (int, float)) and not isinstance(self.default, bool) \
                and (self.low is not None or self.high is not None):
            return number_reason(value, self.name, self.low, self.high, self.low_open,
                                 self.high_open)
        if isinstance(self.default, float):
            return number_reason(value, self.name)
        return ''

    def descriptor(self) -> ParameterDescriptor:
        text = self.description
        if self.choices:
            shown = ' | '.join(choice or "''" for choice in self.choices)
            text += f' ({shown})'
        ranges: dict[str, list] = {}
        if self.low is not None and self.high is not None:
            if isinstance(self.default, float):
                ranges['floating_point_range'] = [FloatingPointRange(
                    from_value=float(self.low), to_value=float(self.high), step=0.0)]
            elif isinstance(self.default, int) and not isinstance(self.default, bool):
                ranges['integer_range'] = [IntegerRange(
                    from_value=int(self.low), to_value=int(self.high), step=1)]
        return ParameterDescriptor(description=text, read_only=self.read_only, **ranges)


class ParameterTable:
    """The parameters of one node (see the module docstring)."""

    def __init__(self, *params: Param) -> None:
        self.params = {param.name: param for param in params}
        if len(self.params) != len(params):
            raise ValueError('a parameter is listed twice')

    @property
    def dynamic(self) -> tuple[str, ...]:
        """Names changeable at run time."""
        return tuple(name for name, param in self.params.items() if not param.read_only)

    def declare(self, node: Node, defaults: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Declare every parameter on ``node``; return their values.

        ``defaults`` replaces spec defaults that depend on the arm (its home pose, its
        motion law). Raises ParameterError when a given value (a launch file's, a params
        file's) is refused, by the spec or by rclpy (a descriptor range, a type).
        """
        defaults = defaults or {}
        for name, param in self.params.items():
            default = defaults.get(name, param.default)
            if isinstance(param.default, float) and isinstance(default, int) \
                    and not isinstance(default, bool):
                default = float(default)
            try:
                value = node.declare_parameter(name, default, param.descriptor()).value
            except (InvalidParameterTypeException, InvalidParameterValueException) as error:
                # A given value outside the descriptor's range or of another type: rclpy
                # refuses it before our check sees it; the node still stops with the reason.
                hint = ' (write floating-point values with a decimal point, e.g. 100.0)' \
                    if isinstance(error, InvalidParameterTypeException) and \
                    isinstance(param.default, float) else ''
                raise ParameterError(f'parameter {name}: {error.args[0]}{hint}') from None
            reason = param.reason(value)
            if reason:
                raise ParameterError(f'parameter {reason}')
        return self.values(node)

    def values(self, node: Node, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """{name: value} of every parameter, ``overrides`` (a proposed update) applied."""
        values = {name: node.get_parameter(name).value for name in self.params}
        values.update(overrides or {})
        return values

    def reason(self, parameters: Iterable[Parameter]) -> str:
        """'' when each of ``parameters`` that this table owns passes its own spec."""
        for parameter in parameters:
            param = self.params.get(parameter.name)
            if param is not None:
                reason = param.reason(parameter.value)
                if reason:
                    return reason
        return ''

    def watch(self, node: Node, apply: Callable[[dict[str, Any]], None],
              check: Callable[[dict[str, Any]], str] | None = None) -> None:
        """Validate every run-time update on ``node``, then ``apply`` the new values.

        ``check`` gets every value with the update applied and returns '' or the reason
        the whole set is refused. Updates that touch none of this table's parameters pass
        untouched (other owners, e.g. robot_description's reload, judge those).
        """
        def validate(parameters: list[Parameter]) -> SetParametersResult:
            mine = {p.name: p.value for p in parameters if p.name in self.params}
            if not mine:
                return SetParametersResult(successful=True)
            reason = self.reason(parameters)
            if not reason and check is not None:
                try:
                    reason = check(self.values(node, mine))
                except (TypeError, ValueError, ZeroDivisionError) as error:
                    reason = str(error)
            return SetParametersResult(successful=not reason, reason=reason)

        def applied(parameters: list[Parameter]) -> None:
            if any(p.name in self.params for p in parameters):
                apply(self.values(node))

        node.add_on_set_parameters_callback(validate)
        node.add_post_set_parameters_callback(applied)
