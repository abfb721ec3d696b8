"""`utc_timestamp`: the event timestamp, formatted once a second and exact to the microsecond."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta

import pytest

from windtunnel.actors import events
from windtunnel.actors.events import make_event, utc_timestamp


def test_the_timestamp_is_iso_8601_utc_with_microseconds_and_now() -> None:
    before = datetime.now(UTC)
    stamp = utc_timestamp()
    after = datetime.now(UTC)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", stamp), stamp
    assert before <= datetime.fromisoformat(stamp) <= after


@pytest.mark.parametrize(
    ("nanos", "expected"),
    [
        (1_764_631_832_748_525_999, "2025-12-01T23:30:32.748525Z"),
        (1_764_631_832_000_000_000, "2025-12-01T23:30:32.000000Z"),
        (1_764_631_833_000_001_000, "2025-12-01T23:30:33.000001Z"),  # the next second
        (1_764_631_832_999_999_999, "2025-12-01T23:30:32.999999Z"),  # and back: no stale prefix
        (0, "1970-01-01T00:00:00.000000Z"),
    ],
)
def test_each_instant_gets_its_own_second(
    monkeypatch: pytest.MonkeyPatch, nanos: int, expected: str
) -> None:
    utc_timestamp()  # some second is cached
    monkeypatch.setattr(events.time, "time_ns", lambda: nanos)
    assert utc_timestamp() == expected
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    assert datetime.fromisoformat(expected) == epoch + timedelta(microseconds=nanos // 1000)


def test_events_carry_it() -> None:
    event = make_event("tool_call", pack="p", scenario="s", upstream="u")
    assert abs(datetime.fromisoformat(event["timestamp"]).timestamp() - time.time()) < 5
