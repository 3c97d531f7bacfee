"""Human-readable durations."""


def format_duration(seconds: int) -> str:
    """3723 -> "1h 2m 3s"; parts that are zero are left out."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = []
    if hours:
        parts.append(f"{hours}h")
    if minutes:
        parts.append(f"{minutes}m")
    if secs:
        parts.append(f"{secs}s")
    return " ".join(parts)
