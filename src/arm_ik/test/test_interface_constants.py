"""The .msg/.srv constants and the core's enums must never drift apart."""

from arm_interfaces.msg import IKErrorCode
from arm_interfaces.srv import SolveIK
from arm_kinematics.ik.request import LIMITS_DEFAULT, LIMITS_OFF, LIMITS_ON
from arm_kinematics.ik.result import ErrorCode, GoalType


def test_error_codes_match_the_message_constants():
    constants = {name: getattr(IKErrorCode, name) for name in dir(IKErrorCode)
                 if name.isupper() and isinstance(getattr(IKErrorCode, name), int)}
    assert constants == {code.name: int(code) for code in ErrorCode}


def test_goal_and_limit_constants_match():
    assert SolveIK.Request.GOAL_POSITION == GoalType.POSITION
    assert SolveIK.Request.GOAL_TOOL_DOWN == GoalType.TOOL_DOWN
    assert SolveIK.Request.GOAL_FULL_POSE == GoalType.FULL_POSE
    assert (SolveIK.Request.LIMITS_DEFAULT, SolveIK.Request.LIMITS_ON,
            SolveIK.Request.LIMITS_OFF) == (LIMITS_DEFAULT, LIMITS_ON, LIMITS_OFF)


def test_path_codes_match_the_cartesian_path_constants():
    from arm_interfaces.srv import CartesianPath, SolveIKBatch
    from arm_kinematics.motion.batch_ik import MAX_BATCH
    from arm_kinematics.motion.path_request import PathCode
    constants = {name: getattr(CartesianPath.Request, name) for name in PathCode.__members__}
    assert constants == {code.name: int(code) for code in PathCode}
    assert (CartesianPath.Request.GOAL_POSITION, CartesianPath.Request.GOAL_TOOL_DOWN,
            CartesianPath.Request.GOAL_FULL_POSE) == tuple(GoalType)
    assert SolveIKBatch.Request.MAX_TARGETS == MAX_BATCH


def test_target_status_states_match_the_cycle_core():
    from arm_interfaces.msg import TargetStatus
    from arm_kinematics.tasks.cycle_effects import ReportState
    constants = {name: getattr(TargetStatus, name) for name in dir(TargetStatus)
                 if name.isupper() and isinstance(getattr(TargetStatus, name), int)}
    assert constants == {state.name: int(state) for state in ReportState}


def test_joint_map_cell_bits_match_the_lab_image():
    from arm_ik.lab import joint_map_image
    from arm_interfaces.msg import JointMap
    assert (JointMap.CELL_FLOOR, JointMap.CELL_CONTACT, JointMap.CELL_SELF_COLLISION,
            JointMap.CELL_SCENE_CONTACT) == (
        joint_map_image.CELL_FLOOR, joint_map_image.CELL_CONTACT,
        joint_map_image.CELL_SELF_COLLISION, joint_map_image.CELL_SCENE_CONTACT)


def test_motion_codes_match_the_message_constants():
    from arm_interfaces.msg import MotionErrorCode
    from arm_kinematics.motion.errors import MotionCode
    constants = {name: getattr(MotionErrorCode, name) for name in dir(MotionErrorCode)
                 if name.isupper() and isinstance(getattr(MotionErrorCode, name), int)}
    assert constants == {code.name: int(code) for code in MotionCode}
