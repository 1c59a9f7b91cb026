"""Grouping linked items: what search and rerank use to show one hit per fact."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

_N = TypeVar("_N", bound=Hashable)


def linked_groups(nodes: Sequence[_N], links: Callable[[_N], Iterable[_N]]) -> dict[_N, _N]:
    """Each of `nodes` mapped to its group's representative: nodes linked by `links`, either
    way round and through each other, share one (union-find). Links to nodes outside `nodes`
    are ignored, so a group is what the caller has at hand, not the whole store."""
    parent = {node: node for node in nodes}

    def root(node: _N) -> _N:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for node in nodes:
        for other in links(node):
            if other in parent:
                parent[root(node)] = root(other)
    return {node: root(node) for node in nodes}
