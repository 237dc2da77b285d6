"""Controller-side rules of control_msgs/FollowJointTrajectory, without ROS.

Shared by everything that serves or sends a FollowJointTrajectory goal: the controller stand-in,
the servo bridge and the executor's action route.

- ``codes``: the action's result codes and what each means in words (``ControllerOutcome``).
- ``tolerances``: JointTolerance values (0 = default, -1 = erased) and the checks.
- ``goal_rules``: ``TrajectoryGoal`` (plain data of a goal), ``TrajectoryGoalRules`` (accept or
  reject it as joint_trajectory_controller does) and ``SampledTrajectory`` (interpolation).
- ``tracker``: ``GoalTracker``, one accepted goal on the server side: sample(t), check(t, actual).
- ``client_state``: ``ControllerGoalMonitor``, one goal on the client side: sent, accepted,
  feedback, result, cancel, with bounded waits.
- ``settings``: the arm configuration's ``controller`` section as goal tolerances and waits.
- ``ros2_control_files``: the ros2_control xacro block and controllers YAML of an arm.

A controller (the stand-in, the servo bridge) uses it like this, once per goal and cycle::

    rules = TrajectoryGoalRules(ControllerSettings(joints, defaults))   # once
    answer = rules.accept(goal, now)            # goal: TrajectoryGoal (control_messages)
    if not answer.accepted: reject, log answer.reason
    tracker = GoalTracker(rules, goal, now, measured_positions)
    every cycle: command = tracker.sample(now).positions
                 verdict = tracker.check(now, measured_positions)
                 if verdict.done: result(verdict.code, verdict.message)

Units: rad (m for prismatic joints), rad/s, rad/s², s.
"""
