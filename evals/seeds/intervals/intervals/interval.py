"""A single half-open interval ``[start, end)``."""

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Interval:
    """The half-open interval ``[start, end)``; ``start == end`` is empty.

    Intervals compare and sort by ``(start, end)``.
    """

    start: float
    end: float

    def __post_init__(self):
        if self.start > self.end:
            raise ValueError(f"start {self.start} is after end {self.end}")

    @property
    def length(self):
        """Return ``end - start``."""
        return self.end - self.start

    def is_empty(self):
        """Return True if the interval contains no points."""
        return self.start == self.end

    def contains(self, x):
        """Return True if ``start <= x < end``."""
        return self.start <= x < self.end

    def contains_interval(self, other):
        """Return True if every point of ``other`` lies in this interval.

        An empty ``other`` is contained in every interval.
        """
        if other.is_empty():
            return True
        return self.start <= other.start and other.end <= self.end

    def overlaps(self, other):
        """Return True if the two intervals share at least one point."""
        return self.start < other.end and other.start < self.end

    def touches(self, other):
        """Return True if the intervals overlap or are adjacent (``[1, 3)`` and ``[3, 5)``)."""
        return self.start <= other.end and other.start <= self.end

    def intersection(self, other):
        """Return the common part of both intervals, or None if they do not overlap."""
        if not self.overlaps(other):
            return None
        return Interval(max(self.start, other.start), min(self.end, other.end))

    def hull(self, other):
        """Return the smallest interval that covers both intervals."""
        return Interval(min(self.start, other.start), max(self.end, other.end))

    def shift(self, delta):
        """Return the interval moved by ``delta``."""
        return Interval(self.start + delta, self.end + delta)

    def split(self, at):
        """Split at point ``at`` into ``(left, right)``.

        ``at`` must satisfy ``start <= at <= end``; either side may be empty.
        """
        if at < self.start or at > self.end:
            raise ValueError(f"split point {at} outside {self}")
        return Interval(self.start, at), Interval(at, self.end)
