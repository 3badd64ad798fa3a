"""The cut rule of hf_bpe.core.fragment, held by property tests for every named pattern."""

from __future__ import annotations

import pickle

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hf_bpe.core.fragment import CUTTABLE_PATTERNS, Fragment, SafeCutter, last_safe_cut
from hf_bpe.core.patterns import PATTERNS
from hf_bpe.core.pretokenize import Pretokenizer

# Every character class the patterns treat differently: letters of each case, marks, digits (ASCII and not),
# apostrophes and contractions, punctuation, '/', whitespace of each kind.
_ALPHABET = st.sampled_from(list("aZé中Ǆʰ\u0301 1٣½'sStTlLdDmM!,./\t\n\r\u00a0\u3000\u2019😀"))
_ALL_CUTS = regex.compile(r"(?<=[\p{L}\p{N}]) ")


@pytest.mark.parametrize("pattern", sorted(CUTTABLE_PATTERNS))
@pytest.mark.parametrize("add_prefix_space", [False, True])
@settings(max_examples=300, deadline=None, derandomize=True)
@given(text=st.text(alphabet=_ALPHABET, max_size=60))
def test_fragment_every_safe_cut_keeps_the_pieces(pattern, add_prefix_space, text):
    compiled = Pretokenizer(pattern, add_prefix_space=add_prefix_space)
    whole = compiled.split(text)
    spec = regex.findall(PATTERNS[pattern], (" " + text) if add_prefix_space and text[:1] not in ("", " ") else text)
    assert whole == spec
    for match in _ALL_CUTS.finditer(text):
        cut = match.start()
        assert compiled.split(text[:cut]) + compiled.split(text[cut:]) == whole, (pattern, text, cut)


def test_fragment_cuts_only_before_a_space_after_a_letter_or_digit():
    assert last_safe_cut("ab cd ef") == 5
    assert last_safe_cut("ab  ") == 2
    assert last_safe_cut("!! ?") == 0
    assert last_safe_cut("x\u00a0y") == 0
    assert last_safe_cut("") == 0


def test_fragment_pickles_with_its_flags():
    fragment = Fragment(" tail", start=False, end=True, line_bytes=99)
    back = pickle.loads(pickle.dumps(fragment))
    assert (back, back.start, back.end, back.line_bytes, type(back)) == (" tail", False, True, 99, Fragment)


# -- issue 22.17: the huge-line reader is linear ------------------------------------------------------------------

# Runs a huge line can be made of: no cut inside (spaces, letters, digits, CJK, carriage returns, punctuation and
# spaces, emoji) or cuts everywhere (words).
_RUNS = {"spaces": " ", "letters": "a", "digits": "7", "cjk": "中", "cr": "\r", "tabs": "\t", "punct": "! ",
         "emoji": "😀", "words": "ab 12 "}


def _cut_whole_carry(chunks):
    """The reader before issue 22.17: search the whole carried text again at each chunk (the reference)."""
    carry, out = "", []
    for chunk in chunks:
        text = carry + chunk
        cut = last_safe_cut(text)
        if cut:
            out.append(text[:cut])
        carry = text[cut:]
    return out, carry


@pytest.mark.parametrize("run", sorted(_RUNS))
def test_fragment_cutter_examines_each_character_once(run):
    # Counted, not timed: the characters handed to the cut search are the characters pushed plus one look-behind
    # character per chunk, so twice the line costs twice the search, whatever the run.
    def examined(size: int) -> int:
        cutter = SafeCutter()
        unit = _RUNS[run]
        chunk = unit * (1000 // len(unit))
        pieces = [cutter.push(chunk) for _ in range(size)] + [cutter.rest()]
        assert "".join(pieces) == chunk * size
        return cutter.examined

    chunk_chars = len(_RUNS[run] * (1000 // len(_RUNS[run])))
    for size in (10, 20, 40):
        assert examined(size) == size * chunk_chars + size - 1


@pytest.mark.parametrize("pattern", sorted(CUTTABLE_PATTERNS))
@pytest.mark.parametrize("run", sorted(_RUNS))
def test_fragment_huge_line_reader_searches_linearly_and_counts_the_same(tmp_path, monkeypatch, pattern, run):
    # Every named pattern (each one is cut): a file of one line made of one run, read in 1 KB parts. The reader
    # before issue 22.17 searched the whole carried text at each part (quadratic for runs without cuts).
    import hf_bpe.training.corpus as corpus_module
    import hf_bpe.training.counts as counts_module
    from hf_bpe.training.counts import WordCounts

    cutters = []

    class Recording(SafeCutter):
        def __init__(self):
            super().__init__()
            cutters.append(self)

    monkeypatch.setattr(corpus_module, "SafeCutter", Recording)
    monkeypatch.setattr(counts_module, "_FRAGMENT_BYTES", 1024)
    unit = _RUNS[run]
    line = unit * (64_000 // len(unit)) + "\n"
    path = tmp_path / "line.txt"
    path.write_text(line, encoding="utf-8")
    from_file = WordCounts.from_corpus(path, pattern=pattern, show_progress=False)
    whole = WordCounts.from_corpus([line], pattern=pattern, show_progress=False)
    assert dict(from_file.items()) == dict(whole.items())
    assert (from_file.documents, from_file.fingerprint) == (whole.documents, whole.fingerprint)
    (cutter,) = cutters
    parts = -(-len(line.encode()) // 1024)
    assert len(line) <= cutter.examined <= len(line) + parts


_RUN_TEXT = st.lists(st.tuples(_ALPHABET, st.integers(1, 40)), max_size=12).map(
    lambda runs: "".join(char * count for char, count in runs))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(text=_RUN_TEXT, sizes=st.lists(st.integers(0, 30), min_size=1, max_size=40))
def test_fragment_cutter_gives_the_fragments_of_the_whole_carry_reader(text, sizes):
    # Any chunking: the same fragments as cutting the whole carried text each time, and the line end to end.
    chunks, at = [], 0
    for size in sizes * (len(text) + 1):
        if at >= len(text):
            break
        chunks.append(text[at:at + size])
        at += size
    if at < len(text):
        chunks.append(text[at:])
    cutter = SafeCutter()
    heads = [head for head in map(cutter.push, chunks) if head]
    expected, carry = _cut_whole_carry(chunks)
    assert heads == expected and cutter.rest() == carry
    assert "".join(heads) + carry == text
    assert cutter.examined <= len(text) + len(chunks)


@pytest.mark.parametrize("pattern", sorted(CUTTABLE_PATTERNS))
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_RUN_TEXT, limit=st.integers(1, 48))
def test_fragment_file_reader_counts_like_the_whole_line(tmp_path, pattern, text, limit):
    # The file reader (byte chunks of `limit`, multi-byte characters split between them) gives pieces whose
    # counts are those of the whole line, for every named pattern.
    from collections import Counter

    from hf_bpe.training.corpus import iter_texts

    line = text.replace("\n", "") + "\n"
    path = tmp_path / "line.txt"
    path.write_text(line, encoding="utf-8")
    compiled = Pretokenizer(pattern)
    parts = list(iter_texts(path, max_line_bytes=limit))
    assert "".join(parts) == line
    assert Counter(p for part in parts for p in compiled.split(str(part))) == Counter(compiled.split(line))
