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


def test_a_six_joint_family_is_recognised_and_pose_metrics_drawn_without_numba():
    # arm_info and arm_config recognise a UR5's closed-form family, and markers and the lab
    # draw pose metrics for every joint state: none of them solves (an import hook counted
    # arm_info, markers and lab_viewer loading numba in one make test run).
    from arm_testing.real_arms import REAL_ARMS
    out = _run(f"""
        import sys
        import numpy as np
        from arm_kinematics import Arm
        from arm_kinematics.visual.arm_visual import pose_metrics
        arm = Arm.from_urdf({str(REAL_ARMS['ur5'].path)!r}, 'base_link', 'tool0')
        q = np.array([0.3, -1.2, 1.1, -0.4, 0.9, 0.2])
        metrics = pose_metrics(arm.model, arm.workspace, q)
        print(arm.default_solver, 'numba' in sys.modules, end=' ')
        jacobian = arm.model.jacobian(q)          # the kernel's, for the same figures
        assert np.allclose(metrics.tip, arm.model.fk(q)[:3, 3], atol=1e-12)
        from arm_kinematics.ik.metrics import condition_number, manipulability
        assert abs(metrics.manipulability - manipulability(jacobian)) < 1e-12
        assert abs(metrics.condition_number - condition_number(jacobian)) < 1e-9
        print('numba' in sys.modules)
    """)
    assert out == 'closed_form False True', out
