"""Safety of arm poses and motions, without ROS: the floor, the obstacle and detours.

- ``config``: the ``safety:`` section of an arm's YAML, validated (``load_safety_config``).
- ``geometry``: link capsules and vectorised pose checks (``SafetyGeometry``, ``Verdict``).
- ``rules``: the floor rules for choosing among closed-form IK solutions.
- ``paths``: sampling a joint path, contacts in time, ``check_path``.
- ``planning``: the detour planner around the floor and the (shoulder, elbow) joint map.
"""

from arm_ik.kinematics.safety.config import load_safety_config, SafetyConfig, SafetyConfigError
from arm_ik.kinematics.safety.geometry import PoseCheck, PoseChecks, SafetyGeometry, Verdict

__all__ = ['load_safety_config', 'PoseCheck', 'PoseChecks', 'SafetyConfig',
           'SafetyConfigError', 'SafetyGeometry', 'Verdict']
