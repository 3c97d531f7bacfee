"""Which event-started cycle answers a burst of log events (`postgame.events.burst_leader`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from postgame.events import burst_leader

T0 = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)


def runs(*seconds_and_ids):
    return [(T0 + timedelta(seconds=s), rid) for s, rid in seconds_and_ids]


@pytest.mark.parametrize(
    ("started", "window", "leaders"),
    [
        (runs((0, "a")), 60, {"a": "a"}),
        (runs((0, "a"), (2, "b")), 60, {"a": "a", "b": "a"}),  # the trigger fired twice for one burst
        (runs((0, "a"), (2, "b"), (61, "c")), 60, {"a": "a", "b": "a", "c": "c"}),  # c: 61 s after the leader
        (
            runs((0, "a"), (30, "b"), (59, "c"), (60, "d"), (61, "e")),
            60,
            {"a": "a", "b": "a", "c": "a", "d": "a", "e": "e"},
        ),  # e: 61 s after a, though 1 s after d
        (runs((0, "b"), (0, "a")), 60, {"a": "a", "b": "a"}),  # created together: the smaller id leads
        (runs((0, "a"), (5, "b")), 4, {"a": "a", "b": "b"}),  # two bursts
    ],
)
def test_the_first_run_of_a_burst_leads_it(started, window, leaders):
    assert {rid: burst_leader(list(reversed(started)), rid, window) for _, rid in started} == leaders


def test_a_run_not_given_is_an_error():
    with pytest.raises(ValueError, match="zzz"):
        burst_leader(runs((0, "a")), "zzz", 60)
