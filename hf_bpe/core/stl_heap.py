"""libstdc++'s binary heap (``std::priority_queue``: ``push_heap``, ``pop_heap``) on a Python list, step for step.

SentencePiece's n-best search keeps its agenda in a ``std::priority_queue``; which of two equal priorities comes out
first is the heap's doing, so a reproduction must move the items exactly as libstdc++ does (``heapq`` would not).
Items are sequences whose element ``key`` is the priority (a max-heap: the largest first).

>>> heap = []
>>> for item in [(1.0, "a"), (3.0, "b"), (3.0, "c"), (2.0, "d")]:
...     heap_push(heap, item, 0)
>>> [heap_pop(heap, 0)[1] for _ in range(4)]
['b', 'c', 'd', 'a']
"""

from __future__ import annotations

from collections.abc import MutableSequence
from typing import Any

__all__ = ["heap_pop", "heap_push"]


def heap_push(heap: MutableSequence[Any], item: Any, key: int) -> None:
    """Add ``item`` (``std::priority_queue::push``: libstdc++'s ``__push_heap``)."""
    heap.append(item)
    _rise(heap, len(heap) - 1, item, key)


def _rise(heap: MutableSequence[Any], hole: int, item: Any, key: int) -> None:
    # libstdc++'s __push_heap: the hole climbs while its parent has a smaller priority, then takes the item.
    priority = item[key]
    parent = (hole - 1) // 2
    while hole > 0 and heap[parent][key] < priority:
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = item


def heap_pop(heap: MutableSequence[Any], key: int) -> Any:
    """Remove and return the top (``top()`` then ``pop()``: libstdc++'s ``__pop_heap`` and ``__adjust_heap``)."""
    top = heap[0]
    value = heap.pop()
    size = len(heap)
    if size == 0:
        return top
    # The hole sinks from the root to a leaf along the larger child (the right one on ties)...
    hole = child = 0
    while child < (size - 1) // 2:
        child = 2 * (child + 1)
        if heap[child][key] < heap[child - 1][key]:
            child -= 1
        heap[hole] = heap[child]
        hole = child
    if size % 2 == 0 and child == (size - 2) // 2:
        child = 2 * (child + 1)
        heap[hole] = heap[child - 1]
        hole = child - 1
    _rise(heap, hole, value, key)  # ... then the former last element rises from there (__push_heap)
    return top
