"""The compiled SentencePiece-mode trainer (``core/_sentencepiece.pyx``, ``csrc/sp_trainer.hpp``) equals its
pure-Python reference (``train_sentencepiece_reference``) piece for piece; spm_train itself is the other side of
``tests/test_sentencepiece_bpe.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hf_bpe.training.sentencepiece.bpe import train_sentencepiece_reference
from hf_bpe.training.sentencepiece.trainer import train_sentencepiece

_OPTIONS = [
    {},
    {"byte_fallback": True, "split_digits": True},
    {"max_sentencepiece_length": 3},
    {"add_dummy_prefix": False},
    {"remove_extra_whitespaces": False},
    {"normalization_rule_name": "identity"},
    {"normalization_rule_name": "nfkc_cf"},
    {"split_by_whitespace": False},
    {"split_by_unicode_script": False, "split_by_number": False},
    {"control_symbols": ["<ctl>"], "user_defined_symbols": ["<sep>", "ab"]},
    {"character_coverage": 0.98},
    {"allow_whitespace_only_pieces": True},
    {"allow_whitespace_only_pieces": True, "split_by_whitespace": False, "remove_extra_whitespaces": False},
    {"max_sentence_length": 12},
    {"required_chars": "xyzé"},
]

# ASCII (the table path) and everything that takes the charsmap call or a special rule: CR and CRLF, full-width
# and compatibility forms, combining marks, scripts that may not be mixed, Inherited marks, the unknown character,
# the boundary character, NUL, meta pieces, whitespace runs and characters rare enough to fall out of the coverage.
_ALPHABET = st.sampled_from(
    list("aab  b1２アカ中文éΩ-.xー") + ["  ", "\t", "99", "ab", "\r", "\r\n", "ﬁ", "Ａ", "e\u0301", "\u0301", "▅",
                                      "\x1f", "\x00", "<s>", "</s>", "<sep>", "▁", "Ⅻ", "ｶﾞ", "😀", "\u3000"])


def _triples(model):
    return [(p.piece, p.score, p.type) for p in model.pieces]


def _both(lines, vocab_size, **options):
    """Both trainers' results, or both errors' types and messages."""
    results = []
    for train in (train_sentencepiece_reference, train_sentencepiece):
        try:
            results.append(_triples(train(lines, vocab_size=vocab_size, **options)))
        except (TypeError, ValueError) as exc:
            results.append((type(exc).__name__, str(exc)))
    return results


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.lists(_ALPHABET, max_size=14).map("".join), min_size=1, max_size=40),
       vocab_size=st.integers(8, 80), options=st.sampled_from(_OPTIONS))
def test_sentencepiece_core_equals_reference_on_generated_corpora(lines, vocab_size, options):
    reference, compiled = _both(lines, vocab_size, hard_vocab_limit=False, **options)
    assert compiled == reference


def test_sentencepiece_core_equals_reference_when_the_word_mark_is_not_covered():
    """'▁' itself below the coverage: it becomes the unknown character, so words are re-split from sentences."""
    lines = [("abcdefghij" * 6) + " " + ("klmnopqrst" * 6) for _ in range(20)] + ["uvw"]
    for options in ({"character_coverage": 0.98}, {"character_coverage": 0.98, "split_by_whitespace": False}):
        reference, compiled = _both(lines, 60, hard_vocab_limit=False, **options)
        assert compiled == reference
        assert "▁" not in [piece for piece, _, _ in compiled]


def test_sentencepiece_core_errors_equal_reference():
    assert _both(["a b", 3], 20) == [("TypeError", "corpus item 1 is int 3; expected str")] * 2
    assert _both(["", "  "], 20)[0] == _both(["", "  "], 20)[1]
    assert _both(["abc abd"], 5)[0][0] == "ValueError"
    assert _both(["abc abd"], 5)[0] == _both(["abc abd"], 5)[1]
    with pytest.raises(ValueError, match="control_symbols holds an empty symbol"):
        train_sentencepiece(["a"], vocab_size=20, control_symbols=["", "<x>"])


def test_sentencepiece_core_reports_progress():
    seen = []
    model = train_sentencepiece(["low lower lowest newer wider"] * 3, vocab_size=40, hard_vocab_limit=False,
                                progress=seen.append)
    merged = sum(1 for p in model.pieces if p.type == 1) - len(set("".join(["▁low▁lower▁lowest▁newer▁wider"])))
    assert sum(seen) == merged > 0


@pytest.mark.shared_data
@pytest.mark.parametrize("options", _OPTIONS, ids=[repr(o) for o in _OPTIONS])
def test_sentencepiece_core_equals_reference_on_real_text(shared_data, options):
    """English, Chinese and several scripts at once, 2,000 pieces."""
    lines = []
    corpora = shared_data / "corpora"
    files = [corpora / "en" / "english_combined.txt", sorted((corpora / "zh").glob("*.txt"))[0],
             *sorted((corpora / "multi").rglob("*.txt"))[:6]]
    for path in files:
        text = Path(path).read_bytes()[:40_000].decode("utf-8", "ignore")
        lines += text[: text.rfind("\n")].split("\n")
    reference, compiled = _both(lines, 2000, hard_vocab_limit=False, **options)
    assert compiled == reference
