"""The pure-Python spec of the merge loop and the word encoder: hand-checked cases, and equality with tokenizers."""

from __future__ import annotations

import collections
import json
import random

import pytest
from tokenizers import pre_tokenizers

from hf_bpe.core import _core
from hf_bpe.core import _reference
from hf_bpe.core._reference import WordEncoder, merge_word, train_merges
from hf_bpe.core.bytelevel import BYTE_ORDER, str_to_token, token_to_str
from hf_bpe.tools.peers import train_tokenizers

BYTE_ID = {b: i for i, b in enumerate(BYTE_ORDER)}  # ids of the bytes when there are no special tokens


def spelled(vocab: list[bytes], merges: list[tuple[int, int, int]]) -> list[tuple[bytes, bytes, bytes]]:
    """Return the merges as (left, right, new) bytes."""
    return [(vocab[a], vocab[b], vocab[c]) for a, b, c in merges]


def train(counts: dict[bytes, int], **options):
    return train_merges(list(counts), list(counts.values()), **options)


# -- training: hand-checked cases ------------------------------------------------------------------------------


def test_reference_rust_unit_example() -> None:
    # trainer.rs `test_train`: min_frequency 2 gives 're', 'are', 'is' (our alphabet is the full 256 bytes).
    counts = {"roses": 1, "are": 2, "red": 1, "voilets": 1, "blue": 1, "BERT": 1, "is": 2, "big": 1, "and": 1,
              "so": 1, "GPT-2": 1}
    vocab, merges = train({w.encode(): c for w, c in counts.items()}, vocab_size=30000, min_frequency=2)
    assert spelled(vocab, merges) == [(b"r", b"e", b"re"), (b"a", b"re", b"are"), (b"i", b"s", b"is")]
    assert [new for _, _, new in merges] == [256, 257, 258]
    assert vocab[:256] == [bytes([b]) for b in BYTE_ORDER]


def test_reference_merge_word_matches_rust_word_tests() -> None:
    # word.rs `test_merge` and `test_merge_max_length`: 'hello' = h e l l o = 0 1 2 2 3, merge (l, l) -> 4.
    word = [0, 1, 2, 2, 3]
    assert merge_word(word, 2, 2, 4, [1, 1, 1, 1, 2], _reference.UNLIMITED) == [
        ((1, 2), -1), ((1, 4), 1), ((2, 3), -1), ((4, 3), 1)
    ]
    assert word == [0, 1, 4, 3]
    word = [0, 1, 2, 2, 3]
    assert merge_word(word, 2, 2, 4, [1, 1, 1, 1, 2], 2) == [((1, 2), -1), ((2, 3), -1)]


def test_reference_tie_takes_smallest_pair_of_ids() -> None:
    # (' ', 'a') and ('b', 'a') both count 1. The space byte is 32 < 98, but its id (Ġ) is after every letter's,
    # so ('b', 'a') goes first.
    vocab, merges = train({b" a": 1, b"ba": 1}, vocab_size=257)
    assert spelled(vocab, merges) == [(b"b", b"a", b"ba")]
    assert BYTE_ID[ord(" ")] > BYTE_ID[ord("b")]
    # Same left id: the smaller right id wins; the new token (id 256) then loses ties against byte pairs.
    vocab, merges = train({b"ac": 1, b"ab": 1, b"xy": 2}, vocab_size=300)
    assert spelled(vocab, merges) == [(b"x", b"y", b"xy"), (b"a", b"b", b"ab"), (b"a", b"c", b"ac")]
    vocab, merges = train({b"hug": 10, b"pug": 5, b"hugs": 5}, vocab_size=300)
    assert spelled(vocab, merges) == [
        (b"u", b"g", b"ug"), (b"h", b"ug", b"hug"), (b"p", b"ug", b"pug"), (b"hug", b"s", b"hugs")
    ]


def test_reference_min_frequency_is_inclusive() -> None:
    counts = {b"ab": 3, b"cd": 2}
    assert spelled(*train(counts, vocab_size=300, min_frequency=2)) == [(b"a", b"b", b"ab"), (b"c", b"d", b"cd")]
    assert spelled(*train(counts, vocab_size=300, min_frequency=3)) == [(b"a", b"b", b"ab")]
    assert train(counts, vocab_size=300, min_frequency=4)[1] == []


def test_reference_vocab_size_is_an_exact_stop() -> None:
    counts = {b"abcdefgh": 5, b"hgfedcba": 3}
    for size in (256, 257, 260, 265):
        vocab, merges = train(counts, vocab_size=size)
        assert len(vocab) == size and len(merges) == size - 256
    vocab, merges = train(counts, vocab_size=1000)  # the corpus runs out of pairs first
    assert len(vocab) == 256 + len(merges) < 1000
    assert vocab[-1] in (b"abcdefgh", b"hgfedcba")


def test_reference_count_of_a_repeated_symbol_run() -> None:
    # 'aaa': (a, a) counts 2 occurrences; merging leaves [aa, a]; the overlapping (a, a) is decremented.
    vocab, merges = train({b"aaa": 3}, vocab_size=300)
    assert spelled(vocab, merges) == [(b"a", b"a", b"aa"), (b"aa", b"a", b"aaa")]
    vocab, merges = train({b"aaaa": 1}, vocab_size=300)
    assert spelled(vocab, merges) == [(b"a", b"a", b"aa"), (b"aa", b"aa", b"aaaa")]


def test_reference_max_token_length_is_strict_and_byte_based() -> None:
    counts = {b"abcd": 10}
    full = [(b"a", b"b", b"ab"), (b"c", b"d", b"cd"), (b"ab", b"cd", b"abcd")]
    assert spelled(*train(counts, vocab_size=300)) == full
    # A new pair is counted only when len(neighbour) + len(new) < max_token_length: a 4-byte token needs 5.
    assert spelled(*train(counts, vocab_size=300, max_token_length=5)) == full
    assert spelled(*train(counts, vocab_size=300, max_token_length=4)) == full[:2]
    # The initial byte pairs are always counted, so even max_token_length=1 learns 2-byte tokens.
    assert spelled(*train(counts, vocab_size=300, max_token_length=1)) == full[:2]
    # Lengths are bytes (= byte-level characters): 'é' is 2 bytes, so 'é' + 'a' (3 bytes) needs 4.
    counts = {"é".encode(): 10, "éa".encode(): 4}
    assert spelled(*train(counts, vocab_size=300, max_token_length=3)) == [(b"\xc3", b"\xa9", "é".encode())]
    assert spelled(*train(counts, vocab_size=300, max_token_length=4))[1] == ("é".encode(), b"a", "éa".encode())


def test_reference_special_tokens_take_first_ids_and_capture_their_spelling() -> None:
    # "a" spells a byte: it takes the byte's place (no second 'a' in the alphabet) and words use its id.
    vocab, merges = train({b"ab": 3}, vocab_size=300, special_tokens=["<s>", "a", "<s>"])
    assert vocab[:2] == [b"<s>", b"a"] and len(vocab) == 2 + 255 + 1
    assert vocab.count(b"a") == 1
    assert merges == [(1, 2 + BYTE_ID[ord("b")] - 1, 257)]
    # "ab" is the string a merge builds: the merge reuses the special's id and the vocabulary does not grow.
    vocab, merges = train({b"ab": 3, b"abc": 1}, vocab_size=300, special_tokens=["ab"])
    assert merges == [(1 + BYTE_ID[ord("a")], 1 + BYTE_ID[ord("b")], 0), (0, 1 + BYTE_ID[ord("c")], 257)]
    assert vocab[0] == b"ab" and vocab[257] == b"abc" and len(vocab) == 258
    # Specials are compared as byte-level strings: "Ġx" is the token b" x"; vocab keeps the special's UTF-8.
    vocab, merges = train({b" x": 2}, vocab_size=300, special_tokens=["Ġx"])
    assert merges[0][2] == 0 and vocab[0] == "Ġx".encode() and len(vocab) == 257
    # A special with a character outside the byte-level alphabet (a real space) never matches a token.
    vocab, merges = train({b"x y": 2}, vocab_size=300, special_tokens=["x y"])
    assert {new for _, _, new in merges} == {257, 258} and vocab[258] == b"x y"


def test_reference_count_bits_32_wraps_like_tokenizers() -> None:
    big = 2**31 + 5
    assert spelled(*train({b"ab": big}, vocab_size=300)) == [(b"a", b"b", b"ab")]
    # `count as i32` is negative: the pair is never pushed.
    assert train({b"ab": big}, vocab_size=300, count_bits=32)[1] == []
    # (b, c) sums to 4 in i32 and is pushed; the merge of (a, b) then takes it to -2**31 + 5, which tokenizers
    # refreshes as `i32 as u64` = 2**64 - 2**31 + 5, the biggest count of all: it is merged at once.
    counts = {b"bc": 2**31 + 5, b"abc": 2**31 - 1}
    assert spelled(*train(counts, vocab_size=300, count_bits=32)) == [
        (b"a", b"b", b"ab"), (b"ab", b"c", b"abc"), (b"b", b"c", b"bc")
    ]
    assert spelled(*train(counts, vocab_size=300)) == [(b"b", b"c", b"bc"), (b"a", b"bc", b"abc")]


def test_reference_input_order_does_not_matter() -> None:
    rng = random.Random(7)
    counts = {bytes(rng.choice(b"abc ") for _ in range(rng.randint(1, 8))): rng.randint(1, 4) for _ in range(60)}
    expected = train(counts, vocab_size=320, min_frequency=1)
    items = list(counts.items())
    for _ in range(5):
        rng.shuffle(items)
        assert train(dict(items), vocab_size=320, min_frequency=1) == expected


def test_reference_progress_reports_every_thousand_merges() -> None:
    words = [bytes([a, b]) for a in range(33, 93) for b in range(33, 93)]  # 3600 distinct pairs
    calls: list[int] = []
    vocab, merges = train_merges(words, [1] * len(words), vocab_size=256 + 2500, progress=calls.append)
    assert len(merges) == 2500 and calls == [1000, 1000, 500]
    calls.clear()
    train_merges([b"ab"], [1], vocab_size=300, progress=calls.append)
    assert calls == [1]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"vocab_size": 255}, ValueError, "at least 256"),
        ({"vocab_size": 257, "special_tokens": ["<s>", "</s>", "<s>"]}, ValueError, "at least 258"),
        ({"vocab_size": "300"}, TypeError, "vocab_size must be an int"),
        ({"vocab_size": 300, "min_frequency": -1}, ValueError, "min_frequency"),
        ({"vocab_size": 300, "min_frequency": 2**64}, ValueError, "min_frequency"),
        ({"vocab_size": 300, "max_token_length": -2}, ValueError, "max_token_length"),
        ({"vocab_size": 300, "count_bits": 16}, ValueError, "count_bits"),
        ({"vocab_size": 300, "special_tokens": "<s>"}, TypeError, r"\['<s>'\]"),
        ({"vocab_size": 300, "special_tokens": [b"<s>"]}, TypeError, "special_tokens must hold str"),
        ({"vocab_size": 300, "progress": 5}, TypeError, "progress"),
    ],
)
def test_reference_rejects_bad_options(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        train_merges([b"ab"], [1], **kwargs)


@pytest.mark.parametrize(
    ("words", "counts", "error", "message"),
    [
        (["ab"], [1], TypeError, "words must hold bytes"),
        ([b"ab", b"ab"], [1, 2], ValueError, "distinct"),
        ([b"ab"], [1, 2], ValueError, "same length"),
        ([b"ab"], [0], ValueError, r"1\.\.2\*\*63-1"),
        ([b"ab"], [2**63], ValueError, r"1\.\.2\*\*63-1"),
        ([b"ab"], [1.5], TypeError, "each count must be an int"),
        ([b"ab"], [True], TypeError, "each count must be an int"),
        ([b"a" * 4], [2**60], ValueError, "2\\*\\*61"),
    ],
)
def test_reference_rejects_bad_words(words: list, counts: list, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        train_merges(words, counts, vocab_size=300)


# -- encoding ---------------------------------------------------------------------------------------------------


def test_reference_encoder_lowest_rank_then_leftmost() -> None:
    a, b = BYTE_ID[ord("a")], BYTE_ID[ord("b")]
    byte_ids = [BYTE_ID[i] for i in range(256)]
    encoder = WordEncoder([(a, a, 300), (300, a, 301), (a, b, 302)], byte_ids)
    assert encoder.encode_word(b"aaa") == [301]  # aa first (leftmost), then (aa, a)
    assert encoder.encode_word(b"aaaa") == [300, 300]
    assert encoder.encode_word(b"aab") == [300, b]  # (a, a) has a lower rank than (a, b)
    assert encoder.encode_word(b"") == [] and encoder.encode_word(b"b") == [b]
    # A pair that repeats keeps its LAST rank (now after (a, a)) and that rank's new id.
    encoder = WordEncoder([(a, b, 302), (a, a, 300), (a, b, 303)], byte_ids)
    assert encoder.encode_word(b"aab") == [300, b]
    assert encoder.encode_word(b"ab") == [303]


def test_reference_encoder_expired_entries_compare_new_ids() -> None:
    # Word::merge_all skips a queued entry only if the pair now at its position maps to a different NEW ID. Here
    # the entry (1, 2) -> 70 (rank 1) meets the pair (1, 60), which also maps to 70 (rank 3): it is merged at
    # rank 1, before (60, 4) at rank 2. Merging by rank alone would give [1, 80].
    merges = [(2, 3, 60), (1, 2, 70), (60, 4, 80), (1, 60, 70)]
    assert WordEncoder(merges, list(range(256))).encode_word(bytes([1, 2, 3, 4])) == [70, 4]


def test_reference_encoder_whole_words_and_bounded_cache() -> None:
    encoder = WordEncoder([(104, 105, 300)], list(range(256)), cache_size=2, whole_words={b"hihi": 500})
    assert encoder.encode_words([b"hihi", b"hi", b"hih"]) == [500, 300, 300, 104]
    assert isinstance(encoder.cache, dict) and len(encoder.cache) <= 2
    for i in range(50):
        encoder.encode_word(bytes([65 + i % 26]) * (i + 1))
        assert len(encoder.cache) <= 2
    assert encoder.encode_word(b"hi") == [300]
    uncached = WordEncoder([(104, 105, 300)], list(range(256)), cache_size=0)
    assert uncached.encode_word(b"hi") == [300] and uncached.cache == {}


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        (([(1, 2)], range(256)), {}, TypeError, "triple"),
        (([(1, 2, -3)], range(256)), {}, ValueError, "outside"),
        (([], range(255)), {}, ValueError, "256 ids"),
        (([], range(256)), {"cache_size": -1}, ValueError, "cache_size"),
        (([], range(256)), {"whole_words": {"hi": 1}}, TypeError, "keys must be bytes"),
        (([], range(256)), {"whole_words": [b"hi"]}, TypeError, "mapping"),
    ],
)
def test_reference_encoder_rejects_bad_arguments(args: tuple, kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        WordEncoder(*args, **kwargs)
    with pytest.raises(TypeError, match="bytes"):
        WordEncoder([], range(256)).encode_word("hi")  # type: ignore[arg-type]


# -- cross-validation with tokenizers ---------------------------------------------------------------------------

# Pieces with many ties (each is repeated), emoji (ZWJ, skin tone, flag), CJK, combining marks, digits, whitespace
# runs and contractions; plus strings that special tokens below spell.
PIECES = [
    "the", "The", "then", "hello", "world", "lower", "lowest", "newer", "wider", "don't", "we'll", "I'M", "you're",
    "they've", "it'd", "😀", "👩‍👩‍👧", "🇫🇷", "👍🏽", "中文", "漢字", "東京都", "한국어", "é", "e\u0301", "n\u0303",
    "123", "4567", "2024", "٣٤٥", "  ", "   ", "\t", "\t\t", "x", "!!", "...", "ß", "aaaa", "abab", "<s>",
]
SPECIALS = ["<|endoftext|>", "a", "Ġthe", "<s>", "he", "<s>"]  # a byte, two merged strings, a repeat


def corpus(seed: int, lines: int = 120) -> list[str]:
    """Return reproducible lines (each ending in a newline) mixing the pieces and whitespace."""
    rng = random.Random(seed)
    out = []
    for _ in range(lines):
        words = [rng.choice(PIECES) for _ in range(rng.randint(0, 10))]
        out.append("".join(w + rng.choice([" ", " ", "", "  ", "\t"]) for w in words) + "\n")
    return out


def pretokenized_counts(lines: list[str]) -> collections.Counter[bytes]:
    """Count the pre-tokens tokenizers' ByteLevel pre-tokenizer gives, as raw bytes."""
    pretokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    counts: collections.Counter[bytes] = collections.Counter()
    for line in lines:
        counts.update(str_to_token(piece) for piece, _ in pretokenizer.pre_tokenize_str(line))
    return counts


def tokenizers_train(lines, tmp_path, *, vocab_size, min_frequency=0, special_tokens=(), max_token_length=None,
                     files=None):
    """Train tokenizers' BpeTrainer; return its vocab (str -> id) and merges.txt as id pairs."""
    tokenizer = train_tokenizers(lines if files is None else None, files=files, vocab_size=vocab_size,
                                 min_frequency=min_frequency, special_tokens=special_tokens,
                                 max_token_length=max_token_length)
    tokenizer.model.save(str(tmp_path))
    vocab = json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8"))
    lines_ = (tmp_path / "merges.txt").read_text(encoding="utf-8").split("\n")
    assert lines_[0].startswith("#version")
    pairs = [tuple(vocab[part] for part in line.split(" ")) for line in lines_[1:] if line]
    return vocab, pairs, tokenizer


def as_tokenizers_files(vocab, merges, special_tokens=()):
    """Our result as tokenizers saves it: vocab by byte-level string; merge pairs de-duplicated, last rank wins."""
    specials = list(dict.fromkeys(special_tokens))
    strings = {(specials[i] if i < len(specials) else token_to_str(token)): i for i, token in enumerate(vocab)}
    assert len(strings) == len(vocab)
    last_rank = {(a, b): rank for rank, (a, b, _) in enumerate(merges)}
    return strings, [pair for pair, _ in sorted(last_rank.items(), key=lambda item: item[1])]


@pytest.mark.crossval
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("vocab_size", [262, 300, 420])
@pytest.mark.parametrize("min_frequency", [0, 2, 5])
@pytest.mark.parametrize("special_tokens", [(), tuple(SPECIALS)], ids=["plain", "specials"])
@pytest.mark.parametrize("module", [_reference, _core], ids=["reference", "core"])
def test_reference_equals_tokenizers(tmp_path, seed, vocab_size, min_frequency, special_tokens, module) -> None:
    lines = corpus(seed)
    counts = pretokenized_counts(lines)
    vocab, merges = module.train_merges(
        list(counts), list(counts.values()), vocab_size=vocab_size, min_frequency=min_frequency,
        special_tokens=special_tokens,
    )
    hf_vocab, hf_pairs, _ = tokenizers_train(
        lines, tmp_path, vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=special_tokens
    )
    ours_vocab, ours_pairs = as_tokenizers_files(vocab, merges, special_tokens)
    assert ours_vocab == hf_vocab
    assert ours_pairs == hf_pairs


@pytest.mark.crossval
def test_reference_equals_tokenizers_when_a_merge_reuses_a_token(tmp_path) -> None:
    # Specials "Ġthe" and "he" spell tokens the merges build: the merges reuse their ids, the vocab does not grow.
    lines = ["the the then he the hello he\n"] * 5 + ["she the other\n"] * 3
    counts = pretokenized_counts(lines)
    vocab, merges = train(counts, vocab_size=280, special_tokens=SPECIALS)
    reused = [new for _, _, new in merges if new < 5]
    assert sorted(reused) == [2, 4]  # "Ġthe" (id 2) and "he" (id 4) were each built by a merge
    assert len(vocab) == 256 - 1 + 5 + len(merges) - len(reused)
    hf_vocab, hf_pairs, _ = tokenizers_train(lines, tmp_path, vocab_size=280, special_tokens=SPECIALS)
    assert as_tokenizers_files(vocab, merges, SPECIALS) == (hf_vocab, hf_pairs)


@pytest.mark.crossval
@pytest.mark.parametrize("max_token_length", [1, 2, 3, 4, 6])
def test_reference_equals_tokenizers_with_max_token_length(tmp_path, max_token_length) -> None:
    lines = corpus(3)
    counts = pretokenized_counts(lines)
    vocab, merges = train(counts, vocab_size=400, max_token_length=max_token_length)
    hf_vocab, hf_pairs, _ = tokenizers_train(lines, tmp_path, vocab_size=400, max_token_length=max_token_length)
    assert as_tokenizers_files(vocab, merges) == (hf_vocab, hf_pairs)


@pytest.mark.crossval
def test_reference_encoder_equals_tokenizers(tmp_path) -> None:
    lines = corpus(4, lines=300)
    counts = pretokenized_counts(lines)
    vocab, merges = train(counts, vocab_size=500, special_tokens=["<|endoftext|>"])
    _, _, tokenizer = tokenizers_train(lines, tmp_path, vocab_size=500, special_tokens=["<|endoftext|>"])
    encoder = WordEncoder(merges, [vocab.index(bytes([b])) for b in range(256)])
    pretokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    probe = corpus(5, lines=100) + ["unseen words: zebra quokka 🦘 ĳ\n"]
    for line in probe:
        words = [str_to_token(piece) for piece, _ in pretokenizer.pre_tokenize_str(line)]
        assert encoder.encode_words(words) == tokenizer.encode(line).ids
