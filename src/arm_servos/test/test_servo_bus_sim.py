"""Both drivers through their SDKs' real PortHandler against the simulated bus process:
sync read/write, error bits in words, retries (at once when a later servo has answered),
counters, silent servos, late replies, a vanished adapter."""

from __future__ import annotations

import threading
import time

import pytest

from arm_servos.bus import BusUnavailableError
from arm_servos.dynamixel import DynamixelBus
from arm_servos.feetech import FeetechBus

IDS = (1, 2, 3, 4, 5, 6)
REPLY_TIMEOUT = 0.2
DRIVERS = {'feetech': FeetechBus, 'dynamixel': DynamixelBus}


@pytest.fixture
def bus(sim_bus):
    protocol, sim, link = sim_bus
    sim.command('restore 1')
    # Generous waits: the machine running the tests may be busy, and a reply the simulation
    # sends late under load must not count as lost (the timing itself is benchmarked).
    driver = DRIVERS[protocol](link, IDS, retries=2, reply_timeout=REPLY_TIMEOUT,
                               cycle_budget=1.0)
    driver.open()
    yield driver
    driver.close()
    for servo_id in IDS:
        sim.command(f'restore {servo_id}')


def _positions(bus) -> dict[int, int | None]:
    return {i: (s.position if s else None) for i, s in bus.read().items()}


def test_ping_names_every_model(bus, sim_bus):
    expected = 777 if sim_bus[0] == 'feetech' else 1060
    assert bus.ping() == {i: expected for i in IDS}


def test_a_given_reply_timeout_holds_for_register_reads_too(sim_bus):
    # The SDK's own exchanges wait about 34 ms for a reply; a reply_timeout given for a slow
    # adapter (or a busy machine's simulated servos) must hold for them as for sync reads.
    protocol, sim, link = sim_bus
    address = 31 if protocol == 'feetech' else 20      # Homing_Offset
    size = 2 if protocol == 'feetech' else 4
    sim.command('slow 2 0.06')
    try:
        for reply_timeout, answered in ((None, False), (REPLY_TIMEOUT, True)):
            driver = DRIVERS[protocol](link, IDS, retries=0, reply_timeout=reply_timeout)
            driver.open()
            try:
                value = driver.read_register(2, address, size)
            finally:
                driver.close()
            assert (value is not None) == answered, (reply_timeout, value)
            time.sleep(0.1)                  # the late reply is gone before the next port
    finally:
        sim.command('restore 2')


def test_a_garbled_single_servo_reply_is_a_corrupt_reply_not_a_crash(bus, sim_bus):
    # The SDKs index a short reply before checking its length (IndexError): a bridge that
    # pings or checks EEPROM on a noisy bus must count it and go on.
    def garbled(*_args):
        raise IndexError('list index out of range')
    for name in ('ping', 'readTxRx', 'writeTxRx'):
        setattr(bus._packets, name, garbled)
    corrupt = bus.stats.checksum_errors
    assert bus.ping([2]) == {2: None}
    assert bus.read_register(2, 31, 2) is None
    assert bus.write_register(2, 40, 1, 0) is False
    assert bus.stats.checksum_errors == corrupt + 3 * (bus.retries + 1)


def test_sync_read_reports_every_servo_in_plain_units(bus, sim_bus):
    states = bus.read()
    assert sorted(states) == list(IDS)
    for state in states.values():
        assert state.position == pytest.approx(2048, abs=60)
        assert state.voltage == pytest.approx(7.4 if sim_bus[0] == 'feetech' else 12.0)
        assert state.temperature == 31.0 and state.errors == ()
    assert bus.stats.sent >= 1 and bus.stats.received >= 6


def test_the_stale_goal_does_not_move_a_servo_with_torque_off(bus):
    before = _positions(bus)
    time.sleep(0.2)
    assert _positions(bus) == before


def test_sync_write_moves_every_servo_to_its_goal(bus):
    start = _positions(bus)
    bus.write_goals(start)            # the goal first, then torque: nothing moves
    bus.set_torque(True)
    time.sleep(0.15)
    assert _positions(bus) == pytest.approx(start, abs=1)
    goals = {i: 1500 + 100 * i for i in IDS}
    bus.write_goals(goals)
    time.sleep(0.6)
    assert _positions(bus) == pytest.approx(goals, abs=3)
    bus.write_goals(start)
    time.sleep(0.6)
    bus.set_torque(False)


def test_a_lost_reply_is_retried_within_the_cycle_and_counted(bus, sim_bus):
    sim = sim_bus[1]
    lost, retries = bus.stats.lost, bus.stats.retries
    sim.command('lose 3 1')
    states = bus.read()
    assert all(states[i] is not None for i in IDS)
    assert bus.stats.lost == lost + 1 and bus.stats.retries == retries + 1
    assert 'servo 3' in bus.stats.last_error


def test_a_corrupt_reply_is_retried_and_counted_as_a_checksum_error(bus, sim_bus):
    sim = sim_bus[1]
    corrupt = bus.stats.checksum_errors
    sim.command('corrupt 2 1')
    states = bus.read()
    assert all(states[i] is not None for i in IDS)
    assert bus.stats.checksum_errors == corrupt + 1
    assert 'corrupt' in bus.stats.last_error


def test_a_missing_servo_is_none_and_named_while_the_others_answer(bus, sim_bus):
    sim_bus[1].command('remove 4')
    states = bus.read()
    assert states[4] is None
    assert all(states[i] is not None for i in IDS if i != 4)
    assert bus.stats.last_error.startswith('servo 4: no reply')
    assert bus.ping([4, 5]) == {4: None, 5: 777 if sim_bus[0] == 'feetech' else 1060}


@pytest.mark.parametrize('word', ['overload', 'overheating', 'voltage'])
def test_error_bits_come_back_in_words(bus, sim_bus, word):
    sim_bus[1].command(f'error 5 {word}')
    state = bus.read()[5]
    assert state.error_bits
    assert any(word in error for error in state.errors), state.errors
    sim_bus[1].command('error 5 clear')
    assert bus.read()[5].errors == ()


def test_a_slow_servo_misses_the_cycle_and_its_late_reply_does_not_poison_the_next(
        bus, sim_bus):
    sim = sim_bus[1]
    sim.command(f'slow 2 {REPLY_TIMEOUT * 1.5}')
    bus.retries = 0
    assert bus.read()[2] is None
    bus.retries = 2
    sim.command('restore 2')
    time.sleep(REPLY_TIMEOUT)           # the late reply is in the input buffer now
    states = bus.read()
    assert [states[i].servo_id for i in IDS] == list(IDS)


def test_an_unplugged_adapter_is_a_clear_error_and_reopens_when_back(sim_bus):
    protocol, sim, link = sim_bus
    bus = DRIVERS[protocol](link, IDS, reopen_interval=0.05, reply_timeout=REPLY_TIMEOUT)
    bus.open()
    assert bus.read()[1] is not None
    sim.command('vanish')
    with pytest.raises(BusUnavailableError, match=f'serial adapter on {link} lost'):
        bus.read()
    assert not bus.is_open
    with pytest.raises(BusUnavailableError):
        bus.read()                    # still gone: a reopen attempt fails with the reason
    assert 'cannot open' in bus.stats.last_error or 'lost' in bus.stats.last_error
    sim.command('replug')
    time.sleep(0.1)
    assert bus.read()[1] is not None
    assert bus.stats.reopen_attempts >= 1
    bus.close()


def test_opening_a_port_that_does_not_exist_says_which(tmp_path):
    bus = FeetechBus(str(tmp_path / 'ttyUSB9'), IDS)
    with pytest.raises(BusUnavailableError, match='cannot open .*ttyUSB9'):
        bus.open()


def test_bad_ids_are_refused():
    with pytest.raises(ValueError, match='repeat'):
        FeetechBus('/dev/null', [1, 1])
    with pytest.raises(ValueError, match='0..252'):
        DynamixelBus('/dev/null', [300])


def test_theoretical_bytes_per_cycle_follow_the_packet_sizes():
    # Feetech: sync read 8 + 6, six replies of 6 + 8, sync write 8 + 6 × 3.
    assert FeetechBus('/dev/null', IDS).read_bytes_per_cycle() == 14 + 6 * 14 + 26
    # Dynamixel: sync read 14 + 6, six replies of 11 + 21, sync write 14 + 6 × 5.
    assert DynamixelBus('/dev/null', IDS).read_bytes_per_cycle() == 20 + 6 * 32 + 44


def test_the_goal_register_reads_back_as_written_and_a_dropped_write_shows(bus, sim_bus):
    goals = {i: 2048 - 40 * i for i in IDS}        # torque off: nothing moves
    bus.write_goals(goals)
    assert bus.read_goals() == goals
    sim_bus[1].command('drop 3 1')
    bus.write_goals({i: 2048 for i in IDS})
    read = bus.read_goals()
    assert read[3] == goals[3] and all(read[i] == 2048 for i in IDS if i != 3)
    bus.write_goals({i: 2048 for i in IDS})


@pytest.fixture(scope='module')
def per_reply_bus(tmp_path_factory):
    """A bus whose simulation writes each reply when it is due (``per_reply``), not all of a
    sync read's at once: a lost or corrupt reply amid the others, as on a real wire."""
    from arm_servos.sim.process import SimProcess
    link = tmp_path_factory.mktemp('per_reply') / 'bus'
    with SimProcess(link, 'feetech', per_reply=True) as sim:
        driver = FeetechBus(str(link), IDS, retries=2, reply_timeout=REPLY_TIMEOUT,
                            cycle_budget=1.0)
        driver.open()
        yield sim, driver
        driver.close()


def test_per_reply_a_lost_and_a_corrupt_reply_are_retried_and_counted(per_reply_bus):
    sim, bus = per_reply_bus
    lost, corrupt, retries = bus.stats.lost, bus.stats.checksum_errors, bus.stats.retries
    sim.command('lose 3 1')
    sim.command('corrupt 5 1')
    states = bus.read()
    assert all(states[i] is not None for i in IDS)
    assert bus.stats.lost == lost + 1 and bus.stats.checksum_errors == corrupt + 1
    assert bus.stats.retries == retries + 1


def test_replies_answer_in_order_so_a_lost_one_is_retried_without_its_timeout(sim_bus):
    """The servos of a sync read answer one after the other: once servo 4 has answered,
    servo 3 (lost) will not, and its retry goes at once, not after the reply timeout."""
    protocol, sim, link = sim_bus
    bus = DRIVERS[protocol](link, IDS, retries=2, reply_timeout=60.0, cycle_budget=120.0)
    bus.open()
    calls: list[tuple[int, ...]] = []
    between: list[int] = []
    real = bus._sync_read

    def spy(ids, *args):
        calls.append(ids)
        return real(ids, *args)
    bus._sync_read = spy
    bus.between_attempts = lambda: between.append(len(calls))
    try:
        bus.read()                     # whatever a fresh pty left behind
        calls.clear()
        between.clear()
        sim.command('lose 3 1')
        sim.command('corrupt 5 1')
        result: list[dict] = []
        reader = threading.Thread(target=lambda: result.append(bus.read()), daemon=True)
        reader.start()
        reader.join(30.0)     # the 60 s reply timeout would still be running
        assert not reader.is_alive(), 'the read waited for the reply timeout'
        assert all(result[0][i] is not None for i in IDS)
        assert calls == [IDS, (3, 5)]   # one retry of both, at once
        assert between == [1]           # the owner's slot: between the read and its retry
    finally:
        bus.close()


def test_a_late_reply_to_an_earlier_request_is_not_taken_for_this_one(bus, sim_bus):
    sim = sim_bus[1]
    sim.command(f'slow 2 {REPLY_TIMEOUT * 1.5}')
    assert bus.read_goals()[2] is None         # its 2-byte goal reply (and the later) late
    sim.command('restore 2')
    states = bus.read()              # the late goal replies come in first, then these
    assert [states[i].servo_id for i in IDS] == list(IDS)
    assert {i: s.position for i, s in states.items()} == _positions(bus)


def test_a_port_handler_never_drains_output_before_a_packet(bus):
    # We discard input before each instruction; the SDK's clearPort would drain output
    # (scservo_sdk) first, a wait for the previous packet on the cycle's critical path.
    drained: list[bool] = []
    real = bus._port.ser.flush
    bus._port.ser.flush = lambda: (drained.append(True), real())
    bus.read()
    bus.write_goals({i: 2048 for i in IDS})
    bus.read()
    assert drained == []
