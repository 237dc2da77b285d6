"""BatchedSubscription (arm_ik.batched_subscription): a node in this process whose executor
spins on a thread, a publisher on the same domain over DDS."""

from __future__ import annotations

import threading
import time

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import qos_profile_sensor_data, QoSProfile
from sensor_msgs.msg import JointState

from arm_ik.batched_subscription import BatchedSubscription
from arm_testing.motion_harness import wait_until

PERIOD = 0.05


class Rig:
    """A subscriber node (namespace /arm, joint_states remapped to measured_states when
    asked) spun on its own thread, and a publisher node on the remapped topic."""

    def __init__(self, domain_id: int, remap: bool = False) -> None:
        self.context = rclpy.Context()
        args = ['--ros-args', '-r', 'joint_states:=measured_states'] if remap else None
        rclpy.init(context=self.context, domain_id=domain_id, args=args)
        self.node = rclpy.create_node('batched', namespace='/arm', context=self.context)
        self.publisher_node = rclpy.create_node('source', namespace='/arm',
                                                context=self.context, use_global_arguments=False)
        topic = 'measured_states' if remap else 'joint_states'
        self.publisher = self.publisher_node.create_publisher(JointState, topic,
                                                              QoSProfile(depth=100))
        self.received: list[tuple[float, str]] = []
        self.batches = 0
        self.threads: set[str] = set()
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.executor.add_node(self.publisher_node)
        self.subscription = BatchedSubscription(self.node, JointState, 'joint_states',
                                                self._on, QoSProfile(depth=100), PERIOD)
        self.spin_thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.spin_thread.start()

    def _on(self, message: JointState) -> None:
        self.received.append((time.monotonic(), message.name[0]))
        self.threads.add(threading.current_thread().name)

    def wait_matched(self) -> None:
        wait_until(lambda: self.publisher.get_subscription_count() > 0, 20.0,
                   'the batched subscription to match')

    def close(self) -> None:
        assert self.subscription.close()
        self.executor.shutdown(timeout_sec=2.0)
        self.spin_thread.join(timeout=10.0)
        rclpy.shutdown(context=self.context)


@pytest.fixture
def rig(ros_domain):
    made = Rig(ros_domain.domain_id)
    yield made
    made.close()


def test_every_message_arrives_in_order_on_the_executors_thread(rig):
    rig.wait_matched()
    for index in range(200):
        rig.publisher.publish(JointState(name=[f'm{index}']))
        time.sleep(0.002)
    wait_until(lambda: len(rig.received) == 200, 20.0, '200 messages')
    assert [name for _, name in rig.received] == [f'm{index}' for index in range(200)]
    assert rig.threads == {rig.spin_thread.name}


def test_a_message_after_a_quiet_spell_is_handed_on_alone(rig):
    rig.wait_matched()
    rig.publisher.publish(JointState(name=['lone']))
    wait_until(lambda: rig.received, 20.0, 'the lone message')
    assert [name for _, name in rig.received] == ['lone']


def test_the_topic_is_named_as_create_subscription_names_it(ros_domain):
    made = Rig(ros_domain.domain_id, remap=True)
    try:
        assert made.subscription.topic_name == '/arm/measured_states'
        made.wait_matched()
        made.publisher.publish(JointState(name=['remapped']))
        wait_until(lambda: made.received, 20.0, 'a message on the remapped topic')
        # Not one of the node's entities: its executor never waits on it itself.
        assert not list(made.node.subscriptions)
    finally:
        made.close()


@pytest.mark.parametrize('topic_after', ['a message', 'silence'])
def test_it_ends_with_its_node(ros_domain, topic_after):
    made = Rig(ros_domain.domain_id)
    try:
        made.wait_matched()
        made.executor.remove_node(made.node)
        made.node.destroy_node()
        if topic_after == 'a message':
            made.publisher.publish(JointState(name=['after']))
        made.subscription._thread.join(timeout=10.0)
        assert not made.subscription._thread.is_alive()
        assert made.received == []
    finally:
        made.close()


def test_a_period_that_is_not_positive_is_refused(ros_domain):
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain.domain_id)
    try:
        node = rclpy.create_node('refused', context=context)
        for period in (0.0, -1.0, float('nan')):
            with pytest.raises(ValueError, match='period must be > 0 s'):
                BatchedSubscription(node, JointState, 'joint_states', print,
                                    qos_profile_sensor_data, period)
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
