"""Check or rewrite the README's environment-variable table from the services' settings classes.

`tests/test_env_table.py` runs the check, so a variable added to code without a README row fails
the build; `make env-table` rewrites the table.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mem0_bridge import BridgeSettings
from mem0_common import ServiceSettings
from mem0_common.env_table import BEGIN_MARKER, END_MARKER, render_env_table
from mem0_judge import JudgeSettings
from mem0_local import Mem0LocalSettings
from mem0_ranker import RankerSettings

README = Path(__file__).resolve().parent.parent / "README.md"


def all_settings_classes() -> list[type[ServiceSettings]]:
    """Every service's settings object, in the order the README lists them."""
    return [BridgeSettings, Mem0LocalSettings, RankerSettings, JudgeSettings]


def rewritten(readme: str) -> str:
    head, rest = readme.split(BEGIN_MARKER, 1)
    _, tail = rest.split(END_MARKER, 1)
    table = render_env_table(all_settings_classes())
    return f"{head}{BEGIN_MARKER}\n{table}\n{END_MARKER}{tail}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--write", action="store_true")
    args = parser.parse_args()
    current = README.read_text()
    wanted = rewritten(current)
    if args.write:
        README.write_text(wanted)
        print("README.md: variable table rewritten")
        return 0
    if current != wanted:
        print("README.md's variable table is out of date; run `make env-table`")
        return 1
    print("README.md: variable table matches the settings classes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
