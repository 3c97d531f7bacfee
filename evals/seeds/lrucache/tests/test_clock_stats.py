import pytest

from lrucache import CacheStats, ManualClock
from lrucache.clock import expiry_time, is_expired


def test_clock_starts_and_advances():
    clock = ManualClock(5)
    assert clock.now() == 5
    assert clock.advance(3) == 8
    assert clock.advance() == 9
    assert clock.advance(0) == 9


def test_clock_rejects_negative_values():
    with pytest.raises(ValueError):
        ManualClock(-1)
    with pytest.raises(ValueError):
        ManualClock().advance(-2)
    assert ManualClock(0).now() == 0
    assert ManualClock().now() == 0


def test_expiry_time():
    assert expiry_time(10, 5) == 15
    assert expiry_time(10, 1) == 11
    assert expiry_time(10, None) is None
    with pytest.raises(ValueError):
        expiry_time(10, 0)


def test_is_expired_boundary():
    assert not is_expired(15, 14)
    assert is_expired(15, 15)
    assert is_expired(15, 16)
    assert not is_expired(None, 10**9)


def test_stats_rates():
    s = CacheStats()
    for _ in range(3):
        s.record_hit()
    s.record_miss()
    assert s.requests == 4
    assert s.hit_rate() == 0.75
    assert s.miss_rate() == 0.25


def test_stats_rates_with_no_requests():
    s = CacheStats()
    assert s.hit_rate() == 0.0
    assert s.miss_rate() == 0.0


def test_stats_as_dict_and_reset():
    s = CacheStats()
    s.record_hit()
    s.record_miss()
    s.record_miss()
    s.record_eviction(2)
    s.record_expiration()
    assert s.as_dict() == {"hits": 1, "misses": 2, "evictions": 2, "expirations": 1, "requests": 3}
    s.reset()
    assert s.as_dict() == {"hits": 0, "misses": 0, "evictions": 0, "expirations": 0, "requests": 0}
