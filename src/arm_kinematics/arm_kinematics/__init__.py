"""arm_kinematics: the ROS-free core of the arm pipeline.

Every rule and formula lives here, laid out as the data flows (docs/ARCHITECTURE.md):
``common`` → ``model`` (the chain: FK, Jacobians, limits) → ``description`` (the arm
configuration beside the URDF) → ``scene`` (floor, obstacles, collision) → ``ik`` (requests,
solvers, closed forms) → ``arm`` (the arm as one value) → ``motion`` (planners, path IK, motion
laws, the executor's decisions) → ``tasks``; ``visual`` and ``analysis`` on top, and the
front door over them all (``front``: ``from arm_kinematics import Arm``). Each layer
imports only the ones before it, and nothing here imports rclpy or a message package, so the
whole core is used and tested without ROS.
"""

from typing import Any

# The front door (front/), imported on first use: ``import arm_kinematics`` stays light
# (no numba, coal or OMPL) for the nodes and tools that import one module of the core.
_FRONT = ('Arm', 'CheckVerdict', 'IKBranches', 'IKSolution', 'MotionPlan', 'PathAnswer', 'Pose',
          'Solution')
__all__ = list(_FRONT)


def __getattr__(name: str) -> Any:
    if name in _FRONT:
        from arm_kinematics import front
        return getattr(front, name)
    raise AttributeError(f'module "arm_kinematics" has no attribute "{name}"')
