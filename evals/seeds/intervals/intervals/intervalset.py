"""A mutable set of points stored as sorted, disjoint intervals."""

from bisect import bisect_right

from intervals.interval import Interval
from intervals.ops import merge, subtract


class IntervalSet:
    """A normalised collection of intervals supporting point queries."""

    def __init__(self, intervals=()):
        self._items = merge(intervals)

    @property
    def intervals(self):
        """The sorted, disjoint, non-adjacent intervals of the set (a copy)."""
        return list(self._items)

    def __len__(self):
        """Number of disjoint intervals in the set."""
        return len(self._items)

    def __eq__(self, other):
        if not isinstance(other, IntervalSet):
            return NotImplemented
        return self._items == other._items

    def add(self, start, end):
        """Add ``[start, end)`` to the set."""
        self._items = merge(self._items + [Interval(start, end)])

    def remove(self, start, end):
        """Remove ``[start, end)`` from the set."""
        self._items = subtract(self._items, [Interval(start, end)])

    def find(self, x):
        """Return the interval containing ``x`` or None (binary search)."""
        starts = [iv.start for iv in self._items]
        k = bisect_right(starts, x) - 1
        if k >= 0 and x < self._items[k].end:
            return self._items[k]
        return None

    def __contains__(self, x):
        return self.find(x) is not None

    def covers(self, start, end):
        """Return True if all of ``[start, end)`` is inside the set."""
        wanted = Interval(start, end)
        if wanted.is_empty():
            return True
        return any(iv.contains_interval(wanted) for iv in self._items)

    def total_length(self):
        """Return the total length of the set."""
        return sum(iv.length for iv in self._items)

    def bounds(self):
        """Return the hull of the whole set, or None if it is empty."""
        if not self._items:
            return None
        return Interval(self._items[0].start, self._items[-1].end)

    def next_free(self, x):
        """Return the smallest point ``>= x`` that is not in the set."""
        iv = self.find(x)
        return x if iv is None else iv.end
