"""arm_ik.goal_refusals: a refusal's words matched to the client's own goal by their stamps."""

from __future__ import annotations

from builtin_interfaces.msg import Time
from rcl_interfaces.msg import Log

from arm_ik.goal_refusals import refusal_topic, RefusalWords


class _Clock:
    def __init__(self) -> None:
        self.nanoseconds = 0

    def now(self):
        return self


class _Node:
    """Just what RefusalWords uses of a node: a subscription and a clock."""

    def __init__(self) -> None:
        self.callback = None
        self.topic = ''
        self.clock = _Clock()

    def create_subscription(self, _type, topic, callback, _qos, callback_group=None):
        self.topic, self.callback = topic, callback

    def get_clock(self) -> _Clock:
        return self.clock


def _words(seconds: float, text: str) -> Log:
    return Log(stamp=Time(sec=int(seconds), nanosec=int(seconds % 1 * 1e9)), msg=text)


def test_the_topic_is_the_servers_goal_rejections() -> None:
    assert refusal_topic('/arm/trajectory_executor/move_to_target') == \
        '/arm/trajectory_executor/goal_rejections'
    assert refusal_topic('/so101/servo_bridge/follow_joint_trajectory') == \
        '/so101/servo_bridge/goal_rejections'


def test_words_stamped_before_the_goal_are_never_its_own() -> None:
    node = _Node()
    refusals = RefusalWords(node, '/arm/trajectory_executor/move_to_target')
    assert node.topic == '/arm/trajectory_executor/goal_rejections'
    node.clock.nanoseconds = 100_000_000_000
    sent = refusals.mark()
    assert sent == 100.0
    # A latched line of an earlier goal that arrives after the send is not this goal's.
    node.callback(_words(99.5, 'goal 11111111 refused: INVALID_GOAL: old'))
    assert refusals.since(sent) == ''
    assert refusals.sentence(sent) == ('the executor rejected the goal (no reason on '
                                       '/arm/trajectory_executor/goal_rejections)')
    # The first stamped at or after the send is; a later one (another goal's) is not.
    node.callback(_words(100.4, 'goal 33333333 refused: EMERGENCY_STOPPED: later'))
    node.callback(_words(100.2, 'goal 22222222 refused: EMERGENCY_STOPPED: stop active'))
    assert refusals.since(sent) == 'goal 22222222 refused: EMERGENCY_STOPPED: stop active'
    assert refusals.sentence(sent) == ('the executor rejected the goal: goal 22222222 '
                                       'refused: EMERGENCY_STOPPED: stop active')


def test_the_server_is_named_in_the_sentence_and_only_the_last_ten_are_kept() -> None:
    node = _Node()
    refusals = RefusalWords(node, '/so101/servo_bridge/follow_joint_trajectory',
                            server='the servo bridge')
    for k in range(15):
        node.callback(_words(10.0 + k, f'reason {k}'))
    assert refusals.since(0.0) == 'reason 5'
    assert refusals.sentence(24.0) == 'the servo bridge rejected the goal: reason 14'
