"""The classic encoders equal the published code: subword-nmt's apply-bpe (PyPI), WordPiece, rasbt's passes."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.formats.bpe_codes import dump_codes
from hf_bpe.model.segment import CodesSegmenter, merge_greedy_passes, tokenize_longest_first, wordpiece_word

symbols = st.text(alphabet="abc", min_size=1, max_size=3)


@pytest.mark.crossval
@settings(max_examples=200, deadline=None)
@given(
    merges=st.lists(st.tuples(symbols, st.one_of(symbols, symbols.map(lambda s: s + "</w>"))), min_size=1,
                    max_size=12),
    line=st.lists(st.sampled_from(["a", "b", "c", " ", "  ", "ab", "\n"]), max_size=20).map("".join),
    version=st.sampled_from([(0, 1), (0, 2)]),
)
def test_segment_codes_equal_pypi_apply_bpe(merges, line, version) -> None:
    apply_bpe = pytest.importorskip("subword_nmt.apply_bpe")
    reference = apply_bpe.BPE(io.StringIO(dump_codes(merges, version=version)))
    ours = CodesSegmenter(merges, version=version)
    assert ours.segment_line(line) == reference.process_line(line)


def test_segment_codes_first_duplicate_ranks() -> None:
    # ("a", "b") listed again later keeps its first rank, as subword-nmt's "only consider first instance".
    segmenter = CodesSegmenter([("b", "c</w>"), ("a", "b"), ("a", "b")])
    assert segmenter.segment_word("abc") == ("a", "bc")


def test_segment_wordpiece_longest_match_and_unk() -> None:
    vocab = {"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "una": 4, "##ffable": 5}
    assert wordpiece_word("unaffable", vocab, 0) == [4, 5]
    assert wordpiece_word("unaffablex", vocab, 0) == [0]
    assert wordpiece_word("u" * 101, {"u": 1, "##u": 2}, 0) == [0]


def test_segment_rasbt_passes_are_not_rank_based() -> None:
    # Rank order would merge (2, 3) first (rank 0); rasbt's left-to-right pass merges (1, 2) first.
    merges = {(2, 3): 10, (1, 2): 11}
    assert merge_greedy_passes([1, 2, 3], merges) == [11, 3]


def test_segment_longest_first_unknown_piece() -> None:
    assert tokenize_longest_first("xhigh", ["high"]) == ["</u>", "high"]
