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
from hf_bpe.training.sentencepiece.bpe import train_sentencepiece_reference
from helpers import corpus_sample

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


@pytest.fixture(scope="module")
def english(shared_data) -> list[str]:
    return corpus_sample(shared_data, "en", 300_000)


@pytest.fixture(scope="module")
def chinese(shared_data) -> list[str]:
    return corpus_sample(shared_data, "zh", 200_000)


@pytest.fixture(scope="module")
def multilingual(shared_data) -> list[str]:
    return corpus_sample(shared_data, "multi", 30_000)


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


@pytest.mark.corpus
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
    with pytest.raises(ValueError, match=r"unknown SentencePiece option 'colour'"):
        hf_bpe.train_sentencepiece(lines, vocab_size=30, colour=1)
    for size in (-1, 1, 100):
        with pytest.raises(ValueError, match="input_sentence_size must be 0 .every sentence. or more than 100"):
            hf_bpe.train_sentencepiece(lines, vocab_size=30, input_sentence_size=size)
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
    for argv, message in ((["--spm", "vocab=3"], "'vocab'; did you mean vocab_size?"),
                          (["--spm", "x"], "expected KEY=VALUE"), (["--spm", "split_digits=maybe"], "bool"),
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


def _proto_fields(message: str) -> list[str]:
    """The field names of one message of sentencepiece's own model.proto (read from the descriptor the installed
    package embeds, without protobuf: FileDescriptorProto.message_type (4) -> DescriptorProto name (1), field (2)
    -> FieldDescriptorProto name (1))."""
    import ast
    import re

    source = (Path(spm.__file__).parent / "sentencepiece_model_pb2.py").read_text(encoding="utf-8")
    blob = ast.literal_eval(re.search(r"AddSerializedFile\((b'.*?')\)", source, re.S).group(1))

    def fields(data: bytes) -> list[tuple[int, bytes]]:
        out, i = [], 0
        while i < len(data):
            key, i = _varint(data, i)
            if key & 7 == 2:
                size, i = _varint(data, i)
                out.append((key >> 3, data[i:i + size]))
                i += size
            elif key & 7 == 0:
                _, i = _varint(data, i)
            else:
                i += {1: 8, 5: 4}[key & 7]
        return out

    def messages(data: bytes, number: int):
        for tag, body in fields(data):
            if tag == number:
                yield body
                yield from messages(body, 3)  # nested types

    for body in messages(blob, 4):
        parts = fields(body)
        if dict(parts).get(1) == message.encode():
            return [dict(fields(f))[1].decode() for tag, f in parts if tag == 2]
    raise AssertionError(f"{message} not found")


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def test_sentencepiece_bpe_every_spm_train_option_is_classified_and_no_effect_ones_are_checked(tmp_path, capsys):
    # Issue 22.21: shuffle_input_sentence, num_threads, seed_sentencepiece_size were refused as unknown keys. Every
    # TrainerSpec/NormalizerSpec field of the installed sentencepiece is reproduced, accepted without effect, accepted
    # at one value, or refused with a reason; the no-effect ones are checked against the real trainer.
    from hf_bpe.training.sentencepiece.bpe import SPM_DEFAULTS
    from hf_bpe.training.sentencepiece.options import SPM_NO_EFFECT, SPM_ONLY, SPM_REFUSED

    tables = [set(SPM_DEFAULTS), set(SPM_NO_EFFECT), set(SPM_ONLY), set(SPM_REFUSED)]
    assert sum(map(len, tables)) == len(set().union(*tables))  # each option in one table
    internal = {"name": "normalization_rule_name", "precompiled_charsmap": "written from normalization_rule_name"}
    for field in _proto_fields("TrainerSpec") + _proto_fields("NormalizerSpec"):
        assert field in internal or any(field in table for table in tables), field
    lines = [f"the cat {w} sat on {n} mats, 中文 über" for w in ("red", "blue", "old") for n in range(40)]
    expected = _triples(_spm(lines, 60))
    changed = {"num_threads": 3, "seed_sentencepiece_size": 10,
               "shrinking_factor": 0.5, "num_sub_iterations": 1, "train_extremely_large_corpus": True,
               "mining_sentence_size": 5, "training_sentence_size": 5, "self_test_sample_size": 3,
               "vocabulary_output_piece_score": False, "accept_language": ["en", "ja"],
               "differential_privacy_noise_level": 0.5, "differential_privacy_clipping_threshold": 2,
               "random_seed": 7, "minloglevel": 1, "model_type": "bpe", "input_format": "text",
               "escape_whitespaces": True, "auto_character_coverage": False, "enable_differential_privacy": False}
    assert set(changed) == set(SPM_NO_EFFECT) | set(SPM_ONLY)
    for name, value in changed.items():
        if name not in ("random_seed", "model_type", "minloglevel"):  # a flag, not a trainer field; given by _spm
            assert _triples(_spm(lines, 60, **{name: value})) == expected, name
        for train in (hf_bpe.train_sentencepiece, train_sentencepiece_reference):
            assert _triples(train(lines, vocab_size=60, **{name: value})) == expected, name
    # The CLI takes them as spm_train spells them.
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["train", str(corpus), "--algorithm", "sentencepiece", "--vocab-size", "60", "--out",
                 str(tmp_path / "o"), "--quiet", "--spm", "shuffle_input_sentence=false", "--spm", "num_threads=4",
                 "--spm", "seed_sentencepiece_size=100"]) == 0
    assert _triples(SentencePieceModel.load(tmp_path / "o" / "tokenizer.model")) == expected
    capsys.readouterr()
    # The others are refused with their reason, not the generic list.
    for argv, message in ((["--spm", "pretokenization_delimiter=|"], "it changes the words"),
                          (["--spm", "model_type=char"], "hf_bpe trains BPE"),
                          (["--spm", "vocab_size=50"], "give it as --vocab-size"),
                          (["--spm", "seed_sentencepieces_file=x"], "a seed file is not read"),
                          (["--spm", "input_format=tsv"], "TSV input"),
                          (["--spm", "enable_differential_privacy=true"], "random noise")):
        assert main(["train", str(corpus), "--algorithm", "sentencepiece", "--out", str(tmp_path / "p"),
                     *argv]) == 2
        err = capsys.readouterr().err
        assert message in err and "KEY one of" not in err and err.count("\n") == 1, err
    with pytest.raises(ValueError, match="auto_character_coverage=True is not supported .*give character_coverage="):
        hf_bpe.train_sentencepiece(lines, vocab_size=60, auto_character_coverage=True)


def test_sentencepiece_bpe_convert_refuses_a_char_model_without_talking_of_unigram(tmp_path, capsys):
    # Issue 22.21: the refusal of a char (or word) model said "a unigram model needs tokenizers' Unigram model".
    for model_type in ("char", "word"):  # unigram models convert (tests/test_unigram_convert.py)
        prefix = tmp_path / model_type
        spm.SentencePieceTrainer.train(sentence_iterator=iter(["hello world", "hello there"] * 20),
                                       model_prefix=str(prefix), model_type=model_type, vocab_size=14,
                                       hard_vocab_limit=False, minloglevel=2)
        assert main(["convert", f"{prefix}.model", "--to", "tokenizers", "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert f"SentencePiece {model_type} model" in err and err.count("\n") == 1
        assert "unigram" not in err, err


def test_sentencepiece_unknown_option_suggests_the_closest_names(tmp_path, capsys):
    # Issue 33.12: `--spm bogus=1` printed a 1,500-character list of every option; now the closest names, or where
    # the list is.
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world\n" * 5, encoding="utf-8")
    for argv, said in ((["--spm", "charcter_coverage=1.0"], "did you mean character_coverage or"),
                       (["--spm", "bogus=1"], "SPM_DEFAULTS lists the options")):
        assert main(["train", str(corpus), "--algorithm", "unigram", "--out", str(tmp_path / "o"), *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith("hf-bpe: error: ") and err.count("\n") == 1 and said in err and len(err) < 250, err
    with pytest.raises(ValueError, match="unknown SentencePiece option 'byte_fallbak'; did you mean byte_fallback"):
        hf_bpe.train_sentencepiece(["hello world"], vocab_size=30, byte_fallbak=True)


# --- Issue 33.10: input_sentence_size, taken as spm_train takes it (SentenceSelector in trainer_interface.cc). ---


def _selection_corpus(english: list[str]) -> list[str]:
    """Real English with what spm_train's reader skips before counting (empty lines, lines over max_sentence_length,
    lines with ▅) and what it counts although it normalizes to nothing (spaces only), spread over the first lines."""
    lines = list(english[:3000])
    for at in range(0, 1200, 97):
        lines[at:at] = ["", "x" * 5000, "a ▅ b", "   "]
    return lines


@pytest.mark.shared_data
@pytest.mark.filterwarnings("ignore:.*longer than max_sentence_length")
@pytest.mark.parametrize("model_type", ["bpe", "unigram"])
def test_sentencepiece_input_sentence_size_equals_spm_train(english, model_type):
    lines = _selection_corpus(english)
    cases = [{"input_sentence_size": 700, "shuffle_input_sentence": False},  # the first 700 sentences
             {"input_sentence_size": 100_000},  # shuffled (spm_train's default) but more than the corpus: all
             {"input_sentence_size": 100_000, "shuffle_input_sentence": False}]
    for options in cases:
        with pytest.warns(UserWarning, match="max_sentence_length"):  # the 5000-byte lines, said
            ours = hf_bpe.train_sentencepiece(lines, vocab_size=400, model_type=model_type, **options)
        written = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=written, model_type=model_type,
                                       vocab_size=400, minloglevel=2, **options)
        assert _triples(ours) == _triples(SentencePieceModel.from_bytes(written.getvalue())), options
    # Not the same as training on everything: the first 700 sentences alone make other pieces.
    first = hf_bpe.train_sentencepiece(lines, vocab_size=400, model_type=model_type, input_sentence_size=700,
                                       shuffle_input_sentence=False)
    assert _triples(first) != _triples(hf_bpe.train_sentencepiece(lines, vocab_size=400, model_type=model_type))


def test_sentencepiece_input_sentence_size_reference_and_cli(tmp_path, capsys):
    lines = [f"the cat {w} sat on {n} mats" for w in ("red", "blue", "old", "fat") for n in range(60)] + ["", "   "]
    options = {"input_sentence_size": 150, "shuffle_input_sentence": False}
    assert _triples(train_sentencepiece_reference(lines, vocab_size=40, **options)) == _triples(
        _spm(lines, 40, **options))
    _assert_same(lines, 40, **options)
    # Shuffled, over a corpus larger than the sample: spm_train's generator is not reproduced; said, with the fixes.
    with pytest.raises(ValueError, match="shuffle_input_sentence=false to take the first 150.*sample_seed=S"):
        hf_bpe.train_sentencepiece(lines, vocab_size=40, input_sentence_size=150)
    # A seeded sample (hf_bpe's generator): the same model for the same seed, whatever the trainer.
    seeded = [_triples(train(lines, vocab_size=40, input_sentence_size=150, sample_seed=seed))
              for seed in (1, 1, 2) for train in (hf_bpe.train_sentencepiece, train_sentencepiece_reference)]
    assert seeded[0] == seeded[1] == seeded[2] == seeded[3] and seeded[4] == seeded[5]
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for algorithm in ("sentencepiece-bpe", "unigram"):
        assert main(["train", str(corpus), "--algorithm", algorithm, "--vocab-size", "30", "--out",
                     str(tmp_path / algorithm), "--quiet", "--spm", "input_sentence_size=150", "--spm",
                     "shuffle_input_sentence=false"]) == 0
        written = SentencePieceModel.load(tmp_path / algorithm / "tokenizer.model")
        model_type = "unigram" if algorithm == "unigram" else "bpe"
        assert _triples(written) == _triples(hf_bpe.train_sentencepiece(
            lines, vocab_size=30, model_type=model_type, **options))


# --- Issue 33.10: treat_whitespace_as_suffix, as spm_train trains it (the dummy "▁" at the end, words ending after
# a "▁", "▁" only as a piece's suffix), for tokenizer.model and HFSentencePieceTokenizer. ---


@pytest.mark.shared_data
@pytest.mark.parametrize("model_type", ["bpe", "unigram"])
def test_sentencepiece_treat_whitespace_as_suffix_equals_spm_train(english, tmp_path, model_type):
    from transformers import AutoTokenizer

    from hf_bpe.training.unigram.reference import train_unigram_reference

    lines = english[:4000]
    cases = [{}, {"allow_whitespace_only_pieces": True}, {"split_by_whitespace": False},
             {"remove_extra_whitespaces": False}, {"add_dummy_prefix": False}]
    for extra in cases:
        options = {"treat_whitespace_as_suffix": True, "model_type": model_type, **extra}
        written = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=written, vocab_size=600,
                                       minloglevel=2, **options)
        theirs = SentencePieceModel.from_bytes(written.getvalue())
        ours = hf_bpe.train_sentencepiece(lines, vocab_size=600, **options)
        assert _triples(ours) == _triples(theirs), extra
        assert ours.trainer["treat_whitespace_as_suffix"] is True
    # The pure-Python references (the executable spec) on a smaller corpus.
    small = english[:300]
    reference = train_unigram_reference if model_type == "unigram" else train_sentencepiece_reference
    options = {"treat_whitespace_as_suffix": True, "model_type": model_type}
    written = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(small), model_writer=written, vocab_size=300, minloglevel=2,
                                   **options)
    assert _triples(reference(small, vocab_size=300, **options)) == _triples(
        SentencePieceModel.from_bytes(written.getvalue()))
    # The folder: tokenizer.model (sentencepiece encodes with it as with its own), no tokenizer.json (said), and
    # HFSentencePieceTokenizer (through AutoTokenizer) encoding id for id as sentencepiece.
    model = hf_bpe.train_sentencepiece(lines, vocab_size=600, **options)
    folder = hf_bpe.save_sentencepiece(model, tmp_path / "suffix")
    assert (folder / "tokenizer.model").exists() and not (folder / "tokenizer.json").exists()
    processor = spm.SentencePieceProcessor(model_file=str(folder / "tokenizer.model"))
    texts = english[4000:5000] + ["  two  spaces ", "end space ", "", "   ", "\u200b", "a\u200b b"]
    expected = processor.encode(texts)
    assert any(piece.endswith("▁") and len(piece) > 1 for text in texts[:50]
               for piece in processor.encode(text, out_type=str))  # suffix pieces ("the▁") are used
    tokenizer = AutoTokenizer.from_pretrained(folder)
    assert type(tokenizer).__name__ == "HFSentencePieceTokenizer"
    assert tokenizer(texts, add_special_tokens=False)["input_ids"] == expected
    known = [ids for ids in expected[:100] if processor.unk_id() not in ids]  # (<unk> is rendered differently)
    assert [tokenizer.decode(ids) for ids in known] == [processor.decode(ids) for ids in known]


def test_sentencepiece_treat_whitespace_as_suffix_has_no_tokenizer_json_and_says_why(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(f"the cat {w} sat on {n} mats" for w in ("red", "blue") for n in range(30)) + "\n",
                      encoding="utf-8")
    assert main(["train", str(corpus), "--algorithm", "sentencepiece-bpe", "--vocab-size", "40", "--out",
                 str(tmp_path / "o"), "--quiet", "--spm", "treat_whitespace_as_suffix=true"]) == 0
    err = capsys.readouterr().err
    assert "treat_whitespace_as_suffix=true" in err and "tokenizer.json" in err, err
    assert not (tmp_path / "o" / "tokenizer.json").exists()
    from hf_bpe.integrations.sentencepiece_hf import tokenizer_json_blocker

    model = SentencePieceModel.load(tmp_path / "o" / "tokenizer.model")
    assert "Metaspace cannot express" in tokenizer_json_blocker(model)
