"""`python -m bench.eval.floors` (`make eval-floor`): the verdict guard's floor, chosen on the eval.

The floor (`MEM0_VERDICT_SIMILARITY_FLOOR`) changes what the store holds, so unlike the ranking
sweep each point is a whole replay: one `python -m bench.eval --judges fake` per floor (the
fake judge over-merges, as a weak model does, which is what the guard is for). Prints one row
per floor (facts lost, memories per fact, stale values, the bridge's hit@1 per kind), writes
`bench/results/eval_floor.json` and `eval_floor.png`.

    python -m bench.eval.floors                       # 0.8,0.85,0.88,0.9,0.92,0.95
    python -m bench.eval.floors --floors 0.85,0.9 --quick 10
    python -m bench.eval.floors --judge oracle --floors 0,0.5,0.7,0.92 --name eval_floor_oracle

Any other setting that acts when a fact is stored is swept the same way, with `--variable`:

    python -m bench.eval.floors --variable MEM0_RELATED_SIMILARITY_FLOOR \
        --floors 0.6,0.7,0.8 --name eval_related_floor
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench._report import figure, format_table, progress, write_outputs
from bench.eval._dataset import KINDS

FLOORS = (0.8, 0.85, 0.88, 0.9, 0.92, 0.95)
VARIABLE = "MEM0_VERDICT_SIMILARITY_FLOOR"
SYSTEM = "bridge_rerank"


def replay_at(  # noqa: PLR0917 - one call site, each a different thing
    variable: str,
    floor: float,
    quick: int,
    scratch: Path,
    judge: str = "fake",
    oracle_error_rate: float = 0.0,
) -> dict[str, Any]:
    """One eval of `judge` with `variable` at `floor`; its result for that judge."""
    name = f"floor_{floor:g}"
    command = [sys.executable, "-m", "bench.eval", "--judges", judge, "--name", name]
    command += ["--oracle-error-rate", str(oracle_error_rate)]
    command += ["--results-dir", str(scratch), *(["--quick", str(quick)] if quick else [])]
    env = {**os.environ, variable: str(floor)}
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    result: dict[str, Any] = json.loads((scratch / f"{name}.json").read_text())
    return dict(result["judges"][judge])


def row(floor: float, run: Mapping[str, Any]) -> dict[str, Any]:
    store = run["store"]
    kinds = run["kinds"]
    return {
        "floor": floor,
        "facts_lost": store["facts_lost"],
        "memories_per_fact": store["memories_per_fact"],
        "stale_values": store["stale_values"],
        "hit@1": {kind: kinds[kind][SYSTEM]["hit@1"] for kind in KINDS},
        "hit@1_raw": {kind: kinds[kind]["mem0_raw"]["hit@1"] for kind in KINDS},
    }


def floor_table(
    rows: Sequence[Mapping[str, Any]], variable: str = VARIABLE, judge: str = "fake"
) -> str:
    headers = ["floor", "lost", "mem/fact", "stale", *KINDS]
    body = [
        [
            r["floor"],
            r["facts_lost"],
            r["memories_per_fact"],
            r["stale_values"],
            *(r["hit@1"][k] for k in KINDS),
        ]
        for r in rows
    ]
    return f"{variable} sweep (judge={judge}), {SYSTEM} hit@1 per kind:\n" + format_table(
        headers, body
    )


def judge_label(judge: str, oracle_error_rate: float = 0.0) -> str:
    """The judge as a plot's title names it."""
    if judge == "oracle":
        if oracle_error_rate > 0:
            return f"oracle judge, wrong on {oracle_error_rate:.0%} of pairs"
        return "oracle judge, never wrong"
    return {"fake": "fake judge, which over-merges"}.get(judge, f"{judge} judge")


def plot(
    rows: Sequence[Mapping[str, Any]],
    path: Path,
    variable: str = VARIABLE,
    judge: str = "fake judge, which over-merges",
) -> None:
    floors = [r["floor"] for r in rows]
    with figure(path, 1, 2, figsize=(12, 4.5)) as (fig, (left, right)):
        for kind in KINDS:
            left.plot(floors, [r["hit@1"][kind] for r in rows], marker="o", label=kind)
        left.set(xlabel=variable, ylabel=f"hit@1 ({SYSTEM})")
        left.legend(fontsize="small")
        right.plot(floors, [r["facts_lost"] for r in rows], marker="o", label="facts lost")
        right.plot(floors, [r["stale_values"] for r in rows], marker="s", label="stale values")
        right.set(xlabel=variable, ylabel="facts")
        right.legend()
        fig.suptitle(f"{variable} on the eval ({judge})")


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.eval.floors", description=__doc__)
    p.add_argument("--variable", default=VARIABLE, help="the MEM0_* setting to sweep")
    p.add_argument("--floors", default=",".join(f"{f:g}" for f in FLOORS))
    p.add_argument("--quick", type=int, default=0, metavar="N")
    p.add_argument("--name", default="eval_floor")
    p.add_argument("--judge", default="fake", choices=("fake", "oracle", "real"))
    p.add_argument("--oracle-error-rate", type=float, default=0.0, metavar="P")
    args = p.parse_args(argv)
    floors = [float(f) for f in args.floors.split(",") if f.strip()]
    rows = []
    with tempfile.TemporaryDirectory(prefix="eval-floor-") as scratch:
        for index, floor in enumerate(floors, start=1):
            progress(
                f"{args.variable}={floor:g} ({index}/{len(floors)}): "
                f"replaying with the {args.judge} judge"
            )
            run = replay_at(
                args.variable, floor, args.quick, Path(scratch), args.judge, args.oracle_error_rate
            )
            rows.append(row(floor, run))
            progress(floor_table(rows[-1:], args.variable, args.judge))
    print(floor_table(rows, args.variable, args.judge))
    result = {
        "system": SYSTEM,
        "judge": args.judge,
        "oracle_error_rate": args.oracle_error_rate if args.judge == "oracle" else None,
        "variable": args.variable,
        "floors": rows,
    }
    label = judge_label(args.judge, args.oracle_error_rate)
    path, png = write_outputs(args.name, result, lambda png: plot(rows, png, args.variable, label))
    progress(f"wrote {path} and {png}")


if __name__ == "__main__":
    main()
