"""Data files only their owner can read: memories and their metadata are personal."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

#: Masks group and other bits: new files 0600, new folders 0700.
_PRIVATE_UMASK = 0o077


@contextlib.contextmanager
def private_files() -> Iterator[None]:
    """Every file and folder created inside is 0600 / 0700, whoever creates it.

    A umask rather than chmod after the fact: the libraries that write our data (SQLite, mem0,
    qdrant's local mode) name files we never see, and a file must not be readable by others even
    for the moment between its creation and a chmod. The umask is process-wide, so wrap only
    where a store creates its files (opening it, resetting it), not ordinary request handling.
    Existing folders keep their mode: a configured path may well sit in a shared folder that is
    not ours to change.
    """
    previous = os.umask(_PRIVATE_UMASK)
    try:
        yield
    finally:
        os.umask(previous)
