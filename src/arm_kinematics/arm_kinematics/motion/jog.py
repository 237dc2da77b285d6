"""Jogging (MoveIt Servo's semantics): a twist or a joint jog becomes the next joint pose.

``JogCore`` takes the commands (thread-safe: subscriptions call ``twist``, ``joint_jog``,
``pause`` and ``switch``) and is itself the follow law the executor's ``MotionRunner`` steps
every control tick (``step(q, dt)``), so a jog goes to the same outputs as every other motion
(simulated joint_states, a controller stream, the servo bridge) under the runner's one-owner
rules, emergency stop and floor check. Each tick:

1. the command in force (none, paused, or older than ``timeout``: zero) becomes a joint
   velocity: a twist through the damped least-squares inverse of the tip Jacobian (a twist
   in the tool frame is rotated into the base frame first), a joint jog directly; scaled
   uniformly so that no joint exceeds its URDF velocity limit times ``speed_scale``;
2. the velocity moves towards it by at most ``acceleration`` (rad/s², the largest joint's
   change; the vector changes as a whole so a twist keeps its direction): a stream that
   stops decelerates to rest, never a jump;
3. safety scales multiply it, both continuous in the pose, so slowing down is smooth:
   - singularity: the Jacobian's condition number ``c`` (largest over smallest singular
     value) between ``lower_singularity`` and ``hard_singularity`` scales a move that raises
     it by (hard - c) / (hard - lower); below 5 % of its speed (close to the hard
     threshold) or past it, it halts. A move that
     lowers it (leaving) runs unscaled, so the user can back out.
   - joint limits: a joint heading for a limit closer than 2 margins slows linearly to zero
     at one margin before it; a twist scales every joint by the smallest factor (the tool
     keeps its direction, MoveIt's halt_all_joints_in_cartesian_mode), a joint jog scales
     only that joint unless ``halt_all_joints_in_joint_mode``. No step ever ends past a
     margin (the last step is cut there).

Commands with NaN or inf, unknown frames or joints, unitless components outside [-1, 1], or
of the command type not in force are refused with the reason; the previous command stays in
force and times out. ``status`` gives MoveIt Servo's status code and words.

Units: m, rad, s (monotonic clock, injectable for tests).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
import enum
import math
import threading
import time

import numpy as np

from arm_kinematics.model.arm_model import ArmModel

UNITLESS = 'unitless'
SPEED_UNITS = 'speed_units'
COMMAND_IN_TYPES = (UNITLESS, SPEED_UNITS)
PROBE = 1e-3            # rad, the joint step along which the condition number's trend is read
# Below this fraction of its speed a move into a singularity halts: the linear slow-down alone
# approaches the hard threshold ever more slowly and never arrives.
HALT_SCALE = 0.05


class CommandType(enum.IntEnum):
    """moveit_msgs/srv/ServoCommandType's constants."""

    JOINT_JOG = 0
    TWIST = 1
    POSE = 2


class JogStatus(enum.IntEnum):
    """moveit_servo's StatusCode (the code of moveit_msgs/ServoStatus)."""

    INVALID = -1
    NO_WARNING = 0
    DECELERATE_FOR_APPROACHING_SINGULARITY = 1
    HALT_FOR_SINGULARITY = 2
    DECELERATE_FOR_LEAVING_SINGULARITY = 3
    DECELERATE_FOR_COLLISION = 4
    HALT_FOR_COLLISION = 5
    JOINT_BOUND = 6


@dataclass(frozen=True)
class JogSettings:
    """MoveIt Servo's parameters that this jog law reads (their names in the docstrings of
    ``servo_node``), plus the project's own acceleration, damping and speed scale."""

    timeout: float = 0.1                   # s, incoming_command_timeout
    command_in_type: str = UNITLESS
    linear_scale: float = 0.4              # m/s per unit (scale.linear), unitless only
    rotational_scale: float = 0.8          # rad/s per unit (scale.rotational)
    joint_scale: float = 0.5               # rad/s per unit (scale.joint)
    lower_singularity: float = 17.0
    hard_singularity: float = 30.0
    limit_margins: tuple[float, ...] = (0.1,)   # rad, one for all joints or one per joint
    acceleration: float = 5.0              # rad/s², start and stop ramps
    damping: float = 0.01                  # λ of the damped least-squares inverse
    speed_scale: float = 1.0               # fraction of the URDF velocity limits
    halt_all_joints_in_joint_mode: bool = True
    max_dt: float = 0.02                   # s, the longest tick a step covers (a late tick
    #                                        moves no farther: slower, never a leap)
    planning_frame: str = ''               # '' : the chain's base link
    ee_frame: str = ''                     # '' : the chain's tip link

    def reason(self, dof: int) -> str:
        """'' when the settings are usable for a chain of ``dof`` joints, else why."""
        for name in ('timeout', 'linear_scale', 'rotational_scale', 'joint_scale',
                     'acceleration', 'speed_scale', 'lower_singularity', 'hard_singularity',
                     'max_dt'):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                return f'{name} must be a finite number > 0, got {value!r}'
        if not (math.isfinite(self.damping) and self.damping >= 0):
            return f'damping must be a finite number >= 0, got {self.damping!r}'
        if self.speed_scale > 1.0:
            return f'speed_scale must be at most 1, got {self.speed_scale}'
        if self.hard_singularity <= self.lower_singularity:
            return (f'hard_stop_singularity_threshold ({self.hard_singularity:g}) must be '
                    f'above lower_singularity_threshold ({self.lower_singularity:g})')
        if self.command_in_type not in COMMAND_IN_TYPES:
            return (f'command_in_type "{self.command_in_type}" is not one of '
                    f'{", ".join(COMMAND_IN_TYPES)}')
        if len(self.limit_margins) not in (1, dof):
            return (f'joint_limit_margins has {len(self.limit_margins)} values: give one, or '
                    f'one per joint ({dof})')
        if not all(math.isfinite(m) and m >= 0 for m in self.limit_margins):
            return f'joint_limit_margins must be finite and >= 0, got {list(self.limit_margins)}'
        return ''


@dataclass(frozen=True)
class Twist:
    """A Cartesian velocity command: linear (3,) and angular (3,) in ``frame``."""

    linear: tuple[float, float, float]
    angular: tuple[float, float, float]
    frame: str = ''


@dataclass(frozen=True)
class JointJog:
    """A joint command: velocities (rad/s, or units), or displacements (rad) over
    ``duration`` s when no velocities are given."""

    names: tuple[str, ...]
    velocities: tuple[float, ...] = ()
    displacements: tuple[float, ...] = ()
    duration: float = 0.0


@dataclass(frozen=True)
class Answer:
    """What became of a command or a request: accepted, or refused and why."""

    ok: bool
    message: str = ''


class JogCore:
    """The jog's commands, state and law; see the module docstring."""

    def __init__(self, model: ArmModel, settings: JogSettings | None = None,
                 clock: Callable[[], float] = time.monotonic, any_type: bool = False) -> None:
        """Args:
            any_type: take twists and joint jogs alike, whatever the type in force (Humble's
                servo, which has no switch_command_type).
        """
        settings = settings or JogSettings()
        reason = settings.reason(model.dof)
        if reason:
            raise ValueError(reason)
        self.model = model
        self._clock = clock
        self._any_type = any_type
        self._lock = threading.Lock()
        self._settings = settings
        self._type = CommandType.JOINT_JOG      # MoveIt's servo starts in joint-jog mode
        self._paused = False
        self._command: np.ndarray | None = None    # chain-order joint velocity, rad/s
        self._twist: np.ndarray | None = None      # twist (6,), m/s and rad/s
        self._in_tool = False                      # the twist is in the tool frame
        self._until = -math.inf                    # the command is in force until then
        self._ramped = np.zeros(model.dof)     # the velocity commanded before the safety scales
        self._v = np.zeros(model.dof)          # and after them: what the last step moved at
        self._status = (JogStatus.NO_WARNING, '')
        # A chain of three joints or fewer steers the tool's position only.
        self._rows = slice(0, 3) if model.dof <= 3 else slice(0, 6)
        self._index = {name: i for i, name in enumerate(model.joint_names)}

    # ------------------------------------------------------------------ settings and state
    @property
    def settings(self) -> JogSettings:
        return self._settings

    def set_settings(self, settings: JogSettings) -> str:
        """Use ``settings`` from the next tick; '' or why they are refused (old ones kept)."""
        reason = settings.reason(self.model.dof)
        if not reason:
            with self._lock:
                self._settings = settings
        return reason

    @property
    def command_type(self) -> CommandType:
        return self._type

    @property
    def paused(self) -> bool:
        return self._paused

    def status(self) -> tuple[JogStatus, str]:
        with self._lock:
            return self._status

    def moving(self) -> bool:
        """True while the commanded velocity is not zero."""
        with self._lock:
            return bool(np.any(self._v != 0.0) or np.any(self._ramped != 0.0))

    def stop_time(self) -> float:
        """Longest time a stop takes once the command is out of force, s (timeout, then the
        deceleration ramp from the fastest joint speed)."""
        s = self._settings
        return s.timeout + float(np.max(self.model.velocity_limits)) * s.speed_scale \
            / s.acceleration

    def rest(self) -> None:
        """A new follow starts: from rest (the command in force, if any, stays)."""
        with self._lock:
            self._v = np.zeros(self.model.dof)
            self._ramped = np.zeros(self.model.dof)

    def report(self, code: JogStatus, message: str) -> None:
        """A status decided outside the law (a refused start, a step that collides)."""
        with self._lock:
            self._status = (code, message)

    def pause(self, paused: bool) -> Answer:
        """Pause (the arm decelerates to rest, commands refused) or resume."""
        with self._lock:
            self._paused = bool(paused)
            if paused:
                self._until = -math.inf
        return Answer(True, 'Servoing disabled' if paused else 'Servoing enabled')

    def switch(self, command_type: int) -> Answer:
        """Expect commands of ``command_type`` from now on (the other's stops)."""
        try:
            kind = CommandType(int(command_type))
        except (TypeError, ValueError):
            return Answer(False, f'unknown command type {command_type!r}: 0 (JOINT_JOG) or '
                          '1 (TWIST)')
        if kind == CommandType.POSE:
            return Answer(False, 'command type 2 (POSE) is not served: pose tracking is done '
                          'by move_group here; jog with JOINT_JOG (0) or TWIST (1)')
        with self._lock:
            if kind != self._type:
                self._type = kind
                self._until = -math.inf
        return Answer(True, f'expecting {kind.name} commands')

    # ------------------------------------------------------------------ commands
    def twist(self, command: Twist, now: float | None = None) -> Answer:
        """Take a twist (see the module docstring for the refusals)."""
        values = np.array([*command.linear, *command.angular], dtype=float)
        answer = self._admit(CommandType.TWIST, values, 'twist')
        if not answer.ok:
            return answer
        s = self._settings
        frame = command.frame.lstrip('/')
        base, tip = s.planning_frame or self.model.base_link, s.ee_frame or self.model.tip_link
        if frame not in ('', base, self.model.base_link, tip, self.model.tip_link):
            return self._refuse(f'twist refused: frame "{command.frame}" is neither the '
                                f'planning frame "{base}" nor the end effector frame "{tip}"')
        if s.command_in_type == UNITLESS:
            values = values * np.repeat([s.linear_scale, s.rotational_scale], 3)
        return self._take(twist=values, frame=frame, now=now)

    def joint_jog(self, command: JointJog, now: float | None = None) -> Answer:
        """Take a joint jog (see the module docstring for the refusals)."""
        names = tuple(command.names)
        use_velocity = len(command.velocities) > 0
        values = np.array(command.velocities if use_velocity else command.displacements,
                          dtype=float)
        what = 'velocities' if use_velocity else 'displacements'
        if not names or len(values) != len(names):
            return self._refuse(f'joint jog refused: {len(names)} joint names and '
                                f'{len(values)} {what} (give one value per name)')
        unknown = [n for n in names if n not in self._index]
        if unknown or len(set(names)) != len(names):
            detail = f'unknown joints {unknown}' if unknown else 'a joint named twice'
            return self._refuse(f'joint jog refused: {detail}; the joints are '
                                f'{", ".join(self.model.joint_names)}')
        answer = self._admit(CommandType.JOINT_JOG, values, f'joint jog {what}')
        if not answer.ok:
            return answer
        s = self._settings
        duration = float(command.duration)
        if not use_velocity:
            if not (math.isfinite(duration) and duration > 0):
                return self._refuse('joint jog refused: displacements need a duration > 0 s '
                                    f'(got {command.duration!r})')
            values = values / duration
        elif s.command_in_type == UNITLESS:
            values = values * s.joint_scale
        velocity = np.zeros(self.model.dof)
        velocity[[self._index[n] for n in names]] = values
        return self._take(joint=velocity, now=now,
                          life=None if use_velocity else duration)

    def _admit(self, kind: CommandType, values: np.ndarray, what: str) -> Answer:
        """The checks both kinds share: finite, in range, paused, the type in force."""
        if not np.all(np.isfinite(values)):
            return self._refuse(f'{what} refused: not finite ({values.tolist()}); nothing moves '
                                'for it')
        if self._settings.command_in_type == UNITLESS and np.any(np.abs(values) > 1.0) \
                and 'displacements' not in what:
            return self._refuse(f'{what} refused: a unitless command has components in '
                                f'[-1, 1], got {values.tolist()} (command_in_type speed_units '
                                'takes m/s and rad/s)')
        if self._paused:
            return self._refuse(f'{what} refused: servo is paused (unpause with pause_servo '
                                'false)')
        if self._type != kind and not self._any_type:
            return self._refuse(f'{what} refused: the command type in force is '
                                f'{self._type.name} (switch_command_type to {kind.name})')
        return Answer(True)

    def _refuse(self, message: str) -> Answer:
        with self._lock:
            self._status = (JogStatus.INVALID, message)
        return Answer(False, message)

    def _take(self, now: float | None, twist: np.ndarray | None = None, frame: str = '',
              joint: np.ndarray | None = None, life: float | None = None) -> Answer:
        now = self._clock() if now is None else now
        s = self._settings
        in_tool = bool(frame) and frame in (s.ee_frame, self.model.tip_link)
        with self._lock:
            self._twist, self._in_tool, self._command = twist, in_tool, joint
            self._until = now + max(s.timeout, life or 0.0)
            if self._status[0] == JogStatus.INVALID:
                self._status = (JogStatus.NO_WARNING, '')
        return Answer(True)

    # ------------------------------------------------------------------ the law
    def step(self, q: np.ndarray, dt: float) -> np.ndarray:
        """The pose ``dt`` s after ``q`` (rad): the follow law's step (one control tick)."""
        q = np.asarray(q, dtype=float)
        now = self._clock()
        with self._lock:
            s = self._settings
            # A late tick (a loaded machine) covers at most max_dt: the arm lags the stream
            # rather than leaping past a limit or a singularity in one step.
            dt = min(max(float(dt), 0.0), s.max_dt)
            live = now <= self._until and not self._paused
            twist, joint, in_tool = self._twist, self._command, self._in_tool
            if self._any_type and twist is not None and joint is not None:
                joint = None
            ramped = self._ramped.copy()
        if twist is not None and in_tool:
            # About the tool's origin in the tool's axes: rotated into the base frame's axes
            # at the pose of this tick, as MoveIt transforms it every cycle.
            rotation = self.model.fk(q)[:3, :3]
            twist = np.concatenate([rotation @ twist[:3], rotation @ twist[3:]])
        target = np.zeros(self.model.dof)
        if live and twist is not None:
            target = self._joint_velocity(q, twist, s)
        elif live and joint is not None:
            target = joint.copy()
        target = self._velocity_limited(target, s)
        # The ramp works on the commanded velocity before the safety scales: a scale that
        # falls with the distance to a limit then slows the arm as it says, not more slowly.
        ramped = self._ramp(ramped, target, s.acceleration * max(dt, 0.0))
        v, status = ramped, (JogStatus.NO_WARNING, '')
        if np.any(v != 0.0):
            # The rules of the last command's kind hold while it decelerates too: a twist
            # that times out near a singularity must not coast into it.
            v, status = self._safety(q, v, twist is not None, s, dt)
        # A joint the safety halted starts again from rest: a ramp kept at the command's
        # speed would leap to it the moment the halt lifts (a move turning away from a
        # singularity or a limit).
        ramped = np.where(v == 0.0, 0.0, ramped)
        with self._lock:
            self._ramped, self._v = ramped, v
            if self._status[0] != JogStatus.INVALID or np.any(v != 0.0):
                self._status = status
        return q + v * dt

    def _joint_velocity(self, q: np.ndarray, twist: np.ndarray, s: JogSettings) -> np.ndarray:
        """Damped least squares: the joint velocity whose tip twist is nearest ``twist``."""
        jacobian = self.model.jacobian(q)[self._rows]
        u, sigma, vt = np.linalg.svd(jacobian, full_matrices=False)
        gain = sigma / (sigma ** 2 + s.damping ** 2)
        return vt.T @ (gain * (u.T @ twist[self._rows]))

    def _velocity_limited(self, v: np.ndarray, s: JogSettings) -> np.ndarray:
        limits = self.model.velocity_limits * s.speed_scale
        ratio = float(np.max(np.abs(v) / limits)) if len(v) else 0.0
        return v / ratio if ratio > 1.0 else v

    @staticmethod
    def _ramp(v: np.ndarray, target: np.ndarray, change: float) -> np.ndarray:
        """``v`` moved towards ``target`` by at most ``change`` on the joint that changes most,
        the whole vector by the same fraction."""
        delta = target - v
        largest = float(np.max(np.abs(delta))) if len(delta) else 0.0
        if largest <= change:
            return target.copy()
        return v + delta * (change / largest)

    def condition(self, q: np.ndarray) -> float:
        """The condition number of the tip Jacobian (the rows the jog steers) at ``q``."""
        sigma = np.linalg.svd(self.model.jacobian(q)[self._rows], compute_uv=False)
        return float(sigma[0] / sigma[-1]) if sigma[-1] > 0 else math.inf

    def _safety(self, q: np.ndarray, v: np.ndarray, cartesian: bool, s: JogSettings,
                dt: float) -> tuple[np.ndarray, tuple[JogStatus, str]]:
        status = (JogStatus.NO_WARNING, '')
        scale = 1.0
        if cartesian:
            present = self.condition(q)
            ahead = self.condition(q + v / float(np.max(np.abs(v))) * PROBE)
            if ahead > present and present > s.lower_singularity:
                scale = (s.hard_singularity - present) / (s.hard_singularity
                                                          - s.lower_singularity)
                scale = 0.0 if scale < HALT_SCALE else scale
                code = JogStatus.HALT_FOR_SINGULARITY if scale == 0.0 else \
                    JogStatus.DECELERATE_FOR_APPROACHING_SINGULARITY
                status = (code, f'{"halting" if scale == 0.0 else "slowing down"} near a '
                          f'singularity: condition number {present:.1f} (lower '
                          f'{s.lower_singularity:g}, hard stop {s.hard_singularity:g})')
        v = v * scale
        if cartesian and scale > 0.0 and dt > 0:
            # The step itself must not cross the hard threshold (a long tick, a steep rise).
            after = self.condition(q + v * dt)
            if after >= s.hard_singularity and after > present:
                v = v * 0.0
                status = (JogStatus.HALT_FOR_SINGULARITY, f'halting at a singularity: the '
                          f'next step reaches condition number {after:.1f} (hard stop '
                          f'{s.hard_singularity:g})')
        factors = self._limit_factors(q, v, s)
        if np.any(factors < 1.0):
            names = [self.model.joint_names[i] for i in np.flatnonzero(factors < 1.0)]
            if cartesian or s.halt_all_joints_in_joint_mode:
                v = v * float(np.min(factors))
            else:
                v = v * factors
            halted = bool(np.all(v == 0.0)) or bool(np.any(factors == 0.0))
            if status[0] == JogStatus.NO_WARNING or halted:
                status = (JogStatus.JOINT_BOUND, f'{"halted" if halted else "slowing down"} '
                          f'near the limit of {", ".join(names)}')
        # No step ends past a margin, whatever the ramp did (the last step is cut there).
        if dt > 0:
            v = self._cut_at_margins(q, v, s, dt, cartesian)
        return v, status

    def _margins(self, s: JogSettings) -> np.ndarray:
        return np.broadcast_to(np.asarray(s.limit_margins, dtype=float), (self.model.dof,))

    def _room(self, q: np.ndarray, v: np.ndarray, s: JogSettings) -> np.ndarray:
        """Per joint, how far it may still go in the direction it moves before its margin."""
        margins = self._margins(s)
        up = self.model.upper - margins - q
        down = q - (self.model.lower + margins)
        return np.where(v > 0, up, np.where(v < 0, down, np.inf))

    def _limit_factors(self, q: np.ndarray, v: np.ndarray, s: JogSettings) -> np.ndarray:
        """1 farther than a margin from the halting point, 0 at it (and below HALT_SCALE of
        the way), linear between."""
        margins = np.maximum(self._margins(s), 1e-9)
        factors = np.clip(self._room(q, v, s) / margins, 0.0, 1.0)
        factors[factors < HALT_SCALE] = 0.0
        return factors

    def _cut_at_margins(self, q: np.ndarray, v: np.ndarray, s: JogSettings, dt: float,
                        together: bool) -> np.ndarray:
        room = np.maximum(self._room(q, v, s), 0.0)
        step = np.abs(v) * dt
        with np.errstate(divide='ignore', invalid='ignore'):
            fraction = np.where(step > room, room / step, 1.0)
        if together:
            return v * float(np.min(fraction))
        return v * fraction


def settings_from(values: dict, model: ArmModel) -> JogSettings:
    """JogSettings from the node's parameter values (``servo_node``'s table, no prefix)."""
    margins = tuple(float(m) for m in values['joint_limit_margins'])
    return replace(
        JogSettings(),
        timeout=float(values['incoming_command_timeout']),
        command_in_type=str(values['command_in_type']),
        linear_scale=float(values['scale.linear']),
        rotational_scale=float(values['scale.rotational']),
        joint_scale=float(values['scale.joint']),
        lower_singularity=float(values['lower_singularity_threshold']),
        hard_singularity=float(values['hard_stop_singularity_threshold']),
        limit_margins=margins,
        acceleration=float(values['acceleration']),
        damping=float(values['damping']),
        speed_scale=float(values['speed_scale']),
        halt_all_joints_in_joint_mode=bool(values['halt_all_joints_in_joint_mode']),
        planning_frame=str(values['planning_frame']) or model.base_link,
        ee_frame=str(values['ee_frame']) or model.tip_link)

