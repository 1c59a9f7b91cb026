"""Check or rewrite the variable tables from the services' settings classes.

The README's tables list what an operator sets; bench/README.md's tuning table lists the tuning
constants and test clocks (`mem0_common.env_table` says which is which). `tests/test_env_table.py`
runs the check, so a variable added to code without a row fails the build; `make env-table`
rewrites both tables.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from mem0_bridge import BridgeSettings
from mem0_common import ServiceSettings
from mem0_common.env_table import (
    BEGIN_MARKER,
    END_MARKER,
    TUNING_BEGIN_MARKER,
    TUNING_END_MARKER,
    render_env_table,
    render_tuning_table,
)
from mem0_judge import JudgeSettings
from mem0_local import Mem0LocalSettings
from mem0_ranker import RankerSettings

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BENCH_README = ROOT / "bench" / "README.md"


def all_settings_classes() -> list[type[ServiceSettings]]:
    """Every service's settings object, in the order the tables list them."""
    return [BridgeSettings, Mem0LocalSettings, RankerSettings, JudgeSettings]


def _replaced(text: str, begin: str, end: str, block: str) -> str:
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{block}\n{end}{tail}"


def rewritten(readme: str) -> str:
    """README.md with its operator tables rendered from the settings classes."""
    return _replaced(readme, BEGIN_MARKER, END_MARKER, render_env_table(all_settings_classes()))


def rewritten_bench(bench_readme: str) -> str:
    """bench/README.md with its tuning table rendered from the settings classes."""
    table = render_tuning_table(all_settings_classes())
    return _replaced(bench_readme, TUNING_BEGIN_MARKER, TUNING_END_MARKER, table)


TARGETS: tuple[tuple[Path, Callable[[str], str]], ...] = (
    (README, rewritten),
    (BENCH_README, rewritten_bench),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--write", action="store_true")
    args = parser.parse_args()
    stale = 0
    for path, rewrite in TARGETS:
        name = path.relative_to(ROOT)
        current = path.read_text()
        wanted = rewrite(current)
        if args.write:
            path.write_text(wanted)
            print(f"{name}: variable table rewritten")
        elif current != wanted:
            print(f"{name}'s variable table is out of date; run `make env-table`")
            stale += 1
        else:
            print(f"{name}: variable table matches the settings classes")
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
