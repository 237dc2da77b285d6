"""The words of a MoveToTarget goal its server refused, for the client that sent it.

The action protocol carries no reason for a rejection (a goal response is accepted or not),
so a client that sees one could only say "the goal was rejected". The trajectory executor
publishes one line per refused goal on its latched ``~/goal_refusal`` (std_msgs/String):
before it rejects a goal (only while it shuts down: every other goal is accepted) and for
every goal it ends at once without a plan to run (an emergency stop, an invalid goal, no
IK answer...; those come with a result too). A client of the action (the demo driver,
target_input) subscribes here at start-up and prints the words with a rejection.

The words are matched by time: the latest line that arrived after the goal was sent.
"""

from __future__ import annotations

import math
import time
from typing import Any

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

REFUSAL_TOPIC = 'goal_refusal'
# How long a client waits for the words after a rejection (they are published first, but
# travel on a topic of their own).
WORDS_WAIT = 1.0   # s
_LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL)


def refusal_topic(action: str) -> str:
    """The words topic of the server of ``action`` (a resolved action name):
    '/arm/trajectory_executor/move_to_target' -> '/arm/trajectory_executor/goal_refusal'."""
    return f'{action.rsplit("/", 1)[0]}/{REFUSAL_TOPIC}'


class RefusalWords:
    """The latest refusal words of one MoveToTarget server, with when they arrived.

    Args:
        node: the client's node (the subscription is its).
        action: the resolved action name the client sends goals to.
        group: the subscription's callback group (None: the node's default).
    """

    def __init__(self, node: Any, action: str, group: Any = None) -> None:
        self.topic = refusal_topic(action)
        self._words = ''
        self._arrived = -math.inf
        node.create_subscription(String, self.topic, self._on_words, _LATCHED,
                                 callback_group=group)

    def _on_words(self, message: String) -> None:
        self._words, self._arrived = message.data, time.monotonic()

    def since(self, sent: float) -> str:
        """The words that arrived at or after monotonic time ``sent``, else ''."""
        return self._words if self._arrived >= sent else ''

    def sentence(self, sent: float) -> str:
        """What a client says of a rejected goal sent at ``sent``."""
        words = self.since(sent)
        if words:
            return f'the executor rejected the goal: {words}'
        return f'the executor rejected the goal (no reason on {self.topic})'
