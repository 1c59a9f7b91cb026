"""Ages and hit lines: what the agent reads at recall time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from mem0_bridge._models import Hit
from mem0_bridge._render import format_age, hit_line

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def _ago(**delta: float) -> str:
    return (NOW - timedelta(**delta)).isoformat()


@pytest.mark.parametrize(
    ("created", "age"),
    [
        (_ago(minutes=59), "<1h"),
        (_ago(hours=5, minutes=30), "5h"),
        (_ago(days=3, hours=2), "3d"),
        (_ago(days=59), "59d"),
        (_ago(days=65), "2mo"),
        (_ago(days=800), "2y"),
    ],
)
def test_age_is_rendered_in_the_coarsest_useful_unit(created: str, age: str) -> None:
    assert format_age(created, None, NOW) == age


def test_age_counts_from_the_newer_of_updated_and_created() -> None:
    assert format_age(_ago(days=300), _ago(hours=2), NOW) == "2h"


def test_age_reads_timestamps_in_any_offset() -> None:
    pacific = (NOW - timedelta(hours=3)).astimezone().isoformat()
    assert format_age(pacific, None, NOW) == "3h"


@pytest.mark.parametrize("created", [None, "", "yesterday"])
def test_age_without_a_usable_time_is_a_question_mark(created: str | None) -> None:
    assert format_age(created, None, NOW) == "?"


def test_hit_line_is_tab_separated_on_one_line() -> None:
    hit = Hit(
        id="123e4567-e89b-12d3-a456-426614174000",
        text="Two\nlines\tand tabs.",
        namespace="alpha",
        score=0.87654,
        similarity=0.8,
        age="3d",
        created_at=None,
        updated_at=None,
    )
    assert hit_line(hit) == "123e4567-e89b-12d3-a456-426614174000\t0.877\t3d\tTwo lines and tabs."


def test_hit_line_without_a_score_shows_a_dash() -> None:
    hit = Hit(
        id="x",
        text="t",
        namespace=None,
        score=None,
        similarity=None,
        age="<1h",
        created_at=None,
        updated_at=None,
    )
    assert hit_line(hit) == "x\t-\t<1h\tt"


def test_hit_line_marks_a_wording_with_the_memory_it_restates() -> None:
    hit = Hit(
        id="x",
        text="Port 9000 is where the API listens.",
        namespace="alpha",
        score=None,
        similarity=None,
        age="<1h",
        created_at=None,
        updated_at=None,
        restates="y",
    )
    assert hit_line(hit) == "x\t-\t<1h\t[wording of y] Port 9000 is where the API listens."
