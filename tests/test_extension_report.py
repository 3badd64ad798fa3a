"""extension_report: tokens per byte before and after on held-out text, the first new tokens; HeldOutSplit."""

from __future__ import annotations

import json

import pytest
import sentencepiece
from hypothesis import given
from hypothesis import strategies as st

import hf_bpe
from hf_bpe.formats.sentencepiece_model import NORMAL, Piece, SentencePieceModel
from hf_bpe.tools.compare.split import is_heldout
from hf_bpe.tools.extension_report import HeldOutSplit, extension_report

CORPUS = ["low lower lowest newer wider", "the cat sat on the mat", "中文字体 中文 文字 汉字"] * 6


@pytest.fixture(scope="module")
def pair():
    return (hf_bpe.train(CORPUS, vocab_size=262, show_progress=False),
            hf_bpe.train(CORPUS, vocab_size=300, show_progress=False))


def test_counts_are_the_encoders_counts(pair, monkeypatch):
    import hf_bpe.tools.extension_report as module

    base, extended = pair
    held_out = [f"the {i} lowest 中文 cats <|endoftext|>" for i in range(50)]
    check = ["plain English text, nothing new", ""]
    monkeypatch.setattr(module, "_BATCH", 7)  # several batches and a short last one
    report = extension_report(base, extended, iter(held_out), check=check, first=5)
    for texts, measured in ((held_out, report.held_out), (check, report.check)):
        assert measured.texts == len(texts)
        assert measured.bytes == sum(len(t.encode()) for t in texts)
        assert measured.base_tokens == sum(len(base.encode_ordinary(t)) for t in texts)
        assert measured.extended_tokens == sum(len(extended.encode_ordinary(t)) for t in texts)
        assert measured.base_per_byte == measured.base_tokens / measured.bytes
        assert measured.relative_change == measured.extended_tokens / measured.base_tokens - 1
    assert report.held_out.extended_tokens < report.held_out.base_tokens
    assert (report.kind, report.base_size, report.extended_size, report.new_tokens) == ("byte-level", 262, 300, 38)
    assert [t.id for t in report.first_new_tokens] == [262, 263, 264, 265, 266]


def test_token_text_escapes_partial_characters(pair):
    base, extended = pair
    report = extension_report(base, extended, [], first=100)
    assert len(report.first_new_tokens) == report.new_tokens
    assert (report.held_out.bytes, report.held_out.base_per_byte, report.held_out.relative_change) == (0, 0.0, 0.0)
    for token in report.first_new_tokens:
        raw = extended.id_to_bytes(token.id)
        assert token.text == raw.decode("utf-8", "backslashreplace")
        assert token.base_tokens == len(base.encode_word(raw))
    assert any("\\x" in t.text for t in report.first_new_tokens), "no partial-character token to show"


def test_json_is_deterministic_and_round_trips(pair, tmp_path):
    base, extended = pair
    base.save(tmp_path / "base")
    extended.save(tmp_path / "extended")
    one = extension_report(base, extended, CORPUS[:3], check=["abc"])
    two = extension_report(tmp_path / "base", tmp_path / "extended", list(CORPUS[:3]), check=("abc",))
    assert one == two and one.to_json() == two.to_json()
    data = json.loads(one.to_json())
    assert data == one.to_dict()
    assert data["held_out"]["relative_change"] == one.held_out.relative_change
    assert data["check"]["texts"] == 1 and data["first_new_tokens"][0] == {
        "id": 262, "text": one.first_new_tokens[0].text, "base_tokens": one.first_new_tokens[0].base_tokens}
    assert "中" in one.to_json() or all("中" not in t.text for t in one.first_new_tokens)  # not \\u-escaped
    no_check = extension_report(base, extended, ["x"], first=0)
    assert no_check.to_dict()["check"] is None and no_check.first_new_tokens == ()
    assert "check text" not in no_check.render() and "first new tokens" not in no_check.render()


def test_render_lines(pair):
    base, extended = pair
    lines = extension_report(base, extended, ["the lowest cat"], check=["a b"], first=2).render().splitlines()
    assert lines[0] == "extended 262 -> 300 ids (38 new)"
    assert lines[1].startswith("held-out text: 1 texts, 14 bytes: ") and lines[1].endswith("%)")
    assert lines[2].startswith("check text: 1 texts, 3 bytes: ")
    assert lines[3] == "first new tokens (byte-level: UTF-8, other bytes as \\xNN):"
    assert len(lines) == 6 and lines[4].lstrip().startswith("262  ")


def test_bad_arguments_are_named(pair):
    base, extended = pair
    with pytest.raises(TypeError, match="held_out must be an iterable of texts, got a single str"):
        extension_report(base, extended, "one text")
    with pytest.raises(TypeError, match="check must hold str texts, got bytes at position 1"):
        extension_report(base, extended, [], check=["a", b"b"])
    with pytest.raises(ValueError, match="first must be 0 or more"):
        extension_report(base, extended, [], first=-1)
    with pytest.raises(TypeError, match="first must be an int"):
        extension_report(base, extended, [], first=True)
    with pytest.raises(ValueError, match="not an extension of base"):
        extension_report(base, hf_bpe.train(["other words"] * 5, vocab_size=264, show_progress=False), [])


def test_sentencepiece_report_counts_as_sentencepiece():
    base = hf_bpe.train_sentencepiece(CORPUS, vocab_size=60)
    pieces = base.pieces + (Piece("▁lower▁newer", -100.0, NORMAL), Piece("▁the▁cat", -101.0, NORMAL))
    extended = SentencePieceModel(pieces, dict(base.trainer, vocab_size=len(pieces)), base.normalizer)
    held_out = ["lower newer  wider", "the cat sat", "中文字体"]
    report = extension_report(base, extended, held_out)
    for model, count in ((base, report.held_out.base_tokens), (extended, report.held_out.extended_tokens)):
        processor = sentencepiece.SentencePieceProcessor()
        processor.LoadFromSerializedProto(model.to_bytes())
        assert count == sum(len(processor.encode(t)) for t in held_out)
    assert report.held_out.extended_tokens == report.held_out.base_tokens - 2
    assert report.kind == "sentencepiece"
    assert [(t.id, t.text) for t in report.first_new_tokens] == [(60, "▁lower▁newer"), (61, "▁the▁cat")]
    assert "SentencePiece pieces as they are" in report.render()


@given(n=st.integers(0, 200), fraction=st.floats(0, 0.99), seed=st.integers(0, 2**64 - 1))
def test_held_out_split_is_compares_rule(n, fraction, seed):
    texts = [f"document {i}" for i in range(n)]
    split = HeldOutSplit(texts, fraction=fraction, seed=seed)
    train = list(split)
    expected = [is_heldout(i, fraction=fraction, seed=seed) for i in range(n)]
    assert split.held_out == [t for t, held in zip(texts, expected) if held]
    assert train == [t for t, held in zip(texts, expected) if not held]
    assert list(split) == train and len(split.held_out) == expected.count(True)  # a second pass refills


def test_held_out_split_checks_its_options():
    with pytest.raises(ValueError, match=r"fraction must be a number in \[0, 1\).* got 1"):
        HeldOutSplit([], fraction=1)
    with pytest.raises(ValueError, match="fraction must be"):
        HeldOutSplit([], fraction="0.1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="seed must be an int, got 1.5"):
        HeldOutSplit([], seed=1.5)  # type: ignore[arg-type]
