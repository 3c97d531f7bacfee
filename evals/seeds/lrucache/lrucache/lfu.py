"""Least-frequently-used cache."""

from .clock import ManualClock, expiry_time, is_expired
from .lru import check_capacity
from .stats import CacheStats


class LFUCache:
    """A bounded mapping that evicts the least frequently used key.

    Each ``get`` hit and each ``put`` adds one to a key's use count; a new
    key starts at 1. Ties between equally used keys are broken by evicting
    the one used least recently.
    """

    def __init__(self, capacity, ttl=None, clock=None):
        self.capacity = check_capacity(capacity)
        self.default_ttl = ttl
        self.clock = clock if clock is not None else ManualClock()
        self.stats = CacheStats()
        self._data = {}  # key -> [value, count, last_tick, expires_at]
        self._tick = 0

    def _touch(self, entry):
        self._tick += 1
        entry[1] += 1
        entry[2] = self._tick

    def _expire(self, key):
        entry = self._data.get(key)
        if entry is not None and is_expired(entry[3], self.clock.now()):
            del self._data[key]
            self.stats.record_expiration()
            return None
        return entry

    def get(self, key, default=None):
        """Return the value for ``key`` and bump its use count."""
        entry = self._expire(key)
        if entry is None:
            self.stats.record_miss()
            return default
        self._touch(entry)
        self.stats.record_hit()
        return entry[0]

    def put(self, key, value, ttl=None):
        """Store ``value``, evicting the least frequently used key if full."""
        use_ttl = ttl if ttl is not None else self.default_ttl
        expires = expiry_time(self.clock.now(), use_ttl)
        entry = self._expire(key)
        if entry is not None:
            entry[0] = value
            entry[3] = expires
            self._touch(entry)
            return
        self.purge_expired()
        if len(self._data) >= self.capacity:
            victim = self.eviction_candidate()
            del self._data[victim]
            self.stats.record_eviction()
        self._tick += 1
        self._data[key] = [value, 1, self._tick, expires]

    def eviction_candidate(self):
        """Key that would be evicted next (lowest count, then oldest use)."""
        best_key = None
        best = None
        for key, entry in self._data.items():
            rank = (entry[1], entry[2])
            if best is None or rank < best:
                best = rank
                best_key = key
        return best_key

    def frequency(self, key):
        """Use count of ``key``, 0 if it is absent or expired."""
        entry = self._expire(key)
        return 0 if entry is None else entry[1]

    def purge_expired(self):
        """Drop every expired entry and return how many were dropped."""
        now = self.clock.now()
        dead = [k for k, e in self._data.items() if is_expired(e[3], now)]
        for k in dead:
            del self._data[k]
        self.stats.record_expiration(len(dead))
        return len(dead)

    def most_common(self, n=None):
        """Live ``(key, count)`` pairs, highest count first (ties: key order)."""
        self.purge_expired()
        pairs = sorted(((k, e[1]) for k, e in self._data.items()), key=lambda p: (-p[1], p[0]))
        return pairs if n is None else pairs[:n]

    def __contains__(self, key):
        return self._expire(key) is not None

    def __len__(self):
        self.purge_expired()
        return len(self._data)
