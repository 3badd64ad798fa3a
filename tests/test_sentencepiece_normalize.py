"""SentencePiece's normalizer, exactly: the pure-Python reference (``core/sentencepiece_normalize.py``) and the
compiled one (``csrc/sp_normalizer.hpp``) equal ``sentencepiece.SentencePieceNormalizer`` (issue 9)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
import sentencepiece as spm
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.core._sentencepiece import SentencePieceNormalizer as CompiledNormalizer
from hf_bpe.core.sentencepiece_normalize import SentencePieceNormalizer, parse_charsmap
from hf_bpe.training.sentencepiece.bpe import builtin_charsmap

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


# Issue 33.1: a crafted charsmap. The header's trie size must fit the bytes *after* the 4-byte header (a trie running
# up to 3 bytes past the blob was read past its end), a 0-byte trie is the identity, and a damaged charsmap is a
# ValueError naming the field from both paths and every public constructor that reaches it, never a crash.
_SPEC = {"add_dummy_prefix": True, "remove_extra_whitespaces": True, "escape_whitespaces": True}
_PAST_THE_END = struct.pack("<I", 8) + b"\x01\0\0\0" + b"a"  # an 8-byte trie, 5 bytes after the header


def _both(charsmap: bytes):
    """(outcome of the reference, outcome of the compiled) on a few texts: the normalized texts, or the error."""
    outcomes = []
    for make in (SentencePieceNormalizer, CompiledNormalizer):
        try:
            normalizer = make({**_SPEC, "precompiled_charsmap": charsmap})
        except ValueError as exc:
            outcomes.append(("refused", str(exc)))
            continue
        texts = []
        for text in ("", "a b", "\x00\x01\x7f", "Ａ é ﬁ", "abcdefghij" * 3, bytes(range(1, 128)).decode()):
            try:
                texts.append(normalizer.normalize(text))
            except ValueError as exc:
                texts.append(("refused", str(exc)))
        outcomes.append(("normalized", texts))
    return outcomes


@pytest.mark.parametrize("charsmap", [_PAST_THE_END, b"\xff\xff\x00\x00abcd", struct.pack("<I", 5) + b"abcdefgh", b"\x00\x00\x00",
                                      b"\x00\x00\x00\x00", struct.pack("<I", 0xFFFFFFFC) + b"x" * 12])
def test_sentencepiece_normalize_damaged_charsmap_is_a_value_error_naming_the_field(charsmap):
    (kind, message), compiled = _both(charsmap)
    assert kind == "refused" and message.startswith("precompiled_charsmap: ")
    assert compiled == (kind, message)
    with pytest.raises(ValueError, match="precompiled_charsmap"):
        parse_charsmap(charsmap)


def test_sentencepiece_normalize_empty_trie_is_the_identity_in_both_paths():
    reference, compiled = _both(struct.pack("<I", 0) + b"a\0")
    assert reference == compiled and reference[0] == "normalized"
    assert reference[1][1] == "▁a▁b"


def test_sentencepiece_normalize_damaged_charsmap_refused_by_every_public_constructor():
    from hf_bpe import HFSentencePieceTokenizer, UnigramModel
    from hf_bpe.formats.sentencepiece_model import NORMAL, UNKNOWN, Piece, SentencePieceModel

    pieces = (Piece("<unk>", 0.0, UNKNOWN), Piece("▁a", -1.0, NORMAL), Piece("a", -2.0, NORMAL))
    good = SentencePieceModel(pieces, normalizer={**SentencePieceModel(pieces).normalizer, "precompiled_charsmap":
                                                  builtin_charsmap("nmt_nfkc")})
    bad = SentencePieceModel(pieces, normalizer={**good.normalizer, "precompiled_charsmap": _PAST_THE_END})
    assert SentencePieceModel.from_bytes(good.to_bytes()).normalizer == good.normalizer
    with pytest.raises(ValueError, match="precompiled_charsmap: its header declares a 8-byte trie; 5 bytes"):
        SentencePieceModel.from_bytes(bad.to_bytes())
    with pytest.raises(ValueError, match="precompiled_charsmap"):
        UnigramModel(pieces, normalizer=bad.normalizer)
    with pytest.raises(ValueError, match="precompiled_charsmap"):
        HFSentencePieceTokenizer(sentencepiece_model=bad)


def _trie_bytes(units: list[int]) -> bytes:
    return struct.pack(f"<{len(units)}I", *units)


# Crafted tries: a real one's head (its first units, offsets now pointing past it), a few hand-made units whose
# offsets and leaves point anywhere, and plain bytes.
_REAL = builtin_charsmap("nmt_nfkc")


@settings(max_examples=300, deadline=None, derandomize=True)
@given(charsmap=st.binary(max_size=64)
       | st.builds(lambda units, forms: struct.pack("<I", 4 * len(units)) + _trie_bytes(units) + forms,
                   st.lists(st.integers(0, 2**32 - 1) | st.sampled_from([0x400, 0x461, 0x500 | 0x61, 0x80000000]),
                            max_size=12), st.binary(max_size=16))
       | st.builds(lambda cut, size: struct.pack("<I", size) + _REAL[4:4 + cut], st.integers(0, 4096),
                   st.integers(0, 8192).map(lambda n: n * 4)))
def test_sentencepiece_normalize_any_charsmap_same_outcome_in_both_paths(charsmap):
    reference, compiled = _both(charsmap)
    assert reference == compiled
