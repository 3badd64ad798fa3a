"""Pure-Python executable spec of the BPE merge loop and of the word encoder.

``hf_bpe.core._core`` (Cython/C++) implements the same two functions fast; the tests hold both equal, and hold this
module equal to ``tokenizers`` 0.23.3 (``BpeTrainer::do_train`` in ``models/bpe/trainer.rs``, ``Word::merge`` and
``Word::merge_all`` in ``models/bpe/word.rs``). Read this file to know what the core does.

Training mirrors ``do_train`` step for step, quirks included:

1. Ids: special tokens first (duplicates skipped, first wins), then the 256 bytes in ``BYTE_ORDER``, then merges.
   ``tokenizers`` keys its vocabulary by the byte-level *string*, so a special token that spells a byte-level
   string (``"a"``, ``"<s>"``, ``"Ġthe"``) takes that string's place: its byte is not added to the alphabet, and a
   merge that builds that string reuses the special's id.
2. Pair counts, and for every pair the set of words where it occurs; a max-heap of entries
   ``(count, pair, words)`` ordered by count, then by the smallest pair.
3. Loop: pop the top entry; if its count is stale, push it back with the current count; stop when the
   vocabulary is full, the heap is empty, or the count is below 1 or ``min_frequency`` (inclusive threshold).
   The new token is ``left + right``; if that string already has an id, the id is reused (the vocabulary does not
   grow but the merge is still recorded).
4. The pair is merged (left to right, non-overlapping) only in the words of the popped entry. Each merge
   returns changes: -1 for the broken neighbour pairs, +1 for the new ones when ``neighbour_len + new_len <
   max_token_length`` (strict). The merged pair's own count is never decremented.
5. Every pair with a +1 change gets a NEW heap entry carrying only the words of this step. So one pair can own
   several entries; once the first is merged, the pair's count is still the same (see 4), and the next entry
   for it passes the staleness check and is merged again: ``tokenizers`` records the same merge twice. It takes a
   token created at two different steps (one string built from two different pairs, then a cascade). We mirror
   it, though byte-level training seems never to get there: a search over 30,000 small random corpora and the
   shared English and Chinese corpora found no such case. (A merge that builds a special token's string is
   different: it reuses the special's id once, like a new token.)

Determinism rule (ours; ``tokenizers`` leaves it to its hash and heap order): two entries with equal count and
pair, which only the case of point 5 can make, pop in push order (first pushed, first popped; re-pushing a stale
entry counts as a new push).

``count_bits=32`` emulates ``tokenizers``' ``i32`` pair counts: each word count is cast with ``count as i32``
(wrapping), sums wrap at 32 bits, an entry is pushed only when its ``i32`` count is > 0, and a popped entry's
count is refreshed as ``i32 as u64`` (a negative count becomes a huge one and is merged at once).

>>> vocab, merges = train_merges([b"hug", b"pug", b"hugs"], [10, 5, 5], vocab_size=259)  # p+ug ties hug+s: p < hug
>>> [(vocab[a], vocab[b], vocab[c]) for a, b, c in merges]
[(b'u', b'g', b'ug'), (b'h', b'ug', b'hug'), (b'p', b'ug', b'pug')]
>>> encoder = WordEncoder(merges, [vocab.index(bytes([b])) for b in range(256)])
>>> [vocab[i] for i in encoder.encode_word(b"hugs")], [vocab[i] for i in encoder.encode_word(b"pugs")]
([b'hug', b's'], [b'pug', b's'])
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple

from .bytelevel import BYTE_ORDER, str_to_token

__all__ = ["train_merges", "saved_merges", "WordEncoder"]

# How often `progress` is called (in merges); the core uses the same number so both call it identically.
PROGRESS_EVERY = 1000
# Rust's `usize::MAX` stands for "no max_token_length": `neighbour_len + new_len < UNLIMITED` always holds.
UNLIMITED = 2**64 - 1
# Counts are u64 in tokenizers; we keep them in int64, and with 64-bit arithmetic every pair count must fit.
# A pair count never exceeds 3 * sum(count * len(word)) (each applied merge creates at most 2 new occurrences).
MAX_COUNT = 2**63 - 1
MAX_WEIGHTED_LENGTH = 2**61
# Ids are int32 in the core.
MAX_ID = 2**31 - 1


class TrainingSetup(NamedTuple):
    """Checked training input, shared by this module and ``hf_bpe.core._core`` so both start from the same state."""

    words: list[bytes]  # distinct, in input order: the word index is the position used in pair entries
    counts: list[int]  # aligned with words
    vocab: list[bytes]  # bytes of each initial id: specials (UTF-8) then the bytes not captured by a special
    keys: list[bytes | None]  # byte-level key of each id; None for a special that no token can ever spell
    key_to_id: dict[bytes, int]  # `word_to_id` of tokenizers, keyed by bytes instead of byte-level strings
    byte_ids: list[int]  # id of the symbol of each byte value (a special's id when a special spells the byte)
    max_len: int  # max_token_length, or UNLIMITED


def _as_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} must be an int, got {value!r} ({type(value).__name__}); pass a whole number")
    return operator.index(value)  # type: ignore[arg-type]


def prepare_training(
    words: Sequence[bytes],
    counts: Sequence[int],
    *,
    vocab_size: int,
    min_frequency: int,
    special_tokens: Sequence[str],
    max_token_length: int | None,
    count_bits: int,
    progress: Callable[[int], None] | None,
) -> TrainingSetup:
    """Check the arguments of ``train_merges`` and build the initial vocabulary (phases 1-2 of ``do_train``).

    Args:
        words, counts, vocab_size, min_frequency, special_tokens, max_token_length, count_bits, progress:
            as for :func:`train_merges`.

    Returns:
        The words and counts as lists, and the initial ids.

    Raises:
        TypeError: for an argument of the wrong type.
        ValueError: for an out-of-range value, duplicate words, or a ``vocab_size`` below the initial vocabulary.

    >>> setup = prepare_training([b"b", b"a"], [1, 2], vocab_size=300, min_frequency=0, special_tokens=["a"],
    ...                          max_token_length=None, count_bits=64, progress=None)
    >>> setup.words, setup.counts, setup.vocab[:2], setup.byte_ids[ord("a")], setup.byte_ids[ord("b")]
    ([b'b', b'a'], [1, 2], [b'a', b'!'], 0, 65)
    """
    # 1. Options.
    vocab_size = _as_int(vocab_size, "vocab_size")
    min_frequency = _as_int(min_frequency, "min_frequency")
    if not 0 <= min_frequency < 2**64:  # tokenizers takes a u64
        raise ValueError(f"min_frequency must be in 0..2**64-1, got {min_frequency!r}; use 0 to allow every pair")
    if max_token_length is not None:
        max_token_length = _as_int(max_token_length, "max_token_length")
        if max_token_length < 0:
            raise ValueError(f"max_token_length must be None or >= 0, got {max_token_length!r}")
    if isinstance(count_bits, bool) or count_bits not in (32, 64):
        raise ValueError(
            f"count_bits must be 64 (exact counts) or 32 (emulate tokenizers' i32 pair counts), got {count_bits!r}"
        )
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable taking the number of new merges, or None; got {progress!r}")
    if isinstance(special_tokens, (str, bytes)):
        raise TypeError(
            f"special_tokens must be a sequence of str, got the single {type(special_tokens).__name__} "
            f"{special_tokens!r}; wrap it in a list: [{special_tokens!r}]"
        )
    specials: list[str] = []
    for token in special_tokens:
        if not isinstance(token, str):
            raise TypeError(f"special_tokens must hold str, got {token!r} ({type(token).__name__})")
        if token not in specials:  # tokenizers' add_special_tokens: a repeated special is skipped, first wins
            specials.append(token)
    minimum = len(specials) + 256
    if vocab_size < minimum:
        raise ValueError(
            f"vocab_size={vocab_size!r} is too small: the vocabulary starts with {len(specials)} special token(s) "
            f"and the 256 byte tokens, so vocab_size must be at least {minimum}; raise vocab_size"
        )

    # 2. Words and counts: distinct bytes, counts in 1..2**63-1. The checks use C-level builtins (map, set, min,
    # max): the core calls this on millions of words. Words keep their input order: nothing in the result depends
    # on it (a word's index only names it inside position sets; counts add up commutatively, even wrapping ones;
    # distinct pairs never tie in the heap), so sorting them would cost time for nothing.
    if isinstance(words, (bytes, str)) or isinstance(counts, (bytes, str)):
        raise TypeError(f"words and counts must be sequences, got {type(words).__name__} and {type(counts).__name__}")
    words = list(words)
    counts = list(counts)
    if len(words) != len(counts):
        raise ValueError(f"words and counts must have the same length, got {len(words)} words and {len(counts)} counts")
    if not set(map(type, words)) <= {bytes}:
        word = next(w for w in words if type(w) is not bytes)
        raise TypeError(f"words must hold bytes, got {word!r} ({type(word).__name__}); encode str as UTF-8")
    if len(set(words)) != len(words):
        seen: set[bytes] = set()
        word = next(w for w in words if w in seen or seen.add(w))  # type: ignore[func-returns-value]
        raise ValueError(f"words must be distinct, got {word!r} twice; add up their counts first")
    if not set(map(type, counts)) <= {int}:
        counts = [_as_int(count, "each count") for count in counts]
    if counts and not (1 <= min(counts) and max(counts) <= MAX_COUNT):
        word, count = next((w, c) for w, c in zip(words, counts) if not 1 <= c <= MAX_COUNT)
        raise ValueError(f"the count of {word!r} is {count!r}; counts must be in 1..2**63-1")
    weighted = sum(map(operator.mul, counts, map(len, words)))
    if count_bits == 64 and weighted > MAX_WEIGHTED_LENGTH:
        raise ValueError(
            f"sum(count * len(word)) is {weighted}, above 2**61: pair counts could overflow 64 bits; "
            "scale the counts down"
        )

    # 3. Initial vocabulary: specials, then the alphabet in BYTE_ORDER, skipping a byte a special already spells.
    vocab: list[bytes] = []
    keys: list[bytes | None] = []
    key_to_id: dict[bytes, int] = {}
    for token in specials:
        try:
            key: bytes | None = str_to_token(token)
        except ValueError:
            key = None  # a character outside the byte-level alphabet: no merged token can ever equal it
        if key is not None:
            key_to_id[key] = len(vocab)
        vocab.append(token.encode("utf-8"))
        keys.append(key)
    for byte in BYTE_ORDER:
        key = bytes([byte])
        if key not in key_to_id:
            key_to_id[key] = len(vocab)
            vocab.append(key)
            keys.append(key)
    byte_ids = [key_to_id[bytes([b])] for b in range(256)]
    return TrainingSetup(
        words,
        counts,
        vocab,
        keys,
        key_to_id,
        byte_ids,
        UNLIMITED if max_token_length is None else max_token_length,
    )


def merge_word(
    symbols: list[int], left: int, right: int, new_id: int, token_len: Sequence[int], max_len: int
) -> list[tuple[tuple[int, int], int]]:
    """Merge ``(left, right)`` into ``new_id`` in ``symbols`` in place, as ``Word::merge`` does.

    Scans left to right; after a merge the scan goes on after the new symbol (non-overlapping). Returns the
    changes in order: ``((prev, left), -1)`` then ``((prev, new_id), +1)`` when
    ``len(prev) + len(new) < max_len``; ``((right, next), -1)`` then ``((new_id, next), +1)`` likewise.
    ``prev`` may be a symbol created earlier in the same scan.

    >>> word = [1, 2, 1, 2]
    >>> merge_word(word, 1, 2, 9, [1] * 10, UNLIMITED), word
    ([((2, 1), -1), ((9, 1), 1), ((9, 1), -1), ((9, 9), 1)], [9, 9])
    """
    changes: list[tuple[tuple[int, int], int]] = []
    new_len = token_len[new_id]
    i = 0
    while i < len(symbols):
        if symbols[i] == left and i + 1 < len(symbols) and symbols[i + 1] == right:
            if i > 0:
                prev = symbols[i - 1]
                changes.append(((prev, left), -1))
                if token_len[prev] + new_len < max_len:
                    changes.append(((prev, new_id), 1))
            symbols[i : i + 2] = [new_id]
            if i < len(symbols) - 1:
                nxt = symbols[i + 1]
                changes.append(((right, nxt), -1))
                if token_len[nxt] + new_len < max_len:
                    changes.append(((new_id, nxt), 1))
        i += 1
    return changes


def train_merges(
    words: Sequence[bytes],
    counts: Sequence[int],
    *,
    vocab_size: int,
    min_frequency: int = 0,
    special_tokens: Sequence[str] = (),
    max_token_length: int | None = None,
    count_bits: int = 64,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[bytes], list[tuple[int, int, int]]]:
    """Learn byte-level BPE merges exactly as ``tokenizers``' ``BpeTrainer`` (see the module docstring).

    Args:
        words: distinct pre-tokens as UTF-8 bytes; their order does not matter.
        counts: the count (1..2**63-1) of each word.
        vocab_size: stop when the vocabulary has this many ids (at least ``len(specials) + 256``).
        min_frequency: only merge pairs whose count is at least this.
        special_tokens: strings that take the first ids (repeats are skipped).
        max_token_length: tokenizers' ``max_token_length`` (in bytes); None for no limit.
        count_bits: 64 for exact counts, 32 to emulate tokenizers' wrapping ``i32`` pair counts.
        progress: called with the number of merges done since its last call, every ``PROGRESS_EVERY``
            merges and once at the end (with the rest, possibly 0).

    Returns:
        ``(vocab, merges)``: ``vocab[i]`` is the bytes of id ``i`` (a special's UTF-8 encoding); ``merges`` are
        ``(left_id, right_id, new_id)`` in creation order, a repeated merge included.

    Raises:
        TypeError, ValueError: see :func:`prepare_training`.

    >>> vocab, merges = train_merges([b"aaa"], [3], vocab_size=300)
    >>> [vocab[i] for _, _, i in merges]
    [b'aa', b'aaa']
    """
    setup = prepare_training(
        words,
        counts,
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=special_tokens,
        max_token_length=max_token_length,
        count_bits=count_bits,
        progress=progress,
    )
    vocab, keys, key_to_id, max_len = setup.vocab, setup.keys, setup.key_to_id, setup.max_len
    token_len = [0 if key is None else len(key) for key in keys]
    byte_ids = setup.byte_ids
    # 3. Words as symbol lists (tokenize_words).
    symbols = [[byte_ids[b] for b in word] for word in setup.words]
    merges = _merge_loop(symbols, setup.counts, vocab, keys, key_to_id, token_len, vocab_size=vocab_size,
                         min_frequency=min_frequency, max_len=max_len, count_bits=count_bits, progress=progress)
    return vocab, merges


def countable(left_len: int, right_len: int, max_len: int) -> bool:
    """Say whether a pair already side by side when the loop starts gets a count (phase 4).

    ``count_pairs`` counts every pair of the initial byte words, whatever ``max_token_length``; a pair formed by a
    merge is counted only when ``len(left) + len(right) < max_len`` (point 4). A seeded start (:func:`continue_merges`)
    counts a pair as the loop would have: byte pairs always, longer ones under the limit.

    >>> countable(1, 1, 2), countable(2, 1, 3), countable(1, 1, UNLIMITED)
    (True, False, True)
    """
    return (left_len == 1 and right_len == 1) or left_len + right_len < max_len


def _merge_loop(
    symbols: list[list[int]],
    counts: Sequence[int],
    vocab: list[bytes | None],
    keys: list[bytes | None],
    key_to_id: dict[bytes, int],
    token_len: list[int],
    *,
    vocab_size: int,
    min_frequency: int,
    max_len: int,
    count_bits: int,
    progress: Callable[[int], None] | None,
    allowed: Callable[[bytes], bool] | None = None,
) -> list[tuple[int, int, int]]:
    """Run phases 4-5 of ``do_train`` from words as symbol lists; grow ``vocab``/``keys``; return the merges.

    ``allowed`` (SuperBPE's stage 2): a popped current pair whose token it rejects is dropped, not merged.
    """
    import heapq  # here: the compiled core imports this module for its checks (prepare_training), not its loops

    if count_bits == 32:

        def wrap(value: int) -> int:  # Rust's wrapping i32 arithmetic
            return (value + 2**31) % 2**32 - 2**31

    else:

        def wrap(value: int) -> int:
            return value

    def heap_count(value: int) -> int:  # `pair_counts[&pair] as u64`: an i32 sign-extends
        return value % 2**64

    # Counts as `count as i32` when emulating 32 bits.
    word_counts = [wrap(count) for count in counts]

    # 4. Pair counts and, per pair, the words holding it (count_pairs); entries with a count > 0 go on the heap.
    # Heap items: (-count, pair, seq, words); seq makes equal (count, pair) pop in push order (our rule).
    pair_counts: dict[tuple[int, int], int] = {}
    where: dict[tuple[int, int], list[int]] = {}
    for index, (word, count) in enumerate(zip(symbols, word_counts)):
        for pair in zip(word, word[1:]):
            if not countable(token_len[pair[0]], token_len[pair[1]], max_len):
                continue
            pair_counts[pair] = wrap(pair_counts.get(pair, 0) + count)
            positions = where.setdefault(pair, [])
            if not positions or positions[-1] != index:
                positions.append(index)
    heap: list[tuple[int, tuple[int, int], int, list[int]]] = []
    seq = 0
    for pair in sorted(where):
        if pair_counts[pair] > 0:
            heap.append((-heap_count(pair_counts[pair]), pair, seq, where[pair]))
            seq += 1
    heapq.heapify(heap)
    where.clear()

    # 5. Merge loop.
    merges: list[tuple[int, int, int]] = []
    reported = 0
    while len(vocab) < vocab_size and heap:
        neg_count, pair, _, positions = heapq.heappop(heap)
        current = heap_count(pair_counts[pair])
        if -neg_count != current:  # stale: re-push with the current count (a new push for the tie rule)
            heapq.heappush(heap, (-current, pair, seq, positions))
            seq += 1
            continue
        if current < 1 or min_frequency > current:
            break
        left, right = pair
        new_key = keys[left] + keys[right]  # type: ignore[operator]  # words only hold ids with a key
        if allowed is not None and not allowed(new_key):
            continue
        new_id = key_to_id.get(new_key)
        if new_id is None:
            new_id = len(vocab)
            key_to_id[new_key] = new_id
            vocab.append(new_key)
            keys.append(new_key)
            token_len.append(len(new_key))
        merges.append((left, right, new_id))

        for index in positions:
            count = word_counts[index]
            for changed, change in merge_word(symbols[index], left, right, new_id, token_len, max_len):
                pair_counts[changed] = wrap(pair_counts.get(changed, 0) + change * count)
                if change > 0:
                    positions_of = where.setdefault(changed, [])
                    if not positions_of or positions_of[-1] != index:
                        positions_of.append(index)
        for changed in sorted(where):
            if pair_counts[changed] > 0:
                heapq.heappush(heap, (-heap_count(pair_counts[changed]), changed, seq, where[changed]))
                seq += 1
        where.clear()

        if progress is not None and len(merges) - reported >= PROGRESS_EVERY:
            progress(len(merges) - reported)
            reported = len(merges)
    if progress is not None:
        progress(len(merges) - reported)
    return merges


def saved_merges(vocab: Sequence[bytes], merges: Sequence[tuple[int, int, int]]) -> list[tuple[bytes, bytes]]:
    """Return the merges as ``merges.txt`` lists them: each pair once, at its last rank, as token bytes.

    `tokenizers` keeps merges in a map from pair to (rank, new id): a pair merged twice (two tokens with the same
    bytes) keeps its last rank, and ``merges.txt`` lists the pairs by rank.

    >>> saved_merges([b"a", b"b", b"ab", b"ab"], [(0, 1, 2), (0, 1, 3)])
    [(b'a', b'b')]
    """
    pairs = list(map(operator.itemgetter(0, 1), merges))
    last_rank = dict(zip(pairs, range(len(pairs))))  # a repeated pair keeps its last rank
    if len(last_rank) != len(pairs):
        pairs = sorted(last_rank, key=last_rank.__getitem__)
    spell = vocab.__getitem__
    return list(zip(map(spell, map(operator.itemgetter(0), pairs)), map(spell, map(operator.itemgetter(1), pairs))))


def check_encoder_args(
    merges: Sequence[tuple[int, int, int]],
    byte_ids: Sequence[int],
    cache_size: int,
    whole_words: Mapping[bytes, int] | None,
) -> tuple[list[tuple[int, int, int]], list[int], int, dict[bytes, int]]:
    """Check and normalise the arguments of ``WordEncoder`` (shared with ``hf_bpe.core._core``).

    Returns:
        ``(merges, byte_ids, cache_size, whole_words)`` as plain lists/ints/dict.

    Raises:
        TypeError, ValueError: for a malformed merge, a ``byte_ids`` not of length 256, a negative id or cache size.

    >>> check_encoder_args([(1, 2, 3)], range(256), 10, None)[0]
    [(1, 2, 3)]
    """
    checked: list[tuple[int, int, int]] = []
    # Fast path, the common case (a trained or loaded model: plain int triples): checked in bulk, in C-level
    # loops (the per-merge checks below took 0.3 s on 32,000 merges, serial time in every training run).
    plain = merges = merges if type(merges) is list else list(merges)
    if set(map(type, plain)) <= {tuple} and set(map(len, plain)) <= {3}:
        flat = [i for m in plain for i in m]
        if set(map(type, flat)) <= {int} and (not flat or (min(flat) >= 0 and max(flat) <= MAX_ID)):
            checked = plain.copy()
            merges = ()  # nothing left for the slow path
    for rank, merge in enumerate(merges):
        if not isinstance(merge, (tuple, list)) or len(merge) != 3:
            raise TypeError(f"merge {rank} must be a (left_id, right_id, new_id) triple, got {merge!r}")
        triple = tuple(_as_int(i, f"merge {rank} ids") for i in merge)
        if not all(0 <= i <= MAX_ID for i in triple):
            raise ValueError(f"merge {rank} {merge!r} has an id outside 0..2**31-1")
        checked.append(triple)  # type: ignore[arg-type]
    ids = [_as_int(i, "each byte id") for i in byte_ids]
    if len(ids) != 256 or not all(0 <= i <= MAX_ID for i in ids):
        raise ValueError(f"byte_ids must hold 256 ids in 0..2**31-1 (one per byte value), got {len(ids)} values")
    cache_size = _as_int(cache_size, "cache_size")
    if cache_size < 0:
        raise ValueError(f"cache_size must be >= 0 (0 disables the cache), got {cache_size!r}")
    whole: dict[bytes, int] = {}
    if whole_words is not None:
        if not isinstance(whole_words, Mapping):
            raise TypeError(f"whole_words must be a mapping of bytes to id or None, got {type(whole_words).__name__}")
        # Fast path, as for the merges (a vocabulary: bytes keys, plain int ids): checked in bulk. The loop below
        # cost ~0.1 s of every process that loads Llama 3 (128,000 words, ignore_merges).
        values = list(whole_words.values())
        if (set(map(type, whole_words)) <= {bytes} and set(map(type, values)) <= {int}
                and (not values or (min(values) >= 0 and max(values) <= MAX_ID))):
            return checked, ids, cache_size, dict(whole_words)
        for word, token_id in whole_words.items():
            if type(word) is not bytes:
                raise TypeError(f"whole_words keys must be bytes, got {word!r} ({type(word).__name__})")
            token_id = _as_int(token_id, "each whole_words id")
            if not 0 <= token_id <= MAX_ID:
                raise ValueError(f"whole_words[{word!r}] = {token_id!r} is outside 0..2**31-1")
            whole[word] = token_id
    return checked, ids, cache_size, whole


class WordEncoder:
    """Encode pre-tokens with ranked merges exactly as ``tokenizers``' ``Word::merge_all`` (no dropout).

    Args:
        merges: ``(left_id, right_id, new_id)`` in rank order; if a pair repeats, its last rank wins.
        byte_ids: ``byte_ids[b]`` is the id of the single byte ``b``.
        cache_size: how many words to memoise; the cache is cleared when full; 0 disables it.
        whole_words: if given, a word found in it is that one id, before any merging (``ignore_merges``).

    >>> encoder = WordEncoder([(1, 2, 300), (300, 3, 301)], list(range(256)))
    >>> encoder.encode_word(bytes([1, 2, 3, 1, 2])), encoder.encode_words([b"\\x01", b"\\x01\\x02"])
    ([301, 300], [1, 300])
    """

    def __init__(
        self,
        merges: Sequence[tuple[int, int, int]],
        byte_ids: Sequence[int],
        *,
        cache_size: int = 65536,
        whole_words: Mapping[bytes, int] | None = None,
    ) -> None:
        checked, ids, cache_size, whole = check_encoder_args(merges, byte_ids, cache_size, whole_words)
        # pair -> (rank, new_id); later ranks overwrite earlier ones, as tokenizers' HashMap collect does.
        self.ranks: dict[tuple[int, int], tuple[int, int]] = {
            (left, right): (rank, new) for rank, (left, right, new) in enumerate(checked)
        }
        self.byte_ids = tuple(ids)
        self.cache_size = cache_size
        self.whole_words = whole
        # Memo of word -> ids. It must stay a dict named `cache`: datasets' hasher skips exactly that attribute.
        self.cache: dict[bytes, tuple[int, ...]] = {}

    def _merge_all(self, word: bytes) -> list[int]:
        # Word::merge_all: symbols form a linked list; a min-heap of (rank, pos, new_id) entries; an entry is
        # skipped when its left symbol was absorbed, has no right neighbour, or the current pair there no longer
        # maps to the same new_id (tokenizers compares new ids, not ranks).
        import heapq

        ranks = self.ranks
        ids = [self.byte_ids[b] for b in word]
        n = len(ids)
        alive = [True] * n
        prev = list(range(-1, n - 1))
        nxt = [*range(1, n), -1]
        heap = []
        for pos in range(n - 1):
            found = ranks.get((ids[pos], ids[pos + 1]))
            if found is not None:
                heap.append((found[0], pos, found[1]))
        heapq.heapify(heap)
        while heap:
            _rank, pos, new_id = heapq.heappop(heap)
            if not alive[pos] or nxt[pos] == -1:
                continue
            right = nxt[pos]
            found = ranks.get((ids[pos], ids[right]))
            if found is None or found[1] != new_id:
                continue
            ids[pos] = new_id
            alive[right] = False
            nxt[pos] = nxt[right]
            if nxt[pos] != -1:
                prev[nxt[pos]] = pos
            if prev[pos] != -1:
                found = ranks.get((ids[prev[pos]], new_id))
                if found is not None:
                    heapq.heappush(heap, (found[0], prev[pos], found[1]))
            if nxt[pos] != -1:
                found = ranks.get((new_id, ids[nxt[pos]]))
                if found is not None:
                    heapq.heappush(heap, (found[0], pos, found[1]))
        return [token for token, keep in zip(ids, alive) if keep]

    def encode_word(self, word: bytes) -> list[int]:
        """Encode one pre-token.

        Args:
            word: the pre-token's bytes.

        Returns:
            Its token ids.

        >>> WordEncoder([], range(256)).encode_word(b"hi")
        [104, 105]
        """
        cached = self.cache.get(word)
        if cached is not None:
            return list(cached)
        if type(word) is not bytes:
            raise TypeError(f"word must be bytes, got {word!r} ({type(word).__name__}); encode str as UTF-8")
        whole = self.whole_words.get(word)
        result = [whole] if whole is not None else self._merge_all(word)
        if self.cache_size:
            if len(self.cache) >= self.cache_size:  # bounded: drop everything when full
                self.cache.clear()
            self.cache[word] = tuple(result)
        return result

    def encode_words(self, words: Iterable[bytes]) -> list[int]:
        """Encode pre-tokens and concatenate their ids.

        Args:
            words: the pre-tokens' bytes.

        Returns:
            All their token ids, in order.

        >>> WordEncoder([(104, 105, 256)], range(256)).encode_words([b"hi", b"!"])
        [256, 33]
        """
        out: list[int] = []
        for word in words:
            out.extend(self.encode_word(word))
        return out
