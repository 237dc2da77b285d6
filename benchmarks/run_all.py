"""Run every benchmark in this folder in turn; each merges its figures into bench_results.json.

Usage: python benchmarks/run_all.py [--quick]
"""

from __future__ import annotations

import argparse
from pathlib import Path
import subprocess
import sys

HERE = Path(__file__).resolve().parent
# Order: the core first (fast; our arms, then real arms' URDFs against TRAC-IK, then the
# closed-form families against their compiled peers), then the
# safety geometry and the collision checker, then the ROS services over DDS and case 13's
# burst against ik_server, then path
# and batch IK (core lines, then ~/ik/batch against ~/solve_ik over DDS), the live follow,
# the latency the FollowJointTrajectory action adds over the topic route, the servo
# bridge on the simulated bus, teleoperation (leader to follower) on two of them,
# move_group's round trips against the project's own services, and what idle nodes cost.
SCRIPTS = ('bench_ik.py', 'bench_urdf_arms.py', 'bench_families.py', 'bench_safety.py',
           'bench_collision.py', 'bench_services.py', 'bench_burst.py', 'bench_motion.py',
           'bench_paths.py', 'bench_follow.py', 'bench_controller_action.py', 'bench_servos.py',
           'bench_teleop.py', 'bench_move_group.py', 'bench_idle.py')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='smaller samples, for smoke runs')
    parser.add_argument('--only', action='append', choices=SCRIPTS, metavar='SCRIPT',
                        help=f'run only this benchmark (repeatable): one of {", ".join(SCRIPTS)}')
    args = parser.parse_args(argv)
    failures = []
    for script in args.only or SCRIPTS:
        path = HERE / script
        if not path.exists():
            continue
        print(f'\n=== {script} ===', flush=True)
        command = [sys.executable, str(path)] + (['--quick'] if args.quick else [])
        if subprocess.run(command, check=False).returncode != 0:
            failures.append(script)
    if failures:
        print(f'\nbenchmarks that failed: {", ".join(failures)}', file=sys.stderr)
        return 1
    print(f'\nfigures written to {HERE.parent / "bench_results.json"}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
