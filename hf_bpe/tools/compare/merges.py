"""Compare hf_bpe's merges with a peer's, and explain the first difference when the reason is known."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["compare_merges", "pair_counts_after"]

_I32_MAX = 2**31 - 1


def pair_counts_after(
    word_counts: Mapping[bytes, int], merges: Sequence[tuple[bytes, bytes]], pairs: Iterable[tuple[bytes, bytes]]
) -> dict[tuple[bytes, bytes], int]:
    """Count adjacent occurrences of ``pairs`` in the corpus once ``merges`` are applied in order.

    Applying merges in order equals merging the lowest-ranked pair present, everywhere left to right, until none
    is left (a merge's result only takes part in later merges). O(sum of squared word lengths).
    """
    ranks: dict[tuple[bytes, bytes], int] = {}
    for rank, pair in enumerate(merges):
        ranks.setdefault(pair, rank)
    totals = dict.fromkeys(pairs, 0)
    for word, count in word_counts.items():
        symbols = [word[i : i + 1] for i in range(len(word))]
        while len(symbols) > 1:
            candidates = [ranks[p] for p in zip(symbols, symbols[1:]) if p in ranks]
            if not candidates:
                break
            left, right = merges[min(candidates)]
            merged: list[bytes] = []
            i = 0
            while i < len(symbols):
                if i + 1 < len(symbols) and symbols[i] == left and symbols[i + 1] == right:
                    merged.append(left + right)
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            symbols = merged
        for pair in zip(symbols, symbols[1:]):
            if pair in totals:
                totals[pair] += count
    return totals


def show_pair(pair: tuple[bytes, bytes]) -> list[str]:
    from ...core.bytelevel import token_to_str

    return [token_to_str(pair[0]), token_to_str(pair[1])]


def compare_merges(
    word_counts: Mapping[bytes, int],
    ours: Sequence[tuple[bytes, bytes]],
    theirs: Sequence[tuple[bytes, bytes]],
    *,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 0,
    max_token_length: int | None = None,
    peer: str = "tokenizers",
) -> dict[str, Any]:
    """Compare hf_bpe's merges with a peer's, and explain the first difference when the reason is known.

    Args:
        word_counts: pre-token (bytes) -> count in the training split, as ``hf_bpe.training.counts.count_words`` gives.
        ours: hf_bpe's merges in rank order.
        theirs: the peer's merges in rank order.
        vocab_size, special_tokens, min_frequency, max_token_length: the training options (to replay them).
        peer: the peer's name, for the messages.

    Returns:
        The ``merges`` section of the report: ``identical``, ``hf_bpe`` and ``peer`` (merge counts),
        ``first_difference`` (``None`` or the rank, both pairs and their counts in the training split after the
        common merges) and ``reason`` (``None`` when unknown). The known reason: when hf_bpe's core with
        ``count_bits=32`` (`tokenizers`' wrapping ``i32`` pair counts) reproduces the peer's merges through the
        differing rank, the reason names the pair whose count exceeds ``2**31-1``.

    >>> r = compare_merges({b"ab": 3}, [(b"a", b"b")], [(b"a", b"b")], vocab_size=257)
    >>> r["identical"], r["first_difference"]
    (True, None)
    """
    from ...core import _core
    from ...core._reference import saved_merges

    ours, theirs = list(ours), list(theirs)
    section: dict[str, Any] = {"identical": ours == theirs, "hf_bpe": len(ours), "peer": len(theirs),
                               "first_difference": None, "reason": None}
    if ours == theirs:
        return section
    # 1. The first differing rank (a missing merge counts as a difference at the shorter list's end).
    rank = next((r for r, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    mine = ours[rank] if rank < len(ours) else None
    other = theirs[rank] if rank < len(theirs) else None
    # 2. Both pairs' occurrences in the training split after the rank common merges.
    counts = pair_counts_after(word_counts, ours[:rank], [p for p in (mine, other) if p is not None])
    section["first_difference"] = {
        "rank": rank,
        "hf_bpe": None if mine is None else {"pair": show_pair(mine), "count": counts[mine]},
        "peer": None if other is None else {"pair": show_pair(other), "count": counts[other]},
    }
    # 3. Known reason: the peer's 32-bit pair counts. Replay training with wrapping i32 counts.
    if word_counts:
        words = sorted(word_counts)
        vocab32, merges32 = _core.train_merges(
            words, [word_counts[w] for w in words], vocab_size=vocab_size, min_frequency=min_frequency,
            special_tokens=list(special_tokens), max_token_length=max_token_length, count_bits=32,
        )
        emulated = saved_merges(vocab32, merges32)
        if emulated[: rank + 1] == theirs[: rank + 1]:
            big = [(p, c) for p, c in ((mine, counts.get(mine)), (other, counts.get(other)))
                   if p is not None and c is not None and c > _I32_MAX]
            if big:
                pair, count = big[0]
                section["reason"] = (
                    f"{peer}' 32-bit pair counts overflow: pair {' '.join(show_pair(pair))!r} has count {count:,} "
                    f"> 2**31-1 = {_I32_MAX:,} (hf_bpe with count_bits=32 reproduces {peer}' merges "
                    f"{'entirely' if emulated == theirs else f'through rank {rank}'})"
                )
            else:
                section["reason"] = (f"{peer}' 32-bit pair counts overflow (hf_bpe with count_bits=32 reproduces "
                                     f"{peer}' merges through rank {rank})")
    return section
