"""new_token_embeddings: each new row the mean of the base rows of the base's split of the new token.

A byte-level base and its extension are hf_bpe.train on one corpus at two sizes (every id kept, merges a prefix);
a SentencePiece extension is the base's pieces with pieces appended by hand (and Llama 2 as a real base).
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_bpe
from hf_bpe.formats.sentencepiece_model import NORMAL, Piece, SentencePieceModel
from hf_bpe.integrations.embeddings import base_splits, check_extension, new_token_embeddings
from hf_bpe.integrations.sentencepiece_hf import sentencepiece_tokenizer

CORPUS = ["low lower lowest newer wider", "the cat sat on the mat", "中文字体 中文 文字"] * 6


def train(corpus, vocab_size):
    with warnings.catch_warnings():  # small corpora run out of pairs: the extension is then smaller, still valid
        warnings.filterwarnings("ignore", "the corpus ran out of mergeable pairs", UserWarning)
        return hf_bpe.train(corpus, vocab_size=vocab_size, show_progress=False)


@pytest.fixture(scope="module")
def pair():
    return train(CORPUS, 270), train(CORPUS, 290)


def reference_rows(base, extended, table):
    """The definition, one token at a time in float64: the mean of the rows of the base's split of its bytes."""
    rows = []
    for index in range(base.vocab_size, extended.vocab_size):
        split = base.encode_word(extended.id_to_bytes(index))
        rows.append(table[split].astype(np.float64).mean(axis=0))
    return np.array(rows).reshape(len(rows), table.shape[1])


# -- byte-level ---------------------------------------------------------------------------------------------------

texts = st.lists(st.text(st.sampled_from("ab cd\n中文é😀"), min_size=1, max_size=30), min_size=1, max_size=12)


@settings(max_examples=30)
@given(corpus=texts, extra=st.integers(0, 30), more=st.integers(0, 30), width=st.integers(1, 5))
def test_rows_are_means_of_the_base_split_of_the_bytes(corpus, extra, more, width):
    base, extended = train(corpus, 256 + extra), train(corpus, 256 + extra + more)
    table = np.random.default_rng(len(corpus) + extra).standard_normal((base.vocab_size, width))
    rows = new_token_embeddings(base, extended, table)
    assert rows.shape == (extended.vocab_size - base.vocab_size, width)
    np.testing.assert_allclose(rows, reference_rows(base, extended, table), rtol=1e-12, atol=1e-12)
    for index, split in zip(range(base.vocab_size, extended.vocab_size), base_splits(base, extended)):
        # The split spells the token: the base's tokens, concatenated, are its bytes.
        assert b"".join(base.id_to_bytes(i) for i in split) == extended.id_to_bytes(index)
        token = extended.id_to_bytes(index)
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if base.pretokenizer.split(text) == [text]:  # one pre-token: the text encoder gives the same split
            assert base.encode_ordinary(text) == split


def test_a_new_token_may_be_part_of_a_utf8_character():
    corpus = ["中文字体 中文 文字 汉字"] * 5
    base, extended = train(corpus, 257), train(corpus, 275)
    partial = [i for i in range(base.vocab_size, extended.vocab_size) if not _decodes(extended.id_to_bytes(i))]
    assert partial, "the corpus makes no new token that is part of a character"
    table = np.random.default_rng(0).standard_normal((base.vocab_size, 3))
    np.testing.assert_allclose(new_token_embeddings(base, extended, table), reference_rows(base, extended, table))


def _decodes(token: bytes) -> bool:
    try:
        token.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_dtype_in_is_dtype_out(pair, dtype):
    base, extended = pair
    table = np.random.default_rng(1).standard_normal((base.vocab_size, 4)).astype(dtype)
    rows = new_token_embeddings(base, extended, table)
    assert rows.dtype == dtype
    expected = reference_rows(base, extended, table)
    np.testing.assert_allclose(rows.astype(np.float64), expected, rtol=1e-3 if dtype == np.float16 else 1e-6,
                               atol=1e-3 if dtype == np.float16 else 1e-6)


def test_only_the_base_rows_are_read(pair):
    """A padded or already resized matrix gives the same rows."""
    base, extended = pair
    table = np.random.default_rng(2).standard_normal((base.vocab_size, 3))
    padded = np.vstack([table, np.full((extended.vocab_size - base.vocab_size + 7, 3), np.nan)])
    np.testing.assert_array_equal(new_token_embeddings(base, extended, padded),
                                  new_token_embeddings(base, extended, table))


def test_no_new_tokens_gives_no_rows(pair):
    base, _ = pair
    rows = new_token_embeddings(base, base, np.zeros((base.vocab_size, 5), dtype=np.float32))
    assert rows.shape == (0, 5) and rows.dtype == np.float32


def test_big_width_is_averaged_in_chunks(pair, monkeypatch):
    import hf_bpe.integrations.embeddings as embeddings

    base, extended = pair
    table = np.random.default_rng(3).standard_normal((base.vocab_size, 6))
    monkeypatch.setattr(embeddings, "_GATHER_ELEMENTS", 7)  # one row per gather
    np.testing.assert_allclose(new_token_embeddings(base, extended, table), reference_rows(base, extended, table))


def test_tokenizer_forms_give_the_same_rows(pair, tmp_path):
    base, extended = pair
    table = np.random.default_rng(4).standard_normal((base.vocab_size, 2))
    expected = new_token_embeddings(base, extended, table)
    base.save(tmp_path / "base")
    extended.save(tmp_path / "extended")
    from_folders = new_token_embeddings(tmp_path / "base", str(tmp_path / "extended"), table)
    from_hf = new_token_embeddings(hf_bpe.HFBPETokenizer.from_model(base),
                                   hf_bpe.HFBPETokenizer.from_pretrained(tmp_path / "extended"), table)
    np.testing.assert_array_equal(from_folders, expected)
    np.testing.assert_array_equal(from_hf, expected)
    # What AutoTokenizer gives for the default folder (PreTrainedTokenizerFast's class, issue 33.8).
    from transformers import AutoTokenizer

    fast = AutoTokenizer.from_pretrained(tmp_path / "extended")
    np.testing.assert_array_equal(new_token_embeddings(AutoTokenizer.from_pretrained(tmp_path / "base"), fast, table),
                                  expected)
    # A tokenizer.model that is not SentencePiece (Llama 3's original folder has a tiktoken one): byte-level.
    (tmp_path / "base" / "tokenizer.model").write_text("IQ== 0\n")
    np.testing.assert_array_equal(new_token_embeddings(tmp_path / "base", extended, table), expected)
    with pytest.raises(ValueError, match="is a file but not a SentencePiece .model"):
        new_token_embeddings(tmp_path / "base" / "vocab.json", extended, table)


def test_numpy_input_does_not_import_torch(tmp_path):
    code = ("import sys, numpy as np, hf_bpe\n"
            "c = ['low lower lowest'] * 8\n"
            "b, e = (hf_bpe.train(c, vocab_size=v, show_progress=False) for v in (258, 260))\n"
            "hf_bpe.new_token_embeddings(b, e, np.zeros((258, 2)))\n"
            "assert 'torch' not in sys.modules, 'torch was imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[1])


# -- bad input ----------------------------------------------------------------------------------------------------

def test_wrong_shapes_and_types_are_named(pair):
    base, extended = pair
    with pytest.raises(ValueError, match=r"2-D .* shape \(270,\)"):
        new_token_embeddings(base, extended, np.zeros(base.vocab_size))
    with pytest.raises(ValueError, match="embeddings has 269 rows but the base tokenizer has 270 ids"):
        new_token_embeddings(base, extended, np.zeros((269, 3)))
    with pytest.raises(TypeError, match="floating-point, got a numpy array of dtype int64"):
        new_token_embeddings(base, extended, np.zeros((270, 3), dtype=np.int64))
    with pytest.raises(TypeError, match="numpy array or a torch tensor, got list"):
        new_token_embeddings(base, extended, [[0.0]] * 270)
    with pytest.raises(TypeError, match="base must be .* got int 5"):
        new_token_embeddings(5, extended, np.zeros((270, 3)))


def test_not_an_extension_is_named(pair, tmp_path):
    base, extended = pair
    other = train(["something else entirely, and again"] * 4, 290)
    with pytest.raises(ValueError, match=r"not an extension of base: id 256 is the token b'.*' in base but"):
        new_token_embeddings(base, other, np.zeros((270, 3)))
    with pytest.raises(ValueError, match="extended has 270 ids, fewer than the base's 290.*swapped"):
        new_token_embeddings(extended, base, np.zeros((290, 3)))
    sentencepiece = hf_bpe.train_sentencepiece(CORPUS, vocab_size=40)
    with pytest.raises(TypeError, match="base is a BPEModel but extended is a SentencePieceModel"):
        new_token_embeddings(base, sentencepiece, np.zeros((270, 3)))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        new_token_embeddings(tmp_path / "nowhere", extended, np.zeros((270, 3)))


def test_a_hole_among_the_new_ids_is_named(pair):
    base, extended = pair
    vocab = dict(extended.vocab)
    last = max(vocab, key=vocab.get)
    vocab[last] += 1  # the last merge's token moves one id up: its old id is unused
    holed = hf_bpe.BPEModel(vocab, extended.merges)
    with pytest.raises(ValueError, match=f"no token with id {vocab[last] - 1}"):
        check_extension(base, holed)


def test_a_new_special_token_is_split_as_its_spelling(pair):
    base, extended = pair
    special = hf_bpe.BPEModel(extended.vocab, extended.merges, special_tokens={"<|low|>": extended.vocab_size})
    (split,) = base_splits(base, special)[-1:]
    assert split == base.encode_word(b"<|low|>")


@pytest.mark.shared_data
def test_gpt2_extended_by_hand(shared_data):
    """Real GPT-2 with four merges appended (one new token is part of a character): the base splits by bytes."""
    base = hf_bpe.BPEModel.load(shared_data / "vocabs" / "gpt2")
    new_merges = [(b"\xe6\x96", b"\x87"), (b"\xe5\xad", b"\x97"), ("中".encode(), "文".encode()),
                  ("字".encode(), b"\xe4\xbd")]
    vocab = dict(base.vocab)
    for i, (left, right) in enumerate(new_merges):
        vocab[left + right] = base.vocab_size + i
    extended = hf_bpe.BPEModel(vocab, base.merges + tuple(new_merges), special_tokens=base.special_tokens)
    assert extended.vocab_size == base.vocab_size + 4
    splits = base_splits(base, extended)
    assert splits == [[23877, 229], [27764, 245], [40792, 23877, 229], [27764, 245, 19526]]
    table = np.random.default_rng(8).standard_normal((base.vocab_size, 12)).astype(np.float32)
    np.testing.assert_allclose(new_token_embeddings(shared_data / "vocabs" / "gpt2", extended, table),
                               reference_rows(base, extended, table), rtol=1e-6)


# -- SentencePiece ------------------------------------------------------------------------------------------------

def appended(base: SentencePieceModel, texts: list[str]) -> SentencePieceModel:
    """``base`` with ``texts`` appended as normal pieces, scored below every base piece (as an extension does)."""
    low = min(p.score for p in base.pieces)
    pieces = base.pieces + tuple(Piece(t, low - 1 - i, NORMAL) for i, t in enumerate(texts))
    return SentencePieceModel(pieces, dict(base.trainer, vocab_size=len(pieces)), base.normalizer)


def engine_splits(base: SentencePieceModel, extended: SentencePieceModel) -> list[list[int]]:
    """hf_bpe's own SentencePiece engine (the tokenizers pipeline) on each new piece's text, unnormalized."""
    model = sentencepiece_tokenizer(base).model
    return [[token.id for token in model.tokenize(p.piece)] for p in extended.pieces[len(base.pieces):]]


NEW_PIECES = ["▁lower▁", "▁the▁cat", "wider▁", "▁▁", "☃▁low", "中文"]


def test_sentencepiece_rows_are_means_of_the_raw_split():
    base = hf_bpe.train_sentencepiece(CORPUS, vocab_size=60)
    extended = appended(base, NEW_PIECES)
    splits = base_splits(base, extended)
    assert splits == engine_splits(base, extended)
    pieces = [p.piece for p in base.pieces]
    assert not set(NEW_PIECES) & set(pieces)
    assert [[pieces[i] for i in split] for split in splits[:2]] == [["▁lower", "▁"], ["▁the", "▁cat"]]
    assert splits[4][0] == 0  # '☃' is not in the base, which has no byte fallback: its unknown piece
    table = np.random.default_rng(5).standard_normal((len(base.pieces), 3)).astype(np.float32)
    rows = new_token_embeddings(base, extended, table)
    expected = np.array([table[split].astype(np.float64).mean(axis=0) for split in splits])
    np.testing.assert_allclose(rows, expected, rtol=1e-6)


def test_sentencepiece_forms_and_checks(tmp_path):
    base = hf_bpe.train_sentencepiece(CORPUS, vocab_size=60)
    extended = appended(base, NEW_PIECES)
    table = np.random.default_rng(6).standard_normal((len(base.pieces), 2))
    expected = new_token_embeddings(base, extended, table)
    hf_bpe.save_sentencepiece(base, tmp_path / "base")
    (tmp_path / "extended.model").write_bytes(extended.to_bytes())
    np.testing.assert_array_equal(new_token_embeddings(tmp_path / "base", tmp_path / "extended.model", table),
                                  expected)
    np.testing.assert_array_equal(new_token_embeddings(
        hf_bpe.HFSentencePieceTokenizer(sentencepiece_model=base), extended, table), expected)
    changed = SentencePieceModel((*extended.pieces[:5], Piece("zz", -1.0, NORMAL), *extended.pieces[6:]),
                                 extended.trainer, extended.normalizer)
    with pytest.raises(ValueError, match="id 5 is '.*' \\(type 1\\) in base but 'zz'"):
        new_token_embeddings(base, changed, table)


@pytest.mark.shared_data
def test_llama2_extension(shared_data):
    base = SentencePieceModel.load(shared_data / "sentencepiece" / "llama2_tokenizer.model")
    extended = appended(base, ["▁你好世界", "▁tokenization", "😀😀", "▁" * 20, "\u3000▁x"])
    splits = base_splits(base, extended)
    assert splits == engine_splits(base, extended)
    byte = {p.piece: i for i, p in enumerate(base.pieces)}
    assert splits[2] == [byte[f"<0x{b:02X}>"] for b in "😀😀".encode()]  # byte fallback
    table = np.random.default_rng(7).standard_normal((32000, 8)).astype(np.float32)
    rows = new_token_embeddings(base, extended, table)
    np.testing.assert_allclose(rows, [table[s].astype(np.float64).mean(axis=0) for s in splits], rtol=1e-5)


# -- torch and transformers ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_torch_tensor_in_torch_tensor_out(pair, dtype):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    base, extended = pair
    weight = torch.nn.Parameter(torch.randn(base.vocab_size, 4, dtype=getattr(torch, dtype)))
    rows = new_token_embeddings(base, extended, weight)
    assert isinstance(rows, torch.Tensor) and rows.dtype == weight.dtype and rows.device == weight.device
    assert not rows.requires_grad
    expected = reference_rows(base, extended, weight.detach().float().numpy())
    np.testing.assert_allclose(rows.float().numpy(), expected, rtol=1e-2 if dtype == "bfloat16" else 1e-6,
                               atol=1e-2 if dtype == "bfloat16" else 1e-6)


@pytest.mark.parametrize("tied", [True, False])
def test_resize_a_tiny_gpt2_model(pair, tied, tmp_path):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    base, extended_model = pair
    base.save(tmp_path / "base")
    extended_model.save(tmp_path / "extended")
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=base.vocab_size, n_positions=32, n_embd=16, n_layer=1, n_head=2,
                        tie_word_embeddings=tied)
    model = GPT2LMHeadModel(config).eval()
    before_in = model.get_input_embeddings().weight.detach().numpy().copy()
    before_out = model.get_output_embeddings().weight.detach().numpy().copy()
    # The README's lines.
    extended = AutoTokenizer.from_pretrained(tmp_path / "extended")
    model.resize_token_embeddings(len(extended), mean_resizing=False)
    for weight in {model.get_input_embeddings().weight, model.get_output_embeddings().weight}:  # one when tied
        new_rows = hf_bpe.new_token_embeddings(tmp_path / "base", extended, weight)
        weight.data[len(extended) - len(new_rows):len(extended)] = new_rows

    assert type(extended).__name__ == "HFBPETokenizer"
    assert model.get_input_embeddings().weight.shape == (extended_model.vocab_size, 16)
    np.testing.assert_allclose(model.get_input_embeddings().weight.detach().numpy()[base.vocab_size:],
                               reference_rows(base, extended_model, before_in), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(model.get_output_embeddings().weight.detach().numpy()[base.vocab_size:],
                               reference_rows(base, extended_model, before_out), rtol=1e-6, atol=1e-6)
    ids = extended("the lowest cat, 中文字体", return_tensors="pt")["input_ids"]
    assert ids.max() >= base.vocab_size  # the text uses new tokens
    with torch.no_grad():
        logits = model(ids).logits
    assert logits.shape == (1, ids.shape[1], extended_model.vocab_size) and torch.isfinite(logits).all()
