"""The requests of ik_server's node tests: a request for a target, a request's fields set,
and one real request per error code with the words its answer must hold
(test_ik_server_node.py runs them against the real servers)."""

from __future__ import annotations

import math

import numpy as np

from arm_ik.client import build_request
from arm_interfaces.srv import SolveIK
from arm_kinematics.ik.result import ErrorCode, GoalType

NAN = math.nan


def request_for(target, **kwargs) -> SolveIK.Request:
    return build_request(np.asarray(target, dtype=float).tolist(), **kwargs)


def with_fields(request: SolveIK.Request, **fields) -> SolveIK.Request:
    for name, value in fields.items():
        if name == 'frame_id':
            request.target.header.frame_id = value
        elif name == 'timeout_ns':
            request.timeout.sec, request.timeout.nanosec = 0, value
        else:
            setattr(request, name, value)
    return request


SIX_FAR = [1.0, 0.2, 0.8]     # m, reachable, well away from the six_axis home pose
POINTER_HOLE_EDGE = [0.0, 0.0, 0.525]   # 0.12 m above pointer3's shoulder: elbow 175.8°

ERROR_CASES = {
    'ok': ('pointer3', 'analytic', lambda: request_for([1.0, 0.2, 1.2]), ErrorCode.OK,
           ['solved in closed form']),
    'out_of_reach': ('six_axis', 'dls', lambda: request_for([2.61, 0.0, 0.4]),
                     ErrorCode.OUT_OF_REACH,
                     ['target 2.61 m from the shoulder', 'maximum reach 2.320 m']),
    'inside_inner_hole': ('manipulator3d', 'analytic', lambda: request_for([0.05, 0.0, 0.02]),
                          ErrorCode.INSIDE_INNER_HOLE,
                          ['inside the inner hole', 'minimum reach 0.100 m']),
    'below_min_height_pointer3': ('pointer3', 'analytic', lambda: request_for([0.5, 0, 0.45]),
                                  ErrorCode.BELOW_MIN_HEIGHT,
                                  ['0.045 m above the shoulder', 'at least 0.100 m']),
    'below_min_height_manipulator3d': ('manipulator3d', 'dls',
                                       lambda: request_for([0.5, 0.0, -0.1]),
                                       ErrorCode.BELOW_MIN_HEIGHT, ['at least 0.000 m']),
    'joint_limits': ('pointer3', 'analytic', lambda: request_for(POINTER_HOLE_EDGE),
                     ErrorCode.JOINT_LIMITS,
                     ['every solution breaks a joint limit', 'elbow_pitch would need -175.8°',
                      '[-160.0°, 160.0°]']),
    'not_converged': ('pointer3', 'dls', lambda: request_for(POINTER_HOLE_EDGE),
                      ErrorCode.NOT_CONVERGED,
                      ['did not converge', 'best position error 0.208 m']),
    'timed_out': ('six_axis', 'dls', lambda: with_fields(request_for(SIX_FAR),
                                                         timeout_ns=1000),
                  ErrorCode.TIMED_OUT, ['timed out after 1e-06 s']),
    'invalid_input': ('six_axis', 'dls', lambda: request_for([NAN, 0.2, 0.8]),
                      ErrorCode.INVALID_INPUT, ['target.pose.position[0] is nan']),
    'unknown_frame': ('six_axis', 'closed_form',
                      lambda: request_for(SIX_FAR, frame_id='world'), ErrorCode.UNKNOWN_FRAME,
                      ['"world"', 'base frame "base_link"']),
    'unknown_joint_names': ('pointer3', 'analytic',
                            lambda: request_for([1.0, 0.2, 1.2],
                                                seed={'a': 0.0, 'b': 0.0, 'c': 0.0}),
                            ErrorCode.UNKNOWN_JOINT_NAMES,
                            ["unknown 'a', 'b', 'c'",
                             "the arm's joints: base_yaw, shoulder_pitch, elbow_pitch"]),
    'unknown_solver': ('six_axis', None, lambda: with_fields(request_for(SIX_FAR),
                                                             solver='fabrik'),
                       ErrorCode.UNKNOWN_SOLVER,
                       ['unknown solver "fabrik"', '(exact, lower case)',
                        'analytic, closed_form, ccd, dls']),
    'solver_not_applicable_arm': ('ccd5', 'analytic', lambda: request_for([0.3, 0.2, 0.9]),
                                  ErrorCode.SOLVER_NOT_APPLICABLE,
                                  ['does not apply to ccd5', 'needs 3 joints']),
    # Below the floor plane (base_link z = 0): a numeric answer through the floor is refused,
    # a closed form offers the closest pose above the floor instead.
    'floor_collision': ('six_axis', 'dls', lambda: request_for([1.0, 0.2, -0.3]),
                        ErrorCode.FLOOR_COLLISION,
                        ['the dls solutions found from', 'below the floor']),
    'partial_solution': ('six_axis', 'closed_form', lambda: request_for([1.0, 0.2, -0.3]),
                         ErrorCode.PARTIAL_SOLUTION,
                         ['would hit the floor', 'the closest pose above the floor is',
                          'short of the target']),
    'solver_not_applicable_goal': ('pointer3', 'ccd',
                                   lambda: request_for([1.0, 0.2, 1.2],
                                                       goal=GoalType.TOOL_DOWN),
                                   ErrorCode.SOLVER_NOT_APPLICABLE,
                                   ['POSITION goals only', 'use dls']),
}
