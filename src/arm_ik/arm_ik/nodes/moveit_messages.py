"""moveit_msgs <-> the move_group core's plain values (arm_kinematics.moveit).

Only conversions: every decision is in the core. A value a message cannot carry (NaN in a
pose) passes through unchanged so that the core refuses it with MoveIt's code and words.
"""

from __future__ import annotations

from collections.abc import Sequence

from geometry_msgs.msg import Point, Pose, PoseStamped, Quaternion
from moveit_msgs.msg import (
    AttachedCollisionObject,
    CollisionObject,
    Constraints,
    MoveItErrorCodes,
    PlanningSceneComponents,
    RobotState,
    RobotTrajectory,
)
import numpy as np
from shape_msgs.msg import Mesh as MeshMessage
from shape_msgs.msg import MeshTriangle, SolidPrimitive
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from arm_ik.nodes.conversions import duration
from arm_kinematics.common.transforms import (
    make_transform,
    matrix_to_quaternion,
    quaternion_to_matrix,
)
from arm_kinematics.motion.trajectory import Trajectory
from arm_kinematics.moveit import codes
from arm_kinematics.moveit.codes import Answer
from arm_kinematics.moveit.kinematics import JointBound
from arm_kinematics.moveit.plan import GoalSet, OrientationGoal, PositionGoal
from arm_kinematics.moveit.scene_diff import (
    CollisionObjectSpec,
    Mesh,
    Primitive,
    PRIMITIVE_KINDS,
)

KIND_CODES = {kind: code for code, kind in PRIMITIVE_KINDS.items()}
SOURCE = 'move_group (arm_kinematics)'


def fill_code(message: MoveItErrorCodes, answer: Answer) -> MoveItErrorCodes:
    """MoveIt's code and, where the type has them (moveit_msgs 2.5+), the words and source."""
    message.val = int(answer.code)
    if hasattr(message, 'message'):
        message.message = answer.message or codes.code_name(answer.code)
    if hasattr(message, 'source'):
        message.source = SOURCE
    return message


def code_message(answer: Answer) -> MoveItErrorCodes:
    return fill_code(MoveItErrorCodes(), answer)


def xyz(point: object) -> tuple[float, float, float]:
    return (float(point.x), float(point.y), float(point.z))


def xyzw(quaternion: Quaternion) -> tuple[float, float, float, float]:
    return (float(quaternion.x), float(quaternion.y), float(quaternion.z),
            float(quaternion.w))


def matrix_of(pose: Pose) -> np.ndarray:
    """4×4 of a Pose; an all-zero quaternion (an unset Pose) is the identity, as MoveIt
    reads object poses. Non-finite values stay (the core refuses them)."""
    q = xyzw(pose.orientation)
    if q == (0.0, 0.0, 0.0, 0.0):
        q = (0.0, 0.0, 0.0, 1.0)
    norm = float(np.linalg.norm(q)) or 1.0
    if not np.all(np.isfinite(q)):
        matrix = np.full((4, 4), np.nan)
        return matrix
    return make_transform(quaternion_to_matrix(*(np.asarray(q) / norm)),
                          np.asarray(xyz(pose.position)))


def pose_of(matrix: np.ndarray) -> Pose:
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = (float(v) for v in matrix[:3, 3])
    x, y, z, w = matrix_to_quaternion(matrix[:3, :3])
    pose.orientation = Quaternion(x=float(x), y=float(y), z=float(z), w=float(w))
    return pose


def pose_stamped(frame: str, position: Sequence[float], orientation: Sequence[float],
                 stamp: object) -> PoseStamped:
    message = PoseStamped()
    message.header.frame_id = frame
    message.header.stamp = stamp
    message.pose.position = Point(x=float(position[0]), y=float(position[1]),
                                  z=float(position[2]))
    message.pose.orientation = Quaternion(x=float(orientation[0]), y=float(orientation[1]),
                                          z=float(orientation[2]), w=float(orientation[3]))
    return message


def state_values(state: RobotState) -> tuple[list[str], list[float]]:
    """Joint names and positions of a RobotState (empty: the current state)."""
    return list(state.joint_state.name), [float(v) for v in state.joint_state.position]


def robot_state(names: Sequence[str], q: np.ndarray, stamp: object,
                attached: Sequence[AttachedCollisionObject] = ()) -> RobotState:
    state = RobotState()
    state.joint_state.header.stamp = stamp
    state.joint_state.name = list(names)
    state.joint_state.position = [float(v) for v in q]
    state.attached_collision_objects = list(attached)
    return state


def joint_bounds(constraints: Sequence) -> list[JointBound]:
    return [JointBound(c.joint_name, float(c.position), float(c.tolerance_above),
                       float(c.tolerance_below)) for c in constraints]


def goal_set(constraints: Constraints) -> GoalSet | Answer:
    """One Constraints message as a goal set, or why it cannot be one."""
    positions = []
    for c in constraints.position_constraints:
        volume = c.constraint_region
        target, tolerance = (0.0, 0.0, 0.0), 1e-3
        if volume.primitive_poses:
            target = xyz(volume.primitive_poses[0].position)
        elif volume.mesh_poses:
            target = xyz(volume.mesh_poses[0].position)
        if volume.primitives:
            primitive = volume.primitives[0]
            dims = list(primitive.dimensions)
            if dims:
                tolerance = float(min(dims)) / (1.0 if primitive.type == SolidPrimitive.SPHERE
                                                else 2.0)
        positions.append(PositionGoal(c.link_name, c.header.frame_id, target, tolerance,
                                      xyz(c.target_point_offset)))
    orientations = [OrientationGoal(c.link_name, c.header.frame_id, xyzw(c.orientation),
                                    (float(c.absolute_x_axis_tolerance),
                                     float(c.absolute_y_axis_tolerance),
                                     float(c.absolute_z_axis_tolerance)))
                    for c in constraints.orientation_constraints]
    return GoalSet(constraints.name, joint_bounds(constraints.joint_constraints), positions,
                   orientations, len(constraints.visibility_constraints))


def constraint_count(constraints: Constraints) -> int:
    return (len(constraints.joint_constraints) + len(constraints.position_constraints)
            + len(constraints.orientation_constraints)
            + len(constraints.visibility_constraints))


# ---------------------------------------------------------------------- trajectories
def joint_trajectory(trajectory: Trajectory, stamp: object = None) -> JointTrajectory:
    message = JointTrajectory()
    if stamp is not None:
        message.header.stamp = stamp
    message.joint_names = list(trajectory.joint_names)
    accelerations = np.gradient(trajectory.velocities, trajectory.times, axis=0) \
        if len(trajectory) > 2 else np.zeros_like(trajectory.velocities)
    for index in range(len(trajectory)):
        message.points.append(JointTrajectoryPoint(
            positions=trajectory.positions[index].tolist(),
            velocities=trajectory.velocities[index].tolist(),
            accelerations=accelerations[index].tolist(),
            time_from_start=duration(float(trajectory.times[index]))))
    return message


def robot_trajectory(trajectory: Trajectory) -> RobotTrajectory:
    message = RobotTrajectory()
    message.joint_trajectory = joint_trajectory(trajectory)
    return message


# ---------------------------------------------------------------------- the scene
def object_spec(message: CollisionObject) -> CollisionObjectSpec:
    """A CollisionObject as plain values; shapes the checker does not have (planes) are
    counted so the core can refuse them by name."""
    primitives = []
    for index, primitive in enumerate(message.primitives):
        pose = message.primitive_poses[index] if index < len(message.primitive_poses) \
            else Pose()
        primitives.append(Primitive(PRIMITIVE_KINDS.get(primitive.type, f'type {primitive.type}'),
                                    tuple(float(d) for d in primitive.dimensions),
                                    matrix_of(pose)))
    if message.planes:
        primitives.append(Primitive('plane', ()))
    meshes = []
    for index, mesh in enumerate(message.meshes):
        pose = message.mesh_poses[index] if index < len(message.mesh_poses) else Pose()
        meshes.append(Mesh(np.array([xyz(v) for v in mesh.vertices], dtype=float).reshape(-1, 3),
                           np.array([list(t.vertex_indices) for t in mesh.triangles],
                                    dtype=np.int64).reshape(-1, 3),
                           matrix_of(pose)))
    return CollisionObjectSpec(message.id, message.header.frame_id, matrix_of(message.pose),
                               int.from_bytes(message.operation, 'little')
                               if isinstance(message.operation, bytes)
                               else int(message.operation),
                               tuple(primitives), tuple(meshes))


def object_message(spec: CollisionObjectSpec, geometry: bool = True) -> CollisionObject:
    """A stored object (base or link frame) as a CollisionObject (ADD)."""
    message = CollisionObject()
    message.id = spec.id
    message.header.frame_id = spec.frame_id
    message.pose = pose_of(spec.pose)
    message.operation = CollisionObject.ADD
    if not geometry:
        return message
    for primitive in spec.primitives:
        message.primitives.append(SolidPrimitive(
            type=KIND_CODES.get(primitive.kind, 0),
            dimensions=[float(d) for d in primitive.dimensions]))
        message.primitive_poses.append(pose_of(primitive.pose))
    for mesh in spec.meshes:
        shape = MeshMessage()
        shape.vertices = [Point(x=float(v[0]), y=float(v[1]), z=float(v[2]))
                          for v in mesh.vertices]
        shape.triangles = [MeshTriangle(vertex_indices=[int(i) for i in t])
                           for t in mesh.triangles]
        message.meshes.append(shape)
        message.mesh_poses.append(pose_of(mesh.pose))
    return message


def attached_message(link: str, spec: CollisionObjectSpec, touch_links: Sequence[str],
                     geometry: bool = True) -> AttachedCollisionObject:
    message = AttachedCollisionObject()
    message.link_name = link
    message.object = object_message(spec, geometry)
    message.touch_links = list(touch_links)
    return message


def wants(components: int, bit: int) -> bool:
    """Whether a GetPlanningScene request asks for component ``bit`` (0: everything)."""
    return components == 0 or bool(components & bit)


COMPONENTS = PlanningSceneComponents
