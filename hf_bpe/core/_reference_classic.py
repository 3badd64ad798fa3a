"""The classic BPE merge loop in plain Python: the executable spec of the compiled ``hf_bpe.core._classic``.

The published trainers (Sennrich et al.'s paper and subword-nmt, the Hugging Face course, rasbt's and Karpathy's
from-scratch tokenizers) all run this loop; they differ in what a symbol is, which pair wins a tie, and whether a
merge that spells an existing symbol reuses its id. Each step recounts every adjacent pair (overlaps included,
so ``a a a`` holds two ``(a, a)``), takes the best pair, and replaces its occurrences in every sequence left to
right without overlap (``a a a`` becomes ``aa a``).

Tie-breaks among pairs of equal count:

- ``"first-seen"``: the pair met first scanning the sequences in order, each left to right. This is what
  ``max(counts, key=counts.get)`` over an insertion-ordered dict gives (the paper, the HF course, rasbt, minbpe).
- ``"largest-pair"``: the largest ``(left text, right text)``, as subword-nmt's ``max(stats, key=lambda x:
  (stats[x], x))``. Texts compare as UTF-8 bytes, which orders them as code points, as Python compares str.
- ``"smallest-ids"``: the smallest ``(left id, right id)``, as `tokenizers`' BpeTrainer.

Objectives: ``"count"`` ranks pairs by count (BPE); ``"score"`` by WordPiece's likelihood score
``count(a, b) / (freq(a) * freq(b))``, ``freq(x)`` being how often symbol ``x`` occurs in the current sequences
(weighted), computed as the Hugging Face course's ``compute_pair_scores`` computes it: a Python float, so two
different fractions that round to the same double tie, and the tie-break decides between them.

This recount-everything loop is O(corpus) per merge; it is the spec, kept obviously equal to the published code.

>>> vocab, merges = learn_merges([0, 0, 0, 1, 0, 0, 0, 1, 0, 2], [0, 10], [1], [b"a", b"b", b"c", b"d"],
...                              num_merges=3)
>>> [vocab[new] for _left, _right, new in merges]
[b'aa', b'aaa', b'aaab']
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["OBJECTIVES", "TIE_BREAKS", "check_learn_args", "learn_merges"]

TIE_BREAKS = ("first-seen", "largest-pair", "smallest-ids")
OBJECTIVES = ("count", "score")


def check_learn_args(vocab: object, num_merges: object, min_frequency: object, tie_break: object,
                     strip_prefix: object = b"", max_vocab: object = None, objective: object = "count") -> None:
    """Check the options of :func:`learn_merges` (shared with the compiled loop, so both raise the same errors).

    >>> check_learn_args([b"a"], 3, 0, "oldest")
    Traceback (most recent call last):
    ...
    ValueError: tie_break must be one of 'first-seen', 'largest-pair', 'smallest-ids', got 'oldest'
    """
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break must be one of {', '.join(map(repr, TIE_BREAKS))}, got {tie_break!r}")
    if not isinstance(num_merges, int) or isinstance(num_merges, bool) or num_merges < 0:
        raise ValueError(f"num_merges must be an int >= 0, got {num_merges!r}")
    if not isinstance(min_frequency, int) or isinstance(min_frequency, bool) or min_frequency < 0:
        raise ValueError(f"min_frequency must be an int >= 0, got {min_frequency!r}")
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(map(repr, OBJECTIVES))}, got {objective!r}")
    if objective == "score" and min_frequency:
        raise ValueError(f"min_frequency belongs to objective='count' (the score has none), got {min_frequency!r}")
    if not isinstance(strip_prefix, bytes):
        raise TypeError(f"strip_prefix must be bytes, got {strip_prefix!r}")
    if max_vocab is not None and (not isinstance(max_vocab, int) or isinstance(max_vocab, bool) or max_vocab < 0):
        raise ValueError(f"max_vocab must be None or an int >= 0, got {max_vocab!r}")
    if not isinstance(vocab, list) or not all(isinstance(token, bytes) for token in vocab):
        raise TypeError(f"vocab must be a list of bytes (the text of each symbol id), got {type(vocab).__name__}")


def learn_merges(
    symbols: Sequence[int],
    starts: Sequence[int],
    counts: Sequence[int],
    vocab: list[bytes],
    *,
    num_merges: int,
    min_frequency: int = 0,
    tie_break: str = "first-seen",
    reuse_equal: bool = True,
    strip_prefix: bytes = b"",
    max_vocab: int | None = None,
    objective: str = "count",
    progress: object = None,
) -> tuple[list[bytes], list[tuple[int, int, int]]]:
    """Learn up to ``num_merges`` merges over weighted symbol sequences.

    Args:
        symbols: the symbol ids of every sequence, one sequence after the other.
        starts: where each sequence begins in ``symbols``, plus the end (``len(counts) + 1`` offsets).
        counts: the weight of each sequence (how often the word occurs; 1 for a whole text).
        vocab: the text of each initial symbol id.
        num_merges: the most merges to learn.
        min_frequency: stop when the best pair occurs fewer times than this.
        tie_break: ``"first-seen"``, ``"largest-pair"`` or ``"smallest-ids"`` (module docstring).
        reuse_equal: a merge spelling an existing symbol reuses its id (symbols are their text: the paper,
            subword-nmt, the HF course, `tokenizers`); otherwise every merge takes a new id (minbpe, rasbt).
        strip_prefix: removed from the right symbol's text when it starts with it (WordPiece's ``##``); a symbol
            that is just the prefix keeps it, so that every merge spells a longer text.
        max_vocab: stop before a merge once the vocabulary holds this many symbols (`tokenizers`' vocab_size).
        objective: ``"count"`` (BPE) or ``"score"`` (WordPiece's likelihood score; module docstring).
        progress: ignored (the compiled loop reports progress; the signature is shared).

    Returns:
        ``(vocab, merges)``: every symbol's text (initial ones first, then new ones in order) and the merges as
        ``(left id, right id, new id)`` in order.
    """
    check_learn_args(vocab, num_merges, min_frequency, tie_break, strip_prefix, max_vocab, objective)
    vocab = list(vocab)
    index = {token: i for i, token in enumerate(vocab)}
    sequences = [list(symbols[starts[i]:starts[i + 1]]) for i in range(len(counts))]
    merges: list[tuple[int, int, int]] = []
    while len(merges) < num_merges and (max_vocab is None or len(vocab) < max_vocab):
        # 1. Count every adjacent pair; the dict remembers the order in which pairs are first met.
        stats: dict[tuple[int, int], int] = {}
        for sequence, count in zip(sequences, counts):
            if count:
                for pair in zip(sequence, sequence[1:]):
                    stats[pair] = stats.get(pair, 0) + count
        if not stats:
            break
        rank: dict[tuple[int, int], float] = stats  # type: ignore[assignment]
        if objective == "score":
            # The course's compute_pair_scores: every symbol counted, single-symbol sequences included.
            freq: dict[int, int] = {}
            for sequence, count in zip(sequences, counts):
                for symbol in sequence:
                    freq[symbol] = freq.get(symbol, 0) + count
            rank = {pair: n / (freq[pair[0]] * freq[pair[1]]) for pair, n in stats.items()}
        # 2. The best pair; max() keeps the first of equal keys, so first-seen needs no extra key.
        if tie_break == "first-seen":
            best = max(rank, key=rank.__getitem__)
        elif tie_break == "largest-pair":
            # Equal texts under different ids (only without reuse_equal): the smallest ids.
            best = max(rank, key=lambda pair: (rank[pair], vocab[pair[0]], vocab[pair[1]], -pair[0], -pair[1]))
        else:
            best = max(rank, key=lambda pair: (rank[pair], -pair[0], -pair[1]))
        if stats[best] < min_frequency:
            break
        # 3. The new symbol, then its occurrences replaced left to right.
        left, right = best
        right_text = vocab[right]
        if strip_prefix and right_text.startswith(strip_prefix) and len(right_text) > len(strip_prefix):
            right_text = right_text[len(strip_prefix):]
        text = vocab[left] + right_text
        new = index.get(text) if reuse_equal else None
        if new is None:
            new = len(vocab)
            vocab.append(text)
            index.setdefault(text, new)
        merges.append((left, right, new))
        for k, sequence in enumerate(sequences):
            sequences[k] = replace_pair(sequence, left, right, new)
    return vocab, merges


def replace_pair(sequence: list[int], left: int, right: int, new: int) -> list[int]:
    """Replace ``left, right`` by ``new`` scanning left to right, without overlap.

    >>> replace_pair([1, 1, 1, 2], 1, 1, 9)
    [9, 1, 2]
    """
    out: list[int] = []
    i = 0
    while i < len(sequence):
        if i + 1 < len(sequence) and sequence[i] == left and sequence[i + 1] == right:
            out.append(new)
            i += 2
        else:
            out.append(sequence[i])
            i += 1
    return out
