"""``HFSentencePieceTokenizer``: what ``AutoTokenizer`` returns for SentencePiece folders (hf_bpe imported), id for
id ``sentencepiece`` (issue 9, part 2); run under transformers 5.x and 4.x."""

from __future__ import annotations

import functools
import itertools
import json
from pathlib import Path

import pytest
import sentencepiece as spm
import transformers
from hypothesis import given, settings
from hypothesis import strategies as st

import hf_bpe
from helpers import load_without_hf_bpe, transformers_major
from hf_bpe.formats.sentencepiece_model import SentencePieceModel
from hf_bpe.integrations.sentencepiece_tokenizer import HFSentencePieceTokenizer
from hf_bpe.integrations.transformers_compat import MAJOR

pytestmark = pytest.mark.crossval

EDGE_TEXTS = ["", " ", "  a  b  ", "a" + " " * 40 + "b", "\t tab\n", "line\r\nnext", "😀 ﬁ ① Ｆｕｌｌ",
              "a\u3000b\u00a0c", "12345 678", "don't   stop", "中文 和 English", "<s>a</s><unk>"]


def _lines(shared_data: Path, limit: int = 60_000) -> list[str]:
    corpora = shared_data / "corpora"
    files = [corpora / "en" / "english_combined.txt", *sorted((corpora / "zh").glob("*.txt"))[:1],
             *sorted((corpora / "multi").rglob("*.txt"))[:8]]
    lines = []
    for path in files:
        lines += path.read_bytes()[:limit].decode("utf-8", "ignore").split("\n")[:-1]
    return lines + EDGE_TEXTS


@pytest.fixture(scope="module")
def llama2_folder(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    model = SentencePieceModel.load(shared_data / "sentencepiece" / "llama2_tokenizer.model")
    # hf_bpe's class, asked for (the default folder names PreTrainedTokenizerFast: see the end of this file).
    return hf_bpe.save_sentencepiece(model, tmp_path_factory.mktemp("llama2") / "folder",
                                     tokenizer_class="HFSentencePieceTokenizer")


def _assert_like_sentencepiece(tok, sp, lines: list[str]) -> None:
    ours = tok(lines, add_special_tokens=False)["input_ids"]
    theirs = sp.encode(lines)
    bad = [i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
    assert not bad, f"{len(bad)} of {len(lines)} differ, first {lines[bad[0]]!r}: {ours[bad[0]]} vs {theirs[bad[0]]}"
    for ids in theirs[:1000]:
        if sp.unk_id() not in ids:  # sentencepiece decodes <unk> as ' ⁇ ', transformers as '<unk>' (README)
            assert tok.decode(ids) == sp.decode(ids)


@pytest.mark.shared_data
def test_sentencepiece_tokenizer_is_what_autotokenizer_loads_and_encodes_like_sentencepiece(shared_data,
                                                                                           llama2_folder):
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    folder = llama2_folder
    sp = spm.SentencePieceProcessor(model_file=str(folder / "tokenizer.model"))
    tok = AutoTokenizer.from_pretrained(folder)
    assert type(tok) is HFSentencePieceTokenizer
    assert tok("Hello world")["input_ids"] == [15043, 3186]
    assert (tok.bos_token, tok.eos_token, tok.unk_token, tok.pad_token) == ("<s>", "</s>", "<unk>", None)
    assert tok("a<s>b")["input_ids"] == [263, 29966, 29879, 29958, 29890]  # "<s>" is text to sentencepiece
    lines = _lines(shared_data)
    _assert_like_sentencepiece(tok, sp, lines)
    fast = PreTrainedTokenizerFast.from_pretrained(folder)
    plain = [line for line in lines if "<" not in line]  # transformers 4's fast class ignores split_special_tokens
    assert fast(plain)["input_ids"] == tok(plain)["input_ids"]
    assert tok.backend == "custom" if MAJOR >= 5 else True


@pytest.mark.shared_data
@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00")) | st.sampled_from(EDGE_TEXTS))
def test_sentencepiece_tokenizer_llama2_equals_sentencepiece_on_any_text(llama2_folder, text):
    tok, sp = _pair(llama2_folder)
    assert tok(text)["input_ids"] == sp.encode(text)


@functools.cache
def _pair(folder: Path) -> tuple:
    return (HFSentencePieceTokenizer.from_pretrained(folder),
            spm.SentencePieceProcessor(model_file=str(folder / "tokenizer.model")))


@pytest.mark.shared_data
def test_sentencepiece_tokenizer_trained_model_saves_and_reloads_everywhere(shared_data, tmp_path):
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    lines = _lines(shared_data, limit=40_000)
    model = hf_bpe.train_sentencepiece(lines[::2], vocab_size=2000, byte_fallback=True, hard_vocab_limit=False)
    tok = HFSentencePieceTokenizer(sentencepiece_model=model)
    written = tok.save_pretrained(tmp_path / "saved")
    assert {Path(p).name for p in written} >= {"tokenizer.model", "tokenizer.json", "tokenizer_config.json"}
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "saved" / "tokenizer.model"))
    held_out = lines[1::2]
    _assert_like_sentencepiece(tok, sp, held_out)
    plain = [line for line in held_out if "<" not in line]
    for loaded in (AutoTokenizer.from_pretrained(tmp_path / "saved"),
                   PreTrainedTokenizerFast.from_pretrained(tmp_path / "saved")):
        assert loaded(plain)["input_ids"] == tok(plain)["input_ids"]
    # BOS/EOS when asked, for pairs too, and in the saved tokenizer.json.
    both = HFSentencePieceTokenizer(sentencepiece_model=model, add_bos_token=True, add_eos_token=True)
    ids = tok("a b")["input_ids"]
    assert both("a b")["input_ids"] == [1, *ids, 2]
    assert both("a b", "a b")["input_ids"] == [1, *ids, 2, 1, *ids, 2]
    assert both("a b", return_special_tokens_mask=True)["special_tokens_mask"] == [1] + [0] * len(ids) + [1]
    both.save_pretrained(tmp_path / "ends")
    assert PreTrainedTokenizerFast.from_pretrained(tmp_path / "ends")("a b")["input_ids"] == [1, *ids, 2]
    assert AutoTokenizer.from_pretrained(tmp_path / "ends")("a b")["input_ids"] == [1, *ids, 2]


def test_sentencepiece_tokenizer_refuses_bad_input_clearly(tmp_path):
    with pytest.raises(ValueError, match="needs vocab_file"):
        HFSentencePieceTokenizer()
    with pytest.raises(TypeError, match="must be a SentencePieceModel, got str"):
        HFSentencePieceTokenizer(sentencepiece_model="x.model")
    model = hf_bpe.train_sentencepiece(["low lower lowest"] * 3, vocab_size=16)
    tok = HFSentencePieceTokenizer(sentencepiece_model=model)
    with pytest.raises(ValueError, match="token id 16 is out of range; ids are 0..15"):
        tok.decode([3, 16])
    with pytest.raises(ValueError, match="token id -1 is out of range"):
        tok.decode([-1])
    with pytest.raises(ValueError, match="add_bos_token = True but the model has no bos piece"):
        HFSentencePieceTokenizer(sentencepiece_model=hf_bpe.train_sentencepiece(
            ["low lower"] * 3, vocab_size=12, bos_id=-1, hard_vocab_limit=False), add_bos_token=True)
    with pytest.raises(FileNotFoundError):
        tok.save_vocabulary(str(tmp_path / "missing"))


# Texts around user-defined symbols: at the start, between spaces, glued to words, overlapping each other, full-width
# (normalized into a symbol: sentencepiece freezes it after normalization), and the combining sequences on which
# tokenizers' Precompiled differs from SentencePiece.
_USER_TEXTS = ["a<sep>b", "<sep>b", " <sep> b", "＜ｓｅｐ＞", "a@@@b", "@@ @@", "abc ab", "ａｂ", "<sep>", " ",
               "  <sep>  ", "ｓ\u0301 a\u0301\u0301 ﬁ\u0301", "x<sep@@>y"]


@pytest.mark.shared_data
@settings(max_examples=300, deadline=None, derandomize=True)
@given(text=st.sampled_from(_USER_TEXTS)
       | st.lists(st.sampled_from(list("ab xy<>sep@ｓ\u0301ä1") + _USER_TEXTS), max_size=10).map("".join)
       | st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00")))
def test_sentencepiece_tokenizer_user_symbols_and_combining_marks_exactly(shared_data, tmp_path_factory, text):
    """What tokenizer.json cannot express, this class encodes as sentencepiece: spm_train's and hf_bpe's models."""
    for tok, sp in _user_symbol_pairs(shared_data, tmp_path_factory.getbasetemp()):
        assert tok(text)["input_ids"] == sp.encode(text)


@functools.cache
def _user_symbol_pairs(shared_data: Path, where: Path) -> tuple:
    from transformers import AutoTokenizer

    text = (shared_data / "corpora" / "en" / "english_combined.txt").read_bytes()[:200_000].decode("utf-8", "ignore")
    lines = text.split("\n")
    options = {"user_defined_symbols": ["<sep>", "@@", "ab"], "byte_fallback": True}
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix=str(where / "uds"), model_type="bpe",
                                   vocab_size=900, minloglevel=2, **options)
    hf_bpe.save_sentencepiece(SentencePieceModel.load(where / "uds.model"), where / "uds")
    ours = hf_bpe.train_sentencepiece(lines, vocab_size=900, remove_extra_whitespaces=False, **options)
    hf_bpe.save_sentencepiece(ours, where / "ours")
    pairs = []
    for folder in (where / "uds", where / "ours"):
        assert not (folder / "tokenizer.json").exists()
        tok = AutoTokenizer.from_pretrained(folder)
        assert type(tok) is HFSentencePieceTokenizer
        pairs.append((tok, spm.SentencePieceProcessor(model_file=str(folder / "tokenizer.model"))))
    return tuple(pairs)


@pytest.mark.shared_data
def test_sentencepiece_tokenizer_user_symbols_on_real_text(shared_data, tmp_path_factory):
    lines = _lines(shared_data)
    for tok, sp in _user_symbol_pairs(shared_data, tmp_path_factory.getbasetemp()):
        _assert_like_sentencepiece(tok, sp, lines + _USER_TEXTS)


@pytest.mark.shared_data
def test_sentencepiece_tokenizer_where_tokenizers_precompiled_differs(shared_data, tmp_path):
    """tokenizers' Precompiled maps a grapheme to the form of its shortest known prefix, SentencePiece to the longest:
    on such text the class equals sentencepiece and tokenizer.json does not (README: a difference of tokenizers)."""
    from transformers import PreTrainedTokenizerFast

    text = (shared_data / "corpora" / "en" / "english_combined.txt").read_bytes()[:100_000].decode("utf-8", "ignore")
    model = hf_bpe.train_sentencepiece(text.split("\n"), vocab_size=800, byte_fallback=True)
    hf_bpe.save_sentencepiece(model, tmp_path / "m")
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "m" / "tokenizer.model"))
    tok = HFSentencePieceTokenizer.from_pretrained(tmp_path / "m")
    fast = PreTrainedTokenizerFast.from_pretrained(tmp_path / "m")
    for text in ("ｓ\u0301", "a\u0301\u0301"):
        assert tok(text)["input_ids"] == sp.encode(text) != fast(text)["input_ids"]
    assert tok("plain text")["input_ids"] == sp.encode("plain text") == fast("plain text")["input_ids"]


_SYLLABLES = ["lo", "we", "st", "ne", "wi", "de", "sl", "ow", "er", "ta", "ki", "mu"]
_SAMPLING_CORPUS = [" ".join(map("".join, itertools.islice(itertools.product(_SYLLABLES, repeat=3), i, i + 5)))
                    for i in range(0, 1700, 7)]


@pytest.fixture(scope="module")
def unigram_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model = hf_bpe.train_unigram(_SAMPLING_CORPUS, vocab_size=60)
    return hf_bpe.save_sentencepiece(model, tmp_path_factory.mktemp("unigram") / "folder")


def test_sentencepiece_tokenizer_samples_among_sentencepieces_nbest_with_a_seed(unigram_folder, tmp_path):
    # sp_model_kwargs as T5Tokenizer/AlbertTokenizer take it: every draw is a segmentation sentencepiece lists among
    # its n best (for nbest_size > 1), the text survives, the seed fixes the draws, and save/load keeps the options.
    sp = spm.SentencePieceProcessor(model_file=str(unigram_folder / "tokenizer.model"))
    kwargs = {"enable_sampling": True, "nbest_size": 4, "alpha": 0.05, "seed": 7}
    tok = HFSentencePieceTokenizer.from_pretrained(unigram_folder, sp_model_kwargs=kwargs)
    text = "lowest newer widest slowki"
    allowed = {tuple(ids) for ids in sp.nbest_encode_as_ids(text, 4)}
    draws = [tuple(tok(text)["input_ids"]) for _ in range(200)]
    assert set(draws) <= allowed and len(set(draws)) > 1
    assert all(sp.decode(list(ids)) == text for ids in draws)
    again = HFSentencePieceTokenizer.from_pretrained(unigram_folder, sp_model_kwargs=kwargs)
    assert [tuple(again(text)["input_ids"]) for _ in range(200)] == draws
    whole = HFSentencePieceTokenizer.from_pretrained(unigram_folder, sp_model_kwargs={**kwargs, "nbest_size": -1})
    assert all(sp.decode(whole(text)["input_ids"]) == text for _ in range(50))
    tok.save_pretrained(tmp_path / "saved")
    reloaded = transformers.AutoTokenizer.from_pretrained(tmp_path / "saved")  # sampling: hf_bpe's class named
    assert type(reloaded) is HFSentencePieceTokenizer and reloaded.sp_model_kwargs == kwargs
    assert [tuple(reloaded(text)["input_ids"]) for _ in range(200)] == draws
    plain = HFSentencePieceTokenizer.from_pretrained(unigram_folder)
    assert plain(text)["input_ids"] == sp.encode(text)


def test_sentencepiece_tokenizer_refuses_bad_sampling_options_clearly(unigram_folder):
    bpe = hf_bpe.train_sentencepiece(_SAMPLING_CORPUS, vocab_size=40)
    with pytest.raises(ValueError, match="BPE-dropout"):
        HFSentencePieceTokenizer(sentencepiece_model=bpe, sp_model_kwargs={"enable_sampling": True})
    for bad, match in (({"enable_sample": True}, "'enable_sample'"), ({"nbest_size": 600}, "600"),
                       ({"alpha": "x"}, "'x'"), ({"seed": 1.5}, "1.5"), ({"enable_sampling": 1}, "True or False")):
        with pytest.raises(ValueError, match=match):
            HFSentencePieceTokenizer.from_pretrained(unigram_folder, sp_model_kwargs=bad)
    with pytest.raises(TypeError, match="sp_model_kwargs must be a dict.*list"):
        HFSentencePieceTokenizer.from_pretrained(unigram_folder, sp_model_kwargs=["enable_sampling"])
    # Off, the options change nothing.
    assert HFSentencePieceTokenizer(sentencepiece_model=bpe, sp_model_kwargs={"alpha": 0.3})("low")["input_ids"]


# -- the default folder loads everywhere (issue 33.8, for SentencePiece folders) -------------------------------------

def _english_and_chinese(shared: Path) -> tuple[list[str], list[str]]:
    """Real lines: English and Chinese (cut at 300 characters) to train on, and 200 + 200 held out."""
    corpora = shared / "corpora"
    english = (corpora / "en" / "english_combined.txt").read_bytes()[:300_000].decode("utf-8", "ignore").split("\n")
    chinese = [line[:300] for line in (corpora / "zh" / "zh_classics_mixed.txt").read_bytes()[:300_000]
               .decode("utf-8", "ignore").split("\n")[:-1] if line]
    return english[:1500] + chinese[:300], english[-201:-1] + chinese[-200:]


def _trained(shared: Path, model_type: str, byte_fallback: bool) -> SentencePieceModel:
    trainer = hf_bpe.train_unigram if model_type == "unigram" else hf_bpe.train_sentencepiece
    return trainer(_english_and_chinese(shared)[0], vocab_size=2000, character_coverage=0.98,
                   byte_fallback=byte_fallback, hard_vocab_limit=False, show_progress=False)


@pytest.mark.shared_data
@pytest.mark.parametrize("byte_fallback", [False, True], ids=["no-byte-fallback", "byte-fallback"])
@pytest.mark.parametrize("model_type", ["bpe", "unigram"])
def test_sentencepiece_tokenizer_default_folder_loads_everywhere_with_sentencepieces_ids(shared_data, tmp_path,
                                                                                         model_type, byte_fallback):
    # The folder named HFSentencePieceTokenizer, which transformers 4.x's AutoTokenizer refuses in a process without
    # hf_bpe. It names PreTrainedTokenizerFast where it has the exact tokenizer.json: AutoTokenizer and
    # PreTrainedTokenizerFast without hf_bpe, with it, HFSentencePieceTokenizer and sentencepiece give the same ids
    # (CI runs this file under transformers 4.x and 5.x). LlamaTokenizerFast is not exact: under transformers 5 it
    # rebuilds the pipeline from the vocabulary (hundreds of these lines differ).
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    model = _trained(shared_data, model_type, byte_fallback)
    folder = hf_bpe.save_sentencepiece(model, tmp_path / "shared")
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["tokenizer_class"] == "PreTrainedTokenizerFast"
    assert (config["add_bos_token"], config["add_eos_token"]) == (False, False)
    sp = spm.SentencePieceProcessor(model_file=str(folder / "tokenizer.model"))
    # Unigram's tokenizer.json finds "<s>" in a text (module docstring of sentencepiece_hf): no such edge text.
    texts = _english_and_chinese(shared_data)[1] + [t for t in EDGE_TEXTS if model_type == "bpe" or "<" not in t]
    expected = sp.encode(texts)
    assert any(sp.unk_id() in ids or any(sp.IsByte(i) for i in ids) for ids in expected)  # unknowns or bytes met
    exact = HFSentencePieceTokenizer.from_pretrained(folder)
    assert [exact(text)["input_ids"] for text in texts] == expected
    child = load_without_hf_bpe(folder, texts)
    assert child.returncode == 0, child.stderr[-2000:]
    loaded = json.loads(child.stdout.strip().splitlines()[-1])
    assert loaded["class"] in ("PreTrainedTokenizerFast", "TokenizersBackend")  # transformers 4.x, 5.x
    assert loaded["ids"] == expected and loaded["fast_ids"] == expected
    known = [i for i, ids in enumerate(expected) if sp.unk_id() not in ids]  # (<unk>: ' ⁇ ' in sentencepiece)
    assert [loaded["decoded"][i] for i in known] == [sp.decode(expected[i]) for i in known]
    assert (loaded["eos"], loaded["pad"]) == ("</s>", None)
    for tok in (AutoTokenizer.from_pretrained(folder), PreTrainedTokenizerFast.from_pretrained(folder)):
        assert [tok(text)["input_ids"] for text in texts] == expected  # hf_bpe imported: the same


@pytest.mark.shared_data
def test_sentencepiece_tokenizer_hf_class_is_the_explicit_choice(shared_data, tmp_path, capsys):
    from transformers import AutoTokenizer

    from hf_bpe.cli import main

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(_english_and_chinese(shared_data)[0][:1000]) + "\n", encoding="utf-8")

    def train(out: str, *extra: str) -> int:
        return main(["train", str(corpus), "--algorithm", "unigram", "--vocab-size", "600", "--quiet",
                     "--out", str(tmp_path / out), *extra])

    def named(out: str) -> str:
        return json.loads((tmp_path / out / "tokenizer_config.json").read_text(encoding="utf-8"))["tokenizer_class"]

    assert train("default") == 0 and named("default") == "PreTrainedTokenizerFast"
    assert train("own", "--tokenizer-class", "HFSentencePieceTokenizer") == 0
    assert named("own") == "HFSentencePieceTokenizer" and (tmp_path / "own" / "tokenizer.json").exists()
    assert type(AutoTokenizer.from_pretrained(tmp_path / "own")) is HFSentencePieceTokenizer  # hf_bpe imported
    model = SentencePieceModel.load(tmp_path / "own" / "tokenizer.model")
    hf_bpe.save_sentencepiece(model, tmp_path / "api", tokenizer_class="HFSentencePieceTokenizer")
    assert named("api") == "HFSentencePieceTokenizer"
    # No tokenizer.json (whitespace as suffix): HFSentencePieceTokenizer, the only class that loads it.
    assert train("suffix", "--spm", "treat_whitespace_as_suffix=true") == 0
    assert named("suffix") == "HFSentencePieceTokenizer" and not (tmp_path / "suffix" / "tokenizer.json").exists()
    capsys.readouterr()
    for extra in (["--spm", "treat_whitespace_as_suffix=true", "--tokenizer-class", "PreTrainedTokenizerFast"],
                  ["--tokenizer-class", "HFBPETokenizer"]):
        assert train("refused", *extra) == 2
        err = capsys.readouterr().err
        assert err.count("hf-bpe: error:") == 1 and "--tokenizer-class" in err, err
    assert main(["train", str(corpus), "--out", str(tmp_path / "bpe"), "--quiet",
                 "--tokenizer-class", "HFSentencePieceTokenizer"]) == 2
    assert "HFSentencePieceTokenizer names the class of SentencePiece folders" in capsys.readouterr().err
    with pytest.raises(ValueError, match="tokenizer_class must be one of .*got 'HFBPETokenizer'"):
        hf_bpe.save_sentencepiece(model, tmp_path / "x", tokenizer_class="HFBPETokenizer")
    # Re-saved by HFSentencePieceTokenizer (a Trainer checkpoint), a folder keeps its class; made in memory, the
    # default; without tokenizer.json, hf_bpe's class.
    for source, made, expected in (("default", None, "PreTrainedTokenizerFast"),
                                   ("own", None, "HFSentencePieceTokenizer"),
                                   ("suffix", None, "HFSentencePieceTokenizer"),
                                   ("memory", model, "PreTrainedTokenizerFast")):
        tok = HFSentencePieceTokenizer(sentencepiece_model=made) if made is not None else \
            HFSentencePieceTokenizer.from_pretrained(tmp_path / source)
        tok.save_pretrained(tmp_path / f"{source}-again")
        assert named(f"{source}-again") == expected, source
    assert AutoTokenizer.from_pretrained(tmp_path / "default-again")("a b")["input_ids"] == tok("a b")["input_ids"]
    if transformers_major() < 5:
        # The control: what 4.x's AutoTokenizer refuses without hf_bpe (the reason it is not the default).
        refused = load_without_hf_bpe(tmp_path / "own", ["a"])
        assert refused.returncode != 0 and "HFSentencePieceTokenizer does not exist" in refused.stderr
