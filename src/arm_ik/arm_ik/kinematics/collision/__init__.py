"""Collision checking for any arm from its URDF ``<collision>`` geometry (ROS-free).

- ``CollisionChecker``: self-collision with an allowed-pairs list and a scene, per pose and
  along joint paths (``check``, ``is_free``, ``check_path``, ``max_link_motion``);
- ``Scene``: boxes, spheres, cylinders and meshes in the base frame (add, move, remove, YAML);
- ``compute_allowed_pairs``: adjacent, default (home), always and never pairs as plain data;
- ``plan_joint_path``: OMPL RRTConnect round the scene, validated densely (NO_PATH + reason);
- ``backend``: the one module that talks to the collision library (coal).
"""

from arm_ik.kinematics.collision.allowed import compute_allowed_pairs
from arm_ik.kinematics.collision.checker import (
    CollisionChecker,
    CollisionReport,
    Contact,
    PathCheck,
)
from arm_ik.kinematics.collision.config import CollisionConfig, CollisionConfigError
from arm_ik.kinematics.collision.planner import NO_PATH, plan_joint_path, PlanResult, SUCCESS
from arm_ik.kinematics.collision.scene import Scene, SceneError, SceneObject
from arm_ik.kinematics.collision.shapes import ShapeError

__all__ = ['CollisionChecker', 'CollisionConfig', 'CollisionConfigError', 'CollisionReport',
           'compute_allowed_pairs', 'Contact', 'NO_PATH', 'PathCheck', 'plan_joint_path',
           'PlanResult', 'Scene', 'SceneError', 'SceneObject', 'ShapeError', 'SUCCESS']
