"""Edit distances between strings."""


def levenshtein(a, b):
    """Return the Levenshtein edit distance between ``a`` and ``b``.

    Insertions, deletions and substitutions each cost 1.
    """
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(
                previous[j] + 1,
                current[j - 1] + 1,
                previous[j - 1] + cost,
            )
        previous = current
    return previous[len(b)]


def hamming(a, b):
    """Return the number of positions at which ``a`` and ``b`` differ.

    Raises ``ValueError`` if the strings have different lengths.
    """
    if len(a) != len(b):
        raise ValueError("strings must have equal length")
    count = 0
    for i in range(len(a)):
        if a[i] != b[i]:
            count += 1
    return count


def similarity(a, b):
    """Return a similarity ratio in [0, 1] based on Levenshtein distance.

    ``1 - distance / max(len(a), len(b))``, rounded to 4 decimals; two empty
    strings are fully similar (1.0).
    """
    longest = max(len(a), len(b))
    if longest == 0:
        return 1.0
    return round(1 - levenshtein(a, b) / longest, 4)


def closest_match(word, candidates, max_distance=2):
    """Return the candidate with the smallest edit distance to ``word``.

    Candidates farther than ``max_distance`` are ignored. Ties are broken
    by the order of ``candidates`` (the earliest wins). Returns ``None``
    when nothing is close enough.
    """
    best = None
    best_distance = max_distance + 1
    for candidate in candidates:
        d = levenshtein(word, candidate)
        if d < best_distance:
            best = candidate
            best_distance = d
    return best
