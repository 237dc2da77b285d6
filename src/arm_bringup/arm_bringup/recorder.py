"""mcap_recorder: record the pipeline's topics to an MCAP file (rosbag2's MCAP layout).

    ros2 run arm_bringup mcap_recorder --ros-args -p output:=demo.mcap -p prefixes:=[/ccd5/]

The launch-free runner starts it in its own process before the arm's nodes. It records every
topic whose name starts with one of ``prefixes`` (the hidden action topics
``.../_action/feedback`` and ``_action/status`` included) plus ``topics``, as soon as a
publisher appears, with the QoS the publishers offer (as rosbag2 does: transient local only
when every publisher is, so latched topics arrive and volatile ones still match).

Messages are written as they arrive on the wire (raw CDR, no decode and re-encode: exact,
and rclpy's fixed-size arrays, e.g. the goal UUID, need no conversion) with ``ros2msg``
schemas built from the installed interface files (``msgdefs``): profile ``ros2``, readable
by Foxglove, Lichtblick and mcap-ros2-support. Each schema is parsed once by
mcap-ros2-support when registered, so a bad one fails here, not in a viewer; the implicit
action types (``X_FeedbackMessage``) are the exception: its vendored parser refuses
underscores in type names, which rosidl generates for them (Foxglove reads them).
"""

from __future__ import annotations

from collections import Counter
import functools
from pathlib import Path
import sys
import time
from typing import BinaryIO

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.topic_endpoint_info import TopicEndpointInfo

from arm_bringup import msgdefs
from arm_ik.nodes.common import run, StartupError

DISCOVERY_PERIOD = 0.1   # s between looks at the graph for new topics
DEPTH = 1000             # deep enough that a burst between two executor turns is all kept


def adapted_qos(publishers: list[TopicEndpointInfo]) -> QoSProfile:
    """The QoS that matches every publisher: reliable and transient local only when all are."""
    reliable = all(p.qos_profile.reliability == ReliabilityPolicy.RELIABLE for p in publishers)
    latched = all(p.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
                  for p in publishers)
    return QoSProfile(
        depth=DEPTH,
        reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)


def check_schema(type_name: str, text: str) -> None:
    """Parse ``text`` as mcap-ros2-support will when reading (skipped for the implicit
    action types, whose underscore its parser refuses)."""
    _, _, name = msgdefs.split_type(type_name)
    if '_' in name:
        return
    from mcap_ros2._dynamic import generate_dynamic
    generate_dynamic(type_name, text)


class McapRecorder(Node):
    """Subscribes (raw) to the wanted topics as they appear and writes them to MCAP."""

    def __init__(self) -> None:
        super().__init__('mcap_recorder')
        output = self.declare_parameter('output', 'demo.mcap', ParameterDescriptor(
            description='MCAP file to write (replaced if it exists)', read_only=True)).value
        self.prefixes = tuple(self.declare_parameter('prefixes', ['/'], ParameterDescriptor(
            description='record topics whose name starts with one of these',
            read_only=True)).value)
        # [''] rather than []: an empty list default would declare a byte array.
        topics = self.declare_parameter('topics', [''], ParameterDescriptor(
            description='further topics to record by full name', read_only=True)).value
        self.topics = frozenset(topic for topic in topics if topic)
        try:
            from mcap.writer import CompressionType, Writer
        except ImportError:
            raise StartupError('mcap is not installed: pip install -r requirements/dev.txt '
                               '(mcap, mcap-ros2-support)') from None
        self.path = Path(output)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._stream: BinaryIO = open(self.path, 'wb')  # noqa: SIM115 - closed in close()
        self.writer = Writer(self._stream, compression=CompressionType.ZSTD)
        self.writer.start(profile='ros2', library='arm_bringup mcap_recorder')
        self._schemas: dict[str, int] = {}
        self._channels: dict[str, int] = {}
        self._skipped: set[str] = set()
        self.counts: Counter[str] = Counter()
        self._closed = False
        self.create_timer(DISCOVERY_PERIOD, self._discover)
        self.get_logger().info(f'recording {", ".join(self.prefixes)}* '
                               f'{" ".join(sorted(t for t in self.topics if t))} to {self.path}')

    def _wanted(self, topic: str) -> bool:
        return topic in self.topics or topic.startswith(self.prefixes)

    def _discover(self) -> None:
        for topic, types in self.get_topic_names_and_types():
            if topic in self._channels or topic in self._skipped or not self._wanted(topic):
                continue
            publishers = self.get_publishers_info_by_topic(topic)
            if not publishers:
                continue          # a subscription only (e.g. clicked_point): nothing to record
            if len(types) != 1:
                self._skip(topic, f'{len(types)} types on one topic: {", ".join(types)}')
                continue
            try:
                self._subscribe(topic, types[0], adapted_qos(publishers))
            except Exception as error:  # noqa: BLE001 - one bad topic must not stop the rest
                self._skip(topic, f'{type(error).__name__}: {error}')

    def _skip(self, topic: str, reason: str) -> None:
        self._skipped.add(topic)
        self.get_logger().warning(f'not recording {topic}: {reason}')

    def _subscribe(self, topic: str, type_name: str, qos: QoSProfile) -> None:
        message_type = msgdefs.message_class(type_name)
        schema_id = self._schemas.get(type_name)
        if schema_id is None:
            text = msgdefs.definition(type_name)
            check_schema(type_name, text)
            schema_id = self.writer.register_schema(type_name, 'ros2msg', text.encode())
            self._schemas[type_name] = schema_id
        channel_id = self.writer.register_channel(topic, 'cdr', schema_id)
        self._channels[topic] = channel_id
        self.create_subscription(message_type, topic,
                                 functools.partial(self._on_message, topic, channel_id), qos,
                                 raw=True)
        self.get_logger().debug(f'recording {topic} ({type_name})')

    def _on_message(self, topic: str, channel_id: int, data: bytes) -> None:
        if self._closed:
            return
        now = time.time_ns()
        self.counts[topic] += 1
        self.writer.add_message(channel_id, log_time=now, data=data, publish_time=now,
                                sequence=self.counts[topic])

    def close(self) -> None:
        """Write the MCAP footer (summary, index) and close the file; idempotent."""
        if self._closed:
            return
        self._closed = True
        self.writer.finish()
        self._stream.close()
        total = sum(self.counts.values())
        self.get_logger().info(f'{self.path}: {total} messages on {len(self.counts)} topics')

    def destroy_node(self) -> None:
        self.close()
        super().destroy_node()


def main(args: list[str] | None = None) -> None:
    sys.exit(run(McapRecorder, args))


if __name__ == '__main__':
    main()
