"""The browser lab as a user meets it, on one lab for the module: every plot at a readable
size in a 1400 × 900 window (headless Chromium, boxes measured through the page's DOM), and
the scripted cycle paused, resumed and taken over from the panel.

The arm is ccd5 with target_input running its pick-and-place cycle, as `make demo` does:
the case where a user found the arm moving under them and the joint map saying "no map yet".
"""

from __future__ import annotations

import re
import time

import pytest
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter

from arm_testing.ros_harness import (
    claimed_domain,
    config_file,
    node_on_domain,
    process_group,
    wait_for,
)

pytest.importorskip('viser', reason='viser is not installed (requirements/dev.txt)')

from arm_ik.lab.browser import BrowserError, capture, find_chromium, plot_boxes  # noqa: E402
from arm_interfaces.msg import TargetStatus  # noqa: E402

ARM = 'ccd5'
NAMESPACE = f'/{ARM}'
PIPELINE = ('arm_info', 'ik_server', 'trajectory_executor', 'safety_monitor')
URL_LINE = re.compile(r'browser lab at (http://127\.0\.0\.1:\d+)')
REPLY = 20.0
WINDOW = (1400, 900)
# A readable plot: most of the 420 px panel wide, high enough for its axes and legend, not
# a strip (the bug: a 400 × 115 px visible strip of the error plot), and wholly in view.
MIN_WIDTH, MIN_HEIGHT, MAX_ASPECT = 300.0, 180.0, 3.0
TABS = {'Readouts': ('IK tracking error, live (mm)',),
        'Last move': ('Joint angles along the last move (rad)',
                      'Manipulability w along the last move')}


@pytest.fixture(scope='module')
def lab(tmp_path_factory):
    """ccd5's pipeline with its cycle running, lab_viewer (with ~/set_controls) and a test
    node: (url, set_control, statuses, spin, lab process)."""
    from arm_ik.nodes.task_messages import TARGET_STATUS_QOS
    from arm_kinematics.description.bundled import expand_xacro
    with (claimed_domain() as claim, process_group(claim) as group,
          node_on_domain(claim, 'lab_layout_test') as (node, spin)):
        params = {'robot_description': expand_xacro(ARM), 'arm': ARM,
                  'arm_config': config_file(ARM)}
        for executable in PIPELINE:
            group.start_node('arm_ik', executable, namespace=NAMESPACE, params=params)
        group.start_node('arm_ik', 'target_input', namespace=NAMESPACE,
                         params={**params, 'sequence_file': f'{ARM}_pick_place.yaml',
                                 'autostart': True})
        process = group.start_node('arm_ik', 'lab_viewer', namespace=NAMESPACE,
                                   params={**params, 'port': 0, 'control_service': True})
        statuses: list[TargetStatus] = []
        node.create_subscription(TargetStatus, f'{NAMESPACE}/target_status', statuses.append,
                                 TARGET_STATUS_QOS)
        client = node.create_client(SetParameters, f'{NAMESPACE}/lab_viewer/set_controls')
        def set_control(key: str, value) -> tuple[bool, str]:
            future = client.call_async(SetParameters.Request(
                parameters=[Parameter(key, value=value).to_parameter_msg()]))
            wait_for(future.done, REPLY, spin, f'set_controls {key}')
            result = future.result().results[0]
            return result.successful, result.reason

        wait_for(lambda: URL_LINE.search(process.output()) is not None or not process.alive(),
                 60.0, spin, 'the lab printing its URL')
        found = URL_LINE.search(process.output())
        assert found, process.output()
        wait_for(client.service_is_ready, REPLY, spin, 'lab_viewer/set_controls')
        yield found.group(1), set_control, statuses, spin, process


def test_every_plot_is_readable_at_1400_by_900(lab, tmp_path):
    if find_chromium() is None:
        pytest.skip('chromium is not installed: `make test` installs it when run as root '
                    '(tools/ensure_chromium.sh), else apt-get install chromium')
    url, _, _, _, process = lab
    measured: dict[str, list] = {}
    texts: dict[str, str] = {}

    def inspect(page) -> None:
        for tab in TABS:
            assert page.click_tab(tab), f'no tab {tab!r}'
            # React lays the tab out and uPlot sizes itself to it a few frames later: the
            # boxes count once they hold still for a second (or after 15 s, as they are).
            deadline = time.monotonic() + 15.0
            boxes, still_since = None, time.monotonic()
            while time.monotonic() < deadline:
                now = [box for box in plot_boxes(page) if box.visible_height > 0]
                if now != boxes:
                    boxes, still_since = now, time.monotonic()
                elif time.monotonic() - still_since >= 1.0:
                    break
                time.sleep(0.25)
            measured[tab] = boxes
            page.screenshot(tmp_path / f'{tab.replace(" ", "_")}.png')
        assert page.click_tab('Joint map')
        time.sleep(1.0)
        texts['joint map'] = page.evaluate('document.body.innerText')

    try:
        capture(url, tmp_path / 'lab.png', size=WINDOW, ready_text='Readouts', settle=3.0,
                timeout=90.0, inspect=inspect)
    except BrowserError as error:
        pytest.fail(f'{error}\n{process.output()[-3000:]}')
    for tab, titles in TABS.items():
        shown = {box.title: box for box in measured[tab]}
        assert set(shown) == set(titles), f'{tab}: plots shown {sorted(shown)}'
        for title in titles:
            box = shown[title]
            assert box.width >= MIN_WIDTH and box.height >= MIN_HEIGHT, box
            assert box.width / box.height <= MAX_ASPECT, box
            # All of it in view: not clipped by the window or a scrolling panel.
            assert (box.visible_width, box.visible_height) == pytest.approx(
                (box.width, box.height), abs=1.0), box
    # The joint map tab: the first map (drawn once joint_states came) or the note saying
    # what it maps; never a bare "no map yet".
    text = texts['joint map']
    assert 'shoulder_pitch (up) × elbow_pitch (right)' in text, text[:1500]
    assert 'no map yet' not in text.replace('No map yet:', '')
    assert process.alive(), process.output()


def _cycle_state(statuses: list[TargetStatus]) -> int | None:
    states = [s.state for s in statuses if s.source == 'sequence']
    return states[-1] if states else None


def test_the_panel_pauses_resumes_and_takes_over_the_scripted_cycle(lab):
    _, set_control, statuses, spin, process = lab
    running = (TargetStatus.STARTED, TargetStatus.SUCCEEDED)
    wait_for(lambda: _cycle_state(statuses) in running, 90.0, spin,
             'the scripted cycle running (autostart)')
    accepted, reason = set_control('cycle_stop', True)
    assert accepted and 'the panel has the arm' in reason, reason
    wait_for(lambda: _cycle_state(statuses) == TargetStatus.STOPPED, REPLY, spin,
             'target_input reporting the cycle stopped')
    accepted, reason = set_control('cycle_stop', True)            # nothing left to pause
    assert not accepted and 'no cycle was running' in reason, reason

    accepted, reason = set_control('cycle_start', True)
    assert accepted and 'started' in reason, reason
    wait_for(lambda: _cycle_state(statuses) in running, REPLY, spin, 'the cycle resumed')
    # A move of the panel's own takes over, as a click in RViz does.
    before = len(statuses)
    wait_for(lambda: set_control('plan_and_go', True)[0], REPLY, spin, 'Plan and go sent')
    wait_for(lambda: any(s.source == 'sequence' and s.state == TargetStatus.STOPPED
                         for s in statuses[before:]), REPLY, spin,
             'the cycle stopped by the panel taking over')
    assert 'Traceback' not in process.output()
    assert process.alive(), process.output()
