import pytest

from lrucache import LFUCache, ManualClock


def test_lfu_evicts_least_frequently_used():
    c = LFUCache(2)
    c.put("a", 1)
    c.put("b", 2)
    c.get("a")
    c.put("c", 3)
    assert "b" not in c
    assert "a" in c and "c" in c


def test_lfu_tie_evicts_least_recent():
    c = LFUCache(3)
    c.put("a", 1)
    c.put("b", 2)
    c.put("c", 3)
    c.get("a")
    c.get("b")
    assert c.eviction_candidate() == "c"
    c.get("c")
    assert c.eviction_candidate() == "a"


def test_lfu_frequency_counts():
    c = LFUCache(3)
    c.put("a", 1)
    c.get("a")
    c.get("a")
    c.put("a", 5)
    assert c.frequency("a") == 4
    assert c.frequency("missing") == 0
    assert c.get("a") == 5


def test_lfu_miss_does_not_create_entry():
    c = LFUCache(2)
    assert c.get("x", 0) == 0
    assert len(c) == 0
    assert c.stats.misses == 1
    assert c.stats.hits == 0


def test_lfu_new_key_can_be_evicted_next():
    c = LFUCache(2)
    c.put("a", 1)
    c.get("a")
    c.put("b", 2)
    c.put("c", 3)
    assert "b" not in c
    assert c.most_common() == [("a", 2), ("c", 1)]
    assert c.stats.evictions == 1


def test_lfu_most_common_limit_and_ties():
    c = LFUCache(5)
    for k in ["d", "b", "a", "c"]:
        c.put(k, 0)
    c.get("c")
    c.get("c")
    c.get("d")
    assert c.most_common() == [("c", 3), ("d", 2), ("a", 1), ("b", 1)]
    assert c.most_common(2) == [("c", 3), ("d", 2)]


def test_lfu_ttl_expiry():
    clock = ManualClock()
    c = LFUCache(3, ttl=5, clock=clock)
    c.put("a", 1)
    clock.advance(4)
    assert c.get("a") == 1
    clock.advance(1)
    assert c.get("a") is None
    assert c.stats.expirations == 1
    assert len(c) == 0
    assert c.stats.expirations == 1
    assert c.frequency("a") == 0


def test_lfu_put_refreshes_ttl():
    clock = ManualClock()
    c = LFUCache(3, ttl=5, clock=clock)
    c.put("a", 1)
    clock.advance(3)
    c.put("a", 2)
    clock.advance(3)
    assert c.get("a") == 2


def test_lfu_expired_entry_is_reinserted_fresh():
    clock = ManualClock()
    c = LFUCache(3, clock=clock)
    c.put("a", 1, ttl=2)
    c.get("a")
    clock.advance(2)
    c.put("a", 9)
    assert c.frequency("a") == 1


def test_lfu_expired_make_room_without_eviction():
    clock = ManualClock()
    c = LFUCache(2, clock=clock)
    c.put("x", 1, ttl=1)
    c.put("y", 2)
    clock.advance(1)
    c.put("z", 3)
    assert c.stats.evictions == 0
    assert len(c) == 2
    assert c.purge_expired() == 0


def test_lfu_invalid_capacity():
    with pytest.raises(ValueError):
        LFUCache(0)
    assert LFUCache(1).capacity == 1


def test_lfu_eviction_candidate_empty():
    assert LFUCache(2).eviction_candidate() is None


def test_lfu_untouched_keys_evict_in_insertion_order():
    c = LFUCache(3)
    c.put("a", 1)
    c.put("b", 2)
    c.put("c", 3)
    assert c.eviction_candidate() == "a"
    c.put("d", 4)
    assert c.eviction_candidate() == "b"
    assert sorted(k for k, _ in c.most_common()) == ["b", "c", "d"]


def test_lfu_frequency_beats_recency():
    c = LFUCache(3)
    c.put("a", 1)
    c.get("a")
    c.get("a")
    c.put("b", 2)
    c.put("c", 3)
    assert c.eviction_candidate() == "b"


def test_lfu_tie_uses_recency_of_gets():
    c = LFUCache(3)
    for k in "abc":
        c.put(k, 0)
    for k in "cba":
        c.get(k)
    assert c.eviction_candidate() == "c"


def test_lfu_hit_and_miss_counts():
    c = LFUCache(2)
    c.put("a", 1)
    c.get("a")
    c.get("a")
    c.get("b")
    assert c.stats.as_dict()["hits"] == 2
    assert c.stats.misses == 1


def test_lfu_len_and_most_common_drop_expired_entries():
    clock = ManualClock()
    c = LFUCache(4, clock=clock)
    c.put("a", 1, ttl=3)
    c.put("b", 2)
    c.put("c", 3, ttl=6)
    clock.advance(3)
    assert c.most_common() == [("b", 1), ("c", 1)]
    assert c.stats.expirations == 1
    clock.advance(3)
    assert len(c) == 1
    assert c.stats.expirations == 2
