"""The progress bar: in place on a terminal, a line per tenth in a log."""

from __future__ import annotations

import io

from bench.eval._progress import ProgressBar


def test_in_a_log_the_bar_prints_one_line_per_tenth() -> None:
    stream = io.StringIO()
    bar = ProgressBar("replay", 100, stream)
    for _ in range(100):
        bar.advance()
    bar.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 11  # 0%, 10%, ..., 100%
    assert lines[-1].startswith("replay [" + "#" * 30 + "] 100/100")
