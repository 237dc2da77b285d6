"""Benchmark: the latency the FollowJointTrajectory action adds between a MoveToTarget goal
and the controller receiving the move.

Two trajectory_executor processes of the pointer3 arm run side by side over DDS: one with
``output: follow_joint_trajectory`` against controller_stand_in (the action route), one with
``output: joint_trajectory`` (the topic route, the peer: the same planning and checks, the
trajectory published on a topic). A client sends the same joint goals to each in turn and
measures, per goal, from sending the MoveToTarget goal (wall clock) to
- action route: the controller's acceptance of the goal (the goal's stamp in the action's
  status topic, set by the server when it accepts; same machine, same clock);
- topic route: the arrival of the JointTrajectory at a subscriber.
Reported: p50 / p99 / max of each in ms, the added latency (action - topic) at p50 and p99,
and the ratio action / topic. Results merge into ``bench_results.json`` under
``controller_action``.

Run from a built workspace: ``python benchmarks/bench_controller_action.py [--quick]``.
"""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path
import sys
import time

import numpy as np
from results_file import detect_distro, merge_section

REPO = Path(__file__).resolve().parents[1]
JOINTS = ('base_yaw', 'shoulder_pitch', 'elbow_pitch')
HOME = [0.0, 0.5235987755982988, -1.0471975511965976]
TARGETS = ([0.3, 0.6, -0.9], HOME)
MEASURED = 'joint_state_broadcaster/joint_states'


def percentiles(values: list[float]) -> dict[str, float]:
    array = np.asarray(values) * 1e3
    return {'p50': float(np.percentile(array, 50)), 'p99': float(np.percentile(array, 99)),
            'max': float(array.max()), 'n': len(values)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--quick', action='store_true', help='10 goals per route, not 40')
    parser.add_argument('--output', type=Path, default=REPO / 'bench_results.json')
    args = parser.parse_args(argv)
    count = 10 if args.quick else 40

    from action_msgs.msg import GoalStatusArray
    from rclpy.qos import qos_profile_action_status_default
    from trajectory_msgs.msg import JointTrajectory

    from arm_bringup.process_group import ProcessGroup
    from arm_kinematics.description.bundled import config_path, expand_xacro
    from arm_testing.motion_harness import MotionClient, Recorder
    from arm_testing.ros_harness import DomainClaim

    domain = DomainClaim()
    group = ProcessGroup(env=domain.environment())
    urdf, config = expand_xacro('pointer3'), str(config_path('pointer3'))
    common = {'robot_description': urdf, 'arm': 'pointer3', 'arm_config': config,
              'follow_target': False, 'speed_scale': 1.0, 'publish_rate': 100.0}
    clients = []
    try:
        group.start_node('arm_ik', 'controller_stand_in', name='joint_trajectory_controller',
                         namespace='/action', params={
                             'joints': list(JOINTS), 'initial_positions': HOME,
                             'joint_states_topic': MEASURED, 'constraints.goal_time': 0.5})
        group.start_node('arm_ik', 'trajectory_executor', namespace='/action', params={
            **common, 'output': 'follow_joint_trajectory', 'feedback_topic': MEASURED,
            'feedback_stale_periods': 25.0})   # a Python stand-in on a loaded machine
        group.start_node('arm_ik', 'trajectory_executor', namespace='/topic',
                         params={**common, 'output': 'joint_trajectory'})
        action = MotionClient(domain.domain_id, '/action', JOINTS)
        topic = MotionClient(domain.domain_id, '/topic', JOINTS, 'joint_trajectory')
        clients = [action, topic]
        statuses = Recorder()
        action.node.create_subscription(
            GoalStatusArray, '/action/joint_trajectory_controller/follow_joint_trajectory/'
            '_action/status', statuses.add, qos_profile_action_status_default)
        arrivals = Recorder()
        topic.node.create_subscription(
            JointTrajectory, '/topic/joint_trajectory_controller/joint_trajectory',
            lambda m: arrivals.add(time.time()), 100)
        for client in clients:
            client.wait_for_server(60.0)
        # Warm up both (first plans load the planning process's caches).
        for client in clients:
            for target in TARGETS:
                client.move(client.goal(joints=target, law='min_jerk', duration=0.3), 60.0)

        action_latency, topic_latency = [], []
        for index in range(count):
            target = TARGETS[index % 2]
            sent = time.time()
            outcome = action.move(action.goal(joints=target, law='min_jerk', duration=0.3))
            assert outcome.code == 0, outcome.message
            stamps = [s.goal_info.stamp.sec + s.goal_info.stamp.nanosec * 1e-9
                      for array in statuses.since(sent) for s in array.status_list]
            accepted = [t for t in stamps if t >= sent]
            assert accepted, 'the controller goal was not seen on its status topic'
            action_latency.append(min(accepted) - sent)
            sent = time.time()
            outcome = topic.move(topic.goal(joints=target, law='min_jerk', duration=0.3))
            assert outcome.code == 0, outcome.message
            arrived = [t for t in arrivals.since(sent) if t >= sent]
            topic_latency.append(arrived[0] - sent)
    finally:
        for client in clients:
            client.close()
        group.close()
        domain.release()

    via_action, via_topic = percentiles(action_latency), percentiles(topic_latency)
    added = {key: via_action[key] - via_topic[key] for key in ('p50', 'p99')}
    print(f'{"route":<34} {"p50 ms":>8} {"p99 ms":>8} {"max ms":>8}')
    for label, row in (('MoveToTarget -> controller goal', via_action),
                       ('MoveToTarget -> topic (peer)', via_topic)):
        print(f'{label:<34} {row["p50"]:8.2f} {row["p99"]:8.2f} {row["max"]:8.2f}')
    ratio = via_action['p50'] / via_topic['p50']
    print(f'added by the action: p50 {added["p50"]:+.2f} ms, p99 {added["p99"]:+.2f} ms; '
          f'ratio action/topic at p50 {ratio:.2f}')
    distro, rclpy_version = detect_distro()
    merge_section(args.output, 'controller_action', {
        'date': datetime.datetime.now(datetime.UTC).isoformat(timespec='seconds'),
        'rclpy': rclpy_version, 'goals_per_route': count,
        'action_ms': via_action, 'topic_ms': via_topic, 'added_ms': added,
        'ratio_p50': ratio}, distro)
    return 0


if __name__ == '__main__':
    sys.exit(main())
