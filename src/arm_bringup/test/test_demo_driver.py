"""The demo driver's end (arm_bringup.driver.DemoDriver.close): its node, its action client and
its context go, and a teardown the middleware does not finish cannot hold the demo."""

from __future__ import annotations

import threading

import pytest
from rclpy.exceptions import InvalidHandle

from arm_bringup.driver import DemoDriver


@pytest.fixture
def driver(ros_domain, monkeypatch):
    monkeypatch.setenv('ROS_DOMAIN_ID', str(ros_domain.domain_id))
    return DemoDriver.create('probe')


def test_close_destroys_the_node_its_action_client_and_its_context(driver):
    assert driver.close()
    # destroy_node alone leaves the action client (and through it the node) alive.
    with pytest.raises(InvalidHandle):
        driver.action.server_is_ready()
    with pytest.raises(InvalidHandle):
        driver.get_node_names()
    with pytest.raises(InvalidHandle):
        driver.context.ok()


def test_a_teardown_that_does_not_end_is_reported_not_waited_for(driver, monkeypatch, capfd):
    release = threading.Event()
    destroy_node = driver.destroy_node

    def stuck() -> None:
        release.wait(30.0)
        destroy_node()

    monkeypatch.setattr(driver, 'destroy_node', stuck)
    try:
        assert driver.close(wait=0.5) is False
        assert 'in stuck' in capfd.readouterr().err        # the stuck thread's stack
    finally:
        release.set()
