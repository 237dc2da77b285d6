"""What each panel control is, and which running node's parameter it sets.

The table is data, so the panel, the node and the tests read one definition. A control with
a ``target`` is applied as a parameter of that node (its set_parameters service), and the
node's own validation decides; one without is the lab's own setting (sent with each goal).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arm_kinematics.arm import ArmConfig, choose_solver
from arm_kinematics.ik.result import GoalType
from arm_kinematics.ik.solvers import solver_class, SOLVERS
from arm_kinematics.model.arm_model import ArmModel
from arm_kinematics.motion import laws

# Panel label → SolveIK/MoveToTarget goal type.
ORIENTATIONS = {'free': GoalType.POSITION, 'pointing down': GoalType.TOOL_DOWN,
                'full pose': GoalType.FULL_POSE}
NEAREST = 'nearest'
IK_SERVER = 'ik_server'
EXECUTOR = 'trajectory_executor'
SAFETY = 'safety_monitor'
# Live follow runs on the executor with parameters of its own: a panel choice of solver or
# motion law is made there too.
FOLLOW_PARAMETERS = {'solver': 'follow_solver', 'motion_law': 'follow_law'}


@dataclass(frozen=True)
class Control:
    """One input of the panel.

    Attributes:
        key: stable name (the ~/set_controls parameter name, tests, scripts).
        label: text beside it in the panel.
        kind: 'dropdown', 'number', 'slider', 'checkbox' or 'button'.
        initial: value shown before the owning node answered with its own.
        target: (node name, parameter) it sets, or None for a setting of the lab itself.
        options: choices of a dropdown.
        minimum, maximum, step: range of a number or slider (what the browser offers; the
            node still validates).
        hint: tooltip, with units.
    """

    key: str
    label: str
    kind: str
    initial: Any = None
    target: tuple[str, str] | None = None
    options: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    step: float | None = None
    hint: str = ''
    value_type: type = field(default=str)

    def coerce(self, value: Any) -> tuple[Any, str]:
        """``value`` as this control's type, or (None, why not) — before it goes anywhere."""
        if self.kind == 'button':
            return None, ''
        if self.value_type is bool:
            if isinstance(value, bool):
                return value, ''
            return None, f'{self.label} must be true or false, got {value!r}'
        if self.value_type is str:
            if not isinstance(value, str):
                return None, f'{self.label} must be text, got {value!r}'
            if self.options and value not in self.options:
                return None, f'{self.label} "{value}" is not one of {", ".join(self.options)}'
            return value, ''
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None, f'{self.label} must be a number, got {value!r}'
        if value != value or value in (float('inf'), float('-inf')):
            return None, f'{self.label} must be finite, got {value!r}'
        if self.value_type is int:
            if int(value) != value:
                return None, f'{self.label} must be a whole number, got {value!r}'
            return int(value), ''
        return float(value), ''


def applicable_solvers(model: ArmModel) -> tuple[str, ...]:
    """Solver names that can serve ``model``."""
    return tuple(name for name in SOLVERS if not solver_class(name).reason_for(model))


def branch_labels(model: ArmModel) -> tuple[str, ...]:
    """'nearest' and the branch labels of the closed-form solvers that serve ``model``."""
    labels: list[str] = [NEAREST]
    solvers = applicable_solvers(model)
    if 'analytic' in solvers:
        from arm_kinematics.ik.closed_form.yaw_two_pitch import BRANCHES
        labels += BRANCHES
    if 'closed_form' in solvers:
        from arm_kinematics.ik.closed_form.spherical_wrist import BRANCHES
        labels += BRANCHES
    return tuple(labels)


def arm_controls(model: ArmModel, config: ArmConfig) -> list[Control]:
    """The panel's controls for an arm (defaults from its arm_description YAML)."""
    ik = config.get('ik') or {}
    motion = config.get('motion') or {}
    obstacle = ((config.get('safety') or {}).get('obstacle') or {})
    solver_default = str(ik.get('default_solver') or choose_solver(model)[0])
    return [
        Control('live_follow', 'Live follow', 'checkbox', False, value_type=bool,
                hint="on: dragging the target streams it on the executor's target topic; "
                     'off: "Plan and go" sends one timed move'),
        Control('solver', 'Solver', 'dropdown', solver_default,
                (IK_SERVER, 'default_solver'), tuple(SOLVERS),
                hint='IK solver of the IK service and of planned moves'),
        Control('branch', 'Branch', 'dropdown', NEAREST, None, branch_labels(model),
                hint='solution branch of the closed-form solvers; nearest: closest to now'),
        Control('orientation', 'Tool orientation', 'dropdown', 'free', None,
                tuple(ORIENTATIONS), hint='free: position only; pointing down: tool Z '
                "along -Z; full pose: the gizmo's orientation"),
        Control('motion_law', 'Motion law', 'dropdown',
                str(motion.get('default_law', laws.MIN_JERK)), (EXECUTOR, 'motion_law'),
                laws.LAWS, hint='law of planned moves; exponential and speed_cap also drive '
                'live follow'),
        Control('damping', 'Damping λ', 'number', float(ik.get('damping', 0.05)),
                (IK_SERVER, 'damping'), minimum=0.0, maximum=10.0, step=0.001,
                value_type=float, hint='DLS damping lambda (> 0)'),
        Control('iterations_per_tick', 'Iterations per tick', 'number', 3,
                (EXECUTOR, 'speed_cap_iterations'), minimum=1, maximum=1000, step=1,
                value_type=int, hint='CCD iterations per control tick (speed-cap law)'),
        Control('motor_speed', 'Motor speed', 'slider', 0.5, (EXECUTOR, 'speed_scale'),
                minimum=0.05, maximum=1.0, step=0.05, value_type=float,
                hint='fraction of the URDF velocity limits'),
        Control('joint_limits', 'Joint limits', 'checkbox', True,
                (IK_SERVER, 'respect_joint_limits'), value_type=bool,
                hint='keep IK solutions inside the URDF joint limits'),
        Control('obstacle_radius', 'Obstacle radius (m)', 'number',
                float(obstacle.get('radius', 0.25)), (SAFETY, 'obstacle_radius'),
                minimum=0.0, maximum=2.0, step=0.01, value_type=float,
                hint='radius of the obstacle ball, m (> 0)'),
    ]


def length_controls(config: ArmConfig) -> list[Control]:
    """Link-length inputs of the arm's xacro arguments (``lab.length_arguments`` of its
    configuration; empty when it names none or has no xacro)."""
    kinematics = config.get('kinematics') or {}
    xacro = config.lab_xacro
    return [Control(f'length_{name}', f'{name} (m)' if name != 'link_scale' else name,
                    'number', float(kinematics.get(name, 1.0)), None, minimum=0.0,
                    maximum=5.0, step=0.01, value_type=float,
                    hint=f'xacro argument {name} of {xacro.name if xacro else "the arm"}')
            for name in config.length_arguments if name in kinematics]


def follow_parameter(key: str, value: Any) -> str | None:
    """The executor's live-follow parameter that control ``key`` set to ``value`` also sets
    (None: none; a law that cannot stream, min_jerk or linear, leaves follow_law as it is)."""
    follow = FOLLOW_PARAMETERS.get(key)
    if follow == 'follow_law' and value not in laws.STREAMING_LAWS:
        return None
    return follow
