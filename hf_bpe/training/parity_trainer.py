"""Parity-aware BPE's merge loop with incremental counts: :mod:`.parity_reference`'s spec, fast.

The driver (language choice, exhaustion, stopping) is the reference's :func:`~.parity_reference.run_parity`; this
module gives it a back end that never recounts: per language, the pair counts (64-bit: Python ints), for every pair
the set of pre-tokens where it may occur, and a heap of ``(-count, reversed left, reversed right)`` entries checked
lazily against the counts (``ParityBpeTrainer``'s ``pop_best_pair``). A merge visits only the pre-tokens that hold
the pair, in training and dev sets alike, and updates counts and lengths from the changes of ``Word::merge``.

Ties go to the largest ``(left string, right string)``; ``heapq`` is a min-heap, so each token string is stored
complemented (:func:`reversed_key`): the smallest complemented key is the largest string.

>>> result = train_parity_fast([{b"aabb": 10}, {b"ccdd": 10}], num_merges=6)
>>> [result.vocab[a] + " " + result.vocab[b] for a, b, _ in result.merges]
['b b', 'd d', 'a bb', 'c dd', 'a abb', 'c cdd']
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence

from ..core.bytelevel import token_to_str
from .parity_reference import ParityOptions, ParityResult, initial_vocab, run_parity, with_rebuilt_specials

__all__ = ["reversed_key", "train_parity_fast"]

# Byte-level characters are at most U+0143; complemented below _TOP, and _TOP ends a key (a prefix sorts last).
_TOP = 0x400
_COMPLEMENT = {c: _TOP - 1 - c for c in range(_TOP - 1)}


def reversed_key(token: str) -> str:
    """Return a key whose order is the reverse of the strings' order (for byte-level strings).

    >>> sorted(["ab", "a", "b", "ba"], key=reversed_key)
    ['ba', 'b', 'ab', 'a']
    """
    return token.translate(_COMPLEMENT) + chr(_TOP)


Pair = tuple[int, int]


class _Language:
    """One language's pre-tokens (training or dev): words as id lists, counts, pair counts, where, heap."""

    __slots__ = ("words", "counts", "pairs", "where", "heap", "length")

    def __init__(self, table: Mapping[str, int], index: Mapping[str, int]) -> None:
        self.words = [[index[c] for c in word] for word in table]
        self.counts = list(table.values())
        self.pairs: dict[Pair, int] = {}
        self.where: dict[Pair, set[int]] = {}
        self.heap: list[tuple[int, str, str, Pair]] = []
        self.length = 0
        pairs, where = self.pairs, self.where
        for i, (word, count) in enumerate(zip(self.words, self.counts)):
            self.length += len(word) * count
            for pair in zip(word, word[1:]):
                pairs[pair] = pairs.get(pair, 0) + count
                spots = where.get(pair)
                if spots is None:
                    where[pair] = {i}
                else:
                    spots.add(i)

    def fill_heap(self, keys: list[str]) -> None:
        self.heap = [(-count, keys[a], keys[b], (a, b)) for (a, b), count in self.pairs.items() if count > 0]
        heapq.heapify(self.heap)

    def pop_best(self) -> tuple[Pair, int] | None:
        """Return the pair with the highest count (largest strings on ties), dropping stale entries."""
        heap, pairs = self.heap, self.pairs
        while heap:
            top = heapq.heappop(heap)
            current = pairs.get(top[3], 0)
            if current <= 0:
                continue
            if -top[0] != current:
                heapq.heappush(heap, (-current, top[1], top[2], top[3]))
                continue
            return top[3], current
        return None

    def merge(self, pair: Pair, new: int, keys: list[str] | None, total: dict[Pair, int] | None) -> set[Pair]:
        """Merge ``pair`` into ``new`` wherever it occurs; update counts (and ``total``), where, heap and length.

        Returns:
            The pairs whose counts changed.
        """
        spots = self.where.pop(pair, None)
        if spots is None:
            return set()
        left, right = pair
        words, counts, pairs, where = self.words, self.counts, self.pairs, self.where
        changed: set[Pair] = set()
        for i in spots:
            word = words[i]
            count = counts[i]
            out: list[int] = []
            j, end = 0, len(word)
            while j < end:
                if word[j] == left and j + 1 < end and word[j + 1] == right:
                    # Word::merge's changes: the neighbours' pairs move to the new token.
                    if out:
                        prev = out[-1]
                        _add(pairs, total, (prev, left), -count)
                        _add(pairs, total, (prev, new), count)
                        _spot(where, (prev, new), i)
                        changed.add((prev, left))
                        changed.add((prev, new))
                    if j + 2 < end:
                        nxt = word[j + 2]
                        _add(pairs, total, (right, nxt), -count)
                        _add(pairs, total, (new, nxt), count)
                        _spot(where, (new, nxt), i)
                        changed.add((right, nxt))
                        changed.add((new, nxt))
                    out.append(new)
                    j += 2
                else:
                    out.append(word[j])
                    j += 1
            self.length -= (end - len(out)) * count
            words[i] = out
        if total is not None:
            total[pair] = total.get(pair, 0) - pairs.get(pair, 0)
        pairs[pair] = 0
        if keys is not None:
            _push_changed(self.heap, pairs, changed, keys)
        return changed


def _push_changed(heap: list[tuple[int, str, str, Pair]], counts: dict[Pair, int], changed: set[Pair],
                  keys: list[str]) -> None:
    """Push every changed pair at its current count; a higher stale entry is fixed when it surfaces (pop_best)."""
    for a, b in changed:
        current = counts.get((a, b), 0)
        if current > 0:
            heapq.heappush(heap, (-current, keys[a], keys[b], (a, b)))


def _add(pairs: dict[Pair, int], total: dict[Pair, int] | None, pair: Pair, delta: int) -> None:
    pairs[pair] = pairs.get(pair, 0) + delta
    if total is not None:
        total[pair] = total.get(pair, 0) + delta


def _spot(where: dict[Pair, set[int]], pair: Pair, i: int) -> None:
    spots = where.get(pair)
    if spots is None:
        where[pair] = {i}
    else:
        spots.add(i)


class _Incremental:
    """The back end :func:`run_parity` drives: languages kept up to date merge by merge."""

    def __init__(self, vocab: list[str], train: list[_Language], dev: list[_Language], global_merges: int) -> None:
        self.vocab, self.train, self.dev = vocab, train, dev
        self.keys = [reversed_key(token) for token in vocab]
        for language in train:
            language.fill_heap(self.keys)
        # The summed counts while global merges last (tokenizers scans them; a heap finds the same maximum).
        self.total: dict[Pair, int] | None = None
        self.total_heap: list[tuple[int, str, str, Pair]] = []
        if global_merges > 0:
            total: dict[Pair, int] = {}
            for language in train:
                for pair, count in language.pairs.items():
                    total[pair] = total.get(pair, 0) + count
            self.total = total
            self.total_heap = [(-c, self.keys[a], self.keys[b], (a, b)) for (a, b), c in total.items() if c > 0]
            heapq.heapify(self.total_heap)

    def best_pair(self, lang: int) -> tuple[Pair, int] | None:
        self.total = None  # the global phase is over
        return self.train[lang].pop_best()

    def best_global_pair(self) -> tuple[Pair, int] | None:
        assert self.total is not None
        heap, total = self.total_heap, self.total
        while heap:
            top = heap[0]
            current = total.get(top[3], 0)
            if current == -top[0] and current > 0:
                return top[3], current  # left in the heap: its count drops to 0 when merged
            heapq.heappop(heap)
            if current > 0:
                heapq.heappush(heap, (-current, top[1], top[2], top[3]))
        return None

    def apply(self, pair: Pair, new: int) -> None:
        keys = self.keys
        while len(keys) < len(self.vocab):
            keys.append(reversed_key(self.vocab[len(keys)]))
        total = self.total
        changed: set[Pair] = set()
        for language in self.train:
            changed |= language.merge(pair, new, keys, total)
        for language in self.dev:
            language.merge(pair, new, None, None)
        if total is not None:
            _push_changed(self.total_heap, total, changed, keys)

    def lengths(self, dev: bool) -> list[int]:
        return [language.length for language in (self.dev if dev else self.train)]


def train_parity_fast(
    languages: Sequence[Mapping[bytes, int]],
    dev: Sequence[Mapping[bytes, int]] | None = None,
    *,
    special_tokens: Sequence[str] = (),
    progress: Callable[[int], object] | None = None,
    **options: object,
) -> ParityResult:
    """Train parity-aware BPE on per-language pre-token counts, as :func:`train_parity_reference` does, fast.

    Args:
        languages, dev, special_tokens, **options: as :func:`~.parity_reference.train_parity_reference`.
        progress: called with 1 after each merge.

    Returns:
        A :class:`~.parity_reference.ParityResult`, equal to the reference's.
    """
    opts = ParityOptions(**options)  # type: ignore[arg-type]
    train = [{token_to_str(w): c for w, c in table.items()} for table in languages]
    devs = [{token_to_str(w): c for w, c in table.items()} for table in dev] if dev is not None else []
    vocab, index, shared = initial_vocab(special_tokens, [*train, *devs])
    backend = _Incremental(vocab, [_Language(t, index) for t in train], [_Language(t, index) for t in devs],
                           opts.global_merges)
    budget = max(0, opts.num_merges - len(vocab)) if opts.total_symbols else opts.num_merges
    del train, devs
    merges, stalls = run_parity(backend, vocab, index, opts, has_dev=dev is not None, num_merges=budget,
                                progress=progress)
    return ParityResult(vocab, merges, with_rebuilt_specials(shared, merges, special_tokens), stalls,
                        budget)
