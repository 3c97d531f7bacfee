"""lrucache: LRU and LFU caches with TTL and statistics.

Time never comes from the system: every cache takes a clock object with a
``now()`` method returning an integer (see ``ManualClock``).
"""

from .clock import ManualClock
from .stats import CacheStats
from .lru import LRUCache
from .lfu import LFUCache

__all__ = ["ManualClock", "CacheStats", "LRUCache", "LFUCache"]
