"""Pure-Python spec of a seeded merge loop: ``tokenizers``' ``BpeTrainer`` continued from segmented words.

:func:`continue_merges` starts phase 5 of :func:`hf_bpe.core._reference.train_merges` from words given as ids of an
existing vocabulary (what ``hf_bpe.extend`` needs); ``hf_bpe.core._core.continue_merges`` is held equal to it. The
loop itself is the one of ``_reference`` (``_merge_loop``), unchanged: only phase 4's starting state differs.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from itertools import chain, compress
from typing import NamedTuple

from ._reference import MAX_COUNT, MAX_ID, MAX_WEIGHTED_LENGTH, _as_int, _merge_loop, prepare_training

__all__ = ["ContinuationSetup", "continue_merges", "prepare_continuation", "superword_allowed"]


class ContinuationSetup(NamedTuple):
    """Checked input of :func:`continue_merges`, shared with ``hf_bpe.core._core``."""

    symbols: list[list[int]]  # each word as ids, pairs-free words (fewer than 2 symbols) dropped
    counts: list[int]  # aligned with symbols
    keys: list[bytes | None]  # the seeded vocabulary: bytes of each id, None for an id no merge can build
    key_to_id: dict[bytes, int]  # the first id of each key
    max_len: int  # max_token_length, or UNLIMITED
    max_words: int  # SuperBPE: most words a new token may span, 0 for no limit
    forbidden: bytes  # SuperBPE: bytes no new token may contain, b"" for none


def prepare_continuation(
    sequences: Iterable[Sequence[int]],
    counts: Iterable[int],
    *,
    keys: Sequence[bytes | None],
    vocab_size: int,
    min_frequency: int,
    max_token_length: int | None,
    progress: Callable[[int], None] | None,
    max_words: int | None = None,
    forbidden: bytes = b"",
) -> ContinuationSetup:
    """Check the arguments of :func:`continue_merges` (the same rules as :func:`prepare_training`).

    Raises:
        TypeError, ValueError: for an argument of the wrong type or out of range, an id a word holds that is
            outside ``keys`` or names an id without bytes.

    >>> setup = prepare_continuation([[1, 0], [0]], [3, 4], keys=[b"a", b"b", None], vocab_size=4,
    ...                              min_frequency=0, max_token_length=None, progress=None)
    >>> setup.symbols, setup.counts, setup.key_to_id
    ([[1, 0]], [3], {b'a': 0, b'b': 1})
    """
    # 1. Options, as train_merges checks them (no specials: the seeded vocabulary has them already).
    base = prepare_training([], [], vocab_size=2**62, min_frequency=min_frequency, special_tokens=(),
                            max_token_length=max_token_length, count_bits=64, progress=progress)
    vocab_size = _as_int(vocab_size, "vocab_size")
    if max_words is not None and (isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1):
        raise ValueError(f"max_words must be None or an int >= 1, got {max_words!r}")
    if type(forbidden) is not bytes:
        raise TypeError(f"forbidden must be bytes (b'' for none), got {type(forbidden).__name__} {forbidden!r:.40}")
    if isinstance(keys, (bytes, str)) or not isinstance(keys, Sequence):
        raise TypeError(f"keys must be a sequence of bytes or None (one per id), got {type(keys).__name__}")
    keys = list(keys)
    if not set(map(type, keys)) <= {bytes, type(None)}:
        key = next(k for k in keys if k is not None and type(k) is not bytes)
        raise TypeError(f"keys must hold bytes or None, got {key!r} ({type(key).__name__})")
    if len(keys) > MAX_ID:
        raise ValueError(f"keys holds {len(keys)} ids; ids must stay below 2**31")
    if vocab_size < len(keys):
        raise ValueError(f"vocab_size={vocab_size!r} is smaller than the seeded vocabulary ({len(keys)} ids); "
                         f"pass at least {len(keys)}")
    key_to_id: dict[bytes, int] = {}
    for index, key in enumerate(keys):
        if key is not None:
            key_to_id.setdefault(key, index)

    # 2. Words: id sequences (each id with bytes) and counts in 1..2**63-1; words without a pair are dropped.
    if isinstance(sequences, (bytes, str)) or isinstance(counts, (bytes, str)):
        raise TypeError(f"sequences and counts must be sequences, got {type(sequences).__name__} and "
                        f"{type(counts).__name__}")
    sequences = [list(word) for word in sequences]  # copies: the reference loop merges them in place
    counts = list(counts)
    if len(sequences) != len(counts):
        raise ValueError(f"sequences and counts must have the same length, got {len(sequences)} and {len(counts)}")
    # The common case (lists of plain ints, all valid) is checked in bulk with C-level builtins: extending GPT-2 on
    # 100 MB hands over millions of words. Anything else takes the word-by-word loop, which names the bad value.
    flat = list(chain.from_iterable(sequences))
    holes = {index for index, key in enumerate(keys) if key is None}
    fast = (set(map(type, flat)) <= {int} and set(map(type, counts)) <= {int}
            and (not flat or (min(flat) >= 0 and max(flat) < len(keys))) and holes.isdisjoint(flat)
            and (not counts or (min(counts) >= 1 and max(counts) <= MAX_COUNT)))
    del flat
    if not fast:
        checked = []
        for word, count in zip(sequences, counts):
            count = _as_int(count, "each count")
            if not 1 <= count <= MAX_COUNT:
                raise ValueError(f"the count of {word!r:.80} is {count!r}; counts must be in 1..2**63-1")
            ids = [_as_int(i, "each id") for i in word]
            for i in ids:
                if not 0 <= i < len(keys) or keys[i] is None:
                    raise ValueError(f"word {word!r:.80} holds id {i!r}, which the seeded vocabulary has no bytes "
                                     f"for (it has ids 0..{len(keys) - 1}); encode words with the base's own ids")
            checked.append(ids)
            counts[len(checked) - 1] = count
        sequences = checked
    lengths = list(map(len, sequences))
    weighted = sum(map(operator.mul, counts, lengths))
    if weighted > MAX_WEIGHTED_LENGTH:
        raise ValueError(f"sum(count * len(word)) is {weighted}, above 2**61: pair counts could overflow 64 bits; "
                         "scale the counts down")
    paired = [length >= 2 for length in lengths]
    symbols, kept = list(compress(sequences, paired)), list(compress(counts, paired))
    return ContinuationSetup(symbols, kept, keys, key_to_id, base.max_len, max_words or 0, forbidden)


def continue_merges(
    sequences: Iterable[Sequence[int]],
    counts: Iterable[int],
    *,
    keys: Sequence[bytes | None],
    vocab_size: int,
    min_frequency: int = 0,
    max_token_length: int | None = None,
    progress: Callable[[int], None] | None = None,
    max_words: int | None = None,
    forbidden: bytes = b"",
) -> tuple[list[bytes | None], list[tuple[int, int, int]]]:
    """Continue the merge loop of :func:`train_merges` from words already segmented into a vocabulary's ids.

    The seeded state: ``keys[i]`` is the bytes of id ``i`` (``None`` for an id no merge can build: a hole, a
    special outside the byte-level alphabet); a merge whose bytes are already a key reuses that key's (first)
    id, a new token takes the next id, ``len(keys)``, ``len(keys) + 1``, .... The words are the symbol lists the
    loop starts from; their pairs are counted as phase 4 would (:func:`countable`) and each pair gets one entry
    holding every word where it occurs. Then phase 5 runs unchanged. From byte words and the initial vocabulary
    of :func:`train_merges`, this is :func:`train_merges`.

    Args:
        sequences: each distinct word as a sequence of ids (in any order; repeats are allowed and add up).
        counts: the count (1..2**63-1) of each word.
        keys: the bytes of each existing id, or None.
        vocab_size: stop when the vocabulary has this many ids (at least ``len(keys)``).
        min_frequency, max_token_length, progress: as :func:`train_merges`.
        max_words, forbidden: SuperBPE's stage-2 rules (:func:`superword_allowed`): a popped pair whose token
            would span more than ``max_words`` words or contain ``forbidden`` is dropped, as the authors' fork of
            ``BpeTrainer`` drops it (a later step's new entry for it is dropped again).

    Returns:
        ``(keys, merges)``: the keys of every id, old and new; the merges learned, ``(left, right, new)``.

    Raises:
        TypeError, ValueError: see :func:`prepare_continuation`.

    >>> keys = [bytes([b]) for b in range(256)] + [b"ab"]
    >>> vocab, merges = continue_merges([[256, 99], [97, 98, 99]], [2, 1], keys=keys, vocab_size=259)
    >>> vocab[257:], merges  # "ab" exists: id 256 is reused, and BpeTrainer's new entry for (ab, c) repeats it
    ([b'abc'], [(256, 99, 257), (97, 98, 256), (256, 99, 257)])
    """
    setup = prepare_continuation(sequences, counts, keys=keys, vocab_size=vocab_size, min_frequency=min_frequency,
                                 max_token_length=max_token_length, progress=progress, max_words=max_words,
                                 forbidden=forbidden)
    vocab, keys = list(setup.keys), list(setup.keys)
    token_len = [0 if key is None else len(key) for key in keys]
    merges = _merge_loop(setup.symbols, setup.counts, vocab, keys, setup.key_to_id, token_len,
                         vocab_size=vocab_size, min_frequency=min_frequency, max_len=setup.max_len, count_bits=64,
                         progress=progress, allowed=lambda key: superword_allowed(key, setup.max_words, forbidden))
    return vocab, merges


def superword_allowed(key: bytes, max_words: int, forbidden: bytes) -> bool:
    """Return whether SuperBPE's stage-2 rules let a merge build ``key``.

    The authors' fork counts words as the parts of the byte-level token split on ``Ġ`` (the space byte) with empty
    parts left out, i.e. the maximal runs of non-space bytes; at most ``max_words`` (0: no limit), and no
    ``forbidden`` substring (b"": none; the fork forbids ``b": "``).

    >>> [superword_allowed(key, 4, b": ") for key in (b" of the", b"a b c d e", b"a: b", b"  a  ")]
    [True, False, False, True]
    """
    if forbidden and forbidden in key:
        return False
    return not max_words or sum(1 for part in key.split(b" ") if part) <= max_words
