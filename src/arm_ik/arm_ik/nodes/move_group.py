"""move_group: MoveIt's move_group interface served by this project's core, unchanged clients.

Serves, with move_group's names in the namespace it starts in (relative names):
  services compute_ik (GetPositionIK), compute_fk (GetPositionFK), compute_cartesian_path
  (GetCartesianPath), plan_kinematic_path (GetMotionPlan), get_planning_scene,
  apply_planning_scene; actions move_action (MoveGroup: plan_only or plan and execute) and
  execute_trajectory (ExecuteTrajectory, cancel included); topics collision_object,
  attached_collision_object, trajectory_execution_event ("stop"); parameters
  robot_description and robot_description_semantic (what pymoveit2's RobotDescription and
  MoveIt clients read).
Publishes scene (arm_interfaces/Scene, latched): the world objects, so trajectory_executor
checks every trajectory against the same scene. Subscribes joint_states (the current state).
Executes through trajectory_executor (parameter ``executor``; move_group_execution says why
and the policy for a goal while another executes).

Every decision is in arm_kinematics.moveit (one capability class per file); this node converts
messages (moveit_messages) and answers with MoveIt's error codes and the project's words in
the code's message field and the log. Requests are answered one at a time (one collision
checker, one scene): a plan never sees half a scene update.
"""

from __future__ import annotations

import sys
import threading

from moveit_msgs.action import ExecuteTrajectory, MoveGroup
from moveit_msgs.msg import PlanningScene
from moveit_msgs.srv import (
    ApplyPlanningScene,
    GetCartesianPath,
    GetMotionPlan,
    GetPlanningScene,
    GetPositionFK,
    GetPositionIK,
)
import numpy as np
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from arm_ik.nodes import moveit_messages as mm
from arm_ik.nodes.common import (
    arm_of,
    declare_arm_model,
    declare_mesh_search_paths,
    declare_parameters,
    LATCHED_QOS,
    run,
    StartupError,
)
from arm_ik.nodes.conversions import seconds_of
from arm_ik.nodes.motion_messages import points_from_message
from arm_ik.nodes.move_group_execution import ExecutionLink
from arm_ik.nodes.parameters import Param, ParameterTable
from arm_ik.nodes.scene_messages import scene_message
from arm_interfaces.msg import Scene as SceneMessage
from arm_kinematics.common.joint_state import positions_by_name
from arm_kinematics.motion import worker
from arm_kinematics.motion.commands import trajectory_from_points
from arm_kinematics.motion.safety_check import SceneData
from arm_kinematics.motion.trajectory import Trajectory
from arm_kinematics.moveit import codes
from arm_kinematics.moveit.attached import arm_with_attached
from arm_kinematics.moveit.cartesian import CartesianCapability, CartesianQuery
from arm_kinematics.moveit.codes import Answer
from arm_kinematics.moveit.kinematics import IKQuery, KinematicsCapability
from arm_kinematics.moveit.plan import PlanCapability, PlanQuery
from arm_kinematics.moveit.robot import MoveItRobot, served_srdf, with_allowed_pairs
from arm_kinematics.moveit.scene_diff import ADD, PlanningSceneState, REMOVE
from arm_kinematics.moveit.srdf import read_srdf, SRDFError

EXECUTOR_THREADS = 8
PARAMETERS = ParameterTable(
    Param('group_name', '', "the group's name without an SRDF; empty: the configuration's "
          'moveit.group, else "arm"', read_only=True),
    Param('executor', 'trajectory_executor',
          'the trajectory_executor node that executes (relative to this namespace)',
          read_only=True),
)
SEMANTIC = ParameterTable(
    Param('robot_description_semantic', '',
          'SRDF of the robot (groups, group states, end effectors, disabled collisions), read '
          'at start-up; without groups the chain is added as one group with the named state '
          '"home" and the parameter then holds that SRDF (what clients read)'))


class MoveGroupNode(Node):
    """The move_group host: capabilities of the core behind MoveIt's interfaces."""

    def __init__(self) -> None:
        super().__init__('move_group')
        self.label, model, config = declare_arm_model(self)
        values = declare_parameters(self, PARAMETERS, {})
        mesh_paths = declare_mesh_search_paths(self)
        try:
            arm = arm_of(model, config, self.label)
            group = values['group_name'] or str((config.get('moveit') or {}).get('group', ''))
            given = declare_parameters(self, SEMANTIC, {})['robot_description_semantic']
            served = served_srdf(given, arm, group)
            if served != given:
                # Clients read the groups from this parameter (pymoveit2's RobotDescription).
                self.set_parameters([Parameter('robot_description_semantic', value=served)])
            srdf = read_srdf(served)
            robot = MoveItRobot(arm, srdf, group)
            arm = with_allowed_pairs(arm, robot.allowed_pairs(), mesh_paths)
            robot.arm = arm
            self.scene_state = PlanningSceneState(robot, mesh_paths)
            self._base_checker = arm.collision_checker(search_paths=mesh_paths)
        except (SRDFError, ValueError) as error:
            raise StartupError(str(error)) from None
        self.robot, self.model = robot, model
        self.names = robot.joint_names
        self._base_arm, self._mesh_paths = arm, tuple(mesh_paths)
        self._install(arm, model.urdf)
        # One request at a time: the checker and planner serve one thread, and a plan must
        # see one consistent scene (RELIABILITY 41).
        self._work = threading.Lock()
        self._current: np.ndarray | None = None

        services = ReentrantCallbackGroup()
        inputs = MutuallyExclusiveCallbackGroup()
        self.create_subscription(JointState, 'joint_states', self._on_joint_states,
                                 qos_profile_sensor_data, callback_group=inputs)
        self.scene_publisher = self.create_publisher(SceneMessage, 'scene', LATCHED_QOS)
        self.execution = ExecutionLink(self, values['executor'])
        for kind, name, callback in (
                (GetPositionIK, 'compute_ik', self._compute_ik),
                (GetPositionFK, 'compute_fk', self._compute_fk),
                (GetCartesianPath, 'compute_cartesian_path', self._compute_cartesian_path),
                (GetMotionPlan, 'plan_kinematic_path', self._plan_kinematic_path),
                (GetPlanningScene, 'get_planning_scene', self._get_planning_scene),
                (ApplyPlanningScene, 'apply_planning_scene', self._apply_planning_scene)):
            self.create_service(kind, name, self._guarded(kind, callback),
                                callback_group=services)
        self.create_subscription(mm.CollisionObject, 'collision_object',
                                 self._on_collision_object, 100, callback_group=inputs)
        self.create_subscription(mm.AttachedCollisionObject, 'attached_collision_object',
                                 self._on_attached_object, 100, callback_group=inputs)
        self.create_subscription(String, 'trajectory_execution_event', self._on_event, 10,
                                 callback_group=inputs)
        goals = ReentrantCallbackGroup()
        self.move_server = ActionServer(
            self, MoveGroup, 'move_action', self._move_action, callback_group=goals,
            goal_callback=lambda _: GoalResponse.ACCEPT,
            cancel_callback=lambda _: CancelResponse.ACCEPT)
        self.execute_server = ActionServer(
            self, ExecuteTrajectory, 'execute_trajectory', self._execute_action,
            callback_group=goals, goal_callback=lambda _: GoalResponse.ACCEPT,
            cancel_callback=lambda _: CancelResponse.ACCEPT)
        self._publish_scene()
        self.get_logger().info(
            f'{self.label}: move_group for groups {", ".join(robot.served_groups)} '
            f'({len(robot.groups)} in all'
            + (', SRDF' if given.strip() else ', no SRDF: the chain')
            + (' with the chain as its group' if given.strip() and served != given else '')
            + '), '
            'executing through '
            f'{self.execution.executor}')

    def _install(self, arm, urdf: str) -> None:
        """The checker, IK, path IK and planner of ``arm`` (the arm with its attached
        objects as links), with the current scene; swapped in whole under the work lock."""
        model = arm.model
        scene = self.scene_state.scene
        checker = arm.collision_checker(scene, self._mesh_paths)
        planner = worker.build_planner(worker.PlannerSpec(
            urdf, arm.label, arm.config, model.base_link, model.tip_link, arm.default_solver,
            mesh_search_paths=self._mesh_paths), model)
        planner.set_scene(SceneData.of(scene))
        if planner.collision is not None:
            planner.collision.warm()     # its checker now, not in the first plan's time
        dispatcher = arm.dispatcher(search_paths=self._mesh_paths)
        dispatcher.scene = scene
        self._checker, self.planner, self.dispatcher = checker, planner, dispatcher
        get_checker = lambda: self._checker     # noqa: E731 - one checker, behind _work
        self.kinematics = KinematicsCapability(self.robot, dispatcher)
        self.cartesian = CartesianCapability(self.robot, planner.path_ik, get_checker)
        self.plans = PlanCapability(self.kinematics, planner, get_checker)

    def _use_attached(self) -> Answer:
        """The attached objects changed: the robot is rebuilt with them as links."""
        try:
            arm, urdf = arm_with_attached(self._base_arm, self.scene_state.attached,
                                          self.scene_state, self._base_checker)
            self._install(arm, urdf)
        except (ValueError, OSError) as error:
            return codes.fail(codes.INVALID_OBJECT_NAME,
                              f'the attached objects cannot be checked as part of the robot: '
                              f'{error}')
        return Answer(codes.SUCCESS, '')

    # ------------------------------------------------------------------ state and scene
    def _on_joint_states(self, message: JointState) -> None:
        q, _ = positions_by_name(self.names, message.name, message.position)
        if q is not None:
            self._current = q

    def current(self) -> np.ndarray:
        q = self._current
        return (q if q is not None else self.robot.arm.home).copy()

    def _use_scene(self, answer: Answer) -> Answer:
        """A scene change the core accepted becomes the checker's, IK's and the planner's
        (under the work lock: no request sees half of it) and the executor's."""
        if answer.success:
            scene = answer.value
            self._checker.scene = scene
            self.dispatcher.scene = scene
            self.planner.set_scene(SceneData.of(scene))
            self._publish_scene()
        else:
            self.get_logger().warning(f'planning scene: {codes.code_name(answer.code)}: '
                                      f'{answer.message}')
        return answer

    def _publish_scene(self) -> None:
        self.scene_publisher.publish(scene_message(self.scene_state.scene,
                                                   self.get_clock().now().to_msg()))

    def _apply_object(self, message: mm.CollisionObject) -> Answer:
        with self._work:
            return self._use_scene(self.scene_state.apply(mm.object_spec(message),
                                                          self.current()))

    def _apply_attached(self, message: mm.AttachedCollisionObject) -> Answer:
        spec = mm.object_spec(message.object)
        with self._work:
            if spec.operation == REMOVE:
                answer = self.scene_state.detach(spec.id, self.current())
            elif spec.operation == ADD:
                answer = self.scene_state.attach(message.link_name, spec,
                                                 list(message.touch_links), self.current())
            else:
                answer = codes.fail(codes.INVALID_OBJECT_NAME,
                                    f'attached object "{spec.id}": only ADD and REMOVE apply')
            answer = self._use_scene(answer)
            if answer.success:
                rebuilt = self._use_attached()
                if not rebuilt.success:
                    self.get_logger().warning(rebuilt.message)
                    return rebuilt
            return answer

    def _on_collision_object(self, message: mm.CollisionObject) -> None:
        self._apply_object(message)

    def _on_attached_object(self, message: mm.AttachedCollisionObject) -> None:
        self._apply_attached(message)

    def _on_event(self, message: String) -> None:
        if message.data == 'stop':
            self.execution.stop('trajectory_execution_event "stop"')
        else:
            self.get_logger().warning(f'trajectory_execution_event "{message.data}" is not '
                                      'served (only "stop")')

    # ------------------------------------------------------------------ services
    def _guarded(self, kind, callback):
        def serve(request, response):
            try:
                return callback(request, response)
            except Exception as error:   # an escaping exception leaves the client waiting
                self.get_logger().error(f'{kind.__name__}: {type(error).__name__}: {error}')
                response = kind.Response()
                answer = codes.fail(codes.FAILURE, f'move_group raised '
                                    f'{type(error).__name__}: {error}')
                for field in ('error_code',):
                    if hasattr(response, field):
                        mm.fill_code(getattr(response, field), answer)
                if hasattr(response, 'motion_plan_response'):
                    mm.fill_code(response.motion_plan_response.error_code, answer)
                return response
        return serve

    def _log(self, what: str, answer: Answer) -> None:
        if not answer.success:
            self.get_logger().info(f'{what}: {codes.code_name(answer.code)}: {answer.message}')

    def _compute_ik(self, request: GetPositionIK.Request, response: GetPositionIK.Response):
        ik = request.ik_request
        if ik.pose_stamped_vector or ik.ik_link_names:
            answer = codes.fail(codes.INVALID_LINK_NAME, 'IK of several links at once '
                                '(ik_link_names, pose_stamped_vector) is not served')
        else:
            names, positions = mm.state_values(ik.robot_state)
            pose = ik.pose_stamped.pose
            query = IKQuery(ik.group_name, mm.xyz(pose.position), mm.xyzw(pose.orientation),
                            ik.pose_stamped.header.frame_id, ik.ik_link_name, names, positions,
                            seconds_of(ik.timeout), bool(ik.avoid_collisions),
                            mm.joint_bounds(ik.constraints.joint_constraints))
            with self._work:
                answer = self.kinematics.ik(query, self.current())
        self._log('compute_ik', answer)
        mm.fill_code(response.error_code, answer)
        if answer.success:
            response.solution = mm.robot_state(self.names, answer.value,
                                               self.get_clock().now().to_msg())
        return response

    def _compute_fk(self, request: GetPositionFK.Request, response: GetPositionFK.Response):
        names, positions = mm.state_values(request.robot_state)
        frame = request.header.frame_id or self.robot.base_link
        with self._work:
            answer = self.kinematics.fk(list(request.fk_link_names), frame, names, positions,
                                        self.current())
        self._log('compute_fk', answer)
        mm.fill_code(response.error_code, answer)
        if answer.success:
            stamp = self.get_clock().now().to_msg()
            response.pose_stamped = [mm.pose_stamped(frame, p, o, stamp)
                                     for _, p, o in answer.value]
            response.fk_link_names = [link for link, _, _ in answer.value]
        return response

    def _compute_cartesian_path(self, request: GetCartesianPath.Request,
                                response: GetCartesianPath.Response):
        names, positions = mm.state_values(request.start_state)
        query = CartesianQuery(
            request.group_name, [(mm.xyz(p.position), mm.xyzw(p.orientation))
                                 for p in request.waypoints],
            request.header.frame_id, request.link_name, names, positions,
            float(request.max_step), float(request.jump_threshold),
            float(getattr(request, 'prismatic_jump_threshold', 0.0)),
            float(getattr(request, 'revolute_jump_threshold', 0.0)),
            bool(request.avoid_collisions),
            float(getattr(request, 'max_velocity_scaling_factor', 0.0)),
            mm.constraint_count(request.path_constraints))
        with self._work:
            current = self.current()
            answer = self.cartesian.plan(query, current)
        self._log('compute_cartesian_path', answer)
        mm.fill_code(response.error_code, answer)
        if answer.success:
            path = answer.value
            response.fraction = float(path.fraction)
            response.solution = mm.robot_trajectory(path.trajectory)
            response.start_state = mm.robot_state(self.names, path.trajectory.positions[0],
                                                  self.get_clock().now().to_msg())
        else:
            response.fraction = -1.0      # MoveIt's value when no path was computed
        return response

    def plan_query(self, request) -> PlanQuery | Answer:
        goals = []
        for constraints in request.goal_constraints:
            goals.append(mm.goal_set(constraints))
        names, positions = mm.state_values(request.start_state)
        return PlanQuery(request.group_name, goals, names, positions,
                         mm.constraint_count(request.path_constraints),
                         len(request.trajectory_constraints.constraints),
                         float(request.max_velocity_scaling_factor),
                         float(request.max_acceleration_scaling_factor),
                         float(request.allowed_planning_time),
                         int(request.num_planning_attempts))

    def _plan(self, request) -> Answer:
        query = self.plan_query(request)
        with self._work:
            return self.plans.plan(query, self.current())

    def _plan_kinematic_path(self, request: GetMotionPlan.Request,
                             response: GetMotionPlan.Response):
        answer = self._plan(request.motion_plan_request)
        self._log('plan_kinematic_path', answer)
        out = response.motion_plan_response
        mm.fill_code(out.error_code, answer)
        out.group_name = request.motion_plan_request.group_name
        if answer.success:
            planned = answer.value
            out.trajectory = mm.robot_trajectory(planned.trajectory)
            out.trajectory_start = mm.robot_state(self.names, planned.trajectory.positions[0],
                                                  self.get_clock().now().to_msg())
            out.planning_time = float(planned.planning_time)
        return response

    def scene_message(self, components: int) -> PlanningScene:
        state, bits = self.scene_state, mm.COMPONENTS
        scene = PlanningScene()
        scene.name = 'move_group'
        scene.robot_model_name = self.model.name
        scene.is_diff = False
        if mm.wants(components, bits.ROBOT_STATE) or \
                mm.wants(components, bits.ROBOT_STATE_ATTACHED_OBJECTS):
            attached = [mm.attached_message(a.link, a.spec, a.touch_links)
                        for a in state.attached.values()] \
                if mm.wants(components, bits.ROBOT_STATE_ATTACHED_OBJECTS) else []
            scene.robot_state = mm.robot_state(self.names, self.current(),
                                               self.get_clock().now().to_msg(), attached)
        if mm.wants(components, bits.WORLD_OBJECT_NAMES) or \
                mm.wants(components, bits.WORLD_OBJECT_GEOMETRY):
            geometry = mm.wants(components, bits.WORLD_OBJECT_GEOMETRY)
            scene.world.collision_objects = [mm.object_message(spec, geometry)
                                             for spec in state.world.values()]
        return scene

    def _get_planning_scene(self, request: GetPlanningScene.Request,
                            response: GetPlanningScene.Response):
        with self._work:
            response.scene = self.scene_message(int(request.components.components))
        return response

    def _apply_planning_scene(self, request: ApplyPlanningScene.Request,
                              response: ApplyPlanningScene.Response):
        scene = request.scene
        failures = []
        acm = scene.allowed_collision_matrix
        if acm.entry_names or acm.default_entry_names:
            failures.append("allowed_collision_matrix changes are not served (the SRDF's "
                            'disabled collisions are the allowed pairs)')
        if not scene.is_diff:
            self._use_scene_locked_clear()
        for message in scene.world.collision_objects:
            answer = self._apply_object(message)
            if not answer.success:
                failures.append(answer.message)
        for message in scene.robot_state.attached_collision_objects:
            answer = self._apply_attached(message)
            if not answer.success:
                failures.append(answer.message)
        response.success = not failures
        for failure in failures:
            self.get_logger().warning(f'apply_planning_scene: {failure}')
        return response

    def _use_scene_locked_clear(self) -> None:
        with self._work:
            held = bool(self.scene_state.attached)
            self._use_scene(self.scene_state.clear())
            if held:
                self._use_attached()

    # ------------------------------------------------------------------ actions
    def _trajectory_of(self, message) -> Answer:
        """A RobotTrajectory to execute, checked against the group (INVALID_MOTION_PLAN)."""
        joint = message.joint_trajectory
        if message.multi_dof_joint_trajectory.joint_names:
            return codes.fail(codes.INVALID_MOTION_PLAN,
                              'multi-DOF trajectories are not served')
        if not joint.points:
            return codes.fail(codes.INVALID_MOTION_PLAN, 'the trajectory has no points')
        if sorted(joint.joint_names) != sorted(self.names):
            return codes.fail(codes.INVALID_MOTION_PLAN,
                              f'the trajectory moves {list(joint.joint_names)}; the group '
                              f'moves {list(self.names)}')
        trajectory, error = trajectory_from_points(self.names, list(joint.joint_names),
                                                   points_from_message(joint))
        if error is not None:
            return codes.fail(codes.INVALID_MOTION_PLAN, error.message)
        return Answer(codes.SUCCESS, '', trajectory)

    def _run(self, trajectory: Trajectory, goal_handle) -> Answer:
        if len(trajectory) < 2 or trajectory.duration <= 0.0:
            return Answer(codes.SUCCESS, 'already at the goal: nothing to execute')
        return self.execution.execute(mm.joint_trajectory(trajectory), trajectory.duration,
                                      lambda: goal_handle.is_cancel_requested)

    def _end(self, goal_handle, result, answer: Answer, what: str):
        mm.fill_code(result.error_code, answer)
        self._log(what, answer)
        if goal_handle.is_cancel_requested:
            goal_handle.canceled()
        elif answer.success:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result

    def _execute_action(self, goal_handle):
        result = ExecuteTrajectory.Result()
        try:
            checked = self._trajectory_of(goal_handle.request.trajectory)
            answer = checked if not checked.success else self._run(checked.value, goal_handle)
        except Exception as error:  # noqa: BLE001 - the goal must end, the node live on
            answer = codes.fail(codes.FAILURE, f'{type(error).__name__}: {error}')
        return self._end(goal_handle, result, answer, 'execute_trajectory')

    def _move_action(self, goal_handle):
        result = MoveGroup.Result()
        goal = goal_handle.request
        options = goal.planning_options
        try:
            refused = ''
            if options.look_around:
                refused = 'look_around is not served (no sensors to look with)'
            elif options.replan:
                refused = 'replan is not served: plan again from the client'
            elif options.planning_scene_diff.world.collision_objects or \
                    options.planning_scene_diff.robot_state.attached_collision_objects:
                refused = ('a planning_scene_diff in the goal is not served: publish on '
                           'collision_object or call apply_planning_scene first')
            if refused:
                answer = codes.fail(codes.INVALID_GOAL_CONSTRAINTS, refused)
            else:
                if not options.plan_only:
                    # Plan from where the arm holds, not from a pose it is leaving.
                    self.execution.preempt('a newer move_action goal')
                answer = self._plan(goal.request)
            if answer.success:
                planned = answer.value
                result.planned_trajectory = mm.robot_trajectory(planned.trajectory)
                result.trajectory_start = mm.robot_state(
                    self.names, planned.trajectory.positions[0],
                    self.get_clock().now().to_msg())
                result.planning_time = float(planned.planning_time)
                if not options.plan_only:
                    feedback = MoveGroup.Feedback()
                    feedback.state = 'MONITOR'
                    goal_handle.publish_feedback(feedback)
                    answer = self._run(planned.trajectory, goal_handle)
                    if answer.success:
                        result.executed_trajectory = result.planned_trajectory
        except Exception as error:  # noqa: BLE001 - the goal must end, the node live on
            answer = codes.fail(codes.FAILURE, f'{type(error).__name__}: {error}')
        return self._end(goal_handle, result, answer, 'move_action')


def main(args: list[str] | None = None) -> None:
    sys.exit(run(MoveGroupNode, args, threads=EXECUTOR_THREADS))


if __name__ == '__main__':
    main()
