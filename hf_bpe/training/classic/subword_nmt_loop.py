"""subword-nmt's own merge loop (``learn_bpe.py``, 0.3.8), for words that hold whitespace other than spaces.

subword-nmt splits lines on spaces only, so a word may hold a tab, U+00A0, U+2028, ... Its merge step joins a
word's symbols with spaces and replaces ``first second`` with the regex ``(?<!\\S)first second(?!\\S)``: when a
symbol holds whitespace, the regex also matches across it (``a\\tb c`` with the pair ``(b, c)`` becomes
``a\\tbc``), and the pair statistics, updated from the symbol lists, drift from the words. The merges it writes then
differ from an exact BPE (the compiled loop). ``bpe.codes`` must equal ``learn-bpe``'s byte for byte: the compiled
loop learns first, then :func:`merges_stay_exact` replays its merges through the regex on the words that hold
whitespace (a few in real text); only when the regex would have merged differently is the corpus learned again by
this step-for-step port of learn-bpe's loop (pruned statistics and thresholds included, as fast as subword-nmt).

Ported from rsennrich/subword-nmt (MIT licence, Rico Sennrich): ``get_pair_statistics``, ``replace_pair``,
``update_pair_statistics``, ``prune_stats`` and the loop of ``learn_bpe``.

>>> learn_like_subword_nmt({("a\\tb", "c</w>"): 3, ("b", "c</w>"): 2}, num_merges=2)
[('a\\tb', 'c</w>'), ('b', 'c</w>')]
"""

from __future__ import annotations

import copy
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from ...model.segment import merge_by_rank

__all__ = ["learn_like_subword_nmt", "merges_stay_exact"]

_WHITESPACE = re.compile(r"\s")

Pair = tuple[str, str]


def merges_stay_exact(words: Iterable[tuple[str, ...]], merges: Sequence[Pair]) -> bool:
    """Whether learn-bpe's regex merge step, given ``merges`` in order, merges exactly (as the compiled loop does)
    in every word that holds whitespace; then learn-bpe learns the same merges. Words without whitespace always
    merge exactly."""
    spaced = [word for word in words if _WHITESPACE.search("".join(word))]
    for word in spaced:
        symbols = word
        for first, second in merges:
            if first + " " + second not in " ".join(symbols):
                continue  # neither the regex nor an exact merge changes the word
            exact = _merge_exact(symbols, first, second)
            if _merge_by_regex(symbols, first, second) != exact:
                return False
            symbols = exact
    return True


def _merge_exact(symbols: tuple[str, ...], first: str, second: str) -> tuple[str, ...]:
    # Every occurrence left to right, as the compiled loop merges (a merge cannot make a new occurrence).
    return tuple(merge_by_rank(list(symbols), {(first, second): 0}))


def _merge_by_regex(symbols: tuple[str, ...], first: str, second: str) -> tuple[str, ...]:
    """learn-bpe's replace_pair on one word."""
    pattern = re.compile(r"(?<!\S)" + re.escape(first + " " + second) + r"(?!\S)")
    return tuple(pattern.sub((first + second).replace("\\", "\\\\"), " ".join(symbols)).split(" "))


def learn_like_subword_nmt(words: Mapping[tuple[str, ...], int], *, num_merges: int, min_frequency: int = 2,
                           progress: Callable[[int], object] | None = None) -> list[Pair]:
    """Learn merges as ``learn_bpe.learn_bpe`` does; ``words`` maps symbols (``</w>`` fused) to counts, first seen
    first. Returns the pairs in the order learn-bpe writes them."""
    # Most frequent first, ties in first-seen order (sorted is stable), as learn_bpe's sorted_vocab.
    vocab = sorted(words.items(), key=lambda item: item[1], reverse=True)
    stats, indices = _pair_statistics(vocab)
    if not stats:  # learn_bpe fails here (max of nothing); nothing to merge
        return []
    big_stats = copy.deepcopy(stats)
    threshold = max(stats.values()) / 10
    merges: list[Pair] = []
    best: Pair | None = None
    for i in range(num_merges):
        if stats:
            best = max(stats, key=lambda x: (stats[x], x))
        # Pruning may have hidden the best pair: go back to the full statistics (as learn_bpe).
        if not stats or (i and stats[best] < threshold):  # type: ignore[index]
            _prune(stats, big_stats, threshold)
            stats = copy.deepcopy(big_stats)
            if not stats:  # learn_bpe fails here (max of nothing): no pair is left
                break
            best = max(stats, key=lambda x: (stats[x], x))
            threshold = stats[best] * i / (i + 10000.0)
            _prune(stats, big_stats, threshold)
        if stats[best] < min_frequency:  # type: ignore[index]
            break
        merges.append(best)  # type: ignore[arg-type]
        changes = _replace_pair(best, vocab, indices)
        _update_pair_statistics(best, changes, stats, indices)
        stats[best] = 0
        if not i % 100:
            _prune(stats, big_stats, threshold)
        if progress is not None:
            progress(1)
    return merges


def _pair_statistics(vocab: list[tuple[tuple[str, ...], int]]) -> tuple[defaultdict, defaultdict]:
    stats: defaultdict[Pair, int] = defaultdict(int)
    indices: defaultdict[Pair, defaultdict[int, int]] = defaultdict(lambda: defaultdict(int))
    for i, (word, freq) in enumerate(vocab):
        for pair in zip(word, word[1:]):
            stats[pair] += freq
            indices[pair][i] += 1
    return stats, indices


def _replace_pair(pair: Pair, vocab: list, indices: defaultdict) -> list:
    changes = []
    for j, freq in indices[pair].items():
        if freq < 1:
            continue
        word, count = vocab[j]
        new_word = _merge_by_regex(word, *pair)
        vocab[j] = (new_word, count)
        changes.append((j, new_word, word, count))
    return changes


def _update_pair_statistics(pair: Pair, changed: list, stats: defaultdict, indices: defaultdict) -> None:
    stats[pair] = 0
    indices[pair] = defaultdict(int)
    first, second = pair
    new_pair = first + second
    for j, word, old_word, freq in changed:
        # Occurrences of the pair in the old word: the pairs around them lose this word's count.
        i = 0
        while True:
            try:
                i = old_word.index(first, i)
            except ValueError:
                break
            if i < len(old_word) - 1 and old_word[i + 1] == second:
                if i:
                    prev = old_word[i - 1:i + 1]
                    stats[prev] -= freq
                    indices[prev][j] -= 1
                if i < len(old_word) - 2:
                    # "A B C B C": the "C B" between two occurrences is taken off once, above.
                    if old_word[i + 2] != first or i >= len(old_word) - 3 or old_word[i + 3] != second:
                        nex = old_word[i + 1:i + 3]
                        stats[nex] -= freq
                        indices[nex][j] -= 1
                i += 2
            else:
                i += 1
        # Occurrences of the merged symbol in the new word: the pairs around them gain it.
        i = 0
        while True:
            try:
                i = word.index(new_pair, i)
            except ValueError:
                break
            if i:
                prev = word[i - 1:i + 1]
                stats[prev] += freq
                indices[prev][j] += 1
            if i < len(word) - 1 and word[i + 1] != new_pair:
                nex = word[i:i + 2]
                stats[nex] += freq
                indices[nex][j] += 1
            i += 1


def _prune(stats: defaultdict, big_stats: defaultdict, threshold: float) -> None:
    for item, freq in list(stats.items()):
        if freq < threshold:
            del stats[item]
            if freq < 0:
                big_stats[item] += freq
            else:
                big_stats[item] = freq
