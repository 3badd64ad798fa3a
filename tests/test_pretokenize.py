"""Tests of hf_bpe.core.pretokenize: the compiled scanners equal `regex.findall` on any text; the Pretokenizer API."""

from __future__ import annotations

import itertools
import pickle
import sys
from collections import Counter
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.core import _scanner, _tally
from hf_bpe.core.bytelevel import str_to_token
from helpers import tiktoken_pat_str
from hf_bpe.core.patterns import to_oniguruma
from hf_bpe.core.patterns import ALIASES, PATTERNS
from hf_bpe.core.pretokenize import Pretokenizer

NAMES = sorted(PATTERNS)
COMPILED = {name: regex.compile(source) for name, source in PATTERNS.items()}

# Characters where the patterns branch: every kind of whitespace (incl. ones Python's isspace() and regex's \s
# disagree on), apostrophes and the letters of the contractions in both cases (+ U+017F LONG S, which (?i:s)
# matches), digits of several scripts and numeric letters, marks (o200k counts them as letters of either case),
# emoji with ZWJ / skin tone / variation selector, CJK, every letter category, '/', unassigned and private-use
# code points, and characters outside the BMP.
TRICKY = (
    " \t\r\n\x0b\x0c\x1c\x1f\x85\xa0\u1680\u180e\u2000\u200a\u200b\u2028\u2029\u202f\u205f\u3000\ufeff"
    "'\u2019\u02bc\"`sStTrReEvVmMlLdD\u017f\u212akK"
    "0189\u0663\u096a\u2460\u00bd\u216b\U0001d7d8"
    "\u0301\u0308\u0903\u20dd\u200d\ufe0f\U0001f600\U0001f44d\U0001f3fd\U0001f1fa\U0001f1f8"
    "\u4e2d\u6587\u3042\u30ab\ud55c"
    "aZ\u00c4\u00df\u01c5\u02b0\u05d0\u2135\u0391\u03c9\u0416\u0436\U0001d400\U00010400\U00010428"
    "/.,!?-()$\u20ac_\u00b7\u0378\ue000\U0010ffff\U000e0001"
)
FRAGMENTS = (
    *TRICKY,
    "'s", "'S", "'t", "'re", "'RE", "'Ve", "'m", "'ll", "'lL", "'d", "'\u017f",
    "  ", "   ", "\r\n", "\n\n", " \n ", "\t\t", "12345", "\u0663\u0664\u0665\u0666",
    "Hello", "HELLO", "hello", "McDonald", "\u00c9cole", "\U0001f469\u200d\U0001f469\u200d\U0001f467",
    "e\u0301", "A\u0308B", "//", " /", "http://x.y/z",
)

tricky_text = st.text(alphabet=st.sampled_from(TRICKY), max_size=30)
fragment_text = st.lists(st.sampled_from(FRAGMENTS), max_size=15).map("".join)
any_text = st.text(max_size=40)  # every code point but the surrogates


def _shared_lines(path: Path, every: int = 1, size: int = 1) -> list[str]:
    """Return every `every`-th group of `size` consecutive lines of `path` (line ends kept, joined)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    lines = [line + "\n" for line in lines[:-1]] + lines[-1:]
    groups = ["".join(lines[i : i + size]) for i in range(0, len(lines), size)]
    return groups[::every]


def _assert_equal_to_regex(text: str) -> None:
    try:
        text.encode("utf-8")
        encodable = True
    except UnicodeEncodeError:  # a lone surrogate: no UTF-8 pieces (test_pretokenize_scanner_on_surrogates)
        encodable = False
    for name in NAMES:
        expected = COMPILED[name].findall(text)
        got = _scanner.split(text, _scanner.SCANNERS[name])
        assert got == expected, (name, text)
        if encodable:  # the encoders' splitter (one loop per pattern, UTF-8 written in place)
            assert _scanner.split_utf8(text, _scanner.SCANNERS[name]) == [piece.encode() for piece in expected], (
                name, text)
            # The same scanners reading the str's UTF-8 form (long texts): byte offsets, no transcoding.
            assert _scanner.split_utf8(text, _scanner.SCANNERS[name], in_utf8=True) == [
                piece.encode() for piece in expected], (name, text)


# --- the scanners are the regexes ------------------------------------------------------------------------------


@settings(deadline=None, derandomize=True, max_examples=500)
@given(any_text)
def test_pretokenize_scanner_equals_regex_on_any_text(text: str) -> None:
    _assert_equal_to_regex(text)


@settings(deadline=None, derandomize=True, max_examples=500)
@given(tricky_text)
def test_pretokenize_scanner_equals_regex_on_tricky_characters(text: str) -> None:
    _assert_equal_to_regex(text)


@settings(deadline=None, derandomize=True, max_examples=500)
@given(fragment_text)
def test_pretokenize_scanner_equals_regex_on_tricky_fragments(text: str) -> None:
    _assert_equal_to_regex(text)
    for name in NAMES:
        pre = Pretokenizer(name)
        pieces = pre.split(text)
        assert "".join(pieces) == text and all(pieces)  # the pieces tile the text
        assert pre.split_bytes(text) == [piece.encode() for piece in pieces]


# The ASCII fast path's edges: ASCII letter runs of every length around 8 (letter runs of a one-byte text are read
# 8 bytes at a time), Latin-1 characters of each class that stop or continue such a run (letters, digits, a space,
# symbols), letters and symbols at and above U+8000 (lanes that carry in the 2-byte test), contractions in both
# cases, \r\n, whitespace and digit groups; the text's kind (1, 2 or 4 bytes per character) varied by a suffix.
LATIN1 = "\u00e9\u00df\u00aa\u00b5\u00c0\u00ff\u00d7\u00f7\u00a0\u00b2\u00bd\u00ad\u00bf"
ascii_word = st.text(alphabet="abcxyzABCXYZ", min_size=1, max_size=20)
fast_fragment = st.one_of(
    ascii_word,
    st.sampled_from([*LATIN1, "'s", "'S", "'ll", "'LL", "'Re", "'ve", "'d", "'M", "'", "\r\n", "\n", "\r", " ", "  ",
                     "   ", "\t", " \n ", "1", "12", "123", "1234", "1234567", " 42", ".", "!?", " ,", "/", "\u0301",
                     "\u4e2d\u6587", "\u0663\u0664", "\uff21\uff41", "\uac00", "\uffe0", "\u0161"]),
)
fast_text = st.tuples(st.lists(fast_fragment, max_size=12).map("".join), st.sampled_from(["", "\u266f", "\U0001f600"]))


@settings(deadline=None, derandomize=True, max_examples=400)
@given(fast_text)
def test_pretokenize_scanner_equals_regex_around_ascii_runs(parts: tuple[str, str]) -> None:
    text, suffix = parts
    _assert_equal_to_regex(text + suffix)
    _assert_equal_to_regex(suffix + text)
    previous = _scanner._set_ascii_fast_path(False)  # the table path alone (as where regex's ASCII classes differ)
    try:
        _assert_equal_to_regex(text + suffix)
    finally:
        _scanner._set_ascii_fast_path(previous)


def test_pretokenize_scanner_class_check_names_the_first_code_point_that_breaks_a_rule() -> None:
    # Every start checks the cached (compact) table: a table that breaks a rule names the first code point that
    # does, with that rule.
    table = bytearray(_scanner.class_table())
    _scanner._check_classes(_scanner._compact(table))
    lower, upper, digit = table[ord("a")], table[ord("A")], table[ord("1")]
    letter = lower & upper  # \p{L}; lower and upper add the o200k run classes
    for broken, expected in (
        ({0x10FFFF: lower | digit, 0x10FFFE: letter}, "U+10FFFE is \\p{L} but in neither o200k letter class"),
        ({0x10FFFF: lower | digit}, "regex puts U+10FFFF in two of"),
        ({0x10FFFF: (lower & ~letter) | digit, 0x30000: letter | digit}, "regex puts U+30000 in two of"),
        ({0x10FFFF: (upper & ~letter) | table[ord(" ")]}, "U+10FFFF is in an o200k letter class and in"),
    ):
        copy = bytearray(table)
        for cp, flags in broken.items():
            copy[cp] = flags
        with pytest.raises(RuntimeError, match=regex.escape(expected)):
            _scanner._check_classes(_scanner._compact(copy))


def test_pretokenize_scanner_reads_ascii_letters_eight_at_a_time() -> None:
    # On this (little-endian) machine with regex's classes, the fast path is on: the tests above exercise it.
    assert _scanner.ascii_fast_path()
    for k in range(30):  # runs ending at every offset of a word and of the text, in 1-, 2- and 4-byte str
        for wide in ("", "\u266f", "\U0001f600"):
            _assert_equal_to_regex("x" * k + " y" + "Z" * k + "\u00e9" * (k % 3) + wide * (k % 2) + "'s" + "q" * k)


def test_pretokenize_scanner_equals_regex_on_all_short_strings() -> None:
    # Every string of up to 3 characters over an alphabet that hits each branch of each scanner.
    alphabet = " \t\n\r\xa0'sSlLeE\u017fa\u0301\u02b0\u01c5\u4e2d1\u0663.!/"
    for size in range(4):
        for chars in itertools.product(alphabet, repeat=size):
            _assert_equal_to_regex("".join(chars))


def test_pretokenize_scanner_class_table_equals_regex_classes() -> None:
    np = pytest.importorskip("numpy")
    table = np.frombuffer(_scanner.class_table(), dtype=np.uint8)
    everything = _scanner._all_code_points()
    code_points = np.frombuffer(everything.encode("utf-32-le"), dtype="<u4")
    for flag, source in [
        (1, r"\p{L}"),
        (2, r"\p{N}"),
        (4, r"\s"),
        (8, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
        (16, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
        (32, r"[\r\n]"),
    ]:
        expected = np.zeros(len(table), dtype=bool)
        for m in regex.finditer(source + "+", everything):
            expected[code_points[m.start() : m.end()]] = True
        assert np.array_equal((table & flag) != 0, expected), source
    assert not (table[0xD800:0xE000]).any()  # surrogates: in no class, like regex


@pytest.mark.slow
def test_pretokenize_scanner_equals_regex_around_every_code_point() -> None:
    # Every code point (no surrogates) in context, between spaces (about 4 s: regex is the slow side).
    everything = _scanner._all_code_points()
    for start in range(0, len(everything), 8192):
        _assert_equal_to_regex(" ".join(everything[start : start + 8192]))


def test_pretokenize_scanner_on_surrogates() -> None:
    # str may hold lone surrogates: split still equals regex; there is no UTF-8 form, so split_bytes raises.
    for text in ("a\ud800b", "\udfff 's", " \ud83d\n"):
        _assert_equal_to_regex(text)
        with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
            Pretokenizer("gpt2").split_bytes(text)
        with pytest.raises(UnicodeEncodeError):
            Pretokenizer("o200k").count([text])


# Class flags as regex gives them, one character at a time (the bits of _scanner.class_flags).
_CLASS_BITS = [(1, r"\p{L}"), (2, r"\p{N}"), (4, r"\s"), (8, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
               (16, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"), (32, r"[\r\n]")]
_CLASS_REGEXES = [(bit, regex.compile(source)) for bit, source in _CLASS_BITS]

# Code points where the compact table could go wrong: the ends of the BMP table and of each two-level block, emoji,
# letters and digits past the BMP, unassigned, private-use and tag characters, the last code point.
code_point = st.one_of(
    st.integers(0, 0x10FFFF),
    st.integers(0x100, 0x10FF).flatmap(lambda block: st.sampled_from([block * 256 - 1, block * 256, block * 256 + 255])),
    st.integers(0x1F000, 0x1FAFF),  # emoji and symbols
    st.sampled_from([0, 0x7F, 0x80, 0xFF, 0xFFFF, 0x10000, 0x1D400, 0x1D7D8, 0x10400, 0x20000, 0x2A6D6, 0x2FFFE,
                     0x30000, 0x3FFFF, 0xE0001, 0xE0100, 0xE01EF, 0xF0000, 0x10FFFD, 0x10FFFF]),
)


@given(code_point)
@settings(max_examples=400)
def test_pretokenize_compact_class_lookup_equals_regex(cp: int) -> None:
    # The two-level lookup past the BMP (and the flat one in it) give regex's classes of any code point, and the
    # scanners reading it in 1-, 2- and 4-byte str and in UTF-8 split around it as regex does.
    ch = chr(cp)
    assert _scanner.class_flags(ch) == sum(bit for bit, pattern in _CLASS_REGEXES if pattern.fullmatch(ch))
    _assert_equal_to_regex(f"{ch}a {ch}{ch}1 '{ch}\n{ch} \u4e2d{ch}")


def test_pretokenize_compact_class_table_layout() -> None:
    # The table built from regex is ~96 KB, not 1.1 MB, holds its layout's checks, and is the flat table compacted.
    table, _, _ = _scanner._compute_tables(regex)
    assert len(table) < 100_000
    _scanner._check_classes(table)
    flat = _scanner._expand(table)
    assert bytes(flat) == _scanner.class_table() and _scanner._compact(flat) == table


def test_pretokenize_forged_class_table_is_refused() -> None:
    # A cache entry is untrusted: a stage-1 index past stage 2, a block no entry names, a size not of the layout and
    # a supplementary letter that is also a digit are each refused (the caller rebuilds from regex).
    table, _, _ = _scanner._compute_tables(regex)
    stage1 = 0x10000
    blocks = (len(table) - _scanner._STAGE2) // 256
    out_of_range = bytearray(table)
    out_of_range[stage1 + 2 * 5:stage1 + 2 * 6] = blocks.to_bytes(2, sys.byteorder)
    with pytest.raises(RuntimeError, match="stage 1 sends U\\+10500"):
        _scanner._check_classes(out_of_range)
    with pytest.raises(RuntimeError, match="named by no stage-1 entry"):
        _scanner._check_classes(table + bytes(256))
    for size in (len(table) - 1, len(table) + 1, _scanner._STAGE2):
        with pytest.raises(RuntimeError, match="not one of this layout"):
            _scanner._check_classes((table + bytes(1))[:size])
    index = [int.from_bytes(table[stage1 + 2 * b:stage1 + 2 * b + 2], sys.byteorder) for b in range(0x1000)]
    bad_letter = bytearray(table)
    emoji = index[0xF6]  # the block of U+1F600..U+1F6FF (maybe shared: the message names its first code point)
    bad_letter[_scanner._STAGE2 + 256 * emoji] = 1 | 2 | 8
    with pytest.raises(RuntimeError, match=f"U\\+{0x10000 + 256 * index.index(emoji):04X} in two of"):
        _scanner._check_classes(bad_letter)


def test_pretokenize_scanner_builds_tables_fast() -> None:
    _scanner.split("warm up", 0)
    assert _scanner.TABLE_BUILD_SECONDS is not None and _scanner.TABLE_BUILD_SECONDS < 5  # ~0.06 s here
    assert _scanner.class_flags("\u017f") & 1 and _scanner.class_flags("\u3000") & 4


@pytest.mark.shared_data
@pytest.mark.parametrize(
    ("relative", "every", "size"),
    [
        ("corpora/en/english_combined.txt", 10, 8),
        ("corpora/zh/zh_hongloumeng.txt", 1, 4),
        ("corpora/zh/zh_classics_mixed.txt", 4, 4),
        ("corpora/multi/ja_wagahaiwa_nekodearu.txt", 4, 4),
    ],
)
def test_pretokenize_scanner_equals_regex_on_real_text(shared_data: Path, relative: str, every: int, size: int) -> None:
    for chunk in _shared_lines(shared_data / relative, every, size):
        _assert_equal_to_regex(chunk)


@pytest.mark.slow
@pytest.mark.shared_data
def test_pretokenize_scanner_equals_regex_on_udhr(shared_data: Path) -> None:
    # UDHR in 388 languages, every line (about 3 s: regex is the slow side).
    for line in _shared_lines(shared_data / "corpora/multi/udhr2_all_lang_tab_line.tsv"):
        _assert_equal_to_regex(line)


# --- the named patterns ----------------------------------------------------------------------------------------


def test_pretokenize_names_aliases_and_sources() -> None:
    assert NAMES == ["gpt2", "gpt4", "llama3", "o200k", "qwen2"]
    assert PATTERNS["gpt2"] == r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    with pytest.raises(TypeError):
        PATTERNS["mine"] = "x"  # type: ignore[index]
    for alias, name in ALIASES.items():
        assert Pretokenizer(alias) == Pretokenizer(name) and Pretokenizer(alias).name == name
    assert Pretokenizer("cl100k").name == "gpt4" and Pretokenizer("GPT2").name == "gpt2"
    for name, source in PATTERNS.items():
        pre = Pretokenizer(source)  # the exact source of a named pattern is that pattern
        assert pre.name == name and pre.regex == source and pre == Pretokenizer(name)
    assert Pretokenizer().name == "gpt2" and Pretokenizer().add_prefix_space is False
    assert {name for name in NAMES if to_oniguruma(PATTERNS[name]) != PATTERNS[name]} == {"gpt4"}
    assert Pretokenizer(to_oniguruma(PATTERNS["gpt4"])) == Pretokenizer("gpt4")  # recognised, same pieces


def test_pretokenize_sources_match_tiktoken() -> None:
    assert tiktoken_pat_str("cl100k_base") == PATTERNS["gpt4"]
    assert tiktoken_pat_str("o200k_base") == PATTERNS["o200k"]


def test_pretokenize_named_pattern_examples() -> None:
    text = "I'M  don't\tWE'LL 12345 cafe\u0301!!\n\n  \u4e2d\u6587 McDonald's HTTP/2\n "
    assert Pretokenizer("gpt2").split(text) == [
        "I", "'", "M", " ", " don", "'t", "\t", "WE", "'", "LL", " 12345", " cafe", "\u0301!!", "\n\n ",
        " \u4e2d\u6587", " McDonald", "'s", " HTTP", "/", "2", "\n ",
    ]  # fmt: skip
    assert Pretokenizer("gpt4").split(text) == [
        "I", "'M", " ", " don", "'t", "\tWE", "'LL", " ", "123", "45", " cafe", "\u0301!!\n\n", " ",
        " \u4e2d\u6587", " McDonald", "'s", " HTTP", "/", "2", "\n ",
    ]  # fmt: skip
    assert Pretokenizer("llama3").split(text)[-2:] == ["\n", " "]  # the one place llama3 differs from gpt4
    assert Pretokenizer("qwen2").split("12345") == ["1", "2", "3", "4", "5"]
    assert Pretokenizer("o200k").split(text) == [
        "I'M", " ", " don't", "\tWE'LL", " ", "123", "45", " cafe\u0301", "!!\n\n", " ", " \u4e2d\u6587",
        " Mc", "Donald's", " HTTP", "/", "2", "\n", " ",
    ]  # fmt: skip


def test_pretokenize_gpt4_and_llama3_differ_only_at_trailing_whitespace_with_newline() -> None:
    gpt4, llama3 = Pretokenizer("gpt4"), Pretokenizer("llama3")
    assert gpt4.split("a\n  ") == ["a", "\n  "] and llama3.split("a\n  ") == ["a", "\n", "  "]
    assert gpt4.split("a\n  b") == llama3.split("a\n  b") == ["a", "\n", " ", " b"]
    assert gpt4.split("a  ") == llama3.split("a  ") == ["a", "  "]


# --- Pretokenizer API ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_pretokenize_add_prefix_space(name: str) -> None:
    on, off = Pretokenizer(name, add_prefix_space=True), Pretokenizer(name)
    assert on.split("") == [] and on.count([""]) == {}
    assert on.split("hello world") == off.split(" hello world") == [" hello", " world"]
    assert on.split(" hello") == off.split(" hello")  # already starts with a space: unchanged
    assert on.split("\thello") == off.split(" \thello")  # only " " counts as the prefix space
    assert on.split_bytes("é") == off.split_bytes(" é")
    assert on.count(["a", " a", ""]) == {b" a": 2}


@settings(deadline=None, derandomize=True, max_examples=200)
@given(st.lists(fragment_text, max_size=6), st.sampled_from(NAMES), st.booleans())
def test_pretokenize_count_equals_counter_of_split_bytes(texts: list[str], name: str, prefix: bool) -> None:
    pre = Pretokenizer(name, add_prefix_space=prefix)
    expected = Counter(piece for text in texts for piece in pre.split_bytes(text))
    got = pre.count(texts)
    assert got == expected
    assert list(got) == list(dict.fromkeys(piece for text in texts for piece in pre.split_bytes(text)))  # order
    assert pre.count(iter(texts), {b"x": 1}) == expected + Counter({b"x": 1})


@settings(deadline=None, derandomize=True, max_examples=60)
@given(st.lists(fragment_text, max_size=40), st.sampled_from(NAMES), st.booleans(), st.integers(2, 5),
       st.integers(1, 300))
def test_pretokenize_count_on_threads_equals_one_thread(texts: list[str], name: str, prefix: bool, threads: int,
                                                        repeat: int) -> None:
    # Issue 10: threads scan contiguous parts without the GIL; counts and their first-seen order do not change.
    pre = Pretokenizer(name, add_prefix_space=prefix)
    batch = texts * repeat * 40  # past the size below which one thread counts
    one = pre.count(batch)
    many = pre.count(batch, threads=threads)
    assert many == one and list(many) == list(one)
    tally = pre.tally()
    for part in (batch[: len(batch) // 3], batch[len(batch) // 3:]):
        tally.add(part, threads=threads)
    assert list(tally.into({}).items()) == list(one.items())


def test_pretokenize_count_on_threads_names_the_bad_text() -> None:
    texts = ["fine text " * 50] * 400 + ["bad \ud800 here"] + ["more"] * 10
    with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
        Pretokenizer("gpt2").count(texts, threads=2)
    with pytest.raises(TypeError, match=r"texts\[400\] is bytes"):
        Pretokenizer("gpt2").count(texts[:400] + [b"x"], threads=2)
    with pytest.raises(ValueError, match="threads must be an int >= 1, got 0"):
        Pretokenizer("gpt2").count(texts, threads=0)


def _lines_of(block: str) -> list[str]:
    """block's lines as tokenizers reads a file: each ends after its "\\n" (a last one without it too)."""
    lines = [part + "\n" for part in block.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


@settings(deadline=None, derandomize=True, max_examples=80)
@given(st.lists(st.sampled_from(["a", "b c", " ", "\n", "\n\n", "é", "中文", "😀", "\t", "'s", "12", "\u0a0a",
                                 "\U0001000a", "\u2028", "\u0085", "ÿ"]), max_size=80),
       st.sampled_from(NAMES), st.booleans(), st.integers(1, 3), st.sampled_from(["str", "raw", "utf8"]),
       st.integers(1, 1200))
def test_pretokenize_count_lines_of_a_block_equals_counting_the_lines(
        parts: list[str], name: str, prefix: bool, threads: int, given_as: str, repeat: int) -> None:
    # Issue 10: a file block is counted in place, line by line (PieceTally.add_lines / start_lines), with the
    # counts and first-seen order of counting its lines as str; every PEP 393 kind, with and without the UTF-8,
    # and (issue 23) the UTF-8 alone, checked (Utf8Block): no str.
    block = "".join(parts) * repeat
    pid = _scanner.SCANNERS[Pretokenizer(name).name]
    expected = Pretokenizer(name, add_prefix_space=prefix).count(_lines_of(block))
    tally = _tally.PieceTally(pid, prefix)
    raw = block.encode("utf-8") if given_as == "raw" else None
    lines = tally.add_lines(_tally.Utf8Block(block.encode()) if given_as == "utf8" else block, threads, raw)
    assert lines == len(_lines_of(block))
    assert list(tally.into({}).items()) == list(expected.items())


def test_pretokenize_tally_batches_in_the_background_keep_the_order_of_one_thread() -> None:
    # Threads keep counters of their own across batches (each piece stamped with its place in the stream):
    # batches counted with different thread counts, started in the background, give one thread's dict.
    words = [" ".join(f"w{(i * 7919 + k) % 5003}" for k in range(12)) + "\n" for i in range(12_000)]
    pre = Pretokenizer("gpt2")
    one = pre.count(words)
    tally = pre.tally()
    plan = [(0, 3000, 2), (3000, 3001, 1), (3001, 8000, 3), (8000, 12_000, 2)]
    for begin, end, threads in plan:
        if threads == 3:
            tally.start_lines("".join(words[begin:end]), threads)
        else:
            tally.start(words[begin:end], threads)
    tally.finish()
    assert len(tally) == len(one)
    assert list(tally.into({}).items()) == list(one.items())


def test_pretokenize_tally_names_a_bad_line_of_a_block() -> None:
    tally = Pretokenizer("gpt2").tally()
    block = "fine text\n" * 20_000 + "bad \ud800 here\n" + "more\n"
    with pytest.raises(UnicodeEncodeError, match="surrogates not allowed"):
        tally.add_lines(block, 2)
    # A bad text in a batch queued behind others (up to two wait) is named at the next start() once its batch has
    # failed, else when the tally finishes: which one depends on the threads' progress, so either may raise.
    fine = ["fine text " * 20 + "\n"] * 8000
    tally = Pretokenizer("gpt2").tally()
    with pytest.raises(UnicodeEncodeError, match="position 7"):
        for batch in (fine, fine, fine[:100] + ["queued \ud800 bad\n"] + fine[:7000], fine):
            tally.start(batch, 2)
        tally.finish()


def test_pretokenize_frame_lines_equals_frame_utf8_of_the_lines() -> None:
    for block in ("", "a", "a\n", "a\nbc\n\n", "é中\n😀", "\n\n"):
        raw = block.encode("utf-8")
        assert _tally.frame_lines(raw) == _tally.frame_utf8(_lines_of(block))
        assert _tally.line_stats(raw) == (max((len(line) for line in raw.split(b"\n")), default=0), raw.count(b"\n"))


@pytest.mark.shared_data
@pytest.mark.parametrize("relative", ["corpora/en/english_combined.txt", "corpora/zh/zh_songci_simplified.txt"])
def test_pretokenize_count_on_threads_real_corpora(shared_data: Path, relative: str) -> None:
    lines = [line + "\n" for line in (shared_data / relative).read_text(encoding="utf-8").split("\n")[:60_000]]
    for name in ("gpt2", "o200k"):
        one = Pretokenizer(name).count(lines)
        for threads in (2, 3):
            many = Pretokenizer(name).count(lines, threads=threads)
            assert list(many.items()) == list(one.items())


def test_pretokenize_count_adds_to_given_dict() -> None:
    counts = {b" b": 10}
    result = Pretokenizer("gpt2").count(["a b", "b"], counts)
    assert result is counts and counts == {b" b": 11, b"a": 1, b"b": 1}
    big = Pretokenizer("gpt2").count(["x"] * 70_000)  # counts pass the 16-bit range; the hash table grows
    assert big == {b"x": 70_000}
    words = ["".join(chr(97 + int(digit)) for digit in str(i)) for i in range(20_000)]
    many = Pretokenizer("gpt2").count(words)
    assert len(many) == 20_000 and list(many)[:2] == [b"a", b"b"] and list(many)[-1] == b"bjjjj"
    assert Pretokenizer("o200k").count(["a a"], Counter({b"a": 2})) == Counter({b"a": 3, b" a": 1})


@pytest.mark.shared_data
def test_pretokenize_count_on_real_text(shared_data: Path) -> None:
    lines = _shared_lines(shared_data / "corpora/en/english_combined.txt", 20) + _shared_lines(
        shared_data / "corpora/multi/udhr2_all_lang_tab_line.tsv", 20
    )
    for name in ("gpt2", "o200k"):
        pre = Pretokenizer(name)
        expected = Counter(piece.encode() for line in lines for piece in COMPILED[name].findall(line))
        assert pre.count(lines) == expected


def test_pretokenize_custom_regex() -> None:
    pre = Pretokenizer(r"(\d)+|[a-z]+|x*")  # a group and a pattern that can match empty
    assert pre.name is None and pre.regex == r"(\d)+|[a-z]+|x*"
    assert pre.split("ab12 c") == ["ab", "12", " ", "c"]  # whole matches and the gaps, no group tuples or empties
    assert pre.split_bytes("é12") == ["é".encode(), b"12"]  # text outside the matches is kept as pieces
    assert pre.count(["ab12", "ab"]) == {b"ab": 2, b"12": 1}
    spaced = Pretokenizer(r"\S+", add_prefix_space=True)
    assert spaced.split("a b") == [" ", "a", " ", "b"] and spaced.count(["é"]) == {" ".encode(): 1, "é".encode(): 1}
    assert repr(pre) == "Pretokenizer('(\\\\d)+|[a-z]+|x*', add_prefix_space=False)"


def test_pretokenize_bad_patterns() -> None:
    with pytest.raises(ValueError, match=r"unknown pattern name 'gpt3'.*'gpt2'.*\(\?:gpt3\)"):
        Pretokenizer("gpt3")
    with pytest.raises(ValueError, match=r"pattern '\(\?<x' is not a valid regex for the `regex` module"):
        Pretokenizer("(?<x")
    with pytest.raises(ValueError, match="pattern is empty"):
        Pretokenizer("")
    with pytest.raises(TypeError, match="pattern must be a str.*got bytes"):
        Pretokenizer(b"gpt2")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="add_prefix_space must be a bool, got str"):
        Pretokenizer("gpt2", add_prefix_space="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Pretokenizer("gpt2", True)  # type: ignore[misc]


@pytest.mark.parametrize("pattern", ["gpt2", r"\w+"])
def test_pretokenize_bad_inputs(pattern: str) -> None:
    pre = Pretokenizer(pattern)
    for method in (pre.split, pre.split_bytes):
        with pytest.raises(TypeError, match="text must be a str, got bytes b'abc'"):
            method(b"abc")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="got NoneType None"):
            method(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"got a single str 'abc'.*count\(\[text\]\)"):
        pre.count("abc")
    with pytest.raises(TypeError, match=r"texts\[1\] is int 5; expected str"):
        pre.count(["a", 5])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="counts must be a dict"):
        pre.count(["a"], {b"a": 1}.items())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="counts must be a dict"):
        pre.count(["a"], [])  # type: ignore[arg-type]


def test_pretokenize_equality_hash_repr_pickle() -> None:
    items = [
        Pretokenizer("gpt2"),
        Pretokenizer("gpt2", add_prefix_space=True),
        Pretokenizer("o200k"),
        Pretokenizer(r"\S+|\s+", add_prefix_space=True),
    ]
    assert len(set(items)) == 4 and Pretokenizer("gpt4") == Pretokenizer("cl100k")
    assert items[0] != "gpt2" and hash(items[0]) == hash(Pretokenizer(PATTERNS["gpt2"]))
    assert repr(items[1]) == "Pretokenizer('gpt2', add_prefix_space=True)"
    for pre in items:
        assert eval(repr(pre)) == pre
        back = pickle.loads(pickle.dumps(pre))
        assert back == pre and hash(back) == hash(pre) and back.name == pre.name
        assert back.split("Hi  there's 42") == pre.split("Hi  there's 42")
    with pytest.raises(AttributeError, match="immutable"):
        items[0].add_prefix_space = True  # type: ignore[misc]


def test_pretokenize_scanner_rejects_unknown_id() -> None:
    with pytest.raises(ValueError, match="unknown scanner id 9"):
        _scanner.split("a", 9)


# --- peers: tokenizers (Oniguruma) -----------------------------------------------------------------------------


@pytest.mark.crossval
@pytest.mark.shared_data
@pytest.mark.parametrize("add_prefix_space", [False, True])
def test_pretokenize_gpt2_equals_tokenizers_bytelevel(shared_data: Path, add_prefix_space: bool) -> None:
    from tokenizers.pre_tokenizers import ByteLevel

    byte_level = ByteLevel(add_prefix_space=add_prefix_space, use_regex=True)
    pre = Pretokenizer("gpt2", add_prefix_space=add_prefix_space)
    lines = _shared_lines(shared_data / "corpora/en/english_combined.txt", 500, 3)
    lines += _shared_lines(shared_data / "corpora/multi/udhr2_all_lang_tab_line.tsv", 150)
    lines += _shared_lines(shared_data / "corpora/zh/zh_hongloumeng.txt", 40)
    lines += ["", " ", "  x ", "\tx", "x  \n\n", "I'M 'll", "\u3000\u3000\u53e5"]
    assert len(lines) > 300
    for line in lines:
        theirs = [str_to_token(piece) for piece, _ in byte_level.pre_tokenize_str(line)]
        assert pre.split_bytes(line) == theirs, line


@pytest.mark.crossval
@pytest.mark.shared_data
@pytest.mark.parametrize("name", NAMES)
def test_pretokenize_equals_tokenizers_split(shared_data: Path, name: str) -> None:
    # The tokenizer.json spelling (to_oniguruma) in a tokenizers Split (Oniguruma) gives our pieces.
    from tokenizers import Regex
    from tokenizers.pre_tokenizers import Split

    split = Split(Regex(to_oniguruma(PATTERNS[name])), behavior="isolated")
    pre = Pretokenizer(name)
    lines = _shared_lines(shared_data / "corpora/en/english_combined.txt", 500, 3)
    lines += _shared_lines(shared_data / "corpora/multi/udhr2_all_lang_tab_line.tsv", 150)
    for line in lines + ["a\n  ", "x  \n\n", "I'M 'll \u017f 1234567 \u0663\u0664\u0665\u0666", "\u3000\n\t x"]:
        assert pre.split(line) == [piece for piece, _ in split.pre_tokenize_str(line)], line


@pytest.mark.crossval
def test_pretokenize_tokenizers_reads_gpt4_digits_differently() -> None:
    # Peer quirk, pinned: tiktoken's cl100k source says \p{N}{1,3}+ (possessive in `regex` and in tiktoken's
    # fancy-regex), but Oniguruma's Ruby syntax reads `{1,3}+` as "({1,3}) one or more times". So this exact
    # source in a tokenizer.json Split would not split digits in threes; to_oniguruma(PATTERNS["gpt4"]) does.
    from tokenizers import Regex
    from tokenizers.pre_tokenizers import Split

    split = Split(Regex(PATTERNS["gpt4"]), behavior="isolated")
    assert [piece for piece, _ in split.pre_tokenize_str("x 12345")] == ["x", " ", "12345"]
    assert Pretokenizer("gpt4").split("x 12345") == ["x", " ", "123", "45"]


# -- patterns that leave gaps: no text is ever lost (issue 13) ---------------------------------------------------



class _NewerUnicode:
    """Code points unassigned in this Python's Unicode (14.0): `regex` (17.0) and Oniguruma (16.0) may disagree."""

    @staticmethod
    def match(char: str) -> bool:
        import unicodedata

        return unicodedata.category(char) == "Cn"


_NEWER_UNICODE = _NewerUnicode()
GAP_PATTERNS = [r"\w+", r"\p{L}+|\p{N}+", r"[a-z]+", r"\d", r"(?i:hello)|\s", r"\w*", r"[\w']+", r"\W+"]


@pytest.mark.parametrize("pattern", GAP_PATTERNS)
@settings(deadline=None, derandomize=True, max_examples=150)
@given(text=fragment_text)
def test_pretokenize_gaps_become_pieces_as_tokenizers_split(pattern: str, text: str) -> None:
    from tokenizers import Regex, pre_tokenizers

    from hf_bpe.core.patterns import to_oniguruma

    pre = Pretokenizer(pattern)
    pieces = pre.split(text)
    assert "".join(pieces) == text and all(pieces)
    # The engines' Unicode versions differ on code points new in Unicode 17 (documented): compare the rest.
    if any(_NEWER_UNICODE.match(c) for c in text):
        return
    split = pre_tokenizers.Split(Regex(to_oniguruma(pattern)), behavior="isolated", invert=False)
    assert pieces == [piece for piece, _ in split.pre_tokenize_str(text)]
    assert pre.split_bytes(text) == [p.encode("utf-8") for p in pieces]
    assert pre.count([text]) == dict(Counter(p.encode("utf-8") for p in pieces))


def test_pretokenize_gap_example_from_the_report() -> None:
    assert Pretokenizer(r"\w+").split("Hello, world! 123") == ["Hello", ", ", "world", "! ", "123"]
