import pytest

from lrucache import LRUCache, ManualClock


def test_get_and_put():
    c = LRUCache(2)
    c.put("a", 1)
    assert c.get("a") == 1
    assert c.get("zzz") is None
    assert c.get("zzz", -1) == -1


def test_evicts_least_recently_used():
    c = LRUCache(2)
    c.put("a", 1)
    c.put("b", 2)
    c.get("a")
    c.put("c", 3)
    assert c.keys() == ["a", "c"]
    assert "b" not in c
    assert c.stats.evictions == 1


def test_capacity_one_keeps_latest():
    c = LRUCache(1)
    c.put("a", 1)
    c.put("b", 2)
    assert c.keys() == ["b"]
    assert len(c) == 1


def test_invalid_capacity():
    with pytest.raises(ValueError):
        LRUCache(0)
    with pytest.raises(ValueError):
        LRUCache(2.5)


def test_updating_existing_key_does_not_evict():
    c = LRUCache(2)
    c.put("a", 1)
    c.put("b", 2)
    c.put("a", 10)
    assert c.keys() == ["b", "a"]
    assert c.peek("a") == 10
    assert c.stats.evictions == 0


def test_peek_does_not_change_order_or_stats():
    c = LRUCache(2)
    c.put("a", 1)
    c.put("b", 2)
    assert c.peek("a") == 1
    assert c.peek("x", "d") == "d"
    c.put("c", 3)
    assert c.keys() == ["b", "c"]
    assert c.stats.requests == 0


def test_hit_and_miss_counts():
    c = LRUCache(3)
    c.put(1, "x")
    c.get(1)
    c.get(1)
    c.get(2)
    assert (c.stats.hits, c.stats.misses) == (2, 1)


def test_entry_expires_exactly_at_ttl():
    clock = ManualClock()
    c = LRUCache(4, ttl=10, clock=clock)
    c.put("k", "v")
    clock.advance(9)
    assert c.get("k") == "v"
    clock.advance(1)
    assert c.get("k") is None
    assert c.stats.expirations == 1
    assert c.stats.misses == 1
    assert len(c) == 0
    assert c.stats.expirations == 1


def test_per_entry_ttl_overrides_default():
    clock = ManualClock()
    c = LRUCache(4, ttl=10, clock=clock)
    c.put("short", 1, ttl=2)
    c.put("long", 2)
    clock.advance(5)
    assert "short" not in c
    assert "long" in c


def test_ttl_remaining():
    clock = ManualClock(100)
    c = LRUCache(4, clock=clock)
    c.put("a", 1, ttl=30)
    c.put("b", 2)
    clock.advance(12)
    assert c.ttl_remaining("a") == 18
    assert c.ttl_remaining("b") is None
    with pytest.raises(KeyError):
        c.ttl_remaining("c")


def test_expired_entries_free_space_before_eviction():
    clock = ManualClock()
    c = LRUCache(2, clock=clock)
    c.put("old", 1, ttl=1)
    c.put("keep", 2)
    clock.advance(1)
    c.put("new", 3)
    assert c.keys() == ["keep", "new"]
    assert c.stats.evictions == 0
    assert c.stats.expirations == 1


def test_purge_expired_counts():
    clock = ManualClock()
    c = LRUCache(5, clock=clock)
    c.put(1, "a", ttl=1)
    c.put(2, "b", ttl=2)
    c.put(3, "c", ttl=3)
    clock.advance(2)
    assert c.purge_expired() == 2
    assert len(c) == 1


def test_delete():
    c = LRUCache(2)
    c.put("a", 1)
    assert c.delete("a") is True
    assert c.delete("a") is False
    assert len(c) == 0


def test_resize_shrinks_by_evicting_lru():
    c = LRUCache(4)
    for k in "abcd":
        c.put(k, k.upper())
    c.get("a")
    assert c.resize(2) == 2
    assert c.keys() == ["d", "a"]
    assert c.stats.evictions == 2
    assert c.resize(5) == 0
    assert c.capacity == 5


def test_len_and_keys_skip_expired_entries():
    clock = ManualClock()
    c = LRUCache(3, clock=clock)
    c.put("a", 1, ttl=5)
    c.put("b", 2)
    c.put("c", 3, ttl=9)
    clock.advance(5)
    assert c.keys() == ["b", "c"]
    clock.advance(4)
    assert len(c) == 1
    assert c.stats.expirations == 2
