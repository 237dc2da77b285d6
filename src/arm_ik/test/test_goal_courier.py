"""arm_ik.middleware.GoalCourier (goal resend, result re-ask) on a stand-in ActionClient."""

from __future__ import annotations

import time
from types import SimpleNamespace

from arm_ik.middleware import GoalCourier


class Future:
    """Just enough of rclpy's Future: a result, done callbacks."""

    def __init__(self) -> None:
        self.callbacks, self.done = [], False
        self.value = self.error = None

    def add_done_callback(self, callback) -> None:
        self.callbacks.append(callback)

    def set(self, value=None, error: Exception | None = None) -> None:
        self.value, self.error, self.done = value, error, True
        for callback in self.callbacks:
            callback(self)

    def result(self):
        if self.error is not None:
            raise self.error
        return self.value


class Handle:
    def __init__(self, accepted: bool) -> None:
        self.accepted = accepted
        self.result_requests: list[Future] = []
        self.canceled = 0

    def get_result_async(self) -> Future:
        self.result_requests.append(Future())
        return self.result_requests[-1]

    def cancel_goal_async(self) -> None:
        self.canceled += 1


class Client:
    def __init__(self) -> None:
        self.sent: list[tuple[object, Future, object]] = []

    def send_goal_async(self, goal, feedback_callback=None) -> Future:
        self.sent.append((goal, Future(), feedback_callback))
        return self.sent[-1][1]


class Logger:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def warning(self, text: str) -> None:
        self.lines.append(text)


class Rig:
    def __init__(self) -> None:
        self.t = 0.0
        self.client, self.logger, self.events = Client(), Logger(), []
        self.courier = GoalCourier(
            self.client, self.logger, lambda token: self.events.append(('accepted', token)),
            lambda token: self.events.append(('rejected', token)),
            lambda token, wrapped: self.events.append(('result', token, wrapped)),
            lambda token, reason: self.events.append(('failed', token, reason)),
            lambda token, feedback: self.events.append(('feedback', token, feedback)),
            response_timeout=1.0, clock=lambda: self.t)

    def later(self, seconds: float) -> None:
        self.t += seconds
        self.courier.tick()


def test_an_unanswered_goal_is_sent_again_then_fails():
    rig = Rig()
    rig.courier.send(7, 'goal', 2.0, '[sequence]', 'home')
    rig.later(0.9)
    assert len(rig.client.sent) == 1
    rig.later(0.2)
    assert len(rig.client.sent) == 2 and rig.client.sent[1][0] == 'goal'
    assert rig.logger.lines == ['[sequence] no answer to the goal for home within 1 s; '
                                'sending it again']
    rig.later(1.1)
    rig.later(1.1)
    assert len(rig.client.sent) == 3
    assert rig.events == [('failed', 7, 'the executor did not answer the goal 3 times within '
                                        '1 s each')]
    rig.client.sent[0][1].set(Handle(True))     # a late answer to the first attempt
    assert len(rig.events) == 1


def test_the_answer_to_a_resent_goal_counts_and_the_first_is_ignored():
    rig = Rig()
    rig.courier.send(1, 'goal', 2.0)
    rig.later(1.1)
    first, second = rig.client.sent
    first[1].set(Handle(True))                  # stale attempt: ignored
    assert rig.events == []
    handle = Handle(True)
    second[1].set(handle)
    assert rig.events == [('accepted', 1)] and len(handle.result_requests) == 1
    first[2](SimpleNamespace(feedback='old'))
    second[2](SimpleNamespace(feedback='now'))
    assert rig.events[-1] == ('feedback', 1, 'now') and len(rig.events) == 2


def test_an_overdue_result_is_asked_for_again_and_delivered_once():
    rig = Rig()
    rig.courier.send(3, 'goal', 2.0)
    handle = Handle(True)
    rig.client.sent[0][1].set(handle)
    rig.later(3.9)                              # duration 2 s + 2 s retry not yet over
    assert len(handle.result_requests) == 1
    rig.later(0.2)
    assert len(handle.result_requests) == 2
    rig.later(2.0)
    assert len(handle.result_requests) == 3
    handle.result_requests[1].set('the result')
    handle.result_requests[0].set('again')      # a second reply to an earlier request
    assert rig.events == [('accepted', 3), ('result', 3, 'the result')]
    rig.later(10.0)
    assert len(handle.result_requests) == 3     # forgotten once delivered


def test_rejected_failed_and_dropped_goals():
    rig = Rig()
    rig.courier.send(1, 'a', 1.0)
    rig.client.sent[0][1].set(Handle(False))
    rig.courier.send(2, 'b', 1.0)
    rig.client.sent[1][1].set(error=RuntimeError('gone'))
    rig.courier.send(3, 'c', 1.0)
    handle = Handle(True)
    rig.client.sent[2][1].set(handle)
    handle.result_requests[0].set(error=RuntimeError('lost'))
    assert rig.events == [('rejected', 1), ('failed', 2, 'sending the goal failed: gone'),
                          ('accepted', 3), ('failed', 3, 'no result: lost')]
    rig.courier.send(4, 'd', 1.0)
    handle = Handle(True)
    rig.client.sent[3][1].set(handle)
    rig.courier.drop(4, cancel=True)
    assert handle.canceled == 1
    handle.result_requests[0].set('late')
    rig.courier.send(5, 'e', 1.0)
    rig.courier.drop(5)                         # not answered yet: nothing to cancel
    rig.later(5.0)
    assert rig.events[-1] == ('accepted', 4) and len(rig.client.sent) == 5


# ---------------------------------------------------------------------- call_until_answered
class ServiceFuture:
    """rclpy's Future as a service client sees it: ``done()`` and ``result()``."""

    def __init__(self) -> None:
        self.value = None

    def done(self) -> bool:
        return self.value is not None

    def result(self):
        return self.value


class ServiceClient:
    """Requests whose replies come only for the copies numbered in ``answered``."""

    def __init__(self, answered: set[int]) -> None:
        self.answered, self.futures, self.withdrawn = answered, [], []

    def call_async(self, request) -> ServiceFuture:
        future = ServiceFuture()
        self.futures.append(future)
        return future

    def remove_pending_request(self, future) -> None:
        self.withdrawn.append(self.futures.index(future))

    def spin(self) -> None:
        """One spin: the newest copy is answered when its number is in ``answered``."""
        time.sleep(0.002)
        index = len(self.futures) - 1
        if index in self.answered:
            self.futures[index].value = f'reply to copy {index}'


def test_a_request_whose_reply_is_lost_is_sent_again_and_answered():
    from arm_ik.middleware import call_until_answered
    client = ServiceClient(answered={1})
    assert call_until_answered(client, 'request', client.spin, timeout=1.0,
                               attempt=0.05) == 'reply to copy 1'
    assert len(client.futures) == 2 and client.withdrawn == [0]


def test_a_request_never_answered_gives_none_after_the_timeout():
    from arm_ik.middleware import call_until_answered
    client = ServiceClient(answered=set())
    assert call_until_answered(client, 'request', client.spin, timeout=0.2,
                               attempt=0.05) is None
    assert 3 <= len(client.futures) <= 5 and client.withdrawn == list(range(len(client.futures)))
