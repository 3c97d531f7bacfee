"""A manually advanced integer clock for deterministic expiry."""


class ManualClock:
    """Integer clock that only moves when ``advance`` is called."""

    def __init__(self, start=0):
        if start < 0:
            raise ValueError("clock cannot start before 0")
        self._now = start

    def now(self):
        """Return the current time."""
        return self._now

    def advance(self, ticks=1):
        """Move the clock forward by ``ticks`` (>= 0) and return the new time."""
        if ticks < 0:
            raise ValueError("clock cannot go backwards")
        self._now += ticks
        return self._now


def expiry_time(now, ttl):
    """Return the time at which an entry stored at ``now`` expires.

    ``ttl`` of None means the entry never expires (returns None). A ttl must
    be a positive integer.
    """
    if ttl is None:
        return None
    if ttl <= 0:
        raise ValueError("ttl must be positive")
    return now + ttl


def is_expired(expires_at, now):
    """An entry is expired once the clock reaches its expiry time."""
    return expires_at is not None and now >= expires_at
