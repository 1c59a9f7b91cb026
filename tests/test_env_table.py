"""The variable tables stay in sync with the settings objects, and each variable has one row.

The README lists what an operator sets; bench/README.md's tuning table lists the tuning constants
and test clocks, which only benchmarks and tests set.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mem0_bridge import BridgeSettings
from mem0_common import ServiceSettings
from mem0_common.env_table import (
    BEGIN_MARKER,
    END_MARKER,
    TUNING_BEGIN_MARKER,
    TUNING_END_MARKER,
    env_names,
    settings_of,
)
from mem0_judge import JudgeSettings
from mem0_local import Mem0LocalSettings
from mem0_ranker import RankerSettings
from scripts.env_table import (
    BENCH_README,
    README,
    all_settings_classes,
    rewritten,
    rewritten_bench,
)

ROOT = Path(__file__).resolve().parent.parent

#: Variables our code sets or reads for libraries it embeds, not settings of ours.
THIRD_PARTY = {
    "MEM0_TELEMETRY",
    "MEM0_DIR",
    "HF_HUB_OFFLINE",
    "OPENROUTER_API_KEY",
    "TOKENIZERS_PARALLELISM",
    "TRANSFORMERS_OFFLINE",
    "HF_HUB_DISABLE_TELEMETRY",
}

#: Most settings the README's first table may list: what an operator sets to deploy. Anything
#: else either suits nearly every deployment (`RARELY_SET`, the folded table) or is tuning.
OPERATOR_BUDGET = 30


def test_readme_table_matches_the_settings_classes() -> None:
    current = README.read_text()
    assert current == rewritten(current), "README.md's variable table is stale: `make env-table`"


def test_bench_tuning_table_matches_the_settings_classes() -> None:
    current = BENCH_README.read_text()
    assert current == rewritten_bench(current), (
        "bench/README.md's tuning table is stale: `make env-table`"
    )


@pytest.mark.parametrize("settings_cls", all_settings_classes(), ids=lambda c: c.service_name)
def test_every_setting_has_a_description(settings_cls: type[ServiceSettings]) -> None:
    missing = [name for name, f in settings_cls.model_fields.items() if not f.description]
    assert not missing, f"{settings_cls.__name__} fields without a description: {missing}"


def test_no_variable_is_documented_twice() -> None:
    names = env_names(all_settings_classes())
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def _rows(text: str, begin: str, end: str) -> list[str]:
    block = text.split(begin, 1)[1].split(end, 1)[0]
    return re.findall(r"^\| `([A-Z][A-Z0-9_]*)` \|", block, re.MULTILINE)


def test_every_setting_is_a_row_of_exactly_one_table() -> None:
    rows = _rows(README.read_text(), BEGIN_MARKER, END_MARKER) + _rows(
        BENCH_README.read_text(), TUNING_BEGIN_MARKER, TUNING_END_MARKER
    )
    primaries = [setting.names[0] for setting in settings_of(all_settings_classes())]
    assert sorted(rows) == sorted(primaries)


def test_an_operator_sees_a_short_table() -> None:
    operator = [s.names[0] for s in settings_of(all_settings_classes()) if s.kind == "operator"]
    assert len(operator) <= OPERATOR_BUDGET, (
        f"{len(operator)} settings in the README's first table (at most {OPERATOR_BUDGET}): "
        "mark the ones nearly every deployment leaves alone `RARELY_SET`"
    )


def test_test_only_settings_are_not_shown_to_operators() -> None:
    shown = [
        s.names[0]
        for s in settings_of(all_settings_classes())
        if "TEST ONLY" in (s.field.description or "") and s.kind != "tuning"
    ]
    assert not shown, f"test-only settings outside the tuning table: {shown}"


@pytest.mark.parametrize(
    ("settings_cls", "assignment", "field", "expected"),
    [
        (RankerSettings, "RANKER_ALPHA=0.5", "alpha", 0.5),
        (BridgeSettings, "MEM0_SEARCH_OVERFETCH=5", "search_overfetch", 5),
        (
            BridgeSettings,
            "REINFORCEMENT_PREFILTER_THRESHOLD=0.5",
            "reinforcement_prefilter_threshold",
            0.5,
        ),
        (Mem0LocalSettings, "MEM0_LOCAL_TEST_CLOCK_FILE=/x", "test_clock_file", Path("/x")),
        (Mem0LocalSettings, "MEM0_LOCAL_MAX_REQUEST_BYTES=2048", "max_request_bytes", 2048),
        (JudgeSettings, "JUDGE_CACHE_SIZE=7", "cache_size", 7),
        (JudgeSettings, "JUDGE_GRACE_SECONDS=3", "grace_seconds", 3.0),
        (RankerSettings, "RANKER_PG_POOL_MAX=2", "pg_pool_max", 2),
        (BridgeSettings, "MEM0_VERDICT_BUDGET_MS=50", "verdict_budget_ms", 50),
    ],
)
def test_tuning_constants_are_still_read_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
    settings_cls: type[ServiceSettings],
    assignment: str,
    field: str,
    expected: object,
) -> None:
    """Benchmarks set them for the processes they start, so the services must read them."""
    variable, value = assignment.split("=", 1)
    monkeypatch.setenv(variable, value)
    assert getattr(settings_cls(), field) == expected


def test_code_reads_no_environment_variable_outside_the_settings() -> None:
    documented = set(env_names(all_settings_classes())) | THIRD_PARTY
    pattern = re.compile(r"""(?:environ(?:\.get)?\(?\[?|getenv\()\s*["']([A-Z][A-Z0-9_]+)["']""")
    read = {
        (name, str(path.relative_to(ROOT)))
        for path in ROOT.glob("services/*/src/**/*.py")
        for name in pattern.findall(path.read_text())
    }
    undocumented = sorted((n, p) for n, p in read if n not in documented)
    assert not undocumented, (
        f"read from the environment but not in a settings class: {undocumented}"
    )
