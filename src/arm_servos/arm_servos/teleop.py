"""Leader-follower teleoperation, ROS-free: the leader's joints mapped onto the follower's,
and when the follower must hold instead (RELIABILITY 44).

The leader is a second arm moved by hand, its bridge in the leader role (torque never on,
reads only); its joint_states are already in radians through the leader's calibration. The
follower's bridge turns radians into ticks through the follower's calibration and applies all
of its own safety rules (range, rate limit, e-stop). Between the two:

* :class:`JointMap`: arm joints by name, angle for angle, cut to the follower's calibrated
  range (the clipped joints are named); the gripper's calibrated range on the leader mapped
  linearly onto the gripper's range on the follower (a leader's handle travels differently).
* :func:`controller_order`: the follower bridge's own joint order (its ``controller_joints``)
  is the order of what teleop sends, by name; a bridge driving another set of joints is
  refused naming both lists (two files with the same joints in another order never send one
  joint's angle to another).
* :class:`Teleop`: the rules. It follows only after :meth:`Teleop.resume`; it holds (the
  node asks the follower's bridge to hold at its own measured position, then sends nothing)
  when the leader goes silent for ``silent_timeout`` (unplugged, its bridge stopped), when a
  leader joint moves more between two readings than ``max_leader_speed`` allows (a glitch, a
  swapped servo, a wrong calibration: never passed on), on a reading with NaN or a missing
  joint, when the follower's joint_states go stale or its bridge leaves ``enabled`` (a fault,
  its own e-stop), on an e-stop, or on request; and it stays held until the next
  :meth:`Teleop.resume`, which is refused while the e-stop is latched, while the follower is
  stale or not enabled, and while the leader is more than ``resume_tolerance`` from the
  follower's measured pose (naming the joints: the operator brings the leader to the
  follower first). The bridge covers the rest at its slow ``approach_velocity``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math

from arm_servos.calibration import Calibration
from arm_servos.safety import Outcome

STATES = ('waiting', 'following', 'held')


@dataclass(frozen=True)
class TeleopConfig:
    """Limits of the rules (validated on construction).

    Attributes:
        silent_timeout: s without a leader reading before the follower holds.
        max_leader_speed: rad/s a leader joint may move by hand; more between two readings
            (over the time between their stamps, at most ``silent_timeout``) is a jump,
            and the follower holds.
        jump_margin: rad added to ``max_leader_speed · dt`` (encoder noise, stamp jitter).
        gripper: the gripper joint's name on both arms ('' when there is none).
        resume_tolerance: rad a joint of the mapped leader pose may be from the follower's
            measured pose for :meth:`Teleop.resume` to follow.
        follower_timeout: s without a follower reading before the follower holds.
    """

    silent_timeout: float = 0.1
    max_leader_speed: float = 8.0
    jump_margin: float = 0.05
    gripper: str = 'gripper'
    resume_tolerance: float = 0.2
    follower_timeout: float = 0.25

    def __post_init__(self) -> None:
        for name in ('silent_timeout', 'max_leader_speed', 'resume_tolerance',
                     'follower_timeout'):
            value = getattr(self, name)
            if isinstance(value, bool) or not value > 0 or not math.isfinite(value):
                raise ValueError(f'{name} must be a finite number > 0, got {value!r}')
        if not self.jump_margin >= 0 or not math.isfinite(self.jump_margin):
            raise ValueError(f'jump_margin must be a finite number >= 0, '
                             f'got {self.jump_margin!r}')


def controller_order(own: Sequence[str], bridge: Sequence[str]) -> tuple[str, ...]:
    """The follower bridge's joint order (``bridge``, its ``controller_joints``) when it
    drives the same joints as teleop's own files say (``own``); ValueError in one line naming
    both lists when not."""
    if set(own) != set(bridge) or len(set(bridge)) != len(bridge):
        raise ValueError(f"the follower bridge's controller joints {list(bridge)} are not "
                         f"teleop's {list(own)} (follower_calibration, base_frame and "
                         "tip_frame must be the bridge's)")
    return tuple(bridge)


class JointMap:
    """The leader's joint angles as the follower's (see the module docstring).

    Args:
        leader: the leader's calibration (its ranges; its bridge already applied the rest).
        follower: the follower's calibration.
        joints: the follower joints to drive, in the order of its ``~/commands``.
        gripper: the gripper joint's name ('' for none).
    """

    def __init__(self, leader: Calibration, follower: Calibration, joints: Sequence[str],
                 gripper: str = 'gripper') -> None:
        self.joints = tuple(joints)
        missing = [n for n in self.joints if n not in leader.names]
        if missing:
            raise ValueError(f'the leader calibration has no joint {", ".join(missing)} '
                             f'(it has {", ".join(leader.names)})')
        unknown = [n for n in self.joints if n not in follower.names]
        if unknown:
            raise ValueError(f'the follower calibration has no joint {", ".join(unknown)}')
        self.leader = {n: leader.joint(n) for n in self.joints}
        self.follower = {n: follower.joint(n) for n in self.joints}
        self.gripper = gripper if gripper in self.joints else ''

    def follower_positions(self, leader: Mapping[str, float]
                           ) -> tuple[tuple[float, ...], tuple[str, ...]]:
        """(the follower's target per joint in order, the joints cut to the follower's range).
        ``leader`` must hold every joint with a finite value (:meth:`Teleop.leader` checks)."""
        targets, clipped = [], []
        for name in self.joints:
            value = float(leader[name])
            follower = self.follower[name]
            if name == self.gripper:
                source = self.leader[name]
                span = source.upper - source.lower
                fraction = (value - source.lower) / span if span > 0 else 0.0
                value = follower.lower + fraction * (follower.upper - follower.lower)
            if not follower.lower <= value <= follower.upper:
                value = min(max(value, follower.lower), follower.upper)
                if name != self.gripper:
                    clipped.append(name)
            targets.append(value)
        return tuple(targets), tuple(clipped)


@dataclass(frozen=True)
class Decision:
    """What the node does with one leader reading or one check.

    Attributes:
        command: the follower's targets, controller order, to send now (None: send nothing).
        hold: True once, when the follower must hold now (the node asks the follower's
            bridge to hold at its own measured position); ``reason`` says why.
    """

    command: tuple[float, ...] | None = None
    hold: bool = False
    reason: str = ''
    clipped: tuple[str, ...] = ()


class Teleop:
    """The rules of one leader-follower pair (see the module docstring)."""

    def __init__(self, mapping: JointMap, config: TeleopConfig | None = None) -> None:
        self.mapping = mapping
        self.config = config or TeleopConfig()
        self.state = 'waiting'
        self.reason = 'waiting for a resume request'
        self._last: dict[str, float] | None = None
        self._last_stamp: float | None = None
        self._last_received: float | None = None
        self.measured: dict[str, float] = {}       # the follower's, from its joint_states
        self._follower_received: float | None = None
        self.follower_status = ''                  # its bridge's ~/state ('' unknown)
        self.estopped = False
        self.commands = 0
        self.holds = 0

    def leader(self, names: Sequence[str], positions: Sequence[float], stamp: float,
               now: float) -> Decision:
        """One leader reading (``stamp``: its time, s; ``now``: when it arrived, monotonic)."""
        reading = dict(zip(names, positions))
        previous, previous_stamp = self._last, self._last_stamp
        self._last_received = now
        problem = self._reading_problem(reading)
        if problem:
            self._last = None
            return self._hold(problem)
        self._last, self._last_stamp = reading, stamp
        if self.state != 'following':
            return Decision()
        if previous is not None and previous_stamp is not None:
            # The time between the two readings as the leader's bridge stamped them: the hand
            # could move the leader that long, also when readings in between were dropped (a
            # loaded machine; two periods were allowed before, and a stall of 160 ms held a
            # follower that a hand moved at 0.7 rad/s). Capped at silent_timeout: a longer gap
            # is silence, and it never widens the allowance further.
            gap = max(0.0, stamp - previous_stamp)
            dt = min(gap, self.config.silent_timeout)
            allowed = self.config.max_leader_speed * dt + self.config.jump_margin
            for name in self.mapping.joints:
                step = abs(reading[name] - previous[name])
                if step > allowed:
                    return self._hold(
                        f'leader joint {name} jumped {step:.3f} rad in {gap * 1e3:.1f} ms '
                        f'(at most {allowed:.3f} rad: {self.config.max_leader_speed:g} rad/s '
                        f'+ {self.config.jump_margin:g} rad)')
        command, clipped = self.mapping.follower_positions(reading)
        self.commands += 1
        return Decision(command=command, clipped=clipped)

    def _reading_problem(self, reading: Mapping[str, float]) -> str:
        missing = [n for n in self.mapping.joints if n not in reading]
        if missing:
            return f'leader reading lacks {", ".join(missing)}'
        bad = [n for n in self.mapping.joints
               if not isinstance(reading[n], (int, float)) or not math.isfinite(reading[n])]
        if bad:
            return f'leader reading is not finite for {", ".join(bad)}'
        return ''

    def follower(self, names: Sequence[str], positions: Sequence[float], now: float) -> None:
        """One follower reading (its bridge's joint_states; ``now`` monotonic)."""
        self.measured.update(zip(names, positions))
        self._follower_received = now

    def follower_state(self, status: str) -> Decision:
        """The follower bridge's ``~/state``: anything but 'enabled' holds a following
        teleop (waiting or held, resume says why it is refused)."""
        self.follower_status = status
        if status != 'enabled' and self.state == 'following':
            return self._hold(f'the follower is {status}')
        return Decision()

    def estop(self, latched: bool) -> Decision:
        """The emergency_stop topic: true holds and latches until it says false."""
        self.estopped = latched
        return self._hold('emergency stop') if latched else Decision()

    def check(self, now: float) -> Decision:
        """Called on a timer: a leader silent for ``silent_timeout``, or follower readings
        older than ``follower_timeout``, hold the follower."""
        if self.state != 'following':
            return Decision()
        silent = math.inf if self._last_received is None else now - self._last_received
        if silent > self.config.silent_timeout:
            self._last = None
            return self._hold(f'leader silent for {silent:.2f} s (unplugged or stopped?)'
                              if math.isfinite(silent) else 'no leader reading')
        stale = self._follower_stale(now)
        if stale:
            return self._hold(stale)
        return Decision()

    def _follower_stale(self, now: float) -> str:
        if self._follower_received is None:
            return 'no follower joint_states'
        age = now - self._follower_received
        if age > self.config.follower_timeout:
            return f'follower joint_states silent for {age:.2f} s'
        return ''

    def hold(self, reason: str) -> Decision:
        """Hold on request (an e-stop, the operator)."""
        return self._hold(reason)

    def _hold(self, reason: str) -> Decision:
        if self.state == 'held' and self.reason == reason:
            return Decision()
        was_following = self.state == 'following'
        self.state, self.reason = 'held', reason
        if was_following:
            self.holds += 1
        return Decision(hold=was_following, reason=reason)

    def resume(self, now: float) -> Outcome:
        """Follow again, from the next leader reading on; refused with the reason (see the
        module docstring)."""
        refusal = self._resume_refusal(now)
        if refusal:
            return Outcome(False, f'cannot resume: {refusal}'
                           + (f' (held: {self.reason})' if self.state == 'held' else ''))
        self.state, self.reason = 'following', ''
        return Outcome(True, 'following the leader')

    def _resume_refusal(self, now: float) -> str:
        if self.estopped:
            return 'the emergency stop is latched'
        if self.follower_status != 'enabled':
            return (f'the follower is {self.follower_status}' if self.follower_status
                    else "no state from the follower's bridge yet")
        if self._last is None or self._last_received is None or \
                now - self._last_received > self.config.silent_timeout:
            return 'no fresh leader reading'
        stale = self._follower_stale(now)
        if stale:
            return stale
        targets, _ = self.mapping.follower_positions(self._last)
        missing = [n for n in self.mapping.joints if n not in self.measured]
        if missing:
            return f'no follower reading of {", ".join(missing)}'
        far = [(n, abs(t - self.measured[n])) for n, t in zip(self.mapping.joints, targets)
               if abs(t - self.measured[n]) > self.config.resume_tolerance]
        if far:
            return ('the leader is ' + ', '.join(f'{d:.2f} rad from the follower at {n}'
                                                 for n, d in far)
                    + f' (more than resume_tolerance {self.config.resume_tolerance:g} rad): '
                    "bring the leader to the follower's pose first")
        return ''
