"""``servo_calibrate``: calibrate an arm on serial-bus servos and write a validated file.

    ros2 run arm_ik servo_calibrate --urdf so101.urdf --port /dev/ttyACM0 \\
        --template so101.yaml --output my_so101.yaml

The routine (arm_servos.calibrate): torque off; put the arm in its zero pose as the URDF
defines it (Enter); move every joint through its range (Enter); the offsets and the measured
ranges (cut to the URDF limits) are written. Ids, models and directions come from
``--template`` (an existing calibration, e.g. the SO-101 example) or from ``--ids`` (chain
order, direction +1). ``--yes`` runs without prompts and sweeps for ``--sweep-seconds``
(tests, scripted setups).

An arm calibrated with LeRobot needs no second calibration: ``--from-lerobot FILE.json``
writes the project's file from LeRobot's (no port, nothing moves), and ``--template`` takes a
LeRobot file as it is::

    ros2 run arm_ik servo_calibrate --urdf so101.urdf \\
        --from-lerobot ~/.cache/huggingface/lerobot/calibration/robots/so101_follower/blue.json \\
        --output my_so101.yaml

``--return-delay 0`` instead writes Return_Delay_Time 0 into every servo of ``--template``
(or ``--ids``) and nothing else: each servo then replies at once, as LeRobot leaves its
arms, where the factory's 500 µs add 3 ms to every bus cycle (the bridge names such servos at
start-up). It is an EEPROM write: torque goes off and stays off, so support the arm::

    ros2 run arm_ik servo_calibrate --urdf so101.urdf --port /dev/ttyACM0 \\
        --template my_so101.yaml --return-delay 0

Exit status 0 on success, 2 on bad input (URDF, template, ids, a joint not moved, a servo not
answering), 1 when the port cannot be opened, the file cannot be written or a servo does not
hold the return delay written.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
import sys
import threading
import time
from typing import TypeVar

from arm_ik.arm_config import read_description
from arm_ik.command_line import EXIT_BAD_INPUT, UsageErrorParser
from arm_ik.servo_description import ServoArm
from arm_kinematics.model.arm_model import DescriptionError
from arm_servos.bus import BusError
from arm_servos.calibrate import calibrate, plans_from, ServoPlan
from arm_servos.calibration import CalibrationError, PROTOCOLS
from arm_servos.drivers import DRIVERS
from arm_servos.eeprom import MAX_RETURN_DELAY, SilentServosError, write_return_delays
from arm_servos.sdk_bus import SdkServoBus

EXIT_OK, EXIT_FAILED = 0, 1
T = TypeVar('T')


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = UsageErrorParser(
        prog='servo_calibrate', description='Calibrate serial-bus servos: torque off, zero '
        'pose, move every joint through its range; writes a calibration file checked against '
        'the URDF.')
    parser.add_argument('--urdf', required=True, help='URDF or .xacro file of the arm')
    parser.add_argument('--base', default='', help='root link of the chain (default: the '
                        "URDF's root)")
    parser.add_argument('--tip', default='', help='tool link of the chain (default: tool0 or '
                        'the deepest leaf)')
    parser.add_argument('--port', default='', help='serial device (e.g. /dev/ttyACM0, or '
                        "the simulated bus's link; required unless --from-lerobot)")
    parser.add_argument('--from-lerobot', default='', metavar='FILE.json',
                        help="a LeRobot calibration file: write the project's file from it "
                        '(no bus, nothing moves)')
    parser.add_argument('--joint-map', default='', help='with a LeRobot file: motor=joint,... '
                        "where LeRobot's motor names are not the URDF's joints (motor=- leaves "
                        'one out)')
    parser.add_argument('--template', default='', help='calibration whose ids, models and '
                        'directions to keep (e.g. the SO-101 example)')
    parser.add_argument('--ids', default='', help='servo ids in chain order, comma separated '
                        '(without --template)')
    parser.add_argument('--protocol', choices=PROTOCOLS, default='',
                        help='servo protocol (without --template; default feetech; for a '
                        'LeRobot file: from its folder name)')
    parser.add_argument('--baudrate', type=int, default=0,
                        help="bits/s (default: the template's, else 1000000)")
    parser.add_argument('--output', default='', help='calibration file to write (required '
                        'unless --return-delay)')
    parser.add_argument('--return-delay', type=int, default=None, metavar='UNITS',
                        help='write Return_Delay_Time UNITS (2 us each; 0: reply at once) into '
                        'every servo and exit; no calibration (EEPROM: torque goes off)')
    parser.add_argument('--yes', action='store_true', help='no prompts (scripted runs)')
    parser.add_argument('--sweep-seconds', type=float, default=10.0,
                        help='with --yes: how long to sample the sweep (default 10 s)')
    return parser.parse_args(argv)


def _plans(args: argparse.Namespace, arm: ServoArm, urdf: str) -> tuple[list, str, int]:
    if args.template:
        template = arm.load(args.template, urdf, args.joint_map, args.protocol)
        return (plans_from(template), template.protocol,
                args.baudrate or template.baudrate)
    if not args.ids:
        raise CalibrationError('--ids: give the servo ids in chain order, or --template')
    try:
        ids = [int(v) for v in args.ids.split(',')]
    except ValueError:
        raise CalibrationError(f'--ids: expected integers, got {args.ids!r}') from None
    if len(ids) != len(arm.chain):
        raise CalibrationError(f'--ids: {len(ids)} ids for the {len(arm.chain)} joints of the '
                               f'chain ({", ".join(arm.chain)})')
    protocol = args.protocol or 'feetech'
    model = 'sts3215' if protocol == 'feetech' else 'xl430-w250'
    plans = [ServoPlan(name, servo_id, model) for name, servo_id in zip(arm.chain, ids)]
    return plans, protocol, args.baudrate or 1_000_000


def _from_lerobot(args: argparse.Namespace) -> int:
    """Convert a LeRobot calibration file into the project's (nothing on the bus)."""
    try:
        urdf = read_description(args.urdf)
        arm = ServoArm.from_urdf(urdf, args.base, args.tip)
        result = arm.load(args.from_lerobot, urdf, args.joint_map, args.protocol)
    except (DescriptionError, CalibrationError) as error:
        print(f'servo_calibrate: {error}', file=sys.stderr)
        return EXIT_BAD_INPUT
    header = (f'Written by servo_calibrate from the LeRobot calibration {args.from_lerobot} and '
              f'{args.urdf} (chain {", ".join(arm.chain)}).\n'
              "offset: ticks at the URDF zero (the middle of LeRobot's range: its DEGREES "
              "mode); the gripper's range is LeRobot's 0..100;\nhoming_offset: what the "
              "servo's EEPROM must hold (checked on connect).")
    return _write(args.output, result.to_yaml(header), len(result.joints))


def _write(output: str, text: str, count: int) -> int:
    try:
        with open(output, 'w', encoding='utf-8') as stream:
            stream.write(text)
    except OSError as error:
        print(f'servo_calibrate: cannot write {output}: {error.strerror}', file=sys.stderr)
        return EXIT_FAILED
    print(f'servo_calibrate: wrote {output} ({count} joints)')
    return EXIT_OK


def _on_the_bus(bus: SdkServoBus, work: Callable[[], T],
                bad_input: tuple[type[Exception], ...], interrupted: str
                ) -> tuple[T | None, int | None]:
    """``work()`` with ``bus`` open, closed after it: (its result, None), or (None, the exit
    status) once the error is printed (``bad_input`` errors exit 2, the bus's 1)."""
    try:
        bus.open()
        return work(), None
    except bad_input as error:
        print(f'servo_calibrate: {error}', file=sys.stderr)
        return None, EXIT_BAD_INPUT
    except BusError as error:
        print(f'servo_calibrate: {error}', file=sys.stderr)
        return None, EXIT_FAILED
    except (KeyboardInterrupt, EOFError):
        print(f'servo_calibrate: {interrupted}', file=sys.stderr)
        return None, EXIT_FAILED
    finally:
        bus.close()


def _write_return_delay(args: argparse.Namespace, bus: SdkServoBus, plans: list[ServoPlan],
                        protocol: str) -> int:
    """Write Return_Delay_Time into every planned servo (torque off), then say what each
    holds."""
    def write() -> list[str]:
        if not args.yes:
            input(f'Torque goes off on servos {sorted(p.servo_id for p in plans)} and stays '
                  'off: support the arm, then press Enter ')
        return write_return_delays(bus, protocol, {p.name: p.servo_id for p in plans},
                                   args.return_delay)

    problems, status = _on_the_bus(bus, write, (SilentServosError,), 'interrupted')
    if status is not None:
        return status
    for problem in problems:
        print(f'servo_calibrate: {problem}', file=sys.stderr)
    if problems:
        return EXIT_FAILED
    print(f'servo_calibrate: Return_Delay_Time {args.return_delay} '
          f'({args.return_delay * 2} us) in servos {", ".join(str(p.servo_id) for p in plans)} '
          '(torque is off)')
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.from_lerobot:
        if not args.output or args.return_delay is not None:
            print('servo_calibrate: --from-lerobot needs --output and takes no --return-delay '
                  '(it writes a file; --return-delay writes the servos)', file=sys.stderr)
            return EXIT_BAD_INPUT
        return _from_lerobot(args)
    if not args.port:
        print('servo_calibrate: --port is required (unless --from-lerobot)', file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.return_delay is None and not args.output:
        print('servo_calibrate: --output is required (unless --return-delay)', file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.return_delay is not None and args.output:
        print('servo_calibrate: --return-delay writes the servos, not a file: leave out '
              '--output (or calibrate in a run of its own)', file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.return_delay is not None and not 0 <= args.return_delay <= MAX_RETURN_DELAY:
        print(f'servo_calibrate: --return-delay must be 0..{MAX_RETURN_DELAY} (units of 2 us), '
              f'got {args.return_delay}', file=sys.stderr)
        return EXIT_BAD_INPUT
    if not args.sweep_seconds > 0:
        print('servo_calibrate: --sweep-seconds must be > 0', file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        urdf = read_description(args.urdf)
        arm = ServoArm.from_urdf(urdf, args.base, args.tip)
        plans, protocol, baudrate = _plans(args, arm, urdf)
    except (DescriptionError, CalibrationError) as error:
        print(f'servo_calibrate: {error}', file=sys.stderr)
        return EXIT_BAD_INPUT
    # No cycle to keep here: wait longer for replies than the bridge does (also covers an
    # adapter left at a 16 ms USB latency timer).
    bus = DRIVERS[protocol](args.port, [p.servo_id for p in plans], baudrate=baudrate,
                            reply_timeout=0.05, cycle_budget=0.5)
    if args.return_delay is not None:
        return _write_return_delay(args, bus, plans, protocol)
    stop = threading.Event()
    if args.yes:
        deadline = time.monotonic() + args.sweep_seconds

        def ask(prompt: str) -> None:
            print(prompt + ' [--yes: going on]', flush=True)

        def sweeping() -> bool:
            return time.monotonic() < deadline
    else:
        def ask(prompt: str) -> None:
            input(prompt + ' ')
            if 'through its whole range' in prompt:
                threading.Thread(target=lambda: (input(), stop.set()), daemon=True).start()
                print('sampling... press Enter when every joint has been end to end',
                      flush=True)

        def sweeping() -> bool:
            return not stop.is_set()
    result, status = _on_the_bus(
        bus, lambda: calibrate(bus, plans, protocol, baudrate, arm.joints, arm.chain, ask,
                               lambda line: print(line, flush=True), sweeping),
        (CalibrationError,), 'interrupted, nothing written')
    if status is not None:
        return status
    header = (f'Written by servo_calibrate from {args.urdf} (chain {", ".join(arm.chain)}).\n'
              'offset: ticks at the URDF zero; range: measured travel cut to the URDF limits.')
    return _write(args.output, result.to_yaml(header), len(result.joints))


if __name__ == '__main__':
    sys.exit(main())
