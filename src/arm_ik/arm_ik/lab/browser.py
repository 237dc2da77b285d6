"""Headless Chromium screenshots of a page on this machine (tests and docs/ pictures).

The browser gets no network beyond loopback: every proxied request goes to a closed port
(Chromium sends loopback addresses direct, never through a proxy) and every host name but
localhost fails to resolve.

``capture`` drives the headless browser over the DevTools protocol on a loopback port, in
real time: it waits until the page shows ``ready_text`` (the panel came over the websocket),
lets WebGL settle, then captures; ``inspect`` then gets the open page (``Page``: evaluate
JavaScript, click tabs as a user does, capture again), e.g. to measure the plots' boxes
(``plot_boxes``: what a user sees of each, clipped by the window and the scrolling panels).
Chromium's own ``--screenshot`` with a virtual-time budget
is not used: with viser's page it now and then never returned (a 120 s timeout under load),
and virtual time runs ahead of the websocket, so viser's client dropped a connection that had
not opened within 5 s of *virtual* time and the picture showed the greyed, disconnected
viewer.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
import itertools
import json
import os
from pathlib import Path
import re
import shutil
import signal
import subprocess
import tempfile
import time

import numpy as np

CANDIDATES = ('chromium', 'chromium-browser', 'google-chrome')
# Loopback-only networking, and none of Chromium's own background traffic.
OFFLINE_FLAGS = ('--proxy-server=http://127.0.0.1:9',
                 '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1')
QUIET_FLAGS = ('--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
               '--no-first-run', '--disable-background-networking',
               '--disable-component-update', '--disable-sync', '--disable-extensions',
               '--hide-scrollbars', '--mute-audio', '--no-default-browser-check')
DEVTOOLS_LINE = re.compile(r'DevTools listening on (ws://127\.0\.0\.1:\d+/\S+)')


class BrowserError(RuntimeError):
    """Chromium did not start, did not load the page, or did not capture it."""


def find_chromium() -> str | None:
    """Path of a Chromium executable, or None."""
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


class _DevTools:
    """A minimal DevTools-protocol client (one websocket, flat sessions)."""

    def __init__(self, address: str, timeout: float) -> None:
        from websockets.sync.client import connect
        # proxy=None: never send this loopback connection through an environment proxy.
        self.socket = connect(address, max_size=None, open_timeout=timeout, proxy=None)
        self.timeout = timeout
        self._ids = itertools.count(1)

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float | None = None) -> dict:
        ident = next(self._ids)
        message = {'id': ident, 'method': method, 'params': params or {}}
        if session:
            message['sessionId'] = session
        self.socket.send(json.dumps(message))
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0.0:
                raise BrowserError(f'no answer to {method} within {timeout or self.timeout} s')
            reply = json.loads(self.socket.recv(timeout=remaining))
            if reply.get('id') == ident:
                if 'error' in reply:
                    raise BrowserError(f'{method}: {reply["error"]}')
                return reply.get('result', {})

    def close(self) -> None:
        self.socket.close()


def capture(url: str, png: Path, size: tuple[int, int] = (1280, 800),
            ready_text: str = '', settle: float = 3.0, timeout: float = 60.0,
            chromium: str | None = None,
            inspect: Callable[[Page], None] | None = None) -> str:
    """Open ``url`` in headless Chromium, wait for ``ready_text``, write a PNG.

    Args:
        url: a loopback page.
        png: where the screenshot goes.
        size: viewport, pixels.
        ready_text: text the page must show before the capture ('' : the load event only).
        settle: seconds to wait after that (WebGL drawing, late messages).
        timeout: longest wait for the browser and the text, s.
        chromium: the executable (default: the first of CANDIDATES found).
        inspect: called with the open page after the capture (measure, click, capture more)
            while the browser still runs.

    Returns:
        The page's visible text at the capture (for checks).

    Raises:
        BrowserError: no Chromium, the page did not load or never showed ``ready_text``.
    """
    chromium = chromium or find_chromium()
    if chromium is None:
        raise BrowserError('no chromium executable (apt-get install chromium)')
    with tempfile.TemporaryDirectory(prefix='lab_chromium_') as folder:
        log_path = Path(folder) / 'chromium.log'
        command = [chromium, *QUIET_FLAGS, *OFFLINE_FLAGS, f'--user-data-dir={folder}/profile',
                   f'--window-size={size[0]},{size[1]}', '--remote-debugging-address=127.0.0.1',
                   '--remote-debugging-port=0', 'about:blank']
        with open(log_path, 'wb') as log:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            return _drive(process, log_path, url, Path(png), size, ready_text, settle, timeout,
                          inspect)
        finally:
            _stop(process)


def _stop(process: subprocess.Popen) -> None:
    """End Chromium and its helpers (renderer, GPU, zygote): they share its session."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, signum)
        except (ProcessLookupError, PermissionError):
            return
        try:
            process.wait(10.0)
            return
        except subprocess.TimeoutExpired:
            continue


def _drive(process: subprocess.Popen, log_path: Path, url: str, png: Path,
           size: tuple[int, int], ready_text: str, settle: float, timeout: float,
           inspect: Callable[[Page], None] | None) -> str:
    deadline = time.monotonic() + timeout
    address = None
    while address is None:
        found = DEVTOOLS_LINE.search(log_path.read_text(errors='replace'))
        if found:
            address = found.group(1)
        elif process.poll() is not None or time.monotonic() > deadline:
            raise BrowserError('chromium did not start its DevTools endpoint:\n'
                               + log_path.read_text(errors='replace')[-2000:])
        else:
            time.sleep(0.1)
    tools = _DevTools(address, timeout)
    try:
        # The tab Chromium opened (a new background tab gets few animation frames).
        pages = [t for t in tools.send('Target.getTargets')['targetInfos']
                 if t['type'] == 'page']
        target = pages[0]['targetId'] if pages else \
            tools.send('Target.createTarget', {'url': 'about:blank'})['targetId']
        session = tools.send('Target.attachToTarget', {'targetId': target,
                                                       'flatten': True})['sessionId']
        tools.send('Emulation.setDeviceMetricsOverride',
                   {'width': size[0], 'height': size[1], 'deviceScaleFactor': 1,
                    'mobile': False}, session)
        # Focused, as a user's window is (viser retries a lost connection only then).
        tools.send('Emulation.setFocusEmulationEnabled', {'enabled': True}, session)
        tools.send('Page.enable', session=session)
        tools.send('Page.bringToFront', session=session)
        tools.send('Page.navigate', {'url': url}, session)
        text = ''
        while True:
            state = tools.send('Runtime.evaluate', {
                'expression': 'document.readyState + "\\n" + (document.body ? '
                              'document.body.innerText : "")', 'returnByValue': True},
                session)['result'].get('value', '')
            ready, _, text = state.partition('\n')
            if ready == 'complete' and ready_text in text:
                break
            if time.monotonic() > deadline:
                raise BrowserError(f'the page never showed "{ready_text}" within {timeout} s; '
                                   f'it shows: {text[:500]!r}')
            time.sleep(0.25)
        time.sleep(settle)
        text = tools.send('Runtime.evaluate', {'expression': 'document.body.innerText',
                                               'returnByValue': True},
                          session)['result'].get('value', text)
        page = Page(tools, session)
        page.screenshot(png)
        if inspect is not None:
            inspect(page)
        return text
    finally:
        tools.close()


class Page:
    """The open tab: evaluate JavaScript, click as a user does, capture."""

    def __init__(self, tools: _DevTools, session: str) -> None:
        self._tools, self._session = tools, session

    def evaluate(self, expression: str) -> object:
        """The value of a JavaScript expression (JSON-serialisable)."""
        reply = self._tools.send('Runtime.evaluate', {'expression': expression,
                                                      'returnByValue': True}, self._session)
        if 'exceptionDetails' in reply:
            raise BrowserError(f'{expression[:80]}: {reply["exceptionDetails"]}')
        return reply['result'].get('value')

    def click(self, x: float, y: float) -> None:
        """A real left click at (x, y) CSS px: viser's tabs take pointer events, not a
        scripted element.click()."""
        for kind in ('mouseMoved', 'mousePressed', 'mouseReleased'):
            self._tools.send('Input.dispatchMouseEvent', {
                'type': kind, 'x': x, 'y': y, 'button': 'left', 'clickCount': 1,
                'buttons': 1 if kind == 'mousePressed' else 0}, self._session)

    def click_tab(self, label: str) -> bool:
        """Click the tab (role=tab) labelled ``label``; False when there is none."""
        centre = self.evaluate(
            "(() => { const tab = [...document.querySelectorAll('[role=tab]')].find("
            f"e => e.innerText.trim() === {json.dumps(label)}); if (!tab) return null; "
            'const r = tab.getBoundingClientRect(); '
            'return [r.x + r.width / 2, r.y + r.height / 2]; })()')
        if not centre:
            return False
        self.click(*centre)
        return True

    def screenshot(self, png: Path) -> None:
        shot = self._tools.send('Page.captureScreenshot', {'format': 'png'}, session=self._session)
        Path(png).write_bytes(base64.b64decode(shot['data']))


@dataclass(frozen=True)
class Box:
    """A page element's box and the part of it a user sees, CSS px.

    Attributes:
        title: the plot's title.
        width, height: its layout box.
        visible_width, visible_height: that box clipped by the window and by every
            scrolling or clipping container around it (0 when hidden, e.g. in another tab).
    """

    title: str
    width: float
    height: float
    visible_width: float
    visible_height: float


# Every uPlot chart of the page (viser's add_uplot), with the part inside the window and
# inside each ancestor that clips (overflow other than visible: the panels scroll).
PLOT_BOXES_JS = """(() => [...document.querySelectorAll('.uplot')].map(plot => {
  const r = plot.getBoundingClientRect();
  let l = Math.max(r.left, 0), t = Math.max(r.top, 0);
  let R = Math.min(r.right, innerWidth), B = Math.min(r.bottom, innerHeight);
  for (let a = plot.parentElement; a; a = a.parentElement) {
    const style = getComputedStyle(a);
    if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
    const q = a.getBoundingClientRect();
    l = Math.max(l, q.left); t = Math.max(t, q.top);
    R = Math.min(R, q.right); B = Math.min(B, q.bottom);
  }
  const title = plot.querySelector('.u-title');
  return [title ? title.innerText : '', r.width, r.height, Math.max(0, R - l),
          Math.max(0, B - t)];
}))()"""


def plot_boxes(page: Page) -> list[Box]:
    """The boxes of the page's uPlot charts (see PLOT_BOXES_JS)."""
    return [Box(str(title), *map(float, rest)) for title, *rest in page.evaluate(PLOT_BOXES_JS)]


def pixel_spread(png: Path, box: tuple[int, int, int, int] | None = None) -> float:
    """Standard deviation of the pixel values of a PNG, or of ``box`` (left, top, right,
    bottom) in it: 0 for a blank, one-colour image."""
    import imageio.v3 as iio
    image = np.asarray(iio.imread(png), dtype=float)[..., :3]
    if box is not None:
        left, top, right, bottom = box
        image = image[top:bottom, left:right]
    return float(image.std()) if image.size else 0.0
