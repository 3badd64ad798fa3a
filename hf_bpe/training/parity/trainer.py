"""Parity-aware BPE on the compiled core: :mod:`.reference`'s spec, fast.

The driver (language choice, exhaustion, stopping) is the reference's :func:`~.reference.run_parity`, a few
Python steps per merge; the pair counting is ``core._parity.CompiledCounts`` (C++, ``csrc/parity_counts.hpp``),
which never recounts: per language, the pair counts (64-bit), for every pair the words where it may occur, and a
heap of ``(count, left, right)`` checked lazily against the counts (``ParityBpeTrainer``'s ``pop_best_pair``;
ties to the largest ``(left string, right string)``). A merge visits only the words that hold the pair, in the
training and dev sets alike, and updates counts and lengths from the changes of ``Word::merge``. The words reach
C++ as one byte string per language (no Python object per character).

>>> result = train_parity_fast([{b"aabb": 10}, {b"ccdd": 10}], num_merges=6)
>>> [result.vocab[a] + " " + result.vocab[b] for a, b, _ in result.merges]
['b b', 'd d', 'a bb', 'c dd', 'a abb', 'c cdd']
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate

from ...core._parity import CompiledCounts
from ...core.bytelevel import BYTE_TO_UNICODE
from .reference import ParityOptions, ParityResult, initial_vocab, run_parity, with_rebuilt_specials

__all__ = ["train_parity_fast"]


def train_parity_fast(
    languages: Sequence[Mapping[bytes, int]],
    dev: Sequence[Mapping[bytes, int]] | None = None,
    *,
    special_tokens: Sequence[str] = (),
    all_bytes: bool = False,
    progress: Callable[[int], object] | None = None,
    consume: bool = False,
    **options: object,
) -> ParityResult:
    """Train parity-aware BPE on per-language pre-token counts, as :func:`train_parity_reference` does, fast.

    Args:
        languages, dev, special_tokens, all_bytes, **options: as :func:`~.reference.train_parity_reference`.
        progress: called with 1 after each merge.
        consume: empty each mapping (a dict) once its words are copied to the compiled counts, so that the Python
            objects are not held under the merge loop (``train_parity`` hands over its own counts).

    Returns:
        A :class:`~.reference.ParityResult`, equal to the reference's.
    """
    opts = ParityOptions(**options)  # type: ignore[arg-type]
    seen = set(range(256)) if all_bytes else set().union(*(set(b"".join(t)) for t in (*languages, *(dev or ()))))
    vocab, index, shared = initial_vocab(special_tokens, (BYTE_TO_UNICODE[b] for b in seen))
    counts = CompiledCounts(vocab, [index.get(BYTE_TO_UNICODE[b], -1) for b in range(256)])
    for is_dev, group in ((False, languages), (True, dev or ())):
        for table in group:
            words = list(table)
            counts.add_corpus(is_dev, b"".join(words), memoryview(array("q", accumulate(map(len, words)))),
                              memoryview(array("q", table.values())))
            del words
            if consume and isinstance(table, dict):
                table.clear()
    counts.start(opts.global_merges > 0)
    budget = max(0, opts.num_merges - len(vocab)) if opts.total_symbols else opts.num_merges
    merges, stalls = run_parity(counts, vocab, index, opts, has_dev=dev is not None, num_merges=budget,
                                progress=progress)
    return ParityResult(vocab, merges, with_rebuilt_specials(shared, merges, special_tokens), stalls, budget)
