"""moveit_msgs, octomap_msgs and object_recognition_msgs as upstream defines them: what
src/arm_ik/test/test_moveit_msgs_subset.py checks the built packages against (data only).

- UPSTREAM below holds each definition as upstream writes it, comments and blank lines left out:
  moveit/moveit_msgs tag 2.6.0 (what Jazzy and Kilted release; these types are the same in
  2.4.0 and 2.5.0), OctoMap/octomap_msgs and wg-perception/object_recognition_msgs 2.0.0 (their
  ros2 branches, released to both). rosidl's own parser reads them; the built classes must have
  the same fields in the same order, the same types, constants and default values.
- UPSTREAM_HASHES holds the RIHS01 type hash of each, which rosidl writes into
  share/<package>/<msg|srv|action>/<Name>.json: a hash of the whole type description (field names
  and types, every nested type down to builtin_interfaces), which ROS 2 announces with every
  publisher, subscription, service and action in discovery to tell apart same-named types that
  differ. Constants, comments and default values are not part of it (hence both checks).

How the hashes were obtained: upstream's sources (moveit_msgs at 2.6.0, octomap_msgs and
object_recognition_msgs at their ros2 branches) were built with colcon in a scratch workspace
outside this repository with this project's pinned wheels, once with .venv and once with
.venv-kilted (the same hashes on Jazzy and Kilted): octomap_msgs and object_recognition_msgs in
full, moveit_msgs its target moveit_msgs__rosidl_generator_type_description (the step of a full
build that writes the .json files). Each hash is the entry of <Name>.json whose type_name is the
type itself (a service's or an action's covers its request, response, goal, result and feedback
types). Nothing of that build is kept here.
"""

UPSTREAM = {
    'moveit_msgs/msg/AllowedCollisionEntry': """
        bool[] enabled""",
    'moveit_msgs/msg/AllowedCollisionMatrix': """
        string[] entry_names
        AllowedCollisionEntry[] entry_values
        string[] default_entry_names
        bool[] default_entry_values""",
    'moveit_msgs/msg/AttachedCollisionObject': """
        string link_name
        CollisionObject object
        string[] touch_links
        trajectory_msgs/JointTrajectory detach_posture
        float64 weight""",
    'moveit_msgs/msg/BoundingVolume': """
        shape_msgs/SolidPrimitive[] primitives
        geometry_msgs/Pose[] primitive_poses
        shape_msgs/Mesh[] meshes
        geometry_msgs/Pose[] mesh_poses""",
    'moveit_msgs/msg/CartesianPoint': """
        geometry_msgs/Pose pose
        geometry_msgs/Twist velocity
        geometry_msgs/Accel acceleration""",
    'moveit_msgs/msg/CartesianTrajectory': """
        std_msgs/Header header
        string tracked_frame
        CartesianTrajectoryPoint[] points""",
    'moveit_msgs/msg/CartesianTrajectoryPoint': """
        CartesianPoint point
        builtin_interfaces/Duration time_from_start""",
    'moveit_msgs/msg/CollisionObject': """
        std_msgs/Header header
        geometry_msgs/Pose pose
        string id
        object_recognition_msgs/ObjectType type
        shape_msgs/SolidPrimitive[] primitives
        geometry_msgs/Pose[] primitive_poses
        shape_msgs/Mesh[] meshes
        geometry_msgs/Pose[] mesh_poses
        shape_msgs/Plane[] planes
        geometry_msgs/Pose[] plane_poses
        string[] subframe_names
        geometry_msgs/Pose[] subframe_poses
        byte ADD=0
        byte REMOVE=1
        byte APPEND=2
        byte MOVE=3
        byte operation""",
    'moveit_msgs/msg/Constraints': """
        string name
        JointConstraint[] joint_constraints
        PositionConstraint[] position_constraints
        OrientationConstraint[] orientation_constraints
        VisibilityConstraint[] visibility_constraints""",
    'moveit_msgs/msg/DisplayTrajectory': """
        string model_id
        RobotTrajectory[] trajectory
        RobotState trajectory_start""",
    'moveit_msgs/msg/GenericTrajectory': """
        std_msgs/Header header
        trajectory_msgs/JointTrajectory[] joint_trajectory
        moveit_msgs/CartesianTrajectory[] cartesian_trajectory""",
    'moveit_msgs/msg/JointConstraint': """
        string joint_name
        float64 position
        float64 tolerance_above
        float64 tolerance_below
        float64 weight""",
    'moveit_msgs/msg/JointLimits': """
        string joint_name
        bool has_position_limits
        float64 min_position
        float64 max_position
        bool has_velocity_limits
        float64 max_velocity
        bool has_acceleration_limits
        float64 max_acceleration
        bool has_jerk_limits
        float64 max_jerk""",
    'moveit_msgs/msg/LinkPadding': """
        string link_name
        float64 padding""",
    'moveit_msgs/msg/LinkScale': """
        string link_name
        float64 scale""",
    'moveit_msgs/msg/MotionPlanRequest': """
        WorkspaceParameters workspace_parameters
        RobotState start_state
        Constraints[] goal_constraints
        Constraints path_constraints
        TrajectoryConstraints trajectory_constraints
        GenericTrajectory[] reference_trajectories
        string pipeline_id
        string planner_id
        string group_name
        int32 num_planning_attempts
        float64 allowed_planning_time
        float64 max_velocity_scaling_factor
        float64 max_acceleration_scaling_factor
        string cartesian_speed_limited_link
        float64 max_cartesian_speed""",
    'moveit_msgs/msg/MotionPlanResponse': """
        RobotState trajectory_start
        string group_name
        RobotTrajectory trajectory
        float64 planning_time
        MoveItErrorCodes error_code""",
    'moveit_msgs/msg/MoveItErrorCodes': """
        int32 val
        int32 SUCCESS=1
        int32 UNDEFINED=0
        int32 FAILURE=99999
        int32 PLANNING_FAILED=-1
        int32 INVALID_MOTION_PLAN=-2
        int32 MOTION_PLAN_INVALIDATED_BY_ENVIRONMENT_CHANGE=-3
        int32 CONTROL_FAILED=-4
        int32 UNABLE_TO_AQUIRE_SENSOR_DATA=-5
        int32 TIMED_OUT=-6
        int32 PREEMPTED=-7
        int32 START_STATE_IN_COLLISION=-10
        int32 START_STATE_VIOLATES_PATH_CONSTRAINTS=-11
        int32 START_STATE_INVALID=-26
        int32 GOAL_IN_COLLISION=-12
        int32 GOAL_VIOLATES_PATH_CONSTRAINTS=-13
        int32 GOAL_CONSTRAINTS_VIOLATED=-14
        int32 GOAL_STATE_INVALID=-27
        int32 UNRECOGNIZED_GOAL_TYPE=-28
        int32 INVALID_GROUP_NAME=-15
        int32 INVALID_GOAL_CONSTRAINTS=-16
        int32 INVALID_ROBOT_STATE=-17
        int32 INVALID_LINK_NAME=-18
        int32 INVALID_OBJECT_NAME=-19
        int32 FRAME_TRANSFORM_FAILURE=-21
        int32 COLLISION_CHECKING_UNAVAILABLE=-22
        int32 ROBOT_STATE_STALE=-23
        int32 SENSOR_INFO_STALE=-24
        int32 COMMUNICATION_FAILURE=-25
        int32 CRASH=-29
        int32 ABORT=-30
        int32 NO_IK_SOLUTION=-31
        string message
        string source""",
    'moveit_msgs/msg/ObjectColor': """
        string id
        std_msgs/ColorRGBA color""",
    'moveit_msgs/msg/OrientationConstraint': """
        std_msgs/Header header
        geometry_msgs/Quaternion orientation
        string link_name
        float64 absolute_x_axis_tolerance
        float64 absolute_y_axis_tolerance
        float64 absolute_z_axis_tolerance
        uint8 parameterization
        uint8 XYZ_EULER_ANGLES=0
        uint8 ROTATION_VECTOR=1
        float64 weight""",
    'moveit_msgs/msg/PlannerInterfaceDescription': """
        string name
        string pipeline_id
        string[] planner_ids""",
    'moveit_msgs/msg/PlannerParams': """
        string[] keys
        string[] values
        string[] descriptions""",
    'moveit_msgs/msg/PlanningOptions': """
        PlanningScene planning_scene_diff
        bool plan_only
        bool look_around
        int32 look_around_attempts
        float64 max_safe_execution_cost
        bool replan
        int32 replan_attempts
        float64 replan_delay""",
    'moveit_msgs/msg/PlanningScene': """
        string name
        RobotState robot_state
        string robot_model_name
        geometry_msgs/TransformStamped[] fixed_frame_transforms
        AllowedCollisionMatrix allowed_collision_matrix
        LinkPadding[] link_padding
        LinkScale[] link_scale
        ObjectColor[] object_colors
        PlanningSceneWorld world
        bool is_diff""",
    'moveit_msgs/msg/PlanningSceneComponents': """
        uint32 SCENE_SETTINGS=1
        uint32 ROBOT_STATE=2
        uint32 ROBOT_STATE_ATTACHED_OBJECTS=4
        uint32 WORLD_OBJECT_NAMES=8
        uint32 WORLD_OBJECT_GEOMETRY=16
        uint32 OCTOMAP=32
        uint32 TRANSFORMS=64
        uint32 ALLOWED_COLLISION_MATRIX=128
        uint32 LINK_PADDING_AND_SCALING=256
        uint32 OBJECT_COLORS=512
        uint32 components""",
    'moveit_msgs/msg/PlanningSceneWorld': """
        CollisionObject[] collision_objects
        octomap_msgs/OctomapWithPose octomap""",
    'moveit_msgs/msg/PositionConstraint': """
        std_msgs/Header header
        string link_name
        geometry_msgs/Vector3 target_point_offset
        BoundingVolume constraint_region
        float64 weight""",
    'moveit_msgs/msg/PositionIKRequest': """
        string group_name
        moveit_msgs/RobotState robot_state
        Constraints constraints
        bool avoid_collisions
        string ik_link_name
        geometry_msgs/PoseStamped pose_stamped
        string[] ik_link_names
        geometry_msgs/PoseStamped[] pose_stamped_vector
        builtin_interfaces/Duration timeout""",
    'moveit_msgs/msg/RobotState': """
        sensor_msgs/JointState joint_state
        sensor_msgs/MultiDOFJointState multi_dof_joint_state
        AttachedCollisionObject[] attached_collision_objects
        bool is_diff""",
    'moveit_msgs/msg/RobotTrajectory': """
        trajectory_msgs/JointTrajectory joint_trajectory
        trajectory_msgs/MultiDOFJointTrajectory multi_dof_joint_trajectory""",
    'moveit_msgs/msg/ServoStatus': """
        int8 code
        string message
        int8 INVALID = -1
        int8 NO_WARNING = 0
        int8 DECELERATE_FOR_APPROACHING_SINGULARITY = 1
        int8 HALT_FOR_SINGULARITY = 2
        int8 DECELERATE_FOR_LEAVING_SINGULARITY = 3
        int8 DECELERATE_FOR_COLLISION = 4
        int8 HALT_FOR_COLLISION = 5
        int8 JOINT_BOUND = 6""",
    'moveit_msgs/msg/TrajectoryConstraints': """
        Constraints[] constraints""",
    'moveit_msgs/msg/VisibilityConstraint': """
        float64 target_radius
        geometry_msgs/PoseStamped target_pose
        int32 cone_sides
        geometry_msgs/PoseStamped sensor_pose
        float64 max_view_angle
        float64 max_range_angle
        uint8 SENSOR_Z=0
        uint8 SENSOR_Y=1
        uint8 SENSOR_X=2
        uint8 sensor_view_direction
        float64 weight""",
    'moveit_msgs/msg/WorkspaceParameters': """
        std_msgs/Header header
        geometry_msgs/Vector3 min_corner
        geometry_msgs/Vector3 max_corner""",
    'moveit_msgs/srv/ApplyPlanningScene': """
        PlanningScene scene
        ---
        bool success""",
    'moveit_msgs/srv/GetCartesianPath': """
        std_msgs/Header header
        RobotState start_state
        string group_name
        string link_name
        geometry_msgs/Pose[] waypoints
        float64 max_step
        float64 jump_threshold
        float64 prismatic_jump_threshold
        float64 revolute_jump_threshold
        bool avoid_collisions
        Constraints path_constraints
        float64 max_velocity_scaling_factor
        float64 max_acceleration_scaling_factor
        string cartesian_speed_limited_link
        float64 max_cartesian_speed
        ---
        RobotState start_state
        RobotTrajectory solution
        float64 fraction
        MoveItErrorCodes error_code""",
    'moveit_msgs/srv/GetMotionPlan': """
        MotionPlanRequest motion_plan_request
        ---
        MotionPlanResponse motion_plan_response""",
    'moveit_msgs/srv/GetPlannerParams': """
        string pipeline_id
        string planner_config
        string group
        ---
        PlannerParams params""",
    'moveit_msgs/srv/GetPlanningScene': """
        PlanningSceneComponents components
        ---
        PlanningScene scene""",
    'moveit_msgs/srv/GetPositionFK': """
        std_msgs/Header header
        string[] fk_link_names
        RobotState robot_state
        ---
        geometry_msgs/PoseStamped[] pose_stamped
        string[] fk_link_names
        MoveItErrorCodes error_code""",
    'moveit_msgs/srv/GetPositionIK': """
        PositionIKRequest ik_request
        ---
        RobotState solution
        MoveItErrorCodes error_code""",
    'moveit_msgs/srv/QueryPlannerInterfaces': """
        ---
        PlannerInterfaceDescription[] planner_interfaces""",
    'moveit_msgs/srv/ServoCommandType': """
        int8 JOINT_JOG = 0
        int8 TWIST = 1
        int8 POSE = 2
        int8 command_type
        ---
        bool success""",
    'moveit_msgs/action/ExecuteTrajectory': """
        RobotTrajectory trajectory
        string[] controller_names
        ---
        MoveItErrorCodes error_code
        ---
        string state""",
    'moveit_msgs/action/MoveGroup': """
        MotionPlanRequest request
        PlanningOptions planning_options
        ---
        MoveItErrorCodes error_code
        moveit_msgs/RobotState trajectory_start
        moveit_msgs/RobotTrajectory planned_trajectory
        moveit_msgs/RobotTrajectory executed_trajectory
        float64 planning_time
        ---
        string state""",
    # OctoMap/octomap_msgs 2.0.0 (ros2 branch), wg-perception/object_recognition_msgs 2.0.0 (ros2)
    'octomap_msgs/msg/Octomap': """
        std_msgs/Header header
        bool binary
        string id
        float64 resolution
        int8[] data""",
    'octomap_msgs/msg/OctomapWithPose': """
        std_msgs/Header header
        geometry_msgs/Pose origin
        octomap_msgs/Octomap octomap""",
    'object_recognition_msgs/msg/ObjectType': """
        string key
        string db""",
}

UPSTREAM_HASHES = {
    'moveit_msgs/msg/AllowedCollisionEntry':
        'RIHS01_eeb7cc3f1bfdb8c778aa7454ae90037c2749dab3ca0abdfe3dad2ae8723977db',
    'moveit_msgs/msg/AllowedCollisionMatrix':
        'RIHS01_ac0159eec0d99f73158c7349c9d1c01b3dc7f749d75a2ea22e74a2a1091a9b05',
    'moveit_msgs/msg/AttachedCollisionObject':
        'RIHS01_7fdfe7951a33a857f20fc42c9ed410a38d06dd0c209ac774ecea746dc487dc41',
    'moveit_msgs/msg/BoundingVolume':
        'RIHS01_00bb0df2edac637497dedf1778d8f217187c8d9d10f41dcfccc4d8578123ef13',
    'moveit_msgs/msg/CartesianPoint':
        'RIHS01_bbb5a879e7dd5b8443c3ce8cf374c3f314522a5540b1b4104a7b470fcc6ca907',
    'moveit_msgs/msg/CartesianTrajectory':
        'RIHS01_30452179003246bb9264a44854a4b720c882f63638da8da0a9afed4f565c748d',
    'moveit_msgs/msg/CartesianTrajectoryPoint':
        'RIHS01_63b1d2ef10058a5da0931e4de777a10fdfed3972ab166c60632f4a182b7fd5ea',
    'moveit_msgs/msg/CollisionObject':
        'RIHS01_74b0acd6d56be032bf4f764b2c2633f50588b5fb2bd71e97206c59052747cf7e',
    'moveit_msgs/msg/Constraints':
        'RIHS01_71718200459ae8fecdc4f2c9631215f7eba5ff686c701a32e231ba8b11b3592b',
    'moveit_msgs/msg/DisplayTrajectory':
        'RIHS01_dd351cbd6d9986eb019306910ec09236a136a02dbc0b3465707cb62f2d56e22b',
    'moveit_msgs/msg/GenericTrajectory':
        'RIHS01_b38b4942aba82576ec047a9278c47785022ce66ca86d91827aba06cdc97793c6',
    'moveit_msgs/msg/JointConstraint':
        'RIHS01_4996641a8e12f5b7fde07f1cec1490324e1c4035ac5fc989ce99c9600c31e30d',
    'moveit_msgs/msg/JointLimits':
        'RIHS01_a09826e8eed481588b73c651f3768af9b52d213e02c47e5b147f223100a65a6d',
    'moveit_msgs/msg/LinkPadding':
        'RIHS01_864762d9e19f758b0385427f75691374cae830495727c96405f2bad0eb20c766',
    'moveit_msgs/msg/LinkScale':
        'RIHS01_4666a0685f26365ccf4c9bfed0b14c654604fa0564be65c221d8d54fdc7a0f83',
    'moveit_msgs/msg/MotionPlanRequest':
        'RIHS01_f82ed20da5f8f93146999c1a3cfe34b56b97fc10333b40cac69782a1210888d7',
    'moveit_msgs/msg/MotionPlanResponse':
        'RIHS01_bc0dc15c0462edc942dc45dc689cd1a1b1a64c1412002a2e8d210eff2477d62a',
    'moveit_msgs/msg/MoveItErrorCodes':
        'RIHS01_dcda8a9950cf6dd6ac221c2c0d2509f52f136afa0403dd19beacdf07e83e4a07',
    'moveit_msgs/msg/ObjectColor':
        'RIHS01_4f937f7b22942a9c4a6409c20255aaad1b5d9a003ae3c0edb779698be443c127',
    'moveit_msgs/msg/OrientationConstraint':
        'RIHS01_7a1917ac47886eb1fc170317952198b203bb797f07270475a7bbaf692cad2871',
    'moveit_msgs/msg/PlannerInterfaceDescription':
        'RIHS01_befe55b35f337f0fd4f84ddda3fe086960c47ef495a6b2a369991b3738b8f220',
    'moveit_msgs/msg/PlannerParams':
        'RIHS01_91fe6ebf17158d27240118bc8ccede6cca55d631c9a1cbce847b342761269d49',
    'moveit_msgs/msg/PlanningOptions':
        'RIHS01_2570a8ed681162d1d3afbce3a8e7ff2b6fd519676d13cf952e0a388072b255db',
    'moveit_msgs/msg/PlanningScene':
        'RIHS01_0f58540ad5eab4b9ea827d53b763c793d8cabd202b3b301fcee25afa4ce1bd80',
    'moveit_msgs/msg/PlanningSceneComponents':
        'RIHS01_76b77cb53f7a0b680d46fad6c0056d3710a74ec335dd5f361f3df62383313d69',
    'moveit_msgs/msg/PlanningSceneWorld':
        'RIHS01_e08e6a4a81ca6b6a6953ac758dadc2c949555093efea6a9a22d9accf62c2c099',
    'moveit_msgs/msg/PositionConstraint':
        'RIHS01_3758504dabfe337a1a660b29917e3405e5e858fdd6e9976edba04275396523df',
    'moveit_msgs/msg/PositionIKRequest':
        'RIHS01_200709be614f71f4d11d0bdd672785db28d27f7a10b516d9b961706a0c7f6d7d',
    'moveit_msgs/msg/RobotState':
        'RIHS01_7c516dc15713e545cb2836c5ca745fbdcfcc10de4855a41c83e6b4bf1afc3f83',
    'moveit_msgs/msg/RobotTrajectory':
        'RIHS01_af1dc87fb94d13e5f233e9c210d2662fa06143a8b3c6aec47c57ad45074fcce8',
    'moveit_msgs/msg/ServoStatus':
        'RIHS01_882a75f7648d6f8a9bf528e4787f51c58f2d5d88b702e450443d99f270e6936b',
    'moveit_msgs/msg/TrajectoryConstraints':
        'RIHS01_4975a7925aa917c5af450713fcb8bdbc19c666d0c336a5f27056733bf8fc65f8',
    'moveit_msgs/msg/VisibilityConstraint':
        'RIHS01_2b479935307de421623221520ee5d9ffab494af7f4b1945114fc7e4831856c75',
    'moveit_msgs/msg/WorkspaceParameters':
        'RIHS01_5001636b05e9fef44faf0220f88552cab9954e55dd3ab51075f448e9aa59186e',
    'moveit_msgs/srv/ApplyPlanningScene':
        'RIHS01_8e6134783db0987c0acedbfd2f16f608a8f7a54e83a7bbb372e851af419f4d72',
    'moveit_msgs/srv/GetCartesianPath':
        'RIHS01_b19f501df5d378141d918199894c3ad24533e76021a880b15dc5d62fec8d7b1a',
    'moveit_msgs/srv/GetMotionPlan':
        'RIHS01_0e118e1d8d53d5fea8eea309fc06a58239fa0e617864127e7de8399ab7335b27',
    'moveit_msgs/srv/GetPlannerParams':
        'RIHS01_770299091d17ec6f49840b0c5f9fee51a51508c0d5c4b5b561ec3b878fbbfa42',
    'moveit_msgs/srv/GetPlanningScene':
        'RIHS01_7ed7e96238b902174d985b0eb739ea08c95377e8e46a6a9014c22497faf79cd2',
    'moveit_msgs/srv/GetPositionFK':
        'RIHS01_2f16ec361a135d84b85a29385abeb9eeb025e39c09038bd6b2826645edc7edad',
    'moveit_msgs/srv/GetPositionIK':
        'RIHS01_054ed6f6f71a09b01b5246c5d80beb4dacc6f444f58df039849c76292933e9e3',
    'moveit_msgs/srv/QueryPlannerInterfaces':
        'RIHS01_c7550fca36d2ac8b3463b25c723baaf7ecd313d659d23d519c021b519e07b431',
    'moveit_msgs/srv/ServoCommandType':
        'RIHS01_2065f4daf271249330596d344ecd48f5c2d2a52e3b21b1fc56d99c52b8eeae22',
    'moveit_msgs/action/ExecuteTrajectory':
        'RIHS01_e1ed3386f275fc8cea91cc78701074f892e78e583be2f8063eea5616dd1065fc',
    'moveit_msgs/action/MoveGroup':
        'RIHS01_8c41d70908a2d26b564ddac31e9710f697a753bbd2a4d229542f76271daefc0b',
    'octomap_msgs/msg/Octomap':
        'RIHS01_9891a19a05b70ec20aa8f45db3f8300b9ab80afff32c61c549d25087da9625b0',
    'octomap_msgs/msg/OctomapWithPose':
        'RIHS01_e65f8760aa96a2acef86b6d206175cfc78420082b6159dd3fa6ebf93f5f81979',
    'object_recognition_msgs/msg/ObjectType':
        'RIHS01_5eb3ee3976403366d7c50d7dbee8bec96b3bced1e752674a7194a35841632134',
}
