"""Compile every numba function of the core once, into numba's disk cache, after a build.

The FK/Jacobian kernel and the numeric IK loop are compiled on first use (their
constructors call them once) and cached next to their sources (``__pycache__``).
Compiling them all costs about 15 s of CPU on the project's 2-core machine; loading them
from the cache, under a second. ``make build`` runs this, so the first node or test after
a change does not pay it (nor several node processes at once, each compiling its own copy).

Run: ``python tools/warm_compiled.py`` in the environment the nodes use (after ``source
install/setup.bash``: the cache is kept per source path).
"""

from __future__ import annotations

import sys
import time

import numpy as np


def main() -> int:
    start = time.perf_counter()
    from arm_kinematics.description.bundled import description_dir, expand_xacro_file
    from arm_kinematics.ik.closed_form.families import ClosedFormSolver
    from arm_kinematics.ik.result import GoalType
    from arm_kinematics.ik.solvers.base import workspace_from_model
    from arm_kinematics.ik.solvers.dls import compile_step, DLSSolver
    from arm_kinematics.model.arm_model import ArmModel
    from arm_kinematics.motion.path_conditions import condition_numbers
    from arm_kinematics.motion.path_timing import _time_path
    from arm_kinematics.motion.whole_turns import whole_turn_copies

    # Any chain serves: the kernel and DLS are one compiled code for every arm.
    model = ArmModel.from_urdf(expand_xacro_file(description_dir() / 'urdf'
                                                 / 'irb2400_like.urdf.xacro'))
    q = 0.5 * (model.lower + model.upper) + 0.1
    kernel = model.kernel
    kernel.pose(q)
    kernel.pose_jacobian(q)
    kernel.joint_frames(q)
    kernel.joint_poses(q)
    kernel.fk(q)
    kernel.jacobian(q)
    kernel.fk_batch(np.array([q, q]))
    compile_step(6, model.dof)([0.0] * 6 * model.dof, [0.0] * 6, 1.0)
    workspace = workspace_from_model(model)
    target = model.fk(q)
    DLSSolver(model, workspace).solve(target[:3, 3], target[:3, :3], GoalType.FULL_POSE)
    closed_form = ClosedFormSolver(model, workspace)
    closed_form.solve(target[:3, 3], target[:3, :3], GoalType.FULL_POSE)
    closed_form.solve_all_poses(target[None, :3, 3], target[None, :3, :3], q)   # path IK
    whole_turn_copies(np.array([q]), np.array([q]), np.arange(model.dof), model.lower,
                      model.upper, 3.2)
    condition_numbers(model, 1.0, np.array([q]), GoalType.FULL_POSE, 100.0)
    _time_path(np.array([q, q + 0.1, q + 0.2]), np.ones(model.dof), True, 1.875, np.empty(3),
               np.zeros((3, model.dof)))
    print(f'warm_compiled: the compiled kernel and solvers are ready '
          f'({time.perf_counter() - start:.1f} s)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
