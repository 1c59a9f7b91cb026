"""The embedder's cache and batches: the right vector to every caller, each text embedded once."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import pytest

from mem0_local._embedding import BatchingEmbedder, VectorCache, speed_up_embedder

WAIT = 30.0


def _vector(text: str) -> list[float]:
    return [float(len(text)), float(sum(map(ord, text)) % 1000)]


class _GatedModel:
    """embed_many that records each batch; the first call waits until `release` is set."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, texts: list[str]) -> Sequence[Any]:
        self.batches.append(list(texts))
        if len(self.batches) == 1:
            self.entered.set()
            assert self.release.wait(WAIT)
        return [_vector(t) for t in texts]


def _embed_in_threads(embedder: BatchingEmbedder, texts: list[str]) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}

    def one(text: str) -> None:
        found[text] = embedder.embed(text)

    threads = [threading.Thread(target=one, args=(t,)) for t in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    return found


def test_texts_that_wait_for_a_busy_worker_are_embedded_in_one_batch() -> None:
    model = _GatedModel()
    embedder = BatchingEmbedder(model, workers=1)
    first = threading.Thread(target=embedder.embed, args=("first",))
    first.start()
    assert model.entered.wait(WAIT)
    waiting = ["second", "third text", "fourth one"]
    threads = [threading.Thread(target=embedder.embed, args=(t,)) for t in waiting]
    for thread in threads:
        thread.start()
    while len(embedder._pending) < len(waiting):  # all three queued
        threading.Event().wait(0.01)

    model.release.set()
    first.join(WAIT)
    found = _embed_in_threads(embedder, ["fifth"])
    for thread in threads:
        thread.join(WAIT)

    assert model.batches[0] == ["first"]
    assert sorted(model.batches[1]) == sorted(waiting)
    assert found == {"fifth": _vector("fifth")}


def test_every_caller_gets_its_own_vector() -> None:
    embedder = BatchingEmbedder(lambda texts: [_vector(t) for t in texts], workers=2)
    texts = [f"text number {i}" for i in range(40)]

    found = _embed_in_threads(embedder, texts)

    assert found == {t: _vector(t) for t in texts}


def test_a_failing_batch_fails_each_of_its_callers_and_not_the_next() -> None:
    calls = 0

    def flaky(texts: list[str]) -> Sequence[Any]:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("model exploded")
        return [_vector(t) for t in texts]

    embedder = BatchingEmbedder(flaky, workers=1)

    with pytest.raises(RuntimeError, match="model exploded"):
        embedder.embed("one")
    assert embedder.embed("two") == _vector("two")


def test_the_cache_keeps_the_most_recently_used() -> None:
    cache = VectorCache(size=2)
    cache.put("a", [1.0, 2.0])
    cache.put("b", [3.0, 4.0])
    assert cache.get("a") == [1.0, 2.0]
    cache.put("c", [5.0, 6.0])  # "b" was used least lately

    assert cache.get("b") is None
    assert cache.get("a") == [1.0, 2.0]
    assert cache.get("c") == [5.0, 6.0]


class _Embedder:
    """mem0's embedder interface, counting what it computes."""

    def __init__(self) -> None:
        self.embedded: list[Any] = []

    def embed(self, text: Any, memory_action: Any = None) -> list[float]:
        self.embedded.append(text)
        return _vector(str(text))

    def embed_batch(self, texts: list[str], memory_action: Any = "add") -> list[list[float]]:
        self.embedded.extend(texts)
        return [_vector(t) for t in texts]


@pytest.mark.parametrize("local", [True, False])
def test_a_text_embedded_lately_is_not_embedded_again(local: bool) -> None:
    embedder = _Embedder()
    speed_up_embedder(embedder, local=local, workers=2)

    first = embedder.embed("The API listens on port 8080.", "search")
    again = embedder.embed("The API listens on port 8080.", "add")
    other = embedder.embed("Backups run at 2am.", "add")

    assert first == again == _vector("The API listens on port 8080.")
    assert other == _vector("Backups run at 2am.")
    assert embedder.embedded == ["The API listens on port 8080.", "Backups run at 2am."]
