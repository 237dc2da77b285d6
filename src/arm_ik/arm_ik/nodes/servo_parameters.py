"""servo_bridge's parameters, declared with descriptors (arm_ik.nodes.parameters)."""

from __future__ import annotations

from arm_ik.nodes.parameters import Param, ParameterTable
from arm_servos.safety import FAULT_POLICIES

PARAMETERS = ParameterTable(
    Param('robot_description', '', 'URDF text (empty: urdf_file, else the robot_description '
          'topic)', read_only=True),
    Param('urdf_file', '', 'URDF file, read when robot_description is empty', read_only=True),
    Param('base_frame', '', "root link of the controlled chain (empty: the URDF's root)",
          read_only=True),
    Param('tip_frame', '', 'tip link of the controlled chain (empty: tool0 or the deepest '
          'leaf); calibrated joints off the chain (a gripper) are published and held',
          read_only=True),
    Param('calibration_file', '', 'calibration YAML written by servo_calibrate, or a LeRobot '
          'calibration JSON as LeRobot wrote it (required)', read_only=True),
    Param('lerobot_joint_map', '', "LeRobot file: motor=joint,... where its motor names are "
          "not the URDF's joints (motor=- leaves one out)", read_only=True),
    Param('lerobot_protocol', '', "LeRobot file: feetech or dynamixel ('': from its folder "
          'name, e.g. so101_follower, koch_leader)', read_only=True,
          choices=('', 'feetech', 'dynamixel')),
    Param('port', '', 'serial device, e.g. /dev/ttyACM0 or the simulated bus link (required)',
          read_only=True),
    Param('rate', 100.0, 'Hz, bus cycles (one sync read + one sync write each) and '
          'joint_states', read_only=True, low=1.0, high=1000.0),
    Param('reply_timeout', 0.0, 's to wait for the replies of one sync read (0: their bytes '
          'on the wire + 3 ms; raise it for an adapter with a 16 ms latency timer)',
          read_only=True, low=0.0, high=1.0),
    Param('retries', 2, 'extra sync reads of silent servos within one cycle',
          read_only=True, low=0, high=10),
    Param('silent_cycles', 5, 'cycles a servo may stay silent before the arm stops',
          read_only=True, low=1, high=1000),
    Param('on_fault', 'hold', 'what a servo fault does to the arm', read_only=True,
          choices=FAULT_POLICIES),
    Param('command_timeout', 0.5, 's without a ~/commands message before holding the measured '
          'position', read_only=True, low=0.0, high=60.0, low_open=True),
    Param('approach_velocity', 0.3, 'rad/s of the first motion after enable or a fault',
          read_only=True, low=0.0, high=100.0, low_open=True),
    Param('velocity_cap', 0.0, 'rad/s below the URDF velocity limits (0: the URDF limits)',
          read_only=True, low=0.0, high=100.0),
    Param('clip_commands', False, 'clip commands outside the calibrated range instead of '
          'refusing them', read_only=True),
    Param('path_tolerance', 0.0, 'rad, default path tolerance per joint (0: none, as JTC)',
          read_only=True, low=0.0, high=10.0),
    Param('goal_tolerance', 0.02, 'rad, default goal tolerance per joint', read_only=True,
          low=0.0, high=10.0),
    Param('goal_time', 1.0, 's after the end to reach the goal tolerance (0: wait forever)',
          read_only=True, low=0.0, high=3600.0),
    Param('action_monitor_rate', 20.0, 'Hz, feedback and results of the active goal',
          read_only=True, low=1.0, high=1000.0),
    Param('diagnostics_rate', 1.0, 'Hz, /diagnostics', read_only=True, low=0.1, high=100.0),
    Param('role', 'follower', 'leader: a teleoperation leader arm, read only (torque never '
          'written; enable, commands and goals refused)', read_only=True,
          choices=('follower', 'leader')),
)
