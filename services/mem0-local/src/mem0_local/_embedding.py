"""The embedder under concurrent requests: repeats cached, concurrent texts batched.

Embedding is most of what an add or a search costs here (MiniLM on the CPU), and mem0 embeds
one text per call from whichever worker thread serves the request. Three things make many
requests at once cheaper:

- **One thread per embedding, one embedding per core.** torch's default spreads each embedding
  over every core; with several requests at once the threads of one embedding then wait on each
  other's cores, and on a loaded 2-core machine one short embedding took 370 ms instead of
  15 ms. Here each embedding runs on one thread, and `workers` (the cores) run side by side.
- **Batches.** Texts that arrive while every worker is busy are embedded together, in one model
  call: eight short texts take about three times as long as one, not eight.
- **A cache.** A text embedded lately is not embedded again: a bridge's add searches for the
  new fact's neighbours, then stores the same text, and agents repeat queries.

The model is deterministic, so a cached vector is the one it would compute again; a text in a
batch is padded beside longer ones, which moves its vector by rounding only.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)

#: Texts whose vectors are kept, as the embedder gave them (about 12 KB each for MiniLM's 384
#: numbers, so 12 MB in all).
CACHE_SIZE = 1024
#: Most texts embedded in one model call.
MAX_BATCH = 32

EmbedMany = Callable[[list[str]], Sequence[Any]]


class VectorCache:
    """The vectors of the texts embedded lately (least recently used out first)."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self._size = size
        self._vectors: OrderedDict[str, tuple[Any, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> list[float] | None:
        with self._lock:
            vector = self._vectors.get(text)
            if vector is None:
                return None
            self._vectors.move_to_end(text)
        return list(vector)

    def put(self, text: str, vector: Sequence[float]) -> None:
        stored = tuple(vector)
        with self._lock:
            self._vectors[text] = stored
            self._vectors.move_to_end(text)
            while len(self._vectors) > self._size:
                self._vectors.popitem(last=False)


@dataclass
class _Job:
    text: str
    done: threading.Event = field(default_factory=threading.Event)
    vector: list[float] | None = None
    error: BaseException | None = None


class BatchingEmbedder:
    """Embeds texts on `workers` threads of its own, each taking every text waiting (up to
    `MAX_BATCH`) into one call of `embed_many`; a caller waits for its own text only."""

    def __init__(self, embed_many: EmbedMany, workers: int) -> None:
        self._embed_many = embed_many
        self._workers = max(1, workers)
        self._pending: list[_Job] = []
        self._cond = threading.Condition()
        self._started = 0

    def embed(self, text: str) -> list[float]:
        job = _Job(text)
        with self._cond:
            self._pending.append(job)
            if self._started < self._workers:
                self._started += 1
                threading.Thread(target=self._work, name="embedder", daemon=True).start()
            self._cond.notify()
        job.done.wait()
        if job.error is not None:
            raise job.error
        return job.vector or []

    def _work(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: bool(self._pending))
                batch, self._pending = self._pending[:MAX_BATCH], self._pending[MAX_BATCH:]
            try:
                vectors = self._embed_many([job.text for job in batch])
                for job, vector in zip(batch, vectors, strict=True):
                    job.vector = list(vector)
            except BaseException as exc:  # handed to every caller of the batch
                for job in batch:
                    job.error = exc
            finally:
                for job in batch:
                    job.done.set()


def speed_up_embedder(embedder: Any, *, local: bool, workers: int) -> None:
    """Give mem0's `embedder` the cache, and for the in-process model the workers and batches
    above (an embeddings endpoint batches on its own side)."""
    cache = VectorCache()
    one = embedder.embed
    batching: BatchingEmbedder | None = None
    if local:
        import torch  # noqa: PLC0415 - loaded with the model already

        torch.set_num_threads(1)
        batching = BatchingEmbedder(lambda texts: embedder.embed_batch(texts, "add"), workers)

    def embed(text: Any, memory_action: Any = None) -> Any:
        if not isinstance(text, str):
            return one(text, memory_action)
        vector = cache.get(text)
        if vector is None:
            vector = batching.embed(text) if batching is not None else one(text, memory_action)
            cache.put(text, vector)
        return vector

    embedder.embed = embed
