"""Parameters of lab_viewer (besides the arm's: robot_description, arm, frames), in one table."""

from __future__ import annotations

from arm_ik.lab.controls import EXECUTOR, IK_SERVER, SAFETY
from arm_ik.nodes.parameters import Param, ParameterTable

# Parameter naming each node of the pipeline the lab talks to → that node's default name.
NODE_NAMES = {'ik_node': IK_SERVER, 'executor_node': EXECUTOR, 'safety_node': SAFETY,
              'target_node': 'target_input', 'info_node': 'arm_info',
              'markers_node': 'markers', 'state_publisher_node': 'robot_state_publisher'}

PARAMETERS = ParameterTable(
    Param('host', '127.0.0.1', 'address the web server listens on; 127.0.0.1: this machine '
          'only (0.0.0.0 would let anyone on the network drive the arm)', read_only=True),
    Param('port', 8080, 'TCP port of the web server (0: any free port; a port in use: the '
          'next free one, logged)', read_only=True, low=0, high=65535),
    Param('urdf_file', '', 'path of the URDF file robot_description came from, if any: '
          'package:// meshes are looked for in its folder and its parents (then '
          'AMENT_PREFIX_PATH and ROS_PACKAGE_PATH); meshes that are not found are drawn as '
          'capsules', read_only=True),
    Param('control_service', False, 'serve ~/set_controls (rcl_interfaces/SetParameters) to '
          'change panel inputs and press buttons by key, as a browser user would (scripts, '
          'tests)', read_only=True),
    *(Param(key, default, f"name of the pipeline's {default} node in this namespace",
            read_only=True) for key, default in NODE_NAMES.items()),
    Param('render_rate', 20.0, 'most arm poses sent to the browser per second, Hz',
          low=1.0, high=60.0),
    Param('target_rate', 20.0, 'rate of the live target stream while "Live follow" is on, Hz '
          "(above the executor watchdog's 1 / watchdog_timeout)", low=1.0, high=100.0),
    Param('error_history', 30.0, 'length of the live tracking-error plot, s',
          low=1.0, high=600.0),
    Param('service_timeout', 2.0, "longest wait for a node's answer (parameters, services), s",
          low=0.05, high=30.0),
)
