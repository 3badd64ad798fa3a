"""The compiled classic merge loop equals its pure-Python spec (hand-checked cases and hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.core import _classic, _reference_classic
from hf_bpe.core._reference_classic import OBJECTIVES, TIE_BREAKS


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


@settings(max_examples=600, deadline=None)
@given(
    sequences=st.lists(st.lists(st.integers(0, 3), max_size=12), min_size=1, max_size=6),
    data=st.data(),
    tie_break=st.sampled_from(TIE_BREAKS),
    reuse=st.booleans(),
    num_merges=st.integers(0, 14),
    min_frequency=st.integers(0, 3),
    strip_prefix=st.sampled_from([b"", b"b"]),
    max_vocab=st.one_of(st.none(), st.integers(0, 12)),
    objective=st.sampled_from(OBJECTIVES),
    big=st.booleans(),
)
def test_classic_core_equals_reference(sequences, data, tie_break, reuse, num_merges, min_frequency, strip_prefix,
                                       max_vocab, objective, big) -> None:
    # Big counts put the score's freq(a) freq(b) past 2**53 and 2**64: the compiled loop's exact rounding.
    top = 2**40 if big and objective == "score" else 4
    counts = data.draw(st.lists(st.integers(0, top), min_size=len(sequences), max_size=len(sequences)))
    vocab = [b"a", b"b", b"ab", b"ba"]  # texts that merges can spell again
    spec, compiled = both(sequences, counts, vocab, num_merges=num_merges, tie_break=tie_break,
                          reuse_equal=reuse, min_frequency=0 if objective == "score" else min_frequency,
                          strip_prefix=strip_prefix, max_vocab=max_vocab, objective=objective)
    assert spec == compiled


# -- objective="score": WordPiece's likelihood score, count(ab) / (freq(a) freq(b)) as the HF course's floats --------

@settings(max_examples=300, deadline=None)
@given(count=st.integers(1, 2**63 - 1), first=st.integers(1, 2**64 - 1), second=st.integers(1, 2**64 - 1))
def test_classic_core_score_ratio_is_pythons_division(count, first, second) -> None:
    if first * second >= 2**128:
        first = max(1, first >> 32)
    assert _classic.score_ratio(count, first, second) == count / (first * second)


def test_classic_core_score_follows_the_course_floats_not_exact_fractions() -> None:
    # Two pairs of count 1: (0, 1) with freq n and n, (2, 3) with freq n - 1 and n + 1. Exactly, 1/(n^2 - 1) beats
    # 1/n^2; as doubles (the course's compute_pair_scores) they are equal, and the pair seen first wins.
    from fractions import Fraction

    n = 100_000_003
    assert 1 / (n * n) == 1 / ((n - 1) * (n + 1)) and Fraction(1, n * n) < Fraction(1, (n - 1) * (n + 1))
    sequences = [[0, 1], [0], [1], [2, 3], [2], [3]]
    counts = [1, n - 1, n - 1, 1, n - 2, n]
    spec, compiled = both(sequences, counts, [b"a", b"b", b"c", b"d"], num_merges=1, objective="score")
    assert spec == compiled and compiled[1] == [(0, 1, 4)]


def test_classic_core_score_rescored_when_a_part_gets_rarer() -> None:
    # (b, c) 3/(3*4) is merged first; "c" gets rarer, so (c, d) (count unchanged) rises from 1/(4*2) to 1/(1*2)
    # and beats (e, f) at 1/(4*1), which a stale score would have merged second.
    sequences, counts = [[1, 2], [2, 3], [3], [4, 5], [4]], [3, 1, 1, 1, 3]
    spec, compiled = both(sequences, counts, [b"a", b"b", b"c", b"d", b"e", b"f"], num_merges=3,
                          objective="score")
    assert spec == compiled
    assert [m[:2] for m in compiled[1]] == [(1, 2), (2, 3), (4, 5)]


def test_classic_core_score_refuses_min_frequency() -> None:
    for learn in (_reference_classic.learn_merges, _classic.learn_merges):
        with pytest.raises(ValueError, match="min_frequency belongs to objective='count'"):
            learn([0, 0], [0, 2], [1], [b"a"], num_merges=1, objective="score", min_frequency=2)
        with pytest.raises(ValueError, match="objective must be one of 'count', 'score', got 'likelihood'"):
            learn([0, 0], [0, 2], [1], [b"a"], num_merges=1, objective="likelihood")
