"""SentencePiece-mode BPE training equals ``spm_train --model_type=bpe``: pieces, scores, types (issue 9)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import sentencepiece as spm
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hf_bpe
from hf_bpe.cli import main
from hf_bpe.formats.sentencepiece_model import SentencePieceModel
from hf_bpe.training.sentencepiece_bpe import train_sentencepiece_reference

pytestmark = pytest.mark.crossval


def _spm(lines: list[str], vocab_size: int, **options) -> SentencePieceModel:
    written = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=written, model_type="bpe",
                                   vocab_size=vocab_size, minloglevel=2, **options)
    return SentencePieceModel.from_bytes(written.getvalue())


def _triples(model: SentencePieceModel) -> list[tuple[str, float, int]]:
    return [(p.piece, p.score, p.type) for p in model.pieces]


def _assert_same(lines: list[str], vocab_size: int, **options) -> SentencePieceModel:
    """Both trainers (the compiled one and the pure-Python reference) equal spm_train."""
    theirs = _triples(_spm(lines, vocab_size, **options))
    for train in (hf_bpe.train_sentencepiece, train_sentencepiece_reference):
        ours = train(lines, vocab_size=vocab_size, **options)
        a = _triples(ours)
        first = next((i for i, (x, y) in enumerate(zip(a, theirs)) if x != y), min(len(a), len(theirs)))
        assert a == theirs, (f"{train.__name__}: first difference at id {first}: ours {a[first:first + 3]}, "
                             f"spm {theirs[first:first + 3]}")
    return ours


def _lines(path: Path, size: int) -> list[str]:
    text = path.read_bytes()[:size].decode("utf-8", "ignore")
    return text[: text.rfind("\n")].split("\n")


@pytest.fixture(scope="module")
def english(shared_data) -> list[str]:
    return _lines(shared_data / "corpora" / "en" / "english_combined.txt", 300_000)


@pytest.fixture(scope="module")
def chinese(shared_data) -> list[str]:
    return _lines(sorted((shared_data / "corpora" / "zh").glob("*.txt"))[0], 200_000)


@pytest.fixture(scope="module")
def multilingual(shared_data) -> list[str]:
    files = sorted((shared_data / "corpora" / "multi").rglob("*.txt"))[:15]
    return [line for path in files for line in _lines(path, 30_000)]


_OPTIONS = [
    {},
    {"byte_fallback": True},
    {"split_digits": True, "max_sentencepiece_length": 6},
    {"add_dummy_prefix": False},
    {"remove_extra_whitespaces": False},
    {"normalization_rule_name": "identity"},
    {"normalization_rule_name": "nfkc_cf"},
    {"split_by_whitespace": False},
    {"split_by_unicode_script": False, "split_by_number": False},
    {"control_symbols": ["<ctl>"], "user_defined_symbols": ["<sep>", "@@"]},
    {"character_coverage": 0.98},
    {"allow_whitespace_only_pieces": True},
    {"unk_id": 3, "bos_id": -1, "eos_id": 0, "pad_id": 1},
    {"required_chars": "xyzé"},
]


@pytest.mark.shared_data
@pytest.mark.parametrize("options", _OPTIONS, ids=[repr(o) for o in _OPTIONS])
def test_sentencepiece_bpe_english_equals_spm_train_with_each_option(english, options):
    _assert_same(english, 1000, **options)


@pytest.mark.shared_data
@pytest.mark.slow
@pytest.mark.parametrize(("corpus", "vocab_size"), [("english", 8000), ("chinese", 4000), ("chinese", 8000),
                                                    ("multilingual", 3000), ("multilingual", 8000)])
def test_sentencepiece_bpe_corpora_equal_spm_train(request, corpus, vocab_size):
    lines = request.getfixturevalue(corpus)
    options = {"character_coverage": 0.995} if corpus == "chinese" and vocab_size <= 4000 else {}
    _assert_same(lines, vocab_size, hard_vocab_limit=False, **options)


@pytest.mark.shared_data
@pytest.mark.slow
@pytest.mark.parametrize(("corpus", "vocab_size"), [("en", 8000), ("en", 16000), ("en", 32000), ("zh", 16000)])
def test_sentencepiece_bpe_whole_corpora_equal_spm_train(shared_data, corpus, vocab_size):
    """The compiled trainer on whole corpora (English 23.5 MB, the four Chinese files 22.1 MB), read as
    ``spm_train --input`` reads them, at the issue's sizes."""
    paths = sorted((shared_data / "corpora" / corpus).glob("*.txt"))
    written = io.BytesIO()
    spm.SentencePieceTrainer.train(input=",".join(map(str, paths)), model_writer=written, model_type="bpe",
                                   vocab_size=vocab_size, minloglevel=2)
    assert _triples(hf_bpe.train_sentencepiece(paths, vocab_size=vocab_size)) == _triples(
        SentencePieceModel.from_bytes(written.getvalue()))


# "ｓ\u0301" and "a\u0301\u0301": graphemes that tokenizers' Precompiled normalizes differently from SentencePiece.
_ALPHABET = st.sampled_from(list("aab  b1２アカ中文éΩ-.") + ["  ", "\t", "99", "ab", "\r", "\n", "ｓ\u0301",
                                                         "a\u0301\u0301", "ﬁ"])


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.lists(_ALPHABET, max_size=12).map("".join), min_size=1, max_size=30),
       vocab_size=st.integers(8, 60), options=st.sampled_from(_OPTIONS[:9]))
def test_sentencepiece_bpe_generated_corpora_equal_spm_train(lines, vocab_size, options):
    """Ties, whitespace runs, digits and mixed scripts; errors (vocab too small, nothing to train on) agree too."""
    try:
        theirs = _spm(lines, vocab_size, hard_vocab_limit=False, **options)
    except RuntimeError:
        with pytest.raises(ValueError):
            hf_bpe.train_sentencepiece(lines, vocab_size=vocab_size, hard_vocab_limit=False, **options)
        return
    ours = hf_bpe.train_sentencepiece(lines, vocab_size=vocab_size, hard_vocab_limit=False, **options)
    assert _triples(ours) == _triples(theirs)


@pytest.mark.shared_data
def test_sentencepiece_bpe_cli_folder_equals_spm_train_on_files(english, tmp_path, capsys):
    from transformers import PreTrainedTokenizerFast

    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(("\n".join(english[:2000]).replace("\n", "\r\n", 50) + "\nno newline at the end").encode())
    assert main(["train", str(corpus), "--algorithm", "sentencepiece", "--vocab-size", "800", "--out",
                 str(tmp_path / "ours"), "--spm", "byte_fallback=true", "--quiet"]) == 0
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "spm"), model_type="bpe",
                                   vocab_size=800, byte_fallback=True, minloglevel=2)
    ours = SentencePieceModel.load(tmp_path / "ours" / "tokenizer.model")
    assert _triples(ours) == _triples(SentencePieceModel.load(tmp_path / "spm.model"))
    theirs = spm.SentencePieceProcessor(model_file=str(tmp_path / "spm.model"))
    loaded = spm.SentencePieceProcessor(model_file=str(tmp_path / "ours" / "tokenizer.model"))
    fast = PreTrainedTokenizerFast.from_pretrained(tmp_path / "ours")
    texts = english[2000:3000] + ["  two  spaces ", "中文 😀", "<s> text"]
    expected = theirs.encode(texts)
    assert loaded.encode(texts) == expected
    assert fast(texts)["input_ids"] == expected
    assert main(["train", str(corpus), "--algorithm", "sentencepiece", "--out", str(tmp_path / "ours")]) == 2
    assert "already holds a tokenizer" in capsys.readouterr().err


def test_sentencepiece_bpe_bad_input_is_refused_clearly(tmp_path, capsys):
    lines = ["hello world"] * 5
    with pytest.raises(ValueError, match=r"unknown SentencePiece option\(s\) \['colour'\]"):
        hf_bpe.train_sentencepiece(lines, vocab_size=30, colour=1)
    with pytest.raises(ValueError, match="input_sentence_size > 0"):
        hf_bpe.train_sentencepiece(lines, vocab_size=30, input_sentence_size=10)
    with pytest.raises(TypeError, match="byte_fallback must be bool"):
        hf_bpe.train_sentencepiece(lines, vocab_size=30, byte_fallback="yes")
    with pytest.raises(ValueError, match="no text to train on"):
        hf_bpe.train_sentencepiece(["", "   "], vocab_size=30)
    with pytest.raises(ValueError, match="smaller than the 8 required characters plus 3 meta pieces"):
        hf_bpe.train_sentencepiece(lines, vocab_size=9)
    with pytest.raises(ValueError, match="use_all_vocab=true is valid for WORD/CHAR models only"):
        hf_bpe.train_sentencepiece(lines, vocab_size=30, use_all_vocab=True)
    with pytest.raises(ValueError, match="character_coverage must be between 0.98 and 1.0"):
        hf_bpe.train_sentencepiece(lines, vocab_size=30, character_coverage=0.5)
    with pytest.raises(ValueError, match="normalization_rule_name must be one of"):
        hf_bpe.train_sentencepiece(lines, vocab_size=30, normalization_rule_name="nfd")
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n" * 5, encoding="utf-8")
    for argv, message in ((["--spm", "vocab=3"], "expected KEY=VALUE"), (["--spm", "split_digits=maybe"], "bool"),
                          (["--pattern", "gpt4"], "--pattern cannot be used with --algorithm sentencepiece"),
                          (["--vocab-size", "9"], "required characters")):
        assert main(["train", str(corpus), "--algorithm", "sentencepiece", "--out", str(tmp_path / "o"), *argv]) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_sentencepiece_bpe_too_long_sentences_are_skipped_and_said(tmp_path, capsys):
    # Issue 22.18: sentences over max_sentence_length (UTF-8 bytes) are skipped exactly as spm_train skips them,
    # and the skip is said with their count; when nothing is left, the error names the option to raise.
    lines = ["hello world again"] * 5 + ["é" * 12, "x" * 30, "short one"]
    for train in (hf_bpe.train_sentencepiece, train_sentencepiece_reference):
        with pytest.warns(UserWarning) as caught:
            ours = train(lines, vocab_size=24, max_sentence_length=20)
        (warning,) = caught
        message = str(warning.message)
        assert "2 sentence(s) longer than max_sentence_length=20 UTF-8 bytes (the longest: 30)" in message
        assert "max_sentence_length=30" in message and "--spm max_sentence_length=30" in message
        assert _triples(ours) == _triples(_spm(lines, 24, max_sentence_length=20))
        with pytest.raises(ValueError, match=r"no text to train on: 2 sentence\(s\) longer than "
                                             r"max_sentence_length=10 .*pass max_sentence_length=30 .*"
                                             r"CLI: --spm max_sentence_length=30"):
            train(["x" * 30, "y" * 11, ""], vocab_size=24, max_sentence_length=10)
    # The CLI: the warning on stderr as one hf-bpe line, and the error naming --spm.
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["train", str(corpus), "--algorithm", "sentencepiece", "--vocab-size", "24", "--out",
                 str(tmp_path / "o"), "--spm", "max_sentence_length=20", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "hf-bpe: warning: 2 sentence(s) longer than max_sentence_length=20" in err and "Traceback" not in err
    corpus.write_text("a" * 5000 + "\n" + "b" * 4193 + "\n", encoding="utf-8")
    assert main(["train", str(corpus), "--algorithm", "sentencepiece", "--vocab-size", "24", "--out",
                 str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "max_sentence_length=4192" in err and "--spm max_sentence_length=5000" in err
