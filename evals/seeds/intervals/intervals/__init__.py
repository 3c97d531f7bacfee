"""intervals: half-open [start, end) intervals and normalised interval sets."""

from intervals.interval import Interval
from intervals.ops import complement, gaps, intersect, merge, subtract, total_length, union
from intervals.intervalset import IntervalSet

__all__ = [
    "Interval",
    "IntervalSet",
    "complement",
    "gaps",
    "intersect",
    "merge",
    "subtract",
    "total_length",
    "union",
]
