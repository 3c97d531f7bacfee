from datefmt.duration import format_duration


def test_hours_minutes_seconds():
    assert format_duration(3723) == "1h 2m 3s"


def test_only_minutes():
    assert format_duration(120) == "2m"
