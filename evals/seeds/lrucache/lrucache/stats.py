"""Hit/miss/eviction counters shared by the caches."""


class CacheStats:
    """Counters for cache activity."""

    def __init__(self):
        self.reset()

    def reset(self):
        """Set every counter back to zero."""
        self.hits = 0
        self.misses = 0
        self.evictions = 0
        self.expirations = 0

    def record_hit(self):
        """Count one successful lookup."""
        self.hits += 1

    def record_miss(self):
        """Count one failed lookup."""
        self.misses += 1

    def record_eviction(self, count=1):
        """Count ``count`` entries evicted to make room."""
        self.evictions += count

    def record_expiration(self, count=1):
        """Count ``count`` entries dropped because their ttl ran out."""
        self.expirations += count

    @property
    def requests(self):
        """Total number of lookups (hits + misses)."""
        return self.hits + self.misses

    def hit_rate(self):
        """Fraction of lookups that were hits; 0.0 when there were none."""
        if self.requests == 0:
            return 0.0
        return self.hits / self.requests

    def miss_rate(self):
        """Fraction of lookups that were misses; 0.0 when there were none."""
        if self.requests == 0:
            return 0.0
        return 1.0 - self.hit_rate()

    def as_dict(self):
        """Return all counters as a plain dict."""
        return {
            "hits": self.hits,
            "misses": self.misses,
            "evictions": self.evictions,
            "expirations": self.expirations,
            "requests": self.requests,
        }
