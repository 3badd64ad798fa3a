"""The long-piece encoder (csrc/long_piece.hpp, spec hf_bpe/core/_reference_long.py) equals rank-ordered BPE.

Held three ways on adversarial pieces (runs of one byte, small alphabets, digits, punctuation, CJK, tokens of the
vocabulary glued together): the compiled long-piece path (forced on every piece of >= 2 bytes), the pure-Python
reference, and the heap merge (long-piece path off) and the reference ``WordEncoder``. Its work (tries counted by
the compiled code, never time) grows linearly with the piece.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.core._core import WordEncoder
from hf_bpe.core._reference import WordEncoder as ReferenceEncoder
from hf_bpe.core._reference_long import LongPieceTables, merge_current_pairs

_ALPHABETS = [b"a", b"ab", b"abc", b"abcdefghijklmnopqrstuvwxyz", b"0123456789", b"-", b"- ", b"!?.,;:-=*",
              "一二三人大中".encode(), b"aab-"]


def _monotone_merges(seed: int, count: int, alphabet: bytes) -> list[tuple[int, int, int]]:
    """Merges as BPE training makes them: each joins two tokens already made (so monotone), one spelling each."""
    rng = random.Random(seed)
    spelled = {b: bytes([b]) for b in range(256)}
    made = list(dict.fromkeys(alphabet))
    seen = set(spelled.values())
    merges = []
    for _ in range(count * 4):
        if len(merges) == count:
            break
        left, right = rng.choice(made), rng.choice(made)
        both = spelled[left] + spelled[right]
        if both in seen or len(both) > 12:
            continue
        new = 256 + len(merges)
        spelled[new] = both
        seen.add(both)
        made.append(new)
        merges.append((left, right, new))
    return merges


def _pieces(rng: random.Random, alphabet: bytes, tokens: list[bytes], size: int) -> bytes:
    kind = rng.randrange(3)
    if kind == 0:
        return bytes([alphabet[0]]) * size
    if kind == 1:
        return bytes(rng.choice(alphabet) for _ in range(size))
    out = b""
    while len(out) < size:
        out += rng.choice(tokens)
    return out


def _encoders(merges, byte_ids=range(256)):
    linear = WordEncoder(merges, byte_ids, cache_size=0)
    heap = WordEncoder(merges, byte_ids, cache_size=0)
    linear._long_pieces(min_bytes=2)
    heap._long_pieces(min_bytes=2**40)
    return linear, heap


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from(_ALPHABETS), st.integers(1, 80), st.integers(1, 200))
def test_long_path_equals_reference_and_heap_on_random_monotone_merges(seed, alphabet, count, size) -> None:
    merges = _monotone_merges(seed, count, alphabet)
    linear, heap = _encoders(merges)
    assert linear._long_pieces()["usable"]
    tables = LongPieceTables.build(merges, list(range(256)))
    assert tables is not None
    reference = ReferenceEncoder(merges, range(256), cache_size=0)
    rng = random.Random(seed)
    tokens = list(tables.tokens)
    for _ in range(5):
        piece = _pieces(rng, alphabet, tokens, size)
        expected = reference._merge_all(piece)
        assert tables.encode(piece) == expected
        assert linear.encode_word(piece) == expected
        assert heap.encode_word(piece) == expected


def test_compatible_walks_back_the_boundary() -> None:
    # "abc": (a, b) ranks before (b, c): "ab" + "c" is the BPE, "a" + "bc" is not.
    tables = LongPieceTables.build([(97, 98, 256), (98, 99, 257)], list(range(256)))
    assert tables.compatible(256, 99) and not tables.compatible(97, 257)
    # A run: (a, a) then (aa, aa); "aa" + "a" is compatible, "a" + "aa" is not (the left pair merges first).
    tables = LongPieceTables.build([(97, 97, 256), (256, 256, 257)], list(range(256)))
    assert tables.compatible(256, 97) and not tables.compatible(97, 256)
    assert merge_current_pairs([97, 97, 97], tables.ranks) == ([256, 97], (97, 97, 0))


def test_non_monotone_merges_keep_the_heap() -> None:
    # Llama 3's merges.txt lists (" ", "   ") before the merge that makes "   ": a merge that takes an id made only
    # by a higher rank. The long-piece encoder refuses such merges (its proof needs ranks to rise); ids unchanged.
    merges = [(32, 32, 256), (32, 257, 258), (256, 32, 257)]
    assert LongPieceTables.build(merges, list(range(256))) is None
    linear, heap = _encoders(merges)
    assert not linear._long_pieces()["usable"]
    reference = ReferenceEncoder(merges, range(256), cache_size=0)
    for size in range(1, 40):
        assert linear.encode_word(b" " * size) == reference._merge_all(b" " * size) == heap.encode_word(b" " * size)


def test_two_spellings_keep_the_heap() -> None:
    merges = [(97, 98, 256), (99, 100, 256)]
    assert LongPieceTables.build(merges, list(range(256))) is None
    linear, _heap = _encoders(merges)
    assert not linear._long_pieces()["usable"]
    assert linear.encode_word(b"abcdab") == [256, 256, 256]


def test_min_bytes_is_checked() -> None:
    with pytest.raises(ValueError, match="min_bytes"):
        WordEncoder([], range(256))._long_pieces(min_bytes=0)


@pytest.mark.parametrize("alphabet", [b"a", b"ab", b"abcdefghijklmnopqrstuvwxyz", b"-"])
def test_steps_grow_linearly(alphabet) -> None:
    merges = _monotone_merges(7, 300, alphabet)
    linear, _heap = _encoders(merges)
    rng = random.Random(3)
    steps = []
    for size in (20_000, 80_000):
        before = linear._long_pieces()["steps"]
        linear.encode_word(bytes(rng.choice(alphabet) for _ in range(size)))
        steps.append(linear._long_pieces()["steps"] - before)
    assert 0 < steps[1] <= 4.4 * steps[0]
    assert steps[1] <= 16 * 80_000  # a bounded number of tries per byte


def _real_model(shared_data, name):
    from hf_bpe import BPEModel

    folder = shared_data / "vocabs" / name
    if name == "llama3":
        return BPEModel.from_files(folder / "encoder.json", folder / "vocab.bpe", pattern="llama3",
                                   ignore_merges=True)
    return BPEModel.from_files(folder / "vocab.json", folder / "merges.txt")


@pytest.mark.shared_data
@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2", "qwen2", "llama3"])
def test_real_vocabularies_long_path_equals_heap(shared_data, name) -> None:
    from hf_bpe.model.bpe import merge_triples

    model = _real_model(shared_data, name)
    merges = merge_triples(model.vocab, model._merges)
    byte_ids = [model.vocab[bytes([b])] for b in range(256)]
    linear, heap = _encoders(merges, byte_ids)
    # GPT-2's and Qwen2's merges are monotone; Llama 3's are not (see test_non_monotone_merges_keep_the_heap).
    assert linear._long_pieces()["usable"] == (name != "llama3")
    rng = random.Random(11)
    tokens = [t for t in model.vocab if len(t) > 1]
    alphabets = [*_ALPHABETS, "ÿ€語".encode()]
    for _ in range(150):
        alphabet = rng.choice(alphabets)
        piece = _pieces(rng, alphabet, tokens, rng.randrange(2, 400))
        assert linear.encode_word(piece) == heap.encode_word(piece), piece[:60]
    # Through the model's own encoder too (the heap for its first 256 KB of long pieces, then the long path).
    text = "".join(rng.choice("0123456789") for _ in range(5000)) + " " + "-" * 3000 + "x " + "ab" * 2000
    reference = ReferenceEncoder(merges, byte_ids, cache_size=0,
                                 whole_words=model.vocab if name == "llama3" else None)
    assert model.encode_ordinary(text) == reference.encode_words(model._pretokenizer.split_bytes(text))


def test_runs_longer_than_the_run_table() -> None:
    # Tokens of 2, 4, ..., 512 "a"s: the run table (256 entries per byte) is exceeded and the trie walk goes on.
    merges = [(97, 97, 256)] + [(255 + k, 255 + k, 256 + k) for k in range(1, 9)]
    linear, heap = _encoders(merges)
    reference = ReferenceEncoder(merges, range(256), cache_size=0)
    for size in (255, 256, 257, 511, 512, 513, 1000, 3000):
        piece = b"a" * size + b"b" + b"a" * (size // 3)
        assert linear.encode_word(piece) == heap.encode_word(piece) == reference._merge_all(piece)


def test_tables_are_built_after_256_kb_of_long_pieces() -> None:
    # By default the long-piece tables (0.1-0.5 s for a large vocabulary) are built only once this encoder has
    # merged 256 KB of long pieces by the heap; from then on long pieces take the linear path.
    merges = _monotone_merges(5, 100, b"ab")
    rng = random.Random(1)
    pieces = [bytes(rng.choice(b"ab") for _ in range(100_000)) for _ in range(3)]
    reference = ReferenceEncoder(merges, range(256), cache_size=0)
    encoder = WordEncoder(merges, range(256), cache_size=0)
    for piece in pieces:
        assert encoder.encode_word(piece) == reference._merge_all(piece)
    forced = WordEncoder(merges, range(256), cache_size=0)
    forced._long_pieces(min_bytes=65)
    forced.encode_word(pieces[2])
    # Only the third piece (200 KB merged by the heap before it) took the long path.
    assert encoder._long_pieces()["steps"] == forced._long_pieces()["steps"] > 0


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from(_ALPHABETS))
def test_long_path_with_whole_words(seed, alphabet) -> None:
    # ignore_merges: a piece that is a vocabulary word is that id; any other piece merges (here by the long path).
    merges = _monotone_merges(seed, 60, alphabet)
    tables = LongPieceTables.build(merges, list(range(256)))
    rng = random.Random(seed)
    whole = {spelling: token for spelling, token in tables.tokens.items() if rng.random() < 0.5}
    whole[alphabet * 40] = 9999  # a long whole word: no merge makes it
    linear = WordEncoder(merges, range(256), cache_size=0, whole_words=whole)
    linear._long_pieces(min_bytes=2)
    reference = ReferenceEncoder(merges, range(256), cache_size=0, whole_words=whole)
    pieces = [alphabet * 40, *(_pieces(rng, alphabet, list(tables.tokens), rng.randrange(2, 300)) for _ in range(5))]
    assert linear.encode_words(pieces) == reference.encode_words(pieces)


def _llama3_like_merges(seed: int, count: int, alphabet: bytes) -> tuple[list[tuple[int, int, int]], list[bytes]]:
    """Merges as Llama 3's merges.txt lists them: every split of each token into two tokens, ranks shuffled.

    Each id spells one byte string (lengths consistent), several pairs make it, and a merge may take an id that
    only a higher rank makes (not monotone): the long pieces go through merge_all's queue. Also the tokens' bytes.
    """
    rng = random.Random(seed)
    monotone = _monotone_merges(seed, count, alphabet)
    spelled = {b: bytes([b]) for b in range(256)}
    for left, right, new in monotone:
        spelled[new] = spelled[left] + spelled[right]
    by_spelling = {v: k for k, v in spelled.items()}
    merges = []
    for _left, _right, new in monotone:
        word = spelled[new]
        for cut in range(1, len(word)):
            left, right = by_spelling.get(word[:cut]), by_spelling.get(word[cut:])
            if left is not None and right is not None:
                merges.append((left, right, new))
    rng.shuffle(merges)
    return merges, [spelled[new] for _left, _right, new in monotone]


def _long_pieces_of(rng: random.Random, alphabet: bytes, tokens: list[bytes]) -> list[bytes]:
    sizes = [65, 66, rng.randrange(67, 400), rng.randrange(400, 1500)]
    return [_pieces(rng, alphabet, tokens, size) for size in sizes] + [
        bytes(rng.choice(b"0123456789") for _ in range(200)),
        "一".encode() * rng.randrange(22, 200),
        bytes([alphabet[0]]) * rng.randrange(65, 3000),
    ]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from(_ALPHABETS), st.integers(1, 120))
def test_queue_merge_equals_reference_on_llama3_like_merges(seed, alphabet, count) -> None:
    # merge_all (csrc/merge_queue.hpp's radix queue; an entry is current iff its pair still ends where it did) on
    # non-monotone merge lists with consistent lengths, as Llama 3's: equal to the reference merge on long pieces.
    merges, tokens = _llama3_like_merges(seed, count, alphabet + "一".encode())
    encoder = WordEncoder(merges, range(256), cache_size=0)
    assert encoder._merges_by_scan()  # lengths consistent: merge_all decides by the pair's end
    assert not encoder._long_pieces()["usable"] or LongPieceTables.build(merges, list(range(256))) is not None
    encoder._long_pieces(min_bytes=2**40)
    reference = ReferenceEncoder(merges, range(256), cache_size=0)
    rng = random.Random(seed)
    tokens += [bytes([b]) for b in alphabet]
    for piece in _long_pieces_of(rng, alphabet, tokens):
        assert encoder.encode_word(piece) == reference._merge_all(piece)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from(_ALPHABETS), st.integers(1, 60), st.booleans())
def test_queue_merge_equals_reference_on_arbitrary_merges(seed, alphabet, count, built) -> None:
    # Merges whose new ids need not spell their pairs (lengths inconsistent, ids made from themselves): merge_all
    # falls back to tokenizers' test (the current pair makes the entry's id) where the pair's end moved.
    rng = random.Random(seed)
    ids = list(alphabet) + list(range(256, 256 + count))
    merges = [(rng.choice(ids), rng.choice(ids), 256 + rng.randrange(count)) for _ in range(count * 2)]
    encoder = WordEncoder(merges, range(256), cache_size=0)
    if built:
        encoder._merges_by_scan()
    encoder._long_pieces(min_bytes=2**40)
    reference = ReferenceEncoder(merges, range(256), cache_size=0)
    for piece in _long_pieces_of(rng, alphabet, [bytes([b]) for b in alphabet]):
        assert encoder.encode_word(piece) == reference._merge_all(piece)
