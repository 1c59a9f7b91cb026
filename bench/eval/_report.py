"""The eval's outputs: per-kind scores from the ranks, the text table, the PNG charts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench._report import figure, format_table
from bench.eval._dataset import FORMS, KINDS, Dataset
from bench.eval._metrics import summarize

MEASURES = ("hit@1", "hit@5", "mrr", "ndcg@10")


def scores(
    dataset: Dataset, ranks: Mapping[str, Sequence[int | None]]
) -> dict[str, dict[str, dict[str, dict[str, float]]]]:
    """`kinds.<kind>.<system>`, `forms.<form>.<system>` and `overall.all.<system>` summaries."""

    def by(attribute: str, value: str) -> dict[str, dict[str, float]]:
        return {
            system: summarize(
                [
                    r
                    for r, q in zip(rs, dataset.queries, strict=True)
                    if getattr(q, attribute) == value
                ]
            )
            for system, rs in ranks.items()
        }

    return {
        "kinds": {kind: by("kind", kind) for kind in KINDS},
        "forms": {form: by("form", form) for form in FORMS},
        "overall": {"all": {system: summarize(rs) for system, rs in ranks.items()}},
    }


def with_mem0_alone(judged: dict[str, Any], alone: Mapping[str, Any]) -> None:
    """Add `mem0_alone` to a judged run's kinds and overall: raw mem0 search over the store the
    judge-less replay left, which is what mem0 by itself keeps (ADD-only, exact copies dropped).
    `mem0_raw` is raw search over *this* run's store, which the bridge's verdicts already
    cleaned: beating it measures the ranking alone, beating `mem0_alone` the whole product."""
    for group, name in (("kinds", None), ("overall", "all")):
        for key, systems in judged[group].items():
            if name is None or key == name:
                systems["mem0_alone"] = alone[group][key]["mem0_raw"]


def _points(m: Mapping[str, float], base: Mapping[str, float] | None, same: bool) -> str:
    return "" if base is None or same else f"{100 * (m['hit@1'] - base['hit@1']):+.0f}"


def table(run: Mapping[str, Any]) -> str:
    """One row per kind and system; hit@1 also as points above raw mem0 on the same store and,
    when the judge-less run is known, above mem0 alone (see `with_mem0_alone`)."""
    rows: list[list[Any]] = []
    groups = [*((k, run["kinds"][k]) for k in KINDS), ("(all)", run["overall"]["all"])]
    for kind, systems in groups:
        raw = systems.get("mem0_raw")
        alone = systems.get("mem0_alone")
        for system, m in systems.items():
            baseline = system in {"mem0_raw", "mem0_alone"}
            rows.append(
                [
                    kind,
                    system,
                    int(m["n"]),
                    *(m[x] for x in MEASURES),
                    _points(m, raw, baseline),
                    _points(m, alone, baseline),
                ]
            )
    store = run["store"]
    headers = ["kind", "system", "n", "hit@1", "hit@5", "MRR", "nDCG@10"]
    return (
        format_table([*headers, "hit@1 vs raw (pts)", "vs mem0 alone (pts)"], rows)
        + f"\nstore: {store['memories_per_fact']:.2f} memories per fact (goal 1.00), "
        f"{store['stale_values']} of {store['facts_with_changed_values']} changed facts hold a "
        f"stale value, {store['facts_lost']} facts lost (goal 0) {store['facts_lost_per_kind']}"
        + _echoes(run.get("echoes"))
        + (f"\nverdict guard floor: {run['verdict_floor']:g}" if "verdict_floor" in run else "")
    )


def _echoes(echoes: Mapping[str, int] | None) -> str:
    if not echoes:
        return ""
    return (
        f"\nrestatements kept apart and counted as a mention: {echoes['counted']}, "
        f"{echoes['to_another_fact']} of them of another fact's memory"
    )


def plot(judges: Mapping[str, Mapping[str, Any]], path: Path) -> None:
    """hit@1 per kind and system, one panel per judge."""
    with figure(path, len(judges), 1, figsize=(11, 3.6 * len(judges)), squeeze=False) as (_, axes):
        for ax, (judge, run) in zip(axes[:, 0], judges.items(), strict=True):
            systems = list(run["kinds"][KINDS[0]])
            width = 0.8 / len(systems)
            for i, system in enumerate(systems):
                xs = [j + i * width for j in range(len(KINDS))]
                bars = ax.bar(
                    xs, [run["kinds"][k][system]["hit@1"] for k in KINDS], width, label=system
                )
                ax.bar_label(bars, fmt="%.2f", fontsize=6)
            ax.set_xticks([j + width * (len(systems) - 1) / 2 for j in range(len(KINDS))])
            ax.set_xticklabels(KINDS, fontsize=8)
            ax.set_ylim(0, 1.2)
            store = run["store"]
            ax.set_title(
                f"hit@1 per kind, judge={judge} (memories/fact {store['memories_per_fact']:.2f}, "
                f"stale {store['stale_values']}, lost {store['facts_lost']}"
                + (f", verdict floor {run['verdict_floor']:g})" if "verdict_floor" in run else ")"),
                fontsize=9,
            )
            ax.legend(loc="upper right", ncol=len(systems), fontsize=7)


def plot_sweep(sweep: Mapping[str, Any], path: Path) -> None:
    """hit@1 per kind against each swept setting (the others at their defaults)."""
    parameters = list(sweep["axes"])
    defaults = sweep["defaults"]
    size = (4.2 * len(parameters), 4)
    with figure(path, 1, len(parameters), figsize=size, squeeze=False) as (_, axes):
        for ax, parameter in zip(axes[0], parameters, strict=True):
            points = [
                p
                for p in sweep["points"]
                if all(p["settings"][k] == v for k, v in defaults.items() if k != parameter)
            ]
            points.sort(key=lambda p: p["settings"][parameter])
            xs = [p["settings"][parameter] for p in points]
            for kind in KINDS:
                ax.plot(xs, [p["kinds"][kind]["hit@1"] for p in points], marker="o", label=kind)
            ax.plot(xs, [p["mean_kind_hit@1"] for p in points], "k--", marker="s", label="mean")
            ax.axvline(defaults[parameter], color="grey", linestyle=":")
            ax.set_xlabel(parameter)
            ax.set_ylim(0, 1.05)
            ax.set_title(f"hit@1 vs {parameter}", fontsize=9)
        axes[0][0].set_ylabel(f"hit@1 ({sweep['system']}, judge={sweep['judge']})")
        axes[0][-1].legend(fontsize=7, loc="lower right")
