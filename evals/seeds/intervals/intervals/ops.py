"""Operations on lists of intervals. Results are always merged and sorted."""

from intervals.interval import Interval


def merge(intervals):
    """Merge overlapping and adjacent intervals into a sorted disjoint list.

    Empty intervals are dropped.
    """
    result = []
    for iv in sorted(intervals):
        if iv.is_empty():
            continue
        if result and iv.start <= result[-1].end:
            last = result[-1]
            result[-1] = Interval(last.start, max(last.end, iv.end))
        else:
            result.append(iv)
    return result


def union(a, b):
    """Return the merged union of two interval lists."""
    return merge(list(a) + list(b))


def intersect(a, b):
    """Return the points that lie in both ``a`` and ``b``.

    Both inputs are merged first; for each interval of ``a`` the sorted
    intervals of ``b`` are scanned until one starts at or after its end.
    """
    result = []
    right = merge(b)
    for x in merge(a):
        for y in right:
            if y.start >= x.end:
                break
            common = x.intersection(y)
            if common is not None:
                result.append(common)
    return result


def subtract(a, b):
    """Return the points of ``a`` that are not in ``b``."""
    result = []
    holes = merge(b)
    for iv in merge(a):
        start = iv.start
        for hole in holes:
            if hole.end <= start:
                continue
            if hole.start >= iv.end:
                break
            if hole.start > start:
                result.append(Interval(start, hole.start))
            start = max(start, hole.end)
        if start < iv.end:
            result.append(Interval(start, iv.end))
    return result


def total_length(intervals):
    """Return the total length covered, counting overlapping parts once."""
    return sum(iv.length for iv in merge(intervals))


def gaps(intervals):
    """Return the uncovered stretches strictly between the merged intervals."""
    merged = merge(intervals)
    result = []
    for k in range(1, len(merged)):
        result.append(Interval(merged[k - 1].end, merged[k].start))
    return result


def complement(intervals, within):
    """Return the parts of interval ``within`` not covered by ``intervals``."""
    return subtract([within], intervals)
