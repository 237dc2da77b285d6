"""numba is imported where the core computes with compiled code, not where it is merely
imported (issue 39: every node imported numba at start-up, 0.25 s and 100 MB, even
arm_info, markers and servo_bridge, which never solve). Run in a fresh interpreter: this
test process has imported numba long before."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, '-c', textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


@pytest.mark.parametrize('arm', ['pointer3', 'six_axis'])
def test_building_an_arm_imports_no_numba_and_a_solve_does(arm):
    out = _run(f"""
        import sys
        import numpy as np
        from arm_kinematics.arm import build_arm, load_config_chain
        from arm_kinematics.description.bundled import expand_xacro, load_arm_config
        import arm_kinematics.motion.planner, arm_kinematics.ik.request  # noqa: F401
        config = load_arm_config({arm!r})
        arm = build_arm(load_config_chain(expand_xacro({arm!r}), config).model, config)
        print('numba' in sys.modules, end=' ')
        q = arm.home + 0.1
        target = arm.model.fk(q)
        print('numba' in sys.modules, end=' ')
        from arm_kinematics.ik.request import IKRequest
        from arm_kinematics.ik.solvers.base import SolveOptions
        answer = arm.dispatcher().solve(IKRequest(position=target[:3, 3].tolist()),
                                        SolveOptions(), arm.home)
        print(answer.result.code.name)
    """)
    assert out == 'False True OK', out
