"""SentencePiece's normalizer, exactly: the pure-Python reference (``core/sentencepiece_normalize.py``) and the
compiled one (``csrc/sp_normalizer.hpp``) equal ``sentencepiece.SentencePieceNormalizer`` (issue 9)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sentencepiece as spm
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.core._sentencepiece import SentencePieceNormalizer as CompiledNormalizer
from hf_bpe.core.sentencepiece_normalize import SentencePieceNormalizer, parse_charsmap
from hf_bpe.training.sentencepiece_bpe import builtin_charsmap

pytestmark = pytest.mark.crossval

_FLAGS = [(True, True), (False, True), (True, False), (False, False)]
_SETUPS = [(rule, dummy, remove) for rule in ("nmt_nfkc", "nfkc_cf", "identity") for dummy, remove in _FLAGS]
# What tokenizers' Precompiled gets wrong (a grapheme replaced by the form of its shortest known prefix), spaces of
# every kind, CRLF, control characters, compatibility forms, Hangul jamo, the "▁" mark itself.
_TRICKY = ["ｓ\u0301", "a\u0301\u0301", "ﬁ\u0301", "  a  b  ", "a\r\nb", "\t\x00\x01 x", "Ａ①ｶﾞ",
           "\u1100\u1161\u11a8", "a▁", "▁ ▁", "\u3000x\u00a0", "😀\u200d😀", ""]


def _pair(rule: str, dummy: bool, remove: bool):
    spec = {"precompiled_charsmap": builtin_charsmap(rule), "add_dummy_prefix": dummy,
            "remove_extra_whitespaces": remove, "escape_whitespaces": True}
    theirs = spm.SentencePieceNormalizer(rule_name=rule, add_dummy_prefix=dummy, remove_extra_whitespaces=remove,
                                         escape_whitespaces=True)
    return SentencePieceNormalizer(spec), CompiledNormalizer(spec), theirs


@pytest.mark.parametrize(("rule", "dummy", "remove"), _SETUPS)
@settings(max_examples=150, deadline=None, derandomize=True)
@given(text=st.text(alphabet=st.characters(codec="utf-8")) | st.sampled_from(_TRICKY)
       | st.lists(st.sampled_from(_TRICKY + [" ", "x", "\u0301"]), max_size=8).map("".join))
def test_sentencepiece_normalize_equals_sentencepiece_on_any_text(rule, dummy, remove, text):
    reference, compiled, theirs = _pair(rule, dummy, remove)
    expected = theirs.normalize(text)
    assert reference.normalize(text) == expected
    assert compiled.normalize(text) == expected


@pytest.mark.shared_data
@pytest.mark.parametrize(("rule", "dummy", "remove"), _SETUPS[:2] + _SETUPS[4:5] + _SETUPS[10:11])
def test_sentencepiece_normalize_equals_sentencepiece_on_real_text(shared_data, rule, dummy, remove):
    corpora = shared_data / "corpora"
    files = [corpora / "en" / "english_combined.txt", *sorted((corpora / "zh").glob("*.txt"))[:1],
             *sorted((corpora / "multi").rglob("*.txt"))]
    lines = [line for path in files for line in Path(path).read_bytes()[:20_000].decode("utf-8", "ignore").split("\n")]
    reference, compiled, theirs = _pair(rule, dummy, remove)
    expected = [theirs.normalize(line) for line in lines]
    assert [compiled.normalize(line) for line in lines] == expected
    assert [reference.normalize(line) for line in lines] == expected


def test_sentencepiece_normalize_user_symbols_are_copied_as_they_are():
    spec = {"precompiled_charsmap": builtin_charsmap("nmt_nfkc"), "add_dummy_prefix": True,
            "remove_extra_whitespaces": True, "escape_whitespaces": True}
    for normalizer in (SentencePieceNormalizer(spec, ["Ａ", "ＡＢ"]), CompiledNormalizer(spec, ["Ａ", "ＡＢ"])):
        assert normalizer.normalize("ＡＢＣ Ａ Ｂ") == "▁ＡＢC▁Ａ▁B"


def test_sentencepiece_normalize_refuses_a_broken_charsmap():
    with pytest.raises(ValueError, match="trie size"):
        parse_charsmap(b"\xff\xff\x00\x00abcd")
    with pytest.raises(ValueError, match="precompiled charsmap"):
        CompiledNormalizer({"precompiled_charsmap": b"\xff\xff\x00\x00abcd", "add_dummy_prefix": True,
                            "remove_extra_whitespaces": True, "escape_whitespaces": True})
