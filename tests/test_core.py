"""The compiled core equals the pure-Python reference, and tokenizers on real corpora."""

from __future__ import annotations

import collections
import json
import pickle
import random
import time

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.core import _core
from hf_bpe.core import _reference
from hf_bpe.core.bytelevel import token_to_str
from hf_bpe.tools.peers import train_tokenizers

# -- training: core == reference ---------------------------------------------------------------------------------

# Small alphabets give many equal counts (ties) and repeated runs; "é" adds 2-byte symbols; specials include a byte,
# strings the merges can build ("ab", "Ġa" = b" a") and one that can never match (a real space).
WORD = st.binary(min_size=0, max_size=9).map(lambda raw: bytes(b"ab a\xc3\xa9"[x % 6] for x in raw))
COUNT = st.one_of(
    st.integers(1, 4),
    st.integers(2**31 - 3, 2**31 + 3),
    st.integers(2**32 - 2, 2**32 + 2),
    st.integers(1, 2**40),
)
SPECIAL = st.sampled_from(["a", "ab", "Ġa", "<s>", "x y", "aab"])


@st.composite
def training_cases(draw):
    counts = draw(st.dictionaries(WORD, COUNT, min_size=1, max_size=14))
    specials = draw(st.lists(SPECIAL, max_size=4))
    options = {
        "vocab_size": len(set(specials)) + 256 + draw(st.integers(0, 40)),
        "min_frequency": draw(st.sampled_from([0, 0, 1, 2, 5, 2**31])),
        "special_tokens": specials,
        "max_token_length": draw(st.sampled_from([None, None, 1, 2, 3, 4, 6])),
        "count_bits": draw(st.sampled_from([64, 32])),
    }
    return list(counts), list(counts.values()), options


@settings(max_examples=400, deadline=None, derandomize=True)
@given(training_cases())
def test_core_train_equals_reference(case) -> None:
    words, counts, options = case
    expected = _reference.train_merges(words, counts, **options)
    assert _core.train_merges(words, counts, **options) == expected
    order = list(range(len(words)))
    random.Random(len(words)).shuffle(order)
    assert _core.train_merges([words[i] for i in order], [counts[i] for i in order], **options) == expected


def test_core_train_rust_unit_example_and_progress() -> None:
    counts = {"roses": 1, "are": 2, "red": 1, "voilets": 1, "blue": 1, "BERT": 1, "is": 2, "big": 1, "and": 1,
              "so": 1, "GPT-2": 1}
    vocab, merges = _core.train_merges([w.encode() for w in counts], list(counts.values()), vocab_size=30000,
                                       min_frequency=2)
    assert [vocab[new] for _, _, new in merges] == [b"re", b"are", b"is"]
    words = [bytes([a, b]) for a in range(33, 93) for b in range(33, 93)]
    calls: list[int] = []
    result = _core.train_merges(words, [1] * len(words), vocab_size=256 + 2500, progress=calls.append)
    assert calls == [1000, 1000, 500]
    assert result == _reference.train_merges(words, [1] * len(words), vocab_size=256 + 2500)


@pytest.mark.parametrize(
    ("words", "counts", "kwargs", "error"),
    [
        ([b"ab"], [1], {"vocab_size": 255}, ValueError),
        (["ab"], [1], {"vocab_size": 300}, TypeError),
        ([b"ab", b"ab"], [1, 1], {"vocab_size": 300}, ValueError),
        ([b"ab"], [0], {"vocab_size": 300}, ValueError),
        ([b"ab"], [1], {"vocab_size": 300, "count_bits": 8}, ValueError),
        # Lists of bytes and ints are checked in C first; every failed check must still give the reference's error.
        ([b"x", b"ab", b"y", b"ab"], [1, 2, 3, 4], {"vocab_size": 300}, ValueError),
        ([b"ab", bytearray(b"cd")], [1, 1], {"vocab_size": 300}, TypeError),
        ([b"ab"], [True], {"vocab_size": 300}, TypeError),
        ([b"ab"], [1.0], {"vocab_size": 300}, TypeError),
        ([b"ab"], [-1], {"vocab_size": 300}, ValueError),
        ([b"ab"], [2**63], {"vocab_size": 300, "count_bits": 32}, ValueError),
        ([b"ab", b"cd"], [1], {"vocab_size": 300}, ValueError),
        ([b"abcd", b"e"], [2**60, 1], {"vocab_size": 300}, ValueError),  # sum(count * len(word)) > 2**61
        (b"ab", [1], {"vocab_size": 300}, TypeError),
        ([b"ab"], "1", {"vocab_size": 300}, TypeError),
        (5, [1], {"vocab_size": 300}, TypeError),
    ],
)
def test_core_train_rejects_what_the_reference_rejects(words, counts, kwargs, error) -> None:
    with pytest.raises(error) as core_error:
        _core.train_merges(words, counts, **kwargs)
    with pytest.raises(error) as reference_error:
        _reference.train_merges(words, counts, **kwargs)
    assert str(core_error.value) == str(reference_error.value)


class Count(int):
    """An int subclass: the core leaves it to the reference, which takes it as an int."""


def test_core_train_takes_what_the_reference_takes() -> None:
    words, counts = [b"hug", b"pug", b"hugs", b"abab"], [10, 5, 5, 2**40]
    expected = _reference.train_merges(words, counts, vocab_size=270)
    assert _core.train_merges(tuple(words), tuple(counts), vocab_size=270) == expected
    assert _core.train_merges(iter(words), (count for count in counts), vocab_size=270) == expected
    assert _core.train_merges(words, [Count(count) for count in counts], vocab_size=270) == expected
    # The 2**61 bound on sum(count * len(word)) only guards 64-bit counts.
    huge = [2**63 - 1, 2**62 + 5, 3]
    expected = _reference.train_merges([b"abab", b"ba", b"bb"], huge, vocab_size=270, count_bits=32)
    assert _core.train_merges([b"abab", b"ba", b"bb"], huge, vocab_size=270, count_bits=32) == expected


def mid_size_corpus(scale: int) -> tuple[list[bytes], list[int]]:
    """6000 distinct words of 10-30 symbols over "abcd" (plus "é", two bytes), counts 1..50 times `scale`."""
    rng = random.Random(7)
    counts: dict[bytes, int] = {}
    while len(counts) < 6000:
        word = "".join(rng.choice("abcdé") for _ in range(rng.randint(10, 30))).encode()
        counts[word] = rng.randint(1, 50) * scale
    return list(counts), list(counts.values())


@pytest.mark.parametrize(
    ("scale", "options"),
    [
        (1, {"vocab_size": 800}),
        (1, {"vocab_size": 800, "special_tokens": ["ab", "abcd", "Ġa"], "max_token_length": 7}),
        (2**26 + 1, {"vocab_size": 700, "count_bits": 32, "min_frequency": 3}),  # pair counts wrap at 32 bits
    ],
)
def test_core_train_equals_reference_on_a_mid_size_corpus(scale, options) -> None:
    # Big enough for what the small cases above never reach: word lists of popped entries outgrow the live
    # ones (the core compacts them), words shrink to half their symbols (repacked), and most entries wait
    # below the heap's threshold.
    words, counts = mid_size_corpus(scale)
    expected = _reference.train_merges(words, counts, **options)
    assert _core.train_merges(words, counts, **options) == expected
    assert _core.train_merges(words[::-1], counts[::-1], **options) == expected


# -- encoding: core == reference ---------------------------------------------------------------------------------

# Arbitrary merges over a few ids (repeated pairs, new ids that are also inputs, chains) stress the queue logic
# beyond what a trained vocabulary produces, including the expired-entry rule.
MERGE = st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 9))


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    merges=st.lists(MERGE, max_size=25),
    words=st.lists(st.binary(max_size=12).map(lambda raw: bytes(x % 4 for x in raw)), max_size=12),
    cache_size=st.sampled_from([0, 1, 3, 65536]),
    whole=st.sampled_from([None, {b"\x01\x02": 7, b"": 8}]),
)
def test_core_encoder_equals_reference(merges, words, cache_size, whole) -> None:
    byte_ids = [b % 4 for b in range(256)]  # several bytes share an id
    core = _core.WordEncoder(merges, byte_ids, cache_size=cache_size, whole_words=whole)
    reference = _reference.WordEncoder(merges, byte_ids, cache_size=cache_size, whole_words=whole)
    assert core.encode_words(words) == reference.encode_words(words)
    assert core.encode_words(words) == reference.encode_words(words)  # again, from the caches
    assert [core.encode_word(w) for w in words] == [reference.encode_word(w) for w in words]
    assert len(reference.cache) <= cache_size


# Words of 1..40 bytes over a 4-byte alphabet (around the short-piece table's 15/16-byte edge and the 2-byte fast
# path); whole words of every kind: empty, short, 15 and 16 bytes, and an id too large to keep inline (2**31 - 1).
WHOLE_WORDS = {b"\x01\x02": 7, b"": 8, b"\x00" * 15: 9, b"\x01" * 16: 3, b"\x01\x02\x03": 2**31 - 1, b"\x02": 5}


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    merges=st.lists(MERGE, max_size=30),
    words=st.lists(st.one_of(st.binary(min_size=1, max_size=40), st.sampled_from([b"\x01" * n for n in
                                                                                    (2, 15, 16, 32, 33)]))
                   .map(lambda raw: bytes(x % 4 for x in raw)), max_size=40),
    cache_size=st.sampled_from([0, 1, 2, 17, 65536]),
    whole=st.sampled_from([None, WHOLE_WORDS]),
    seeded=st.booleans(),
)
def test_core_encoder_short_piece_table_equals_reference(merges, words, cache_size, whole, seeded) -> None:
    # The short-piece table (csrc/piece_cache.hpp): keys inline, ids inline or spilled (> 4), wiped back to its
    # image when full, optionally seeded with every short spelling the merges build (repeated pairs, merges that
    # make an existing id, ids no merge reaches: a seeded spelling holds what encoding it gives, not its id).
    byte_ids = [b % 4 for b in range(256)]
    core = _core.WordEncoder(merges, byte_ids, cache_size=cache_size, whole_words=whole)
    core._seed_cache(seeded)
    reference = _reference.WordEncoder(merges, byte_ids, cache_size=cache_size, whole_words=whole)
    expected = reference.encode_words(words)
    assert core.encode_words(words) == expected
    assert core.encode_words(words[::-1]) == reference.encode_words(words[::-1])
    assert [core.encode_word(w) for w in words] == [reference.encode_word(w) for w in words]
    assert core.encode_words(words) == expected


# Texts whose gpt2 pieces run 1..40+ bytes (letters, digits, punctuation, spaces, 2- and 3-byte characters), some
# with over 64 pieces (the probe loop's block); whole words that are pieces, one with an id too large to keep inline.
PROBE_TEXT = st.one_of(
    st.text(alphabet="ab1 !\u00e9\u4e2d", max_size=60),
    st.sampled_from(["a " * 70, "ab1!" * 40, "\u00e9" * 20 + " ab" * 66, " " + "b" * 15 + " " + "a" * 16]),
    # Several of encode_pieces' blocks (128 pieces): every block but the last loads its keys 16 bytes at a time
    # with no test per piece, the last one piece by piece near the text's end.
    st.lists(st.sampled_from(["a", " ab", "1", "!", " ", "\u00e9", "\u4e2d", " " + "b" * 17, " " + "a" * 14]),
             min_size=120, max_size=700).map("".join),
    st.lists(st.sampled_from(["a", " ab", "1", "!", " ", "\n", " " + "b" * 17, " " + "a" * 14]),  # ASCII: masks
             min_size=120, max_size=700).map("".join),
)
PROBE_WHOLE = {b"ab": 7, b" a": 8, b"1": 5, "\u4e2d".encode(): 9, b" " + b"b" * 15: 3, b"!!": 2**31 - 1}


def _gpt2_text_encoders(merges, cache_size, whole, seeded):
    """The compiled and reference encoders over a 4-id byte alphabet, the gpt2 pretokenizer and its scanner."""
    from hf_bpe.core import _scanner
    from hf_bpe.core.pretokenize import Pretokenizer

    byte_ids = [b % 4 for b in range(256)]
    core = _core.WordEncoder(merges, byte_ids, cache_size=cache_size, whole_words=whole)
    core._seed_cache(seeded)
    reference = _reference.WordEncoder(merges, byte_ids, cache_size=cache_size, whole_words=whole)
    return core, reference, Pretokenizer("gpt2"), _scanner.pieces_function(), _scanner.SCANNERS["gpt2"]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    merges=st.lists(MERGE, max_size=30),
    texts=st.lists(PROBE_TEXT, max_size=8),
    cache_size=st.sampled_from([0, 1, 2, 17, 65536]),
    whole=st.sampled_from([None, PROBE_WHOLE]),
    seeded=st.booleans(),
)
def test_core_encoder_texts_probe_loop_equals_reference(merges, texts, cache_size, whole, seeded) -> None:
    # Encoder::encode_pieces (batches as lists and arrays, single texts): keys and slot prefetches for a block of
    # pieces, then lookups storing 4 id words per hit; 1-byte pieces as byte ids, misses, spilled ids (> 4), long
    # pieces and whole words the slow way; wipes of small caches. Arbitrary merges: repeated pairs, merges that make
    # an existing id, ids no byte reaches.
    core, reference, pretokenizer, pieces, pid = _gpt2_text_encoders(merges, cache_size, whole, seeded)
    expected = [reference.encode_words(pretokenizer.split_bytes(text)) for text in texts]
    for _ in range(2):  # cold, then from the caches
        assert core.encode_texts(texts, pieces, pid, 1) == expected
        ids, offsets = core.encode_texts_arrays(texts, pieces, pid, 1)
        flat, starts = memoryview(ids).tolist(), memoryview(offsets).tolist()
        assert [flat[starts[k]:starts[k + 1]] for k in range(len(texts))] == expected
        assert [core.encode_text(text, pieces, pid) for text in texts] == expected


# Long pieces that are whole words (ignore_merges; Llama 3's long Han runs): 16..300 bytes, around the word cache's
# 255-byte key limit, beside pieces one byte longer or shorter that are not whole words and merge.
LONG_WHOLE = {b" " + b"b" * 15: 3, b" " + b"b" * 40: 4, b" " + b"a" * 254: 5, b" " + b"a" * 299: 6, b"ab" * 20: 7}
LONG_TEXT = st.lists(st.sampled_from([" " + "b" * n for n in (14, 15, 16, 40, 41)] + [" " + "a" * n for n in
                                     (253, 254, 255, 299)] + ["ab" * 20, " ab", "\u4e2d" * 6]), max_size=12)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    merges=st.lists(MERGE, max_size=30),
    texts=st.lists(LONG_TEXT.map("".join), max_size=6),
    cache_size=st.sampled_from([0, 1, 2, 65536]),
    seeded=st.booleans(),
)
def test_core_encoder_long_whole_words_equal_reference(merges, texts, cache_size, seeded) -> None:
    # A long piece asks the word cache before the whole words (the cache holds what encode_uncached gives): cold,
    # warm, on 1 and 2 threads (the batch's shared table), word by word and text by text, with bounded caches.
    core, reference, pretokenizer, pieces, pid = _gpt2_text_encoders(merges, cache_size, LONG_WHOLE, seeded)
    words = [piece for text in texts for piece in pretokenizer.split_bytes(text)]
    expected = [reference.encode_words(pretokenizer.split_bytes(text)) for text in texts]
    for threads in (1, 2, 1):
        assert core.encode_texts(texts, pieces, pid, threads) == expected
    assert [core.encode_text(text, pieces, pid) for text in texts] == expected
    assert core.encode_words(words) == reference.encode_words(words)
    assert [core.encode_word(w) for w in words] == [reference.encode_word(w) for w in words]


def test_core_encoder_texts_find_seeded_spellings() -> None:
    # The batch loop's keys (16-byte loads, or byte by byte near a text's end) equal the keys the seeded image was
    # built with: every piece that is a spelling hits, far from the end and near it; so does a 1-byte piece (every
    # image keys the 256 bytes, so that the loop has no branch on a piece's length).
    from hf_bpe.core import _scanner

    from hf_bpe.core.pretokenize import Pretokenizer

    # Spellings of 3, 4 and 13 bytes (" abcabcabcabc": its second 8 bytes masked too); the last merge's result
    # is not its own id (" abc" merges first).
    merges = [(97, 98, 256), (256, 99, 257), (32, 257, 258), (32, 256, 259), (257, 257, 261), (261, 261, 262),
              (32, 262, 263)]
    core = _core.WordEncoder(merges, list(range(256)))
    core._seed_cache(True)
    text = " abc abcabcabcabc ab abc" + " ab" * 10 + " abcabcabcabc abc."
    ids = core.encode_texts([text], _scanner.pieces_function(), _scanner.SCANNERS["gpt2"], 1)
    reference = _reference.WordEncoder(merges, list(range(256)))
    assert ids == [reference.encode_words(Pretokenizer("gpt2").split_bytes(text))]
    assert core._cache_stats() | {"seeded": 0} == {"hits": 17, "misses": 0, "uncached": 0, "wipes": 0, "seeded": 0}


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    text=st.text(alphabet="ab .,'\n\u00e9", max_size=200),
    wholes=st.dictionaries(st.sampled_from([b"a", b".", b" ", b"ab", b" ab", b"\xc3"]), st.integers(300, 310),
                           max_size=3),
    placeholder=st.booleans(),
    seeded=st.booleans(),
    cache_size=st.sampled_from([0, 2, 65536]),
)
def test_core_encoder_texts_single_bytes_as_keys_equal_reference(text, wholes, placeholder, seeded,
                                                                 cache_size) -> None:
    # Every pieces table keys the 256 single bytes (encode_pieces then looks 1-byte pieces up with no branch on a
    # piece's length): the ids stay the reference's with whole words that are single bytes, shared byte ids, a
    # missing byte's placeholder id (too large for a slot: that byte is merged every time), seeded or not.
    from hf_bpe.core import _scanner

    from hf_bpe.core.pretokenize import Pretokenizer

    merges = [(97, 98, 256), (32, 256, 257), (46, 46, 258)]
    byte_ids = [b if b != 10 else 11 for b in range(256)]  # \n and \x0b share an id
    if placeholder:
        byte_ids[0xC3] = 2**31 - 1
    core = _core.WordEncoder(merges, byte_ids, cache_size=cache_size, whole_words=wholes or None)
    core._seed_cache(seeded)
    reference = _reference.WordEncoder(merges, byte_ids, cache_size=cache_size, whole_words=wholes or None)
    expected = reference.encode_words(Pretokenizer("gpt2").split_bytes(text))
    for _ in range(2):  # cold, then from the table
        assert core.encode_texts([text], _scanner.pieces_function(), _scanner.SCANNERS["gpt2"], 1) == [expected]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    pairs=st.lists(st.tuples(st.integers(0, 24), st.integers(0, 24)), max_size=40),
    words=st.lists(st.binary(min_size=1, max_size=40).map(lambda raw: bytes(x % 8 for x in raw)), max_size=30),
    cache_size=st.sampled_from([0, 2, 65536]),
)
def test_core_encoder_scan_merge_equals_reference(pairs, words, cache_size) -> None:
    # Merges as trained vocabularies make them, each new id made by one merge (16, 17, ...; later merges may use
    # it): the compiled encoder merges words of <= 32 bytes by a scan instead of a heap. Repeated pairs (the last
    # wins, the first's new id is then made by no pair) and pairs no byte reaches included.
    merges = [(left, right, 16 + i) for i, (left, right) in enumerate(pairs)]
    byte_ids = [b % 8 for b in range(256)]
    core = _core.WordEncoder(merges, byte_ids, cache_size=cache_size)
    reference = _reference.WordEncoder(merges, byte_ids, cache_size=cache_size)
    assert core.encode_words(words) == reference.encode_words(words)
    assert [core.encode_word(w) for w in words] == [reference.encode_word(w) for w in words]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    data=st.data(),
    byte_base=st.sampled_from([0, 1021, 1100]),
    new_base=st.sampled_from([16, 1018, 1030]),
    rising=st.booleans(),
    words=st.lists(st.binary(min_size=1, max_size=80).map(lambda raw: bytes(x % 4 for x in raw)), max_size=20),
)
def test_core_encoder_scan_merge_across_the_grid_side_equals_reference(data, byte_base, new_base, rising,
                                                                      words) -> None:
    # The short-word scan reads the keys of pairs of ids < 1024 from a grid (csrc/rank_grid.hpp) and the others from
    # the pair table: byte ids and new ids below, across and above the grid's side, in rank order (new ids rise with
    # the ranks: the keys are new ids) or shuffled (the keys are ranks); words of up to 32 bytes (branching scan), up
    # to 64 (min then search) and longer (the heap).
    news = [new_base + i for i in range(24)]
    pool = [byte_base + b for b in range(4)] + news
    pairs = data.draw(st.lists(st.tuples(st.sampled_from(pool), st.sampled_from(pool)), min_size=1, max_size=24))
    merges = [(left, right, news[i]) for i, (left, right) in enumerate(pairs)]
    if not rising:
        merges = data.draw(st.permutations(merges))
    byte_ids = [byte_base + b % 4 for b in range(256)]
    core = _core.WordEncoder(merges, byte_ids)
    reference = _reference.WordEncoder(merges, byte_ids)
    assert core.encode_words(words) == reference.encode_words(words)
    assert [core.encode_word(w) for w in words] == [reference.encode_word(w) for w in words]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    wholes=st.dictionaries(st.binary(max_size=40).map(lambda raw: bytes(x % 6 for x in raw)),
                           st.integers(0, 2**31 - 2), max_size=400),
    extra=st.lists(st.binary(min_size=1, max_size=40).map(lambda raw: bytes(x % 6 for x in raw)), max_size=20),
    cache_size=st.sampled_from([0, 65536]),
)
def test_core_encoder_whole_words_table_equals_reference(wholes, extra, cache_size) -> None:
    # ignore_merges' whole words live in an open-addressing table of their own (csrc/whole_words.hpp, grown by
    # doubling from 16 slots): every word found with its id (the empty word, words of 1-40 bytes), every other
    # piece merged, short pieces through the pieces table and long ones through the word cache, cold and warm.
    merges = [(0, 1, 10), (10, 2, 11), (3, 3, 12), (12, 4, 13)]
    byte_ids = [b % 6 for b in range(256)]
    core = _core.WordEncoder(merges, byte_ids, cache_size=cache_size, whole_words=wholes)
    reference = _reference.WordEncoder(merges, byte_ids, cache_size=cache_size, whole_words=wholes)
    words = [w for w in wholes if w] + extra + [w[:-1] for w in wholes if len(w) > 1]
    for _ in range(2):
        assert core.encode_words(words) == reference.encode_words(words)
    assert [core.encode_word(w) for w in words] == [reference.encode_word(w) for w in words]


@st.composite
def spelled_merges(draw):
    """Merges as a converted vocabulary (Llama 3's tokenizer.json) makes them: each token made by every split of its
    spelling into two tokens, so one id comes from several pairs, in a shuffled rank order (an input may be made by
    a later merge). Also duplicate spellings (a repeated pair then makes another id: the last wins), tokens no
    split reaches, and merges of ids no byte reaches. Bytes over {0..3}, the byte ids shared (b % 4)."""
    spellings = draw(st.lists(st.binary(min_size=2, max_size=9).map(lambda raw: bytes(x % 4 for x in raw)),
                              max_size=40))
    tokens = [(spelling, 4 + i) for i, spelling in enumerate(spellings)]
    ids = {bytes([b]): b for b in range(4)} | dict(tokens)  # a duplicate spelling: its last id
    merges = [(ids[spelling[:cut]], ids[spelling[cut:]], new) for spelling, new in tokens
              for cut in range(1, len(spelling)) if spelling[:cut] in ids and spelling[cut:] in ids]
    merges += draw(st.lists(st.tuples(st.integers(60, 70), st.integers(0, 70), st.integers(71, 80)), max_size=3))
    return draw(st.permutations(merges))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    merges=spelled_merges(),
    words=st.lists(st.one_of(st.binary(min_size=1, max_size=90), st.sampled_from([b"\x01\x02" * n for n in
                                                                                    (1, 8, 16, 32, 33, 40)]))
                   .map(lambda raw: bytes(x % 4 for x in raw)), max_size=30),
    cache_size=st.sampled_from([0, 2, 65536]),
    seeded=st.booleans(),
)
def test_core_encoder_scan_merge_of_spelled_vocabularies_equals_reference(merges, words, cache_size, seeded) -> None:
    # Several pairs making one id (90,639 of Llama 3's tokens): every id has one byte length, each merge making an
    # id as long as its inputs together, so the compiled encoder merges words of <= 64 bytes by the min-scan
    # (encoder.hpp: scan_is_exact (a)) where it took the heap before; ids equal the reference's heap merge.
    byte_ids = [b % 4 for b in range(256)]
    core = _core.WordEncoder(merges, byte_ids, cache_size=cache_size)
    core._seed_cache(seeded)
    assert core._merges_by_scan()
    reference = _reference.WordEncoder(merges, byte_ids, cache_size=cache_size)
    assert core.encode_words(words) == reference.encode_words(words)
    assert [core.encode_word(w) for w in words] == [reference.encode_word(w) for w in words]


def test_core_encoder_scan_merge_only_when_proven_exact() -> None:
    # Lengths: an id made at two lengths (or a byte's id made by a merge) and several makers: the heap merges.
    # Lengths hold (ids made out of rank order, a byte id far above the merges' ids as for a missing byte): the scan.
    byte_ids = list(range(256))
    assert not _core.WordEncoder([(97, 98, 300), (300, 99, 300)], byte_ids)._merges_by_scan()
    assert not _core.WordEncoder([(97, 98, 300), (97, 300, 300), (98, 99, 99)], byte_ids)._merges_by_scan()
    assert not _core.WordEncoder([(97, 98, 99), (97, 99, 300), (98, 98, 300)], byte_ids)._merges_by_scan()
    spelled = [(300, 99, 301), (97, 98, 300), (97, 302, 301), (98, 99, 302)]  # 301 = abc from two pairs
    core = _core.WordEncoder(spelled, [*range(255), 2**31 - 1])
    assert core._merges_by_scan() and core.encode_word(b"abcabc\xff") == [301, 301, 2**31 - 1]
    unique = [(97, 98, 300), (300, 99, 98)]  # each id made once (a byte's id too): exact by (b)
    assert _core.WordEncoder(unique, byte_ids)._merges_by_scan()


@settings(max_examples=100, deadline=None, derandomize=True)
@given(merges=spelled_merges() | st.lists(MERGE, max_size=25),
       words=st.lists(st.binary(max_size=40).map(lambda raw: bytes(x % 4 for x in raw)), max_size=12),
       whole=st.sampled_from([None, {b"\x01\x02": 7, b"": 8}]))
def test_core_encoder_from_flat_equals_from_triples(merges, words, whole) -> None:
    # A model loaded from the per-user cache hands its merges over as one int32 array (no tuple per merge); the
    # encoder, and what it pickles, are those of the triples.
    from array import array

    byte_ids = [b % 4 for b in range(256)]
    flat = _core.WordEncoder._from_flat(array("i", [i for m in merges for i in m]), byte_ids, whole_words=whole)
    triples = _core.WordEncoder(merges, byte_ids, whole_words=whole)
    assert flat.encode_words(words) == triples.encode_words(words)
    assert flat._merges_by_scan() == triples._merges_by_scan()
    assert flat.__reduce__() == triples.__reduce__()
    assert pickle.loads(pickle.dumps(flat)).encode_words(words) == triples.encode_words(words)


def test_core_encoder_from_flat_rejects_what_is_no_triple_list() -> None:
    from array import array

    with pytest.raises(ValueError, match="3 ids per merge"):
        _core.WordEncoder._from_flat(array("i", [1, 2]), range(256))
    with pytest.raises(ValueError, match="merge 1 has an id outside"):
        _core.WordEncoder._from_flat(array("i", [1, 2, 300, 300, -1, 301]), range(256))


def test_core_encoder_cache_stats_count_hits_misses_and_wipes() -> None:
    # What the measurements of issue 23 read: a second pass over the same short words hits every one; a cache of
    # 2 words wipes back to its image as it fills; a seeded image answers the vocabulary's spellings cold.
    merges = [(97, 98, 256), (256, 99, 257), (257, 100, 258)]
    words = [b"abcd", b"abc", b"abd", b"aaa", b"abcd" * 4, b"ab"]  # 3 + 1 long (arena cache) + 1 of 2 bytes
    core = _core.WordEncoder(merges, list(range(256)))
    core.encode_words(words)
    assert core._cache_stats() == {"hits": 0, "misses": 5, "uncached": 1, "wipes": 0, "seeded": 0}
    core.encode_words(words)
    assert core._cache_stats() == {"hits": 5, "misses": 5, "uncached": 2, "wipes": 0, "seeded": 0}
    # A full table of short pieces grows (1, 2, 4, 8, 16 pieces: up to 16 times cache_size) before it is wiped.
    small = _core.WordEncoder(merges, list(range(256)), cache_size=1)
    distinct = [bytes([97 + i // 26, 97 + i % 26, 120]) for i in range(40)]
    assert small.encode_words(distinct) == _reference.WordEncoder(merges, list(range(256))).encode_words(distinct)
    assert small._cache_stats()["misses"] == 40 and small._cache_stats()["wipes"] == 2
    # So does the table of longer words (2 words: room for 32 before a wipe; 40 words wipe it once).
    longer = _core.WordEncoder(merges, list(range(256)), cache_size=2)
    long_words = [b"abcd" * 4 + bytes([97 + i // 26, 97 + i % 26]) for i in range(20)]
    expected = _reference.WordEncoder(merges, list(range(256))).encode_words(long_words)
    assert longer.encode_words(long_words) == expected and longer.encode_words(long_words) == expected
    assert longer._cache_stats() == {"hits": 20, "misses": 20, "uncached": 0, "wipes": 0, "seeded": 0}
    more = long_words + [b"x" * 16 + w for w in long_words]
    assert longer.encode_words(more) == _reference.WordEncoder(merges, list(range(256))).encode_words(more)
    assert longer._cache_stats()["wipes"] == 1
    seeded = _core.WordEncoder(merges, list(range(256)))
    seeded._seed_cache(True)
    assert seeded.encode_words([b"abc", b"abcd", b"xyz"]) == [257, 258, 120, 121, 122]
    assert seeded._cache_stats() == {"hits": 2, "misses": 1, "uncached": 0, "wipes": 0, "seeded": 2}


def test_core_encoder_long_words_bounded_cache_and_pickle() -> None:
    rng = random.Random(3)
    counts = collections.Counter(bytes(rng.choice(b"abc") for _ in range(rng.randint(1, 40))) for _ in range(400))
    vocab, merges = _core.train_merges(list(counts), list(counts.values()), vocab_size=400)
    byte_ids = [vocab.index(bytes([b])) for b in range(256)]
    words = [*counts, b"abc" * 200, b"c" * 1000, *(bytes(rng.choice(b"abc") for _ in range(9)) for _ in range(99))]
    reference = _reference.WordEncoder(merges, byte_ids)
    expected = reference.encode_words(words)
    for cache_size in (0, 1, 2, 65536):
        core = _core.WordEncoder(merges, byte_ids, cache_size=cache_size)
        assert core.encode_words(words) == expected
        assert core.encode_words(words[::-1]) == reference.encode_words(words[::-1])
        clone = pickle.loads(pickle.dumps(core))
        assert clone.encode_words(words) == expected
    # Ids too big for the int-object table still come out right.
    huge = _core.WordEncoder(merges, byte_ids, whole_words={b"abc": 2**31 - 1})
    assert huge.encode_words([b"abc", b"a"]) == [2**31 - 1, byte_ids[ord("a")]]
    with pytest.raises(TypeError, match="bytes"):
        _core.WordEncoder(merges, byte_ids).encode_words([b"ab", "cd"])
    with pytest.raises(TypeError, match="bytes"):
        _core.WordEncoder(merges, byte_ids).encode_word(bytearray(b"ab"))
    with pytest.raises(ValueError, match="256 ids"):
        _core.WordEncoder(merges, byte_ids[:10])


def test_core_threaded_batches_share_a_bounded_cache_without_changing_ids() -> None:
    # Threads of a batch share one memo cache, kept between batches: filled up (cache_size words) it takes no
    # more, the next batch empties it; batches from several Python threads at once each get their own.
    from concurrent.futures import ThreadPoolExecutor

    from hf_bpe.core import _scanner
    from hf_bpe.core.pretokenize import Pretokenizer

    rng = random.Random(5)
    # ~100K characters, thousands of distinct words: the threads run; one word in ten of 15-24 letters, a long
    # piece whose word-cache hash and slot prefetch the probe loop takes care of a block ahead (shared cache).
    def word() -> str:
        return "".join(rng.choice("abcdefgh") for _ in range(rng.randint(15, 24) if rng.random() < 0.1 else
                                                               rng.randint(1, 9)))
    texts = [" ".join(word() for _ in range(12)) for _ in range(3000)]
    pretokenizer = Pretokenizer("gpt2")
    counts = collections.Counter(p for t in texts[:300] for p in pretokenizer.split_bytes(t))
    vocab, merges = _core.train_merges(list(counts), list(counts.values()), vocab_size=600)
    byte_ids = [vocab.index(bytes([b])) for b in range(256)]
    reference = _reference.WordEncoder(merges, byte_ids)
    expected = [reference.encode_words(pretokenizer.split_bytes(t)) for t in texts]
    pieces, pid = _scanner.pieces_function(), _scanner.SCANNERS["gpt2"]
    for cache_size, seeded in ((0, False), (5, False), (5, True), (500, False), (65536, False), (65536, True)):
        core = _core.WordEncoder(merges, byte_ids, cache_size=cache_size)
        core._seed_cache(seeded)  # seeded: the threads' shared table starts from the vocabulary's spellings
        for threads in (2, 3, 2, 1, 2):  # again and again: the full cache is emptied between batches
            assert core.encode_texts(texts, pieces, pid, threads) == expected, (cache_size, threads)
        with ThreadPoolExecutor(3) as pool:
            results = list(pool.map(lambda k: core.encode_texts(texts[k:], pieces, pid, 2), range(6)))
        assert results == [expected[k:] for k in range(6)]


# -- real corpora: core == tokenizers ----------------------------------------------------------------------------

GPT2_PATTERN = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


def file_lines(path) -> list[str]:
    """Split a file the way tokenizers' train(files) reads it: at '\\n' only, each line keeping its '\\n'."""
    text = path.read_text(encoding="utf-8")
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def count_pretokens(paths) -> collections.Counter[bytes]:
    counts: collections.Counter[str] = collections.Counter()
    for path in paths:
        for line in file_lines(path):
            counts.update(GPT2_PATTERN.findall(line))
    return collections.Counter({word.encode("utf-8"): count for word, count in counts.items()})


def tokenizers_train(paths, tmp_path, *, vocab_size):
    """Train tokenizers' BpeTrainer on files; return its vocab (str -> id), merges.txt as id pairs, the tokenizer."""
    tokenizer = train_tokenizers(files=paths, vocab_size=vocab_size)
    tokenizer.model.save(str(tmp_path))
    vocab = json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8"))
    lines = (tmp_path / "merges.txt").read_text(encoding="utf-8").split("\n")
    pairs = [tuple(vocab[part] for part in line.split(" ")) for line in lines[1:] if line]
    return vocab, pairs, tokenizer


def as_tokenizers_files(vocab, merges):
    """Our result as tokenizers saves it: vocab by byte-level string; merge pairs de-duplicated, last rank wins."""
    strings = {token_to_str(token): i for i, token in enumerate(vocab)}
    last_rank = {(a, b): rank for rank, (a, b, _) in enumerate(merges)}
    return strings, [pair for pair, _ in sorted(last_rank.items(), key=lambda item: item[1])]


def check_real_corpus(paths, vocab_size, tmp_path) -> tuple[list[bytes], list, object]:
    counts = count_pretokens(paths)
    words = list(counts)
    start = time.perf_counter()
    vocab, merges = _core.train_merges(words, [counts[w] for w in words], vocab_size=vocab_size)
    ours = time.perf_counter() - start
    start = time.perf_counter()
    hf_vocab, hf_pairs, tokenizer = tokenizers_train(paths, tmp_path, vocab_size=vocab_size)
    theirs = time.perf_counter() - start
    print(f"\n{len(words)} words, {len(merges)} merges: core {ours:.2f} s, tokenizers' full train {theirs:.2f} s")
    assert as_tokenizers_files(vocab, merges) == (hf_vocab, hf_pairs)
    assert len(vocab) == vocab_size
    return vocab, merges, tokenizer


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.shared_data
@pytest.mark.crossval
def test_core_equals_tokenizers_on_english(shared_data, tmp_path) -> None:
    # The Chinese 16k corpus is checked end to end by tests/test_trainer.py (same merges, one tokenizers run less).
    path = shared_data / "corpora" / "en" / "english_combined.txt"
    vocab, merges, tokenizer = check_real_corpus([path], 32000, tmp_path)
    # The encoder on the trained merges equals tokenizers' encoding of the same lines.
    encoder = _core.WordEncoder(merges, [vocab.index(bytes([b])) for b in range(256)])
    lines = file_lines(path)[::50]
    expected = [token for encoding in tokenizer.encode_batch(lines) for token in encoding.ids]
    assert encoder.encode_words([w.encode() for line in lines for w in GPT2_PATTERN.findall(line)]) == expected


def test_train_merges_consume_empties_the_given_lists_and_changes_nothing():
    # consume=True (hf_bpe.train's own lists): emptied before the merge loop, the result as without it.
    words, counts = [b"low", b"lower", b"newest", b"widest", b" low"], [5, 2, 6, 3, 4]
    expected = _core.train_merges(list(words), list(counts), vocab_size=275)
    given_words, given_counts = list(words), list(counts)
    assert _core.train_merges(given_words, given_counts, vocab_size=275, consume=True) == expected
    assert given_words == [] and given_counts == []
