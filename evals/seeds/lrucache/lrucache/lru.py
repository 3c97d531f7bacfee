"""Least-recently-used cache."""

from collections import OrderedDict

from .clock import ManualClock, expiry_time, is_expired
from .stats import CacheStats

_MISSING = object()


def check_capacity(capacity):
    """Validate a capacity: an int of at least 1."""
    if not isinstance(capacity, int) or capacity < 1:
        raise ValueError("capacity must be an int >= 1")
    return capacity


class LRUCache:
    """A bounded mapping that evicts the least recently used key.

    ``get`` and ``put`` mark a key as most recently used; ``peek`` and ``in``
    do not. Entries may expire after ``ttl`` ticks of ``clock``.
    """

    def __init__(self, capacity, ttl=None, clock=None):
        self.capacity = check_capacity(capacity)
        self.default_ttl = ttl
        self.clock = clock if clock is not None else ManualClock()
        self.stats = CacheStats()
        self._data = OrderedDict()  # key -> (value, expires_at); LRU first

    def _live(self, key):
        """Return the entry for key, dropping it if it has expired."""
        entry = self._data.get(key, _MISSING)
        if entry is _MISSING:
            return _MISSING
        if is_expired(entry[1], self.clock.now()):
            del self._data[key]
            self.stats.record_expiration()
            return _MISSING
        return entry

    def get(self, key, default=None):
        """Return the value for ``key`` (a hit) or ``default`` (a miss)."""
        entry = self._live(key)
        if entry is _MISSING:
            self.stats.record_miss()
            return default
        self._data.move_to_end(key)
        self.stats.record_hit()
        return entry[0]

    def peek(self, key, default=None):
        """Return the value without touching recency or statistics."""
        entry = self._live(key)
        return default if entry is _MISSING else entry[0]

    def put(self, key, value, ttl=None):
        """Store ``value``; ``ttl`` overrides the cache's default ttl.

        Expired entries are purged first; if the cache is still full the
        least recently used key is evicted.
        """
        use_ttl = ttl if ttl is not None else self.default_ttl
        expires = expiry_time(self.clock.now(), use_ttl)
        if key in self._data:
            self._data.move_to_end(key)
        else:
            self.purge_expired()
            if len(self._data) >= self.capacity:
                self._data.popitem(last=False)
                self.stats.record_eviction()
        self._data[key] = (value, expires)

    def delete(self, key):
        """Remove ``key``; return True if it was present and not expired."""
        entry = self._live(key)
        if entry is _MISSING:
            return False
        del self._data[key]
        return True

    def purge_expired(self):
        """Drop every expired entry and return how many were dropped."""
        now = self.clock.now()
        dead = [k for k, (_, exp) in self._data.items() if is_expired(exp, now)]
        for k in dead:
            del self._data[k]
        self.stats.record_expiration(len(dead))
        return len(dead)

    def resize(self, capacity):
        """Change the capacity, evicting LRU keys if it shrank."""
        self.capacity = check_capacity(capacity)
        evicted = 0
        while len(self._data) > self.capacity:
            self._data.popitem(last=False)
            evicted += 1
        self.stats.record_eviction(evicted)
        return evicted

    def keys(self):
        """Live keys from least to most recently used."""
        self.purge_expired()
        return list(self._data)

    def ttl_remaining(self, key):
        """Ticks until ``key`` expires, None if it never does; KeyError if absent."""
        entry = self._live(key)
        if entry is _MISSING:
            raise KeyError(key)
        if entry[1] is None:
            return None
        return entry[1] - self.clock.now()

    def __contains__(self, key):
        return self._live(key) is not _MISSING

    def __len__(self):
        self.purge_expired()
        return len(self._data)
