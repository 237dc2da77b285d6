"""Sanity checks of an arm model that parsing alone does not catch (RELIABILITY case 24).

A URDF can be well-formed and still describe an arm no solver can use: a link of zero length
makes two joints turn about the same axis through the same point (one of them moves nothing),
and a tool frame on the last joint's origin leaves that joint without a lever. The reach
rules and the analytic solvers divide by such lengths, so the nodes refuse to start instead.
"""

from __future__ import annotations

import numpy as np

from arm_kinematics.model.arm_model import ArmModel

# Closer than this (m) is the same point; far below any real link, far above rounding.
MIN_LINK_LENGTH = 1e-6
# |cos| of the angle between two axes above this is parallel.
PARALLEL_COS = 1.0 - 1e-9


def zero_length_reason(model: ArmModel) -> str:
    """'' when every link of the chain has a length that matters, else which one does not.

    Two joints at one point are fine when their axes differ (a spherical wrist); with
    parallel axes the link between them has zero length. The tip must lie away from the last
    joint's origin.
    """
    origins, axes, tip = model.joint_origins_and_axes(np.zeros(model.dof))
    for k in range(model.dof - 1):
        gap = float(np.linalg.norm(origins[k + 1] - origins[k]))
        parallel = abs(float(np.dot(axes[k], axes[k + 1]))) > PARALLEL_COS
        if gap < MIN_LINK_LENGTH and parallel:
            return (f'the link from joint "{model.joint_names[k]}" to joint '
                    f'"{model.joint_names[k + 1]}" has zero length ({gap:.3g} m) and both '
                    'turn about the same axis: check the joint origins')
    gap = float(np.linalg.norm(tip - origins[-1]))
    if gap < MIN_LINK_LENGTH:
        return (f'the link from joint "{model.joint_names[-1]}" to the tip '
                f'"{model.tip_link}" has zero length ({gap:.3g} m): check the tip joint origin')
    return ''
