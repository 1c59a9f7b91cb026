"""Write `bench/data/eval_dataset.json`: the eval's facts, their timed statements and queries.

`python -m bench.eval.generate` rewrites the file; a test checks that the committed file is
exactly what this writes, so the dataset is reviewed as code (templates below) and as data.

The facts are attributes of subjects (services, data stores, jobs, the codebase) in five
projects, plus cross-project facts in `global`, written the way agents store them: one
self-contained sentence each, with the exact value (a port, a count, a time, a tool). Each
attribute has a canonical sentence, paraphrases (restatements say the same fact in other
words, as agents do), a question and a statement-style probe (how an agent searches with a
half sentence). A seeded RNG assigns (subject, attribute) slots to the kinds:

- `static`: said once; asked once, alternately as a question or as a statement probe.
- `reconfirmed`: said 2-6 times over weeks (paraphrases and, after the ranker's dedupe window,
  exact repeats), against a near-neighbour said once: the same attribute of another subject
  of the same project. No other fact of that project has that attribute, and the query does
  not name the subject ("Which port does the service listen on?"), so the two compete on
  equal terms and only the reconfirmation says which one the project keeps talking about.
- `changed`: value A, weeks later value B (in other words): B must come back, not A.
- `reverted`: A, then B, then A again: A must come back.
- `stale_near_duplicate`: A (said 1-3 times, long ago), then the same sentence with one value
  changed: the new one must come back, although the old one may carry more mentions.
- `other_project`: the same subject and attribute in two projects with different values; each
  project's query must get its own value (the other project's memory never comes back).
- `lookalike`: one subject, two attributes whose sentences look alike (port / metrics port,
  request / idle timeout, ...): two distinct facts that must never be merged.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from bench.eval._dataset import (
    DATASET_PATH,
    GLOBAL,
    Dataset,
    Event,
    Fact,
    Query,
    to_json,
    validate,
)

SEED = 12
VERSION = 1
START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
SPAN_DAYS = 180
QUERY_TIME = START + timedelta(days=SPAN_DAYS + 1)
#: The ranker's default dedupe window is 7 days: exact repeats are spaced further apart, so they
#: reach the bridge's reconcile step (a reconfirmation) instead of being dropped as duplicates.
REPEAT_GAP_DAYS = (8, 30)


@dataclass(frozen=True)
class Attribute:
    """How facts of one attribute are said and asked. `{s}`/`{S}`: the subject (lower/upper
    first letter); `{v}`: the value. `vague` asks without naming the subject (reconfirmed)."""

    name: str
    kind: str  # the subject type it applies to: service, store, job, repo, global
    statements: tuple[str, ...]
    question: str
    probe: str
    values: tuple[str, ...]
    vague: str | None = None


# fmt: off
ATTRIBUTES: tuple[Attribute, ...] = (
    # ---- services ----
    Attribute("port", "service",
        ("{S} listens on port {v}.", "{S} serves HTTP on port {v}.",
         "Port {v} is the port {s} listens on."),
        "Which port does {s} listen on?", "{S} listens on port",
        ("8080", "8081", "8000", "9000", "3000", "5000", "8443", "7000", "8888", "6060")),
    Attribute("metrics_port", "service",
        ("{S} exposes Prometheus metrics on port {v}.", "{S} serves its metrics on port {v}.",
         "Prometheus scrapes {s} on port {v}."),
        "Which port serves the metrics of {s}?", "{S} exposes metrics on port",
        ("9100", "9090", "9102", "9187", "9464", "9200")),
    Attribute("workers", "service",
        ("{S} runs {v} worker processes.", "{S} is configured with {v} workers.",
         "{S} uses {v} worker processes per instance."),
        "How many worker processes does {s} run?", "{S} worker process count",
        ("2", "4", "6", "8", "12", "16"),
        vague="How many worker processes does the service run?"),
    Attribute("request_timeout", "service",
        ("{S} times out requests after {v} seconds.",
         "Requests to {s} time out after {v} seconds.",
         "{S} gives up on a request after {v} seconds."),
        "What is the request timeout of {s}?", "{S} request timeout in seconds",
        ("5", "10", "15", "20", "30", "60")),
    Attribute("idle_timeout", "service",
        ("{S} closes idle connections after {v} seconds.",
         "Idle connections to {s} are dropped after {v} seconds.",
         "{S} keeps an idle connection open for {v} seconds."),
        "When does {s} close idle connections?", "{S} idle connection timeout",
        ("45", "60", "90", "120", "300")),
    Attribute("replicas_prod", "service",
        ("{S} runs {v} replicas in production.", "Production runs {v} replicas of {s}.",
         "{S} is scaled to {v} replicas in production."),
        "How many production replicas does {s} have?", "{S} replica count in production",
        ("2", "3", "4", "6", "8", "10")),
    Attribute("replicas_staging", "service",
        ("{S} runs {v} replicas in staging.", "Staging runs {v} replicas of {s}.",
         "{S} is scaled to {v} replicas in staging."),
        "How many staging replicas does {s} have?", "{S} replica count in staging",
        ("1", "2", "3")),
    Attribute("memory_limit", "service",
        ("{S} has a memory limit of {v} MiB.", "{S} may use at most {v} MiB of memory.",
         "The container of {s} is capped at {v} MiB of memory."),
        "What memory limit is set for {s}?", "{S} memory limit",
        ("256", "512", "768", "1024", "1536", "2048")),
    Attribute("cpu_limit", "service",
        ("{S} has a CPU limit of {v} cores.", "{S} may use at most {v} CPU cores.",
         "The container of {s} is capped at {v} CPU cores."),
        "What CPU limit is set for {s}?", "{S} CPU limit",
        ("0.5", "1", "1.5", "2", "4")),
    Attribute("language", "service",
        ("{S} is written in {v}.", "The code of {s} is {v}.", "{S} is implemented in {v}."),
        "What language is {s} written in?", "{S} is written in",
        ("Python 3.11", "Go 1.22", "Kotlin 1.9", "TypeScript on Node 20", "Rust 1.78",
         "Java 21"),
        vague="What language is the service written in?"),
    Attribute("owner", "service",
        ("{S} is owned by the {v} team.", "The {v} team owns {s}.",
         "{S} belongs to the {v} team."),
        "Which team owns {s}?", "{S} is owned by the team",
        ("payments", "platform", "growth", "data", "identity", "mobile", "search"),
        vague="Which team owns the service?"),
    Attribute("rate_limit", "service",
        ("{S} allows {v} requests per minute per client.",
         "{S} rate-limits each client to {v} requests per minute.",
         "Each client may send {s} {v} requests per minute."),
        "What is the rate limit of {s}?", "{S} rate limit per client",
        ("60", "100", "120", "300", "600", "1000"),
        vague="What is the rate limit per client of the service?"),
    Attribute("healthcheck", "service",
        ("{S} answers health checks on {v}.", "The health check of {s} calls {v}.",
         "{S} reports its health on {v}."),
        "Which path does {s} use for health checks?", "{S} health check path",
        ("/healthz", "/health", "/ping", "/status", "/livez", "/_health"),
        vague="Which path does the service answer health checks on?"),
    Attribute("cache_ttl", "service",
        ("{S} caches responses for {v} seconds.", "Responses of {s} are cached for {v} seconds.",
         "{S} keeps cached responses for {v} seconds."),
        "How long does {s} cache responses?", "{S} response cache duration",
        ("30", "60", "120", "300", "600", "3600"),
        vague="How long does the service cache responses?"),
    Attribute("log_level", "service",
        ("{S} logs at {v} level in production.", "In production {s} logs at {v} level.",
         "The production log level of {s} is {v}."),
        "What log level does {s} use in production?", "{S} production log level",
        ("INFO", "DEBUG", "WARNING", "ERROR"),
        vague="What log level does the service use in production?"),
    Attribute("latency_target", "service",
        ("{S} has a p99 latency target of {v} ms.", "The p99 latency objective of {s} is {v} ms.",
         "{S} must answer 99% of requests within {v} ms."),
        "What is the p99 latency target of {s}?", "{S} p99 latency target",
        ("100", "150", "200", "250", "400", "500"),
        vague="What is the p99 latency target of the service?"),
    Attribute("max_body", "service",
        ("{S} rejects request bodies larger than {v} MB.",
         "{S} accepts request bodies of at most {v} MB.",
         "The request body limit of {s} is {v} MB."),
        "What is the largest request body {s} accepts?", "{S} request body size limit",
        ("1", "5", "10", "25", "50", "100"),
        vague="How large may a request body to the service be?"),
    # ---- data stores ----
    Attribute("backup_time", "store",
        ("{S} is backed up every night at {v} UTC.", "The nightly backup of {s} runs at {v} UTC.",
         "{S} gets its nightly backup at {v} UTC."),
        "When is {s} backed up?", "{S} nightly backup time",
        ("01:00", "01:30", "02:00", "02:30", "03:00", "04:15")),
    Attribute("backup_retention", "store",
        ("Backups of {s} are kept for {v} days.", "{S} backups are retained for {v} days.",
         "We keep {v} days of backups of {s}."),
        "How long are backups of {s} kept?", "{S} backup retention",
        ("7", "14", "30", "60", "90")),
    Attribute("max_connections", "store",
        ("{S} accepts at most {v} connections.", "{S} is configured for {v} connections at most.",
         "The connection limit of {s} is {v}."),
        "How many connections does {s} accept?", "{S} maximum connections",
        ("100", "200", "300", "500", "1000")),
    Attribute("pool_size", "store",
        ("The application connection pool for {s} holds {v} connections.",
         "The app keeps a pool of {v} connections to {s}.",
         "Each app instance opens {v} pooled connections to {s}."),
        "How big is the connection pool for {s}?", "Connection pool size for {s}",
        ("10", "20", "25", "40", "50")),
    Attribute("store_host", "store",
        ("{S} runs on host {v}.", "{S} lives on {v}.", "The host of {s} is {v}."),
        "Which host does {s} run on?", "{S} host name",
        ("db-01.internal", "db-02.internal", "data-a.internal", "store-3.internal",
         "pg-main.internal", "cache-1.internal")),
    Attribute("disk_size", "store",
        ("{S} has a {v} GB data disk.", "The data disk of {s} is {v} GB.",
         "{S} stores its data on a {v} GB disk."),
        "How big is the data disk of {s}?", "{S} data disk size",
        ("100", "250", "500", "750", "1000", "2000")),
    Attribute("store_nodes", "store",
        ("{S} runs on {v} nodes.", "{S} is a cluster of {v} nodes.",
         "{S} has {v} nodes."),
        "How many nodes does {s} run on?", "{S} node count",
        ("1", "2", "3", "5", "6")),
    # ---- jobs ----
    Attribute("schedule", "job",
        ("{S} runs every day at {v} UTC.", "{S} is scheduled daily at {v} UTC.",
         "Every day at {v} UTC {s} starts."),
        "When does {s} run?", "{S} daily run time",
        ("00:30", "01:00", "03:00", "05:45", "06:00", "22:00")),
    Attribute("job_timeout", "job",
        ("{S} is killed if it runs longer than {v} minutes.",
         "{S} has a time limit of {v} minutes.",
         "{S} may run for at most {v} minutes."),
        "How long may {s} run before it is killed?", "{S} time limit in minutes",
        ("15", "30", "45", "60", "120")),
    Attribute("retries", "job",
        ("{S} retries up to {v} times on failure.", "A failed run of {s} is retried {v} times.",
         "{S} makes {v} retries after a failure."),
        "How many times does {s} retry after a failure?", "{S} retries on failure",
        ("2", "3", "4", "5")),
    Attribute("alert_channel", "job",
        ("Failures of {s} are reported to the {v} Slack channel.",
         "{S} reports failures in the {v} Slack channel.",
         "When {s} fails, it posts to the {v} Slack channel."),
        "Where are failures of {s} reported?", "{S} failure alerts Slack channel",
        ("#ops-alerts", "#data-alerts", "#oncall", "#billing-alerts", "#platform-alerts")),
    # ---- the codebase of a project (said without a subject, as agents do in a project) ----
    Attribute("runtime", "repo",
        ("The codebase targets {v}.", "The project is built for {v}.",
         "Our code requires {v}."),
        "Which runtime version does the codebase target?", "The codebase targets",
        ("Python 3.10", "Python 3.11", "Python 3.12", "Node 18", "Node 20", "Go 1.21",
         "Go 1.22")),
    Attribute("line_length", "repo",
        ("Code style allows lines of up to {v} characters.",
         "The formatter wraps lines at {v} characters.",
         "Our maximum line length is {v} characters."),
        "What is the maximum line length?", "Maximum line length in characters",
        ("79", "88", "100", "110", "120")),
    Attribute("test_command", "repo",
        ("The full test suite runs with `{v}`.", "Run `{v}` to run every test.",
         "All tests run with the command `{v}`."),
        "Which command runs the full test suite?", "Command that runs the full test suite",
        ("make test", "pytest -q", "npm test", "go test ./...", "tox -p", "just test")),
    Attribute("ci", "repo",
        ("CI runs on {v}.", "Our continuous integration is {v}.", "Every push is built by {v}."),
        "Which CI system do we use?", "CI runs on",
        ("GitHub Actions", "GitLab CI", "Buildkite", "CircleCI", "Jenkins")),
    Attribute("branch_naming", "repo",
        ("Feature branches are named {v}.", "Name a feature branch {v}.",
         "The branch naming convention is {v}."),
        "How should feature branches be named?", "Feature branch naming convention",
        ("feature/<ticket>-<slug>", "<initials>/<topic>", "feat/<ticket>", "dev/<name>/<topic>")),
    Attribute("release_tags", "repo",
        ("Releases are tagged {v}.", "Each release gets a tag like {v}.",
         "Release tags follow the pattern {v}."),
        "How are releases tagged?", "Release tag pattern",
        ("v<major>.<minor>.<patch>", "release-<date>", "<year>.<week>", "r<build-number>")),
    Attribute("coverage", "repo",
        ("CI fails when test coverage drops below {v} percent.",
         "The minimum test coverage is {v} percent.",
         "Test coverage must stay at or above {v} percent."),
        "What minimum test coverage does CI enforce?", "Minimum test coverage percent",
        ("70", "75", "80", "85", "90")),
    Attribute("approvals", "repo",
        ("Pull requests need {v} approving reviews before merging.",
         "A pull request merges after {v} approvals.",
         "Merging a pull request takes {v} approving reviews."),
        "How many approvals does a pull request need?", "Approvals a pull request needs",
        ("1", "2", "3")),
    Attribute("deploy_tool", "repo",
        ("Production deploys go out with {v}.", "We deploy to production with {v}.",
         "Deploying to production uses {v}."),
        "How do production deploys go out?", "Production deploys go out with",
        ("Argo CD", "Helm from CI", "Spinnaker", "Terraform and ECS", "Nomad jobs")),
    Attribute("region_staging", "repo",
        ("The staging environment runs in {v}.", "Staging is hosted in {v}.",
         "Our staging environment lives in {v}."),
        "Which region does staging run in?", "Staging environment region",
        ("eu-west-1", "us-east-1", "eu-central-1", "us-west-2", "ap-southeast-1")),
    Attribute("region_prod", "repo",
        ("The production environment runs in {v}.", "Production is hosted in {v}.",
         "Our production environment lives in {v}."),
        "Which region does production run in?", "Production environment region",
        ("eu-west-1", "us-east-1", "eu-central-1", "us-west-2", "ap-southeast-1")),
    # ---- global: the user and the team, across every project ----
    Attribute("editor", "global",
        ("The user edits code in {v}.", "The user's editor is {v}.", "The user codes in {v}."),
        "Which editor does the user use?", "The user's editor",
        ("Neovim", "VS Code", "Emacs", "Helix", "IntelliJ IDEA")),
    Attribute("timezone", "global",
        ("The user works in the {v} time zone.", "The user's time zone is {v}.",
         "The user is based in the {v} time zone."),
        "Which time zone does the user work in?", "The user's time zone",
        ("Europe/Berlin", "America/New_York", "Asia/Tokyo", "Europe/London")),
    Attribute("commit_style", "global",
        ("Commit messages follow {v}.", "Write commit messages in the {v} style.",
         "Our commit message convention is {v}."),
        "What convention do commit messages follow?", "Commit message convention",
        ("Conventional Commits", "the seven rules of a great commit message", "gitmoji")),
    Attribute("indent", "global",
        ("All repositories indent with {v} spaces.", "Indentation is {v} spaces everywhere.",
         "Use {v} spaces for indentation in every repository."),
        "How many spaces do we indent with?", "Indentation width in spaces",
        ("2", "4")),
    Attribute("formatter", "global",
        ("Python code is formatted with {v}.", "We format Python with {v}.",
         "The Python formatter is {v}."),
        "Which formatter do we use for Python?", "Python code formatter",
        ("ruff format", "black", "yapf")),
    Attribute("shell", "global",
        ("The user's default shell is {v}.", "The user works in {v}.",
         "The user's login shell is {v}."),
        "Which shell does the user use?", "The user's default shell",
        ("zsh", "bash", "fish")),
    Attribute("review_turnaround", "global",
        ("Code reviews are expected within {v} hours.",
         "A review request should be answered within {v} hours.",
         "Reviewers respond within {v} hours."),
        "How fast should code reviews happen?", "Expected code review turnaround",
        ("4", "8", "24")),
    Attribute("oncall_handover", "global",
        ("The on-call rotation hands over every {v}.", "On-call changes hands every {v}.",
         "The on-call shift switches every {v}."),
        "When does the on-call rotation hand over?", "On-call rotation handover",
        ("Monday at 10:00", "Wednesday at 09:00", "Friday at 16:00")),
    Attribute("secrets", "global",
        ("Shared secrets are kept in {v}.", "Team secrets live in {v}.",
         "We store shared credentials in {v}."),
        "Where are shared secrets kept?", "Where shared secrets are kept",
        ("1Password", "HashiCorp Vault", "Bitwarden", "AWS Secrets Manager")),
    Attribute("ram", "global",
        ("The user's laptop has {v} GB of RAM.", "The user's machine has {v} GB of memory.",
         "The user works on a laptop with {v} GB of RAM."),
        "How much RAM does the user's laptop have?", "The user's laptop RAM",
        ("16", "32", "64")),
    Attribute("adr", "global",
        ("Architecture decisions are recorded in {v}.", "We write architecture decision "
         "records in {v}.", "Design decisions are written down in {v}."),
        "Where are architecture decisions recorded?", "Architecture decision records location",
        ("docs/adr", "Notion", "Confluence", "the wiki")),
    Attribute("planning", "global",
        ("The weekly planning meeting is on {v}.", "Weekly planning happens on {v}.",
         "The team plans the week on {v}."),
        "When is the weekly planning meeting?", "Weekly planning meeting time",
        ("Monday at 10:00", "Tuesday at 14:00", "Thursday at 11:00")),
    Attribute("answer_language", "global",
        ("The user wants answers in {v}.", "Reply to the user in {v}.",
         "The user prefers to be answered in {v}."),
        "Which language should answers be in?", "Language the user wants answers in",
        ("English", "German", "French")),
    Attribute("log_timestamps", "global",
        ("Timestamps in logs are always written in {v}.", "Log timestamps use {v}.",
         "Every log line carries its timestamp in {v}."),
        "Which time zone do log timestamps use?", "Log timestamp time zone",
        ("UTC", "local time")),
    Attribute("issue_tracker", "global",
        ("Bugs are tracked in {v}.", "We track issues in {v}.", "The issue tracker is {v}."),
        "Where are bugs tracked?", "Issue tracker",
        ("Jira", "Linear", "GitHub Issues", "YouTrack")),
)
# fmt: on

ATTRIBUTE = {a.name: a for a in ATTRIBUTES}

#: Attribute pairs whose sentences look alike: distinct facts that must never be merged.
TWINS: tuple[tuple[str, str], ...] = (
    ("port", "metrics_port"),
    ("request_timeout", "idle_timeout"),
    ("replicas_prod", "replicas_staging"),
    ("memory_limit", "cpu_limit"),
    ("max_connections", "pool_size"),
    ("backup_time", "backup_retention"),
    ("region_staging", "region_prod"),
)

#: Subjects every project has under the same name (the other_project kind's raw material).
COMMON = {
    "service": ("the API gateway",),
    "store": ("the main PostgreSQL database", "the Redis cache"),
}

PROJECTS: dict[str, dict[str, tuple[str, ...]]] = {
    "atlas": {
        "service": (
            "the billing API",
            "the invoice renderer",
            "the payment webhook receiver",
            "the customer portal",
            "the tax calculator",
            "the ledger service",
        ),
        "store": ("the ledger database",),
        "job": ("the nightly invoice export", "the dunning reminder job", "the currency rate sync"),
    },
    "beacon": {
        "service": (
            "the push notification service",
            "the device registry",
            "the sync service",
            "the auth service",
            "the feature flag service",
            "the media upload service",
        ),
        "store": ("the session store",),
        "job": (
            "the stale device cleanup job",
            "the push receipt poller",
            "the nightly analytics rollup",
        ),
    },
    "cinder": {
        "service": (
            "the ingestion API",
            "the schema registry",
            "the event router",
            "the transform service",
            "the query service",
            "the lineage service",
        ),
        "store": ("the ClickHouse cluster",),
        "job": (
            "the hourly compaction job",
            "the daily warehouse load",
            "the partition pruning job",
        ),
    },
    "drift": {
        "service": (
            "the artifact server",
            "the license checker",
            "the docs site",
            "the telemetry collector",
            "the update server",
            "the plugin index",
        ),
        "store": ("the artifact metadata database",),
        "job": ("the nightly build", "the dependency audit job", "the mirror sync job"),
    },
    "ember": {
        "service": (
            "the web frontend server",
            "the image proxy",
            "the SSR renderer",
            "the GraphQL server",
            "the search service",
            "the A/B test service",
        ),
        "store": ("the Elasticsearch cluster",),
        "job": ("the sitemap generator", "the cache warmer", "the nightly search reindex"),
    },
}

#: How many facts of each kind every project gets (global facts are all static).
PER_PROJECT = {
    "reconfirmed": 6,
    "changed": 8,
    "reverted": 6,
    "stale_near_duplicate": 8,
    "lookalike": 6,  # pairs: twice as many facts
    "static": 38,
}
OTHER_PROJECT_PAIRS = 15

Slot = tuple[str, str, str]  # (scope, subject, attribute)


def _subjects(project: str) -> dict[str, tuple[str, ...]]:
    own = PROJECTS[project]
    return {
        "service": (*COMMON["service"], *own["service"]),
        "store": (*COMMON["store"], *own["store"]),
        "job": own["job"],
        "repo": ("",),
    }


def _say(template: str, subject: str, value: str = "") -> str:
    upper = subject[:1].upper() + subject[1:]
    text = template.format(s=subject, S=upper, v=value)
    return text[:1].upper() + text[1:]


@dataclass
class _Builder:
    rng: random.Random
    facts: list[Fact] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    queries: list[Query] = field(default_factory=list)
    forms: int = 0

    def day(self, low: float, high: float) -> datetime:
        """A moment between `low` and `high` days after the start, on a whole minute."""
        minutes = self.rng.uniform(low, high) * 24 * 60
        return START + timedelta(minutes=int(minutes))

    def values(self, attribute: str, n: int) -> list[str]:
        return self.rng.sample(ATTRIBUTE[attribute].values, n)

    def fact(
        self, kind: str, role: str, slot: Slot, values: list[str], current: str | None = None
    ) -> Fact:
        scope, subject, attribute = slot
        fact = Fact(
            id=f"F{len(self.facts) + 1:04d}",
            kind=kind,
            role=role,
            scope=scope,
            subject=subject,
            attribute=attribute,
            values=tuple(dict.fromkeys(values)),
            current=current if current is not None else values[-1],
        )
        self.facts.append(fact)
        return fact

    def say(self, fact: Fact, value: str, when: datetime, template: int = 0) -> None:
        attribute = ATTRIBUTE[fact.attribute]
        text = _say(attribute.statements[template], fact.subject, value)
        self.events.append(Event(when, fact.scope, fact.id, value, text))

    def ask(self, fact: Fact, kind: str, project: str, form: str | None = None) -> None:
        attribute = ATTRIBUTE[fact.attribute]
        if form is None:
            form = ("question", "statement")[self.forms % 2]
            self.forms += 1
        if form == "vague":
            if attribute.vague is None:
                raise ValueError(f"{attribute.name} has no vague question")
            text, form = attribute.vague, "question"
        elif form == "question":
            text = _say(attribute.question, fact.subject)
        else:
            text = _say(attribute.probe, fact.subject)
        self.queries.append(
            Query(f"Q{len(self.queries) + 1:04d}", kind, form, project, text, fact.id)
        )


def _slots(project: str) -> list[Slot]:
    return [
        (project, subject, a.name)
        for kind, subjects in _subjects(project).items()
        for subject in subjects
        for a in ATTRIBUTES
        if a.kind == kind
    ]


class _Kinds(_Builder):
    """One method per kind, each taking its (subject, attribute) slots from what is free."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.free: dict[str, list[Slot]] = {p: _slots(p) for p in PROJECTS}

    def take(self, slot: Slot) -> None:
        self.free[slot[0]].remove(slot)

    def pick(self, project: str, n: int) -> list[Slot]:
        chosen = self.rng.sample(self.free[project], n)
        for slot in chosen:
            self.take(slot)
        return chosen

    def once(self, kind: str, slot: Slot, project: str) -> None:
        """A fact said once at a random time and asked once."""
        (value,) = self.values(slot[2], 1)
        fact = self.fact(kind, "gold", slot, [value])
        self.say(fact, value, self.day(0, SPAN_DAYS - 1), self.rng.randrange(3))
        self.ask(fact, kind, project)

    def other_project(self) -> None:
        """A common subject's attribute in two projects, different values; each one asked."""
        common = [
            (subject, a.name)
            for kind in ("service", "store")
            for subject in COMMON[kind]
            for a in ATTRIBUTES
            if a.kind == kind
        ] + [("", a.name) for a in ATTRIBUTES if a.kind == "repo"]
        for subject, attribute in self.rng.sample(common, OTHER_PROJECT_PAIRS):
            pair = self.rng.sample(list(PROJECTS), 2)
            values = self.values(attribute, 2)
            for project, value in zip(pair, values, strict=True):
                slot = (project, subject, attribute)
                self.take(slot)
                fact = self.fact("other_project", "gold", slot, [value])
                self.say(fact, value, self.day(0, SPAN_DAYS - 1), self.rng.randrange(3))
                self.ask(fact, "other_project", project, "question")

    def reconfirmed(self, project: str) -> None:
        """An attribute no other fact of the project has, on two services: one said 2-6 times,
        its neighbour once; the query does not name the service."""
        services = _subjects(project)["service"]
        vague = [a.name for a in ATTRIBUTES if a.vague is not None]
        for attribute in self.rng.sample(vague, PER_PROJECT["reconfirmed"]):
            gold_subject, neighbour_subject = self.rng.sample(services, 2)
            gold_value, neighbour_value = self.values(attribute, 2)
            gold = self.fact(
                "reconfirmed", "gold", (project, gold_subject, attribute), [gold_value]
            )
            when = self.day(0, 20)
            for i in range(self.rng.randint(2, 6)):
                self.say(gold, gold_value, when, i % 3)
                when += timedelta(days=self.rng.uniform(*REPEAT_GAP_DAYS))
            neighbour = self.fact(
                "reconfirmed",
                "neighbour",
                (project, neighbour_subject, attribute),
                [neighbour_value],
            )
            self.say(neighbour, neighbour_value, self.day(0, SPAN_DAYS - 1), self.rng.randrange(3))
            self.ask(gold, "reconfirmed", project, "vague")
            for slot in [s for s in self.free[project] if s[2] == attribute]:
                self.take(slot)

    def lookalike(self, project: str) -> None:
        """One subject, two attributes that read alike; both said once and asked."""
        pairs = [
            (subject, twin)
            for twin in TWINS
            for kind, names in _subjects(project).items()
            if ATTRIBUTE[twin[0]].kind == kind
            for subject in names
            if all((project, subject, t) in self.free[project] for t in twin)
        ]
        for subject, twin in self.rng.sample(pairs, PER_PROJECT["lookalike"]):
            slots = [(project, subject, attribute) for attribute in twin]
            if all(slot in self.free[project] for slot in slots):
                for slot in slots:
                    self.take(slot)
                    self.once("lookalike", slot, project)

    def changed(self, project: str) -> None:
        """A, then weeks later B in other words."""
        for slot in self.pick(project, PER_PROJECT["changed"]):
            old, new = self.values(slot[2], 2)
            fact = self.fact("changed", "gold", slot, [old, new])
            first = self.day(0, 90)
            self.say(fact, old, first, 0)
            later = first + timedelta(days=self.rng.uniform(20, 80))
            self.say(fact, new, later, self.rng.choice((1, 2)))
            self.ask(fact, "changed", project)

    def reverted(self, project: str) -> None:
        """A, B, then A again."""
        for slot in self.pick(project, PER_PROJECT["reverted"]):
            a_value, b_value = self.values(slot[2], 2)
            fact = self.fact("reverted", "gold", slot, [a_value, b_value, a_value], a_value)
            when = self.day(0, 60)
            for template, value in enumerate((a_value, b_value, a_value)):
                self.say(fact, value, when, template)
                when += timedelta(days=self.rng.uniform(15, 45))
            self.ask(fact, "reverted", project)

    def stale_near_duplicate(self, project: str) -> None:
        """A said 1-3 times long ago, then the same sentence with the new value."""
        for slot in self.pick(project, PER_PROJECT["stale_near_duplicate"]):
            old, new = self.values(slot[2], 2)
            fact = self.fact("stale_near_duplicate", "gold", slot, [old, new])
            when = self.day(0, 30)
            template = self.rng.randrange(3)
            for _ in range(self.rng.randint(1, 3)):
                self.say(fact, old, when, template)
                when += timedelta(days=self.rng.uniform(*REPEAT_GAP_DAYS))
            self.say(fact, new, self.day((when - START).days + 10, SPAN_DAYS - 1), template)
            self.ask(fact, "stale_near_duplicate", project)

    def static(self, project: str) -> None:
        for slot in self.pick(project, PER_PROJECT["static"]):
            self.once("static", slot, project)

    def global_facts(self) -> None:
        """Every global attribute once, asked from a random project (search merges global)."""
        for attribute in [a for a in ATTRIBUTES if a.kind == "global"]:
            slot = (GLOBAL, "", attribute.name)
            self.once("static", slot, self.rng.choice(list(PROJECTS)))


def generate(seed: int = SEED) -> Dataset:
    kinds = _Kinds(random.Random(seed))
    kinds.other_project()
    for project in PROJECTS:
        kinds.reconfirmed(project)
        kinds.lookalike(project)
        kinds.changed(project)
        kinds.reverted(project)
        kinds.stale_near_duplicate(project)
        kinds.static(project)
    kinds.global_facts()
    events = sorted(kinds.events, key=lambda e: e.time)  # stable: a fact's own order is kept
    return Dataset(
        version=VERSION,
        seed=seed,
        projects=tuple(PROJECTS),
        query_time=QUERY_TIME,
        facts=tuple(kinds.facts),
        events=tuple(events),
        queries=tuple(kinds.queries),
    )


def render(dataset: Dataset) -> str:
    return json.dumps(to_json(dataset), indent=1, ensure_ascii=False) + "\n"


def main() -> None:
    dataset = generate()
    problems = validate(dataset)
    if problems:
        raise SystemExit("the generated dataset is invalid:\n" + "\n".join(problems))
    DATASET_PATH.parent.mkdir(parents=True, exist_ok=True)
    DATASET_PATH.write_text(render(dataset))
    print(f"wrote {DATASET_PATH}: {json.dumps(to_json(dataset)['counts'])}")


if __name__ == "__main__":
    main()
