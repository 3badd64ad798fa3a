"""Unigram's seed pieces as sentencepiece 0.2.3 makes them (``MakeSeedSentencePiecesFromCorpus``): the pure-Python
reference.

sentencepiece 0.2.3 finds its seeds on **bytes**, not characters (its 0.2.0 found them on characters with esaxx):

1. the sentences (normalized, rare characters already ``▅``), each followed by a NUL byte, are joined into chunks of
   at least 500 MiB (a sentence is never cut);
2. each chunk's suffix array and LCP array (libsais: both are unique, so any correct construction gives them) are
   walked as an LCP-interval tree (Abouelhoda et al.); every interval ``[l, r]`` of depth ``d > 1`` is the byte
   string ``text[SA[l] : SA[l] + d]`` seen ``r - l + 1`` times;
3. an interval is dropped when its string starts or ends inside a UTF-8 character; trailing NULs are cut off (so a
   string that ends sentences is counted once as itself and once more as itself plus NUL, both into one entry);
   a string holding a NUL, of fewer than 2 or more than ``max_sentencepiece_length`` characters, or not a valid
   piece (``IsValidSentencePiece``) is dropped; the others add their count to the string's entry;
4. each entry of count >= 2 scores ``float(count) * float(characters)`` (float32); the best
   ``seed_sentencepiece_size`` (0: ``max(100000, 8 * vocab_size)``) by score, then longer UTF-8, then smaller bytes;
5. the seeds are every character of the sentences (count descending, then smaller string), then those strings;
   each score becomes ``float(log(score) - log(sum))`` with the sum taken in double.

>>> [(piece, round(score, 3)) for piece, score in seed_pieces([["▁ab▁ab", 1]], {
...     "max_sentencepiece_length": 16, "split_by_whitespace": True, "allow_whitespace_only_pieces": False,
...     "split_by_number": True, "split_digits": False, "split_by_unicode_script": True,
...     "seed_sentencepiece_size": 10}, vocab_size=8)]
[('a', -2.079), ('b', -2.079), ('▁', -2.079), ('▁ab', -0.981), ('ab', -1.386)]
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..sentencepiece.bpe import BOUNDARY, UNK_CHAR, char_info, valid_piece
from .lattice import f32

__all__ = ["CHUNK_BYTES", "chunks", "compiled_candidates", "compiled_count_characters", "count_characters",
           "lcp_array", "reference_candidates", "seed_characters", "seed_pieces", "suffix_array"]

CHUNK_BYTES = 500 * 1024 * 1024  # sentencepiece 0.2.3's kMaxChunkBytes


def suffix_array(data: bytes) -> list[int]:
    """Return the suffix array of ``data`` (a shorter suffix before the longer ones it begins), by prefix doubling:
    O(n log² n), numpy sorts."""
    import numpy as np

    n = len(data)
    if n == 0:
        return []
    # Ranks stay below n + 1 (byte values compacted first), so rank * (n + 2) + next rank orders pairs.
    rank = np.unique(np.frombuffer(data, dtype=np.uint8), return_inverse=True)[1].astype(np.int64)
    step = 1
    while True:
        second = np.zeros(n, dtype=np.int64)  # 0: past the end, smaller than any rank + 1
        if step < n:
            second[: n - step] = rank[step:] + 1
        key = rank * (n + 2) + second
        order = np.argsort(key, kind="stable")
        ordered = key[order]
        fresh = np.empty(n, dtype=np.int64)
        fresh[order] = np.concatenate(([0], np.cumsum(ordered[1:] != ordered[:-1])))
        rank = fresh
        if int(rank.max()) == n - 1 or step >= n:
            return order.tolist()
        step *= 2


def lcp_array(data: bytes, sa: Sequence[int]) -> list[int]:
    """Return ``lcp[i]``, the longest common prefix of the suffixes ``sa[i-1]`` and ``sa[i]`` (``lcp[0] = 0``), by
    Kasai's algorithm: O(n)."""
    n = len(data)
    rank = [0] * n
    for i, s in enumerate(sa):
        rank[s] = i
    lcp = [0] * n
    h = 0
    for i in range(n):
        r = rank[i]
        if r == 0:
            h = 0
            continue
        j = sa[r - 1]
        while i + h < n and j + h < n and data[i + h] == data[j + h]:
            h += 1
        lcp[r] = h
        if h:
            h -= 1
    return lcp


def chunks(sentences: Sequence[Sequence[Any]]) -> list[bytes]:
    """Phase 1: the sentences (each ``count`` times), NUL-terminated, in chunks of at least ``CHUNK_BYTES``."""
    chunks: list[bytes] = []
    index = 0
    while index < len(sentences):
        chunk = bytearray()
        while index < len(sentences) and len(chunk) < CHUNK_BYTES:
            text, count = sentences[index]
            index += 1
            encoded = text.encode("utf-8") + b"\0"
            repeat = 0
            while repeat < count and len(chunk) < CHUNK_BYTES:
                chunk += encoded
                repeat += 1
        if not chunk:
            break
        chunks.append(bytes(chunk))
    return chunks


def _intervals(data: bytes, counts: dict[bytes, int], opts: Mapping[str, Any]) -> None:
    """Phases 2-3 for one chunk: walk the LCP-interval tree, adding each kept string's count to ``counts``."""
    n = len(data)
    sa = suffix_array(data)
    lcp = lcp_array(data, sa)
    max_length = opts["max_sentencepiece_length"]
    valid_cache: dict[bytes, bool] = {}

    def process(left: int, right: int, depth: int) -> None:
        if depth <= 1:
            return
        offset = sa[left]
        if offset + depth > n:
            return
        # Strings cut inside a UTF-8 character (a continuation byte first, or next) are dropped.
        if data[offset] & 0xC0 == 0x80 or (offset + depth < n and data[offset + depth] & 0xC0 == 0x80):
            return
        piece = data[offset: offset + depth].rstrip(b"\0")
        if b"\0" in piece:
            return
        ok = valid_cache.get(piece)
        if ok is None:
            text = piece.decode("utf-8")
            ok = valid_cache[piece] = 1 < len(text) <= max_length and valid_piece(text, opts)
        if ok:
            counts[piece] = counts.get(piece, 0) + right - left + 1

    stack = [(0, 0)]  # (left end in the suffix array, depth)
    for i in range(1, n + 1):
        value = lcp[i] if i < n else 0
        last_left = i - 1
        # Intervals deeper than the new LCP end at i - 1: popped in post-order.
        while value < stack[-1][1]:
            left, depth = stack.pop()
            last_left = left
            process(left, i - 1, depth)
            if value > stack[-1][1]:
                stack.append((left, value))
        if value > stack[-1][1]:
            stack.append((last_left, value))


def _score(piece: bytes, count: int) -> float:
    """CalculatePieceScore with seed_piece_length_power 1: float(count) * float(UTF-8 characters), float32."""
    return f32(f32(count) * float(sum(1 for b in piece if b & 0xC0 != 0x80)))


def _order(item: tuple[bytes, float]) -> tuple[float, int, bytes]:
    """The queue's order: higher score, then more bytes, then smaller bytes."""
    return -item[1], -len(item[0]), item[0]


def reference_candidates(chunks: Iterable[bytes], chars: Iterable[str], opts: Mapping[str, Any],
                         keep: int) -> list[tuple[str, float]]:
    """Phases 2-4 in Python: the best ``keep`` strings of the chunks with their float32 scores, best first
    (``chars``, the characters of the chunks, is for the compiled version: :func:`compiled_candidates`)."""
    counts: dict[bytes, int] = {}
    for chunk in chunks:
        _intervals(chunk, counts, opts)
        if len(counts) > 2 * 8 * keep:  # BoundedPriorityQueue::MaybeGc: the best 8 * keep stay
            best = sorted(((p, _score(p, n)) for p, n in counts.items()), key=_order)[: 8 * keep]
            counts = {p: counts[p] for p, _ in best}
    scored = sorted(((p, _score(p, n)) for p, n in counts.items() if n >= 2), key=_order)[:keep]
    return [(p.decode("utf-8"), score) for p, score in scored]


def compiled_candidates(chunks: Iterable[bytes], chars: Iterable[str], opts: Mapping[str, Any],
                        keep: int) -> list[tuple[str, float]]:
    """:func:`reference_candidates` on the compiled core (``csrc/unigram_seed.hpp``), with the same results."""
    from ...core._unigram import seed_candidates

    info = {c: char_info(c) for c in {*chars, UNK_CHAR, BOUNDARY}}
    return seed_candidates(chunks, info, opts, keep)


def count_characters(sentences: Iterable[Sequence[Any]]) -> dict[str, int]:
    """Each character's count in the ``[text, count]`` sentences."""
    chars: Counter[str] = Counter()
    for text, count in sentences:
        if count == 1:
            chars.update(text)
        else:
            for c in text:
                chars[c] += count
    return dict(chars)


def compiled_count_characters(sentences: Iterable[Sequence[Any]]) -> dict[str, int]:
    """:func:`count_characters` on the compiled core, with the same result."""
    from ...core._unigram import char_counts

    return char_counts(sentences)


def seed_characters(sentences: Sequence[Sequence[Any]],
                    count_chars: Callable[[Sequence[Sequence[Any]]], dict[str, int]] = count_characters,
                    ) -> list[tuple[str, int]]:
    """The seeds' characters with their counts: every character of the sentences but the unknown and boundary
    ones, by count (then smaller UTF-8, i.e. smaller code point).

    Raises:
        ValueError: there is none (the text is all user-defined symbols), where spm_train refuses.
    """
    chars = count_chars(sentences)
    chars.pop(UNK_CHAR, None)
    chars.pop(BOUNDARY, None)
    if not chars:  # spm_train: CHECK(!required_chars_.empty()) or CHECK(!seed_sentencepieces.empty())
        raise ValueError("the corpus holds no characters to train a unigram model on: its text is all "
                         "user_defined_symbols (or unknown characters); spm_train refuses it too; add text outside "
                         "the user_defined_symbols, or add_dummy_prefix=True")
    return sorted(chars.items(), key=lambda kv: (-kv[1], kv[0]))


def seed_pieces(sentences: Sequence[Sequence[Any]], opts: Mapping[str, Any], *, vocab_size: int,
                candidates: Callable[..., list[tuple[str, float]]] = reference_candidates,
                count_chars: Callable[[Sequence[Sequence[Any]]], dict[str, int]] = count_characters,
                ) -> list[tuple[str, float]]:
    """Return the seed pieces with their float32 log-probability scores, in sentencepiece's order.

    Args:
        sentences: ``[text, count]`` pairs as LoadSentences leaves them (before splitting into words).
        opts: the checked options (``max_sentencepiece_length``, the ``split_*`` flags,
            ``allow_whitespace_only_pieces``, ``seed_sentencepiece_size``).
        vocab_size: the target vocabulary size (for ``seed_sentencepiece_size=0``).
        candidates: :func:`reference_candidates` or :func:`compiled_candidates`.
        count_chars: :func:`count_characters` or :func:`compiled_count_characters`.
    """
    chars = seed_characters(sentences, count_chars)
    seeds = [(c, f32(n)) for c, n in chars]
    keep = opts["seed_sentencepiece_size"] or max(100000, vocab_size * 8)
    seeds += candidates(chunks(sentences), dict(chars), opts, keep)
    # ToLogProb, in double.
    total = 0.0
    for _, score in seeds:
        total += score
    log_total = math.log(total)
    return [(piece, f32(math.log(score) - log_total)) for piece, score in seeds]
