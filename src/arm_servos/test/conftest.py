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
