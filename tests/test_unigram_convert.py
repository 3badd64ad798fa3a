"""Unigram SentencePiece models in Hugging Face: ``hf-bpe convert MODEL.model --to tokenizers``, the folder's
``tokenizer.json`` (tokenizers' ``Unigram``) and ``HFSentencePieceTokenizer`` against ``sentencepiece``; and where
transformers' own ``SpmConverter`` differs from ``sentencepiece`` (each difference pinned with its example)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sentencepiece as spm
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_bpe
from helpers import transformers_major
from hf_bpe.cli import main
from hf_bpe.formats.sentencepiece_model import BYTE, NORMAL, UNUSED, Piece, SentencePieceModel
from hf_bpe.integrations.sentencepiece_hf import sentencepiece_tokenizer, tokenizer_json_blocker
from hf_bpe.integrations.sentencepiece_tokenizer import HFSentencePieceTokenizer
from hf_bpe.model.unigram import UnigramModel
from test_unigram import _PROBES, _corpus, _model, _processor

pytestmark = pytest.mark.crossval

_TEST_MODEL = "sentencepiece_test_model.model"
_JA_MODEL = "sentencepiece_test_ja_model.model"


def _differing(encode, sp: spm.SentencePieceProcessor, lines: list[str]) -> list[str]:
    return [line for line, ids in zip(lines, encode(lines)) if ids != sp.encode(line)]


def _tied_only(model: SentencePieceModel, sp: spm.SentencePieceProcessor, tokenizer, lines: list[str]) -> int:
    """Assert that tokenizer.json differs from sentencepiece only by segmentations of the same score (float32 vs
    float64 sums deciding a tie, e.g. '□' + '□□□□' against '□□□□' + '□'); return how many lines differ."""
    unigram = UnigramModel.from_sentencepiece(model)

    def score(ids: list[int], tokens: list[str]) -> float:
        total = 0.0
        for index, token in zip(ids, tokens):
            piece = model.pieces[index]
            if index == unigram.unk_id:  # a run of unknown characters
                total += unigram.unk_score * len(token)
            elif piece.type == BYTE:  # one unknown character per leading byte
                total += unigram.unk_score if int(piece.piece[3:5], 16) & 0xC0 != 0x80 else 0.0
            else:
                total += piece.score
        return total

    differing = 0
    for line, encoding in zip(lines, tokenizer.encode_batch(lines, add_special_tokens=False)):
        theirs = sp.encode(line)
        if encoding.ids != theirs:
            differing += 1
            expected = score(theirs, sp.encode(line, out_type=str))
            assert score(encoding.ids, encoding.tokens) == pytest.approx(expected, abs=1e-4), line
    return differing


def _json_ids(tokenizer):
    return lambda lines: [e.ids for e in tokenizer.encode_batch(lines, add_special_tokens=False)]


def _hf_ids(tok):
    return lambda lines: tok(lines, add_special_tokens=False)["input_ids"]


def _train(tmp_path: Path, name: str, **options) -> Path:
    spm.SentencePieceTrainer.train(sentence_iterator=iter(_corpus()), model_prefix=str(tmp_path / name),
                                   model_type="unigram", vocab_size=300, hard_vocab_limit=False, minloglevel=3,
                                   **options)
    return tmp_path / f"{name}.model"


# -- the converted folder ---------------------------------------------------------------------------------------------

@pytest.mark.shared_data
@pytest.mark.parametrize("name, corpus, limit", [(_TEST_MODEL, "multi/udhr2_all_lang_tab_line.tsv", 3000),
                                                 (_JA_MODEL, "multi/ja_wagahaiwa_nekodearu.txt", 3000)])
def test_convert_unigram_folder_encodes_like_sentencepiece(shared_data, tmp_path, name, corpus, limit):
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    model = shared_data / "sentencepiece" / name
    assert main(["convert", str(model), "--to", "tokenizers", "--out", str(tmp_path / "out")]) == 0
    folder = tmp_path / "out"
    assert json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))["model"]["type"] == "Unigram"
    sp = spm.SentencePieceProcessor(model_file=str(model))
    lines = (shared_data / "corpora" / corpus).read_text(encoding="utf-8").splitlines()[:limit] + _PROBES[:-2]
    assert not _differing(_json_ids(Tokenizer.from_file(str(folder / "tokenizer.json"))), sp, lines)
    tok = HFSentencePieceTokenizer.from_pretrained(folder)
    assert not _differing(_hf_ids(tok), sp, lines[:1000] + _PROBES)
    # The folder names PreTrainedTokenizerFast (transformers 4.x and 5.x load it without hf_bpe): tokenizer.json.
    assert json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))["tokenizer_class"] == \
        "PreTrainedTokenizerFast"
    fast = PreTrainedTokenizerFast.from_pretrained(folder)
    assert not _differing(_hf_ids(fast), sp, lines[:1000])
    assert not _differing(_hf_ids(AutoTokenizer.from_pretrained(folder)), sp, lines[:1000])
    # sentencepiece decodes <unk> as ' ⁇ ', transformers as '<unk>' (as for BPE folders: README)
    texts = ["Hello world, and 123 more.", "吾輩は猫である。名前はまだ無い。", *lines]
    ids = next(ids for ids in sp.encode(texts) if sp.unk_id() not in ids)
    assert tok.decode(ids) == fast.decode(ids) == sp.decode(ids)


@pytest.mark.corpus
@pytest.mark.shared_data
@pytest.mark.slow
def test_convert_unigram_every_line_of_the_corpora(shared_data, tmp_path):
    """Every line of the multilingual corpora and slices of en / zh, through tokenizer.json and
    HFSentencePieceTokenizer, for both test models."""
    corpora = shared_data / "corpora"
    lines = []
    for path in [*sorted((corpora / "multi").rglob("*.t*"))]:
        lines += path.read_text(encoding="utf-8").splitlines()
    for path in [corpora / "en" / "english_combined.txt", *sorted((corpora / "zh").glob("*.txt"))]:
        lines += path.read_bytes()[:300_000].decode("utf-8", "ignore").splitlines()[:-1]
    for name in (_TEST_MODEL, _JA_MODEL):
        model = SentencePieceModel.load(shared_data / "sentencepiece" / name)
        sp = spm.SentencePieceProcessor(model_file=str(shared_data / "sentencepiece" / name))
        folder = hf_bpe.save_sentencepiece(model, tmp_path / name)
        from tokenizers import Tokenizer

        assert not _differing(_json_ids(Tokenizer.from_file(str(folder / "tokenizer.json"))), sp, lines)
        assert not _differing(_hf_ids(HFSentencePieceTokenizer.from_pretrained(folder)), sp, lines)


@pytest.mark.parametrize("options", [
    {}, {"byte_fallback": True}, {"normalization_rule_name": "identity", "add_dummy_prefix": False},
    {"remove_extra_whitespaces": False, "byte_fallback": True}, {"normalization_rule_name": "nmt_nfkc_cf"},
    {"remove_extra_whitespaces": False, "add_dummy_prefix": False, "control_symbols": ["<ctl>"]},
])
def test_trained_unigram_models_convert_exactly(tmp_path, options):
    path = _train(tmp_path, "m", **options)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    model = SentencePieceModel.load(path)
    lines = _PROBES[:-2] + _corpus()[:400]
    assert _tied_only(model, sp, sentencepiece_tokenizer(model), lines) <= 2
    folder = hf_bpe.save_sentencepiece(model, tmp_path / "folder")
    tok = HFSentencePieceTokenizer.from_pretrained(folder)
    assert not _differing(_hf_ids(tok), sp, _PROBES + _corpus()[:400])
    ids = next(ids for ids in sp.encode(lines) if sp.unk_id() not in ids and len(ids) > 5)
    assert tok.decode(ids) == sp.decode(ids)


def test_user_symbols_and_unused_pieces_get_no_tokenizer_json(tmp_path, capsys):
    """tokenizers' Unigram has no user-defined bonus and would produce UNUSED pieces: the folder has no
    tokenizer.json (said on stderr) and HFSentencePieceTokenizer encodes exactly."""
    path = _train(tmp_path, "ud", user_defined_symbols=["<sep>", "ka"])
    assert main(["convert", str(path), "--to", "tokenizers", "--out", str(tmp_path / "d")]) == 0
    assert "tokenizer.json left out: the model has user-defined symbols" in capsys.readouterr().err
    assert not (tmp_path / "d" / "tokenizer.json").exists()
    with pytest.raises(ValueError, match="user-defined symbols .* tokenizers' Unigram has no such pieces"):
        sentencepiece_tokenizer(SentencePieceModel.load(path))
    sp = spm.SentencePieceProcessor(model_file=str(path))
    assert not _differing(_hf_ids(HFSentencePieceTokenizer.from_pretrained(tmp_path / "d")), sp,
                          _PROBES + _corpus()[:400])
    unused = _model([Piece("a", -1.0, NORMAL), Piece("b", -1.0, NORMAL), Piece("ab", -0.5, UNUSED)])
    assert "UNUSED pieces" in (tokenizer_json_blocker(unused) or "")
    folder = hf_bpe.save_sentencepiece(unused, tmp_path / "unused")
    assert not (folder / "tokenizer.json").exists()
    assert HFSentencePieceTokenizer.from_pretrained(folder)("abab")["input_ids"] == \
        _processor(unused).encode("abab") == [2, 3, 2, 3]


@pytest.fixture(scope="module")
def nfkc_pair(tmp_path_factory: pytest.TempPathFactory):
    path = _train(tmp_path_factory.mktemp("unigram_hf_any_text"), "m", byte_fallback=True)
    return spm.SentencePieceProcessor(model_file=str(path)), HFSentencePieceTokenizer(vocab_file=str(path))


@settings(max_examples=150, derandomize=True)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00")))
def test_sentencepiece_tokenizer_unigram_equals_sentencepiece_on_any_text(nfkc_pair, text):
    sp, tok = nfkc_pair
    assert tok(text, add_special_tokens=False)["input_ids"] == sp.encode(text)


# -- what tokenizer.json cannot express (HFSentencePieceTokenizer does) ----------------------------------------------

def test_tokenizer_json_differs_on_float32_ties():
    """sentencepiece adds path scores in float32, tokenizers' Unigram in float64: on a near tie the rounding
    decides, and the two choose differently. A real model's arbitrary scores make this rare (none on the corpora
    above); HFSentencePieceTokenizer adds in float32 like sentencepiece."""
    model = _model([Piece("a", -1.1, NORMAL), Piece("éé", -0.1, NORMAL), Piece("zz", -7.0, NORMAL)])
    sp, tok = _processor(model), sentencepiece_tokenizer(model)
    assert sp.encode("aééé", out_type=str) == ["a", "é", "éé"]
    assert tok.encode("aééé").tokens == ["a", "éé", "é"]
    assert HFSentencePieceTokenizer(sentencepiece_model=model)("aééé")["input_ids"] == sp.encode("aééé")


def test_tokenizer_json_matches_the_spelling_of_control_pieces():
    """tokenizers' Unigram looks every piece up in the text, control, unknown and byte pieces included; sentencepiece
    never matches them. A text spelling '<s>' gets the BOS id through tokenizer.json."""
    model = _model([Piece(c, -2.0, NORMAL) for c in "<s>▁x"])
    sp, tok = _processor(model), sentencepiece_tokenizer(model)
    assert sp.encode("<s>x") == [2, 3, 4, 6]
    assert tok.encode("<s>x").ids == [1, 6]
    assert HFSentencePieceTokenizer(sentencepiece_model=model)("<s>x", add_special_tokens=False)["input_ids"] == \
        [2, 3, 4, 6]


# -- transformers' own conversion ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def spm_converted():
    """transformers' SpmConverter applied to a .model (it parses the file with protobuf)."""
    pytest.importorskip("google.protobuf", reason="transformers' SpmConverter reads .model files with protobuf "
                                                  "(pip install protobuf)")
    from transformers.convert_slow_tokenizer import SpmConverter

    class Slow:  # the one attribute SpmConverter reads from a slow tokenizer
        def __init__(self, path: Path) -> None:
            self.vocab_file = str(path)

    def convert(path: Path):
        return SpmConverter(Slow(path)).converted()

    return convert


@pytest.mark.shared_data
def test_spm_converter_equals_sentencepiece_on_the_test_models_real_text(shared_data, spm_converted):
    for name, corpus in ((_TEST_MODEL, "multi/udhr2_all_lang_tab_line.tsv"),
                         (_JA_MODEL, "multi/ja_wagahaiwa_nekodearu.txt")):
        path = shared_data / "sentencepiece" / name
        lines = (shared_data / "corpora" / corpus).read_text(encoding="utf-8").splitlines()[:3000]
        tok = spm_converted(path)
        assert not _differing(_json_ids(tok), spm.SentencePieceProcessor(model_file=str(path)), lines)


def test_spm_converter_differences(tmp_path, spm_converted):
    """Each place where transformers 5's SpmConverter encodes otherwise than sentencepiece, with its example; the
    folder hf-bpe converts encodes every one of them as sentencepiece (HFSentencePieceTokenizer)."""
    def pair(name: str, **options):
        path = _train(tmp_path, name, **options)
        return path, spm.SentencePieceProcessor(model_file=str(path)), spm_converted(path)

    def ours(path: Path, text: str) -> list[int]:
        return HFSentencePieceTokenizer(vocab_file=str(path))(text, add_special_tokens=False)["input_ids"]

    # 1. Control pieces are special tokens matched in the text ('<s>' gets the BOS id).
    path, sp, tok = pair("plain")
    text = "ka <s> to"
    assert tok.encode(text, add_special_tokens=False).tokens[1] == "<s>" and "<s>" not in sp.encode(text, out_type=str)
    assert ours(path, text) == sp.encode(text)
    # 2. Combining sequences: tokenizers' Precompiled takes the shortest known prefix of a grapheme.
    text = "ｓ\u0301"
    assert tok.encode(text, add_special_tokens=False).tokens != sp.encode(text, out_type=str)
    assert ours(path, text) == sp.encode(text)
    # 3. byte_fallback is dropped: an unknown character is <unk>, not its UTF-8 bytes.
    path, sp, tok = pair("bytes", byte_fallback=True)
    assert sp.encode("😀", out_type=str) == ["▁", "<0xF0>", "<0x9F>", "<0x98>", "<0x80>"]
    assert tok.encode("😀", add_special_tokens=False).tokens == ["▁", "😀"]
    assert tok.encode("😀", add_special_tokens=False).ids[1] == sp.unk_id()
    assert ours(path, "😀") == sp.encode("😀")
    # 4. User-defined symbols are added tokens matched before the dummy prefix, which is lost.
    path, sp, tok = pair("user", user_defined_symbols=["ka"])
    assert sp.encode("katori", out_type=str)[:2] == ["▁", "ka"]
    assert tok.encode("katori", add_special_tokens=False).tokens[0] == "ka"
    assert ours(path, "katori") == sp.encode("katori")
    # 5. add_dummy_prefix=false is ignored: '▁' is always prepended.
    path, sp, tok = pair("noprefix", normalization_rule_name="identity", add_dummy_prefix=False)
    assert sp.encode("katori", out_type=str)[0] != tok.encode("katori", add_special_tokens=False).tokens[0]
    assert tok.encode("katori", add_special_tokens=False).tokens[0].startswith("▁")
    assert ours(path, "katori") == sp.encode("katori")
    # 6. remove_extra_whitespaces=false is ignored: runs of spaces are collapsed, leading/trailing ones dropped.
    path, sp, tok = pair("spaces", remove_extra_whitespaces=False)
    spaces = tok.encode("ka  to ", add_special_tokens=False).tokens.count("▁")
    assert sp.encode("ka  to ", out_type=str).count("▁") > spaces
    assert tok.encode("   ", add_special_tokens=False).ids == [] != sp.encode("   ")
    assert ours(path, "ka  to ") == sp.encode("ka  to ")


def test_t5_tokenizer_differences(tmp_path, spm_converted):
    """T5Tokenizer loading a unigram spiece.model: transformers 5's (protobuf path) assumes T5's vocabulary layout
    (unknown id 2) and splits on all whitespace first; transformers 4's is sentencepiece itself (equal here)."""
    from transformers import T5Tokenizer

    path = _train(tmp_path, "t5", normalization_rule_name="nfkc")  # nfkc keeps tabs (nmt_nfkc makes them spaces)
    (tmp_path / "t5").mkdir()
    (tmp_path / "t5" / "spiece.model").write_bytes(path.read_bytes())
    t5, sp = T5Tokenizer.from_pretrained(tmp_path / "t5"), spm.SentencePieceProcessor(model_file=str(path))
    # 1. An unknown character gets id 2 ('</s>' in this model), not the unknown id 0 (transformers 4's T5Tokenizer
    # is sentencepiece itself and gives 0).
    assert sp.encode("😀") == [sp.piece_to_id("▁"), 0] and sp.id_to_piece(2) == "</s>"
    unknown = 2 if transformers_major() >= 5 else 0
    assert t5("😀", add_special_tokens=False)["input_ids"] == [sp.piece_to_id("▁"), unknown]
    # 2. A tab separates words ('▁' added), where sentencepiece keeps it as a character of the text (5.x).
    assert "\t" in sp.encode("ka\tto", out_type=str)
    assert t5.tokenize("ka\tto") == sp.encode("ka to" if transformers_major() >= 5 else "ka\tto", out_type=str)
    assert HFSentencePieceTokenizer(vocab_file=str(path))("ka\tto😀", add_special_tokens=False)["input_ids"] == \
        sp.encode("ka\tto😀")
