"""Tests of the AVX2 mask scanner (csrc/mask_scanner.hpp): its pieces are the scalar scanners' and `regex.findall`'s.

Where a text's bytes are ASCII (a one-byte ASCII str, or a str read in its UTF-8 form), the scanners read 64 bytes
a block and derive the piece starts from bit masks (on a CPU with AVX2). Each test runs with the mask scanner on
and forced off (`_scanner._set_mask_scanner`), so both paths are held to the regex on this machine.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.core import _scanner
from hf_bpe.core.patterns import PATTERNS

NAMES = sorted(PATTERNS)
COMPILED = {name: regex.compile(source) for name, source in PATTERNS.items()}


def _cpu_has_avx2() -> bool:
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return " avx2" in flags and " bmi2" in flags


def _pieces(text: str, name: str, mask: bool) -> tuple[list[bytes], list[bytes]]:
    """The encoders' pieces of `text` (code points; its UTF-8 form) with the mask scanner on or off."""
    previous = _scanner._set_mask_scanner(mask)
    try:
        pid = _scanner.SCANNERS[name]
        return _scanner.split_utf8(text, pid), _scanner.split_utf8(text, pid, in_utf8=True)
    finally:
        _scanner._set_mask_scanner(previous)


def _assert_both_paths_equal_regex(text: str) -> None:
    for name in NAMES:
        expected = [piece.encode() for piece in COMPILED[name].findall(text)]
        for mask in (True, False):
            points, utf8 = _pieces(text, name, mask)
            assert points == expected, (name, mask, text)
            assert utf8 == expected, (name, mask, text)


# Fragments where the mask rules branch: letter runs of both cases (o200k splits at lower -> upper), digit runs
# around the groups of 3, every ASCII whitespace alone and in runs with \r\n in them (the last newline of a run, a
# run's last character, a space before a word or punctuation), punctuation runs followed by newlines and '/' (an
# O run takes [\r\n]* / [\r\n/]*), apostrophes and every contraction in both cases, and non-ASCII characters of
# each class (a block stops at the first non-ASCII byte; U+017F folds to 's' in a contraction).
MASK_FRAGMENTS = (
    "a", "b", "s", "t", "d", "m", "l", "e", "r", "v", "Z", "Q", "S", "L", "E", "hello", "World", "camelCase", "ABC",
    "x" * 7, "Y" * 9, "0", "12", "345", "6789", "1234567",
    " ", "  ", "    ", "\t", "\x0b", "\x0c", "\n", "\r", "\r\n", "\n\n", " \n", "\n ", " \n ", "\n\t", "\t\n",
    ".", ",", "(", ")", "-", "/", "//", "\\", "\"", "#", "\x00", "\x7f", "\x1c",
    "'", "''", "'s", "'t", "'m", "'d", "'re", "'ve", "'ll", "'S", "'T", "'RE", "'Ve", "'lL", "'x",
    "\u00e9", "\u017f", "\u4e2d", "\u00a0", "\x85", "\u2028", "\u0663", "\u0301", "\u01c5", "\U0001f600",
)
ascii_fragments = [f for f in MASK_FRAGMENTS if f.isascii()]
mask_text = st.tuples(
    st.integers(min_value=0, max_value=70),  # a letter pad: the fragments land on every offset of a block
    st.lists(st.sampled_from(MASK_FRAGMENTS), max_size=60),
    st.lists(st.sampled_from(ascii_fragments), max_size=60),
).map(lambda t: "q" * t[0] + "".join(t[1]) + "".join(t[2]))


@settings(deadline=None, derandomize=True, max_examples=400)
@given(mask_text)
def test_mask_scanner_equals_regex_and_the_scalar_scanner(text: str) -> None:
    _assert_both_paths_equal_regex(text)


@settings(deadline=None, derandomize=True, max_examples=150)
@given(st.lists(st.sampled_from(ascii_fragments), min_size=20, max_size=120).map("".join))
def test_mask_scanner_equals_regex_on_ascii_only_text(text: str) -> None:
    _assert_both_paths_equal_regex(text)


def test_mask_scanner_edges_at_32_and_64_bytes() -> None:
    # Each tricky fragment ending at, and straddling, the 32- and 64-byte lanes of the first and second block.
    for fragment in ("'re", "'s", " \n ", "\r\n", "1234567", "aB", " .", ".\n/", "  x", "\n\n  y", "'S's"):
        for pad in range(26, 40):
            for offset in (0, 32):
                text = "w" * (pad + offset) + fragment + " tail words, more text 123 " * 4
                _assert_both_paths_equal_regex(text)
                _assert_both_paths_equal_regex(text + "\u00e9" + fragment)


def test_mask_scanner_hands_non_ascii_stretches_to_the_scalar_scanner_and_takes_over_after() -> None:
    # A block mostly not ASCII is left to the scalar scanner for a while (CJK), one with a few non-ASCII bytes up
    # to its last one; the mask scanner takes over again on the ASCII after.
    english = "It's the camelCase API's 42nd run,\n\n  don't\tstop // 1234567 'RE x. "
    for cjk in ("\u4e2d\u6587" * 40, "\u4e2d\u6587\u3002 " * 30, "caf\u00e9 na\u00efve " * 8, "\u00e9" * 70):
        for pad in (0, 1, 31, 63):
            _assert_both_paths_equal_regex("w" * pad + cjk + english * 6 + cjk[:pad] + english * 3)


def test_mask_scanner_is_on_where_the_cpu_has_avx2() -> None:
    assert _scanner.mask_scanner() == _cpu_has_avx2()
    previous = _scanner._set_mask_scanner(False)
    try:
        assert not _scanner.mask_scanner()
    finally:
        _scanner._set_mask_scanner(previous)
    assert _scanner.mask_scanner() == previous


def _real_texts(shared_data: Path) -> list[str]:
    """300 kB of English and of Python source (the standard library's argparse and its neighbours)."""
    import argparse

    english = (shared_data / "corpora" / "en" / "english_combined.txt").read_text(encoding="utf-8")[:300_000]
    folder = Path(argparse.__file__).parent
    code = "".join(folder.joinpath(f).read_text(encoding="utf-8") for f in ("argparse.py", "typing.py", "ast.py"))
    return [english, code[:300_000]]


def test_mask_scanner_equals_the_scalar_scanner_on_real_text(shared_data) -> None:
    for text in _real_texts(shared_data):
        for name in NAMES:
            on, off = _pieces(text, name, True), _pieces(text, name, False)
            assert on == off, name
            assert on[1] == [piece.encode() for piece in COMPILED[name].findall(text)], name


def test_mask_scanner_long_text_ids_do_not_change(shared_data) -> None:
    from hf_bpe.model.bpe import BPEModel

    folder = shared_data / "vocabs" / "gpt2"
    model = BPEModel.from_files(folder / "vocab.json", folder / "merges.txt")
    for text in _real_texts(shared_data):
        text = text * 2  # over LONG_TEXT_CHARS: cut onto threads, read in its UTF-8 form when not ASCII
        previous = _scanner._set_mask_scanner(False)
        try:
            off = model.encode_ordinary(text, num_threads=2)
        finally:
            _scanner._set_mask_scanner(previous)
        assert model.encode_ordinary(text, num_threads=2) == off
        assert model.encode_ordinary_array(text, num_threads=2).tolist() == off


@pytest.mark.parametrize("run", ["7", "a", "Q", " ", "\n", "\t", "-", "'", "ab", "12"])
def test_mask_scanner_runs_longer_than_a_block(run) -> None:
    # A block of one class (issue 37's digit runs, cut in groups of 3 by cl100k/o200k) is scanned through by the
    # scalar scanner, then the masks take over again: each length around 64 and 128, with text before and after.
    for size in (63, 64, 65, 127, 128, 129, 200, 301):
        body = (run * size)[:size]
        for text in (body, "x " + body, body + " y1,", "1" + body + "a\n"):
            _assert_both_paths_equal_regex(text)


@settings(deadline=None, derandomize=True, max_examples=150)
@given(pad=st.integers(0, 70), size=st.integers(60, 260), digits=st.sampled_from(["0123456789", "7", "90"]),
       before=st.sampled_from(["", " ", "'", "a", "A", "-", "\n", "\u0663", "x1", "12"]),
       after=st.sampled_from(["", " ", "a", "'s", "\u0663", "\u00e9", ".", "\r\n"]))
def test_mask_scanner_digit_blocks_are_cut_every_max_digits(pad, size, digits, before, after) -> None:
    # A block of 64 ASCII digits from a piece's start is cut every 3 digits (cl100k, o200k, Llama 3) or every
    # digit (Qwen2) without the scalar scanner: at every offset of a block, whatever comes before and after.
    body = (digits * (size // len(digits) + 1))[:size]
    _assert_both_paths_equal_regex("q" * pad + before + body + after + " tail 1234")


@settings(deadline=None, derandomize=True, max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(1, 9000), accent=st.booleans())
def test_mask_scanner_dense_pieces_past_the_room_made_for_them(seed: int, size: int, accent: bool) -> None:
    # The mask scanner writes a block's ends through a cursor into room it makes ahead (about a piece per 4 bytes,
    # then up to 4,096 ends at a time): ASCII texts of one or two bytes a piece, up to ~9,000 pieces, grow that room
    # several times within a text and fill a block with up to 64 ends (a non-ASCII letter now and then sends a
    # block to the scalar scanner, which writes through the same cursor).
    rng = random.Random(seed)
    fragments = ["a", ",", " ", "1", "'", "\n", ".a", " b", "  "] + (["\u00e9"] if accent else [])
    text = "".join(rng.choice(fragments) for _ in range(size))
    _assert_both_paths_equal_regex(text)
