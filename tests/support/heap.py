"""Keep what a test run imports out of the cyclic garbage collector's way.

Collection and the in-process stack's model load import torch, transformers and mem0: about
800 000 long-lived objects. Every full collection walks all of them (~0.15 s each here), and
while the heap grows the collector runs them again and again; in a fast run that was ~3 s of
CPU for nothing, since none of those objects become garbage. `quiet_imports` runs such a block
with the collector off, then freezes what it left, garbage cycles included (a few tens of MB
held until the end: cheaper than collecting them). `release` gives it all back at the end of
the run, so the last collections still find and report whatever they would have (an
unraisable exception in a finalizer, a leak).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


def begin_quiet_imports() -> None:
    gc.disable()


def end_quiet_imports() -> None:
    gc.freeze()
    gc.enable()


@contextmanager
def quiet_imports() -> Iterator[None]:
    """Run the block with the cyclic collector off; freeze what it leaves."""
    begin_quiet_imports()
    try:
        yield
    finally:
        end_quiet_imports()


def release() -> None:
    """Hand every frozen object back to the collector."""
    gc.unfreeze()
