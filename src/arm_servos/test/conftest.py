"""Fixtures of the arm_servos tests: the simulated bus as a real process on a pty."""

from __future__ import annotations

import pytest


@pytest.fixture(scope='module', params=['feetech', 'dynamixel'])
def sim_bus(request, tmp_path_factory):
    """(protocol, SimProcess, link) — one simulated bus process per protocol per module;
    servos 1..6 start at 2048 ticks with a stale goal of 3000 left in them."""
    from arm_servos.sim.process import SimProcess
    link = tmp_path_factory.mktemp(request.param) / 'bus'
    with SimProcess(link, request.param, goal='3000') as sim:
        yield request.param, sim, str(link)


@pytest.fixture(scope='session')
def so101_urdf() -> str:
    """The SO-101 URDF of example-robot-data (a test dependency; skipped when absent)."""
    from pathlib import Path
    import sysconfig
    path = Path(sysconfig.get_paths()['purelib']) / 'cmeel.prefix' / 'share' / \
        'example-robot-data' / 'robots' / 'so_arm_description' / 'urdf' / 'so101.urdf'
    if not path.is_file():
        pytest.skip('example-robot-data is not installed (requirements/dev.txt)')
    return path.read_text(encoding='utf-8')

