"""hf_bpe.model.vocab_checks: the bulk path and the entry-by-entry path agree; errors name the bad entry."""

from __future__ import annotations

from enum import IntEnum

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.model.vocab_checks import merge_triples, tokens_by_id


class _Id(IntEnum):
    A = 0
    B = 1


@settings(deadline=None, derandomize=True, max_examples=100)
@given(tokens=st.lists(st.binary(min_size=1, max_size=4), min_size=1, max_size=20, unique=True),
       picks=st.lists(st.tuples(st.integers(0, 19), st.integers(0, 19)), max_size=20))
def test_vocab_checks_bulk_equals_one_by_one(tokens, picks):
    vocab = {t: i for i, t in enumerate(tokens)}
    merges = tuple((tokens[a % len(tokens)], tokens[b % len(tokens)]) for a, b in picks)
    merges = tuple(m for m in merges if m[0] + m[1] in vocab)
    assert tokens_by_id(vocab) == {i: t for t, i in vocab.items()}
    assert merge_triples(vocab, merges) == [(vocab[a], vocab[b], vocab[a + b]) for a, b in merges]


def test_vocab_checks_subclasses_take_the_slow_path_and_pass():
    class Raw(bytes):
        pass

    assert tokens_by_id({Raw(b"a"): _Id.A, b"b": _Id.B}) == {0: b"a", 1: b"b"}
    assert merge_triples({b"a": 0, b"b": 1, b"ab": 2}, ((Raw(b"a"), b"b"),)) == [(0, 1, 2)]


def test_vocab_checks_errors_name_the_entry():
    with pytest.raises(TypeError, match=r"vocab entries must be bytes -> non-negative int, got 'a': 0"):
        tokens_by_id({"a": 0})
    with pytest.raises(TypeError, match=r"got b'a': True"):
        tokens_by_id({b"a": True})
    with pytest.raises(ValueError, match=r"vocab gives id 0 to both b'a' and b'b'"):
        tokens_by_id({b"a": 0, b"b": 0})
    with pytest.raises(TypeError, match=r"merge 1 must be a pair of bytes, got \('b', b'a'\)"):
        merge_triples({b"a": 0, b"b": 1, b"ab": 2}, ((b"a", b"b"), ("b", b"a")))
    with pytest.raises(ValueError, match=r"merge 0 \(b'b', b'a'\): b'ba' is not in the vocab"):
        merge_triples({b"a": 0, b"b": 1, b"ab": 2}, ((b"b", b"a"),))
