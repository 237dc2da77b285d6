"""The words of a goal its action server refused, for the client that sent it.

The action protocol carries no reason for a rejection (a goal response is accepted or not),
so a client that sees one could only say "the goal was rejected". Every action server of the
project that refuses goals publishes one message per refused goal on its latched
``~/goal_rejections`` (rcl_interfaces/Log: reliable, transient local, depth 10): the
trajectory executor (a goal it rejects while it shuts down, and every goal it ends at once
without a plan to run: an emergency stop, an invalid goal, no IK answer...; those come with a
result too) and the servo bridge (every goal it rejects). ``msg`` holds the words, ``stamp``
when the server refused, ``name`` the server node.

Clients (target_input, the demo driver, servo_client) read them through ``RefusalWords``:
subscribe once at start-up, ``mark()`` the node clock just before sending a goal, and on a
rejection take the first words stamped at or after that mark. The stamp, not the arrival,
ties the words to the goal: a latched line of an earlier goal that arrives late (a late
joiner gets the last ten at once) is stamped before the mark and never taken for this one.
Server and client share the host's clock (the nodes run on one machine, without sim time).
"""

from __future__ import annotations

from typing import Any

from rcl_interfaces.msg import Log
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

REFUSAL_TOPIC = 'goal_rejections'
# How long a client waits for the words after a rejection (they are published first, but
# travel on a topic of their own).
WORDS_WAIT = 1.0   # s
# The last few, for a client that subscribes just before it sends its goal.
REFUSAL_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)


def refusal_topic(action: str) -> str:
    """The words topic of the server of ``action`` (a resolved action name):
    '/arm/trajectory_executor/move_to_target' -> '/arm/trajectory_executor/goal_rejections'."""
    return f'{action.rsplit("/", 1)[0]}/{REFUSAL_TOPIC}'


def refusal_message(node: Any, words: str) -> Log:
    """The message a server publishes for one refused goal: stamped now by its clock."""
    return Log(stamp=node.get_clock().now().to_msg(), level=Log.ERROR,
               name=node.get_fully_qualified_name(), msg=words)


def refusal_publisher(node: Any) -> Any:
    """The server's ``~/goal_rejections`` publisher (publish ``refusal_message``s on it)."""
    return node.create_publisher(Log, f'~/{REFUSAL_TOPIC}', REFUSAL_QOS)


def _seconds(stamp: Any) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


class RefusalWords:
    """The refusal words of one action server, matched to a goal by their stamps.

    Args:
        node: the client's node (the subscription is its; ``mark`` reads its clock).
        action: the resolved action name the client sends goals to.
        group: the subscription's callback group (None: the node's default).
        server: how a sentence names the server ('the executor', 'the servo bridge').
    """

    def __init__(self, node: Any, action: str, group: Any = None,
                 server: str = 'the executor') -> None:
        self.topic = refusal_topic(action)
        self.server = server
        self._node = node
        self._received: list[Log] = []
        node.create_subscription(Log, self.topic, self._on_words, REFUSAL_QOS,
                                 callback_group=group)

    def _on_words(self, message: Log) -> None:
        self._received.append(message)
        del self._received[:-REFUSAL_QOS.depth]      # as many as the server keeps

    def mark(self) -> float:
        """Now, by the node's clock (s): take it just before sending a goal."""
        return self._node.get_clock().now().nanoseconds * 1e-9

    def since(self, sent: float) -> str:
        """The first words stamped at or after ``sent`` (a ``mark()``), else ''."""
        after = [m for m in self._received if _seconds(m.stamp) >= sent]
        return min(after, key=lambda m: _seconds(m.stamp)).msg if after else ''

    def sentence(self, sent: float) -> str:
        """What a client says of a rejected goal sent at ``sent``."""
        words = self.since(sent)
        if words:
            return f'{self.server} rejected the goal: {words}'
        return f'{self.server} rejected the goal (no reason on {self.topic})'
