"""SentencePiece BPE models as Hugging Face folders that encode exactly like ``sentencepiece`` (issue 9, part 3)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import sentencepiece as spm
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bpe.cli import main
from hf_bpe.formats.sentencepiece_model import BYTE, CONTROL, NORMAL, UNKNOWN, SentencePieceModel
from hf_bpe.integrations.sentencepiece_hf import sentencepiece_tokenizer
from hf_bpe.tools.convert import convert

pytestmark = pytest.mark.crossval

# Texts SentencePiece's normalizer treats specially: runs of spaces (Llama 2's tie group of '▁' runs), leading and
# trailing spaces, tabs and newlines (not spaces to SentencePiece), compatibility characters (nmt_nfkc), emoji.
EDGE_TEXTS = ["", " ", "  ", "a", " a", "a ", "  a  b  ", "a" + " " * 40 + "b", " " * 17 + "x", "x" + " " * 33,
              "\t tab\n", "line\r\nnext", "😀 ﬁ ① Ｆｕｌｌ", "a\u3000b\u00a0c", "12345 678", "<sep>a@@b",
              "don't   stop", "中文 和 English", "<s>a</s><unk>"]


def _lines(shared_data: Path, limit: int = 300_000) -> list[str]:
    corpora = shared_data / "corpora"
    files = [corpora / "en" / "english_combined.txt", *sorted((corpora / "zh").glob("*.txt"))[:1],
             *sorted((corpora / "multi").rglob("*.txt"))[:12], *sorted((corpora / "multi").rglob("*.tsv"))]
    lines = []
    for path in files:
        lines += path.read_bytes()[:limit].decode("utf-8", "ignore").split("\n")[:-1]
    return lines + EDGE_TEXTS


def _assert_same_ids(model_file: Path, lines: list[str]) -> None:
    sp = spm.SentencePieceProcessor(model_file=str(model_file))
    tok = sentencepiece_tokenizer(SentencePieceModel.load(model_file))
    ours = [e.ids for e in tok.encode_batch(lines, add_special_tokens=False)]
    theirs = sp.encode(lines)
    bad = [i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
    assert not bad, f"{len(bad)} of {len(lines)} lines differ, first {lines[bad[0]]!r}: {ours[bad[0]]} vs {theirs[bad[0]]}"
    unk = sp.unk_id()
    for ids in theirs[:2000]:
        if unk not in ids:  # sentencepiece decodes <unk> as ' ⁇ ', the folder as '<unk>' (README)
            assert tok.decode(ids) == sp.decode(ids)


@pytest.fixture(scope="module")
def llama2(shared_data: Path) -> Path:
    return shared_data / "sentencepiece" / "llama2_tokenizer.model"


@pytest.mark.shared_data
def test_sentencepiece_reads_the_model_proto(llama2):
    model = SentencePieceModel.load(llama2)
    assert (model.model_type, len(model.pieces), model.trainer["byte_fallback"]) == ("bpe", 32000, True)
    assert [p.type for p in model.pieces[:4]] == [UNKNOWN, CONTROL, CONTROL, BYTE]
    assert model.pieces[259].piece == "▁▁" and model.pieces[260].type == NORMAL
    sp = spm.SentencePieceProcessor(model_file=str(llama2))
    assert [p.piece for p in model.pieces] == [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    assert [p.score for p in model.pieces] == [sp.get_score(i) for i in range(sp.get_piece_size())]


@pytest.mark.shared_data
def test_sentencepiece_llama2_folder_encodes_like_sentencepiece(llama2, shared_data, tmp_path):
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    # The folder names PreTrainedTokenizerFast: AutoTokenizer gives the fast tokenizer of tokenizer.json.
    _assert_same_ids(llama2, _lines(shared_data))
    assert main(["convert", str(llama2), "--to", "tokenizers", "--out", str(tmp_path / "llama2")]) == 0
    for cls in (AutoTokenizer, PreTrainedTokenizerFast):
        tok = cls.from_pretrained(tmp_path / "llama2")
        assert tok("Hello world")["input_ids"] == [15043, 3186]
        assert (tok.bos_token, tok.eos_token, tok.unk_token) == ("<s>", "</s>", "<unk>")
        assert tok.decode(tok("  Hello   world ")["input_ids"]) == "  Hello   world "
        assert tok("a<s>b")["input_ids"] == [263, 29966, 29879, 29958, 29890]  # "<s>" is text to sentencepiece
    assert (tmp_path / "llama2" / "tokenizer.model").read_bytes() == llama2.read_bytes()


@pytest.mark.shared_data
@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00")) | st.sampled_from(EDGE_TEXTS))
def test_sentencepiece_llama2_equals_sentencepiece_on_any_text(shared_data, text):
    sp, tok = _llama2_pair(shared_data / "sentencepiece" / "llama2_tokenizer.model")
    assert tok.encode(text).ids == sp.encode(text)


@functools.cache
def _llama2_pair(path: Path) -> tuple:
    return spm.SentencePieceProcessor(model_file=str(path)), sentencepiece_tokenizer(SentencePieceModel.load(path))


_OPTIONS = [
    ("en", 2000, {}),
    ("zh", 4500, {"character_coverage": 0.995}),
    ("en", 800, {"byte_fallback": True}),
    ("en", 1500, {"split_digits": True, "max_sentencepiece_length": 6}),
    ("en", 1500, {"add_dummy_prefix": False}),
    ("en", 1500, {"remove_extra_whitespaces": False}),
    ("zh", 4500, {"normalization_rule_name": "identity", "byte_fallback": True, "character_coverage": 0.98}),
    ("en", 1500, {"normalization_rule_name": "nfkc_cf", "control_symbols": ["<ctl>"]}),
    ("en", 1500, {"split_by_whitespace": False, "split_by_unicode_script": False}),
]


@pytest.mark.shared_data
@pytest.mark.slow
@pytest.mark.parametrize(("corpus", "vocab_size", "options"), _OPTIONS, ids=[repr(o) for *_, o in _OPTIONS])
def test_sentencepiece_trained_models_convert_exactly(shared_data, tmp_path, corpus, vocab_size, options):
    source = shared_data / "corpora" / "en" / "english_combined.txt" if corpus == "en" else sorted(
        (shared_data / "corpora" / "zh").glob("*.txt"))[0]
    text = source.read_bytes()[:400_000].decode("utf-8", "ignore")
    (tmp_path / "corpus.txt").write_text(text[: text.rfind("\n") + 1], encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(tmp_path / "corpus.txt"), model_prefix=str(tmp_path / "m"),
                                   model_type="bpe", vocab_size=vocab_size, minloglevel=2, **options)
    _assert_same_ids(tmp_path / "m.model", _lines(shared_data, limit=60_000))


@pytest.mark.shared_data
def test_sentencepiece_refuses_what_it_cannot_express(shared_data, tmp_path, capsys):
    spm.SentencePieceTrainer.train(sentence_iterator=iter(["hello world", "hello there"] * 20),
                                   model_prefix=str(tmp_path / "char"), model_type="char", minloglevel=2,
                                   vocab_size=14, hard_vocab_limit=False)
    assert main(["convert", str(tmp_path / "char.model"), "--to", "tokenizers", "--out", str(tmp_path / "u")]) == 2
    assert "SentencePiece char model" in capsys.readouterr().err and not (tmp_path / "u").exists()
    llama2 = shared_data / "sentencepiece" / "llama2_tokenizer.model"
    with pytest.raises(ValueError, match="converts only to 'tokenizers'"):
        convert(llama2, to="gpt2", out=tmp_path / "g")
    bad = tmp_path / "bad.model"
    bad.write_bytes(b"\xff\xff\xff")
    assert main(["convert", str(bad), "--to", "tokenizers", "--out", str(tmp_path / "b")]) == 2
    assert "is not a SentencePiece model" in capsys.readouterr().err
    spm.SentencePieceTrainer.train(sentence_iterator=iter(["a b c <x> abc"] * 50), model_prefix=str(tmp_path / "ud"),
                                   model_type="bpe", vocab_size=15, user_defined_symbols=["<x>"], minloglevel=2)
    assert not any((tmp_path / name).exists() for name in ("g", "b"))
    # User-defined symbols: a folder without tokenizer.json (HFSentencePieceTokenizer encodes it), said on stderr.
    assert main(["convert", str(tmp_path / "ud.model"), "--to", "tokenizers", "--out", str(tmp_path / "d")]) == 0
    assert "tokenizer.json left out: the model has user-defined symbols" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["special_tokens_map.json", "tokenizer.model",
                                                                   "tokenizer_config.json"]
    with pytest.raises(ValueError, match="user-defined symbols"):
        sentencepiece_tokenizer(SentencePieceModel.load(tmp_path / "ud.model"))


@pytest.mark.shared_data
@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00")) | st.sampled_from(EDGE_TEXTS))
def test_sentencepiece_nmt_nfkc_model_equals_sentencepiece_on_any_text(shared_data, tmp_path_factory, text):
    sp, tok = _trained_pair(shared_data, tmp_path_factory.getbasetemp())
    assert tok.encode(text).ids == sp.encode(text)


@functools.cache
def _trained_pair(shared_data: Path, where: Path) -> tuple:
    """A default-normalization (nmt_nfkc) model that keeps whitespace as is: the normalizer's hardest case."""
    text = (shared_data / "corpora" / "en" / "english_combined.txt").read_bytes()[:200_000].decode("utf-8", "ignore")
    spm.SentencePieceTrainer.train(sentence_iterator=iter(text.split("\n")), model_prefix=str(where / "nfkc"),
                                   model_type="bpe", vocab_size=1000, remove_extra_whitespaces=False,
                                   byte_fallback=True, minloglevel=2)
    path = where / "nfkc.model"
    return spm.SentencePieceProcessor(model_file=str(path)), sentencepiece_tokenizer(SentencePieceModel.load(path))
