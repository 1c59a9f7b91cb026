"""`python -m bench.eval` (`make eval`): does the bridge beat raw mem0 where it claims to?

Replays `bench/data/eval_dataset.json` (months of statements, with their own timestamps)
through the real local stack once per judge, then asks every query of raw mem0, the bridge with
reranking, and the bridge with reranking and rewriting (see `bench/eval/_replay.py`). Prints a
table per judge, writes `bench/results/eval.json` and `bench/results/eval.png`, and shows a
progress bar on stderr.

    python -m bench.eval                      # judges none, fake, oracle (+ real if configured)
    python -m bench.eval --judges fake        # one judge
    JUDGE_LLM_BASE_URL=... JUDGE_LLM_MODEL=... [JUDGE_LLM_API_KEY=...] python -m bench.eval
    python -m bench.eval --sweep              # only the fake judge's store, re-scored under
                                              #   ranker and over-fetch settings:
                                              #   eval_sweep.{json,png} (eval.json untouched)
    python -m bench.eval --sweep --axis RANKER_ALPHA=0,0.5,1 --axis MEM0_SEARCH_OVERFETCH=2,4

`eval.json` holds `kinds.<kind>.<system>.{hit@1,hit@5,mrr,ndcg@10}` and `store.{memories_per_fact,
stale_values,facts_lost}` for the primary judge (the real one when given, else fake, else
oracle, else none), and the same for every judge under `judges.<judge>`.

The sweep replays once (with `--sweep-judge`, default fake), then for each setting starts a
ranker on the same records (and a bridge with that over-fetch) and asks every query again
through `--sweep-system` (default `bridge_rerank`): the store is identical across points, only
the ranking changes. By default it varies one setting at a time around the defaults; `--grid`
takes every combination (slow). Any `RANKER_*` or `MEM0_*` variable can be an axis, so a new
ranking knob can be swept without changing this file.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import time
import uuid
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack, ExitStack
from functools import partial
from pathlib import Path
from typing import Any

from bench._mcp import http_bridge
from bench._report import RESULTS_DIR, format_table, machine, progress, write_outputs
from bench.eval._dataset import DATASET_PATH, KINDS, Dataset, counts, load, subset, validate
from bench.eval._metrics import Attribution, store_metrics, summarize
from bench.eval._replay import (
    JUDGES,
    SYSTEMS,
    Searcher,
    Services,
    ask,
    bridge_process,
    bridge_searcher,
    gold_ranks,
    leaks,
    list_store,
    mem0_client,
    raw_searcher,
    real_judge_configured,
    replay,
    running_services,
)
from bench.eval._report import plot, plot_sweep, scores, table, with_mem0_alone
from mem0_bridge import BridgeSettings
from mem0_ranker._settings import RankerSettings
from tests.support.stack import start_ranker

#: Sweep axes by default: the ranker's scoring settings and the bridge's over-fetch.
DEFAULT_AXES: dict[str, tuple[float, ...]] = {
    "RANKER_SIMILARITY_MARGIN": (0.0, 0.03, 0.045, 0.05, 0.07, 0.1, 0.2, 1.0),
    "RANKER_ALPHA": (0.0, 0.2, 0.5, 1.0),
    "RANKER_HALF_LIFE_DAYS": (30.0, 90.0, 365.0),
    "RANKER_RECENCY_FLOOR": (0.3, 0.6, 1.0),
    "MEM0_SEARCH_OVERFETCH": (1, 2, 3),
}


#: The verdict guard's floor, reported with each judge's run that has verdicts to guard (the
#: oracle's is 0 by default).
FLOOR = "MEM0_VERDICT_SIMILARITY_FLOOR"


def default_of(variable: str) -> Any:
    """The shipped default of a `RANKER_*` or `MEM0_*` setting (what the sweep varies around)."""
    for prefix, settings in (("RANKER_", RankerSettings), ("MEM0_", BridgeSettings)):
        if variable.startswith(prefix):
            name = variable.removeprefix(prefix).lower()
            if name in settings.model_fields:
                return settings.model_fields[name].default
    raise SystemExit(f"{variable} is not a ranker (RANKER_*) or bridge (MEM0_*) setting")


def _number(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() and "." not in text else value


def _share(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"a share within 0..1, not {text}")
    return value


def parse_axes(specs: Sequence[str]) -> dict[str, tuple[float, ...]]:
    if not specs:
        return dict(DEFAULT_AXES)
    axes: dict[str, tuple[float, ...]] = {}
    for spec in specs:
        name, _, values = spec.partition("=")
        axes[name.strip()] = tuple(_number(v) for v in values.split(",") if v.strip())
    return axes


def sweep_points(
    axes: Mapping[str, Sequence[float]], defaults: Mapping[str, Any], grid: bool
) -> list[dict[str, Any]]:
    """Every combination (`grid`), or each axis varied alone around the defaults (no repeats)."""
    if grid:
        names = list(axes)
        return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*axes.values())]
    points: list[dict[str, Any]] = [dict(defaults)]
    for name, values in axes.items():
        for value in values:
            point = {**defaults, name: value}
            if point not in points:
                points.append(point)
    return points


def score_run(
    dataset: Dataset,
    found: Mapping[str, Sequence[Sequence[Any]]],
    attribution: Attribution,
) -> dict[str, Any]:
    ranks = {system: gold_ranks(dataset, hits, attribution) for system, hits in found.items()}
    other = [i for i, q in enumerate(dataset.queries) if q.kind == "other_project"]
    other_queries = [dataset.queries[i] for i in other]
    result: dict[str, Any] = dict(scores(dataset, ranks))
    result["leakage"] = {
        system: {
            "all_queries": sum(leaks(dataset.queries, hits)) / max(len(hits), 1),
            "other_project": sum(leaks(other_queries, [hits[i] for i in other]))
            / max(len(other), 1),
        }
        for system, hits in found.items()
    }
    result["ranks"] = dict(ranks)
    result["misses"] = {
        system: misses(dataset, hits, ranks[system]) for system, hits in found.items()
    }
    return result


#: How many of the memories ranked above the gold one a miss lists.
MISS_SHOWN = 3


def misses(
    dataset: Dataset, hits: Sequence[Sequence[Any]], ranks: Sequence[int | None]
) -> list[dict[str, Any]]:
    """Every query whose gold memory did not come first, with what came before it: where to
    look when a kind's hit@1 moves (the ranks alone say that it moved, not why)."""
    return [
        {
            "query": query.id,
            "kind": query.kind,
            "text": query.text,
            "rank": rank,
            "above": [m.text for m in (found if rank is None else found[: rank - 1])][:MISS_SHOWN],
        }
        for query, found, rank in zip(dataset.queries, hits, ranks, strict=True)
        if rank != 1
    ]


async def evaluate_judge(
    services: Services, dataset: Dataset, judge: str, sweep: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Replay into a fresh store with `judge`, ask every query three ways, measure the store;
    with `sweep`, then re-ask through each of its settings."""
    user_id = f"eval-{judge}-{uuid.uuid4().hex[:8]}"
    label = f"judge={judge}"
    services.clock.set(dataset.events[0].time)
    envs = {
        rewrite: services.bridge_env(user_id=user_id, judge=judge, rewrite=rewrite)
        for rewrite in (False, True)
    }
    with ExitStack() as processes:
        urls = {
            rewrite: processes.enter_context(bridge_process(env)) for rewrite, env in envs.items()
        }
        async with AsyncExitStack() as clients:
            plain = await clients.enter_async_context(http_bridge(urls[False]))
            rewriting = await clients.enter_async_context(http_bridge(urls[True]))
            http = await clients.enter_async_context(mem0_client(services))
            replayed = await replay(plain, dataset, services.clock, user_id, label)
            services.clock.set(dataset.query_time)
            attribution = Attribution(dataset, replayed.owners_by_id)
            memories = await list_store(http, user_id)
            searchers: dict[str, Searcher] = {
                "mem0_raw": raw_searcher(http, user_id),
                "bridge_rerank": bridge_searcher(plain),
                "bridge_rerank_rewrite": bridge_searcher(rewriting),
            }
            started = time.monotonic()
            found = await ask(dataset, searchers, attribution, label)
            query_seconds = time.monotonic() - started
            run = score_run(dataset, found, attribution)
            run["store"] = store_metrics(dataset, memories, attribution)
            run["add_actions"] = dict(sorted(replayed.actions.items()))
            run["echoes"] = {
                "counted": replayed.echoes,
                "to_another_fact": replayed.echoes_to_another_fact,
            }
            run["seconds"] = {"replay": replayed.seconds, "queries": query_seconds}
            if judge != "none":
                run["verdict_floor"] = float(
                    envs[False].get(FLOOR, os.environ.get(FLOOR, default_of(FLOOR)))
                )
            if sweep is not None:
                run["sweep"] = await run_sweep(
                    services, dataset, judge, user_id, attribution, run, sweep
                )
    return run


async def run_sweep(  # noqa: PLR0917 - one call site, each argument a different thing
    services: Services,
    dataset: Dataset,
    judge: str,
    user_id: str,
    attribution: Attribution,
    run: Mapping[str, Any],
    sweep: Mapping[str, Any],
) -> dict[str, Any]:
    """Ask every query again through a ranker (same records) and bridge per setting."""
    axes: dict[str, tuple[float, ...]] = sweep["axes"]
    system: str = sweep["system"]
    defaults = {name: default_of(name) for name in axes}
    points = sweep_points(axes, defaults, sweep["grid"])
    results = []
    for i, settings in enumerate(points, start=1):
        ranker_env = {k: str(v) for k, v in settings.items() if k.startswith("RANKER_")}
        bridge_env = {k: str(v) for k, v in settings.items() if k.startswith("MEM0_")}
        progress(f"sweep point {i}/{len(points)}: {settings}")
        with start_ranker(
            services.ranker_db,
            settings={"RANKER_TEST_CLOCK_FILE": str(services.clock.path), **ranker_env},
        ) as ranker:
            env = services.bridge_env(
                user_id=user_id,
                judge=judge,
                rewrite=system == "bridge_rerank_rewrite",
                ranker_address=f"127.0.0.1:{ranker.port}",
            )
            with bridge_process({**env, **bridge_env}) as url:
                async with http_bridge(url) as client:
                    found = await ask(
                        dataset, {system: bridge_searcher(client)}, attribution, f"point {i}"
                    )
        ranks = gold_ranks(dataset, found[system], attribution)
        kinds = {
            kind: summarize(
                [r for r, q in zip(ranks, dataset.queries, strict=True) if q.kind == kind]
            )
            for kind in KINDS
        }
        results.append(
            {
                "settings": settings,
                "kinds": kinds,
                "overall": summarize(ranks),
                "mean_kind_hit@1": sum(k["hit@1"] for k in kinds.values()) / len(kinds),
            }
        )
    raw = {kind: run["kinds"][kind]["mem0_raw"] for kind in KINDS}
    return {
        "judge": judge,
        "system": system,
        "axes": {name: list(values) for name, values in axes.items()},
        "defaults": defaults,
        "grid": sweep["grid"],
        "points": results,
        "mem0_raw": raw,
        "best": best_point(results, raw),
    }


def best_point(points: Sequence[Mapping[str, Any]], raw: Mapping[str, Any]) -> dict[str, Any]:
    """The highest mean per-kind hit@1 among points no worse than raw mem0 on any kind (the
    issue's first goal); among all points when none qualifies (then `qualifies` is false)."""
    qualifying = [
        p for p in points if all(p["kinds"][k]["hit@1"] >= raw[k]["hit@1"] for k in KINDS)
    ]
    pool = qualifying or list(points)
    best = max(pool, key=lambda p: p["mean_kind_hit@1"])
    return {
        "settings": best["settings"],
        "mean_kind_hit@1": best["mean_kind_hit@1"],
        "qualifies": bool(qualifying),
    }


def sweep_table(sweep: Mapping[str, Any]) -> str:
    rows = [
        [
            ", ".join(f"{k.split('_', 1)[1].lower()}={v}" for k, v in p["settings"].items()),
            *(p["kinds"][k]["hit@1"] for k in KINDS),
            p["mean_kind_hit@1"],
        ]
        for p in sweep["points"]
    ]
    rows.append(
        [
            "mem0_raw",
            *(sweep["mem0_raw"][k]["hit@1"] for k in KINDS),
            sum(sweep["mem0_raw"][k]["hit@1"] for k in KINDS) / len(KINDS),
        ]
    )
    short = [
        k.replace("stale_near_duplicate", "stale_nd").replace("other_project", "other")
        for k in KINDS
    ]
    return (
        f"sweep of {sweep['system']} (judge={sweep['judge']}), hit@1 per kind:\n"
        + format_table(["settings", *short, "mean"], rows)
        + f"\nbest: {sweep['best']}"
    )


def primary_judge(judges: Sequence[str]) -> str:
    return next(j for j in ("real", "fake", "oracle", "none") if j in judges)


def run(args: argparse.Namespace) -> dict[str, Any]:
    dataset = load(args.dataset)
    full = args.dataset == DATASET_PATH and not args.quick
    if args.quick:
        dataset = subset(dataset, args.quick)
    problems = validate(dataset, **({} if full else _loose()))
    if problems:
        raise SystemExit("the dataset is invalid:\n" + "\n".join(problems))
    judges = [j.strip() for j in args.judges.split(",") if j.strip()]
    unknown = [j for j in judges if j not in JUDGES]
    if unknown:
        raise SystemExit(f"unknown judge(s) {unknown}; choose from {JUDGES}")
    if "real" in judges and not real_judge_configured():
        raise SystemExit("judge 'real' needs JUDGE_LLM_BASE_URL and JUDGE_LLM_MODEL")
    sweep = None
    if args.sweep:
        sweep = {"axes": parse_axes(args.axis), "system": args.sweep_system, "grid": args.grid}
        judges = [args.sweep_judge]
    progress(
        f"eval: {counts(dataset)['facts']} facts, {len(dataset.events)} statements, "
        f"{len(dataset.queries)} queries; judges {judges}; starting the stack ..."
    )
    results: dict[str, Any] = {}
    with running_services(dataset, judges, args.oracle_error_rate) as services:
        for judge in judges:
            results[judge] = asyncio.run(
                evaluate_judge(
                    services, dataset, judge, sweep if judge == args.sweep_judge else None
                )
            )
    if "none" in results:
        for judge, judged in results.items():
            if judge != "none":
                with_mem0_alone(judged, results["none"])
    primary = primary_judge(judges)
    return {
        "kinds": results[primary]["kinds"],
        "store": results[primary]["store"],
        "primary_judge": primary,
        "judges": {j: {k: v for k, v in r.items() if k != "sweep"} for j, r in results.items()},
        "sweep": next((r["sweep"] for r in results.values() if "sweep" in r), None),
        "dataset": counts(dataset),
        "setup": {
            "systems": list(SYSTEMS),
            "stack": "mem0-local (mem0ai, all-MiniLM-L6-v2 on CPU, pgvector in a throwaway "
            "database, infer off), ranker (SQLite), judge per run, mem0-bridge over streamable "
            "HTTP; mem0-local and ranker on the test clock",
            "judges": {
                "none": "no judge: no reconcile on add, no query rewrite",
                "fake": "mem0-judge over tests/fakes (word-overlap verdicts, template rewrites)",
                "oracle": "mem0-judge over tests/fakes/oracle_judge.py (verdicts from the "
                "dataset's labels: never wrong; template rewrites), verdict guard off unless "
                "MEM0_VERDICT_SIMILARITY_FLOOR is set",
                "real": os.environ.get("JUDGE_LLM_MODEL", "") if "real" in judges else None,
            },
            "oracle_error_rate": args.oracle_error_rate if "oracle" in judges else None,
            "cutoff": 10,
            **machine(),
        },
    }


def _loose() -> dict[str, int]:
    """A dataset other than the shipped one (a test's tiny one) need not meet the sizes."""
    return {"min_facts": 0, "min_queries": 0, "min_queries_per_kind": 0}


def write_run(result: Mapping[str, Any], results_dir: Path, name: str) -> tuple[Path, Path]:
    """`<name>.json` and `.png`; a sweep run measures one judge only and leaves them alone: it
    writes `<name>_sweep.json` and `.png`."""
    sweep = result.get("sweep")
    if sweep is not None:
        return write_outputs(f"{name}_sweep", sweep, partial(plot_sweep, sweep), results_dir)
    main = {k: v for k, v in result.items() if k != "sweep"}
    return write_outputs(name, main, partial(plot, result["judges"]), results_dir)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench.eval",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    default_judges = "none,fake,oracle" + (",real" if real_judge_configured() else "")
    p.add_argument("--judges", default=default_judges, help=f"comma list of {JUDGES}")
    p.add_argument("--dataset", type=Path, default=DATASET_PATH)
    p.add_argument(
        "--quick",
        type=int,
        default=0,
        metavar="N",
        help="only the first N queries of each kind (and their facts): a fast check",
    )
    p.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    p.add_argument("--name", default="eval", help="file stem of the outputs")
    p.add_argument("--sweep", action="store_true", help="also sweep the ranking settings")
    p.add_argument("--sweep-judge", default="fake", choices=JUDGES)
    p.add_argument(
        "--sweep-system",
        default="bridge_rerank",
        choices=("bridge_rerank", "bridge_rerank_rewrite"),
    )
    p.add_argument(
        "--axis",
        action="append",
        default=[],
        help="VARIABLE=v1,v2,... (repeatable; replaces the default axes)",
    )
    p.add_argument("--grid", action="store_true", help="every combination of the axes")
    p.add_argument(
        "--oracle-error-rate",
        type=_share,
        default=0.0,
        metavar="P",
        help="the oracle judge is wrong on this share of pairs (a judge of known accuracy)",
    )
    return p


def main(argv: Sequence[str] | None = None) -> None:
    args = parser().parse_args(argv)
    result = run(args)
    for judge, judged in result["judges"].items():
        print(f"\n== judge={judge} ==")
        print(table(judged))
    if result.get("sweep"):
        print("\n" + sweep_table(result["sweep"]))
    for path in write_run(result, args.results_dir, args.name):
        progress(f"wrote {path}")


if __name__ == "__main__":
    main()
