"""The README's one table of environment variables stays in sync with the settings objects."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mem0_common import ServiceSettings
from mem0_common.env_table import env_names
from scripts.env_table import README, all_settings_classes, rewritten

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


def test_readme_table_matches_the_settings_classes() -> None:
    current = README.read_text()
    assert current == rewritten(current), "README.md's variable table is stale: `make env-table`"


@pytest.mark.parametrize("settings_cls", all_settings_classes(), ids=lambda c: c.service_name)
def test_every_setting_has_a_description(settings_cls: type[ServiceSettings]) -> None:
    missing = [name for name, f in settings_cls.model_fields.items() if not f.description]
    assert not missing, f"{settings_cls.__name__} fields without a description: {missing}"


def test_no_variable_is_documented_twice() -> None:
    names = env_names(all_settings_classes())
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


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
