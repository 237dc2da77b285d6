"""trajectory_executor: moves one arm with the motion laws and publishes what it commands.

Publishes (relative names, in the arm's namespace):
  joint_states       sensor_msgs/JointState at ``publish_rate`` from the commanded pose
                     (header stamp set at publish time), for robot_state_publisher and RViz
  <controller_topic> trajectory_msgs/JointTrajectory (``output: joint_trajectory``) or
                     std_msgs/Float64MultiArray (``output: forward_position``): the commands
  planned_path       visualization_msgs/MarkerArray (latched): tool path, ghost poses,
                     target; where a Cartesian line failed
  ~/status           arm_interfaces/ExecutorStatus (latched) on every change of state
Subscribes:
  emergency_stop     std_msgs/Bool, reliable + transient local (a stop sent before this node
                     started still reaches it); true holds at once
  target             geometry_msgs/PointStamped, the live target (``follow_target``)
  <feedback_topic>   sensor_msgs/JointState of the real arm (optional)
Services: ~/reset (std_srvs/Trigger), ~/execute_trajectory (arm_interfaces/ExecuteTrajectory)
Action: ~/move_to_target (arm_interfaces/MoveToTarget)

Parameters (descriptors carry units and ranges; a bad update is refused with the reason):
  read-only  arm, base_frame, tip_frame; output (none | joint_trajectory |
             forward_position), controller_topic, controller_joints, initial_positions (rad;
             default the YAML home), publish_on_start, feedback_topic, follow_target,
             planning_process, control_loop (thread | timer), realtime_priority, avoid_obstacle
  run time   robot_description (same joints, new lengths; refused while the arm moves: the
             planner and its process are rebuilt), publish_rate (Hz, 100), motion_law (the
             arm's default law), speed_scale (0.5),
             exponential_gain (3 1/s), speed_cap_iterations (3), settle_tolerance (rad),
             position_tolerance (m), start_tolerance (0.02 rad), max_condition_number (50),
             max_joint_jump (0.2 rad), min_duration, max_duration (s), detour,
             watchdog_timeout (0.5 s), follow_law (exponential | speed_cap), follow_solver
             (IK solver of the live target; '' = the arm's default), feedback_stale_periods
             (3), feedback_rate (action feedback, 10 Hz)

Semantics:
- One goal at a time: a new goal preempts (the running one ends with PREEMPTED, the arm holds
  where it was, the new one plans from there). Every goal is accepted; an invalid one is
  aborted at once with its code and message (a bare reject would tell the client nothing).
  Cancel holds the current pose without a jump and ends CANCELED.
- Every move is planned and checked before its first point is sent (``kinematics.motion``):
  nothing of a failed plan is ever published.
- Timing: the control tick runs on a dedicated thread sleeping to absolute deadlines, at
  SCHED_FIFO priority when the system grants it (``realtime_priority``, as ros2_control's
  controller_manager); planning runs in a separate process (``planning_process``) so
  IK-heavy work never holds this process's GIL; goals, inputs and the emergency stop have
  callback groups of their own on a multi-threaded executor. ``control_loop: timer`` uses an
  rclpy timer in its own callback group instead. Trajectory time is the wall clock (no
  simulated time).
- Holding publishes nothing on the controller outputs (a controller holds its last command)
  except one hold point when a motion is stopped; ``joint_states`` keeps repeating the held
  pose, unchanged, at the fixed rate.
- After a restart: with ``publish_on_start: false`` nothing is published until a new command;
  that command starts from the measured state (``feedback_topic``) or, without feedback,
  from ``initial_positions``. The executor keeps no plan across restarts.
- Feedback older than ``feedback_stale_periods`` periods of its own stream: the executor
  holds, reports STALE_FEEDBACK and resumes only on a new command.
- Live target stream older than ``watchdog_timeout``: the arm holds where it is; when targets
  come again it follows from there at the law's speed limits (no lurch).
- Emergency stop: held within one control period; goals and targets refused until ~/reset,
  which succeeds only once the last emergency_stop message was false.
"""

from __future__ import annotations

from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
import math
import multiprocessing
import os
import sys
import threading
import time

from geometry_msgs.msg import Point, PointStamped
import numpy as np
from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterEvent,
    ParameterType,
    SetParametersResult,
)
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_parameter_events, qos_profile_sensor_data
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Float64MultiArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from arm_ik.kinematics.description import check_home, home_from_config
from arm_ik.kinematics.joint_state import joint_order, positions_by_name
from arm_ik.kinematics.model import ArmModel
from arm_ik.kinematics.motion import laws, worker
from arm_ik.kinematics.motion.commands import trajectory_from_points
from arm_ik.kinematics.motion.errors import MotionCode
from arm_ik.kinematics.motion.planner import (
    MotionPlanner,
    MotionSettings,
    PathOutcome,
    Plan,
    PlanFailure,
)
from arm_ik.kinematics.motion.runner import Mode, MotionRunner, Owner, Tick
from arm_ik.kinematics.motion.safety_check import SceneData
from arm_ik.kinematics.motion.trajectory import Trajectory
from arm_ik.kinematics.motion.validation import ValidationSettings
from arm_ik.kinematics.passive_joints import PassiveJoints
from arm_ik.kinematics.request import IKRequest
from arm_ik.kinematics.solvers.base import SolveOptions
from arm_ik.middleware import HandoffExecutor
from arm_ik.nodes import motion_messages as messages
from arm_ik.nodes.common import (
    arm_of,
    declare_arm_model,
    declare_mesh_search_paths,
    describe,
    DescriptionReload,
    LATCHED_QOS,
    run,
    StartupError,
)
from arm_ik.nodes.scene_messages import SceneFollower
from arm_interfaces.action import MoveToTarget
from arm_interfaces.msg import ExecutorStatus
from arm_interfaces.srv import ExecuteTrajectory

OUTPUTS = ('none', 'joint_trajectory', 'forward_position')
DEFAULT_CONTROLLER_TOPICS = {'joint_trajectory': 'joint_trajectory_controller/joint_trajectory',
                             'forward_position': 'forward_position_controller/commands'}
# The reference system of each arm moves with this law unless its YAML's motion.default_law
# says otherwise.
EXECUTOR_THREADS = 8
# The node that owns the run-time obstacle radius, in this executor's namespace.
MONITOR_NODE = 'safety_monitor'
POLL_PERIOD = 0.02          # s, how often a goal thread looks for cancel/preempt/the end
FEEDBACK_HISTORY = 20       # measured-state intervals kept to estimate its period
PLANNING_STOP_WAIT = 2.0    # s, how long shutdown waits for a plan in progress


def _range(low: float, high: float) -> FloatingPointRange:
    return FloatingPointRange(from_value=low, to_value=high, step=0.0)


def _int_range(low: int, high: int) -> IntegerRange:
    return IntegerRange(from_value=low, to_value=high, step=1)


@dataclass(frozen=True)
class ExecutorSettings:
    """One immutable snapshot of the run-time parameters (swapped whole on a change)."""

    motion: MotionSettings
    publish_rate: float = 100.0
    watchdog_timeout: float = 0.5
    follow_law: str = laws.EXPONENTIAL
    feedback_stale_periods: float = 3.0
    feedback_rate: float = 10.0
    follow_solver: str = ''           # '' = the arm's default solver (checked by the node,
                                      # which knows the arm's solvers)

    def validated(self) -> str:
        """'' when usable, else the reason."""
        _, reason = self.motion.validated()
        if reason:
            return reason
        for name, low, high in (('publish_rate', 1.0, 1000.0), ('watchdog_timeout', 0.0, 60.0),
                                ('feedback_stale_periods', 1.0, 1000.0),
                                ('feedback_rate', 0.0, 100.0)):
            value = getattr(self, name)
            # publish_rate and feedback_stale_periods may equal their lower bound.
            inclusive = name in ('publish_rate', 'feedback_stale_periods')
            if not (math.isfinite(value) and (low <= value if inclusive else low < value)
                    and value <= high):
                return f'{name} must be in {"[" if inclusive else "("}{low:g}, {high:g}], ' \
                    f'got {value!r}'
        if self.follow_law not in laws.STREAMING_LAWS:
            return (f'follow_law "{self.follow_law}" is not one of '
                    f'{", ".join(laws.STREAMING_LAWS)}')
        return ''


class TrajectoryExecutor(Node):
    """Plans, checks and executes moves of one arm; see the module docstring."""

    def __init__(self) -> None:
        super().__init__('trajectory_executor')
        self.arm, self.model, config = declare_arm_model(self, reloadable=True)
        self._config = config
        # The obstacle radius the safety monitor uses, once changed there at run time.
        self._obstacle_radius: float | None = None
        self._planner_stale = False
        self.names = tuple(self.model.joint_names)
        self._passive = PassiveJoints.of(self.model)
        self._state_names = list(self.names) + list(self._passive.names)
        try:
            self._declare_parameters(config)
        except (InvalidParameterTypeException, InvalidParameterValueException) as error:
            # e.g. publish_rate:=100 (an integer): say so instead of a traceback.
            raise StartupError(f'bad parameter: {error} (write floating-point values with a '
                               'decimal point, e.g. 100.0)') from None
        self._read_fixed_parameters(config)
        # --- scene (issue 18): plans are checked for self-collision and the scene -------
        self._mesh_paths = declare_mesh_search_paths(self)
        self._scene_data: SceneData | None = None
        # --- end scene ---------------------------------------------------------------------

        try:
            spec, self.planner = self._planner_of(self.model)
        except ValueError as error:
            raise StartupError(f'cannot build the motion planner: {error}') from None
        # After the planner: follow_solver is checked against the arm's solvers.
        self.settings = self._settings_from_parameters({})
        reason = self._settings_reason(self.settings)
        if reason:
            raise StartupError(f'bad parameter: {reason}')
        self._planning = self._start_planning(spec)

        pose_check = self.planner.safety.check_pose if self.planner.safety is not None else None
        start = self.initial if self.publish_on_start and not self.feedback_topic else None
        self.runner = MotionRunner(self.names, start, pose_check)
        self._goal_lock = threading.Lock()
        self._active_goal: Owner | None = None
        self._owners: dict[bytes, Owner] = {}        # goal id → its owner, while it runs
        self._output_lock = threading.Lock()
        self._feedback_lock = threading.Lock()
        self._measured: np.ndarray | None = None
        self._measured_time: float | None = None
        self._measured_intervals: list[float] = []
        self._estop_pressed = False
        self._follow_law: laws.ExponentialFollow | laws.SpeedCapFollow | None = None

        # The control tick runs on a thread of its own (or, with control_loop: timer, alone
        # in its callback group, so nothing else runs in its place); the emergency stop is
        # alone in its group (never queued behind a target's IK); inputs (feedback, live
        # target, reset) share one; goals and the trajectory service are reentrant (a goal
        # thread blocks while its move runs).
        timer_group = MutuallyExclusiveCallbackGroup()
        stop_group = MutuallyExclusiveCallbackGroup()
        input_group = MutuallyExclusiveCallbackGroup()
        goal_group = ReentrantCallbackGroup()

        self.state_publisher = self.create_publisher(JointState, 'joint_states', 10)
        self.controller_publisher = None
        if self.output == 'joint_trajectory':
            self.controller_publisher = self.create_publisher(JointTrajectory,
                                                              self.controller_topic, 10)
        elif self.output == 'forward_position':
            self.controller_publisher = self.create_publisher(Float64MultiArray,
                                                              self.controller_topic, 10)
        self.path_publisher = self.create_publisher(MarkerArray, 'planned_path', LATCHED_QOS)
        self.status_publisher = self.create_publisher(ExecutorStatus, '~/status', LATCHED_QOS)

        self.create_subscription(Bool, 'emergency_stop', self._on_emergency_stop, LATCHED_QOS,
                                 callback_group=stop_group)
        if self.feedback_topic:
            self.create_subscription(JointState, self.feedback_topic, self._on_feedback,
                                     qos_profile_sensor_data, callback_group=input_group)
        if self.get_parameter('follow_target').value:
            self.create_subscription(PointStamped, 'target', self._on_target,
                                     qos_profile_sensor_data, callback_group=input_group)
        self.create_service(Trigger, '~/reset', self._on_reset, callback_group=input_group)
        self.create_service(ExecuteTrajectory, '~/execute_trajectory',
                            self._on_execute_trajectory, callback_group=goal_group)
        self.action_server = ActionServer(
            self, MoveToTarget, '~/move_to_target', self._execute_goal,
            callback_group=goal_group, goal_callback=lambda _: GoalResponse.ACCEPT,
            cancel_callback=self._on_cancel)

        # --- scene (issue 18): the safety monitor's latched scene reaches the planner --------
        self._scene_follower = SceneFollower(self, self.model.base_link, self._mesh_paths,
                                             self._use_scene, input_group)
        # --- end scene ---------------------------------------------------------------------
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)
        self._monitor_name = self.resolve_topic_name(MONITOR_NODE)
        self.create_subscription(ParameterEvent, '/parameter_events', self._on_parameter_event,
                                 qos_profile_parameter_events)
        self._reload = DescriptionReload(self, self.model, self._planner_of, self._use_planner,
                                         busy=self._busy_reason)
        self._clock_offset = time.time() - time.monotonic()
        self._offset_due = 0.0
        self._loop_stop = threading.Event()
        self.timer = None
        self._loop = None
        if self.get_parameter('control_loop').value == 'thread':
            self._loop = threading.Thread(target=self._control_loop, name='control',
                                          daemon=True)
            self._loop.start()
        else:
            self.timer = self.create_timer(1.0 / self.settings.publish_rate, self._on_tick,
                                           callback_group=timer_group)
        self.get_logger().info(
            f'{self.arm}: output {self.output}'
            + (f' on {self.controller_topic}' if self.output != 'none' else '')
            + f', {self.settings.publish_rate:g} Hz, default law '
            f'{self.settings.motion.default_law}, feedback '
            f'{self.feedback_topic or "none"}, safety '
            f'{"on" if self._config.safety_enabled else "off"}, planning in a '
            f'{"separate process" if self._process_planning else "thread"}')

    # ------------------------------------------------------------------ parameters
    def _declare_parameters(self, config: dict) -> None:
        motion = config.get('motion') or {}
        default_law = motion.get('default_law', laws.MIN_JERK)
        home = home_from_config(self.model, config)
        declare = self.declare_parameter
        # Fixed for the life of the process.
        declare('output', 'none', describe(
            f'where commands go besides joint_states: {" | ".join(OUTPUTS)}', read_only=True))
        declare('controller_topic', '', describe(
            'command topic of the controller; empty: joint_trajectory_controller/'
            'joint_trajectory or forward_position_controller/commands', read_only=True))
        declare('controller_joints', list(self.names), describe(
            "the controller's joint order (forward_position data, JointTrajectory names); "
            "exactly the arm's joints", read_only=True))
        declare('initial_positions', home, describe(
            "start pose, rad, chain order (default: the home pose of the arm's YAML)",
            read_only=True))
        declare('publish_on_start', True, describe(
            'publish the start pose at once; false: publish nothing until the first command '
            '(use on real servos, with feedback_topic)', read_only=True))
        declare('feedback_topic', '', describe(
            'JointState topic of the real arm (the truth); empty: no feedback', read_only=True))
        declare('follow_target', True, describe(
            'follow the live target topic with follow_law', read_only=True))
        declare('planning_process', True, describe(
            'plan in a separate process (keeps IK work off the control timer)', read_only=True))
        declare('control_loop', 'thread', describe(
            'what runs the control tick: thread (a dedicated thread sleeping to absolute '
            'deadlines, wall clock) or timer (an rclpy timer in its own callback group)',
            read_only=True))
        declare('realtime_priority', 50, describe(
            'SCHED_FIFO priority of the control thread (control_loop: thread), 1..98, as '
            "ros2_control's controller_manager asks for; refused without CAP_SYS_NICE or an "
            'rtprio limit (then a warning and normal priority); 0: do not ask', read_only=True,
            integer_range=[_int_range(0, 98)]))
        declare('avoid_obstacle', False, describe(
            'obstacle contact blocks a move (else it is only reported)', read_only=True))
        # Changeable at run time (validated; one snapshot swapped whole).
        declare('publish_rate', 100.0, describe(
            'joint_states and command rate, Hz', floating_point_range=[_range(1.0, 1000.0)]))
        declare('motion_law', default_law, describe(
            f'law of goals that name none: {", ".join(laws.LAWS)}'))
        declare('speed_scale', 0.5, describe(
            'default fraction of the URDF velocity limits, (0, 1]',
            floating_point_range=[_range(0.0, 1.0)]))
        declare('exponential_gain', 3.0, describe(
            'k of the exponential law, 1/s (fraction 1 - exp(-k dt) per tick)',
            floating_point_range=[_range(0.0, 100.0)]))
        declare('speed_cap_iterations', 3, describe(
            'CCD iterations per control tick of the speed-cap law',
            integer_range=[_int_range(1, 1000)]))
        declare('settle_tolerance', 1e-3, describe(
            'exponential law done within this of the goal, rad',
            floating_point_range=[_range(0.0, 0.1)]))
        declare('position_tolerance', 1e-3, describe(
            'speed-cap law done within this of the target, m',
            floating_point_range=[_range(0.0, 0.1)]))
        declare('start_tolerance', 0.02, describe(
            'largest distance of a trajectory start from the current state, rad',
            floating_point_range=[_range(0.0, 1.0)]))
        declare('max_condition_number', 50.0, describe(
            'singularity threshold of Cartesian lines (position Jacobian condition number)',
            floating_point_range=[_range(1.0, 1e6)]))
        declare('max_joint_jump', 0.2, describe(
            'largest joint change between two Cartesian samples, rad',
            floating_point_range=[_range(0.0, math.pi)]))
        declare('min_duration', 0.2, describe(
            'shortest timed move, s', floating_point_range=[_range(0.0, 60.0)]))
        declare('max_duration', 60.0, describe(
            'longest move, s', floating_point_range=[_range(0.0, 600.0)]))
        declare('detour', True, describe('detour a joint path that goes through the floor'))
        declare('watchdog_timeout', 0.5, describe(
            'live target stream stale after this long: hold, s',
            floating_point_range=[_range(0.0, 60.0)]))
        declare('follow_law', laws.EXPONENTIAL, describe(
            f'law following the live target: {", ".join(laws.STREAMING_LAWS)}'))
        declare('follow_solver', '', describe(
            "IK solver for the live target (analytic, closed_form, ccd, dls); '': the arm's "
            'default solver'))
        declare('feedback_stale_periods', 3.0, describe(
            'measured state stale after this many of its periods: hold',
            floating_point_range=[_range(1.0, 1000.0)]))
        declare('feedback_rate', 10.0, describe(
            'action feedback rate, Hz', floating_point_range=[_range(0.0, 100.0)]))
        self._default_solver = arm_of(self.model, config, self.arm).default_solver

    _DYNAMIC = ('publish_rate', 'motion_law', 'speed_scale', 'exponential_gain',
                'speed_cap_iterations', 'settle_tolerance', 'position_tolerance',
                'start_tolerance', 'max_condition_number', 'max_joint_jump', 'min_duration',
                'max_duration', 'detour', 'watchdog_timeout', 'follow_law',
                'follow_solver', 'feedback_stale_periods', 'feedback_rate')

    def _settings_from_parameters(self, overrides: dict) -> ExecutorSettings:
        values = {name: self.get_parameter(name).value for name in self._DYNAMIC}
        values.update(overrides)
        motion = MotionSettings(
            period=1.0 / values['publish_rate'], default_law=values['motion_law'],
            speed_scale=values['speed_scale'], exponential_gain=values['exponential_gain'],
            speed_cap_iterations=values['speed_cap_iterations'],
            settle_tolerance=values['settle_tolerance'],
            position_tolerance=values['position_tolerance'],
            max_condition=values['max_condition_number'],
            max_joint_step=values['max_joint_jump'], min_duration=values['min_duration'],
            max_duration=values['max_duration'], detour=values['detour'],
            validation=ValidationSettings(start_tolerance=values['start_tolerance']))
        return ExecutorSettings(motion, values['publish_rate'], values['watchdog_timeout'],
                                values['follow_law'], values['feedback_stale_periods'],
                                values['feedback_rate'], values['follow_solver'])

    def _settings_reason(self, settings: ExecutorSettings) -> str:
        """'' when ``settings`` are usable on this arm, else why not."""
        reason = settings.validated()
        if not reason and settings.follow_solver:
            reason = self.planner.dispatcher.solver_reason(settings.follow_solver)
            reason = reason and f'follow_solver: {reason}'
        return reason

    def _read_fixed_parameters(self, config: dict) -> None:
        loop = self.get_parameter('control_loop').value
        if loop not in ('thread', 'timer'):
            raise StartupError(f'control_loop "{loop}" is not one of thread, timer')
        self.output = self.get_parameter('output').value
        if self.output not in OUTPUTS:
            raise StartupError(f'output "{self.output}" is not one of {", ".join(OUTPUTS)}')
        self.controller_topic = self.get_parameter('controller_topic').value or \
            DEFAULT_CONTROLLER_TOPICS.get(self.output, '')
        joints = list(self.get_parameter('controller_joints').value)
        order, reason = joint_order(self.names, joints, 'controller_joints')
        if order is None:
            raise StartupError(f"{reason}. Name each of the arm's joints once, in the order "
                               'the controller expects.')
        self.controller_joints = joints
        self.controller_order = [self.names.index(name) for name in joints]
        initial = [float(v) for v in self.get_parameter('initial_positions').value]
        reason = check_home(self.model, initial)
        if reason:
            raise StartupError(f'initial_positions: {reason}')
        self.initial = np.array(initial)
        self.publish_on_start = bool(self.get_parameter('publish_on_start').value)
        self.feedback_topic = self.get_parameter('feedback_topic').value
        if self.feedback_topic and self.resolve_topic_name(self.feedback_topic) == \
                self.resolve_topic_name('joint_states'):
            raise StartupError(
                f'feedback_topic "{self.feedback_topic}" is this executor\'s own joint_states '
                "output: name the real arm's topic, or remap the output "
                '(-r joint_states:=commanded_joint_states)')

    def _validate_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        overrides = {p.name: p.value for p in parameters if p.name in self._DYNAMIC}
        if not overrides:
            return SetParametersResult(successful=True)
        try:
            reason = self._settings_reason(self._settings_from_parameters(overrides))
        except (TypeError, ValueError, ZeroDivisionError) as error:
            reason = str(error)
        return SetParametersResult(successful=not reason, reason=reason)

    def _apply_parameters(self, parameters: list[Parameter]) -> None:
        old_rate = self.settings.publish_rate
        self.settings = self._settings_from_parameters({})
        if self.settings.publish_rate != old_rate and self.timer is not None:
            self.timer.timer_period_ns = int(1e9 / self.settings.publish_rate)

    # ------------------------------------------------------------------ the arm model
    def _planner_of(self, model: ArmModel) -> tuple[worker.PlannerSpec, MotionPlanner]:
        """The planner (and the spec the planning process builds it from) of ``model``."""
        spec = worker.PlannerSpec(model.urdf, self.arm, self._config, model.base_link,
                                  model.tip_link,
                                  self._default_solver, SolveOptions(),
                                  avoid_obstacle=self.get_parameter('avoid_obstacle').value,
                                  obstacle_radius=self._obstacle_radius,
                                  # scene (issue 18): a rebuilt planner starts with the scene
                                  mesh_search_paths=tuple(self._mesh_paths),
                                  scene=self._scene_data)
        return spec, worker.build_planner(spec, model)

    # --- scene (issue 18) ------------------------------------------------------------------
    def _use_scene(self, scene) -> None:
        """A new scene from the safety monitor: the next plan is checked against it (the
        planning process gets it as plain data; a restarted process starts with it)."""
        self._scene_data = SceneData.of(scene)
        self._spec = replace(self._spec, scene=self._scene_data)
        future = self._submit('set_scene', self._scene_data)

        def report(done: Future) -> None:
            if not done.cancelled() and done.exception() is not None:
                self.get_logger().error(f'scene version {scene.version} not usable for '
                                        f'planning: {done.exception()}')
        future.add_done_callback(report)
    # --- end scene -------------------------------------------------------------------------

    # ------------------------------------------------------------------ planning backend
    def _busy_reason(self) -> str:
        with self._goal_lock:
            busy = self._active_goal is not None
        if busy or self.runner.mode in (Mode.MOVING, Mode.FOLLOWING):
            return 'the arm is moving: stop it (or let the move end) before changing its model'
        return ''

    def _use_planner(self, built: tuple[worker.PlannerSpec, MotionPlanner]) -> None:
        spec, planner = built
        old = self._planning
        self.model = planner.model
        self._passive = PassiveJoints.of(self.model)
        self.planner = planner
        self.runner.set_pose_check(planner.safety.check_pose if planner.safety is not None
                                   else None)
        self._follow_law = None
        self._planning = self._start_planning(spec)
        old.shutdown(wait=False)

    def _start_planning(self, spec: worker.PlannerSpec
                        ) -> ThreadPoolExecutor | ProcessPoolExecutor:
        self._process_planning = bool(self.get_parameter('planning_process').value)
        self._spec = spec
        if not self._process_planning:
            return ThreadPoolExecutor(max_workers=1, thread_name_prefix='planner')
        # spawn, not fork: this process already runs DDS threads.
        pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context('spawn'),
                                   initializer=worker.initialize, initargs=(spec,))
        pool.submit(worker.ready)      # start it now, so the first goal does not wait
        return pool

    def _on_parameter_event(self, event: ParameterEvent) -> None:
        """The safety monitor's obstacle_radius changed: plan with it from the next plan on
        (the arm is one value; the monitor owns this run-time setting)."""
        if event.node != self._monitor_name:
            return
        for parameter in event.changed_parameters:
            if parameter.name == 'obstacle_radius' and \
                    parameter.value.type == ParameterType.PARAMETER_DOUBLE:
                self._obstacle_radius = float(parameter.value.double_value)
                self._planner_stale = True
                self.get_logger().info(f'obstacle radius {self._obstacle_radius:.3f} m (set on '
                                       f'{self._monitor_name}): the next plan uses it')

    def _rebuild_planner(self) -> None:
        """The planner with the obstacle radius now in use, here and in the planning
        process (queued before the next plan: the pool has one worker)."""
        try:
            spec, planner = self._planner_of(self.model)
        except ValueError as error:
            self.get_logger().error(f'obstacle radius {self._obstacle_radius}: {error}; '
                                    'planning goes on with the previous one')
            return
        self.planner = planner
        self.runner.set_pose_check(planner.safety.check_pose if planner.safety is not None
                                   else None)
        self._spec = spec
        if self._process_planning:
            try:
                self._planning.submit(worker.rebuild, spec)
            except BrokenProcessPool:
                pass            # the next plan starts a new process, from the new spec

    def _submit(self, function_name: str, *args: object) -> Future:
        """Run worker.<function_name> (process) or the planner's method (thread)."""
        if self._planner_stale:
            self._planner_stale = False
            self._rebuild_planner()
        if self._process_planning:
            try:
                return self._planning.submit(getattr(worker, function_name), *args)
            except BrokenProcessPool:
                self.get_logger().error('the planning process died; starting a new one')
                self._planning = self._start_planning(self._spec)
                return self._planning.submit(getattr(worker, function_name), *args)
        return self._planning.submit(getattr(self.planner, function_name), *args)

    def destroy_node(self) -> None:
        self._loop_stop.set()
        if self._loop is not None:
            self._loop.join(timeout=1.0)
        # Waiting lets the pool close its pipes before the interpreter exits; without it
        # Python 3.11's exit hook can write to a closed one ("OSError: [Errno 9] Bad file
        # descriptor" at Ctrl-C). A plan in progress is not waited for beyond
        # PLANNING_STOP_WAIT: the planning process leaves by itself once this one is gone.
        stopper = threading.Thread(target=self._planning.shutdown, name='planning-stop',
                                   kwargs={'wait': True, 'cancel_futures': True}, daemon=True)
        stopper.start()
        stopper.join(timeout=PLANNING_STOP_WAIT)
        super().destroy_node()

    def _control_loop(self) -> None:
        """The control tick on a thread of its own, at absolute deadlines (no catch-up burst
        after a late tick: the schedule moves on)."""
        priority = int(self.get_parameter('realtime_priority').value)
        if priority > 0:
            try:
                # pid 0: this thread only; the rest of the process keeps normal priority.
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
            except (OSError, AttributeError) as error:
                self.get_logger().warn(f'realtime_priority {priority} not granted ({error}); '
                                       'the control loop runs at normal priority')
        deadline = time.monotonic()
        # Ctrl-C shuts the context down before destroy_node stops this loop: a tick then
        # would publish into a dead context.
        while not self._loop_stop.is_set() and self.context.ok():
            period = 1.0 / self.settings.publish_rate
            deadline += period
            delay = deadline - time.monotonic()
            if delay > 0.0:
                time.sleep(delay)
            elif delay < -period:
                deadline = time.monotonic()
            try:
                self._on_tick()
            except Exception as error:  # noqa: BLE001 - the loop must outlive one bad tick
                if not self.context.ok():
                    break           # shut down during the tick: nothing to report
                self.get_logger().error(f'control tick raised {type(error).__name__}: {error}',
                                        throttle_duration_sec=1.0)

    # ------------------------------------------------------------------ feedback
    def _on_feedback(self, message: JointState) -> None:
        q, reason = positions_by_name(self.names, message.name, message.position)
        if q is None:
            # Not a measurement (a NaN, a missing joint): the state goes stale, not wrong.
            self.get_logger().warn(f'{self.feedback_topic}: joint state ignored: {reason}',
                                   throttle_duration_sec=5.0)
            return
        now = time.monotonic()
        with self._feedback_lock:
            if self._measured_time is not None:
                self._measured_intervals.append(now - self._measured_time)
                del self._measured_intervals[:-FEEDBACK_HISTORY]
            self._measured = q
            self._measured_time = now
        if self.publish_on_start and self.runner.mode == Mode.WAITING:
            self.runner.set_pose(q)

    def _feedback_state(self, now: float) -> tuple[np.ndarray | None, float, float]:
        """(measured pose or None, its age s, the stale threshold s)."""
        with self._feedback_lock:
            if self._measured_time is None:
                return None, math.inf, math.inf
            # The stream's period: the mean arrival interval (DDS may deliver in bursts, so
            # a median could be a fraction of it), never below one control period, since
            # staleness is only looked at once per tick.
            intervals = self._measured_intervals
            period = sum(intervals) / len(intervals) if intervals else 0.0
            period = max(period, self.settings.motion.period)
            limit = self.settings.feedback_stale_periods * period
            return self._measured.copy(), now - self._measured_time, limit

    def _check_feedback(self, now: float) -> None:
        measured, age, limit = self._feedback_state(now)
        if measured is None:
            return
        mode = self.runner.mode
        if age > limit and mode in (Mode.MOVING, Mode.FOLLOWING, Mode.IDLE, Mode.HOLDING):
            self.runner.stop(now, MotionCode.NO_JOINT_STATE,
                             f'measured joint state on {self.feedback_topic} is stale '
                             f'({age:.3f} s old, more than {limit:.3f} s): holding until a '
                             'new command', mode=Mode.STALE_FEEDBACK)
        elif age <= limit and mode == Mode.STALE_FEEDBACK:
            self.runner.stop(now, MotionCode.SUCCESS, 'measured joint state resumed: holding '
                             'until a new command', mode=Mode.HOLDING)

    # ------------------------------------------------------------------ the control tick
    def _stamp(self, now: float) -> Time:
        """The ROS (system) time of monotonic instant ``now``, so a joint state's stamp is
        exactly the instant its pose was sampled at."""
        if now >= self._offset_due:
            # Re-read the offset once a second (system time may be adjusted); keep a reading
            # only when nothing came between its two monotonic reads.
            before = time.monotonic()
            wall = time.time()
            after = time.monotonic()
            if after - before < 50e-6:
                self._clock_offset = wall - (before + after) / 2.0
                self._offset_due = now + 1.0
        return Time(nanoseconds=int(round((now + self._clock_offset) * 1e9)))

    def _on_tick(self) -> None:
        # Sampled at `now`, stamped with the same instant, published right after.
        now = time.monotonic()
        stamp = self._stamp(now)
        if self.feedback_topic:
            self._check_feedback(now)
        with self._output_lock:
            tick = self.runner.tick(now)
            if tick.q is not None:
                # The URDF's joints outside the chain ride along, so robot_state_publisher
                # has a frame for every link (a Panda's fingers); never commanded.
                q, v = tick.q.tolist(), tick.v.tolist()
                state = JointState(name=self._state_names,
                                   position=q + self._passive.positions(q),
                                   velocity=v + self._passive.velocities(v))
                state.header.stamp = stamp.to_msg()
                self.state_publisher.publish(state)
                self._publish_command(tick)
        tick.finish()
        if tick.changed:
            self._publish_status(now)

    def _publish_command(self, tick: Tick) -> None:
        if self.controller_publisher is None:
            return
        if self.output == 'forward_position':
            if tick.stream:
                self.controller_publisher.publish(
                    Float64MultiArray(data=tick.q[self.controller_order].tolist()))
        elif tick.point or tick.hold:
            velocity = tick.v if tick.point else np.zeros_like(tick.q)
            self.controller_publisher.publish(messages.point_message(
                tick.q, velocity, self.controller_order, self.controller_joints,
                self.settings.motion.period))

    def _publish_status(self, now: float) -> None:
        mode, code, message, law = self.runner.status()
        _, age, _ = self._feedback_state(now) if self.feedback_topic else (None, -1.0, 0.0)
        status = ExecutorStatus(state=int(mode), message=message, law=law,
                                feedback_age=float(age) if math.isfinite(age) else -1.0)
        status.header.stamp = self.get_clock().now().to_msg()
        status.last_error.val = int(code)
        self.status_publisher.publish(status)

    # ------------------------------------------------------------------ emergency stop
    def _on_emergency_stop(self, message: Bool) -> None:
        if not message.data:
            self._estop_pressed = False
            return
        self._estop_pressed = True
        self.runner.emergency_stop(time.monotonic(), 'emergency stop: held; goals refused '
                                   'until ~/reset')
        with self._goal_lock:
            if self._active_goal is not None:   # still planning: it must not start
                self._active_goal.finish(MotionCode.EMERGENCY_STOPPED, 'emergency stop')
        self.get_logger().warn('emergency stop: holding', throttle_duration_sec=1.0)

    def _on_reset(self, request: Trigger.Request, response: Trigger.Response
                  ) -> Trigger.Response:
        if self._estop_pressed:
            response.success = False
            response.message = ('the emergency stop is still pressed (the last emergency_stop '
                                'message was true): release it first')
        elif self.runner.reset('emergency stop reset: holding; goals accepted again'):
            response.success = True
            response.message = 'reset: holding where the arm stopped; goals accepted again'
        else:
            response.success = False
            response.message = 'no emergency stop to reset'
        return response

    # ------------------------------------------------------------------ start pose
    def _start_pose(self, now: float) -> tuple[np.ndarray | None, MotionCode, str]:
        """The pose a new command starts from, or why there is none."""
        # A runner still WAITING adopts this pose only when a motion actually starts, so a
        # refused command leaves it silent.
        commanded = self.runner.pose()
        if not self.feedback_topic:
            return (self.initial.copy() if commanded is None else commanded,
                    MotionCode.SUCCESS, '')
        measured, age, limit = self._feedback_state(now)
        if measured is None or age > limit:
            what = 'none received yet' if measured is None else f'the last is {age:.2f} s old'
            return None, MotionCode.NO_JOINT_STATE, (
                f'no fresh measured joint state on {self.feedback_topic} ({what})')
        if commanded is None:
            return measured, MotionCode.SUCCESS, ''
        gap = np.abs(commanded - measured)
        joint = int(np.argmax(gap))
        tolerance = self.settings.motion.validation.start_tolerance
        if gap[joint] > tolerance:
            return None, MotionCode.START_MISMATCH, (
                f'the commanded pose is {gap[joint]:.4f} rad from the measured joint state on '
                f'{self.names[joint]} (tolerance {tolerance:g} rad)')
        return commanded, MotionCode.SUCCESS, ''

    # ------------------------------------------------------------------ starting a motion
    def _begin(self, trajectory: Trajectory, owner: Owner) -> tuple[MotionCode, str]:
        """Hand a checked trajectory to the runner and the controller, atomically."""
        message = None
        if self.output == 'joint_trajectory':
            message = messages.trajectory_message(trajectory, self.controller_order,
                                                  self.controller_joints)
        tolerance = self.settings.motion.validation.start_tolerance
        with self._output_lock:
            code, reason = self.runner.start(trajectory, owner, time.monotonic(), tolerance)
            if code == MotionCode.SUCCESS and message is not None:
                self.controller_publisher.publish(message)
        return code, reason

    def _take_over(self, owner: Owner) -> None:
        """Make ``owner`` the active command: the previous one ends PREEMPTED, the arm holds."""
        with self._goal_lock:
            previous = self._active_goal
            self._active_goal = owner
        if previous is not None:
            previous.finish(MotionCode.PREEMPTED, f'preempted by {owner.name}')
        if self.runner.mode in (Mode.MOVING, Mode.FOLLOWING):
            self.runner.stop(time.monotonic(), MotionCode.PREEMPTED,
                             f'preempted by {owner.name}')

    def _release(self, owner: Owner) -> None:
        with self._goal_lock:
            if self._active_goal is owner:
                self._active_goal = None

    # ------------------------------------------------------------------ the action
    def _on_cancel(self, goal_handle: ServerGoalHandle) -> CancelResponse:
        """Hold at once (not at the goal thread's next look), then accept."""
        owner = self._owners.get(bytes(goal_handle.goal_id.uuid))
        if owner is not None and not owner.done.is_set():
            message = 'canceled by the client; the arm holds where it was'
            self.runner.stop(time.monotonic(), MotionCode.CANCELED, message, owner)
            owner.finish(MotionCode.CANCELED, message)     # when it was still planning
        return CancelResponse.ACCEPT

    def _execute_goal(self, goal_handle: ServerGoalHandle) -> MoveToTarget.Result:
        uuid = bytes(goal_handle.goal_id.uuid)
        owner = Owner(f'goal {uuid.hex()[:8]}')
        self._owners[uuid] = owner
        try:
            return self._run_goal(goal_handle, owner)
        except Exception as error:  # noqa: BLE001 - a bug must end the goal, not the node
            if not self.context.ok():
                # Shut down mid-goal (Ctrl-C): the goal's publishers are gone with the
                # context, so there is no one to tell; end quietly.
                return MoveToTarget.Result(message='the executor shut down')
            self.runner.stop(time.monotonic(), MotionCode.INTERNAL_ERROR, str(error), owner)
            self.get_logger().error(f'{owner.name}: {type(error).__name__}: {error}')
            return self._finish_goal(goal_handle, owner, MotionCode.INTERNAL_ERROR,
                                     f'the executor raised {type(error).__name__}: {error}')
        finally:
            self._owners.pop(uuid, None)
            self._release(owner)

    def _finish_goal(self, goal_handle: ServerGoalHandle, owner: Owner, code: MotionCode,
                     message: str, plan: Plan | None = None, ik_code: int = 0,
                     path: PathOutcome | None = None) -> MoveToTarget.Result:
        result = MoveToTarget.Result()
        result.error_code.val = int(code)
        result.ik_error_code.val = int(ik_code)
        result.message = message
        # How far path IK followed a Cartesian line: the plan's, or the failed plan's.
        path = plan.path if plan is not None else (path or PathOutcome())
        result.path_fraction = float(path.fraction)
        result.path_stop_code = int(path.stop_code)
        result.path_stop_waypoint = int(path.stop_waypoint)
        # The last pose commanded for this goal (another goal may be moving the arm now).
        pose = owner.record[-1][1] if owner.record else self.runner.pose()
        if plan is not None and pose is not None:
            tip = self.model.fk(pose)[:3, 3]
            result.final_error = float(np.linalg.norm(tip - plan.target))
            end = owner.record[-1][0] if owner.record else 0.0
            keep = plan.contact_times <= end + 1e-9
            result.contact_times = plan.contact_times[keep].tolist()
            result.contact_points = [Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))
                                     for p in plan.contact_points[keep]]
        result.executed_path = messages.executed_path_message(owner.record, self.names)
        if not goal_handle.is_active:
            return result
        if code == MotionCode.CANCELED:
            # The server marks the goal CANCELING right after our cancel callback returns;
            # this thread may get here first.
            deadline = time.monotonic() + 1.0
            while not goal_handle.is_cancel_requested and time.monotonic() < deadline:
                time.sleep(0.005)
        if code == MotionCode.SUCCESS:
            goal_handle.succeed()
        elif code == MotionCode.CANCELED and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:
            goal_handle.abort()
        if code != MotionCode.SUCCESS:
            self.get_logger().info(f'{owner.name}: {code.name}: {message}')
        return result

    def _run_goal(self, goal_handle: ServerGoalHandle, owner: Owner) -> MoveToTarget.Result:
        if self.runner.mode == Mode.EMERGENCY_STOP:
            return self._finish_goal(goal_handle, owner, MotionCode.EMERGENCY_STOPPED,
                                     'emergency stop active: goals are refused until ~/reset')
        self._take_over(owner)
        settings = self.settings
        now = time.monotonic()
        start, code, reason = self._start_pose(now)
        if start is None:
            return self._finish_goal(goal_handle, owner, code, reason)
        goal = messages.goal_from_message(goal_handle.request)
        future = self._submit('plan', goal, start, settings.motion)
        while not future.done():
            if self._interrupted(goal_handle, owner):
                return self._finish_goal(goal_handle, owner, *self._interruption(owner))
            time.sleep(POLL_PERIOD)
        try:
            plan = future.result()
        except BrokenProcessPool:
            return self._finish_goal(goal_handle, owner, MotionCode.INTERNAL_ERROR,
                                     'the planning process died; try again')
        if self._interrupted(goal_handle, owner):
            return self._finish_goal(goal_handle, owner, *self._interruption(owner))
        if isinstance(plan, PlanFailure):
            self.path_publisher.publish(messages.failure_markers(
                self.model.base_link, plan.reached, plan.point, None))
            error = plan.error
            return self._finish_goal(goal_handle, owner, error.code, error.message,
                                     ik_code=int(error.ik_code or 0), path=plan.path)
        if plan.preview is not None:
            self.path_publisher.publish(messages.planned_markers(
                self.model.base_link, plan.preview, plan.target))
        code, reason = self._begin(plan.trajectory, owner)
        if code != MotionCode.SUCCESS:
            return self._finish_goal(goal_handle, owner, code, reason, plan)
        return self._follow_through(goal_handle, owner, plan, settings)

    def _interrupted(self, goal_handle: ServerGoalHandle, owner: Owner) -> bool:
        if goal_handle.is_cancel_requested and owner.outcome is None:
            owner.finish(MotionCode.CANCELED, 'canceled by the client; the arm holds where it '
                         'was')
        return owner.done.is_set()

    @staticmethod
    def _interruption(owner: Owner) -> tuple[MotionCode, str]:
        if owner.outcome is None:
            return MotionCode.INTERNAL_ERROR, 'the motion ended without an outcome'
        return owner.outcome, owner.message

    def _follow_through(self, goal_handle: ServerGoalHandle, owner: Owner, plan: Plan,
                        settings: ExecutorSettings) -> MoveToTarget.Result:
        """Wait for the move to end (or be stopped), publishing feedback."""
        feedback_period = 1.0 / settings.feedback_rate
        next_feedback = 0.0
        while not owner.done.is_set():
            now = time.monotonic()
            if goal_handle.is_cancel_requested:
                self.runner.stop(now, MotionCode.CANCELED,
                                 'canceled by the client; the arm holds where it was', owner)
                break
            if now >= next_feedback:
                next_feedback = now + feedback_period
                self._publish_feedback(goal_handle, owner, plan, now)
            owner.done.wait(POLL_PERIOD)
        code, message = self._interruption(owner)
        if code == MotionCode.SUCCESS:
            message = f'{plan.message}; done'
        return self._finish_goal(goal_handle, owner, code, message, plan)

    def _publish_feedback(self, goal_handle: ServerGoalHandle, owner: Owner, plan: Plan,
                          now: float) -> None:
        pose = self.runner.pose()
        if pose is None:
            return
        elapsed, duration = self.runner.progress(owner, now)
        feedback = MoveToTarget.Feedback()
        feedback.progress = float(elapsed / duration) if duration > 0.0 else 1.0
        tip = self.model.fk(pose)[:3, 3]
        feedback.tip_position = Point(x=float(tip[0]), y=float(tip[1]), z=float(tip[2]))
        feedback.current = JointState(name=list(self.names), position=pose.tolist())
        feedback.current.header.stamp = self.get_clock().now().to_msg()
        feedback.contacts_so_far = int(np.count_nonzero(plan.contact_times <= elapsed + 1e-9))
        goal_handle.publish_feedback(feedback)

    # ------------------------------------------------------------------ client trajectories
    def _on_execute_trajectory(self, request: ExecuteTrajectory.Request,
                               response: ExecuteTrajectory.Response
                               ) -> ExecuteTrajectory.Response:
        try:
            code, message = self._execute_trajectory(request.trajectory)
        except Exception as error:  # noqa: BLE001 - an escaping exception stops the service
            code, message = MotionCode.INTERNAL_ERROR, f'{type(error).__name__}: {error}'
        response.error_code.val = int(code)
        response.message = message
        if code != MotionCode.SUCCESS:
            self.get_logger().info(f'execute_trajectory refused: {code.name}: {message}')
        return response

    def _execute_trajectory(self, message: JointTrajectory) -> tuple[MotionCode, str]:
        trajectory, error = trajectory_from_points(self.names, message.joint_names,
                                                   messages.points_from_message(message))
        if error is not None:
            return error.code, error.message
        if self.runner.mode == Mode.EMERGENCY_STOP:
            return MotionCode.EMERGENCY_STOPPED, 'emergency stop active: call ~/reset first'
        now = time.monotonic()
        start, code, reason = self._start_pose(now)
        if start is None:
            return code, reason
        future = self._submit('validate', trajectory, start, self.settings.motion)
        validation = future.result(timeout=30.0)
        if validation.error is not None:
            return validation.error.code, validation.error.message
        if trajectory.times[0] > 0.0:
            # Like a joint_trajectory_controller: move from the current pose to the first
            # point in its time (the start check above bounds that step).
            first = Trajectory.hold(self.names, start)
            trajectory = Trajectory(
                self.names, np.concatenate([[0.0], trajectory.times]),
                np.vstack([first.positions, trajectory.positions]),
                np.vstack([np.zeros((1, len(self.names))), trajectory.velocities]),
                trajectory.interpolation)
        owner = Owner('execute_trajectory')
        self._take_over(owner)
        self._release(owner)             # nobody waits for it: a goal may preempt it at once
        code, reason = self._begin(replace(trajectory, law='client trajectory'), owner)
        if code != MotionCode.SUCCESS:
            return code, reason
        return MotionCode.SUCCESS, (f'accepted: {len(trajectory)} points, '
                                    f'{trajectory.duration:.2f} s')

    # ------------------------------------------------------------------ live target
    def _on_target(self, message: PointStamped) -> None:
        now = time.monotonic()
        point = np.array([message.point.x, message.point.y, message.point.z])
        frame = message.header.frame_id.lstrip('/')
        if not np.all(np.isfinite(point)) or frame not in ('', self.model.base_link):
            self.get_logger().warn(f'target ignored: {point.tolist()} in frame "{frame}" '
                                   '(finite values in the base frame only)',
                                   throttle_duration_sec=2.0)
            return
        mode = self.runner.mode
        if mode == Mode.EMERGENCY_STOP:
            return
        with self._goal_lock:
            busy = self._active_goal is not None
        if busy or mode == Mode.MOVING:
            # A goal or a client trajectory has the arm: the stream waits for it to end.
            self.get_logger().info('target ignored while a goal runs', throttle_duration_sec=5.0)
            return
        settings = self.settings
        law = self._follow_law if self.runner.following() else None
        if law is None:
            law = self._new_follow_law(settings)
        if isinstance(law, laws.SpeedCapFollow):
            law.target = point
        else:
            law.goal = self._follow_goal(point)
        if self.runner.following():
            self.runner.touch(now)
            return
        start, code, reason = self._start_pose(now)
        if start is None:
            self.get_logger().warn(f'target ignored: {reason}', throttle_duration_sec=2.0)
            return
        owner = Owner('live target')
        code, reason = self.runner.follow(law, owner, now, settings.watchdog_timeout, start)
        if code == MotionCode.SUCCESS:
            self._follow_law = law

    def _new_follow_law(self, settings: ExecutorSettings
                        ) -> laws.ExponentialFollow | laws.SpeedCapFollow:
        limits = self.model.velocity_limits * settings.motion.speed_scale
        if settings.follow_law == laws.SPEED_CAP and 'ccd' in self.planner.dispatcher.solvers:
            return laws.SpeedCapFollow(laws.SpeedCap(self.planner.dispatcher.solvers['ccd'],
                                                     limits,
                                                     settings.motion.speed_cap_iterations))
        return laws.ExponentialFollow(laws.ExponentialSmoothing(
            settings.motion.exponential_gain, limits, self.model.lower, self.model.upper))

    def _follow_goal(self, point: np.ndarray) -> np.ndarray | None:
        """IK of a live target, seeded with the commanded pose; None (stay) when there is no
        answer or the answer is not safe."""
        seed = self.runner.pose()
        if seed is None:
            seed = self.initial
        answer = self.planner.dispatcher.solve(
            IKRequest(position=tuple(point), seed_names=self.names, seed_positions=tuple(seed),
                      solver=self.settings.follow_solver),
            self.planner.ik_options, seed)
        if not answer.result.success or answer.result.q is None:
            return None
        goal = np.asarray(answer.result.q, dtype=float)
        if self.planner.safety is not None and self.planner.safety.check_pose(goal):
            return None
        return goal


def main(args: list[str] | None = None) -> None:
    sys.exit(run(TrajectoryExecutor, args,
                 executor_factory=lambda: HandoffExecutor(num_threads=EXECUTOR_THREADS)))


if __name__ == '__main__':
    main()
