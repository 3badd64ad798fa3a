"""The compiled classic merge loop equals its pure-Python spec (hand-checked cases and hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.core import _classic, _reference_classic
from hf_bpe.core._reference_classic import TIE_BREAKS


def flat(sequences: list[list[int]]) -> tuple[list[int], list[int]]:
    starts = [0]
    for sequence in sequences:
        starts.append(starts[-1] + len(sequence))
    return [s for sequence in sequences for s in sequence], starts


def both(sequences, counts, vocab, **options):
    symbols, starts = flat(sequences)
    spec = _reference_classic.learn_merges(symbols, starts, counts, vocab, **options)
    compiled = _classic.learn_merges(np.asarray(symbols, np.int32), starts, counts, vocab, **options)
    return spec, compiled


def test_classic_core_overlapping_pairs_merge_left_to_right() -> None:
    # "a a a a" holds three (a, a); merging leaves "aa aa", then one (aa, aa).
    spec, compiled = both([[0, 0, 0, 0]], [1], [b"a"], num_merges=5)
    assert spec == compiled == ([b"a", b"aa", b"aaaa"], [(0, 0, 1), (1, 1, 2)])


@pytest.mark.parametrize("tie_break, first", [("first-seen", (1, 2)), ("largest-pair", (2, 0)),
                                              ("smallest-ids", (0, 1))])
def test_classic_core_tie_breaks(tie_break: str, first: tuple[int, int]) -> None:
    # Three pairs of count 1: (b, c) seen first, (c, a) the largest text, (a, b) the smallest ids.
    spec, compiled = both([[1, 2], [2, 0], [0, 1]], [1, 1, 1], [b"a", b"b", b"c"], num_merges=1,
                          tie_break=tie_break)
    assert spec == compiled
    assert compiled[1][0][:2] == first


def test_classic_core_reuse_equal_gives_one_id_per_text() -> None:
    # "aaa" via (a, aa) in one word and (aa, a) in another: the same symbol when symbols are their text.
    sequences, counts, vocab = [[0, 0, 0, 0, 0, 0], [1, 0, 0]], [1, 5], [b"a", b"b"]
    for reuse in (True, False):
        spec, compiled = both(sequences, counts, vocab, num_merges=6, reuse_equal=reuse)
        assert spec == compiled
        texts = [compiled[0][new] for _, _, new in compiled[1]]
        assert (len(set(texts)) == len(texts)) or not reuse


def test_classic_core_min_frequency_stops() -> None:
    spec, compiled = both([[0, 1], [0, 1], [1, 0]], [1, 1, 1], [b"a", b"b"], num_merges=9, min_frequency=2)
    assert spec == compiled == ([b"a", b"b", b"ab"], [(0, 1, 2)])


def test_classic_core_bad_options_raise_the_same_error() -> None:
    for learn in (_reference_classic.learn_merges, _classic.learn_merges):
        with pytest.raises(ValueError, match="tie_break must be one of"):
            learn([0], [0, 1], [1], [b"a"], num_merges=1, tie_break="newest")
        with pytest.raises(ValueError, match="num_merges must be an int >= 0, got -1"):
            learn([0], [0, 1], [1], [b"a"], num_merges=-1)


@settings(max_examples=400, deadline=None)
@given(
    sequences=st.lists(st.lists(st.integers(0, 3), max_size=12), min_size=1, max_size=6),
    data=st.data(),
    tie_break=st.sampled_from(TIE_BREAKS),
    reuse=st.booleans(),
    num_merges=st.integers(0, 14),
    min_frequency=st.integers(0, 3),
    strip_prefix=st.sampled_from([b"", b"b"]),
    max_vocab=st.one_of(st.none(), st.integers(0, 12)),
)
def test_classic_core_equals_reference(sequences, data, tie_break, reuse, num_merges, min_frequency, strip_prefix,
                                       max_vocab) -> None:
    counts = data.draw(st.lists(st.integers(0, 4), min_size=len(sequences), max_size=len(sequences)))
    vocab = [b"a", b"b", b"ab", b"ba"]  # texts that merges can spell again
    spec, compiled = both(sequences, counts, vocab, num_merges=num_merges, tie_break=tie_break,
                          reuse_equal=reuse, min_frequency=min_frequency, strip_prefix=strip_prefix,
                          max_vocab=max_vocab)
    assert spec == compiled
