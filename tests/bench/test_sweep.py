"""Which settings a sweep visits, and how it picks the best one."""

from __future__ import annotations

from typing import Any

from bench.eval.__main__ import best_point, default_of, parse_axes, sweep_points
from bench.eval._dataset import KINDS


def test_one_at_a_time_varies_each_axis_around_the_defaults_without_repeats() -> None:
    axes = {"A": (1.0, 2.0, 3.0), "B": (10.0, 20.0)}
    points = sweep_points(axes, {"A": 2.0, "B": 10.0}, grid=False)
    assert points == [
        {"A": 2.0, "B": 10.0},
        {"A": 1.0, "B": 10.0},
        {"A": 3.0, "B": 10.0},
        {"A": 2.0, "B": 20.0},
    ]


def test_a_grid_takes_every_combination() -> None:
    assert len(sweep_points({"A": (1.0, 2.0, 3.0), "B": (1.0, 2.0)}, {}, grid=True)) == 6


def test_axes_default_to_the_ranking_settings_and_their_shipped_defaults() -> None:
    axes = parse_axes([])
    assert set(axes) == {
        "RANKER_ALPHA",
        "RANKER_HALF_LIFE_DAYS",
        "RANKER_RECENCY_FLOOR",
        "MEM0_SEARCH_OVERFETCH",
    }
    assert all(default_of(name) in values for name, values in axes.items())


def test_an_axis_given_on_the_command_line_replaces_the_defaults() -> None:
    assert parse_axes(["RANKER_ALPHA=0,0.5"]) == {"RANKER_ALPHA": (0, 0.5)}


def _point(hit: float, worst: float) -> dict[str, Any]:
    kinds = {k: {"hit@1": hit} for k in KINDS}
    kinds["static"] = {"hit@1": worst}
    mean = sum(k["hit@1"] for k in kinds.values()) / len(kinds)
    return {"settings": {"hit": hit}, "kinds": kinds, "mean_kind_hit@1": mean}


def test_the_best_point_is_never_worse_than_raw_on_a_kind_when_one_such_exists() -> None:
    raw = {k: {"hit@1": 0.5} for k in KINDS}
    higher_but_worse_on_static = _point(0.9, 0.4)
    lower_but_never_worse = _point(0.7, 0.5)
    best = best_point([higher_but_worse_on_static, lower_but_never_worse], raw)
    assert best["settings"] == {"hit": 0.7}
    assert best["qualifies"] is True


def test_without_a_qualifying_point_the_best_mean_wins_and_says_so() -> None:
    raw = {k: {"hit@1": 0.95} for k in KINDS}
    best = best_point([_point(0.9, 0.4), _point(0.7, 0.5)], raw)
    assert best["settings"] == {"hit": 0.9}
    assert best["qualifies"] is False
